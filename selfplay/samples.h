/* samples.h — self-play sample files (DESIGN.md §5): the ONE writer (self-play) and the
 * ONE reader (the trainer, `gridzero info`) of the format.
 *
 * One HDF5 file per self-play batch. The writer creates PATH.tmp, appends samples in
 * chunks, and on sp_writer_close writes the root attribute "complete" = 1, closes and
 * renames PATH.tmp to PATH: a crash leaves only a .tmp file, which readers refuse
 * (its name, and no "complete" attribute), never a half file that looks whole.
 *
 * Root attributes: format "gridzero-samples" (string), version (int), game (string),
 * game_config (JSON text of the game section), generation (int64), model (string: the
 * model that played, or "rollout"/"random"), players, planes, rows, cols, actions
 * (int), lattice ("square" | "hex"), complete (int, 1), and (optional, any version:
 * files of sp_run) games (int64: games played into the file, with or without samples).
 * Datasets (chunked, Fletcher-32 checksums so a damaged chunk is an error rather than
 * silent garbage, deflate level 4, dimension 0 unlimited):
 *   state uint8   [N, planes, rows, cols]  encoded planes x 255, rounded (binary exact)
 *   pi    float32 [N, actions]             the search's visit distribution
 *   legal uint8   [N, actions]             1 = legal
 *   z     float32 [N, players]             outcomes, MOVER-FIRST (to move, next, ...);
 *                                          in a scored game (game_ops.score: 2048) the
 *                                          points still to come from the position (the
 *                                          value target; the trainer serves h(z), see
 *                                          nn_score_to_value), finite, |z| <= SP_MAX_POINTS
 *   game  int32   [N]                      game index within the file's batch
 *   ply   int32   [N]                      moves played before the sample
 *   policy_weight float32 [N]              (version 2) weight of the sample's policy
 *                                          target in [0, 100]: 0 = value target only
 *                                          (fast searches, proven-lost roots)
 *   resign_checks float32 [K, 2]           (version 2, optional) resignation records of
 *                                          the no-resign games: value, lost (0/1)
 *   q     float32 [N, players]             (version 3) the search's root value per
 *                                          player in [-1, 1], mover-first like z
 *   owner int8    [N, rows*cols]           (version 4, games with point cells only) the
 *                                          final owner of each point, MOVER-RELATIVE
 *                                          like z: -1 unknown (no target for the sample:
 *                                          a resigned game), 0 nobody (empty or a
 *                                          neutral stone at the game's end), k in
 *                                          1..players a stone of the player k-1 seats
 *                                          after the sample's mover (1 = the mover's
 *                                          own). A sample's map is all -1 or has no -1.
 *   qa    float32 [N, actions]             (version 5, games with a score only: 2048)
 *                                          per move, the points it gains plus the points
 *                                          to come after it, from the mover's view (the
 *                                          action-value head's target, served as h(qa)):
 *                                          in the rollout bootstrap's tree export the
 *                                          best points reached through the move (seed
 *                                          003, mcts_node_sample.best_after); at a played
 *                                          position the search's Q of the move (reward +
 *                                          the child's mean points to come). NaN = no
 *                                          target (a move the search never tried; always
 *                                          on illegal moves); finite, |qa| <= SP_MAX_POINTS.
 * A version 4 file has the owner dataset exactly when its game has point cells
 * (sp_game_has_owner: game_ops.cells and one action per point: m,n,k and sanling, not
 * 2048); the dataset's presence is the record, there is no flag attribute.
 * Version 1 files (no policy_weight) are read with every weight 1; files before version
 * 3 (no q) with q = z; files before version 4 with no owner targets (owner NULL); files
 * before version 5 with no action-value targets (qa NULL: every move NaN). A version 5
 * file has the qa dataset exactly when its game keeps a score (sp_game_has_qa).
 * HDF5 (Debian's serial build) is not thread-safe: one thread at a time. Errors never
 * print: they become messages naming the file and what is wrong.
 */
#ifndef GZ_SELFPLAY_SAMPLES_H
#define GZ_SELFPLAY_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/game.h"

#define SP_FORMAT "gridzero-samples"
#define SP_VERSION 5
#define SP_MAX_WEIGHT 100.0
#define SP_MAX_POINTS 1e9f /* a scored game's z: points to come, in magnitude */
#define SP_MODEL_LEN 256

/* What a file says about itself (and what a writer is told). */
typedef struct sp_meta {
    int64_t generation;
    char model[SP_MODEL_LEN];
} sp_meta;

/* The shape a reader expects; fields < 0 (or empty game name) are not checked. */
typedef struct sp_expect {
    char game[GAME_NAME_LEN];
    int players, planes, rows, cols, actions;
    int lattice; /* game_lattice, or -1 */
    char rule[GAME_NAME_LEN]; /* the game's rule (g->rule); "" = not checked. A file whose
                                 game_config names another rule is refused; one naming
                                 none (older files) only under renju and caro */
} sp_expect;

/* The expectation "exactly game g's shape". */
sp_expect sp_expect_game(const game *g);

/* Whether sample files of g carry owner targets: g reports what stands on each point
 * (game_ops.cells) and its actions are exactly its points. */
bool sp_game_has_owner(const game *g);

/* Whether sample files of g carry action-value targets (qa): g keeps a score
 * (game_ops.score: 2048). */
bool sp_game_has_qa(const game *g);

/* The game section of a config as JSON text (for the game_config attribute). Returns a
 * malloc'd string (free with free()) or NULL when out of memory. */
char *sp_game_config_json(const gz_config *c);

typedef struct sp_writer sp_writer;

/* Creates path.tmp for samples of game g. game_config (JSON text, may be NULL: "{}")
 * and meta (may be NULL: generation 0, model "") are copied. Returns the writer or NULL
 * with a message naming the file. */
sp_writer *sp_writer_open(const char *path, const game *g, const char *game_config,
                          const sp_meta *meta, char *err, size_t errlen);
/* Appends one sample: planes (planes*rows*cols floats in [0, 1], as encode() writes),
 * pi (actions), legal (actions), z (players, mover-first), game index and ply. Buffered;
 * written in chunks. Returns 0 or -1 with a message (the writer must then be aborted). */
int sp_writer_append(sp_writer *w, const float *planes, const float *pi, const uint8_t *legal,
                     const float *z, int32_t gameix, int32_t ply, char *err, size_t errlen);
/* The same with the search's root value q (players, mover-first, each in [-1, 1]; NULL:
 * q = z) and the sample's policy weight (sp_writer_append writes q = z and weight 1).
 * Both write an unknown owner map (all -1) in a game with owner targets. */
int sp_writer_append_weighted(sp_writer *w, const float *planes, const float *pi,
                              const uint8_t *legal, const float *z, const float *q,
                              float policy_weight, int32_t gameix, int32_t ply, char *err,
                              size_t errlen);
/* The same with the sample's final-owner map: owner (rows*cols values, mover-relative,
 * see the owner dataset above: each in [-1, players], all -1 or none), or NULL =
 * unknown (all -1). In a game without owner targets (!sp_game_has_owner) owner must be
 * NULL. Returns 0 or -1 with a message naming the sample and the point. In a game with
 * action-value targets it writes none (every move NaN). */
int sp_writer_append_owned(sp_writer *w, const float *planes, const float *pi,
                           const uint8_t *legal, const float *z, const float *q,
                           float policy_weight, const int8_t *owner, int32_t gameix,
                           int32_t ply, char *err, size_t errlen);
/* The same with the sample's action-value targets: qa (actions values in points, see the
 * qa dataset above: NaN = none, NaN on illegal moves), or NULL = none. In a game without
 * them (!sp_game_has_qa) qa must be NULL. Returns 0 or -1 with a message naming the sample
 * and the move. */
int sp_writer_append_full(sp_writer *w, const float *planes, const float *pi,
                          const uint8_t *legal, const float *z, const float *q,
                          float policy_weight, const int8_t *owner, const float *qa,
                          int32_t gameix, int32_t ply, char *err, size_t errlen);
/* One no-resign game's measurement for one player (selfplay.h: resignation calibration):
 * the threshold below which it would have resigned, and whether it then lost. */
typedef struct sp_resign_check {
    float value; /* in [-1, 1], or 2 when it never had two moves */
    int lost;    /* 1 lost, 0 drew or won */
} sp_resign_check;

/* Stores the resignation records in the file being written (dataset resign_checks,
 * float32 [n, 2]: value, lost), at most once per file. Returns 0 or -1 with a message. */
int sp_writer_put_resign_checks(sp_writer *w, const sp_resign_check *c, int n, char *err,
                                size_t errlen);
/* Reads a complete sample file's resignation records (none: *n = 0 and *out NULL, as in
 * version 1 files); records the file declares but does not store are refused before
 * any buffer is allocated. *out is malloc'd (free with free()). Returns 0 or -1 with a
 * message. */
int sp_read_resign_checks(const char *path, sp_resign_check **out, int *n, char *err,
                          size_t errlen);

/* Samples appended so far. */
int64_t sp_writer_count(const sp_writer *w);
/* The number of games the file holds (games without a sample count too), written on
 * close as the root attribute "games". Not called: no attribute. */
void sp_writer_set_games(sp_writer *w, int64_t games);
/* Reads a complete file's "games" attribute (the part files of the loop's self-play,
 * selfplay.h, always have one) and, when next_game is not NULL, one past the largest
 * game number of its samples (0 when it has none). Returns 0, or -1 with a message
 * naming the file (not HDF5, not complete, no or a negative attribute, a bad game
 * dataset). */
int sp_read_games(const char *path, int64_t *games, int32_t *next_game, char *err, size_t errlen);
/* Flushes, marks complete, closes and renames path.tmp to path; frees w (always).
 * Returns 0, or -1 with a message (path.tmp is then removed). */
int sp_writer_close(sp_writer *w, char *err, size_t errlen);
/* sp_writer_close, but the file appears as `path` instead of the path it was opened
 * with (its .tmp is still the opened path's: the next writer may reuse that). */
int sp_writer_close_as(sp_writer *w, const char *path, char *err, size_t errlen);
/* Closes and removes path.tmp; frees w. Accepts NULL. */
void sp_writer_abort(sp_writer *w);

/* A sample file read whole into memory. */
typedef struct sp_file {
    char *path;        /* owned copy */
    int version;       /* the file's format version */
    char game[GAME_NAME_LEN];
    char *game_config; /* owned JSON text */
    sp_meta meta;
    int players, planes, rows, cols, actions;
    game_lattice lattice;
    int64_t n;         /* samples */
    uint8_t *state;    /* (n, planes, rows, cols) x 255 */
    float *pi;         /* (n, actions) */
    uint8_t *legal;    /* (n, actions) */
    float *z;          /* (n, players) */
    int32_t *gameix, *ply; /* (n) */
    float *weight;     /* (n) policy weights (1 for version 1 files) */
    float *q;          /* (n, players) search values (= z before version 3) */
    int8_t *owner;     /* (n, rows*cols) final owners, mover-relative (-1 unknown, 0 nobody,
                        * k: the player k-1 seats after the mover); NULL when the file has
                        * none (versions 1-3, games without point cells) */
    float *qa;         /* (n, actions) action-value targets in points, NaN = none; NULL when
                        * the file has none (versions 1-4, games without a score) */
} sp_file;

/* Reads and validates a file: the format and version, the "complete" mark, every
 * attribute against expect (may be NULL), every dataset's presence, rank, shape and
 * type; before allocating anything in proportion to the declared sample count, that
 * the datasets agree on it and really store it (every chunk allocated, only the
 * writer's filters, no more data than deflate could pack into the file's size); then
 * every sample's values in one pass: legal 0/1 with at least one legal move, pi finite,
 * >= 0, nothing on illegal moves and summing to 1 (+-1e-3) over the legal ones, z
 * finite in [-1, 1] and summing to 0 (+-1e-3) with two or more players, q finite in
 * [-1, 1] (a scored game's z and q: finite points, |z|, |q| <= SP_MAX_POINTS), game and
 * ply >= 0, owner (version 4: required exactly when the game, if known, has point cells)
 * in [-1, players] with a sample all -1 or none, qa (version 5: required exactly when the
 * game, if known, keeps a score) NaN or finite points, NaN on illegal moves. Never crashes on corrupt, truncated or forged files. Returns the file (free
 * with sp_file_free) or NULL with "PATH: what is wrong" (naming the dataset and sample
 * for a bad value). */
sp_file *sp_file_read(const char *path, const sp_expect *expect, char *err, size_t errlen);
void sp_file_free(sp_file *f); /* accepts NULL */

#endif
