/* blas_tune.c — see blas_tune.h. */
#include "blas_tune.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

const char *blas_core_name(void) { return openblas_get_corename(); }
int blas_threads(void) { return openblas_get_num_threads(); }

void blas_tune_reexec(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE"))
        return; /* the user's choice, or we already re-executed */
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")))
        return;
    const char *core = openblas_get_corename();
    if (!core || (strcmp(core, "Haswell") && strcmp(core, "Zen") && strcmp(core, "haswell") &&
                  strcmp(core, "zen")))
        return;
    if (setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    unsetenv("OPENBLAS_CORETYPE"); /* exec failed: carry on with the default kernels */
#else
    (void)argv;
#endif
}
