/* layers_impl.h — the layer bodies, included twice by layers.c with R (the real type),
 * F(name) (the function name) and GEMM (cblas_sgemm / cblas_dgemm) defined. */

/* im2col of samples n0 .. n0+nb-1 of in (C, Ntot*H*W) into col (C*T, nb*H*W): row
 * c*T + t holds channel c shifted by live tap t (zero outside the board). */
HOT static void F(im2col)(R *col, const R *in, int C, int Ntot, int n0, int nb, int H, int W,
                      const int *taps, int T)
{
    size_t hw = (size_t)H * W, cols = (size_t)nb * hw, ltot = (size_t)Ntot * hw;
    for (int c = 0; c < C; c++) {
        for (int t = 0; t < T; t++) {
            int dy = taps[t] / 3 - 1, dx = taps[t] % 3 - 1;
            /* rows y in [ys, ye) read row y + dy; in flat indices the shifted plane is one
             * contiguous copy dst[i] = src[i + dy*W + dx] over [i0, i1), after which the
             * column that wrapped around (x = 0 for dx = -1, x = W-1 for dx = +1) and the
             * rows outside the board are zeroed. */
            int ys = dy < 0 ? 1 : 0, ye = dy > 0 ? H - 1 : H;
            size_t i0 = (size_t)ys * W + (dx < 0 ? 1 : 0), i1 = (size_t)ye * W - (dx > 0 ? 1 : 0);
            ptrdiff_t off = (ptrdiff_t)dy * W + dx;
            R *row = col + ((size_t)c * T + t) * cols;
            for (int n = 0; n < nb; n++) {
                const R *src = in + (size_t)c * ltot + (size_t)(n0 + n) * hw;
                R *dst = row + (size_t)n * hw;
                if (ys)
                    memset(dst, 0, sizeof(R) * (size_t)W);
                if (ye < H)
                    memset(dst + (size_t)(H - 1) * W, 0, sizeof(R) * (size_t)W);
                if (i1 > i0)
                    memcpy(dst + i0, src + (ptrdiff_t)i0 + off, sizeof(R) * (i1 - i0));
                if (dx < 0)
                    for (int y = ys; y < ye; y++)
                        dst[(size_t)y * W] = 0;
                else if (dx > 0)
                    for (int y = ys; y < ye; y++)
                        dst[(size_t)y * W + W - 1] = 0;
            }
        }
    }
}

/* ---- Winograd F(2x2, 3x3) ------------------------------------------------------
 * Tile (ty, tx) of a board covers output rows 2ty, 2ty+1 and columns 2tx, 2tx+1 and
 * reads input rows 2ty-1 .. 2ty+2, columns 2tx-1 .. 2tx+2 (zero outside the board).
 * A chunk's tiles are numbered in one of two orders (wino_by_boards): by rows, j =
 * board * TH * TW + ty * TW + tx (wide boards: the transforms run along a board's tile
 * rows), or by boards, j = (ty * TW + tx) * boards + board (narrow boards, whose tile
 * rows are too short for vectors: the transforms run over a chunk's boards); J in all,
 * and a transformed array is (16, channels, J): element xi = 4 r + s of channel c's tile j
 * at xi * WINO_XS(channels * J) + c * J + j (the 16 blocks a cache line more than their
 * size apart: with power-of-two sizes, the transforms' 16 streams would otherwise
 * share the same cache sets). With B, G, A the F(2x2, 3x3) matrices, the forward is
 * Y = A^T [(G g G^T) . (B^T d B)] A per tile, summed over the input channels by 16
 * GEMMs; its adjoints give dd = B [(G g G^T) . (A dY A^T)] B^T (done as the flipped
 * kernel's forward, as in the im2col path) and dg = G^T [sum (A dY A^T) . (B^T d B)] G. */

/* U (16, NO, NI) = G g G^T for each (o, i), g the 3x3 kernel: flip = 0: g = w[o][i] with
 * w (NO, NI, 3, 3); flip = 1: g[k] = w[i][o][8 - k] with w (NI, NO, 3, 3) (the input
 * gradient's flipped, transposed kernel). Masked hex taps count as zero. */
static void F(wino_weights)(R *U, const R *w, int NO, int NI, int flip, int hex)
{
    for (int o = 0; o < NO; o++)
        for (int i = 0; i < NI; i++) {
            R g[9], t[4][3];
            for (int k = 0; k < 9; k++) {
                if (hex && (k == 0 || k == 8))
                    g[k] = 0;
                else
                    g[k] = flip ? w[((size_t)i * NO + o) * 9 + 8 - k] : w[((size_t)o * NI + i) * 9 + k];
            }
            for (int c = 0; c < 3; c++) {
                t[0][c] = g[c];
                t[1][c] = (g[c] + g[3 + c] + g[6 + c]) * (R)0.5;
                t[2][c] = (g[c] - g[3 + c] + g[6 + c]) * (R)0.5;
                t[3][c] = g[6 + c];
            }
            for (int r = 0; r < 4; r++) {
                R u[4] = {t[r][0], (t[r][0] + t[r][1] + t[r][2]) * (R)0.5,
                          (t[r][0] - t[r][1] + t[r][2]) * (R)0.5, t[r][2]};
                for (int s = 0; s < 4; s++)
                    U[((size_t)(4 * r + s) * NO + o) * NI + i] = u[s];
            }
        }
}

/* Tile j's 2x2 outputs (A^T m A) from m[xi * XS + j], xi < 16: y00, y01, y10, y11. */
static inline void F(wino_tile_out)(const R *m, size_t XS, size_t j, R *y0, R *y1, R *y2, R *y3)
{
    /* m[... + j] in here, not (m + j) passed in: GCC vectorizes the callers' simd loops
     * over j only this way (it found no vector type for the loads through m + j) */
    R s0[4], s1[4];
    for (int r = 0; r < 4; r++) {
        R m0 = m[(size_t)(4 * r) * XS + j], m1 = m[(size_t)(4 * r + 1) * XS + j];
        R m2 = m[(size_t)(4 * r + 2) * XS + j], m3 = m[(size_t)(4 * r + 3) * XS + j];
        s0[r] = m0 + m1 + m2;
        s1[r] = m1 - m2 - m3;
    }
    *y0 = s0[0] + s0[1] + s0[2];
    *y1 = s1[0] + s1[1] + s1[2];
    *y2 = s0[1] - s0[2] - s0[3];
    *y3 = s1[1] - s1[2] - s1[3];
}

/* The transforms' row length: TW + 1 columns rounded up to whole 16-float vectors, so
 * that their loops have no scalar remainder (a scalar store that a vector load reads
 * back soon after stalls store forwarding). */
static int F(wino_row)(int W) { return ((W + 1) / 2 + 1 + 15) / 16 * 16; }

/* Scratch of the row-order transforms below: a board's columns split by parity, rows
 * -1 .. 2TH (2TH + 2 rows, twice), then 8 rows per tile row (TH of them). */
static size_t F(wino_tmp_n_rows)(int H, int W)
{
    size_t K = (size_t)F(wino_row)(W), TH = (size_t)((H + 1) / 2);
    return 2 * (2 * TH + 2) * K + 8 * TH * K;
}

/* Row order (wide boards): V (16, C, J) = B^T d B of every tile of channels [0, C) of
 * in (rows ltot apart), boards n0 .. n0+nb-1. Each board is first split by column parity (ev[y][k] = d[y][2k-1],
 * od[y][k] = d[y][2k], zero outside), so that both passes run on contiguous rows: tile
 * tx reads columns 2tx-1 .. 2tx+2 = ev[tx], od[tx], ev[tx+1], od[tx+1]. Each pass covers
 * the whole board before the next reads it back. */
HOT static void F(wino_input_rows)(R *restrict V, const R *in, size_t ltot, int C, int n0, int nb,
                              int H, int W, R *restrict tmp)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, K = F(wino_row)(W), rows = 2 * TH + 2;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)C * J);
    R *ev = tmp, *od = tmp + (size_t)rows * K, *bt = od + (size_t)rows * K;
    /* the padding (rows -1 and >= H, columns outside) is never written below: zero once */
    memset(tmp, 0, sizeof(R) * F(wino_tmp_n_rows)(H, W));
    for (int c = 0; c < C; c++)
        for (int n = 0; n < nb; n++) {
            const R *src = in + (size_t)c * ltot + (size_t)(n0 + n) * hw;
            for (int y = 0; y < H; y++) {
                const R *restrict sr = src + (size_t)y * W;
                R *restrict e = ev + (size_t)(y + 1) * K + 1, *restrict o = od + (size_t)(y + 1) * K;
#pragma omp simd
                for (int k = 0; k < W / 2; k++) {
                    o[k] = sr[2 * k];
                    e[k] = sr[2 * k + 1];
                }
                if (W & 1)
                    o[W / 2] = sr[W - 1];
            }
            /* down the columns: B^T d over padded rows 2ty .. 2ty+3 (board rows 2ty-1 ..) */
            for (int ty = 0; ty < TH; ty++)
                for (int h = 0; h < 2; h++) {
                    const R *d0 = (h ? od : ev) + (size_t)(2 * ty) * K;
                    const R *d1 = d0 + K, *d2 = d1 + K, *d3 = d2 + K;
                    R *b0 = bt + (size_t)(8 * ty + 4 * h) * K, *b1 = b0 + K, *b2 = b1 + K, *b3 = b2 + K;
#pragma omp simd
                    for (int k = 0; k < K; k++) {
                        b0[k] = d0[k] - d2[k];
                        b1[k] = d1[k] + d2[k];
                        b2[k] = d2[k] - d1[k];
                        b3[k] = d1[k] - d3[k];
                    }
                }
            /* across: (B^T d) B */
            size_t j0 = (size_t)n * P;
            for (int ty = 0; ty < TH; ty++, j0 += (size_t)TW)
                for (int r = 0; r < 4; r++) {
                    const R *e = bt + (size_t)(8 * ty + r) * K, *o = e + 4 * (size_t)K;
                    R *v0 = V + (size_t)(4 * r) * XS + (size_t)c * J + j0;
                    R *v1 = v0 + XS, *v2 = v1 + XS, *v3 = v2 + XS;
#pragma omp simd
                    for (int tx = 0; tx < TW; tx++) {
                        v0[tx] = e[tx] - e[tx + 1];
                        v1[tx] = o[tx] + e[tx + 1];
                        v2[tx] = e[tx + 1] - o[tx];
                        v3[tx] = o[tx] - o[tx + 1];
                    }
                }
        }
}

/* out (NO rows ldc apart) of boards n0 .. n0+nb-1 = (accumulate: +=) A^T m A of every
 * tile of Mm (16, NO, J); outputs beyond the board are dropped. tmp: 4 (TW + 1). */
HOT static void F(wino_output_rows)(R *out, size_t ldc, const R *restrict Mm, int NO, int n0, int nb,
                               int H, int W, int accumulate, R *restrict tmp)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, K = TW + 1;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)NO * J);
    R *y00 = tmp, *y01 = tmp + K, *y10 = tmp + 2 * K, *y11 = tmp + 3 * K;
    for (int o = 0; o < NO; o++)
        for (int n = 0; n < nb; n++)
            for (int ty = 0; ty < TH; ty++) {
                const R *m = Mm + (size_t)o * J + (size_t)n * P + (size_t)ty * TW;
#pragma omp simd
                for (int tx = 0; tx < TW; tx++)
                    F(wino_tile_out)(m, XS, (size_t)tx, y00 + tx, y01 + tx, y10 + tx, y11 + tx);
                R *row0 = out + (size_t)o * ldc + (size_t)(n0 + n) * hw + (size_t)(2 * ty) * W;
                for (int h = 0; h < 2 && 2 * ty + h < H; h++) {
                    R *row = row0 + (size_t)h * W;
                    const R *a = h ? y10 : y00, *b = h ? y11 : y01;
                    if (accumulate) {
#pragma omp simd
                        for (int k = 0; k < W / 2; k++) {
                            row[2 * k] += a[k];
                            row[2 * k + 1] += b[k];
                        }
                        if (W & 1)
                            row[W - 1] += a[W / 2];
                    } else {
#pragma omp simd
                        for (int k = 0; k < W / 2; k++) {
                            row[2 * k] = a[k];
                            row[2 * k + 1] = b[k];
                        }
                        if (W & 1)
                            row[W - 1] = a[W / 2];
                    }
                }
            }
}

/* dM (16, NO, J) = A dy A^T of every 2x2 tile of dout (NO rows ldc apart; zero beyond
 * the board), boards n0 .. n0+nb-1: the adjoint of wino_output. tmp: 4 (TW + 1). */
HOT static void F(wino_grad_output_rows)(R *restrict dM, const R *dout, size_t ldc, int NO, int n0,
                                    int nb, int H, int W, R *restrict tmp)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, K = TW + 1;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)NO * J);
    R *a = tmp, *b = tmp + K, *c = tmp + 2 * K, *e = tmp + 3 * K; /* dy[0][2tx], [0][2tx+1], [1][..] */
    for (int o = 0; o < NO; o++)
        for (int n = 0; n < nb; n++)
            for (int ty = 0; ty < TH; ty++) {
                R *m = dM + (size_t)o * J + (size_t)n * P + (size_t)ty * TW;
                const R *row0 = dout + (size_t)o * ldc + (size_t)(n0 + n) * hw + (size_t)(2 * ty) * W;
                for (int h = 0; h < 2; h++) {
                    R *ea = h ? c : a, *eb = h ? e : b;
                    if (2 * ty + h >= H) {
                        for (int k = 0; k < TW; k++)
                            ea[k] = eb[k] = 0;
                        continue;
                    }
                    const R *row = row0 + (size_t)h * W;
#pragma omp simd
                    for (int k = 0; k < W / 2; k++) {
                        ea[k] = row[2 * k];
                        eb[k] = row[2 * k + 1];
                    }
                    if (W & 1) {
                        ea[W / 2] = row[W - 1];
                        eb[W / 2] = 0;
                    }
                }
                R *q[16];
                for (int xi = 0; xi < 16; xi++)
                    q[xi] = m + (size_t)xi * XS;
#pragma omp simd
                for (int tx = 0; tx < TW; tx++) {
                    R r0[4] = {a[tx], a[tx] + b[tx], a[tx] - b[tx], -b[tx]}; /* rows of dy A^T */
                    R r1[4] = {c[tx], c[tx] + e[tx], c[tx] - e[tx], -e[tx]};
                    for (int s = 0; s < 4; s++) {
                        q[s][tx] = r0[s];
                        q[4 + s][tx] = r0[s] + r1[s];
                        q[8 + s][tx] = r0[s] - r1[s];
                        q[12 + s][tx] = -r1[s];
                    }
                }
            }
}

/* Scratch of the board-order transforms below: one channel of a chunk with the boards innermost,
 * (2TH + 2) x (2TW + 2) points x nb boards. */
static size_t F(wino_tmp_n_boards)(int H, int W, int nb)
{
    return (size_t)(2 * ((H + 1) / 2) + 2) * (size_t)(2 * ((W + 1) / 2) + 2) * (size_t)nb;
}

/* The board-order transforms' copies between boards and points (boards innermost): by
 * AVX-512 16x16 transposes (the float build, chunks of 16 boards, an AVX-512 CPU: see
 * layers.c), else element by element. */
static int F(wino_vec16)(int nb)
{
#if WINO_T16_R
    return nb == 16 && wino_t16_cpu();
#else
    (void)nb;
    return 0;
#endif
}

/* nb boards (board n at src + n H W) to points: board n's point (y, x) goes to
 * T[((y + oy) pitch + x + ox) nb + n]. vec: wino_vec16(nb); then next (the following
 * call's src, or NULL) is prefetched. */
static void F(boards_to_points)(R *restrict T, int pitch, int oy, int ox, const R *src, int H, int W,
                                int nb, int vec, const R *next)
{
    size_t hw = (size_t)H * W;
#if WINO_T16_R
    if (vec) {
        t16_boards_to_points(T, pitch, oy, ox, src, (int)hw, W, next);
        return;
    }
#endif
    (void)vec, (void)next;
    for (int n = 0; n < nb; n++)
        for (int y = 0; y < H; y++) {
            R *t = T + ((size_t)(y + oy) * pitch + ox) * nb + n;
            for (int x = 0; x < W; x++)
                t[(size_t)x * nb] = src[(size_t)n * hw + (size_t)y * W + x];
        }
}

/* The way back: board n's point (y, x) (dst + n H W + y W + x) = (accumulate: +=)
 * T[(y pitch + x) nb + n]. vec and next as above. */
static void F(points_to_boards)(R *dst, int H, int W, const R *restrict T, int pitch, int nb,
                                int accumulate, int vec, const R *next)
{
    size_t hw = (size_t)H * W;
#if WINO_T16_R
    if (vec) {
        t16_points_to_boards(dst, (int)hw, W, T, pitch, accumulate, next);
        return;
    }
#endif
    (void)vec, (void)next;
    for (int n = 0; n < nb; n++)
        for (int y = 0; y < H; y++) {
            const R *t = T + (size_t)y * pitch * nb + n;
            R *d = dst + (size_t)n * hw + (size_t)y * W;
            if (accumulate)
                for (int x = 0; x < W; x++)
                    d[x] += t[(size_t)x * nb];
            else
                for (int x = 0; x < W; x++)
                    d[x] = t[(size_t)x * nb];
        }
}

/* Board order (narrow boards): V (16, C, J) = B^T d B of every tile of channels [0, C) of in (rows ltot apart),
 * boards n0 .. n0+nb-1. Each channel is first copied with the boards innermost, padded
 * by a zero border (T[(yy * PW + xx) * nb + n] = board n's point (yy - 1, xx - 1)), so
 * that every step of the transform is one operation over the chunk's boards. */
HOT static void F(wino_input_boards)(R *restrict V, const R *in, size_t ltot, int C, int n0, int nb,
                              int H, int W, R *restrict T)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, PW = 2 * TW + 2;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)C * J);
    size_t row = (size_t)PW * nb;
    /* the border (row 0, rows > H, column 0, columns > W) is never written below */
    memset(T, 0, sizeof(R) * F(wino_tmp_n_boards)(H, W, nb));
    int vec = F(wino_vec16)(nb);
    for (int c = 0; c < C; c++) {
        F(boards_to_points)(T, PW, 1, 1, in + (size_t)c * ltot + (size_t)n0 * hw, H, W, nb, vec,
                            c + 1 < C ? in + (size_t)(c + 1) * ltot + (size_t)n0 * hw : NULL);
        R *v = V + (size_t)c * J;
        for (int ty = 0; ty < TH; ty++)
            for (int tx = 0; tx < TW; tx++, v += nb) {
                const R *d0 = T + (size_t)(2 * ty) * row + (size_t)(2 * tx) * nb;
                const R *d1 = d0 + row, *d2 = d1 + row, *d3 = d2 + row;
#pragma omp simd
                for (int n = 0; n < nb; n++) {
                    R t[4][4];
                    for (int s = 0; s < 4; s++) { /* B^T d, down the columns */
                        R a0 = d0[s * nb + n], a1 = d1[s * nb + n], a2 = d2[s * nb + n], a3 = d3[s * nb + n];
                        t[0][s] = a0 - a2;
                        t[1][s] = a1 + a2;
                        t[2][s] = a2 - a1;
                        t[3][s] = a1 - a3;
                    }
                    for (int r = 0; r < 4; r++) { /* (B^T d) B, across */
                        v[(size_t)(4 * r) * XS + n] = t[r][0] - t[r][2];
                        v[(size_t)(4 * r + 1) * XS + n] = t[r][1] + t[r][2];
                        v[(size_t)(4 * r + 2) * XS + n] = t[r][2] - t[r][1];
                        v[(size_t)(4 * r + 3) * XS + n] = t[r][1] - t[r][3];
                    }
                }
            }
    }
}

/* out (NO rows ldc apart) of boards n0 .. n0+nb-1 = (accumulate: +=) A^T m A of every
 * tile of Mm (16, NO, J); outputs beyond the board are dropped. The 2x2 outputs go to T
 * (2TH x 2TW points, boards innermost), then to out board by board. */
HOT static void F(wino_output_boards)(R *out, size_t ldc, const R *restrict Mm, int NO, int n0, int nb,
                               int H, int W, int accumulate, R *restrict T)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, QW = 2 * TW;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)NO * J);
    size_t row = (size_t)QW * nb;
    int vec = F(wino_vec16)(nb);
    for (int o = 0; o < NO; o++) {
        const R *m = Mm + (size_t)o * J;
        for (int ty = 0; ty < TH; ty++)
            for (int tx = 0; tx < TW; tx++, m += nb) {
                R *q0 = T + (size_t)(2 * ty) * row + (size_t)(2 * tx) * nb, *q1 = q0 + row;
#pragma omp simd
                for (int n = 0; n < nb; n++)
                    F(wino_tile_out)(m, XS, (size_t)n, q0 + n, q0 + nb + n, q1 + n, q1 + nb + n);
            }
        F(points_to_boards)(out + (size_t)o * ldc + (size_t)n0 * hw, H, W, T, QW, nb, accumulate, vec,
                            o + 1 < NO ? out + (size_t)(o + 1) * ldc + (size_t)n0 * hw : NULL);
    }
}

/* dM (16, NO, J) = A dy A^T of every 2x2 tile of dout (NO rows ldc apart; zero beyond
 * the board), boards n0 .. n0+nb-1: the adjoint of wino_output. dout is first copied
 * to T (2TH x 2TW points, boards innermost, zero beyond the board). */
HOT static void F(wino_grad_output_boards)(R *restrict dM, const R *dout, size_t ldc, int NO, int n0,
                                    int nb, int H, int W, R *restrict T)
{
    int TH = (H + 1) / 2, TW = (W + 1) / 2, QW = 2 * TW;
    size_t hw = (size_t)H * W, P = (size_t)TH * TW, J = (size_t)nb * P, XS = WINO_XS((size_t)NO * J);
    size_t row = (size_t)QW * nb;
    /* the points beyond the board (row 2TH-1 when H is odd, column 2TW-1 when W is) are
     * never written below */
    memset(T, 0, sizeof(R) * (size_t)(2 * TH) * row);
    int vec = F(wino_vec16)(nb);
    for (int o = 0; o < NO; o++) {
        F(boards_to_points)(T, QW, 0, 0, dout + (size_t)o * ldc + (size_t)n0 * hw, H, W, nb, vec,
                            o + 1 < NO ? dout + (size_t)(o + 1) * ldc + (size_t)n0 * hw : NULL);
        R *m = dM + (size_t)o * J;
        for (int ty = 0; ty < TH; ty++)
            for (int tx = 0; tx < TW; tx++, m += nb) {
                const R *q0 = T + (size_t)(2 * ty) * row + (size_t)(2 * tx) * nb, *q1 = q0 + row;
#pragma omp simd
                for (int n = 0; n < nb; n++) {
                    R a = q0[n], b = q0[nb + n], c = q1[n], e = q1[nb + n];
                    R r0[4] = {a, a + b, a - b, -b}; /* rows of dy A^T */
                    R r1[4] = {c, c + e, c - e, -e};
                    for (int s = 0; s < 4; s++) {
                        m[(size_t)s * XS + n] = r0[s];
                        m[(size_t)(4 + s) * XS + n] = r0[s] + r1[s];
                        m[(size_t)(8 + s) * XS + n] = r0[s] - r1[s];
                        m[(size_t)(12 + s) * XS + n] = -r1[s];
                    }
                }
            }
    }
}

/* Scratch of the Winograd path: U or dU (16 OC IC), the transformed input and the
 * products (16 x channels x tiles of a chunk each), the transforms' own. */
static size_t F(wino_scratch)(conv_dims d)
{
    size_t cmax = (size_t)(d.IC > d.OC ? d.IC : d.OC);
    size_t J = (size_t)wino_chunk(d) * (size_t)((d.H + 1) / 2) * (size_t)((d.W + 1) / 2);
    size_t tmp = wino_by_boards(d) ? F(wino_tmp_n_boards)(d.H, d.W, wino_chunk(d))
                                   : F(wino_tmp_n_rows)(d.H, d.W);
    return 16 * (size_t)d.OC * d.IC + 2 * 16 * WINO_XS(cmax * J) + tmp;
}

/* The three transforms in the tile order wino_by_boards chose for d. */
static void F(wino_in)(conv_dims d, R *V, const R *in, size_t ltot, int C, int n0, int nb, R *tmp)
{
    if (wino_by_boards(d))
        F(wino_input_boards)(V, in, ltot, C, n0, nb, d.H, d.W, tmp);
    else
        F(wino_input_rows)(V, in, ltot, C, n0, nb, d.H, d.W, tmp);
}

static void F(wino_out)(conv_dims d, R *out, size_t ldc, const R *Mm, int NO, int n0, int nb,
                        int accumulate, R *tmp)
{
    if (wino_by_boards(d))
        F(wino_output_boards)(out, ldc, Mm, NO, n0, nb, d.H, d.W, accumulate, tmp);
    else
        F(wino_output_rows)(out, ldc, Mm, NO, n0, nb, d.H, d.W, accumulate, tmp);
}

static void F(wino_gout)(conv_dims d, R *dM, const R *dout, size_t ldc, int NO, int n0, int nb, R *tmp)
{
    if (wino_by_boards(d))
        F(wino_grad_output_boards)(dM, dout, ldc, NO, n0, nb, d.H, d.W, tmp);
    else
        F(wino_grad_output_rows)(dM, dout, ldc, NO, n0, nb, d.H, d.W, tmp);
}

/* Samples [s0, s1) of a 3x3 conv by Winograd: flip = 0: out (OC rows) = conv(in (IC
 * rows), w); flip = 1: out (IC rows) (accumulate: +=) = the input gradient's conv of
 * in = dout (OC rows) with w flipped and transposed. */
static void F(wino_conv)(R *out, const R *in, const R *w, conv_dims d, R *scratch, int s0, int s1,
                         int flip, int accumulate)
{
    int NO = flip ? d.IC : d.OC, NI = flip ? d.OC : d.IC, nb = wino_chunk(d);
    size_t P = (size_t)((d.H + 1) / 2) * ((d.W + 1) / 2), ltot = (size_t)d.N * d.H * d.W;
    size_t cmax = (size_t)(d.IC > d.OC ? d.IC : d.OC), Jmax = (size_t)nb * P;
    R *U = scratch, *V = U + 16 * (size_t)NO * NI, *Mm = V + 16 * WINO_XS(cmax * Jmax);
    R *tmp = Mm + 16 * WINO_XS(cmax * Jmax);
    F(wino_weights)(U, w, NO, NI, flip, d.hex);
    for (int n0 = s0; n0 < s1; n0 += nb) {
        int m = s1 - n0 < nb ? s1 - n0 : nb;
        int J = (int)((size_t)m * P);
        F(wino_in)(d, V, in, ltot, NI, n0, m, tmp);
        for (int xi = 0; xi < 16; xi++)
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, NO, J, NI, 1, U + (size_t)xi * NO * NI, NI,
                 V + (size_t)xi * WINO_XS((size_t)NI * J), J, 0,
                 Mm + (size_t)xi * WINO_XS((size_t)NO * J), J);
        F(wino_out)(d, out, ltot, Mm, NO, n0, m, accumulate, tmp);
    }
}

/* The weight gradient's first half over samples [s0, s1): dU (16, OC, IC), at the start
 * of scratch, = the sum over their tiles of (A dy A^T) (B^T d B). Zero for no samples. */
static void F(wino_wgrad_sum)(const R *dout, const R *in, conv_dims d, R *scratch, int s0, int s1)
{
    int nb = wino_chunk(d);
    size_t P = (size_t)((d.H + 1) / 2) * ((d.W + 1) / 2), ltot = (size_t)d.N * d.H * d.W;
    size_t cmax = (size_t)(d.IC > d.OC ? d.IC : d.OC), Jmax = (size_t)nb * P, NOI = (size_t)d.OC * d.IC;
    R *dU = scratch, *V = dU + 16 * NOI, *dM = V + 16 * WINO_XS(cmax * Jmax);
    R *tmp = dM + 16 * WINO_XS(cmax * Jmax);
    if (s1 <= s0) {
        memset(dU, 0, sizeof(R) * 16 * NOI);
        return;
    }
    for (int n0 = s0; n0 < s1; n0 += nb) {
        int m = s1 - n0 < nb ? s1 - n0 : nb;
        int J = (int)((size_t)m * P);
        F(wino_gout)(d, dM, dout, ltot, d.OC, n0, m, tmp);
        F(wino_in)(d, V, in, ltot, d.IC, n0, m, tmp);
        for (int xi = 0; xi < 16; xi++)
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, d.OC, d.IC, J, 1,
                 dM + (size_t)xi * WINO_XS((size_t)d.OC * J), J, V + (size_t)xi * WINO_XS((size_t)d.IC * J),
                 J, n0 > s0 ? 1 : 0, dU + (size_t)xi * NOI, d.IC);
    }
}

/* The weight gradient's second half: dw (OC, IC, 3, 3) += G^T dU G for output channels
 * [o0, o1), dU the sum of nparts arrays (16, OC, IC) stride elements apart from dU0 (one
 * per part's samples). Masked hex taps untouched. */
static void F(wino_wgrad_finish)(R *dw, const R *dU0, size_t stride, int nparts, conv_dims d,
                                 int o0, int o1)
{
    size_t NOI = (size_t)d.OC * d.IC;
    for (int o = o0; o < o1; o++)
        for (int i = 0; i < d.IC; i++) {
            R x[16], t[3][4];
            for (int xi = 0; xi < 16; xi++) {
                const R *u = dU0 + (size_t)xi * NOI + (size_t)o * d.IC + i;
                R s = u[0];
                for (int q = 1; q < nparts; q++)
                    s += u[(size_t)q * stride];
                x[xi] = s;
            }
            for (int s = 0; s < 4; s++) { /* G^T dU */
                t[0][s] = x[s] + (x[4 + s] + x[8 + s]) * (R)0.5;
                t[1][s] = (x[4 + s] - x[8 + s]) * (R)0.5;
                t[2][s] = (x[4 + s] + x[8 + s]) * (R)0.5 + x[12 + s];
            }
            R *g = dw + ((size_t)o * d.IC + i) * 9;
            for (int k = 0; k < 3; k++) { /* (G^T dU) G */
                R a = t[k][0] + (t[k][1] + t[k][2]) * (R)0.5;
                R b = (t[k][1] - t[k][2]) * (R)0.5;
                R c = (t[k][1] + t[k][2]) * (R)0.5 + t[k][3];
                if (!(d.hex && k == 0))
                    g[3 * k] += a;
                g[3 * k + 1] += b;
                if (!(d.hex && k == 2))
                    g[3 * k + 2] += c;
            }
        }
}

size_t F(conv3x3_scratch)(conv_dims d)
{
    size_t T = d.hex ? 7 : 9;
    size_t cmax = (size_t)(d.IC > d.OC ? d.IC : d.OC);
    size_t col = cmax * T * (size_t)conv_chunk(d) * (size_t)d.H * d.W;
    size_t n = col + (size_t)d.OC * d.IC * T;
    if (use_winograd(d) && F(wino_scratch)(d) > n)
        n = F(wino_scratch)(d);
    return n;
}

void F(conv3x3_forward_part)(R *out, const R *in, const R *w, conv_dims d, R *scratch, int part,
                             int nparts)
{
    const int *taps = d.hex ? taps_hex : taps_square;
    int T = d.hex ? 7 : 9, K = d.IC * T, hw = d.H * d.W, nb = conv_chunk(d);
    int s0 = (int)((long long)d.N * part / nparts), s1 = (int)((long long)d.N * (part + 1) / nparts);
    R *wbuf = scratch;
    R *col = scratch + (size_t)d.OC * d.IC * T;
    const R *a = w;
    if (s1 <= s0)
        return;
    if (use_winograd(d)) {
        F(wino_conv)(out, in, w, d, scratch, s0, s1, 0, 0);
        return;
    }
    if (d.hex) { /* pack the live taps: a (OC, IC*7) */
        for (int o = 0; o < d.OC; o++)
            for (int i = 0; i < d.IC; i++)
                for (int t = 0; t < T; t++)
                    wbuf[((size_t)o * d.IC + i) * T + t] = w[((size_t)o * d.IC + i) * 9 + taps[t]];
        a = wbuf;
    }
    int ldc = d.N * hw;
    for (int n0 = s0; n0 < s1; n0 += nb) {
        int m = s1 - n0 < nb ? s1 - n0 : nb;
        int cols = m * hw;
        F(im2col)(col, in, d.IC, d.N, n0, m, d.H, d.W, taps, T);
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.OC, cols, K, 1, a, K, col, cols, 0,
             out + (size_t)n0 * hw, ldc);
    }
}

void F(conv3x3_forward)(R *out, const R *in, const R *w, conv_dims d, R *scratch)
{
    F(conv3x3_forward_part)(out, in, w, d, scratch, 0, 1);
}

/* Part `part` of nparts: the input gradient of samples [s0, s1); the weight gradient by
 * im2col of input channels [i0, i1) (their im2col rows over the whole batch: no
 * reduction between parts), by Winograd the sum dU over samples [s0, s1) left in
 * scratch (each thread transforms only its own samples' output gradient), added to dw
 * here when finish != 0, else by conv3x3_backward_reduce once every part has run. */
static void F(conv3x3_bwd)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                           R *scratch, int accumulate, int part, int nparts, int finish)
{
    const int *taps = d.hex ? taps_hex : taps_square;
    int T = d.hex ? 7 : 9, hw = d.H * d.W, nb = conv_chunk(d), ldc = d.N * hw;
    size_t ltot = (size_t)d.N * hw;
    R *wbuf = scratch;
    R *col = scratch + (size_t)d.OC * d.IC * T;
    int i0 = (int)((long long)d.IC * part / nparts), i1 = (int)((long long)d.IC * (part + 1) / nparts);
    int s0 = (int)((long long)d.N * part / nparts), s1 = (int)((long long)d.N * (part + 1) / nparts);
    if (use_winograd(d)) {
        /* the input gradient first: its scratch use would overwrite dU */
        if (dinp && s1 > s0)
            F(wino_conv)(dinp, dout, w, d, scratch, s0, s1, 1, accumulate);
        if (dw) {
            F(wino_wgrad_sum)(dout, in, d, scratch, s0, s1);
            if (finish)
                F(wino_wgrad_finish)(dw, scratch, 0, 1, d, 0, d.OC);
        }
        return;
    }
    if (dw && i1 > i0) {
        /* dw[:, i0*T .. i1*T) (OC, IC*T) += dout (OC, cols) . col^T; square: straight into dw. */
        int K = d.IC * T, Kp = (i1 - i0) * T;
        R *g = dw + (size_t)i0 * T;
        int ldg = K;
        if (d.hex) {
            g = wbuf;
            ldg = Kp;
            memset(g, 0, sizeof(R) * (size_t)d.OC * Kp);
        }
        for (int n0 = 0; n0 < d.N; n0 += nb) {
            int m = d.N - n0 < nb ? d.N - n0 : nb;
            int cols = m * hw;
            F(im2col)(col, in + (size_t)i0 * ltot, i1 - i0, d.N, n0, m, d.H, d.W, taps, T);
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, d.OC, Kp, cols, 1, dout + (size_t)n0 * hw,
                 ldc, col, cols, 1, g, ldg);
        }
        if (d.hex)
            for (int o = 0; o < d.OC; o++)
                for (int i = i0; i < i1; i++)
                    for (int t = 0; t < T; t++)
                        dw[((size_t)o * d.IC + i) * 9 + taps[t]] +=
                            g[(size_t)o * Kp + (size_t)(i - i0) * T + t];
    }
    if (dinp && s1 > s0) {
        /* The input gradient is a 3x3 conv of dout with the flipped, transposed kernel:
         * wt (IC, OC*T), wt[i][o*T + t] = w[o][i][8 - taps[t]]. Same GEMM shape as the
         * forward, and im2col (a gather) instead of col2im (a scatter). */
        int K = d.OC * T;
        for (int i = 0; i < d.IC; i++)
            for (int o = 0; o < d.OC; o++)
                for (int t = 0; t < T; t++)
                    wbuf[((size_t)i * d.OC + o) * T + t] = w[((size_t)o * d.IC + i) * 9 + 8 - taps[t]];
        for (int n0 = s0; n0 < s1; n0 += nb) {
            int m = s1 - n0 < nb ? s1 - n0 : nb;
            int cols = m * hw;
            F(im2col)(col, dout, d.OC, d.N, n0, m, d.H, d.W, taps, T);
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.IC, cols, K, 1, wbuf, K, col, cols,
                 accumulate ? 1 : 0, dinp + (size_t)n0 * hw, ldc);
        }
    }
}

void F(conv3x3_backward)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                         R *scratch)
{
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, 1, 0, 1, 1);
}

void F(conv3x3_backward_set)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                             R *scratch)
{
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, 0, 0, 1, 1);
}

void F(conv3x3_backward_part)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                              R *scratch, int accumulate, int part, int nparts)
{
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, accumulate, part, nparts, 0);
}

void F(conv3x3_backward_reduce)(R *dw, const R *scratch0, size_t stride, conv_dims d, int part,
                                int nparts)
{
    if (!dw || !use_winograd(d))
        return;
    int o0 = (int)((long long)d.OC * part / nparts), o1 = (int)((long long)d.OC * (part + 1) / nparts);
    F(wino_wgrad_finish)(dw, scratch0, stride, nparts, d, o0, o1);
}

void F(conv1x1_forward)(R *out, const R *in, const R *w, const R *b, conv_dims d)
{
    int M = d.N * d.H * d.W;
    GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.OC, M, d.IC, 1, w, d.IC, in, M, 0, out, M);
    if (b)
        for (int o = 0; o < d.OC; o++) {
            R *row = out + (size_t)o * M;
            for (int j = 0; j < M; j++)
                row[j] += b[o];
        }
}

void F(conv1x1_backward)(R *dinp, R *dw, R *db, const R *dout, const R *in, const R *w,
                         conv_dims d)
{
    int M = d.N * d.H * d.W;
    if (dw)
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, d.OC, d.IC, M, 1, dout, M, in, M, 1, dw, d.IC);
    if (db)
        for (int o = 0; o < d.OC; o++) {
            const R *row = dout + (size_t)o * M;
            double s = 0;
            for (int j = 0; j < M; j++)
                s += row[j];
            db[o] += (R)s;
        }
    if (dinp)
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, d.IC, M, d.OC, 1, w, d.IC, dout, M, 1, dinp, M);
}

/* Sum and sum of squares of (x[j] - k) over j < M (mask not NULL: the masked j only), in
 * double (SIMD partial sums per block of 1024, then double). */
HOT static void F(bn_shifted_sums)(const R *x, const R *mask, int M, R k, double *s_out,
                                   double *s2_out)
{
    double s = 0, s2 = 0;
    for (int j0 = 0; j0 < M; j0 += 1024) {
        int j1 = M - j0 < 1024 ? M : j0 + 1024;
        R a = 0, b = 0;
        if (mask) {
#pragma omp simd reduction(+ : a, b)
            for (int j = j0; j < j1; j++) {
                R e = (x[j] - k) * mask[j];
                a += e;
                b += e * e;
            }
        } else {
#pragma omp simd reduction(+ : a, b)
            for (int j = j0; j < j1; j++) {
                R e = x[j] - k;
                a += e;
                b += e * e;
            }
        }
        s += a;
        s2 += b;
    }
    *s_out = s;
    *s2_out = s2;
}

/* One channel's normalisation from its statistics over Mg values: the shift k and the
 * sums s, s2 of (x - k) and (x - k)^2. Saves mean/invstd, updates the running stats
 * (when run_mean), and writes y = act(x * sc + sh + skip) over this process's M. */
HOT static void F(bn_channel_apply)(R *y, R *mean, R *invstd, const R *x, double k, double s,
                                    double s2, double Mg, R gamma, R beta, R *run_mean,
                                    R *run_var, const R *sk, int relu, const R *mask, int M,
                                    R eps)
{
    double mu = k + s / Mg;
    double v = s2 - s * s / Mg; /* sum of squared deviations */
    if (v < 0)
        v = 0;
    double var = v / Mg;
    double is = 1.0 / sqrt(var + eps);
    *mean = (R)mu;
    *invstd = (R)is;
    if (run_mean) {
        double unbiased = Mg > 1 ? v / (Mg - 1) : var;
        *run_mean = (R)((1 - LAYERS_BN_MOMENTUM) * *run_mean + LAYERS_BN_MOMENTUM * mu);
        *run_var = (R)((1 - LAYERS_BN_MOMENTUM) * *run_var + LAYERS_BN_MOMENTUM * unbiased);
    }
    R sc = (R)(gamma * is), sh = (R)(beta - gamma * is * mu);
    if (sk && relu)
        for (int j = 0; j < M; j++) {
            R t = x[j] * sc + sh + sk[j];
            y[j] = t > 0 ? t : 0;
        }
    else if (sk)
        for (int j = 0; j < M; j++)
            y[j] = x[j] * sc + sh + sk[j];
    else if (relu)
        for (int j = 0; j < M; j++) {
            R t = x[j] * sc + sh;
            y[j] = t > 0 ? t : 0;
        }
    else
        for (int j = 0; j < M; j++)
            y[j] = x[j] * sc + sh;
    if (mask) /* the padding of a smaller board: 0, as a native board's border */
        for (int j = 0; j < M; j++)
            y[j] *= mask[j];
}

HOT void F(bn_act_forward_train)(R *out, R *mean, R *invstd, const R *in, const R *gamma,
                             const R *beta, R *run_mean, R *run_var, const R *skip, int relu,
                             int C, int M, R eps)
{
    for (int c = 0; c < C; c++) {
        const R *x = in + (size_t)c * M;
        /* one pass: sum and sum of squares around a shift (the first element) in double,
         * which keeps E[x^2] - E[x]^2 accurate */
        double s, s2;
        F(bn_shifted_sums)(x, NULL, M, x[0], &s, &s2);
        F(bn_channel_apply)(out + (size_t)c * M, mean + c, invstd + c, x, x[0], s, s2, M,
                            gamma[c], beta[c], run_mean ? run_mean + c : NULL,
                            run_mean ? run_var + c : NULL, skip ? skip + (size_t)c * M : NULL,
                            relu, NULL, M, eps);
    }
}

void F(bn_partial_sums)(double *s, double *s2, const R *in, const R *shift, int C, int M)
{
    F(bn_partial_sums_masked)(s, s2, in, shift, NULL, C, M);
}

void F(bn_act_forward_sums_masked)(R *out, R *mean, R *invstd, const R *in, const R *shift,
                                   const double *s, const double *s2, double Mg, const R *gamma,
                                   const R *beta, R *run_mean, R *run_var, const R *skip,
                                   int relu, const R *mask, int C, int M, R eps)
{
    for (int c = 0; c < C; c++)
        F(bn_channel_apply)(out + (size_t)c * M, mean + c, invstd + c, in + (size_t)c * M,
                            shift[c], s[c], s2[c], Mg, gamma[c], beta[c],
                            run_mean ? run_mean + c : NULL, run_mean ? run_var + c : NULL,
                            skip ? skip + (size_t)c * M : NULL, relu, mask, M, eps);
}

void F(bn_act_forward_sums)(R *out, R *mean, R *invstd, const R *in, const R *shift,
                            const double *s, const double *s2, double Mg, const R *gamma,
                            const R *beta, R *run_mean, R *run_var, const R *skip, int relu,
                            int C, int M, R eps)
{
    F(bn_act_forward_sums_masked)(out, mean, invstd, in, shift, s, s2, Mg, gamma, beta, run_mean,
                                  run_var, skip, relu, NULL, C, M, eps);
}

void F(bn_partial_sums_masked)(double *s, double *s2, const R *in, const R *shift, const R *mask,
                               int C, int M)
{
    for (int c = 0; c < C; c++)
        F(bn_shifted_sums)(in + (size_t)c * M, mask, M, shift[c], s + c, s2 + c);
}

HOT void F(bn_act_forward_eval)(R *out, const R *in, const R *gamma, const R *beta,
                            const R *run_mean, const R *run_var, const R *skip, int relu, int C,
                            int M, R eps)
{
    for (int c = 0; c < C; c++) {
        double is = 1.0 / sqrt((double)run_var[c] + eps);
        R sc = (R)(gamma[c] * is), sh = (R)(beta[c] - gamma[c] * is * run_mean[c]);
        const R *x = in + (size_t)c * M;
        const R *sk = skip ? skip + (size_t)c * M : NULL;
        R *y = out + (size_t)c * M;
        for (int j = 0; j < M; j++) {
            R t = x[j] * sc + sh + (sk ? sk[j] : 0);
            y[j] = relu && t < 0 ? 0 : t;
        }
    }
}

void F(bn_act_forward_eval_masked)(R *out, const R *in, const R *gamma, const R *beta,
                                   const R *run_mean, const R *run_var, const R *skip, int relu,
                                   const R *mask, int C, int M, R eps)
{
    F(bn_act_forward_eval)(out, in, gamma, beta, run_mean, run_var, skip, relu, C, M, eps);
    for (int c = 0; c < C; c++) {
        R *y = out + (size_t)c * M;
        for (int j = 0; j < M; j++)
            y[j] *= mask[j];
    }
}

void F(batchnorm_forward_train)(R *out, R *mean, R *invstd, const R *in, const R *gamma,
                                const R *beta, R *run_mean, R *run_var, int C, int M, R eps)
{
    F(bn_act_forward_train)(out, mean, invstd, in, gamma, beta, run_mean, run_var, NULL, 0, C, M, eps);
}

void F(batchnorm_forward_eval)(R *out, const R *in, const R *gamma, const R *beta,
                               const R *run_mean, const R *run_var, int C, int M, R eps)
{
    F(bn_act_forward_eval)(out, in, gamma, beta, run_mean, run_var, NULL, 0, C, M, eps);
}

/* One channel's sums for the backward: sum dy and sum dy * (x - mu) over M (mask not
 * NULL: the masked columns only), with dy = dout masked by the ReLU's output o (o NULL:
 * no ReLU). */
HOT static void F(bn_grad_sums)(const R *restrict x, const R *restrict dy, const R *restrict o,
                                const R *restrict mask, R mu, int M, double *sdy_out,
                                double *sdyx_out)
{
    double sdy = 0, sdyx = 0;
    for (int j0 = 0; j0 < M; j0 += 1024) { /* SIMD partial sums per block, then double */
        int j1 = M - j0 < 1024 ? M : j0 + 1024;
        R a = 0, b = 0;
        if (mask) {
#pragma omp simd reduction(+ : a, b)
            for (int j = j0; j < j1; j++) {
                R g = (o && !(o[j] > 0) ? 0 : dy[j]) * mask[j];
                a += g;
                b += g * (x[j] - mu);
            }
        } else if (o) {
#pragma omp simd reduction(+ : a, b)
            for (int j = j0; j < j1; j++) {
                R g = o[j] > 0 ? dy[j] : 0;
                a += g;
                b += g * (x[j] - mu);
            }
        } else {
#pragma omp simd reduction(+ : a, b)
            for (int j = j0; j < j1; j++) {
                a += dy[j];
                b += dy[j] * (x[j] - mu);
            }
        }
        sdy += a;
        sdyx += b;
    }
    *sdy_out = sdy;
    *sdyx_out = sdyx;
}

/* One channel's input gradient from the sums over Mg values (sdyx already times is):
 * dx = gamma * is * (dy - mean(dy) - xhat * mean(dy * xhat)). */
HOT static void F(bn_channel_dx)(R *restrict dx, const R *restrict dy, const R *restrict o,
                                 const R *restrict x, R gamma, R mu, R is, double sdy,
                                 double sdyx, double Mg, const R *restrict mask, int accumulate,
                                 int M)
{
    R k = gamma * is;
    R a = -k * (R)(sdy / Mg) + k * mu * is * (R)(sdyx / Mg), b = -k * is * (R)(sdyx / Mg);
    if (mask) { /* the padding of a smaller board gets no gradient */
        for (int j = 0; j < M; j++) {
            R v = mask[j] * (k * (o && !(o[j] > 0) ? 0 : dy[j]) + a + b * x[j]);
            dx[j] = accumulate ? dx[j] + v : v;
        }
        return;
    }
    /* dx = k dy + a + b x; dx never aliases dout, out or in */
    if (o && accumulate)
        for (int j = 0; j < M; j++)
            dx[j] += k * (o[j] > 0 ? dy[j] : 0) + a + b * x[j];
    else if (o)
        for (int j = 0; j < M; j++)
            dx[j] = k * (o[j] > 0 ? dy[j] : 0) + a + b * x[j];
    else if (accumulate)
        for (int j = 0; j < M; j++)
            dx[j] += k * dy[j] + a + b * x[j];
    else
        for (int j = 0; j < M; j++)
            dx[j] = k * dy[j] + a + b * x[j];
}

HOT void F(bn_act_backward)(R *dinp, R *dgamma, R *dbeta, const R *dout, const R *out, const R *in,
                        const R *gamma, const R *mean, const R *invstd, int C, int M,
                        int accumulate)
{
    for (int c = 0; c < C; c++) {
        const R *x = in + (size_t)c * M, *dy = dout + (size_t)c * M;
        const R *o = out ? out + (size_t)c * M : NULL;
        double sdy, sdyx; /* sum dy, sum dy * (x - mu) */
        F(bn_grad_sums)(x, dy, o, NULL, mean[c], M, &sdy, &sdyx);
        sdyx *= invstd[c];
        if (dgamma)
            dgamma[c] += (R)sdyx;
        if (dbeta)
            dbeta[c] += (R)sdy;
        if (dinp)
            F(bn_channel_dx)(dinp + (size_t)c * M, dy, o, x, gamma[c], mean[c], invstd[c], sdy,
                             sdyx, M, NULL, accumulate, M);
    }
}

void F(bn_backward_partial_sums)(double *sdy, double *sdyx, R *dgamma, R *dbeta, const R *dout,
                                 const R *out, const R *in, const R *mean, const R *invstd,
                                 int C, int M)
{
    F(bn_backward_partial_sums_masked)(sdy, sdyx, dgamma, dbeta, dout, out, in, mean, invstd, NULL,
                                       C, M);
}

void F(bn_act_backward_sums_masked)(R *dinp, const R *dout, const R *out, const R *in,
                                    const R *gamma, const R *mean, const R *invstd,
                                    const double *sdy, const double *sdyx, double Mg,
                                    const R *mask, int C, int M, int accumulate)
{
    for (int c = 0; c < C; c++)
        F(bn_channel_dx)(dinp + (size_t)c * M, dout + (size_t)c * M,
                         out ? out + (size_t)c * M : NULL, in + (size_t)c * M, gamma[c], mean[c],
                         invstd[c], sdy[c], sdyx[c], Mg, mask, accumulate, M);
}

void F(bn_act_backward_sums)(R *dinp, const R *dout, const R *out, const R *in, const R *gamma,
                             const R *mean, const R *invstd, const double *sdy,
                             const double *sdyx, double Mg, int C, int M, int accumulate)
{
    F(bn_act_backward_sums_masked)(dinp, dout, out, in, gamma, mean, invstd, sdy, sdyx, Mg, NULL, C,
                                   M, accumulate);
}

void F(bn_backward_partial_sums_masked)(double *sdy, double *sdyx, R *dgamma, R *dbeta,
                                        const R *dout, const R *out, const R *in, const R *mean,
                                        const R *invstd, const R *mask, int C, int M)
{
    for (int c = 0; c < C; c++) {
        F(bn_grad_sums)(in + (size_t)c * M, dout + (size_t)c * M, out ? out + (size_t)c * M : NULL,
                        mask, mean[c], M, sdy + c, sdyx + c);
        sdyx[c] *= invstd[c];
        if (dgamma)
            dgamma[c] += (R)sdyx[c];
        if (dbeta)
            dbeta[c] += (R)sdy[c];
    }
}

void F(batchnorm_backward)(R *dinp, R *dgamma, R *dbeta, const R *dout, const R *in,
                           const R *gamma, const R *mean, const R *invstd, int C, int M)
{
    F(bn_act_backward)(dinp, dgamma, dbeta, dout, NULL, in, gamma, mean, invstd, C, M, 1);
}

HOT void F(relu_forward)(R *out, const R *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] > 0 ? in[i] : 0;
}

HOT void F(relu_backward)(R *dinp, const R *dout, const R *out, size_t n)
{
    if (dinp == dout) {
        for (size_t i = 0; i < n; i++)
            dinp[i] = out[i] > 0 ? dout[i] : 0;
        return;
    }
    for (size_t i = 0; i < n; i++)
        dinp[i] += out[i] > 0 ? dout[i] : 0;
}

HOT void F(residual_forward)(R *out, const R *a, const R *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

HOT void F(residual_backward)(R *da, R *db, const R *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

/* The first index of x's maximum. */
static int F(argmax)(const R *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

void F(gpool_forward)(R *out, const R *in, int N, int C, int HW, int with_max)
{
    size_t w = (size_t)C * (with_max ? 2 : 1);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            const R *x = in + ((size_t)c * N + n) * HW;
            double s = 0;
            for (int i = 0; i < HW; i++)
                s += x[i];
            out[(size_t)n * w + c] = (R)(s / HW);
            if (with_max)
                out[(size_t)n * w + C + c] = x[F(argmax)(x, HW)];
        }
}

void F(gpool_backward)(R *dinp, const R *dout, const R *in, int N, int C, int HW, int with_max)
{
    size_t w = (size_t)C * (with_max ? 2 : 1);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            R g = dout[(size_t)n * w + c] / (R)HW;
            size_t off = ((size_t)c * N + n) * HW;
            R *dx = dinp + off;
            for (int i = 0; i < HW; i++)
                dx[i] += g;
            if (with_max)
                dx[F(argmax)(in + off, HW)] += dout[(size_t)n * w + C + c];
        }
}

/* The first masked index of x's maximum over n (mask: at least one 1). */
static int F(argmax_masked)(const R *x, const R *mask, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (mask[i] != 0 && (best < 0 || x[i] > x[best]))
            best = i;
    return best < 0 ? 0 : best;
}

/* The number of masked points of a sample (mask (HW)). */
static double F(mask_count)(const R *mask, int HW)
{
    double k = 0;
    for (int i = 0; i < HW; i++)
        k += mask[i];
    return k > 0 ? k : 1;
}

void F(gpool_forward_masked)(R *out, const R *in, int N, int C, int HW, int with_max,
                             const R *mask)
{
    size_t w = (size_t)C * (with_max ? 2 : 1);
    for (int n = 0; n < N; n++) {
        const R *mk = mask + (size_t)n * HW;
        double cnt = F(mask_count)(mk, HW);
        for (int c = 0; c < C; c++) {
            const R *x = in + ((size_t)c * N + n) * HW;
            double s = 0;
            for (int i = 0; i < HW; i++)
                s += mk[i] != 0 ? x[i] : 0;
            out[(size_t)n * w + c] = (R)(s / cnt);
            if (with_max)
                out[(size_t)n * w + C + c] = x[F(argmax_masked)(x, mk, HW)];
        }
    }
}

void F(gpool_backward_masked)(R *dinp, const R *dout, const R *in, int N, int C, int HW,
                              int with_max, const R *mask)
{
    size_t w = (size_t)C * (with_max ? 2 : 1);
    for (int n = 0; n < N; n++) {
        const R *mk = mask + (size_t)n * HW;
        R cnt = (R)F(mask_count)(mk, HW);
        for (int c = 0; c < C; c++) {
            R g = dout[(size_t)n * w + c] / cnt;
            size_t off = ((size_t)c * N + n) * HW;
            R *dx = dinp + off;
            for (int i = 0; i < HW; i++)
                dx[i] += mk[i] * g;
            if (with_max)
                dx[F(argmax_masked)(in + off, mk, HW)] += dout[(size_t)n * w + C + c];
        }
    }
}

void F(dense_forward)(R *out, const R *in, const R *w, const R *b, int N, int NI, int NO)
{
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, NO, NI, 1, in, NI, w, NI, 0, out, NO);
    if (b)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < NO; o++)
                out[(size_t)n * NO + o] += b[o];
}

void F(dense_backward)(R *dinp, R *dw, R *db, const R *dout, const R *in, const R *w, int N,
                       int NI, int NO)
{
    if (dinp)
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, NI, NO, 1, dout, NO, w, NI, 1, dinp, NI);
    if (dw)
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, NO, NI, N, 1, dout, NO, in, NI, 1, dw, NI);
    if (db)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < NO; o++)
                db[o] += dout[(size_t)n * NO + o];
}

void F(tanh_forward)(R *out, const R *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (R)tanh((double)in[i]);
}

void F(tanh_backward)(R *dinp, const R *dout, const R *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dinp[i] += dout[i] * (1 - out[i] * out[i]);
}

void F(cnhw_to_nchw_forward)(R *out, const R *in, int N, int C, int HW)
{
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++)
            memcpy(out + ((size_t)n * C + c) * HW, in + ((size_t)c * N + n) * HW, sizeof(R) * (size_t)HW);
}

void F(cnhw_to_nchw_backward)(R *dinp, const R *dout, int N, int C, int HW)
{
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            const R *s = dout + ((size_t)n * C + c) * HW;
            R *d = dinp + ((size_t)c * N + n) * HW;
            for (int i = 0; i < HW; i++)
                d[i] += s[i];
        }
}

double F(policy_ce_forward)(R *probs, const R *logits, const R *pi, const uint8_t *legal, int N,
                            int A, double *entropy)
{
    double loss = 0, ent = 0;
    for (int n = 0; n < N; n++) {
        const R *l = logits + (size_t)n * A, *t = pi + (size_t)n * A;
        const uint8_t *m = legal + (size_t)n * A;
        R *p = probs + (size_t)n * A;
        double mx = -INFINITY;
        for (int a = 0; a < A; a++)
            if (m[a] && l[a] > mx)
                mx = l[a];
        if (mx == -INFINITY) {
            memset(p, 0, sizeof(R) * (size_t)A);
            continue;
        }
        double s = 0;
        for (int a = 0; a < A; a++)
            if (m[a])
                s += exp(l[a] - mx);
        double lse = mx + log(s);
        for (int a = 0; a < A; a++) {
            if (!m[a]) {
                p[a] = 0;
                continue;
            }
            double lp = l[a] - lse;
            p[a] = (R)exp(lp);
            loss -= t[a] * lp;
            ent -= exp(lp) * lp;
        }
    }
    if (entropy)
        *entropy = ent / N;
    return loss / N;
}

void F(policy_ce_backward)(R *dlogits, const R *probs, const R *pi, const uint8_t *legal, int N,
                           int A, R scale)
{
    for (int n = 0; n < N; n++) {
        const R *p = probs + (size_t)n * A, *t = pi + (size_t)n * A;
        const uint8_t *m = legal + (size_t)n * A;
        R *d = dlogits + (size_t)n * A;
        double tp = 0;
        for (int a = 0; a < A; a++)
            if (m[a])
                tp += t[a];
        for (int a = 0; a < A; a++)
            if (m[a])
                d[a] += scale * ((R)tp * p[a] - t[a]);
    }
}

double F(value_mse_forward)(const R *v, const R *z, int N, int P)
{
    double s = 0;
    for (size_t i = 0; i < (size_t)N * P; i++) {
        double e = (double)v[i] - z[i];
        s += e * e;
    }
    return s / ((double)N * P);
}

void F(value_mse_backward)(R *dv, const R *v, const R *z, int N, int P, R scale)
{
    R k = scale * 2 / (R)((size_t)N * P);
    for (size_t i = 0; i < (size_t)N * P; i++)
        dv[i] += k * (v[i] - z[i]);
}
