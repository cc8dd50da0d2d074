/* The trainer's layers: every backward against central finite differences in double
 * precision, the forwards against naive direct formulas, and the float build (what the
 * trainer runs) against the double build (the oracle).
 *
 * Method: for each layer, a scalar loss L = sum(out * G) (G fixed random) or the layer's
 * own loss; the double layer's backward gives the analytic gradient, central
 * differences of the double forward (h = 1e-6) the numeric one; they must agree within
 * |num - an| <= 1e-6 + 1e-5 |num|. The float layer's gradient must then agree with the
 * double one within 2e-4 of the gradient's largest entry (float rounding over sums of
 * a few hundred terms). Inputs of ReLU are kept at |x| >= 0.1 (away from the kink).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rng.h"
#include "train/layers.h"

#define H_FD 1e-6
#define ATOL 1e-6
#define RTOL 1e-5
#define FTOL 2e-4

static double *dnew(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

static float *fnew(size_t n)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void drand_fill(rng *r, double *x, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * rng_uniform(r);
}

/* Away from zero: |x| in [0.1, 1]. */
static void drand_nokink(rng *r, double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double m = 0.1 + 0.9 * rng_uniform(r);
        x[i] = rng_uniform(r) < 0.5 ? -m : m;
    }
}

static float *tof(const double *x, size_t n)
{
    float *f = fnew(n);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)x[i];
    return f;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* A scalar loss of the double layer, as a function of whatever its ctx points at. */
typedef double (*loss_fn)(void *ctx);

/* Compares an analytic gradient with central differences of f over x (every entry,
 * or `stride`-spaced entries for big tensors). */
static void check_fd(const char *what, double *x, size_t n, const double *an, loss_fn f, void *ctx,
                     size_t stride)
{
    for (size_t i = 0; i < n; i += stride) {
        double keep = x[i];
        x[i] = keep + H_FD;
        double lp = f(ctx);
        x[i] = keep - H_FD;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * H_FD);
        ck_assert_msg(fabs(num - an[i]) <= ATOL + RTOL * fabs(num),
                      "%s[%zu]: analytic %.10g vs numeric %.10g", what, i, an[i], num);
    }
}

/* The float gradient against the double one. */
static void check_float(const char *what, const float *f, const double *d, size_t n)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(d[i]));
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(f[i] - d[i]) <= FTOL * (mx + 1e-3), "%s float[%zu] %.8g vs double %.8g",
                      what, i, (double)f[i], d[i]);
}

/* ---- 3x3 conv ---------------------------------------------------------------- */

/* Naive direct convolution in the C x (N*H*W) layout. */
static void conv3_naive(double *out, const double *in, const double *w, conv_dims d)
{
    int hw = d.H * d.W, M = d.N * hw;
    for (int o = 0; o < d.OC; o++)
        for (int n = 0; n < d.N; n++)
            for (int y = 0; y < d.H; y++)
                for (int x = 0; x < d.W; x++) {
                    double s = 0;
                    for (int i = 0; i < d.IC; i++)
                        for (int k = 0; k < 9; k++) {
                            if (d.hex && (k == 0 || k == 8))
                                continue;
                            int yy = y + k / 3 - 1, xx = x + k % 3 - 1;
                            if (yy < 0 || yy >= d.H || xx < 0 || xx >= d.W)
                                continue;
                            s += w[((size_t)o * d.IC + i) * 9 + k] * in[(size_t)i * M + n * hw + yy * d.W + xx];
                        }
                    out[(size_t)o * M + n * hw + y * d.W + x] = s;
                }
}

typedef struct conv3_ctx {
    conv_dims d;
    double *in, *w, *g, *out, *scratch;
} conv3_ctx;

static double conv3_loss(void *p)
{
    conv3_ctx *c = p;
    conv3x3_forward_f64(c->out, c->in, c->w, c->d, c->scratch);
    return dot(c->out, c->g, (size_t)c->d.OC * c->d.N * c->d.H * c->d.W);
}

static void conv3_case(conv_dims d, uint64_t seed)
{
    rng r;
    rng_seed(&r, seed);
    size_t M = (size_t)d.N * d.H * d.W, nin = d.IC * M, nout = d.OC * M, nw = (size_t)d.OC * d.IC * 9;
    conv3_ctx c = {d, dnew(nin), dnew(nw), dnew(nout), dnew(nout), dnew(conv3x3_scratch_f64(d))};
    drand_fill(&r, c.in, nin, -1, 1);
    drand_fill(&r, c.w, nw, -1, 1);
    drand_fill(&r, c.g, nout, -1, 1);
    /* The hex mask lives in the parameters: masked taps are zero there. */
    if (d.hex)
        for (size_t j = 0; j < nw; j += 9)
            c.w[j] = c.w[j + 8] = 0;
    /* forward vs the naive formula */
    double *ref = dnew(nout);
    conv3_naive(ref, c.in, c.w, d);
    conv3x3_forward_f64(c.out, c.in, c.w, d, c.scratch);
    for (size_t i = 0; i < nout; i++)
        ck_assert_msg(fabs(ref[i] - c.out[i]) < 1e-12, "conv3 forward[%zu] %g vs naive %g", i, c.out[i], ref[i]);
    /* backward vs finite differences */
    double *din = dnew(nin), *dw = dnew(nw);
    conv3x3_backward_f64(din, dw, c.g, c.in, c.w, d, c.scratch);
    check_fd("conv3 dinp", c.in, nin, din, conv3_loss, &c, 1);
    check_fd("conv3 dw", c.w, nw, dw, conv3_loss, &c, 1);
    if (d.hex)
        for (size_t j = 0; j < nw; j += 9)
            ck_assert(dw[j] == 0.0 && dw[j + 8] == 0.0);
    /* the float build */
    float *fin = tof(c.in, nin), *fw = tof(c.w, nw), *fg = tof(c.g, nout), *fout = fnew(nout);
    float *fs = fnew(conv3x3_scratch(d)), *fdin = fnew(nin), *fdw = fnew(nw);
    conv3x3_forward(fout, fin, fw, d, fs);
    check_float("conv3 out", fout, ref, nout);
    for (size_t i = 0; i < nin; i++) /* the input gradient accumulates */
        fdin[i] = 0.5f;
    conv3x3_backward(fdin, fdw, fg, fin, fw, d, fs);
    for (size_t i = 0; i < nin; i++)
        fdin[i] -= 0.5f;
    check_float("conv3 dinp", fdin, din, nin);
    check_float("conv3 dw", fdw, dw, nw);
    if (d.hex)
        for (size_t j = 0; j < nw; j += 9)
            ck_assert(fdw[j] == 0.0f && fdw[j + 8] == 0.0f);
    free(c.in), free(c.w), free(c.g), free(c.out), free(c.scratch), free(ref), free(din), free(dw);
    free(fin), free(fw), free(fg), free(fout), free(fs), free(fdin), free(fdw);
}

START_TEST(conv3x3_square)
{
    conv3_case((conv_dims){.N = 2, .IC = 3, .OC = 4, .H = 4, .W = 5, .hex = 0}, 1);
}
END_TEST

START_TEST(conv3x3_hex)
{
    conv3_case((conv_dims){.N = 2, .IC = 3, .OC = 4, .H = 5, .W = 5, .hex = 1}, 2);
}
END_TEST

/* Winograd F(2x2, 3x3): forced on small convs (odd and even sides, so tiles overhang
 * the board's last row and column, or not; tiles ordered by rows on boards of 12
 * columns or more, by boards below), and chosen by CONV_AUTO (16 channels);
 * the forward against the naive formula, both gradients against finite differences,
 * the float build against the double one, masked hex taps exactly zero. */
START_TEST(conv3x3_winograd)
{
    conv3_case((conv_dims){.N = 2, .IC = 3, .OC = 4, .H = 5, .W = 7, .algo = CONV_WINOGRAD}, 21);
    conv3_case((conv_dims){.N = 3, .IC = 2, .OC = 3, .H = 4, .W = 6, .algo = CONV_WINOGRAD}, 22);
    conv3_case((conv_dims){.N = 2, .IC = 3, .OC = 2, .H = 5, .W = 5, .hex = 1, .algo = CONV_WINOGRAD}, 23);
    conv3_case((conv_dims){.N = 1, .IC = 2, .OC = 2, .H = 1, .W = 2, .algo = CONV_WINOGRAD}, 24);
    conv3_case((conv_dims){.N = 1, .IC = 16, .OC = 16, .H = 3, .W = 12, .hex = 1}, 25);
    /* tiles by rows: an odd width (13), one row, and 11 boards in chunks of 10 and 1 */
    conv3_case((conv_dims){.N = 3, .IC = 2, .OC = 3, .H = 5, .W = 13, .algo = CONV_WINOGRAD}, 28);
    conv3_case((conv_dims){.N = 2, .IC = 2, .OC = 2, .H = 1, .W = 12, .algo = CONV_WINOGRAD}, 29);
    conv3_case((conv_dims){.N = 11, .IC = 2, .OC = 2, .H = 4, .W = 12, .hex = 1, .algo = CONV_WINOGRAD}, 30);
    /* 35 narrow boards: tiles by boards, chunks of 16, 16 and 3 */
    conv3_case((conv_dims){.N = 35, .IC = 2, .OC = 3, .H = 5, .W = 7, .algo = CONV_WINOGRAD}, 26);
    conv3_case((conv_dims){.N = 17, .IC = 16, .OC = 16, .H = 3, .W = 3, .hex = 1}, 27);
    /* the float build's 16x16 transposes: 81 points (5 blocks of 16 and 1), 64 (4) */
    conv3_case((conv_dims){.N = 33, .IC = 3, .OC = 2, .H = 9, .W = 9, .algo = CONV_WINOGRAD}, 31);
    conv3_case((conv_dims){.N = 16, .IC = 2, .OC = 3, .H = 8, .W = 8, .hex = 1, .algo = CONV_WINOGRAD}, 32);
}
END_TEST

/* Several chunks (im2col: H*W = 1024 columns per sample; Winograd: 256 tiles per
 * sample, one board per chunk; partial chunks are in conv3x3_winograd), for both
 * algorithms: the forward and both gradients against the naive forward and finite
 * differences of a few entries. */
START_TEST(conv3x3_chunks)
{
    for (int run = 0; run < 4; run++) {
        int hex = run & 1;
        conv_dims d = {.N = 5, .IC = 2, .OC = 2, .H = 32, .W = 32, .hex = hex,
                       .algo = run < 2 ? CONV_IM2COL : CONV_WINOGRAD};
        rng r;
        rng_seed(&r, 3 + hex);
        size_t M = (size_t)d.N * d.H * d.W, nin = d.IC * M, nout = d.OC * M, nw = (size_t)d.OC * d.IC * 9;
        conv3_ctx c = {d, dnew(nin), dnew(nw), dnew(nout), dnew(nout), dnew(conv3x3_scratch_f64(d))};
        drand_fill(&r, c.in, nin, -1, 1);
        drand_fill(&r, c.w, nw, -1, 1);
        drand_fill(&r, c.g, nout, -1, 1);
        if (hex)
            for (size_t j = 0; j < nw; j += 9)
                c.w[j] = c.w[j + 8] = 0;
        double *ref = dnew(nout);
        conv3_naive(ref, c.in, c.w, d);
        conv3x3_forward_f64(c.out, c.in, c.w, d, c.scratch);
        for (size_t i = 0; i < nout; i++)
            ck_assert(fabs(ref[i] - c.out[i]) < 1e-12);
        double *din = dnew(nin), *dw = dnew(nw);
        conv3x3_backward_f64(din, dw, c.g, c.in, c.w, d, c.scratch);
        check_fd("conv3 chunked dinp", c.in, nin, din, conv3_loss, &c, 997);
        check_fd("conv3 chunked dw", c.w, nw, dw, conv3_loss, &c, 1);
        free(c.in), free(c.w), free(c.g), free(c.out), free(c.scratch), free(ref), free(din), free(dw);
    }
}
END_TEST

/* The trainer's threads each run a part of a conv (conv3x3_forward_part /
 * conv3x3_backward_part, then conv3x3_backward_reduce): for 2 and 3 parts, run one after
 * the other with their own scratch, the parts together equal the whole-batch call
 * (several chunks, sample and channel counts that do not divide evenly), both for an
 * overwritten and an accumulated input gradient. */
START_TEST(conv3x3_parts)
{
    for (int run = 0; run < 8; run++) {
        int hex = run & 1;
        /* im2col; Winograd by rows (16 columns); Winograd by boards (9 columns, chunks of
         * 16); by boards with 2 samples, so that with 3 parts one part has none */
        conv_dims d = {.N = run < 4 ? 19 : run < 6 ? 37 : 2, .IC = 5, .OC = 4, .H = 16,
                       .W = run < 4 ? 16 : 9,
                       .hex = hex, .algo = run < 2 ? CONV_IM2COL : CONV_WINOGRAD};
        rng r;
        rng_seed(&r, 11 + run);
        size_t M = (size_t)d.N * d.H * d.W, nin = d.IC * M, nout = d.OC * M, nw = (size_t)d.OC * d.IC * 9;
        double *in = dnew(nin), *w = dnew(nw), *g = dnew(nout), *sc = dnew(conv3x3_scratch_f64(d) * 3);
        drand_fill(&r, in, nin, -1, 1);
        drand_fill(&r, w, nw, -1, 1);
        drand_fill(&r, g, nout, -1, 1);
        if (hex)
            for (size_t j = 0; j < nw; j += 9)
                w[j] = w[j + 8] = 0;
        double *out = dnew(nout), *din = dnew(nin), *dw = dnew(nw);
        conv3x3_forward_f64(out, in, w, d, sc);
        conv3x3_backward_f64(din, dw, g, in, w, d, sc);
        for (int np = 2; np <= 3; np++)
            for (int acc = 0; acc < 2; acc++) {
                double *pout = dnew(nout), *pdin = dnew(nin), *pdw = dnew(nw);
                for (size_t i = 0; i < nin; i++)
                    pdin[i] = acc ? 0 : 7; /* overwritten when acc == 0 */
                size_t stride = conv3x3_scratch_f64(d);
                for (int p = 0; p < np; p++) {
                    double *s = sc + (size_t)p * stride;
                    conv3x3_forward_part_f64(pout, in, w, d, s, p, np);
                    conv3x3_backward_part_f64(pdin, pdw, g, in, w, d, s, acc, p, np);
                }
                for (int p = 0; p < np; p++)
                    conv3x3_backward_reduce_f64(pdw, sc, stride, d, p, np);
                for (size_t i = 0; i < nout; i++)
                    ck_assert_msg(fabs(pout[i] - out[i]) < 1e-12, "parts %d: out[%zu]", np, i);
                for (size_t i = 0; i < nin; i++)
                    ck_assert_msg(fabs(pdin[i] - din[i]) < 1e-12, "parts %d: dinp[%zu]", np, i);
                for (size_t i = 0; i < nw; i++)
                    ck_assert_msg(fabs(pdw[i] - dw[i]) < 1e-10, "parts %d: dw[%zu]", np, i);
                free(pout), free(pdin), free(pdw);
            }
        /* the float build in parts (its AVX-512 copies on chunks of 16 boards that start
         * inside a part), a weight gradient that accumulates onto 0.25, and with 3 parts
         * no input gradient (dinp NULL, as for the stem) */
        for (int np = 2; np <= 3; np++) {
            size_t fstride = conv3x3_scratch(d);
            float *fin = tof(in, nin), *fw = tof(w, nw), *fg = tof(g, nout), *fout = fnew(nout);
            float *fdin = fnew(nin), *fdw = fnew(nw), *fsc = fnew(fstride * 3);
            for (size_t i = 0; i < nw; i++)
                fdw[i] = 0.25f;
            for (int p = 0; p < np; p++) {
                float *s = fsc + (size_t)p * fstride;
                conv3x3_forward_part(fout, fin, fw, d, s, p, np);
                conv3x3_backward_part(np == 3 ? NULL : fdin, fdw, fg, fin, fw, d, s, 0, p, np);
            }
            for (int p = 0; p < np; p++)
                conv3x3_backward_reduce(fdw, fsc, fstride, d, p, np);
            for (size_t i = 0; i < nw; i++)
                fdw[i] -= 0.25f;
            check_float("conv3 parts out", fout, out, nout);
            if (np == 2)
                check_float("conv3 parts dinp", fdin, din, nin);
            else
                for (size_t i = 0; i < nin; i++)
                    ck_assert(fdin[i] == 0.0f);
            check_float("conv3 parts dw", fdw, dw, nw);
            free(fin), free(fw), free(fg), free(fout), free(fdin), free(fdw), free(fsc);
        }
        free(in), free(w), free(g), free(sc), free(out), free(din), free(dw);
    }
}
END_TEST

/* ---- 1x1 conv ---------------------------------------------------------------- */

typedef struct conv1_ctx {
    conv_dims d;
    double *in, *w, *b, *g, *out;
} conv1_ctx;

static double conv1_loss(void *p)
{
    conv1_ctx *c = p;
    conv1x1_forward_f64(c->out, c->in, c->w, c->b, c->d);
    return dot(c->out, c->g, (size_t)c->d.OC * c->d.N * c->d.H * c->d.W);
}

START_TEST(conv1x1_grad)
{
    conv_dims d = {.N = 3, .IC = 4, .OC = 3, .H = 3, .W = 2};
    rng r;
    rng_seed(&r, 4);
    size_t M = (size_t)d.N * d.H * d.W, nin = d.IC * M, nout = d.OC * M, nw = (size_t)d.OC * d.IC;
    conv1_ctx c = {d, dnew(nin), dnew(nw), dnew(d.OC), dnew(nout), dnew(nout)};
    drand_fill(&r, c.in, nin, -1, 1);
    drand_fill(&r, c.w, nw, -1, 1);
    drand_fill(&r, c.b, d.OC, -1, 1);
    drand_fill(&r, c.g, nout, -1, 1);
    conv1_loss(&c);
    for (int o = 0; o < d.OC; o++)
        for (size_t j = 0; j < M; j++) {
            double s = c.b[o];
            for (int i = 0; i < d.IC; i++)
                s += c.w[o * d.IC + i] * c.in[i * M + j];
            ck_assert(fabs(s - c.out[o * M + j]) < 1e-12);
        }
    double *din = dnew(nin), *dw = dnew(nw), *db = dnew(d.OC);
    conv1x1_backward_f64(din, dw, db, c.g, c.in, c.w, d);
    check_fd("conv1 dinp", c.in, nin, din, conv1_loss, &c, 1);
    check_fd("conv1 dw", c.w, nw, dw, conv1_loss, &c, 1);
    check_fd("conv1 db", c.b, d.OC, db, conv1_loss, &c, 1);
    float *fin = tof(c.in, nin), *fw = tof(c.w, nw), *fb = tof(c.b, d.OC), *fg = tof(c.g, nout);
    float *fout = fnew(nout), *fdin = fnew(nin), *fdw = fnew(nw), *fdb = fnew(d.OC);
    conv1x1_forward(fout, fin, fw, fb, d);
    check_float("conv1 out", fout, c.out, nout);
    conv1x1_backward(fdin, fdw, fdb, fg, fin, fw, d);
    check_float("conv1 dinp", fdin, din, nin);
    check_float("conv1 dw", fdw, dw, nw);
    check_float("conv1 db", fdb, db, d.OC);
    free(c.in), free(c.w), free(c.b), free(c.g), free(c.out), free(din), free(dw), free(db);
    free(fin), free(fw), free(fb), free(fg), free(fout), free(fdin), free(fdw), free(fdb);
}
END_TEST

/* ---- batch norm -------------------------------------------------------------- */

typedef struct bn_ctx {
    int C, M;
    double *in, *gamma, *beta, *g, *out, *mean, *invstd;
} bn_ctx;

static double bn_loss(void *p)
{
    bn_ctx *c = p;
    batchnorm_forward_train_f64(c->out, c->mean, c->invstd, c->in, c->gamma, c->beta, NULL, NULL,
                                c->C, c->M, 1e-5);
    return dot(c->out, c->g, (size_t)c->C * c->M);
}

START_TEST(batchnorm_grad)
{
    int C = 3, M = 12;
    size_t n = (size_t)C * M;
    rng r;
    rng_seed(&r, 5);
    bn_ctx c = {C, M, dnew(n), dnew(C), dnew(C), dnew(n), dnew(n), dnew(C), dnew(C)};
    drand_fill(&r, c.in, n, -2, 2);
    drand_fill(&r, c.gamma, C, 0.5, 1.5);
    drand_fill(&r, c.beta, C, -1, 1);
    drand_fill(&r, c.g, n, -1, 1);
    bn_loss(&c);
    /* forward: each channel normalised to mean beta, variance gamma^2 (up to eps) */
    for (int ch = 0; ch < C; ch++) {
        double s = 0, s2 = 0;
        for (int j = 0; j < M; j++) {
            s += c.out[ch * M + j];
            s2 += c.out[ch * M + j] * c.out[ch * M + j];
        }
        double mu = s / M, var = s2 / M - mu * mu;
        ck_assert(fabs(mu - c.beta[ch]) < 1e-12);
        ck_assert(fabs(var - c.gamma[ch] * c.gamma[ch]) < 1e-4);
    }
    double *din = dnew(n), *dgam = dnew(C), *dbet = dnew(C);
    batchnorm_backward_f64(din, dgam, dbet, c.g, c.in, c.gamma, c.mean, c.invstd, C, M);
    check_fd("bn dinp", c.in, n, din, bn_loss, &c, 1);
    check_fd("bn dgamma", c.gamma, C, dgam, bn_loss, &c, 1);
    check_fd("bn dbeta", c.beta, C, dbet, bn_loss, &c, 1);
    float *fin = tof(c.in, n), *fgam = tof(c.gamma, C), *fbet = tof(c.beta, C), *fg = tof(c.g, n);
    float *fout = fnew(n), *fmean = fnew(C), *fis = fnew(C), *fdin = fnew(n), *fdg = fnew(C), *fdb = fnew(C);
    batchnorm_forward_train(fout, fmean, fis, fin, fgam, fbet, NULL, NULL, C, M, 1e-5f);
    check_float("bn out", fout, c.out, n);
    batchnorm_backward(fdin, fdg, fdb, fg, fin, fgam, fmean, fis, C, M);
    check_float("bn dinp", fdin, din, n);
    check_float("bn dgamma", fdg, dgam, C);
    check_float("bn dbeta", fdb, dbet, C);
    free(c.in), free(c.gamma), free(c.beta), free(c.g), free(c.out), free(c.mean), free(c.invstd);
    free(din), free(dgam), free(dbet);
    free(fin), free(fgam), free(fbet), free(fg), free(fout), free(fmean), free(fis), free(fdin);
    free(fdg), free(fdb);
}
END_TEST

/* Running statistics: momentum update with the unbiased variance; eval mode uses them. */
START_TEST(batchnorm_running_and_eval)
{
    float x[8] = {1, 2, 3, 4, -1, -1, 1, 1}; /* 2 channels x 4 */
    float out[8], mean[2], is[2], rm[2] = {0, 0}, rv[2] = {1, 1};
    float gam[2] = {2, 1}, bet[2] = {0.5f, 0};
    batchnorm_forward_train(out, mean, is, x, gam, bet, rm, rv, 2, 4, 1e-5f);
    ck_assert_float_eq_tol(rm[0], 0.9f * 0 + 0.1f * 2.5f, 1e-6f);
    ck_assert_float_eq_tol(rv[0], 0.9f * 1 + 0.1f * (5.0f / 3.0f), 1e-6f);
    ck_assert_float_eq_tol(rm[1], 0.0f, 1e-6f);
    ck_assert_float_eq_tol(rv[1], 0.9f + 0.1f * (4.0f / 3.0f), 1e-6f);
    float y[8];
    batchnorm_forward_eval(y, x, gam, bet, rm, rv, 2, 4, 1e-5f);
    for (int j = 0; j < 4; j++)
        ck_assert_float_eq_tol(y[j], 2 * (x[j] - rm[0]) / sqrtf(rv[0] + 1e-5f) + 0.5f, 1e-5f);
}
END_TEST

/* ---- element-wise, pool, dense, layout ------------------------------------------ */

typedef struct ew_ctx {
    size_t n;
    double *in, *in2, *g, *out;
    int kind; /* 0 relu, 1 tanh, 2 residual */
} ew_ctx;

static double ew_loss(void *p)
{
    ew_ctx *c = p;
    if (c->kind == 0)
        relu_forward_f64(c->out, c->in, c->n);
    else if (c->kind == 1)
        tanh_forward_f64(c->out, c->in, c->n);
    else
        residual_forward_f64(c->out, c->in, c->in2, c->n);
    return dot(c->out, c->g, c->n);
}

START_TEST(elementwise_grads)
{
    size_t n = 40;
    rng r;
    rng_seed(&r, 6);
    for (int kind = 0; kind < 3; kind++) {
        ew_ctx c = {n, dnew(n), dnew(n), dnew(n), dnew(n), kind};
        drand_nokink(&r, c.in, n);
        drand_fill(&r, c.in2, n, -1, 1);
        drand_fill(&r, c.g, n, -1, 1);
        ew_loss(&c);
        double *din = dnew(n), *din2 = dnew(n);
        if (kind == 0)
            relu_backward_f64(din, c.g, c.out, n);
        else if (kind == 1)
            tanh_backward_f64(din, c.g, c.out, n);
        else
            residual_backward_f64(din, din2, c.g, n);
        check_fd(kind == 0 ? "relu" : kind == 1 ? "tanh" : "residual a", c.in, n, din, ew_loss, &c, 1);
        if (kind == 2)
            check_fd("residual b", c.in2, n, din2, ew_loss, &c, 1);
        ew_loss(&c); /* the finite differences left a perturbed output behind */
        for (size_t i = 0; i < n; i++) {
            double want = kind == 0 ? fmax(c.in[i], 0) : kind == 1 ? tanh(c.in[i]) : c.in[i] + c.in2[i];
            ck_assert(fabs(c.out[i] - want) < 1e-15);
        }
        /* float, including relu's in-place backward */
        float *fin = tof(c.in, n), *fout = fnew(n), *fg = tof(c.g, n), *fd = fnew(n);
        if (kind == 0) {
            relu_forward(fout, fin, n);
            relu_backward(fd, fg, fout, n);
            check_float("relu float", fd, din, n);
            relu_backward(fg, fg, fout, n);
            check_float("relu in place", fg, din, n);
        } else if (kind == 1) {
            tanh_forward(fout, fin, n);
            tanh_backward(fd, fg, fout, n);
            check_float("tanh float", fd, din, n);
        }
        free(c.in), free(c.in2), free(c.g), free(c.out), free(din), free(din2);
        free(fin), free(fout), free(fg), free(fd);
    }
}
END_TEST

typedef struct pool_ctx {
    int N, C, HW, with_max;
    double *in, *g, *out;
} pool_ctx;

static double pool_loss(void *p)
{
    pool_ctx *c = p;
    gpool_forward_f64(c->out, c->in, c->N, c->C, c->HW, c->with_max);
    return dot(c->out, c->g, (size_t)c->N * c->C * (c->with_max ? 2 : 1));
}

/* Global pooling, mean only (_i = 0) and mean and max (_i = 1): the values by hand and
 * the gradient against finite differences (random inputs: no ties at the maxima). */
START_TEST(gpool_grad)
{
    int N = 3, C = 2, HW = 5, wm = _i, w = C * (wm ? 2 : 1);
    size_t nin = (size_t)N * C * HW, nout = (size_t)N * w;
    rng r;
    rng_seed(&r, 7);
    pool_ctx c = {N, C, HW, wm, dnew(nin), dnew(nout), dnew(nout)};
    drand_fill(&r, c.in, nin, -1, 1);
    drand_fill(&r, c.g, nout, -1, 1);
    pool_loss(&c);
    for (int n = 0; n < N; n++)
        for (int ch = 0; ch < C; ch++) {
            double s = 0, mx = -INFINITY;
            for (int i = 0; i < HW; i++) {
                double x = c.in[((size_t)ch * N + n) * HW + i];
                s += x;
                mx = x > mx ? x : mx;
            }
            ck_assert(fabs(s / HW - c.out[n * w + ch]) < 1e-15);
            if (wm)
                ck_assert(c.out[n * w + C + ch] == mx);
        }
    double *din = dnew(nin);
    gpool_backward_f64(din, c.g, c.in, N, C, HW, wm);
    check_fd("gpool", c.in, nin, din, pool_loss, &c, 1);
    free(c.in), free(c.g), free(c.out), free(din);
}
END_TEST

typedef struct dense_ctx {
    int N, I, O;
    double *in, *w, *b, *g, *out;
} dense_ctx;

static double dense_loss(void *p)
{
    dense_ctx *c = p;
    dense_forward_f64(c->out, c->in, c->w, c->b, c->N, c->I, c->O);
    return dot(c->out, c->g, (size_t)c->N * c->O);
}

START_TEST(dense_grad)
{
    int N = 4, I = 5, O = 3;
    rng r;
    rng_seed(&r, 8);
    dense_ctx c = {N, I, O, dnew(N * I), dnew(O * I), dnew(O), dnew(N * O), dnew(N * O)};
    drand_fill(&r, c.in, N * I, -1, 1);
    drand_fill(&r, c.w, O * I, -1, 1);
    drand_fill(&r, c.b, O, -1, 1);
    drand_fill(&r, c.g, N * O, -1, 1);
    dense_loss(&c);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            double s = c.b[o];
            for (int i = 0; i < I; i++)
                s += c.in[n * I + i] * c.w[o * I + i];
            ck_assert(fabs(s - c.out[n * O + o]) < 1e-12);
        }
    double *din = dnew(N * I), *dw = dnew(O * I), *db = dnew(O);
    dense_backward_f64(din, dw, db, c.g, c.in, c.w, N, I, O);
    check_fd("dense dinp", c.in, N * I, din, dense_loss, &c, 1);
    check_fd("dense dw", c.w, O * I, dw, dense_loss, &c, 1);
    check_fd("dense db", c.b, O, db, dense_loss, &c, 1);
    float *fin = tof(c.in, N * I), *fw = tof(c.w, O * I), *fb = tof(c.b, O), *fg = tof(c.g, N * O);
    float *fdin = fnew(N * I), *fdw = fnew(O * I), *fdb = fnew(O), *fout = fnew(N * O);
    dense_forward(fout, fin, fw, fb, N, I, O);
    check_float("dense out", fout, c.out, N * O);
    dense_backward(fdin, fdw, fdb, fg, fin, fw, N, I, O);
    check_float("dense dinp", fdin, din, N * I);
    check_float("dense dw", fdw, dw, O * I);
    check_float("dense db", fdb, db, O);
    free(c.in), free(c.w), free(c.b), free(c.g), free(c.out), free(din), free(dw), free(db);
    free(fin), free(fw), free(fb), free(fg), free(fdin), free(fdw), free(fdb), free(fout);
}
END_TEST

START_TEST(layout_roundtrip)
{
    int N = 2, C = 3, HW = 4;
    double in[24], out[24], back[24] = {0};
    for (int i = 0; i < 24; i++)
        in[i] = i;
    cnhw_to_nchw_forward_f64(out, in, N, C, HW);
    /* out[n][c][i] = in[c][n][i] */
    ck_assert(out[(1 * C + 2) * HW + 3] == in[(2 * N + 1) * HW + 3]);
    cnhw_to_nchw_backward_f64(back, out, N, C, HW);
    for (int i = 0; i < 24; i++)
        ck_assert(back[i] == in[i]);
}
END_TEST

/* ---- losses ------------------------------------------------------------------ */

typedef struct ce_ctx {
    int N, A;
    double *logits, *pi, *probs;
    uint8_t *legal;
} ce_ctx;

static double ce_loss(void *p)
{
    ce_ctx *c = p;
    return policy_ce_forward_f64(c->probs, c->logits, c->pi, c->legal, c->N, c->A, NULL);
}

START_TEST(policy_ce_grad)
{
    int N = 3, A = 7;
    rng r;
    rng_seed(&r, 9);
    ce_ctx c = {N, A, dnew(N * A), dnew(N * A), dnew(N * A), calloc(N * A, 1)};
    drand_fill(&r, c.logits, N * A, -2, 2);
    for (int n = 0; n < N; n++) {
        double s = 0;
        for (int a = 0; a < A; a++) {
            c.legal[n * A + a] = (a + n) % 3 != 0;
            c.pi[n * A + a] = c.legal[n * A + a] ? rng_uniform(&r) : 0;
            s += c.pi[n * A + a];
        }
        for (int a = 0; a < A; a++)
            c.pi[n * A + a] /= s;
    }
    c.pi[2 * A + 3] *= 0.5; /* a target summing to less than 1 */
    c.pi[0] = 0.3;          /* mass on an illegal move: ignored */
    double ent;
    double loss = policy_ce_forward_f64(c.probs, c.logits, c.pi, c.legal, N, A, &ent);
    /* direct formula */
    double want = 0, went = 0;
    for (int n = 0; n < N; n++) {
        double s = 0;
        for (int a = 0; a < A; a++)
            if (c.legal[n * A + a])
                s += exp(c.logits[n * A + a]);
        for (int a = 0; a < A; a++)
            if (c.legal[n * A + a]) {
                double p = exp(c.logits[n * A + a]) / s;
                ck_assert(fabs(p - c.probs[n * A + a]) < 1e-14);
                want -= c.pi[n * A + a] * log(p);
                went -= p * log(p);
            } else {
                ck_assert(c.probs[n * A + a] == 0);
            }
    }
    ck_assert(fabs(loss - want / N) < 1e-13);
    ck_assert(fabs(ent - went / N) < 1e-13);
    double *d = dnew(N * A);
    policy_ce_backward_f64(d, c.probs, c.pi, c.legal, N, A, 1.0 / N);
    check_fd("policy ce", c.logits, N * A, d, ce_loss, &c, 1);
    for (int i = 0; i < N * A; i++)
        if (!c.legal[i])
            ck_assert(d[i] == 0);
    float *fl = tof(c.logits, N * A), *fpi = tof(c.pi, N * A), *fp = fnew(N * A), *fd = fnew(N * A);
    double floss = policy_ce_forward(fp, fl, fpi, c.legal, N, A, NULL);
    ck_assert(fabs(floss - loss) < 1e-5);
    policy_ce_backward(fd, fp, fpi, c.legal, N, A, 1.0f / N);
    check_float("policy ce", fd, d, N * A);
    free(c.logits), free(c.pi), free(c.probs), free(c.legal), free(d), free(fl), free(fpi), free(fp), free(fd);
}
END_TEST

typedef struct mse_ctx {
    int N, P;
    double *v, *z;
} mse_ctx;

static double mse_loss(void *p)
{
    mse_ctx *c = p;
    return value_mse_forward_f64(c->v, c->z, c->N, c->P);
}

START_TEST(value_mse_grad)
{
    int N = 4, P = 3;
    rng r;
    rng_seed(&r, 10);
    mse_ctx c = {N, P, dnew(N * P), dnew(N * P)};
    drand_fill(&r, c.v, N * P, -1, 1);
    drand_fill(&r, c.z, N * P, -1, 1);
    double want = 0;
    for (int i = 0; i < N * P; i++)
        want += (c.v[i] - c.z[i]) * (c.v[i] - c.z[i]);
    ck_assert(fabs(mse_loss(&c) - want / (N * P)) < 1e-15);
    double *d = dnew(N * P);
    value_mse_backward_f64(d, c.v, c.z, N, P, 1.0);
    check_fd("value mse", c.v, N * P, d, mse_loss, &c, 1);
    free(c.v), free(c.z), free(d);
}
END_TEST


/* The fused forms equal the composition of the plain layers: bn + skip + ReLU forward
 * (train and eval), the masked backward, and the overwriting (_set) variants. */
START_TEST(fused_equal_composed)
{
    int C = 3, M = 20;
    size_t n = (size_t)C * M;
    rng r;
    rng_seed(&r, 12);
    double *in = dnew(n), *skip = dnew(n), *gam = dnew(C), *bet = dnew(C), *g = dnew(n);
    double *rm = dnew(C), *rv = dnew(C), *rm2 = dnew(C), *rv2 = dnew(C);
    drand_fill(&r, in, n, -2, 2);
    drand_fill(&r, skip, n, -1, 1);
    drand_fill(&r, gam, C, 0.5, 1.5);
    drand_fill(&r, bet, C, -0.5, 0.5);
    drand_fill(&r, g, n, -1, 1);
    drand_fill(&r, rm, C, -0.1, 0.1);
    drand_fill(&r, rv, C, 0.5, 1.5);
    memcpy(rm2, rm, sizeof(double) * C);
    memcpy(rv2, rv, sizeof(double) * C);
    double *fused = dnew(n), *comp = dnew(n), *m1 = dnew(C), *i1 = dnew(C), *m2 = dnew(C), *i2 = dnew(C);
    bn_act_forward_train_f64(fused, m1, i1, in, gam, bet, rm, rv, skip, 1, C, M, 1e-5);
    batchnorm_forward_train_f64(comp, m2, i2, in, gam, bet, rm2, rv2, C, M, 1e-5);
    residual_forward_f64(comp, comp, skip, n);
    relu_forward_f64(comp, comp, n);
    for (size_t i = 0; i < n; i++)
        ck_assert(fabs(fused[i] - comp[i]) < 1e-12);
    for (int c = 0; c < C; c++)
        ck_assert(rm[c] == rm2[c] && rv[c] == rv2[c]);
    bn_act_forward_eval_f64(fused, in, gam, bet, rm, rv, skip, 1, C, M, 1e-5);
    batchnorm_forward_eval_f64(comp, in, gam, bet, rm, rv, C, M, 1e-5);
    residual_forward_f64(comp, comp, skip, n);
    relu_forward_f64(comp, comp, n);
    for (size_t i = 0; i < n; i++)
        ck_assert(fabs(fused[i] - comp[i]) < 1e-12);
    /* backward through ReLU(bn(in)) */
    double *y = dnew(n), *d1 = dnew(n), *d2 = dnew(n), *tmp = dnew(n);
    double dg1[3] = {0}, db1[3] = {0}, dg2[3] = {0}, db2[3] = {0};
    bn_act_forward_train_f64(y, m1, i1, in, gam, bet, NULL, NULL, NULL, 1, C, M, 1e-5);
    for (size_t i = 0; i < n; i++)
        d1[i] = 123.0; /* overwritten by the _set form */
    bn_act_backward_f64(d1, dg1, db1, g, y, in, gam, m1, i1, C, M, 0);
    relu_backward_f64(tmp, g, y, n);
    batchnorm_backward_f64(d2, dg2, db2, tmp, in, gam, m1, i1, C, M);
    for (size_t i = 0; i < n; i++)
        ck_assert(fabs(d1[i] - d2[i]) < 1e-12);
    for (int c = 0; c < C; c++)
        ck_assert(fabs(dg1[c] - dg2[c]) < 1e-12 && fabs(db1[c] - db2[c]) < 1e-12);
    /* conv3x3_backward_set overwrites, conv3x3_backward accumulates */
    conv_dims d = {.N = 2, .IC = 2, .OC = 3, .H = 3, .W = 4, .hex = 1};
    size_t Mi = (size_t)d.N * d.H * d.W, nin = d.IC * Mi, nout = d.OC * Mi, nw = (size_t)d.OC * d.IC * 9;
    double *cin = dnew(nin), *w = dnew(nw), *go = dnew(nout), *sc = dnew(conv3x3_scratch_f64(d));
    double *a = dnew(nin), *b = dnew(nin), *dw = dnew(nw);
    drand_fill(&r, cin, nin, -1, 1);
    drand_fill(&r, w, nw, -1, 1);
    drand_fill(&r, go, nout, -1, 1);
    for (size_t i = 0; i < nin; i++)
        a[i] = 7.0;
    conv3x3_backward_set_f64(a, dw, go, cin, w, d, sc);
    conv3x3_backward_f64(b, NULL, go, cin, w, d, sc);
    for (size_t i = 0; i < nin; i++)
        ck_assert(fabs(a[i] - b[i]) < 1e-12);
    free(in), free(skip), free(gam), free(bet), free(g), free(rm), free(rv), free(rm2), free(rv2);
    free(fused), free(comp), free(m1), free(i1), free(m2), free(i2), free(y), free(d1), free(d2), free(tmp);
    free(cin), free(w), free(go), free(sc), free(a), free(b), free(dw);
}
END_TEST

/* ---- masked layers (mixed board sizes) ---------------------------------------- */

/* A (N*H*W) mask of boards padded at the top left: sample b's side[b] x side[b] board in
 * an H x W tensor. Returns the number of masked columns. */
static int make_mask(double *mask, int N, int H, int W, const int *side)
{
    int k = 0;
    for (int b = 0; b < N; b++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                k += (mask[(size_t)b * H * W + (size_t)y * W + x] = y < side[b] && x < side[b]);
    return k;
}

typedef struct mbn_ctx {
    int C, M, K, relu;    /* K masked columns */
    double *in, *gamma, *beta, *g, *out, *mean, *invstd, *mask, *skip, *shift;
} mbn_ctx;

/* The masked batch norm the trainer runs on one process: sums, then the normalisation. */
static double mbn_loss(void *p)
{
    mbn_ctx *c = p;
    double s[4], s2[4];
    bn_partial_sums_masked_f64(s, s2, c->in, c->shift, c->mask, c->C, c->M);
    bn_act_forward_sums_masked_f64(c->out, c->mean, c->invstd, c->in, c->shift, s, s2, c->K,
                                   c->gamma, c->beta, NULL, NULL, c->skip, c->relu, c->mask, c->C,
                                   c->M, 1e-5);
    return dot(c->out, c->g, (size_t)c->C * c->M);
}

/* Masked batch norm: (1) the gradient against central finite differences (every input,
 * the padding's included: the loss does not depend on it, and its gradient is exactly 0);
 * (2) the padding's outputs exactly 0, and on the board the outputs, running statistics
 * and gradients equal the plain batch norm's over the board's columns gathered into a
 * batch of their own (with the skip and ReLU too); (3) the eval form; (4) float against
 * double. */
START_TEST(batchnorm_masked)
{
    int C = 3, N = 3, H = 4, W = 4, side[3] = {4, 2, 3};
    int M = N * H * W;
    size_t n = (size_t)C * M;
    rng r;
    rng_seed(&r, 41);
    double *mask = dnew((size_t)M);
    int K = make_mask(mask, N, H, W, side);
    mbn_ctx c = {C, M, K, 0, dnew(n), dnew(C), dnew(C), dnew(n), dnew(n), dnew(C), dnew(C), mask,
                 NULL, dnew(C)};
    drand_fill(&r, c.in, n, -2, 2);
    drand_fill(&r, c.gamma, C, 0.5, 1.5);
    drand_fill(&r, c.beta, C, -1, 1);
    drand_fill(&r, c.g, n, -1, 1);
    drand_fill(&r, c.shift, C, -0.3, 0.3);
    mbn_loss(&c);
    double *din = dnew(n), *dgam = dnew(C), *dbet = dnew(C), sdy[3], sdyx[3];
    for (size_t i = 0; i < n; i++)
        din[i] = 99; /* overwritten, padding included */
    bn_backward_partial_sums_masked_f64(sdy, sdyx, dgam, dbet, c.g, NULL, c.in, c.mean, c.invstd, mask,
                                        C, M);
    bn_act_backward_sums_masked_f64(din, c.g, NULL, c.in, c.gamma, c.mean, c.invstd, sdy, sdyx, K, mask,
                                    C, M, 0);
    check_fd("masked bn dinp", c.in, n, din, mbn_loss, &c, 1);
    check_fd("masked bn dgamma", c.gamma, C, dgam, mbn_loss, &c, 1);
    check_fd("masked bn dbeta", c.beta, C, dbet, mbn_loss, &c, 1);
    for (int relu = 0; relu < 2; relu++) {
        /* the board's columns gathered: plain batch norm (+ skip, ReLU) on K columns */
        double *skip = dnew(n), *gin = dnew((size_t)C * K), *gsk = dnew((size_t)C * K);
        double *gg = dnew((size_t)C * K), *gout = dnew((size_t)C * K), *gdin = dnew((size_t)C * K);
        double gm[3], gis[3], gdg[3] = {0}, gdb[3] = {0}, rm[3] = {0.1, 0, -0.1}, rv[3] = {1, 2, 0.5};
        double rm2[3] = {0.1, 0, -0.1}, rv2[3] = {1, 2, 0.5};
        drand_fill(&r, skip, n, -1, 1);
        for (int ch = 0; ch < C; ch++)
            for (int j = 0, k = 0; j < M; j++)
                if (mask[j] != 0) {
                    gin[(size_t)ch * K + k] = c.in[(size_t)ch * M + j];
                    gsk[(size_t)ch * K + k] = skip[(size_t)ch * M + j];
                    gg[(size_t)ch * K + k++] = c.g[(size_t)ch * M + j];
                }
        bn_act_forward_train_f64(gout, gm, gis, gin, c.gamma, c.beta, rm2, rv2, gsk, relu, C, K, 1e-5);
        bn_act_backward_f64(gdin, gdg, gdb, gg, relu ? gout : NULL, gin, c.gamma, gm, gis, C, K, 0);
        double s[3], s2[3], dg[3] = {0}, db[3] = {0};
        double *out = dnew(n), *d = dnew(n), mean[3], is[3];
        bn_partial_sums_masked_f64(s, s2, c.in, rm, mask, C, M);
        bn_act_forward_sums_masked_f64(out, mean, is, c.in, rm, s, s2, K, c.gamma, c.beta, rm, rv, skip,
                                       relu, mask, C, M, 1e-5);
        bn_backward_partial_sums_masked_f64(sdy, sdyx, dg, db, c.g, relu ? out : NULL, c.in, mean, is,
                                            mask, C, M);
        bn_act_backward_sums_masked_f64(d, c.g, relu ? out : NULL, c.in, c.gamma, mean, is, sdy, sdyx,
                                        K, mask, C, M, 0);
        for (int ch = 0; ch < C; ch++) {
            ck_assert(fabs(mean[ch] - gm[ch]) < 1e-12 && fabs(is[ch] - gis[ch]) < 1e-9);
            ck_assert(fabs(rm[ch] - rm2[ch]) < 1e-12 && fabs(rv[ch] - rv2[ch]) < 1e-12);
            ck_assert(fabs(dg[ch] - gdg[ch]) < 1e-10 && fabs(db[ch] - gdb[ch]) < 1e-10);
            for (int j = 0, k = 0; j < M; j++) {
                size_t at = (size_t)ch * M + j;
                if (mask[j] == 0) {
                    ck_assert_msg(out[at] == 0 && d[at] == 0, "padding %d: out %g, grad %g", j, out[at], d[at]);
                    continue;
                }
                ck_assert(fabs(out[at] - gout[(size_t)ch * K + k]) < 1e-10);
                ck_assert(fabs(d[at] - gdin[(size_t)ch * K + k++]) < 1e-10);
            }
        }
        /* eval: the running statistics, the padding 0 */
        bn_act_forward_eval_masked_f64(out, c.in, c.gamma, c.beta, rm, rv, skip, relu, mask, C, M, 1e-5);
        bn_act_forward_eval_f64(d, c.in, c.gamma, c.beta, rm, rv, skip, relu, C, M, 1e-5);
        for (size_t i = 0; i < n; i++)
            ck_assert(out[i] == (mask[i % (size_t)M] != 0 ? d[i] : 0));
        free(skip), free(gin), free(gsk), free(gg), free(gout), free(gdin), free(out), free(d);
    }
    /* float against double */
    float *fin = tof(c.in, n), *fgam = tof(c.gamma, C), *fbet = tof(c.beta, C), *fg = tof(c.g, n);
    float *fmask = tof(mask, (size_t)M), *fsh = tof(c.shift, C), *fout = fnew(n), *fdin = fnew(n);
    float fmean[3], fis[3], fdg[3] = {0}, fdb[3] = {0};
    double fs[3], fs2[3];
    mbn_loss(&c);
    bn_partial_sums_masked(fs, fs2, fin, fsh, fmask, C, M);
    bn_act_forward_sums_masked(fout, fmean, fis, fin, fsh, fs, fs2, K, fgam, fbet, NULL, NULL, NULL, 0,
                               fmask, C, M, 1e-5f);
    check_float("masked bn out", fout, c.out, n);
    bn_backward_partial_sums_masked(fs, fs2, fdg, fdb, fg, NULL, fin, fmean, fis, fmask, C, M);
    bn_act_backward_sums_masked(fdin, fg, NULL, fin, fgam, fmean, fis, fs, fs2, K, fmask, C, M, 0);
    check_float("masked bn dinp", fdin, din, n);
    free(c.in), free(c.gamma), free(c.beta), free(c.g), free(c.out), free(c.mean), free(c.invstd);
    free(c.shift), free(mask), free(din), free(dgam), free(dbet);
    free(fin), free(fgam), free(fbet), free(fg), free(fmask), free(fsh), free(fout), free(fdin);
}
END_TEST

typedef struct mpool_ctx {
    int N, C, HW, with_max;
    double *in, *g, *out, *mask;
} mpool_ctx;

static double mpool_loss(void *p)
{
    mpool_ctx *c = p;
    gpool_forward_masked_f64(c->out, c->in, c->N, c->C, c->HW, c->with_max, c->mask);
    return dot(c->out, c->g, (size_t)c->N * c->C * (c->with_max ? 2 : 1));
}

/* Masked global pooling, mean (_i = 0) and mean and max (_i = 1): each sample's mean and
 * maximum over its own board (the padding holds values larger than any on the board, so a
 * maximum taken over the padding would show), the gradient against central finite
 * differences (0 on the padding), and a full board equal to the plain pooling. */
START_TEST(gpool_masked_grad)
{
    int N = 3, C = 2, H = 3, W = 3, HW = H * W, wm = _i, w = C * (wm ? 2 : 1), side[3] = {3, 1, 2};
    size_t nin = (size_t)N * C * HW, nout = (size_t)N * w;
    rng r;
    rng_seed(&r, 43);
    mpool_ctx c = {N, C, HW, wm, dnew(nin), dnew(nout), dnew(nout), dnew((size_t)N * HW)};
    make_mask(c.mask, N, H, W, side);
    drand_fill(&r, c.in, nin, -1, 1);
    for (size_t i = 0; i < nin; i++)
        if (c.mask[i % ((size_t)N * HW)] == 0)
            c.in[i] = 5 + (double)i; /* padding: larger than every point of a board */
    drand_fill(&r, c.g, nout, -1, 1);
    mpool_loss(&c);
    for (int b = 0; b < N; b++)
        for (int ch = 0; ch < C; ch++) {
            double s = 0, mx = -INFINITY;
            for (int y = 0; y < side[b]; y++)
                for (int x = 0; x < side[b]; x++) {
                    double v = c.in[((size_t)ch * N + b) * HW + (size_t)y * W + x];
                    s += v;
                    mx = v > mx ? v : mx;
                }
            ck_assert(fabs(s / (side[b] * side[b]) - c.out[b * w + ch]) < 1e-15);
            if (wm)
                ck_assert(c.out[b * w + C + ch] == mx);
        }
    double *din = dnew(nin);
    gpool_backward_masked_f64(din, c.g, c.in, N, C, HW, wm, c.mask);
    check_fd("masked gpool", c.in, nin, din, mpool_loss, &c, 1);
    /* every board full: the plain pooling, bit for bit */
    double *out2 = dnew(nout), *din2 = dnew(nin);
    for (size_t i = 0; i < (size_t)N * HW; i++)
        c.mask[i] = 1;
    mpool_loss(&c);
    gpool_forward_f64(out2, c.in, N, C, HW, wm);
    memset(din, 0, sizeof(double) * nin);
    gpool_backward_masked_f64(din, c.g, c.in, N, C, HW, wm, c.mask);
    gpool_backward_f64(din2, c.g, c.in, N, C, HW, wm);
    ck_assert(memcmp(out2, c.out, sizeof(double) * nout) == 0);
    ck_assert(memcmp(din, din2, sizeof(double) * nin) == 0);
    free(c.in), free(c.g), free(c.out), free(c.mask), free(din), free(out2), free(din2);
}
END_TEST

static Suite *layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, conv3x3_square);
    tcase_add_test(tc, conv3x3_hex);
    tcase_add_test(tc, conv3x3_winograd);
    tcase_add_test(tc, conv3x3_chunks);
    tcase_add_test(tc, conv3x3_parts);
    tcase_add_test(tc, conv1x1_grad);
    tcase_add_test(tc, batchnorm_grad);
    tcase_add_test(tc, batchnorm_running_and_eval);
    tcase_add_test(tc, elementwise_grads);
    tcase_add_loop_test(tc, gpool_grad, 0, 2);
    tcase_add_test(tc, dense_grad);
    tcase_add_test(tc, layout_roundtrip);
    tcase_add_test(tc, policy_ce_grad);
    tcase_add_test(tc, value_mse_grad);
    tcase_add_test(tc, fused_equal_composed);
    tcase_add_test(tc, batchnorm_masked);
    tcase_add_loop_test(tc, gpool_masked_grad, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(layers_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
