/* heads_x86.h — the network heads' small dense steps with AVX-512, many rows at once.
 *
 * The heads after the 1x1 head conv (infer_dnnl.c: run_heads) are dot products of 16 to
 * 64 floats: the policy logit of each point (a pixel's policy channels against the 1x1
 * weights) and each hidden unit of the value head (the pooled channels against a weight
 * row). One at a time, each ends in a horizontal sum; here 16 rows run together and
 * their 16 sums come out of one transposing reduction (15 shuffle-and-add steps instead
 * of 16 horizontal sums). The pool of the value channels keeps its sums and maxima in
 * registers. On the 8x8 bench net, run_heads went from 4.6% of self-play time to 2.6%
 * with these (perf).
 *
 * Needs avx512f at run time (hx_ok). Knows nothing of nets: plain arrays.
 */
#ifndef GZ_NN_HEADS_X86_H
#define GZ_NN_HEADS_X86_H

#include <stddef.h>

/* Whether this CPU runs these (avx512f). */
int hx_ok(void);

/* Whether hx_rows_dot and hx_pool take rows of `cols` floats: cols a multiple of 16, at
 * most 64. */
static inline int hx_cols_ok(int cols) { return cols > 0 && cols % 16 == 0 && cols <= 64; }

/* out[i] = sum over c < cols of M[i * stride + c] * v[c], for i < rows (hx_cols_ok(cols);
 * the sums in a fixed order: the same inputs give the same bits). */
void hx_rows_dot(const float *M, size_t stride, int rows, int cols, const float *v, float *out);

/* Over rows i < rows of X (stride floats apart, hx_cols_ok(cols)): mean[c] = the mean of
 * X[i][c]; max[c] = their maximum, floored at 0 (NULL: not wanted). */
void hx_pool(const float *X, size_t stride, int rows, int cols, float *mean, float *max);

#endif
