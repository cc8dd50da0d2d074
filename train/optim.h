/* optim.h — the optimizer and learning-rate schedule of the trainer.
 *
 * SGD with momentum (PyTorch's form: buf = momentum * buf + g; w -= lr * buf) with L2
 * weight decay in the gradient (net_train's backward adds weight_decay * w for conv and
 * dense weights only), or AdamW (Adam with decoupled weight decay, beta1 = momentum,
 * beta2 = 0.999, eps = 1e-8; the gradient then carries no L2 term). BN running mean/var
 * are never touched; the hex kernel mask is re-applied to the weights and the state
 * after every step.
 * Schedule over `total_steps`: linear warm-up from lr/warmup to lr over warmup_steps,
 * then constant, step (x0.1 at 50% and again at 75% of the steps), or cosine (from lr
 * to 0 at total_steps), never below lr * lr_floor; past total_steps the last value.
 * The state (momentum / Adam moments, step count) is plain arrays so it can be saved in
 * a checkpoint's /optim/ group and training resumes bit-identically.
 */
#ifndef GZ_TRAIN_OPTIM_H
#define GZ_TRAIN_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "nn/params.h"

typedef enum { OPTIM_SGD = 0, OPTIM_ADAM = 1 } optim_kind;
typedef enum { SCHED_CONSTANT = 0, SCHED_STEP = 1, SCHED_COSINE = 2 } sched_kind;

typedef struct optim {
    /* immutable after init */
    const nn_layout *L; /* borrowed */
    optim_kind kind;
    sched_kind sched;
    double lr, momentum, weight_decay, beta2, eps;
    int64_t warmup_steps, total_steps;
    double lr_floor; /* the schedule's factor never goes below this (after warm-up) */
    /* mutated by optim_step */
    int64_t step; /* steps taken */
    float *m;     /* (count) SGD momentum buffer / Adam first moment */
    float *v;     /* (count) Adam second moment (NULL for SGD) */
} optim;

/* Sets up o for layout L from the train section (optimizer, schedule, lr, momentum,
 * weight_decay, warmup_steps) and the run's total steps. Returns 0, or -1 with a
 * message (out of memory). Free with optim_deinit. */
int optim_init(optim *o, const nn_layout *L, const cfg_train *tc, int64_t total_steps, char *err,
               size_t errlen);
void optim_deinit(optim *o);

/* Learning rate of step `step` (0-based). */
double optim_lr(const optim *o, int64_t step);
/* The weight decay net_train's backward must add to the gradient (SGD: weight_decay;
 * AdamW: 0, it decays the weights itself). */
double optim_grad_weight_decay(const optim *o);
/* One step on params from grads (both flat, layout L); returns the lr used. */
double optim_step(optim *o, float *params, const float *grads);

#endif
