/* brain.h — a player made from a spec and its search run on a clock: the engine behind
 * the protocol front ends (cli/pbrain.h, cli/gtp.h) and the seats and hints of gridzero
 * serve (web/). It lives in nn/, the lowest folder both front ends reach.
 *
 * Kinds of brain, by spec:
 * - "model:FILE[:sims]" (the -m option): PUCT search with the network evaluator of FILE;
 * - "mcts" / "mcts:N": PUCT search with the rollout evaluator (pure MCTS, with
 *   mcts_params_pure's absolute FPU);
 *   both search until the move's time budget is used, the simulation cap is reached
 *   (N, or brain_opts.sims, which wins), the root is proven, the tree's memory is full,
 *   or the caller's player_ctl says stop. Without a clock (budget < 0 and no deadline)
 *   and without a cap they stop at mcts.simulations. A search step (one evaluator call
 *   of up to mcts.batch leaves) cannot be cut short, so a step is not started when the
 *   last one's duration would carry it past the budget; the first step is always made.
 *   A model brain runs the network once at every batch size 1..mcts.batch when it is
 *   made for a game (oneDNN creates its primitives per batch size on first use: that
 *   cost must not land inside a move's budget). A search's seeds and settings are those
 *   of the player of the same spec (player_new with net_player_ext: `gridzero arena`,
 *   `play`), so with a cap and no clock a brain plays that player's moves.
 * - any other player spec (random, alphabeta[:D], perfect): the player just chooses; the
 *   budget is ignored (alphabeta:Ts has its own clock); the player_ctl is handed on.
 * Before any of these, every brain looks for a VCF of the side to move (games with the
 * threat hooks of game.h: Gomoku; at most 200,000 nodes, and a quarter of a clocked
 * budget): a proven win's first move is played without asking the player (proven set,
 * searched false), so no engine built on gridzero misses a forced win by fours.
 * The search tree follows the game through brain_notify (subtree reuse) and starts
 * afresh on any other position (after an undo or a new board).
 *
 * The game is borrowed and may be swapped (brain_set_game) when a protocol changes the
 * board size; the model file is read again for the new game (the network is fully
 * convolutional). One thread at a time (a player_ctl lets another thread stop a choice
 * and watch its progress). Knows nothing about protocols or HTTP.
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

/* What the brain chose and why. */
typedef struct brain_move {
    int action;
    bool searched;        /* a tree search made the choice (else the VCF check or a plain
                           * player): top[] holds its root's moves */
    int sims;             /* simulations of this search; a plain player's own count
                           * (player_info.simulations: alpha-beta's nodes); 0 = none */
    int depth;            /* alpha-beta depth reached (plain players); 0 = not applicable */
    double seconds;       /* wall time of the choice */
    bool proven;          /* the root's outcome is proven */
    bool full;            /* the tree's memory filled up: the search stopped there, before
                           * its clock or cap (brain_opts.memory_mb) */
    bool has_value;       /* value and values[] are set: searches, proven wins, and plain
                           * players that value their choice */
    float value;          /* expected outcome for the player to move, [-1, 1] */
    float values[GAME_MAX_PLAYERS]; /* the same per absolute player */
    int ntop;             /* entries of top[], most visited first */
    struct {
        int action;
        int visits;       /* visits (searches); a plain player's count for it (alpha-beta:
                           * its score from the mover's view, as player_info's top) */
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
 * always does at least one step). ctl (borrowed; NULL: none) is what another thread
 * holds: its stop flag ends the search after the current step (a legal move is still
 * returned), its deadline (player_clock() time; 0 = none) bounds the budget, and its
 * progress gets the simulations so far (a plain player's own count). Fills out;
 * returns the action or -1 with a message. */
int brain_choose(brain *b, const game_state *s, double budget, player_ctl *ctl, brain_move *out,
                 char *err, size_t errlen);

/* Reseeds the random source handed to plain players (random, alpha-beta's ties), e.g.
 * for a move that depends on the position only (serve: the same move after an undo).
 * Searches keep their trees' own seeds. */
void brain_reseed(brain *b, uint64_t seed);

/* m as a player_info (what a front end of players shows): top[] keeps the visited
 * moves (at most PLAYER_INFO_TOP). */
void brain_move_info(const brain_move *m, player_info *info);

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

/* The shipped model for c's game (models/ in the repository, a model card beside each):
 * models/gomoku15.h5 for m,n,k five in a row under the freestyle rule (trained on 15x15;
 * the network is fully convolutional, so other sizes get it too, with the note brain_new
 * prints for another board size). Looked for in $GZ_MODELS, then in models/ beside the
 * binary's directory (build/gridzero -> models/), then in the source tree it was built
 * from. Writes the path into path and returns 0, or returns -1 when the game has no
 * shipped model or the file is not found (the callers then keep their old default). */
int brain_shipped_model(const gz_config *c, char *path, size_t len);

/* Monotonic clock in seconds (player_clock's: the clock of player_ctl.deadline). */
double brain_now(void);

#endif
