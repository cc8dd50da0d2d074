/* pbrain.h — the Gomocup ("pbrain") protocol, one input line at a time, so that tests
 * can drive a whole session without processes: `gridzero pbrain` (cmd_pbrain.c) only
 * feeds stdin's lines to pbrain_line and stops after END or at end of input.
 *
 * Commands (case-insensitive): START n, RECTSTART w,h, RESTART, BEGIN, TURN x,y,
 * BOARD (then lines x,y,field up to DONE; field 1 = own stone, 2 = opponent's; 3, a
 * continuous-game winning line, is refused), SWAP2BOARD (then lines x,y up to DONE),
 * TAKEBACK x,y, INFO key value, ABOUT, END.
 *
 * SWAP2BOARD, as the current Gomocup protocol has it: the stones so far in the order
 * placed (black, white, black, white, black). 0 stones: the brain is the opener and
 * answers three "x,y x,y x,y". 3 stones: the responder answers SWAP (it takes black;
 * the opponent plays white's fourth stone next), "x,y" (it stays white and plays the
 * fourth stone) or "x,y x,y" (a white and a black stone; the opponent then chooses a
 * colour). 5 stones: the opener answers SWAP (it takes black) or "x,y" (it takes white
 * and plays). Any other number of stones is answered with ERROR (the session goes on).
 * The choices come from the search's value for white of the position: stones are
 * placed as the most balanced (value nearest 0) of 8 random placements in the central
 * 7x7 (9x9 for the responder's two), the responder takes a colour only when white's
 * value is more than 0.1 from 0 (else it places two), the opener takes the colour
 * with the higher value. A plain player without values (alphabeta, random) places
 * the first random candidate and always stays white. Afterwards the position holds
 * every stone and the game goes on with TURN (or BOARD).
 * Coordinates are 0-based, x the column and y the row from the top. Answers: "x,y"
 * (the brain's move), OK, ERROR message (bad input of any kind: the session goes on),
 * UNKNOWN message (unknown commands), DEBUG lines with search statistics when asked.
 *
 * The game is the config's m,n,k game (k and game.rule from it), made at every START
 * for the size asked (k..25 a side). INFO rule as Gomocup defines it: 0 freestyle, 1
 * exactly five, 4 renju (5 too: renju is its own rule), 8 caro (9 too); renju and caro
 * need k = 5; bit 2 (continuous game) is refused with an ERROR that says so, as are
 * unknown bits and renju with caro. Under renju a forbidden point is an illegal move,
 * as in Gomocup: the engine never plays one, and a TURN or BOARD stone on one is
 * answered "ERROR ... forbidden for black under renju: double three" (the session
 * goes on). A model made for another rule is refused when the rule changes (ERROR),
 * unless a fallback is set (pbrain_set_fallback: the shipped model's pure MCTS): the
 * fallback then plays, a MESSAGE line after that command's answer says so, and the model
 * comes back when the rule does.
 *
 * Time (milliseconds, from INFO): timeout_turn (default 5000; 0 = as fast as
 * possible: one search step), timeout_match (0 = no limit) and time_left. The budget
 * of a move is brain_budget(timeout_turn, time_left if the match is limited, moves
 * left) with moves left estimated as the empty points / 2, clamped to 8..30.
 * max_memory (bytes, 0 = no limit) caps the search tree at half of it (at most 256 MB).
 * A rule or max_memory change applies at once on an empty board, otherwise from the
 * next START, RESTART or BOARD (which start from an empty board).
 */
#ifndef GZ_CLI_PBRAIN_H
#define GZ_CLI_PBRAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "nn/brain.h"

typedef struct pbrain pbrain;

/* A session with settings from cfg (copied; its game must be mnk) and the engine bo
 * (copied). debug: write DEBUG lines with search statistics before each move. Returns
 * a new session (free with pbrain_free) or NULL with a message in err. */
pbrain *pbrain_new(const gz_config *cfg, const brain_opts *bo, bool debug, char *err,
                   size_t errlen);
/* The spec to play when the engine's model cannot play the game (another rule or k):
 * "mcts" behind the shipped model; NULL or "" = none. */
void pbrain_set_fallback(pbrain *pb, const char *spec);
void pbrain_free(pbrain *pb); /* accepts NULL */

/* Handles one input line (any length and bytes; the line end may be included) and
 * writes its answer lines to out, flushed. Returns 1 after END (the session is over),
 * else 0. Never fails: errors are answered on out. */
int pbrain_line(pbrain *pb, const char *line, FILE *out);

#endif
