/* spec.h — what a network is: its shape, shared by inference (nn/) and training (train/).
 *
 * A spec is plain data built from the `net` config section and the game (planes, board,
 * lattice, players, actions). The architecture (DESIGN.md §4):
 *   stem:    3x3 conv (planes -> C) -> BN -> ReLU
 *   trunk:   `blocks` blocks of 3x3 conv -> BN -> ReLU -> 3x3 conv -> BN -> (+ skip) -> ReLU
 *            (trunk "residual": with the skip; "plain": the same layers without it, so
 *            seed 002's three plain convs are blocks=1, trunk=plain)
 *   policy:  1x1 conv (C -> H) -> BN -> ReLU -> then
 *              conv head:  1x1 conv with bias (H -> 1): one logit per point (rows*cols)
 *              dense head: FC with bias (H*rows*cols -> actions)
 *              action_value head (scored games only, seed 003's RNCNN_L0): the dense
 *                head's layers (tensors policy.fc.*), but each output is a move's
 *                value y_a = h(points the move gains + the points to come after it)
 *                in the score head's scale (nn_score_to_value), trained by MSE on the
 *                sample files' per-move targets (qa), not by cross-entropy on visits.
 *                The search's priors are derived from them: softmax over the legal
 *                moves of y_a / NN_ACTION_VALUE_TEMP (in the h scale, so one
 *                temperature serves 3x3 scores of 10^2 and 4x4 scores of 10^5); the
 *                search's value stays the value head's (see nn_policy_logit_scale)
 *   value:   1x1 conv (C -> H) -> BN -> ReLU -> global pool -> FC (H or 2H -> V) + bias
 *            (value_pool "mean": the H channel means; "mean_max": the H means, then
 *            the H maxima, as KataGo's global pooling)
 *            -> ReLU -> FC (V -> players, or 3 with the wdl head) + bias -> tanh (-> minus
 *            the mean: zerosum) or softmax (wdl)
 *   aux policy (aux_policy, conv head only): a second 1x1 conv with bias (H -> 1) on the
 *            policy head's hidden layer: the opponent's reply, one logit per point. It is
 *            trained (train/net_train.h) and stored, but no inference path computes it:
 *            it shapes the trunk (KataGo's auxiliary policy target) and costs nothing
 *            at play time.
 *   aux owner (aux_owner, point actions only): a 1x1 conv with bias (H -> players + 1) on
 *            the value head's hidden layer (after its BN and ReLU, before the pooling):
 *            for each point, logits over who holds it at the game's end — nobody, the
 *            player to move, next, the one after (KataGo's ownership target). Trained
 *            and stored like the aux policy; no inference path computes it.
 * C = channels, H = head_channels, V = value_hidden. Value outputs are MOVER-FIRST:
 * output i is the outcome of the player i seats after the player to move ("to move,
 * next, the one after"); the evaluator rotates them to absolute order.
 * Hex lattice: every 3x3 kernel has taps (0,0) and (2,2) fixed at zero (see params.h).
 * BN is in eval mode at inference: y = gamma * (x - mean) / sqrt(var + NN_BN_EPS) + beta.
 * This module must not know about oneDNN, HDF5 files or training.
 */
#ifndef GZ_NN_SPEC_H
#define GZ_NN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/game.h"

#define NN_MAX_BLOCKS 40
#define NN_BN_EPS 1e-5f

typedef enum { NN_POLICY_CONV = 0, NN_POLICY_DENSE = 1, NN_POLICY_ACTION_VALUE = 2 } nn_policy_kind;

/* The action-value head's prior temperature, in the h scale of nn_score_to_value: the
 * priors are softmax(y_a / T) over the legal moves. With T = 1 a move whose value is
 * lower by 1 in h gets e^-1 of the prior: at 20000 points to come (a 4x4 game on its way
 * to 2048) that is about 220 points, near the end (500 to come) about 43 points, so the
 * priors are broad where moves differ little in the long run and sharp where a move
 * loses the game. */
#define NN_ACTION_VALUE_TEMP 1.0
typedef enum { NN_TRUNK_RESIDUAL = 0, NN_TRUNK_PLAIN = 1 } nn_trunk_kind;
/* How the value FC's outputs (nn_value_outputs: `players`, or 3 for wdl) become the
 * `players` values (nn_value_finish):
 *   independent  v_i = tanh(o_i), one free output per player;
 *   zerosum      t_i = tanh(o_i), v_i = t_i - mean(t): the values sum to zero as every
 *                outcome does, so with two players v = (t0 - t1)/2 and -v, and no
 *                calibration gap can make both sides think they are winning (with
 *                three, the order of the values is the order of the t_i);
 *   score        v_i = o_i, no squashing: scored games (2048), whose value is the
 *                points still to come x, learnt in MuZero's transformed scale
 *                y = h(x) (nn_score_to_value); the evaluator turns y back into points
 *                with h^-1 for the search;
 *   wdl          two-player games with outcomes only: three logits, the probabilities
 *                of a win, a draw and a loss FOR THE PLAYER TO MOVE (the outcome z[0]
 *                of the sample files, mover first), p = softmax(o); the values stay
 *                per seat, v_0 = W - L for the mover and v_1 = L - W for the other,
 *                so the search sees what it sees from a zerosum head. Trained by the
 *                cross-entropy of p against (max(z,0), 1-|z|, max(-z,0)) (z = z[0],
 *                fractional under train.q_ratio or adjudication), KataGo's and Leela
 *                Chess Zero's WDL head. */
/* The value head's global pooling: the mean of each channel, or the mean and the max. */
typedef enum { NN_POOL_MEAN = 0, NN_POOL_MEAN_MAX = 1 } nn_pool_kind;
typedef enum {
    NN_VALUE_INDEPENDENT = 0,
    NN_VALUE_ZEROSUM = 1,
    NN_VALUE_SCORE = 2,
    NN_VALUE_WDL = 3
} nn_value_kind;
/* The wdl head's outputs, in this order (mover's view) */
enum { NN_WDL_WIN = 0, NN_WDL_DRAW = 1, NN_WDL_LOSS = 2, NN_WDL_OUTPUTS = 3 };
/* The most value-FC outputs of any spec (arrays for nn_value_finish) */
#define NN_VALUE_MAX_OUTPUTS (GAME_MAX_PLAYERS > NN_WDL_OUTPUTS ? GAME_MAX_PLAYERS : NN_WDL_OUTPUTS)

/* MuZero's value transform: h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x with
 * eps = NN_SCORE_EPS, which turns points (2048 on 4x4: 0 .. about 10^5 to come) into a
 * scale a regression head learns (0 .. about 400), and its exact inverse
 * h^-1(y) = sign(y) (((sqrt(1 + 4 eps (|y| + 1 + eps)) - 1) / (2 eps))^2 - 1).
 * Pure; odd; strictly increasing. */
#define NN_SCORE_EPS 0.001
double nn_score_to_value(double x);
double nn_value_to_score(double y);

typedef struct nn_spec {
    int planes;           /* input planes */
    int rows, cols;       /* board the spec was made for (a conv-policy net runs on any) */
    game_lattice lattice; /* square or hex (hex: masked 3x3 kernels) */
    int players;          /* value outputs, mover-first */
    int actions;          /* policy outputs (conv head: rows * cols) */
    int blocks;           /* 0..NN_MAX_BLOCKS */
    int channels;         /* C */
    int head_channels;    /* H */
    int value_hidden;     /* V */
    nn_policy_kind policy;
    nn_trunk_kind trunk;
    nn_value_kind value; /* zerosum only with 2 or more players; wdl with exactly 2 and
                            outcomes; score for scored games */
    nn_pool_kind value_pool; /* mean, or mean and max (value FC input H or 2H) */
    bool aux_policy;      /* the opponent-reply head (conv policy, 2 or more players) */
    bool aux_owner;       /* the ownership head (point actions) */
    char rule[GAME_NAME_LEN]; /* the game's rule it was made for (game.h: g->rule, e.g.
                                 "renju"); "" = none, or a checkpoint older than the key */
    int k;                /* m,n,k: the win length it was made for (g->k); 0 = another
                             game, or a checkpoint older than the key */
} nn_spec;

/* Builds the spec for game g from the net section. A conv policy head needs point
 * actions (g->actions == rows * cols); an action_value head a scored game (refused by
 * key name otherwise). A scored game (game_scored: 2048) gets the score
 * value head whatever net.value_head says of outcomes (zerosum, independent); asking
 * for "score" in a game without a score is an error, and so is "wdl" anywhere but in a
 * two-player game with outcomes. Returns 0, or -1 with a message
 * naming the key. */
int nn_spec_from_config(nn_spec *s, const cfg_net *net, const game *g, char *err, size_t errlen);

/* Checks a spec's fields are in range. Returns 0 or -1 with a message naming the field. */
int nn_spec_validate(const nn_spec *s, char *err, size_t errlen);

/* The spec as one JSON object (the /meta "spec" attribute of checkpoints). Returns a
 * malloc'd string (free with free()), NULL when out of memory. */
char *nn_spec_to_json(const nn_spec *s);
/* Parses nn_spec_to_json's output (every key required). Returns 0 or -1 naming the key. */
int nn_spec_from_json(nn_spec *s, const char *json, char *err, size_t errlen);

/* Whether a model with spec `model` can run for game g: the same rule (a model made
 * under one rule is refused under another; a model without a rule, from before rules
 * were recorded, is taken for freestyle or exact five: refused under renju and caro),
 * the same win length k (m,n,k; a model without one recorded is taken for any),
 * a score head exactly for a scored game, the same planes, lattice, players; a dense
 * policy also needs the same rows, cols, actions. Returns 0, or -1 with a message
 * saying which field differs and both values. */
int nn_spec_check_game(const nn_spec *model, const game *g, char *err, size_t errlen);
/* For a model nn_spec_check_game accepts: 1 with a note in note (for the user: "the model
 * was trained on 15x15; the game is 9x9 ...") when it runs on another board size than it
 * was made for (a conv policy head runs on any), else 0. */
int nn_spec_game_note(const nn_spec *model, const game *g, char *note, size_t len);

/* Multiply-accumulate count times 2 (FLOPs) of one position's forward pass on a
 * rows x cols board (hex: the 7 live taps only count). */
double nn_spec_flops(const nn_spec *s, int rows, int cols);

/* The value head's last step, as the spec's value kind says: out[nn_value_outputs(s)]
 * (the value FC's outputs) in, v[players] (the values, mover first) out. out and v may
 * be the same array when it has NN_VALUE_MAX_OUTPUTS floats (or the outputs are the
 * players'). Shared by every inference path. */
void nn_value_finish(const nn_spec *s, const float *out, float *v);

/* The value FC's outputs: 3 (win, draw, loss) for the wdl head, else one per player. */
static inline int nn_value_outputs(const nn_spec *s)
{
    return s->value == NN_VALUE_WDL ? NN_WDL_OUTPUTS : s->players;
}

/* The wdl head's probabilities (win, draw, loss for the mover) from its three outputs:
 * a softmax. p may be out. */
void nn_value_wdl(const float *out, float *p);

/* Whether the policy outputs come from a dense layer over the flattened head (dense and
 * action_value heads: fixed board size, FC to the actions). */
static inline bool nn_policy_is_fc(const nn_spec *s) { return s->policy != NN_POLICY_CONV; }

/* What the policy outputs are multiplied by before the masked softmax that makes the
 * priors: 1 / NN_ACTION_VALUE_TEMP for the action-value head, 1 for logits. Every
 * inference path and the trainer's reported probabilities use it. */
static inline float nn_policy_logit_scale(const nn_spec *s)
{
    return s->policy == NN_POLICY_ACTION_VALUE ? (float)(1.0 / NN_ACTION_VALUE_TEMP) : 1.0f;
}

/* The value FC's input width: H, or 2H with mean_max pooling. */
static inline int nn_value_pool_width(const nn_spec *s)
{
    return s->head_channels * (s->value_pool == NN_POOL_MEAN_MAX ? 2 : 1);
}

/* "conv"/"dense"/"action_value", "residual"/"plain", "square"/"hex",
 * "independent"/"zerosum"/"score"/"wdl",
 * "mean"/"mean_max". */
const char *nn_value_name(nn_value_kind k);
const char *nn_policy_name(nn_policy_kind k);
const char *nn_trunk_name(nn_trunk_kind k);
const char *nn_lattice_name(game_lattice l);
const char *nn_pool_name(nn_pool_kind k);

#endif
