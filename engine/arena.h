/* arena.h — matches between players: games with rotating seats and random openings,
 * tallies of wins/draws/losses per player and per seat, and the results file.
 *
 * Seats rotate so that every player sits in every seat equally often: two players
 * alternate (A B, B A, ...); three players go through the six seat orders. Games in one
 * rotation block share the same opening, so an opening's advantage is played from each
 * seat: with a book (openings.h) the block's opening is the book's next line (block b
 * plays line b mod count: every line from both colours before any repeats), then
 * arena.opening_moves uniform random moves.
 *
 * Win, draw, loss: a player wins a game when its outcome is strictly the best of all
 * players, loses when strictly the worst, and draws otherwise (two players: the usual;
 * three players: a middle place or a shared place counts as a draw).
 *
 * The results file has one JSON object per line and per game:
 *   {"game":"mnk","players":["alphabeta:2","random"],"result":[1,-1],
 *    "moves":["h8","g7",...],"opening":2,"seed":1,"index":0}
 * players and result in seat order (result = the game's outcome per seat, in [-1, 1]);
 * seed and index reproduce the game with the same players (arena seed, game number).
 * Scored games add "score" (points per seat) and games with tiles "tile" (the largest
 * tile reached, 2048 for the 2048 tile).
 *
 * One-player games (2048): there are no seats to rotate. Each of the players named
 * (1..ARENA_MAX_SOLO) plays every game number on its own; game i starts from the same
 * position and draws its chance events from the same seed for every player (common
 * random numbers: the spawns agree as long as the boards do), and the players are
 * compared by score (arena_solo_summary), not by wins.
 * This module knows players and games, not networks.
 */
#ifndef GZ_ARENA_H
#define GZ_ARENA_H

#include <stdint.h>
#include <stdio.h>

#include "game.h"
#include "openings.h"
#include "player.h"

#define ARENA_MAX_SOLO 8    /* players of a one-player match */
#define ARENA_MAX_TILE 40   /* log2 of the largest tile the tallies count */

/* One finished game. moves is caller-provided storage of g->max_game_length ints. */
typedef struct arena_record {
    int nplayers;
    int seat_player[GAME_MAX_PLAYERS]; /* index into the match's player list, per seat */
    float z[GAME_MAX_PLAYERS];         /* outcome per seat */
    int nmoves;
    int *moves;                        /* (nmoves) actions, borrowed storage */
    int opening;                       /* how many of the moves were the opening (book + random) */
    uint64_t seed;                     /* the arena seed */
    int index;                         /* game number in the match */
    float score[GAME_MAX_PLAYERS];     /* scored games: points per seat at the end (else 0) */
    int best_tile;                     /* games with tiles: log2 of the largest (else -1) */
    double think[GAME_MAX_PLAYERS];    /* seconds each seat spent choosing its moves */
    int choices[GAME_MAX_PLAYERS];     /* moves each seat chose (openings not counted) */
} arena_record;

/* One player's results over a match. */
typedef struct arena_tally {
    int games, wins, draws, losses;
    double outcome_sum;                 /* sum of the player's outcomes z */
    double first_share;                 /* sum over games of its share of first place: 1
                                         * alone, 1/k tied with k - 1 others, else 0 (three
                                         * players: ties for first are common in Sanling;
                                         * equal players get 1/players each) */
    int seat_games[GAME_MAX_PLAYERS];   /* per seat the player sat in */
    int seat_wins[GAME_MAX_PLAYERS];
    int seat_draws[GAME_MAX_PLAYERS];
    int seat_losses[GAME_MAX_PLAYERS];
    double score_sum, score_sq;         /* scored games: the player's points */
    /* Head to head (2 or more players; indices into the match's player list): the games
     * in which this player's outcome was above / level with player j's. With three
     * players this is what compares two of them fairly: W-D-L counts only first and
     * last places, and a player's place depends on who else sits at the table. */
    int above[GAME_MAX_PLAYERS], level[GAME_MAX_PLAYERS];
} arena_tally;                          /* (deterministic given the seed: no timings here;
                                         * arena_record has each game's) */

typedef struct arena_opts {
    int games;          /* games to play (>= 1) */
    int opening_moves;  /* uniform random moves at the start of each game (after the book's) */
    const opening_book *book; /* optional (borrowed): each rotation block starts with a line of it */
    uint64_t seed;
    const char *results_path; /* append one JSON line per game; NULL = none */
    /* Optional: called after every game with the tallies so far (nplayers of them). */
    void (*progress)(void *ctx, int done, int total, const arena_tally *tallies, int nplayers);
    void *progress_ctx;
    /* Optional (two players): an SPRT on the first player's results, checked after every
     * colour-swapped pair of games; the match stops early once it decides. */
    const struct elo_sprt *sprt;
    /* Optional: called after every game with its record (players as in arena_run's
     * list; one call per player and game in a one-player match). */
    void (*on_game)(void *ctx, const arena_record *rec);
    void *on_game_ctx;
    /* Optional: one share of a match split between processes: only the games whose
     * index i has i % shards == shard are played (shards <= 1: every game). A game's
     * seats, opening and game rng come from its index, so the shares together are the
     * whole match's games (each player's own state, e.g. a search tree's rng, carries
     * over only the games of its share). Tallies and progress count this share's games.
     * Not with sprt. */
    int shards, shard;
} arena_opts;

/* A one-player match's result for one player: its scores over n games. */
typedef struct arena_solo_summary {
    int games;
    double mean, sd;       /* of the scores */
    double lo, hi;         /* the mean's 95% interval: mean -+ 1.96 sd / sqrt(games) */
    double median;
    double min, max;
    int best_tile;         /* log2 of the largest tile any game reached; -1 without tiles */
    double reached[ARENA_MAX_TILE + 1]; /* share of games whose largest tile is >= 2^k */
    double seconds_per_move; /* time per chosen move (0 when none was timed) */
} arena_solo_summary;

/* Summarises n games' scores[n] and best tiles tiles[n] (log2, or NULL / -1 without
 * tiles); think seconds over `choices` moves give the time per move. Pure. */
void arena_solo_summarise(const double *scores, const int *tiles, int n, double think,
                          long choices, arena_solo_summary *out);

/* +1 win, 0 draw, -1 loss for `seat` given the outcomes z[nplayers] (see top). */
int arena_outcome_class(int nplayers, const float *z, int seat);

/* The seat order of game `index` for n players: order[seat] = player index. */
void arena_seat_order(int nplayers, int index, int *order);

/* Plays one game: seated[seat] plays seat `seat` (g->players of them; a player may not
 * appear twice). The first nbook moves are book[] (legal, as a loaded book's are), the
 * next opening_moves uniform random from opening_rng;
 * the players use game_rng. Every player is reset before and notified of every move.
 * rec->moves must hold g->max_game_length ints; fills nmoves, moves, z, opening.
 * Returns 0, or -1 with a message (a player failed or chose an illegal move). */
int arena_play_game(const game *g, player *const *seated, const int *book, int nbook,
                    int opening_moves, rng *opening_rng, rng *game_rng, arena_record *rec,
                    char *err, size_t errlen);

/* Plays a match of o->games games among players[nplayers] (nplayers == g->players,
 * or 1..ARENA_MAX_SOLO for a one-player game: each plays o->games games), rotating
 * seats; fills tallies[nplayers] (in the order given) and appends to the results file
 * when asked. Returns 0, or -1 with a message naming the file or the player. Games
 * already written stay in the file on error. */
int arena_run(const game *g, player *const *players, int nplayers, const arena_opts *o,
              arena_tally *tallies, char *err, size_t errlen);

/* One results-file line (no newline) for rec. Returns a malloc'd string (free with
 * free()), NULL when out of memory. */
char *arena_record_json(const game *g, const arena_record *rec, player *const *players);

/* The match score of a tally: wins + draws/2 for two-player games, the mean outcome
 * for three players (as the --json summary reports it). */
double arena_score(const arena_tally *t, int nplayers);

#endif
