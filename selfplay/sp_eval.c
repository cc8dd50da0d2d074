/* sp_eval.c — the evaluators self-play workers get from a model (see sp_eval.h). */
#include "sp_eval.h"

#include <stdio.h>
#include <string.h>

#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/net_eval.h"
#include "selfplay.h"

evaluator *sp_evals_make(void *ctx, int worker, int workers, char *err, size_t errlen)
{
    sp_evals *x = ctx;
    if (!x->params)
        return eval_rollout_new(x->g, x->cfg->mcts.rollouts,
                                rng_derive(x->cfg->seed, 0x726f6c6cULL + (uint64_t)worker));
    net_eval_opts o;
    if (net_eval_opts_from_config(&o, x->cfg, err, errlen) < 0)
        return NULL;
    int cores = x->cfg->net.threads > 0 ? x->cfg->net.threads : sp_cores();
    o.threads = cores / workers > 0 ? cores / workers : 1;
    /* a worker's batch holds the leaves of all its games */
    int want = x->cfg->mcts.batch * x->cfg->selfplay.parallel_games;
    o.max_batch = want < NN_MAX_BATCH ? want : NN_MAX_BATCH;
    o.seed = rng_derive(x->cfg->seed, 0x73796d00ULL + (uint64_t)worker);
    o.cache = x->cache;
    return net_eval_new(x->g, x->params, &o, err, errlen);
}

int sp_evals_init(sp_evals *x, const gz_config *cfg, const game *g, const char *model,
                     char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->cfg = cfg;
    x->g = g;
    if (!model)
        return 0;
    x->params = nn_ckpt_load(model, g, NULL, err, errlen);
    if (!x->params)
        return -1;
    /* int8 named explicitly: refused now, as bad input, not by every worker later */
    nn_precision prec;
    if (nn_precision_parse(cfg->net.precision, &prec) == 0 && prec == NN_PREC_INT8 &&
        nn_int8_check(x->params, err, errlen) < 0) {
        size_t k = strlen(err);
        snprintf(err + k, errlen > k ? errlen - k : 0, " (model %s)", model);
        nn_params_free(x->params);
        x->params = NULL;
        return -1;
    }
    if (cfg->net.cache > 0) {
        x->cache = nn_cache_new(cfg->net.cache, g->actions, g->players);
        if (!x->cache) {
            snprintf(err, errlen, "out of memory for a %d-entry position cache", cfg->net.cache);
            nn_params_free(x->params);
            return -1;
        }
    }
    return 0;
}

void sp_evals_deinit(sp_evals *x)
{
    nn_params_free(x->params);
    nn_cache_free(x->cache);
    x->params = NULL;
    x->cache = NULL;
}
