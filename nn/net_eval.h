/* net_eval.h — the network evaluator: the search's evaluator (engine/eval.h) backed by a
 * network, plus the bounded position cache it may share with other evaluators.
 *
 * evaluate() looks each state's key up in the cache (when there is one); the misses
 * are encoded straight into the oneDNN context's batch input buffer (each under a
 * symmetry of the game when asked: the policy is mapped back), run in chunks of at most
 * max_batch, and their priors and values stored in the cache. Priors are over the legal
 * actions (sum 1); values are in ABSOLUTE player order (the net is mover-first: output i
 * is the player i seats after the mover). No allocation per call.
 */
#ifndef GZ_NN_NET_EVAL_H
#define GZ_NN_NET_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "infer.h"

/* A fixed-size position cache: `entries` slots (direct-mapped by key, the full key
 * verified on lookup), each holding a position's values and its priors over its legal
 * actions quantised to 16 bits (renormalised on a hit). Memory: entries * (2 * actions
 * + 32) bytes. Thread-safe: a worker's evaluators may share one (striped locks). */
typedef struct nn_cache nn_cache;
nn_cache *nn_cache_new(int entries, int actions, int players);
void nn_cache_free(nn_cache *c); /* accepts NULL */
/* Looks key up; on a hit writes priors[actions] (0 off legal) and values[players] (as
 * stored) and returns true. */
bool nn_cache_get(nn_cache *c, uint64_t key, const uint8_t *legal, float *priors, float *values);
void nn_cache_put(nn_cache *c, uint64_t key, const uint8_t *legal, const float *priors,
                  const float *values);

enum { NET_SYM_NONE = -1, NET_SYM_RANDOM = -2 };

typedef struct net_eval_opts {
    nn_precision precision;
    nn_int8_kernel int8_kernel; /* of an int8 context (nn_infer_set_int8_kernel) */
    int threads;   /* oneDNN threads of this evaluator's context; 0 = default */
    int max_batch; /* largest chunk sent to the network (1..NN_MAX_BATCH) */
    int first_batch; /* batch whose oneDNN plan is built at creation (0: max_batch);
                        other sizes are built on first use */
    int symmetry;  /* NET_SYM_NONE, NET_SYM_RANDOM (a random element of g->sym per
                      position), or a fixed index into g->sym (tests) */
    uint64_t seed; /* of the random symmetries */
    int cache_entries; /* private cache size when `cache` is NULL; 0 = no cache */
    nn_cache *cache;   /* a shared cache (borrowed, outlives the evaluator), or NULL */
} net_eval_opts;

/* Options from the config: net.precision, net.int8_kernel, net.threads, net.cache; max_batch =
 * mcts.batch * selfplay.parallel_games, capped by net.max_batch when set (at most NN_MAX_BATCH), first_batch = mcts.batch;
 * random symmetry on, seed derived from the config's seed. Returns 0 or -1 (bad
 * precision word). */
int net_eval_opts_from_config(net_eval_opts *o, const gz_config *c, char *err, size_t errlen);

/* An evaluator for game g with weights p (checked against g: nn_spec_check_game; the
 * context keeps its own copy of the weights, p stays the caller's). Returns the
 * evaluator (free with evaluator_free) or NULL with a message. One thread at a time. */
evaluator *net_eval_new(const game *g, const nn_params *p, const net_eval_opts *o, char *err,
                        size_t errlen);

/* Builds and runs e's network once at every batch size 1..batch (at most its max_batch)
 * now, so that oneDNN's per-size set-up does not land inside a timed search. Touches
 * neither the cache nor the random symmetries' stream: e then evaluates exactly as a
 * fresh evaluator (a brain plays the moves of the player of its spec). e must be a
 * network evaluator. Returns 0 or -1 with a message. */
int net_eval_warm_up(evaluator *e, int batch, char *err, size_t errlen);

/* Wall-clock time a network evaluator has spent (CLOCK_MONOTONIC, since creation). */
typedef struct net_eval_times {
    double evaluate_s; /* in evaluate(): cache probes, encoding, symmetries, the forward
                          pass, priors and values copied out */
    double forward_s;  /* of which in the network's forward pass (nn_infer_run: oneDNN's
                          convolutions and the heads, masked softmax included) */
    double setup_s;    /* of which in building oneDNN plans for new batch sizes (once per
                          size and evaluator: a benchmark's start-up, not its steady state) */
    uint64_t forwards; /* batches run through the network */
} net_eval_times;

/* The times of e; false (and *t zeroed) when e is not a network evaluator. */
bool net_eval_times_get(const evaluator *e, net_eval_times *t);
/* The precision e's network runs at (auto resolved); e must be a network evaluator. */
nn_precision net_eval_precision(const evaluator *e);
/* For a model with a win/draw/loss value head (net.value_head wdl): runs it on s (not
 * terminal; no symmetry, no cache) and writes the win, draw and loss probabilities of
 * the player to move into wdl[3]; returns 1. 0 when e is not a network evaluator with
 * that head (wdl untouched), -1 with a message on failure. */
int net_eval_wdl(evaluator *e, const game_state *s, float *wdl, char *err, size_t errlen);
/* The same as a word, int8 with its kernel (nn_infer_kind). */
const char *net_eval_kind(const evaluator *e);

/* The usual way to get a network evaluator: loads the model at path (validated against
 * g), options from the config (net_eval_opts_from_config), and frees the loaded
 * parameters again (the evaluator keeps its folded copy). Returns the evaluator (free
 * with evaluator_free or e->destroy) or NULL with a message naming the file. */
evaluator *net_eval_load(const game *g, const gz_config *c, const char *path, char *err,
                         size_t errlen);

#endif
