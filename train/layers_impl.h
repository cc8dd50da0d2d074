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

size_t F(conv3x3_scratch)(conv_dims d)
{
    size_t T = d.hex ? 7 : 9;
    size_t cmax = (size_t)(d.IC > d.OC ? d.IC : d.OC);
    size_t col = cmax * T * (size_t)conv_chunk(d) * (size_t)d.H * d.W;
    return col + (size_t)d.OC * d.IC * T;
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

/* Part `part` of nparts: the weight gradient of input channels [i0, i1) (their im2col
 * rows over the whole batch: no reduction between parts) and the input gradient of
 * samples [s0, s1). */
static void F(conv3x3_bwd)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                           R *scratch, int accumulate, int part, int nparts)
{
    const int *taps = d.hex ? taps_hex : taps_square;
    int T = d.hex ? 7 : 9, hw = d.H * d.W, nb = conv_chunk(d), ldc = d.N * hw;
    size_t ltot = (size_t)d.N * hw;
    R *wbuf = scratch;
    R *col = scratch + (size_t)d.OC * d.IC * T;
    int i0 = (int)((long long)d.IC * part / nparts), i1 = (int)((long long)d.IC * (part + 1) / nparts);
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
    int s0 = (int)((long long)d.N * part / nparts), s1 = (int)((long long)d.N * (part + 1) / nparts);
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
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, 1, 0, 1);
}

void F(conv3x3_backward_set)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                             R *scratch)
{
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, 0, 0, 1);
}

void F(conv3x3_backward_part)(R *dinp, R *dw, const R *dout, const R *in, const R *w, conv_dims d,
                              R *scratch, int accumulate, int part, int nparts)
{
    F(conv3x3_bwd)(dinp, dw, dout, in, w, d, scratch, accumulate, part, nparts);
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

/* Sum and sum of squares of (x[j] - k) over j < M, in double (SIMD partial sums per
 * block of 1024, then double). */
HOT static void F(bn_shifted_sums)(const R *x, int M, R k, double *s_out, double *s2_out)
{
    double s = 0, s2 = 0;
    for (int j0 = 0; j0 < M; j0 += 1024) {
        int j1 = M - j0 < 1024 ? M : j0 + 1024;
        R a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
        for (int j = j0; j < j1; j++) {
            R e = x[j] - k;
            a += e;
            b += e * e;
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
                                    R *run_var, const R *sk, int relu, int M, R eps)
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
        F(bn_shifted_sums)(x, M, x[0], &s, &s2);
        F(bn_channel_apply)(out + (size_t)c * M, mean + c, invstd + c, x, x[0], s, s2, M,
                            gamma[c], beta[c], run_mean ? run_mean + c : NULL,
                            run_mean ? run_var + c : NULL, skip ? skip + (size_t)c * M : NULL,
                            relu, M, eps);
    }
}

void F(bn_partial_sums)(double *s, double *s2, const R *in, const R *shift, int C, int M)
{
    for (int c = 0; c < C; c++)
        F(bn_shifted_sums)(in + (size_t)c * M, M, shift[c], s + c, s2 + c);
}

void F(bn_act_forward_sums)(R *out, R *mean, R *invstd, const R *in, const R *shift,
                            const double *s, const double *s2, double Mg, const R *gamma,
                            const R *beta, R *run_mean, R *run_var, const R *skip, int relu,
                            int C, int M, R eps)
{
    for (int c = 0; c < C; c++)
        F(bn_channel_apply)(out + (size_t)c * M, mean + c, invstd + c, in + (size_t)c * M,
                            shift[c], s[c], s2[c], Mg, gamma[c], beta[c],
                            run_mean ? run_mean + c : NULL, run_mean ? run_var + c : NULL,
                            skip ? skip + (size_t)c * M : NULL, relu, M, eps);
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

/* One channel's sums for the backward: sum dy and sum dy * (x - mu) over M, with
 * dy = dout masked by the ReLU's output o (o NULL: no ReLU). */
HOT static void F(bn_grad_sums)(const R *restrict x, const R *restrict dy, const R *restrict o,
                                R mu, int M, double *sdy_out, double *sdyx_out)
{
    double sdy = 0, sdyx = 0;
    for (int j0 = 0; j0 < M; j0 += 1024) { /* SIMD partial sums per block, then double */
        int j1 = M - j0 < 1024 ? M : j0 + 1024;
        R a = 0, b = 0;
        if (o) {
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
                                 double sdyx, double Mg, int accumulate, int M)
{
    R k = gamma * is;
    R a = -k * (R)(sdy / Mg) + k * mu * is * (R)(sdyx / Mg), b = -k * is * (R)(sdyx / Mg);
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
        F(bn_grad_sums)(x, dy, o, mean[c], M, &sdy, &sdyx);
        sdyx *= invstd[c];
        if (dgamma)
            dgamma[c] += (R)sdyx;
        if (dbeta)
            dbeta[c] += (R)sdy;
        if (dinp)
            F(bn_channel_dx)(dinp + (size_t)c * M, dy, o, x, gamma[c], mean[c], invstd[c], sdy,
                             sdyx, M, accumulate, M);
    }
}

void F(bn_backward_partial_sums)(double *sdy, double *sdyx, R *dgamma, R *dbeta, const R *dout,
                                 const R *out, const R *in, const R *mean, const R *invstd,
                                 int C, int M)
{
    for (int c = 0; c < C; c++) {
        F(bn_grad_sums)(in + (size_t)c * M, dout + (size_t)c * M, out ? out + (size_t)c * M : NULL,
                        mean[c], M, sdy + c, sdyx + c);
        sdyx[c] *= invstd[c];
        if (dgamma)
            dgamma[c] += (R)sdyx[c];
        if (dbeta)
            dbeta[c] += (R)sdy[c];
    }
}

void F(bn_act_backward_sums)(R *dinp, const R *dout, const R *out, const R *in, const R *gamma,
                             const R *mean, const R *invstd, const double *sdy,
                             const double *sdyx, double Mg, int C, int M, int accumulate)
{
    for (int c = 0; c < C; c++)
        F(bn_channel_dx)(dinp + (size_t)c * M, dout + (size_t)c * M,
                         out ? out + (size_t)c * M : NULL, in + (size_t)c * M, gamma[c], mean[c],
                         invstd[c], sdy[c], sdyx[c], Mg, accumulate, M);
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
