/* infer.h — running a network forward: the plain-C reference (the oracle) and oneDNN.
 *
 * Both take a batch of n encoded positions, input[n][planes][rows][cols] (NCHW, from the
 * mover's point of view, as game encode() writes them), optional legal masks
 * legal[n][actions], and write
 *   policy[n][actions]  probabilities: softmax of the logits over the legal actions
 *                       (0 on illegal ones; legal == NULL: over every action);
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
 * also receives the raw policy logits[n][actions] (before masking), for comparing
 * with a trainer's forward. Returns 0, or -1 with a message (a dense-policy net on
 * another board, out of memory). */
int nn_ref_forward(const nn_params *p, int rows, int cols, int n, const float *input,
                   const uint8_t *legal, float *policy, float *values, float *logits, char *err,
                   size_t errlen);

typedef enum { NN_PREC_FP32 = 0, NN_PREC_BF16 = 1 } nn_precision;

/* Whether this CPU runs oneDNN's bf16 convolutions natively (avx512_bf16 or AMX),
 * checked at run time through oneDNN's effective ISA (so DNNL_MAX_CPU_ISA caps it). */
int nn_cpu_has_bf16(void);
/* "auto" | "fp32" | "bf16" (config net.precision) to a precision: auto = bf16 where the
 * CPU has it. Returns 0, or -1 on an unknown word. */
int nn_precision_parse(const char *word, nn_precision *out);
const char *nn_precision_name(nn_precision p);

typedef struct nn_infer nn_infer;

/* A oneDNN context for the weights p (borrowed only during the call: the context keeps
 * its own folded copy) on a rows x cols board, with `threads` OpenMP threads (0 = the
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

/* The precision the context runs at, and the spec it was made from. */
nn_precision nn_infer_precision(const nn_infer *ctx);
const nn_spec *nn_infer_spec(const nn_infer *ctx);

#endif
