/* comm_single.c — comm.h in a build without MPI: a world of one rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"

struct comm {
    char host[256];
};

bool comm_mpi_built(void) { return false; }

const char *comm_mpi_howto(void)
{
    return "this gridzero was built without MPI; install Open MPI (apt-get install "
           "libopenmpi-dev openmpi-bin, or scripts/setup) and rebuild with MPI: "
           "meson setup --reconfigure -Dmpi=enabled build && ninja -C build";
}

comm *comm_new(bool use_mpi, char *err, size_t errlen)
{
    if (use_mpi) {
        snprintf(err, errlen, "--mpi: %s", comm_mpi_howto());
        return NULL;
    }
    comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (gethostname(c->host, sizeof c->host - 1) != 0)
        snprintf(c->host, sizeof c->host, "localhost");
    return c;
}

void comm_free(comm *c) { free(c); }
int comm_rank(const comm *c) { (void)c; return 0; }
int comm_size(const comm *c) { (void)c; return 1; }
bool comm_is_mpi(const comm *c) { (void)c; return false; }
const char *comm_host(const comm *c) { return c->host; }
void comm_sum_f64(comm *c, double *buf, size_t n) { (void)c, (void)buf, (void)n; }
void comm_sum_f32(comm *c, float *buf, size_t n) { (void)c, (void)buf, (void)n; }
int64_t comm_min_i64(comm *c, int64_t v) { (void)c; return v; }
int64_t comm_max_i64(comm *c, int64_t v) { (void)c; return v; }
void comm_bcast(comm *c, void *buf, size_t bytes, int root) { (void)c, (void)buf, (void)bytes, (void)root; }
void comm_allgather_u64(comm *c, uint64_t mine, uint64_t *all) { (void)c; all[0] = mine; }
void comm_wait_all(comm *c) { (void)c; }

double comm_sum_seconds(const comm *c, int64_t *calls)
{
    (void)c;
    if (calls)
        *calls = 0;
    return 0;
}

char **comm_gather_text(comm *c, const char *mine, int root)
{
    (void)c, (void)root;
    char **t = calloc(1, sizeof *t);
    if (t && !(t[0] = strdup(mine))) {
        free(t);
        t = NULL;
    }
    return t;
}

void comm_texts_free(const comm *c, char **texts)
{
    (void)c;
    if (texts)
        free(texts[0]);
    free(texts);
}

_Noreturn void comm_abort(comm *c, int code)
{
    (void)c;
    fflush(NULL);
    exit(code);
}
