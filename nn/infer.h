/* infer.h — running a network forward: the plain-C reference (the oracle) and oneDNN.
 *
 * Both take a batch of n encoded positions, input[n][planes][rows][cols] (NCHW, from the
 * mover's point of view, as game encode() writes them), optional legal masks
 * legal[n][actions], and write
 *   policy[n][actions]  probabilities: softmax of the logits over the legal actions
 *                       (0 on illegal ones; legal == NULL: over every action); with an
 *                       action-value head the "logits" are the moves' values y_a in the
 *                       h scale and the priors softmax(y_a / NN_ACTION_VALUE_TEMP);
 *   values[n][players]  tanh outputs in [-1, 1], MOVER-FIRST (index 0 = player to move).
 * A conv-policy net runs on any rows x cols (actions = rows * cols there); a dense-policy
 * net only on the spec's board.
 *
 * nn_ref_forward is the ONE oracle every other forward (oneDNN fp32/bf16, the trainer's)
 * is compared to: straightforward loops, BN in eval mode with running statistics, no
 * folding, no tricks. Slow; thread-safe (allocates its scratch per call).
 *
 * nn_infer is a oneDNN inference context: BN folded into the conv weights and biases,
 * ReLU and the residual add fused as post-ops, weights reordered once to the layout
 * the convolutions choose, primitives and activation memories created per batch size
 * on first use and kept. One context per thread (it holds its own engine and stream);
 * contexts never share mutable state, so several threads may each run their own.
 */
#ifndef GZ_NN_INFER_H
#define GZ_NN_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

#define NN_MAX_BATCH 512

/* Softmax of logits[actions] over the entries with legal[a] != 0 (legal NULL: all) into
 * out[actions], 0 on illegal entries. All-illegal: out all 0. */
void nn_masked_softmax(int actions, const float *logits, const uint8_t *legal, float *out);

/* The reference forward of p on a rows x cols board (see above). logits (may be NULL)
 * also receives the raw policy logits[n][actions] (before masking and the temperature;
 * with an action-value head the moves' values y_a), for comparing with a trainer's
 * forward. Returns 0, or -1 with a message (a dense-policy net on
 * another board, out of memory). */
int nn_ref_forward(const nn_params *p, int rows, int cols, int n, const float *input,
                   const uint8_t *legal, float *policy, float *values, float *logits, char *err,
                   size_t errlen);

/* Precisions of the oneDNN forward:
 *   fp32  f32 everywhere.
 *   bf16  bf16 activations and weights, f32 biases and heads (avx512_bf16 or AMX).
 *   int8  u8 activations, s8 weights with one scale per output channel, f32 biases and
 *         heads: oneDNN's u8s8 convolutions (VNNI dot products: AVX512-VNNI, AVX-VNNI or
 *         AMX). Every activation tensor the trunk stores as u8 (the input planes, the
 *         stem's and each trunk conv's output, after ReLU and the skip) gets one scale,
 *         step = its calibrated range / 255 (nn_calib, measured by nn_infer_calibrate on
 *         sample positions: `gridzero quantize`). BN is folded before the weights are
 *         quantised; a masked hex tap (0.0) quantises to exactly 0, so the mask holds.
 *   auto  chosen for each model when a context is made (nn_precision_resolve).
 */
typedef enum { NN_PREC_FP32 = 0, NN_PREC_BF16 = 1, NN_PREC_INT8 = 2, NN_PREC_AUTO = 3 } nn_precision;

/* Whether this CPU runs oneDNN's bf16 convolutions natively (avx512_bf16 or AMX),
 * checked at run time through oneDNN's effective ISA (so DNNL_MAX_CPU_ISA caps it). */
int nn_cpu_has_bf16(void);
/* Whether this CPU has VNNI dot products for oneDNN's u8s8 convolutions (AVX512-VNNI,
 * AVX-VNNI or AMX; oneDNN's effective ISA, so DNNL_MAX_CPU_ISA caps it too). */
int nn_cpu_has_vnni(void);
/* Whether gridzero's direct int8 kernels run here (avx512f, avx512bw, avx512_vnni;
 * the CPU's own flags, not oneDNN's). */
int nn_cpu_has_avx512_vnni(void);
/* Whether oneDNN runs AMX tiles here (bf16 and int8; effective ISA as above). */
int nn_cpu_has_amx(void);
/* "auto" | "fp32" | "bf16" | "int8" (config net.precision) to a precision ("auto" to
 * NN_PREC_AUTO). Returns 0, or -1 on an unknown word. */
int nn_precision_parse(const char *word, nn_precision *out);
const char *nn_precision_name(nn_precision p);
/* Whether int8 can run for weights p on this CPU: 0, or -1 with the reason (no VNNI;
 * no calibration: run `gridzero quantize`; a calibration measured on other weights). */
int nn_int8_check(const nn_params *p, char *err, size_t errlen);
/* Whether int8 is the faster precision here for a net of this spec (docs/benchmarks.md, int8: on
 * AMX only for trunks of 64 channels or more; on AVX512-VNNI always; never without VNNI),
 * calibration aside. */
int nn_int8_preferred(const nn_spec *s);
/* The precision a context for p gets when `want` is asked for. NN_PREC_AUTO: int8 when
 * nn_int8_check passes and int8 was measured faster here (docs/benchmarks.md, int8: on AMX only
 * for trunks of 64 channels or more; on AVX512-VNNI always), else bf16 where the CPU
 * has it, else fp32. Any other: itself. */
nn_precision nn_precision_resolve(nn_precision want, const nn_params *p);

typedef struct nn_infer nn_infer;

/* A oneDNN context for the weights p (borrowed only during the call: the context keeps
 * its own folded copy) on a rows x cols board at precision prec (NN_PREC_AUTO:
 * nn_precision_resolve; int8 needs nn_int8_check to pass), with `threads` OpenMP threads (0 = the
 * calling thread's current OpenMP setting: OMP_NUM_THREADS, else the cores; the count is
 * set for the calling thread before every oneDNN call). Returns the context (free with nn_infer_free) or NULL with a
 * message. */
nn_infer *nn_infer_new(const nn_params *p, int rows, int cols, nn_precision prec, int threads,
                       char *err, size_t errlen);
void nn_infer_free(nn_infer *ctx); /* accepts NULL */

/* The context's input buffer for a batch of n (1..NN_MAX_BATCH): n * planes * rows * cols
 * floats, NCHW. Encode into it and call nn_infer_run with input == this buffer to skip a
 * copy. Borrowed: valid until the next call on ctx. NULL with a message on failure. */
float *nn_infer_input(nn_infer *ctx, int n, char *err, size_t errlen);

/* Runs the batch (see the top of this file). input may be the buffer of
 * nn_infer_input(ctx, n) or any caller array. Returns 0 or -1 with a message. Not
 * thread-safe on one ctx. */
int nn_infer_run(nn_infer *ctx, int n, const float *input, const uint8_t *legal, float *policy,
                 float *values, char *err, size_t errlen);
/* The same, and raw (n x NN_VALUE_MAX_OUTPUTS; may be NULL) gets the value FC's outputs
 * before the value kind's last step (the wdl head's three logits: nn_value_wdl). */
int nn_infer_run_raw(nn_infer *ctx, int n, const float *input, const uint8_t *legal, float *policy,
                     float *values, float *raw, char *err, size_t errlen);

/* Int8 calibration: runs the fp32 forward of ctx (an fp32 context, else -1) on the
 * batch input[n], n exactly a batch bucket (nn_calib_chunk), and shows visit every
 * activation tensor of nn_calib in order: act 0 the input planes, act l + 1 the output
 * of conv layer l (the stem, then the trunk's convs), as x[n][c][hw] (NCHW, borrowed for
 * the call). Returns 0 or -1 with a message. */
typedef void (*nn_act_visit)(void *u, int act, const float *x, int n, int c, int hw);
int nn_infer_calibrate(nn_infer *ctx, int n, const float *input, nn_act_visit visit, void *u,
                       char *err, size_t errlen);
/* The largest batch bucket <= n (n >= 1), at most 256: calibrate in chunks of it. */
int nn_calib_chunk(int n);

/* Which code runs an int8 context's convolutions:
 *   onednn  oneDNN's u8s8 primitives (any VNNI CPU);
 *   direct  gridzero's own AVX512-VNNI kernels (conv_vnni.h): one board row of pixels
 *           per register block, one position at a time through the whole net, so that
 *           its activations stay in L1. Needs avx512_vnni and net.channels a multiple
 *           of 16. oneDNN's arithmetic, up to the rounding of one fused multiply-add
 *           (an activation at most one u8 step apart).
 *   winograd  direct, with the trunk's 3x3 convs by Winograd's F(4x4, 3x3) in s16
 *           (conv_wino.h): a quarter of the products at half the rate; its own
 *           rounding (s16 transformed weights: closer to fp32 than direct's s8).
 *   auto    winograd where conv_wino.h's wino_worth says the tiles pay (8x8, 15x15 with
 *           48 or more channels, square lattice), else direct, where they run, except on
 *           AMX CPUs (oneDNN's tiles), else onednn: direct was measured faster than
 *           onednn on every shipped net, winograd than direct on those it picks (docs/benchmarks.md,
 *           issue 15).
 * (config net.int8_kernel). */
typedef enum {
    NN_INT8_AUTO = 0,
    NN_INT8_ONEDNN = 1,
    NN_INT8_DIRECT = 2,
    NN_INT8_WINOGRAD = 3
} nn_int8_kernel;
/* "auto" | "onednn" | "direct" | "winograd" to a kernel; 0, or -1 on an unknown word. */
int nn_int8_kernel_parse(const char *word, nn_int8_kernel *out);
const char *nn_int8_kernel_name(nn_int8_kernel k);
/* Chooses ctx's int8 kernel (nn_infer_new chooses auto). Call it before nn_infer_input
 * or nn_infer_run. A context of another precision ignores it (returns 0). Returns 0, or
 * -1 with a message when direct is asked for and cannot run (the CPU or the net's
 * shape, named). */
int nn_infer_set_int8_kernel(nn_infer *ctx, nn_int8_kernel k, char *err, size_t errlen);
/* The kernel an int8 context runs (never auto; onednn for other precisions). */
nn_int8_kernel nn_infer_int8_kernel(const nn_infer *ctx);
/* What runs ctx, as a word for reports: "fp32", "bf16", "int8/direct", "int8/winograd"
 * or "int8/onednn"
 * (static storage; an int8 context's word alone has a '/', the kernel's name after it). */
const char *nn_infer_kind(const nn_infer *ctx);

/* The precision the context runs at (never NN_PREC_AUTO), and its spec. */
nn_precision nn_infer_precision(const nn_infer *ctx);
const nn_spec *nn_infer_spec(const nn_infer *ctx);

#endif
