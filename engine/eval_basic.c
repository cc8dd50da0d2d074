/* eval_basic.c — the evaluators that need no network: `random` (uniform priors, value
 * 0) and `rollout` (uniform priors, value = mean outcome of K random playouts: the
 * seed 003 pure MCTS; in a scored game the mean points the playouts scored from the
 * position on). Also evaluator_free for every evaluator. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

/* Uniform priors over the legal moves of each of the n masks. */
static void uniform_priors(const game *g, int n, const uint8_t *legal, float *priors)
{
    int A = g->actions;
    for (int i = 0; i < n; i++) {
        const uint8_t *m = legal + (size_t)i * (size_t)A;
        float *p = priors + (size_t)i * (size_t)A;
        int cnt = 0;
        for (int a = 0; a < A; a++)
            cnt += m[a] != 0;
        float u = cnt ? 1.0f / (float)cnt : 0.0f;
        for (int a = 0; a < A; a++)
            p[a] = m[a] ? u : 0.0f;
    }
}

static int random_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                           const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    (void)states;
    (void)keys;
    (void)err;
    (void)errlen;
    uniform_priors(e->g, n, legal, priors);
    memset(values, 0, sizeof(float) * (size_t)n * (size_t)e->g->players);
    return 0;
}

static void plain_destroy(evaluator *e)
{
    free(e->ctx);
    free(e);
}

evaluator *eval_random_new(const game *g)
{
    evaluator *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->name = "random";
    e->g = g;
    e->evaluate = random_evaluate;
    e->destroy = plain_destroy;
    return e;
}

typedef struct rollout_ctx {
    int rollouts;
    rng r;
    game_state *scratch; /* state_size bytes: a playout's working copy (states can be
                          * large, e.g. 64x64 boards: not on the stack) */
} rollout_ctx;

static int rollout_evaluate(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                            const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    (void)keys;
    rollout_ctx *c = e->ctx;
    const game *g = e->g;
    int P = g->players;
    uniform_priors(g, n, legal, priors);
    for (int i = 0; i < n; i++) {
        float sum[GAME_MAX_PLAYERS] = {0};
        if (game_terminal(g, states[i])) {
            snprintf(err, errlen, "rollout evaluator: asked to value a terminal state");
            return -1;
        }
        float sc0[GAME_MAX_PLAYERS];
        if (game_scored(g))
            g->ops->score(g, states[i], sc0);
        for (int k = 0; k < c->rollouts; k++) {
            float z[GAME_MAX_PLAYERS];
            game_copy(g, c->scratch, states[i]);
            game_random_playout(g, c->scratch, &c->r, z);
            if (game_scored(g)) { /* the points the playout scored from here */
                g->ops->score(g, c->scratch, z);
                for (int p = 0; p < P; p++)
                    z[p] -= sc0[p];
            }
            for (int p = 0; p < P; p++)
                sum[p] += z[p];
        }
        for (int p = 0; p < P; p++)
            values[(size_t)i * (size_t)P + (size_t)p] = sum[p] / (float)c->rollouts;
    }
    return 0;
}

static void rollout_destroy(evaluator *e)
{
    rollout_ctx *c = e->ctx;
    if (c)
        free(c->scratch);
    plain_destroy(e);
}

evaluator *eval_rollout_new(const game *g, int rollouts, uint64_t seed)
{
    assert(rollouts >= 1);
    evaluator *e = calloc(1, sizeof *e);
    rollout_ctx *c = calloc(1, sizeof *c);
    game_state *s = malloc(g->state_size);
    if (!e || !c || !s) {
        free(e);
        free(c);
        free(s);
        return NULL;
    }
    c->rollouts = rollouts;
    rng_seed(&c->r, seed);
    c->scratch = s;
    e->name = "rollout";
    e->g = g;
    e->evaluate = rollout_evaluate;
    e->destroy = rollout_destroy;
    e->ctx = c;
    return e;
}

void evaluator_free(evaluator *e)
{
    if (e && e->destroy)
        e->destroy(e);
}
