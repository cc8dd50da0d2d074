/* rundata.h — a run directory's self-play sample files: their names, the plan that
 * splits a generation's games between ranks, and the list the trainer reads.
 *
 * Generation i's self-play data (NNNN = i, at least four digits) are either
 *   data/gen_NNNN.h5                 the whole generation in one file (a run of one
 *                                    process: the layout of every run before MPI),
 *                                    after its parts, if any:
 *   data/gen_NNNN.pKKK.h5            part K (0, 1, ...) of a one-process generation: the
 *                                    games finished in each selfplay.part_minutes, closed
 *                                    complete so that a stopped or killed run keeps them
 *                                    and plays only the rest (its own seeds, game numbers
 *                                    after theirs); the parts then gen_NNNN.h5 hold in
 *                                    order what one file would; or
 *   data/gen_NNNN.plan.json          {"shards": K, "games": G}: written by the first run
 *   data/gen_NNNN.rS.h5              of K > 1 ranks that started the generation, and
 *                                    shard S (0 <= S < K) of its G games: games
 *                                    G*(S+1)/K - G*S/K. A shard's games and seeds depend
 *                                    on the run seed, i and S only, so after a restart
 *                                    with any number of ranks a missing shard is played
 *                                    by whichever rank gets it and makes the same file;
 * plus at any time
 *   data/gen_NNNN.fTAG.h5            files of `gridzero selfplay --follow` workers (TAG:
 *                                    letters, digits and '-': host, pid, count).
 * Mixed board sizes (selfplay.sizes): a generation plays some of its games on smaller
 * square boards, each board's in files of their own, named as the full board's with the
 * board's side SS (two digits) after the generation:
 *   data/gen_NNNN.sSS.h5, data/gen_NNNN.sSS.pKKK.h5, data/gen_NNNN.sSS.plan.json and
 *   data/gen_NNNN.sSS.rS.h5
 * (the functions *_sized below take the side; 0 is the full board, the names above), and
 *   data/gen_NNNN.sizes.json         {"sizes": [9, 11], "games": [20, 20]}: how many of
 *                                    the generation's games each smaller board gets (the
 *                                    full board the rest), decided when its self-play
 *                                    starts, so that a resumed session plays the same.
 * The smaller boards are played first, in increasing order, the full board last.
 * With selfplay.simulations_end, likewise
 *   data/gen_NNNN.simulations.json   {"simulations": 120}: the generation's self-play
 *                                    budget, set when its self-play starts.
 * The self-play stage of generation i is done when gen_NNNN.h5 exists or every shard of
 * its plan does (a board's: the same with its names); followers' files never hold it
 * up. Every file appears atomically (written as NAME.tmp, then renamed), so a listed
 * file is complete.
 */
#ifndef GZ_LOOP_RUNDATA_H
#define GZ_LOOP_RUNDATA_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/config.h"

#define RD_PATH 1024

/* Paths under the run directory dir (out: RD_PATH chars). */
void rd_single_path(char *out, const char *dir, int gen);
void rd_shard_path(char *out, const char *dir, int gen, int shard);
void rd_plan_path(char *out, const char *dir, int gen);
void rd_part_path(char *out, const char *dir, int gen, int part);
/* One past the largest part number of generation gen's part files (0: none); a part
 * missing below it (removed by hand) is skipped by the readers, never reused. */
int rd_parts(const char *dir, int gen);
/* The same for board `side` of the generation (0: the full board, as above). */
void rd_single_path_sized(char *out, const char *dir, int gen, int side);
void rd_shard_path_sized(char *out, const char *dir, int gen, int side, int shard);
void rd_plan_path_sized(char *out, const char *dir, int gen, int side);
void rd_part_path_sized(char *out, const char *dir, int gen, int side, int part);
int rd_parts_sized(const char *dir, int gen, int side);
/* tag: anything; characters other than letters, digits and '-' become '-'. */
void rd_follower_path(char *out, const char *dir, int gen, const char *tag);

typedef struct rd_plan {
    int shards; /* K >= 1 */
    int games;  /* G >= 0 in all */
} rd_plan;

/* The games of shard s (G*(s+1)/K - G*s/K). */
int rd_plan_games(const rd_plan *p, int shard);
/* Reads generation gen's plan. Returns 1 when read, 0 when there is none, -1 with a
 * message naming the file when it is unreadable or not a plan. */
int rd_plan_read(const char *dir, int gen, rd_plan *p, char *err, size_t errlen);
/* Writes text to path atomically: path.tmp, fsync, rename (a reader sees the old file
 * or the whole new one). Returns 0, or -1 with a message naming the file (path.tmp is
 * then removed). */
int rd_write_atomic(const char *path, const char *text, char *err, size_t errlen);
/* Writes the plan atomically. Returns 0 or -1 with a message. */
int rd_plan_write(const char *dir, int gen, const rd_plan *p, char *err, size_t errlen);
/* The same for board `side` (0: the full board). */
int rd_plan_read_sized(const char *dir, int gen, int side, rd_plan *p, char *err, size_t errlen);
int rd_plan_write_sized(const char *dir, int gen, int side, const rd_plan *p, char *err,
                        size_t errlen);

/* Whether generation gen's self-play stage is done (see top). */
bool rd_selfplay_done(const char *dir, int gen);
/* Whether the self-play of generation gen's board `side` is done (0: the stage). */
bool rd_board_done(const char *dir, int gen, int side);

/* A generation's split of its games between the smaller boards (see top). */
typedef struct rd_sizes {
    int n;                   /* smaller boards (0: none) */
    int side[CFG_LIST_MAX];  /* their sides, increasing */
    int games[CFG_LIST_MAX]; /* each one's games */
} rd_sizes;
/* The split of `games` games when the share `used` (clamped to [0, 1]) of the run's
 * budget is spent: f = sizes_fraction + (sizes_fraction_end - sizes_fraction) x used of
 * them (rounded; at most games - 1, as the full board plays at least one) shared
 * equally by sp's smaller boards (the later ones get one more where it does not divide);
 * none without selfplay.sizes or with fewer than 2 games. */
void rd_sizes_split(const cfg_selfplay *sp, int games, double used, rd_sizes *out);
/* selfplay.simulations_end: a generation's self-play simulations when the share `used`
 * (clamped to [0, 1]) of the run's budget is spent, sims + (simulations_end - sims) x
 * used, rounded, at least 1; sims itself when simulations_end is 0. */
int rd_sp_simulations(const cfg_selfplay *sp, int sims, double used);
/* selfplay.simulations_end: generation gen's self-play simulations, kept in
 * data/gen_NNNN.simulations.json ({"simulations": N}) when its self-play starts, so that a
 * resumed session and the followers play the generation's budget. Returns 1 when read, 0
 * when there is none, -1 with a message naming the file (unreadable or changed). */
int rd_sims_read(const char *dir, int gen, int *sims, char *err, size_t errlen);
/* *sims = the simulations of the newest generation <= gen with such a file (a follower's
 * budget for a generation whose self-play has not started), else fallback. Returns 0, or
 * -1 with a message when that newest file is unreadable or changed. */
int rd_sims_latest(const char *dir, int gen, int fallback, int *sims, char *err, size_t errlen);
/* Writes it atomically. Returns 0 or -1 with a message. */
int rd_sims_write(const char *dir, int gen, int sims, char *err, size_t errlen);
/* The games of a split's smaller boards together. */
int rd_sizes_small_games(const rd_sizes *s);
/* Reads generation gen's split. Returns 1 when read, 0 when there is none, -1 with a
 * message naming the file when it is unreadable or not a split. */
int rd_sizes_read(const char *dir, int gen, rd_sizes *s, char *err, size_t errlen);
/* Writes it atomically. Returns 0 or -1 with a message. */
int rd_sizes_write(const char *dir, int gen, const rd_sizes *s, char *err, size_t errlen);

/* The complete sample files of a generation. */
typedef struct rd_files {
    int n;
    char **path;    /* (n) malloc'd paths */
    bool *follower; /* (n) whether from a --follow worker */
} rd_files;

/* Generation gen's files: its parts and gen_NNNN.h5, the shards of its plan in shard
 * order (missing ones left out), then each smaller board's the same way (increasing
 * sides), then the followers' files sorted by name: an order that depends only on which
 * files exist. Returns 0 (out filled; free with rd_files_free), or -1 with a
 * message (an unreadable data directory or plan, out of memory). */
int rd_list(const char *dir, int gen, rd_files *out, char *err, size_t errlen);
void rd_files_free(rd_files *f); /* accepts an emptied or zeroed one */

/* The resignation threshold for generation gen's self-play (selfplay.h: calibration):
 * from the records of the no-resign games in every sample file of the `window`
 * generations before gen (read from the files, so a resumed run and a --follow worker
 * compute the same); -1 until min_records were measured. A damaged file contributes
 * nothing. */
double rd_resign_threshold(const char *dir, int gen, int window, double target, int min_records);

#endif
