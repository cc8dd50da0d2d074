/* openings.h — opening books: files of move lists that games start from (self-play's
 * selfplay.openings, `gridzero arena --openings`).
 *
 * A book file is text, one opening a line: the moves from the empty board in the
 * game's own notation ("h8 i9 h10", or Gomocup's "7,7 8,8 7,9" for m,n,k), separated by
 * blanks, played by the players in turn (black first). Blank lines and lines starting
 * with '#' are skipped. Every opening is checked when the book is loaded: each move
 * legal under the game's rule (renju: no forbidden point for black) and the game not
 * over after it; a bad line is an error naming the file, the line and the move. An
 * empty book is an error. Balanced openings (neither side far ahead) keep self-play
 * from being all first-player wins; the book does not check balance.
 *
 * This module knows games, not players or networks. A loaded book is immutable: it may
 * be shared by threads.
 */
#ifndef GZ_OPENINGS_H
#define GZ_OPENINGS_H

#include <stddef.h>
#include <stdio.h>

#include "game.h"
#include "player.h"
#include "rng.h"

typedef struct opening_book opening_book;

/* Reads and checks the book at path for game g. Returns it (free with openings_free) or
 * NULL with a message ("FILE:LINE: move 3 \"h8\": the point is occupied"). */
opening_book *openings_load(const game *g, const char *path, char *err, size_t errlen);
void openings_free(opening_book *o); /* accepts NULL */

/* Openings in the book (>= 1). */
int openings_count(const opening_book *o);

/* The moves (actions) of opening i (0 <= i < count), borrowed: valid until
 * openings_free. *n receives how many. */
const int *openings_moves(const opening_book *o, int i, int *n);

/* A uniformly random legal point of s within the centred side x side square of the
 * board (the whole board when it is smaller), or -1 when there is none: where swap2
 * openings put their stones. */
int openings_central_point(const game *g, const game_state *s, int side, rng *r);

/* Plays opening i on s (a start position of the book's game). Returns 0; -1 only if s
 * was not the start position (a move is then refused). */
int openings_play(const opening_book *o, int i, const game *g, game_state *s);

/* How openings_generate draws a book. */
typedef struct openings_gen_opts {
    int count;     /* openings to write (>= 1) */
    int stones;    /* moves in each (1 .. the points of the square) */
    int side;      /* each move uniform on the legal points of the centred side x side square */
    int vct_depth; /* the VCT's attacker moves before VCF takes over (1..20) */
    long budget;   /* threat-search nodes per check (> 0) */
    long tries;    /* draws before giving up (> 0) */
    player *judge; /* NULL, or a player whose value of the opening for the side to move
                    * must be within [-within, within] (a search player: mcts:N, model) */
    float within;  /* the judge's bound, in (0, 1] */
    /* NULL, or called after every judged draw (a judge is slow): openings kept so far
     * and draws made */
    void (*progress)(void *ctx, int kept, long drawn);
    void *progress_ctx;
} openings_gen_opts;

/* count 50, stones 4, side 5, vct_depth 6, budget 200,000, tries 100,000, no judge
 * (within 0.2 for one): how openings/gomoku15-4stones.txt was made. */
openings_gen_opts openings_gen_default(void);

/* Draws balanced openings for a two-player game with a threat search (m,n,k with
 * k >= 4): each move uniform on the legal points of the centred square (the players in
 * turn), kept when the game is not over, neither player has a VCT moving first
 * (game_ops.threat_win with o->vct_depth within o->budget nodes: a search that runs out
 * of nodes counts as none, so "no VCT" means none found) and it is no symmetric image
 * (the game's symmetries, the same stones in any order) of an opening kept before or
 * of one of `avoid` (may be NULL: a book the new lines go beside), and, with a judge,
 * when the judge's value for the side to move (player_info.value after a choose(), its
 * tree reset first) is within o->within: openings balanced by an engine's eye, not
 * just by the threat solver's (in freestyle black's move is worth most games between
 * strong players). Writes each kept
 * opening as a line of the game's move notation to out. Returns the number written
 * (o->count); OPENINGS_BAD_INPUT with a message for bad options, a game without a
 * threat search or a judge that gives no value; -1 with a message when the judge fails,
 * memory runs out or fewer than o->count are found in o->tries draws (those found are
 * written). */
#define OPENINGS_BAD_INPUT (-2)
int openings_generate(const game *g, const openings_gen_opts *o, const opening_book *avoid,
                      rng *r, FILE *out, char *err, size_t errlen);

#endif
