/* conv_vnni.c — direct int8 convolutions with AVX512-VNNI (see conv_vnni.h).
 *
 * One call of `block` computes P pixels of one board row x NZ blocks of 16 output
 * channels (P * NZ <= 24 s32 accumulators in zmm registers, plus NZ weight rows and one
 * broadcast). P and NZ are compile-time constants in every instantiation (the switch in
 * `dispatch`), so the loops over them unroll and the accumulators stay in registers.
 * Taps whose weights are all 0 for every channel (the hex lattice's masked corners) are
 * left out of the packed weights and of the loop.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "conv_vnni.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VNNI_X86 1
#include <immintrin.h>
#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define VNNI_X86 0
#endif

#define VNNI_MAXZ 4 /* output-channel blocks of 16 per pass */

int vnni_cpu_ok(void)
{
#if VNNI_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
#else
    return 0;
#endif
}

size_t vnni_act_bytes(int rows, int cols, int stride)
{
    return (size_t)(rows + 2) * (size_t)(cols + 2) * (size_t)stride;
}

void vnni_conv_free(vnni_conv *c)
{
    if (!c)
        return;
    free(c->w);
    free(c->scale);
    free(c->bias);
    memset(c, 0, sizeof *c);
}

int vnni_conv_init(vnni_conv *c, const float *w, int oc, int ic, int k, const float *wmul,
                   const float *qb, const float *oscale, float sum_scale)
{
    memset(c, 0, sizeof *c);
    if (oc < 1 || ic < 1 || (k != 1 && k != 3))
        return -1;
    int kk = k * k, icp = (ic + 3) / 4 * 4, G = icp / 4, ocp = (oc + 15) / 16 * 16;
    /* the taps with a nonzero weight anywhere */
    bool live[9] = {false};
    for (int o = 0; o < oc; o++)
        for (int i = 0; i < ic; i++)
            for (int t = 0; t < kk; t++)
                if (lrintf(w[((size_t)o * ic + i) * kk + t] * wmul[o]) != 0)
                    live[t] = true;
    c->k = k;
    c->ic = ic;
    c->icp = icp;
    c->oc = ocp;
    c->ntaps = 0;
    for (int t = 0; t < kk; t++)
        if (live[t])
            c->taps[c->ntaps++] = t;
    if (c->ntaps == 0) /* a conv of zeros: keep one tap so that the loop stays uniform */
        c->taps[c->ntaps++] = 0;
    size_t wbytes = (size_t)c->ntaps * G * ocp * 4;
    c->w = aligned_alloc(64, (wbytes + 63) / 64 * 64);
    c->scale = calloc((size_t)ocp, sizeof(float));
    c->bias = calloc((size_t)ocp, sizeof(float));
    if (!c->w || !c->scale || !c->bias) {
        vnni_conv_free(c);
        return -1;
    }
    memset(c->w, 0, (wbytes + 63) / 64 * 64);
    for (int ti = 0; ti < c->ntaps; ti++) {
        int t = c->taps[ti];
        for (int g = 0; g < G; g++)
            for (int o = 0; o < oc; o++)
                for (int j = 0; j < 4; j++) {
                    int i = g * 4 + j;
                    if (i >= ic)
                        continue;
                    long q = lrintf(w[((size_t)o * ic + i) * kk + t] * wmul[o]);
                    q = q < -128 ? -128 : q > 127 ? 127 : q;
                    c->w[(((size_t)ti * G + g) * ocp + o) * 4 + j] = (int8_t)q;
                }
    }
    for (int o = 0; o < oc; o++) {
        c->scale[o] = oscale[o];
        c->bias[o] = qb[o] * oscale[o];
    }
    c->sum_scale = sum_scale;
    return 0;
}

int vnni_stem_init(vnni_conv *c, const float *w, int oc, int ic, int k, const float *wmul,
                   const float *qb, const float *oscale)
{
    int rc = vnni_conv_init(c, w, oc, ic, k, wmul, qb, oscale, 0.0f);
    if (rc < 0 || k != 3)
        return rc;
    /* groups of 4 channels a pixel: the live taps' (7 on the hex lattice) against the live
     * tap rows' with 3 ic channels */
    bool row[3] = {false, false, false};
    for (int ti = 0; ti < c->ntaps; ti++)
        row[c->taps[ti] / 3] = true;
    int rows = row[0] + row[1] + row[2];
    if (rows * ((3 * ic + 3) / 4) >= c->ntaps * (c->icp / 4))
        return 0;
    vnni_conv_free(c);
    /* w3[o][kx * ic + i][ky][1] = w[o][i][ky][kx]; the other columns 0 (left out) */
    int ic3 = 3 * ic;
    float *w3 = calloc((size_t)oc * ic3 * 9, sizeof(float));
    if (!w3)
        return -1;
    for (int o = 0; o < oc; o++)
        for (int i = 0; i < ic; i++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    w3[(((size_t)o * ic3 + kx * ic + i) * 3 + ky) * 3 + 1] =
                        w[(((size_t)o * ic + i) * 3 + ky) * 3 + kx];
    rc = vnni_conv_init(c, w3, oc, ic3, 3, wmul, qb, oscale, 0.0f);
    free(w3);
    if (rc == 0)
        c->spread = ic;
    return rc;
}

#if VNNI_X86

/* What one block reads and writes. */
typedef struct job {
    const uint8_t *in;       /* the input pixel under tap 0 of the block's first pixel */
    const int *toff;         /* byte offset of each tap to run from `in` */
    const int *wofs;         /* and of its packed weights from `w` */
    const int8_t *w;         /* the packed weights at this pass's first channel block */
    const float *scale, *bias; /* at this pass's first channel */
    uint8_t *out8;           /* the block's first output pixel (u8), or NULL */
    float *out32;            /* or f32 */
    int ntaps, G, wrow;      /* taps to run, groups of 4 input channels, bytes per weight row */
    int nk0, nk1;            /* taps [0, nk0) have kx 0, [nk0, nk1) kx 1, the rest kx 2 */
    int ips, ops;            /* input pixel stride; output pixel stride (elements) */
    float sum_scale;
} job;

/* The accumulators are 24 named variables, not an array, and the dot product is one
 * instruction of inline assembly: with the intrinsic on an array (or on named
 * variables) GCC 12 copies each accumulator to a spare register and to the stack around
 * every vpdpbusd (0.56x oneDNN's speed on an 8x8 net); with the asm the loop is the
 * loads, the broadcasts and the dot products only. Accumulator k is pixel k / NZ, channel block k % NZ; with P and
 * NZ constants every `if` on them folds away. */
#define VNNI_DPBUSD(acc, a, w) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(w))
#define WZ(z) ((z) == 0 ? w0 : (z) == 1 ? w1 : (z) == 2 ? w2 : w3)

/* Taps [T0, T1) of the job, skipping pixel 0 when S0 and pixel P - 1 when SL (they
 * would read the zero border only). */
#define TAPS(T0, T1, S0, SL)                                                                     \
    for (int ti = (T0); ti < (T1); ti++) {                                                       \
        const uint8_t *src = j->in + j->toff[ti];                                                \
        const int8_t *wt = j->w + j->wofs[ti];                                                   \
        for (int g = 0; g < j->G; g++, wt += j->wrow, src += 4) {                                \
            const __m512i w0 = _mm512_load_si512((const void *)wt);                              \
            const __m512i w1 = NZ > 1 ? _mm512_load_si512((const void *)(wt + 64)) : w0;         \
            const __m512i w2 = NZ > 2 ? _mm512_load_si512((const void *)(wt + 128)) : w0;        \
            const __m512i w3 = NZ > 3 ? _mm512_load_si512((const void *)(wt + 192)) : w0;        \
            __m512i bc = w0;                                                                     \
            K24_S(S0, SL)                                                                        \
        }                                                                                        \
    }
#define STEP(k, S0, SL)                                                                          \
    if ((k) < NA && !((S0) && (k) / NZ == 0) && !((SL) && (k) / NZ == P - 1)) {                  \
        if ((k) % NZ == 0) {                                                                     \
            int32_t b4;                                                                          \
            memcpy(&b4, src + (size_t)((k) / NZ) * ips, 4);                                      \
            bc = _mm512_set1_epi32(b4);                                                          \
        }                                                                                        \
        VNNI_DPBUSD(a##k, bc, WZ((k) % NZ));                                                     \
    }
#define K24_S(S0, SL)                                                                            \
    STEP(0, S0, SL) STEP(1, S0, SL) STEP(2, S0, SL) STEP(3, S0, SL) STEP(4, S0, SL)              \
    STEP(5, S0, SL) STEP(6, S0, SL) STEP(7, S0, SL) STEP(8, S0, SL) STEP(9, S0, SL)              \
    STEP(10, S0, SL) STEP(11, S0, SL) STEP(12, S0, SL) STEP(13, S0, SL) STEP(14, S0, SL)         \
    STEP(15, S0, SL) STEP(16, S0, SL) STEP(17, S0, SL) STEP(18, S0, SL) STEP(19, S0, SL)         \
    STEP(20, S0, SL) STEP(21, S0, SL) STEP(22, S0, SL) STEP(23, S0, SL)

/* L: the block's first pixel is on the board's left edge; R: its last on the right edge.
 * The job's taps come ordered by kx: [0, nk0) read the left neighbour, [nk0, nk1) the
 * column itself, [nk1, ntaps) the right neighbour. */
static inline __attribute__((always_inline)) VNNI_TARGET void block(const job *j, const int P,
                                                                     const int NZ, const int L,
                                                                     const int R)
{
    const int NA = P * NZ;
#define DECL(k) __m512i a##k = _mm512_setzero_si512();
    VNNI_K24(DECL)
#undef DECL
    const size_t ips = (size_t)j->ips;
    TAPS(0, j->nk0, L, 0)
    TAPS(j->nk0, j->nk1, 0, 0)
    TAPS(j->nk1, j->ntaps, 0, R)
    const __m512 zero = _mm512_setzero_ps();
    const __m512 ss = _mm512_set1_ps(j->sum_scale);
#define OUT(k)                                                                                   \
    if ((k) < NA) {                                                                              \
        const int p = (k) / NZ, z = (k) % NZ;                                                    \
        __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a##k), _mm512_loadu_ps(j->scale + z * 16), \
                                   _mm512_loadu_ps(j->bias + z * 16));                           \
        if (j->out32) {                                                                          \
            _mm512_storeu_ps(j->out32 + (size_t)p * j->ops + z * 16, _mm512_max_ps(f, zero));    \
        } else {                                                                                 \
            uint8_t *d = j->out8 + (size_t)p * j->ops + z * 16;                                  \
            if (j->sum_scale > 0) {                                                              \
                __m512i s8 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)d)); \
                f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s8), ss, f);                              \
            }                                                                                    \
            f = _mm512_max_ps(f, zero);                                                          \
            _mm_storeu_si128((__m128i *)(void *)d, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(f))); \
        }                                                                                        \
    }
    VNNI_K24(OUT)
#undef OUT
}

#define CASE(NZ, P)                                                                              \
    case ((NZ)*32 + (P)) * 4:                                                                    \
        block(j, P, NZ, 0, 0);                                                                   \
        break;                                                                                   \
    case ((NZ)*32 + (P)) * 4 + 1:                                                                \
        block(j, P, NZ, 0, 1);                                                                   \
        break;                                                                                   \
    case ((NZ)*32 + (P)) * 4 + 2:                                                                \
        block(j, P, NZ, 1, 0);                                                                   \
        break;                                                                                   \
    case ((NZ)*32 + (P)) * 4 + 3:                                                                \
        block(j, P, NZ, 1, 1);                                                                   \
        break;
#define CASES8(NZ) CASE(NZ, 1) CASE(NZ, 2) CASE(NZ, 3) CASE(NZ, 4) CASE(NZ, 5) CASE(NZ, 6)     \
    CASE(NZ, 7) CASE(NZ, 8)

VNNI_TARGET static void dispatch(const job *j, int P, int NZ, int L, int R)
{
    switch ((NZ * 32 + P) * 4 + L * 2 + R) {
        CASES8(1)
        CASE(1, 9) CASE(1, 10) CASE(1, 11) CASE(1, 12) CASE(1, 13) CASE(1, 14) CASE(1, 15)
        CASE(1, 16)
        CASES8(2)
        CASE(2, 9) CASE(2, 10) CASE(2, 11) CASE(2, 12)
        CASES8(3)
        CASE(4, 1) CASE(4, 2) CASE(4, 3) CASE(4, 4) CASE(4, 5) CASE(4, 6)
    default:
        abort(); /* conv_run never asks for another shape */
    }
}

VNNI_TARGET static void conv_run(const vnni_conv *c, const uint8_t *in, int in_stride,
                                 uint8_t *out8, float *out32, int rows, int cols)
{
    int G = c->icp / 4, pitch = (cols + 2) * in_stride, opitch = (cols + 2) * c->oc;
    /* the taps of the first row (r 0), the middle rows (1), the last row (2) and a board of
     * one row (3): a 3x3 tap that reads only the zero border (ky 0 on the first row, ky 2
     * on the last) is left out */
    int toff[4][9], wofs[4][9], nt[4] = {0, 0, 0, 0}, nk[4][2];
    for (int r = 0; r < 4; r++)
        for (int want = 0; want < 3; want++) { /* ordered by kx (job.nk0, nk1) */
            if (want > 0)
                nk[r][want - 1] = nt[r];
            for (int ti = 0; ti < c->ntaps; ti++) {
                int t = c->taps[ti], ky = c->k == 3 ? t / 3 : 1, kx = c->k == 3 ? t % 3 : 1;
                if (kx != want || (r % 3 == 0 && ky == 0) || (r >= 2 && ky == 2))
                    continue;
                toff[r][nt[r]] = ky * pitch + kx * in_stride;
                wofs[r][nt[r]++] = ti * G * c->oc * 4;
            }
        }
    int nzt = c->oc / 16;
    for (int z0 = 0; z0 < nzt; z0 += VNNI_MAXZ) {
        int nz = nzt - z0 < VNNI_MAXZ ? nzt - z0 : VNNI_MAXZ, pm = vnni_pmax(nz);
        int nch = (cols + pm - 1) / pm, base = cols / nch, extra = cols % nch;
        job j = {.w = c->w + (size_t)z0 * 64,
                 .scale = c->scale + z0 * 16,
                 .bias = c->bias + z0 * 16,
                 .G = G,
                 .wrow = c->oc * 4,
                 .ips = in_stride,
                 .ops = c->oc,
                 .sum_scale = c->sum_scale};
        for (int y = 0; y < rows; y++) {
            int r = rows == 1 ? 3 : y == 0 ? 0 : y == rows - 1 ? 2 : 1;
            j.toff = toff[r];
            j.wofs = wofs[r];
            j.ntaps = nt[r];
            j.nk0 = nk[r][0];
            j.nk1 = nk[r][1];
            for (int ch = 0, x0 = 0; ch < nch; ch++) {
                int P = base + (ch < extra);
                j.in = in + (size_t)y * pitch + (size_t)x0 * in_stride;
                if (out32) {
                    j.out8 = NULL;
                    j.out32 = out32 + ((size_t)y * cols + x0) * c->oc + z0 * 16;
                } else {
                    j.out32 = NULL;
                    j.out8 = out8 + (size_t)(y + 1) * opitch + (size_t)(x0 + 1) * c->oc + z0 * 16;
                }
                dispatch(&j, P, nz, x0 == 0, x0 + P == cols);
                x0 += P;
            }
        }
    }
}

void vnni_conv_u8(const vnni_conv *c, const uint8_t *in, int in_stride, uint8_t *out, int rows,
                  int cols)
{
    conv_run(c, in, in_stride, out, NULL, rows, cols);
}

VNNI_TARGET void vnni_quantize_input(const float *in, int planes, int rows, int cols, float scale,
                                     uint8_t *out, int stride, int spread)
{
    const __m512 s = _mm512_set1_ps(scale), zero = _mm512_setzero_ps();
    uint8_t q[16];
    for (int c = 0; c < planes; c++)
        for (int y = 0; y < rows; y++) {
            const float *row = in + ((size_t)c * rows + y) * cols;
            uint8_t *o = out + ((size_t)(y + 1) * (cols + 2) + 1) * stride + c;
            for (int x0 = 0; x0 < cols; x0 += 16) {
                int n = cols - x0 < 16 ? cols - x0 : 16;
                __mmask16 m = (__mmask16)((1u << n) - 1);
                __m512 f = _mm512_max_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + x0), s), zero);
                _mm_storeu_si128((__m128i *)(void *)q, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(f)));
                if (spread) /* the pixel's own at planes + c, to its right neighbour's
                             * channel c (its left), to its left's 2 planes + c */
                    for (int x = 0; x < n; x++) {
                        uint8_t *d = o + (size_t)(x0 + x) * stride;
                        d[planes] = q[x];
                        d[stride] = q[x];
                        d[2 * planes - stride] = q[x];
                    }
                else
                    for (int x = 0; x < n; x++)
                        o[(size_t)(x0 + x) * stride] = q[x];
            }
        }
}

void vnni_conv_f32(const vnni_conv *c, const uint8_t *in, int in_stride, float *out, int rows,
                   int cols)
{
    conv_run(c, in, in_stride, NULL, out, rows, cols);
}

#else /* no x86: vnni_cpu_ok() is 0 and nothing calls these */

void vnni_quantize_input(const float *in, int planes, int rows, int cols, float scale,
                         uint8_t *out, int stride, int spread)
{
    (void)in, (void)planes, (void)rows, (void)cols, (void)scale, (void)out, (void)stride, (void)spread;
    abort();
}

void vnni_conv_u8(const vnni_conv *c, const uint8_t *in, int in_stride, uint8_t *out, int rows,
                  int cols)
{
    (void)c, (void)in, (void)in_stride, (void)out, (void)rows, (void)cols;
    abort();
}

void vnni_conv_f32(const vnni_conv *c, const uint8_t *in, int in_stride, float *out, int rows,
                   int cols)
{
    (void)c, (void)in, (void)in_stride, (void)out, (void)rows, (void)cols;
    abort();
}

#endif
