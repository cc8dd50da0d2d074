/* oneDNN inference against the reference forward (the oracle), the hex mask in
 * inference, and the network evaluator. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rng.h"
#include "nn/infer.h"
#include "nn/params.h"

static nn_spec spec_make(game_lattice lat, int players, int blocks, nn_policy_kind pol, int rows,
                         int cols)
{
    nn_spec s = {
        .planes = 5, .rows = rows, .cols = cols, .lattice = lat, .players = players,
        .actions = pol == NN_POLICY_CONV ? rows * cols : 17, .blocks = blocks, .channels = 16,
        .head_channels = 4, .value_hidden = 8, .policy = pol, .trunk = NN_TRUNK_RESIDUAL,
    };
    return s;
}

/* He weights, random BN statistics and affine parameters, non-zero biases. */
static nn_params *random_params(const nn_spec *s, uint64_t seed)
{
    char err[128];
    nn_params *p = nn_params_new(s, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    nn_params_init_he(p, seed);
    rng r;
    rng_seed(&r, seed ^ 0xabcdef);
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++) {
        float *x = nn_tensor_ptr(L, p->data, i);
        for (size_t j = 0; j < L->t[i].size; j++) {
            switch (L->t[i].kind) {
            case NN_T_BN_GAMMA: x[j] = (float)(0.5 + rng_uniform(&r)); break;
            case NN_T_BN_BETA: x[j] = (float)(0.2 * rng_normal(&r)); break;
            case NN_T_BN_MEAN: x[j] = (float)(0.3 * rng_normal(&r)); break;
            case NN_T_BN_VAR: x[j] = (float)(0.3 + 1.5 * rng_uniform(&r)); break;
            case NN_T_BIAS: x[j] = (float)(0.1 * rng_normal(&r)); break;
            default: break;
            }
        }
    }
    return p;
}

static void random_batch(rng *r, int n, int planes, int hw, int actions, float *in, uint8_t *legal)
{
    for (int i = 0; i < n * planes * hw; i++)
        in[i] = rng_below(r, 3) == 0 ? 1.0f : 0.0f;
    for (int i = 0; i < n * actions; i++)
        legal[i] = rng_below(r, 4) != 0;
    for (int b = 0; b < n; b++)
        legal[b * actions] = 1; /* at least one legal move */
}

/* Runs ref and oneDNN fp32 on a batch; returns the max abs difference. */
static double compare(const nn_params *p, int rows, int cols, int n, uint64_t seed)
{
    const nn_spec *s = &p->layout.spec;
    int hw = rows * cols, A = s->policy == NN_POLICY_CONV ? hw : s->actions;
    float *in = malloc(sizeof(float) * (size_t)(n * s->planes * hw));
    uint8_t *legal = malloc((size_t)(n * A));
    float *p1 = malloc(sizeof(float) * (size_t)(n * A)), *p2 = malloc(sizeof(float) * (size_t)(n * A));
    float v1[512 * 3], v2[512 * 3];
    rng r;
    rng_seed(&r, seed);
    random_batch(&r, n, s->planes, hw, A, in, legal);
    char err[256];
    ck_assert_msg(nn_ref_forward(p, rows, cols, n, in, legal, p1, v1, NULL, err, sizeof err) == 0,
                  "%s", err);
    nn_infer *ctx = nn_infer_new(p, rows, cols, NN_PREC_FP32, 0, err, sizeof err);
    ck_assert_msg(ctx != NULL, "%s", err);
    ck_assert_msg(nn_infer_run(ctx, n, in, legal, p2, v2, err, sizeof err) == 0, "%s", err);
    double md = 0;
    for (int i = 0; i < n * A; i++) {
        if (!legal[i])
            ck_assert_float_eq(p2[i], 0.0f);
        md = fmax(md, fabs((double)p1[i] - p2[i]));
    }
    for (int i = 0; i < n * s->players; i++)
        md = fmax(md, fabs((double)v1[i] - v2[i]));
    /* the same context again, through its own input buffer, gives the same answer */
    float *buf = nn_infer_input(ctx, n, err, sizeof err);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, in, sizeof(float) * (size_t)(n * s->planes * hw));
    float *p3 = malloc(sizeof(float) * (size_t)(n * A));
    ck_assert(nn_infer_run(ctx, n, buf, legal, p3, v1, err, sizeof err) == 0);
    ck_assert_mem_eq(p3, p2, sizeof(float) * (size_t)(n * A));
    nn_infer_free(ctx);
    free(in), free(legal), free(p1), free(p2), free(p3);
    return md;
}

static const int batches[3] = {1, 7, 64};

START_TEST(dnnl_matches_reference_square)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 2, NN_POLICY_CONV, 7, 7);
    nn_params *p = random_params(&s, 11);
    for (int b = 0; b < 3; b++) {
        double d1 = compare(p, 7, 7, batches[b], 100 + b);
        double d2 = compare(p, 9, 9, batches[b], 200 + b); /* another board, same weights */
        ck_assert_msg(d1 <= 1e-4 && d2 <= 1e-4, "batch %d: max abs diff %g / %g", batches[b], d1, d2);
    }
    nn_params_free(p);
}
END_TEST

START_TEST(dnnl_matches_reference_hex_3players)
{
    nn_spec s = spec_make(GAME_LATTICE_HEX, 3, 2, NN_POLICY_CONV, 8, 8);
    nn_params *p = random_params(&s, 12);
    for (int b = 0; b < 3; b++) {
        double d1 = compare(p, 8, 8, batches[b], 300 + b);
        double d2 = compare(p, 11, 11, batches[b], 400 + b);
        ck_assert_msg(d1 <= 1e-4 && d2 <= 1e-4, "batch %d: max abs diff %g / %g", batches[b], d1, d2);
    }
    nn_params_free(p);
}
END_TEST

START_TEST(dnnl_matches_reference_other_shapes)
{
    /* dense policy head, no blocks, plain trunk, a non-square board */
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_DENSE, 5, 6);
    nn_params *p = random_params(&s, 13);
    double d = compare(p, 5, 6, 7, 500);
    ck_assert_msg(d <= 1e-4, "dense: %g", d);
    char err[128];
    ck_assert_ptr_null(nn_infer_new(p, 6, 6, NN_PREC_FP32, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "dense") != NULL, "%s", err);
    nn_params_free(p);
    s = spec_make(GAME_LATTICE_SQUARE, 1, 0, NN_POLICY_CONV, 6, 6);
    p = random_params(&s, 14);
    d = compare(p, 6, 6, 7, 501);
    ck_assert_msg(d <= 1e-4, "blocks 0: %g", d);
    nn_params_free(p);
    s = spec_make(GAME_LATTICE_HEX, 3, 2, NN_POLICY_CONV, 6, 6);
    s.trunk = NN_TRUNK_PLAIN;
    p = random_params(&s, 15);
    d = compare(p, 6, 6, 7, 502);
    ck_assert_msg(d <= 1e-4, "plain trunk: %g", d);
    nn_params_free(p);
}
END_TEST

START_TEST(masked_taps_garbage_then_mask_is_identical)
{
    nn_spec s = spec_make(GAME_LATTICE_HEX, 3, 2, NN_POLICY_CONV, 7, 7);
    nn_params *p = random_params(&s, 21);
    nn_params *q = nn_params_clone(p);
    const nn_layout *L = &q->layout;
    for (int i = 0; i < L->ntensors; i++)
        if (L->t[i].kind == NN_T_CONV_WEIGHT && L->t[i].shape[2] == 3) {
            float *w = nn_tensor_ptr(L, q->data, i);
            for (size_t k = 0; k < L->t[i].size / 9; k++) {
                w[9 * k] = 5.0f + (float)k;
                w[9 * k + 8] = -3.0f;
            }
        }
    int n = 7, hw = 49, A = 49;
    float in[7 * 5 * 49], pa[7 * 49], pb[7 * 49], va[21], vb[21], ra[7 * 49], rb[7 * 49];
    uint8_t legal[7 * 49];
    rng r;
    rng_seed(&r, 5);
    random_batch(&r, n, 5, hw, A, in, legal);
    char err[256];
    nn_infer *ca = nn_infer_new(p, 7, 7, NN_PREC_FP32, 0, err, sizeof err);
    ck_assert(nn_infer_run(ca, n, in, legal, pa, va, err, sizeof err) == 0);
    /* garbage changes the output ... */
    nn_infer *cb = nn_infer_new(q, 7, 7, NN_PREC_FP32, 0, err, sizeof err);
    ck_assert(nn_infer_run(cb, n, in, legal, pb, vb, err, sizeof err) == 0);
    ck_assert(memcmp(pa, pb, sizeof pa) != 0);
    nn_infer_free(cb);
    /* ... and the mask makes it identical, in oneDNN and in the reference */
    net_apply_kernel_mask(L, q->data);
    cb = nn_infer_new(q, 7, 7, NN_PREC_FP32, 0, err, sizeof err);
    ck_assert(nn_infer_run(cb, n, in, legal, pb, vb, err, sizeof err) == 0);
    ck_assert_mem_eq(pa, pb, sizeof pa);
    ck_assert_mem_eq(va, vb, sizeof(float) * 21);
    ck_assert(nn_ref_forward(p, 7, 7, n, in, legal, ra, va, NULL, err, sizeof err) == 0);
    ck_assert(nn_ref_forward(q, 7, 7, n, in, legal, rb, vb, NULL, err, sizeof err) == 0);
    ck_assert_mem_eq(ra, rb, sizeof ra);
    ck_assert_mem_eq(va, vb, sizeof(float) * 21);
    nn_infer_free(ca);
    nn_infer_free(cb);
    nn_params_free(p);
    nn_params_free(q);
}
END_TEST

START_TEST(batch_out_of_range)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 5, 5);
    nn_params *p = random_params(&s, 1);
    char err[128];
    nn_infer *c = nn_infer_new(p, 5, 5, NN_PREC_FP32, 0, err, sizeof err);
    float x[1];
    ck_assert_int_eq(nn_infer_run(c, 513, x, NULL, x, x, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "batch 513") != NULL, "%s", err);
    ck_assert_ptr_null(nn_infer_input(c, 0, err, sizeof err));
    nn_infer_free(c);
    nn_params_free(p);
}
END_TEST

static Suite *infer_suite(void)
{
    Suite *s = suite_create("infer");
    TCase *t = tcase_create("dnnl_vs_ref");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, dnnl_matches_reference_square);
    tcase_add_test(t, dnnl_matches_reference_hex_3players);
    tcase_add_test(t, dnnl_matches_reference_other_shapes);
    tcase_add_test(t, masked_taps_garbage_then_mask_is_identical);
    tcase_add_test(t, batch_out_of_range);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(infer_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
