/* 2048 through the network and the loop: the score transform h and its inverse, the
 * score value head's spec and its checks against games, the network evaluator's points,
 * sample files with points as targets (round trip and refusals), the dataset's h(z) and
 * its symmetries of 2048's moves, carrying a 3x3 model to 4x4 (nn_params_adapt), and
 * tiny runs: the 3x3 bootstrap and score table, then a 4x4 run from its model. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "engine/symmetry.h"
#include "nn/checkpoint.h"
#include "nn/net_eval.h"
#include "nn/params.h"
#include "nn/spec.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "train/dataset.h"
#include "cli_util.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gz_test_2048_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static game *make(const char *name, int rows, int cols, gz_config *c)
{
    cfg_defaults(c, name);
    c->game.rows = rows;
    c->game.cols = cols;
    if (!strcmp(name, "mnk"))
        c->game.k = 3;
    char err[256];
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

START_TEST(transform_and_inverse)
{
    ck_assert_double_eq(nn_score_to_value(0), 0);
    ck_assert_double_eq_tol(nn_score_to_value(3), 1.0 + 0.003, 1e-12);
    ck_assert_double_eq_tol(nn_score_to_value(99), 9.0 + 0.099, 1e-12);
    ck_assert_double_eq_tol(nn_score_to_value(-8), -(2.0 + 0.008), 1e-12);
    double prev = -INFINITY;
    for (double x = -2e6; x <= 2e6; x += 977.25) {
        double y = nn_score_to_value(x);
        ck_assert_msg(y > prev, "not increasing at %g", x);
        prev = y;
        ck_assert_double_eq_tol(nn_score_to_value(-x), -y, 1e-9);
        double back = nn_value_to_score(y);
        ck_assert_msg(fabs(back - x) <= 1e-7 * fmax(1.0, fabs(x)), "h^-1(h(%g)) = %.12g", x, back);
    }
    for (double x = 0; x < 50; x += 0.125)
        ck_assert_double_eq_tol(nn_value_to_score(nn_score_to_value(x)), x, 1e-9);
    /* the scale the head learns: 4x4 scores of 10^5 become a few hundred */
    ck_assert(nn_score_to_value(1e5) > 300 && nn_score_to_value(1e5) < 500);
}
END_TEST

START_TEST(score_head_spec_and_checks)
{
    gz_config c, m;
    game *g = make("2048", 3, 3, &c);
    game *gm = make("mnk", 3, 3, &m);
    char err[512];
    nn_spec s;
    /* a scored game gets the score head whatever value_head says of outcomes */
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "dense");
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.value, NN_VALUE_SCORE);
    ck_assert_int_eq(s.players, 1);
    ck_assert_int_eq(s.actions, 4);
    /* the conv policy head needs point actions: refused naming the key */
    gz_config c2 = c;
    snprintf(c2.net.policy_head, sizeof c2.net.policy_head, "conv");
    ck_assert_int_eq(nn_spec_from_config(&s, &c2.net, g, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "net.policy_head"));
    /* "score" for a game of outcomes: refused naming the key */
    snprintf(m.net.value_head, sizeof m.net.value_head, "score");
    ck_assert_int_eq(nn_spec_from_config(&s, &m.net, gm, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "net.value_head"));
    /* a 2048 model is refused by a game of outcomes and the other way round */
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_check_game(&s, gm, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "value_head = score"));
    nn_spec sm;
    snprintf(m.net.value_head, sizeof m.net.value_head, "zerosum");
    ck_assert_int_eq(nn_spec_from_config(&sm, &m.net, gm, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_check_game(&sm, g, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "keeps a score"));
    /* JSON round trip */
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"score\""));
    nn_spec back;
    ck_assert_msg(nn_spec_from_json(&back, j, err, sizeof err) == 0, "%s", err);
    ck_assert(memcmp(&back, &s, sizeof s) == 0);
    free(j);
    /* the value finish leaves the score head's outputs as they are */
    float v = 123.25f;
    nn_value_finish(&s, &v, &v);
    ck_assert_float_eq(v, 123.25f);
    game_free(g);
    game_free(gm);
}
END_TEST

/* The network evaluator turns the head's h(points) back into points. */
START_TEST(net_eval_points)
{
    gz_config c;
    game *g = make("2048", 4, 4, &c);
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "dense");
    c.net.blocks = 1;
    c.net.channels = 8;
    c.net.head_channels = 4;
    c.net.value_hidden = 8;
    c.net.threads = 1;
    char err[512];
    nn_spec s;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    nn_params *p = nn_params_new(&s, err, sizeof err); /* weights 0: the output is the bias */
    ck_assert_ptr_nonnull(p);
    const nn_layout *L = &p->layout;
    nn_tensor_ptr(L, p->data, L->val_fc2_b)[0] = (float)nn_score_to_value(1234.0);
    net_eval_opts o;
    ck_assert_int_eq(net_eval_opts_from_config(&o, &c, err, sizeof err), 0);
    o.cache_entries = 0;
    o.max_batch = 4;
    o.first_batch = 1;
    evaluator *e = net_eval_new(g, p, &o, err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);
    rng r;
    rng_seed(&r, 2);
    game_state *st = game_state_new(g, &r);
    uint8_t legal[4];
    int nl = game_legal(g, st, legal);
    float pri[4], val;
    uint64_t key = game_hash(g, st);
    const game_state *ps[1] = {st};
    ck_assert_int_eq(evaluator_run(e, 1, ps, &key, legal, pri, &val, err, sizeof err), 0);
    ck_assert_float_eq_tol(val, 1234.0f, 0.05f);
    for (int a = 0; a < 4; a++)
        ck_assert_float_eq_tol(pri[a], legal[a] ? 1.0f / (float)nl : 0.0f, 1e-5f);
    free(st);
    evaluator_free(e);
    nn_params_free(p);
    game_free(g);
}
END_TEST

/* The evaluator under each of 2048's symmetries: the planes move by the board's map, the
 * legal mask and the policy by the moves' map (4 actions, not 16 points), so the
 * priors land on the legal moves and equal the net's output for the mapped move. */
START_TEST(net_eval_symmetries)
{
    gz_config c;
    game *g = make("2048", 4, 4, &c);
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "dense");
    c.net.blocks = 1;
    c.net.channels = 8;
    c.net.head_channels = 4;
    c.net.value_hidden = 8;
    c.net.threads = 1;
    char err[512];
    nn_spec s;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    nn_params *p = nn_params_new(&s, err, sizeof err); /* weights 0: the output is the bias */
    ck_assert_ptr_nonnull(p);
    const nn_layout *L = &p->layout;
    float *pb = nn_tensor_ptr(L, p->data, L->pol_out_b); /* logits 0, 1, 2, 3 by move */
    for (int a = 0; a < 4; a++)
        pb[a] = (float)a;
    /* a position where some move is illegal */
    rng r;
    rng_seed(&r, 5);
    game_state *st = game_state_new(g, &r);
    uint8_t legal[4];
    int nl = game_legal(g, st, legal), guard = 0;
    while (nl == 4 && guard++ < 10000) {
        int a = (int)rng_below(&r, 4);
        if (legal[a]) {
            game_play(g, st, a);
            game_resolve_chance(g, st, &r);
        }
        if (game_terminal(g, st))
            game_init(g, st, &r);
        nl = game_legal(g, st, legal);
    }
    ck_assert_int_lt(nl, 4);
    ck_assert_int_eq(g->nsym, 8);
    for (int k = 0; k < g->nsym; k++) {
        net_eval_opts o;
        ck_assert_int_eq(net_eval_opts_from_config(&o, &c, err, sizeof err), 0);
        o.cache_entries = 0;
        o.max_batch = 4;
        o.first_batch = 1;
        o.symmetry = k;
        evaluator *e = net_eval_new(g, p, &o, err, sizeof err);
        ck_assert_msg(e != NULL, "%s", err);
        float pri[4], val, want[4], sum = 0;
        uint64_t key = game_hash(g, st);
        const game_state *ps[1] = {st};
        ck_assert_int_eq(evaluator_run(e, 1, ps, &key, legal, pri, &val, err, sizeof err), 0);
        for (int a = 0; a < 4; a++) {
            want[a] = legal[a] ? expf((float)sym_map_action(g, g->sym[k], a)) : 0.0f;
            sum += want[a];
        }
        for (int a = 0; a < 4; a++)
            ck_assert_msg(fabsf(pri[a] - want[a] / sum) < 1e-5f, "symmetry %d move %d: %g, want %g", k,
                          a, (double)pri[a], (double)(want[a] / sum));
        evaluator_free(e);
    }
    free(st);
    nn_params_free(p);
    game_free(g);
}
END_TEST

START_TEST(samples_with_points)
{
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/s.h5", dir);
    sp_writer *w = sp_writer_open(path, g, "{}", NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    float planes[18 * 9] = {0}, pi[4] = {0.25f, 0.25f, 0.5f, 0.0f};
    uint8_t legal[4] = {1, 1, 1, 0};
    float zs[3] = {0.0f, 123.5f, 40000.0f};
    for (int i = 0; i < 3; i++) {
        planes[17 * 9 + i] = 1.0f;
        ck_assert_msg(sp_writer_append(w, planes, pi, legal, &zs[i], 0, i, err, sizeof err) == 0, "%s", err);
    }
    float bad = 2e9f;
    ck_assert_int_eq(sp_writer_append(w, planes, pi, legal, &bad, 0, 3, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "points"));
    bad = NAN;
    ck_assert_int_eq(sp_writer_append(w, planes, pi, legal, &bad, 0, 3, err, sizeof err), -1);
    ck_assert_int_eq(sp_writer_close(w, err, sizeof err), 0);
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_float_eq(f->z[i], zs[i]);
        ck_assert_int_eq(f->ply[i], i);
    }
    ck_assert_str_eq(f->game, "2048");
    sp_file_free(f);
    /* the dataset serves h(z), and maps 2048's moves under the symmetries */
    dataset *d = dataset_new(g, 0.0, err, sizeof err);
    ck_assert_int_eq(dataset_add_path(d, path, err, sizeof err), 0);
    ck_assert_int_eq(dataset_train_count(d), 3);
    float x[18 * 9], px[4], z;
    uint8_t lx[4];
    for (int i = 0; i < 3; i++) {
        dataset_get(d, i, SYM_ID, x, px, lx, &z, NULL, NULL, NULL);
        ck_assert_double_eq_tol(z, nn_score_to_value(zs[i]), 1e-3);
    }
    for (int e = 0; e < g->nsym; e++) {
        sym_id sy = g->sym[e];
        dataset_get(d, 1, sy, x, px, lx, &z, NULL, NULL, NULL);
        for (int a = 0; a < 4; a++) {
            int b = sym_map_action(g, sy, a);
            ck_assert_float_eq(px[b], pi[a]);
            ck_assert_int_eq(lx[b], legal[a]);
        }
        /* the one marked cell of the ones plane moved with the board */
        int r2, c2;
        sym_map_point(sy, 3, 3, 0, 1, &r2, &c2);
        ck_assert_float_eq(x[17 * 9 + r2 * 3 + c2], 1.0f);
    }
    dataset_free(d);
    /* a file of points read as a game of outcomes is refused by name */
    gz_config m;
    game *gm = make("mnk", 3, 3, &m);
    sp_expect em = sp_expect_game(gm);
    ck_assert_ptr_null(sp_file_read(path, &em, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, path));
    game_free(gm);
    game_free(g);
}
END_TEST

START_TEST(adapt_3x3_to_4x4)
{
    gz_config c3, c4;
    game *g3 = make("2048", 3, 3, &c3), *g4 = make("2048", 4, 4, &c4);
    char err[512], report[512];
    nn_spec s3, s4;
    snprintf(c3.net.policy_head, sizeof c3.net.policy_head, "dense");
    c3.net.blocks = 1;
    c3.net.channels = 8;
    c4.net = c3.net;
    ck_assert_int_eq(nn_spec_from_config(&s3, &c3.net, g3, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_from_config(&s4, &c4.net, g4, err, sizeof err), 0);
    nn_params *p3 = nn_params_new(&s3, err, sizeof err);
    nn_params_init_he(p3, 5);
    nn_params *p4 = nn_params_adapt(p3, &s4, 6, report, sizeof report, err, sizeof err);
    ck_assert_msg(p4 != NULL, "%s", err);
    ck_assert_ptr_nonnull(strstr(report, "policy.fc.weight"));
    const nn_layout *L3 = &p3->layout, *L4 = &p4->layout;
    int fresh = 0;
    for (int i = 0; i < L4->ntensors; i++) {
        int j = nn_layout_find(L3, L4->t[i].name);
        ck_assert_int_ge(j, 0);
        bool same = memcmp(nn_tensor_cptr(L3, p3->data, j), nn_tensor_cptr(L4, p4->data, i),
                           sizeof(float) * L4->t[i].size) == 0 && L3->t[j].size == L4->t[i].size;
        if (!same) {
            fresh++;
            ck_assert_str_eq(L4->t[i].name, "policy.fc.weight");
        }
    }
    ck_assert_int_eq(fresh, 1);
    ck_assert(nn_spec_check_game(&p4->layout.spec, g4, err, sizeof err) == 0);
    nn_params_free(p4);
    /* another architecture is refused naming the field */
    c4.net.channels = 16;
    ck_assert_int_eq(nn_spec_from_config(&s4, &c4.net, g4, err, sizeof err), 0);
    ck_assert_ptr_null(nn_params_adapt(p3, &s4, 6, report, sizeof report, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "channels"));
    nn_params_free(p3);
    game_free(g3);
    game_free(g4);
}
END_TEST

/* net.policy_head = action_value: 2048's spec (the dense head's tensors, the score value
 * head), its JSON (older specs without it are unchanged), the refusal by key for a game
 * of outcomes, and adapt 3x3 -> 4x4 (the FC afresh; a dense model refused by name). */
START_TEST(action_value_spec_refusal_adapt)
{
    gz_config c, m, c4;
    game *g = make("2048", 3, 3, &c);
    game *gm = make("mnk", 3, 3, &m);
    game *g4 = make("2048", 4, 4, &c4);
    char err[512], rep[512];
    nn_spec s, s4, sd;
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "action_value");
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.policy, NN_POLICY_ACTION_VALUE);
    ck_assert_int_eq(s.value, NN_VALUE_SCORE);
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"policy_head\":\"action_value\""));
    nn_spec back;
    ck_assert_msg(nn_spec_from_json(&back, j, err, sizeof err) == 0, "%s", err);
    ck_assert(memcmp(&back, &s, sizeof s) == 0);
    free(j);
    ck_assert_msg(nn_spec_check_game(&s, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(nn_spec_check_game(&s, g4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "action_value policy head"), "%s", err);
    /* a game without a score: refused naming the key */
    snprintf(m.net.policy_head, sizeof m.net.policy_head, "action_value");
    ck_assert_int_eq(nn_spec_from_config(&sd, &m.net, gm, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.policy_head") && strstr(err, "action_value") &&
                      strstr(err, "game mnk"), "%s", err);
    /* the same tensors as the dense head; adapt keeps all but the board-sized FC */
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    nn_params_init_he(p, 5);
    ck_assert_int_ge(nn_layout_find(&p->layout, "policy.fc.weight"), 0);
    snprintf(c4.net.policy_head, sizeof c4.net.policy_head, "action_value");
    ck_assert_msg(nn_spec_from_config(&s4, &c4.net, g4, err, sizeof err) == 0, "%s", err);
    nn_params *p4 = nn_params_adapt(p, &s4, 6, rep, sizeof rep, err, sizeof err);
    ck_assert_msg(p4 != NULL, "%s", err);
    ck_assert_msg(strstr(rep, "policy.fc.weight"), "%s", rep);
    nn_params_free(p4);
    snprintf(c4.net.policy_head, sizeof c4.net.policy_head, "dense");
    ck_assert_int_eq(nn_spec_from_config(&sd, &c4.net, g4, err, sizeof err), 0);
    ck_assert_ptr_null(nn_params_adapt(p, &sd, 6, rep, sizeof rep, err, sizeof err));
    ck_assert_msg(strstr(err, "policy_head"), "%s", err);
    nn_params_free(p);
    game_free(g);
    game_free(gm);
    game_free(g4);
}
END_TEST

/* The dataset serves the qa targets as h(points), mapped with 2048's moves under every
 * symmetry like pi, NaN kept where there is none; a sample written without targets (as
 * in a version 4 file) serves all NaN. */
START_TEST(action_value_dataset_symmetries)
{
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/qa.h5", dir);
    sp_writer *w = sp_writer_open(path, g, "{}", NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    float planes[18 * 9] = {0}, pi[4] = {0.5f, 0.25f, 0.25f, 0.0f}, z = 300;
    uint8_t legal[4] = {1, 1, 1, 0};
    float qa[4] = {250.0f, NAN, 3000.5f, NAN};
    planes[17 * 9 + 1] = 1.0f;
    ck_assert_msg(sp_writer_append_full(w, planes, pi, legal, &z, NULL, 1, NULL, qa, 0, 0, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_msg(sp_writer_append(w, planes, pi, legal, &z, 0, 1, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sp_writer_close(w, err, sizeof err), 0);
    dataset *d = dataset_new(g, 0.0, err, sizeof err);
    ck_assert_int_eq(dataset_add_path(d, path, err, sizeof err), 0);
    float x[18 * 9], px[4], zz, qx[4];
    uint8_t lx[4];
    for (int e = 0; e < g->nsym; e++) {
        sym_id sy = g->sym[e];
        dataset_get(d, 0, sy, x, px, lx, &zz, NULL, NULL, qx);
        for (int a = 0; a < 4; a++) {
            int b = sym_map_action(g, sy, a);
            ck_assert_float_eq(px[b], pi[a]);
            if (isnan(qa[a]))
                ck_assert_msg(isnan(qx[b]), "sym %d move %d: %g", e, a, (double)qx[b]);
            else
                ck_assert_double_eq_tol(qx[b], nn_score_to_value(qa[a]), 1e-4);
        }
        dataset_get(d, 1, sy, x, px, lx, &zz, NULL, NULL, qx);
        for (int a = 0; a < 4; a++)
            ck_assert(isnan(qx[a]));
    }
    dataset_free(d);
    game_free(g);
}
END_TEST

static evaluator *random_factory(void *ctx, int worker, int workers, char *err, size_t errlen)
{
    (void)worker, (void)workers, (void)err, (void)errlen;
    return eval_random_new(ctx);
}

/* Self-play's value targets of a scored game: the points to the end (value_steps 0),
 * or n-step returns. With one simulation a move and value-0 leaves the search's root
 * value is 0, so the 1-step target is the move's own points: the targets of a game add
 * up to its first position's points to the end. */
START_TEST(selfplay_value_targets)
{
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    char path[2][512], err[512];
    sp_file *f[2];
    for (int k = 0; k < 2; k++) {
        sp_opts o;
        sp_opts_from_config(&o, &c);
        o.games = 4;
        o.parallel_games = 2;
        o.threads = 1;
        o.search.simulations = 1;
        o.full_fraction = 1;
        o.seed = 77;
        o.value_steps = k; /* 0: to the end; 1: one move's points + the root value */
        snprintf(path[k], sizeof path[k], "%s/v%d.h5", dir, k);
        sp_stats st;
        ck_assert_msg(sp_run(g, &o, random_factory, g, path[k], &st, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(st.games, 4);
        f[k] = sp_file_read(path[k], NULL, err, sizeof err);
        ck_assert_msg(f[k] != NULL, "%s", err);
    }
    ck_assert_int_eq(f[0]->n, f[1]->n); /* the same games: value_steps does not change play */
    for (int gi = 0; gi < 4; gi++) {
        double sum = 0, first = -1;
        int moves = 0;
        for (int64_t i = 0; i < f[1]->n; i++) {
            if (f[1]->gameix[i] != gi)
                continue;
            ck_assert_int_eq(f[0]->gameix[i], gi);
            ck_assert(f[1]->z[i] >= 0);
            sum += f[1]->z[i];
            if (f[0]->ply[i] == 0)
                first = f[0]->z[i];
            moves++;
        }
        ck_assert_int_gt(moves, 0);
        ck_assert_double_eq_tol(sum, first, 1e-3);
    }
    sp_file_free(f[0]);
    sp_file_free(f[1]);
    game_free(g);
}
END_TEST

/* The binary with args; its stderr (malloc'd) in *errout, its stdout dropped. */
static int run_quiet(const char *args, char **errout)
{
    char *out;
    int rc = run_bin(args, NULL, &out, errout);
    free(out);
    return rc;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s missing", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = calloc((size_t)n + 1, 1);
    ck_assert(fread(t, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return t;
}

#define TINY "--set selfplay.games=2 --set arena.games=3 --set selfplay.bootstrap_simulations=24 " \
             "--set selfplay.bootstrap_export=4 --set selfplay.threads=1 --set net.threads=1 "       \
             "--set train.reuse=0 --set train.steps=4 --set mcts.simulations=8 "                     \
             "--set arena.simulations=8 --set net.blocks=1 --set net.channels=8 "                     \
             "--set 'arena.baselines=[\"random\"]' --set selfplay.parallel_games=2"

START_TEST(runs_3x3_then_4x4)
{
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    char args[4096], path[512], *err;
    /* the 3x3 run: bootstrap from the search trees, one-player arena, score table */
    snprintf(args, sizeof args, "run -c %s/configs/2048-3x3.json -o %s/r3 --generations 2 " TINY,
             src, dir);
    int rc = run_quiet(args, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_ptr_nonnull(strstr(err, "mean score"));
    free(err);
    snprintf(path, sizeof path, "%s/r3/ratings.csv", dir);
    char *csv = slurp(path);
    ck_assert_msg(!strncmp(csv, "name,mean,lo,hi,games,median,sd,max_tile", 40), "%s", csv);
    ck_assert_ptr_nonnull(strstr(csv, "\ngen_0001,"));
    ck_assert_ptr_nonnull(strstr(csv, "\ngen_0002,"));
    ck_assert_ptr_nonnull(strstr(csv, "\ngen_0000,"));
    ck_assert_ptr_nonnull(strstr(csv, "\nrandom,"));
    free(csv);
    /* the bootstrap's samples: tree nodes valued by the best points reached after them */
    snprintf(path, sizeof path, "%s/r3/data/gen_0001.h5", dir);
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    sp_expect ex = sp_expect_game(g);
    char e2[512];
    sp_file *f = sp_file_read(path, &ex, e2, sizeof e2);
    ck_assert_msg(f != NULL, "%s", e2);
    ck_assert_str_eq(f->meta.model, "rollout");
    ck_assert_int_gt(f->n, 2);
    int above = 0;
    for (int64_t i = 0; i < f->n; i++) {
        ck_assert(f->z[i] >= 0);
        above += f->z[i] > 0;
    }
    ck_assert_int_gt(above, 0);
    sp_file_free(f);
    game_free(g);
    /* promotion events compare mean scores */
    snprintf(path, sizeof path, "%s/r3/metrics.jsonl", dir);
    char *metrics = slurp(path);
    ck_assert_ptr_nonnull(strstr(metrics, "\"event\":\"promote\""));
    ck_assert_ptr_nonnull(strstr(metrics, "\"best_mean\""));
    ck_assert_ptr_nonnull(strstr(metrics, "\"event\":\"scores\""));
    free(metrics);
    /* the curriculum: a 4x4 run from the 3x3 model */
    snprintf(args, sizeof args, "run -c %s/configs/2048-4x4.json -o %s/r4 --generations 1 --from %s/r3/models/gen_0002.h5 " TINY,
             src, dir, dir);
    rc = run_quiet(args, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(err, "policy.fc.weight initialised afresh"), "%s", err);
    free(err);
    snprintf(path, sizeof path, "%s/r4/models/gen_0000.h5", dir);
    nn_ckpt_meta meta;
    gz_config c4;
    game *g4 = make("2048", 4, 4, &c4);
    nn_params *p = nn_ckpt_load(path, g4, &meta, e2, sizeof e2);
    ck_assert_msg(p != NULL, "%s", e2);
    ck_assert_ptr_nonnull(strstr(meta.parent, "r3/models/gen_0002.h5"));
    nn_params_free(p);
    game_free(g4);
    snprintf(path, sizeof path, "%s/r4/data/gen_0001.h5", dir);
    gz_config c5;
    game *g5 = make("2048", 4, 4, &c5);
    sp_expect e5 = sp_expect_game(g5);
    f = sp_file_read(path, &e5, e2, sizeof e2);
    ck_assert_msg(f != NULL, "%s", e2);
    ck_assert_ptr_nonnull(strstr(f->meta.model, "gen_0000")); /* the model, not rollouts */
    sp_file_free(f);
    game_free(g5);
    /* a 2048 model for a Gomoku config: refused naming the file */
    snprintf(args, sizeof args, "arena --set game.rows=9 --set game.cols=9 --set game.k=5 "
             "model:%s/r3/models/gen_0002.h5 random --games 1", dir);
    rc = run_quiet(args, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "gen_0002.h5") && strstr(err, "score"), "%s", err);
    free(err);
}
END_TEST

/* Checks a 2048 sample file's action-value targets: NaN on illegal moves; a finite
 * target on every move the search visited (pi > 0); with best = 1 (the tree export)
 * each target at most the node's z, the best points reached through it; returns the
 * number of finite targets. */
static int check_qa_file(const char *path, int best)
{
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    sp_expect ex = sp_expect_game(g);
    char err[512];
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, 5);
    ck_assert_ptr_nonnull(f->qa);
    int finite = 0;
    for (int64_t i = 0; i < f->n; i++)
        for (int a = 0; a < 4; a++) {
            float q = f->qa[i * 4 + a];
            if (!f->legal[i * 4 + a])
                ck_assert(isnan(q));
            if (f->pi[i * 4 + a] > 0 && f->weight[i] > 0)
                ck_assert_msg(!isnan(q), "%s: sample %lld move %d visited without a target", path,
                              (long long)i, a);
            if (isnan(q))
                continue;
            finite++;
            ck_assert(q >= 0);
            if (best)
                ck_assert_msg(q <= f->z[i] + 1e-3f, "%s: sample %lld move %d: %g above the best %g",
                              path, (long long)i, a, (double)q, (double)f->z[i]);
        }
    sp_file_free(f);
    game_free(g);
    return finite;
}

/* A tiny 3x3 run with the action-value head end to end: the rollout bootstrap writes the
 * tree's best points after each move (qa <= the node's best, a target on every visited
 * move), generation 2's self-play the search's Q of each visited move, the trainer
 * reports the head's loss, and the models carry the head. */
START_TEST(action_value_tiny_run)
{
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    char args[4096], path[512], *err;
    snprintf(args, sizeof args, "run -c %s/configs/2048-3x3.json -o %s/rav --generations 2 " TINY
             " --set net.policy_head=action_value", src, dir);
    int rc = run_quiet(args, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    free(err);
    snprintf(path, sizeof path, "%s/rav/data/gen_0001.h5", dir);
    ck_assert_int_gt(check_qa_file(path, 1), 10);
    snprintf(path, sizeof path, "%s/rav/data/gen_0002.h5", dir);
    ck_assert_int_gt(check_qa_file(path, 0), 2);
    snprintf(path, sizeof path, "%s/rav/metrics.jsonl", dir);
    char *metrics = slurp(path);
    ck_assert_msg(strstr(metrics, "\"action_value\":"), "%s", metrics);
    free(metrics);
    gz_config c;
    game *g = make("2048", 3, 3, &c);
    snprintf(path, sizeof path, "%s/rav/models/gen_0002.h5", dir);
    nn_ckpt_meta meta;
    char e2[512];
    nn_params *p = nn_ckpt_load(path, g, &meta, e2, sizeof e2);
    ck_assert_msg(p != NULL, "%s", e2);
    ck_assert_int_eq(p->layout.spec.policy, NN_POLICY_ACTION_VALUE);
    nn_params_free(p);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("g2048_train");
    TCase *tc = tcase_create("net");
    tcase_set_timeout(tc, 1200);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, transform_and_inverse);
    tcase_add_test(tc, score_head_spec_and_checks);
    tcase_add_test(tc, net_eval_points);
    tcase_add_test(tc, net_eval_symmetries);
    tcase_add_test(tc, samples_with_points);
    tcase_add_test(tc, adapt_3x3_to_4x4);
    tcase_add_test(tc, action_value_spec_refusal_adapt);
    tcase_add_test(tc, action_value_dataset_symmetries);
    tcase_add_test(tc, selfplay_value_targets);
    tcase_add_test(tc, runs_3x3_then_4x4);
    tcase_add_test(tc, action_value_tiny_run);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
