/* solo.h — what `gridzero run` does differently for a one-player scored game (2048):
 * there is no opponent to beat, so the arena stage has every model play the same
 * numbered games alone (fixed seeds, the same in every generation), promotion compares
 * mean scores with their intervals, and the ladder (ratings.csv) is a score table
 * instead of Elo. These are the file-level helpers; stage_arena.c and ladder.c call them.
 *
 * The arena files hold one line per game (engine/arena.h) with "players" (one name),
 * "score" (one number) and "tile" (the largest tile reached, 2048 style). */
#ifndef GZ_LOOP_SOLO_H
#define GZ_LOOP_SOLO_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "engine/arena.h"

/* Every one-player game of `text` (JSON lines, as arena files hold them): per player
 * name, in the order first seen, its scores and tiles (log2; -1 without). */
typedef struct solo_table {
    int n;                 /* players */
    int cap;
    struct solo_row {
        char name[PLAYER_NAME_LEN];
        int games, cap;
        double *scores;
        int *tiles;
    } *rows;
} solo_table;

/* Adds the games of text (lines that are not one-player games with a score are
 * skipped). Returns 0, or -1 when out of memory. */
int solo_table_add_text(solo_table *t, const char *text);
/* Adds the games of the file at path (missing file: nothing). Same returns. */
int solo_table_add_file(solo_table *t, const char *path);
/* The row of name, or NULL. */
const struct solo_row *solo_table_find(const solo_table *t, const char *name);
void solo_table_free(solo_table *t);

/* The summary of one row (arena_solo_summarise; no timings). */
void solo_row_summary(const struct solo_row *r, arena_solo_summary *out);

/* The promotion rule: with gate <= 0 always; else when the candidate's mean beats the
 * best's by at least gate x 1.96 standard errors of the difference (gate 1: a
 * difference significant at 95%). Writes the difference and its 95% half-width. */
bool solo_promote(const arena_solo_summary *cand, const arena_solo_summary *best, double gate,
                  double *diff, double *half);

/* The score table as CSV text (malloc'd; free with free()): one line per player,
 * name,mean,lo,hi,games,median,sd,max_tile then reached_T for every tile T from 8 to the
 * largest any player reached (the share of its games that reached T). Adds a "scores"
 * array to event (may be NULL). NULL when out of memory. */
char *solo_table_csv(const solo_table *t, cJSON *event);

#endif
