/* net_train.h — the whole network's training pass on the nn spec: forward in training
 * mode (batch statistics) or eval mode (running statistics), the losses, and the
 * backward to a flat gradient array parallel to the parameters (nn/params.h layout).
 *
 * Loss (the objective the optimizer descends):
 *   total = policy CE + value_weight * value MSE + L2
 *   policy CE  = mean over the batch of -sum_a pi_a log p_a (softmax over legal moves)
 *   value MSE  = mean over the batch of the squared errors (v - z)^2 (v = the values,
 *                MOVER-FIRST as the samples' z): averaged over players with independent
 *                outputs, summed over players and halved with the zero-sum head (nn/spec.h;
 *                two players: the mover's (v - z)^2); with the wdl head (spec value_head
 *                wdl) this term is instead the mean over the batch of the cross-entropy
 *                -sum_k y_k log p_k of the head's softmax p over (win, draw, loss) of the
 *                mover against y = (max(z,0), 1 - |z|, max(-z,0)), z the mover's outcome,
 *                in nats (0 when sure and right; ln 3 = 1.0986 for a uniform guess)
 *   (a sample's pi may sum to its policy weight instead of 1: the CE is then weighted)
 *   L2         = weight_decay / 2 * sum of squares of conv and dense weights (not BN
 *                parameters, not biases); its gradient weight_decay * w.
 *   + aux_weight * aux CE, with an opponent-reply head (spec aux_policy) and targets
 *                set by train_net_set_aux: the mean over the batch of -sum_a opp_a log q_a,
 *                q the aux head's softmax over every point (a sample whose opp is all 0,
 *                no reply known, adds nothing).
 *   + owner_weight * owner CE, with an ownership head (spec aux_owner) and targets set by
 *                train_net_set_owner: the mean over the batch of the mean over the points
 *                of -log o(owner), o the head's softmax over the players + 1 classes of a
 *                point (a point whose owner is unknown adds nothing).
 *   With an action-value policy head (spec policy_head action_value) there is no policy
 *                CE: instead + action_value_weight * action-value MSE, targets set by
 *                train_net_set_action_values: the mean over the batch of each sample's
 *                mean over its moves with a target of (y_a - t_a)^2, y_a the head's
 *                outputs and t_a the targets in the h scale (a sample without any adds
 *                nothing); the probabilities reported are softmax(y_a /
 *                NN_ACTION_VALUE_TEMP) over the legal moves, the priors inference gives.
 * Activations are kept in the channel-major batch layout of layers.h. Everything is
 * allocated once by train_net_new for a maximum batch; forward/backward never allocate.
 *
 * Threads: each context runs its trunk (the 3x3 convs and their batch norms, nearly all
 * of the work) on a pool of T threads of its own, T = the thread count OpenBLAS started
 * with (OPENBLAS_NUM_THREADS, else every core): convs split by samples (forward, input
 * gradient; the Winograd weight gradient, whose per-thread sums are then added in a
 * fixed order) or by input channels (the im2col weight gradient), batch norms by
 * channels, so the threads write disjoint memory and the result does not depend on
 * timing (by Winograd, the rounding depends on the thread count). The first
 * train_net_new sets OpenBLAS to ONE thread per call for the whole process (each pool
 * thread calls it on its own part): a second, spinning BLAS pool would fight ours. The
 * heads run on the caller's thread. A context is used by one caller at a time.
 */
#ifndef GZ_TRAIN_NET_TRAIN_H
#define GZ_TRAIN_NET_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "nn/params.h"

typedef struct train_net train_net;

typedef enum { TRAIN_MODE_TRAIN = 0, TRAIN_MODE_EVAL = 1 } train_mode;

/* Loss components of one forward (batch means). */
typedef struct train_losses {
    double policy;    /* cross-entropy */
    double value;     /* MSE; the wdl head: cross-entropy (nats) */
    double l2;        /* weight_decay / 2 * ||w||^2 */
    double total;     /* policy + value_weight * value + l2 (+ aux_weight * aux) */
    double entropy;   /* mean entropy of the predicted policy */
    double value_acc; /* fraction of z != 0 entries whose sign v agrees with (0.5 if none) */
    double aux;       /* the opponent-reply head's cross-entropy (0 without the head or
                         its targets) */
    double owner;     /* the ownership head's cross-entropy, a mean over the points (0
                         without the head or its targets) */
    double action_value; /* the action-value head's MSE in the h scale (0 without the head
                            or its targets; policy is then 0) */
} train_losses;

/* Data-parallel training: several processes ("ranks") each hold a shard of one
 * mini-batch and run the same forward and backward on it. This module says what must
 * be summed over them and calls the reducer; the communication is the caller's
 * (DESIGN.md §1: loop/ does it). sum_f64 adds n doubles over every rank, in place,
 * leaving the same result on each; every rank calls it at the same points in the same
 * order (from the thread that called forward/backward). A failure inside it must end
 * the job (there is no error path in the middle of a layer). */
typedef struct train_reducer {
    void (*sum_f64)(void *ctx, double *buf, size_t n);
    void (*sum_f32)(void *ctx, float *buf, size_t n);
    void *ctx;
    int rank, ranks; /* this process's rank and how many share the batch */
} train_reducer;

/* A context for layout L (copied) and batches up to max_batch. Returns it (free with
 * train_net_free) or NULL with a message (out of memory). */
train_net *train_net_new(const nn_layout *L, int max_batch, char *err, size_t errlen);
/* The same with `threads` pool threads (1..64; <= 0: the default above): the tests run
 * the trunk's parts with a thread count that does not depend on the host's cores. */
train_net *train_net_new_threads(const nn_layout *L, int max_batch, int threads, char *err,
                                 size_t errlen);
void train_net_free(train_net *t); /* accepts NULL */

/* Forward of n samples (1..max_batch): input (n, planes, rows, cols) NCHW as games
 * encode; params the flat array (training mode updates the BN running mean/var in it).
 * When pi (n, A), legal (n, A) and z (n, players) are given, fills *losses (with
 * value_weight and weight_decay as described above); they may all be NULL (then
 * losses is not touched and legal NULL means every move legal for the probabilities).
 * Borrows everything. */
void train_net_forward(train_net *t, float *params, int n, const float *input, const float *pi,
                       const uint8_t *legal, const float *z, train_mode mode, double value_weight,
                       double weight_decay, train_losses *losses);

/* Backward of the last forward (which must have had targets): OVERWRITES grads (flat,
 * layout.count floats) with d total / d params. BN mean/var and masked hex taps get
 * exactly 0. */
void train_net_backward(train_net *t, const float *params, float *grads, double value_weight,
                        double weight_decay);

/* Makes the training-mode forward and the backward data-parallel over r (copied;
 * NULL or one rank: off): batch norm uses the statistics of the whole batch across the
 * ranks (synchronised batch norm: one sum of its partial sums per BN layer in the
 * forward and one in the backward), and the backward's gradient is this rank's part of
 * the gradient of the WHOLE batch's mean loss (the policy and value terms scaled by
 * 1/(samples of all ranks); the L2 term on rank 0 only), so the sum of the ranks'
 * gradients is the gradient of the whole batch. The losses the forward reports stay
 * this shard's means. Eval-mode forwards never communicate. */
void train_net_set_reducer(train_net *t, const train_reducer *r);

/* How the trunk's 3x3 convs are computed from now on: CONV_AUTO (the default: Winograd
 * F(2x2, 3x3) where the channels allow, see layers.h) or CONV_IM2COL (im2col and one
 * GEMM per chunk). Other values mean CONV_AUTO. The results agree up to rounding. */
void train_net_set_conv(train_net *t, int algo);

/* Mixed board sizes: the boards of the samples of the forwards from now on, rows (n) and
 * cols (n) per sample (1 <= rows[b] <= the layout's rows, likewise cols), each board
 * padded at the TOP LEFT into the layout's rows x cols; borrowed until the next call and
 * read by forward and backward; NULL (the default) = every board full size. A net with a
 * conv policy head only. When a forward's batch has a smaller board, that sample's input
 * planes are taken as 0 off its board; after every batch norm (+ skip) + ReLU the
 * activations off the boards are 0, as at a native board's edge; the batch norms'
 * statistics (training mode; over the ranks when data-parallel) are those of the boards'
 * points alone; the value head's pooling (mean, and max with mean_max) is over each
 * sample's own board; the aux head's softmax and the ownership loss (each sample's mean
 * over its own points) leave the padding out; the caller gives the padding no legal move
 * (the policy's masked softmax then ignores it). The backward is that forward's exact
 * gradient, so a smaller board's sample trains as on a net of its own size with the same
 * weights. With every board full size the forward and backward are the plain ones, bit
 * for bit. */
void train_net_set_boards(train_net *t, const uint8_t *rows, const uint8_t *cols);

/* The opponent-reply targets of the forwards from now on, for a net with the aux head
 * (spec aux_policy; otherwise ignored): opp (n, A) per sample, the next position's search
 * policy from the point of view of the player who replies (summing to its policy weight;
 * all 0 where no reply is known), borrowed until the next call and read by forward and
 * backward; weight >= 0 the loss's weight. opp NULL or weight 0: the head's outputs are
 * computed but add no loss and get no gradient. */
void train_net_set_aux(train_net *t, const float *opp, double weight);
/* The aux head's probabilities (n, A) of the last forward, NULL without the head. */
const float *train_net_aux_probs(const train_net *t);

/* The ownership targets of the forwards from now on, for a net with the ownership head
 * (spec aux_owner; otherwise ignored): own (n, rows*cols) per sample, the owner of each
 * point at the game's end, mover-relative as in sample files (selfplay/samples.h: -1
 * unknown, 0 nobody, k = the player k-1 seats after the mover), borrowed until the next
 * call and read by forward and backward; weight >= 0 the loss's weight. own NULL or
 * weight 0: the head's outputs are computed but add no loss and get no gradient. */
void train_net_set_owner(train_net *t, const int8_t *own, double weight);
/* The ownership head's probabilities of the last forward, channel-major (players + 1,
 * n * rows * cols): class k of point p of sample b at [k * n*HW + b*HW + p]; NULL
 * without the head. */
const float *train_net_owner_probs(const train_net *t);

/* The action-value targets of the forwards from now on, for a net with the action-value
 * head (spec policy_head action_value; otherwise ignored): qa (n, A) per sample, each
 * move's target h(points it gains + points to come after it) (nn_score_to_value), NaN for
 * a move without one, borrowed until the next call and read by forward and backward;
 * weight >= 0 the loss's weight. qa NULL: no loss, no gradient to the policy layers. */
void train_net_set_action_values(train_net *t, const float *qa, double weight);

/* Outputs of the last forward (borrowed, valid until the next forward):
 * probabilities (n, A) (0 on illegal moves), logits (n, A), values (n, players) tanh. */
const float *train_net_probs(const train_net *t);
const float *train_net_logits(const train_net *t);
const float *train_net_values(const train_net *t);

/* The layout the context was made for. */
const nn_layout *train_net_layout(const train_net *t);

/* The same in double precision (params and grads are double flat arrays with the
 * layout's offsets): the tests' oracle for finite differences of the whole network. */
typedef struct train_net_f64 train_net_f64;
train_net_f64 *train_net_new_f64(const nn_layout *L, int max_batch, char *err, size_t errlen);
train_net_f64 *train_net_new_threads_f64(const nn_layout *L, int max_batch, int threads, char *err,
                                         size_t errlen);
void train_net_free_f64(train_net_f64 *t);
void train_net_forward_f64(train_net_f64 *t, double *params, int n, const double *input,
                           const double *pi, const uint8_t *legal, const double *z, train_mode mode,
                           double value_weight, double weight_decay, train_losses *losses);
void train_net_backward_f64(train_net_f64 *t, const double *params, double *grads,
                            double value_weight, double weight_decay);
void train_net_set_reducer_f64(train_net_f64 *t, const train_reducer *r);
void train_net_set_conv_f64(train_net_f64 *t, int algo);
void train_net_set_boards_f64(train_net_f64 *t, const uint8_t *rows, const uint8_t *cols);
void train_net_set_aux_f64(train_net_f64 *t, const double *opp, double weight);
const double *train_net_aux_probs_f64(const train_net_f64 *t);
void train_net_set_owner_f64(train_net_f64 *t, const int8_t *own, double weight);
const double *train_net_owner_probs_f64(const train_net_f64 *t);
void train_net_set_action_values_f64(train_net_f64 *t, const double *qa, double weight);
const double *train_net_probs_f64(const train_net_f64 *t);
const double *train_net_values_f64(const train_net_f64 *t);
const double *train_net_logits_f64(const train_net_f64 *t);
const nn_layout *train_net_layout_f64(const train_net_f64 *t);

#endif
