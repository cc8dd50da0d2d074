/* checkpoint.h — network checkpoints as HDF5 files (DESIGN.md §4).
 *
 * Layout of a file:
 *   /meta            group; attributes: format "gridzero-model" (string), version (int),
 *                    spec (the nn_spec as JSON text), generation (int64), step (int64),
 *                    parent (string, "" for none), checksum (int64: FNV-1a of the
 *                    parameters' float32 bytes in layout order; verified when present:
 *                    a tool that edits the weights must update or delete it)
 *   /<tensor path>   one float32 dataset per tensor of the layout (params.h), named by
 *                    its name with '.' -> '/': /stem/conv/weight (C, P, 3, 3) OIHW,
 *                    /block03/bn1/gamma (C), /value/fc1/weight (V, H), ...
 *   /optim/<name>    optional: extra flat float32 arrays the trainer stores (momentum
 *                    buffers laid out like the parameters, counters...), 1-D
 *   /quant           optional: the int8 calibration (params.h nn_calib; written by
 *                    `gridzero quantize`): dataset act_range float32 (2 + 2 * blocks),
 *                    dataset gates float32 (3): top-1 agreement (near-ties count),
 *                    strict top-1 agreement, mean |dvalue| (nn/quant.h);
 *                    attributes params_checksum, positions, heldout (int64). Saved only
 *                    while the weights are those it was measured on.
 * Saving writes PATH.tmp.<pid> and renames it over PATH, so PATH is always either the
 * old file or the complete new one. Loading validates format, version, spec (and the
 * spec against a game), every dataset's presence and shape, finite parameters of at
 * most NN_CKPT_MAX_ABS in magnitude and the hex mask, and reports the first problem by
 * name (saving refuses such parameters too). HDF5 errors never print or abort: they
 * become messages. HDF5 (Debian's serial build) is not thread-safe: call these from
 * one thread at a time.
 */
#ifndef GZ_NN_CHECKPOINT_H
#define GZ_NN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/game.h"
#include "params.h"

#define NN_CKPT_FORMAT "gridzero-model"
#define NN_CKPT_VERSION 1
#define NN_CKPT_PARENT_LEN 256
/* The largest magnitude a parameter (weight, bias, BN statistic) may have in a saved or
 * loaded model. Trained nets stay far below it (weight decay keeps weights near 1, BN
 * variances of these inputs are small); a value above it is damage or a diverged run,
 * and would overflow float in a forward pass. */
#define NN_CKPT_MAX_ABS 1e6f

typedef struct nn_ckpt_meta {
    int64_t generation;
    int64_t step; /* training steps behind these weights */
    char parent[NN_CKPT_PARENT_LEN]; /* the model these weights were trained from, or "" */
} nn_ckpt_meta;

/* One extra array for /optim/<name>: save reads data[count]; read fills it. */
typedef struct nn_ckpt_extra {
    const char *name; /* a plain name: letters, digits, '_' */
    float *data;
    size_t count;
} nn_ckpt_extra;

/* Writes p (its mask is checked first: a hex net with non-zero masked taps is refused by
 * tensor name), meta (NULL: zeros) and nextra arrays under /optim/. Returns 0 or -1 with
 * a message naming the file. Borrows everything. */
int nn_ckpt_save(const char *path, const nn_params *p, const nn_ckpt_meta *meta,
                 const nn_ckpt_extra *extra, int nextra, char *err, size_t errlen);

/* Loads and validates a model. g (may be NULL: no game check) is the game it must play;
 * meta (may be NULL) receives the meta attributes; p->calib receives /quant when the
 * file has it (check nn_params_calibrated before trusting it). Returns new parameters (free with
 * nn_params_free) or NULL with a message "FILE: <what>" naming the dataset or
 * attribute at fault. */
nn_params *nn_ckpt_load(const char *path, const game *g, nn_ckpt_meta *meta, char *err,
                        size_t errlen);

/* Writes dst: the checkpoint src byte for byte (weights, meta, /optim kept) with /quant
 * set to the calibration c, which must belong to src's weights (nn_params_calibrated).
 * dst may be src. Written to a temporary name and renamed, like nn_ckpt_save. Returns 0
 * or -1 with a message naming the file. */
int nn_ckpt_save_calibrated(const char *src, const char *dst, const nn_calib *c, char *err,
                            size_t errlen);

/* Reads /optim/<e->name> into e->data, which must hold exactly e->count floats.
 * Returns 0, 1 when the file has no such array (e->data untouched), -1 with a message
 * on any other problem (shape, non-finite values, I/O). */
int nn_ckpt_read_extra(const char *path, const nn_ckpt_extra *e, char *err, size_t errlen);

/* The format attribute of any gridzero HDF5 file (/meta's "format", else the root's
 * "format"), for dispatching. Returns 0, or -1 with a message (not HDF5, no format). */
int nn_h5_format(const char *path, char *fmt, size_t len, char *err, size_t errlen);

#endif
