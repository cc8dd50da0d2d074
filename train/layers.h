/* layers.h — the trainer's layers: explicit forward and backward passes (llm.c style).
 *
 * Layout: every activation of the convolutional trunk is CHANNEL-MAJOR over the whole
 * batch, "C x (N*H*W)": act[c][n*H*W + y*W + x]. A 1x1 conv is then one sgemm over the
 * whole batch, a 3x3 conv is im2col of a chunk of samples into (IC*taps) x (chunk*H*W)
 * columns and one sgemm per chunk, and batch norm reads one contiguous row per channel.
 * Dense layers use the usual row-major (N, features) layout.
 *
 * Conventions (all functions):
 * - x_forward(out, ..., in, weights, dims) writes out (out may not alias in unless said).
 * - x_backward(dinp, dweights, dout, in/out, weights, dims) ACCUMULATES (+=) into dinp
 *   and the weight gradients; callers zero them first. dinp may be NULL when the input
 *   gradient is not needed (the stem).
 * - No function allocates; scratch is passed in and sized by the *_scratch() helpers.
 * - 3x3 convs: padding 1, stride 1, no bias, weights (OC, IC, 3, 3) (OIHW, as in nn/).
 *   hex != 0: taps (0,0) and (2,2) are not used (skipped in im2col, so its GEMMs are
 *   7/9 as large; taken as zero by Winograd's weight transform), and their weight
 *   gradient is never written: it stays exactly zero.
 *
 * Each function exists in float (the trainer) and in double with the suffix _f64 (the
 * same source compiled twice: the tests' finite-difference oracle). Not thread-safe per
 * scratch buffer; the *_part functions let several threads share one conv, each with
 * its own scratch.
 */
#ifndef GZ_TRAIN_LAYERS_H
#define GZ_TRAIN_LAYERS_H

#include <stddef.h>
#include <stdint.h>

/* Shape of a convolution over a batch. */
typedef struct conv_dims {
    int N;       /* samples */
    int IC, OC;  /* input and output channels */
    int H, W;    /* board */
    int hex;     /* 3x3 only: 1 = hex lattice (masked taps (0,0) and (2,2)) */
    int algo;    /* 3x3 only: CONV_AUTO (0), CONV_IM2COL or CONV_WINOGRAD */
} conv_dims;

/* How a 3x3 conv is computed. CONV_IM2COL: im2col of the live taps and one sgemm per
 * chunk (K = IC x taps). CONV_WINOGRAD: Winograd's minimal filtering F(2x2, 3x3) (Lavin
 * and Gray 2016): 4x4 input tiles transformed, 16 sgemms (OC x IC) x (IC x tiles), the
 * 2x2 outputs transformed back; 2.25x fewer multiplications, and the weight gradient
 * as 16 sgemms with K = tiles. CONV_AUTO: Winograd when IC and OC are both at least
 * CONV_WINOGRAD_MIN_CH, else im2col (measured with `gridzero bench train --set
 * train.conv=im2col|auto`: Winograd 1.2-2.0x on every shipped net, the narrowest 9x9
 * hex one the least, where im2col skips 2 of the 9 taps; a 5-plane stem stays im2col).
 * Both give the same results up to rounding. */
enum { CONV_AUTO = 0, CONV_IM2COL = 1, CONV_WINOGRAD = 2 };
#define CONV_WINOGRAD_MIN_CH 16

/* Batch-norm momentum of the running statistics (PyTorch's convention:
 * running = (1 - m) * running + m * batch; running var uses the unbiased batch var). */
#define LAYERS_BN_MOMENTUM 0.1

#define LAYERS_REAL float
#define LAYERS_FN(name) name
#include "layers_api.h"
#undef LAYERS_REAL
#undef LAYERS_FN
#define LAYERS_REAL double
#define LAYERS_FN(name) name##_f64
#include "layers_api.h"
#undef LAYERS_REAL
#undef LAYERS_FN

#endif
