/* oneDNN inference against the reference forward (the oracle), the hex mask in
 * inference, and the network evaluator. */
#include <check.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/rng.h"
#include "engine/config.h"
#include "engine/symmetry.h"
#include "nn/checkpoint.h"
#include "nn/conv_vnni.h"
#include "nn/conv_wino.h"
#include "nn/heads_x86.h"
#include "nn/infer.h"
#include "nn/net_eval.h"
#include "nn/params.h"
#include "nn/quant.h"

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
static double compare_prec(const nn_params *p, int rows, int cols, int n, uint64_t seed, nn_precision prec, double *vdiff)
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
    nn_infer *ctx = nn_infer_new(p, rows, cols, prec, 0, err, sizeof err);
    ck_assert_msg(ctx != NULL, "%s", err);
    ck_assert_msg(nn_infer_run(ctx, n, in, legal, p2, v2, err, sizeof err) == 0, "%s", err);
    double md = 0, vd = 0;
    for (int i = 0; i < n * A; i++) {
        if (!legal[i])
            ck_assert_float_eq(p2[i], 0.0f);
        md = fmax(md, fabs((double)p1[i] - p2[i]));
    }
    for (int i = 0; i < n * s->players; i++)
        vd = fmax(vd, fabs((double)v1[i] - v2[i]));
    if (vdiff)
        *vdiff = vd;
    else
        md = fmax(md, vd);
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

static double compare(const nn_params *p, int rows, int cols, int n, uint64_t seed)
{
    return compare_prec(p, rows, cols, n, seed, NN_PREC_FP32, NULL);
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
    /* the value head's mean and max pooling, 2 and 3 players, on another board too */
    for (int k = 0; k < 2; k++) {
        s = spec_make(k ? GAME_LATTICE_HEX : GAME_LATTICE_SQUARE, 2 + k, 2, NN_POLICY_CONV, 7, 7);
        s.value_pool = NN_POOL_MEAN_MAX;
        p = random_params(&s, 16 + k);
        for (int b = 0; b < 3; b++) {
            double d1 = compare(p, 7, 7, batches[b], 503 + b), d2 = compare(p, 9, 9, batches[b], 506 + b);
            ck_assert_msg(d1 <= 1e-4 && d2 <= 1e-4, "mean_max %d: batch %d: %g / %g", k, batches[b], d1, d2);
        }
        nn_params_free(p);
    }
}
END_TEST

/* The heads' AVX-512 dot products and pool (heads_x86.h): head channels 16 and 32 take
 * them (hx_cols_ok), with mean and mean_max pools (value FC rows of 16 to 64) and a hidden
 * width that leaves a partial block of 16 rows; oneDNN fp32 matches the reference's plain
 * loops. And the two functions alone against plain loops, rows from 1 to 40. */
START_TEST(heads_x86_match_plain_loops)
{
    for (int k = 0; k < 4; k++) {
        nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 7, 7);
        s.head_channels = k < 2 ? 16 : 32;
        s.value_hidden = k % 2 ? 20 : 40;
        s.value_pool = k % 2 ? NN_POOL_MEAN_MAX : NN_POOL_MEAN;
        nn_params *p = random_params(&s, 40 + k);
        for (int b = 0; b < 3; b++) {
            double d = compare(p, 7, 7, batches[b], 540 + 3 * k + b);
            ck_assert_msg(d <= 1e-4, "head %d pool %d hidden %d: batch %d: %g", s.head_channels,
                          s.value_pool, s.value_hidden, batches[b], d);
        }
        nn_params_free(p);
    }
    if (!hx_ok())
        return;
    rng r;
    rng_seed(&r, 41);
    float M[40 * 70], v[64], out[40], mean[64], mx[64];
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++)
        M[i] = (float)rng_uniform(&r) * 2.0f - 1.0f;
    for (int i = 0; i < 64; i++)
        v[i] = (float)rng_uniform(&r) * 2.0f - 1.0f;
    for (int cols = 16; cols <= 64; cols += 16)
        for (int rows = 1; rows <= 40; rows += 13) {
            if (rows < 40)
                out[rows] = 12345.0f; /* not written past rows */
            hx_rows_dot(M, 70, rows, cols, v, out);
            hx_pool(M, 70, rows, cols, mean, mx);
            for (int i = 0; i < rows; i++) {
                double want = 0;
                for (int c = 0; c < cols; c++)
                    want += (double)M[i * 70 + c] * v[c];
                ck_assert_msg(fabs(want - out[i]) <= 1e-5, "cols %d row %d: %g vs %g", cols, i,
                              out[i], want);
            }
            if (rows < 40)
                ck_assert_float_eq(out[rows], 12345.0f);
            for (int c = 0; c < cols; c++) {
                double sum = 0, m = 0;
                for (int i = 0; i < rows; i++) {
                    sum += M[i * 70 + c];
                    m = fmax(m, M[i * 70 + c]);
                }
                ck_assert_msg(fabs(sum / rows - mean[c]) <= 1e-5, "mean col %d", c);
                ck_assert_float_eq(mx[c], (float)m);
            }
        }
    ck_assert(hx_cols_ok(16) && hx_cols_ok(64) && !hx_cols_ok(8) && !hx_cols_ok(80) && !hx_cols_ok(0));
}
END_TEST

/* The action-value head (2048's seed 003 head: 4 move values in the h scale, a score
 * value head): oneDNN's priors and values match the reference's on random weights at
 * every batch size; the reference's priors are the softmax of its raw outputs (the move
 * values) over the legal moves at NN_ACTION_VALUE_TEMP; another board is refused naming
 * the head. */
START_TEST(dnnl_matches_reference_action_value)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 1, 2, NN_POLICY_ACTION_VALUE, 4, 4);
    s.actions = 4;
    s.value = NN_VALUE_SCORE;
    char err[256];
    ck_assert_msg(nn_spec_validate(&s, err, sizeof err) == 0, "%s", err);
    nn_params *p = random_params(&s, 21);
    /* move values of a few points apart, as a trained head's are */
    const nn_layout *L = &p->layout;
    float *bias = nn_tensor_ptr(L, p->data, L->pol_out_b);
    for (int a = 0; a < 4; a++)
        bias[a] = 20.0f + 1.5f * (float)a;
    for (int b = 0; b < 3; b++) {
        double d = compare(p, 4, 4, batches[b], 600 + b);
        ck_assert_msg(d <= 1e-4, "batch %d: max abs diff %g", batches[b], d);
    }
    const int n = 9;
    float in[9 * 5 * 16], pol[9 * 4], val[9], y[9 * 4];
    uint8_t legal[9 * 4];
    rng r;
    rng_seed(&r, 77);
    random_batch(&r, n, 5, 16, 4, in, legal);
    ck_assert_msg(nn_ref_forward(p, 4, 4, n, in, legal, pol, val, y, err, sizeof err) == 0, "%s", err);
    for (int b = 0; b < n; b++) {
        double mx = -INFINITY, sum = 0;
        for (int a = 0; a < 4; a++)
            if (legal[b * 4 + a])
                mx = fmax(mx, y[b * 4 + a] / NN_ACTION_VALUE_TEMP);
        for (int a = 0; a < 4; a++)
            sum += legal[b * 4 + a] ? exp(y[b * 4 + a] / NN_ACTION_VALUE_TEMP - mx) : 0;
        for (int a = 0; a < 4; a++)
            ck_assert_double_eq_tol(pol[b * 4 + a],
                                    legal[b * 4 + a] ? exp(y[b * 4 + a] / NN_ACTION_VALUE_TEMP - mx) / sum : 0,
                                    1e-6);
        ck_assert(y[b * 4] > 5); /* the values are the outputs, not squashed */
    }
    ck_assert_ptr_null(nn_infer_new(p, 3, 3, NN_PREC_FP32, 0, err, sizeof err));
    ck_assert_msg(strstr(err, "action_value policy head") != NULL, "%s", err);
    nn_params_free(p);
}
END_TEST

/* A net with the opponent-reply and ownership heads (training only): oneDNN still
 * matches the reference, and both give exactly what the same net without them gives. */
START_TEST(aux_policy_head_is_not_inferred)
{
    for (int k = 0; k < 2; k++) {
        nn_spec s = spec_make(k ? GAME_LATTICE_HEX : GAME_LATTICE_SQUARE, 2 + k, 2, NN_POLICY_CONV, 7, 7);
        nn_params *plain = random_params(&s, 31 + k);
        s.aux_policy = true;
        s.aux_owner = true;
        nn_params *aux = random_params(&s, 33 + k);
        memcpy(aux->data, plain->data, sizeof(float) * plain->layout.count); /* shared tensors */
        ck_assert_msg(compare(aux, 7, 7, 7, 601 + k) <= 1e-4, "aux %d: oneDNN vs reference", k);
        int n = 5, hw = 49;
        float *in = malloc(sizeof(float) * (size_t)n * s.planes * hw), p1[5 * 49], p2[5 * 49], v1[15], v2[15];
        uint8_t legal[5 * 49];
        rng r;
        rng_seed(&r, 603 + k);
        random_batch(&r, n, s.planes, hw, hw, in, legal);
        char err[256];
        ck_assert(nn_ref_forward(plain, 7, 7, n, in, legal, p1, v1, NULL, err, sizeof err) == 0);
        ck_assert(nn_ref_forward(aux, 7, 7, n, in, legal, p2, v2, NULL, err, sizeof err) == 0);
        ck_assert_mem_eq(p1, p2, sizeof(float) * (size_t)n * hw);
        ck_assert_mem_eq(v1, v2, sizeof(float) * (size_t)n * s.players);
        free(in);
        nn_params_free(plain);
        nn_params_free(aux);
    }
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

/* A well-scaled random net, as training leaves one: He weights, neutral BN, the second
 * BN of each block at gamma 0.25 so the residual stream does not grow with depth (with
 * random BN statistics the logits get so large that the softmax is one-hot and any
 * rounding flips it, which says nothing about bf16 on real nets). */
static nn_params *scaled_params(nn_spec s, uint64_t seed)
{
    char err[128];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    nn_params_init_he(p, seed);
    for (int b = 0; b < s.blocks; b++)
        for (int c = 0; c < s.channels; c++)
            nn_tensor_ptr(&p->layout, p->data, p->layout.block[b].bn2.gamma)[c] = 0.25f;
    return p;
}

/* bf16 against the fp32 reference. Stated tolerances: policy probabilities within 5e-3
 * and values within 1e-2 (max abs); measured on this CPU: about 5e-4 and 2e-3. */
START_TEST(bf16_close_to_reference)
{
    nn_precision auto_p;
    ck_assert_int_eq(nn_precision_parse("auto", &auto_p), 0);
    ck_assert_int_eq(auto_p, NN_PREC_AUTO);
    {
        /* auto on a model without an int8 calibration: bf16 where the CPU has it */
        nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 5, 5);
        nn_params *p = scaled_params(s, 1);
        ck_assert_int_eq(nn_precision_resolve(NN_PREC_AUTO, p),
                         nn_cpu_has_bf16() ? NN_PREC_BF16 : NN_PREC_FP32);
        char err[128];
        nn_infer *c = nn_infer_new(p, 5, 5, NN_PREC_AUTO, 0, err, sizeof err);
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_int_eq(nn_infer_precision(c), nn_cpu_has_bf16() ? NN_PREC_BF16 : NN_PREC_FP32);
        nn_infer_free(c);
        nn_params_free(p);
    }
    if (!nn_cpu_has_bf16()) {
        char err[128];
        nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 5, 5);
        nn_params *p = scaled_params(s, 1);
        ck_assert_ptr_null(nn_infer_new(p, 5, 5, NN_PREC_BF16, 0, err, sizeof err));
        nn_params_free(p);
        return;
    }
    nn_spec sq = spec_make(GAME_LATTICE_SQUARE, 2, 2, NN_POLICY_CONV, 7, 7);
    nn_spec hx = spec_make(GAME_LATTICE_HEX, 3, 3, NN_POLICY_CONV, 9, 9);
    hx.channels = 32;
    hx.value_pool = NN_POOL_MEAN_MAX; /* the max pooling in int8 too */
    nn_spec specs[2] = {sq, hx};
    for (int k = 0; k < 2; k++) {
        nn_params *p = scaled_params(specs[k], 60 + k);
        for (int b = 0; b < 3; b++) {
            double vd, pd = compare_prec(p, specs[k].rows, specs[k].cols, batches[b], 70 + b,
                                         NN_PREC_BF16, &vd);
            ck_assert_msg(pd <= 5e-3 && vd <= 1e-2, "%s batch %d: policy %g value %g",
                          k ? "hex" : "square", batches[b], pd, vd);
        }
        nn_params_free(p);
    }
}
END_TEST

/* n random positions (random_batch) of a net's shape. */
typedef struct batch {
    int n, A;
    float *in;
    uint8_t *legal;
} batch;

static batch batch_make(const nn_spec *s, int rows, int cols, int n, uint64_t seed)
{
    batch b = {.n = n, .A = s->policy == NN_POLICY_CONV ? rows * cols : s->actions};
    b.in = malloc(sizeof(float) * (size_t)(n * s->planes * rows * cols));
    b.legal = malloc((size_t)(n * b.A));
    rng r;
    rng_seed(&r, seed);
    random_batch(&r, n, s->planes, rows * cols, b.A, b.in, b.legal);
    return b;
}

static void batch_free(batch *b) { free(b->in), free(b->legal); }

/* int8 against the reference (the oracle), on the bf16 test's nets: calibrated on 512
 * random positions, compared on 64 others. Stated tolerances: priors within 5e-3 and
 * values within 2e-2 (max abs); measured: about 6e-4 and 3e-3. The gates (quant.h) pass
 * on 512 other positions. (A random net's policy is nearly flat; the gates on a trained
 * net are in test_quant.) */
START_TEST(int8_close_to_reference)
{
    char err[256];
    nn_spec sq = spec_make(GAME_LATTICE_SQUARE, 2, 2, NN_POLICY_CONV, 7, 7);
    nn_spec hx = spec_make(GAME_LATTICE_HEX, 3, 3, NN_POLICY_CONV, 9, 9);
    hx.channels = 32;
    nn_spec specs[2] = {sq, hx};
    if (!nn_cpu_has_vnni()) {
        nn_params *p = scaled_params(sq, 1);
        batch cal = batch_make(&sq, 7, 7, 8, 1);
        ck_assert_msg(nn_calibrate(p, 7, 7, 8, cal.in, 0, err, sizeof err) == 0, "%s", err);
        ck_assert_ptr_null(nn_infer_new(p, 7, 7, NN_PREC_INT8, 0, err, sizeof err));
        ck_assert_msg(strstr(err, "VNNI") != NULL, "%s", err);
        ck_assert_int_ne(nn_precision_resolve(NN_PREC_AUTO, p), NN_PREC_INT8);
        batch_free(&cal);
        nn_params_free(p);
        return;
    }
    for (int k = 0; k < 2; k++) {
        const nn_spec *s = &specs[k];
        int R = s->rows, C = s->cols;
        nn_params *p = scaled_params(*s, 80 + k);
        batch cal = batch_make(s, R, C, 512, 90 + k), held = batch_make(s, R, C, 512, 95 + k);
        ck_assert_msg(nn_calibrate(p, R, C, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
        ck_assert(nn_params_calibrated(p));
        ck_assert_int_eq(p->calib->nact, 2 + 2 * s->blocks);
        ck_assert_int_eq(p->calib->positions, 512);
        ck_assert_float_eq(p->calib->act_range[0], 1.0f); /* the binary input planes */
        for (int a = 1; a < p->calib->nact; a++)
            ck_assert(p->calib->act_range[a] > 0);
        /* auto: int8, except on AMX for trunks narrower than 64 channels */
        ck_assert_int_eq(nn_precision_resolve(NN_PREC_AUTO, p),
                         nn_cpu_has_amx() ? NN_PREC_BF16 : NN_PREC_INT8);
        for (int b = 0; b < 3; b++) {
            double vd, pd = compare_prec(p, R, C, batches[b], 70 + b, NN_PREC_INT8, &vd);
            ck_assert_msg(pd <= 5e-3 && vd <= 2e-2, "%s batch %d: policy %g value %g",
                          k ? "hex" : "square", batches[b], pd, vd);
        }
        nn_int8_gates g;
        ck_assert_msg(nn_int8_measure(p, NULL, R, C, held.n, held.in, held.legal, 0, &g, err,
                                      sizeof err) == 0, "%s", err);
        ck_assert_int_eq(g.positions, 512);
        ck_assert_double_eq(g.sym_top1, -1);
        ck_assert_double_eq(g.value_scale, 1); /* outcomes: differences as they are */
        ck_assert_msg(g.pass && g.top1 >= 0.98 && g.mean_dvalue <= 0.02 && g.top1_strict <= g.top1,
                      "%s: top1 %g (strict %g) mean dv %g", k ? "hex" : "square", g.top1,
                      g.top1_strict, g.mean_dvalue);
        batch_free(&cal);
        batch_free(&held);
        nn_params_free(p);
    }
}
END_TEST

/* The win/draw/loss value head (2 players): oneDNN fp32 against the reference on random
 * weights, every batch size, another board too, mean and mean_max pooling; the values
 * are W - L and L - W by hand from known logits; bf16 and int8 (where the CPU has them)
 * within the tolerances of bf16_close_to_reference and int8_close_to_reference. */
START_TEST(wdl_head_matches_reference)
{
    char err[256];
    for (int k = 0; k < 2; k++) {
        nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 2, NN_POLICY_CONV, 7, 7);
        s.value = NN_VALUE_WDL;
        s.value_pool = k ? NN_POOL_MEAN_MAX : NN_POOL_MEAN;
        ck_assert_msg(nn_spec_validate(&s, err, sizeof err) == 0, "%s", err);
        nn_params *p = random_params(&s, 31 + k);
        for (int b = 0; b < 3; b++) {
            double d1 = compare(p, 7, 7, batches[b], 700 + b), d2 = compare(p, 9, 9, batches[b], 710 + b);
            ck_assert_msg(d1 <= 1e-4 && d2 <= 1e-4, "wdl %d batch %d: %g / %g", k, batches[b], d1, d2);
        }
        /* known logits: the FC's weights 0, its biases (0.5, 2, -1) */
        const nn_layout *L = &p->layout;
        memset(nn_tensor_ptr(L, p->data, L->val_fc2_w), 0, sizeof(float) * L->t[L->val_fc2_w].size);
        float *b2 = nn_tensor_ptr(L, p->data, L->val_fc2_b);
        b2[NN_WDL_WIN] = 0.5f, b2[NN_WDL_DRAW] = 2.0f, b2[NN_WDL_LOSS] = -1.0f;
        batch in = batch_make(&s, 7, 7, 5, 720);
        float pol[5 * 49], v[10];
        nn_infer *c = nn_infer_new(p, 7, 7, NN_PREC_FP32, 0, err, sizeof err);
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_msg(nn_infer_run(c, 5, in.in, in.legal, pol, v, err, sizeof err) == 0, "%s", err);
        double e = exp(0.5) + exp(2.0) + exp(-1.0), want = (exp(0.5) - exp(-1.0)) / e;
        for (int i = 0; i < 5; i++) {
            ck_assert_double_eq_tol(v[2 * i], want, 1e-6);
            ck_assert_double_eq_tol(v[2 * i + 1], -want, 1e-6);
        }
        nn_infer_free(c);
        batch_free(&in);
        nn_params_free(p);
    }
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 2, NN_POLICY_CONV, 7, 7);
    s.value = NN_VALUE_WDL;
    if (nn_cpu_has_bf16()) {
        nn_params *p = scaled_params(s, 33);
        for (int b = 0; b < 3; b++) {
            double vd, pd = compare_prec(p, 7, 7, batches[b], 730 + b, NN_PREC_BF16, &vd);
            ck_assert_msg(pd <= 5e-3 && vd <= 1e-2, "bf16 batch %d: policy %g value %g", batches[b], pd, vd);
        }
        nn_params_free(p);
    }
    if (nn_cpu_has_vnni()) {
        nn_params *p = scaled_params(s, 34);
        batch cal = batch_make(&s, 7, 7, 512, 740);
        ck_assert_msg(nn_calibrate(p, 7, 7, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
        for (int b = 0; b < 3; b++) {
            double vd, pd = compare_prec(p, 7, 7, batches[b], 750 + b, NN_PREC_INT8, &vd);
            ck_assert_msg(pd <= 5e-3 && vd <= 2e-2, "int8 batch %d: policy %g value %g", batches[b], pd, vd);
        }
        batch_free(&cal);
        nn_params_free(p);
    }
}
END_TEST

/* The value gate of a score head (2048: h of the points to come, tens to hundreds) is
 * measured in half the span of the fp32 values, so it means the same share of the range
 * as for an outcome head: scaling the value head's output layer by 100 scales the raw
 * differences and the span by 100 and leaves the gate's figure where it was (an absolute
 * 0.02 would fail every trained 2048 net). */
START_TEST(int8_value_gate_scale_free_for_scores)
{
    if (!nn_cpu_has_vnni())
        return; /* int8 cannot run here: int8_close_to_reference checks the refusal */
    char err[256];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 1, 2, NN_POLICY_DENSE, 4, 4);
    s.actions = 4;
    s.value = NN_VALUE_SCORE;
    ck_assert_msg(nn_spec_validate(&s, err, sizeof err) == 0, "%s", err);
    nn_params *p = scaled_params(s, 31);
    const nn_layout *L = &p->layout;
    batch cal = batch_make(&s, 4, 4, 256, 32), held = batch_make(&s, 4, 4, 256, 33);
    nn_int8_gates gt[2];
    float mult[2] = {50, 100};
    for (int k = 0; k < 2; k++) {
        float *w = nn_tensor_ptr(L, p->data, L->val_fc2_w), *b = nn_tensor_ptr(L, p->data, L->val_fc2_b);
        for (size_t j = 0; j < L->t[L->val_fc2_w].size; j++)
            w[j] *= mult[k];
        for (size_t j = 0; j < L->t[L->val_fc2_b].size; j++)
            b[j] *= mult[k];
        ck_assert_msg(nn_calibrate(p, 4, 4, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(nn_int8_measure(p, NULL, 4, 4, held.n, held.in, held.legal, 0, &gt[k], err,
                                      sizeof err) == 0, "%s", err);
        ck_assert_msg(gt[k].pass, "x%g: top1 %g mean dv %g (scale %g)", mult[k], gt[k].top1,
                      gt[k].mean_dvalue, gt[k].value_scale);
    }
    ck_assert_msg(gt[0].value_scale > 1, "span %g", gt[0].value_scale);
    ck_assert_double_eq_tol(gt[1].value_scale / gt[0].value_scale, 100, 1e-3);
    ck_assert_msg(gt[0].mean_dvalue > 0, "int8 equal to fp32 everywhere: nothing measured");
    ck_assert_double_eq_tol(gt[1].mean_dvalue / gt[0].mean_dvalue, 1, 0.05);
    ck_assert_double_eq_tol(gt[1].max_dvalue / gt[0].max_dvalue, 1, 0.05);
    /* the raw differences are far above the outcome heads' 0.02 */
    ck_assert_double_gt(gt[1].mean_dvalue * gt[1].value_scale, 10 * NN_INT8_MAX_MEAN_DVALUE);
    batch_free(&cal);
    batch_free(&held);
    nn_params_free(p);
}
END_TEST

/* int8 needs a calibration of exactly these weights: none, or one measured before the
 * weights changed, is refused by nn_infer_new with a message, and auto falls back. */
START_TEST(int8_refused_without_calibration)
{
    char err[256];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 5, 5);
    nn_params *p = scaled_params(s, 3);
    nn_precision fallback = nn_cpu_has_bf16() ? NN_PREC_BF16 : NN_PREC_FP32;
    ck_assert_ptr_null(nn_infer_new(p, 5, 5, NN_PREC_INT8, 0, err, sizeof err));
    ck_assert_msg(strstr(err, nn_cpu_has_vnni() ? "no int8 calibration" : "VNNI") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "gridzero quantize") || !nn_cpu_has_vnni(), "%s", err);
    batch cal = batch_make(&s, 5, 5, 16, 4);
    ck_assert_msg(nn_calibrate(p, 5, 5, 16, cal.in, 0, err, sizeof err) == 0, "%s", err);
    ck_assert(nn_params_calibrated(p));
    /* a clone keeps it, with the weights */
    nn_params *q = nn_params_clone(p);
    ck_assert(nn_params_calibrated(q));
    ck_assert_mem_eq(q->calib, p->calib, sizeof *p->calib);
    /* one weight changes: the calibration no longer holds */
    nn_tensor_ptr(&p->layout, p->data, p->layout.block[0].conv1)[3] += 0.25f;
    ck_assert(!nn_params_calibrated(p));
    ck_assert_int_eq(nn_precision_resolve(NN_PREC_AUTO, p), fallback);
    ck_assert_int_eq(nn_precision_resolve(NN_PREC_FP32, p), NN_PREC_FP32);
    ck_assert_int_eq(nn_int8_check(p, err, sizeof err), -1);
    ck_assert_ptr_null(nn_infer_new(p, 5, 5, NN_PREC_INT8, 0, err, sizeof err));
    ck_assert_msg(strstr(err, nn_cpu_has_vnni() ? "other weights" : "VNNI") != NULL, "%s", err);
    if (nn_cpu_has_vnni()) {
        ck_assert_int_eq(nn_int8_check(q, err, sizeof err), 0);
        nn_infer *c = nn_infer_new(q, 5, 5, NN_PREC_INT8, 0, err, sizeof err);
        ck_assert_msg(c != NULL, "%s", err);
        ck_assert_int_eq(nn_infer_precision(c), NN_PREC_INT8);
        ck_assert_str_eq(nn_precision_name(nn_infer_precision(c)), "int8");
        /* calibration runs on an fp32 context only, in whole buckets */
        ck_assert_int_eq(nn_infer_calibrate(c, 16, cal.in, NULL, NULL, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "fp32") != NULL, "%s", err);
        nn_infer_free(c);
    }
    ck_assert_int_eq(nn_calib_chunk(1), 1);
    ck_assert_int_eq(nn_calib_chunk(5), 4);
    ck_assert_int_eq(nn_calib_chunk(100), 96);
    ck_assert_int_eq(nn_calib_chunk(10000), 256);
    batch_free(&cal);
    nn_params_free(p);
    nn_params_free(q);
}
END_TEST

/* Runs n positions of b through ctx with the int8 kernel k (nn_infer_set_int8_kernel). */
static void run_kernel(nn_infer *ctx, nn_int8_kernel k, const batch *b, float *pol, float *val)
{
    char err[256];
    ck_assert_msg(nn_infer_set_int8_kernel(ctx, k, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(nn_infer_int8_kernel(ctx), k);
    ck_assert_msg(nn_infer_run(ctx, b->n, b->in, b->legal, pol, val, err, sizeof err) == 0, "%s",
                  err);
}

/* The direct int8 kernels (conv_vnni.h) against oneDNN's int8 on the same calibrated
 * weights: the same arithmetic up to one fused multiply-add's rounding and the head's
 * output (oneDNN's in bf16 on a CPU with bf16, direct's f32). Stated tolerances: priors
 * within 1e-3, values within 3e-3 (max abs over the batch), the mean prior difference
 * under 5e-5; measured on the AMD EPYC (Zen 4): at most 1.9e-4, 5.6e-4 and 1.3e-5. Shapes that take every path of the kernels: 8x8 x 48
 * (3 channel blocks, whole rows of 8), 9x9 hex x 32 with 3 players (the masked taps left
 * out; the head's 2 x 4 channels padded to 16), 15x15 x 64 (4 blocks, rows in parts of
 * 5), 6x7 x 80 plain trunk (5 blocks: two passes), and 3x3 tic-tac-toe size. Batches 1,
 * 7 and 64 of one context; two threads give the bits of one; the context's own input
 * buffer gives the same bits. */
START_TEST(int8_direct_matches_onednn)
{
    if (!nn_cpu_has_vnni() || !nn_cpu_has_avx512_vnni())
        return; /* int8_direct_refused checks the refusal */
    char err[256];
    struct {
        game_lattice lat;
        int players, blocks, rows, cols, channels, head, trunk;
    } cases[] = {
        {GAME_LATTICE_SQUARE, 2, 2, 8, 8, 48, 16, NN_TRUNK_RESIDUAL},
        {GAME_LATTICE_HEX, 3, 2, 9, 9, 32, 4, NN_TRUNK_RESIDUAL},
        {GAME_LATTICE_SQUARE, 2, 1, 15, 15, 64, 16, NN_TRUNK_RESIDUAL},
        {GAME_LATTICE_SQUARE, 2, 2, 6, 7, 80, 8, NN_TRUNK_PLAIN},
        {GAME_LATTICE_SQUARE, 2, 1, 3, 3, 16, 4, NN_TRUNK_RESIDUAL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        nn_spec s = spec_make(cases[k].lat, cases[k].players, cases[k].blocks, NN_POLICY_CONV,
                              cases[k].rows, cases[k].cols);
        s.channels = cases[k].channels;
        s.head_channels = cases[k].head;
        s.trunk = cases[k].trunk;
        int R = s.rows, C = s.cols, A = R * C, P = s.players;
        nn_params *p = scaled_params(s, 500 + k);
        batch cal = batch_make(&s, R, C, 256, 510 + k);
        ck_assert_msg(nn_calibrate(p, R, C, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
        nn_infer *c1 = nn_infer_new(p, R, C, NN_PREC_INT8, 1, err, sizeof err);
        nn_infer *c2 = nn_infer_new(p, R, C, NN_PREC_INT8, 2, err, sizeof err);
        nn_infer *cf = nn_infer_new(p, R, C, NN_PREC_FP32, 1, err, sizeof err);
        ck_assert_msg(c1 && c2 && cf, "%s", err);
        /* auto chose direct here (no AMX on a CPU that runs it), Winograd where the tiles
         * fit the board */
        ck_assert_int_eq(nn_infer_int8_kernel(c1),
                         nn_cpu_has_amx() ? NN_INT8_ONEDNN
                         : wino_worth(R, C, s.channels, cases[k].lat == GAME_LATTICE_HEX ? 7 : 9)
                                            ? NN_INT8_WINOGRAD
                                            : NN_INT8_DIRECT);
        int ns[3] = {1, 7, 64};
        for (int bi = 0; bi < 3; bi++) {
            batch b = batch_make(&s, R, C, ns[bi], 520 + 10 * k + bi);
            size_t np = (size_t)b.n * A, nv = (size_t)b.n * P;
            float *pd = malloc(sizeof(float) * np), *po = malloc(sizeof(float) * np);
            float *p2 = malloc(sizeof(float) * np), *vd = malloc(sizeof(float) * nv);
            float *vo = malloc(sizeof(float) * nv), *v2 = malloc(sizeof(float) * nv);
            run_kernel(c1, NN_INT8_ONEDNN, &b, po, vo);
            run_kernel(c1, NN_INT8_DIRECT, &b, pd, vd);
            double pmax = 0, psum = 0, vmax = 0;
            for (size_t i = 0; i < np; i++) {
                if (!b.legal[i])
                    ck_assert_float_eq(pd[i], 0.0f);
                pmax = fmax(pmax, fabs((double)pd[i] - po[i]));
                psum += fabs((double)pd[i] - po[i]);
            }
            for (size_t i = 0; i < nv; i++)
                vmax = fmax(vmax, fabs((double)vd[i] - vo[i]));
            ck_assert_msg(pmax <= 1e-3 && psum / (double)np <= 5e-5 && vmax <= 3e-3,
                          "case %zu batch %d: prior max %g mean %g value %g", k, b.n, pmax,
                          psum / (double)np, vmax);
            /* a direct forward that computed nothing would not match: the priors vary */
            double spread = 0;
            for (size_t i = 1; i < (size_t)A; i++)
                spread = fmax(spread, fabs((double)pd[i] - pd[0]));
            ck_assert_msg(spread > 1e-3, "case %zu: flat priors", k);
            /* Winograd (conv_wino.h) on the trunk: its own rounding (s16 transformed
             * weights, f32 output transform), so it is held to fp32 as closely as the
             * direct kernels are */
            float *pf = malloc(sizeof(float) * np), *vf = malloc(sizeof(float) * nv);
            float *pw = malloc(sizeof(float) * np), *vw = malloc(sizeof(float) * nv);
            ck_assert(nn_infer_run(cf, b.n, b.in, b.legal, pf, vf, err, sizeof err) == 0);
            run_kernel(c1, NN_INT8_WINOGRAD, &b, pw, vw);
            double dw = 0, dd = 0, dwv = 0, ddv = 0;
            for (size_t i = 0; i < np; i++) {
                if (!b.legal[i])
                    ck_assert_float_eq(pw[i], 0.0f);
                dw = fmax(dw, fabs((double)pw[i] - pf[i]));
                dd = fmax(dd, fabs((double)pd[i] - pf[i]));
            }
            for (size_t i = 0; i < nv; i++) {
                dwv = fmax(dwv, fabs((double)vw[i] - vf[i]));
                ddv = fmax(ddv, fabs((double)vd[i] - vf[i]));
            }
            ck_assert_msg(dw <= 2 * dd + 2e-4 && dwv <= 2 * ddv + 1e-3,
                          "case %zu batch %d: against fp32, winograd's prior %g value %g, "
                          "direct's prior %g value %g", k, b.n, dw, dwv, dd, ddv);
            run_kernel(c2, NN_INT8_WINOGRAD, &b, p2, v2);
            ck_assert_mem_eq(p2, pw, sizeof(float) * np);
            ck_assert_mem_eq(v2, vw, sizeof(float) * nv);
            free(pf), free(vf), free(pw), free(vw);
            run_kernel(c2, NN_INT8_DIRECT, &b, p2, v2);
            ck_assert_mem_eq(p2, pd, sizeof(float) * np);
            ck_assert_mem_eq(v2, vd, sizeof(float) * nv);
            float *buf = nn_infer_input(c2, b.n, err, sizeof err);
            ck_assert_msg(buf != NULL, "%s", err);
            memcpy(buf, b.in, sizeof(float) * (size_t)b.n * s.planes * A);
            ck_assert(nn_infer_run(c2, b.n, buf, b.legal, p2, v2, err, sizeof err) == 0);
            ck_assert_mem_eq(p2, pd, sizeof(float) * np);
            free(pd), free(po), free(p2), free(vd), free(vo), free(v2);
            batch_free(&b);
        }
        nn_infer_free(c1);
        nn_infer_free(c2);
        nn_infer_free(cf);
        batch_free(&cal);
        nn_params_free(p);
    }
}
END_TEST

/* direct needs net.channels a multiple of 16 (and AVX512-VNNI): asked for, it is refused
 * with the key named; auto runs oneDNN's kernels instead; other precisions ignore it. */
/* The stem with spread columns (vnni_stem_init) gives the bits of the plain stem: 4, 5
 * and 6 planes on a 7x9 board, all 9 taps and the hex lattice's 7 (spread where it takes
 * fewer groups), inputs 0/1 and fractions. */
START_TEST(int8_stem_spread_same_bits)
{
    if (!nn_cpu_has_avx512_vnni())
        return;
    rng r;
    rng_seed(&r, 61);
    const int R = 7, C = 9, OC = 48;
    for (int ic = 4; ic <= 6; ic++)
        for (int hex = 0; hex < 2; hex++) {
            float *w = malloc(sizeof(float) * OC * ic * 9), wmul[OC], qb[OC], os[OC];
            for (int i = 0; i < OC * ic * 9; i++)
                w[i] = (i % 9 == 0 || i % 9 == 8) && hex ? 0.0f : (float)rng_normal(&r) * 0.5f;
            for (int o = 0; o < OC; o++) {
                wmul[o] = 100.0f + (float)o;
                qb[o] = (float)rng_normal(&r) * 50.0f;
                os[o] = 0.01f + 0.0005f * (float)o;
            }
            float *in = malloc(sizeof(float) * ic * R * C);
            for (int i = 0; i < ic * R * C; i++)
                in[i] = rng_below(&r, 3) == 0 ? 1.0f : rng_below(&r, 2) ? 0.0f : (float)rng_uniform(&r);
            vnni_conv plain, spread;
            ck_assert_int_eq(vnni_conv_init(&plain, w, OC, ic, 3, wmul, qb, os, 0.0f), 0);
            ck_assert_int_eq(vnni_stem_init(&spread, w, OC, ic, 3, wmul, qb, os), 0);
            /* spread where 3 tap rows of 3 ic channels take fewer groups than the live
             * taps of ic: 5 planes (12 < 18, hex 12 < 14); not 6 on hex (15 > 14) or 4 */
            bool want = 3 * ((3 * ic + 3) / 4) < (hex ? 7 : 9) * ((ic + 3) / 4);
            ck_assert_int_eq(want, ic == 5 || (ic == 6 && !hex));
            ck_assert_int_eq(spread.spread, want ? ic : 0);
            ck_assert_int_eq(spread.icp, want ? (3 * ic + 3) / 4 * 4 : (ic + 3) / 4 * 4);
            size_t ab = vnni_act_bytes(R, C, spread.icp), ob = vnni_act_bytes(R, C, OC);
            uint8_t *xa = calloc(ab, 1), *xb = calloc(ab, 1), *ya = calloc(ob, 1), *yb = calloc(ob, 1);
            vnni_quantize_input(in, ic, R, C, 200.0f, xa, plain.icp, 0);
            vnni_quantize_input(in, ic, R, C, 200.0f, xb, spread.icp, spread.spread);
            vnni_conv_u8(&plain, xa, plain.icp, ya, R, C);
            vnni_conv_u8(&spread, xb, spread.icp, yb, R, C);
            for (size_t i = 0; i < ob; i++)
                ck_assert_msg(ya[i] == yb[i], "ic %d hex %d: byte %zu (pixel %zu channel %zu): %d vs %d",
                              ic, hex, i, i / OC, i % OC, ya[i], yb[i]);
            size_t nz = 0;
            for (size_t i = 0; i < ob; i++)
                nz += ya[i] != 0;
            ck_assert_msg(nz > ob / 8, "ic %d hex %d: %zu nonzero of %zu", ic, hex, nz, ob);
            vnni_conv_free(&plain);
            vnni_conv_free(&spread);
            free(w), free(in), free(xa), free(xb), free(ya), free(yb);
        }
}
END_TEST

START_TEST(int8_direct_refused)
{
    char err[256];
    nn_int8_kernel k;
    ck_assert_int_eq(nn_int8_kernel_parse("direct", &k), 0);
    ck_assert_int_eq(k, NN_INT8_DIRECT);
    ck_assert_int_eq(nn_int8_kernel_parse("onednn", &k), 0);
    ck_assert_int_eq(k, NN_INT8_ONEDNN);
    ck_assert_int_eq(nn_int8_kernel_parse("winograd", &k), 0);
    ck_assert_int_eq(k, NN_INT8_WINOGRAD);
    ck_assert_str_eq(nn_int8_kernel_name(NN_INT8_WINOGRAD), "winograd");
    ck_assert_int_eq(nn_int8_kernel_parse("Direct", &k), -1);
    /* where auto takes Winograd (conv_wino.h's measured rule) */
    ck_assert(wino_worth(8, 8, 48, 9) && wino_worth(15, 15, 64, 9) && wino_worth(19, 19, 64, 9));
    ck_assert(!wino_worth(8, 8, 32, 9));  /* 32 channels */
    ck_assert(!wino_worth(9, 9, 64, 9));  /* 44% of the tiles off the board */
    ck_assert(!wino_worth(4, 4, 64, 9));  /* one tile */
    ck_assert(!wino_worth(16, 16, 64, 7)); /* hex: the direct kernels do 7 taps */
    ck_assert_str_eq(nn_int8_kernel_name(NN_INT8_AUTO), "auto");
    if (!nn_cpu_has_vnni())
        return;
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, 1, NN_POLICY_CONV, 5, 5);
    s.channels = 24;
    nn_params *p = scaled_params(s, 41);
    batch cal = batch_make(&s, 5, 5, 16, 42);
    ck_assert_msg(nn_calibrate(p, 5, 5, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
    nn_infer *c = nn_infer_new(p, 5, 5, NN_PREC_INT8, 1, err, sizeof err);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_int_eq(nn_infer_int8_kernel(c), NN_INT8_ONEDNN);
    ck_assert_int_eq(nn_infer_set_int8_kernel(c, NN_INT8_DIRECT, err, sizeof err), -1);
    ck_assert_msg(strstr(err, nn_cpu_has_avx512_vnni() ? "net.channels" : "AVX512-VNNI") &&
                      strstr(err, "onednn"), "%s", err);
    ck_assert_int_eq(nn_infer_set_int8_kernel(c, NN_INT8_WINOGRAD, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "winograd") && strstr(err, "onednn"), "%s", err);
    ck_assert_int_eq(nn_infer_int8_kernel(c), NN_INT8_ONEDNN);
    nn_infer_free(c);
    c = nn_infer_new(p, 5, 5, NN_PREC_FP32, 1, err, sizeof err);
    ck_assert_int_eq(nn_infer_set_int8_kernel(c, NN_INT8_DIRECT, err, sizeof err), 0);
    ck_assert_int_eq(nn_infer_int8_kernel(c), NN_INT8_ONEDNN);
    nn_infer_free(c);
    batch_free(&cal);
    nn_params_free(p);
}
END_TEST

/* The policy ratio of points q and f, p[q] / p[f], for input `in` (one position). */
static double policy_ratio(nn_infer *c, int A, const float *in, int q, int f)
{
    char err[256];
    float pol[81], val[3];
    uint8_t legal[81];
    memset(legal, 1, sizeof legal);
    ck_assert_int_le(A, 81);
    ck_assert_msg(nn_infer_run(c, 1, in, legal, pol, val, err, sizeof err) == 0, "%s", err);
    return (double)pol[q] / pol[f];
}

/* The hex mask holds in int8: on a 9x9 hex net (stem, one block: three 3x3 convs, then
 * 1x1 heads), a stone at (4,4) reaches (7,6) through the trunk's unmasked kernels (a
 * stem step (+1,0), then (+1,+1) through tap (0,0) of each trunk conv) but not through
 * hex ones (hex distance 5 > 3), and (1,1) through neither; so with the mask the policy
 * logits at both, and the ratio of their priors, do not move when the stone is added:
 * the int8 trunk's integers are the same in both runs, the ratio equal up to the
 * softmax's float rounding. The control: garbage in the trunk's masked taps (the net
 * calibrated again) moves it. */
START_TEST(int8_hex_mask_holds)
{
    if (!nn_cpu_has_vnni())
        return;
    char err[256];
    nn_spec s = spec_make(GAME_LATTICE_HEX, 3, 1, NN_POLICY_CONV, 9, 9);
    nn_params *p = scaled_params(s, 7);
    nn_params *bad = nn_params_clone(p);
    const nn_layout *L = &bad->layout;
    int trunk[2] = {L->block[0].conv1, L->block[0].conv2};
    for (int t = 0; t < 2; t++) {
        float *w = nn_tensor_ptr(L, bad->data, trunk[t]);
        for (size_t k = 0; k < L->t[trunk[t]].size / 9; k++)
            w[9 * k] = w[9 * k + 8] = 0.5f;
    }
    ck_assert_int_ge(nn_layout_check_mask(L, bad->data), 0);
    batch cal = batch_make(&s, 9, 9, 256, 8);
    ck_assert_msg(nn_calibrate(p, 9, 9, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(nn_calibrate(bad, 9, 9, cal.n, cal.in, 0, err, sizeof err) == 0, "%s", err);
    int hw = 81, stone = 4 * 9 + 4, q = 7 * 9 + 6, f = 1 * 9 + 1;
    float x0[5 * 81], x1[5 * 81];
    memcpy(x0, cal.in, sizeof x0); /* a random background */
    x0[stone] = x0[hw + stone] = 0.0f;
    memcpy(x1, x0, sizeof x1);
    x1[stone] = 1.0f;
    nn_infer *c = nn_infer_new(p, 9, 9, NN_PREC_INT8, 0, err, sizeof err);
    nn_infer *cb = nn_infer_new(bad, 9, 9, NN_PREC_INT8, 0, err, sizeof err);
    ck_assert_msg(c && cb, "%s", err);
    double r0 = policy_ratio(c, 81, x0, q, f), r1 = policy_ratio(c, 81, x1, q, f);
    ck_assert_msg(fabs(r1 / r0 - 1) < 1e-5, "masked: %.9g -> %.9g", r0, r1);
    /* a hex neighbour of the stone does move: the test sees the stone at all */
    double n0 = policy_ratio(c, 81, x0, 5 * 9 + 4, f), n1 = policy_ratio(c, 81, x1, 5 * 9 + 4, f);
    ck_assert_msg(fabs(n1 / n0 - 1) > 1e-3, "neighbour: %.9g -> %.9g", n0, n1);
    double b0 = policy_ratio(cb, 81, x0, q, f), b1 = policy_ratio(cb, 81, x1, q, f);
    ck_assert_msg(fabs(b1 / b0 - 1) > 1e-3, "unmasked: %.9g -> %.9g", b0, b1);
    nn_infer_free(c);
    nn_infer_free(cb);
    batch_free(&cal);
    nn_params_free(p);
    nn_params_free(bad);
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
    /* the largest buckets: 300 runs padded to 384, and 512 */
    ck_assert(compare(p, 5, 5, 300, 600) <= 1e-4);
    ck_assert(compare(p, 5, 5, 512, 601) <= 1e-4);
    nn_params_free(p);
}
END_TEST


/* ---- a toy 3-player placement game on a 4x4 board, for the evaluator ---- */

typedef struct toy_state {
    uint8_t board[16]; /* 0 empty, 1 + player */
    int ply;
} toy_state;
#define TOY(s) ((toy_state *)(s))
#define CTOY(s) ((const toy_state *)(s))

static void toy_init(const game *g, game_state *s, rng *r)
{
    (void)g, (void)r;
    memset(s, 0, sizeof(toy_state));
}
static int toy_current(const game *g, const game_state *s) { (void)g; return CTOY(s)->ply % 3; }
static int toy_legal(const game *g, const game_state *s, uint8_t *m)
{
    (void)g;
    int n = 0;
    for (int i = 0; i < 16; i++)
        n += m[i] = CTOY(s)->board[i] == 0 && CTOY(s)->ply < 10;
    return n;
}
static int toy_play(const game *g, game_state *s, int a)
{
    (void)g;
    if (a < 0 || a >= 16 || TOY(s)->board[a] || TOY(s)->ply >= 10)
        return -1;
    TOY(s)->board[a] = (uint8_t)(1 + TOY(s)->ply % 3);
    TOY(s)->ply++;
    return 0;
}
static bool toy_terminal(const game *g, const game_state *s) { (void)g; return CTOY(s)->ply >= 10; }
static void toy_result(const game *g, const game_state *s, float *z)
{
    (void)g, (void)s;
    z[0] = z[1] = z[2] = 0;
}
static void toy_encode(const game *g, const game_state *s, float *planes)
{
    (void)g;
    int mover = CTOY(s)->ply % 3;
    memset(planes, 0, sizeof(float) * 4 * 16);
    for (int i = 0; i < 16; i++) {
        int b = CTOY(s)->board[i];
        if (b)
            planes[((b - 1 - mover + 3) % 3) * 16 + i] = 1;
        planes[3 * 16 + i] = 1;
    }
}
static uint64_t toy_hash(const game *g, const game_state *s)
{
    (void)g;
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 16; i++)
        h = (h ^ CTOY(s)->board[i]) * 1099511628211ULL;
    return (h ^ (uint64_t)CTOY(s)->ply) * 1099511628211ULL;
}
static int toy_ply(const game *g, const game_state *s) { (void)g; return CTOY(s)->ply; }

static const game_ops toy_ops = {
    .name = "toy3", .init = toy_init, .current_player = toy_current, .legal = toy_legal,
    .play = toy_play, .terminal = toy_terminal, .result = toy_result, .encode = toy_encode,
    .hash = toy_hash, .ply = toy_ply,
};

static game toy_game(void)
{
    game g = {.ops = &toy_ops, .name = "toy3", .players = 3, .rows = 4, .cols = 4,
              .lattice = GAME_LATTICE_SQUARE, .actions = 16, .planes = 4,
              .state_size = sizeof(toy_state), .nsym = 8, .max_game_length = 10};
    for (int i = 0; i < 8; i++)
        g.sym[i] = (sym_id)i;
    return g;
}

static nn_params *toy_params(const game *g, uint64_t seed)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 3, 2, NN_POLICY_CONV, 4, 4);
    s.planes = g->planes;
    return random_params(&s, seed);
}

static net_eval_opts toy_opts(int sym, int max_batch, int cache)
{
    net_eval_opts o = {.precision = NN_PREC_FP32, .threads = 0, .max_batch = max_batch,
                       .symmetry = sym, .seed = 3, .cache_entries = cache, .cache = NULL};
    return o;
}

/* n random positions with plies 0..9 (so every player is to move in some). */
static void toy_positions(const game *g, int n, toy_state *st, const game_state **ptr, uint64_t *keys,
                          uint8_t *legal)
{
    rng r;
    rng_seed(&r, 77);
    for (int i = 0; i < n; i++) {
        game_init(g, (game_state *)&st[i], NULL);
        int plies = i % 10;
        for (int k = 0; k < plies; k++) {
            uint8_t m[16];
            game_legal(g, (game_state *)&st[i], m);
            int a;
            do
                a = (int)rng_below(&r, 16);
            while (!m[a]);
            game_play(g, (game_state *)&st[i], a);
        }
        ptr[i] = (const game_state *)&st[i];
        keys[i] = game_hash(g, ptr[i]);
        game_legal(g, ptr[i], legal + 16 * i);
    }
}

START_TEST(evaluator_matches_reference_and_rotates_values)
{
    game g = toy_game();
    nn_params *p = toy_params(&g, 31);
    char err[256];
    net_eval_opts o = toy_opts(NET_SYM_NONE, 4, 0);
    evaluator *e = net_eval_new(&g, p, &o, err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);
    enum { N = 9 };
    toy_state st[N];
    const game_state *ptr[N];
    uint64_t keys[N];
    uint8_t legal[N * 16];
    toy_positions(&g, N, st, ptr, keys, legal);
    float pri[N * 16], val[N * 3];
    ck_assert_msg(evaluator_run(e, N, ptr, keys, legal, pri, val, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < N; i++) {
        float in[4 * 16], rp[16], rv[3];
        game_encode(&g, ptr[i], in);
        ck_assert(nn_ref_forward(p, 4, 4, 1, in, legal + 16 * i, rp, rv, NULL, err, sizeof err) == 0);
        double sum = 0;
        for (int a = 0; a < 16; a++) {
            if (!legal[16 * i + a])
                ck_assert_float_eq(pri[16 * i + a], 0.0f);
            sum += pri[16 * i + a];
            ck_assert_float_eq_tol(pri[16 * i + a], rp[a], 1e-4);
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
        int mover = game_current_player(&g, ptr[i]);
        for (int k = 0; k < 3; k++)
            ck_assert_float_eq_tol(val[3 * i + (mover + k) % 3], rv[k], 1e-4);
    }
    ck_assert_uint_eq(e->positions, N);
    /* its clock: 9 positions in chunks of 4 are 3 forward passes, inside evaluate's time */
    net_eval_times t;
    ck_assert(net_eval_times_get(e, &t));
    ck_assert_uint_eq(t.forwards, 3);
    ck_assert(t.forward_s > 0 && t.forward_s <= t.evaluate_s);
    ck_assert_int_eq(net_eval_precision(e), NN_PREC_FP32);
    evaluator *r = eval_random_new(&g);
    ck_assert(!net_eval_times_get(r, &t));
    ck_assert_uint_eq(t.forwards, 0);
    evaluator_free(r);
    e->destroy(e);
    nn_params_free(p);
}
END_TEST

/* The toy position s(P): every stone moved to its image under s. */
static toy_state toy_map(const game *g, sym_id s, const toy_state *in)
{
    toy_state out = *in;
    for (int a = 0; a < 16; a++)
        out.board[sym_map_action(g, s, a)] = in->board[a];
    return out;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

START_TEST(evaluator_symmetries)
{
    game g = toy_game();
    nn_params *p = toy_params(&g, 32);
    char err[256];
    enum { N = 6 };
    toy_state st[N];
    const game_state *ptr[N];
    uint64_t keys[N];
    uint8_t legal[N * 16];
    toy_positions(&g, N, st, ptr, keys, legal);
    net_eval_opts on = toy_opts(NET_SYM_NONE, 8, 0);
    evaluator *plain = net_eval_new(&g, p, &on, err, sizeof err);
    for (int si = 0; si < 8; si++) {
        sym_id s = g.sym[si];
        net_eval_opts os = toy_opts(si, 8, 0);
        evaluator *es = net_eval_new(&g, p, &os, err, sizeof err);
        ck_assert_msg(es != NULL, "%s", err);
        float pa[N * 16], va[N * 3], pb[N * 16], vb[N * 3];
        ck_assert(evaluator_run(es, N, ptr, keys, legal, pa, va, err, sizeof err) == 0);
        /* evaluating P under s == evaluating s(P) plainly, with actions mapped back */
        toy_state mst[N];
        const game_state *mptr[N];
        uint8_t mlegal[N * 16];
        for (int i = 0; i < N; i++) {
            mst[i] = toy_map(&g, s, &st[i]);
            mptr[i] = (const game_state *)&mst[i];
            game_legal(&g, mptr[i], mlegal + 16 * i);
        }
        ck_assert(evaluator_run(plain, N, mptr, keys, mlegal, pb, vb, err, sizeof err) == 0);
        for (int i = 0; i < N; i++) {
            for (int a = 0; a < 16; a++)
                ck_assert_float_eq_tol(pa[16 * i + a], pb[16 * i + sym_map_action(&g, s, a)], 1e-6);
            for (int k = 0; k < 3; k++)
                ck_assert_float_eq_tol(va[3 * i + k], vb[3 * i + k], 1e-6);
        }
        /* the empty board is symmetric: same values, priors a permutation */
        float p0[16], v0[3], p1[16], v1[3];
        ck_assert(evaluator_run(plain, 1, ptr, keys, legal, p0, v0, err, sizeof err) == 0);
        ck_assert(evaluator_run(es, 1, ptr, keys, legal, p1, v1, err, sizeof err) == 0);
        for (int k = 0; k < 3; k++)
            ck_assert_float_eq_tol(v0[k], v1[k], 1e-6);
        qsort(p0, 16, sizeof(float), cmp_float);
        qsort(p1, 16, sizeof(float), cmp_float);
        for (int a = 0; a < 16; a++)
            ck_assert_float_eq_tol(p0[a], p1[a], 1e-6);
        es->destroy(es);
    }
    /* random symmetries still give valid priors */
    net_eval_opts orand = toy_opts(NET_SYM_RANDOM, 8, 0);
    evaluator *er = net_eval_new(&g, p, &orand, err, sizeof err);
    float pr[N * 16], vr[N * 3];
    ck_assert(evaluator_run(er, N, ptr, keys, legal, pr, vr, err, sizeof err) == 0);
    for (int i = 0; i < N; i++) {
        double sum = 0;
        for (int a = 0; a < 16; a++) {
            ck_assert(legal[16 * i + a] || pr[16 * i + a] == 0.0f);
            sum += pr[16 * i + a];
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
    er->destroy(er);
    plain->destroy(plain);
    nn_params_free(p);
}
END_TEST

START_TEST(evaluator_max_batch_from_config)
{
    gz_config c;
    char err[256];
    cfg_defaults(&c, "mnk");
    ck_assert(cfg_set(&c, "selfplay.parallel_games=100", err, sizeof err) == 0);
    ck_assert(cfg_set(&c, "mcts.batch=4", err, sizeof err) == 0);
    net_eval_opts o;
    ck_assert(net_eval_opts_from_config(&o, &c, err, sizeof err) == 0);
    ck_assert_int_eq(o.max_batch, 400); /* net.max_batch 0: the whole gather */
    ck_assert(cfg_set(&c, "net.max_batch=64", err, sizeof err) == 0);
    ck_assert(net_eval_opts_from_config(&o, &c, err, sizeof err) == 0);
    ck_assert_int_eq(o.max_batch, 64);
    ck_assert_int_eq(o.first_batch, 4);
    ck_assert(cfg_set(&c, "net.max_batch=2", err, sizeof err) == 0); /* below mcts.batch */
    ck_assert(net_eval_opts_from_config(&o, &c, err, sizeof err) == 0);
    ck_assert_int_eq(o.max_batch, 2);
    ck_assert_int_eq(o.first_batch, 2);
    ck_assert(cfg_set(&c, "net.max_batch=600", err, sizeof err) != 0);
    ck_assert_msg(strstr(err, "net.max_batch") != NULL, "%s", err);
}
END_TEST

START_TEST(evaluator_cache_and_chunks)
{
    game g = toy_game();
    nn_params *p = toy_params(&g, 33);
    char err[256];
    enum { N = 10 };
    toy_state st[N];
    const game_state *ptr[N];
    uint64_t keys[N];
    uint8_t legal[N * 16];
    toy_positions(&g, N, st, ptr, keys, legal);
    net_eval_opts o1 = toy_opts(NET_SYM_NONE, 3, 1024), o2 = toy_opts(NET_SYM_NONE, 16, 0);
    evaluator *ec = net_eval_new(&g, p, &o1, err, sizeof err);
    evaluator *eb = net_eval_new(&g, p, &o2, err, sizeof err);
    float pa[N * 16], va[N * 3], pb[N * 16], vb[N * 3], pc[N * 16], vc[N * 3];
    ck_assert(evaluator_run(ec, N, ptr, keys, legal, pa, va, err, sizeof err) == 0);
    ck_assert_uint_eq(ec->cache_hits, 0);
    ck_assert(evaluator_run(eb, N, ptr, keys, legal, pb, vb, err, sizeof err) == 0);
    for (int i = 0; i < N * 16; i++) /* chunks of 3 == one batch of 10 */
        ck_assert_float_eq_tol(pa[i], pb[i], 1e-6);
    ck_assert(evaluator_run(ec, N, ptr, keys, legal, pc, vc, err, sizeof err) == 0);
    ck_assert_uint_eq(ec->cache_hits, N);
    ck_assert_uint_eq(ec->positions, 2 * N);
    for (int i = 0; i < N * 16; i++)
        ck_assert_float_eq_tol(pc[i], pa[i], 1e-4);
    ck_assert_mem_eq(vc, va, sizeof va);
    ec->destroy(ec);
    eb->destroy(eb);
    /* a model for another game is refused */
    gz_config c;
    cfg_defaults(&c, "mnk");
    game *mnk = game_new(&c.game, err, sizeof err);
    net_eval_opts o = toy_opts(NET_SYM_NONE, 4, 0);
    ck_assert_ptr_null(net_eval_new(mnk, p, &o, err, sizeof err));
    ck_assert_msg(strstr(err, "planes") != NULL || strstr(err, "players") != NULL, "%s", err);
    /* load from a file: same answers as from memory */
    char path[] = "/tmp/gz_test_infer_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    nn_spec ms;
    ck_assert(nn_spec_from_config(&ms, &c.net, mnk, err, sizeof err) == 0);
    ms.blocks = 1, ms.channels = 8;
    nn_params *mp = random_params(&ms, 5);
    ck_assert_msg(nn_ckpt_save(path, mp, NULL, NULL, 0, err, sizeof err) == 0, "%s", err);
    c.mcts.batch = 4;
    snprintf(c.net.precision, sizeof c.net.precision, "fp32");
    evaluator *el = net_eval_load(mnk, &c, path, err, sizeof err);
    ck_assert_msg(el != NULL, "%s", err);
    game_state *s0 = game_state_new(mnk, NULL);
    const game_state *sp[1] = {s0};
    uint64_t k0 = game_hash(mnk, s0);
    uint8_t *lg = malloc((size_t)mnk->actions);
    game_legal(mnk, s0, lg);
    float *pe = malloc(sizeof(float) * (size_t)mnk->actions), ve[2];
    float *pr = malloc(sizeof(float) * (size_t)mnk->actions), vr[2];
    ck_assert(evaluator_run(el, 1, sp, &k0, lg, pe, ve, err, sizeof err) == 0);
    float *in = malloc(sizeof(float) * (size_t)(mnk->planes * mnk->actions));
    game_encode(mnk, s0, in);
    ck_assert(nn_ref_forward(mp, mnk->rows, mnk->cols, 1, in, lg, pr, vr, NULL, err, sizeof err) == 0);
    /* the empty board is symmetric: whatever random symmetry was drawn, the values agree */
    ck_assert_float_eq_tol(ve[0], vr[0], 1e-4);
    ck_assert_float_eq_tol(ve[1], vr[1], 1e-4);
    el->destroy(el);
    unlink(path);
    ck_assert_ptr_null(net_eval_load(mnk, &c, path, err, sizeof err));
    ck_assert_msg(strstr(err, path) != NULL, "%s", err);
    free(s0), free(lg), free(pe), free(pr), free(in);
    nn_params_free(mp);
    game_free(mnk);
    nn_params_free(p);
}
END_TEST

typedef struct thread_job {
    evaluator *e;
    int n;
    const game_state **ptr;
    const uint64_t *keys;
    const uint8_t *legal;
    float pri[10 * 16], val[10 * 3];
    int rc;
} thread_job;

static void *thread_run(void *arg)
{
    thread_job *j = arg;
    char err[256];
    j->rc = 0;
    for (int rep = 0; rep < 20 && j->rc == 0; rep++)
        j->rc = evaluator_run(j->e, j->n, j->ptr, j->keys, j->legal, j->pri, j->val, err, sizeof err);
    return NULL;
}

START_TEST(evaluators_on_threads_share_a_cache)
{
    game g = toy_game();
    nn_params *p = toy_params(&g, 34);
    char err[256];
    enum { N = 10 };
    toy_state st[N];
    const game_state *ptr[N];
    uint64_t keys[N];
    uint8_t legal[N * 16];
    toy_positions(&g, N, st, ptr, keys, legal);
    nn_cache *cache = nn_cache_new(4096, 16, 3);
    ck_assert_ptr_nonnull(cache);
    thread_job jobs[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        net_eval_opts o = toy_opts(NET_SYM_NONE, 4, 0);
        o.cache = cache;
        o.threads = 1;
        jobs[k].e = net_eval_new(&g, p, &o, err, sizeof err);
        ck_assert_msg(jobs[k].e != NULL, "%s", err);
        jobs[k].n = N, jobs[k].ptr = ptr, jobs[k].keys = keys, jobs[k].legal = legal;
        ck_assert_int_eq(pthread_create(&th[k], NULL, thread_run, &jobs[k]), 0);
    }
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(jobs[k].rc, 0);
    /* every answer agrees with a fresh evaluator's, and most came from the cache */
    net_eval_opts o = toy_opts(NET_SYM_NONE, 16, 0);
    evaluator *ref = net_eval_new(&g, p, &o, err, sizeof err);
    float pr[N * 16], vr[N * 3];
    ck_assert(evaluator_run(ref, N, ptr, keys, legal, pr, vr, err, sizeof err) == 0);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < N * 16; i++)
            ck_assert_float_eq_tol(jobs[k].pri[i], pr[i], 1e-4);
        for (int i = 0; i < N * 3; i++)
            ck_assert_float_eq_tol(jobs[k].val[i], vr[i], 1e-5);
    }
    ck_assert_uint_ge(jobs[0].e->cache_hits + jobs[1].e->cache_hits, 2 * N * 20 - 2 * N * 2);
    for (int k = 0; k < 2; k++)
        jobs[k].e->destroy(jobs[k].e);
    ref->destroy(ref);
    nn_cache_free(cache);
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
    tcase_add_test(t, heads_x86_match_plain_loops);
    tcase_add_test(t, masked_taps_garbage_then_mask_is_identical);
    tcase_add_test(t, aux_policy_head_is_not_inferred);
    tcase_add_test(t, dnnl_matches_reference_action_value);
    tcase_add_test(t, batch_out_of_range);
    tcase_add_test(t, bf16_close_to_reference);
    tcase_add_test(t, int8_close_to_reference);
    tcase_add_test(t, int8_refused_without_calibration);
    tcase_add_test(t, int8_value_gate_scale_free_for_scores);
    tcase_add_test(t, int8_hex_mask_holds);
    tcase_add_test(t, int8_direct_matches_onednn);
    tcase_add_test(t, int8_direct_refused);
    tcase_add_test(t, int8_stem_spread_same_bits);
    tcase_add_test(t, wdl_head_matches_reference);
    suite_add_tcase(s, t);
    TCase *ev = tcase_create("evaluator");
    tcase_set_timeout(ev, 120);
    tcase_add_test(ev, evaluator_matches_reference_and_rotates_values);
    tcase_add_test(ev, evaluator_symmetries);
    tcase_add_test(ev, evaluator_max_batch_from_config);
    tcase_add_test(ev, evaluator_cache_and_chunks);
    tcase_add_test(ev, evaluators_on_threads_share_a_cache);
    suite_add_tcase(s, ev);
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
