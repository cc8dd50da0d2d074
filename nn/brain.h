/* brain.h — the engine behind the protocol front ends (pbrain.h, gtp.h): a player spec
 * made into something that picks a move for a position within a time budget.
 *
 * Kinds of brain, by spec:
 * - "model:FILE[:sims]" (the -m option): PUCT search with the network evaluator of FILE;
 * - "mcts" / "mcts:N": PUCT search with the rollout evaluator (pure MCTS, with
 *   mcts_params_pure's absolute FPU);
 *   both search until the move's time budget is used, the simulation cap is reached
 *   (N, or brain_opts.sims, which wins), the root is proven, or the tree's memory is
 *   full. Without a clock (budget < 0) and without a cap they stop at mcts.simulations.
 *   A search step (one evaluator call of up to mcts.batch leaves) cannot be cut short,
 *   so a step is not started when the last one's duration would carry it past the
 *   budget; the first step is always made. A model brain runs the network once at every
 *   batch size 1..mcts.batch when it is made for a game (oneDNN creates its primitives
 *   per batch size on first use: that cost must not land inside a move's budget).
 * - any other player spec (random, alphabeta[:D], perfect): the player just chooses; the
 *   budget is ignored (alphabeta:Ts has its own clock).
 * Before any of these, every brain looks for a VCF of the side to move (games with the
 * threat hooks of game.h: Gomoku; at most 200,000 nodes, and a quarter of a clocked
 * budget): a proven win's first move is played without asking the player (proven set,
 * searched false), so no engine built on gridzero misses a forced win by fours.
 * The search tree follows the game through brain_notify (subtree reuse) and starts
 * afresh on any other position (after an undo or a new board).
 *
 * The game is borrowed and may be swapped (brain_set_game) when a protocol changes the
 * board size; the model file is read again for the new game (the network is fully
 * convolutional). One thread at a time. Knows nothing about protocols.
 */
#ifndef GZ_NN_BRAIN_H
#define GZ_NN_BRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/player.h"

#define BRAIN_TOP 32

typedef struct brain_opts {
    const char *spec;     /* player spec (copied); "model:FILE" for -m FILE */
    int sims;             /* simulation cap of searches; 0 = the spec's N, or none */
    double memory_mb;     /* tree memory cap in MB; 0 = 256 */
} brain_opts;

/* What the brain chose and, for searches, why. */
typedef struct brain_move {
    int action;
    bool searched;        /* a tree search made the choice (the fields below are set) */
    int sims;             /* simulations of this search */
    double seconds;       /* wall time of the choice */
    bool proven;          /* the root's outcome is proven */
    float value;          /* expected outcome for the player to move, [-1, 1] */
    int ntop;             /* entries of top[], most visited first */
    struct {
        int action;
        int visits;
        float prior;
        float value;      /* mean value for the player to move; 0 when unvisited */
    } top[BRAIN_TOP];
} brain_move;

typedef struct brain brain;

/* A brain for game g (borrowed) with settings from cfg (copied). Returns a new brain
 * (free with brain_free) or NULL with a message naming the spec or file. */
brain *brain_new(const game *g, const gz_config *cfg, const brain_opts *o, char *err,
                 size_t errlen);
void brain_free(brain *b); /* accepts NULL */

/* Rebuilds the brain for another game (borrowed; e.g. another board size). Returns 0,
 * or -1 with a message (the brain is then empty until a brain_set_game succeeds, and
 * brain_choose fails). */
int brain_set_game(brain *b, const game *g, char *err, size_t errlen);

/* A new game starts: forget what was learnt about the last one. */
void brain_reset(brain *b);
/* action was played in s_before (by anyone): lets the search keep its subtree. */
void brain_notify(brain *b, const game_state *s_before, int action);

/* Picks a move for s (not terminal) within budget seconds (< 0: no clock; the search
 * always does at least one step). Fills out; returns the action or -1 with a message. */
int brain_choose(brain *b, const game_state *s, double budget, brain_move *out, char *err,
                 size_t errlen);

/* Whether the brain searches a tree (has a clock to manage and analysis to show). */
bool brain_searches(const brain *b);
/* The spec it was made from (borrowed). */
const char *brain_name(const brain *b);

/* The time-management rule shared by the protocols: the budget for one move, in
 * seconds, from the per-move limit turn (< 0: none), the time left for the rest of the
 * game left (< 0: unknown/unlimited) and the estimated moves still to play: b =
 * min(turn, left / moves_left), then 10% and 50 ms off for safety, never below 0.
 * Returns -1 (no clock) when neither limit is given. */
double brain_budget(double turn, double left, int moves_left);

/* Monotonic clock in seconds. */
double brain_now(void);

#endif
