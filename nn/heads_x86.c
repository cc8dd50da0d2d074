/* heads_x86.c — the heads' dot products and pool with AVX-512 (see heads_x86.h). */
#include <stdlib.h>

#include "heads_x86.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HX_TARGET __attribute__((target("avx512f")))

int hx_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

/* r[j] = the sum of v[j]'s 16 lanes, j < 16. Halves pair up: 512-bit halves of two
 * vectors (8 adds), then quarters (4), then pairs inside each 128-bit lane (2 + 1); the
 * result's lanes come out as a 4x4 transpose of j, undone by one permute. */
HX_TARGET static inline __m512 hsum16(const __m512 *v)
{
    __m512 a[8], b[4], c[2];
    for (int i = 0; i < 8; i++)
        a[i] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
                             _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
    for (int i = 0; i < 4; i++) /* lane L of b[i]: partial sums of v[4i + L] */
        b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x88),
                             _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xDD));
    for (int i = 0; i < 2; i++) /* lane L: 2 partials of v[8i + L], then of v[8i + 4 + L] */
        c[i] = _mm512_add_ps(_mm512_shuffle_ps(b[2 * i], b[2 * i + 1], 0x44),
                             _mm512_shuffle_ps(b[2 * i], b[2 * i + 1], 0xEE));
    /* lane L, element e: the sum of v[4e + L] */
    __m512 d = _mm512_add_ps(_mm512_shuffle_ps(c[0], c[1], 0x88), _mm512_shuffle_ps(c[0], c[1], 0xDD));
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, d);
}

HX_TARGET void hx_rows_dot(const float *M, size_t stride, int rows, int cols, const float *v,
                           float *out)
{
    int nb = cols / 16;
    __m512 w[4];
    for (int k = 0; k < nb; k++)
        w[k] = _mm512_loadu_ps(v + 16 * k);
    for (int i0 = 0; i0 < rows; i0 += 16) {
        int n = rows - i0 < 16 ? rows - i0 : 16;
        __m512 p[16];
        for (int j = 0; j < 16; j++) {
            const float *m = M + (size_t)(i0 + (j < n ? j : 0)) * stride;
            __m512 s = _mm512_mul_ps(_mm512_loadu_ps(m), w[0]);
            for (int k = 1; k < nb; k++)
                s = _mm512_fmadd_ps(_mm512_loadu_ps(m + 16 * k), w[k], s);
            p[j] = s;
        }
        __m512 r = hsum16(p);
        _mm512_mask_storeu_ps(out + i0, (__mmask16)((1u << n) - 1), r);
    }
}

HX_TARGET void hx_pool(const float *X, size_t stride, int rows, int cols, float *mean, float *max)
{
    int nb = cols / 16;
    __m512 s[4], m[4];
    for (int k = 0; k < nb; k++) {
        s[k] = _mm512_setzero_ps();
        m[k] = _mm512_setzero_ps();
    }
    for (int i = 0; i < rows; i++) {
        const float *x = X + (size_t)i * stride;
        for (int k = 0; k < nb; k++) {
            __m512 a = _mm512_loadu_ps(x + 16 * k);
            s[k] = _mm512_add_ps(s[k], a);
            m[k] = _mm512_max_ps(m[k], a);
        }
    }
    __m512 nr = _mm512_set1_ps((float)rows);
    for (int k = 0; k < nb; k++) {
        _mm512_storeu_ps(mean + 16 * k, _mm512_div_ps(s[k], nr));
        if (max)
            _mm512_storeu_ps(max + 16 * k, m[k]);
    }
}

#else /* no x86: hx_ok() is 0 and nothing calls these */

int hx_ok(void) { return 0; }

void hx_rows_dot(const float *M, size_t stride, int rows, int cols, const float *v, float *out)
{
    (void)M, (void)stride, (void)rows, (void)cols, (void)v, (void)out;
    abort();
}

void hx_pool(const float *X, size_t stride, int rows, int cols, float *mean, float *max)
{
    (void)X, (void)stride, (void)rows, (void)cols, (void)mean, (void)max;
    abort();
}

#endif
