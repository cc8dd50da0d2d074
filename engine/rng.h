/* rng.h — the one random source of gridzero: xoshiro256** seeded by splitmix64.
 *
 * Every random decision (openings, noise, rollouts, init, sampling) takes an rng that
 * was seeded from the config's seed, so runs are deterministic given a seed. An rng is
 * caller-owned plain data; not thread-safe (one per thread). */
#ifndef GZ_RNG_H
#define GZ_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

/* Seeds r from a 64-bit seed (any value, 0 included). */
void rng_seed(rng *r, uint64_t seed);
/* A seed for a derived stream (e.g. worker i of a run): mixes seed and stream. */
uint64_t rng_derive(uint64_t seed, uint64_t stream);
uint64_t rng_next(rng *r);
/* Uniform in [0, 1). */
double rng_uniform(rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint32_t rng_below(rng *r, uint32_t n);
/* Standard normal (Box–Muller). */
double rng_normal(rng *r);
/* Gamma(shape, 1), shape > 0 (Marsaglia–Tsang); for Dirichlet noise. */
double rng_gamma(rng *r, double shape);

#endif
