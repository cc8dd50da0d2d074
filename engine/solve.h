/* solve.h — an exact solver for small m,n,k boards (tic-tac-toe, 4x4): the brain of
 * the `perfect` player and a test oracle for search.
 *
 * solve_new() solves the whole game from the start position by plain negamax over
 * every reachable position (no pruning, so every position's value and every move's
 * value are exact), memoised in a table indexed by the board read in base 3: two
 * bits per possible board, 3^cells / 4 bytes (4x4: 10.8 MB). Boards above
 * SOLVE_MAX_CELLS points are refused. Values are from the point of view of the player
 * to move: +1 a forced win, 0 a draw, -1 a forced loss.
 * This module only knows the game interface, plus mnk's documented encoding (plane 0:
 * the mover's stones, plane 1: the opponent's) to read a board from a state.
 */
#ifndef GZ_SOLVE_H
#define GZ_SOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "game.h"

#define SOLVE_MAX_CELLS 16

typedef struct solver solver;

/* Solves g from its start position: 3x3 in milliseconds (5478 positions); 4x4 with
 * k 4 in about 13 s on one core of the 2-core dev machine (9,722,011 positions, a draw).
 * g is borrowed and must outlive the solver. Returns a new solver (free with
 * solve_free), or NULL with a message in err when g is not an m,n,k game or has more
 * than SOLVE_MAX_CELLS points, or memory runs out. */
solver *solve_new(const game *g, char *err, size_t errlen);
void solve_free(solver *sv);

/* The exact value of s for the player to move: +1, 0 or -1 (a terminal position: its
 * result for the player to move). s must be a state of the solver's game. Positions
 * reachable from the start are all solved by solve_new, so on them this only reads
 * and is thread-safe; any other position is solved on the spot (then not thread-safe). */
int solve_value(solver *sv, const game_state *s);

/* Writes mask[g->actions]: 1 for every legal move that keeps the value of s (every
 * optimal move), 0 elsewhere. Returns how many (0 at a terminal position). Same
 * thread-safety as solve_value. */
int solve_best_moves(solver *sv, const game_state *s, uint8_t *mask);

/* The number of distinct positions (boards) reachable from the start by legal play,
 * the start and terminal positions included (tic-tac-toe: 5478). Positions solved on
 * the spot by solve_value are counted too. */
long solve_positions(const solver *sv);

#endif
