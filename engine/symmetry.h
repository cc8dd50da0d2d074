/* symmetry.h — the symmetries of a board, applied to input planes and to actions.
 *
 * A game lists the elements its rules keep (game->sym[0..nsym-1], see sym_id in
 * game.h); this module maps planes (planes x rows x cols) and point actions
 * (r * cols + c) under any element, for both lattices: the hex rhombus group is a
 * subgroup of the square's D4 as maps of the array. Games whose actions are not points
 * map them through their own hook (game_ops.sym_action: 2048's four directions). Pure
 * functions; thread-safe.
 */
#ifndef GZ_SYMMETRY_H
#define GZ_SYMMETRY_H

#include <stdint.h>

#include "game.h"

/* The element s^-1. */
sym_id sym_inverse(sym_id s);
/* The element a∘b (apply b, then a). */
sym_id sym_compose(sym_id a, sym_id b);
/* Maps the point (r, c) of a rows x cols board; asserts the element fits the shape
 * (elements that swap axes need rows == cols). */
void sym_map_point(sym_id s, int rows, int cols, int r, int c, int *r2, int *c2);
/* Maps an action of g under s (a point index, or through the game's sym_action). */
int sym_map_action(const game *g, sym_id s, int action);
/* out[p][s(r,c)] = in[p][r][c] for every plane p; in and out must not overlap. */
void sym_map_planes_f32(const game *g, sym_id s, int planes, const float *in, float *out);
void sym_map_planes_u8(const game *g, sym_id s, int planes, const uint8_t *in, uint8_t *out);
/* A vector over actions (a policy, a legal mask): out[s(a)] = in[a] (point actions or the
 * game's sym_action). */
void sym_map_policy_f32(const game *g, sym_id s, const float *in, float *out);
void sym_map_policy_u8(const game *g, sym_id s, const uint8_t *in, uint8_t *out);
/* Declares on g the symmetries of its rows x cols board of the square lattice: the 8 of
 * the square when rows == cols, else the 4 that keep a rectangle (identity, 180
 * degrees, the two mirrors). For the games' create(). */
void sym_set_square_group(game *g);
/* "id", "rot90", ... for messages and tests. */
const char *sym_name(sym_id s);

#endif
