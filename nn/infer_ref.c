/* infer_ref.c — the reference forward: the oracle (see infer.h). Plain loops over NCHW
 * arrays, one layer at a time, exactly as DESIGN.md §4 reads. Keep it obvious. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

void nn_masked_softmax(int actions, const float *logits, const uint8_t *legal, float *out)
{
    float mx = -INFINITY;
    for (int a = 0; a < actions; a++)
        if ((!legal || legal[a]) && logits[a] > mx)
            mx = logits[a];
    if (mx == -INFINITY) {
        memset(out, 0, sizeof(float) * (size_t)actions);
        return;
    }
    double sum = 0;
    for (int a = 0; a < actions; a++) {
        float e = (!legal || legal[a]) ? expf(logits[a] - mx) : 0.0f;
        out[a] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (int a = 0; a < actions; a++)
        out[a] *= inv;
}

/* out[O][H][W] = sum over i, taps of w[O][I][K][K] * in[I][H][W], zero padding K/2. */
static void conv_forward(float *out, const float *in, const float *w, int O, int I, int K, int H,
                         int W)
{
    int pad = K / 2;
    memset(out, 0, sizeof(float) * (size_t)O * H * W);
    for (int o = 0; o < O; o++)
        for (int i = 0; i < I; i++)
            for (int kh = 0; kh < K; kh++)
                for (int kw = 0; kw < K; kw++) {
                    float wt = w[((o * I + i) * K + kh) * K + kw];
                    for (int y = 0; y < H; y++) {
                        int yy = y + kh - pad;
                        if (yy < 0 || yy >= H)
                            continue;
                        for (int x = 0; x < W; x++) {
                            int xx = x + kw - pad;
                            if (xx < 0 || xx >= W)
                                continue;
                            out[(o * H + y) * W + x] += wt * in[(i * H + yy) * W + xx];
                        }
                    }
                }
}

/* Eval-mode batch norm in place over x[C][HW]. */
static void bn_forward(float *x, const nn_layout *L, const float *P, nn_bn_ix b, int C, int HW)
{
    const float *g = nn_tensor_cptr(L, P, b.gamma), *be = nn_tensor_cptr(L, P, b.beta);
    const float *m = nn_tensor_cptr(L, P, b.mean), *v = nn_tensor_cptr(L, P, b.var);
    for (int c = 0; c < C; c++) {
        float inv = 1.0f / sqrtf(v[c] + NN_BN_EPS);
        for (int i = 0; i < HW; i++)
            x[c * HW + i] = g[c] * (x[c * HW + i] - m[c]) * inv + be[c];
    }
}

static void relu_forward(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] > 0 ? x[i] : 0;
}

/* out[O] = W[O][I] in[I] + b[O] */
static void dense_forward(float *out, const float *in, const float *w, const float *b, int O, int I)
{
    for (int o = 0; o < O; o++) {
        float s = b[o];
        for (int i = 0; i < I; i++)
            s += w[(size_t)o * I + i] * in[i];
        out[o] = s;
    }
}

int nn_ref_forward(const nn_params *p, int rows, int cols, int n, const float *input,
                   const uint8_t *legal, float *policy, float *values, float *logits, char *err,
                   size_t errlen)
{
    const nn_layout *L = &p->layout;
    const nn_spec *s = &L->spec;
    const float *P = p->data;
    if (nn_policy_is_fc(s) && (rows != s->rows || cols != s->cols)) {
        snprintf(err, errlen, "%s policy head: the net runs only on %dx%d, not %dx%d",
                 nn_policy_name(s->policy), s->rows, s->cols, rows, cols);
        return -1;
    }
    int C = s->channels, H = s->head_channels, V = s->value_hidden, HW = rows * cols;
    int A = s->policy == NN_POLICY_CONV ? HW : s->actions;
    float *x = malloc(sizeof(float) * (size_t)C * HW);
    float *t = malloc(sizeof(float) * (size_t)C * HW);
    float *u = malloc(sizeof(float) * (size_t)C * HW);
    float *hp = malloc(sizeof(float) * (size_t)H * HW);
    float *hv = malloc(sizeof(float) * (size_t)H * HW);
    float *lg = malloc(sizeof(float) * (size_t)A);
    int W = nn_value_pool_width(s); /* hid: the pool (H means, then H maxima), then V */
    float *hid = malloc(sizeof(float) * (size_t)(W + V));
    if (!x || !t || !u || !hp || !hv || !lg || !hid) {
        free(x), free(t), free(u), free(hp), free(hv), free(lg), free(hid);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int b = 0; b < n; b++) {
        const float *in = input + (size_t)b * s->planes * HW;
        /* stem */
        conv_forward(x, in, nn_tensor_cptr(L, P, L->stem_conv), C, s->planes, 3, rows, cols);
        bn_forward(x, L, P, L->stem_bn, C, HW);
        relu_forward(x, (size_t)C * HW);
        /* trunk */
        for (int k = 0; k < s->blocks; k++) {
            const nn_block_ix *B = &L->block[k];
            conv_forward(t, x, nn_tensor_cptr(L, P, B->conv1), C, C, 3, rows, cols);
            bn_forward(t, L, P, B->bn1, C, HW);
            relu_forward(t, (size_t)C * HW);
            conv_forward(u, t, nn_tensor_cptr(L, P, B->conv2), C, C, 3, rows, cols);
            bn_forward(u, L, P, B->bn2, C, HW);
            if (s->trunk == NN_TRUNK_RESIDUAL)
                for (int i = 0; i < C * HW; i++)
                    u[i] += x[i];
            relu_forward(u, (size_t)C * HW);
            memcpy(x, u, sizeof(float) * (size_t)C * HW);
        }
        /* policy head */
        conv_forward(hp, x, nn_tensor_cptr(L, P, L->pol_conv), H, C, 1, rows, cols);
        bn_forward(hp, L, P, L->pol_bn, H, HW);
        relu_forward(hp, (size_t)H * HW);
        if (s->policy == NN_POLICY_CONV) {
            conv_forward(lg, hp, nn_tensor_cptr(L, P, L->pol_out_w), 1, H, 1, rows, cols);
            float bias = nn_tensor_cptr(L, P, L->pol_out_b)[0];
            for (int a = 0; a < A; a++)
                lg[a] += bias;
        } else {
            dense_forward(lg, hp, nn_tensor_cptr(L, P, L->pol_out_w),
                          nn_tensor_cptr(L, P, L->pol_out_b), A, H * HW);
        }
        if (logits)
            memcpy(logits + (size_t)b * A, lg, sizeof(float) * (size_t)A);
        /* the action-value head's priors: softmax of y_a / T (spec.h) */
        float scale = nn_policy_logit_scale(s);
        for (int a = 0; a < A && scale != 1.0f; a++)
            lg[a] *= scale;
        nn_masked_softmax(A, lg, legal ? legal + (size_t)b * A : NULL, policy + (size_t)b * A);
        /* value head */
        conv_forward(hv, x, nn_tensor_cptr(L, P, L->val_conv), H, C, 1, rows, cols);
        bn_forward(hv, L, P, L->val_bn, H, HW);
        relu_forward(hv, (size_t)H * HW);
        for (int h = 0; h < H; h++) {
            double sum = 0;
            float mx = hv[h * HW];
            for (int i = 0; i < HW; i++) {
                sum += hv[h * HW + i];
                mx = hv[h * HW + i] > mx ? hv[h * HW + i] : mx;
            }
            hid[h] = (float)(sum / HW);
            if (W > H)
                hid[H + h] = mx;
        }
        dense_forward(hid + W, hid, nn_tensor_cptr(L, P, L->val_fc1_w),
                      nn_tensor_cptr(L, P, L->val_fc1_b), V, W);
        relu_forward(hid + W, (size_t)V);
        float out[NN_VALUE_MAX_OUTPUTS];
        dense_forward(out, hid + W, nn_tensor_cptr(L, P, L->val_fc2_w),
                      nn_tensor_cptr(L, P, L->val_fc2_b), nn_value_outputs(s), V);
        nn_value_finish(s, out, values + (size_t)b * s->players);
    }
    free(x), free(t), free(u), free(hp), free(hv), free(lg), free(hid);
    return 0;
}
