/* sanling.h — what Sanling offers beyond the game interface (engine/game.h): the
 * lattice's neighbours, the score behind the outcome, and setting up a position from a
 * diagram (tests, and later GTP's position commands). The rules are in sanling.c's
 * header comment and DESIGN.md §2.2. Every function takes a game created with
 * game.name "sanling" (asserted). No allocation; thread-safe on distinct states.
 */
#ifndef GZ_SANLING_H
#define GZ_SANLING_H

#include <stdbool.h>
#include <stddef.h>

#include "../game.h"

/* Writes the on-board neighbours of point `action` (r * N + c) into out[0..5] as
 * actions, in the cyclic order (r,c+1) (r-1,c+1) (r-1,c) (r,c-1) (r+1,c-1) (r+1,c),
 * skipping those off the board, and returns how many (2..6). */
int sanling_neighbours(const game *g, int action, int *out);

/* The current score: triangles[p] = unit triangles made of three of player p's stones,
 * largest_group[p] = stones in p's largest six-connected group, for p < g->players.
 * Valid at any point of the game (the outcome uses them at the end). */
void sanling_score(const game *g, const game_state *s, int *triangles, int *largest_group);

/* Sets s to the position drawn in `diagram`: N*N cell characters row by row from the
 * top (whitespace ignored): '.' or '+' empty, '*' the neutral stone (exactly one, at
 * the centre), 'X' 'O' 'V' the stones of players 0, 1, 2. The number of player stones is
 * the ply (so the player to move is ply % players); it must not exceed game.moves.
 * Reachability is not checked. Returns 0, or -1 with a message in err (s undefined). */
int sanling_setup(const game *g, game_state *s, const char *diagram, char *err, size_t errlen);

#endif
