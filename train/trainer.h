/* trainer.h — one training run: parameters, the training context, the optimizer and
 * the data-sampling rng together, so a step, a validation pass, a checkpoint and a
 * resume are one call each (used by `gridzero train`, `gridzero bench train`, tests).
 *
 * Resume: trainer_save writes the weights (nn/checkpoint.h) and, under /optim/, the
 * optimizer state (momentum / Adam moments), the sampling rng, the optimizer's step
 * and its schedule length; trainer_resume reads them back, so train N steps ==
 * train N/2, save, resume, train N/2 bit for bit (same seed, data and thread count).
 * 64-bit integers are stored in /optim/ as 16-bit pieces in float32 (exact).
 * Single-threaded use (the network context runs its own threads inside: net_train.h).
 */
#ifndef GZ_TRAIN_TRAINER_H
#define GZ_TRAIN_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine/config.h"
#include "net_train.h"
#include "nn/checkpoint.h"
#include "nn/params.h"
#include "optim.h"

typedef struct trainer trainer;

/* A run on p (takes ownership: freed by trainer_free) with the train section tc, a
 * schedule of total_steps and the sampling seed. Returns NULL with a message. */
trainer *trainer_new(nn_params *p, const cfg_train *tc, int64_t total_steps, uint64_t seed,
                     char *err, size_t errlen);
void trainer_free(trainer *t); /* accepts NULL */

/* One step on a batch of tc->batch_size samples from d (augmented; a smaller board's
 * sample (dataset_allow_sizes) padded and masked, net_train.h's train_net_set_boards;
 * with the aux head of
 * spec aux_policy, its opponent-reply targets from d too, weight
 * tc->aux_policy_weight; with the ownership head of spec aux_owner, its targets from d,
 * weight tc->owner_weight; with an action_value policy head, its qa targets from d,
 * weight tc->action_value_weight, instead of the policy CE). Returns 0, or -1
 * with "step S: ..." when the loss or a gradient is NaN/Inf; the weights are then left
 * as before the step except the BN running statistics (do not save them). */
int trainer_step(trainer *t, const dataset *d, train_losses *losses, double *lr, char *err,
                 size_t errlen);

/* A step on a given batch (x NCHW, pi, legal, z; n <= batch_size): for benchmarks. An
 * opponent-reply head (spec aux_policy) or ownership head (spec aux_owner) gets no
 * targets here and no loss. */
int trainer_step_batch(trainer *t, int n, const float *x, const float *pi, const uint8_t *legal,
                       const float *z, train_losses *losses, double *lr, char *err, size_t errlen);

/* Eval-mode losses over up to max_samples validation samples of d (all if <= 0).
 * Returns the number of samples used (0: no validation data; *losses untouched). */
int64_t trainer_validate(trainer *t, const dataset *d, int64_t max_samples, train_losses *losses);

/* Saves weights, meta (as given: the caller counts steps across runs) and the optimizer
 * state (temp + rename, by nn_ckpt_save). Returns 0 or -1 with a message naming the file. */
int trainer_save(trainer *t, const char *path, const nn_ckpt_meta *meta, char *err, size_t errlen);

/* Reads the optimizer state of a checkpoint written by trainer_save (same spec).
 * Returns 0 when resumed, 1 when the file has no (compatible, unfinished) optimizer
 * state (the run starts fresh), -1 with a message on an error. */
int trainer_resume(trainer *t, const char *path, char *err, size_t errlen);

/* Continues a run-long optimizer from the checkpoint that t's weights came from (the
 * generation loop's schedule_scope "run"): the momentum (Adam: both moments) from its
 * /optim/ when that was written by the same optimizer kind, and the step counter set
 * to global_step (the checkpoint's training steps), so the learning-rate schedule reads
 * the run's step. This trainer's schedule length and sampling rng are kept. A file with
 * no optimizer state (generation 0) starts the moments at zero. Returns 0, or -1 with a
 * message (an unreadable file). */
int trainer_continue(trainer *t, const char *path, int64_t global_step, char *err, size_t errlen);

/* Data-parallel training over r's ranks (net_train.h; r copied; NULL or one rank:
 * off). Every rank makes the same trainer (same weights, config and seed) and calls
 * trainer_step with the same dataset: each draws the same batch and computes samples
 * [B*rank/ranks, B*(rank+1)/ranks) of it, and the gradients, the batch-norm statistics
 * and the losses are summed over the ranks, so every rank takes the same step and the
 * weights stay the same on all of them (up to the order of floating-point sums, the
 * weights equal a one-process run's). trainer_step_batch's n is then this rank's
 * shard. trainer_validate stays local (any rank may call it alone). Returns 0, or -1
 * with a message when the batch has fewer samples than there are ranks. */
int trainer_set_reducer(trainer *t, const train_reducer *r, char *err, size_t errlen);

nn_params *trainer_params(trainer *t);   /* borrowed */
const optim *trainer_optim(const trainer *t);
int64_t trainer_step_count(const trainer *t); /* steps of this optimizer run */

#endif
