/* comm_common.c — the parts of comm.h that do not depend on MPI. */
#include <stdlib.h>

#include "comm.h"
#include "engine/parse.h"

int comm_launcher_ranks(void)
{
    /* Open MPI, MPICH/Hydra (PMI), Slurm's srun */
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
    for (int i = 0; vars[i]; i++) {
        int n;
        if (parse_int(getenv(vars[i]), 1, 1 << 24, &n) == 0)
            return n;
    }
    return 0;
}

static void reducer_f64(void *ctx, double *buf, size_t n) { comm_sum_f64(ctx, buf, n); }
static void reducer_f32(void *ctx, float *buf, size_t n) { comm_sum_f32(ctx, buf, n); }

train_reducer comm_reducer(comm *c)
{
    train_reducer r = {reducer_f64, reducer_f32, c, comm_rank(c), comm_size(c)};
    return r;
}
