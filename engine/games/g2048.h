/* g2048.h — what the 2048 game (g2048.c) exposes beyond the game interface: direct
 * access to the board for the tests and the expectimax player, and the slide of one
 * line, the rule everything else is built on.
 *
 * Tiles are stored as exponents: 0 = empty, k = the tile 2^k. The board is row-major,
 * r * cols + c with r = 0 at the top. This header knows nothing of search or networks.
 */
#ifndef GZ_GAMES_G2048_H
#define GZ_GAMES_G2048_H

#include <stdbool.h>
#include <stdint.h>

#include "../game.h"

#define G2048_MAX_SIDE 8
#define G2048_MAX_CELLS (G2048_MAX_SIDE * G2048_MAX_SIDE)
#define G2048_TILE_PLANES 16 /* planes 1..16: tiles 2 .. 2^15 one each, 2^16 and above */
#define G2048_PLANES (G2048_TILE_PLANES + 2) /* + empty, + ones */

/* The four moves, in action order (notation u d l r). */
enum { G2048_UP = 0, G2048_DOWN = 1, G2048_LEFT = 2, G2048_RIGHT = 3 };

/* Slides one line of n (<= G2048_MAX_SIDE) exponents towards index 0: tiles move over
 * empty cells, two equal neighbours merge into one tile of twice the value, each tile
 * merges at most once per move and the pair nearest index 0 merges first (so 2 2 2 2
 * gives 4 4, 4 4 8 gives 8 8, never 16). In place. Returns the points gained (the sum
 * of the merged tiles' values) and sets *changed. Pure. */
uint64_t g2048_slide_line(uint8_t *line, int n, bool *changed);

/* The board of s as exponents, cells[rows * cols] (row-major). */
void g2048_get_cells(const game *g, const game_state *s, uint8_t *cells);
/* Makes s the decision state (a player moves next) with board cells[rows * cols]
 * (exponents 0..63), score and moves played as given. */
void g2048_set(const game *g, game_state *s, const uint8_t *cells, uint64_t score, int moves);
/* The points scored so far. */
uint64_t g2048_score(const game *g, const game_state *s);

#endif
