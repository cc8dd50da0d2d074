/* The search's chance nodes and scores (engine/mcts.c), on 2048: the expectation over
 * the spawns against an exact expectimax of 2 x 2 boards, on a position where the best
 * move depends on the odds of a 4; visits at a chance node tracking the probabilities;
 * the rollout evaluator's points against the exact value of random play; mcts_play
 * drawing the spawn and keeping its subtree; the best-score targets mcts_export hands
 * out (seed 003's bootstrap) on small trees. No network. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "engine/mcts.h"

static game *make(int rows, int cols)
{
    gz_config c;
    cfg_defaults(&c, "2048");
    c.game.rows = rows;
    c.game.cols = cols;
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* ---- exact values of 2 x 2 boards (exponents 0..7 per cell: 8^4 boards) ---------- */

enum { EXP_LIMIT = 8, NBOARDS = EXP_LIMIT * EXP_LIMIT * EXP_LIMIT * EXP_LIMIT };

typedef struct exact {
    const game *g;
    double v[NBOARDS];   /* points to come */
    bool known[NBOARDS];
    bool random_policy;  /* the value of uniform random play instead of the best play */
} exact;

static int board_index(const uint8_t *c)
{
    for (int i = 0; i < 4; i++)
        ck_assert_int_lt(c[i], EXP_LIMIT);
    return ((c[0] * EXP_LIMIT + c[1]) * EXP_LIMIT + c[2]) * EXP_LIMIT + c[3];
}

static double exact_value(exact *x, const uint8_t *c);

/* Uniform priors over the legal ones of 2048's four moves. */
static void uniform4(const uint8_t *legal, float *priors)
{
    int cnt = 0;
    for (int a = 0; a < 4; a++)
        cnt += legal[a];
    for (int a = 0; a < 4; a++)
        priors[a] = legal[a] ? 1.0f / (float)cnt : 0.0f;
}

/* The points move a gains plus the expected points to come after its spawn; only the
 * outcomes that spawn a 2 when twos_only (renormalised). */
static double exact_q(exact *x, const uint8_t *c, int a, bool twos_only)
{
    const game *g = x->g;
    game_state *s = malloc(g->state_size), *t = malloc(g->state_size);
    g2048_set(g, s, c, 0, 0);
    ck_assert_int_eq(game_play(g, s, a), 0);
    double q = (double)g2048_score(g, s);
    int out[GAME_MAX_CHANCE];
    float prob[GAME_MAX_CHANCE];
    int n = g->ops->chance_outcomes(g, s, out, prob);
    double psum = 0, acc = 0;
    for (int i = 0; i < n; i++) {
        if (twos_only && (out[i] & 1))
            continue;
        memcpy(t, s, g->state_size);
        ck_assert_int_eq(g->ops->chance_play(g, t, out[i]), 0);
        uint8_t cc[4];
        g2048_get_cells(g, t, cc);
        acc += prob[i] * exact_value(x, cc);
        psum += prob[i];
    }
    free(s);
    free(t);
    return q + acc / psum;
}

static double exact_value(exact *x, const uint8_t *c)
{
    int ix = board_index(c);
    if (x->known[ix])
        return x->v[ix];
    const game *g = x->g;
    game_state *s = malloc(g->state_size);
    g2048_set(g, s, c, 0, 0);
    uint8_t mask[4];
    int nl = game_legal(g, s, mask);
    free(s);
    double best = 0, sum = 0;
    for (int a = 0; a < 4; a++)
        if (mask[a]) {
            double q = exact_q(x, c, a, false);
            sum += q;
            best = q > best ? q : best;
        }
    x->v[ix] = nl == 0 ? 0 : x->random_policy ? sum / nl : best;
    x->known[ix] = true;
    return x->v[ix];
}

/* An evaluator that knows the exact points to come (x->random_policy false). */
static int exact_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                          const uint8_t *legal, float *priors, float *values, char *err,
                          size_t errlen)
{
    (void)keys, (void)err, (void)errlen;
    exact *x = e->ctx;
    for (int i = 0; i < n; i++) {
        uniform4(legal + i * 4, priors + i * 4);
        uint8_t c[4];
        g2048_get_cells(e->g, states[i], c);
        values[i] = (float)exact_value(x, c);
    }
    return 0;
}

static evaluator exact_evaluator(const game *g, exact *x)
{
    evaluator e = {.name = "exact", .g = g, .evaluate = exact_evaluate, .ctx = x};
    return e;
}

static mcts_params params(int sims)
{
    gz_config c;
    cfg_defaults(&c, "2048");
    mcts_params p;
    mcts_params_from_config(&p, &c.mcts);
    p.simulations = sims;
    p.batch = 1;
    p.reuse_tree = false;
    p.temperature_moves = 0;
    return p;
}

/* Finds a 2 x 2 board where the best move under the real odds differs from the best move
 * if every spawn were a 2, both by a clear margin; returns its index or -1. */
static int find_odds_position(exact *x, uint8_t *out)
{
    const game *g = x->g;
    game_state *s = malloc(g->state_size);
    int found = -1;
    for (int ix = 0; ix < NBOARDS && found < 0; ix++) {
        uint8_t c[4] = {(uint8_t)(ix / 512), (uint8_t)(ix / 64 % 8), (uint8_t)(ix / 8 % 8),
                        (uint8_t)(ix % 8)};
        int empty = 0, big = 0;
        for (int i = 0; i < 4; i++) {
            empty += c[i] == 0;
            big += c[i] > 5; /* tiles up to 32 */
        }
        if (empty > 1 || big)
            continue;
        g2048_set(g, s, c, 0, 0);
        uint8_t mask[4];
        if (game_legal(g, s, mask) < 2)
            continue;
        double q[4], q2[4];
        int b = -1, b2 = -1;
        for (int a = 0; a < 4; a++) {
            if (!mask[a])
                continue;
            q[a] = exact_q(x, c, a, false);
            q2[a] = exact_q(x, c, a, true);
            if (b < 0 || q[a] > q[b])
                b = a;
            if (b2 < 0 || q2[a] > q2[b2])
                b2 = a;
        }
        if (b == b2)
            continue;
        /* a clear margin both ways, so the search's choice is a real test */
        bool clear = q[b] - q[b2] > 2.0 && q2[b2] - q2[b] > 2.0;
        if (clear) {
            memcpy(out, c, 4);
            found = ix;
        }
    }
    free(s);
    return found;
}

START_TEST(expectation_decides_the_move)
{
    game *g = make(2, 2);
    exact *x = calloc(1, sizeof *x);
    x->g = g;
    uint8_t c[4];
    int ix = find_odds_position(x, c);
    ck_assert_msg(ix >= 0, "no 2x2 position where the odds of a 4 decide the move");
    fprintf(stderr, "odds position: %d %d / %d %d (exponents)\n", c[0], c[1], c[2], c[3]);
    double qstar[4] = {0};
    uint8_t mask[4];
    game_state *s = malloc(g->state_size);
    g2048_set(g, s, c, 0, 0);
    game_legal(g, s, mask);
    int best = -1;
    for (int a = 0; a < 4; a++)
        if (mask[a]) {
            qstar[a] = exact_q(x, c, a, false);
            if (best < 0 || qstar[a] > qstar[best])
                best = a;
            fprintf(stderr, "  move %d: exact Q %.3f, if only 2s spawned %.3f\n", a, qstar[a],
                    exact_q(x, c, a, true));
        }
    evaluator e = exact_evaluator(g, x);
    char err[256];
    /* the search with the config's settings picks the move that is best under the real
     * odds; a greedy one (small c_puct, no FPU reduction) also gets its value close: the
     * tree's means mix in the moves PUCT tries, which can only pull them below */
    for (int greedy = 0; greedy < 2; greedy++) {
        mcts_params p = params(3000);
        if (greedy) {
            p.c_puct = 0.1f;
            p.fpu_reduction = 0.0f;
        }
        mcts *t = mcts_new(g, &p, 7, err, sizeof err);
        ck_assert_ptr_nonnull(t);
        mcts_set_root(t, s);
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
        ck_assert_msg(qstar[res.action] == qstar[best], "chose move %d (exact Q %.3f, best %.3f)",
                      res.action, qstar[res.action], qstar[best]);
        mcts_child_info kids[4];
        int n = mcts_children(t, MCTS_ROOT, kids, 4);
        for (int i = 0; i < n; i++) {
            if (kids[i].visits == 0)
                continue;
            double d = kids[i].q - qstar[kids[i].action];
            fprintf(stderr, "  c_puct %.1f: move %d visits %d Q %.3f (exact %.3f)\n", p.c_puct,
                    kids[i].action, kids[i].visits, kids[i].q, qstar[kids[i].action]);
            ck_assert_msg(d < 0.02 * qstar[kids[i].action] + 0.5, "move %d: Q %.3f above exact %.3f",
                          kids[i].action, kids[i].q, qstar[kids[i].action]);
            if (greedy && kids[i].action == res.action)
                ck_assert_msg(d > -0.1 * qstar[best], "move %d: Q %.3f, exact %.3f", kids[i].action,
                              kids[i].q, qstar[best]);
        }
        mcts_free(t);
    }
    free(s);
    free(x);
    game_free(g);
}
END_TEST

/* mcts.policy_target completed_q (Gumbel MuZero's target) in a scored game ranks the
 * moves by their whole Q, the points a move gains plus the points to come after it: on
 * a 2 x 2 board where that order and the order of the points to come alone disagree,
 * the target's largest share goes to the best move by the whole Q. */
START_TEST(completed_q_counts_the_move_points)
{
    game *g = make(2, 2);
    exact *x = calloc(1, sizeof *x);
    x->g = g;
    game_state *s = malloc(g->state_size), *t = malloc(g->state_size);
    uint8_t c[4];
    int best = -1, after = -1;
    for (int ix = 0; ix < NBOARDS && best < 0; ix++) {
        uint8_t cc[4] = {(uint8_t)(ix / 512), (uint8_t)(ix / 64 % 8), (uint8_t)(ix / 8 % 8),
                         (uint8_t)(ix % 8)};
        int empty = 0, big = 0;
        for (int i = 0; i < 4; i++) {
            empty += cc[i] == 0;
            big += cc[i] > 6;
        }
        if (empty > 1 || big)
            continue;
        g2048_set(g, s, cc, 0, 0);
        uint8_t mask[4];
        if (game_legal(g, s, mask) < 2)
            continue;
        double q[4], v[4];
        int b = -1, bv = -1;
        for (int a = 0; a < 4; a++) {
            if (!mask[a])
                continue;
            q[a] = exact_q(x, cc, a, false);
            memcpy(t, s, g->state_size);
            ck_assert_int_eq(game_play(g, t, a), 0);
            v[a] = q[a] - game_score0(g, t); /* the points to come after the move */
            if (b < 0 || q[a] > q[b])
                b = a;
            if (bv < 0 || v[a] > v[bv])
                bv = a;
        }
        if (b != bv && q[b] - q[bv] > 1.0 && v[bv] - v[b] > 1.0) {
            memcpy(c, cc, 4);
            best = b;
            after = bv;
        }
    }
    ck_assert_msg(best >= 0, "no 2x2 position where a move's points change the order");
    g2048_set(g, s, c, 0, 0);
    evaluator e = exact_evaluator(g, x);
    mcts_params p = params(400);
    p.completed_q = true;
    char err[256];
    mcts *tr = mcts_new(g, &p, 3, err, sizeof err);
    ck_assert_ptr_nonnull(tr);
    mcts_set_root(tr, s);
    float pi[4];
    mcts_result res;
    ck_assert_int_eq(mcts_search(tr, &e, pi, &res, err, sizeof err), 0);
    fprintf(stderr, "completed_q: %d %d / %d %d: pi %.3f %.3f %.3f %.3f (best %d, best after %d)\n",
            c[0], c[1], c[2], c[3], pi[0], pi[1], pi[2], pi[3], best, after);
    for (int a = 0; a < 4; a++)
        if (a != best)
            ck_assert_msg(pi[best] > pi[a], "pi[%d] = %g is not above pi[%d] = %g", best,
                          (double)pi[best], a, (double)pi[a]);
    mcts_free(tr);
    free(s);
    free(t);
    free(x);
    game_free(g);
}
END_TEST

/* A chance node's visits follow the probabilities: every outcome within one visit of
 * its share. */
START_TEST(chance_visits_track_probabilities)
{
    game *g = make(4, 4);
    game_state *s = malloc(g->state_size);
    uint8_t c[16] = {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    g2048_set(g, s, c, 0, 0);
    evaluator *e = eval_random_new(g);
    char err[256];
    mcts_params p = params(2000);
    p.batch = 8; /* pending visits spread a batch over the outcomes too */
    mcts *t = mcts_new(g, &p, 3, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    mcts_set_root(t, s);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    mcts_child_info kids[4], out[GAME_MAX_CHANCE];
    int n = mcts_children(t, MCTS_ROOT, kids, 4);
    int checked = 0;
    for (int i = 0; i < n; i++) {
        if (kids[i].visits < 100)
            continue;
        int k = mcts_children(t, kids[i].node, out, GAME_MAX_CHANCE);
        ck_assert_int_gt(k, 2);
        double total = 0, psum = 0;
        for (int j = 0; j < k; j++) {
            total += out[j].visits;
            psum += out[j].prior;
        }
        ck_assert_double_eq_tol(psum, 1.0, 1e-3);
        ck_assert_int_eq((int)total, kids[i].visits);
        for (int j = 0; j < k; j++)
            ck_assert_msg(fabs(out[j].visits - out[j].prior * total) <= 1.0 + 1e-3 * total,
                          "outcome %d: %d visits of %.0f, probability %.4f", out[j].action,
                          out[j].visits, total, out[j].prior);
        checked++;
    }
    ck_assert_int_gt(checked, 0);
    mcts_free(t);
    evaluator_free(e);
    free(s);
    game_free(g);
}
END_TEST

/* The rollout evaluator's value is the points random play scores from the position:
 * compared with the exact expectation of uniform random play on 2 x 2 boards. */
START_TEST(rollout_values_are_points_to_come)
{
    game *g = make(2, 2);
    exact *x = calloc(1, sizeof *x);
    x->g = g;
    x->random_policy = true;
    evaluator *e = eval_rollout_new(g, 20000, 99);
    const char *boards[] = {"\x01\x00\x00\x01", "\x02\x01\x03\x00", "\x01\x02\x01\x01"};
    game_state *s = malloc(g->state_size);
    for (int b = 0; b < 3; b++) {
        uint8_t c[4];
        memcpy(c, boards[b], 4);
        g2048_set(g, s, c, 1000, 40); /* points already scored do not count */
        uint8_t legal[4];
        game_legal(g, s, legal);
        float pri[4], v;
        const game_state *ps[1] = {s};
        uint64_t key = game_hash(g, s);
        char err[128];
        ck_assert_int_eq(evaluator_run(e, 1, ps, &key, legal, pri, &v, err, sizeof err), 0);
        double want = exact_value(x, c);
        fprintf(stderr, "board %d: rollouts %.3f, exact random play %.3f\n", b, v, want);
        ck_assert_double_eq_tol(v, want, 0.03 * want + 0.2);
    }
    free(s);
    free(x);
    evaluator_free(e);
    game_free(g);
}
END_TEST

/* mcts_play: the spawn is drawn with the tree's rng, the root is a decision again, and
 * the subtree under the drawn outcome is kept. */
START_TEST(play_draws_the_spawn_and_keeps_its_subtree)
{
    game *g = make(3, 3);
    game_state *s = malloc(g->state_size);
    uint8_t c[9] = {1, 0, 0, 0, 0, 0, 0, 0, 2};
    g2048_set(g, s, c, 0, 0);
    evaluator *e = eval_rollout_new(g, 1, 5);
    char err[256];
    mcts_params p = params(3000);
    p.reuse_tree = true;
    mcts *t = mcts_new(g, &p, 11, err, sizeof err);
    mcts_set_root(t, s);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    ck_assert_int_eq(mcts_play(t, res.action), 0);
    const game_state *r = mcts_root_state(t);
    ck_assert(!game_is_chance(g, r));
    uint8_t before[9], after[9];
    memcpy(before, c, 9);
    game_state *m = malloc(g->state_size);
    g2048_set(g, m, before, 0, 0);
    ck_assert_int_eq(game_play(g, m, res.action), 0);
    g2048_get_cells(g, m, before);
    g2048_get_cells(g, r, after);
    int spawned = 0;
    for (int i = 0; i < 9; i++)
        if (before[i] != after[i]) {
            ck_assert_int_eq(before[i], 0);
            ck_assert(after[i] == 1 || after[i] == 2);
            spawned++;
        }
    ck_assert_int_eq(spawned, 1);
    ck_assert_int_gt(mcts_root_visits(t), 0); /* the kept subtree */
    /* and the search goes on from there */
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    ck_assert_int_eq(game_play(g, (game_state *)memcpy(m, r, g->state_size), res.action), 0);
    mcts_free(t);
    evaluator_free(e);
    free(s);
    free(m);
    game_free(g);
}
END_TEST

/* mcts_set_root_near: a player whose game draws the spawns itself (the arena) finds the
 * new position among the root's grandchildren and keeps that subtree. */
START_TEST(set_root_near_keeps_the_drawn_outcome)
{
    game *g = make(3, 3);
    game_state *s = malloc(g->state_size), *n = malloc(g->state_size);
    uint8_t c[9] = {1, 0, 0, 0, 2, 0, 0, 0, 1};
    g2048_set(g, s, c, 0, 0);
    evaluator *e = eval_rollout_new(g, 1, 8);
    char err[256];
    mcts_params p = params(2000);
    p.reuse_tree = true;
    mcts *t = mcts_new(g, &p, 4, err, sizeof err);
    mcts_set_root(t, s);
    mcts_result res;
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    /* the position after the chosen move and the most visited spawn */
    mcts_child_info kids[4], out[GAME_MAX_CHANCE];
    int nk = mcts_children(t, MCTS_ROOT, kids, 4), want = 0;
    int32_t chance = -1;
    for (int i = 0; i < nk; i++)
        if (kids[i].action == res.action)
            chance = kids[i].node;
    ck_assert_int_ge(chance, 0);
    int no = mcts_children(t, chance, out, GAME_MAX_CHANCE), best = 0;
    for (int j = 1; j < no; j++)
        if (out[j].visits > out[best].visits)
            best = j;
    want = out[best].visits;
    ck_assert_int_gt(want, 1);
    memcpy(n, s, g->state_size);
    ck_assert_int_eq(game_play(g, n, res.action), 0);
    ck_assert_int_eq(g->ops->chance_play(g, n, out[best].action), 0);
    mcts_set_root_near(t, n);
    ck_assert(memcmp(mcts_root_state(t), n, g->state_size) == 0);
    ck_assert_int_eq(mcts_root_visits(t), want);
    /* a position that is not in the tree: a fresh tree */
    uint8_t other[9] = {3, 3, 0, 0, 0, 0, 0, 0, 0};
    g2048_set(g, n, other, 0, 0);
    mcts_set_root_near(t, n);
    ck_assert(memcmp(mcts_root_state(t), n, g->state_size) == 0);
    ck_assert_int_eq(mcts_root_visits(t), 0);
    ck_assert_int_eq(mcts_search(t, e, NULL, &res, err, sizeof err), 0);
    mcts_free(t);
    evaluator_free(e);
    free(s);
    free(n);
    game_free(g);
}
END_TEST

/* ---- seed 003's targets: the best score reached after each node ----------------- */

/* A deterministic leaf value (the number of empty cells, in points) that also records
 * the best return from the root seen by any leaf: f(leaf) + the points scored since. */
typedef struct rec_ctx {
    float root_score;
    float best_return;
} rec_ctx;

static float leaf_points(const game *g, const game_state *s)
{
    uint8_t c[G2048_MAX_CELLS];
    g2048_get_cells(g, s, c);
    int empty = 0;
    for (int i = 0; i < g->rows * g->cols; i++)
        empty += !c[i];
    return (float)empty;
}

static int rec_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                        const uint8_t *legal, float *priors, float *values, char *err,
                        size_t errlen)
{
    (void)keys, (void)err, (void)errlen;
    rec_ctx *r = e->ctx;
    for (int i = 0; i < n; i++) {
        uniform4(legal + i * 4, priors + i * 4);
        values[i] = leaf_points(e->g, states[i]);
        float ret = values[i] + (float)g2048_score(e->g, states[i]) - r->root_score;
        if (ret > r->best_return)
            r->best_return = ret;
    }
    return 0;
}

typedef struct export_check {
    const game *g;
    int nodes;
    float root_best;
    int max_depth;
} export_check;

static int check_node(void *ctx, const mcts_node_sample *ns)
{
    export_check *c = ctx;
    /* the best after the node: its own leaf value when it was a leaf, or the best after
     * one of its moves */
    float want = leaf_points(c->g, ns->state), psum = 0;
    for (int a = 0; a < 4; a++) {
        if (ns->best_after[a] > -FLT_MAX) {
            ck_assert(ns->legal[a]);
            ck_assert_float_gt(ns->pi[a], 0.0f);
            want = ns->best_after[a] > want ? ns->best_after[a] : want;
        } else {
            ck_assert_float_eq(ns->pi[a], 0.0f);
        }
        psum += ns->pi[a];
    }
    ck_assert_float_eq_tol(psum, 1.0f, 1e-5f);
    ck_assert_float_eq_tol(ns->best, want, 1e-3f);
    ck_assert_float_ge(ns->best, ns->value[0] - 1e-3f); /* a best is never below the mean */
    ck_assert(!game_is_chance(c->g, ns->state));
    if (c->nodes == 0) {
        ck_assert_int_eq(ns->depth, 0);
        c->root_best = ns->best;
    }
    c->max_depth = ns->depth > c->max_depth ? ns->depth : c->max_depth;
    c->nodes++;
    return 0;
}

START_TEST(export_best_score_targets)
{
    game *g = make(4, 4);
    game_state *s = malloc(g->state_size);
    uint8_t c[16] = {1, 1, 2, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    g2048_set(g, s, c, 50, 10);
    int sims_list[] = {1, 2, 5, 60};
    for (int k = 0; k < 4; k++) {
        rec_ctx rc = {.root_score = 50.0f, .best_return = -FLT_MAX};
        evaluator e = {.name = "rec", .g = g, .evaluate = rec_evaluate, .ctx = &rc};
        char err[256];
        mcts_params p = params(sims_list[k]);
        p.track_best = true;
        mcts *t = mcts_new(g, &p, 1, err, sizeof err);
        mcts_set_root(t, s);
        mcts_result res;
        ck_assert_int_eq(mcts_search(t, &e, NULL, &res, err, sizeof err), 0);
        export_check ec = {.g = g};
        ck_assert_int_eq(mcts_export(t, 1, check_node, &ec), 0);
        if (sims_list[k] == 1) {
            ck_assert_int_eq(ec.nodes, 0); /* the root alone: no visited child */
        } else {
            ck_assert_int_gt(ec.nodes, 0);
            /* the root's best: the best return any leaf saw (no leaf here is terminal) */
            ck_assert_float_eq_tol(ec.root_best, rc.best_return, 1e-3f);
        }
        if (sims_list[k] == 2) {
            /* one move tried: its best is its points plus its one leaf's value */
            ck_assert_int_eq(ec.nodes, 1);
        }
        mcts_free(t);
    }
    free(s);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mcts_chance");
    TCase *tc = tcase_create("chance");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, expectation_decides_the_move);
    tcase_add_test(tc, completed_q_counts_the_move_points);
    tcase_add_test(tc, chance_visits_track_probabilities);
    tcase_add_test(tc, rollout_values_are_points_to_come);
    tcase_add_test(tc, play_draws_the_spawn_and_keeps_its_subtree);
    tcase_add_test(tc, set_root_near_keeps_the_drawn_outcome);
    tcase_add_test(tc, export_best_score_targets);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
