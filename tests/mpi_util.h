/* mpi_util.h — test helpers for gridzero under MPI: whether this build has MPI
 * ($GZ_MPI = 1) and an mpirun ($GZ_MPIRUN), and running `mpirun -np K gridzero ...`
 * (as root too: --allow-run-as-root; more ranks than cores: --oversubscribe) with one
 * BLAS thread per rank. Header-only, static: included by test_mpi.c and
 * test_mpi_slow.c (after run_util.h). */
#ifndef GZ_TESTS_MPI_UTIL_H
#define GZ_TESTS_MPI_UTIL_H

#include "run_util.h"

/* NULL when the MPI tests can run, else why not (printed as the skip message). */
static inline const char *mpi_unavailable(void)
{
    const char *m = getenv("GZ_MPI"), *run = getenv("GZ_MPIRUN");
    if (!m || strcmp(m, "1") != 0)
        return "gridzero was built without MPI (meson -Dmpi=disabled, or Open MPI not found: "
               "apt-get install libopenmpi-dev openmpi-bin)";
    if (!run || !run[0] || access(run, X_OK) != 0)
        return "no mpirun (apt-get install openmpi-bin)";
    return NULL;
}

#define MPI_SKIP_IF_UNAVAILABLE()                                                              \
    do {                                                                                       \
        const char *why_ = mpi_unavailable();                                                  \
        if (why_) {                                                                            \
            /* Check names the test's function NAME_fn */                                     \
            fprintf(stderr, "%.*s: skipped: %s\n", (int)strlen(__func__) - 3, __func__, why_);  \
            return;                                                                            \
        }                                                                                      \
    } while (0)

/* Runs `mpirun ... -np np[0] GZ_BIN args[0]... [: -np np[1] GZ_BIN args[1]...]` (nprog
 * programs: MPMD when 2) with GZ_RUN_CRASH_AFTER=crash (NULL: unset); output into out.
 * Returns mpirun's exit status, or 128 + its signal. */
static inline int mpi_exec(int nprog, const int *np, const char *const *const *args,
                           const char *crash, char *out, size_t outlen)
{
    const char *run = getenv("GZ_MPIRUN"), *bin = getenv("GZ_BIN");
    ck_assert(run && bin);
    static int nlog;
    char log[300];
    snprintf(log, sizeof log, "%s/mpirun.log.%d", dir, nlog++);
    const char *argv[160];
    char nps[2][16];
    int n = 0;
    argv[n++] = run;
    argv[n++] = "--allow-run-as-root";
    argv[n++] = "--oversubscribe";
    argv[n++] = "-x";
    argv[n++] = "OPENBLAS_NUM_THREADS";
    if (crash) {
        argv[n++] = "-x";
        argv[n++] = "GZ_RUN_CRASH_AFTER";
    }
    for (int p = 0; p < nprog; p++) {
        if (p > 0)
            argv[n++] = ":";
        snprintf(nps[p], sizeof nps[p], "%d", np[p]);
        argv[n++] = "-np";
        argv[n++] = nps[p];
        argv[n++] = bin;
        for (int i = 0; args[p][i]; i++) {
            ck_assert_int_lt(n, 150);
            argv[n++] = args[p][i];
        }
    }
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        if (crash)
            setenv("GZ_RUN_CRASH_AFTER", crash, 1);
        else
            unsetenv("GZ_RUN_CRASH_AFTER");
        execv(run, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    gz_read_log(log, out, outlen);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `mpirun -np np gridzero run --mpi -o rundir [--generations gens] [tiny...] [extra...]`. */
static inline int mpi_run(int np, const char *rundir, int gens, const char *crash,
                          const char *const *base, const char *const *extra, char *out,
                          size_t outlen)
{
    char gbuf[16];
    snprintf(gbuf, sizeof gbuf, "%d", gens);
    const char *a[MAXARGS];
    int n = 0;
    a[n++] = "run";
    a[n++] = "--mpi";
    a[n++] = "-o";
    a[n++] = rundir;
    if (gens > 0) {
        a[n++] = "--generations";
        a[n++] = gbuf;
    }
    for (int i = 0; base && base[i]; i++)
        a[n++] = base[i];
    for (int i = 0; extra && extra[i]; i++)
        a[n++] = extra[i];
    a[n] = NULL;
    ck_assert_int_lt(n, MAXARGS);
    const char *const *args[1] = {a};
    return mpi_exec(1, &np, args, crash, out, outlen);
}

#endif
