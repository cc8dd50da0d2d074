/* params.h — the parameter layout of a network: one flat float array, a table of tensors.
 *
 * Every parameter of a net lives in ONE flat float array. A layout (nn_layout) is the
 * table of its tensors, in a fixed order, each with a name, a kind, an offset (in
 * floats) into the flat array and a shape. Gradients and optimizer state are parallel
 * flat arrays of the same length with the same offsets: the checkpoint writer, the
 * trainer, the optimizer's weight-decay rule and the inference loader all iterate this
 * one table. The tensor order (b = 00..blocks-1, two decimal digits, 0-based;
 * C = channels, P = planes, H = head_channels, V = value_hidden, A = actions, N = players):
 *
 *   stem.conv.weight        (C, P, 3, 3)   conv_weight    OIHW everywhere
 *   stem.bn.{gamma,beta,mean,var}  (C)     bn_*
 *   for each block b:
 *     blockBB.conv1.weight  (C, C, 3, 3)
 *     blockBB.bn1.{gamma,beta,mean,var}  (C)
 *     blockBB.conv2.weight  (C, C, 3, 3)
 *     blockBB.bn2.{gamma,beta,mean,var}  (C)
 *   policy.conv.weight      (H, C, 1, 1)
 *   policy.bn.{gamma,beta,mean,var}  (H)
 *   conv head:  policy.out.weight (1, H, 1, 1) conv_weight,  policy.out.bias (1) bias
 *   dense head: policy.fc.weight  (A, H*rows*cols) dense_weight (input index
 *               h*rows*cols + r*cols + c),  policy.fc.bias (A) bias
 *   value.conv.weight       (H, C, 1, 1)
 *   value.bn.{gamma,beta,mean,var}  (H)
 *   value.fc1.weight (V, H)  dense_weight   value.fc1.bias (V)  bias
 *   value.fc2.weight (O, V)  dense_weight   value.fc2.bias (O)  bias   (O = N, or 3 for
 *                           the wdl head: win, draw, loss of the mover; nn_value_outputs)
 *   aux_policy only: policy.aux.weight (1, H, 1, 1) conv_weight,  policy.aux.bias (1) bias
 *   aux_owner only:  owner.weight (N+1, H, 1, 1) conv_weight,  owner.bias (N+1) bias
 *
 * Dense weights are (out, in), row-major. BN mean/var (kind NN_T_BN_MEAN / NN_T_BN_VAR)
 * are running statistics: in the table and the checkpoint, never trained by gradient.
 * The checkpoint dataset of a tensor is its name with '.' replaced by '/'
 * (/block03/conv1/weight). Only additions at the end of this list are compatible.
 *
 * Hex lattice: in every 3x3 conv_weight the taps (kh, kw) = (0,0) and (2,2) are zero:
 * at init, after each optimizer step (call net_apply_kernel_mask on the parameters and
 * on the gradients), on save and on load.
 * This module must not know about oneDNN, HDF5 or training algorithms.
 */
#ifndef GZ_NN_PARAMS_H
#define GZ_NN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

#define NN_NAME_LEN 40
#define NN_MAX_TENSORS (13 + 10 * NN_MAX_BLOCKS + 10)

typedef enum {
    NN_T_CONV_WEIGHT = 0, /* OIHW */
    NN_T_BN_GAMMA,
    NN_T_BN_BETA,
    NN_T_BN_MEAN, /* running statistic, not trained by gradient */
    NN_T_BN_VAR,  /* running statistic, not trained by gradient */
    NN_T_DENSE_WEIGHT, /* (out, in) */
    NN_T_BIAS,
} nn_tensor_kind;

typedef struct nn_tensor {
    char name[NN_NAME_LEN]; /* "block03.conv1.weight" */
    nn_tensor_kind kind;
    size_t offset; /* in floats, into the flat array */
    size_t size;   /* floats: the product of the shape */
    int ndim;      /* 1, 2 or 4 */
    int shape[4];
} nn_tensor;

/* Indices into nn_layout.t of one BN layer's four tensors. */
typedef struct nn_bn_ix {
    int gamma, beta, mean, var;
} nn_bn_ix;

/* Indices into nn_layout.t of each layer's tensors. */
typedef struct nn_block_ix {
    int conv1;
    nn_bn_ix bn1;
    int conv2;
    nn_bn_ix bn2;
} nn_block_ix;

typedef struct nn_layout {
    nn_spec spec;
    size_t count; /* floats in the flat array (sum of every tensor's size, no padding) */
    int ntensors;
    nn_tensor t[NN_MAX_TENSORS];
    /* named views: indices into t */
    int stem_conv;
    nn_bn_ix stem_bn;
    nn_block_ix block[NN_MAX_BLOCKS];
    int pol_conv;
    nn_bn_ix pol_bn;
    int pol_out_w, pol_out_b; /* conv head: policy.out.*; dense head: policy.fc.* */
    int val_conv;
    nn_bn_ix val_bn;
    int val_fc1_w, val_fc1_b, val_fc2_w, val_fc2_b;
    int pol_aux_w, pol_aux_b; /* the opponent-reply head; -1 without it */
    int own_w, own_b;         /* the ownership head; -1 without it */
} nn_layout;

/* Int8 calibration of a net (nn/quant.h, `gridzero quantize`): the range [0, r] of
 * every activation tensor the int8 forward stores as u8 (values above r saturate),
 * chosen from the fp32 forward's values on sample positions, and what the accuracy
 * gates measured against fp32. It belongs to
 * the exact weights it was measured on (params_checksum = nn_params_checksum of them):
 * inference refuses it for any other weights, and a checkpoint drops it on save once
 * the weights have changed (a trainer that started from a calibrated model). */
#define NN_CALIB_MAX (2 + 2 * NN_MAX_BLOCKS)
typedef struct nn_calib {
    uint64_t params_checksum; /* of the weights it was measured on */
    int nact;                 /* 2 + 2 * blocks: the input planes, then the output of the
                                 stem and of each trunk conv (after ReLU and the skip) */
    float act_range[NN_CALIB_MAX]; /* r of each (>= 0) */
    int positions;            /* calibration positions */
    int heldout;              /* held-out positions of the gates below (0: not measured) */
    float top1;               /* policy top-1 agreement of int8 with fp32, near-ties
                                 counted as agreeing (nn/quant.h), in [0, 1] */
    float top1_strict;        /* the same, exact first moves only */
    float mean_dvalue;        /* mean |int8 value - fp32 value| over every value output */
} nn_calib;

/* A network's parameters: spec, layout, and the flat array. */
typedef struct nn_params {
    nn_layout layout; /* immutable after nn_params_new */
    float *data;      /* owned: layout.count floats, 64-byte aligned */
    nn_calib *calib;  /* owned: the int8 calibration, NULL when there is none */
} nn_params;

/* Fills the layout of spec s (which must be valid: nn_spec_validate). */
void nn_layout_init(nn_layout *L, const nn_spec *s);

/* Pointer to tensor i in a flat array laid out by L (params, gradients, momentum...). */
static inline float *nn_tensor_ptr(const nn_layout *L, float *flat, int i)
{
    return flat + L->t[i].offset;
}
static inline const float *nn_tensor_cptr(const nn_layout *L, const float *flat, int i)
{
    return flat + L->t[i].offset;
}

/* Index of the tensor named name, or -1. */
int nn_layout_find(const nn_layout *L, const char *name);

/* Whether the optimizer's weight decay applies (conv and dense weights only). */
static inline int nn_tensor_decays(nn_tensor_kind k)
{
    return k == NN_T_CONV_WEIGHT || k == NN_T_DENSE_WEIGHT;
}
/* Whether gradient descent trains it (everything but BN running mean and var). */
static inline int nn_tensor_trained(nn_tensor_kind k)
{
    return k != NN_T_BN_MEAN && k != NN_T_BN_VAR;
}
const char *nn_tensor_kind_name(nn_tensor_kind k);

/* New parameters for spec s (validated here: NULL with a message on a bad spec or out
 * of memory), set to the neutral values: weights and biases 0, BN gamma 1, beta 0,
 * mean 0, var 1. Free with nn_params_free. */
nn_params *nn_params_new(const nn_spec *s, char *err, size_t errlen);
void nn_params_free(nn_params *p); /* accepts NULL */
/* FNV-1a over the parameters' float32 bytes in layout order (the checkpoint's /meta
 * checksum, and what a calibration is tied to). */
uint64_t nn_params_checksum(const nn_params *p);

/* Whether p->calib is present and was measured on exactly these weights (nact fits the
 * spec, the checksum matches). */
int nn_params_calibrated(const nn_params *p);

/* A deep copy, calibration included (NULL when out of memory). */
nn_params *nn_params_clone(const nn_params *p);
/* dst's parameters = the elementwise mean of src[0..n) (n >= 1; dst may be one of
 * them): weights, biases and batch-norm statistics alike, the stochastic weight
 * averaging of checkpoints (KataGo ships such averages; the mean of BN statistics is
 * an approximation, close for checkpoints near each other). Every src must have dst's
 * spec. Summed in double, in order. Drops dst's calibration (it belongs to other
 * weights). Returns 0; k + 1 (k >= 0) when src[k] is the first whose spec differs (the
 * caller names its file; err says what differs); -1 with a message otherwise. */
int nn_params_average(nn_params *dst, const nn_params *const *src, int n, char *err,
                      size_t errlen);

/* He initialisation from seed: conv and dense weights ~ N(0, 2 / fan_in) (fan_in counts
 * live taps only: 7 per input channel on hex), except the last layer of each head
 * (policy.out / policy.fc, value.fc2) ~ N(0, 1 / fan_in); biases 0; BN as in
 * nn_params_new. Applies the kernel mask. Deterministic given seed. */
void nn_params_init_he(nn_params *p, uint64_t seed);

/* Parameters for spec dst made from src, a model of the same architecture on another
 * board (a curriculum: 2048 3x3 -> 4x4): He-initialised from seed, then every tensor of
 * src with the same name and shape copied in. The convolutions and batch norms, the
 * value head (it pools before its dense layers) and a conv policy head carry over; a
 * dense policy head (FC from H * rows * cols inputs) has another shape on another
 * board and starts afresh. report[rlen] says which tensors started afresh. Returns new
 * parameters (free with nn_params_free), or NULL with a message naming the first field
 * of the spec that differs beyond rows, cols and actions. */
nn_params *nn_params_adapt(const nn_params *src, const nn_spec *dst, uint64_t seed, char *report,
                           size_t rlen, char *err, size_t errlen);

/* Zeroes the masked taps (hex lattice: (0,0) and (2,2) of every 3x3 conv_weight) of a
 * flat array laid out by L: parameters, gradients or optimizer state. No-op on square.
 * The one place that knows which taps are masked. */
void net_apply_kernel_mask(const nn_layout *L, float *flat);

/* Whether tap (kh, kw) of a 3x3 kernel is masked on lattice lat. */
static inline int nn_tap_masked(game_lattice lat, int kh, int kw)
{
    return lat == GAME_LATTICE_HEX && ((kh == 0 && kw == 0) || (kh == 2 && kw == 2));
}

/* Index of the first tensor with a non-zero masked tap, or -1 when all are zero. */
int nn_layout_check_mask(const nn_layout *L, const float *flat);

/* Number of trainable + statistic parameters (= layout.count). */
static inline size_t nn_params_count(const nn_params *p) { return p->layout.count; }

#endif
