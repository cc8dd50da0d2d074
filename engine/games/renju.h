/* renju.h — the rule layers of Gomoku beyond freestyle: which stone wins under each
 * rule, and renju's forbidden points for black.
 *
 * Rules (config key game.rule, cfg_rule in config.h):
 *   freestyle  k or more in a row wins (any k);
 *   exact      only exactly k wins, an overline does not (any k);
 *   renju      (k = 5) black, who moves first, may not play a forbidden point: a double
 *              three, a double four (two fours in one line included) or an overline;
 *              only exactly five wins for black, and a five wins even when the same
 *              stone also makes a forbidden shape; white has no restriction and an
 *              overline wins for white;
 *   caro       (k = 5) only exactly five wins, and not when both cells just beyond its
 *              ends hold the opponent's stones (the board's edge does not block).
 *
 * Renju definitions, for a black stone at point p (the RIF rules, recursive):
 *   five         exactly five in a row through p;
 *   four         a line through p with a point q that would make a five including p.
 *                In one line: a straight four (.XXXX., two five-points made by the same
 *                four stones) counts once; X.XXX.X, XX.XX.XX and XXX.X.XXX count twice
 *                (a double four in one line);
 *   three        a line through p with a point q, not itself forbidden for black once p
 *                is on the board, that would make a straight four including p. Checking
 *                q is the recursion; a three whose only four-making points are
 *                forbidden is no three;
 *   forbidden    not a five, and an overline, or two fours, or two threes (in different
 *                lines: a line through p holds at most one three, and a line with a four
 *                counts no three).
 * Only the four lines through p matter (and, for the recursion, the lines through the
 * four-making points q), so a check reads at most 4 x 13 cells per level. Recursion is
 * cut at RENJU_MAX_DEPTH levels (a q deeper than that counts as not forbidden); real
 * positions never come near it.
 *
 * Boards are rows*cols cells, index r * cols + c, 0 = empty; `black` is the value of
 * black's stones (1 in the game state; the alpha-beta player stores the side to move as
 * 1), any other non-zero value is white's. Nothing here allocates or keeps state: every
 * function is thread-safe. This module knows nothing about game states, search or
 * networks.
 */
#ifndef GZ_RENJU_H
#define GZ_RENJU_H

#include <stdbool.h>
#include <stdint.h>

#include "../config.h"

#define RENJU_MAX_DEPTH 24
/* The largest board the check handles (its scratch copy lives on the stack). */
#define RENJU_MAX_CELLS (64 * 64)

/* The verdict on a black stone at an empty point. */
typedef enum {
    RENJU_ALLOWED = 0,      /* no five, not forbidden */
    RENJU_FIVE = 1,         /* exactly five: allowed and wins, whatever else it makes */
    RENJU_OVERLINE = 2,     /* forbidden: six or more in a row */
    RENJU_DOUBLE_FOUR = 3,  /* forbidden: two fours (one line or two) */
    RENJU_DOUBLE_THREE = 4, /* forbidden: two threes */
} renju_verdict;

/* "allowed", "five", "overline", "double four", "double three". */
const char *renju_verdict_name(renju_verdict v);

/* Whether the verdict forbids the point. */
static inline bool renju_verdict_forbidden(renju_verdict v) { return v >= RENJU_OVERLINE; }

/* The verdict on a black stone at `cell` (which must be empty) of board (borrowed, not
 * changed). rows, cols: 1..64. */
renju_verdict renju_check(const uint8_t *board, int rows, int cols, int cell, int black);

/* renju_verdict_forbidden(renju_check(...)): is `cell` forbidden for black? */
bool renju_forbidden(const uint8_t *board, int rows, int cols, int cell, int black);

/* Writes mask[rows*cols]: 1 at every empty point forbidden for black, 0 elsewhere.
 * Returns how many points are forbidden. */
int renju_forbidden_mask(const uint8_t *board, int rows, int cols, int black, uint8_t *mask);

/* Whether a stone of `color` (non-zero) at empty `cell` wins at once under `rule` with
 * lines of k (renju and caro: k is 5). black: the value of black's stones on board
 * (renju: black wins only with exactly five). Does not check that the point is allowed. */
bool renju_wins(const uint8_t *board, int rows, int cols, int k, cfg_rule rule, int cell,
                int color, int black);

#endif
