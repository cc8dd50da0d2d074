/* ntuple.h — an n-tuple network: the learned value of a 2048 after-state (the board
 * after a move, before the tile spawns) as the points still to come (Szubert and
 * Jaśkowski 2014, "Temporal difference learning of n-tuple networks for the game 2048";
 * Yeh et al. 2016). The classical learned player of 2048, far cheaper than a CNN: a
 * value is 32 table lookups.
 *
 * Tuples: 4 tuples of 6 cells on the 4x4 board (cell r * 4 + c), the layout of Yeh et
 * al. and Jaśkowski:
 *   0 1 2 3 4 5     the first row and two cells of the second
 *   4 5 6 7 8 9     the second row and two cells of the third
 *   0 1 2 4 5 6     a 2x3 rectangle in the corner
 *   4 5 6 8 9 10    the same one row down
 * each applied under the 8 symmetries of the square (weights shared), so V(board) is
 * the sum of 32 weights. A weight is indexed by the tuple's 6 tile exponents, 4 bits
 * each (a tile of 2^15 = 32768 or more counts as 15): 2^24 floats a tuple, 256 MB in
 * all, allocated once.
 *
 * Stages (Yeh et al.'s multi-stage TD, net.ntuple_stages): the game is cut into stages by
 * the largest tile on the board, stage s beginning when a tile of threshold[s] appears,
 * and each stage has tables of its own, so the late game (where one misplaced tile ends
 * it) is not averaged with the early game. A later stage starts as a copy of the one
 * below, lazily: each of its weights carries a bit, clear until the weight's first
 * update; a clear weight reads as the stage below's, and its first update copies that
 * value before adding. So a network that gains a stage plays exactly as before until
 * the new stage learns, and a stage's table costs memory only where it is written.
 *
 * Files (HDF5, written to PATH.tmp.<pid> and renamed, like checkpoints): /meta with
 * format "gridzero-ntuple", version (1 with one stage, 2 with more), rows, cols, tuples,
 * tuple_len, games (int64: the training games behind the weights), generation (int64),
 * and in version 2 stages (int64); /tuples int32 [tuples][len]; /w<k> float32 [2^24],
 * chunked and deflated (most weights of a young table are 0): stage 0's tables. Version
 * 2 adds /stage_tiles int32 [stages] (0, then each stage's threshold tile, increasing)
 * and for each stage s >= 1 /s<s>w<k> float32 [2^24] and /s<s>used<k> uint64 [2^18]
 * (the written bits). Loading checks all of it and names what is wrong. Not thread-safe
 * for the HDF5 calls; value and update may run on several threads at once (updates race
 * benignly, Hogwild: a lost update is noise of one step).
 */
#ifndef GZ_NN_NTUPLE_H
#define GZ_NN_NTUPLE_H

#include <stddef.h>
#include <stdint.h>

#define NT_FORMAT "gridzero-ntuple"
#define NT_VERSION 2     /* the newest version written; 1 (one stage) is still written and read */
#define NT_MAX_STAGES 4
#define NT_TUPLES 4
#define NT_LEN 6
#define NT_SYMS 8
#define NT_CELLS 16
#define NT_FEATURES (NT_TUPLES * NT_SYMS)
#define NT_ENTRIES (1u << (4 * NT_LEN))

typedef struct ntuple {
    int stages;                                   /* 1..NT_MAX_STAGES */
    uint8_t threshold[NT_MAX_STAGES];             /* [s >= 1]: the tile exponent stage s begins at */
    float *w[NT_MAX_STAGES][NT_TUPLES];           /* NT_ENTRIES each */
    uint64_t *used[NT_MAX_STAGES][NT_TUPLES];     /* [s >= 1]: NT_ENTRIES bits, set at first update */
    uint8_t cell[NT_TUPLES][NT_SYMS][NT_LEN];     /* the board cell of each tuple position */
    int64_t games;                                /* training games behind the weights */
    int64_t generation;
} ntuple;

/* A network of zeros with one stage. Returns NULL with a message when memory is short. */
ntuple *ntuple_new(char *err, size_t errlen);
/* Gives n the stages whose threshold tiles (2048's tile values, 8192 = 2^13) are
 * tiles[0..ntiles-1] (increasing powers of two, at most NT_MAX_STAGES - 1 of them).
 * n's own thresholds must be the first of them: the stages above are added, empty
 * (reading through to the stage below). Returns 0, or -1 with a message (the
 * thresholds differ from n's, or memory is short; n is then unchanged). */
int ntuple_set_stages(ntuple *n, int ntiles, const int *tiles, char *err, size_t errlen);
/* The stage of the 4x4 board cells[16]: the thresholds its largest tile has reached. */
int ntuple_stage(const ntuple *n, const uint8_t *cells);
void ntuple_free(ntuple *n); /* accepts NULL */

/* The value of the 4x4 board cells[16] (tile exponents, 0 = empty). */
float ntuple_value(const ntuple *n, const uint8_t *cells);
/* Adds delta to each of the 32 weights of cells' features in cells' stage (so the value
 * moves by 32 x delta, more where features coincide). */
void ntuple_update(ntuple *n, const uint8_t *cells, float delta);

/* Writes n to path (NT_FORMAT). Returns 0 or -1 with a message naming the file. */
int ntuple_save(const ntuple *n, const char *path, char *err, size_t errlen);
/* Reads a file written by ntuple_save. Returns the network or NULL with a message
 * naming the file and what is wrong with it. */
ntuple *ntuple_load(const char *path, char *err, size_t errlen);
/* Whether path is an n-tuple file (its /meta format is NT_FORMAT); false for anything
 * else, missing files included. */
int ntuple_is_file(const char *path);

#endif
