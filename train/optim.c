/* optim.c — SGD with momentum, AdamW, learning-rate schedules (see optim.h). */
#include "optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int optim_init(optim *o, const nn_layout *L, const cfg_train *tc, int64_t total_steps, char *err,
               size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->L = L;
    o->kind = strcmp(tc->optimizer, "adam") == 0 ? OPTIM_ADAM : OPTIM_SGD;
    o->sched = strcmp(tc->schedule, "cosine") == 0 ? SCHED_COSINE
               : strcmp(tc->schedule, "step") == 0 ? SCHED_STEP
                                                   : SCHED_CONSTANT;
    o->lr = tc->lr;
    o->momentum = tc->momentum;
    o->weight_decay = tc->weight_decay;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->warmup_steps = tc->warmup_steps;
    o->lr_floor = tc->lr_floor;
    o->total_steps = total_steps > 0 ? total_steps : 1;
    o->m = calloc(L->count, sizeof(float));
    o->v = o->kind == OPTIM_ADAM ? calloc(L->count, sizeof(float)) : NULL;
    if (!o->m || (o->kind == OPTIM_ADAM && !o->v)) {
        optim_deinit(o);
        snprintf(err, errlen, "out of memory for the optimizer state");
        return -1;
    }
    return 0;
}

void optim_deinit(optim *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}

double optim_lr(const optim *o, int64_t step)
{
    if (step < o->warmup_steps)
        return o->lr * (double)(step + 1) / (double)o->warmup_steps;
    double span = (double)(o->total_steps - o->warmup_steps);
    double frac = span > 0 ? (double)(step - o->warmup_steps) / span : 1.0;
    if (frac > 1)
        frac = 1;
    double f = 1.0;
    switch (o->sched) {
    case SCHED_STEP: f = frac >= 0.75 ? 0.01 : frac >= 0.5 ? 0.1 : 1.0; break;
    case SCHED_COSINE: f = 0.5 * (1.0 + cos(M_PI * frac)); break;
    default: break;
    }
    return o->lr * (f > o->lr_floor ? f : o->lr_floor);
}

double optim_grad_weight_decay(const optim *o)
{
    return o->kind == OPTIM_SGD ? o->weight_decay : 0.0;
}

double optim_step(optim *o, float *params, const float *grads)
{
    const nn_layout *L = o->L;
    double lr = optim_lr(o, o->step);
    float flr = (float)lr, mom = (float)o->momentum;
    if (o->kind == OPTIM_SGD) {
        for (int i = 0; i < L->ntensors; i++) {
            const nn_tensor *T = &L->t[i];
            if (!nn_tensor_trained(T->kind))
                continue;
            float *w = params + T->offset, *m = o->m + T->offset;
            const float *g = grads + T->offset;
            for (size_t j = 0; j < T->size; j++) {
                m[j] = mom * m[j] + g[j];
                w[j] -= flr * m[j];
            }
        }
    } else {
        double t = (double)(o->step + 1);
        float b1 = mom, b2 = (float)o->beta2;
        float c1 = (float)(1.0 / (1.0 - pow(o->momentum, t)));
        float c2 = (float)(1.0 / (1.0 - pow(o->beta2, t)));
        float eps = (float)o->eps, wd = (float)o->weight_decay;
        for (int i = 0; i < L->ntensors; i++) {
            const nn_tensor *T = &L->t[i];
            if (!nn_tensor_trained(T->kind))
                continue;
            float *w = params + T->offset, *m = o->m + T->offset, *v = o->v + T->offset;
            const float *g = grads + T->offset;
            float dec = nn_tensor_decays(T->kind) ? wd : 0.0f;
            for (size_t j = 0; j < T->size; j++) {
                m[j] = b1 * m[j] + (1 - b1) * g[j];
                v[j] = b2 * v[j] + (1 - b2) * g[j] * g[j];
                w[j] -= flr * (m[j] * c1 / (sqrtf(v[j] * c2) + eps) + dec * w[j]);
            }
        }
    }
    net_apply_kernel_mask(L, params);
    net_apply_kernel_mask(L, o->m);
    if (o->v)
        net_apply_kernel_mask(L, o->v);
    o->step++;
    return lr;
}
