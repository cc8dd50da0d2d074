/* gtp.h — the Go Text Protocol (version 2) for every gridzero game, one input line at a
 * time, so that tests can drive a session without processes: `gridzero gtp`
 * (cmd_gtp.c) only feeds stdin's lines to gtp_line and stops after quit or at end of
 * input.
 *
 * Commands: protocol_version, name, version, known_command, list_commands, boardsize,
 * clear_board, komi (accepted, ignored), play, genmove, undo, showboard, quit,
 * time_settings, time_left, gridzero-analyze, gridzero-rule. Answers "=[id] result" or "?[id] message",
 * each followed by an empty line; an id given before the command is echoed.
 *
 * Decisions for games that are not Go:
 * - Moves are in the game's own notation: m,n,k "h8" (column letter a.. from the left,
 *   'i' included, row from the bottom; the Gomocup "x,y" is read too), Sanling its
 *   Hex-style "a1" (column letters, row number from the top). `pass` and `resign` are
 *   refused as moves (these games have no passing); genmove never passes.
 * - Colors: b/black and w/white in two-player games (also 1 and 2); the three Sanling
 *   players are 1, 2, 3 in seat order (1 moves first).
 * - Players move strictly in turn: play or genmove for a color that is not to move is
 *   answered "? illegal move: ... is to move" (GTP lets a controller play either color
 *   in any order; here the order is part of the rules).
 * - boardsize N: m,n,k games become N x N (k..25), Sanling N x N (5..64); the board is
 *   cleared.
 * - Time: time_settings main byo stones (seconds; byo > 0 with stones 0 = no limit) and
 *   time_left color seconds stones set the clock of each color; the engine also
 *   charges its own thinking to it. The budget of a move in main time is
 *   min(left + byo/stones, left / moves_left + byo/stones), in byo-yomi left / stones;
 *   then brain_budget's 10% and 50 ms safety margins. Without time_settings the search
 *   stops at its simulation cap.
 * - gridzero-analyze [N]: searches the position (as genmove would, without playing) and
 *   lists the N (default 10) most visited moves, one a line:
 *   "MOVE visits V prior P value Q" (Q: mean value for the player to move, -1..1).
 * - gridzero-rule [freestyle|exact|renju|caro]: the m,n,k rule (the config's game.rule
 *   at the start); a new rule clears the board, like boardsize (a model made for
 *   another rule is refused then, and the rule stays); without an argument, the rule
 *   in play. A move refused by the rule says why ("? illegal move: h8: forbidden for
 *   black under renju: double three").
 */
#ifndef GZ_CLI_GTP_H
#define GZ_CLI_GTP_H

#include <stdbool.h>
#include <stdio.h>

#include "nn/brain.h"

typedef struct gtp gtp;

/* A session for cfg's game (cfg copied) with the engine bo (copied). Returns a new
 * session (free with gtp_free) or NULL with a message in err. */
gtp *gtp_new(const gz_config *cfg, const brain_opts *bo, char *err, size_t errlen);
void gtp_free(gtp *s); /* accepts NULL */

/* Handles one input line (any length and bytes) and writes the answer to out, flushed
 * (nothing for an empty or comment line). Returns 1 after quit, else 0. */
int gtp_line(gtp *s, const char *line, FILE *out);

#endif
