/* trainer.c — a training run (see trainer.h). */
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"

struct trainer {
    /* immutable after new */
    cfg_train tc;
    int B; /* batch size */
    /* owned, mutated */
    nn_params *p;
    train_net *net;
    optim opt;
    rng r;
    float *grads;
    float *x, *pi, *z;
    float *opp; /* (B, A) the opponent-reply targets (a net with the aux head), else NULL */
    int8_t *own; /* (B, rows*cols) the ownership targets (a net with the owner head), else NULL */
    float *qa;   /* (B, A) the action-value targets (an action_value head), else NULL */
    uint8_t *legal;
    uint8_t *rows, *cols; /* (B) each sample's board (mixed board sizes: dataset.h) */
    /* data-parallel (trainer_set_reducer): ranks > 1, and this rank's shard [lo, hi) */
    train_reducer red;
    int lo, hi;
};

void trainer_free(trainer *t)
{
    if (!t)
        return;
    train_net_free(t->net);
    optim_deinit(&t->opt);
    nn_params_free(t->p);
    free(t->grads), free(t->x), free(t->pi), free(t->z), free(t->legal), free(t->opp);
    free(t->own), free(t->qa), free(t->rows), free(t->cols);
    free(t);
}

trainer *trainer_new(nn_params *p, const cfg_train *tc, int64_t total_steps, uint64_t seed,
                     char *err, size_t errlen)
{
    trainer *t = calloc(1, sizeof *t);
    if (!t) {
        nn_params_free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->p = p;
    t->tc = *tc;
    t->B = tc->batch_size;
    const nn_layout *L = &p->layout;
    const nn_spec *s = &L->spec;
    rng_seed(&t->r, seed);
    t->net = train_net_new(L, t->B, err, errlen);
    if (!t->net || optim_init(&t->opt, L, tc, total_steps, err, errlen) < 0) {
        trainer_free(t);
        return NULL;
    }
    train_net_set_conv(t->net, !strcmp(tc->conv, "im2col") ? CONV_IM2COL : CONV_AUTO);
    size_t hw = (size_t)s->rows * s->cols;
    t->lo = 0;
    t->hi = t->B;
    t->grads = calloc(L->count, sizeof(float));
    t->x = malloc(sizeof(float) * (size_t)t->B * s->planes * hw);
    t->pi = malloc(sizeof(float) * (size_t)t->B * s->actions);
    t->z = malloc(sizeof(float) * (size_t)t->B * s->players);
    t->legal = malloc((size_t)t->B * s->actions);
    t->rows = malloc((size_t)t->B);
    t->cols = malloc((size_t)t->B);
    if (s->aux_policy)
        t->opp = calloc((size_t)t->B * s->actions, sizeof(float));
    if (s->aux_owner)
        t->own = malloc((size_t)t->B * hw);
    bool av = s->policy == NN_POLICY_ACTION_VALUE;
    if (av)
        t->qa = malloc(sizeof(float) * (size_t)t->B * s->actions);
    if (!t->grads || !t->x || !t->pi || !t->z || !t->legal || !t->rows || !t->cols ||
        (s->aux_policy && !t->opp) ||
        (s->aux_owner && !t->own) || (av && !t->qa)) {
        snprintf(err, errlen, "out of memory for batch %d", t->B);
        trainer_free(t);
        return NULL;
    }
    return t;
}

int trainer_set_reducer(trainer *t, const train_reducer *r, char *err, size_t errlen)
{
    memset(&t->red, 0, sizeof t->red);
    t->lo = 0;
    t->hi = t->B;
    if (!r || r->ranks <= 1) {
        train_net_set_reducer(t->net, NULL);
        return 0;
    }
    if (t->B < r->ranks || r->rank < 0 || r->rank >= r->ranks) {
        snprintf(err, errlen, "train.batch_size %d is smaller than the %d ranks sharing it: "
                 "every rank needs at least one sample of each batch", t->B, r->ranks);
        return -1;
    }
    t->red = *r;
    t->lo = (int)((long long)t->B * r->rank / r->ranks);
    t->hi = (int)((long long)t->B * (r->rank + 1) / r->ranks);
    train_net_set_reducer(t->net, r);
    return 0;
}

nn_params *trainer_params(trainer *t) { return t->p; }
const optim *trainer_optim(const trainer *t) { return &t->opt; }
int64_t trainer_step_count(const trainer *t) { return t->opt.step; }

/* The total of losses l as the trainer weighs it: opp / own / qa say whether the aux heads
 * and the action-value head had targets. */
static double total_loss(const trainer *t, const train_losses *l, int opp, int own, int qa)
{
    return l->policy + t->tc.value_weight * l->value + l->l2 +
           (opp ? t->tc.aux_policy_weight * l->aux : 0) + (own ? t->tc.owner_weight * l->owner : 0) +
           (qa ? t->tc.action_value_weight * l->action_value : 0);
}

/* A step on a batch; opp the opponent-reply targets (a net with the aux head) or NULL, own
 * the ownership targets (a net with the owner head) or NULL, rows and cols the samples'
 * boards or NULL (every one full size). */
static int step_batch(trainer *t, int n, const float *x, const float *pi, const uint8_t *legal,
                      const float *z, const float *opp, const int8_t *own, const float *qa,
                      const uint8_t *rows, const uint8_t *cols, train_losses *losses, double *lr,
                      char *err, size_t errlen)
{
    train_losses l;
    train_net_set_boards(t->net, rows, cols);
    train_net_set_aux(t->net, opp, opp ? t->tc.aux_policy_weight : 0);
    train_net_set_owner(t->net, own, own ? t->tc.owner_weight : 0);
    train_net_set_action_values(t->net, qa, qa ? t->tc.action_value_weight : 0);
    double vw = t->tc.value_weight;
    train_net_forward(t->net, t->p->data, n, x, pi, legal, z, TRAIN_MODE_TRAIN, vw,
                      t->tc.weight_decay, &l);
    int64_t step = t->opt.step;
    if (t->red.ranks > 1) {
        /* data-parallel: the gradient and the losses of the whole batch, summed over the
         * ranks before any check, so every rank decides the same */
        train_net_backward(t->net, t->p->data, t->grads, vw, optim_grad_weight_decay(&t->opt));
        t->red.sum_f32(t->red.ctx, t->grads, t->p->layout.count);
        double sums[8] = {l.policy * n, l.value * n, l.entropy * n, l.value_acc * n, l.aux * n,
                          l.owner * n, n, l.action_value * n};
        t->red.sum_f64(t->red.ctx, sums, 8);
        l.policy = sums[0] / sums[6];
        l.value = sums[1] / sums[6];
        l.entropy = sums[2] / sums[6];
        l.value_acc = sums[3] / sums[6];
        l.aux = sums[4] / sums[6];
        l.owner = sums[5] / sums[6];
        l.action_value = sums[7] / sums[6];
        l.total = total_loss(t, &l, opp != NULL, own != NULL, qa != NULL);
    }
    if (!isfinite(l.total)) {
        snprintf(err, errlen, "step %lld: the loss is %g (policy %g, value %g): stopping",
                 (long long)step + 1, l.total, l.policy, l.value);
        return -1;
    }
    if (t->red.ranks <= 1)
        train_net_backward(t->net, t->p->data, t->grads, vw, optim_grad_weight_decay(&t->opt));
    double s = 0;
    for (size_t i = 0; i < t->p->layout.count; i++)
        s += t->grads[i];
    if (!isfinite(s)) {
        snprintf(err, errlen, "step %lld: a gradient is NaN or Inf: stopping", (long long)step + 1);
        return -1;
    }
    double used = optim_step(&t->opt, t->p->data, t->grads);
    if (lr)
        *lr = used;
    if (losses)
        *losses = l;
    return 0;
}

int trainer_step_batch(trainer *t, int n, const float *x, const float *pi, const uint8_t *legal,
                       const float *z, train_losses *losses, double *lr, char *err, size_t errlen)
{
    return step_batch(t, n, x, pi, legal, z, NULL, NULL, NULL, NULL, NULL, losses, lr, err, errlen);
}

int trainer_step(trainer *t, const dataset *d, train_losses *losses, double *lr, char *err,
                 size_t errlen)
{
    dataset_sample_part(d, &t->r, t->B, t->lo, t->hi, 1, t->x, t->pi, t->legal, t->z, t->opp,
                        t->own, t->qa, t->rows, t->cols);
    return step_batch(t, t->hi - t->lo, t->x, t->pi, t->legal, t->z, t->opp, t->own, t->qa, t->rows,
                      t->cols, losses, lr, err, errlen);
}

int64_t trainer_validate(trainer *t, const dataset *d, int64_t max_samples, train_losses *losses)
{
    int64_t n = dataset_val_count(d);
    if (max_samples > 0 && n > max_samples)
        n = max_samples;
    if (n == 0)
        return 0;
    train_losses sum = {0};
    train_net_set_aux(t->net, t->opp, t->opp ? t->tc.aux_policy_weight : 0);
    train_net_set_owner(t->net, t->own, t->own ? t->tc.owner_weight : 0);
    train_net_set_action_values(t->net, t->qa, t->qa ? t->tc.action_value_weight : 0);
    for (int64_t at = 0; at < n; at += t->B) {
        int m = (int)(n - at < t->B ? n - at : t->B);
        dataset_val_batch(d, at, m, t->x, t->pi, t->legal, t->z, t->opp, t->own, t->qa, t->rows,
                          t->cols);
        train_net_set_boards(t->net, t->rows, t->cols);
        train_losses l;
        train_net_forward(t->net, t->p->data, m, t->x, t->pi, t->legal, t->z, TRAIN_MODE_EVAL,
                          t->tc.value_weight, t->tc.weight_decay, &l);
        sum.policy += l.policy * m;
        sum.value += l.value * m;
        sum.entropy += l.entropy * m;
        sum.value_acc += l.value_acc * m;
        sum.aux += l.aux * m;
        sum.owner += l.owner * m;
        sum.action_value += l.action_value * m;
        sum.l2 = l.l2;
    }
    sum.policy /= (double)n;
    sum.value /= (double)n;
    sum.entropy /= (double)n;
    sum.value_acc /= (double)n;
    sum.aux /= (double)n;
    sum.owner /= (double)n;
    sum.action_value /= (double)n;
    sum.total = total_loss(t, &sum, t->opp != NULL, t->own != NULL, t->qa != NULL);
    *losses = sum;
    return n;
}

/* 64-bit integers as four exact 16-bit pieces in floats. */
static void u64_to_f(uint64_t v, float *out)
{
    for (int k = 0; k < 4; k++)
        out[k] = (float)((v >> (16 * k)) & 0xffff);
}

static int f_to_u64(const float *in, uint64_t *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        if (!(in[k] >= 0 && in[k] <= 65535 && in[k] == floorf(in[k])))
            return -1;
        *v |= (uint64_t)in[k] << (16 * k);
    }
    return 0;
}

/* /optim/state: optimizer kind, step, total steps, rng (4 words): 7 u64 as 28 floats. */
#define STATE_WORDS 7

int trainer_save(trainer *t, const char *path, const nn_ckpt_meta *meta, char *err, size_t errlen)
{
    float state[STATE_WORDS * 4];
    uint64_t words[STATE_WORDS] = {(uint64_t)t->opt.kind, (uint64_t)t->opt.step,
                                   (uint64_t)t->opt.total_steps, t->r.s[0], t->r.s[1], t->r.s[2],
                                   t->r.s[3]};
    for (int k = 0; k < STATE_WORDS; k++)
        u64_to_f(words[k], state + 4 * k);
    size_t count = t->p->layout.count;
    nn_ckpt_extra ex[3] = {{"state", state, STATE_WORDS * 4}, {"m", t->opt.m, count}, {"v", t->opt.v, count}};
    return nn_ckpt_save(path, t->p, meta, ex, t->opt.v ? 3 : 2, err, errlen);
}

int trainer_continue(trainer *t, const char *path, int64_t global_step, char *err, size_t errlen)
{
    float state[STATE_WORDS * 4];
    size_t count = t->p->layout.count;
    t->opt.step = global_step;
    nn_ckpt_extra es = {"state", state, STATE_WORDS * 4};
    int rc = nn_ckpt_read_extra(path, &es, err, errlen);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    uint64_t kind;
    if (f_to_u64(state, &kind) < 0 || kind != (uint64_t)t->opt.kind)
        return 0; /* another optimizer's state: start the moments afresh */
    nn_ckpt_extra em = {"m", t->opt.m, count};
    if ((rc = nn_ckpt_read_extra(path, &em, err, errlen)) != 0) {
        memset(t->opt.m, 0, sizeof(float) * count);
        return rc < 0 ? -1 : 0;
    }
    if (t->opt.v) {
        nn_ckpt_extra ev = {"v", t->opt.v, count};
        if ((rc = nn_ckpt_read_extra(path, &ev, err, errlen)) != 0) {
            memset(t->opt.m, 0, sizeof(float) * count);
            memset(t->opt.v, 0, sizeof(float) * count);
            return rc < 0 ? -1 : 0;
        }
    }
    return 0;
}

int trainer_resume(trainer *t, const char *path, char *err, size_t errlen)
{
    float state[STATE_WORDS * 4];
    nn_ckpt_extra es = {"state", state, STATE_WORDS * 4};
    int rc = nn_ckpt_read_extra(path, &es, err, errlen);
    if (rc != 0)
        return rc;
    uint64_t w[STATE_WORDS];
    for (int k = 0; k < STATE_WORDS; k++)
        if (f_to_u64(state + 4 * k, &w[k]) < 0) {
            snprintf(err, errlen, "%s: /optim/state is corrupt", path);
            return -1;
        }
    if (w[0] != (uint64_t)t->opt.kind || w[1] >= w[2])
        return 1; /* another optimizer, or a finished run: start fresh */
    size_t count = t->p->layout.count;
    nn_ckpt_extra em = {"m", t->opt.m, count};
    if ((rc = nn_ckpt_read_extra(path, &em, err, errlen)) != 0)
        return rc < 0 ? -1 : 1;
    if (t->opt.v) {
        nn_ckpt_extra ev = {"v", t->opt.v, count};
        if ((rc = nn_ckpt_read_extra(path, &ev, err, errlen)) != 0) {
            memset(t->opt.m, 0, sizeof(float) * count);
            return rc < 0 ? -1 : 1;
        }
    }
    t->opt.step = (int64_t)w[1];
    t->opt.total_steps = (int64_t)w[2];
    for (int k = 0; k < 4; k++)
        t->r.s[k] = w[3 + k];
    return 0;
}
