/* quant.h — int8 calibration of a network and its accuracy gates against fp32.
 *
 * A calibration (params.h nn_calib) is the range of each activation tensor the int8
 * forward stores as u8, measured by the fp32 oneDNN forward on sample positions. The
 * gates compare the int8 forward with the fp32 one on other (held-out) positions:
 * policy top-1 agreement (the most probable legal move is the same) and the mean
 * absolute difference of the value outputs. `gridzero quantize` runs both and writes
 * the calibration into the model (checkpoint.h, /quant).
 * This module must not know about sample files or the command line.
 */
#ifndef GZ_NN_QUANT_H
#define GZ_NN_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* The gates an int8 model must pass (issue 15), measured on held-out positions. Top-1
 * agreement counts a position as agreeing when the move int8 ranks first has an fp32
 * prior of at least (1 - NN_INT8_TIE) x fp32's best: moves that close are a tie the search
 * decides, and fp32 itself ranks them differently under a symmetry of the board (the
 * evaluator's random symmetry does exactly that in self-play); the strict share is
 * reported beside it, with fp32's own strict agreement under a symmetry as its scale. */
#define NN_INT8_MIN_TOP1 0.98
#define NN_INT8_MAX_MEAN_DVALUE 0.02
#define NN_INT8_TIE 0.05

/* Calibrates p for int8 on n >= 1 positions input[n][planes][rows][cols] (encoded as the
 * game's encode() writes them, mover's view): an fp32 oneDNN forward with `threads`
 * threads (0: default) in chunks of up to 256; each activation tensor's range is the
 * largest value it takes on them (no clipping: a clip of least squared error halved
 * the typical error on a trained net but made its worst positions' priors 4x worse).
 * Replaces p->calib with a new one (positions = n, tied to p's current weights, gates
 * not measured: heldout 0). Returns 0, or -1 with a message (p->calib unchanged). */
int nn_calibrate(nn_params *p, int rows, int cols, int n, const float *input, int threads,
                 char *err, size_t errlen);

typedef struct nn_int8_gates {
    int positions;      /* compared */
    double top1;        /* share whose int8 first move is fp32's first move, or has an
                           fp32 prior >= (1 - NN_INT8_TIE) x the best (the gate) */
    double top1_strict; /* share whose int8 first move is exactly fp32's */
    double sym_top1;    /* fp32 against fp32 under a random non-identity symmetry of the
                           game, strict; -1 when no game (or no symmetry) was given */
    double mean_dvalue; /* mean |int8 - fp32| over every value output of every position,
                           divided by value_scale */
    double max_dvalue;  /* the largest of those differences (also divided) */
    double value_scale; /* 1 for outcome heads (values in [-1, 1]); a score head (2048):
                           half the span of its fp32 outputs (h of points) on these
                           positions, at least 1, so the gate is the same share of the
                           range */
    double max_dprior;  /* the largest |int8 - fp32| of a prior */
    int pass;           /* top1 >= NN_INT8_MIN_TOP1 and mean_dvalue <= NN_INT8_MAX_MEAN_DVALUE */
} nn_int8_gates;

/* Runs p (calibrated: nn_int8_check must pass) in int8 and fp32 on n positions (input as
 * above, legal[n][actions] masks, NULL: all legal) and compares them. g (may be NULL)
 * is the positions' game, for the symmetry baseline (a conv-policy net only). Returns 0
 * with *gt filled, or -1 with a message. */
int nn_int8_measure(const nn_params *p, const game *g, int rows, int cols, int n,
                    const float *input, const uint8_t *legal, int threads, nn_int8_gates *gt,
                    char *err, size_t errlen);

/* nn_calibrate on the nc positions xc, then nn_int8_measure on the nh held-out positions
 * xh/lh (gates into *gt and into p->calib: heldout, top1, top1_strict, mean_dvalue).
 * Whether to keep the calibration (gt->pass) is the caller's. Returns 0, or -1 with a
 * message and p->calib NULL. */
int nn_int8_calibrate_gated(nn_params *p, const game *g, int nc, const float *xc, int nh,
                            const float *xh, const uint8_t *lh, int threads, nn_int8_gates *gt,
                            char *err, size_t errlen);
#endif
