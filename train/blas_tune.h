/* blas_tune.h — choosing OpenBLAS's kernels for the trainer.
 *
 * OpenBLAS 0.3.21 (Debian 12) selects its kernels once, when the library is loaded, from
 * the CPU it recognises. On an AVX-512 CPU it does not recognise it falls back to its
 * Haswell (AVX2) kernels, which reach about half the sgemm speed of its SkylakeX
 * (AVX-512) kernels (measured on the development machine's AMD EPYC with Haswell forced:
 * 84 vs 152 GFLOP/s per core on 1024^3, 73 vs 134 on the trainer's 64 x 2025 x 576 conv
 * GEMM). That EPYC itself is recognised (OpenBLAS reports "Cooperlake" when
 * OPENBLAS_CORETYPE is unset), so there the re-execution below never happens. The only switch is the OPENBLAS_CORETYPE
 * environment variable read at load time, so a command that trains re-executes itself
 * once with OPENBLAS_CORETYPE=SKYLAKEX when the CPU has AVX-512 F/BW/DQ/VL and OpenBLAS
 * chose an AVX2 core. A user's own OPENBLAS_CORETYPE is always respected.
 */
#ifndef GZ_TRAIN_BLAS_TUNE_H
#define GZ_TRAIN_BLAS_TUNE_H

/* Re-executes /proc/self/exe with argv (main's, NULL-terminated) and OPENBLAS_CORETYPE
 * set when that helps (see above); returns only when it does not re-execute (nothing to
 * do, or exec failed). Call first thing in main, before threads exist. */
void blas_tune_reexec(char **argv);

/* OpenBLAS's core name ("SkylakeX", "Haswell", ...), for benchmark reports. Borrowed. */
const char *blas_core_name(void);

/* OpenBLAS's thread count (OPENBLAS_NUM_THREADS); read it before the first trainer, which
 * sets OpenBLAS to one thread per call and runs that many of its own (net_train.c). */
int blas_threads(void);

#endif
