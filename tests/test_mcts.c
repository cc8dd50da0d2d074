/* Search tests: immediate wins and forced blocks in Gomoku, the MCTS-solver, pure MCTS
 * against perfect tic-tac-toe play, the 3-player backup on a fake game, a full arena,
 * many trees stepped together, tree reuse, no allocation while searching (malloc
 * interposed and counted), and the basic evaluators. Fixed seeds. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"
#include "engine/mcts.h"

/* An assertion for hot loops: Check records every ck_assert (a write per call), this
 * only acts on failure. */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static game *make(int rows, int cols, int k)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.game.rows = rows;
    c.game.cols = cols;
    c.game.k = k;
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

static mcts_params params(int sims)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    mcts_params p;
    mcts_params_from_config(&p, &c.mcts);
    p.simulations = sims;
    p.temperature_moves = 0;
    p.batch = 8;
    return p;
}

static int move_of(const game *g, const char *s)
{
    int a;
    char err[128];
    ck_assert_msg(g->ops->parse_move(g, s, &a, err, sizeof err) == 0, "%s", err);
    return a;
}

/* A position from black's and white's stones (space-separated, "h8" notation), played
 * alternately: nb == nw means black to move, nb == nw + 1 white to move. No line may
 * be complete. Free with free(). */
static game_state *position(const game *g, const char *black, const char *white)
{
    int b[64], w[64], nb = 0, nw = 0;
    char buf[512], *save, *tok;
    snprintf(buf, sizeof buf, "%s", black);
    for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        b[nb++] = move_of(g, tok);
    snprintf(buf, sizeof buf, "%s", white);
    for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        w[nw++] = move_of(g, tok);
    ck_assert(nb == nw || nb == nw + 1);
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < nb; i++) {
        ck_assert_int_eq(game_play(g, s, b[i]), 0);
        if (i < nw)
            ck_assert_int_eq(game_play(g, s, w[i]), 0);
    }
    ck_assert(!game_terminal(g, s));
    return s;
}

static int search_once(const game *g, const game_state *s, evaluator *e, mcts_params p, uint64_t seed,
                       mcts_result *res, float *pi)
{
    char err[256];
    mcts *t = mcts_new(g, &p, seed, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_set_root(t, s);
    ck_assert_msg(mcts_search(t, e, pi, res, err, sizeof err) == 0, "%s", err);
    mcts_free(t);
    return res->action;
}

/* ---- Gomoku: immediate wins and forced blocks -------------------------------------- */

typedef struct tactic {
    const char *black, *white, *answer; /* answer: the only right move */
} tactic;

/* Black to move and win at once (a four with one open end). */
static const tactic wins[] = {
    {"f8 g8 h8 j8", "e8 a1 a3 o15", "i8"},           /* centre, row: a split four */
    {"a3 a4 a5 a6", "a2 c10 e14 m2", "a7"},          /* edge column */
    {"b2 c3 d4 e5", "a1 h12 k3 o9", "f6"},           /* diagonal near the corner */
    {"o11 n12 m13 l14", "h3 c3 a9 k1", "k15"},       /* anti-diagonal at the top edge */
    {"g7 h7 i7 j7", "f7 c3 n2 b13", "k7"},          /* centre, row; f7 blocked */
};

/* White to move; black has a single four; white must block (white has nothing). */
static const tactic blocks[] = {
    {"f8 g8 h8 j8 c12", "e8 a1 a3 o15", "i8"},
    {"a3 a4 a5 a6 m12", "a2 c10 e14 m2", "a7"},
    {"b2 c3 d4 e5 j12", "a1 h12 k3 o9", "f6"},
    {"o11 n12 m13 l14 b2", "h3 c3 a9 k1", "k15"},
    {"g7 h7 i7 j7 d4", "f7 c3 n2 b13", "k7"},
};

static void run_tactics(const tactic *ts, int n, evaluator *e, const game *g, bool expect_proven)
{
    for (int i = 0; i < n; i++) {
        game_state *s = position(g, ts[i].black, ts[i].white);
        mcts_result res;
        float pi[225];
        int a = search_once(g, s, e, params(1000), 11 + (uint64_t)i, &res, pi);
        char buf[16];
        ck_assert_msg(a == move_of(g, ts[i].answer), "%s case %d: played %s, expected %s", e->name, i,
                      g->ops->format_move(g, a, buf, sizeof buf), ts[i].answer);
        ck_assert_int_eq(res.proven, expect_proven);
        ck_assert_int_le(res.stats.simulations, 1000);
        double sum = 0;
        for (int k = 0; k < 225; k++)
            sum += pi[k];
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        free(s);
    }
}

START_TEST(gomoku_immediate_win)
{
    game *g = make(15, 15, 5);
    evaluator *er = eval_random_new(g), *ro = eval_rollout_new(g, 1, 5);
    run_tactics(wins, 5, er, g, true);
    run_tactics(wins, 5, ro, g, true);
    evaluator_free(er);
    evaluator_free(ro);
    game_free(g);
}
END_TEST

START_TEST(gomoku_block_four)
{
    game *g = make(15, 15, 5);
    evaluator *er = eval_random_new(g), *ro = eval_rollout_new(g, 1, 5);
    run_tactics(blocks, 5, er, g, false);
    run_tactics(blocks, 5, ro, g, false);
    evaluator_free(er);
    evaluator_free(ro);
    game_free(g);
}
END_TEST

/* Without the solver the plain search still takes the immediate win (terminal children
 * are scored exactly), rollout evaluator. Tic-tac-toe: with uniform priors over 221
 * Gomoku moves PUCT explores too little in 1,000 simulations to meet a win without the
 * solver's winning_move proof (see the Gomoku tests above, which use the solver). */
START_TEST(win_without_solver)
{
    game *g = make(3, 3, 3);
    evaluator *ro = eval_rollout_new(g, 1, 5);
    /* X to move and win at once; O threatens to win too */
    const char *pos[3][3] = {{"a1 b1", "a3 b3", "c1"}, {"a1 b2", "a3 b3", "c3"}, {"b1 b2", "a1 c1", "b3"}};
    for (int i = 0; i < 3; i++) {
        game_state *s = position(g, pos[i][0], pos[i][1]);
        mcts_params p = params(1000);
        p.solver = false;
        mcts_result res;
        ck_assert_int_eq(search_once(g, s, ro, p, 3, &res, NULL), move_of(g, pos[i][2]));
        ck_assert(!res.proven);
        free(s);
    }
    evaluator_free(ro);
    game_free(g);
    /* Gomoku with pure-MCTS settings (absolute FPU 1: every move tried once) */
    g = make(15, 15, 5);
    ro = eval_rollout_new(g, 1, 5);
    for (int i = 0; i < 5; i++) {
        game_state *s = position(g, wins[i].black, wins[i].white);
        mcts_params p = params(1000);
        p.solver = false;
        mcts_params_pure(&p);
        mcts_result res;
        ck_assert_int_eq(search_once(g, s, ro, p, 3, &res, NULL), move_of(g, wins[i].answer));
        ck_assert(!res.proven);
        free(s);
    }
    evaluator_free(ro);
    game_free(g);
}
END_TEST

/* Absolute FPU 1 with uniform priors visits every root move before any twice. */
START_TEST(absolute_fpu_tries_every_move)
{
    game *g = make(9, 9, 5);
    evaluator *e = eval_rollout_new(g, 1, 2);
    mcts_params p = params(1 + 81);
    mcts_params_pure(&p);
    p.batch = 1;
    game_state *s = game_state_new(g, NULL);
    mcts_result res;
    char err[256];
    mcts *t = mcts_new(g, &p, 1, err, sizeof err);
    mcts_set_root(t, s);
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    mcts_child_info ci[81];
    ck_assert_int_eq(mcts_children(t, MCTS_ROOT, ci, 81), 81);
    for (int i = 0; i < 81; i++)
        REQUIRE(ci[i].visits == 1, "move %d: %d visits", ci[i].action, ci[i].visits);
    mcts_free(t);
    free(s);
    evaluator_free(e);
    game_free(g);
}
END_TEST

/* Duplicate leaves in a batch: without virtual loss every descent after the first in a
 * step reaches the same pending leaf; those are discarded, never evaluated twice. */
START_TEST(collisions_are_discarded)
{
    game *g = make(9, 9, 5);
    evaluator *e = eval_random_new(g);
    for (int vl = 0; vl <= 1; vl++) {
        mcts_params p = params(300);
        p.virtual_loss = (float)vl;
        p.batch = 16;
        game_state *s = position(g, "e5", "d4");
        mcts_result res;
        char err[256];
        mcts *t = mcts_new(g, &p, 1, err, sizeof err);
        mcts_set_root(t, s);
        e->positions = 0;
        ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
        ck_assert_int_eq(res.stats.simulations, 300);
        ck_assert_int_eq(mcts_root_visits(t), 300);
        ck_assert_uint_eq(e->positions, (uint64_t)res.stats.evaluated);
        ck_assert_int_le(res.stats.evaluated, res.stats.nodes); /* each node valued once */
        if (vl == 0) {
            ck_assert_int_gt(res.stats.collisions, 0);
            ck_assert_int_eq(res.stats.evaluator_calls, res.stats.evaluated); /* batches of 1 */
        } else {
            ck_assert_int_lt(res.stats.evaluator_calls * 4, res.stats.evaluated);
        }
        mcts_free(t);
        free(s);
    }
    evaluator_free(e);
    game_free(g);
}
END_TEST

/* ---- MCTS-solver: forced wins in 3 plies --------------------------------------------- */

START_TEST(solver_tictactoe_fork)
{
    /* X a1 c3, O b2 a3: O threatens c1; X c1 blocks and makes two threats (b1, c2). */
    game *g = make(3, 3, 3);
    game_state *s = position(g, "a1 c3", "b2 a3");
    evaluator *e = eval_random_new(g);
    mcts_result res;
    ck_assert_int_eq(search_once(g, s, e, params(2000), 1, &res, NULL), move_of(g, "c1"));
    ck_assert(res.proven);
    ck_assert(res.stats.proven);
    ck_assert_float_eq(res.value[0], 1.0f);
    ck_assert_float_eq(res.value[1], -1.0f);
    ck_assert_int_lt(res.stats.simulations, 2000); /* stopped early */
    free(s);
    evaluator_free(e);
    game_free(g);
}
END_TEST

START_TEST(solver_gomoku_open_four)
{
    /* Black h8 i8 j8, an open three (f8 g8 k8 l8 empty); white has nothing. Black g8
     * or k8 makes an open four: every white reply loses. */
    game *g = make(15, 15, 5);
    game_state *s = position(g, "h8 i8 j8", "c3 m12 b13");
    evaluator *er = eval_random_new(g), *ro = eval_rollout_new(g, 1, 9);
    evaluator *es[2] = {er, ro};
    for (int i = 0; i < 2; i++) {
        mcts_result res;
        int a = search_once(g, s, es[i], params(3000), 2, &res, NULL);
        ck_assert_msg(a == move_of(g, "g8") || a == move_of(g, "k8"), "%s played %d", es[i]->name, a);
        ck_assert_msg(res.proven, "%s: root not proven after %d simulations", es[i]->name,
                      res.stats.simulations);
        ck_assert_float_eq(res.value[0], 1.0f);
    }
    free(s);
    evaluator_free(er);
    evaluator_free(ro);
    game_free(g);
}
END_TEST

/* ---- pure MCTS against perfect tic-tac-toe play ------------------------------------ */

/* Negamax over the 3^9 boards, memoised: value for the side to move. */
static signed char ttt_memo[19683];
static bool ttt_memo_set[19683];

static int ttt_index(const int *b)
{
    int k = 0;
    for (int i = 0; i < 9; i++)
        k = k * 3 + b[i];
    return k;
}

static int ttt_winner(const int *b)
{
    static const int L[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6},
                                {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};
    for (int i = 0; i < 8; i++)
        if (b[L[i][0]] && b[L[i][0]] == b[L[i][1]] && b[L[i][1]] == b[L[i][2]])
            return b[L[i][0]];
    return 0;
}

static int ttt_negamax(int *b, int me)
{
    int k = ttt_index(b);
    if (ttt_memo_set[k])
        return ttt_memo[k];
    int best = -2, empty = 0;
    for (int i = 0; i < 9; i++) {
        if (b[i])
            continue;
        empty++;
        b[i] = me;
        int v = ttt_winner(b) ? 1 : -ttt_negamax(b, 3 - me);
        b[i] = 0;
        if (v > best)
            best = v;
    }
    if (!empty)
        best = 0;
    ttt_memo[k] = (signed char)best;
    ttt_memo_set[k] = true;
    return best;
}

/* A uniformly random optimal move for the side to move. */
static int ttt_perfect(int *b, int me, rng *r)
{
    int cand[9], n = 0, best = -2;
    for (int i = 0; i < 9; i++) {
        if (b[i])
            continue;
        b[i] = me;
        int v = ttt_winner(b) ? 1 : -ttt_negamax(b, 3 - me);
        b[i] = 0;
        if (v > best) {
            best = v;
            n = 0;
        }
        if (v == best)
            cand[n++] = i;
    }
    return cand[rng_below(r, (uint32_t)n)];
}

/* 20 games in each seat; _i = 0: config defaults (solver on), 1: solver off, 2: pure
 * MCTS settings (absolute FPU), solver off. */
START_TEST(pure_mcts_never_loses_tictactoe)
{
    game *g = make(3, 3, 3);
    evaluator *e = eval_rollout_new(g, 1, 77);
    rng r;
    rng_seed(&r, 1234);
    char err[256];
    int results[3] = {0, 0, 0}; /* mcts loss, draw, win */
    for (int gi = 0; gi < 40; gi++) {
        int mcts_seat = gi % 2;
        mcts_params p = params(2000);
        p.solver = _i == 0;
        if (_i == 2)
            mcts_params_pure(&p);
        mcts *t = mcts_new(g, &p, 1000 + (uint64_t)gi, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        int b[9] = {0};
        while (!game_terminal(g, mcts_root_state(t))) {
            int me = game_current_player(g, mcts_root_state(t));
            int a;
            if (me == mcts_seat) {
                mcts_result res;
                ck_assert_msg(mcts_search(t, e, NULL, &res, err, sizeof err) == 0, "%s", err);
                a = res.action;
            } else {
                a = ttt_perfect(b, me + 1, &r);
            }
            b[a] = me + 1;
            ck_assert_int_eq(mcts_play(t, a), 0);
        }
        float z[2];
        game_result(g, mcts_root_state(t), z);
        results[z[mcts_seat] > 0 ? 2 : z[mcts_seat] < 0 ? 0 : 1]++;
        mcts_free(t);
    }
    ck_assert_msg(results[0] == 0, "pure MCTS (variant %d) lost %d of 40 games", _i, results[0]);
    ck_assert_int_eq(results[1], 40); /* perfect play draws at worst */
    evaluator_free(e);
    game_free(g);
}
END_TEST

/* ---- a fake 3-player game: each player in turn picks one of 2 actions; ends after 3 -- */

typedef struct fake_state {
    int8_t moves[3];
    int8_t ply;
} fake_state;

static float fake_z[8][3];
static int fake_np = 3;     /* players: 3, or 2 for the contempt tests (zero-sum values) */
static float fake_c = 0.0f; /* check_backup: the contempt of player 0's search */

static int fake_player(const game *g, const game_state *s)
{
    (void)g;
    return ((const fake_state *)s)->ply % fake_np;
}
static void fake_init(const game *g, game_state *s, rng *r)
{
    (void)r;
    memset(s, 0, g->state_size);
}
static bool fake_terminal(const game *g, const game_state *s)
{
    (void)g;
    return ((const fake_state *)s)->ply >= 3;
}
static int fake_legal(const game *g, const game_state *s, uint8_t *mask)
{
    bool t = fake_terminal(g, s);
    mask[0] = mask[1] = !t;
    return t ? 0 : 2;
}
static int fake_play(const game *g, game_state *gs, int a)
{
    fake_state *s = (fake_state *)gs;
    if (a < 0 || a > 1 || fake_terminal(g, gs))
        return -1;
    s->moves[s->ply++] = (int8_t)a;
    return 0;
}
static int fake_leaf(const fake_state *s)
{
    return s->moves[0] * 4 + s->moves[1] * 2 + s->moves[2];
}
static void fake_result(const game *g, const game_state *s, float *z)
{
    (void)g;
    memcpy(z, fake_z[fake_leaf((const fake_state *)s)], (size_t)fake_np * sizeof(float));
}
static uint64_t fake_hash(const game *g, const game_state *gs)
{
    (void)g;
    const fake_state *s = (const fake_state *)gs;
    uint64_t h = (uint64_t)s->ply;
    for (int i = 0; i < s->ply; i++)
        h = h * 31 + (uint64_t)s->moves[i] + 1;
    return h;
}
static int fake_ply(const game *g, const game_state *s)
{
    (void)g;
    return ((const fake_state *)s)->ply;
}

static const game_ops fake_ops = {
    .name = "fake3",
    .init = fake_init,
    .current_player = fake_player,
    .legal = fake_legal,
    .play = fake_play,
    .terminal = fake_terminal,
    .result = fake_result,
    .hash = fake_hash,
    .ply = fake_ply,
};

static game fake_game(void)
{
    game g;
    memset(&g, 0, sizeof g);
    g.ops = &fake_ops;
    g.players = fake_np;
    g.rows = 1;
    g.cols = 2;
    g.actions = 2;
    g.planes = 1;
    g.state_size = sizeof(fake_state);
    g.nsym = 1;
    g.max_game_length = 3;
    return g;
}

/* The fake evaluator's value of a non-terminal state: different for every player and
 * every state, so any mix-up of player indices shows. Priors uneven. */
static void fake_value(const game_state *gs, float *v)
{
    uint64_t h = fake_hash(NULL, gs);
    for (int p = 0; p < fake_np; p++)
        v[p] = (float)((double)((h * 2654435761u + (uint64_t)p * 97) % 1000) / 500.0 - 1.0);
    if (fake_np == 2)
        v[1] = -v[0];
}

static int fake_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                         const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    (void)e;
    (void)keys;
    (void)legal;
    (void)err;
    (void)errlen;
    for (int i = 0; i < n; i++) {
        priors[2 * i] = 0.3f;
        priors[2 * i + 1] = 0.7f;
        fake_value(states[i], values + fake_np * i);
    }
    return 0;
}

static void fake_destroy(evaluator *e)
{
    (void)e;
}

/* Checks node (reached at state s, n visits, value sum w[3]) against its children:
 * n = 1 (its own evaluation) + sum of the children's visits, and w = its evaluation +
 * the children's sums, per absolute player; each edge's q is its mean for the mover. */
static void check_backup(const mcts *t, const game *g, const game_state *s, int32_t node, int n,
                         const double *w, int *checked)
{
    if (fake_terminal(g, s)) {
        float z[3];
        fake_result(g, s, z);
        if (fake_c > 0.0f)
            mcts_contempt_value(fake_c, 0, z, z);
        for (int p = 0; p < fake_np; p++)
            ck_assert_double_eq_tol(w[p], n * (double)z[p], 1e-4);
        (*checked)++;
        return;
    }
    mcts_child_info ci[2];
    int nc = mcts_children(t, node, ci, 2);
    ck_assert_int_eq(nc, 2);
    float v[3];
    fake_value(s, v);
    if (fake_c > 0.0f)
        mcts_contempt_value(fake_c, 0, v, v);
    double sw[3] = {v[0], v[1], fake_np == 3 ? v[2] : 0.0f};
    int sn = 1;
    int mover = fake_player(g, s);
    for (int i = 0; i < 2; i++) {
        if (ci[i].visits == 0)
            continue;
        double cw[3] = {0, 0, 0};
        for (int p = 0; p < fake_np; p++) {
            cw[p] = (double)ci[i].value[p] * ci[i].visits;
            sw[p] += cw[p];
        }
        ck_assert_float_eq_tol(ci[i].q, ci[i].value[mover], 1e-6);
        sn += ci[i].visits;
        fake_state cs = *(const fake_state *)s;
        fake_play(g, (game_state *)&cs, ci[i].action);
        check_backup(t, g, (const game_state *)&cs, ci[i].node, ci[i].visits, cw, checked);
    }
    ck_assert_int_eq(n, sn);
    for (int p = 0; p < fake_np; p++)
        ck_assert_double_eq_tol(w[p], sw[p], 1e-3);
    (*checked)++;
}

START_TEST(three_player_backup)
{
    game g = fake_game();
    rng r;
    rng_seed(&r, 5);
    for (int i = 0; i < 8; i++)
        for (int p = 0; p < 3; p++)
            fake_z[i][p] = (float)(rng_uniform(&r) * 2 - 1);
    evaluator ev = {.name = "fake", .g = &g, .evaluate = fake_evaluate, .destroy = fake_destroy};
    int sims_list[] = {1, 2, 3, 7, 40};
    for (int k = 0; k < 5; k++) {
        mcts_params p = params(sims_list[k]);
        p.solver = false;
        p.batch = 1 + k % 3;
        char err[256];
        mcts *t = mcts_new(&g, &p, 9, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &ev, NULL, &res, err, sizeof err), 0);
        ck_assert_int_eq(res.stats.simulations, sims_list[k]);
        int n = mcts_root_visits(t);
        ck_assert_int_eq(n, sims_list[k]);
        double w[3];
        for (int q = 0; q < 3; q++)
            w[q] = (double)res.value[q] * n;
        int checked = 0;
        check_backup(t, &g, mcts_root_state(t), MCTS_ROOT, n, w, &checked);
        ck_assert_int_ge(checked, 1);
        mcts_free(t);
    }
}
END_TEST

/* A hand-computed case: 3 simulations, batch 1, fpu_reduction 2 (an unvisited child is
 * very unattractive): root expanded (value v0), then child 1 (prior 0.7, visited
 * first), then child 1 again, whose child 1 (player 1 picks prior 0.7) is expanded. */
START_TEST(three_player_backup_by_hand)
{
    game g = fake_game();
    evaluator ev = {.name = "fake", .g = &g, .evaluate = fake_evaluate, .destroy = fake_destroy};
    mcts_params p = params(3);
    p.solver = false;
    p.batch = 1;
    p.fpu_reduction = 2.0f;
    char err[256];
    mcts *t = mcts_new(&g, &p, 9, err, sizeof err);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, &ev, NULL, &res, err, sizeof err), 0);
    fake_state s0, s1, s11;
    memset(&s0, 0, sizeof s0);
    s1 = s0;
    fake_play(&g, (game_state *)&s1, 1);
    s11 = s1;
    fake_play(&g, (game_state *)&s11, 1);
    float v0[3], v1[3], v11[3];
    fake_value((game_state *)&s0, v0);
    fake_value((game_state *)&s1, v1);
    fake_value((game_state *)&s11, v11);
    mcts_child_info ci[2];
    ck_assert_int_eq(mcts_children(t, MCTS_ROOT, ci, 2), 2);
    ck_assert_int_eq(ci[0].visits, 0);
    ck_assert_int_eq(ci[1].visits, 2);
    /* edge root->1 is chosen by player 0: Q = (v1[0] + v11[0]) / 2 */
    ck_assert_float_eq_tol(ci[1].q, (v1[0] + v11[0]) / 2, 1e-6);
    for (int q = 0; q < 3; q++)
        ck_assert_float_eq_tol(res.value[q], (v0[q] + v1[q] + v11[q]) / 3, 1e-6);
    mcts_child_info cj[2];
    ck_assert_int_eq(mcts_children(t, ci[1].node, cj, 2), 2);
    ck_assert_int_eq(cj[1].visits, 1);
    /* edge 1->1 is chosen by player 1: Q = v11[1] */
    ck_assert_float_eq_tol(cj[1].q, v11[1], 1e-6);
    mcts_free(t);
}
END_TEST

/* max-n by recursion: the proven outcome of the fake game under solver rules. */
static void fake_maxn(fake_state s, float *out)
{
    if (s.ply >= 3) {
        memcpy(out, fake_z[fake_leaf(&s)], 3 * sizeof(float));
        return;
    }
    int m = s.ply % 3;
    float best[3], v[3];
    for (int a = 0; a < 2; a++) {
        fake_state c = s;
        c.moves[c.ply++] = (int8_t)a;
        fake_maxn(c, v);
        if (a == 0 || v[m] > best[m])
            memcpy(best, v, sizeof best);
    }
    memcpy(out, best, sizeof best);
}

START_TEST(three_player_solver)
{
    game g = fake_game();
    evaluator ev = {.name = "fake", .g = &g, .evaluate = fake_evaluate, .destroy = fake_destroy};
    for (int seed = 0; seed < 5; seed++) {
        rng r;
        rng_seed(&r, 100 + (uint64_t)seed);
        for (int i = 0; i < 8; i++)
            for (int p = 0; p < 3; p++)
                fake_z[i][p] = (float)(rng_uniform(&r) * 1.8 - 0.9); /* no ties, no 1 */
        mcts_params p = params(1000);
        char err[256];
        mcts *t = mcts_new(&g, &p, 9, err, sizeof err);
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &ev, NULL, &res, err, sizeof err), 0);
        ck_assert(res.proven);
        ck_assert_int_lt(res.stats.simulations, 1000);
        fake_state s0;
        memset(&s0, 0, sizeof s0);
        float want[3];
        fake_maxn(s0, want);
        for (int q = 0; q < 3; q++)
            ck_assert_float_eq_tol(res.value[q], want[q], 1e-6);
        /* the move played achieves it */
        fake_state c = s0;
        c.moves[c.ply++] = (int8_t)res.action;
        float got[3];
        fake_maxn(c, got);
        ck_assert_float_eq_tol(got[0], want[0], 1e-6);
        mcts_free(t);
    }
}
END_TEST

/* ---- draw contempt (players) ------------------------------------------------------ */

START_TEST(contempt_by_hand)
{
    float out[2];
    const float c = 0.25f;
    struct {
        int s;
        float v0, want0;
    } cases[] = {
        {0, 0.0f, -0.25f}, /* a draw: -c for the searcher */
        {0, 1.0f, 1.0f},   /* wins and losses unchanged */
        {0, -1.0f, -1.0f},
        {0, 0.5f, 0.375f}, /* 0.5 - 0.25 x 0.5 */
        {1, 0.2f, 0.4f},   /* player 1 searches: v[1] = -0.2 -> -0.4, so v[0] = 0.4 */
        {1, 0.0f, 0.25f},  /* a draw is +c for the other player */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float v[2] = {cases[i].v0, -cases[i].v0};
        mcts_contempt_value(c, cases[i].s, v, out);
        ck_assert_float_eq_tol(out[0], cases[i].want0, 1e-6);
        ck_assert_float_eq_tol(out[1], -cases[i].want0, 1e-6);
    }
    /* monotone in the searcher's value, and never above it */
    float prev = -2.0f;
    for (int k = -100; k <= 100; k++) {
        float v[2] = {k / 100.0f, -k / 100.0f};
        mcts_contempt_value(0.9f, 0, v, out);
        ck_assert_float_gt(out[0], prev);
        ck_assert_float_le(out[0], v[0]);
        prev = out[0];
    }
}
END_TEST

/* Contempt in a search of a two-player game (player 0 searches): every node's value
 * sums are the transformed evaluations and outcomes (draws among them) of its subtree;
 * the other player to move at the root starts a fresh tree; contempt 1 is refused, and
 * a 3-player game ignores it. */
START_TEST(contempt_in_search)
{
    fake_np = 2;
    game g = fake_game();
    const float zs[8] = {0, 1, -1, 0, 0, 0, 1, -1};
    for (int i = 0; i < 8; i++) {
        fake_z[i][0] = zs[i];
        fake_z[i][1] = -zs[i];
    }
    evaluator ev = {.name = "fake", .g = &g, .evaluate = fake_evaluate, .destroy = fake_destroy};
    char err[256];
    int sims_list[] = {1, 3, 7, 40};
    for (int k = 0; k < 4; k++) {
        mcts_params p = params(sims_list[k]);
        p.solver = false;
        p.batch = 1 + k % 3;
        p.contempt = 0.3f;
        fake_c = 0.3f;
        mcts *t = mcts_new(&g, &p, 9, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &ev, NULL, &res, err, sizeof err), 0);
        int n = mcts_root_visits(t);
        ck_assert_int_eq(n, sims_list[k]);
        double w[3] = {(double)res.value[0] * n, (double)res.value[1] * n, 0};
        int checked = 0;
        check_backup(t, &g, mcts_root_state(t), MCTS_ROOT, n, w, &checked);
        ck_assert_int_ge(checked, 1);
        if (sims_list[k] == 40) {
            /* without contempt the same tree would hold other sums: the draws count */
            fake_c = 0.0f;
            mcts_params p0 = p;
            p0.contempt = 0.0f;
            mcts *t0 = mcts_new(&g, &p0, 9, err, sizeof err);
            mcts_result r0;
            ck_assert_int_eq(mcts_search(t0, &ev, NULL, &r0, err, sizeof err), 0);
            ck_assert_float_gt(fabsf(r0.value[0] - res.value[0]), 0.01f);
            mcts_free(t0);
            /* player 1 to move at the root: a fresh tree, nothing carried over */
            ck_assert_int_eq(mcts_play(t, res.action), 0);
            ck_assert_int_gt(mcts_root_visits(t), 0);
            ck_assert_int_eq(mcts_search(t, &ev, NULL, &res, err, sizeof err), 0);
            ck_assert_int_eq(mcts_root_visits(t), 40);
        }
        mcts_free(t);
    }
    fake_c = 0.0f;
    mcts_params bad = params(10);
    bad.contempt = 1.0f;
    ck_assert_ptr_null(mcts_new(&g, &bad, 1, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "contempt"));
    /* three players: contempt has no meaning and changes nothing */
    fake_np = 3;
    g = fake_game();
    for (int i = 0; i < 8; i++)
        for (int q = 0; q < 3; q++)
            fake_z[i][q] = (float)((i * 3 + q) % 5) / 2.0f - 1.0f;
    mcts_result ra, rb;
    for (int v = 0; v < 2; v++) {
        mcts_params p = params(30);
        p.contempt = v ? 0.5f : 0.0f;
        mcts *t = mcts_new(&g, &p, 9, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        ck_assert_int_eq(mcts_search(t, &ev, NULL, v ? &rb : &ra, err, sizeof err), 0);
        mcts_free(t);
    }
    ck_assert_int_eq(ra.action, rb.action);
    for (int q = 0; q < 3; q++)
        ck_assert_float_eq(ra.value[q], rb.value[q]);
}
END_TEST

/* ---- arena capacity ------------------------------------------------------------------ */

START_TEST(full_arena_is_handled)
{
    game *g = make(15, 15, 5);
    evaluator *e = eval_random_new(g);
    game_state *s = position(g, "h8 j9", "h9 g7");
    char err[256];
    uint8_t mask[225];
    game_legal(g, s, mask);
    /* few nodes */
    mcts_params p = params(1000);
    p.max_nodes = 8;
    mcts *t = mcts_new(g, &p, 1, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_set_root(t, s);
    mcts_result res;
    float pi[225];
    ck_assert_int_eq(mcts_search(t, e, pi, &res, err, sizeof err), 0);
    ck_assert(res.stats.arena_full);
    ck_assert_int_le(res.stats.nodes, 8);
    ck_assert_int_lt(res.stats.simulations, 1000);
    ck_assert(mask[res.action]);
    /* playing on with reuse through a full arena never breaks */
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(mcts_play(t, res.action), 0);
        ck_assert_int_eq(mcts_search(t, e, pi, &res, err, sizeof err), 0);
        game_legal(g, mcts_root_state(t), mask);
        ck_assert(mask[res.action]);
    }
    mcts_free(t);
    /* too few edges even for the root: a legal move from uniform pi */
    p.max_nodes = 0;
    p.max_edges = 100;
    t = mcts_new(g, &p, 1, err, sizeof err);
    mcts_set_root(t, s);
    ck_assert_int_eq(mcts_search(t, e, pi, &res, err, sizeof err), 0);
    ck_assert(res.stats.arena_full);
    game_legal(g, s, mask);
    ck_assert(mask[res.action]);
    double sum = 0;
    for (int k = 0; k < 225; k++) {
        sum += pi[k];
        REQUIRE(mask[k] || pi[k] == 0.0f, "pi on an illegal move");
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    mcts_free(t);
    free(s);
    evaluator_free(e);
    game_free(g);
}
END_TEST

/* ---- many trees, one evaluator call per batch ----------------------------------------- */

/* Deterministic, state-dependent priors and values (from the key), counting its calls. */
typedef struct counting {
    int calls, positions, max_n;
} counting;

static int hash_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                         const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    (void)states;
    (void)err;
    (void)errlen;
    counting *c = e->ctx;
    c->calls++;
    c->positions += n;
    if (n > c->max_n)
        c->max_n = n;
    int A = e->g->actions;
    for (int i = 0; i < n; i++) {
        rng r;
        rng_seed(&r, keys[i]);
        double sum = 0;
        for (int a = 0; a < A; a++) {
            priors[i * A + a] = legal[i * A + a] ? (float)(0.05 + rng_uniform(&r)) : 0.0f;
            sum += priors[i * A + a];
        }
        for (int a = 0; a < A; a++)
            priors[i * A + a] = (float)(priors[i * A + a] / sum);
        float v = (float)(rng_uniform(&r) * 1.6 - 0.8);
        values[2 * i] = v;
        values[2 * i + 1] = -v;
    }
    return 0;
}

static void setup_hash_eval(evaluator *e, const game *g, counting *c)
{
    memset(e, 0, sizeof *e);
    memset(c, 0, sizeof *c);
    e->name = "hash";
    e->g = g;
    e->evaluate = hash_evaluate;
    e->destroy = fake_destroy;
    e->ctx = c;
}

START_TEST(many_trees_match_single)
{
    game *g = make(9, 9, 5);
    enum { NT = 4 };
    const char *openings[NT][2] = {{"e5", ""}, {"e5 d4", "f6"}, {"a1", "b2"}, {"c3 g7", "e5 d6"}};
    game_state *s[NT];
    for (int i = 0; i < NT; i++)
        s[i] = position(g, openings[i][0], openings[i][1]);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    mcts_params p = params(150);
    p.batch = 1;
    p.noise = true;
    p.temperature_moves = 100; /* sample: the rng is exercised too */
    /* alone */
    float pi_alone[NT][81];
    int act_alone[NT];
    for (int i = 0; i < NT; i++) {
        mcts_result res;
        act_alone[i] = search_once(g, s[i], &e, p, 50 + (uint64_t)i, &res, pi_alone[i]);
        ck_assert_int_eq(res.stats.evaluator_calls, res.stats.evaluated);
    }
    /* together, batch 1 per tree: same trees, same choices */
    mcts *t[NT];
    for (int i = 0; i < NT; i++) {
        t[i] = mcts_new(g, &p, 50 + (uint64_t)i, err, sizeof err);
        mcts_set_root(t[i], s[i]);
        mcts_begin(t[i]);
    }
    mcts_batch *b = mcts_batch_new(g, NT);
    cnt.calls = cnt.positions = 0;
    int steps = 0;
    for (;;) {
        bool all = true;
        for (int i = 0; i < NT; i++)
            all &= mcts_done(t[i]);
        if (all)
            break;
        int n = mcts_step_many(t, NT, b, &e, err, sizeof err);
        ck_assert_int_ge(n, 0);
        steps += n > 0;
    }
    ck_assert_int_eq(cnt.calls, steps);
    int evaluated = 0;
    for (int i = 0; i < NT; i++) {
        float pi[81];
        mcts_result res;
        mcts_finish(t[i], pi, &res);
        ck_assert_int_eq(res.action, act_alone[i]);
        REQUIRE(memcmp(pi, pi_alone[i], sizeof pi) == 0, "tree %d: pi differs", i);
        evaluated += res.stats.evaluated;
        mcts_free(t[i]);
    }
    ck_assert_int_eq(cnt.positions, evaluated);
    ck_assert_int_le(cnt.max_n, NT);
    ck_assert_int_gt(cnt.max_n, 1); /* the batches did hold leaves of several trees */
    mcts_batch_free(b);

    /* batch 8 per tree, a shared batch of 32: one call per step, up to 32 leaves; each
     * tree still ends as it does alone (its gathering does not depend on the others) */
    p.batch = 8;
    p.simulations = 200;
    for (int i = 0; i < NT; i++) {
        mcts_result res;
        act_alone[i] = search_once(g, s[i], &e, p, 50 + (uint64_t)i, &res, pi_alone[i]);
    }
    for (int i = 0; i < NT; i++) {
        t[i] = mcts_new(g, &p, 50 + (uint64_t)i, err, sizeof err);
        mcts_set_root(t[i], s[i]);
        mcts_begin(t[i]);
    }
    b = mcts_batch_new(g, 32);
    cnt.calls = cnt.positions = cnt.max_n = 0;
    steps = 0;
    int leaves = 0;
    for (;;) {
        bool all = true;
        for (int i = 0; i < NT; i++)
            all &= mcts_done(t[i]);
        if (all)
            break;
        int n = mcts_step_many(t, NT, b, &e, err, sizeof err);
        ck_assert_int_ge(n, 0);
        steps += n > 0;
        leaves += n;
    }
    ck_assert_int_eq(cnt.calls, steps);
    ck_assert_int_eq(cnt.positions, leaves);
    ck_assert_int_le(cnt.max_n, 32);
    ck_assert_int_gt(cnt.max_n, 8);
    ck_assert_int_lt(cnt.calls * 4, cnt.positions); /* batches average more than 4 */
    for (int i = 0; i < NT; i++) {
        mcts_result res;
        float pi[81];
        mcts_finish(t[i], pi, &res);
        ck_assert_int_eq(res.action, act_alone[i]);
        REQUIRE(memcmp(pi, pi_alone[i], sizeof pi) == 0, "tree %d: pi differs (batch 8)", i);
        ck_assert_int_eq(res.stats.simulations, 200);
        ck_assert_int_le(res.stats.evaluator_calls, cnt.calls);
        mcts_free(t[i]);
    }
    mcts_batch_free(b);
    for (int i = 0; i < NT; i++)
        free(s[i]);
    game_free(g);
}
END_TEST

/* An evaluator that fails: the search reports it and the tree stays usable. */
static int failing_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                            const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    counting *c = e->ctx;
    if (c->calls == 3) { /* the fourth call fails */
        c->calls++;
        snprintf(err, errlen, "test evaluator: failing on purpose");
        return -1;
    }
    return hash_evaluate(e, n, states, keys, legal, priors, values, err, errlen);
}

START_TEST(evaluator_error_is_reported)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    e.evaluate = failing_evaluate;
    mcts_params p = params(100);
    char err[256] = "";
    mcts *t = mcts_new(g, &p, 3, err, sizeof err);
    mcts_result res;
    int rc = 0;
    for (int tries = 0; tries < 10 && rc == 0; tries++)
        rc = mcts_search(t, &e, NULL, &res, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert(strstr(err, "on purpose") != NULL);
    e.evaluate = hash_evaluate;
    ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
    ck_assert_int_eq(res.stats.simulations, 100);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* ---- tree reuse -------------------------------------------------------------------------- */

START_TEST(tree_reuse_keeps_child)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    mcts_params p = params(400);
    char err[256];
    mcts *t = mcts_new(g, &p, 3, err, sizeof err);
    for (int move = 0; move < 6; move++) {
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
        mcts_child_info ci[81];
        int nc = mcts_children(t, MCTS_ROOT, ci, 81);
        int child_visits = -1, sum = 0;
        for (int i = 0; i < nc; i++) {
            sum += ci[i].visits;
            if (ci[i].action == res.action)
                child_visits = ci[i].visits;
        }
        ck_assert_int_eq(mcts_root_visits(t), 1 + sum);
        ck_assert_int_gt(child_visits, 0);
        ck_assert_int_eq(mcts_play(t, res.action), 0);
        ck_assert_int_eq(mcts_root_visits(t), child_visits);
        /* the kept subtree is consistent: root visits = its own + its children's */
        nc = mcts_children(t, MCTS_ROOT, ci, 81);
        sum = 0;
        for (int i = 0; i < nc; i++)
            sum += ci[i].visits;
        ck_assert_int_eq(mcts_root_visits(t), child_visits > 0 ? 1 + sum : 0);
        int before = mcts_root_visits(t);
        ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
        ck_assert_int_eq(mcts_root_visits(t), before + 400);
        ck_assert_int_eq(res.stats.root_visits, before + 400);
        ck_assert_int_eq(mcts_play(t, res.action), 0);
    }
    /* a different playout count for the next search */
    mcts_set_simulations(t, 50);
    int before = mcts_root_visits(t);
    mcts_result r50;
    ck_assert_int_eq(mcts_search(t, &e, NULL, &r50, err, sizeof err), 0);
    ck_assert_int_eq(r50.stats.simulations, 50);
    ck_assert_int_eq(mcts_root_visits(t), before + 50);
    /* without reuse the tree starts afresh */
    p.reuse_tree = false;
    mcts *u = mcts_new(g, &p, 3, err, sizeof err);
    mcts_result res;
    ck_assert_int_eq(mcts_search(u, &e, NULL, &res, err, sizeof err), 0);
    ck_assert_int_eq(mcts_play(u, res.action), 0);
    ck_assert_int_eq(mcts_root_visits(u), 0);
    ck_assert_int_eq(mcts_play(u, res.action), -1); /* occupied now: illegal */
    mcts_free(u);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* Walks the whole tree: every child's move is legal in its parent's position; an
 * unproven node's visits are its own evaluation plus its children's (none lost or
 * counted twice: batches, collisions and compaction keep the books); a proven node
 * has at least that many. Returns the number of nodes seen. */
static int check_tree(const mcts *t, const game *g, const game_state *s, int32_t node, int visits,
                      bool proven)
{
    mcts_child_info ci[81];
    int nc = mcts_children(t, node, ci, 81);
    if (nc == 0)
        return 1;
    uint8_t mask[81];
    REQUIRE(game_legal(g, s, mask) == nc, "node %d: %d children, not one per legal move", node, nc);
    int sum = 0, seen = 1;
    game_state *cs = malloc(g->state_size);
    for (int i = 0; i < nc; i++) {
        REQUIRE(mask[ci[i].action], "node %d: illegal child move %d", node, ci[i].action);
        if (ci[i].node < 0) {
            REQUIRE(ci[i].visits == 0, "node %d: visits on an edge without a node", node);
            continue;
        }
        sum += ci[i].visits;
        game_copy(g, cs, s);
        REQUIRE(game_play(g, cs, ci[i].action) == 0, "node %d: cannot play %d", node, ci[i].action);
        seen += check_tree(t, g, cs, ci[i].node, ci[i].visits, ci[i].proven);
    }
    free(cs);
    if (proven)
        REQUIRE(visits >= 1 + sum, "proven node %d: %d visits < 1 + %d", node, visits, sum);
    else
        REQUIRE(visits == 1 + sum, "node %d: %d visits != 1 + %d (children)", node, visits, sum);
    return seen;
}

/* pi counts this search's playouts only: after tree reuse, the visits the kept subtree
 * brought are not in it (fresh_pi), and without fresh_pi they are. */
START_TEST(fresh_pi_excludes_reused_visits)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    for (int fresh = 0; fresh <= 1; fresh++) {
        mcts_params p = params(300);
        p.fresh_pi = fresh;
        mcts *t = mcts_new(g, &p, 7, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        float pi[81];
        ck_assert_int_eq(mcts_search(t, &e, pi, &res, err, sizeof err), 0);
        ck_assert_int_eq(mcts_play(t, res.action), 0);
        /* the kept subtree's visits, per child, before the next search */
        mcts_child_info before[81], after[81];
        int nb = mcts_children(t, MCTS_ROOT, before, 81);
        int carried = 0;
        for (int i = 0; i < nb; i++)
            carried += before[i].visits;
        ck_assert_int_gt(carried, 20); /* the test means something only with reuse */
        ck_assert_int_eq(mcts_search(t, &e, pi, &res, err, sizeof err), 0);
        int na = mcts_children(t, MCTS_ROOT, after, 81);
        ck_assert_int_eq(na, nb);
        double total = 0;
        for (int i = 0; i < na; i++)
            total += after[i].visits - (fresh ? before[i].visits : 0);
        ck_assert_int_eq(res.stats.pi_visits, (int)total);
        ck_assert_int_eq((int)total, fresh ? 300 : 300 + carried);
        for (int i = 0; i < na; i++) {
            double want = (after[i].visits - (fresh ? before[i].visits : 0)) / total;
            ck_assert_msg(fabs(pi[after[i].action] - want) < 1e-5, "fresh %d: pi[%d] = %g, want %g", fresh,
                          after[i].action, pi[after[i].action], want);
        }
        mcts_free(t);
    }
    game_free(g);
}
END_TEST

/* Policy target pruning on hand-made numbers: the most visited child keeps its visits;
 * a child whose playouts PUCT wanted keeps them; forced-looking playouts of a weak
 * child are removed down to what PUCT would have given, and a child left with one
 * playout loses it. */
START_TEST(policy_pruning_by_hand)
{
    /* c_puct 1, k 2. N = 100 + 20 + 9 + 1 = 130, sqrt(N) = 11.40. */
    float prior[4] = {0.4f, 0.3f, 0.2f, 0.1f};
    float q[4] = {0.5f, 0.45f, -0.5f, -0.9f};
    float v[4] = {100, 20, 9, 1};
    double sq = sqrt(130.0);
    double best = 0.5 + 1.0 * 0.4 * sq / 101.0; /* 0.5451 */
    int removed = mcts_prune_policy(4, prior, q, v, 1.0f, 2.0f);
    ck_assert_float_eq(v[0], 100); /* the best is never touched */
    /* child 1: PUCT at 20 visits = 0.45 + 0.3*11.40/21 = 0.613 > best: it earned them; at
     * fewer it would rank higher still, so nothing can be removed */
    ck_assert_float_eq(v[1], 20);
    /* child 2: q is far below; forced = sqrt(2*0.2*130) = 7.2, so up to 7 removed, keeping
     * at least the visits where PUCT = best: n' >= 0.2*11.40/(0.5451+0.5) - 1 = 1.18 -> 2 */
    ck_assert(ceil(0.2 * sq / (best + 0.5) - 1.0) == 2 && ceil(9 - sqrt(2 * 0.2 * 130.0)) == 2);
    ck_assert_float_eq(v[2], 2);
    ck_assert_float_eq(v[3], 0); /* one playout: removed */
    ck_assert_int_eq(removed, (int)(9 - v[2]) + 1);
    /* nothing visited: nothing to do */
    float z[2] = {0, 0}, pz[2] = {0.5f, 0.5f}, qz[2] = {0, 0};
    ck_assert_int_eq(mcts_prune_policy(2, pz, qz, z, 1.5f, 2.0f), 0);
}
END_TEST

/* LCB move choice on hand-made numbers (z = 3, min fraction 0.1): a child with fewer
 * visits but a clearly higher, tight mean beats the most visited; the same mean with
 * a wide spread does not; a child under the visit floor never competes; an exact
 * (proven) child competes with one visit and no uncertainty; z = 0 is the best mean. */
START_TEST(lcb_by_hand)
{
    /* A: 100 visits at 0.5 with no spread: var = (25 - 25 + 1) / 101, bound 0.5 - 3 *
     * sqrt(var / 100) = 0.4701. B: 40 visits at 0.6, no spread: bound 0.5259. */
    float v[2] = {100, 40}, q[2] = {0.5f, 0.6f}, sq[2] = {25.0f, 14.4f};
    ck_assert_int_eq(mcts_lcb_select(2, v, q, sq, NULL, 3.0f, 0.1f), 1);
    /* B's 40 values all +-1 (sq = 40): var = (40 - 14.4 + 1) / 41, bound 0.218 */
    sq[1] = 40.0f;
    ck_assert_int_eq(mcts_lcb_select(2, v, q, sq, NULL, 3.0f, 0.1f), 0);
    /* z = 0: the bound is the mean */
    ck_assert_int_eq(mcts_lcb_select(2, v, q, sq, NULL, 0.0f, 0.1f), 1);
    /* B under the floor (9 < 0.1 * 100 = 10), however good */
    float v2[2] = {100, 9}, q2[2] = {0.5f, 0.95f}, sq2[2] = {25.0f, 9 * 0.9025f};
    ck_assert_int_eq(mcts_lcb_select(2, v2, q2, sq2, NULL, 0.0f, 0.1f), 0);
    v2[1] = 10;
    sq2[1] = 10 * 0.9025f;
    ck_assert_int_eq(mcts_lcb_select(2, v2, q2, sq2, NULL, 3.0f, 0.1f), 1);
    /* an exact child (a proven draw, q 0) with one visit against A at -0.2: the draw */
    float v3[3] = {100, 1, 0}, q3[3] = {-0.2f, 0.0f, 0.0f}, sq3[3] = {4.0f, 0.0f, 0.0f};
    uint8_t ex[3] = {0, 1, 0};
    ck_assert_int_eq(mcts_lcb_select(3, v3, q3, sq3, ex, 3.0f, 0.1f), 1);
    ck_assert_int_eq(mcts_lcb_select(3, v3, q3, sq3, NULL, 3.0f, 0.1f), 0); /* not exact: floor */
    /* ties in the bound: more visits; nothing visited: -1 */
    float v4[2] = {30, 50}, q4[2] = {0.1f, 0.1f}, sq4[2] = {0.3f, 0.5f};
    ck_assert_int_eq(mcts_lcb_select(2, v4, q4, sq4, NULL, 0.0f, 0.1f), 1);
    float v5[2] = {0, 0};
    ck_assert_int_eq(mcts_lcb_select(2, v5, q4, sq4, NULL, 3.0f, 0.1f), -1);
}
END_TEST

/* LCB in the search: with z = 0 a player plays the child with the best mean among the
 * children with at least 10% of the most visits (not the most visited one, in some
 * position here); self-play (noise on) ignores it; whole games with tree reuse keep the
 * tree consistent (the squared sums move with the nodes when the arena is compacted). */
START_TEST(lcb_in_search)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    mcts_params p = params(400);
    p.lcb_stdevs = 0.0f; /* first: off */
    p.lcb_min_fraction = 0.1f;
    int differs = 0, searches = 0;
    for (int variant = 0; variant < 2; variant++) {
        mcts_params pv = p;
        pv.lcb_stdevs = variant ? 1e-9f : 0.0f; /* on, with (almost) z = 0 */
        mcts *t = mcts_new(g, &pv, 5, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        while (!game_terminal(g, mcts_root_state(t))) {
            mcts_result res;
            ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
            check_tree(t, g, mcts_root_state(t), MCTS_ROOT, mcts_root_visits(t), res.proven);
            mcts_child_info ci[81];
            int nc = mcts_children(t, MCTS_ROOT, ci, 81);
            int most = -1;
            bool any_proven = false;
            for (int i = 0; i < nc; i++) {
                any_proven |= ci[i].proven;
                if (ci[i].visits > 0 && (most < 0 || ci[i].visits > ci[most].visits))
                    most = i;
            }
            if (variant == 1 && !res.proven && !any_proven && most >= 0) {
                float floor_v = 0.1f * (float)ci[most].visits;
                if (floor_v < 2.0f)
                    floor_v = 2.0f;
                int want = most;
                for (int i = 0; i < nc; i++)
                    if ((float)ci[i].visits >= floor_v && ci[i].q > ci[want].q + 1e-4f)
                        want = i;
                ck_assert_int_eq(res.action, ci[want].action);
                differs += want != most;
                searches++;
            } else if (variant == 0 && !res.proven && most >= 0) {
                ck_assert_int_eq(ci[most].visits > 0, 1);
            }
            ck_assert_int_eq(mcts_play(t, res.action), 0);
            if (mcts_root_visits(t) > 0)
                check_tree(t, g, mcts_root_state(t), MCTS_ROOT, mcts_root_visits(t), false);
        }
        mcts_free(t);
    }
    ck_assert_int_gt(searches, 5);
    ck_assert_int_gt(differs, 0);
    /* noise on (self-play): the LCB is not used, the move comes from the visits */
    mcts_params pn = p;
    pn.lcb_stdevs = 1e-9f;
    pn.noise = true;
    pn.forced_playouts = 0.0f;
    mcts *t = mcts_new(g, &pn, 7, err, sizeof err);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
    mcts_child_info ci[81];
    int nc = mcts_children(t, MCTS_ROOT, ci, 81), mv = -1;
    for (int i = 0; i < nc; i++)
        if (ci[i].action == res.action)
            mv = ci[i].visits;
    for (int i = 0; i < nc; i++)
        ck_assert_int_le(ci[i].visits, mv);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* Forced playouts in a search: with noise on, every root child the search visited has
 * at least about sqrt(k P N) - 1 visits (P the prior after noise), and pruning takes
 * them out of pi again, so pi is sharper than the visit counts. */
START_TEST(forced_playouts_in_search)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    mcts_params p = params(400);
    p.noise = true;
    p.forced_playouts = 2.0f;
    p.policy_pruning = true;
    p.batch = 1;
    mcts *t = mcts_new(g, &p, 11, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_result res;
    float pi[81];
    ck_assert_int_eq(mcts_search(t, &e, pi, &res, err, sizeof err), 0);
    mcts_child_info ci[81];
    int nc = mcts_children(t, MCTS_ROOT, ci, 81);
    int N = 0, visited = 0, pruned_away = 0;
    for (int i = 0; i < nc; i++)
        N += ci[i].visits;
    for (int i = 0; i < nc; i++) {
        if (ci[i].visits == 0)
            continue;
        visited++;
        double need = sqrt(2.0 * ci[i].prior * N);
        ck_assert_msg(ci[i].visits >= floor(need) - 1, "child %d: %d visits, forced %g", ci[i].action,
                      ci[i].visits, need);
        pruned_away += pi[ci[i].action] < (double)ci[i].visits / N - 1e-6;
    }
    ck_assert_int_gt(visited, 3);
    ck_assert_int_gt(pruned_away, 0);
    ck_assert_int_lt(res.stats.pi_visits, N);
    double sum = 0;
    for (int a = 0; a < 81; a++)
        sum += pi[a];
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    ck_assert(pi[res.action] > 0);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* Gumbel MuZero's completed-Q target by hand: an unvisited child gets the mixed value
 * v_mix, Q is rescaled min-max, sigma = (50 + max visits) * 0.1; numbers from an
 * independent computation. Equal Q everywhere leaves the prior; a prior-0 child gets
 * nothing; all priors 0 is refused. */
START_TEST(completed_q_by_hand)
{
    const float prior[3] = {0.5f, 0.3f, 0.2f}, q[3] = {0.0f, 0.5f, 0.0f}, n[3] = {10, 10, 0};
    float pi[3];
    ck_assert_int_eq(mcts_completed_q_policy(3, prior, q, n, 0.0f, pi), 0);
    /* v_mix = 20 * (0.3 * 0.5 / 0.8) / 21 = 0.17857 -> rescaled 0.357; sigma scale 6 */
    ck_assert_float_eq_tol(pi[0], 0.0040573f, 1e-5);
    ck_assert_float_eq_tol(pi[1], 0.9821091f, 1e-5);
    ck_assert_float_eq_tol(pi[2], 0.0138335f, 1e-5);
    const float qs[3] = {0.2f, 0.2f, 0.2f}, ns[3] = {4, 3, 2};
    ck_assert_int_eq(mcts_completed_q_policy(3, prior, qs, ns, 0.2f, pi), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_float_eq_tol(pi[i], prior[i], 1e-6);
    const float p0[3] = {0.0f, 0.6f, 0.4f};
    ck_assert_int_eq(mcts_completed_q_policy(3, p0, q, n, 0.0f, pi), 0);
    ck_assert_float_eq(pi[0], 0.0f);
    ck_assert_float_eq_tol(pi[1] + pi[2], 1.0f, 1e-6);
    const float pz[3] = {0, 0, 0};
    pi[0] = 7;
    ck_assert_int_eq(mcts_completed_q_policy(3, pz, q, n, 0.0f, pi), -1);
    ck_assert_float_eq(pi[0], 7);
}
END_TEST

/* The Gumbel target in a search where white threatens five (a5-d5; only e5 stops it):
 * the solver proves the other moves lost. They get no target mass, as in the visit
 * target (kept at sigma = 0 they held 24% of it, each about its prior: the block had
 * 72%), and they stay at q = -1 in the min-max rescaling (as mctx does): left out of it,
 * the block's Q and the unvisited moves' v_mix (nearly the block's Q, the only other
 * visited move) would span the whole [0, 1] and whichever is a hair higher would take
 * sigma's full bonus (tried 2026-12-07: the block got 0.09%). Now the block has 95%. */
START_TEST(gumbel_target_keeps_a_lone_defence)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    game_state *s = position(g, "g9 i1 a9 i9", "a5 b5 c5 d5");
    int block = move_of(g, "e5");
    char err[256];
    mcts_params p = params(64);
    p.gumbel = true;
    p.gumbel_m = 16;
    p.batch = 1;
    p.noise = false;
    p.reuse_tree = false;
    ck_assert(p.solver);
    mcts *t = mcts_new(g, &p, 9, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_set_root(t, s);
    mcts_result res;
    float pi[81];
    ck_assert_msg(mcts_search(t, &e, pi, &res, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(res.action, block);
    mcts_child_info ci[81];
    int nc = mcts_children(t, MCTS_ROOT, ci, 81);
    int nlost = 0;
    double lost_mass = 0, sum = 0;
    for (int i = 0; i < nc; i++) {
        bool lost = ci[i].proven && ci[i].proven_value[0] <= -1.0f;
        nlost += lost;
        lost_mass += lost ? pi[ci[i].action] : 0.0;
        sum += pi[ci[i].action];
    }
    ck_assert_int_ge(nlost, 3);
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    ck_assert_msg(pi[block] > 0.9f, "the block has %g of the target", pi[block]);
    ck_assert_msg(lost_mass == 0.0, "the %d lost moves have %g of the target", nlost, lost_mass);
    mcts_free(t);
    free(s);
    game_free(g);
}
END_TEST

/* In a search, policy_target completed_q makes pi exactly the improved policy of the
 * root's children (their priors, Q and visits, and the root's value), while the move is
 * still the most visited one. */
START_TEST(completed_q_in_search)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    mcts_params p = params(300);
    p.completed_q = true;
    mcts *t = mcts_new(g, &p, 5, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_result res;
    float pi[81];
    ck_assert_int_eq(mcts_search(t, &e, pi, &res, err, sizeof err), 0);
    mcts_child_info ci[81];
    int nc = mcts_children(t, MCTS_ROOT, ci, 81);
    float prior[81], q[81], n[81], want[81];
    int most = 0;
    for (int i = 0; i < nc; i++) {
        prior[i] = ci[i].prior, q[i] = ci[i].q, n[i] = (float)ci[i].visits;
        if (ci[i].visits > ci[most].visits)
            most = i;
    }
    ck_assert_int_eq(mcts_completed_q_policy(nc, prior, q, n, res.value[0], want), 0);
    double sum = 0;
    for (int i = 0; i < nc; i++) {
        ck_assert_msg(fabsf(pi[ci[i].action] - want[i]) < 1e-5, "action %d: pi %g, want %g", ci[i].action,
                      pi[ci[i].action], want[i]);
        sum += pi[ci[i].action];
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    ck_assert_int_eq(res.action, ci[most].action);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* ---- Gumbel AlphaZero: sequential halving on a bandit, the root's target ------------ */

START_TEST(gumbel_schedule_by_hand)
{
    int32_t v[32];
    /* m = 4, n = 16: ceil(log2 4) = 2 phases of max(1, 16 / (2 * 4)) = 2 visits each for
     * the 4 moves (visits 0 and 1), then the 2 left get 16 / (2 * 2) = 4 each (2..5) */
    const int32_t w4[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
    ck_assert_int_eq(mcts_gumbel_schedule(4, 16, v), 0);
    for (int k = 0; k < 16; k++)
        ck_assert_int_eq(v[k], w4[k]);
    /* m = 3, n = 10: 10 / (2 * 3) = 1 visit each, then 2 moves with 10 / 4 = 2 visits a
     * round until the budget ends */
    const int32_t w3[10] = {0, 0, 0, 1, 1, 2, 2, 3, 3, 4};
    ck_assert_int_eq(mcts_gumbel_schedule(3, 10, v), 0);
    for (int k = 0; k < 10; k++)
        ck_assert_int_eq(v[k], w3[k]);
    /* m = 8, n = 32 (the bandit below): 8 x 1, 4 x 2, then 2 moves to the end */
    const int32_t w8[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                            3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10};
    ck_assert_int_eq(mcts_gumbel_schedule(8, 32, v), 0);
    for (int k = 0; k < 32; k++)
        ck_assert_int_eq(v[k], w8[k]);
    ck_assert_int_eq(mcts_gumbel_schedule(1, 5, v), 0);
    for (int k = 0; k < 5; k++)
        ck_assert_int_eq(v[k], k);
    ck_assert_int_eq(mcts_gumbel_schedule(0, 5, v), -1);
    ck_assert_int_eq(mcts_gumbel_schedule(4, 0, v), -1);
}
END_TEST

/* A one-player bandit: the first move pulls one of 8 arms, then 10 plies of 2 moves each
 * lead to the end. Every position after arm a is worth bandit_mu[a] plus a small
 * per-position noise (the evaluator's, and the end's result). */
enum { BANDIT_ARMS = 8, BANDIT_DEPTH = 10 };
static const float bandit_mu[BANDIT_ARMS] = {0.10f, 0.30f, -0.20f, 0.65f, 0.00f, 0.35f, -0.50f, 0.20f};

typedef struct bandit_state {
    int8_t arm;   /* -1 before the pull */
    int8_t ply;
    uint16_t path; /* bits of the moves after the pull */
} bandit_state;

static int bandit_player(const game *g, const game_state *s)
{
    (void)g;
    (void)s;
    return 0;
}
static void bandit_init(const game *g, game_state *gs, rng *r)
{
    (void)g;
    (void)r;
    bandit_state *s = (bandit_state *)gs;
    memset(s, 0, sizeof *s);
    s->arm = -1;
}
static bool bandit_terminal(const game *g, const game_state *s)
{
    (void)g;
    return ((const bandit_state *)s)->ply > BANDIT_DEPTH;
}
static int bandit_legal(const game *g, const game_state *gs, uint8_t *mask)
{
    const bandit_state *s = (const bandit_state *)gs;
    memset(mask, 0, BANDIT_ARMS);
    if (bandit_terminal(g, gs))
        return 0;
    int n = s->arm < 0 ? BANDIT_ARMS : 2;
    memset(mask, 1, (size_t)n);
    return n;
}
static int bandit_play(const game *g, game_state *gs, int a)
{
    bandit_state *s = (bandit_state *)gs;
    if (bandit_terminal(g, gs) || a < 0 || a >= (s->arm < 0 ? BANDIT_ARMS : 2))
        return -1;
    if (s->arm < 0)
        s->arm = (int8_t)a;
    else
        s->path = (uint16_t)(s->path * 2 + a);
    s->ply++;
    return 0;
}
static uint64_t bandit_hash(const game *g, const game_state *gs)
{
    (void)g;
    const bandit_state *s = (const bandit_state *)gs;
    return ((uint64_t)(s->arm + 1) << 40) | ((uint64_t)s->ply << 20) | s->path;
}
/* the arm's mean plus noise in [-0.1, 0.1] fixed by the position */
static float bandit_value(const game_state *gs)
{
    const bandit_state *s = (const bandit_state *)gs;
    uint64_t h = bandit_hash(NULL, gs) * 0x9E3779B97F4A7C15ull;
    return bandit_mu[s->arm] + (float)((double)(h >> 40) / (double)(1ull << 24) * 0.2 - 0.1);
}
static void bandit_result(const game *g, const game_state *s, float *z)
{
    (void)g;
    z[0] = bandit_value(s);
}
static int bandit_ply(const game *g, const game_state *s)
{
    (void)g;
    return ((const bandit_state *)s)->ply;
}
static const game_ops bandit_ops = {
    .name = "bandit",
    .init = bandit_init,
    .current_player = bandit_player,
    .legal = bandit_legal,
    .play = bandit_play,
    .terminal = bandit_terminal,
    .result = bandit_result,
    .hash = bandit_hash,
    .ply = bandit_ply,
};
static game bandit_game(void)
{
    game g;
    memset(&g, 0, sizeof g);
    g.ops = &bandit_ops;
    g.players = 1;
    g.rows = 1;
    g.cols = BANDIT_ARMS;
    g.actions = BANDIT_ARMS;
    g.planes = 1;
    g.state_size = sizeof(bandit_state);
    g.nsym = 1;
    g.max_game_length = BANDIT_DEPTH + 1;
    return g;
}
/* uniform priors over the legal moves; the position's value */
static int bandit_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                           const uint8_t *legal, float *priors, float *values, char *err,
                           size_t errlen)
{
    (void)e;
    (void)keys;
    (void)err;
    (void)errlen;
    for (int i = 0; i < n; i++) {
        const bandit_state *s = (const bandit_state *)states[i];
        int nl = 0;
        for (int a = 0; a < BANDIT_ARMS; a++)
            nl += legal[i * BANDIT_ARMS + a];
        for (int a = 0; a < BANDIT_ARMS; a++)
            priors[i * BANDIT_ARMS + a] = legal[i * BANDIT_ARMS + a] ? 1.0f / (float)nl : 0.0f;
        values[i] = s->arm < 0 ? 0.0f : bandit_value(states[i]);
    }
    return 0;
}

static evaluator bandit_evaluator(const game *g)
{
    evaluator e;
    memset(&e, 0, sizeof e);
    e.name = "bandit";
    e.g = g;
    e.evaluate = bandit_evaluate;
    e.destroy = fake_destroy;
    return e;
}

static mcts_params gumbel_params(int sims, int m, int batch, bool noise)
{
    mcts_params p = params(sims);
    p.gumbel = true;
    p.gumbel_m = m;
    p.batch = batch;
    p.noise = noise;
    p.temperature_moves = 1000; /* the Gumbel draw in every ply (gumbel_late_plies_draw_none) */
    p.reuse_tree = false;
    return p;
}

/* Sequential halving finds the best arm with the schedule of gumbel_schedule_by_hand:
 * 32 simulations over 8 arms give every arm 1 visit, the best 4 arms 2 more, and the best
 * 2 arms 8 more each; the best arm has the most visits and is played. The same with the
 * leaves gathered 4 at a time (pending visits count for the schedule). With Gumbel noise
 * (10 seeds; the considered set is every arm, m = 8) the visits keep that shape, the
 * played move is a most visited one and mostly the best arm. The target is the root's
 * completed-Q improved policy in every case. */
START_TEST(gumbel_bandit_halving)
{
    game g = bandit_game();
    evaluator e = bandit_evaluator(&g);
    char err[256];
    int best_played = 0;
    for (int round = 0; round < 12; round++) {
        int batch = round == 1 ? 4 : 1;
        bool noise = round >= 2;
        mcts_params p = gumbel_params(32, 8, batch, noise);
        mcts *t = mcts_new(&g, &p, 100 + (uint64_t)round, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        float pi[BANDIT_ARMS];
        ck_assert_msg(mcts_search(t, &e, pi, &res, err, sizeof err) == 0, "%s", err);
        mcts_child_info ci[BANDIT_ARMS];
        ck_assert_int_eq(mcts_children(t, MCTS_ROOT, ci, BANDIT_ARMS), BANDIT_ARMS);
        int count[12] = {0};
        for (int i = 0; i < BANDIT_ARMS; i++) {
            ck_assert_int_le(ci[i].visits, 11);
            count[ci[i].visits]++;
        }
        ck_assert_msg(count[1] == 4 && count[3] == 2 && count[11] == 2,
                      "round %d: visits %d %d %d %d %d %d %d %d", round, ci[0].visits, ci[1].visits,
                      ci[2].visits, ci[3].visits, ci[4].visits, ci[5].visits, ci[6].visits,
                      ci[7].visits);
        if (!noise) { /* the best arm survives every halving and is played */
            ck_assert_int_eq(ci[3].visits, 11);
            ck_assert_int_eq(res.action, 3);
        } else {
            /* the Gumbel draw makes the halving a sample of the improved policy: the
             * played move is a most visited one, most often the best arm */
            for (int i = 0; i < BANDIT_ARMS; i++)
                if (ci[i].action == res.action)
                    ck_assert_int_eq(ci[i].visits, 11);
            best_played += res.action == 3;
        }
        ck_assert_int_eq(res.stats.simulations, 33); /* the root's evaluation + 32 */
        /* the target is the completed-Q improved policy of the root (network priors) */
        float prior[BANDIT_ARMS], q[BANDIT_ARMS], n[BANDIT_ARMS], want[BANDIT_ARMS];
        for (int i = 0; i < BANDIT_ARMS; i++)
            prior[i] = ci[i].prior, q[i] = ci[i].q, n[i] = (float)ci[i].visits;
        ck_assert_int_eq(mcts_completed_q_policy(BANDIT_ARMS, prior, q, n, res.value[0], want), 0);
        for (int i = 0; i < BANDIT_ARMS; i++)
            ck_assert_float_eq_tol(pi[i], want[i], 1e-4);
        ck_assert_float_gt(pi[3], 0.5f); /* most of the mass on the best arm */
        mcts_free(t);
    }
    ck_assert_int_ge(best_played, 7); /* of 10 */
}
END_TEST

/* gumbel_m above the legal moves considers every legal move once: 16 asked of the
 * bandit's 8 arms runs the halving of m = 8 (the visit shape of gumbel_bandit_halving),
 * not a schedule of 16 phases' worth over moves that do not exist. */
START_TEST(gumbel_m_above_legal_moves)
{
    game g = bandit_game();
    evaluator e = bandit_evaluator(&g);
    char err[256];
    mcts_params p = gumbel_params(32, 16, 1, false);
    mcts *t = mcts_new(&g, &p, 5, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_result res;
    ck_assert_msg(mcts_search(t, &e, NULL, &res, err, sizeof err) == 0, "%s", err);
    mcts_child_info ci[BANDIT_ARMS];
    ck_assert_int_eq(mcts_children(t, MCTS_ROOT, ci, BANDIT_ARMS), BANDIT_ARMS);
    int count[33] = {0};
    for (int i = 0; i < BANDIT_ARMS; i++) {
        ck_assert_int_le(ci[i].visits, 32);
        count[ci[i].visits]++;
    }
    ck_assert_msg(count[1] == 4 && count[3] == 2 && count[11] == 2, "visits %d %d %d %d %d %d %d %d",
                  ci[0].visits, ci[1].visits, ci[2].visits, ci[3].visits, ci[4].visits,
                  ci[5].visits, ci[6].visits, ci[7].visits);
    ck_assert_int_eq(ci[3].visits, 11);
    ck_assert_int_eq(res.action, 3);
    ck_assert_int_eq(res.stats.simulations, 33);
    mcts_free(t);
}
END_TEST

/* With m below the legal moves, only m moves are searched at the root: without noise the
 * m highest priors, with noise a Gumbel-top-m sample that changes with the seed; the
 * played move is a most visited one. */
START_TEST(gumbel_root_considers_m)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    int sets_differ = 0;
    int first_set[81];
    for (int seed = 0; seed < 6; seed++) {
        bool noise = seed > 0;
        mcts_params p = gumbel_params(64, 4, 4, noise);
        mcts *t = mcts_new(g, &p, 7 + (uint64_t)seed, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        float pi[81];
        ck_assert_msg(mcts_search(t, &e, pi, &res, err, sizeof err) == 0, "%s", err);
        mcts_child_info ci[81];
        int nc = mcts_children(t, MCTS_ROOT, ci, 81);
        ck_assert_int_eq(nc, 81);
        int visited = 0, total = 0, set[81], most = 0;
        for (int i = 0; i < nc; i++) {
            set[i] = ci[i].visits > 0;
            visited += set[i];
            total += ci[i].visits;
            most = ci[i].visits > most ? ci[i].visits : most;
        }
        ck_assert_int_eq(visited, 4);
        ck_assert_int_eq(total, 64);
        if (!noise) {
            for (int i = 0; i < nc; i++) { /* the 4 highest priors */
                int higher = 0;
                for (int j = 0; j < nc; j++)
                    higher += ci[j].prior > ci[i].prior;
                ck_assert_int_eq(set[i], higher < 4);
            }
            memcpy(first_set, set, sizeof set);
        } else {
            sets_differ += memcmp(first_set, set, sizeof set) != 0;
        }
        for (int i = 0; i < nc; i++)
            if (ci[i].action == res.action)
                ck_assert_int_eq(ci[i].visits, most);
        mcts_free(t);
    }
    ck_assert_int_ge(sets_differ, 3);
    game_free(g);
}
END_TEST

/* Past temperature_moves plies self-play's root draws no Gumbel noise: the considered
 * moves are the m highest priors whatever the seed. */
START_TEST(gumbel_late_plies_draw_none)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    int first[81];
    for (int seed = 0; seed < 4; seed++) {
        mcts_params p = gumbel_params(32, 4, 4, true);
        p.temperature_moves = 0;
        mcts *t = mcts_new(g, &p, 50 + (uint64_t)seed, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        mcts_result res;
        ck_assert_msg(mcts_search(t, &e, NULL, &res, err, sizeof err) == 0, "%s", err);
        mcts_child_info ci[81];
        int nc = mcts_children(t, MCTS_ROOT, ci, 81), set[81];
        for (int i = 0; i < nc; i++) {
            int higher = 0;
            for (int j = 0; j < nc; j++)
                higher += ci[j].prior > ci[i].prior;
            set[i] = ci[i].visits > 0;
            ck_assert_int_eq(set[i], higher < 4);
        }
        if (seed == 0)
            memcpy(first, set, sizeof set);
        else
            ck_assert(memcmp(first, set, sizeof set) == 0);
        mcts_free(t);
    }
    game_free(g);
}
END_TEST

/* The rule below the root, by hand: pi' = (0.00406, 0.98211, 0.01383) (completed_q_by_hand)
 * and visits (10, 10, 0) of 20: pi' - N / 21 is (-0.47, 0.51, 0.014): child 1. With equal
 * Q pi' is the prior (0.5, 0.3, 0.2): visits (4, 3, 2) of 9 leave child 0 the furthest
 * behind (0.1 against 0 and 0), visits (5, 3, 1) child 2. */
START_TEST(gumbel_interior_by_hand)
{
    const float prior[3] = {0.5f, 0.3f, 0.2f}, q[3] = {0.0f, 0.5f, 0.0f}, n[3] = {10, 10, 0};
    float pi[3];
    ck_assert_int_eq(mcts_gumbel_interior_pick(3, prior, q, n, 0.0f, pi), 1);
    ck_assert_float_eq_tol(pi[1], 0.9821091f, 1e-5);
    const float qe[3] = {0.2f, 0.2f, 0.2f}, n2[3] = {4, 3, 2}, n3[3] = {5, 3, 1};
    ck_assert_int_eq(mcts_gumbel_interior_pick(3, prior, qe, n2, 0.2f, pi), 0);
    ck_assert_float_eq_tol(pi[2], 0.2f, 1e-6);
    ck_assert_int_eq(mcts_gumbel_interior_pick(3, prior, qe, n3, 0.2f, pi), 2);
    const float pz[3] = {0, 0, 0};
    ck_assert_int_eq(mcts_gumbel_interior_pick(3, pz, q, n, 0.0f, pi), -1);
}
END_TEST

/* The fake game's values for gumbel_interior_all_children: the mover's value at ply 1 is
 * far from those of its two children (ply 2), which lie 1e-4 apart. */
static int far_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                        const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    (void)e;
    (void)keys;
    (void)legal;
    (void)err;
    (void)errlen;
    for (int i = 0; i < n; i++) {
        const fake_state *s = (const fake_state *)states[i];
        priors[2 * i] = 0.4f;
        priors[2 * i + 1] = 0.6f;
        float v0 = s->ply == 1 ? -0.9f : s->ply == 2 ? 0.001f + 0.0001f * (float)s->moves[1] : 0.0f;
        values[2 * i] = v0;
        values[2 * i + 1] = -v0;
    }
    return 0;
}

/* An interior node whose every child has been visited, with its own value far outside
 * the children's (so v_mix, which no child uses, rescales to far above sigma's range):
 * the interior rule still names a move (it once returned none, exp(huge) * 0 being NaN,
 * seen in a 15x15 self-play run where the threat checks left nodes with 2 moves), and it
 * is the pure rule's choice. */
START_TEST(gumbel_interior_all_children)
{
    fake_np = 2;
    game g = fake_game();
    for (int i = 0; i < 8; i++) {
        fake_z[i][0] = 0.0f;
        fake_z[i][1] = 0.0f;
    }
    evaluator ev = {.name = "far", .g = &g, .evaluate = far_evaluate, .destroy = fake_destroy};
    char err[256];
    mcts_params p = gumbel_params(8, 2, 1, false);
    p.solver = false;
    mcts *t = mcts_new(&g, &p, 5, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_result res;
    ck_assert_msg(mcts_search(t, &ev, NULL, &res, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(res.stats.gumbel_fallbacks, 0);
    mcts_child_info ci[2], gi[2];
    ck_assert_int_eq(mcts_children(t, MCTS_ROOT, ci, 2), 2);
    int deep = 0;
    for (int a = 0; a < 2; a++) {
        ck_assert_int_eq(ci[a].visits, 4); /* the halving: 4 + 4 of 8 */
        ck_assert_int_eq(mcts_children(t, ci[a].node, gi, 2), 2);
        /* X's visits: its own, one per child, then the fourth where both were visited;
         * which child it took is the pure rule's choice with the state after three */
        int more = gi[0].visits == 2 ? 0 : gi[1].visits == 2 ? 1 : -1;
        ck_assert_int_ge(more, 0);
        ck_assert_int_eq(gi[0].visits + gi[1].visits, 3);
        /* the mover (player 1) sees child a at -(0.001 + 0.0001 a), and X itself at 0.9 */
        float prior[2] = {gi[0].prior, gi[1].prior}, n1[2] = {1, 1}, pi[2];
        float q[2] = {-(0.001f + 0.0001f * (float)gi[0].action), -(0.001f + 0.0001f * (float)gi[1].action)};
        ck_assert_int_eq(mcts_gumbel_interior_pick(2, prior, q, n1, 0.9f, pi), more);
        deep++;
    }
    ck_assert_int_eq(deep, 2);
    mcts_free(t);
    fake_np = 3;
}
END_TEST

/* In the tree, every descent below the root takes the child mcts_gumbel_interior_pick
 * names from the node's statistics: with gumbel_m = 1 every simulation goes through the
 * root's best-prior child X, stepped one leaf at a time; before each step the pick is
 * computed from X's children and X's own evaluation, after it the child whose visits grew
 * must be that one. */
START_TEST(gumbel_interior_in_search)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    char err[256];
    mcts_params p = gumbel_params(120, 1, 1, false);
    mcts *t = mcts_new(g, &p, 3, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_batch *b = mcts_batch_new(g, 1);
    mcts_begin(t);
    for (int k = 0; k < 3; k++) /* the root, then X */
        ck_assert_int_ge(mcts_step_many(&t, 1, b, &e, err, sizeof err), 0);
    mcts_child_info ci[81], gi[81], gj[81];
    int checked = 0;
    while (!mcts_done(t)) {
        int nc = mcts_children(t, MCTS_ROOT, ci, 81), x = -1;
        for (int i = 0; i < nc; i++)
            if (ci[i].visits > 0)
                x = i;
        ck_assert_int_ge(x, 0);
        int ng = mcts_children(t, ci[x].node, gi, 81);
        int mover = 1 - game_current_player(g, mcts_root_state(t));
        float prior[81], q[81], n[81], pi[81];
        double w = (double)ci[x].value[mover] * ci[x].visits, nn = ci[x].visits;
        for (int i = 0; i < ng; i++) {
            prior[i] = gi[i].prior;
            q[i] = gi[i].q;
            n[i] = (float)gi[i].visits;
            w -= (double)gi[i].value[mover] * gi[i].visits;
            nn -= gi[i].visits;
        }
        ck_assert_double_eq_tol(nn, 1.0, 1e-9); /* X's own evaluation */
        int want = mcts_gumbel_interior_pick(ng, prior, q, n, (float)w, pi);
        ck_assert_int_ge(mcts_step_many(&t, 1, b, &e, err, sizeof err), 0);
        ck_assert_int_eq(mcts_children(t, ci[x].node, gj, 81), ng);
        int grew = -1;
        for (int i = 0; i < ng; i++)
            if (gj[i].visits > gi[i].visits)
                grew = i;
        if (grew < 0)
            continue; /* a collision or a proven leaf elsewhere: nothing to compare */
        ck_assert_msg(grew == want, "step %d: the tree took child %d, the rule %d", checked, grew,
                      want);
        checked++;
    }
    ck_assert_int_ge(checked, 100);
    mcts_batch_free(b);
    mcts_free(t);
    game_free(g);
}
END_TEST

/* The automatic arena holds a whole search on a board of more than 256 points: 25x25
 * with 10,000 simulations made every one (it stopped at about 8,250, the edges sized at
 * 256 a node while an early node has 625). */
START_TEST(automatic_arena_fits_large_boards)
{
    game *g = make(25, 25, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    mcts_params p = params(10000);
    mcts_result res;
    float pi[625];
    game_state *s = game_state_new(g, NULL);
    search_once(g, s, &e, p, 3, &res, pi);
    free(s);
    ck_assert(!res.stats.arena_full);
    ck_assert_int_eq(res.stats.simulations, 10000);
    game_free(g);
}
END_TEST

START_TEST(tree_invariants_through_games)
{
    game *g = make(9, 9, 4);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    for (int variant = 0; variant < 2; variant++) {
        mcts_params p = params(300);
        p.noise = true;
        p.temperature_moves = 6;
        p.batch = variant ? 8 : 3;
        p.virtual_loss = variant ? 1.0f : 0.0f;
        char err[256];
        mcts *t = mcts_new(g, &p, 21 + (uint64_t)variant, err, sizeof err);
        int moves = 0, reused = 0;
        while (!game_terminal(g, mcts_root_state(t))) {
            mcts_result res;
            ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
            int n = check_tree(t, g, mcts_root_state(t), MCTS_ROOT, mcts_root_visits(t), res.proven);
            ck_assert_int_eq(n, res.stats.nodes);
            ck_assert(!res.stats.arena_full);
            mcts_child_info ci[81];
            int nc = mcts_children(t, MCTS_ROOT, ci, 81);
            bool child_proven = false;
            for (int i = 0; i < nc; i++)
                if (ci[i].action == res.action)
                    child_proven = ci[i].proven;
            ck_assert_int_eq(mcts_play(t, res.action), 0);
            reused += mcts_root_visits(t) > 0;
            if (mcts_root_visits(t) > 0) /* the kept subtree after compaction */
                check_tree(t, g, mcts_root_state(t), MCTS_ROOT, mcts_root_visits(t), child_proven);
            moves++;
        }
        ck_assert_int_gt(moves, 7);
        ck_assert_int_gt(reused, moves / 2);
        mcts_free(t);
    }
    game_free(g);
}
END_TEST

/* Small arenas, odd batch sizes, with and without virtual loss and solver, whole games
 * with reuse: the books stay right and every move is legal, full arena or not. */
START_TEST(small_arenas_through_games)
{
    game *g = make(5, 5, 4);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    const int32_t nodes[] = {2, 3, 5, 17, 64, 0};
    const int64_t edges[] = {0, 30, 40, 100, 0, 200};
    int fulls = 0;
    for (int v = 0; v < 6 * 4; v++) {
        mcts_params p = params(60);
        p.max_nodes = nodes[v % 6];
        p.max_edges = edges[v % 6];
        p.batch = 1 + (v % 4) * 3;
        p.virtual_loss = (v & 1) ? 1.0f : 0.0f;
        p.solver = (v / 6) % 2 == 0;
        p.temperature_moves = 3;
        char err[256];
        mcts *t = mcts_new(g, &p, (uint64_t)v, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        while (!game_terminal(g, mcts_root_state(t))) {
            mcts_result res;
            float pi[25];
            ck_assert_int_eq(mcts_search(t, &e, pi, &res, err, sizeof err), 0);
            fulls += res.stats.arena_full;
            uint8_t mask[25];
            game_legal(g, mcts_root_state(t), mask);
            REQUIRE(mask[res.action], "variant %d: illegal move %d", v, res.action);
            REQUIRE(pi[res.action] > 0, "variant %d: chosen move has pi 0", v);
            check_tree(t, g, mcts_root_state(t), MCTS_ROOT, mcts_root_visits(t), res.proven);
            ck_assert_int_eq(mcts_play(t, res.action), 0);
        }
        mcts_free(t);
    }
    ck_assert_int_gt(fulls, 0);
    game_free(g);
}
END_TEST

/* ---- no allocation in the search -------------------------------------------------------
 * This test binary interposes malloc/calloc/realloc (forwarding to glibc's allocator) so
 * it can count the calls made while searching. Not under AddressSanitizer, which owns
 * malloc itself. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define GZ_SANITIZER_OWNS_MALLOC 1
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) &&         \
    !defined(GZ_SANITIZER_OWNS_MALLOC)
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
static long alloc_calls;
static bool alloc_counting;
void *malloc(size_t n)
{
    alloc_calls += alloc_counting;
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    alloc_calls += alloc_counting;
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    alloc_calls += alloc_counting;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}

START_TEST(no_allocation_while_searching)
{
    /* the counter works */
    alloc_counting = true;
    char *volatile probe = malloc(16);
    alloc_counting = false;
    free(probe);
    ck_assert_int_eq(alloc_calls, 1);
    alloc_calls = 0;

    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    evaluator *ro = eval_rollout_new(g, 2, 1);
    game_state *start = game_state_new(g, NULL);
    enum { NT = 3 };
    mcts_params p = params(200);
    p.noise = true;
    p.temperature_moves = 4;
    p.vcf_root = 2000; /* the threat checks allocate nothing either */
    p.vcf_leaf = 100;
    p.vcf_defend = true;
    char err[256];
    mcts *t[NT];
    for (int i = 0; i < NT; i++)
        t[i] = mcts_new(g, &p, (uint64_t)i, err, sizeof err);
    mcts_batch *b = mcts_batch_new(g, NT * p.batch);
    float pi[81];
    mcts_child_info ci[81];
    int moves = 0, failures = 0;

    alloc_counting = true;
    /* one tree at a time, both evaluators, with reuse */
    for (int m = 0; m < 12; m++) {
        mcts_result res;
        failures += mcts_search(t[0], m % 2 ? ro : &e, pi, &res, err, sizeof err) != 0;
        failures += mcts_children(t[0], MCTS_ROOT, ci, 81) == 0;
        failures += mcts_play(t[0], res.action) != 0;
        moves++;
    }
    /* many trees stepped together, games restarted when they end */
    for (int i = 0; i < NT; i++)
        mcts_begin(t[i]);
    while (moves < 12 + 60) {
        failures += mcts_step_many(t, NT, b, &e, err, sizeof err) < 0;
        for (int i = 0; i < NT; i++) {
            if (!mcts_done(t[i]))
                continue;
            mcts_result res;
            mcts_finish(t[i], pi, &res);
            failures += mcts_play(t[i], res.action) != 0;
            if (game_terminal(g, mcts_root_state(t[i])))
                mcts_set_root(t[i], start);
            mcts_begin(t[i]);
            moves++;
        }
    }
    alloc_counting = false;

    ck_assert_int_eq(failures, 0);
    ck_assert_int_eq(alloc_calls, 0);
    for (int i = 0; i < NT; i++)
        mcts_free(t[i]);
    mcts_batch_free(b);
    evaluator_free(ro);
    free(start);
    game_free(g);
}
END_TEST
#endif

/* ---- threat checks (mcts.vcf_root, vcf_leaf, vcf_defend) ------------------------------ */

/* Black: h8 i8 j8 (g8 white) and k6 k7: k8 makes a four and an open three; after the
 * forced l8, k9 or k5 makes an open four. The only VCF starts with k8. */
#define VCF_BLACK "h8 i8 j8 k6 k7"
#define VCF_WHITE "g8 a1 a15 o1 o15"

START_TEST(vcf_root_plays_the_proven_win)
{
    game *g = make(15, 15, 5);
    evaluator *er = eval_random_new(g);
    game_state *s = position(g, VCF_BLACK, VCF_WHITE);
    for (int mode = 0; mode < 2; mode++) {
        mcts_params p = params(200);
        if (mode == 0)
            p.vcf_root = 100000; /* the root check in mcts_begin */
        else
            p.vcf_leaf = 1000; /* the node check proves the root when it is set up */
        mcts_result res;
        float pi[225];
        search_once(g, s, er, p, 3, &res, pi);
        ck_assert_int_eq(res.action, move_of(g, "k8"));
        ck_assert(res.proven);
        ck_assert_float_eq(res.value[0], 1.0f);
        ck_assert_int_eq(res.stats.simulations, 0); /* no search needed */
        ck_assert_float_eq(pi[res.action], 1.0f);
    }
    /* with the solver off nothing is proven */
    mcts_params p = params(50);
    p.vcf_root = 100000;
    p.solver = false;
    mcts_result res;
    search_once(g, s, er, p, 3, &res, NULL);
    ck_assert(!res.proven);
    ck_assert_int_eq(res.stats.simulations, 50);
    free(s);
    evaluator_free(er);
    game_free(g);
}
END_TEST

/* vct_root: black to move has a double three (an open three on a column and one on a
 * row through the same point; test_threat's vct_double_three) and no VCF. The VCF
 * checks find nothing; the root VCT check proves the root and plays the point at once. */
START_TEST(vct_root_plays_the_proven_win)
{
    game *g = make(11, 11, 5);
    evaluator *er = eval_random_new(g);
    const int black[4][2] = {{3, 6}, {4, 6}, {5, 4}, {5, 5}};
    const int white[4][2] = {{7, 2}, {8, 8}, {10, 0}, {0, 10}}; /* the last one far away */
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(game_play(g, s, black[i][0] * 11 + black[i][1]), 0);
        ck_assert_int_eq(game_play(g, s, white[i][0] * 11 + white[i][1]), 0);
    }
    mcts_params p = params(100);
    p.vcf_root = 100000;
    p.vcf_leaf = 200;
    mcts_result res;
    search_once(g, s, er, p, 3, &res, NULL);
    ck_assert(!res.proven); /* no VCF */
    ck_assert_int_eq(res.stats.simulations, 100);
    p.vct_root = 200000;
    float pi[121];
    search_once(g, s, er, p, 3, &res, pi);
    ck_assert(res.proven);
    ck_assert_int_eq(res.action, 5 * 11 + 6);
    ck_assert_int_eq(res.stats.simulations, 0);
    ck_assert_float_eq(pi[res.action], 1.0f);
    ck_assert_float_eq(res.value[0], 1.0f);
    free(s);
    evaluator_free(er);
    game_free(g);
}
END_TEST

START_TEST(vcf_leaf_proves_nodes)
{
    /* White to move, black threatens the VCF: every white move but the defences is a
     * proven loss as soon as its node is made (black then has the VCF). */
    game *g = make(15, 15, 5);
    evaluator *er = eval_random_new(g);
    game_state *s = position(g, VCF_BLACK " b14", VCF_WHITE);
    mcts_params p = params(600);
    p.vcf_leaf = 2000;
    char err[256];
    mcts *t = mcts_new(g, &p, 5, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_set_root(t, s);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, er, NULL, &res, err, sizeof err), 0);
    mcts_child_info ci[225];
    int n = mcts_children(t, MCTS_ROOT, ci, 225);
    int lost = 0;
    for (int i = 0; i < n; i++) {
        if (ci[i].action == move_of(g, "a2") && ci[i].node >= 0) {
            ck_assert(ci[i].proven);
            ck_assert_float_eq(ci[i].proven_value[1], -1.0f);
        }
        lost += ci[i].proven && ci[i].proven_value[1] <= -1.0f;
    }
    ck_assert_int_gt(lost, 20);
    /* the chosen move is not a proven loss */
    for (int i = 0; i < n; i++)
        if (ci[i].action == res.action)
            ck_assert(!(ci[i].proven && ci[i].proven_value[1] <= -1.0f));
    mcts_free(t);
    free(s);
    evaluator_free(er);
    game_free(g);
}
END_TEST

START_TEST(vcf_defend_prunes_the_children)
{
    game *g = make(15, 15, 5);
    evaluator *er = eval_random_new(g);
    game_state *s = position(g, VCF_BLACK " b14", VCF_WHITE);
    char err[256];
    void *ws = g->ops->threat_new(g, 14, err, sizeof err);
    uint8_t mask[225];
    int nd = g->ops->threat_defend(g, s, ws, 1000, mask);
    ck_assert_int_gt(nd, 0);
    ck_assert_int_lt(nd, 40);
    ck_assert(mask[move_of(g, "k8")] && mask[move_of(g, "l8")] && !mask[move_of(g, "a2")]);
    mcts_params p = params(100);
    p.vcf_defend = true;
    mcts *t = mcts_new(g, &p, 5, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    mcts_set_root(t, s);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, er, NULL, &res, err, sizeof err), 0);
    mcts_child_info ci[225];
    int n = mcts_children(t, MCTS_ROOT, ci, 225);
    ck_assert_int_eq(n, nd);
    for (int i = 0; i < n; i++)
        ck_assert(mask[ci[i].action]);
    ck_assert(mask[res.action]);
    mcts_free(t);
    g->ops->threat_free(ws);
    free(s);
    evaluator_free(er);
    game_free(g);

    /* tic-tac-toe has no threat solver: the keys are refused, not ignored */
    g = make(3, 3, 3);
    p = params(10);
    p.vcf_leaf = 10;
    ck_assert(mcts_new(g, &p, 1, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "vcf") && strstr(err, "k = 3"), "%s", err);
    game_free(g);
}
END_TEST

/* ---- noise, temperature, evaluators ---------------------------------------------------- */

START_TEST(temperature_and_noise)
{
    game *g = make(9, 9, 5);
    counting cnt;
    evaluator e;
    setup_hash_eval(&e, g, &cnt);
    mcts_params p = params(200);
    p.noise = true;
    p.temperature_moves = 10;
    int distinct = 0, seen[81] = {0};
    game_state *s = game_state_new(g, NULL);
    for (int seed = 0; seed < 12; seed++) {
        mcts_result res;
        float pi[81];
        search_once(g, s, &e, p, (uint64_t)seed, &res, pi);
        ck_assert(pi[res.action] > 0);
        double sum = 0;
        for (int a = 0; a < 81; a++)
            sum += pi[a];
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        distinct += !seen[res.action]++;
        /* same seed, same search */
        mcts_result res2;
        float pi2[81];
        search_once(g, s, &e, p, (uint64_t)seed, &res2, pi2);
        ck_assert_int_eq(res.action, res2.action);
        ck_assert_mem_eq(pi, pi2, sizeof pi);
    }
    ck_assert_int_ge(distinct, 3);
    /* past temperature_moves: the most visited move */
    p.temperature_moves = 0;
    mcts_result res;
    float pi[81];
    search_once(g, s, &e, p, 1, &res, pi);
    for (int a = 0; a < 81; a++)
        REQUIRE(pi[a] <= pi[res.action], "a more visited move than the one chosen");
    free(s);
    game_free(g);
}
END_TEST

START_TEST(basic_evaluators)
{
    game *g = make(15, 15, 5);
    game_state *s = position(g, "h8 j9", "h9 g7");
    const game_state *states[2] = {s, s};
    uint8_t legal[2 * 225];
    game_legal(g, s, legal);
    game_legal(g, s, legal + 225);
    uint64_t keys[2] = {game_hash(g, s), game_hash(g, s)};
    float priors[2 * 225], values[4];
    char err[128];
    evaluator *er = eval_random_new(g);
    ck_assert_int_eq(evaluator_run(er, 2, states, keys, legal, priors, values, err, sizeof err), 0);
    for (int a = 0; a < 225; a++)
        REQUIRE(fabsf(priors[a] - (legal[a] ? 1.0f / 221 : 0.0f)) < 1e-7f, "prior of %d", a);
    ck_assert_float_eq(values[0], 0.0f);
    ck_assert_uint_eq(er->positions, 2);
    evaluator *ro = eval_rollout_new(g, 50, 4), *ro2 = eval_rollout_new(g, 50, 4);
    float v2[4];
    ck_assert_int_eq(evaluator_run(ro, 2, states, keys, legal, priors, values, err, sizeof err), 0);
    ck_assert_int_eq(evaluator_run(ro2, 2, states, keys, legal, priors, v2, err, sizeof err), 0);
    ck_assert_mem_eq(values, v2, sizeof v2); /* same seed, same playouts */
    for (int i = 0; i < 2; i++) {
        ck_assert(values[2 * i] >= -1 && values[2 * i] <= 1);
        ck_assert_float_eq_tol(values[2 * i], -values[2 * i + 1], 1e-6);
    }
    ck_assert(values[0] != 0.0f || values[2] != 0.0f);
    evaluator_free(er);
    evaluator_free(ro);
    evaluator_free(ro2);
    evaluator_free(NULL);
    free(s);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mcts");
    TCase *tc = tcase_create("search");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, basic_evaluators);
    tcase_add_test(tc, gomoku_immediate_win);
    tcase_add_test(tc, gomoku_block_four);
    tcase_add_test(tc, win_without_solver);
    tcase_add_test(tc, absolute_fpu_tries_every_move);
    tcase_add_test(tc, collisions_are_discarded);
    tcase_add_test(tc, solver_tictactoe_fork);
    tcase_add_test(tc, solver_gomoku_open_four);
    tcase_add_loop_test(tc, pure_mcts_never_loses_tictactoe, 0, 3);
    tcase_add_test(tc, three_player_backup);
    tcase_add_test(tc, three_player_backup_by_hand);
    tcase_add_test(tc, three_player_solver);
    tcase_add_test(tc, contempt_by_hand);
    tcase_add_test(tc, contempt_in_search);
    tcase_add_test(tc, full_arena_is_handled);
    tcase_add_test(tc, many_trees_match_single);
    tcase_add_test(tc, evaluator_error_is_reported);
    tcase_add_test(tc, tree_reuse_keeps_child);
    tcase_add_test(tc, tree_invariants_through_games);
    tcase_add_test(tc, fresh_pi_excludes_reused_visits);
    tcase_add_test(tc, policy_pruning_by_hand);
    tcase_add_test(tc, lcb_by_hand);
    tcase_add_test(tc, lcb_in_search);
    tcase_add_test(tc, forced_playouts_in_search);
    tcase_add_test(tc, completed_q_by_hand);
    tcase_add_test(tc, completed_q_in_search);
    tcase_add_test(tc, gumbel_target_keeps_a_lone_defence);
    tcase_add_test(tc, gumbel_schedule_by_hand);
    tcase_add_test(tc, gumbel_bandit_halving);
    tcase_add_test(tc, gumbel_root_considers_m);
    tcase_add_test(tc, gumbel_m_above_legal_moves);
    tcase_add_test(tc, gumbel_late_plies_draw_none);
    tcase_add_test(tc, gumbel_interior_by_hand);
    tcase_add_test(tc, gumbel_interior_in_search);
    tcase_add_test(tc, gumbel_interior_all_children);
    tcase_add_test(tc, small_arenas_through_games);
    tcase_add_test(tc, automatic_arena_fits_large_boards);
    tcase_add_test(tc, vcf_root_plays_the_proven_win);
    tcase_add_test(tc, vcf_leaf_proves_nodes);
    tcase_add_test(tc, vct_root_plays_the_proven_win);
    tcase_add_test(tc, vcf_defend_prunes_the_children);
#ifdef COUNT_ALLOCS
    tcase_add_test(tc, no_allocation_while_searching);
#endif
    tcase_add_test(tc, temperature_and_noise);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
