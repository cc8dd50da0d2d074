/* sp_eval.h — the evaluators self-play workers get, made from a model file: the network
 * of the model (one oneDNN context per worker, the cores split between them, one shared
 * position cache) or, for a bootstrap generation, the rollout evaluator (pure MCTS).
 * Shared by every caller of sp_run that plays with a model: `gridzero selfplay`, the
 * generation loop's self-play stage (loop/) and `gridzero selfplay --follow`.
 */
#ifndef GZ_SELFPLAY_SP_EVAL_H
#define GZ_SELFPLAY_SP_EVAL_H

#include <stddef.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"

struct nn_params;
struct nn_cache;

/* What the workers' evaluators are made from. Caller-owned storage: sp_evals_init /
 * sp_evals_deinit. */
typedef struct sp_evals {
    const gz_config *cfg;     /* borrowed: the seeds, net.* and mcts.rollouts */
    const game *g;            /* borrowed */
    struct nn_params *params; /* owned; NULL = rollout evaluators */
    struct nn_cache *cache;   /* owned; shared by the workers' evaluators */
} sp_evals;

/* Loads model (NULL: rollout evaluators); cfg and g are borrowed until sp_evals_deinit.
 * Refuses a model that net.precision int8 cannot run (not calibrated). Returns 0, or -1
 * with a message naming the file. */
int sp_evals_init(sp_evals *x, const gz_config *cfg, const game *g, const char *model,
                  char *err, size_t errlen);
/* Frees what sp_evals_init loaded (the evaluators made from it must be freed first). */
void sp_evals_deinit(sp_evals *x);
/* An sp_eval_factory (selfplay.h) over an sp_evals (ctx): worker `worker` of `workers`
 * gets a network evaluator with its share of the cores (net.threads, else every core)
 * and its own symmetry seed, or a rollout evaluator with its own seed. Returns a new
 * evaluator (the worker frees it) or NULL with a message. */
evaluator *sp_evals_make(void *ctx, int worker, int workers, char *err, size_t errlen);

#endif
