/* net_train.c — the whole network's training pass (see net_train.h). The body is in
 * net_train_impl.h, compiled in float (the trainer) and in double (the _f64 names: the
 * tests' finite-difference oracle for the whole network). */
#include "net_train.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <cblas.h>

#include "layers.h"
#include "pool.h"

/* The thread count OpenBLAS started with (OPENBLAS_NUM_THREADS, else every core), read
 * once; OpenBLAS is then set to one thread per call, and each context runs that many
 * threads of its own over every trunk layer (see net_train.h). */
static int net_threads0 = 1;
static pthread_once_t net_threads_once = PTHREAD_ONCE_INIT;

static void net_threads_init(void)
{
    int n = openblas_get_num_threads();
    net_threads0 = n < 1 ? 1 : n > 64 ? 64 : n;
    openblas_set_num_threads(1);
}

static int net_train_threads(void)
{
    pthread_once(&net_threads_once, net_threads_init);
    return net_threads0;
}

#define R float
#define F(name) name
#define TN train_net
#include "net_train_impl.h"
#undef R
#undef F
#undef TN

#define R double
#define F(name) name##_f64
#define TN train_net_f64
#include "net_train_impl.h"
#undef R
#undef F
#undef TN
