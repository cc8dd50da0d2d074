/* rundir.h — reading a run directory (the layout `gridzero run` writes,
 * docs/formats.md): its paths, text and JSON files, state.json and best, and the
 * promotion decisions its arena files imply. Shared by the loop (loop.h), which replays
 * promotions on resume, `gridzero serve`, which shows a run live, and `gridzero selfplay
 * --follow`, which plays for a run from outside it.
 *
 * Everything here reads only finished files: the run writes each stage's file under a
 * temporary name and renames it when complete, and these functions never open a .tmp.
 * No locks are taken (readers never block the run). Thread-safe (no shared state).
 * This module must not know about networks or the HTTP server.
 */
#ifndef GZ_LOOP_RUNDIR_H
#define GZ_LOOP_RUNDIR_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#define RUNDIR_PATH_LEN 1024

/* dir + "/" + fmt with its one integer conversion given gen (fmt: "arena/gen_%04d.jsonl"),
 * into out[len]. */
void rundir_path(char *out, size_t len, const char *dir, const char *fmt, int gen);

/* Whether path exists (a file or a directory). */
bool rundir_exists(const char *path);

/* A whole text file, NUL-terminated (malloc'd: free with free()); NULL when it cannot
 * be read. *len (may be NULL) gets its length in bytes. */
char *rundir_read_text(const char *path, size_t *len);

/* A small JSON file: 1 with *o parsed (free with cJSON_Delete; NULL when it is not JSON),
 * 0 when there is none, -1 when it cannot be read (with a message naming it in err, when
 * err is not NULL). */
int rundir_load_json(const char *path, cJSON **o, char *err, size_t errlen);

/* DIR/name parsed as JSON (free with cJSON_Delete); NULL when missing or not JSON. */
cJSON *rundir_read_json(const char *dir, const char *name);

/* state.json's generation (*gen) and the stage it last finished (stage[len]: "selfplay",
 * "train" or "done"). Returns 1 when read, 0 when there is no state.json (no stage has
 * finished yet), -1 when it is not such a file. */
int rundir_read_state(const char *dir, int *gen, char *stage, size_t len);

/* The best model from DIR/best: its path relative to dir ("models/gen_NNNN.h5", or
 * "models/swa_NNNN.h5" with train.swa, into rel[len]) and *gen (may be NULL). Returns 1
 * when read, 0 when there is no best file (generation 0 is the best until the first
 * promote stage writes one), -1 when it holds anything else. */
int rundir_read_best(const char *dir, char *rel, size_t len, int *gen);

/* The candidate's score against the best model in DIR/arena/gen_<gen>.jsonl, from the
 * games whose players are all gen_<gen> or gen_<best_gen> (both present). Head to head:
 * every pair of a candidate seat and a best-model seat counts 1 when the candidate's
 * outcome is above, 1/2 when level, 0 when below (two players: wins + draws / 2 per
 * game; three players: the games with the candidate alone and those with it twice count
 * alike, so neither side gains from having two copies at the table). A 3-player file
 * in which the candidate never sat twice (written before the seats were balanced, or
 * with arena.games = 1) is scored as such files always were: per game, the lone
 * candidate's first place 1, last 0, else 1/2, so a resumed older run replays its own
 * promotions. Returns the games counted (0 when the file is missing: the arena stage is
 * not finished) and *score in [0, 1]. */
int rundir_best_score(const char *dir, int gen, int best_gen, double *score);

/* The promote stage's decision for generation gen (>= 1) given the best model before
 * it: promoted when gate <= 0 (always, AlphaZero's way) or when its score against the
 * best reaches gate. *score and *games (may be NULL) get what rundir_best_score read. */
bool rundir_promotes(const char *dir, double gate, int gen, int best_gen, double *score,
                     int *games);

#endif
