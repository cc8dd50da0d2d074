/* dist.h — what the ranks of a generation loop agree on and exchange, over comm.h:
 * the checks at start (same config everywhere, one run directory seen by every rank),
 * a shared verdict on each stage's success, the sharing of work items (self-play
 * shards), and the arena's gathered results. Every function here is a collective:
 * every rank calls it, in the same order. With one rank each is a plain local step.
 */
#ifndef GZ_LOOP_DIST_H
#define GZ_LOOP_DIST_H

#include <stddef.h>

#include "comm.h"
#include "engine/arena.h"

/* Checks that every rank's json (what: the name of what it describes, for the message)
 * is the same text as rank 0's. Returns 0, or -2 on every rank with a message naming
 * the first rank that differs, its host and the first key that differs, e.g.
 * "the config differs between ranks: mcts.simulations is 16 on rank 0 (host a) and 32
 * on rank 1 (host b)". */
int dist_check_same(comm *c, const char *what, const char *json, char *err, size_t errlen);

/* Checks that dir (rank 0 has created it) is one directory for every rank: rank 0
 * writes a file with a fresh token into it and every rank reads it back. Returns 0, or
 * -2 on every rank with a message naming the ranks (and hosts) that cannot see it; -1
 * with a message when rank 0 cannot write there. The file is removed. */
int dist_check_dir(comm *c, const char *dir, char *err, size_t errlen);

/* A shared verdict: every rank passes its own status (0 ok, 1 interrupted, 2 out of
 * time, < 0 failed) with its message; every rank gets the same result: the first
 * failure's status (the lowest rank's among the lowest statuses, failures before
 * other stops) with that rank's message, prefixed "rank R (host): " when R != 0, or
 * 0 when every rank passed 0. */
int dist_agree(comm *c, int rc, char *err, size_t errlen);

/* Rank 0's text on every rank: a malloc'd copy (free with free()); NULL when out of
 * memory (every rank then aborts the job). */
char *dist_bcast_text(comm *c, const char *root_text);

/* The items this rank takes of n shared items: item j goes to rank j % ranks. Writes
 * their indices into mine (room for n) and returns how many. Pure. */
int dist_share(int n, int rank, int ranks, int *mine);

/* The arena's results: every rank's JSON lines (one game each, as arena_run writes
 * them) merged on rank 0 in the order of their "index" field, so the file is the one a
 * single process would write in order. Returns the merged text (malloc'd) on rank 0,
 * NULL on the others; on rank 0 NULL with a message when a line is not a game record. */
char *dist_merge_games(comm *c, const char *mine, char *err, size_t errlen);

/* Adds up the ranks' tallies of the same match (n players), in place, on every rank. */
void dist_sum_tallies(comm *c, arena_tally *t, int n);

#endif
