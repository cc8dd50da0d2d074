/* pool.c — see pool.h. */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

struct train_pool {
    /* immutable after new */
    int n;
    pthread_t *th;
    /* mutated under mu */
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    unsigned long gen; /* incremented for every run */
    int busy;          /* workers still running the current job */
    int quit;
    train_pool_fn fn;
    void *arg;
    pthread_barrier_t bar;
};

typedef struct {
    train_pool *p;
    int tid;
} worker_arg;

static void *pool_worker(void *varg)
{
    worker_arg wa = *(worker_arg *)varg;
    free(varg);
    train_pool *p = wa.p;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        train_pool_fn fn = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, wa.tid, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

train_pool *train_pool_new(int n)
{
    if (n < 1)
        n = 1;
    train_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    p->th = calloc((size_t)n, sizeof *p->th);
    if (!p->th) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    pthread_barrier_init(&p->bar, NULL, (unsigned)n);
    for (int i = 1; i < n; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa) {
            wa->p = p;
            wa->tid = i;
        }
        if (!wa || pthread_create(&p->th[i], NULL, pool_worker, wa) != 0) {
            free(wa);
            p->n = i; /* join the ones started */
            train_pool_free(p);
            return NULL;
        }
    }
    return p;
}

void train_pool_free(train_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    pthread_barrier_destroy(&p->bar);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->th);
    free(p);
}

int train_pool_size(const train_pool *p) { return p->n; }

void train_pool_run(train_pool *p, train_pool_fn fn, void *arg)
{
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->busy = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void train_pool_barrier(train_pool *p)
{
    if (p->n > 1)
        pthread_barrier_wait(&p->bar);
}
