/* pool.h — a tiny fork-join pool for the trainer's layers: the caller plus n-1 worker
 * threads run the same function on their share of a layer, with a barrier between
 * dependent layers. Workers BLOCK (futex) while idle and at barriers, never spin, so
 * they do not fight OpenBLAS (which each thread calls with one thread per call) or other
 * processes for the cores. Knows nothing about layers.
 */
#ifndef GZ_TRAIN_POOL_H
#define GZ_TRAIN_POOL_H

typedef struct train_pool train_pool;

/* fn(arg, tid, n): tid in [0, n), tid 0 is the caller's thread. */
typedef void (*train_pool_fn)(void *arg, int tid, int n);

/* A pool of n threads in all (n >= 1; n - 1 are started). Returns it (free with
 * train_pool_free) or NULL (out of memory or threads). */
train_pool *train_pool_new(int n);
void train_pool_free(train_pool *p); /* accepts NULL; joins the workers */

/* Threads in the pool (the caller included). */
int train_pool_size(const train_pool *p);

/* Runs fn(arg, tid, n) on every thread of the pool and returns when all are done.
 * Not reentrant: one caller at a time. */
void train_pool_run(train_pool *p, train_pool_fn fn, void *arg);

/* Inside fn: waits until every thread of the pool has reached it. */
void train_pool_barrier(train_pool *p);

/* The part [*lo, *hi) of [0, total) that thread tid of n takes (contiguous, sizes
 * differing by at most one). */
static inline void train_pool_share(int total, int tid, int n, int *lo, int *hi)
{
    *lo = (int)((long long)total * tid / n);
    *hi = (int)((long long)total * (tid + 1) / n);
}

#endif
