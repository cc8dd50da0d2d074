/* infer_dnnl.c — oneDNN (v2 C API) inference context (see infer.h).
 *
 * The graph, per batch-size plan:
 *   input (f32 NCHW, the caller's encoding) --reorder if the stem wants another layout-->
 *   stem conv 3x3 (+BN folded, ReLU post-op)                       -> A
 *   block b: conv1 3x3 (A -> B, ReLU post-op)
 *            conv2 3x3 (B -> A, sum post-op with A = the skip, then ReLU; plain trunk:
 *            no sum)
 *   head conv 1x1: the policy and value head convs concatenated (C -> 2H, ReLU), dst
 *            NHWC (f32, or bf16 below) so the tiny rest is contiguous plain C: policy 1x1
 *            (or dense) + bias, masked softmax; value global average pool, FC, ReLU, FC,
 *            tanh.
 * A and B have the layout the first trunk conv picks (format_tag any); the other convs
 * are pinned to it so no activation reorder happens inside the trunk. Weights are folded
 * once per context and reordered once per distinct layout a plan asks for (cached).
 * Plans are made per batch bucket (1,2,3,4,6,8,12,16,...,512): a batch of n runs in the
 * smallest bucket >= n (rows beyond n are zero padding), so at most 18 plans exist.
 * bf16: activations and weights bf16, biases f32, the head output bf16.
 * int8: the input reorder quantises the planes to u8 (scale 1 / input step); activations u8,
 *   weights s8 (reordered from the folded f32 with 1 / step per output channel), biases
 *   f32 in the unit of the s32 accumulator (oneDNN v2 adds the bias before the output
 *   scale), output scales src step * weight step / dst step per output channel, the
 *   skip's sum post-op scaled by skip step / dst step; the head conv writes bf16 (f32
 *   without avx512_bf16; output scale src step * weight step), so the heads are the same
 *   plain C as in fp32.
 * int8 with the direct kernels (nn_infer_set_int8_kernel; conv_vnni.h): no plans and no
 *   oneDNN at all; the same layers, scales and heads, one position at a time.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "infer.h"
#include "conv_vnni.h"
#include "conv_wino.h"
#include "heads_x86.h"
#include "engine/errmsg.h"

#define NN_MAX_LAYERS (2 + 2 * NN_MAX_BLOCKS)
#define NN_NBUCKETS 18
#define WCACHE 4

static const int buckets[NN_NBUCKETS] = {1,  2,  3,  4,  6,   8,   12,  16,  24,
                                         32, 48, 64, 96, 128, 192, 256, 384, 512};

typedef struct wentry {
    dnnl_memory_desc_t md;
    dnnl_memory_t mem; /* owned */
} wentry;

typedef struct layer {
    int ic, oc, k;
    bool sum; /* residual add post-op */
    float *w; /* folded OIHW f32 (owned) */
    float *b; /* folded bias (owned) */
    /* int8 only (owned, NULL otherwise): per output channel */
    float *wscale;   /* 1 / weight step: the f32 -> s8 weight reorder's scales */
    float *qb;       /* the bias in units of the s32 accumulator (src step * weight step) */
    float *oscale;   /* the conv's output scales */
    float sum_scale; /* skip step / dst step */
    wentry wc[2][WCACHE]; /* reordered weights [0] and biases [1] per layout */
} layer;

typedef struct plan {
    int n; /* bucket size */
    dnnl_memory_t in_user;  /* f32 nchw, owned */
    dnnl_memory_t in_conv;  /* stem src (== in_user when no reorder) */
    dnnl_primitive_t in_reorder; /* NULL when none */
    dnnl_memory_t a, b;     /* trunk activations */
    dnnl_memory_t cal;             /* calibration: f32 NCHW copy of a trunk tensor (owned) */
    dnnl_primitive_t cal_r[2];     /* calibration: a -> cal, b -> cal */
    dnnl_memory_t head;     /* f32 nhwc n x 2H */
    dnnl_primitive_t prim[NN_MAX_LAYERS];
    dnnl_memory_t w[NN_MAX_LAYERS], bias[NN_MAX_LAYERS]; /* borrowed from layer.wc */
} plan;

struct nn_infer {
    /* immutable after nn_infer_new */
    nn_spec spec;
    int rows, cols, hw, actions, nl, threads;
    nn_precision prec;
    dnnl_data_type_t adt, wdt; /* activations, weights: f32, bf16, or u8 and s8 */
    float in_scale;            /* int8: 1 / the input planes' step */
    dnnl_data_type_t hdt;      /* the head conv's output: f32, or bf16 (bf16 and int8 on a
                                  CPU with bf16) */
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    layer L[NN_MAX_LAYERS];
    float *pol_w, *pol_b;   /* conv head: (H), (1); dense: (A, H*hw), (A) */
    float *v1_w, *v1_b, *v2_w, *v2_b;
    bool hx;                /* the heads' dot products and pool by heads_x86.c (avx512f) */
    nn_int8_kernel kernel;  /* int8: which convolutions run (never auto) */
    /* the direct int8 path (kernel == NN_INT8_DIRECT or NN_INT8_WINOGRAD): */
    vnni_conv vc[NN_MAX_LAYERS];
    wino_conv wc[NN_MAX_LAYERS]; /* winograd: the trunk's 3x3 convs (v NULL: none) */
    bool wino_ready;        /* wc packed and wbuf allocated */
    size_t wset;            /* bytes of one thread's Winograd scratch */
    uint8_t *wbuf;          /* dthreads of them (owned) */
    int dthreads;           /* buffer sets, one a thread */
    size_t dset;            /* bytes of one set: input, A, B (padded u8), head (f32), scratch */
    size_t doff[4];         /* offsets of A, B, head, scratch in a set */
    uint8_t *dbuf;          /* dthreads sets, borders 0 (owned) */
    /* mutated */
    plan *plans[NN_NBUCKETS];
    float *scratch; /* per-position head scratch: logits[A] + hidden */
    float *din;     /* direct: the input planes of up to din_n positions (owned) */
    int din_n;
};

#define DN(call)                                                                                \
    do {                                                                                        \
        dnnl_status_t st_ = (call);                                                             \
        if (st_ != dnnl_success) {                                                              \
            gz_fail(err, errlen, "oneDNN: %s failed: %s (line %d)", #call, dnnl_status2str(st_),   \
                 __LINE__);                                                                     \
            goto out;                                                                           \
        }                                                                                       \
    } while (0)

int nn_cpu_has_bf16(void)
{
    /* ISA values are supersets by bits: avx512_core_amx contains avx512_core_bf16 */
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    return (isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) == (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}

int nn_cpu_has_vnni(void)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    unsigned v512 = (unsigned)dnnl_cpu_isa_avx512_core_vnni, v256 = (unsigned)dnnl_cpu_isa_avx2_vnni;
    return (isa & v512) == v512 || (isa & v256) == v256;
}

int nn_precision_parse(const char *word, nn_precision *out)
{
    if (!strcmp(word, "fp32"))
        *out = NN_PREC_FP32;
    else if (!strcmp(word, "bf16"))
        *out = NN_PREC_BF16;
    else if (!strcmp(word, "int8"))
        *out = NN_PREC_INT8;
    else if (!strcmp(word, "auto"))
        *out = NN_PREC_AUTO;
    else
        return -1;
    return 0;
}

const char *nn_precision_name(nn_precision p)
{
    switch (p) {
    case NN_PREC_FP32: return "fp32";
    case NN_PREC_BF16: return "bf16";
    case NN_PREC_INT8: return "int8";
    case NN_PREC_AUTO: return "auto";
    }
    return "?";
}

int nn_int8_check(const nn_params *p, char *err, size_t errlen)
{
    if (!nn_cpu_has_vnni())
        return gz_fail(err, errlen, "precision int8: this CPU has no VNNI (AVX512-VNNI, AVX-VNNI or "
                       "AMX) for oneDNN's u8s8 convolutions: use fp32 or bf16");
    if (!p->calib)
        return gz_fail(err, errlen, "precision int8: the model has no int8 calibration (make one "
                       "with gridzero quantize -m MODEL --data SAMPLES -o MODEL_INT8.h5)");
    if (!nn_params_calibrated(p))
        return gz_fail(err, errlen, "precision int8: the model's int8 calibration was measured on "
                       "other weights (run gridzero quantize again)");
    return 0;
}

int nn_cpu_has_amx(void)
{
    unsigned isa = (unsigned)dnnl_get_effective_cpu_isa(), amx = (unsigned)dnnl_cpu_isa_avx512_core_amx;
    return (isa & amx) == amx;
}

int nn_int8_preferred(const nn_spec *s)
{
    return nn_cpu_has_vnni() && (!nn_cpu_has_amx() || s->channels >= 64);
}

nn_precision nn_precision_resolve(nn_precision want, const nn_params *p)
{
    if (want != NN_PREC_AUTO)
        return want;
    char err[8];
    /* Measured (docs/benchmarks.md, int8): with AMX, int8 is 1.6-2x bf16 on a 64-channel trunk and
     * no faster on a 32-channel one (both run out of work for the tiles), so bf16 keeps
     * the narrow nets; with AVX512-VNNI alone, int8 is 2.4-4x fp32 at 32 and 64 channels. */
    if (nn_int8_check(p, err, sizeof err) == 0 && nn_int8_preferred(&p->layout.spec))
        return NN_PREC_INT8;
    return nn_cpu_has_bf16() ? NN_PREC_BF16 : NN_PREC_FP32;
}
nn_precision nn_infer_precision(const nn_infer *ctx) { return ctx->prec; }
const nn_spec *nn_infer_spec(const nn_infer *ctx) { return &ctx->spec; }

/* Folds BN (bn) into conv weights w (oc x per) -> fw, fb. */
static void fold(const nn_layout *Lt, const float *P, int wi, nn_bn_ix bn, int oc, int per, float *fw,
                 float *fb)
{
    const float *w = nn_tensor_cptr(Lt, P, wi);
    const float *g = nn_tensor_cptr(Lt, P, bn.gamma), *be = nn_tensor_cptr(Lt, P, bn.beta);
    const float *m = nn_tensor_cptr(Lt, P, bn.mean), *v = nn_tensor_cptr(Lt, P, bn.var);
    for (int o = 0; o < oc; o++) {
        float s = g[o] / sqrtf(v[o] + NN_BN_EPS);
        for (int i = 0; i < per; i++)
            fw[(size_t)o * per + i] = w[(size_t)o * per + i] * s;
        fb[o] = be[o] - m[o] * s;
    }
}

static float *dup_floats(const float *src, size_t n)
{
    float *d = malloc(sizeof(float) * (n ? n : 1));
    if (d)
        memcpy(d, src, sizeof(float) * n);
    return d;
}

static void plan_free(plan *p, int nl)
{
    if (!p)
        return;
    for (int i = 0; i < nl; i++)
        if (p->prim[i])
            dnnl_primitive_destroy(p->prim[i]);
    if (p->in_reorder)
        dnnl_primitive_destroy(p->in_reorder);
    if (p->cal)
        dnnl_memory_destroy(p->cal);
    for (int i = 0; i < 2; i++)
        if (p->cal_r[i])
            dnnl_primitive_destroy(p->cal_r[i]);
    if (p->in_conv && p->in_conv != p->in_user)
        dnnl_memory_destroy(p->in_conv);
    if (p->in_user)
        dnnl_memory_destroy(p->in_user);
    if (p->a)
        dnnl_memory_destroy(p->a);
    if (p->b)
        dnnl_memory_destroy(p->b);
    if (p->head)
        dnnl_memory_destroy(p->head);
    free(p);
}

void nn_infer_free(nn_infer *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < NN_NBUCKETS; i++)
        plan_free(ctx->plans[i], ctx->nl);
    for (int l = 0; l < ctx->nl; l++) {
        free(ctx->L[l].w);
        free(ctx->L[l].b);
        free(ctx->L[l].wscale);
        free(ctx->L[l].qb);
        free(ctx->L[l].oscale);
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < WCACHE; j++)
                if (ctx->L[l].wc[k][j].mem)
                    dnnl_memory_destroy(ctx->L[l].wc[k][j].mem);
    }
    for (int l = 0; l < ctx->nl; l++) {
        vnni_conv_free(&ctx->vc[l]);
        wino_conv_free(&ctx->wc[l]);
    }
    free(ctx->dbuf);
    free(ctx->wbuf);
    free(ctx->din);
    free(ctx->pol_w), free(ctx->pol_b), free(ctx->v1_w), free(ctx->v1_b), free(ctx->v2_w),
        free(ctx->v2_b), free(ctx->scratch);
    if (ctx->stream)
        dnnl_stream_destroy(ctx->stream);
    if (ctx->engine)
        dnnl_engine_destroy(ctx->engine);
    free(ctx);
}

/* The step of s8 weights w[per] (one output channel): symmetric, max |w| -> 127. (A
 * clip of least squared error instead changed nothing measurable on trained nets.) */
static float weight_step(const float *w, size_t per)
{
    float mx = 0;
    for (size_t i = 0; i < per; i++)
        mx = fmaxf(mx, fabsf(w[i]));
    return mx > 0 ? mx / 127.0f : 1.0f;
}

/* The step (real value of one unit) of a u8 activation whose largest value is mx. */
static float act_step(float mx) { return mx > 0 ? mx / 255.0f : 1.0f / 255.0f; }

/* int8: every layer's scales and quantised bias from its folded f32 weights and the
 * calibration (nn_calib's activation order: the input, then layer l's output is l + 1,
 * so layer l reads activation l). Returns 0, or -1 when out of memory. */
static int quantize_layers(nn_infer *ctx, const nn_calib *c)
{
    for (int l = 0; l < ctx->nl; l++) {
        layer *y = &ctx->L[l];
        bool head = l == ctx->nl - 1;
        size_t per = (size_t)y->ic * y->k * y->k;
        y->wscale = malloc(sizeof(float) * (size_t)y->oc);
        y->qb = malloc(sizeof(float) * (size_t)y->oc);
        y->oscale = malloc(sizeof(float) * (size_t)y->oc);
        if (!y->wscale || !y->qb || !y->oscale)
            return -1;
        float src = act_step(c->act_range[l]), dst = head ? 1.0f : act_step(c->act_range[l + 1]);
        if (l == 0)
            ctx->in_scale = 1.0f / src;
        for (int o = 0; o < y->oc; o++) {
            float ws = weight_step(y->w + (size_t)o * per, per);
            y->wscale[o] = 1.0f / ws;
            y->qb[o] = y->b[o] / (src * ws);
            y->oscale[o] = src * ws / dst;
        }
        /* the skip is the output of layer l - 2: activation l - 1 */
        y->sum_scale = y->sum ? act_step(c->act_range[l - 1]) / dst : 0.0f;
    }
    return 0;
}

nn_infer *nn_infer_new(const nn_params *p, int rows, int cols, nn_precision prec, int threads,
                       char *err, size_t errlen)
{
    const nn_layout *Lt = &p->layout;
    const nn_spec *s = &Lt->spec;
    const float *P = p->data;
    if (rows < 1 || cols < 1 || rows > GAME_MAX_SIDE || cols > GAME_MAX_SIDE) {
        gz_fail(err, errlen, "inference: board %dx%d out of range", rows, cols);
        return NULL;
    }
    if (nn_policy_is_fc(s) && (rows != s->rows || cols != s->cols)) {
        gz_fail(err, errlen, "inference: %s policy head: the net runs only on %dx%d, not %dx%d",
             nn_policy_name(s->policy), s->rows, s->cols, rows, cols);
        return NULL;
    }
    prec = nn_precision_resolve(prec, p);
    if (prec == NN_PREC_BF16 && !nn_cpu_has_bf16()) {
        gz_fail(err, errlen, "inference: precision bf16: this CPU has no native bf16 (avx512_bf16)");
        return NULL;
    }
    if (prec == NN_PREC_INT8 && nn_int8_check(p, err, errlen) < 0)
        return NULL;
    nn_infer *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        gz_fail(err, errlen, "out of memory");
        return NULL;
    }
    ctx->spec = *s;
    ctx->rows = rows;
    ctx->cols = cols;
    ctx->hw = rows * cols;
    ctx->actions = s->policy == NN_POLICY_CONV ? ctx->hw : s->actions;
    ctx->prec = prec;
    ctx->adt = prec == NN_PREC_BF16 ? dnnl_bf16 : prec == NN_PREC_INT8 ? dnnl_u8 : dnnl_f32;
    ctx->wdt = prec == NN_PREC_BF16 ? dnnl_bf16 : prec == NN_PREC_INT8 ? dnnl_s8 : dnnl_f32;
    /* the head conv's output is read once by the plain-C heads, from memory: bf16 halves
     * those bytes (7% of a 9x9 bf16 forward at batch 384); fp32 stays f32 throughout */
    ctx->hdt = prec != NN_PREC_FP32 && nn_cpu_has_bf16() ? dnnl_bf16 : dnnl_f32;
    ctx->threads = threads;
    ctx->hx = hx_ok();
    int C = s->channels, H = s->head_channels, V = s->value_hidden;
    ctx->nl = 2 + 2 * s->blocks;
    bool oom = false;
    /* stem, trunk, head (policy conv ++ value conv) */
    for (int l = 0; l < ctx->nl; l++) {
        layer *y = &ctx->L[l];
        bool head = l == ctx->nl - 1;
        y->ic = l == 0 ? s->planes : C;
        y->oc = head ? 2 * H : C;
        y->k = head ? 1 : 3;
        y->sum = !head && l > 0 && l % 2 == 0 && s->trunk == NN_TRUNK_RESIDUAL;
        size_t per = (size_t)y->ic * y->k * y->k;
        y->w = malloc(sizeof(float) * per * (size_t)y->oc);
        y->b = malloc(sizeof(float) * (size_t)y->oc);
        if (!y->w || !y->b) {
            oom = true;
            break;
        }
        if (l == 0) {
            fold(Lt, P, Lt->stem_conv, Lt->stem_bn, C, (int)per, y->w, y->b);
        } else if (!head) {
            const nn_block_ix *B = &Lt->block[(l - 1) / 2];
            if (l % 2 == 1)
                fold(Lt, P, B->conv1, B->bn1, C, (int)per, y->w, y->b);
            else
                fold(Lt, P, B->conv2, B->bn2, C, (int)per, y->w, y->b);
        } else {
            fold(Lt, P, Lt->pol_conv, Lt->pol_bn, H, (int)per, y->w, y->b);
            fold(Lt, P, Lt->val_conv, Lt->val_bn, H, (int)per, y->w + (size_t)H * per, y->b + H);
        }
    }
    if (!oom) {
        ctx->pol_w = dup_floats(nn_tensor_cptr(Lt, P, Lt->pol_out_w), Lt->t[Lt->pol_out_w].size);
        ctx->pol_b = dup_floats(nn_tensor_cptr(Lt, P, Lt->pol_out_b), Lt->t[Lt->pol_out_b].size);
        ctx->v1_w = dup_floats(nn_tensor_cptr(Lt, P, Lt->val_fc1_w), Lt->t[Lt->val_fc1_w].size);
        ctx->v1_b = dup_floats(nn_tensor_cptr(Lt, P, Lt->val_fc1_b), (size_t)V);
        ctx->v2_w = dup_floats(nn_tensor_cptr(Lt, P, Lt->val_fc2_w), Lt->t[Lt->val_fc2_w].size);
        ctx->v2_b = dup_floats(nn_tensor_cptr(Lt, P, Lt->val_fc2_b), Lt->t[Lt->val_fc2_b].size);
        ctx->scratch = malloc(sizeof(float) * (size_t)(ctx->actions + 2 * H + V + 8 +
                                                       (size_t)ctx->hw * 2 * H));
        oom = !ctx->pol_w || !ctx->pol_b || !ctx->v1_w || !ctx->v1_b || !ctx->v2_w || !ctx->v2_b ||
              !ctx->scratch;
    }
    if (!oom && prec == NN_PREC_INT8)
        oom = quantize_layers(ctx, p->calib) < 0;
    if (oom) {
        gz_fail(err, errlen, "out of memory");
        nn_infer_free(ctx);
        return NULL;
    }
    DN(dnnl_engine_create(&ctx->engine, dnnl_cpu, 0));
    DN(dnnl_stream_create(&ctx->stream, ctx->engine, dnnl_stream_default_flags));
    ctx->kernel = NN_INT8_ONEDNN;
    if (nn_infer_set_int8_kernel(ctx, NN_INT8_AUTO, err, errlen) < 0)
        goto out;
    return ctx;
out:
    nn_infer_free(ctx);
    return NULL;
}

/* The memory of layer l's weights (which=0) or bias (1) in layout want, reordering the
 * folded f32 array once per distinct layout. */
static int get_weights(nn_infer *ctx, int l, int which, const dnnl_memory_desc_t *want,
                       dnnl_memory_t *out, char *err, size_t errlen)
{
    layer *y = &ctx->L[l];
    int slot = -1;
    for (int j = 0; j < WCACHE; j++) {
        if (y->wc[which][j].mem && dnnl_memory_desc_equal(&y->wc[which][j].md, want)) {
            *out = y->wc[which][j].mem;
            return 0;
        }
        if (!y->wc[which][j].mem && slot < 0)
            slot = j;
    }
    if (slot < 0)
        return gz_fail(err, errlen, "oneDNN: layer %d: too many weight layouts", l);
    int rc = -1;
    dnnl_memory_desc_t umd;
    dnnl_memory_t user = NULL, mem = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    dnnl_primitive_attr_t attr = NULL;
    bool q8 = ctx->prec == NN_PREC_INT8;
    if (which == 0) {
        dnnl_dims_t d = {y->oc, y->ic, y->k, y->k};
        DN(dnnl_memory_desc_init_by_tag(&umd, 4, d, dnnl_f32, dnnl_oihw));
    } else {
        dnnl_dims_t d = {y->oc};
        DN(dnnl_memory_desc_init_by_tag(&umd, 1, d, dnnl_f32, dnnl_x));
    }
    void *src = which == 0 ? (void *)y->w : q8 ? (void *)y->qb : (void *)y->b;
    DN(dnnl_memory_create(&user, &umd, ctx->engine, src));
    DN(dnnl_memory_create(&mem, want, ctx->engine, DNNL_MEMORY_ALLOCATE));
    if (q8 && want->data_type == dnnl_s8) { /* s8 = round(w / step) per output channel (dim 0) */
        DN(dnnl_primitive_attr_create(&attr));
        DN(dnnl_primitive_attr_set_output_scales(attr, y->oc, 1 << 0, y->wscale));
    }
    DN(dnnl_reorder_primitive_desc_create(&rpd, &umd, ctx->engine, want, ctx->engine, attr));
    DN(dnnl_primitive_create(&r, rpd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, mem}};
    DN(dnnl_primitive_execute(r, ctx->stream, 2, args));
    DN(dnnl_stream_wait(ctx->stream));
    y->wc[which][slot].md = *want;
    y->wc[which][slot].mem = mem;
    *out = mem;
    mem = NULL;
    rc = 0;
out:
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (r)
        dnnl_primitive_destroy(r);
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    if (user)
        dnnl_memory_destroy(user);
    if (mem)
        dnnl_memory_destroy(mem);
    return rc;
}

/* A convolution primitive descriptor for layer l at batch n. src/dst NULL = any layout
 * of the context's types. */
static int conv_pd(nn_infer *ctx, int l, int n, const dnnl_memory_desc_t *src,
                   const dnnl_memory_desc_t *dst, dnnl_primitive_desc_t *pd, char *err, size_t errlen)
{
    layer *y = &ctx->L[l];
    int rc = -1;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_memory_desc_t smd, wmd, bmd, dmd;
    dnnl_dims_t sd = {n, y->ic, ctx->rows, ctx->cols}, dd = {n, y->oc, ctx->rows, ctx->cols};
    dnnl_dims_t wd = {y->oc, y->ic, y->k, y->k}, bd = {y->oc};
    dnnl_data_type_t sdt = ctx->adt, wdt = ctx->wdt, ddt = ctx->adt;
    if (src)
        smd = *src;
    else
        DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, sdt, dnnl_format_tag_any));
    if (dst)
        dmd = *dst;
    else
        DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, ddt, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 4, wd, wdt, dnnl_format_tag_any));
    DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    dnnl_dims_t strides = {1, 1}, pad = {y->k / 2, y->k / 2};
    DN(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &smd,
                                          &wmd, &bmd, &dmd, strides, pad, pad));
    DN(dnnl_primitive_attr_create(&attr));
    DN(dnnl_post_ops_create(&po));
    if (wdt == dnnl_s8)
        DN(dnnl_primitive_attr_set_output_scales(attr, y->oc, 1 << 1, y->oscale));
    if (y->sum)
        DN(dnnl_post_ops_append_sum(po, ctx->prec == NN_PREC_INT8 ? y->sum_scale : 1.0f));
    DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    DN(dnnl_primitive_attr_set_post_ops(attr, po));
    DN(dnnl_primitive_desc_create(pd, &cd, attr, ctx->engine, NULL));
    rc = 0;
out:
    if (po)
        dnnl_post_ops_destroy(po);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return rc;
}

/* OpenMP's thread count is per calling thread, and oneDNN sizes a primitive's work split
 * when the primitive is created: set it before creating or running anything. */
static void set_threads(const nn_infer *ctx)
{
#ifdef _OPENMP
    if (ctx->threads > 0)
        omp_set_num_threads(ctx->threads);
#else
    (void)ctx;
#endif
}

static int bucket_of(int n)
{
    for (int i = 0; i < NN_NBUCKETS; i++)
        if (buckets[i] >= n)
            return i;
    return -1;
}

/* Builds (once) the plan of bucket bi. */
static plan *get_plan(nn_infer *ctx, int bi, char *err, size_t errlen)
{
    if (ctx->plans[bi])
        return ctx->plans[bi];
    set_threads(ctx);
    int n = buckets[bi], nl = ctx->nl;
    plan *pl = calloc(1, sizeof *pl);
    dnnl_primitive_desc_t pds[NN_MAX_LAYERS] = {0};
    dnnl_primitive_desc_t rpd = NULL;
    if (!pl) {
        gz_fail(err, errlen, "out of memory");
        return NULL;
    }
    pl->n = n;
    int head = nl - 1;
    /* The trunk layout: what the first trunk conv (or, without blocks, the head) picks. */
    const dnnl_memory_desc_t *amd = NULL, *bmd = NULL;
    dnnl_memory_desc_t hmd;
    dnnl_dims_t hd = {n, ctx->L[head].oc, ctx->rows, ctx->cols};
    DN(dnnl_memory_desc_init_by_tag(&hmd, 4, hd, ctx->hdt, dnnl_nhwc));
    if (nl > 2) {
        if (conv_pd(ctx, 1, n, NULL, NULL, &pds[1], err, errlen) < 0)
            goto out;
        amd = dnnl_primitive_desc_query_md(pds[1], dnnl_query_src_md, 0);
        bmd = dnnl_primitive_desc_query_md(pds[1], dnnl_query_dst_md, 0);
        for (int l = 2; l < head; l++)
            if (conv_pd(ctx, l, n, l % 2 ? amd : bmd, l % 2 ? bmd : amd, &pds[l], err, errlen) < 0)
                goto out;
        if (conv_pd(ctx, head, n, amd, &hmd, &pds[head], err, errlen) < 0)
            goto out;
    } else {
        if (conv_pd(ctx, head, n, NULL, &hmd, &pds[head], err, errlen) < 0)
            goto out;
        amd = dnnl_primitive_desc_query_md(pds[head], dnnl_query_src_md, 0);
    }
    if (conv_pd(ctx, 0, n, NULL, amd, &pds[0], err, errlen) < 0)
        goto out;
    /* memories */
    dnnl_memory_desc_t umd;
    dnnl_dims_t ud = {n, ctx->spec.planes, ctx->rows, ctx->cols};
    DN(dnnl_memory_desc_init_by_tag(&umd, 4, ud, dnnl_f32, dnnl_nchw));
    DN(dnnl_memory_create(&pl->in_user, &umd, ctx->engine, DNNL_MEMORY_ALLOCATE));
    void *h = NULL;
    DN(dnnl_memory_get_data_handle(pl->in_user, &h));
    memset(h, 0, dnnl_memory_desc_get_size(&umd));
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pds[0], dnnl_query_src_md, 0);
    if (dnnl_memory_desc_equal(smd, &umd)) {
        pl->in_conv = pl->in_user;
    } else {
        DN(dnnl_memory_create(&pl->in_conv, smd, ctx->engine, DNNL_MEMORY_ALLOCATE));
        dnnl_primitive_attr_t ra = NULL;
        if (ctx->prec == NN_PREC_INT8) { /* u8 = round(x / input step) */
            DN(dnnl_primitive_attr_create(&ra));
            dnnl_status_t st = dnnl_primitive_attr_set_output_scales(ra, 1, 0, &ctx->in_scale);
            if (st != dnnl_success)
                dnnl_primitive_attr_destroy(ra);
            DN(st);
        }
        dnnl_status_t st = dnnl_reorder_primitive_desc_create(&rpd, &umd, ctx->engine, smd,
                                                              ctx->engine, ra);
        if (ra)
            dnnl_primitive_attr_destroy(ra);
        DN(st);
        DN(dnnl_primitive_create(&pl->in_reorder, rpd));
    }
    DN(dnnl_memory_create(&pl->a, amd, ctx->engine, DNNL_MEMORY_ALLOCATE));
    if (bmd)
        DN(dnnl_memory_create(&pl->b, bmd, ctx->engine, DNNL_MEMORY_ALLOCATE));
    DN(dnnl_memory_create(&pl->head, &hmd, ctx->engine, DNNL_MEMORY_ALLOCATE));
    for (int l = 0; l < nl; l++) {
        if (get_weights(ctx, l, 0, dnnl_primitive_desc_query_md(pds[l], dnnl_query_weights_md, 0),
                        &pl->w[l], err, errlen) < 0 ||
            get_weights(ctx, l, 1, dnnl_primitive_desc_query_md(pds[l], dnnl_query_weights_md, 1),
                        &pl->bias[l], err, errlen) < 0)
            goto out;
        DN(dnnl_primitive_create(&pl->prim[l], pds[l]));
    }
    for (int l = 0; l < nl; l++)
        dnnl_primitive_desc_destroy(pds[l]);
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    ctx->plans[bi] = pl;
    return pl;
out:
    for (int l = 0; l < nl; l++)
        if (pds[l])
            dnnl_primitive_desc_destroy(pds[l]);
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    plan_free(pl, nl);
    return NULL;
}

float *nn_infer_input(nn_infer *ctx, int n, char *err, size_t errlen)
{
    int bi = n >= 1 ? bucket_of(n) : -1;
    if (bi < 0) {
        gz_fail(err, errlen, "inference: batch %d out of range 1..%d", n, NN_MAX_BATCH);
        return NULL;
    }
    if (ctx->kernel == NN_INT8_DIRECT || ctx->kernel == NN_INT8_WINOGRAD) {
        if (ctx->din_n < buckets[bi]) {
            float *d = realloc(ctx->din, sizeof(float) * (size_t)ctx->spec.planes * ctx->hw *
                                             (size_t)buckets[bi]);
            if (!d) {
                gz_fail(err, errlen, "out of memory");
                return NULL;
            }
            ctx->din = d;
            ctx->din_n = buckets[bi];
        }
        return ctx->din;
    }
    plan *pl = get_plan(ctx, bi, err, errlen);
    if (!pl)
        return NULL;
    void *h = NULL;
    if (dnnl_memory_get_data_handle(pl->in_user, &h) != dnnl_success) {
        gz_fail(err, errlen, "oneDNN: no input buffer");
        return NULL;
    }
    return h;
}

/* The heads' plain C runs per position at batch speed (a 9x9 net's heads are several
 * percent of its forward pass): clones for AVX-512 and AVX2 chosen at load time, dot
 * products in 8 partial sums so that they vectorise without -ffast-math. */
#define HEADS_HOT __attribute__((target_clones("avx512f", "avx2", "default")))

static inline float dot(const float *a, const float *b, int n)
{
    float acc[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            acc[k] += a[i + k] * b[i + k];
    float s = 0;
    for (; i < n; i++)
        s += a[i] * b[i];
    return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* out[n] = in[n] (bf16 to f32: the high half of the float's bits). Returns out. */
HEADS_HOT static const float *bf16_to_f32(float *out, const uint16_t *in, size_t n)
{
    uint32_t *o = (uint32_t *)(void *)out;
    for (size_t i = 0; i < n; i++)
        o[i] = (uint32_t)in[i] << 16;
    return out;
}

/* One position's heads from hbuf[hw][hs] (NHWC: H policy channels, then H value channels;
 * hs >= 2H floats a pixel).
 * The policy: logits of the legal points only (legal NULL: all), their softmax in the
 * same passes (0 on illegal points; all illegal: all 0). */
HEADS_HOT static void run_heads(const nn_infer *ctx, float *scratch, const float *hbuf, int hs,
                                const uint8_t *legal, float *policy, float *values, float *raw)
{
    const nn_spec *s = &ctx->spec;
    int H = s->head_channels, V = s->value_hidden, H2 = hs, hw = ctx->hw, A = ctx->actions;
    int W = nn_value_pool_width(s); /* pool: H means, then (mean_max) H maxima */
    float *pool = scratch, *hid = pool + W;
    float mx = -INFINITY;
    if (s->policy == NN_POLICY_CONV && ctx->hx && hx_cols_ok(H)) {
        hx_rows_dot(hbuf, (size_t)H2, hw, H, ctx->pol_w, policy); /* every point's */
        for (int p = 0; p < hw; p++) {
            float z = ctx->pol_b[0] + policy[p];
            z = !legal || legal[p] ? z : -INFINITY;
            policy[p] = z;
            mx = z > mx ? z : mx;
        }
    } else if (s->policy == NN_POLICY_CONV) {
        for (int p = 0; p < hw; p++) {
            if (legal && !legal[p])
                continue;
            float z = ctx->pol_b[0] + dot(ctx->pol_w, hbuf + (size_t)p * H2, H);
            policy[p] = z;
            mx = z > mx ? z : mx;
        }
    } else {
        /* W[a][h * hw + p] against x[p][h]; an action-value head's y_a / T (spec.h) */
        float scale = nn_policy_logit_scale(s);
        for (int a = 0; a < A; a++) {
            if (legal && !legal[a])
                continue;
            const float *w = ctx->pol_w + (size_t)a * H * hw;
            float acc = ctx->pol_b[a];
            for (int h = 0; h < H; h++)
                for (int p = 0; p < hw; p++)
                    acc += w[(size_t)h * hw + p] * hbuf[(size_t)p * H2 + h];
            acc *= scale;
            policy[a] = acc;
            mx = acc > mx ? acc : mx;
        }
    }
    double sum = 0;
    for (int a = 0; a < A; a++) {
        float e = (!legal || legal[a]) && mx > -INFINITY ? expf(policy[a] - mx) : 0.0f;
        policy[a] = e;
        sum += e;
    }
    float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f;
    for (int a = 0; a < A; a++)
        policy[a] *= inv;
    if (ctx->hx && hx_cols_ok(H)) {
        hx_pool(hbuf + H, (size_t)H2, hw, H, pool, W > H ? pool + H : NULL);
    } else {
        for (int h = 0; h < W; h++)
            pool[h] = 0; /* the maxima too: they are of ReLU outputs, >= 0 */
        for (int p = 0; p < hw; p++) {
            const float *x = hbuf + (size_t)p * H2 + H;
            for (int h = 0; h < H; h++)
                pool[h] += x[h];
            if (W > H)
                for (int h = 0; h < H; h++)
                    pool[H + h] = x[h] > pool[H + h] ? x[h] : pool[H + h];
        }
        for (int h = 0; h < H; h++)
            pool[h] /= (float)hw;
    }
    if (ctx->hx && hx_cols_ok(W)) {
        hx_rows_dot(ctx->v1_w, (size_t)W, V, W, pool, hid);
        for (int v = 0; v < V; v++) {
            float acc = ctx->v1_b[v] + hid[v];
            hid[v] = acc > 0 ? acc : 0;
        }
    } else {
        for (int v = 0; v < V; v++) {
            float acc = ctx->v1_b[v] + dot(ctx->v1_w + (size_t)v * W, pool, W);
            hid[v] = acc > 0 ? acc : 0;
        }
    }
    float out[NN_VALUE_MAX_OUTPUTS];
    for (int o = 0; o < nn_value_outputs(s); o++)
        out[o] = ctx->v2_b[o] + dot(ctx->v2_w + (size_t)o * V, hid, V);
    if (raw)
        memcpy(raw, out, sizeof(float) * (size_t)nn_value_outputs(s));
    nn_value_finish(s, out, values);
}

/* ---- the direct int8 path (conv_vnni.h) ---- */

int nn_int8_kernel_parse(const char *word, nn_int8_kernel *out)
{
    if (!strcmp(word, "auto"))
        *out = NN_INT8_AUTO;
    else if (!strcmp(word, "onednn"))
        *out = NN_INT8_ONEDNN;
    else if (!strcmp(word, "direct"))
        *out = NN_INT8_DIRECT;
    else if (!strcmp(word, "winograd"))
        *out = NN_INT8_WINOGRAD;
    else
        return -1;
    return 0;
}

const char *nn_int8_kernel_name(nn_int8_kernel k)
{
    return k == NN_INT8_DIRECT     ? "direct"
           : k == NN_INT8_WINOGRAD ? "winograd"
           : k == NN_INT8_ONEDNN   ? "onednn"
                                   : "auto";
}

nn_int8_kernel nn_infer_int8_kernel(const nn_infer *ctx) { return ctx->kernel; }

const char *nn_infer_kind(const nn_infer *ctx)
{
    if (ctx->prec != NN_PREC_INT8)
        return nn_precision_name(ctx->prec);
    return ctx->kernel == NN_INT8_DIRECT     ? "int8/direct"
           : ctx->kernel == NN_INT8_WINOGRAD ? "int8/winograd"
                                             : "int8/onednn";
}

int nn_cpu_has_avx512_vnni(void) { return vnni_cpu_ok(); }

/* Whether the direct kernels run ctx: 0, or -1 with the reason. */
static int direct_ok(const nn_infer *ctx, nn_int8_kernel k, char *err, size_t errlen)
{
    const char *name = nn_int8_kernel_name(k);
    if (!vnni_cpu_ok())
        return gz_fail(err, errlen, "int8 kernel %s: this CPU has no AVX512-VNNI (avx512f, "
                       "avx512bw and avx512_vnni): use net.int8_kernel onednn", name);
    if (ctx->spec.channels % 16)
        return gz_fail(err, errlen, "int8 kernel %s: needs net.channels a multiple of 16, "
                       "not %d: use net.int8_kernel onednn", name, ctx->spec.channels);
    return 0;
}

static size_t up64(size_t b) { return (b + 63) / 64 * 64; }

/* Packs every layer for the direct kernels and allocates the buffer sets. */
static int direct_setup(nn_infer *ctx, char *err, size_t errlen)
{
    int C = ctx->spec.channels;
    for (int l = 0; l < ctx->nl; l++) {
        layer *y = &ctx->L[l];
        int rc = l == 0 ? vnni_stem_init(&ctx->vc[l], y->w, y->oc, y->ic, y->k, y->wscale,
                                         y->qb, y->oscale)
                        : vnni_conv_init(&ctx->vc[l], y->w, y->oc, y->ic, y->k, y->wscale,
                                         y->qb, y->oscale, y->sum_scale);
        if (rc < 0)
            return gz_fail(err, errlen, "out of memory");
    }
#ifdef _OPENMP
    int nt = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
#else
    int nt = 1;
#endif
    ctx->dthreads = nt > 0 ? nt : 1;
    size_t in = up64(vnni_act_bytes(ctx->rows, ctx->cols, ctx->vc[0].icp));
    size_t act = up64(vnni_act_bytes(ctx->rows, ctx->cols, C));
    size_t head = up64(sizeof(float) * (size_t)ctx->hw * (size_t)ctx->vc[ctx->nl - 1].oc);
    size_t scr = up64(sizeof(float) * (size_t)(2 * ctx->spec.head_channels + ctx->spec.value_hidden + 8));
    ctx->doff[0] = in;
    ctx->doff[1] = in + act;
    ctx->doff[2] = in + 2 * act;
    ctx->doff[3] = in + 2 * act + head;
    ctx->dset = in + 2 * act + head + scr;
    ctx->dbuf = aligned_alloc(64, ctx->dset * (size_t)ctx->dthreads);
    if (!ctx->dbuf)
        return gz_fail(err, errlen, "out of memory");
    memset(ctx->dbuf, 0, ctx->dset * (size_t)ctx->dthreads);
    return 0;
}

/* Packs the trunk's 3x3 convs for Winograd (conv_wino.h) and allocates each thread's
 * scratch; the stem (few input channels) and the 1x1 head stay direct. */
static int wino_setup(nn_infer *ctx, char *err, size_t errlen)
{
    size_t need = 0;
    for (int l = 1; l < ctx->nl - 1; l++) {
        layer *y = &ctx->L[l];
        if (y->k != 3)
            continue;
        wino_conv_free(&ctx->wc[l]); /* an earlier attempt that ran out of memory */
        if (wino_conv_init(&ctx->wc[l], y->w, y->oc, y->ic, y->wscale, y->qb, y->oscale,
                           y->sum_scale, ctx->rows, ctx->cols) < 0)
            return gz_fail(err, errlen, "out of memory");
        size_t b = up64(wino_scratch_bytes(&ctx->wc[l]));
        need = b > need ? b : need;
    }
    ctx->wset = need;
    ctx->wbuf = aligned_alloc(64, need * (size_t)ctx->dthreads + 64);
    if (!ctx->wbuf)
        return gz_fail(err, errlen, "out of memory");
    ctx->wino_ready = true;
    return 0;
}

/* The live taps of the trunk's first 3x3 conv (9, or 7 on the hex lattice), 9 when none. */
static int trunk_taps(const nn_infer *ctx)
{
    for (int l = 1; l < ctx->nl - 1; l++)
        if (ctx->L[l].k == 3)
            return ctx->spec.lattice == GAME_LATTICE_HEX ? 7 : 9;
    return 9;
}

int nn_infer_set_int8_kernel(nn_infer *ctx, nn_int8_kernel k, char *err, size_t errlen)
{
    if (ctx->prec != NN_PREC_INT8)
        return 0;
    char why[256];
    if ((k == NN_INT8_DIRECT || k == NN_INT8_WINOGRAD) && direct_ok(ctx, k, err, errlen) < 0)
        return -1;
    if (k == NN_INT8_AUTO) {
        k = NN_INT8_ONEDNN;
        if (!nn_cpu_has_amx() && direct_ok(ctx, NN_INT8_DIRECT, why, sizeof why) == 0)
            k = wino_worth(ctx->rows, ctx->cols, ctx->spec.channels, trunk_taps(ctx))
                    ? NN_INT8_WINOGRAD
                    : NN_INT8_DIRECT;
    }
    if (k != NN_INT8_ONEDNN && !ctx->dbuf && direct_setup(ctx, err, errlen) < 0)
        return -1;
    if (k == NN_INT8_WINOGRAD && !ctx->wino_ready && wino_setup(ctx, err, errlen) < 0)
        return -1;
    ctx->kernel = k;
    return 0;
}

/* One position through the direct kernels (the trunk's 3x3 convs by Winograd under
 * NN_INT8_WINOGRAD) with buffer set t. */
static void direct_one(const nn_infer *ctx, int t, const float *in, const uint8_t *legal,
                       float *policy, float *values, float *raw)
{
    uint8_t *set = ctx->dbuf + ctx->dset * (size_t)t;
    uint8_t *x = set, *A = set + ctx->doff[0], *B = set + ctx->doff[1];
    float *head = (float *)(void *)(set + ctx->doff[2]), *scr = (float *)(void *)(set + ctx->doff[3]);
    int rows = ctx->rows, cols = ctx->cols, ip = ctx->vc[0].icp, C = ctx->spec.channels;
    bool wino = ctx->kernel == NN_INT8_WINOGRAD;
    void *ws = wino ? ctx->wbuf + ctx->wset * (size_t)t : NULL;
    vnni_quantize_input(in, ctx->spec.planes, rows, cols, ctx->in_scale, x, ip, ctx->vc[0].spread);
    vnni_conv_u8(&ctx->vc[0], x, ip, A, rows, cols);
    for (int l = 1; l < ctx->nl - 1; l++) { /* as layer_mems: odd A -> B, even B -> A */
        uint8_t *src = l % 2 ? A : B, *dst = l % 2 ? B : A;
        if (wino && ctx->wc[l].v)
            wino_conv_u8(&ctx->wc[l], src, C, dst, ws);
        else
            vnni_conv_u8(&ctx->vc[l], src, C, dst, rows, cols);
    }
    vnni_conv_f32(&ctx->vc[ctx->nl - 1], A, C, head, rows, cols);
    run_heads(ctx, scr, head, ctx->vc[ctx->nl - 1].oc, legal, policy, values, raw);
}

static void direct_run(nn_infer *ctx, int n, const float *input, const uint8_t *legal,
                       float *policy, float *values, float *raw)
{
    size_t per = (size_t)ctx->spec.planes * ctx->hw;
    int A = ctx->actions, P = ctx->spec.players;
    int nt = ctx->dthreads < n ? ctx->dthreads : n;
    if (nt <= 1) {
        for (int b = 0; b < n; b++)
            direct_one(ctx, 0, input + per * (size_t)b, legal ? legal + (size_t)b * A : NULL,
                       policy + (size_t)b * A, values + (size_t)b * P,
                       raw ? raw + (size_t)b * NN_VALUE_MAX_OUTPUTS : NULL);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int b = 0; b < n; b++)
        direct_one(ctx, omp_get_thread_num(), input + per * (size_t)b,
                   legal ? legal + (size_t)b * A : NULL, policy + (size_t)b * A,
                   values + (size_t)b * P, raw ? raw + (size_t)b * NN_VALUE_MAX_OUTPUTS : NULL);
#endif
}

/* Calibration: shows visit the trunk memory m (f32, a or b of pl) as activation act, in
 * plain NCHW order (a reorder into pl->cal, made on first use and kept with the plan). */
static int cal_visit(nn_infer *ctx, plan *pl, dnnl_memory_t m, int act, nn_act_visit visit, void *u,
                     char *err, size_t errlen)
{
    int rc = -1;
    const dnnl_memory_desc_t *md = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    DN(dnnl_memory_get_memory_desc(m, &md));
    int which = m == pl->a ? 0 : 1;
    if (!pl->cal) {
        dnnl_memory_desc_t cmd;
        dnnl_dims_t d = {pl->n, ctx->spec.channels, ctx->rows, ctx->cols};
        DN(dnnl_memory_desc_init_by_tag(&cmd, 4, d, dnnl_f32, dnnl_nchw));
        DN(dnnl_memory_create(&pl->cal, &cmd, ctx->engine, DNNL_MEMORY_ALLOCATE));
    }
    if (!pl->cal_r[which]) {
        const dnnl_memory_desc_t *cmd = NULL;
        DN(dnnl_memory_get_memory_desc(pl->cal, &cmd));
        DN(dnnl_reorder_primitive_desc_create(&rpd, md, ctx->engine, cmd, ctx->engine, NULL));
        DN(dnnl_primitive_create(&pl->cal_r[which], rpd));
    }
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, pl->cal}};
    DN(dnnl_primitive_execute(pl->cal_r[which], ctx->stream, 2, a));
    DN(dnnl_stream_wait(ctx->stream));
    void *h = NULL;
    DN(dnnl_memory_get_data_handle(pl->cal, &h));
    visit(u, act, h, pl->n, ctx->spec.channels, ctx->hw);
    rc = 0;
out:
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    return rc;
}

/* The memories layer l of pl reads and writes: the stem the (converted) input, the
 * trunk's convs alternate between A and B (conv2 writes A, which holds the skip), the
 * head conv reads A. */
static void layer_mems(const nn_infer *ctx, const plan *pl, int l, dnnl_memory_t *src,
                       dnnl_memory_t *dst)
{
    if (l == 0) {
        *src = pl->in_conv;
        *dst = pl->a;
    } else if (l == ctx->nl - 1) {
        *src = pl->a;
        *dst = pl->head;
    } else if (l % 2 == 1) {
        *src = pl->a;
        *dst = pl->b;
    } else {
        *src = pl->b;
        *dst = pl->a;
    }
}

/* Queues the input reorder (when the plan has one) and layers [0, upto) of pl on the
 * stream; with visit (calibration), waits after each layer and shows its output to it. */
static int exec_layers(nn_infer *ctx, plan *pl, int upto, nn_act_visit visit, void *u, char *err,
                       size_t errlen)
{
    int rc = -1;
    if (pl->in_reorder) {
        dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, pl->in_user}, {DNNL_ARG_TO, pl->in_conv}};
        DN(dnnl_primitive_execute(pl->in_reorder, ctx->stream, 2, a));
    }
    for (int l = 0; l < upto; l++) {
        dnnl_memory_t src, dst;
        layer_mems(ctx, pl, l, &src, &dst);
        dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, src},
                                {DNNL_ARG_WEIGHTS, pl->w[l]},
                                {DNNL_ARG_BIAS, pl->bias[l]},
                                {DNNL_ARG_DST, dst}};
        DN(dnnl_primitive_execute(pl->prim[l], ctx->stream, 4, a));
        if (visit) {
            DN(dnnl_stream_wait(ctx->stream));
            if (cal_visit(ctx, pl, dst, l + 1, visit, u, err, errlen) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    return rc;
}

int nn_infer_run(nn_infer *ctx, int n, const float *input, const uint8_t *legal, float *policy,
                 float *values, char *err, size_t errlen)
{
    return nn_infer_run_raw(ctx, n, input, legal, policy, values, NULL, err, errlen);
}

int nn_infer_run_raw(nn_infer *ctx, int n, const float *input, const uint8_t *legal, float *policy,
                     float *values, float *raw, char *err, size_t errlen)
{
    int bi = n >= 1 ? bucket_of(n) : -1;
    if (bi < 0)
        return gz_fail(err, errlen, "inference: batch %d out of range 1..%d", n, NN_MAX_BATCH);
    if (ctx->kernel == NN_INT8_DIRECT || ctx->kernel == NN_INT8_WINOGRAD) {
        direct_run(ctx, n, input, legal, policy, values, raw);
        return 0;
    }
    plan *pl = get_plan(ctx, bi, err, errlen);
    if (!pl)
        return -1;
    int rc = -1;
    void *in = NULL, *hb = NULL;
    DN(dnnl_memory_get_data_handle(pl->in_user, &in));
    size_t in_floats = (size_t)ctx->spec.planes * ctx->hw;
    if (input != in)
        memcpy(in, input, sizeof(float) * in_floats * (size_t)n);
    set_threads(ctx);
    if (exec_layers(ctx, pl, ctx->nl, NULL, NULL, err, errlen) < 0)
        goto out;
    DN(dnnl_stream_wait(ctx->stream));
    DN(dnnl_memory_get_data_handle(pl->head, &hb));
    size_t per = (size_t)ctx->hw * 2 * ctx->spec.head_channels;
    /* after run_heads' pool (at most 2H) and hidden units (V) */
    float *h32 = ctx->scratch + ctx->actions + 2 * ctx->spec.head_channels + ctx->spec.value_hidden + 8;
    for (int b = 0; b < n; b++)
        run_heads(ctx, ctx->scratch, ctx->hdt == dnnl_f32 ? (const float *)hb + per * (size_t)b
                                            : bf16_to_f32(h32, (const uint16_t *)hb + per * (size_t)b, per),
                  2 * ctx->spec.head_channels, legal ? legal + (size_t)b * ctx->actions : NULL, policy + (size_t)b * ctx->actions,
                  values + (size_t)b * ctx->spec.players,
                  raw ? raw + (size_t)b * NN_VALUE_MAX_OUTPUTS : NULL);
    rc = 0;
out:
    return rc;
}

int nn_infer_calibrate(nn_infer *ctx, int n, const float *input, nn_act_visit visit, void *u,
                       char *err, size_t errlen)
{
    if (ctx->prec != NN_PREC_FP32)
        return gz_fail(err, errlen, "calibration: needs an fp32 context, not %s",
                       nn_precision_name(ctx->prec));
    int bi = n >= 1 ? bucket_of(n) : -1;
    if (bi < 0 || buckets[bi] != n)
        return gz_fail(err, errlen, "calibration: batch %d is not one of the batch buckets", n);
    plan *pl = get_plan(ctx, bi, err, errlen);
    if (!pl)
        return -1;
    int rc = -1;
    void *in = NULL;
    DN(dnnl_memory_get_data_handle(pl->in_user, &in));
    memmove(in, input, sizeof(float) * (size_t)ctx->spec.planes * ctx->hw * (size_t)n);
    visit(u, 0, in, n, ctx->spec.planes, ctx->hw);
    set_threads(ctx);
    if (exec_layers(ctx, pl, ctx->nl - 1, visit, u, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    return rc;
}

int nn_calib_chunk(int n)
{
    int m = 1;
    for (int i = 0; i < NN_NBUCKETS && buckets[i] <= n && buckets[i] <= 256; i++)
        m = buckets[i];
    return m;
}
