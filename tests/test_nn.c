/* The network's spec, parameter layout, kernel masks and HDF5 checkpoints. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/game.h"
#include "nn/params.h"
#include "nn/spec.h"

static nn_spec spec_make(game_lattice lat, int blocks, nn_policy_kind pol)
{
    nn_spec s = {
        .planes = 5, .rows = 7, .cols = 7, .lattice = lat, .players = 3, .actions = 49,
        .blocks = blocks, .channels = 8, .head_channels = 4, .value_hidden = 6,
        .policy = pol, .trunk = NN_TRUNK_RESIDUAL,
    };
    return s;
}

START_TEST(spec_from_config_and_json_round_trip)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    nn_spec s;
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.planes, g->planes);
    ck_assert_int_eq(s.rows, 15);
    ck_assert_int_eq(s.actions, 225);
    ck_assert_int_eq(s.blocks, 6);
    ck_assert_int_eq(s.channels, 64);
    ck_assert_int_eq(s.players, 2);
    char *j = nn_spec_to_json(&s);
    nn_spec t;
    ck_assert_msg(nn_spec_from_json(&t, j, err, sizeof err) == 0, "%s", err);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&s, g, err, sizeof err), 0);
    s.players = 3;
    ck_assert_int_eq(nn_spec_check_game(&s, g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "players") != NULL, "%s", err);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\": 2}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rows") != NULL, "%s", err);
    game_free(g);
}
END_TEST

START_TEST(layout_order_offsets_and_count)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, NN_POLICY_CONV);
    nn_layout L;
    nn_layout_init(&L, &s);
    ck_assert_str_eq(L.t[0].name, "stem.conv.weight");
    ck_assert_int_eq(L.t[0].shape[0], 8);
    ck_assert_int_eq(L.t[0].shape[1], 5);
    ck_assert_str_eq(L.t[L.block[1].conv2].name, "block01.conv2.weight");
    ck_assert_str_eq(L.t[L.block[0].bn1.var].name, "block00.bn1.var");
    ck_assert_int_eq(L.t[L.block[0].bn1.var].kind, NN_T_BN_VAR);
    ck_assert_str_eq(L.t[L.ntensors - 1].name, "value.fc2.bias");
    size_t off = 0;
    for (int i = 0; i < L.ntensors; i++) {
        ck_assert_uint_eq(L.t[i].offset, off);
        off += L.t[i].size;
    }
    ck_assert_uint_eq(off, L.count);
    size_t expect = 8 * 5 * 9 + 4 * 8 + 2 * 2 * (8 * 8 * 9 + 4 * 8) + (4 * 8 + 16 + 4 + 1) +
                    (4 * 8 + 16 + 6 * 4 + 6 + 3 * 6 + 3);
    ck_assert_uint_eq(L.count, expect);
    ck_assert_int_eq(nn_layout_find(&L, "policy.out.bias"), L.pol_out_b);
    ck_assert_int_eq(nn_layout_find(&L, "nope"), -1);
    s.policy = NN_POLICY_DENSE;
    nn_layout_init(&L, &s);
    ck_assert_str_eq(L.t[L.pol_out_w].name, "policy.fc.weight");
    ck_assert_int_eq(L.t[L.pol_out_w].shape[0], 49);
    ck_assert_int_eq(L.t[L.pol_out_w].shape[1], 4 * 49);
}
END_TEST

START_TEST(he_init_deterministic_and_masked)
{
    char err[128];
    nn_spec s = spec_make(GAME_LATTICE_HEX, 2, NN_POLICY_CONV);
    nn_params *a = nn_params_new(&s, err, sizeof err);
    nn_params *b = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    nn_params_init_he(a, 42);
    nn_params_init_he(b, 42);
    ck_assert_mem_eq(a->data, b->data, a->layout.count * sizeof(float));
    nn_params_init_he(b, 43);
    ck_assert(memcmp(a->data, b->data, a->layout.count * sizeof(float)) != 0);
    ck_assert_int_eq(nn_layout_check_mask(&a->layout, a->data), -1);
    const nn_layout *L = &a->layout;
    float *w = nn_tensor_ptr(L, a->data, L->block[1].conv1);
    ck_assert(w[0] == 0.0f && w[8] == 0.0f && w[4] != 0.0f);
    /* the weight spread follows He: var ~ 2 / fan_in with fan_in = 7 * C */
    double ss = 0;
    size_t n = L->t[L->block[1].conv1].size;
    for (size_t i = 0; i < n; i++)
        ss += (double)w[i] * w[i];
    double var = ss / (n * 7.0 / 9.0);
    ck_assert_msg(fabs(var - 2.0 / 56.0) < 0.3 * 2.0 / 56.0, "var %g", var);
    /* BN neutral */
    ck_assert_float_eq(nn_tensor_ptr(L, a->data, L->stem_bn.var)[3], 1.0f);
    ck_assert_float_eq(nn_tensor_ptr(L, a->data, L->stem_bn.mean)[3], 0.0f);
    /* garbage in a masked tap is found by name and removed by the mask */
    nn_tensor_ptr(L, a->data, L->block[0].conv2)[9 * 5 + 8] = 3.0f;
    int bad = nn_layout_check_mask(L, a->data);
    ck_assert_str_eq(L->t[bad].name, "block00.conv2.weight");
    net_apply_kernel_mask(L, a->data);
    ck_assert_int_eq(nn_layout_check_mask(L, a->data), -1);
    /* square: no mask */
    nn_spec sq = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    nn_params *c = nn_params_new(&sq, err, sizeof err);
    nn_params_init_he(c, 1);
    ck_assert(nn_tensor_ptr(&c->layout, c->data, c->layout.stem_conv)[0] != 0.0f);
    nn_params_free(a);
    nn_params_free(b);
    nn_params_free(c);
    nn_params_free(NULL);
}
END_TEST

START_TEST(bad_spec_rejected_by_name)
{
    char err[256];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    s.actions = 4;
    ck_assert_ptr_null(nn_params_new(&s, err, sizeof err));
    ck_assert_msg(strstr(err, "policy_head") != NULL, "%s", err);
    s = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    s.blocks = 41;
    ck_assert_ptr_null(nn_params_new(&s, err, sizeof err));
    ck_assert_msg(strstr(err, "blocks") != NULL, "%s", err);
}
END_TEST

static Suite *nn_suite(void)
{
    Suite *s = suite_create("nn");
    TCase *t = tcase_create("spec_params");
    tcase_add_test(t, spec_from_config_and_json_round_trip);
    tcase_add_test(t, layout_order_offsets_and_count);
    tcase_add_test(t, he_init_deterministic_and_masked);
    tcase_add_test(t, bad_spec_rejected_by_name);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(nn_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
