/* quant.c — int8 calibration and gates (see quant.h). */
#include "quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/errmsg.h"
#include "engine/rng.h"
#include "engine/symmetry.h"
#include "infer.h"

#define QUANT_CHUNK 256

static void calib_visit(void *u, int act, const float *x, int n, int c, int hw)
{
    float *mx = u, m = mx[act];
    size_t count = (size_t)n * (size_t)c * (size_t)hw;
    for (size_t i = 0; i < count; i++)
        m = x[i] > m ? x[i] : m;
    mx[act] = m;
}

int nn_calibrate(nn_params *p, int rows, int cols, int n, const float *input, int threads,
                 char *err, size_t errlen)
{
    if (n < 1)
        return gz_fail(err, errlen, "calibration: no positions");
    nn_calib *c = calloc(1, sizeof *c);
    if (!c)
        return gz_fail(err, errlen, "out of memory");
    nn_infer *ctx = nn_infer_new(p, rows, cols, NN_PREC_FP32, threads, err, errlen);
    if (!ctx) {
        free(c);
        return -1;
    }
    size_t per = (size_t)p->layout.spec.planes * (size_t)rows * (size_t)cols;
    for (int i = 0; i < n;) {
        int m = nn_calib_chunk(n - i);
        if (nn_infer_calibrate(ctx, m, input + per * (size_t)i, calib_visit, c->act_range, err,
                               errlen) < 0) {
            nn_infer_free(ctx);
            free(c);
            return -1;
        }
        i += m;
    }
    nn_infer_free(ctx);
    c->nact = 2 + 2 * p->layout.spec.blocks;
    c->params_checksum = nn_params_checksum(p);
    c->positions = n;
    free(p->calib);
    p->calib = c;
    return 0;
}

/* The index of the largest p[a] over legal a (first on ties), -1 when none is legal. */
static int top1(const float *p, const uint8_t *legal, int actions)
{
    int best = -1;
    for (int a = 0; a < actions; a++)
        if ((!legal || legal[a]) && (best < 0 || p[a] > p[best]))
            best = a;
    return best;
}

/* fp32 on positions [i, i + m) under a random non-identity symmetry each, the policy
 * mapped back: the strict top-1 agreements with pa (fp32 on the positions as given). */
static int sym_agree(nn_infer *c32, const game *g, rng *r, int m, const float *in,
                     const uint8_t *lg, const float *pa, float *xs, uint8_t *ls, float *ps,
                     float *pm, float *vs, char *err, size_t errlen)
{
    int A = g->actions, P = g->planes;
    size_t per = (size_t)P * (size_t)g->rows * (size_t)g->cols;
    sym_id s[QUANT_CHUNK];
    for (int j = 0; j < m; j++) {
        s[j] = g->sym[1 + rng_below(r, (uint32_t)(g->nsym - 1))];
        sym_map_planes_f32(g, s[j], P, in + per * (size_t)j, xs + per * (size_t)j);
        if (lg)
            sym_map_policy_u8(g, s[j], lg + (size_t)A * j, ls + (size_t)A * j);
    }
    if (nn_infer_run(c32, m, xs, lg ? ls : NULL, ps, vs, err, errlen) < 0)
        return -1;
    int agree = 0;
    for (int j = 0; j < m; j++) {
        sym_map_policy_f32(g, sym_inverse(s[j]), ps + (size_t)A * j, pm);
        const uint8_t *l = lg ? lg + (size_t)A * j : NULL;
        agree += top1(pa + (size_t)A * j, l, A) == top1(pm, l, A);
    }
    return agree;
}

int nn_int8_measure(const nn_params *p, const game *g, int rows, int cols, int n,
                    const float *input, const uint8_t *legal, int threads, nn_int8_gates *gt,
                    char *err, size_t errlen)
{
    memset(gt, 0, sizeof *gt);
    if (n < 1)
        return gz_fail(err, errlen, "int8 gates: no positions");
    const nn_spec *s = &p->layout.spec;
    int A = s->policy == NN_POLICY_CONV ? rows * cols : s->actions, P = s->players;
    bool sym = g && g->nsym > 1 && s->policy == NN_POLICY_CONV && g->actions == A &&
               g->rows == rows && g->cols == cols;
    size_t per = (size_t)s->planes * (size_t)rows * (size_t)cols;
    int rc = -1;
    nn_infer *c8 = nn_infer_new(p, rows, cols, NN_PREC_INT8, threads, err, errlen);
    nn_infer *c32 = c8 ? nn_infer_new(p, rows, cols, NN_PREC_FP32, threads, err, errlen) : NULL;
    float *pa = malloc(sizeof(float) * QUANT_CHUNK * (size_t)A);
    float *pb = malloc(sizeof(float) * QUANT_CHUNK * (size_t)A);
    float *va = malloc(sizeof(float) * QUANT_CHUNK * (size_t)P);
    float *vb = malloc(sizeof(float) * QUANT_CHUNK * (size_t)P);
    float *xs = sym ? malloc(sizeof(float) * QUANT_CHUNK * per) : NULL;
    uint8_t *ls = sym ? malloc(QUANT_CHUNK * (size_t)A) : NULL;
    float *pm = sym ? malloc(sizeof(float) * (size_t)A) : NULL;
    if (!c32)
        goto out;
    if (!pa || !pb || !va || !vb || (sym && (!xs || !ls || !pm))) {
        gz_fail(err, errlen, "out of memory");
        goto out;
    }
    rng r;
    rng_seed(&r, 0x73796d);
    long agree = 0, strict = 0, sagree = 0;
    double sum_dv = 0, vmin = INFINITY, vmax = -INFINITY;
    for (int i = 0; i < n; i += QUANT_CHUNK) {
        int m = n - i < QUANT_CHUNK ? n - i : QUANT_CHUNK;
        const float *in = input + per * (size_t)i;
        const uint8_t *lg = legal ? legal + (size_t)A * (size_t)i : NULL;
        if (nn_infer_run(c32, m, in, lg, pa, va, err, errlen) < 0 ||
            nn_infer_run(c8, m, in, lg, pb, vb, err, errlen) < 0)
            goto out;
        for (int j = 0; j < m; j++) {
            const uint8_t *l = lg ? lg + (size_t)A * j : NULL;
            const float *fa = pa + (size_t)A * j;
            int ta = top1(fa, l, A), tb = top1(pb + (size_t)A * j, l, A);
            strict += ta == tb;
            agree += ta == tb || (tb >= 0 && fa[tb] >= fa[ta] * (1 - NN_INT8_TIE));
        }
        for (size_t k = 0; k < (size_t)m * (size_t)A; k++)
            gt->max_dprior = fmax(gt->max_dprior, fabs((double)pa[k] - pb[k]));
        for (size_t k = 0; k < (size_t)m * (size_t)P; k++) {
            double d = fabs((double)va[k] - vb[k]);
            vmin = fmin(vmin, va[k]), vmax = fmax(vmax, va[k]);
            sum_dv += d;
            gt->max_dvalue = fmax(gt->max_dvalue, d);
        }
        if (sym) {
            int k = sym_agree(c32, g, &r, m, in, lg, pa, xs, ls, pb, pm, vb, err, errlen);
            if (k < 0)
                goto out;
            sagree += k;
        }
    }
    gt->positions = n;
    gt->top1 = (double)agree / n;
    gt->top1_strict = (double)strict / n;
    gt->sym_top1 = sym ? (double)sagree / n : -1;
    /* an outcome head's values span [-1, 1]; a score head's (h of points to come) have no
     * fixed scale, so its differences are measured in half the span of its fp32 values
     * over these positions (at least 1 h unit), the same share of the range */
    gt->value_scale = s->value == NN_VALUE_SCORE ? fmax((vmax - vmin) / 2, 1.0) : 1.0;
    gt->mean_dvalue = sum_dv / ((double)n * P) / gt->value_scale;
    gt->max_dvalue /= gt->value_scale;
    gt->pass = gt->top1 >= NN_INT8_MIN_TOP1 && gt->mean_dvalue <= NN_INT8_MAX_MEAN_DVALUE;
    rc = 0;
out:
    nn_infer_free(c8);
    nn_infer_free(c32);
    free(pa), free(pb), free(va), free(vb), free(xs), free(ls), free(pm);
    return rc;
}

int nn_int8_calibrate_gated(nn_params *p, const game *g, int nc, const float *xc, int nh,
                            const float *xh, const uint8_t *lh, int threads, nn_int8_gates *gt,
                            char *err, size_t errlen)
{
    if (nn_calibrate(p, g->rows, g->cols, nc, xc, threads, err, errlen) < 0 ||
        nn_int8_measure(p, g, g->rows, g->cols, nh, xh, lh, threads, gt, err, errlen) < 0) {
        free(p->calib);
        p->calib = NULL;
        return -1;
    }
    p->calib->heldout = gt->positions;
    p->calib->top1 = (float)gt->top1;
    p->calib->top1_strict = (float)gt->top1_strict;
    p->calib->mean_dvalue = (float)gt->mean_dvalue;
    return 0;
}
