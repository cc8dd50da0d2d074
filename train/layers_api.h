/* layers_api.h — the layer declarations, included twice by layers.h (LAYERS_REAL =
 * float with plain names, double with the _f64 suffix). Not a header of its own. */
#define R LAYERS_REAL
#define F LAYERS_FN

/* Scratch elements (of R) that conv3x3_forward/backward need for dims d. */
size_t F(conv3x3_scratch)(conv_dims d);
/* out (OC, N*H*W) = conv3x3(in (IC, N*H*W), w (OC, IC, 3, 3)). */
void F(conv3x3_forward)(R *out, const R *in, const R *w, conv_dims d, R *scratch);
/* dinp (IC, N*H*W) += ..., dw (OC, IC, 3, 3) += ... (masked taps untouched), from
 * dout (OC, N*H*W) and the forward's in. */
void F(conv3x3_backward)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                         R *scratch);

/* Part `part` of nparts (0 <= part < nparts) of a 3x3 conv, for nparts threads that
 * each call it with their own scratch (conv3x3_scratch elements each, stride elements
 * apart from scratch0, the first part's): the forward writes the output columns of
 * samples [N*part/nparts, N*(part+1)/nparts); the backward the input gradient of those
 * samples (accumulate != 0: +=, 0: overwritten) and its share of the weight gradient.
 * By im2col that is dw (+=) of input channels [IC*part/nparts, IC*(part+1)/nparts); by
 * Winograd a partial sum over the part's samples left in its scratch, which
 * conv3x3_backward_reduce adds to dw once every part's backward has returned (each part
 * calls it, for a share of the output channels; a no-op by im2col) and before any part
 * uses its scratch again. The parts write disjoint memory and together equal the
 * whole-batch call. */
void F(conv3x3_forward_part)(R *out, const R *in, const R *w, conv_dims d, R *scratch, int part,
                             int nparts);
void F(conv3x3_backward_part)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                              R *scratch, int accumulate, int part, int nparts);
void F(conv3x3_backward_reduce)(R *dw, const R *scratch0, size_t stride, conv_dims d, int part,
                                int nparts);

/* out (OC, N*H*W) = w (OC, IC) . in (IC, N*H*W) + b (OC) (b may be NULL: no bias). */
void F(conv1x1_forward)(R *out, const R *in, const R *w, const R *b, conv_dims d);
/* dinp (IC, N*H*W) +=, dw (OC, IC) +=, db (OC) += (db NULL: no bias). */
void F(conv1x1_backward)(R *dinp, R *dw, R *db, const R *dout, const R *in, const R *w,
                         conv_dims d);

/* dinp (IC, N*H*W) OVERWRITTEN (not accumulated), dw += as above: saves the caller a
 * memset of dinp. */
void F(conv3x3_backward_set)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                             R *scratch);

/* Batch norm over rows of a (C, M) array (M = N*H*W, or N for a dense layer's features
 * transposed). Training mode: normalises with the batch statistics, saves mean (C) and
 * invstd (C) = 1/sqrt(var + eps) for the backward, and updates run_mean/run_var (C)
 * with LAYERS_BN_MOMENTUM (skipped when run_mean is NULL). out may alias in. */
void F(batchnorm_forward_train)(R *out, R *mean, R *invstd, const R *in, const R *gamma,
                                const R *beta, R *run_mean, R *run_var, int C, int M, R eps);
/* Eval mode: y = gamma * (x - run_mean) / sqrt(run_var + eps) + beta. out may alias in. */
void F(batchnorm_forward_eval)(R *out, const R *in, const R *gamma, const R *beta,
                               const R *run_mean, const R *run_var, int C, int M, R eps);
/* Backward of the training-mode forward: dinp (C, M) +=, dgamma (C) +=, dbeta (C) +=.
 * in is the forward's input; mean and invstd what the forward saved. */
void F(batchnorm_backward)(R *dinp, R *dgamma, R *dbeta, const R *dout, const R *in,
                           const R *gamma, const R *mean, const R *invstd, int C, int M);

/* Fused batch norm + optional residual add + optional ReLU, one pass over memory:
 * out = act(bn(in) + skip) with skip (C, M) or NULL and act = ReLU when relu != 0.
 * Training mode as batchnorm_forward_train, eval mode as batchnorm_forward_eval. */
void F(bn_act_forward_train)(R *out, R *mean, R *invstd, const R *in, const R *gamma,
                             const R *beta, R *run_mean, R *run_var, const R *skip, int relu,
                             int C, int M, R eps);
void F(bn_act_forward_eval)(R *out, const R *in, const R *gamma, const R *beta,
                            const R *run_mean, const R *run_var, const R *skip, int relu, int C,
                            int M, R eps);
/* Backward of batch norm whose output went through a ReLU: dy = dout * (out > 0) with
 * out the ReLU's output (out NULL: dy = dout, no ReLU). accumulate != 0: dinp += ...;
 * 0: dinp = ... . dgamma, dbeta always +=. dinp must not overlap dout, out or in. */
void F(bn_act_backward)(R *dinp, R *dgamma, R *dbeta, const R *dout, const R *out, const R *in,
                        const R *gamma, const R *mean, const R *invstd, int C, int M,
                        int accumulate);

/* Batch norm over a batch split across processes (synchronised batch norm: the
 * statistics of the whole batch, as if one process held it), in two halves around the
 * caller's sum over the processes:
 * bn_partial_sums: s (C) and s2 (C) = this process's sums of (x - shift[c]) and of its
 * square over its M columns (shift: the same on every process; the running mean keeps
 * the one-pass variance accurate). bn_act_forward_sums: the training-mode forward of
 * bn_act_forward_train from the sums over every process (Mg columns in all).
 * bn_backward_partial_sums: sdy (C) = sum dy, sdyx (C) = sum dy * (x - mean) * invstd
 * over this process's columns (dy = dout masked by the ReLU's out, out NULL: none), and
 * dgamma += sdyx, dbeta += sdy from THIS process's part (the gradients are summed over
 * the processes afterwards). bn_act_backward_sums: dinp (= or += as accumulate) from the
 * sums over every process. With one process (Mg = M) these equal bn_act_forward_train
 * and bn_act_backward up to rounding. */
void F(bn_partial_sums)(double *s, double *s2, const R *in, const R *shift, int C, int M);
void F(bn_act_forward_sums)(R *out, R *mean, R *invstd, const R *in, const R *shift,
                            const double *s, const double *s2, double Mg, const R *gamma,
                            const R *beta, R *run_mean, R *run_var, const R *skip, int relu,
                            int C, int M, R eps);
void F(bn_backward_partial_sums)(double *sdy, double *sdyx, R *dgamma, R *dbeta, const R *dout,
                                 const R *out, const R *in, const R *mean, const R *invstd,
                                 int C, int M);
void F(bn_act_backward_sums)(R *dinp, const R *dout, const R *out, const R *in, const R *gamma,
                             const R *mean, const R *invstd, const double *sdy,
                             const double *sdyx, double Mg, int C, int M, int accumulate);

/* Masked batch norm, for boards padded into a larger tensor (mixed board sizes; the
 * forms above with one more argument): mask (M) is 1 at the columns that are points of
 * their sample's board and 0 at the padding (only 0 and 1; NULL: no padding, the forms
 * above). The statistics are those of
 * the masked columns alone (Mg of them over every process: the caller counts them), and
 * the output (forward) and input gradient (backward) are exactly 0 at the padding, so
 * the next 3x3 conv sees zeros there as it does at a native board's edge, and the
 * padding gets no gradient. A single process computes the whole of it as
 * bn_partial_sums_masked then bn_act_forward_sums_masked (with any shift: the running
 * mean keeps the one-pass variance accurate), and backward
 * bn_backward_partial_sums_masked then bn_act_backward_sums_masked. The eval form
 * normalises with the running statistics and zeroes the padding. */
void F(bn_partial_sums_masked)(double *s, double *s2, const R *in, const R *shift, const R *mask,
                               int C, int M);
void F(bn_act_forward_sums_masked)(R *out, R *mean, R *invstd, const R *in, const R *shift,
                                   const double *s, const double *s2, double Mg, const R *gamma,
                                   const R *beta, R *run_mean, R *run_var, const R *skip,
                                   int relu, const R *mask, int C, int M, R eps);
void F(bn_act_forward_eval_masked)(R *out, const R *in, const R *gamma, const R *beta,
                                   const R *run_mean, const R *run_var, const R *skip, int relu,
                                   const R *mask, int C, int M, R eps);
void F(bn_backward_partial_sums_masked)(double *sdy, double *sdyx, R *dgamma, R *dbeta,
                                        const R *dout, const R *out, const R *in, const R *mean,
                                        const R *invstd, const R *mask, int C, int M);
void F(bn_act_backward_sums_masked)(R *dinp, const R *dout, const R *out, const R *in,
                                    const R *gamma, const R *mean, const R *invstd,
                                    const double *sdy, const double *sdyx, double Mg,
                                    const R *mask, int C, int M, int accumulate);

/* out (n) = max(in, 0); out may alias in. */
void F(relu_forward)(R *out, const R *in, size_t n);
/* dinp += dout * (out > 0), out the forward's output; dinp may alias dout (then it is
 * overwritten instead of accumulated: the in-place form the trainer uses). */
void F(relu_backward)(R *dinp, const R *dout, const R *out, size_t n);

/* out (n) = a + b (out may alias a or b). Backward: da += dout, db += dout. */
void F(residual_forward)(R *out, const R *a, const R *b, size_t n);
void F(residual_backward)(R *da, R *db, const R *dout, size_t n);

/* Global pooling of in (C, N*H*W). with_max 0: out (N, C) = each channel's mean over
 * H*W. with_max 1: out (N, 2C) = the C means, then the C maxima. Backward: dinp += dout
 * / (H*W) for the means; a maximum's gradient goes to its first maximal element (in is
 * the forward input). */
void F(gpool_forward)(R *out, const R *in, int N, int C, int HW, int with_max);
void F(gpool_backward)(R *dinp, const R *dout, const R *in, int N, int C, int HW, int with_max);
/* The same over each sample's board alone, mask (N*H*W) as for the masked batch norm
 * (every sample with at least one point): the mean over its masked points, the maximum
 * over them (the first maximal one gets its gradient); the padding gets no gradient. */
void F(gpool_forward_masked)(R *out, const R *in, int N, int C, int HW, int with_max,
                             const R *mask);
void F(gpool_backward_masked)(R *dinp, const R *dout, const R *in, int N, int C, int HW,
                              int with_max, const R *mask);

/* out (N, O) = in (N, I) . w^T + b, w (O, I) (PyTorch Linear), b (O) or NULL. */
void F(dense_forward)(R *out, const R *in, const R *w, const R *b, int N, int NI, int NO);
/* dinp (N, NI) +=, dw (NO, NI) +=, db (NO) +=; dinp and db may be NULL. */
void F(dense_backward)(R *dinp, R *dw, R *db, const R *dout, const R *in, const R *w, int N,
                       int NI, int NO);

/* out (n) = tanh(in). Backward: dinp += dout * (1 - out^2), out the forward's output. */
void F(tanh_forward)(R *out, const R *in, size_t n);
void F(tanh_backward)(R *dinp, const R *dout, const R *out, size_t n);

/* Layout change for a dense policy head: out (N, C*HW) from in (C, N*HW), and back. */
void F(cnhw_to_nchw_forward)(R *out, const R *in, int N, int C, int HW);
void F(cnhw_to_nchw_backward)(R *dinp, const R *dout, int N, int C, int HW);

/* Masked softmax cross-entropy of the policy. logits (N, A); pi (N, A) the target
 * distribution (mass on illegal moves is ignored); legal (N, A) 1 = legal. Writes
 * probs (N, A) (0 on illegal moves) and returns the mean over the batch of
 * -sum_a pi_a log p_a over legal a. A row without legal moves contributes 0.
 * If entropy is not NULL, *entropy = mean over the batch of -sum p log p. */
double F(policy_ce_forward)(R *probs, const R *logits, const R *pi, const uint8_t *legal, int N,
                            int A, double *entropy);
/* dlogits (N, A) += scale * (sum_legal(pi) * p - pi) on legal moves (0 elsewhere), the
 * gradient of scale * N * (the mean loss) ; pass scale = 1/N for the mean. */
void F(policy_ce_backward)(R *dlogits, const R *probs, const R *pi, const uint8_t *legal, int N,
                           int A, R scale);

/* Value loss: mean over the N*P entries of (v - z)^2 (v, z (N, P)). */
double F(value_mse_forward)(const R *v, const R *z, int N, int P);
/* dv += scale * 2 (v - z) / (N * P). */
void F(value_mse_backward)(R *dv, const R *v, const R *z, int N, int P, R scale);

#undef R
#undef F
