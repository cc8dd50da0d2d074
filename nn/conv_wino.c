/* conv_wino.c — 3x3 convolutions by Winograd's F(4x4, 3x3) with AVX512-VNNI (see
 * conv_wino.h).
 *
 * One call: (1) every tile's 6x6 input window -> U (36 points x tiles x ic, s16),
 * vectorised over 32 channels; (2) for every pass of up to 4 blocks of 16 output
 * channels and group of P tiles, and every point, P x NZ s32 accumulators in zmm
 * registers take `vpdpwssd` of each tile's broadcast channel pair against NZ rows of 16
 * channels x 2 of V, and leave the sums, scaled to f32, in M; (3) each tile's 36 sums of
 * a block -> A^T M A -> the 16 output pixels with the bias, the skip, ReLU and the u8
 * rounding. The accumulators are named variables and the dot product inline asm, for
 * the reason conv_vnni.c gives.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_vnni.h"
#include "conv_wino.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WINO_X86 1
#include <immintrin.h>
#define WINO_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define WINO_X86 0
#endif

#define WINO_MAXZ 4 /* output-channel blocks of 16 a pass */

/* F(4x4, 3x3) (Lavin and Gray): B^T (6x6), G (6x3), A^T (4x6). */
static const double wino_G[6][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
/* the sum of |B^T|'s entries along each row: |U[i][j]| <= 255 * rs[i] * rs[j] */
static const int wino_rs[6] = {10, 10, 10, 6, 6, 10};

int wino_worth(int rows, int cols, int channels, int taps)
{
    int tiles = ((rows + 3) / 4) * ((cols + 3) / 4);
    /* at least 4 tiles, whose outputs fall off the board by at most 15%, at least 48
     * channels, and all 9 taps live (the direct kernels skip the hex lattice's two) */
    return tiles >= 4 && 16 * tiles * 100 <= 115 * rows * cols && channels >= 48 && taps == 9;
}

void wino_conv_free(wino_conv *c)
{
    if (!c)
        return;
    free(c->v);
    free(c->vscale);
    free(c->bias);
    memset(c, 0, sizeof *c);
}

int wino_conv_init(wino_conv *c, const float *w, int oc, int ic, const float *wmul,
                   const float *qb, const float *oscale, float sum_scale, int rows, int cols)
{
    memset(c, 0, sizeof *c);
    if (oc < 16 || ic < 16 || oc % 16 || ic % 16 || rows < 1 || cols < 1)
        return -1;
    c->ic = ic;
    c->oc = oc;
    c->rows = rows;
    c->cols = cols;
    c->tr = (rows + 3) / 4;
    c->tc = (cols + 3) / 4;
    c->sum_scale = sum_scale;
    size_t nv = (size_t)36 * ic * oc;
    c->v = aligned_alloc(64, (nv * sizeof(int16_t) + 63) / 64 * 64);
    c->vscale = malloc(sizeof(float) * 36 * (size_t)oc);
    c->bias = malloc(sizeof(float) * (size_t)oc);
    double *V = malloc(sizeof(double) * nv); /* (oc, ic, 36) */
    if (!c->v || !c->vscale || !c->bias || !V) {
        free(V);
        wino_conv_free(c);
        return -1;
    }
    for (int o = 0; o < oc; o++) {
        double f = (double)wmul[o] * oscale[o];
        c->bias[o] = qb[o] * oscale[o];
        for (int i = 0; i < ic; i++) {
            const float *g = w + ((size_t)o * ic + i) * 9;
            double t[6][3], *v = V + ((size_t)o * ic + i) * 36;
            for (int a = 0; a < 6; a++)
                for (int k = 0; k < 3; k++)
                    t[a][k] = wino_G[a][0] * g[k] + wino_G[a][1] * g[3 + k] + wino_G[a][2] * g[6 + k];
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++)
                    v[a * 6 + b] = f * (t[a][0] * wino_G[b][0] + t[a][1] * wino_G[b][1] +
                                        t[a][2] * wino_G[b][2]);
        }
    }
    for (int x = 0; x < 36; x++) {
        /* every sum over the input channels stays inside s32: ic |U| vmax < 2^31 */
        double umax = 255.0 * wino_rs[x / 6] * wino_rs[x % 6];
        double vmax = floor(2147483647.0 / (ic * umax));
        if (vmax > 32767)
            vmax = 32767;
        for (int o = 0; o < oc; o++) {
            double m = 0;
            for (int i = 0; i < ic; i++)
                m = fmax(m, fabs(V[((size_t)o * ic + i) * 36 + x]));
            double qs = m > 0 ? vmax / m : 1.0;
            c->vscale[x * oc + o] = (float)(1.0 / qs);
            for (int i = 0; i < ic; i++) {
                long q = lrint(V[((size_t)o * ic + i) * 36 + x] * qs);
                c->v[(((size_t)x * (ic / 2) + i / 2) * oc + o) * 2 + i % 2] = (int16_t)q;
            }
        }
    }
    free(V);
    return 0;
}

/* Scratch: U (36, tiles, ic) s16, then M (P, 36, NZ * 16) f32 of one tile group. */
static size_t u_bytes(const wino_conv *c)
{
    return ((size_t)36 * c->tr * c->tc * c->ic * sizeof(int16_t) + 63) / 64 * 64;
}

size_t wino_scratch_bytes(const wino_conv *c)
{
    return u_bytes(c) + (size_t)24 * 16 * 36 * sizeof(float);
}

#if WINO_X86

/* B^T applied to six vectors (one line of a tile), in place, for a vector type V with
 * 16-bit lanes (PFX _mm512 or _mm256). Exact in s16 for inputs up to 10 * 255 (the
 * second pass's). */
#define BT6(NAME, V, PFX)                                                                        \
    static inline __attribute__((always_inline)) WINO_TARGET void NAME(V x[6])                 \
    {                                                                                            \
        V x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5];                      \
        V s12 = PFX##_add_epi16(x1, x2), d12 = PFX##_sub_epi16(x1, x2);                         \
        V s34 = PFX##_add_epi16(x3, x4), d43 = PFX##_sub_epi16(x4, x3);                         \
        V d42 = PFX##_sub_epi16(x4, x2), d31 = PFX##_slli_epi16(PFX##_sub_epi16(x3, x1), 1);    \
        /* 4 x0 - 5 x2 + x4 = 4 (x0 - x2) + (x4 - x2); 4 x1 - 5 x3 + x5 likewise */             \
        x[0] = PFX##_add_epi16(PFX##_slli_epi16(PFX##_sub_epi16(x0, x2), 2), d42);              \
        x[1] = PFX##_sub_epi16(s34, PFX##_slli_epi16(s12, 2));                                  \
        x[2] = PFX##_add_epi16(d43, PFX##_slli_epi16(d12, 2));                                  \
        x[3] = PFX##_add_epi16(d42, d31);                                                       \
        x[4] = PFX##_sub_epi16(d42, d31);                                                       \
        x[5] = PFX##_add_epi16(PFX##_slli_epi16(PFX##_sub_epi16(x1, x3), 2),                    \
                               PFX##_sub_epi16(x5, x3));                                        \
    }
BT6(bt6_512, __m512i, _mm512)
BT6(bt6_256, __m256i, _mm256)

/* One tile's window (nr x nc pixels on the padded board, the rest zero) of 32 channels
 * (LOAD: u8 -> V) -> U (points `ps` elements apart). */
#define TILE(NAME, V, BT, LOAD, STORE, ZERO)                                                    \
    static inline __attribute__((always_inline)) WINO_TARGET void NAME(                        \
        const uint8_t *w, size_t rowb, size_t pixb, int nr, int nc, int16_t *u, size_t ps)     \
    {                                                                                            \
        V t[6][6];                                                                               \
        /* running pointers, each step behind an empty asm: 72 addresses from constant       \
         * offsets were hoisted out of the tile loops and ran out of registers. A pointer    \
         * steps only to a pixel that is read (none past the window's last). */              \
        const uint8_t *col = w;                                                                  \
        _Pragma("GCC unroll 6") for (int s = 0; s < 6; s++)                                      \
        {                                                                                        \
            V x[6];                                                                              \
            if (s > 0 && s < nc) {                                                               \
                col += pixb;                                                                     \
                __asm__("" : "+r"(col));                                                         \
            }                                                                                    \
            const uint8_t *q = col;                                                              \
            _Pragma("GCC unroll 6") for (int r = 0; r < 6; r++)                                  \
            {                                                                                    \
                if (r > 0 && r < nr) {                                                           \
                    q += rowb;                                                                   \
                    __asm__("" : "+r"(q));                                                       \
                }                                                                                \
                x[r] = r < nr && s < nc ? LOAD(q) : ZERO;                                        \
            }                                                                                    \
            BT(x);                                                                               \
            _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++) t[i][s] = x[i];                  \
        }                                                                                        \
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)                                      \
        {                                                                                        \
            BT(t[i]);                                                                            \
            _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++)                                  \
            {                                                                                    \
                if (i + j > 0) {                                                                 \
                    u += ps;                                                                     \
                    __asm__("" : "+r"(u));                                                       \
                }                                                                                \
                STORE(u, t[i][j]);                                                               \
            }                                                                                    \
        }                                                                                        \
    }
#define LOAD512(p) _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define LOAD256(p) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define STORE512(p, v) _mm512_storeu_si512((void *)(p), v)
#define STORE256(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
TILE(tile_512, __m512i, bt6_512, LOAD512, STORE512, _mm512_setzero_si512())
TILE(tile_256, __m256i, bt6_256, LOAD256, STORE256, _mm256_setzero_si256())

/* Every tile's 6x6 window -> U: 32 channels at a time, a last 16 in 256-bit vectors. */
WINO_TARGET static void input_transform(const wino_conv *c, const uint8_t *in, int in_stride,
                                        int16_t *U)
{
    const int tr = c->tr, tc = c->tc, ic = c->ic, pw = c->cols + 2, ph = c->rows + 2;
    const size_t ps = (size_t)tr * tc * ic, pixb = (size_t)in_stride, rowb = (size_t)pw * pixb;
    for (int ty = 0; ty < tr; ty++)
        for (int tx = 0; tx < tc; tx++) {
            const uint8_t *w = in + 4 * (size_t)ty * rowb + 4 * (size_t)tx * pixb;
            int nr = ph - 4 * ty < 6 ? ph - 4 * ty : 6, nc = pw - 4 * tx < 6 ? pw - 4 * tx : 6;
            int16_t *u = U + ((size_t)ty * tc + tx) * ic;
            int c0 = 0;
            if (nr == 6 && nc == 6) {
                for (; c0 + 32 <= ic; c0 += 32)
                    tile_512(w + c0, rowb, pixb, 6, 6, u + c0, ps);
                if (c0 < ic)
                    tile_256(w + c0, rowb, pixb, 6, 6, u + c0, ps);
            } else {
                for (; c0 + 32 <= ic; c0 += 32)
                    tile_512(w + c0, rowb, pixb, nr, nc, u + c0, ps);
                if (c0 < ic)
                    tile_256(w + c0, rowb, pixb, nr, nc, u + c0, ps);
            }
        }
}

/* acc += the s16 pairs of w times the pair at p broadcast (an embedded broadcast: a load,
 * no shuffle) */
#define WINO_DPWSSD_B(acc, w, p)                                                                 \
    __asm__("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const int32_t *)(const void *)(p)))
#define WZ(z) ((z) == 0 ? w0 : (z) == 1 ? w1 : (z) == 2 ? w2 : w3)

/* One point x of one tile group: P tiles x NZ blocks of the sums over every channel
 * pair, scaled to f32 into M (P, 36, NZ * 16). u: the group's first tile at point x; v:
 * point x's weights at the pass's first block; vs: point x's scales there. */
static inline __attribute__((always_inline)) WINO_TARGET void gemm_block(
    const int16_t *u, size_t ustride, const int16_t *v, int wrow, int pairs, const float *vs,
    float *M, const int P, const int NZ)
{
    const int NA = P * NZ;
#define DECL(k) __m512i a##k = _mm512_setzero_si512();
    VNNI_K24(DECL)
#undef DECL
    const char *src = (const char *)u;
    const char *wt = (const char *)v;
    for (int k = 0; k < pairs; k++, src += 4, wt += wrow) {
        const __m512i w0 = _mm512_load_si512((const void *)wt);
        const __m512i w1 = NZ > 1 ? _mm512_load_si512((const void *)(wt + 64)) : w0;
        const __m512i w2 = NZ > 2 ? _mm512_load_si512((const void *)(wt + 128)) : w0;
        const __m512i w3 = NZ > 3 ? _mm512_load_si512((const void *)(wt + 192)) : w0;
#define STEP(k)                                                                                  \
    if ((k) < NA)                                                                                \
        WINO_DPWSSD_B(a##k, WZ((k) % NZ), src + (size_t)((k) / NZ) * ustride);
        VNNI_K24(STEP)
#undef STEP
    }
#define OUT(k)                                                                                   \
    if ((k) < NA)                                                                                \
        _mm512_store_ps(M + (size_t)((k) / NZ) * 36 * NZ * 16 + ((k) % NZ) * 16,                 \
                        _mm512_mul_ps(_mm512_cvtepi32_ps(a##k), _mm512_loadu_ps(vs + ((k) % NZ) * 16)));
    VNNI_K24(OUT)
#undef OUT
}

#define CASE(NZ, P)                                                                              \
    case (NZ)*32 + (P):                                                                          \
        gemm_block(u, ustride, v, wrow, pairs, vs, M, P, NZ);                                    \
        break;
#define CASES6(NZ) CASE(NZ, 1) CASE(NZ, 2) CASE(NZ, 3) CASE(NZ, 4) CASE(NZ, 5) CASE(NZ, 6)

WINO_TARGET static void gemm_dispatch(const int16_t *u, size_t ustride, const int16_t *v,
                                      int wrow, int pairs, const float *vs, float *M, int P,
                                      int NZ)
{
    switch (NZ * 32 + P) {
        CASES6(1) CASE(1, 7) CASE(1, 8) CASE(1, 9) CASE(1, 10) CASE(1, 11) CASE(1, 12)
        CASE(1, 13) CASE(1, 14) CASE(1, 15) CASE(1, 16)
        CASES6(2) CASE(2, 7) CASE(2, 8) CASE(2, 9) CASE(2, 10) CASE(2, 11) CASE(2, 12)
        CASES6(3) CASE(3, 7) CASE(3, 8)
        CASES6(4)
    default:
        abort(); /* wino_conv_u8 never asks for another shape */
    }
}

/* A^T applied to six f32 vectors (one line of M), giving four. */
#define AT6(m0, m1, m2, m3, m4, m5, y0, y1, y2, y3)                                              \
    do {                                                                                         \
        __m512 s12_ = _mm512_add_ps(m1, m2), d12_ = _mm512_sub_ps(m1, m2);                       \
        __m512 s34_ = _mm512_add_ps(m3, m4), d34_ = _mm512_sub_ps(m3, m4);                       \
        y0 = _mm512_add_ps(_mm512_add_ps(m0, s12_), s34_);                                      \
        y1 = _mm512_fmadd_ps(d34_, two, d12_);                                                  \
        y2 = _mm512_fmadd_ps(s34_, four, s12_);                                                 \
        y3 = _mm512_add_ps(_mm512_fmadd_ps(d34_, eight, d12_), m5);                             \
    } while (0)

/* One tile's block of 16 output channels: M (36 points, `mstride` floats apart) ->
 * the tile's nr x nc pixels on the board at out (padded layout, `pitch` bytes a row,
 * `ops` a pixel), with bias, skip, ReLU, u8. */
static inline __attribute__((always_inline)) WINO_TARGET void output_tile(
    const float *M, size_t mstride, __m512 b, float sum_scale, uint8_t *out, size_t pitch,
    size_t ops, int nr, int nc)
{
    const __m512 two = _mm512_set1_ps(2.0f), four = _mm512_set1_ps(4.0f);
    const __m512 eight = _mm512_set1_ps(8.0f), zero = _mm512_setzero_ps();
    __m512 t[6][4];
    /* running pointers (here and for the pixels) with an empty asm between steps, so the
     * compiler does not hoist dozens of addresses out of the callers' loops into spills */
#define LDN(v, first)                                                                            \
    if (!(first)) {                                                                              \
        M += mstride;                                                                            \
        __asm__("" : "+r"(M));                                                                   \
    }                                                                                            \
    __m512 v = _mm512_load_ps(M);
#define ROW(i)                                                                                   \
    {                                                                                            \
        LDN(m0, (i) == 0) LDN(m1, 0) LDN(m2, 0) LDN(m3, 0) LDN(m4, 0) LDN(m5, 0)                 \
        AT6(m0, m1, m2, m3, m4, m5, t[i][0], t[i][1], t[i][2], t[i][3]);                         \
    }
    ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5)
#undef ROW
#undef LDN
    const __m512 ss = _mm512_set1_ps(sum_scale);
    _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++)
    {
        if (q >= nc)
            break;
        if (q > 0)
            out += ops;
        __m512 y[4];
        AT6(t[0][q], t[1][q], t[2][q], t[3][q], t[4][q], t[5][q], y[0], y[1], y[2], y[3]);
        uint8_t *d = out;
        __asm__("" : "+r"(out));
        _Pragma("GCC unroll 4") for (int p = 0; p < 4; p++)
        {
            if (p >= nr)
                break;
            if (p > 0)
                d += pitch;
            __asm__("" : "+r"(d));
            __m512 f = _mm512_add_ps(y[p], b);
            if (sum_scale > 0) {
                __m512i s8 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)d));
                f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s8), ss, f);
            }
            f = _mm512_max_ps(f, zero);
            _mm_storeu_si128((__m128i *)(void *)d, _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(f)));
        }
    }
}

WINO_TARGET void wino_conv_u8(const wino_conv *c, const uint8_t *in, int in_stride, uint8_t *out,
                              void *scratch)
{
    int T = c->tr * c->tc, pairs = c->ic / 2, nzt = c->oc / 16, wrow = c->oc * 4;
    size_t pw = (size_t)c->cols + 2, pitch = pw * (size_t)c->oc;
    int16_t *U = scratch;
    float *M = (float *)(void *)((char *)scratch + u_bytes(c));
    input_transform(c, in, in_stride, U);
    size_t ustride = (size_t)c->ic * sizeof(int16_t);
    for (int z0 = 0; z0 < nzt; z0 += WINO_MAXZ) {
        int nz = nzt - z0 < WINO_MAXZ ? nzt - z0 : WINO_MAXZ, pm = vnni_pmax(nz);
        int ng = (T + pm - 1) / pm, base = T / ng, extra = T % ng;
        int mstride = nz * 16; /* floats between a tile-block's points in M */
        for (int gi = 0, t0 = 0; gi < ng; gi++) {
            int P = base + (gi < extra);
            for (int x = 0; x < 36; x++)
                gemm_dispatch(U + ((size_t)x * T + t0) * c->ic, ustride,
                              c->v + ((size_t)x * pairs * c->oc + (size_t)z0 * 16) * 2, wrow, pairs,
                              c->vscale + (size_t)x * c->oc + z0 * 16, M + (size_t)x * mstride, P, nz);
            for (int p = 0; p < P; p++) {
                int t = t0 + p, ty = t / c->tc, tx = t % c->tc;
                int nr = c->rows - 4 * ty < 4 ? c->rows - 4 * ty : 4;
                int nc = c->cols - 4 * tx < 4 ? c->cols - 4 * tx : 4;
                uint8_t *o = out + ((size_t)(4 * ty + 1) * pw + 4 * tx + 1) * c->oc;
                for (int z = 0; z < nz; z++)
                    output_tile(M + (size_t)p * 36 * mstride + z * 16, (size_t)mstride,
                                _mm512_loadu_ps(c->bias + (z0 + z) * 16), c->sum_scale,
                                o + (z0 + z) * 16, pitch, (size_t)c->oc, nr, nc);
            }
            t0 += P;
        }
    }
}

#else /* no x86: vnni_cpu_ok() is 0 and nothing calls this */

void wino_conv_u8(const wino_conv *c, const uint8_t *in, int in_stride, uint8_t *out,
                  void *scratch)
{
    (void)c, (void)in, (void)in_stride, (void)out, (void)scratch;
    abort();
}

#endif
