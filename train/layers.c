/* layers.c — the trainer's layers (see layers.h). The bodies are in layers_impl.h,
 * compiled here twice: in float (the trainer) and in double (names with _f64, the
 * tests' finite-difference oracle), so both precisions run the very same code. */
#include "layers.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>

/* Columns (samples * H * W) per im2col chunk of a 3x3 conv. The whole batch in one
 * chunk makes the largest GEMM, but its im2col buffer (IC*9 x N*H*W) leaves the caches;
 * a few thousand columns keeps it in L2/L3 while the GEMM stays wide (measured with
 * `gridzero bench train`). */
#define CONV_CHUNK_COLS 2048

/* Live kernel taps (index ky*3+kx) on each lattice. The flip (ky,kx) -> (2-ky,2-kx),
 * index k -> 8-k, maps each set onto itself, which the input-gradient conv relies on. */
static const int taps_square[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
static const int taps_hex[7] = {1, 2, 3, 4, 5, 6, 7};

/* The memory-bound element-wise passes get AVX2 and AVX-512 clones chosen at load time
 * (the binary still runs on any x86-64: no -march needed). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HOT
#endif

/* The distance between the 16 blocks of a transformed array of n elements each. */
#define WINO_XS(n) ((n) + 16)

static int use_winograd(conv_dims d)
{
    if (d.algo == CONV_WINOGRAD)
        return 1;
    int ch = d.IC < d.OC ? d.IC : d.OC;
    return d.algo == CONV_AUTO && ch >= CONV_WINOGRAD_MIN_CH;
}

/* The Winograd tiles' order: by boards (the transforms vectorised over 16 boards) on
 * boards narrower than 12 columns, whose tile rows (up to 5 tiles) are too short for
 * vectors; by rows on wider ones, where it keeps a chunk's arrays smaller. */
static int wino_by_boards(conv_dims d) { return d.W < 12; }

/* Boards per Winograd chunk: by boards, 16 (one vector of floats); by rows, about 128
 * tiles, so that the transformed arrays (16 x channels x tiles) stay in L2 (measured
 * with `gridzero bench train`). */
static int wino_chunk(conv_dims d)
{
    int nb = 16;
    if (!wino_by_boards(d)) {
        int tiles = ((d.H + 1) / 2) * ((d.W + 1) / 2);
        nb = 128 / tiles;
        if (nb < 1)
            nb = 1;
    }
    return nb < d.N ? nb : d.N;
}

static int conv_chunk(conv_dims d)
{
    int hw = d.H * d.W;
    int nb = CONV_CHUNK_COLS / hw;
    if (nb < 1)
        nb = 1;
    return nb < d.N ? nb : d.N;
}

#define R float
#define F(name) name
#define GEMM cblas_sgemm
#include "layers_impl.h"
#undef R
#undef F
#undef GEMM

#define R double
#define F(name) name##_f64
#define GEMM cblas_dgemm
#include "layers_impl.h"
#undef R
#undef F
#undef GEMM
