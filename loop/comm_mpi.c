/* comm_mpi.c — comm.h over MPI (Open MPI from Debian; any MPI-3 library). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "comm.h"

struct comm {
    bool mpi;
    int rank, size;
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    double sum_seconds; /* in comm_sum_* */
    int64_t sum_calls;
};

bool comm_mpi_built(void) { return true; }

const char *comm_mpi_howto(void)
{
    return "start it with mpirun: mpirun -np K gridzero run --mpi ...";
}

comm *comm_new(bool use_mpi, char *err, size_t errlen)
{
    comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->size = 1;
    if (!use_mpi) {
        if (gethostname(c->host, sizeof c->host - 1) != 0)
            snprintf(c->host, sizeof c->host, "localhost");
        return c;
    }
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, errlen, "--mpi: MPI_Init_thread failed");
        free(c);
        return NULL;
    }
    c->mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    int len = 0;
    MPI_Get_processor_name(c->host, &len);
    c->host[len] = 0;
    if (provided < MPI_THREAD_FUNNELED) {
        snprintf(err, errlen, "--mpi: this MPI library does not allow threads "
                 "(MPI_THREAD_FUNNELED), which self-play and training use");
        MPI_Finalize();
        free(c);
        return NULL;
    }
    return c;
}

void comm_free(comm *c)
{
    if (!c)
        return;
    if (c->mpi)
        MPI_Finalize();
    free(c);
}

int comm_rank(const comm *c) { return c->rank; }
int comm_size(const comm *c) { return c->size; }
bool comm_is_mpi(const comm *c) { return c->mpi; }
const char *comm_host(const comm *c) { return c->host; }

/* MPI counts are ints: large buffers go in pieces. */
#define PIECE (1 << 28)

double comm_sum_seconds(const comm *c, int64_t *calls)
{
    if (calls)
        *calls = c->sum_calls;
    return c->sum_seconds;
}

void comm_sum_f64(comm *c, double *buf, size_t n)
{
    if (!c->mpi)
        return;
    double t0 = MPI_Wtime();
    for (size_t at = 0; c->mpi && at < n; at += PIECE) {
        int k = (int)(n - at < PIECE ? n - at : PIECE);
        MPI_Allreduce(MPI_IN_PLACE, buf + at, k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    c->sum_seconds += MPI_Wtime() - t0;
    c->sum_calls++;
}

void comm_sum_f32(comm *c, float *buf, size_t n)
{
    if (!c->mpi)
        return;
    double t0 = MPI_Wtime();
    for (size_t at = 0; c->mpi && at < n; at += PIECE) {
        int k = (int)(n - at < PIECE ? n - at : PIECE);
        MPI_Allreduce(MPI_IN_PLACE, buf + at, k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    c->sum_seconds += MPI_Wtime() - t0;
    c->sum_calls++;
}

int64_t comm_min_i64(comm *c, int64_t v)
{
    if (c->mpi)
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    return v;
}

int64_t comm_max_i64(comm *c, int64_t v)
{
    if (c->mpi)
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

void comm_bcast(comm *c, void *buf, size_t bytes, int root)
{
    for (size_t at = 0; c->mpi && at < bytes; at += PIECE) {
        int k = (int)(bytes - at < PIECE ? bytes - at : PIECE);
        MPI_Bcast((char *)buf + at, k, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

void comm_allgather_u64(comm *c, uint64_t mine, uint64_t *all)
{
    if (!c->mpi) {
        all[0] = mine;
        return;
    }
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
}

char **comm_gather_text(comm *c, const char *mine, int root)
{
    int len = (int)strlen(mine) + 1, K = c->size;
    if (!c->mpi) {
        char **t = calloc(1, sizeof *t);
        if (t && !(t[0] = strdup(mine))) {
            free(t);
            t = NULL;
        }
        return t;
    }
    int *lens = c->rank == root ? calloc((size_t)K, sizeof(int)) : NULL;
    int *offs = c->rank == root ? calloc((size_t)K, sizeof(int)) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, root, MPI_COMM_WORLD);
    char *all = NULL;
    long long total = 0;
    if (c->rank == root) {
        for (int k = 0; k < K; k++) {
            offs[k] = (int)total;
            total += lens[k];
        }
        if (total > INT_MAX) {
            fprintf(stderr, "gridzero: rank %d: %lld bytes to gather: too many\n", c->rank, total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        all = malloc((size_t)total);
        if (!all) {
            fprintf(stderr, "gridzero: rank %d: out of memory gathering %lld bytes\n", c->rank, total);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gatherv(mine, len, MPI_CHAR, all, lens, offs, MPI_CHAR, root, MPI_COMM_WORLD);
    char **out = NULL;
    if (c->rank == root) {
        out = calloc((size_t)K, sizeof *out);
        for (int k = 0; out && k < K; k++)
            out[k] = strdup(all + offs[k]);
        free(all);
    }
    free(lens);
    free(offs);
    return out;
}

void comm_texts_free(const comm *c, char **texts)
{
    if (!texts)
        return;
    for (int k = 0; k < c->size; k++)
        free(texts[k]);
    free(texts);
}

void comm_wait_all(comm *c)
{
    if (!c->mpi)
        return;
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    struct timespec nap = {0, 2000000}; /* 2 ms: stage ends are seconds apart */
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nanosleep(&nap, NULL);
}

_Noreturn void comm_abort(comm *c, int code)
{
    fflush(NULL);
    if (c && c->mpi)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
