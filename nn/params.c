#include "params.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rng.h"

const char *nn_tensor_kind_name(nn_tensor_kind k)
{
    switch (k) {
    case NN_T_CONV_WEIGHT: return "conv_weight";
    case NN_T_BN_GAMMA: return "bn_gamma";
    case NN_T_BN_BETA: return "bn_beta";
    case NN_T_BN_MEAN: return "bn_mean";
    case NN_T_BN_VAR: return "bn_var";
    case NN_T_DENSE_WEIGHT: return "dense_weight";
    case NN_T_BIAS: return "bias";
    }
    return "?";
}

static int add(nn_layout *L, const char *name, nn_tensor_kind kind, int ndim, int d0, int d1, int d2,
               int d3)
{
    assert(L->ntensors < NN_MAX_TENSORS);
    nn_tensor *t = &L->t[L->ntensors];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->ndim = ndim;
    int d[4] = {d0, d1, d2, d3};
    t->size = 1;
    for (int i = 0; i < 4; i++) {
        t->shape[i] = i < ndim ? d[i] : 0;
        if (i < ndim)
            t->size *= (size_t)d[i];
    }
    t->offset = L->count;
    L->count += t->size;
    return L->ntensors++;
}

static nn_bn_ix add_bn(nn_layout *L, const char *prefix, int n)
{
    char name[NN_NAME_LEN];
    nn_bn_ix ix;
    snprintf(name, sizeof name, "%s.gamma", prefix);
    ix.gamma = add(L, name, NN_T_BN_GAMMA, 1, n, 0, 0, 0);
    snprintf(name, sizeof name, "%s.beta", prefix);
    ix.beta = add(L, name, NN_T_BN_BETA, 1, n, 0, 0, 0);
    snprintf(name, sizeof name, "%s.mean", prefix);
    ix.mean = add(L, name, NN_T_BN_MEAN, 1, n, 0, 0, 0);
    snprintf(name, sizeof name, "%s.var", prefix);
    ix.var = add(L, name, NN_T_BN_VAR, 1, n, 0, 0, 0);
    return ix;
}

void nn_layout_init(nn_layout *L, const nn_spec *s)
{
    memset(L, 0, sizeof *L);
    L->spec = *s;
    int C = s->channels, H = s->head_channels, V = s->value_hidden;
    L->stem_conv = add(L, "stem.conv.weight", NN_T_CONV_WEIGHT, 4, C, s->planes, 3, 3);
    L->stem_bn = add_bn(L, "stem.bn", C);
    for (int b = 0; b < s->blocks; b++) {
        char name[NN_NAME_LEN];
        snprintf(name, sizeof name, "block%02d.conv1.weight", b);
        L->block[b].conv1 = add(L, name, NN_T_CONV_WEIGHT, 4, C, C, 3, 3);
        snprintf(name, sizeof name, "block%02d.bn1", b);
        L->block[b].bn1 = add_bn(L, name, C);
        snprintf(name, sizeof name, "block%02d.conv2.weight", b);
        L->block[b].conv2 = add(L, name, NN_T_CONV_WEIGHT, 4, C, C, 3, 3);
        snprintf(name, sizeof name, "block%02d.bn2", b);
        L->block[b].bn2 = add_bn(L, name, C);
    }
    L->pol_conv = add(L, "policy.conv.weight", NN_T_CONV_WEIGHT, 4, H, C, 1, 1);
    L->pol_bn = add_bn(L, "policy.bn", H);
    if (s->policy == NN_POLICY_CONV) {
        L->pol_out_w = add(L, "policy.out.weight", NN_T_CONV_WEIGHT, 4, 1, H, 1, 1);
        L->pol_out_b = add(L, "policy.out.bias", NN_T_BIAS, 1, 1, 0, 0, 0);
    } else {
        L->pol_out_w = add(L, "policy.fc.weight", NN_T_DENSE_WEIGHT, 2, s->actions,
                           H * s->rows * s->cols, 0, 0);
        L->pol_out_b = add(L, "policy.fc.bias", NN_T_BIAS, 1, s->actions, 0, 0, 0);
    }
    L->val_conv = add(L, "value.conv.weight", NN_T_CONV_WEIGHT, 4, H, C, 1, 1);
    L->val_bn = add_bn(L, "value.bn", H);
    L->val_fc1_w = add(L, "value.fc1.weight", NN_T_DENSE_WEIGHT, 2, V, nn_value_pool_width(s), 0, 0);
    L->val_fc1_b = add(L, "value.fc1.bias", NN_T_BIAS, 1, V, 0, 0, 0);
    L->val_fc2_w = add(L, "value.fc2.weight", NN_T_DENSE_WEIGHT, 2, nn_value_outputs(s), V, 0, 0);
    L->val_fc2_b = add(L, "value.fc2.bias", NN_T_BIAS, 1, nn_value_outputs(s), 0, 0, 0);
    L->pol_aux_w = L->pol_aux_b = -1;
    if (s->aux_policy) {
        L->pol_aux_w = add(L, "policy.aux.weight", NN_T_CONV_WEIGHT, 4, 1, H, 1, 1);
        L->pol_aux_b = add(L, "policy.aux.bias", NN_T_BIAS, 1, 1, 0, 0, 0);
    }
    L->own_w = L->own_b = -1;
    if (s->aux_owner) {
        L->own_w = add(L, "owner.weight", NN_T_CONV_WEIGHT, 4, s->players + 1, H, 1, 1);
        L->own_b = add(L, "owner.bias", NN_T_BIAS, 1, s->players + 1, 0, 0, 0);
    }
}

int nn_layout_find(const nn_layout *L, const char *name)
{
    for (int i = 0; i < L->ntensors; i++)
        if (!strcmp(L->t[i].name, name))
            return i;
    return -1;
}

static void set_neutral(nn_params *p)
{
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++) {
        float v = L->t[i].kind == NN_T_BN_GAMMA || L->t[i].kind == NN_T_BN_VAR ? 1.0f : 0.0f;
        float *x = nn_tensor_ptr(L, p->data, i);
        for (size_t j = 0; j < L->t[i].size; j++)
            x[j] = v;
    }
}

nn_params *nn_params_new(const nn_spec *s, char *err, size_t errlen)
{
    if (nn_spec_validate(s, err, errlen) < 0)
        return NULL;
    nn_params *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    nn_layout_init(&p->layout, s);
    size_t bytes = (p->layout.count * sizeof(float) + 63) & ~(size_t)63;
    p->data = aligned_alloc(64, bytes);
    if (!p->data) {
        snprintf(err, errlen, "out of memory (%zu parameters)", p->layout.count);
        free(p);
        return NULL;
    }
    set_neutral(p);
    return p;
}

void nn_params_free(nn_params *p)
{
    if (!p)
        return;
    free(p->data);
    free(p->calib);
    free(p);
}

uint64_t nn_params_checksum(const nn_params *p)
{
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)p->data;
    size_t n = p->layout.count * sizeof(float);
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

int nn_params_calibrated(const nn_params *p)
{
    return p->calib && p->calib->nact == 2 + 2 * p->layout.spec.blocks &&
           p->calib->params_checksum == nn_params_checksum(p);
}

nn_params *nn_params_clone(const nn_params *p)
{
    char err[64];
    nn_params *q = nn_params_new(&p->layout.spec, err, sizeof err);
    if (!q)
        return NULL;
    memcpy(q->data, p->data, p->layout.count * sizeof(float));
    if (p->calib) {
        q->calib = malloc(sizeof *q->calib);
        if (!q->calib) {
            nn_params_free(q);
            return NULL;
        }
        *q->calib = *p->calib;
    }
    return q;
}

int nn_params_average(nn_params *dst, const nn_params *const *src, int n, char *err,
                      size_t errlen)
{
    if (n < 1) {
        snprintf(err, errlen, "no models to average");
        return -1;
    }
    char *want = nn_spec_to_json(&dst->layout.spec);
    if (!want) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        char *got = nn_spec_to_json(&src[k]->layout.spec);
        int same = got && !strcmp(got, want) && src[k]->layout.count == dst->layout.count;
        free(got);
        if (!same) {
            snprintf(err, errlen, "another network (spec) than the model averaged into");
            free(want);
            return k + 1;
        }
    }
    free(want);
    size_t count = dst->layout.count;
    for (size_t i = 0; i < count; i++) {
        double sum = 0;
        for (int k = 0; k < n; k++)
            sum += src[k]->data[i];
        dst->data[i] = (float)(sum / n);
    }
    free(dst->calib);
    dst->calib = NULL;
    return 0;
}

void nn_params_init_he(nn_params *p, uint64_t seed)
{
    const nn_layout *L = &p->layout;
    rng r;
    rng_seed(&r, seed);
    set_neutral(p);
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *t = &L->t[i];
        if (t->kind != NN_T_CONV_WEIGHT && t->kind != NN_T_DENSE_WEIGHT)
            continue;
        double fan_in = (double)t->size / t->shape[0];
        if (t->ndim == 4 && t->shape[2] == 3 && L->spec.lattice == GAME_LATTICE_HEX)
            fan_in = fan_in * 7.0 / 9.0;
        bool last = i == L->pol_out_w || i == L->val_fc2_w || i == L->pol_aux_w ||
                    i == L->own_w;
        double sd = sqrt((last ? 1.0 : 2.0) / fan_in);
        float *x = nn_tensor_ptr(L, p->data, i);
        for (size_t j = 0; j < t->size; j++)
            x[j] = (float)(sd * rng_normal(&r));
    }
    net_apply_kernel_mask(L, p->data);
}

nn_params *nn_params_adapt(const nn_params *src, const nn_spec *dst, uint64_t seed, char *report,
                           size_t rlen, char *err, size_t errlen)
{
    const nn_spec *a = &src->layout.spec;
    const char *field = a->planes != dst->planes ? "planes"
                        : a->lattice != dst->lattice ? "lattice"
                        : a->players != dst->players ? "players"
                        : a->blocks != dst->blocks ? "blocks"
                        : a->channels != dst->channels ? "channels"
                        : a->head_channels != dst->head_channels ? "head_channels"
                        : a->value_hidden != dst->value_hidden ? "value_hidden"
                        : a->policy != dst->policy ? "policy_head"
                        : a->trunk != dst->trunk ? "trunk"
                        : a->value != dst->value ? "value_head"
                        : a->value_pool != dst->value_pool ? "value_pool"
                        : NULL;
    if (field) {
        snprintf(err, errlen, "the model's %s differs from the config's net (only the board may "
                 "differ)", field);
        return NULL;
    }
    nn_params *p = nn_params_new(dst, err, errlen);
    if (!p)
        return NULL;
    nn_params_init_he(p, seed);
    const nn_layout *L = &p->layout, *S = &src->layout;
    int kept = 0, fresh = 0;
    size_t off = 0;
    report[0] = 0;
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *t = &L->t[i];
        int j = nn_layout_find(S, t->name);
        bool same = j >= 0 && S->t[j].ndim == t->ndim && S->t[j].size == t->size;
        for (int d = 0; same && d < t->ndim; d++)
            same = S->t[j].shape[d] == t->shape[d];
        if (same) {
            memcpy(nn_tensor_ptr(L, p->data, i), nn_tensor_cptr(S, src->data, j),
                   sizeof(float) * t->size);
            kept++;
        } else {
            fresh++;
            if (off < rlen)
                off += (size_t)snprintf(report + off, rlen - off, "%s%s", fresh > 1 ? ", " : "",
                                        t->name);
        }
    }
    if (fresh == 0)
        snprintf(report, rlen, "all %d tensors kept", kept);
    else if (off < rlen)
        snprintf(report + off, rlen - off, " initialised afresh (new, or another shape); %d tensors kept",
                 kept);
    net_apply_kernel_mask(L, p->data);
    return p;
}

void net_apply_kernel_mask(const nn_layout *L, float *flat)
{
    if (L->spec.lattice != GAME_LATTICE_HEX)
        return;
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *t = &L->t[i];
        if (t->kind != NN_T_CONV_WEIGHT || t->shape[2] != 3 || t->shape[3] != 3)
            continue;
        float *x = nn_tensor_ptr(L, flat, i);
        size_t kernels = t->size / 9;
        for (size_t k = 0; k < kernels; k++) {
            x[k * 9 + 0] = 0.0f; /* tap (0,0) */
            x[k * 9 + 8] = 0.0f; /* tap (2,2) */
        }
    }
}

int nn_layout_check_mask(const nn_layout *L, const float *flat)
{
    if (L->spec.lattice != GAME_LATTICE_HEX)
        return -1;
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *t = &L->t[i];
        if (t->kind != NN_T_CONV_WEIGHT || t->shape[2] != 3 || t->shape[3] != 3)
            continue;
        const float *x = nn_tensor_cptr(L, flat, i);
        size_t kernels = t->size / 9;
        for (size_t k = 0; k < kernels; k++)
            if (x[k * 9 + 0] != 0.0f || x[k * 9 + 8] != 0.0f)
                return i;
    }
    return -1;
}
