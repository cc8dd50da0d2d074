/* bench_peak.c — one core's arithmetic peaks, measured, so that `bench train` and `bench
 * nn` can print the share of the peak they reach (see commands.h, cli_peak_measure). */
#include <time.h>

#include "commands.h"

/* Each kernel runs 12 independent chains of one multiply-accumulate instruction (enough
 * to hide its latency on two or more ports), written in assembly: with intrinsics GCC
 * copies the destructive accumulators (vpdpbusd, vdpbf16ps) between registers every
 * iteration, and those moves cost a quarter of the int8 rate. The registers start at zero
 * (no denormals), and the values do not change the instructions' speed. */
#if defined(__x86_64__) && defined(__GNUC__)
#define CHAINS12(OP, R, X, Y)                                                                     \
    OP " %%" X ", %%" Y ", %%" R "0\n\t" OP " %%" X ", %%" Y ", %%" R "1\n\t"                    \
    OP " %%" X ", %%" Y ", %%" R "2\n\t" OP " %%" X ", %%" Y ", %%" R "3\n\t"                    \
    OP " %%" X ", %%" Y ", %%" R "4\n\t" OP " %%" X ", %%" Y ", %%" R "5\n\t"                    \
    OP " %%" X ", %%" Y ", %%" R "6\n\t" OP " %%" X ", %%" Y ", %%" R "7\n\t"                    \
    OP " %%" X ", %%" Y ", %%" R "8\n\t" OP " %%" X ", %%" Y ", %%" R "9\n\t"                    \
    OP " %%" X ", %%" Y ", %%" R "10\n\t" OP " %%" X ", %%" Y ", %%" R "11\n\t"

/* vxorps on xmm (VEX) zeroes the whole ymm/zmm register */
#define ZERO14                                                                                    \
    "vxorps %%xmm0, %%xmm0, %%xmm0\n\t" "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"                      \
    "vxorps %%xmm2, %%xmm2, %%xmm2\n\t" "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"                      \
    "vxorps %%xmm4, %%xmm4, %%xmm4\n\t" "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"                      \
    "vxorps %%xmm6, %%xmm6, %%xmm6\n\t" "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"                      \
    "vxorps %%xmm8, %%xmm8, %%xmm8\n\t" "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"                      \
    "vxorps %%xmm10, %%xmm10, %%xmm10\n\t" "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"                \
    "vxorps %%xmm12, %%xmm12, %%xmm12\n\t" "vxorps %%xmm13, %%xmm13, %%xmm13\n\t"

/* R ("zmm" or "ymm"): registers 0..11 accumulate, 12 and 13 are the operands */
#define RUN(NAME, TARGET, OP, R)                                                                  \
    __attribute__((target(TARGET))) static void NAME(long iters)                                  \
    {                                                                                             \
        __asm__ volatile(ZERO14 "1:\n\t" CHAINS12(OP, R, R "12", R "13") "dec %0\n\t"           \
                         "jnz 1b\n\t"                                                            \
                         "vzeroupper"                                                            \
                         : "+r"(iters)                                                           \
                         :                                                                       \
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",       \
                           "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc");            \
    }

RUN(fp32_run512, "avx512f", "vfmadd231ps", "zmm")
RUN(bf16_run512, "avx512f,avx512bf16", "vdpbf16ps", "zmm")
RUN(int8_run512, "avx512f,avx512vnni", "vpdpbusd", "zmm")
RUN(fp32_run256, "avx2,fma", "vfmadd231ps", "ymm")
/* {vex} (%{vex%} in a template): AVX-VNNI's encoding, not AVX512-VNNI's EVEX form */
RUN(int8_run256, "avx2", "%{vex%} vpdpbusd", "ymm")
#undef RUN
#undef ZERO14
#undef CHAINS12
#endif

static double thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cli_peak_measure(cli_peak_kind kind, int *lanes)
{
    *lanes = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    void (*run)(long) = NULL;
    int w = 0;
    double ops_per_lane = 0; /* per instruction */
    if (kind == CLI_PEAK_FP32) {
        if (__builtin_cpu_supports("avx512f"))
            run = fp32_run512, w = 16;
        else if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2"))
            run = fp32_run256, w = 8;
        ops_per_lane = 2;
    } else if (kind == CLI_PEAK_BF16) {
        if (__builtin_cpu_supports("avx512bf16"))
            run = bf16_run512, w = 16;
        ops_per_lane = 4;
    } else if (kind == CLI_PEAK_INT8) {
        if (__builtin_cpu_supports("avx512vnni"))
            run = int8_run512, w = 16;
        else if (__builtin_cpu_supports("avxvnni"))
            run = int8_run256, w = 8;
        ops_per_lane = 8;
    }
    if (!run)
        return 0;
    *lanes = w;
    /* chunks of about 20 ms, the best of 10: a core shared with another process (SMT, a
     * frequency drop) shows in some chunks, and the peak is what the core can do */
    double best = 0;
    long iters = 1 << 14;
    for (int k = 0; k < 10; k++) {
        double t0 = thread_cpu_now();
        run(iters);
        double dt = thread_cpu_now() - t0;
        double g = dt > 0 ? 12.0 * ops_per_lane * w * (double)iters / dt / 1e9 : 0;
        best = g > best ? g : best;
        if (dt < 0.02 && iters < (1L << 40)) { /* still calibrating the chunk's length */
            iters *= 2;
            k = -1;
        }
    }
    return best;
#else
    (void)kind;
    return 0;
#endif
}
