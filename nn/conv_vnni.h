/* conv_vnni.h — direct int8 convolutions with AVX512-VNNI for small boards.
 *
 * oneDNN's u8s8 kernels run short rows badly: on an 8x8 board they reach 57-60% of the
 * VNNI peak where net A's 15x15 trunk reaches 83-85% (docs/benchmarks.md). These kernels
 * keep one board row (or a balanced part of one) of pixels in registers: P pixels x NZ
 * blocks of 16 output channels of s32 accumulators (P * NZ <= 24), and for every tap and
 * group of 4 input channels broadcast each pixel's 4 u8 once and take `vpdpbusd` against
 * NZ rows of 16 x 4 s8 weights. No im2col, no packing of the activations, no border
 * handling: the input has a zero border of one pixel.
 *
 * Layout of an activation tensor of one position (vnni_act_bytes): (rows + 2) x (cols + 2)
 * pixels, row-major, each pixel `stride` u8 channels (NHWC), the border pixels 0. The
 * real value of channel c is u8 * its step (one step per tensor: nn_calib).
 *
 * The arithmetic is oneDNN's (infer_dnnl.c, int8): y = scale[o] * s32 + bias[o] (bias
 * = the quantised bias times the output scale), + sum_scale * the u8 already in dst (the
 * skip) when sum_scale > 0, ReLU, rounded to nearest even and saturated to u8; or, for
 * the head, the f32 y after ReLU.
 *
 * Needs avx512f, avx512bw and avx512_vnni at run time (vnni_cpu_ok). Knows nothing of
 * oneDNN, nets or games. Thread-safe: a vnni_conv is read-only after vnni_conv_init.
 */
#ifndef GZ_NN_CONV_VNNI_H
#define GZ_NN_CONV_VNNI_H

#include <stddef.h>
#include <stdint.h>

typedef struct vnni_conv {
    int k;         /* 1 or 3 */
    int ic, icp;   /* input channels; icp = ic rounded up to a multiple of 4 */
    int oc;        /* output channels rounded up to a multiple of 16 (the channels added
                      have weights and bias 0) */
    int ntaps;     /* taps with a nonzero weight (at least 1) */
    int taps[9];   /* their indices ky * k + kx, ascending */
    int8_t *w;     /* (ntaps, icp/4, oc, 4) s8, 64-byte aligned (owned) */
    float *scale;  /* (oc) owned */
    float *bias;   /* (oc) owned */
    float sum_scale;
    int spread;    /* 0, or the stem's real input channels when its columns are spread
                      (vnni_stem_init): then ic = 3 * spread */
} vnni_conv;

/* The register blocks of these kernels and of conv_wino.c's: up to 24 s32 accumulators,
 * so at most vnni_pmax(nz) pixels (or tiles) for nz blocks of 16 output channels (and at
 * most 16). VNNI_K24(X) expands X(0) ... X(23): the accumulators are named variables. */
static inline int vnni_pmax(int nz) { return nz == 1 ? 16 : nz == 2 ? 12 : nz == 3 ? 8 : 6; }
#define VNNI_K24(X)                                                                              \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) \
        X(17) X(18) X(19) X(20) X(21) X(22) X(23)

/* Whether this CPU runs these kernels (avx512f, avx512bw, avx512_vnni). */
int vnni_cpu_ok(void);

/* Bytes of one position's padded activation tensor with `stride` channels a pixel. */
size_t vnni_act_bytes(int rows, int cols, int stride);

/* Packs folded f32 weights w (oc, ic, k, k) into c: s8 = round(w * wmul[o]) saturated;
 * scale[o] = oscale[o], bias[o] = qb[o] * oscale[o] (qb: the bias in units of the s32
 * accumulator, as infer_dnnl.c computes it). k 1 or 3; c->oc is oc rounded up to 16.
 * Returns 0, or -1 (out of memory, or a shape these kernels do not run). Free with
 * vnni_conv_free. */
int vnni_conv_init(vnni_conv *c, const float *w, int oc, int ic, int k, const float *wmul,
                   const float *qb, const float *oscale, float sum_scale);

/* The stem (the 3x3 conv on the input planes) as vnni_conv_init, but with its columns
 * spread when that takes fewer groups of 4 channels: the input then holds, a pixel, the
 * planes of its left neighbour, its own, and its right neighbour's (3 * ic channels,
 * vnni_quantize_input with spread), and the weights only the middle column of taps, kx
 * folded into the channels. The same s8 products and s32 sums, so the same output bits,
 * in 3 * ceil(3 ic / 4) groups a pixel instead of 9 * ceil(ic / 4): 36 instead of 54 for
 * Gomoku's 5 planes. Spread only where that takes fewer groups than the live taps do
 * (the hex lattice has 7); otherwise (e.g. 4 or 8 planes, or k = 1) exactly
 * vnni_conv_init. */
int vnni_stem_init(vnni_conv *c, const float *w, int oc, int ic, int k, const float *wmul,
                   const float *qb, const float *oscale);
void vnni_conv_free(vnni_conv *c);

/* One position: in (padded, in_stride >= c->icp channels a pixel, the channels from ic
 * to in_stride 0) -> out (padded, c->oc channels a pixel; only the interior is written,
 * so a zeroed border stays 0). The conv's oc must have been a multiple of 16. With c->sum_scale > 0, out's interior holds the skip. A
 * k = 3 conv pads by one; a k = 1 conv reads the interior. */
void vnni_conv_u8(const vnni_conv *c, const uint8_t *in, int in_stride, uint8_t *out, int rows,
                  int cols);

/* The input planes in[planes][rows][cols] (f32, NCHW) of one position -> out (padded,
 * `stride` channels a pixel, the interior's channels [0, planes) written): u8 =
 * round(x * scale) to nearest even, saturated to [0, 255] (oneDNN's input reorder). With
 * spread (a stem from vnni_stem_init: stride = its icp), plane c's value goes instead to
 * channel planes + c of its pixel, channel c of the pixel to its right and channel
 * 2 planes + c of the one to its left. The first column's channels [0, planes) and the
 * last column's [2 planes, 3 planes) are never written, so they keep the buffer's zeros;
 * the border columns get values, which the spread stem never reads. */
void vnni_quantize_input(const float *in, int planes, int rows, int cols, float scale,
                         uint8_t *out, int stride, int spread);

/* The same into out (rows * cols, c->oc) f32, no border (the heads' input); any oc, the
 * padding channels 0. */
void vnni_conv_f32(const vnni_conv *c, const uint8_t *in, int in_stride, float *out, int rows,
                   int cols);

#endif
