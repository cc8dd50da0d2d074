/* td.h — temporal-difference learning of an n-tuple network (nn/ntuple.h) from games
 * of 2048 on the 4x4 board (Szubert and Jaśkowski 2014: TD learning of after-state
 * values).
 *
 * A learning game: in each position the player takes the move a that maximises
 * gain(a) + V(after(a)) (V the network, after(a) the board after the move, before the
 * spawn; ties go to the lower action), the tile spawns (engine/games/g2048.c's rule
 * and random source), and so on to the end. Each after-state a_t (t = 0..T-1) is then
 * moved towards its target G_t by lr / 32 per weight x (G_t - V(a_t)):
 *   lambda = 0: online TD(0), as each next move is known:
 *     G_t = gain_{t+1} + V(a_{t+1}),  G_{T-1} = 0 (no move follows the last spawn);
 *   lambda > 0: at the game's end, the lambda-returns over the values seen in play:
 *     G_t = gain_{t+1} + (1 - lambda) V(a_{t+1}) + lambda G_{t+1},  G_{T-1} = 0
 *     (lambda = 1: the points scored after a_t, Monte Carlo).
 * Values are points (no transform): a table of 32 weights has no scale to keep.
 * Threads share the network without locks (Hogwild); with one thread the games and
 * weights are reproducible from the seed.
 */
#ifndef GZ_TRAIN_TD_H
#define GZ_TRAIN_TD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/game.h"
#include "nn/ntuple.h"

typedef struct td_opts {
    double lr;       /* a value's step towards its target (per weight: lr / NT_FEATURES) */
    double lambda;   /* 0: online TD(0); (0, 1]: lambda-returns at each game's end */
    int threads;     /* >= 1 */
    uint64_t seed;   /* game i (0-based, of this call) plays from seed + i */
} td_opts;

typedef struct td_stats {
    int64_t games, moves;
    double score_sum;        /* final scores */
    int64_t tile_games[18];  /* games whose best tile reached 2^k, k = 0..17 */
} td_stats;

/* The lambda-returns of one game of T after-states: gain[t] is the points of the move
 * that made after-state t, value[t] its value when played; writes target[0..T-1] as in
 * the header comment. */
void td_lambda_returns(const float *gain, const float *value, int T, double lambda, float *target);

/* Plays and learns from `games` games of g (2048, 4x4) with n. stop (may be NULL) ends
 * it early between games when set. Fills st (games finished, moves, scores, tiles).
 * Returns 0, or -1 with a message (a game other than 4x4 2048, no memory). */
int td_learn(ntuple *n, const game *g, int games, const td_opts *o, volatile sig_atomic_t *stop, td_stats *st,
             char *err, size_t errlen);

/* The greedy move of the header comment for the decision state s (not terminal), with
 * its gain in *gain and its after-state in after[16] (either may be NULL); -1 when no
 * move is legal. */
int td_greedy_move(const ntuple *n, const game *g, const game_state *s, float *gain, uint8_t *after);

#endif
