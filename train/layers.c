/* layers.c — the trainer's layers (see layers.h). The bodies are in layers_impl.h,
 * compiled here twice: in float (the trainer) and in double (names with _f64, the
 * tests' finite-difference oracle), so both precisions run the very same code. */
#include "layers.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>

/* Columns (samples * H * W) per im2col chunk of a 3x3 conv. The whole batch in one
 * chunk makes the largest GEMM, but its im2col buffer (IC*9 x N*H*W) leaves the caches;
 * a few thousand columns keeps it in L2/L3 while the GEMM stays wide (measured with
 * `gridzero bench train`). */
#define CONV_CHUNK_COLS 2048

/* Live kernel taps (index ky*3+kx) on each lattice. The flip (ky,kx) -> (2-ky,2-kx),
 * index k -> 8-k, maps each set onto itself, which the input-gradient conv relies on. */
static const int taps_square[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
static const int taps_hex[7] = {1, 2, 3, 4, 5, 6, 7};

/* The memory-bound element-wise passes get AVX2 and AVX-512 clones chosen at load time
 * (the binary still runs on any x86-64: no -march needed). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HOT
#endif

/* The distance between the 16 blocks of a transformed array of n elements each. */
#define WINO_XS(n) ((n) + 16)

static int use_winograd(conv_dims d)
{
    if (d.algo == CONV_WINOGRAD)
        return 1;
    int ch = d.IC < d.OC ? d.IC : d.OC;
    return d.algo == CONV_AUTO && ch >= CONV_WINOGRAD_MIN_CH;
}

/* The Winograd tiles' order: by boards (the transforms vectorised over 16 boards) on
 * boards narrower than 12 columns, whose tile rows (up to 5 tiles) are too short for
 * vectors; by rows on wider ones, where it keeps a chunk's arrays smaller. */
static int wino_by_boards(conv_dims d) { return d.W < 12; }

/* Boards per Winograd chunk: by boards, 16 (one vector of floats); by rows, about 128
 * tiles, so that the transformed arrays (16 x channels x tiles) stay in L2 (measured
 * with `gridzero bench train`). */
static int wino_chunk(conv_dims d)
{
    int nb = 16;
    if (!wino_by_boards(d)) {
        int tiles = ((d.H + 1) / 2) * ((d.W + 1) / 2);
        nb = 128 / tiles;
        if (nb < 1)
            nb = 1;
    }
    return nb < d.N ? nb : d.N;
}

static int conv_chunk(conv_dims d)
{
    int hw = d.H * d.W;
    int nb = CONV_CHUNK_COLS / hw;
    if (nb < 1)
        nb = 1;
    return nb < d.N ? nb : d.N;
}

/* The board-order Winograd transforms copy each channel of 16 boards into points with
 * the boards innermost, and back. Element by element that is a strided scalar store per
 * point (60% of the input transform's time, `perf`); with AVX-512 it is 16x16
 * transposes in registers. Float only (the double build is the tests' oracle and keeps
 * the scalar copy), chosen at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WINO_T16 1
#define WINO_AVX512 __attribute__((target("avx512f")))

static int wino_t16_cpu(void) { return __builtin_cpu_supports("avx512f"); }

/* r[i] (16 rows) becomes its transpose: r[j][i] = old r[i][j]. */
WINO_AVX512 static inline void t16_transpose(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 16; i += 8)
        for (int j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + 4 + j], 0x88);
            t[i + 4 + j] = _mm512_shuffle_f32x4(r[i + j], r[i + 4 + j], 0xDD);
        }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    }
}

/* Prefetches part `part` of nparts of the 16 hw floats at p (NULL: none): the next
 * channel's boards, while this one's are transposed. The activations are read from L3
 * or memory, one channel (a 16 hw block) after another, ltot floats apart. */
WINO_AVX512 static inline void t16_prefetch(const float *p, int hw, int part, int nparts)
{
    if (!p)
        return;
    /* bytes [a, b) of the block: the cache lines that start in them (the first part also
     * the line holding p), so that the parts together fetch every line the block touches */
    uintptr_t n = (uintptr_t)hw * 16 * sizeof(float), a = n * part / nparts, b = n * (part + 1) / nparts;
    uintptr_t lo = part == 0 ? (uintptr_t)p & ~(uintptr_t)63 : ((uintptr_t)p + a + 63) & ~(uintptr_t)63;
    for (uintptr_t q = lo; q < (uintptr_t)p + b; q += 64)
        _mm_prefetch((const char *)q, _MM_HINT_T0);
}

/* 16 boards (board n: src + n hw, H x W points row-major) to points: point (y, x)'s 16
 * boards go to dst + ((y + oy) pitch + x + ox) 16. next: the next call's src (prefetched). */
WINO_AVX512 static void t16_boards_to_points(float *dst, int pitch, int oy, int ox, const float *src,
                                        int hw, int W, const float *next)
{
    int y = 0, x = 0, nblk = (hw + 15) / 16;
    for (int p0 = 0; p0 < hw; p0 += 16) {
        t16_prefetch(next, hw, p0 / 16, nblk);
        int m = hw - p0 < 16 ? hw - p0 : 16;
        __mmask16 k = (__mmask16)((1u << m) - 1);
        __m512 r[16];
        for (int n = 0; n < 16; n++)
            r[n] = _mm512_maskz_loadu_ps(k, src + (size_t)n * hw + p0);
        t16_transpose(r);
        for (int j = 0; j < m; j++) {
            _mm512_storeu_ps(dst + ((size_t)(y + oy) * pitch + x + ox) * 16, r[j]);
            if (++x == W)
                x = 0, y++;
        }
    }
}

/* The way back: board n's point (y, x) (dst + n hw + y W + x) = (accumulate: +=) element
 * n of the 16 at src + (y pitch + x) 16. */
WINO_AVX512 static void t16_points_to_boards(float *dst, int hw, int W, const float *src, int pitch,
                                        int accumulate, const float *next)
{
    int y = 0, x = 0, nblk = (hw + 15) / 16;
    for (int p0 = 0; p0 < hw; p0 += 16) {
        t16_prefetch(next, hw, p0 / 16, nblk);
        int m = hw - p0 < 16 ? hw - p0 : 16;
        __mmask16 k = (__mmask16)((1u << m) - 1);
        __m512 r[16];
        for (int j = 0; j < 16; j++) {
            if (j < m) {
                r[j] = _mm512_loadu_ps(src + ((size_t)y * pitch + x) * 16);
                if (++x == W)
                    x = 0, y++;
            } else
                r[j] = _mm512_setzero_ps();
        }
        t16_transpose(r);
        for (int n = 0; n < 16; n++) {
            float *d = dst + (size_t)n * hw + p0;
            __m512 v = r[n];
            if (accumulate)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, d));
            _mm512_mask_storeu_ps(d, k, v);
        }
    }
}
#else
#define WINO_T16 0
#endif

#define R float
#define F(name) name
#define GEMM cblas_sgemm
#define WINO_T16_R WINO_T16
#include "layers_impl.h"
#undef R
#undef F
#undef GEMM
#undef WINO_T16_R

#define WINO_T16_R 0
#define R double
#define F(name) name##_f64
#define GEMM cblas_dgemm
#include "layers_impl.h"
#undef R
#undef F
#undef GEMM
