/* comm.h — the ranks of one job and the few things they exchange: the only module that
 * knows MPI (DESIGN.md §1: train/ and selfplay/ say what must be reduced or gathered,
 * loop/ does the communication).
 *
 * Built with MPI (meson -Dmpi=auto finds Open MPI, or -Dmpi=enabled), comm_new(true)
 * joins MPI_COMM_WORLD (MPI_THREAD_FUNNELED: worker threads never call MPI). Otherwise
 * (comm_new(false), or a build without MPI) it is a world of one rank in which every
 * collective returns at once, so the loop runs the same code either way.
 *
 * Collectives: every rank calls them in the same order, from the thread that made the
 * comm. A failed MPI call ends the whole job (MPI's default error handler): one rank
 * cannot go on without the others, and every file on disk is complete or temporary, so
 * the job resumes from its files. Not thread-safe.
 */
#ifndef GZ_LOOP_COMM_H
#define GZ_LOOP_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train/net_train.h"

typedef struct comm comm;

/* Whether this binary was built with MPI. */
bool comm_mpi_built(void);

/* How to get a build with MPI, for messages (a static string). */
const char *comm_mpi_howto(void);

/* The number of ranks mpirun (Open MPI, MPICH or Slurm) says this process belongs to,
 * read from the environment without starting MPI; 0 when not started by one. */
int comm_launcher_ranks(void);

/* A world: with use_mpi, MPI's (MPI_Init_thread); else one rank. Returns it (free with
 * comm_free) or NULL with a message (use_mpi in a build without MPI, or MPI failed). */
comm *comm_new(bool use_mpi, char *err, size_t errlen);
/* Leaves MPI (MPI_Finalize: every rank must call it) and frees. Accepts NULL. */
void comm_free(comm *c);

int comm_rank(const comm *c);
int comm_size(const comm *c);
bool comm_is_mpi(const comm *c);
/* This rank's host name (MPI's processor name; gethostname without MPI). Borrowed. */
const char *comm_host(const comm *c);

/* Sums n values over every rank, in place; every rank gets the same result. */
void comm_sum_f64(comm *c, double *buf, size_t n);
void comm_sum_f32(comm *c, float *buf, size_t n);
/* The minimum and maximum of v over every rank. */
int64_t comm_min_i64(comm *c, int64_t v);
int64_t comm_max_i64(comm *c, int64_t v);
/* Copies root's bytes to every rank. */
void comm_bcast(comm *c, void *buf, size_t bytes, int root);
/* Every rank's value, in rank order, into all (comm_size values) on every rank. */
void comm_allgather_u64(comm *c, uint64_t mine, uint64_t *all);
/* Every rank's text on rank `root`: an array of comm_size malloc'd strings in rank order
 * (free with comm_texts_free); NULL on the other ranks, or when out of memory. */
char **comm_gather_text(comm *c, const char *mine, int root);
void comm_texts_free(const comm *c, char **texts); /* accepts NULL */

/* Waits until every rank has arrived, sleeping (not spinning) while it waits: the
 * ranks that finish a stage early leave the cores to the others. */
void comm_wait_all(comm *c);

/* Ends every rank of the job with exit status code (MPI_Abort); without MPI, exit(). */
_Noreturn void comm_abort(comm *c, int code);

/* A reducer for data-parallel training over the world (train/net_train.h). */
train_reducer comm_reducer(comm *c);
/* Wall-clock seconds spent in comm_sum_f64/comm_sum_f32 so far, and how many calls:
 * the cost of data-parallel training's communication (0 without MPI). */
double comm_sum_seconds(const comm *c, int64_t *calls);

#endif
