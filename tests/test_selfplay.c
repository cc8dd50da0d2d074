/* Self-play (selfplay/selfplay.h) and `gridzero selfplay`: the files they write are
 * valid sample files (read back with the one reader, samples.h, and with the trainer's
 * dataset reader; h5ls/h5dump see the datasets of DESIGN.md §5), π is a distribution
 * over the legal moves, and every game replays: consecutive samples differ by one move,
 * the planes decode to the replayed position, z is the replayed game's result in
 * mover-first order (or a resignation), the owner map is the final position's stones
 * seen from the mover (all unknown after a resignation). Resignation and its false-resignation check,
 * determinism, many games per worker and two workers, and a stop flag. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"
#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/net_eval.h"
#include "nn/params.h"
#include "nn/spec.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "engine/openings.h"
#include "train/dataset.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gz_test_selfplay_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* The built-in tic-tac-toe config made small: a tiny net, few simulations. */
static void tiny_config(gz_config *c)
{
    char err[512];
    ck_assert_msg(cfg_load(c, NULL, err, sizeof err) == 0, "%s", err);
    const char *sets[] = {"mcts.simulations=24", "mcts.batch=4", "net.blocks=1", "net.channels=8",
                          "net.threads=1", "selfplay.threads=1", "selfplay.parallel_games=4",
                          "selfplay.resign_threshold=-1", "seed=11"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        ck_assert_msg(cfg_set(c, sets[i], err, sizeof err) == 0, "%s: %s", sets[i], err);
}

static game *make_game(const gz_config *c)
{
    char err[512];
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* ---- evaluator factories ---- */

static evaluator *rollout_factory(void *ctx, int worker, int workers, char *err, size_t errlen)
{
    (void)workers, (void)err, (void)errlen;
    const game *g = ctx;
    return eval_rollout_new(g, 1, 1000 + (uint64_t)worker);
}

typedef struct net_ctx {
    const game *g;
    const gz_config *c;
    nn_params *p;
} net_ctx;

static nn_params *random_net(const gz_config *c, const game *g, uint64_t seed)
{
    char err[512];
    nn_spec spec;
    ck_assert_msg(nn_spec_from_config(&spec, &c->net, g, err, sizeof err) == 0, "%s", err);
    nn_params *p = nn_params_new(&spec, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    nn_params_init_he(p, seed);
    return p;
}

static evaluator *net_factory(void *ctx, int worker, int workers, char *err, size_t errlen)
{
    (void)workers;
    net_ctx *x = ctx;
    net_eval_opts o;
    if (net_eval_opts_from_config(&o, x->c, err, errlen) < 0)
        return NULL;
    o.threads = 1;
    o.max_batch = x->c->mcts.batch * x->c->selfplay.parallel_games;
    o.seed = 77 + (uint64_t)worker;
    return net_eval_new(x->g, x->p, &o, err, errlen);
}

static evaluator *failing_factory(void *ctx, int worker, int workers, char *err, size_t errlen)
{
    (void)ctx, (void)workers;
    if (worker == 0)
        return eval_random_new(ctx);
    snprintf(err, errlen, "test: no evaluator for worker %d", worker);
    return NULL;
}

/* ---- checks of a sample file ---- */

/* Decodes mnk planes (own, opponent, last move, ones, black to move) into a board of
 * absolute players (0, 1; -1 empty) and the player to move. */
static int decode_mnk(const game *g, const uint8_t *st, int *board)
{
    int hw = g->rows * g->cols;
    int black = st[4 * hw] == 255;
    int mover = black ? 0 : 1;
    for (int i = 0; i < hw; i++) {
        ck_assert(st[i] == 0 || st[i] == 255);
        ck_assert(st[hw + i] == 0 || st[hw + i] == 255);
        ck_assert_int_eq(st[3 * hw + i], 255);
        ck_assert_int_eq(st[4 * hw + i], black ? 255 : 0);
        ck_assert(!(st[i] && st[hw + i]));
        board[i] = st[i] ? mover : st[hw + i] ? 1 - mover : -1;
    }
    return mover;
}

/* What a file's games add up to. */
typedef struct replay_stats {
    int games, resigned, decisive, draws;
    int64_t positions;
} replay_stats;

/* Reads path with both readers and replays every game (see the file comment). games:
 * the expected number of games; resign_ok: a game may end by resignation. */
static replay_stats check_file(const char *path, const game *g, int games, int resign_ok)
{
    char err[512];
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_str_eq(f->game, "mnk");
    ck_assert_int_eq(f->players, 2);
    ck_assert_int_eq(f->actions, 9);
    ck_assert_int_gt(f->n, 0);
    ck_assert_int_eq(f->version, 5);
    ck_assert_ptr_nonnull(f->owner);
    int A = g->actions, P = g->players, hw = g->rows * g->cols, np = g->planes * hw;
    ck_assert_int_eq(hw, A);
    replay_stats rs = {0};
    rs.positions = f->n;

    /* pi: a distribution over the legal moves */
    for (int64_t i = 0; i < f->n; i++) {
        double sum = 0;
        for (int a = 0; a < A; a++) {
            float p = f->pi[i * A + a];
            if (!f->legal[i * A + a])
                ck_assert_msg(p == 0.0f, "sample %lld: pi %g on the illegal move %d", (long long)i, p, a);
            sum += p;
        }
        ck_assert_msg(fabs(sum - 1.0) < 1e-4, "sample %lld: pi sums to %g", (long long)i, sum);
    }

    /* games: contiguous runs of samples with ply 0, 1, ... */
    char *seen = calloc((size_t)games, 1);
    game_state *s = game_state_new(g, NULL), *t = game_state_new(g, NULL);
    float *enc = malloc(sizeof(float) * (size_t)np);
    uint8_t legal[GAME_MAX_ACTIONS];
    int board[GAME_MAX_CELLS], owner[GAME_MAX_CELLS], movers[GAME_MAX_ACTIONS + 1];
    int64_t i = 0;
    while (i < f->n) {
        int gi = f->gameix[i];
        ck_assert_msg(gi >= 0 && gi < games, "game index %d", gi);
        ck_assert_msg(!seen[gi], "game %d's samples are not contiguous", gi);
        seen[gi] = 1;
        rs.games++;
        int64_t end = i;
        while (end < f->n && f->gameix[end] == gi)
            end++;
        game_init(g, s, NULL);
        for (int k = 0; k < hw; k++)
            owner[k] = -1;
        for (int64_t j = i; j < end; j++) {
            const uint8_t *st = f->state + j * np;
            ck_assert_int_eq(f->ply[j], (int)(j - i));
            ck_assert(!game_terminal(g, s));
            /* the planes are exactly the encoding of the replayed position ... */
            game_encode(g, s, enc);
            for (int k = 0; k < np; k++)
                ck_assert_msg(fabsf(st[k] / 255.0f - enc[k]) < 0.5f / 255.0f,
                              "game %d ply %d: plane value %d differs from the encoding", gi,
                              f->ply[j], k);
            /* ... and decode to its stones and player to move */
            int mover = decode_mnk(g, st, board);
            ck_assert_int_eq(mover, game_current_player(g, s));
            movers[j - i] = mover;
            for (int k = 0; k < hw; k++)
                ck_assert_int_eq(board[k], owner[k]);
            game_legal(g, s, legal);
            ck_assert_mem_eq(legal, f->legal + j * A, (size_t)A);
            const float *zj = f->z + j * P;
            for (int k = 0; k < P; k++)
                ck_assert(zj[k] == -1.0f || zj[k] == 0.0f || zj[k] == 1.0f);
            ck_assert_msg(zj[0] == -zj[1], "z = [%g, %g]", zj[0], zj[1]);
            if (j > i) /* mover-first: the outcome flips with the player to move */
                ck_assert(zj[0] == -f->z[(j - 1) * P]);
            /* the move to the next sample: exactly one legal move gives its planes */
            int played = -1, nmatch = 0;
            if (j + 1 < end) {
                const uint8_t *next = f->state + (j + 1) * np;
                for (int a = 0; a < A; a++) {
                    if (!legal[a])
                        continue;
                    game_copy(g, t, s);
                    ck_assert_int_eq(game_play(g, t, a), 0);
                    game_encode(g, t, enc);
                    int same = 1;
                    for (int k = 0; k < np && same; k++)
                        same = fabsf(next[k] / 255.0f - enc[k]) < 0.5f / 255.0f;
                    if (same)
                        played = a, nmatch++;
                }
                ck_assert_msg(nmatch == 1, "game %d ply %d: %d moves lead to the next sample", gi,
                              f->ply[j], nmatch);
            } else {
                /* the last sample: a move that ends the game with this z, or a resignation */
                for (int a = 0; a < A; a++) {
                    if (!legal[a])
                        continue;
                    game_copy(g, t, s);
                    ck_assert_int_eq(game_play(g, t, a), 0);
                    if (!game_terminal(g, t))
                        continue;
                    float z[GAME_MAX_PLAYERS];
                    game_result(g, t, z);
                    /* several moves may end it alike: take one the search gave visits */
                    if (z[mover] == zj[0] && z[1 - mover] == zj[1] &&
                        (played < 0 || f->pi[j * A + a] > f->pi[j * A + played]))
                        played = a;
                }
                if (played < 0) {
                    ck_assert_msg(resign_ok, "game %d: its last sample ends neither the game "
                                  "with z = [%g, %g] nor by resignation", gi, zj[0], zj[1]);
                    ck_assert_msg(zj[0] == -1.0f, "game %d: resigned with z = %g", gi, zj[0]);
                    rs.resigned++;
                } else if (zj[0] == 0) {
                    rs.draws++;
                } else {
                    rs.decisive++;
                    /* in tic-tac-toe only the player who moves last can win */
                    ck_assert_msg(zj[0] == 1.0f, "game %d: the last mover lost", gi);
                }
            }
            if (played >= 0) {
                ck_assert_msg(f->pi[j * A + played] > 0, "game %d ply %d: played move %d has pi 0",
                              gi, f->ply[j], played);
                owner[played] = mover;
                ck_assert_int_eq(game_play(g, s, played), 0);
            }
        }
        ck_assert(end - i <= g->max_game_length);
        /* owner targets: the final board (owner[], replayed), 1 = the sample's mover's
         * stone, 2 = the opponent's, 0 = empty; a resigned game's all -1 */
        bool resigned = !game_terminal(g, s);
        for (int64_t j = i; j < end; j++) {
            const int8_t *ow = f->owner + j * hw;
            int own = 0, opp = 0, nobody = 0;
            for (int k = 0; k < hw; k++) {
                int want = resigned ? -1 : owner[k] < 0 ? 0 : owner[k] == movers[j - i] ? 1 : 2;
                ck_assert_msg(ow[k] == want, "game %d ply %d point %d: owner %d, want %d", gi,
                              f->ply[j], k, ow[k], want);
                own += ow[k] == 1, opp += ow[k] == 2, nobody += ow[k] == 0;
            }
            /* the codes rotate with the mover: own and opponent swap at each move */
            if (j > i && !resigned) {
                const int8_t *prev = f->owner + (j - 1) * hw;
                for (int k = 0; k < hw; k++)
                    ck_assert(ow[k] == (prev[k] == 0 ? 0 : 3 - prev[k]));
            }
            if (!resigned)
                ck_assert_int_eq(own + opp + nobody, hw);
        }
        i = end;
    }
    for (int k = 0; k < games; k++)
        ck_assert_msg(seen[k], "game %d has no samples", k);
    ck_assert_int_eq(rs.games, games);
    free(seen);
    free(s);
    free(t);
    free(enc);
    sp_file_free(f);

    /* the trainer's reader takes it whole */
    dataset *d = dataset_new(g, 0.0, err, sizeof err);
    ck_assert_msg(d != NULL, "%s", err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_files(d), 1);
    ck_assert_int_eq(dataset_train_count(d) + dataset_val_count(d), rs.positions);
    dataset_free(d);
    return rs;
}

/* Any game: every game of the file replays (consecutive samples one legal move apart,
 * planes equal to the encoding of the replayed position, legal masks equal), z is one
 * outcome per game rotated to each sample's mover, and the last sample has a move that
 * ends the game with that outcome (no resignation). Returns the samples. */
static int64_t check_file_generic(const char *path, const game *g, int games)
{
    char err[512];
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    int A = g->actions, P = g->players, np = g->planes * g->rows * g->cols;
    const float tol = 0.51f / 255.0f; /* non-binary planes are stored to 1/255 */
    game_state *s = game_state_new(g, NULL), *t = game_state_new(g, NULL);
    float *enc = malloc(sizeof(float) * (size_t)np);
    uint8_t *legal = malloc((size_t)A);
    char *seen = calloc((size_t)games, 1);
    int *movers = malloc(sizeof(int) * (size_t)(g->max_game_length > 0 ? g->max_game_length : A));
    int8_t cells[GAME_MAX_CELLS];
    int hw = g->rows * g->cols;
    ck_assert_int_eq(f->version, 5);
    ck_assert(f->owner != NULL || !sp_game_has_owner(g));
    int64_t i = 0;
    int ngames = 0;
    while (i < f->n) {
        int gi = f->gameix[i];
        ck_assert(gi >= 0 && gi < games && !seen[gi]);
        seen[gi] = 1;
        ngames++;
        int64_t end = i;
        while (end < f->n && f->gameix[end] == gi)
            end++;
        game_init(g, s, NULL);
        float Z[GAME_MAX_PLAYERS]; /* the game's outcome per absolute player */
        for (int64_t j = i; j < end; j++) {
            ck_assert_int_eq(f->ply[j], (int)(j - i));
            ck_assert(!game_terminal(g, s));
            game_encode(g, s, enc);
            for (int k = 0; k < np; k++)
                ck_assert_msg(fabsf(f->state[j * np + k] / 255.0f - enc[k]) < tol,
                              "game %d ply %d: plane value %d", gi, f->ply[j], k);
            game_legal(g, s, legal);
            ck_assert_mem_eq(legal, f->legal + j * A, (size_t)A);
            double sum = 0;
            for (int a = 0; a < A; a++) {
                ck_assert(legal[a] || f->pi[j * A + a] == 0.0f);
                sum += f->pi[j * A + a];
            }
            ck_assert(fabs(sum - 1.0) < 1e-4);
            int mover = game_current_player(g, s);
            movers[j - i] = mover;
            for (int k = 0; k < P; k++) {
                float zk = f->z[j * P + k];
                if (j == i)
                    Z[(mover + k) % P] = zk;
                else
                    ck_assert_msg(Z[(mover + k) % P] == zk,
                                  "game %d ply %d: z is not the game's outcome seen from the mover",
                                  gi, f->ply[j]);
            }
            int played = -1, nmatch = 0;
            for (int a = 0; a < A; a++) {
                if (!legal[a])
                    continue;
                game_copy(g, t, s);
                ck_assert_int_eq(game_play(g, t, a), 0);
                if (j + 1 < end) {
                    game_encode(g, t, enc);
                    int same = 1;
                    for (int k = 0; k < np && same; k++)
                        same = fabsf(f->state[(j + 1) * np + k] / 255.0f - enc[k]) < tol;
                    if (same)
                        played = a, nmatch++;
                } else if (game_terminal(g, t)) {
                    float z[GAME_MAX_PLAYERS];
                    game_result(g, t, z);
                    int same = 1;
                    for (int k = 0; k < P; k++)
                        same &= z[k] == Z[k];
                    if (same && (played < 0 || f->pi[j * A + a] > f->pi[j * A + played]))
                        played = a, nmatch = 1;
                }
            }
            ck_assert_msg(nmatch == 1 && played >= 0, "game %d ply %d: %d moves lead on", gi,
                          f->ply[j], nmatch);
            ck_assert(f->pi[j * A + played] > 0);
            ck_assert_int_eq(game_play(g, s, played), 0);
        }
        ck_assert(game_terminal(g, s));
        /* owner targets: code k at a sample is a stone of the player k-1 seats after its
         * mover in the final position, 0 a point without one; so code 1 counts the
         * mover's final stones */
        if (f->owner) {
            g->ops->cells(g, s, cells);
            for (int64_t j = i; j < end; j++) {
                const int8_t *ow = f->owner + j * hw;
                int mine = 0, have = 0;
                for (int k = 0; k < hw; k++) {
                    if (cells[k] < 0)
                        ck_assert_msg(ow[k] == 0, "game %d ply %d point %d: owner %d of an empty "
                                      "point", gi, f->ply[j], k, ow[k]);
                    else
                        ck_assert_msg(ow[k] >= 1 && ow[k] <= P && (movers[j - i] + ow[k] - 1) % P == cells[k],
                                      "game %d ply %d point %d: owner %d, stone of player %d, mover %d",
                                      gi, f->ply[j], k, ow[k], cells[k], movers[j - i]);
                    mine += cells[k] == movers[j - i];
                    have += ow[k] == 1;
                }
                ck_assert_int_eq(have, mine);
            }
        }
        i = end;
    }
    ck_assert_int_eq(ngames, games);
    int64_t n = f->n;
    free(movers);
    free(seen);
    free(legal);
    free(enc);
    free(s);
    free(t);
    sp_file_free(f);
    return n;
}

/* h5ls / h5dump (hdf5-tools) see the datasets with their shapes. Skipped when the tools
 * are not installed. */
static void check_h5_tools(const char *path, int64_t n)
{
    if (system("command -v h5ls >/dev/null 2>&1 && command -v h5dump >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_selfplay: hdf5-tools not installed: skipping the h5ls/h5dump check\n");
        return;
    }
    char cmd[600], out[8192];
    snprintf(cmd, sizeof cmd, "h5dump -H '%s' >/dev/null 2>&1", path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "h5ls '%s' 2>&1", path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = 0;
    ck_assert_int_eq(pclose(p), 0);
    const char *want[] = {"state", "{%lld/Inf, 5, 3, 3}", "pi", "{%lld/Inf, 9}", "legal",
                          "z", "{%lld/Inf, 2}", "game", "ply", "{%lld/Inf}", "owner"};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        char w[64];
        snprintf(w, sizeof w, want[k], (long long)n);
        ck_assert_msg(strstr(out, w) != NULL, "h5ls %s: no \"%s\" in:\n%s", path, w, out);
    }
    /* the root attributes of §5 */
    snprintf(cmd, sizeof cmd, "h5dump -A '%s' 2>&1", path);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char *big = malloc(1 << 16);
    len = fread(big, 1, (1 << 16) - 1, p);
    big[len] = 0;
    ck_assert_int_eq(pclose(p), 0);
    const char *attrs[] = {"\"format\"", "\"gridzero-samples\"", "\"version\"", "\"game\"",
                           "\"game_config\"", "\"generation\"", "\"model\"", "\"players\"",
                           "\"planes\"", "\"rows\"", "\"cols\"", "\"actions\"", "\"lattice\"",
                           "\"complete\""};
    for (size_t k = 0; k < sizeof attrs / sizeof *attrs; k++)
        ck_assert_msg(strstr(big, attrs[k]) != NULL, "h5dump -A %s: no attribute %s", path,
                      attrs[k]);
    free(big);
}

static void base_opts(sp_opts *o, const gz_config *c, int games)
{
    sp_opts_from_config(o, c);
    o->games = games;
    o->model = "test";
    o->generation = 3;
}

/* ---- tests ---- */

/* The VCF and VCT checks serve play; self-play's search keeps them only with
 * selfplay.threat_checks. The LCB move choice is a player's: self-play never uses it. */
START_TEST(threat_checks_only_when_asked)
{
    gz_config c;
    char err[256];
    ck_assert_int_eq(cfg_load(&c, NULL, err, sizeof err), 0);
    char *sets[] = {"game.rows=9", "game.cols=9", "game.k=5", "mcts.vcf_root=1000",
                    "mcts.vcf_leaf=50", "mcts.vcf_defend=true", "mcts.vct_root=5000",
                    "mcts.lcb_stdevs=3"};
    ck_assert_msg(cfg_set_all(&c, sets, 8, err, sizeof err) == 0, "%s", err);
    sp_opts o;
    sp_opts_from_config(&o, &c);
    ck_assert_int_eq(o.search.vcf_root, 0);
    ck_assert_int_eq(o.search.vct_root, 0);
    ck_assert_float_eq(o.search.lcb_stdevs, 0.0f);
    ck_assert_int_eq(o.search.vcf_leaf, 0);
    ck_assert(!o.search.vcf_defend);
    mcts_params mp;
    mcts_params_from_config(&mp, &c.mcts); /* the players' search keeps them */
    ck_assert_int_eq(mp.vcf_root, 1000);
    ck_assert_int_eq(mp.vcf_leaf, 50);
    ck_assert_int_eq(mp.vct_root, 5000);
    ck_assert_float_eq(mp.lcb_stdevs, 3.0f);
    char *on[] = {"selfplay.threat_checks=true"};
    ck_assert_msg(cfg_set_all(&c, on, 1, err, sizeof err) == 0, "%s", err);
    sp_opts_from_config(&o, &c);
    ck_assert_int_eq(o.search.vcf_root, 1000);
    ck_assert_int_eq(o.search.vcf_leaf, 50);
    ck_assert(o.search.vcf_defend);
    ck_assert_int_eq(o.search.vct_root, 5000);
    ck_assert_float_eq(o.search.lcb_stdevs, 0.0f);
}
END_TEST

START_TEST(rollout_file_valid)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    sp_opts o;
    base_opts(&o, &c, 12);
    char *gcfg = sp_game_config_json(&c);
    o.game_config = gcfg;
    mcts_params_pure(&o.search);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/r.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert(exists(path));
    char tmp[320];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    ck_assert(!exists(tmp));
    replay_stats rs = check_file(path, g, 12, 0);
    ck_assert_int_eq(st.games, 12);
    ck_assert_int_eq(st.positions, rs.positions);
    ck_assert_int_eq(st.plies, rs.positions);
    ck_assert_int_eq(st.resigned, 0);
    ck_assert_int_eq(rs.resigned, 0);
    ck_assert_int_eq(st.seat_wins[0] + st.seat_wins[1] + st.draws, 12);
    ck_assert_int_eq(st.draws, rs.draws);
    ck_assert_int_gt(st.simulations, 0);
    /* the file's own meta */
    sp_file *f = sp_file_read(path, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->meta.generation, 3);
    ck_assert_str_eq(f->meta.model, "test");
    ck_assert_ptr_nonnull(strstr(f->game_config, "mnk"));
    check_h5_tools(path, f->n);
    sp_file_free(f);
    free(gcfg);
    game_free(g);
}
END_TEST

START_TEST(network_file_valid)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    net_ctx x = {g, &c, random_net(&c, g, 5)};
    sp_opts o;
    base_opts(&o, &c, 10);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/n.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, net_factory, &x, path, &st, err, sizeof err) == 0, "%s", err);
    replay_stats rs = check_file(path, g, 10, 0);
    ck_assert_int_eq(st.positions, rs.positions);
    ck_assert_int_gt(st.evaluated, 0);
    nn_params_free(x.p);
    game_free(g);
}
END_TEST

/* Everything resigns when the threshold is above any value a search gives early. */
START_TEST(resign_all)
{
    gz_config c;
    tiny_config(&c);
    c.selfplay.resign_threshold = 0.9;
    c.selfplay.resign_disabled_fraction = 0;
    game *g = make_game(&c);
    sp_opts o;
    base_opts(&o, &c, 12);
    mcts_params_pure(&o.search);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/res.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    replay_stats rs = check_file(path, g, 12, 1);
    ck_assert_int_eq(st.resigned, 12);
    ck_assert_int_eq(rs.resigned, 12);
    ck_assert_int_eq(st.resign_checked, 0);
    /* two own moves below the threshold: the first player resigns at its second move */
    ck_assert_int_le(rs.positions, 12 * 4);
    game_free(g);
}
END_TEST

/* With every game exempt, none resigns, and the would-be resignations are counted. */
START_TEST(resign_disabled_counts_false)
{
    gz_config c;
    tiny_config(&c);
    c.selfplay.resign_threshold = 0.9;
    c.selfplay.resign_disabled_fraction = 1;
    game *g = make_game(&c);
    sp_opts o;
    base_opts(&o, &c, 12);
    mcts_params_pure(&o.search);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/nores.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    replay_stats rs = check_file(path, g, 12, 0);
    ck_assert_int_eq(st.resigned, 0);
    ck_assert_int_eq(rs.resigned, 0);
    ck_assert_int_gt(st.resign_checked, 12); /* every game, mostly both players */
    ck_assert_int_le(st.resign_checked, 24);
    /* a draw or a win after wanting to resign is a false resignation: tic-tac-toe
     * self-play draws a lot */
    ck_assert_int_gt(st.resign_false, 0);
    ck_assert_int_le(st.resign_false, st.resign_checked);
    /* the records of every no-resign game are in the file: two players a game */
    sp_resign_check *rc;
    int n;
    ck_assert_msg(sp_read_resign_checks(path, &rc, &n, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n, 24);
    int would = 0, wrong = 0;
    for (int i = 0; i < n; i++) {
        ck_assert(rc[i].value >= -1 && rc[i].value <= 2);
        would += rc[i].value < 0.9f;
        wrong += rc[i].value < 0.9f && !rc[i].lost;
    }
    ck_assert_int_eq(would, st.resign_checked);
    ck_assert_int_eq(wrong, st.resign_false);
    free(rc);
    /* the rollout bootstrap (o.pure) stores no records: rollout values do not calibrate
     * a network's resignation (the run's first network would resign on them); it still
     * reports its would-be resignations */
    o.pure = true;
    snprintf(path, sizeof path, "%s/nores_pure.h5", dir);
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_gt(st.resign_checked, 12);
    ck_assert_msg(sp_read_resign_checks(path, &rc, &n, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(rc);
    game_free(g);
}
END_TEST

/* Resignation calibration on a synthetic stream: resign_at uniform in [-1, 1] and the
 * chance of NOT losing (a false resignation) (v + 1) / 2, so below a threshold t the
 * false fraction is (t + 1) / 4: a 5% target means t = -0.8. The estimate converges on
 * it from below as records accumulate (the 95% bound resigns later, not earlier, than
 * the truth), and says "never" (-1) below the minimum count or while unsure. */
START_TEST(resign_calibration_converges)
{
    rng r;
    rng_seed(&r, 99);
    enum { N = 40000 };
    sp_resign_check *c = malloc(sizeof *c * N);
    for (int i = 0; i < N; i++) {
        c[i].value = (float)(2 * rng_uniform(&r) - 1);
        c[i].lost = rng_uniform(&r) >= (c[i].value + 1) / 2;
    }
    ck_assert_double_eq(sp_resign_calibrate(c, 50, 0.05, 100, 0.0), -1.0);
    /* the bound is conservative with few records (it resigns later than the truth, not
     * earlier) and converges as they accumulate */
    ck_assert_double_eq(sp_resign_calibrate(c, 400, 0.05, 100, 0.0), -1.0); /* not yet sure */
    double t4k = sp_resign_calibrate(c, 4000, 0.05, 100, 0.0);
    double t40k = sp_resign_calibrate(c, N, 0.05, 100, 0.0);
    ck_assert_msg(t4k < -0.8 && t4k > -0.95, "4000 records: %g", t4k);
    ck_assert_msg(fabs(t40k + 0.8) < 0.06 && t40k > t4k, "40000 records: %g (4000: %g)", t40k, t4k);
    /* 30 records below a threshold with one false resignation: 3.3% is under a 5%
     * target, but not with 95% confidence (its upper bound is 15%) */
    sp_resign_check few[60];
    for (int i = 0; i < 60; i++) {
        few[i].value = i < 30 ? -0.9f : 0.5f;
        few[i].lost = i != 0;
    }
    ck_assert_double_eq(sp_resign_calibrate(few, 60, 0.05, 10, 0.0), -1.0);
    /* a looser target resigns earlier; the cap holds */
    ck_assert(sp_resign_calibrate(c, N, 0.10, 100, 0.0) > sp_resign_calibrate(c, N, 0.05, 100, 0.0));
    ck_assert(sp_resign_calibrate(c, N, 0.45, 100, -0.5) <= -0.5);
    /* every would-be resigner won: never resign */
    for (int i = 0; i < 200; i++)
        c[i].lost = 0;
    ck_assert_double_eq(sp_resign_calibrate(c, 200, 0.05, 100, 0.0), -1.0);
    free(c);
}
END_TEST

START_TEST(deterministic)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    net_ctx x = {g, &c, random_net(&c, g, 9)};
    char p[3][300], err[512];
    for (int k = 0; k < 3; k++) {
        sp_opts o;
        base_opts(&o, &c, 8);
        o.seed = k < 2 ? 42 : 43;
        snprintf(p[k], sizeof p[k], "%s/d%d.h5", dir, k);
        ck_assert_msg(sp_run(g, &o, net_factory, &x, p[k], NULL, err, sizeof err) == 0, "%s", err);
    }
    sp_file *a = sp_file_read(p[0], NULL, err, sizeof err);
    sp_file *b = sp_file_read(p[1], NULL, err, sizeof err);
    sp_file *d = sp_file_read(p[2], NULL, err, sizeof err);
    ck_assert(a && b && d);
    ck_assert_int_eq(a->n, b->n);
    int64_t n = a->n;
    size_t np = (size_t)a->planes * a->rows * a->cols;
    ck_assert_mem_eq(a->state, b->state, (size_t)n * np);
    ck_assert_mem_eq(a->pi, b->pi, sizeof(float) * (size_t)n * a->actions);
    ck_assert_mem_eq(a->z, b->z, sizeof(float) * (size_t)n * a->players);
    ck_assert_mem_eq(a->gameix, b->gameix, sizeof(int32_t) * (size_t)n);
    /* another seed plays other games */
    int differ = d->n != n || memcmp(a->state, d->state, (size_t)n * np) != 0 ||
                 memcmp(a->pi, d->pi, sizeof(float) * (size_t)n * a->actions) != 0;
    ck_assert(differ);
    sp_file_free(a);
    sp_file_free(b);
    sp_file_free(d);
    nn_params_free(x.p);
    game_free(g);
}
END_TEST

START_TEST(parallel_and_threads)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    net_ctx x = {g, &c, random_net(&c, g, 3)};
    const int cases[][2] = {{1, 8}, {2, 3}, {2, 1}}; /* threads, parallel_games */
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        c.selfplay.parallel_games = cases[k][1];
        sp_opts o;
        base_opts(&o, &c, 13);
        o.threads = cases[k][0];
        char path[300], err[512];
        snprintf(path, sizeof path, "%s/p%zu.h5", dir, k);
        sp_stats st;
        ck_assert_msg(sp_run(g, &o, net_factory, &x, path, &st, err, sizeof err) == 0, "%s", err);
        replay_stats rs = check_file(path, g, 13, 0);
        ck_assert_int_eq(st.games, 13);
        ck_assert_int_eq(st.positions, rs.positions);
        ck_assert_int_eq(st.seat_wins[0] + st.seat_wins[1] + st.draws, 13);
    }
    /* two rollout workers too */
    sp_opts o;
    base_opts(&o, &c, 9);
    o.threads = 2;
    mcts_params_pure(&o.search);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/pr.h5", dir);
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, NULL, err, sizeof err) == 0, "%s", err);
    check_file(path, g, 9, 0);
    nn_params_free(x.p);
    game_free(g);
}
END_TEST

typedef struct stop_ctx {
    volatile int flag;
    int calls;
} stop_ctx;

static void stop_after_first(void *ctx, const sp_stats *so_far, int total)
{
    (void)total;
    stop_ctx *s = ctx;
    s->calls++;
    if (so_far->games >= 1)
        s->flag = 1;
}

START_TEST(stop_leaves_nothing)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    for (int threads = 1; threads <= 2; threads++) {
        stop_ctx sc = {0, 0};
        sp_opts o;
        base_opts(&o, &c, 200);
        o.threads = threads;
        c.selfplay.parallel_games = 2;
        o.parallel_games = 2;
        mcts_params_pure(&o.search);
        o.progress = stop_after_first;
        o.progress_ctx = &sc;
        o.stop = &sc.flag;
        char path[300], tmp[320], err[512];
        snprintf(path, sizeof path, "%s/stop%d.h5", dir, threads);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        sp_stats st;
        ck_assert_int_eq(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err), 1);
        ck_assert_int_ge(sc.calls, 1);
        ck_assert_int_lt(st.games, 200);
        ck_assert(!exists(path));
        ck_assert(!exists(tmp));
    }
    game_free(g);
}
END_TEST

/* sp_opts.part_path for the tests: DIR/<prefix>NNN.h5 */
static void test_part_path(void *ctx, int part, char *out, size_t len)
{
    snprintf(out, len, "%s/%s%03d.h5", dir, (const char *)ctx, part);
}

static int cmp_check(const void *a, const void *b)
{
    const sp_resign_check *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value ? 1 : x->lost - y->lost;
}

/* Part files (the loop's self-play): a file is closed as a part after a game whenever
 * part_seconds have passed and games remain; the parts then out_path, read in order,
 * hold exactly the one file's samples and resignation records, and every file says how
 * many games it holds. gameix_base numbers the games after a resumed run's parts. A stop
 * keeps the parts closed before it. */
START_TEST(parts_hold_what_one_file_would)
{
    gz_config c;
    tiny_config(&c);
    c.selfplay.parallel_games = 3;
    c.selfplay.resign_threshold = 0.9;
    c.selfplay.resign_disabled_fraction = 1; /* every game measures: records in each file */
    game *g = make_game(&c);
    net_ctx x = {g, &c, random_net(&c, g, 17)};
    char one[300], last[300], err[512];
    snprintf(one, sizeof one, "%s/one.h5", dir);
    snprintf(last, sizeof last, "%s/last.h5", dir);
    sp_opts o;
    base_opts(&o, &c, 10);
    o.seed = 77;
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, net_factory, &x, one, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.parts, 0);
    int64_t games;
    ck_assert_msg(sp_read_games(one, &games, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(games, 10);

    o.part_seconds = 1e-9; /* a part after every game but the last */
    o.part_path = test_part_path;
    o.part_ctx = "part";
    ck_assert_msg(sp_run(g, &o, net_factory, &x, last, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.parts, 9);
    ck_assert_int_eq(st.games, 10);
    sp_file *a = sp_file_read(one, NULL, err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    size_t np = (size_t)a->planes * a->rows * a->cols, A = (size_t)a->actions, P = (size_t)a->players;
    int64_t at = 0, sum_games = 0;
    int nrec = 0;
    sp_resign_check *ra, *rb = NULL;
    int na;
    ck_assert_msg(sp_read_resign_checks(one, &ra, &na, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(na, 20);
    for (int k = 0; k <= 9; k++) {
        char p[320];
        if (k < 9)
            test_part_path("part", k, p, sizeof p);
        else
            snprintf(p, sizeof p, "%s", last);
        sp_file *b = sp_file_read(p, NULL, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
        ck_assert_msg(sp_read_games(p, &games, NULL, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(games, 1);
        sum_games += games;
        ck_assert_int_le(at + b->n, a->n);
        ck_assert_mem_eq(b->state, a->state + (size_t)at * np, (size_t)b->n * np);
        ck_assert_mem_eq(b->pi, a->pi + (size_t)at * A, sizeof(float) * (size_t)b->n * A);
        ck_assert_mem_eq(b->z, a->z + (size_t)at * P, sizeof(float) * (size_t)b->n * P);
        ck_assert_mem_eq(b->q, a->q + (size_t)at * P, sizeof(float) * (size_t)b->n * P);
        ck_assert_mem_eq(b->gameix, a->gameix + at, sizeof(int32_t) * (size_t)b->n);
        ck_assert_mem_eq(b->ply, a->ply + at, sizeof(int32_t) * (size_t)b->n);
        at += b->n;
        sp_resign_check *rc;
        int n;
        ck_assert_msg(sp_read_resign_checks(p, &rc, &n, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(n, 2); /* its one game's two players */
        rb = realloc(rb, sizeof *rb * (size_t)(nrec + n));
        memcpy(rb + nrec, rc, sizeof *rc * (size_t)n);
        nrec += n;
        free(rc);
        sp_file_free(b);
    }
    ck_assert_int_eq(at, a->n);
    ck_assert_int_eq(sum_games, 10);
    ck_assert_int_eq(nrec, na);
    qsort(ra, (size_t)na, sizeof *ra, cmp_check);
    qsort(rb, (size_t)nrec, sizeof *rb, cmp_check);
    ck_assert_mem_eq(ra, rb, sizeof *ra * (size_t)na);
    free(ra);
    free(rb);

    /* a resumed generation numbers its games after the kept ones */
    sp_opts o2;
    base_opts(&o2, &c, 4);
    o2.gameix_base = 100;
    ck_assert_msg(sp_run(g, &o2, net_factory, &x, one, NULL, err, sizeof err) == 0, "%s", err);
    sp_file *b = sp_file_read(one, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    for (int64_t i = 0; i < b->n; i++)
        ck_assert(b->gameix[i] >= 100 && b->gameix[i] < 104);
    sp_file_free(b);
    int32_t next;
    ck_assert_msg(sp_read_games(one, &games, &next, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(games, 4);
    ck_assert(next > 100 && next <= 104);
    sp_file_free(a);

    /* stopped after the first game: the parts closed so far stay, whole; no last file */
    stop_ctx sc = {0, 0};
    base_opts(&o, &c, 200);
    mcts_params_pure(&o.search);
    o.progress = stop_after_first;
    o.progress_ctx = &sc;
    o.stop = &sc.flag;
    o.part_seconds = 1e-9;
    o.part_path = test_part_path;
    o.part_ctx = "stopped";
    char tmp[320], p0[320];
    snprintf(tmp, sizeof tmp, "%s.tmp", last);
    unlink(last);
    ck_assert_int_eq(sp_run(g, &o, rollout_factory, g, last, &st, err, sizeof err), 1);
    ck_assert_int_ge(st.parts, 1);
    ck_assert(!exists(last));
    ck_assert(!exists(tmp));
    test_part_path("stopped", 0, p0, sizeof p0);
    ck_assert_msg(sp_read_games(p0, &games, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(games, 1);
    sp_file *f0 = sp_file_read(p0, NULL, err, sizeof err);
    ck_assert_msg(f0 != NULL, "%s", err);
    sp_file_free(f0);
    /* every finished game is in a part: those in flight at the stop are the only loss */
    int64_t kept = 0;
    for (int k = 0; k < st.parts; k++) {
        test_part_path("stopped", k, p0, sizeof p0);
        ck_assert_msg(sp_read_games(p0, &games, NULL, err, sizeof err) == 0, "%s", err);
        kept += games;
    }
    ck_assert_int_eq(kept, st.games);
    nn_params_free(x.p);
    game_free(g);
}
END_TEST

START_TEST(failures_leave_nothing)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    sp_opts o;
    base_opts(&o, &c, 4);
    o.threads = 2;
    char path[300], tmp[320], err[512];
    snprintf(path, sizeof path, "%s/fail.h5", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    ck_assert_int_eq(sp_run(g, &o, failing_factory, g, path, NULL, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "no evaluator for worker 1"));
    ck_assert(!exists(path) && !exists(tmp));
    o.threads = 1;
    o.games = 0;
    ck_assert_int_eq(sp_run(g, &o, rollout_factory, g, path, NULL, err, sizeof err), -1);
    ck_assert(!exists(path) && !exists(tmp));
    /* an unwritable place: a message naming it */
    o.games = 2;
    ck_assert_int_eq(sp_run(g, &o, rollout_factory, g, "/nonexistent/dir/x.h5", NULL, err, sizeof err),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/dir/x.h5"));
    game_free(g);
}
END_TEST

/* ---- gridzero selfplay ---- */

static int run_cmd(const char *fmt, const char *a, const char *b, char *out, size_t outlen)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN is not set (run through meson test)");
    char cmd[2048], line[1024];
    int n = snprintf(cmd, sizeof cmd, "'%s' ", bin);
    snprintf(cmd + n, sizeof cmd - (size_t)n, fmt, a, b);
    strcat(cmd, " 2>&1");
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = 0;
    out[0] = 0;
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (len + l + 1 < outlen) {
            memcpy(out + len, line, l + 1);
            len += l;
        }
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define TINY "--set mcts.simulations=24 --set net.blocks=1 --set net.channels=8 " \
             "--set selfplay.threads=1 --set selfplay.bootstrap_simulations=24 "

START_TEST(command_writes_valid_files)
{
    gz_config c;
    tiny_config(&c);
    game *g = make_game(&c);
    char path[300], model[300], out[8192], err[512];
    /* rollout (no -m) */
    snprintf(path, sizeof path, "%s/cmd_r.h5", dir);
    int rc = run_cmd("selfplay " TINY "--games 7 --generation 2 -o '%s'%s", path, "", out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "7 games") != NULL, "%s", out);
    replay_stats rs = check_file(path, g, 7, 1);
    sp_file *f = sp_file_read(path, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_str_eq(f->meta.model, "rollout");
    ck_assert_int_eq(f->meta.generation, 2);
    ck_assert_int_eq(f->n, rs.positions);
    sp_file_free(f);
    /* a random-init model, two threads */
    nn_params *p = random_net(&c, g, 17);
    snprintf(model, sizeof model, "%s/m.h5", dir);
    nn_ckpt_meta meta = {0};
    ck_assert_msg(nn_ckpt_save(model, p, &meta, NULL, 0, err, sizeof err) == 0, "%s", err);
    nn_params_free(p);
    snprintf(path, sizeof path, "%s/cmd_n.h5", dir);
    rc = run_cmd("selfplay " TINY "--games 6 --threads 2 -m '%s' -o '%s'", model, path, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    check_file(path, g, 6, 1);
    /* resignation and its false-resignation report */
    snprintf(path, sizeof path, "%s/cmd_res.h5", dir);
    rc = run_cmd("selfplay " TINY "--set selfplay.resign_threshold=0.9 "
                 "--set selfplay.resign_disabled_fraction=1 --games 6 -m '%s' -o '%s'",
                 model, path, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "resigned 0") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "false resignations") != NULL, "%s", out);
    check_file(path, g, 6, 0);
    /* errors: a missing model, no -o; nothing written */
    snprintf(path, sizeof path, "%s/cmd_bad.h5", dir);
    rc = run_cmd("selfplay " TINY "--games 2 -m '%s/missing.h5' -o '%s'", dir, path, out, sizeof out);
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(out, "missing.h5") != NULL, "%s", out);
    ck_assert(!exists(path));
    rc = run_cmd("selfplay --games 2%s%s", "", "", out, sizeof out);
    ck_assert_int_eq(rc, 2);
    game_free(g);
}
END_TEST

/* Three players on the hex lattice (Sanling N=5, 9 moves): z rotates with the mover. */
START_TEST(openings_swap2_and_book)
{
    /* Gomoku 9x9 with the rollout evaluator: swap2 openings (3 or 5 stones before the
     * first searched move), then a book; the config's cross-key rules. */
    gz_config c;
    char err[512], path[300];
    ck_assert_msg(cfg_parse(&c, "{\"seed\": 5, \"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, "
                                "\"k\": 5}, \"mcts\": {\"simulations\": 16, \"batch\": 4}, "
                                "\"selfplay\": {\"threads\": 1, \"parallel_games\": 3, "
                                "\"resign_threshold\": -1, \"opening\": \"swap2\"}}", "test", err,
                            sizeof err) == 0, "%s", err);
    game *g = make_game(&c);
    sp_opts o;
    base_opts(&o, &c, 6);
    mcts_params_pure(&o.search);
    ck_assert(o.swap2);
    snprintf(path, sizeof path, "%s/swap2.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.games, 6);
    sp_file *f = sp_file_read(path, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    int first[6] = {-1, -1, -1, -1, -1, -1};
    for (int64_t i = 0; i < f->n; i++)
        if (first[f->gameix[i]] < 0 || f->ply[i] < first[f->gameix[i]])
            first[f->gameix[i]] = f->ply[i];
    for (int k = 0; k < 6; k++) {
        ck_assert_msg(first[k] == 3 || first[k] == 5, "game %d starts at ply %d", k, first[k]);
        /* the opening's stones lie in the centre: the first sample shows 3 or 5 stones */
        int64_t i = 0;
        while (f->gameix[i] != k || f->ply[i] != first[k])
            i++;
        int stones = 0, hw = 81;
        for (int a = 0; a < 2 * hw; a++)
            stones += f->state[i * (int64_t)g->planes * hw + a] > 127;
        ck_assert_int_eq(stones, first[k]);
    }
    sp_file_free(f);

    /* a book: game i plays line (offset + i) mod 2 */
    char book[300];
    snprintf(book, sizeof book, "%s/book.txt", dir);
    FILE *bf = fopen(book, "w");
    ck_assert_ptr_nonnull(bf);
    fputs("# two openings\ne5 d4 f6\n\n4,4 4,3\n", bf);
    fclose(bf);
    opening_book *b = openings_load(g, book, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(openings_count(b), 2);
    base_opts(&o, &c, 4);
    mcts_params_pure(&o.search);
    o.swap2 = false;
    o.book = b;
    snprintf(path, sizeof path, "%s/book.h5", dir);
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    f = sp_file_read(path, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    int lens[2] = {0, 0};
    for (int k = 0; k < 4; k++) {
        int lo = 1 << 30;
        for (int64_t i = 0; i < f->n; i++)
            if (f->gameix[i] == k && f->ply[i] < lo)
                lo = f->ply[i];
        ck_assert_msg(lo == 3 || lo == 2, "game %d starts at ply %d", k, lo);
        lens[lo - 2]++;
    }
    ck_assert_int_eq(lens[0], 2); /* each line twice */
    ck_assert_int_eq(lens[1], 2);
    sp_file_free(f);
    openings_free(b);

    /* bad books and bad keys */
    const char *bad[][2] = {{"e5 e5\n", "occupied"}, {"e5 z9\n", "outside the board"},
                            {"# nothing\n\n", "no openings"}, {"a1 b1 a2 b2 a3 b3 a4 b4 a5\n", "ends the game"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bf = fopen(book, "w");
        fputs(bad[k][0], bf);
        fclose(bf);
        ck_assert(openings_load(g, book, err, sizeof err) == NULL);
        ck_assert_msg(strstr(err, bad[k][1]) && strstr(err, book), "%s", err);
    }
    ck_assert(openings_load(g, "/nonexistent/book.txt", err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "/nonexistent/book.txt"), "%s", err);
    ck_assert_int_eq(cfg_set(&c, "selfplay.openings=book.txt", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "selfplay.openings"), "%s", err);
    gz_config sc;
    ck_assert_int_eq(cfg_parse(&sc, "{\"game\": {\"name\": \"sanling\"}, \"selfplay\": {\"opening\": "
                                    "\"swap2\"}}", "test", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "selfplay.opening"), "%s", err);
    game_free(g);
}
END_TEST

/* Adjudication: from a book position where black to move has a VCF (g4 makes two fours,
 * on row 4 and on column g), with selfplay.adjudicate and a root VCF check every game
 * ends at its first search: one sample, the proven win as z (mover-first +1, -1), pi
 * one-hot on the VCF's first move with policy weight 1. Without adjudication the same
 * games are played on (more samples, none adjudicated). */
START_TEST(adjudicated_game_writes_proven_value)
{
    gz_config c;
    char err[512], path[300], book[300];
    ck_assert_msg(cfg_parse(&c, "{\"seed\": 3, \"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, "
                                "\"k\": 5}, \"mcts\": {\"simulations\": 32, \"batch\": 4}, "
                                "\"selfplay\": {\"threads\": 1, \"parallel_games\": 2, "
                                "\"resign_threshold\": -1, \"adjudicate\": true, "
                                "\"adjudicate_vcf\": 2000}}", "test", err, sizeof err) == 0, "%s", err);
    game *g = make_game(&c);
    snprintf(book, sizeof book, "%s/vcf_book.txt", dir);
    FILE *bf = fopen(book, "w");
    ck_assert_ptr_nonnull(bf);
    fputs("d4 c4 e4 g8 f4 a9 g5 b9 g6 i1 g7 i2\n", bf);
    fclose(bf);
    opening_book *b = openings_load(g, book, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    int g4 = -1;
    ck_assert_int_eq(g->ops->parse_move(g, "g4", &g4, err, sizeof err), 0);
    for (int adj = 1; adj >= 0; adj--) {
        c.selfplay.adjudicate = adj;
        sp_opts o;
        base_opts(&o, &c, 3);
        mcts_params_pure(&o.search);
        ck_assert_int_eq(o.search.vcf_root, 2000); /* the check runs without threat_checks */
        ck_assert(o.adjudicate == (adj == 1));
        o.book = b;
        snprintf(path, sizeof path, "%s/adj%d.h5", dir, adj);
        sp_stats st;
        ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(st.games, 3);
        sp_file *f = sp_file_read(path, NULL, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        if (adj) {
            ck_assert_int_eq(st.adjudicated, 3);
            ck_assert_int_eq(st.seat_wins[0], 3); /* black */
            ck_assert_int_eq(f->n, 3);
            for (int64_t i = 0; i < f->n; i++) {
                ck_assert_int_eq(f->ply[i], 12);
                ck_assert_float_eq(f->z[2 * i], 1.0f);
                ck_assert_float_eq(f->z[2 * i + 1], -1.0f);
                ck_assert_float_eq(f->pi[i * g->actions + g4], 1.0f);
                ck_assert_float_eq(f->weight[i], 1.0f);
            }
        } else {
            ck_assert_int_eq(st.adjudicated, 0);
            ck_assert_int_gt(f->n, 3);
        }
        sp_file_free(f);
    }
    openings_free(b);
    game_free(g);
}
END_TEST

START_TEST(sanling_three_players)
{
    gz_config c;
    char err[512];
    ck_assert_msg(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\", \"size\": 5, \"players\": 3, "
                            "\"moves\": 9}, \"mcts\": {\"simulations\": 24, \"batch\": 4}, "
                            "\"net\": {\"blocks\": 1, \"channels\": 8, \"threads\": 1}, "
                            "\"selfplay\": {\"parallel_games\": 3}, \"seed\": 4}",
                            "test", err, sizeof err) == 0, "%s", err);
    game *g = make_game(&c);
    ck_assert_int_eq(g->players, 3);
    char path[300];
    /* rollouts, two workers */
    sp_opts o;
    base_opts(&o, &c, 6);
    o.threads = 2;
    o.resign_threshold = 0.9; /* never for three players */
    mcts_params_pure(&o.search);
    snprintf(path, sizeof path, "%s/s3r.h5", dir);
    sp_stats st;
    ck_assert_msg(sp_run(g, &o, rollout_factory, g, path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(st.resigned, 0);
    ck_assert_int_eq(check_file_generic(path, g, 6), st.positions);
    ck_assert_int_eq(st.positions, 6 * 9);
    /* a random-init network */
    net_ctx x = {g, &c, random_net(&c, g, 21)};
    base_opts(&o, &c, 5);
    snprintf(path, sizeof path, "%s/s3n.h5", dir);
    ck_assert_msg(sp_run(g, &o, net_factory, &x, path, &st, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(check_file_generic(path, g, 5), st.positions);
    nn_params_free(x.p);
    game_free(g);
}
END_TEST

static Suite *selfplay_suite(void)
{
    Suite *s = suite_create("selfplay");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, threat_checks_only_when_asked);
    tcase_add_test(tc, rollout_file_valid);
    tcase_add_test(tc, network_file_valid);
    tcase_add_test(tc, resign_all);
    tcase_add_test(tc, resign_disabled_counts_false);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, resign_calibration_converges);
    tcase_add_test(tc, parallel_and_threads);
    tcase_add_test(tc, stop_leaves_nothing);
    tcase_add_test(tc, parts_hold_what_one_file_would);
    tcase_add_test(tc, failures_leave_nothing);
    tcase_add_test(tc, command_writes_valid_files);
    tcase_add_test(tc, sanling_three_players);
    tcase_add_test(tc, openings_swap2_and_book);
    tcase_add_test(tc, adjudicated_game_writes_proven_value);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(selfplay_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
