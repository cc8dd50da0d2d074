/* dataset.h — the trainer's replay window: samples read from sample files
 * (selfplay/samples.h), kept compact in memory (uint8 planes and legal masks, float pi
 * and z), split into training and validation by game, and served as mini-batches drawn
 * uniformly at random with a random symmetry of the game applied consistently to the
 * planes, pi and the legal mask.
 *
 * Every file is validated against the expected shape (the model's spec / the game): a
 * file from another game or board is refused by name (with dataset_allow_sizes, a smaller
 * square board of the same game is read, padded). The window keeps the samples of
 * the `window` most recent generations present (generation attribute of the files).
 * Validation: whole games are held out (positions of one game are correlated), chosen
 * by a hash of (generation, file's game index) so the split is stable as files come.
 * The pi served is the file's pi times the sample's policy weight (samples.h), the
 * weights normalised to a mean of 1 over the split: a weight-0 sample trains the value
 * head only, and the policy's gradient per step is not diluted by such samples.
 * A scored game's z (points to come, samples.h) is served as h(z) (nn_score_to_value),
 * the score head's scale. Games whose actions are not points map pi and the legal mask
 * through their own symmetry hook (2048's four directions).
 * The opponent-reply target (opp, for a net's aux policy head) of a sample is the pi
 * served for the same game's next ply in the same file (its policy weight and the
 * split's normalisation included), under the same symmetry: the reply of the player
 * who moves next. A sample with no next ply held (the game's last position, a
 * fast-search position not written, or a file with two samples at one ply) gets all 0.
 * The ownership target (own, for a net's ownership head) of a sample is its file's final
 * owner map (samples.h: rows*cols int8, mover-relative, -1 unknown) under the same
 * symmetry; all -1 for files before version 4 and in games without point cells.
 * The action-value targets (qa, for a net's action_value policy head) of a sample are
 * its file's per-move points (samples.h: qa) mapped by the same symmetry as pi (2048's
 * four directions through sym_action) and served as h(points) (nn_score_to_value), NaN
 * for a move without a target; all NaN for files before version 5 and in games without
 * a score.
 * Single-threaded; no allocation in the batch functions.
 */
#ifndef GZ_TRAIN_DATASET_H
#define GZ_TRAIN_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/rng.h"
#include "selfplay/samples.h"

typedef struct dataset dataset;

/* An empty dataset for samples of game g (borrowed; outlives the dataset: its shape is
 * the expectation, its symmetry group the augmentation), holding out
 * validation_fraction of the games. Returns NULL with a message when out of memory. */
dataset *dataset_new(const game *g, double validation_fraction, char *err, size_t errlen);
void dataset_free(dataset *d); /* accepts NULL */

/* The value target of the samples added from now on: (1 - ratio) x the game's outcome z
 * + ratio x the search's root value q (samples.h; q = z in files before version 3).
 * ratio in [0, 1]; 0 (the default) is the outcome alone. */
void dataset_set_q_ratio(dataset *d, double ratio);

/* Mixed board sizes (selfplay.sizes): from now on files of the same game on a smaller
 * SQUARE board are read too, when g's actions are the points of a square board of the
 * square lattice (m,n,k with rows = cols; returns whether that is so: otherwise nothing
 * changes). gc is the game section g was made from: such a file's game_config must be
 * gc's with rows and cols its side (another game, or a larger board, is still refused
 * naming the file). Its samples are held padded at the top left into g's rows x cols
 * (planes 0, pi 0, no legal move, owner unknown off the board: as much memory as a full
 * board's sample), augmented with their own board's symmetries, and served with their
 * board (dataset_sample's rows and cols), for a net that masks the padding
 * (train_net_set_boards: a conv policy head). */
bool dataset_allow_sizes(dataset *d, const cfg_game *gc);

/* Reads one sample file, or every *.h5 file of a directory (sorted by name; *.tmp and
 * other names skipped). Returns 0, or -1 with a message naming the file. */
int dataset_add_path(dataset *d, const char *path, char *err, size_t errlen);

/* Keeps only the samples of the `window` most recent generations. */
void dataset_apply_window(dataset *d, int window);

/* Samples held for training and for validation; files read. */
int64_t dataset_train_count(const dataset *d);
int64_t dataset_val_count(const dataset *d);
int dataset_files(const dataset *d);
/* Games read: per file, its highest game index + 1 (self-play numbers a file's games
 * from 0). */
int64_t dataset_games(const dataset *d);
/* Samples held (both splits) of boards smaller than g's (dataset_allow_sizes). */
int64_t dataset_smaller_count(const dataset *d);
/* The newest generation among the held samples (-1 when empty). */
int64_t dataset_newest_generation(const dataset *d);

/* Fills a training mini-batch of n samples drawn uniformly (with replacement) from the
 * training split using r, each under a random element of its board's symmetry group when
 * augment != 0: x (n, planes, rows, cols) floats in [0,1], pi (n, A), legal (n, A),
 * z (n, players), when opp is not NULL the opponent-reply targets opp (n, A), when
 * own is not NULL the ownership targets own (n, rows*cols), when qa is not NULL the
 * action-value targets qa (n, A) (h scale, NaN = none), and when rows and cols are not
 * NULL each sample's board, rows (n) and cols (n) (g's, or a smaller board's side: its
 * sample padded at the top left, dataset_allow_sizes).
 * Requires dataset_train_count > 0. */
void dataset_sample(const dataset *d, rng *r, int n, int augment, float *x, float *pi,
                    uint8_t *legal, float *z, float *opp, int8_t *own, float *qa, uint8_t *rows,
                    uint8_t *cols);

/* The same draws as dataset_sample(d, r, n, ...) (r advances by all n), but only
 * samples [lo, hi) of the batch are written, to x, pi, legal, z from their start:
 * data-parallel ranks draw the same batch and each fills its own shard. */
void dataset_sample_part(const dataset *d, rng *r, int n, int lo, int hi, int augment, float *x,
                         float *pi, uint8_t *legal, float *z, float *opp, int8_t *own,
                         float *qa, uint8_t *rows, uint8_t *cols);

/* Validation samples start .. start+n-1 (no augmentation), same outputs. */
void dataset_val_batch(const dataset *d, int64_t start, int n, float *x, float *pi, uint8_t *legal,
                       float *z, float *opp, int8_t *own, float *qa, uint8_t *rows, uint8_t *cols);

/* The distinct positions of a split (val 0: training, 1: validation) on the full board
 * (a smaller board's padded planes are no position inference runs at this size), in
 * file order:
 * the first sample of each distinct (planes, legal mask); every game starts from the
 * same few positions, and a measure taken on 300 copies of the empty board measures one
 * position. Sets *idx (malloc'd, free it) to their indices in the split and returns
 * their number, or -1 when out of memory (*idx NULL). */
int64_t dataset_distinct(const dataset *d, int val, int64_t **idx);

/* Writes n positions spread evenly over the m indices idx of a split (from
 * dataset_distinct) to x (n, planes, rows, cols) and legal (n, A), no symmetry. Returns 0,
 * or -1 when out of memory. */
int dataset_take(const dataset *d, int val, const int64_t *idx, int64_t m, int n, float *x,
                 uint8_t *legal);

/* Training sample i under symmetry s (tests), and the side of its board (0: the full
 * board; else a smaller square board padded at the top left). */
void dataset_get(const dataset *d, int64_t i, sym_id s, float *x, float *pi, uint8_t *legal,
                 float *z, float *opp, int8_t *own, float *qa);
int dataset_side(const dataset *d, int64_t i);

#endif
