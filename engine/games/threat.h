/* threat.h — threat-space search for k-in-a-row games (Gomoku): VCF and VCT.
 *
 * VCF (victory by continuous fours): the attacker plays only fours (moves after which
 * he has a point that completes k), the defender only the forced reply (the single
 * completion point). VCT (victory by continuous threats): the attacker also plays
 * threes (moves after which he has a move that makes two completion points at once,
 * an open four or a double four); the defender's replies are then EVERY move that
 * could stop that: every point that spoils all of the attacker's winning follow-ups,
 * and every counter-four of his own (which the attacker must answer first). So a VCT
 * win is a proof, not a guess. At the depth limit of a VCT the search continues with a
 * VCF from that node (also a proof).
 *
 * Patterns are per-line windows of k cells with a count of each colour, kept
 * incrementally (a stone updates the <= 4k windows through it) and indexed by
 * bitsets of "one short of k", "two short" and "three short" windows per colour, so
 * move generation looks only at the windows that matter. Freestyle (k or more wins)
 * and exact (only exactly k: a completion point that would make an overline is no
 * completion point) are both handled, and caro (exact, and a five blocked at both ends
 * by the opponent is no win: threat_set_caro). Renju marks black's forbidden points
 * through threat_set_forbidden (mnk.c's hook, renju.h's check, with exact off so that
 * white's overlines win): a forbidden point is then no attack, no defence and no
 * completion point for that colour, and black's overline points are forbidden.
 *
 * Colours are the board values: 1 (black, player 0 of mnk) and 2 (white). The board
 * is rows*cols cells, r * cols + c, 0 = empty.
 *
 * Memory: everything (windows, transposition table, move stacks) is allocated by
 * threat_new; a search never allocates. The transposition table keeps proven results
 * across calls (they depend on the position only), so a solver may be reused for many
 * positions of one game. Not thread-safe: one solver per thread. This module knows
 * nothing about search trees, players or networks.
 */
#ifndef GZ_THREAT_H
#define GZ_THREAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct threat_solver threat_solver;

typedef enum {
    THREAT_VCF = 0, /* fours only */
    THREAT_VCT = 1, /* fours and threes */
} threat_kind;

typedef enum {
    THREAT_ERROR = -1,   /* bad input (message in err) */
    THREAT_NONE = 0,     /* searched to the end: no win of this kind (within the VCT depth) */
    THREAT_WIN = 1,      /* a proven win; the line is in pv */
    THREAT_UNKNOWN = 2,  /* the node or time budget ran out before an answer */
} threat_status;

/* "error", "none", "win", "unknown". */
const char *threat_status_to_string(threat_status s);

/* Is `cell` forbidden for `color` on `board`? (renju). ctx is the caller's. */
typedef bool (*threat_forbidden_fn)(void *ctx, const uint8_t *board, int cell, int color);

/* A solver for a rows x cols board (each 1..64) and lines of k (4..15; tic-tac-toe's
 * k = 3 is refused: its "fours" are pairs and the notions below do not fit), exact =
 * only exactly k wins. tt_log2 = log2 of the transposition-table entries (10..26;
 * 16 bytes each: 20 is 16 MB, 14 is 256 KB). Returns a new solver (free with
 * threat_free) or NULL with a message in err. */
threat_solver *threat_new(int rows, int cols, int k, bool exact, int tt_log2, char *err,
                          size_t errlen);
/* Accepts NULL. */
void threat_free(threat_solver *t);

/* Sets (or with fn NULL removes) the forbidden-point rule. Clears the table. */
void threat_set_forbidden(threat_solver *t, threat_forbidden_fn fn, void *ctx);

/* Searches board (rows*cols, borrowed) for a win of `attacker` (1 or 2) of the given
 * kind, the attacker moving first (whether or not it is his turn in the game: for
 * "does my opponent threaten a VCF" pass the opponent). budget: nodes (stones placed)
 * > 0; seconds: a wall-time cap, <= 0 for none. VCT searches up to `vct_depth`
 * attacker moves (1..20; ignored for VCF) before handing over to VCF.
 * On THREAT_WIN, pv[0..*pvlen) is the line: attacker move, defence, attacker move,
 * ..., the last attacker move completing k (truncated to pvmax; pv may be NULL when
 * pvmax is 0). Errors: budget <= 0, attacker not 1 or 2, a board value not 0..2, a
 * completed line of k already on the board (message in err). */
threat_status threat_solve(threat_solver *t, const uint8_t *board, int attacker, threat_kind kind,
                           long budget, double seconds, int vct_depth, int *pv, int pvmax,
                           int *pvlen, char *err, size_t errlen);

/* The moves with which `defender` (1 or 2, to move) can answer his opponent's VCF.
 * First looks for the opponent's VCF (as if the opponent moved next) with `budget`
 * nodes. If there is none (or none found), returns 0 and leaves mask alone. Otherwise
 * writes mask[rows*cols] (1 = defends, 0 elsewhere) and returns how many moves defend
 * (0: nothing defends, the VCF wins anyway). The candidates are the points of the
 * VCF's line, the empty points on the lines through its first attacker move within k-1,
 * and every four of the defender; each is kept when the opponent then has no VCF within
 * `budget` nodes. A heuristic: a defence far from the line is not considered. Returns
 * -1 on bad input (message in err). *found is set to whether the opponent has a VCF. */
int threat_defences(threat_solver *t, const uint8_t *board, int defender, long budget,
                    uint8_t *mask, bool *found, char *err, size_t errlen);

/* Caro (Gomocup's rule 8, with exact and k = 5): a line of k whose two neighbour cells
 * both hold the opponent's stones is no win, so its empty cell is no completion point.
 * Clears the table. */
void threat_set_caro(threat_solver *t, bool caro);

/* For tests and ablations only: with naive on, VCT ignores the defender's counter-fours
 * (the replies are only the points that spoil the threat), which is UNSOUND: such a
 * "win" can be refuted by a four of the defender. Clears the table. */
void threat_set_naive(threat_solver *t, bool naive);

/* Nodes (stones placed) of the last threat_solve / threat_defences call. */
long threat_nodes(const threat_solver *t);

#endif
