/* conv_wino.h — 3x3 int8-activation convolutions by Winograd's F(4x4, 3x3), AVX512-VNNI.
 *
 * The direct kernels (conv_vnni.h) run at the VNNI peak, so a faster 3x3 conv has to do
 * fewer multiplications. Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray 2015)
 * makes a 4x4 output tile from a 6x6 input tile with 36 products a channel pair instead
 * of 144: Y = A^T [(G g G^T) . (B^T d B)] A. Its B^T and A^T are integer matrices, so the
 * transformed input U = B^T d B of u8 activations is exact in s16 (|U| <= 100 * 255), and
 * the 36 products a tile are `vpdpwssd` (s16 pairs into s32: half vpdpbusd's multiplies
 * an instruction). The transformed weights V = G g G^T (g: the folded f32 weights times
 * the input step over the output step) are rounded to s16 per (point, output channel)
 * with a scale that bounds every sum over the input channels inside s32, which keeps 11
 * or more bits of each V (the direct kernels' s8 weights keep 7). The 36 sums of a tile
 * are scaled back to f32 and A^T M A, the bias, the skip, ReLU and the rounding to u8 are
 * the direct kernels' (conv_vnni.h). A gain where the tiles fit the board (wino_worth):
 * 8x8 is 2 x 2 tiles exactly, 15x15 4 x 4 with one row and column to spare; on 9x9 44%
 * of the tiles' outputs would fall off the board.
 *
 * Activations in and out: conv_vnni.h's padded NHWC u8 layout of one position.
 * Needs avx512f, avx512bw and avx512_vnni (vnni_cpu_ok). Thread-safe: a wino_conv is
 * read-only after wino_conv_init; each caller brings its own scratch (wino_scratch_bytes).
 */
#ifndef GZ_NN_CONV_WINO_H
#define GZ_NN_CONV_WINO_H

#include <stddef.h>
#include <stdint.h>

typedef struct wino_conv {
    int ic;        /* input channels, a multiple of 16 */
    int oc;        /* output channels, a multiple of 16 */
    int rows, cols, tr, tc; /* the board and its tiles (tr x tc of 4x4) */
    int16_t *v;    /* (36, ic/2, oc, 2) s16, 64-byte aligned (owned) */
    float *vscale; /* (36, oc): the real value of one unit of v (owned) */
    float *bias;   /* (oc) in output units (owned) */
    float sum_scale;
} wino_conv;

/* Whether a 3x3 conv of `channels` in and out with `taps` live taps (9, or 7 on the hex
 * lattice) on a rows x cols board runs faster by Winograd than by the direct kernels,
 * by a rule fitted to measurements on an AMD EPYC (Zen 4; docs/benchmarks.md): 1.15-1.3x
 * on 8x8, 12x12, 15x15, 16x16 and 19x19 boards with 48 or 64 channels; slower where a
 * sixth or more of the tiles' outputs fall off the board (7x7, 9x9, 11x11, 13x13), on
 * boards of one tile (4x4), with 32 channels, and on the hex lattice (the direct kernels
 * do 7 of the 9 taps there). */
int wino_worth(int rows, int cols, int channels, int taps);

/* Packs folded f32 weights w (oc, ic, 3, 3) as vnni_conv_init takes them: the s8 step's
 * inverse wmul[o], the quantised bias qb[o] and the output scale oscale[o] (so the real
 * weight in output units per input unit is w * wmul * oscale, the bias qb * oscale).
 * ic and oc multiples of 16. Returns 0, or -1 (out of memory or a shape it does not run). */
int wino_conv_init(wino_conv *c, const float *w, int oc, int ic, const float *wmul,
                   const float *qb, const float *oscale, float sum_scale, int rows, int cols);
void wino_conv_free(wino_conv *c);

/* Bytes of scratch one call needs (64-byte aligned by the caller). */
size_t wino_scratch_bytes(const wino_conv *c);

/* One position: in (padded, in_stride >= c->ic channels a pixel) -> out (padded, c->oc
 * channels a pixel; only the interior is written). With c->sum_scale > 0, out's interior
 * holds the skip. in and out must not overlap. */
void wino_conv_u8(const wino_conv *c, const uint8_t *in, int in_stride, uint8_t *out,
                  void *scratch);

#endif
