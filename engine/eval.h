/* eval.h — the evaluator: what the search asks to value positions (DESIGN.md §3).
 *
 * The search hands an evaluator a batch of n leaf states together with their 64-bit
 * keys (game_hash: covers everything the encoding shows, so an evaluator may cache by
 * key) and the legal masks it already computed. The evaluator writes
 *   priors[n][actions]  — probabilities over actions, 0 on illegal ones, summing to 1
 *                         over the legal ones;
 *   values[n][players]  — each player's expected outcome in [-1, 1], indexed by
 *                         ABSOLUTE player number (not "player to move first": an
 *                         evaluator whose model thinks mover-first rotates the vector).
 *                         In a scored game (game_scored: 2048) each player's expected
 *                         points still to come from the position (>= 0, unbounded).
 * States are never chance states (the search expands those itself).
 * Implementations: random (uniform priors, value 0), rollout (uniform priors, value =
 * mean outcome of K random playouts: pure MCTS), and the network (nn/). This header
 * knows nothing about networks.
 *
 * Thread safety: one evaluator object is used by one thread at a time unless its
 * constructor says otherwise.
 */
#ifndef GZ_EVAL_H
#define GZ_EVAL_H

#include <stdint.h>

#include "game.h"
#include "rng.h"

typedef struct evaluator evaluator;

struct evaluator {
    const char *name; /* "random", "rollout", "net" */
    const game *g;    /* borrowed; outlives the evaluator */
    /* Values n states (n >= 1; states must not be terminal). legal is n * actions
     * bytes. Returns 0, or -1 with a message in err. Must not allocate per call. */
    int (*evaluate)(evaluator *e, int n, const game_state *const *states, const uint64_t *keys,
                    const uint8_t *legal, float *priors, float *values, char *err, size_t errlen);
    /* Frees the evaluator (and its ctx). */
    void (*destroy)(evaluator *e);
    void *ctx;
    /* Counters the evaluator updates: positions asked, positions served from a cache. */
    uint64_t positions, cache_hits;
};

/* Uniform priors over legal moves, every value 0. Free with evaluator_free. */
evaluator *eval_random_new(const game *g);
/* Uniform priors; each value the mean outcome of `rollouts` random playouts to the end
 * (seed 003's pure MCTS), in a scored game the mean points they scored from the state
 * on. Chance events in the playouts are drawn with the same rng. seed seeds its private
 * rng. Free with evaluator_free. */
evaluator *eval_rollout_new(const game *g, int rollouts, uint64_t seed);

static inline int evaluator_run(evaluator *e, int n, const game_state *const *states,
                                const uint64_t *keys, const uint8_t *legal, float *priors,
                                float *values, char *err, size_t errlen)
{
    e->positions += (uint64_t)n;
    return e->evaluate(e, n, states, keys, legal, priors, values, err, errlen);
}

/* Accepts NULL. */
void evaluator_free(evaluator *e);

#endif
