/* The n-tuple network (nn/ntuple.c) and its player (model-expectimax in
 * nn/net_player.c over engine/players/expectimax.c's search): values and updates, the
 * 8 symmetries, the stages, the file round trip, its refusals and `gridzero info`, and the expectimax player with a
 * network on fixed positions against values worked out by hand. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "engine/player.h"
#include "engine/rng.h"
#include "cli_util.h"
#include "model_util.h"
#include "nn/net_player.h"
#include "nn/ntuple.h"

/* A fresh temporary directory in buf (>= 32 bytes). */
static void tmpdir(char *buf)
{
    strcpy(buf, "/tmp/gz_test_ntuple_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

static game *game4(gz_config *c)
{
    char err[256];
    ck_assert_msg(cfg_parse(c, "{\"game\": {\"name\": \"2048\", \"rows\": 4, \"cols\": 4}}", "t", err,
                            sizeof err) == 0, "%s", err);
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* cells under symmetry s: transpose (s & 4), then mirror columns (s & 1), rows (s & 2) */
static void sym_board(int s, const uint8_t *in, uint8_t *out)
{
    for (int i = 0; i < 16; i++) {
        int r = i / 4, c = i % 4, t;
        if (s & 4)
            t = r, r = c, c = t;
        if (s & 1)
            c = 3 - c;
        if (s & 2)
            r = 3 - r;
        out[r * 4 + c] = in[i];
    }
}

START_TEST(values_and_updates)
{
    char err[256];
    ntuple *n = ntuple_new(err, sizeof err);
    ck_assert_msg(n != NULL, "%s", err);
    uint8_t empty[16] = {0};
    ck_assert(ntuple_value(n, empty) == 0);
    /* the empty board: each tuple's 8 symmetric copies share index 0, so one update of d
     * adds 8d to 4 weights and the value is 4 x 8 x 8d */
    ntuple_update(n, empty, 0.5f);
    ck_assert_float_eq(ntuple_value(n, empty), 4 * 8 * 8 * 0.5f);
    ck_assert_float_eq(n->w[0][0][0], 4.0f);
    ntuple_free(n);
    /* a board with every tile different: 32 distinct features, value 32d */
    n = ntuple_new(err, sizeof err);
    uint8_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (uint8_t)(i + 1); /* 2 .. 65536: the 2^16 tile counts as 2^15 */
    ntuple_update(n, b, 0.25f);
    ck_assert_float_eq_tol(ntuple_value(n, b), 32 * 0.25f, 1e-6);
    /* tiles above 2^15 share the 2^15 index */
    b[15] = 17;
    ck_assert_float_eq_tol(ntuple_value(n, b), 32 * 0.25f, 1e-6);
    ntuple_free(n);
}
END_TEST

START_TEST(symmetric_values)
{
    char err[256];
    ntuple *n = ntuple_new(err, sizeof err);
    ck_assert_msg(n != NULL, "%s", err);
    rng r;
    rng_seed(&r, 5);
    uint8_t b[16], s[16];
    for (int k = 0; k < 200; k++) {
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)rng_below(&r, 8);
        ntuple_update(n, b, (float)rng_uniform(&r) - 0.5f);
    }
    for (int k = 0; k < 50; k++) {
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)rng_below(&r, 8);
        float v = ntuple_value(n, b);
        for (int y = 1; y < 8; y++) {
            sym_board(y, b, s);
            ck_assert_float_eq_tol(ntuple_value(n, s), v, 1e-4);
        }
    }
    ntuple_free(n);
}
END_TEST

START_TEST(file_round_trip_and_refusals)
{
    char dir[64];
    tmpdir(dir);
    char err[512], path[300], bad[300];
    ntuple *n = ntuple_new(err, sizeof err);
    rng r;
    rng_seed(&r, 9);
    uint8_t b[16];
    for (int k = 0; k < 300; k++) {
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)rng_below(&r, 12);
        ntuple_update(n, b, (float)rng_uniform(&r));
    }
    n->games = 1234;
    n->generation = 7;
    snprintf(path, sizeof path, "%s/nt.h5", dir);
    ck_assert_msg(ntuple_save(n, path, err, sizeof err) == 0, "%s", err);
    ck_assert(ntuple_is_file(path));
    ntuple *m = ntuple_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(m->games, 1234);
    ck_assert_int_eq(m->generation, 7);
    for (int t = 0; t < NT_TUPLES; t++)
        ck_assert(memcmp(m->w[0][t], n->w[0][t], NT_ENTRIES * sizeof(float)) == 0);
    ntuple_free(m);
    /* gridzero info describes it */
    char args[400], *out, *eout;
    snprintf(args, sizeof args, "info %s", path);
    ck_assert_int_eq(run_bin(args, NULL, &out, &eout), 0);
    ck_assert_msg(strstr(out, "gridzero n-tuple network") && strstr(out, "1234 games (generation 7)"), "%s", out);
    free(out);
    free(eout);
    /* missing, not HDF5, a CNN checkpoint: each named */
    snprintf(bad, sizeof bad, "%s/none.h5", dir);
    ck_assert_ptr_null(ntuple_load(bad, err, sizeof err));
    ck_assert_msg(strstr(err, bad) && strstr(err, "cannot read"), "%s", err);
    ck_assert(!ntuple_is_file(bad));
    snprintf(bad, sizeof bad, "%s/text.h5", dir);
    FILE *f = fopen(bad, "w");
    fputs("not hdf5\n", f);
    fclose(f);
    ck_assert_ptr_null(ntuple_load(bad, err, sizeof err));
    ck_assert_msg(strstr(err, "not an HDF5 file"), "%s", err);
    gz_config c;
    game *g = game4(&c);
    snprintf(bad, sizeof bad, "%s/cnn.h5", dir);
    gz_config cn = c;
    snprintf(cn.net.policy_head, sizeof cn.net.policy_head, "dense");
    snprintf(cn.net.value_head, sizeof cn.net.value_head, "score");
    model_write_random(bad, &cn, 1);
    ck_assert(!ntuple_is_file(bad));
    ck_assert_ptr_null(ntuple_load(bad, err, sizeof err));
    ck_assert_msg(strstr(err, "format is \"gridzero-model\""), "%s", err);
    /* a CNN file given to model-expectimax, an n-tuple file given to model: */
    char spec[400];
    const struct { const char *fmt, *file, *want; } refused[] = {
        {"model-expectimax:%s:2", bad, "gridzero-model"},
        {"model:%s", path, "an n-tuple network: play it with model-expectimax:"},
        {"model-expectimax:%s:9", path, "1..8"},
        {"model-expectimax:%s:8:3", path, "1..7 with E"},
        {"model-expectimax:%s:3:17", path, "empty cells (1..16)"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        snprintf(spec, sizeof spec, refused[k].fmt, refused[k].file);
        ck_assert_ptr_null(player_new(spec, g, &c, net_player_ext(), err, sizeof err));
        ck_assert_msg(strstr(err, refused[k].want), "%s: %s", spec, err);
    }
    /* a non-finite weight is refused by name */
    n->w[0][2][77] = NAN;
    snprintf(bad, sizeof bad, "%s/nan.h5", dir);
    ck_assert_msg(ntuple_save(n, bad, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_null(ntuple_load(bad, err, sizeof err));
    ck_assert_msg(strstr(err, "/w2[77] is not finite"), "%s", err);
    /* on another game */
    gz_config c3;
    char e2[256];
    ck_assert(cfg_parse(&c3, "{\"game\": {\"name\": \"2048\", \"rows\": 3, \"cols\": 3}}", "t", e2, sizeof e2) == 0);
    game *g3 = game_new(&c3.game, e2, sizeof e2);
    snprintf(spec, sizeof spec, "model-expectimax:%s", path);
    ck_assert_ptr_null(player_new(spec, g3, &c3, net_player_ext(), err, sizeof err));
    ck_assert_msg(strstr(err, "4x4"), "%s", err);
    game_free(g3);
    game_free(g);
    ntuple_free(n);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Stages (net.ntuple_stages): which stage a board is in, the refusals of thresholds, a
 * new stage reading through to the one below until its first update copies, against a
 * one-stage network given the same updates; the version 2 file round trip and info. */
START_TEST(stages_read_through_and_copy)
{
    char err[512];
    ntuple *n = ntuple_new(err, sizeof err), *m = ntuple_new(err, sizeof err);
    ck_assert_msg(n && m, "%s", err);
    int bad1[] = {300}, bad2[] = {1024, 256}, bad3[] = {8, 16, 32, 64}, two[] = {256, 1024}, one[] = {512},
        big[] = {2147483647}, over[] = {65536};
    ck_assert_int_eq(ntuple_set_stages(n, 1, big, err, sizeof err), -1);
    ck_assert_int_eq(ntuple_set_stages(n, 1, over, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "65536"), "%s", err);
    ck_assert_int_eq(ntuple_set_stages(n, 1, bad1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "powers of two") && strstr(err, "300"), "%s", err);
    ck_assert_int_eq(ntuple_set_stages(n, 2, bad2, err, sizeof err), -1);
    ck_assert_int_eq(ntuple_set_stages(n, 4, bad3, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "at most 3"), "%s", err);
    ck_assert_int_eq(n->stages, 1);
    ck_assert_msg(ntuple_set_stages(n, 2, two, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(n->stages, 3);
    ck_assert_msg(ntuple_set_stages(n, 2, two, err, sizeof err) == 0, "%s", err); /* the same: no change */
    ck_assert_int_eq(ntuple_set_stages(n, 1, one, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "(256,1024) are not the first"), "%s", err);
    ck_assert_int_eq(n->stages, 3);
    /* A: largest tile 128 (stage 0); B: A with a 256 (stage 1); C: A with a 2048 (stage 2) */
    uint8_t a[16] = {1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 0, 0, 1, 0, 0, 0}, b[16], c[16];
    memcpy(b, a, 16), memcpy(c, a, 16);
    b[10] = 8, c[10] = 11;
    ck_assert_int_eq(ntuple_stage(n, a), 0);
    ck_assert_int_eq(ntuple_stage(n, b), 1);
    ck_assert_int_eq(ntuple_stage(n, c), 2);
    ck_assert_int_eq(ntuple_stage(m, c), 0);
    ntuple_update(n, a, 0.5f), ntuple_update(m, a, 0.5f);
    /* nothing written above stage 0: B and C read A's weights where their features are A's */
    ck_assert(ntuple_value(n, b) == ntuple_value(m, b) && ntuple_value(n, b) > 0);
    ck_assert(ntuple_value(n, c) == ntuple_value(m, c));
    float a_before = ntuple_value(n, a);
    ntuple_update(n, b, 0.25f), ntuple_update(m, b, 0.25f);
    /* B's update went to stage 1 (copied from stage 0, then added): A is as it was, B and
     * C (stage 2 reads through to stage 1) are as in the network that learned both */
    ck_assert(ntuple_value(n, a) == a_before);
    ck_assert(ntuple_value(m, a) != a_before);
    ck_assert(ntuple_value(n, b) == ntuple_value(m, b));
    ck_assert(ntuple_value(n, c) == ntuple_value(m, c));
    /* a later update of A moves stage 0 only: B has weights of its own in stage 1 */
    float b_before = ntuple_value(n, b);
    ntuple_update(n, a, 1.0f);
    ck_assert(ntuple_value(n, b) == b_before);
    ck_assert(ntuple_value(n, a) > a_before);
    /* the file round trip: version 2 with the stages, the values and the written bits */
    char dir[64], path[300];
    tmpdir(dir);
    snprintf(path, sizeof path, "%s/st.h5", dir);
    n->games = 99;
    ck_assert_msg(ntuple_save(n, path, err, sizeof err) == 0, "%s", err);
    ntuple *l = ntuple_load(path, err, sizeof err);
    ck_assert_msg(l != NULL, "%s", err);
    ck_assert_int_eq(l->stages, 3);
    ck_assert_int_eq(l->threshold[1], 8);
    ck_assert_int_eq(l->threshold[2], 10);
    ck_assert(ntuple_value(l, a) == ntuple_value(n, a));
    ck_assert(ntuple_value(l, b) == ntuple_value(n, b));
    ck_assert(ntuple_value(l, c) == ntuple_value(n, c));
    for (int s = 1; s < 3; s++)
        for (int t = 0; t < NT_TUPLES; t++)
            ck_assert(memcmp(l->used[s][t], n->used[s][t], NT_ENTRIES / 8) == 0);
    ntuple_free(l);
    char args[400], *out, *eout;
    snprintf(args, sizeof args, "info %s", path);
    ck_assert_int_eq(run_bin(args, NULL, &out, &eout), 0);
    ck_assert_msg(strstr(out, "version 2") && strstr(out, "stage 1     from the 256 tile") &&
                  strstr(out, "stage 2     from the 1024 tile: 0 weights of its own"), "%s", out);
    free(out);
    free(eout);
    /* a stage table missing from the file is named */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(f >= 0);
    ck_assert(H5Ldelete(f, "s2used3", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    ck_assert_ptr_null(ntuple_load(path, err, sizeof err));
    ck_assert_msg(strstr(err, "/s2used3 missing"), "%s", err);
    ntuple_free(n);
    ntuple_free(m);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The player's move and value (points still to come) on cells. */
static int choose(const game *g, const gz_config *c, const char *spec, const uint8_t *cells, float *value)
{
    char err[512];
    player *p = player_new(spec, g, c, net_player_ext(), err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    uint8_t full[G2048_MAX_CELLS] = {0};
    memcpy(full, cells, 16);
    g2048_set(g, s, full, 0, 0);
    player_info info;
    player_info_clear(&info);
    int a = p->choose(p, s, NULL, &info, err, sizeof err);
    ck_assert_msg(a >= 0, "%s", err);
    ck_assert(info.has_value);
    *value = info.value[0];
    free(s);
    player_free(p);
    return a;
}

/* A zero network: values are the points of the moves searched. The board 2 2 . . over
 * an empty 4x4 (u d l r = 0 1 2 3):
 *   depth 1: left and right score 4 (the 2s merge), down 0, up is not a move: left
 *            (the lower action of the tie), value 4;
 *   depth 2: after left the 4 sits in a corner; the next move scores 8 exactly when a 4
 *            spawns (p 0.1) on one of the 6 cells of its row or column (of 15 empty):
 *            4 + 0.1 x 6/15 x 8 = 4.32 (right the same); after down the 2 2 pair still
 *            merges whatever spawns: 0 + 4 = 4. So left, 4.32.
 * Then a network that values down's after-state: depth 1 takes down exactly when
 * V(after down) > 4 + V(after left). */
START_TEST(expectimax_with_network_by_hand)
{
    char dir[64];
    tmpdir(dir);
    char err[512], path[300], spec[400];
    gz_config c;
    game *g = game4(&c);
    ntuple *n = ntuple_new(err, sizeof err);
    snprintf(path, sizeof path, "%s/zero.h5", dir);
    ck_assert_msg(ntuple_save(n, path, err, sizeof err) == 0, "%s", err);
    uint8_t b[16] = {1, 1};
    float v;
    /* depth 1 (4) and 2 (4.32); one move deeper at <= E empty cells: the board has 14, so
     * E = 14 searches depth 2 and E = 13 stays at depth 1 */
    const struct {
        const char *depth;
        float want;
    } cases[] = {{"1", 4.0f}, {"2", 4.32f}, {"1:14", 4.32f}, {"1:13", 4.0f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(spec, sizeof spec, "model-expectimax:%s:%s", path, cases[i].depth);
        ck_assert_int_eq(choose(g, &c, spec, b, &v), G2048_LEFT);
        ck_assert_msg(fabsf(v - cases[i].want) < 1e-4f, "%s: value %g, want %g", spec, v,
                      cases[i].want);
    }
    /* value down's after-state (2 2 on the bottom row) */
    uint8_t down[16] = {0}, left[16] = {2};
    down[12] = down[13] = 1;
    ntuple_update(n, down, 1.0f);
    ntuple_update(n, left, -1.0f); /* the two share most features (empty cells) */
    float vd = ntuple_value(n, down), vl = ntuple_value(n, left);
    ck_assert_msg(vd > 4 + vl, "V(down) %g, V(left) %g", vd, vl);
    ck_assert_msg(ntuple_save(n, path, err, sizeof err) == 0, "%s", err);
    snprintf(spec, sizeof spec, "model-expectimax:%s:1", path);
    ck_assert_int_eq(choose(g, &c, spec, b, &v), G2048_DOWN);
    ck_assert_float_eq_tol(v, vd, 1e-4);
    ntuple_free(n);
    game_free(g);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ntuple");
    TCase *tc = tcase_create("ntuple");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, values_and_updates);
    tcase_add_test(tc, symmetric_values);
    tcase_add_test(tc, file_round_trip_and_refusals);
    tcase_add_test(tc, stages_read_through_and_copy);
    tcase_add_test(tc, expectimax_with_network_by_hand);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
