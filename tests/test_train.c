/* The trainer: the whole network's gradient against finite differences (both lattices,
 * residual and plain trunks, conv and dense policy heads), the eval-mode forward
 * against nn's reference forward (the oracle), and training behaviour (overfitting,
 * a value rule, augmentation, resume, hex masks). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <hdf5.h>

#include "nn/h5util.h"

#include "engine/rng.h"
#include "nn/infer.h"
#include "nn/params.h"
#include "engine/symmetry.h"
#include "nn/checkpoint.h"
#include "sample_gen.h"
#include "train/dataset.h"
#include "train/layers.h"
#include "train/net_train.h"
#include "train/optim.h"
#include "train/trainer.h"

static nn_spec tiny_spec(game_lattice lat, int rows, int cols, int blocks, int C, int players,
                         nn_policy_kind pol, nn_trunk_kind trunk)
{
    nn_spec s = {0};
    s.planes = 3;
    s.rows = rows;
    s.cols = cols;
    s.lattice = lat;
    s.players = players;
    s.actions = rows * cols;
    s.blocks = blocks;
    s.channels = C;
    s.head_channels = 3;
    s.value_hidden = 5;
    s.policy = pol;
    s.trunk = trunk;
    if (pol == NN_POLICY_ACTION_VALUE)
        s.value = NN_VALUE_SCORE; /* the head needs a game with a score */
    char err[256];
    ck_assert_msg(nn_spec_validate(&s, err, sizeof err) == 0, "%s", err);
    return s;
}

/* Random BN parameters and running statistics, so BN is not the identity. */
static void randomize_bn(nn_params *p, rng *r)
{
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++) {
        float *x = p->data + L->t[i].offset;
        for (size_t j = 0; j < L->t[i].size; j++) {
            switch (L->t[i].kind) {
            case NN_T_BN_GAMMA: x[j] = (float)(0.5 + rng_uniform(r)); break;
            case NN_T_BN_BETA: x[j] = (float)(0.4 * rng_uniform(r) - 0.2); break;
            case NN_T_BN_MEAN: x[j] = (float)(0.2 * rng_uniform(r) - 0.1); break;
            case NN_T_BN_VAR: x[j] = (float)(0.5 + rng_uniform(r)); break;
            case NN_T_BIAS: x[j] = (float)(0.2 * rng_uniform(r) - 0.1); break;
            default: break;
            }
        }
    }
}

/* A random batch: planes in [0,1], legal masks with a few illegal points, pi on legal
 * moves, z in [-1, 1]. */
typedef struct batch {
    int n, planes, A, P;
    float *x, *pi, *z;
    uint8_t *legal;
} batch;

static batch make_batch(const nn_spec *s, int n, rng *r)
{
    batch b = {n, s->planes, s->actions, s->players, NULL, NULL, NULL, NULL};
    int hw = s->rows * s->cols;
    b.x = malloc(sizeof(float) * (size_t)n * s->planes * hw);
    b.pi = calloc((size_t)n * b.A, sizeof(float));
    b.z = malloc(sizeof(float) * (size_t)n * b.P);
    b.legal = malloc((size_t)n * b.A);
    for (int i = 0; i < n * s->planes * hw; i++)
        b.x[i] = (float)rng_uniform(r);
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int a = 0; a < b.A; a++) {
            b.legal[i * b.A + a] = rng_uniform(r) < 0.8 || a == 0;
            if (b.legal[i * b.A + a]) {
                b.pi[i * b.A + a] = (float)rng_uniform(r);
                sum += b.pi[i * b.A + a];
            }
        }
        for (int a = 0; a < b.A; a++)
            b.pi[i * b.A + a] = (float)(b.pi[i * b.A + a] / sum);
        for (int p = 0; p < b.P; p++) /* the score head's targets are h(points): larger */
            b.z[i * b.P + p] = (float)((2 * rng_uniform(r) - 1) * (s->value == NN_VALUE_SCORE ? 20 : 1));
        if (s->value == NN_VALUE_WDL) {
            /* two-player outcomes: a win, a draw, a loss, then fractional ones (q_ratio) */
            if (i % 5 < 3)
                b.z[i * 2] = (float)(1 - i % 5);
            b.z[i * 2 + 1] = -b.z[i * 2];
        }
    }
    return b;
}

static void free_batch(batch *b) { free(b->x), free(b->pi), free(b->z), free(b->legal); }

/* Whether point q of a rows x cols tensor is on a side x side board at its top left. */
static int on_board(const nn_spec *s, int q, int side)
{
    return q / s->cols < side && q % s->cols < side;
}

/* Mixed board sizes: sample i of b is a side[i] x side[i] board padded at the top left
 * into s's rows x cols: no legal move and no pi off it (pi renormalised over the rest;
 * the top-left point stays legal). The planes off the board keep their random values,
 * which the forward must ignore (a sample file's padding is 0). */
static void pad_batch(batch *b, const nn_spec *s, const uint8_t *side)
{
    for (int i = 0; i < b->n; i++) {
        float *pi = b->pi + (size_t)i * b->A;
        uint8_t *lg = b->legal + (size_t)i * b->A;
        double sum = 0;
        for (int a = 0; a < b->A; a++) {
            if (!on_board(s, a, side[i]))
                lg[a] = 0, pi[a] = 0;
            sum += pi[a];
        }
        if (sum == 0)
            lg[0] = 1, pi[0] = 1, sum = 1;
        for (int a = 0; a < b->A; a++)
            pi[a] = (float)(pi[a] / sum);
    }
}

#define VW 0.7
#define WD 0.01

static double *to_d(const float *x, size_t n)
{
    double *d = malloc(sizeof(double) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

typedef struct dctx {
    train_net_f64 *t;
    double *params, *x, *pi, *z;
    const uint8_t *legal;
    int n;
} dctx;

static double dloss(dctx *c)
{
    train_losses l;
    train_net_forward_f64(c->t, c->params, c->n, c->x, c->pi, c->legal, c->z, TRAIN_MODE_TRAIN, VW, WD, &l);
    return l.total;
}

static int masked_entry(const nn_spec *s, const nn_tensor *T, size_t j)
{
    return s->lattice == GAME_LATTICE_HEX && T->kind == NN_T_CONV_WEIGHT && T->ndim == 4 &&
           T->shape[2] == 3 && (j % 9 == 0 || j % 9 == 8);
}

/* Whole-net gradient: the double build's backward against central differences of the
 * double forward (h = 1e-6) on every parameter: |num - an| <= 1e-7 + 1e-5 |num|; then
 * the float build's gradient (what training uses) against the double one, per tensor:
 * |f - d| <= 2e-3 * max|d| + 1e-5. BN statistics and masked taps: exactly 0. */
static void grad_case_boards(nn_spec s, uint64_t seed, const uint8_t *side)
{
    char err[256];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    nn_params_init_he(p, seed);
    rng r;
    rng_seed(&r, seed);
    randomize_bn(p, &r);
    const int n = 3;
    batch b = make_batch(&s, n, &r);
    if (side)
        pad_batch(&b, &s, side);
    const nn_layout *L = &p->layout;
    int hw = s.rows * s.cols;
    /* double */
    dctx c = {train_net_new_f64(L, n, err, sizeof err), to_d(p->data, L->count),
              to_d(b.x, (size_t)n * s.planes * hw), to_d(b.pi, (size_t)n * s.actions),
              to_d(b.z, (size_t)n * s.players), b.legal, n};
    ck_assert_ptr_nonnull(c.t);
    train_net_set_boards_f64(c.t, side, side);
    /* the opponent-reply head's targets: a distribution over every point, sample 1 with
     * none (all 0: no reply known), sample 2 with half its mass (a policy weight) */
    float *opp = NULL;
    double *dopp = NULL;
    if (s.aux_policy) {
        opp = calloc((size_t)n * s.actions, sizeof(float));
        for (int i = 0; i < n; i++) {
            if (i == 1)
                continue;
            double sum = 0;
            for (int a = 0; a < s.actions; a++)
                sum += opp[i * s.actions + a] = (float)rng_uniform(&r);
            for (int a = 0; a < s.actions; a++)
                opp[i * s.actions + a] = (float)(opp[i * s.actions + a] / sum * (i == 2 ? 0.5 : 1));
        }
        dopp = to_d(opp, (size_t)n * s.actions);
        train_net_set_aux_f64(c.t, dopp, 0.3);
    }
    /* the ownership head's targets: every class somewhere, sample 1 with no owner known
     * (all -1) and sample 2 with some unknown points */
    int8_t *own = NULL;
    if (s.aux_owner) {
        own = malloc((size_t)n * hw);
        for (int i = 0; i < n * hw; i++) {
            int bi = i / hw;
            own[i] = bi == 1 || (bi == 2 && i % 3 == 0) ? -1 : (int8_t)rng_below(&r, (uint32_t)s.players + 1);
        }
        train_net_set_owner_f64(c.t, own, 0.4);
    }
    /* the action-value head's targets (h scale): sample 1 with none (all NaN), sample 2
     * with a target on some moves only, the others on every move */
    float *qa = NULL;
    double *dqa = NULL;
    if (s.policy == NN_POLICY_ACTION_VALUE) {
        qa = malloc(sizeof(float) * (size_t)n * s.actions);
        for (int i = 0; i < n * s.actions; i++) {
            int bi = i / s.actions;
            qa[i] = bi == 1 || (bi == 2 && i % 2 == 0) ? NAN : (float)(4 * rng_uniform(&r) - 1);
        }
        dqa = to_d(qa, (size_t)n * s.actions);
        train_net_set_action_values_f64(c.t, dqa, 0.7);
    }
    double *dg = calloc(L->count, sizeof(double));
    dloss(&c);
    train_net_backward_f64(c.t, c.params, dg, VW, WD);
    /* float */
    train_net *t = train_net_new(L, n, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    train_net_set_boards(t, side, side);
    float *fg = calloc(L->count, sizeof(float));
    train_losses fl;
    if (s.aux_policy)
        train_net_set_aux(t, opp, 0.3);
    if (s.aux_owner)
        train_net_set_owner(t, own, 0.4);
    if (qa)
        train_net_set_action_values(t, qa, 0.7);
    train_net_forward(t, p->data, n, b.x, b.pi, b.legal, b.z, TRAIN_MODE_TRAIN, VW, WD, &fl);
    train_net_backward(t, p->data, fg, VW, WD);
    if (qa) {
        /* no policy CE; the action-value MSE is in the total: per sample the mean over
         * its moves with a target, then the batch mean (sample 1 adds nothing); the
         * probabilities are the softmax of the outputs over the legal moves (T = 1) */
        ck_assert(fl.policy == 0);
        ck_assert(fabs(fl.total - (VW * fl.value + fl.l2 + 0.7 * fl.action_value)) < 1e-4);
        const float *y = train_net_logits(t), *pr = train_net_probs(t);
        double want = 0;
        for (int i = 0; i < n; i++) {
            double sq = 0, mx = -INFINITY, sum = 0;
            int k = 0;
            for (int a = 0; a < s.actions; a++) {
                float q = qa[i * s.actions + a];
                if (!isnan(q))
                    sq += (y[i * s.actions + a] - q) * (y[i * s.actions + a] - q), k++;
                if (b.legal[i * s.actions + a])
                    mx = fmax(mx, y[i * s.actions + a]);
            }
            want += k ? sq / k : 0;
            for (int a = 0; a < s.actions; a++)
                sum += b.legal[i * s.actions + a] ? exp(y[i * s.actions + a] - mx) : 0;
            for (int a = 0; a < s.actions; a++)
                ck_assert_double_eq_tol(pr[i * s.actions + a],
                                        b.legal[i * s.actions + a] ? exp(y[i * s.actions + a] - mx) / sum : 0,
                                        1e-5);
        }
        ck_assert(fl.action_value > 0.1);
        ck_assert_double_eq_tol(fl.action_value, want / n, 1e-4 * (1 + want / n));
    }
    if (s.aux_policy) {
        /* the aux loss is in the total, and the aux head learns */
        ck_assert(fl.aux > 0.5);
        ck_assert(fabs(fl.total - (fl.policy + VW * fl.value + fl.l2 + 0.3 * fl.aux +
                                   (s.aux_owner ? 0.4 * fl.owner : 0))) < 1e-4);
        double gs = 0;
        for (size_t j = 0; j < L->t[L->pol_aux_w].size; j++)
            gs += fabs(fg[L->t[L->pol_aux_w].offset + j]);
        ck_assert(gs > 1e-6);
    }
    if (s.aux_owner) {
        /* the ownership loss is in the total, and is the mean CE over the known points of
         * each sample, averaged over the batch: check it by hand from the probabilities */
        ck_assert(fl.owner > 0.1);
        ck_assert(fabs(fl.total - (fl.policy + VW * fl.value + fl.l2 + 0.4 * fl.owner +
                                   (s.aux_policy ? 0.3 * fl.aux : 0))) < 1e-4);
        const float *op = train_net_owner_probs(t);
        ck_assert_ptr_nonnull(op);
        double ce = 0;
        size_t M = (size_t)n * hw;
        for (size_t m = 0; m < M; m++) {
            double sum = 0;
            for (int k = 0; k <= s.players; k++)
                sum += op[(size_t)k * M + m];
            ck_assert_double_eq_tol(sum, 1, 1e-5);
            /* each sample's mean over its own board (the padding's labels ignored) */
            int bi = (int)(m / (size_t)hw), pts = side ? side[bi] * side[bi] : hw;
            if (own[m] >= 0 && (!side || on_board(&s, (int)(m % (size_t)hw), side[bi])))
                ce -= log(op[(size_t)own[m] * M + m]) * hw / pts;
        }
        ck_assert_double_eq_tol(fl.owner, ce / ((double)hw * n), 1e-4);
    }
    const double h = 1e-6;
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *T = &L->t[i];
        double *x = c.params + T->offset;
        const double *g = dg + T->offset;
        const float *f = fg + T->offset;
        if (!nn_tensor_trained(T->kind)) {
            for (size_t j = 0; j < T->size; j++)
                ck_assert_msg(g[j] == 0.0 && f[j] == 0.0f, "%s: a BN statistic got a gradient", T->name);
            continue;
        }
        double mx = 0;
        for (size_t j = 0; j < T->size; j++) {
            if (masked_entry(&s, T, j)) {
                ck_assert_msg(g[j] == 0.0 && f[j] == 0.0f, "%s[%zu]: masked tap has a gradient", T->name, j);
                continue;
            }
            double keep = x[j];
            x[j] = keep + h;
            double lp = dloss(&c);
            x[j] = keep - h;
            double lm = dloss(&c);
            x[j] = keep;
            double num = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(num - g[j]) <= 1e-7 + 1e-5 * fabs(num), "%s[%zu]: analytic %.10g numeric %.10g",
                          T->name, j, g[j], num);
            mx = fmax(mx, fabs(g[j]));
        }
        for (size_t j = 0; j < T->size; j++)
            ck_assert_msg(fabs(f[j] - g[j]) <= 2e-3 * mx + 1e-5, "%s[%zu]: float %.8g vs double %.8g",
                          T->name, j, (double)f[j], g[j]);
    }
    free(dg), free(fg), free(c.params), free(c.x), free(c.pi), free(c.z), free(opp), free(dopp), free(own);
    free(qa), free(dqa);
    free_batch(&b);
    train_net_free_f64(c.t);
    train_net_free(t);
    nn_params_free(p);
}

static void grad_case(nn_spec s, uint64_t seed)
{
    grad_case_boards(s, seed, NULL);
}

START_TEST(grad_square_residual)
{
    grad_case(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL), 11);
}
END_TEST

/* Trunks wide enough for Winograd (16 channels: CONV_AUTO picks it for the blocks'
 * convs, im2col for the 3-plane stem), with tiles by rows (12 columns) and by boards
 * (5 columns): the whole network's gradient against finite differences, and the float
 * trainer against the same net with every conv by im2col (losses and gradients equal
 * up to rounding). */
static void winograd_trunk_case(int rows, int cols, int n, uint64_t seed)
{
    nn_spec s = tiny_spec(GAME_LATTICE_SQUARE, rows, cols, 1, 16, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
    grad_case(s, seed);
    char err[256];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    nn_params_init_he(p, seed + 1);
    rng r;
    rng_seed(&r, seed + 2);
    /* several chunks, the last one partial, in a larger context; Winograd with the
     * host's threads, with 3 (parts of the batch that do not start at a chunk's
     * boundary, their weight gradients summed by conv3x3_backward_reduce) and 1 */
    batch b = make_batch(&s, n, &r);
    const nn_layout *L = &p->layout;
    float *g[4];
    train_losses l[4];
    for (int k = 0; k < 4; k++) {
        train_net *t = train_net_new_threads(L, n + 3, k == 2 ? 3 : k == 3 ? 1 : 0, err, sizeof err);
        ck_assert_ptr_nonnull(t);
        train_net_set_conv(t, k == 1 ? CONV_IM2COL : CONV_AUTO);
        g[k] = calloc(L->count, sizeof(float));
        train_net_forward(t, p->data, n, b.x, b.pi, b.legal, b.z, TRAIN_MODE_TRAIN, VW, WD, &l[k]);
        train_net_backward(t, p->data, g[k], VW, WD);
        train_net_free(t);
    }
    double mx = 0;
    for (size_t j = 0; j < L->count; j++)
        mx = fmax(mx, fabs(g[1][j]));
    ck_assert(mx > 0);
    for (int k = 0; k < 4; k++) {
        if (k == 1)
            continue;
        ck_assert_double_eq_tol(l[k].total, l[1].total, 1e-5 * fabs(l[1].total));
        for (size_t j = 0; j < L->count; j++)
            ck_assert_msg(fabs(g[k][j] - g[1][j]) <= 1e-4 * mx,
                          "grad[%zu]: winograd (%d) %.8g im2col %.8g", j, k, (double)g[k][j],
                          (double)g[1][j]);
    }
    for (int k = 0; k < 4; k++)
        free(g[k]);
    free_batch(&b);
    nn_params_free(p);
}

START_TEST(grad_winograd_trunk)
{
    winograd_trunk_case(3, 12, 37, 13);
    winograd_trunk_case(4, 5, 37, 23);
    winograd_trunk_case(4, 5, 100, 33); /* by boards: 3 parts of 33-34 boards, chunks of 16 */
}
END_TEST

START_TEST(grad_hex_residual)
{
    grad_case(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL), 12);
}
END_TEST

START_TEST(grad_square_plain_dense)
{
    grad_case(tiny_spec(GAME_LATTICE_SQUARE, 3, 4, 2, 3, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN), 13);
}
END_TEST

static nn_spec zerosum(nn_spec s)
{
    s.value = NN_VALUE_ZEROSUM;
    return s;
}

/* The zero-sum value head (2 and 3 players): gradients against finite differences. */
START_TEST(grad_zerosum_value)
{
    grad_case(zerosum(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 14);
    grad_case(zerosum(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 15);
}
END_TEST

static nn_spec wdl(nn_spec s)
{
    s.value = NN_VALUE_WDL;
    return s;
}

/* The win/draw/loss head (2 players): the cross-entropy's gradient against finite
 * differences, targets a win, a draw and a loss (n = 3), on square and hex, conv and
 * dense policy (its mean_max pooling: grad_value_pool_mean_max). */
START_TEST(grad_wdl_value)
{
    grad_case(wdl(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 31);
    grad_case(wdl(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 32);
    grad_case(wdl(tiny_spec(GAME_LATTICE_SQUARE, 3, 4, 2, 3, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN)), 33);
}
END_TEST

static nn_spec mean_max(nn_spec s)
{
    s.value_pool = NN_POOL_MEAN_MAX;
    return s;
}

/* The value head's mean and max pooling (KataGo's global pooling): gradients against
 * finite differences, 2 and 3 players, square and hex, conv and dense policy. */
START_TEST(grad_value_pool_mean_max)
{
    grad_case(mean_max(wdl(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))),
              34);
    grad_case(mean_max(zerosum(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))),
              18);
    grad_case(mean_max(zerosum(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))), 19);
    grad_case(mean_max(tiny_spec(GAME_LATTICE_SQUARE, 3, 4, 2, 3, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN)), 20);
}
END_TEST

static nn_spec aux_policy(nn_spec s)
{
    s.aux_policy = true;
    return s;
}

/* The opponent-reply head (net.aux_policy): gradients against finite differences, with
 * targets that are whole, absent and half-weighted, 2 and 3 players, square and hex. */
START_TEST(grad_aux_policy)
{
    grad_case(aux_policy(zerosum(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))),
              21);
    grad_case(aux_policy(mean_max(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))),
              22);
}
END_TEST

static nn_spec aux_owner(nn_spec s)
{
    s.aux_owner = true;
    return s;
}

/* The ownership head (net.aux_owner): gradients against finite differences with known,
 * unknown and partly known maps, 2 and 3 players, square and hex, beside the aux policy. */
START_TEST(grad_aux_owner)
{
    grad_case(aux_owner(zerosum(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))),
              23);
    grad_case(aux_owner(aux_policy(mean_max(tiny_spec(GAME_LATTICE_HEX, 5, 5, 1, 4, 3, NN_POLICY_CONV,
                                                      NN_TRUNK_RESIDUAL)))),
              24);
}
END_TEST

/* The score head (2048: h(points to come), linear, one player): gradients against finite
 * differences, with targets in its scale (tens, not [-1, 1]). */
/* ---- mixed board sizes (train_net_set_boards) ---------------------------------- */

/* Boards of several sizes in one batch (4x4 and 5x5 padded into a 6x6 net beside a full
 * one): the masked forward's whole-network gradient against central finite differences
 * in double (every parameter), and float against double, as grad_case; with every head
 * that masks (the aux policy's softmax, the ownership loss, mean and max pooling), a
 * residual and a plain trunk. */
START_TEST(grad_mixed_boards)
{
    const uint8_t side[3] = {4, 6, 5};
    grad_case_boards(aux_owner(aux_policy(mean_max(zerosum(
                         tiny_spec(GAME_LATTICE_SQUARE, 6, 6, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))))),
                     51, side);
    grad_case_boards(wdl(tiny_spec(GAME_LATTICE_SQUARE, 6, 6, 2, 4, 2, NN_POLICY_CONV, NN_TRUNK_PLAIN)), 52,
                     side);
}
END_TEST

/* A batch of n samples of `small` x `small` boards, natively (x5, pi5, legal5, opp5,
 * own5 in the small net's shape) and padded at the top left into big x big (x7 and so
 * on: the planes' padding random, which the forward must ignore; no legal move, pi or
 * opp there; random owners there, which the ownership loss must ignore). */
typedef struct mixed_batch {
    int n;
    batch nat;       /* the native boards */
    float *x, *pi, *opp, *z, *opp_nat;
    uint8_t *legal;
    int8_t *own, *own_nat;
} mixed_batch;

static mixed_batch make_padded(const nn_spec *big, const nn_spec *small, int n, rng *r)
{
    mixed_batch m = {.n = n};
    m.nat = make_batch(small, n, r);
    int P = big->planes, A = big->actions, a5 = small->actions;
    m.x = malloc(sizeof(float) * (size_t)n * P * A);
    m.pi = calloc((size_t)n * A, sizeof(float));
    m.opp = calloc((size_t)n * A, sizeof(float));
    m.opp_nat = calloc((size_t)n * a5, sizeof(float));
    m.legal = calloc((size_t)n * A, 1);
    m.own = malloc((size_t)n * A);
    m.own_nat = malloc((size_t)n * a5);
    m.z = m.nat.z;
    for (int i = 0; i < n * P * A; i++)
        m.x[i] = (float)rng_uniform(r);
    for (int i = 0; i < n * A; i++)
        m.own[i] = (int8_t)rng_below(r, (uint32_t)big->players + 1);
    for (int b = 0; b < n; b++) {
        double sum = 0;
        for (int q = 0; q < a5; q++)
            sum += m.opp_nat[b * a5 + q] = (float)rng_uniform(r);
        for (int q = 0; q < a5; q++) {
            int at = b * A + (q / small->cols) * big->cols + q % small->cols;
            m.opp_nat[b * a5 + q] = (float)(m.opp_nat[b * a5 + q] / sum);
            m.opp[at] = m.opp_nat[b * a5 + q];
            m.pi[at] = m.nat.pi[b * a5 + q];
            m.legal[at] = m.nat.legal[b * a5 + q];
            m.own[at] = m.own_nat[b * a5 + q] = (int8_t)rng_below(r, (uint32_t)big->players + 1);
            for (int p = 0; p < P; p++)
                m.x[((size_t)b * P + p) * A + (at - b * A)] = m.nat.x[((size_t)b * P + p) * a5 + q];
        }
    }
    return m;
}

static void free_padded(mixed_batch *m)
{
    free(m->x), free(m->pi), free(m->opp), free(m->opp_nat), free(m->legal), free(m->own);
    free(m->own_nat);
    free_batch(&m->nat);
}

/* A double run: losses, gradient (count), probabilities (n, A) and the params after the
 * forward (its BN running statistics), for a batch on L with boards side (NULL: full). */
typedef struct f64_run {
    train_losses l;
    double *g, *params, *probs;
} f64_run;

static f64_run run_f64(const nn_layout *L, const float *params, int n, const float *x, const float *pi,
                       const uint8_t *legal, const float *z, const float *opp, const int8_t *own,
                       const uint8_t *side, train_mode mode)
{
    char err[256];
    const nn_spec *s = &L->spec;
    train_net_f64 *t = train_net_new_f64(L, n, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    f64_run o = {.g = calloc(L->count, sizeof(double)), .params = to_d(params, L->count)};
    double *dx = to_d(x, (size_t)n * s->planes * s->rows * s->cols), *dpi = to_d(pi, (size_t)n * s->actions);
    double *dz = to_d(z, (size_t)n * s->players), *dopp = to_d(opp, (size_t)n * s->actions);
    train_net_set_boards_f64(t, side, side);
    train_net_set_aux_f64(t, dopp, 0.3);
    train_net_set_owner_f64(t, own, 0.4);
    train_net_forward_f64(t, o.params, n, dx, dpi, legal, dz, mode, VW, WD, &o.l);
    if (mode == TRAIN_MODE_TRAIN) {
        double *keep = malloc(sizeof(double) * L->count);
        memcpy(keep, o.params, sizeof(double) * L->count);
        train_net_backward_f64(t, keep, o.g, VW, WD);
        free(keep);
    }
    o.probs = malloc(sizeof(double) * (size_t)n * s->actions);
    memcpy(o.probs, train_net_probs_f64(t), sizeof(double) * (size_t)n * s->actions);
    free(dx), free(dpi), free(dz), free(dopp);
    train_net_free_f64(t);
    return o;
}

static void free_run(f64_run *o) { free(o->g), free(o->params), free(o->probs); }

static void check_losses_equal(const train_losses *a, const train_losses *b, double tol, const char *what)
{
    const double x[7] = {a->policy, a->value, a->aux, a->owner, a->entropy, a->l2, a->total};
    const double y[7] = {b->policy, b->value, b->aux, b->owner, b->entropy, b->l2, b->total};
    for (int k = 0; k < 7; k++)
        ck_assert_msg(fabs(x[k] - y[k]) <= tol * (1 + fabs(y[k])), "%s: loss %d: %.12g vs %.12g", what, k,
                      x[k], y[k]);
}

/* The nets of the mixed-size tests: a 7x7 net and the same weights' 5x5 net (a conv
 * net's layout does not depend on the board), every head that masks. */
static nn_spec mixed_spec(int rows, int C)
{
    return aux_owner(aux_policy(mean_max(zerosum(
        tiny_spec(GAME_LATTICE_SQUARE, rows, rows, 1, C, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)))));
}

/* Gradients match: 5x5 samples padded into a 7x7 net with masks (training mode) give the
 * losses, the probabilities on the board, every gradient and the batch norms' running
 * statistics of the same weights on a native 5x5 net. Double: within 1e-9 of each
 * tensor's largest entry (the same sums in another order); float with 16 channels
 * (Winograd, whose 7x7 and 5x5 tiles round differently): within 1e-4. */
START_TEST(mixed_equals_native)
{
    char err[256];
    for (int prec = 0; prec < 2; prec++) {
        int C = prec ? 16 : 4, n = 6;
        nn_spec big = mixed_spec(7, C), small = mixed_spec(5, C);
        nn_params *p = nn_params_new(&big, err, sizeof err), *q = nn_params_new(&small, err, sizeof err);
        ck_assert(p && q && p->layout.count == q->layout.count);
        nn_params_init_he(p, 61 + prec);
        rng r;
        rng_seed(&r, 62 + prec);
        randomize_bn(p, &r);
        mixed_batch m = make_padded(&big, &small, n, &r);
        uint8_t side[6] = {5, 5, 5, 5, 5, 5};
        const nn_layout *L = &p->layout;
        if (prec == 0) {
            f64_run a = run_f64(L, p->data, n, m.x, m.pi, m.legal, m.z, m.opp, m.own, side, TRAIN_MODE_TRAIN);
            f64_run b = run_f64(&q->layout, p->data, n, m.nat.x, m.nat.pi, m.nat.legal, m.z, m.opp_nat,
                                m.own_nat, NULL, TRAIN_MODE_TRAIN);
            check_losses_equal(&a.l, &b.l, 1e-12, "double");
            ck_assert(a.l.aux > 0.1 && a.l.owner > 0.1);
            for (int i = 0; i < L->ntensors; i++) {
                const nn_tensor *T = &L->t[i];
                double mx = 0;
                for (size_t j = 0; j < T->size; j++)
                    mx = fmax(mx, fabs(b.g[T->offset + j]));
                for (size_t j = 0; j < T->size; j++) {
                    size_t k = T->offset + j;
                    ck_assert_msg(fabs(a.g[k] - b.g[k]) <= 1e-9 * mx + 1e-15, "%s[%zu]: padded %.12g native %.12g",
                                  T->name, j, a.g[k], b.g[k]);
                    ck_assert_msg(fabs(a.params[k] - b.params[k]) <= 1e-12 * (1 + fabs(b.params[k])),
                                  "%s[%zu]: running statistic %.12g vs %.12g", T->name, j, a.params[k], b.params[k]);
                }
            }
            for (int bi = 0; bi < n; bi++)
                for (int a5 = 0; a5 < 25; a5++) {
                    double pa = a.probs[bi * 49 + (a5 / 5) * 7 + a5 % 5], pb = b.probs[bi * 25 + a5];
                    ck_assert(fabs(pa - pb) <= 1e-12);
                }
            free_run(&a), free_run(&b);
        } else {
            train_net *t7 = train_net_new(L, n, err, sizeof err), *t5 = train_net_new(&q->layout, n, err, sizeof err);
            ck_assert(t7 && t5);
            train_net_set_boards(t7, side, side);
            train_net_set_aux(t7, m.opp, 0.3), train_net_set_aux(t5, m.opp_nat, 0.3);
            train_net_set_owner(t7, m.own, 0.4), train_net_set_owner(t5, m.own_nat, 0.4);
            nn_params *p7 = nn_params_clone(p), *p5 = nn_params_clone(p);
            float *g7 = calloc(L->count, sizeof(float)), *g5 = calloc(L->count, sizeof(float));
            train_losses l7, l5;
            train_net_forward(t7, p7->data, n, m.x, m.pi, m.legal, m.z, TRAIN_MODE_TRAIN, VW, WD, &l7);
            train_net_backward(t7, p7->data, g7, VW, WD);
            train_net_forward(t5, p5->data, n, m.nat.x, m.nat.pi, m.nat.legal, m.z, TRAIN_MODE_TRAIN, VW, WD, &l5);
            train_net_backward(t5, p5->data, g5, VW, WD);
            check_losses_equal(&l7, &l5, 1e-5, "float");
            for (int i = 0; i < L->ntensors; i++) {
                const nn_tensor *T = &L->t[i];
                const float *ga = nn_tensor_trained(T->kind) ? g7 : p7->data, *gb = nn_tensor_trained(T->kind) ? g5 : p5->data;
                double mx = 0;
                for (size_t j = 0; j < T->size; j++)
                    mx = fmax(mx, fabs(gb[T->offset + j]));
                for (size_t j = 0; j < T->size; j++)
                    ck_assert_msg(fabs(ga[T->offset + j] - gb[T->offset + j]) <= 1e-4 * mx + 1e-7,
                                  "float %s[%zu]: padded %.8g native %.8g", T->name, j, (double)ga[T->offset + j],
                                  (double)gb[T->offset + j]);
            }
            free(g7), free(g5);
            nn_params_free(p7), nn_params_free(p5);
            train_net_free(t7), train_net_free(t5);
        }
        free_padded(&m);
        nn_params_free(p), nn_params_free(q);
    }
}
END_TEST

/* A batch mixing 5x5 and 7x7 boards: its batch norms' statistics are those of every
 * board's points together, and with those statistics frozen (the running mean and
 * variance set to them, eval mode) each size's samples on a native net of their size give
 * losses whose sample-weighted mean is the mixed batch's training-mode losses (double,
 * within 1e-9): the padding changes nothing but the shape. The statistics are read back
 * from the running ones the training forward updates from zero (LAYERS_BN_MOMENTUM x the
 * batch mean, and of the unbiased variance). */
START_TEST(mixed_batch_is_its_sizes)
{
    char err[256];
    nn_spec big = mixed_spec(7, 4), small = mixed_spec(5, 4);
    nn_params *p = nn_params_new(&big, err, sizeof err), *q = nn_params_new(&small, err, sizeof err);
    ck_assert(p && q);
    nn_params_init_he(p, 71);
    rng r;
    rng_seed(&r, 72);
    randomize_bn(p, &r);
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++)
        if (L->t[i].kind == NN_T_BN_MEAN || L->t[i].kind == NN_T_BN_VAR)
            memset(p->data + L->t[i].offset, 0, sizeof(float) * L->t[i].size);
    /* samples 0, 2, 3 small; 1, 4 full size (their padded arrays are the full boards) */
    int n = 5, nb = 2, ns = 3;
    mixed_batch m = make_padded(&big, &small, n, &r);
    batch full = make_batch(&big, nb, &r);
    const int fulls[2] = {1, 4}, smalls[3] = {0, 2, 3};
    uint8_t side[5] = {5, 7, 5, 5, 7};
    int A = big.actions, P = big.planes;
    for (int k = 0; k < nb; k++) {
        int b = fulls[k];
        memcpy(m.x + (size_t)b * P * A, full.x + (size_t)k * P * A, sizeof(float) * (size_t)P * A);
        memcpy(m.pi + (size_t)b * A, full.pi + (size_t)k * A, sizeof(float) * (size_t)A);
        memcpy(m.legal + (size_t)b * A, full.legal + (size_t)k * A, (size_t)A);
        for (int a = 0; a < A; a++)
            m.opp[b * A + a] = 1.0f / (float)A;
        memcpy(m.z + (size_t)b * 2, full.z + (size_t)k * 2, sizeof(float) * 2);
    }
    f64_run mix = run_f64(L, p->data, n, m.x, m.pi, m.legal, m.z, m.opp, m.own, side, TRAIN_MODE_TRAIN);
    /* the frozen statistics: mean = rm / 0.1, biased variance = rv / 0.1 x (K - 1) / K */
    double K = ns * 25 + nb * 49;
    nn_params *e = nn_params_clone(p);
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *T = &L->t[i];
        for (size_t j = 0; j < T->size && (T->kind == NN_T_BN_MEAN || T->kind == NN_T_BN_VAR); j++) {
            double v = mix.params[T->offset + j] / LAYERS_BN_MOMENTUM;
            e->data[T->offset + j] = (float)(T->kind == NN_T_BN_VAR ? v * (K - 1) / K : v);
        }
    }
    /* each size on its own net, eval mode, the frozen statistics (float weights: the
     * same as the mixed run's, rounded to float once, so the mixed run is repeated in eval
     * mode with the rounded statistics for the comparison) */
    f64_run mixe = run_f64(L, e->data, n, m.x, m.pi, m.legal, m.z, m.opp, m.own, side, TRAIN_MODE_EVAL);
    check_losses_equal(&mixe.l, &mix.l, 1e-6, "mixed eval with its own statistics");
    size_t a5 = (size_t)small.actions, pl = (size_t)P;
    float *xs = malloc(sizeof(float) * ns * pl * a5), *pis = malloc(sizeof(float) * ns * a5);
    float *zs = malloc(sizeof(float) * ns * 2), *opps = malloc(sizeof(float) * ns * a5);
    float *xf = malloc(sizeof(float) * nb * pl * A), *pif = malloc(sizeof(float) * nb * A);
    float *zf = malloc(sizeof(float) * nb * 2), *oppf = malloc(sizeof(float) * nb * A);
    uint8_t *ls = malloc((size_t)ns * a5), *lf = malloc((size_t)nb * A);
    int8_t *os = malloc((size_t)ns * a5), *of = malloc((size_t)nb * A);
    for (int k = 0; k < ns; k++) {
        int b = smalls[k];
        memcpy(xs + k * pl * a5, m.nat.x + b * pl * a5, sizeof(float) * pl * a5);
        memcpy(pis + k * a5, m.nat.pi + b * a5, sizeof(float) * a5);
        memcpy(ls + k * a5, m.nat.legal + b * a5, a5);
        memcpy(opps + k * a5, m.opp_nat + b * a5, sizeof(float) * a5);
        memcpy(os + k * a5, m.own_nat + b * a5, a5);
        memcpy(zs + k * 2, m.z + b * 2, sizeof(float) * 2);
    }
    for (int k = 0; k < nb; k++) {
        int b = fulls[k];
        memcpy(xf + k * pl * A, m.x + b * pl * A, sizeof(float) * pl * A);
        memcpy(pif + k * A, m.pi + b * A, sizeof(float) * A);
        memcpy(lf + k * A, m.legal + b * A, A);
        memcpy(oppf + k * A, m.opp + b * A, sizeof(float) * A);
        memcpy(of + k * A, m.own + b * A, A);
        memcpy(zf + k * 2, m.z + b * 2, sizeof(float) * 2);
    }
    f64_run rs = run_f64(&q->layout, e->data, ns, xs, pis, ls, zs, opps, os, NULL, TRAIN_MODE_EVAL);
    f64_run rf = run_f64(L, e->data, nb, xf, pif, lf, zf, oppf, of, NULL, TRAIN_MODE_EVAL);
    train_losses want = {0};
    want.policy = (ns * rs.l.policy + nb * rf.l.policy) / n;
    want.value = (ns * rs.l.value + nb * rf.l.value) / n;
    want.aux = (ns * rs.l.aux + nb * rf.l.aux) / n;
    want.owner = (ns * rs.l.owner + nb * rf.l.owner) / n;
    want.entropy = (ns * rs.l.entropy + nb * rf.l.entropy) / n;
    want.l2 = rs.l.l2;
    want.total = want.policy + VW * want.value + want.l2 + 0.3 * want.aux + 0.4 * want.owner;
    check_losses_equal(&mixe.l, &want, 1e-9, "mixed against its sizes");
    ck_assert(want.aux > 0.1 && want.owner > 0.1);
    free(xs), free(pis), free(zs), free(opps), free(xf), free(pif), free(zf), free(oppf);
    free(ls), free(lf), free(os), free(of);
    free_run(&mix), free_run(&mixe), free_run(&rs), free_run(&rf);
    free_batch(&full);
    free_padded(&m);
    nn_params_free(e), nn_params_free(p), nn_params_free(q);
}
END_TEST

static nn_spec score_head(nn_spec s)
{
    s.value = NN_VALUE_SCORE;
    return s;
}

START_TEST(grad_score_value)
{
    grad_case(score_head(tiny_spec(GAME_LATTICE_SQUARE, 3, 3, 1, 4, 1, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 16);
    grad_case(score_head(tiny_spec(GAME_LATTICE_SQUARE, 4, 3, 1, 4, 1, NN_POLICY_DENSE, NN_TRUNK_RESIDUAL)), 17);
}
END_TEST

/* The action-value head (seed 003): its masked MSE's gradient, through the dense layers,
 * the head's BN and 1x1 conv and the trunk, against central finite differences in double
 * precision, and the float path against the double one; the loss and the priors checked
 * by hand (in grad_case). */
START_TEST(grad_action_value)
{
    grad_case(score_head(tiny_spec(GAME_LATTICE_SQUARE, 3, 3, 1, 4, 1, NN_POLICY_ACTION_VALUE, NN_TRUNK_RESIDUAL)), 18);
    grad_case(score_head(tiny_spec(GAME_LATTICE_SQUARE, 4, 3, 1, 3, 1, NN_POLICY_ACTION_VALUE, NN_TRUNK_PLAIN)), 19);
}
END_TEST

/* The zero-sum head's values: two players are exact opposites, three sum to zero, and
 * the value loss with two players is the mover's squared error alone. */
START_TEST(zerosum_values_and_loss)
{
    for (int P = 2; P <= 3; P++) {
        nn_spec s = zerosum(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, P, NN_POLICY_CONV, NN_TRUNK_RESIDUAL));
        char err[256];
        nn_params *p = nn_params_new(&s, err, sizeof err);
        ck_assert_ptr_nonnull(p);
        nn_params_init_he(p, 31);
        rng r;
        rng_seed(&r, 31);
        randomize_bn(p, &r);
        batch b = make_batch(&s, 8, &r);
        for (int i = 0; i < 8 && P == 2; i++)
            b.z[i * 2 + 1] = -b.z[i * 2]; /* two-player outcomes are zero-sum */
        train_net *t = train_net_new(&p->layout, 8, err, sizeof err);
        ck_assert_ptr_nonnull(t);
        train_losses l;
        train_net_forward(t, p->data, 8, b.x, b.pi, b.legal, b.z, TRAIN_MODE_EVAL, 1, 0, &l);
        const float *v = train_net_values(t);
        double mse0 = 0;
        for (int i = 0; i < 8; i++) {
            double sum = 0;
            for (int k = 0; k < P; k++) {
                sum += v[i * P + k];
                ck_assert(v[i * P + k] >= -2 && v[i * P + k] <= 2);
            }
            ck_assert_msg(fabs(sum) < 1e-6, "sample %d: values sum to %g", i, sum);
            if (P == 2) {
                ck_assert(fabsf(v[i * 2] + v[i * 2 + 1]) < 1e-6f);
                ck_assert(fabsf(v[i * 2]) <= 1.0f);
                mse0 += (v[i * 2] - b.z[i * 2]) * (v[i * 2] - b.z[i * 2]);
            }
        }
        if (P == 2)
            ck_assert_msg(fabs(l.value - mse0 / 8) < 1e-6, "value loss %g, mover's MSE %g", l.value, mse0 / 8);
        free_batch(&b);
        train_net_free(t);
        nn_params_free(p);
    }
}
END_TEST

/* The wdl head's values and loss by hand: with the value FC's weights 0 and its biases
 * (1, 0, -1) every sample's (win, draw, loss) is softmax(1, 0, -1), its values are
 * W - L and L - W, and the loss is the mean over the samples of the cross-entropy
 * against (max(z,0), 1-|z|, max(-z,0)), wins, draws, losses and fractional outcomes;
 * the float and double builds agree, and a gradient step on the biases alone moves the
 * probabilities toward the targets' mean. */
START_TEST(wdl_values_and_loss)
{
    nn_spec s = wdl(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL));
    char err[256];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    nn_params_init_he(p, 41);
    rng r;
    rng_seed(&r, 41);
    randomize_bn(p, &r);
    const nn_layout *L = &p->layout;
    float *w2 = nn_tensor_ptr(L, p->data, L->val_fc2_w), *b2 = nn_tensor_ptr(L, p->data, L->val_fc2_b);
    memset(w2, 0, sizeof(float) * L->t[L->val_fc2_w].size);
    b2[NN_WDL_WIN] = 1, b2[NN_WDL_DRAW] = 0, b2[NN_WDL_LOSS] = -1;
    const int n = 10;
    batch b = make_batch(&s, n, &r);
    train_net *t = train_net_new(L, n, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    train_losses l;
    train_net_forward(t, p->data, n, b.x, b.pi, b.legal, b.z, TRAIN_MODE_EVAL, 1, 0, &l);
    const float *v = train_net_values(t);
    double e = exp(1) + 1 + exp(-1), pw = exp(1) / e, pd = 1 / e, pl = exp(-1) / e, ce = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_double_eq_tol(v[i * 2], pw - pl, 1e-6);
        ck_assert_double_eq_tol(v[i * 2 + 1], pl - pw, 1e-6);
        double z = b.z[i * 2];
        ck_assert(i % 5 >= 3 || z == 1 - i % 5);
        ce -= fmax(z, 0) * log(pw) + (1 - fabs(z)) * log(pd) + fmax(-z, 0) * log(pl);
    }
    ck_assert_msg(fabs(l.value - ce / n) < 1e-6, "value loss %g, by hand %g", l.value, ce / n);
    /* the reference forward (the oracle of inference) gives the same values */
    float *pol = malloc(sizeof(float) * n * s.actions), val[2 * 10];
    ck_assert(nn_ref_forward(p, s.rows, s.cols, n, b.x, b.legal, pol, val, NULL, err, sizeof err) == 0);
    for (int i = 0; i < 2 * n; i++)
        ck_assert_double_eq_tol(val[i], v[i], 1e-6);
    /* the bias gradient of the value term is the mean of p - y over the samples */
    float *g = calloc(L->count, sizeof(float));
    train_net_forward(t, p->data, n, b.x, b.pi, b.legal, b.z, TRAIN_MODE_TRAIN, 0.5, 0, &l);
    train_net_backward(t, p->data, g, 0.5, 0);
    double yw = 0, yd = 0, yl = 0;
    for (int i = 0; i < n; i++) {
        double z = b.z[i * 2];
        yw += fmax(z, 0), yd += 1 - fabs(z), yl += fmax(-z, 0);
    }
    const float *gb = g + L->t[L->val_fc2_b].offset;
    ck_assert_double_eq_tol(gb[NN_WDL_WIN], 0.5 * (pw - yw / n), 1e-6);
    ck_assert_double_eq_tol(gb[NN_WDL_DRAW], 0.5 * (pd - yd / n), 1e-6);
    ck_assert_double_eq_tol(gb[NN_WDL_LOSS], 0.5 * (pl - yl / n), 1e-6);
    free(g), free(pol);
    free_batch(&b);
    train_net_free(t);
    nn_params_free(p);
}
END_TEST

/* Eval-mode forward equals the reference forward, batch 1 and 64. */
static void ref_case(nn_spec s, uint64_t seed)
{
    char err[256];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(p);
    nn_params_init_he(p, seed);
    rng r;
    rng_seed(&r, seed);
    randomize_bn(p, &r);
    batch b = make_batch(&s, 64, &r);
    train_net *t = train_net_new(&p->layout, 64, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    int A = s.actions, P = s.players;
    float *pol = malloc(sizeof(float) * 64 * A), *val = malloc(sizeof(float) * 64 * P);
    int ns[2] = {1, 64};
    for (int k = 0; k < 2; k++) {
        int n = ns[k];
        ck_assert_msg(nn_ref_forward(p, s.rows, s.cols, n, b.x, b.legal, pol, val, NULL, err, sizeof err) == 0,
                      "%s", err);
        train_net_forward(t, p->data, n, b.x, NULL, b.legal, NULL, TRAIN_MODE_EVAL, 0, 0, NULL);
        const float *tp = train_net_probs(t), *tv = train_net_values(t);
        double maxp = 0, maxv = 0;
        for (int i = 0; i < n * A; i++)
            maxp = fmax(maxp, fabs(tp[i] - pol[i]));
        for (int i = 0; i < n * P; i++)
            maxv = fmax(maxv, fabs(tv[i] - val[i]));
        ck_assert_msg(maxp < 1e-5 && maxv < 1e-5, "batch %d: policy differs by %g, value by %g", n, maxp, maxv);
    }
    free(pol), free(val);
    free_batch(&b);
    train_net_free(t);
    nn_params_free(p);
}

START_TEST(eval_equals_reference)
{
    ref_case(tiny_spec(GAME_LATTICE_SQUARE, 6, 6, 2, 8, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL), 21);
    ref_case(tiny_spec(GAME_LATTICE_HEX, 7, 7, 2, 8, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL), 22);
    ref_case(tiny_spec(GAME_LATTICE_SQUARE, 5, 4, 1, 6, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN), 23);
    ref_case(zerosum(tiny_spec(GAME_LATTICE_SQUARE, 6, 6, 1, 8, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 24);
    ref_case(zerosum(tiny_spec(GAME_LATTICE_HEX, 7, 7, 1, 8, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 25);
    ref_case(score_head(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 8, 1, NN_POLICY_DENSE, NN_TRUNK_RESIDUAL)), 26);
    ref_case(mean_max(zerosum(tiny_spec(GAME_LATTICE_HEX, 7, 7, 1, 8, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL))), 27);
    ref_case(mean_max(tiny_spec(GAME_LATTICE_SQUARE, 5, 4, 1, 6, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN)), 28);
    ref_case(wdl(tiny_spec(GAME_LATTICE_SQUARE, 6, 6, 1, 8, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL)), 29);
    ref_case(mean_max(wdl(tiny_spec(GAME_LATTICE_HEX, 7, 7, 1, 8, 2, NN_POLICY_DENSE, NN_TRUNK_PLAIN))), 30);
}
END_TEST


static cfg_train train_cfg(const char *opt, int bs, double lr, double wd)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    cfg_train t = c.train;
    snprintf(t.optimizer, sizeof t.optimizer, "%s", opt);
    t.batch_size = bs;
    t.lr = lr;
    t.weight_decay = wd;
    t.momentum = 0.9;
    t.value_weight = 1.0;
    return t;
}

static nn_spec spec_for(const game *g, int blocks, int C)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.net.blocks = blocks;
    c.net.channels = C;
    c.net.head_channels = 8;
    c.net.value_hidden = 16;
    nn_spec s;
    char err[256];
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    return s;
}

/* The game section of m,n,k rows x rows, k = 4, and its game. */
static game *mnk_section(gz_config *c, int rows, int k)
{
    cfg_defaults(c, "mnk");
    c->game.rows = c->game.cols = rows;
    c->game.k = k;
    char err[256];
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* Random games of an rows x rows board of c's game (k as c's) into path, with the
 * game_config a run writes for that board. Returns the samples. */
static int64_t sized_games(const gz_config *c, int rows, int k, const char *path, int games,
                           uint64_t seed, int64_t gen)
{
    gz_config x;
    game *g = mnk_section(&x, rows, k);
    snprintf(x.game.rule, sizeof x.game.rule, "%s", c->game.rule);
    char *gc = sp_game_config_json(&x);
    int64_t n = gen_random_games_as(g, path, games, seed, gen, gc);
    free(gc);
    game_free(g);
    return n;
}

static char tmpdir[256];

/* A window of nbig random games of m,n,k big x big (k = 4) and nsmall of small x small
 * of the same game section, written to tmpdir (made first), sizes allowed; *g the big
 * game (free it). */
static dataset *mixed_window(game **g, int big, int small, int nbig, int nsmall, uint64_t seed,
                             double val)
{
    gz_config c;
    *g = mnk_section(&c, big, 4);
    char a[300], b[300], err[512];
    snprintf(a, sizeof a, "%s/big.h5", tmpdir);
    snprintf(b, sizeof b, "%s/small.h5", tmpdir);
    sized_games(&c, big, 4, a, nbig, seed, 0);
    sized_games(&c, small, 4, b, nsmall, seed + 1, 0);
    dataset *d = dataset_new(*g, val, err, sizeof err);
    ck_assert(dataset_allow_sizes(d, &c.game));
    ck_assert_msg(dataset_add_path(d, a, err, sizeof err) == 0 && dataset_add_path(d, b, err, sizeof err) == 0,
                  "%s", err);
    return d;
}

static void mk_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gz_test_train_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Learning-rate schedules: warm-up, step drops, cosine end points. */
START_TEST(schedules)
{
    nn_spec s = tiny_spec(GAME_LATTICE_SQUARE, 3, 3, 1, 2, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
    nn_layout L;
    nn_layout_init(&L, &s);
    cfg_train tc = train_cfg("sgd", 8, 0.1, 0);
    char err[128];
    optim o;
    tc.warmup_steps = 10;
    snprintf(tc.schedule, sizeof tc.schedule, "cosine");
    ck_assert(optim_init(&o, &L, &tc, 110, err, sizeof err) == 0);
    ck_assert(fabs(optim_lr(&o, 0) - 0.01) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 9) - 0.1) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 10) - 0.1) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 60) - 0.05) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 110)) < 1e-12);
    optim_deinit(&o);
    snprintf(tc.schedule, sizeof tc.schedule, "step");
    tc.warmup_steps = 0;
    ck_assert(optim_init(&o, &L, &tc, 100, err, sizeof err) == 0);
    ck_assert(fabs(optim_lr(&o, 49) - 0.1) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 50) - 0.01) < 1e-12);
    ck_assert(fabs(optim_lr(&o, 75) - 0.001) < 1e-12);
    optim_deinit(&o);
}
END_TEST

/* Overfitting a tiny fixed batch: the policy loss approaches its floor (the targets'
 * entropy) and the value loss approaches 0. */
START_TEST(overfit_tiny_batch)
{
    nn_spec s = tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 16, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
    char err[256];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 31);
    rng r;
    rng_seed(&r, 31);
    const int n = 16;
    batch b = make_batch(&s, n, &r);
    double floor_ce = 0;
    for (int i = 0; i < n * s.actions; i++)
        if (b.pi[i] > 0)
            floor_ce -= b.pi[i] * log(b.pi[i]);
    floor_ce /= n;
    for (int i = 0; i < n * s.players; i++)
        b.z[i] = b.z[i] > 0 ? 0.8f : -0.8f;
    cfg_train tc = train_cfg("sgd", n, 0.05, 0);
    trainer *t = trainer_new(p, &tc, 400, 1, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    train_losses l, first = {0};
    for (int k = 0; k < 400; k++) {
        ck_assert_msg(trainer_step_batch(t, n, b.x, b.pi, b.legal, b.z, &l, NULL, err, sizeof err) == 0, "%s", err);
        if (k == 0)
            first = l;
    }
    ck_assert_msg(l.policy - floor_ce < 0.05 && l.value < 0.01,
                  "after 400 steps: policy %.4f (floor %.4f, start %.4f), value %.4f (start %.4f)",
                  l.policy, floor_ce, first.policy, l.value, first.value);
    free_batch(&b);
    trainer_free(t);
}
END_TEST

/* Writes synthetic 5x5 samples whose value is a simple rule: the side to move wins when
 * it has more stones (planes 0 and 1), z mover-first. */
static void write_rule_file(const game *g, const char *path, int n, uint64_t seed, int64_t gen)
{
    char err[512];
    sp_meta meta = {gen, "synthetic"};
    sp_writer *w = sp_writer_open(path, g, NULL, &meta, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rng r;
    rng_seed(&r, seed);
    int hw = g->rows * g->cols;
    float *planes = calloc((size_t)g->planes * hw, sizeof(float));
    float *pi = calloc((size_t)g->actions, sizeof(float));
    uint8_t *legal = calloc((size_t)g->actions, 1);
    for (int i = 0; i < n; i++) {
        memset(planes, 0, sizeof(float) * (size_t)g->planes * hw);
        int own = 0, opp = 0;
        int k0 = 1 + (int)rng_below(&r, 8), k1 = 1 + (int)rng_below(&r, 8);
        if (k0 == k1)
            k1 = k0 + 1;
        for (int a = 0; a < hw; a++) {
            legal[a] = 1;
            pi[a] = 0;
        }
        while (own < k0 || opp < k1) {
            int a = (int)rng_below(&r, (uint32_t)hw);
            if (planes[a] || planes[hw + a])
                continue;
            if (own < k0) {
                planes[a] = 1;
                own++;
            } else {
                planes[hw + a] = 1;
                opp++;
            }
            legal[a] = 0;
        }
        for (int a = 0; a < hw; a++)
            planes[3 * hw + a] = 1;
        int first = -1;
        for (int a = 0; a < hw && first < 0; a++)
            if (legal[a])
                first = a;
        pi[first] = 1;
        float z[2] = {own > opp ? 1.0f : -1.0f, own > opp ? -1.0f : 1.0f};
        ck_assert_msg(sp_writer_append(w, planes, pi, legal, z, i, 0, err, sizeof err) == 0, "%s", err);
    }
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    free(planes), free(pi), free(legal);
}

/* The value head learns "more stones wins" from sample files through the dataset
 * (with augmentation) and generalises to the held-out validation games. */
START_TEST(value_learns_rule)
{
    mk_tmpdir();
    game *g = gen_mnk(5, 5, 4);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/rule.h5", tmpdir);
    write_rule_file(g, path, 3000, 41, 0);
    dataset *d = dataset_new(g, 0.1, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, tmpdir, err, sizeof err) == 0, "%s", err);
    ck_assert(dataset_val_count(d) > 150 && dataset_train_count(d) > 2000);
    nn_spec s = spec_for(g, 1, 16);
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 41);
    cfg_train tc = train_cfg("adam", 64, 0.003, 1e-4);
    trainer *t = trainer_new(p, &tc, 300, 41, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    train_losses l;
    for (int k = 0; k < 300; k++)
        ck_assert_msg(trainer_step(t, d, &l, NULL, err, sizeof err) == 0, "%s", err);
    train_losses v;
    ck_assert(trainer_validate(t, d, 0, &v) == dataset_val_count(d));
    ck_assert_msg(v.value_acc > 0.9 && v.value < 0.4, "validation: value accuracy %.3f, MSE %.3f", v.value_acc,
                  v.value);
    trainer_free(t);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* For every symmetry of the game: the transformed sample is the sample of the
 * transformed position: every plane, pi and the legal mask follow the same map, and the
 * legal mask still equals "empty point" of the transformed planes. */
static void augmentation_case(int rows, int cols)
{
    mk_tmpdir();
    game *g = gen_mnk(rows, cols, 3);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/g.h5", tmpdir);
    gen_random_games(g, path, 10, 51, 0);
    dataset *d = dataset_new(g, 0.0, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    int hw = rows * cols, P = g->planes;
    float *x0 = malloc(sizeof(float) * P * hw), *x1 = malloc(sizeof(float) * P * hw);
    float pi0[64], pi1[64], z0[3], z1[3];
    uint8_t l0[64], l1[64];
    ck_assert_int_eq(g->nsym, rows == cols ? 8 : 4);
    for (int64_t i = 0; i < dataset_train_count(d); i += 7) {
        dataset_get(d, i, SYM_ID, x0, pi0, l0, z0, NULL, NULL, NULL);
        for (int k = 0; k < g->nsym; k++) {
            sym_id s = g->sym[k];
            dataset_get(d, i, s, x1, pi1, l1, z1, NULL, NULL, NULL);
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < cols; c++) {
                    int r2, c2;
                    sym_map_point(s, rows, cols, r, c, &r2, &c2);
                    int a = r * cols + c, b = r2 * cols + c2;
                    for (int p = 0; p < P; p++)
                        ck_assert(x1[p * hw + b] == x0[p * hw + a]);
                    ck_assert(pi1[b] == pi0[a]);
                    ck_assert(l1[b] == l0[a]);
                    /* consistency with the position itself */
                    ck_assert_int_eq(l1[b], x1[b] == 0 && x1[hw + b] == 0);
                    if (!l1[b])
                        ck_assert(pi1[b] == 0);
                }
            ck_assert(memcmp(z0, z1, sizeof(float) * g->players) == 0);
        }
    }
    free(x0), free(x1);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}

START_TEST(augmentation_square)
{
    augmentation_case(3, 3);
}
END_TEST

START_TEST(augmentation_rect)
{
    augmentation_case(3, 4);
}
END_TEST

/* Train N steps == train N/2, save, load, resume, train N/2: identical weights. */
static void resume_case(const char *opt)
{
    mk_tmpdir();
    game *g = gen_mnk(3, 3, 3);
    char path[300], ck[300], err[512];
    snprintf(path, sizeof path, "%s/g.h5", tmpdir);
    snprintf(ck, sizeof ck, "%s/half.h5", tmpdir);
    gen_random_games(g, path, 40, 61, 0);
    dataset *d = dataset_new(g, 0.1, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    nn_spec s = spec_for(g, 1, 8);
    cfg_train tc = train_cfg(opt, 16, 0.02, 1e-3);
    snprintf(tc.schedule, sizeof tc.schedule, "cosine");
    tc.warmup_steps = 3;
    const int N = 12;
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 61);
    nn_params *p2 = nn_params_clone(p);
    trainer *a = trainer_new(p, &tc, N, 7, err, sizeof err);
    for (int k = 0; k < N; k++)
        ck_assert_msg(trainer_step(a, d, NULL, NULL, err, sizeof err) == 0, "%s", err);
    trainer *b = trainer_new(p2, &tc, N, 7, err, sizeof err);
    for (int k = 0; k < N / 2; k++)
        ck_assert(trainer_step(b, d, NULL, NULL, err, sizeof err) == 0);
    nn_ckpt_meta meta = {0, N / 2, ""};
    ck_assert_msg(trainer_save(b, ck, &meta, err, sizeof err) == 0, "%s", err);
    trainer_free(b);
    nn_params *p3 = nn_ckpt_load(ck, g, NULL, err, sizeof err);
    ck_assert_msg(p3 != NULL, "%s", err);
    trainer *c = trainer_new(p3, &tc, N, 999 /* overwritten by the resume */, err, sizeof err);
    ck_assert_msg(trainer_resume(c, ck, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(trainer_step_count(c), N / 2);
    for (int k = N / 2; k < N; k++)
        ck_assert(trainer_step(c, d, NULL, NULL, err, sizeof err) == 0);
    nn_params *pa = trainer_params(a), *pc = trainer_params(c);
    ck_assert_msg(memcmp(pa->data, pc->data, sizeof(float) * pa->layout.count) == 0,
                  "%s: resumed weights differ from the uninterrupted run", opt);
    trainer_free(a);
    trainer_free(c);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}

START_TEST(resume_sgd)
{
    resume_case("sgd");
}
END_TEST

START_TEST(resume_adam)
{
    resume_case("adam");
}
END_TEST

/* Data-parallel training with threads standing in for ranks: a reducer that adds the
 * ranks' buffers in rank order (so every rank gets bit-identical sums, as MPI's
 * allreduce does), K trainers each computing their shard of the same batches. */
typedef struct fake_world {
    int ranks;
    pthread_barrier_t bar;
    double *slot[4]; /* per rank, MAXN doubles */
} fake_world;
typedef struct fake_rank {
    fake_world *w;
    int rank;
    trainer *t;
    const dataset *d;
    int steps;
    char err[256];
    int rc;
} fake_rank;
#define FAKE_MAXN (1 << 20)

static void fake_sum_f64(void *ctx, double *buf, size_t n)
{
    fake_rank *r = ctx;
    ck_assert(n <= FAKE_MAXN);
    memcpy(r->w->slot[r->rank], buf, sizeof(double) * n);
    pthread_barrier_wait(&r->w->bar);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < r->w->ranks; k++)
            s += r->w->slot[k][i];
        buf[i] = s;
    }
    pthread_barrier_wait(&r->w->bar);
}

static void fake_sum_f32(void *ctx, float *buf, size_t n)
{
    fake_rank *r = ctx;
    ck_assert(n <= FAKE_MAXN);
    for (size_t i = 0; i < n; i++)
        r->w->slot[r->rank][i] = buf[i];
    pthread_barrier_wait(&r->w->bar);
    for (size_t i = 0; i < n; i++) {
        float s = 0;
        for (int k = 0; k < r->w->ranks; k++)
            s += (float)r->w->slot[k][i];
        buf[i] = s;
    }
    pthread_barrier_wait(&r->w->bar);
}

static void *fake_rank_main(void *arg)
{
    fake_rank *r = arg;
    for (int k = 0; k < r->steps && r->rc == 0; k++)
        r->rc = trainer_step(r->t, r->d, NULL, NULL, r->err, sizeof r->err);
    return NULL;
}

/* The largest over the tensors of the layout (BN statistics included) of
 * max |a - b| / max(max |a|, 0.01): relative to the tensor's scale, with a floor of 1% of
 * a typical weight for a tensor that stays near zero by construction (the conv policy's
 * output bias: the cross-entropy's gradient over the legal moves sums to 0, so it keeps
 * ~1e-10 and the rounding of the sums is all there is to compare). */
static double max_rel_diff(const nn_params *a, const nn_params *b, const char **worst)
{
    double worst_rel = 0;
    for (int i = 0; i < a->layout.ntensors; i++) {
        const nn_tensor *T = &a->layout.t[i];
        double ma = 0, md = 0;
        for (size_t j = 0; j < T->size; j++) {
            double x = a->data[T->offset + j], y = b->data[T->offset + j];
            ma = fmax(ma, fabs(x));
            md = fmax(md, fabs(x - y));
        }
        double rel = md / fmax(ma, 1e-2);
        if (getenv("GZ_TEST_VERBOSE"))
            fprintf(stderr, "%-28s max %.3g diff %.3g rel %.3g\n", T->name, ma, md, rel);
        if (rel > worst_rel) {
            worst_rel = rel;
            *worst = T->name;
        }
    }
    return worst_rel;
}

/* K = 2 and 3 ranks (threads with the fake reducer) against one process on dataset d
 * with a net of spec s: the weights after `steps` steps equal up to rounding, and every
 * rank holds the very same. */
static void data_parallel_case(const dataset *d, const nn_spec *s, const cfg_train *tc, int steps,
                               uint64_t seed)
{
    char err[512];
    nn_params *p0 = nn_params_new(s, err, sizeof err);
    nn_params_init_he(p0, seed);
    trainer *one = trainer_new(nn_params_clone(p0), tc, steps, 9, err, sizeof err);
    ck_assert_msg(one != NULL, "%s", err);
    for (int k = 0; k < steps; k++)
        ck_assert_msg(trainer_step(one, d, NULL, NULL, err, sizeof err) == 0, "%s", err);
    for (int K = 2; K <= 3; K++) {
        fake_world w = {.ranks = K};
        pthread_barrier_init(&w.bar, NULL, (unsigned)K);
        fake_rank rk[3];
        pthread_t th[3];
        for (int r = 0; r < K; r++) {
            w.slot[r] = malloc(sizeof(double) * FAKE_MAXN);
            rk[r] = (fake_rank){.w = &w, .rank = r, .d = d, .steps = steps};
            rk[r].t = trainer_new(nn_params_clone(p0), tc, steps, 9, err, sizeof err);
            ck_assert_msg(rk[r].t != NULL, "%s", err);
            train_reducer red = {fake_sum_f64, fake_sum_f32, &rk[r], r, K};
            ck_assert_msg(trainer_set_reducer(rk[r].t, &red, err, sizeof err) == 0, "%s", err);
        }
        for (int r = 0; r < K; r++)
            ck_assert_int_eq(pthread_create(&th[r], NULL, fake_rank_main, &rk[r]), 0);
        for (int r = 0; r < K; r++)
            pthread_join(th[r], NULL);
        for (int r = 0; r < K; r++)
            ck_assert_msg(rk[r].rc == 0, "rank %d: %s", r, rk[r].err);
        const nn_params *a = trainer_params(one), *b = trainer_params(rk[0].t);
        const char *worst = "";
        double rel = max_rel_diff(a, b, &worst);
        ck_assert_msg(rel < 1e-5, "%d ranks: %s differs from one process by %.3g (relative)", K,
                      worst, rel);
        /* and the ranks hold the very same weights */
        for (int r = 1; r < K; r++)
            ck_assert_msg(memcmp(b->data, trainer_params(rk[r].t)->data,
                                 sizeof(float) * b->layout.count) == 0,
                          "%d ranks: rank %d's weights differ from rank 0's", K, r);
        /* the weights moved: the test compares training, not the initial weights */
        const char *w0 = "";
        ck_assert(max_rel_diff(p0, b, &w0) > 1e-3);
        for (int r = 0; r < K; r++) {
            trainer_free(rk[r].t);
            free(w.slot[r]);
        }
        pthread_barrier_destroy(&w.bar);
    }
    /* a batch smaller than the ranks is refused by name */
    trainer *small = trainer_new(nn_params_clone(p0), tc, steps, 9, err, sizeof err);
    train_reducer red = {fake_sum_f64, fake_sum_f32, NULL, 0, 16};
    ck_assert_int_eq(trainer_set_reducer(small, &red, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "train.batch_size 15") != NULL, "%s", err);
    trainer_free(small);
    trainer_free(one);
    nn_params_free(p0);
}

START_TEST(data_parallel_equals_one_process)
{
    mk_tmpdir();
    game *g = gen_mnk(3, 3, 3);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/g.h5", tmpdir);
    gen_random_games(g, path, 60, 71, 0);
    dataset *d = dataset_new(g, 0.1, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    nn_spec s = spec_for(g, 2, 8);
    cfg_train tc = train_cfg("sgd", 15, 0.02, 1e-3);
    data_parallel_case(d, &s, &tc, 10, 71);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* The same with mixed board sizes: each rank's shard has its own boards, and the batch
 * norms count the boards' points over every rank. */
START_TEST(data_parallel_mixed_sizes)
{
    mk_tmpdir();
    game *g;
    dataset *d = mixed_window(&g, 6, 4, 6, 10, 73, 0.1);
    nn_spec s = aux_owner(aux_policy(mean_max(spec_for(g, 2, 8))));
    cfg_train tc = train_cfg("sgd", 15, 0.02, 1e-3);
    data_parallel_case(d, &s, &tc, 10, 75);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* Hex nets: masked taps stay exactly zero through SGD and Adam steps (with weight
 * decay); a NaN input stops the step with a message naming it. */
START_TEST(hex_mask_and_nan)
{
    const char *opts[2] = {"sgd", "adam"};
    for (int o = 0; o < 2; o++) {
        nn_spec s = tiny_spec(GAME_LATTICE_HEX, 5, 5, 2, 8, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
        char err[256];
        nn_params *p = nn_params_new(&s, err, sizeof err);
        nn_params_init_he(p, 71);
        rng r;
        rng_seed(&r, 71);
        batch b = make_batch(&s, 8, &r);
        cfg_train tc = train_cfg(opts[o], 8, 0.05, 1e-2);
        trainer *t = trainer_new(p, &tc, 30, 1, err, sizeof err);
        for (int k = 0; k < 30; k++)
            ck_assert(trainer_step_batch(t, 8, b.x, b.pi, b.legal, b.z, NULL, NULL, err, sizeof err) == 0);
        ck_assert_int_eq(nn_layout_check_mask(&p->layout, p->data), -1);
        /* the weights did move */
        nn_params *fresh = nn_params_new(&s, err, sizeof err);
        nn_params_init_he(fresh, 71);
        ck_assert(memcmp(fresh->data, p->data, sizeof(float) * p->layout.count) != 0);
        nn_params_free(fresh);
        b.x[5] = NAN;
        ck_assert_int_eq(trainer_step_batch(t, 8, b.x, b.pi, b.legal, b.z, NULL, NULL, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "step 31") != NULL, "%s", err);
        free_batch(&b);
        trainer_free(t);
    }
}
END_TEST

/* Files of another game or shape are refused by name; a directory skips .tmp files. */
/* Policy weights: written per sample, read back (a version 2 file), served by the
 * dataset as pi times the weight, and a weight-0 batch leaves the policy head's output
 * layer without a gradient while the value head still learns. */
START_TEST(policy_weight_round_trip)
{
    mk_tmpdir();
    game *g = gen_mnk(5, 5, 4);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/w.h5", tmpdir);
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int hw = 25, np = g->planes * hw;
    float *planes = calloc((size_t)np, sizeof(float)), pi[25] = {0}, z[2] = {1, -1};
    uint8_t legal[25];
    memset(legal, 1, sizeof legal);
    pi[3] = 0.75f, pi[7] = 0.25f;
    const float weights[6] = {0, 1, 0.5f, 0, 2, 0};
    for (int i = 0; i < 6; i++) {
        planes[i] = 1;
        ck_assert_msg(sp_writer_append_weighted(w, planes, pi, legal, z, NULL, weights[i], i, 0, err, sizeof err) == 0,
                      "%s", err);
    }
    ck_assert_int_eq(sp_writer_append_weighted(w, planes, pi, legal, z, NULL, -1, 9, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "policy weight") != NULL, "%s", err);
    sp_writer_abort(w);
    w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    memset(planes, 0, sizeof(float) * (size_t)np);
    for (int i = 0; i < 6; i++) {
        planes[i] = 1; /* sample i is told by its i + 1 marker stones */
        ck_assert(sp_writer_append_weighted(w, planes, pi, legal, z, NULL, weights[i], i, 0, err, sizeof err) == 0);
    }
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(f->weight[i], weights[i]);
    sp_file_free(f);
    dataset *d = dataset_new(g, 0, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_train_count(d), 6);
    float *x = malloc(sizeof(float) * (size_t)np), dpi[25], dz[2];
    uint8_t dl[25];
    for (int i = 0; i < 6; i++) {
        dataset_get(d, i, SYM_ID, x, dpi, dl, dz, NULL, NULL, NULL);
        /* the sample's identity: its planes[0..5] marker */
        int id = 0;
        for (int k = 0; k < 6; k++)
            id += x[k] > 0.5f;
        id -= 1;
        /* normalised to mean 1: the six weights sum to 3.5 */
        ck_assert_float_eq_tol(dpi[3], 0.75f * weights[id] * 6 / 3.5f, 1e-6);
        ck_assert_float_eq_tol(dpi[7], 0.25f * weights[id] * 6 / 3.5f, 1e-6);
    }
    /* weight 0 everywhere: no policy gradient at all, a value gradient still */
    nn_spec s = spec_for(g, 1, 4);
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 5);
    train_net *t = train_net_new(&p->layout, 3, err, sizeof err);
    float *xb = malloc(sizeof(float) * 3 * (size_t)np), pib[75] = {0}, zb[6];
    uint8_t lb[75];
    for (int b = 0; b < 3; b++)
        dataset_get(d, b == 0 ? 0 : b == 1 ? 3 : 5, SYM_ID, xb + (size_t)b * np, pib + b * 25, lb + b * 25,
                    zb + b * 2, NULL, NULL, NULL);
    train_losses l;
    train_net_forward(t, p->data, 3, xb, pib, lb, zb, TRAIN_MODE_TRAIN, 1, 0, &l);
    ck_assert_double_eq_tol(l.policy, 0, 1e-12);
    float *gr = calloc(p->layout.count, sizeof(float));
    train_net_backward(t, p->data, gr, 1, 0);
    const nn_tensor *po = &p->layout.t[p->layout.pol_out_w], *vo = &p->layout.t[p->layout.val_fc2_w];
    double gp = 0, gv = 0;
    for (size_t j = 0; j < po->size; j++)
        gp += fabsf(gr[po->offset + j]);
    for (size_t j = 0; j < vo->size; j++)
        gv += fabsf(gr[vo->offset + j]);
    ck_assert_msg(gp == 0 && gv > 0, "policy-out gradient %g, value gradient %g", gp, gv);
    free(gr), free(xb), free(x), free(planes);
    train_net_free(t);
    nn_params_free(p);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* The opponent-reply targets: each sample's opp is the same game's next ply's pi (found
 * by game and ply, whatever the file's order), under the same symmetry, with that ply's
 * policy weight; the last ply, a missing ply (a fast search not written) and a weight-0
 * reply give zeros. Then the trainer steps a net with the aux head on them, and its
 * config key is refused where it cannot apply. */
START_TEST(opponent_reply_targets)
{
    mk_tmpdir();
    game *g = gen_mnk(5, 5, 4);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/opp.h5", tmpdir);
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int hw = 25, np = g->planes * hw;
    float *planes = calloc((size_t)np, sizeof(float)), z[2] = {1, -1};
    uint8_t legal[25];
    memset(legal, 1, sizeof legal);
    /* (game, ply, weight) in the order written: two games interleaved; game 1 has no
     * ply 2, and its ply 4 has weight 0 */
    static const int order[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 3}, {0, 3}, {1, 4}};
    const int ns = 8;
    for (int i = 0; i < ns; i++) {
        float pi[25] = {0};
        pi[order[i][0] * 10 + order[i][1]] = 1; /* the point tells (game, ply) */
        memset(planes, 0, sizeof(float) * (size_t)np);
        planes[i] = 1; /* and the marker tells the sample */
        planes[hw + order[i][0] * 10 + order[i][1] + 1] = 1; /* the reply's point, to learn */
        float wgt = order[i][0] == 1 && order[i][1] == 4 ? 0 : 1;
        ck_assert_msg(sp_writer_append_weighted(w, planes, pi, legal, z, NULL, wgt, order[i][0],
                                                order[i][1], err, sizeof err) == 0, "%s", err);
    }
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    dataset *d = dataset_new(g, 0, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_train_count(d), ns);
    float *x = malloc(sizeof(float) * (size_t)np), dpi[25], dz[2], opp[25];
    uint8_t dl[25];
    const float scale = 8.0f / 7.0f; /* weights normalised to a mean of 1: 7 of 8 are 1 */
    for (int s = 0; s < g->nsym; s++) {
        sym_id sy = g->sym[s];
        for (int i = 0; i < ns; i++) {
            dataset_get(d, i, sy, x, dpi, dl, dz, opp, NULL, NULL);
            int gm = order[i][0], ply = order[i][1];
            int has_next = (gm == 0 && ply < 3) || (gm == 1 && (ply == 0 || ply == 3));
            float want_mass = has_next && !(gm == 1 && ply == 3) ? scale : 0; /* 1,4 has weight 0 */
            double mass = 0;
            for (int a = 0; a < 25; a++)
                mass += opp[a];
            ck_assert_msg(fabs(mass - want_mass) < 1e-5, "sample %d (game %d ply %d) sym %d: opp mass %g, want %g",
                          i, gm, ply, s, mass, want_mass);
            if (want_mass > 0) {
                int at = sym_map_action(g, sy, gm * 10 + ply + 1);
                ck_assert_float_eq_tol(opp[at], scale, 1e-5);
                /* pi itself is this ply's, mapped the same way */
                ck_assert_float_eq_tol(dpi[sym_map_action(g, sy, gm * 10 + ply)], scale * (gm == 1 && ply == 4 ? 0 : 1),
                                       1e-5);
            }
        }
    }
    /* the trainer with the aux head: its loss is there, and it falls on this data */
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.net.blocks = 1, c.net.channels = 8, c.net.head_channels = 8, c.net.value_hidden = 8;
    c.net.aux_policy = true;
    nn_spec s;
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert(s.aux_policy);
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_int_ge(nn_layout_find(&p->layout, "policy.aux.weight"), 0);
    nn_params_init_he(p, 3);
    cfg_train tc = train_cfg("sgd", 8, 0.05, 0);
    tc.aux_policy_weight = 1;
    trainer *t = trainer_new(p, &tc, 100, 7, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    /* the aux loss of all 8 samples, eval mode, no symmetry */
    train_net *ev = train_net_new(&p->layout, ns, err, sizeof err);
    float *xb = malloc(sizeof(float) * (size_t)ns * np), pib[8 * 25], zb[16], ob[8 * 25];
    uint8_t lb[8 * 25];
    for (int i = 0; i < ns; i++)
        dataset_get(d, i, SYM_ID, xb + (size_t)i * np, pib + i * 25, lb + i * 25, zb + i * 2, ob + i * 25, NULL, NULL);
    train_net_set_aux(ev, ob, 1);
    train_losses l0, l1;
    train_net_forward(ev, trainer_params(t)->data, ns, xb, pib, lb, zb, TRAIN_MODE_EVAL, 1, 0, &l0);
    ck_assert_msg(l0.aux > 0.1, "aux loss %g", l0.aux);
    for (int k = 0; k < 200; k++)
        ck_assert(trainer_step(t, d, &l1, NULL, err, sizeof err) == 0);
    ck_assert(l1.aux > 0);
    train_net_forward(ev, trainer_params(t)->data, ns, xb, pib, lb, zb, TRAIN_MODE_EVAL, 1, 0, &l1);
    ck_assert_msg(l1.aux < 0.5 * l0.aux, "aux loss %g -> %g", l0.aux, l1.aux);
    train_net_free(ev);
    free(xb);
    trainer_free(t);
    /* refused by name: one player, a dense policy head */
    c.net.policy_head[0] = 0;
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "dense");
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.aux_policy") != NULL, "%s", err);
    free(x), free(planes);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* The ownership targets: each sample's own is its file's owner map (sample format 4)
 * under the same symmetry as its planes, all -1 for a sample written without one; then
 * the trainer steps a net with the ownership head on them and its loss falls, and the
 * config key is refused where it cannot apply. */
START_TEST(ownership_targets)
{
    mk_tmpdir();
    game *g = gen_mnk(5, 5, 4);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/own.h5", tmpdir);
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int hw = 25, np = g->planes * hw;
    const int ns = 8;
    float *planes = calloc((size_t)np, sizeof(float)), z[2] = {1, -1}, pi[25] = {0};
    uint8_t legal[25];
    memset(legal, 1, sizeof legal);
    pi[12] = 1;
    int8_t maps[8][25];
    for (int i = 0; i < ns; i++) {
        /* a pattern per sample, shown by the planes (so a 1x1 head can learn it): plane 0
         * marks owner 1, plane 1 owner 2; sample 5 has no map (all -1) */
        memset(planes, 0, sizeof(float) * (size_t)np);
        for (int a = 0; a < hw; a++) {
            maps[i][a] = i == 5 ? -1 : (int8_t)((a * 7 + i * 3) % 3);
            planes[a] = maps[i][a] == 1;
            planes[hw + a] = maps[i][a] == 2;
        }
        ck_assert_msg(sp_writer_append_owned(w, planes, pi, legal, z, NULL, 1, i == 5 ? NULL : maps[i],
                                             i, 0, err, sizeof err) == 0, "%s", err);
    }
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    dataset *d = dataset_new(g, 0, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_train_count(d), ns);
    float *x = malloc(sizeof(float) * (size_t)np), dpi[25], dz[2];
    uint8_t dl[25];
    int8_t own[25];
    for (int k = 0; k < g->nsym; k++) {
        sym_id sy = g->sym[k];
        for (int i = 0; i < ns; i++) {
            dataset_get(d, i, sy, x, dpi, dl, dz, NULL, own, NULL);
            for (int a = 0; a < hw; a++) {
                int b = sym_map_action(g, sy, a);
                ck_assert_msg(own[b] == maps[i][a], "sample %d sym %d point %d: owner %d, want %d", i, k, a,
                              own[b], maps[i][a]);
                /* the planes moved the same way */
                ck_assert_float_eq(x[b], (float)(maps[i][a] == 1));
            }
        }
    }
    /* the trainer with the ownership head: its loss is there, and it falls on this data */
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.net.blocks = 1, c.net.channels = 8, c.net.head_channels = 8, c.net.value_hidden = 8;
    c.net.aux_owner = true;
    nn_spec s;
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 3);
    cfg_train tc = train_cfg("sgd", 8, 0.05, 0);
    tc.owner_weight = 1;
    trainer *t = trainer_new(p, &tc, 100, 7, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    train_net *ev = train_net_new(&p->layout, ns, err, sizeof err);
    float *xb = malloc(sizeof(float) * (size_t)ns * np), pib[8 * 25], zb[16];
    uint8_t lb[8 * 25];
    int8_t ob[8 * 25];
    for (int i = 0; i < ns; i++)
        dataset_get(d, i, SYM_ID, xb + (size_t)i * np, pib + i * 25, lb + i * 25, zb + i * 2, NULL, ob + i * 25, NULL);
    train_net_set_owner(ev, ob, 1);
    train_losses l0, l1;
    train_net_forward(ev, trainer_params(t)->data, ns, xb, pib, lb, zb, TRAIN_MODE_EVAL, 1, 0, &l0);
    ck_assert_msg(l0.owner > 0.5, "owner loss %g", l0.owner);
    ck_assert(fabs(l0.total - (l0.policy + l0.value + l0.l2 + l0.owner)) < 1e-4);
    for (int k = 0; k < 200; k++)
        ck_assert(trainer_step(t, d, &l1, NULL, err, sizeof err) == 0);
    ck_assert(l1.owner > 0);
    train_net_forward(ev, trainer_params(t)->data, ns, xb, pib, lb, zb, TRAIN_MODE_EVAL, 1, 0, &l1);
    ck_assert_msg(l1.owner < 0.3 * l0.owner, "owner loss %g -> %g", l0.owner, l1.owner);
    train_net_free(ev);
    free(xb);
    trainer_free(t);
    /* refused by name: a dense policy head */
    snprintf(c.net.policy_head, sizeof c.net.policy_head, "dense");
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.aux_owner") != NULL, "%s", err);
    free(x), free(planes);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* The search value q: written per sample (format 3), refused out of [-1, 1], read back,
 * and mixed into the value target by dataset_set_q_ratio: 0 serves the outcome, 1 the
 * search value, 0.25 the blend; sp_writer_append (no q) stores q = z. */
START_TEST(q_value_target)
{
    mk_tmpdir();
    game *g = gen_mnk(5, 5, 4);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/q.h5", tmpdir);
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int np = g->planes * 25;
    float *planes = calloc((size_t)np, sizeof(float)), pi[25] = {0}, z[2] = {1, -1};
    uint8_t legal[25];
    memset(legal, 1, sizeof legal);
    pi[4] = 1;
    const float q[3][2] = {{0.5f, -0.5f}, {-0.2f, 0.2f}, {1.5f, -1.5f}};
    ck_assert(sp_writer_append_weighted(w, planes, pi, legal, z, q[0], 1, 0, 0, err, sizeof err) == 0);
    ck_assert(sp_writer_append_weighted(w, planes, pi, legal, z, q[1], 1, 1, 0, err, sizeof err) == 0);
    ck_assert_int_eq(sp_writer_append_weighted(w, planes, pi, legal, z, q[2], 1, 2, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "q[0] = 1.5") != NULL, "%s", err);
    ck_assert(sp_writer_append(w, planes, pi, legal, z, 3, 0, err, sizeof err) == 0);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, 3);
    const float want_q[3][2] = {{0.5f, -0.5f}, {-0.2f, 0.2f}, {1, -1}};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            ck_assert_float_eq(f->q[i * 2 + k], want_q[f->gameix[i] == 3 ? 2 : f->gameix[i]][k]);
            ck_assert_float_eq(f->z[i * 2 + k], z[k]);
        }
    ck_assert_int_eq(f->version, SP_VERSION);
    sp_file_free(f);
    /* the same file as version 2 (no q dataset): read with q = z */
    char old[300];
    snprintf(old, sizeof old, "%s/q2.h5", tmpdir);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cp %s %s", path, old);
    ck_assert_int_eq(system(cmd), 0);
    hid_t hf = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(hf >= 0);
    ck_assert(H5Ldelete(hf, "q", H5P_DEFAULT) >= 0);
    ck_assert(H5Adelete(hf, "version") >= 0);
    ck_assert_int_eq(nn_h5_attr_put_i64(hf, "version", 2), 0);
    H5Fclose(hf);
    f = sp_file_read(old, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, 2);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(f->q[i], f->z[i]);
    sp_file_free(f);
    const double ratios[3] = {0, 1, 0.25};
    float *x = malloc(sizeof(float) * (size_t)np), dpi[25], dz[2];
    uint8_t dl[25];
    for (int r = 0; r < 3; r++) {
        dataset *d = dataset_new(g, 0, err, sizeof err);
        dataset_set_q_ratio(d, ratios[r]);
        ck_assert_msg(dataset_add_path(d, path, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(dataset_train_count(d), 3);
        double sum0 = 0;
        for (int i = 0; i < 3; i++) {
            dataset_get(d, i, SYM_ID, x, dpi, dl, dz, NULL, NULL, NULL);
            ck_assert_float_eq_tol(dz[0] + dz[1], 0, 1e-6);
            sum0 += dz[0];
        }
        /* the samples' q[0] are 0.5, -0.2 and 1 (= z), their z[0] all 1 */
        double want = (1 - ratios[r]) * 3 + ratios[r] * (0.5 - 0.2 + 1);
        ck_assert_double_eq_tol(sum0, want, 1e-5);
        dataset_free(d);
    }
    free(x), free(planes);
    game_free(g);
    rm_tmpdir();
}
END_TEST

START_TEST(dataset_refuses_mismatch)
{
    mk_tmpdir();
    game *g = gen_mnk(3, 3, 3), *g5 = gen_mnk(5, 5, 4);
    char a[300], b[300], tmp[300], err[512];
    snprintf(a, sizeof a, "%s/a.h5", tmpdir);
    snprintf(b, sizeof b, "%s/b.h5", tmpdir);
    gen_random_games(g, a, 3, 1, 0);
    gen_random_games(g5, b, 3, 1, 0);
    snprintf(tmp, sizeof tmp, "%s/c.h5.tmp", tmpdir);
    FILE *f = fopen(tmp, "w");
    fputs("partial", f);
    fclose(f);
    dataset *d = dataset_new(g, 0, err, sizeof err);
    ck_assert_int_eq(dataset_add_path(d, tmpdir, err, sizeof err), -1);
    ck_assert_msg(strstr(err, b) && strstr(err, "rows is 5, expected 3"), "%s", err);
    dataset_free(d);
    unlink(b);
    d = dataset_new(g, 0, err, sizeof err);
    ck_assert_msg(dataset_add_path(d, tmpdir, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_files(d), 1);
    /* window: generations 0 and 5 -> window 1 keeps generation 5 only */
    char c5[300];
    snprintf(c5, sizeof c5, "%s/gen5.h5", tmpdir);
    gen_random_games(g, c5, 2, 2, 5);
    ck_assert(dataset_add_path(d, c5, err, sizeof err) == 0);
    int64_t before = dataset_train_count(d);
    dataset_apply_window(d, 1);
    ck_assert(dataset_train_count(d) < before && dataset_train_count(d) >= 10);
    dataset_free(d);
    game_free(g);
    game_free(g5);
    rm_tmpdir();
}
END_TEST

/* ---- mixed board sizes: the window and the trainer ------------------------------ */

/* The window with smaller boards (dataset_allow_sizes): refused without it, naming the
 * file and its rows; with it, 5x5 files of a 7x7 game's section held padded at the top
 * left and augmented with the 5x5 board's symmetries (every element of D4: a point maps
 * as on a native 5x5 board, the padding stays 0, illegal, without owner), served with
 * their board; a 9x9 file (larger), a 5x5 file of k = 3 (another game) and a
 * non-square game still refused by name; distinct positions only of the full board. */
START_TEST(dataset_mixed_sizes)
{
    mk_tmpdir();
    gz_config c;
    game *g = mnk_section(&c, 7, 4);
    char a7[300], a5[300], b9[300], k3[300], err[512];
    snprintf(a7, sizeof a7, "%s/a7.h5", tmpdir);
    snprintf(a5, sizeof a5, "%s/a5.h5", tmpdir);
    snprintf(b9, sizeof b9, "%s/b9.h5", tmpdir);
    snprintf(k3, sizeof k3, "%s/k3.h5", tmpdir);
    int64_t n7 = sized_games(&c, 7, 4, a7, 3, 81, 1), n5 = sized_games(&c, 5, 4, a5, 4, 82, 1);
    sized_games(&c, 9, 4, b9, 1, 83, 1);
    sized_games(&c, 5, 3, k3, 1, 84, 1);
    dataset *d = dataset_new(g, 0, err, sizeof err);
    ck_assert_int_eq(dataset_add_path(d, a5, err, sizeof err), -1);
    ck_assert_msg(strstr(err, a5) && strstr(err, "rows is 5, expected 7"), "%s", err);
    ck_assert(dataset_allow_sizes(d, &c.game));
    ck_assert_msg(dataset_add_path(d, a7, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(dataset_add_path(d, a5, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(dataset_add_path(d, b9, err, sizeof err), -1);
    ck_assert_msg(strstr(err, b9) && strstr(err, "larger than the network's 7x7"), "%s", err);
    ck_assert_int_eq(dataset_add_path(d, k3, err, sizeof err), -1);
    ck_assert_msg(strstr(err, k3) && strstr(err, "not this game's on a 5x5 board"), "%s", err);
    ck_assert_int_eq(dataset_train_count(d), n7 + n5);
    ck_assert_int_eq(dataset_smaller_count(d), n5);
    /* the held 5x5 samples against the file, padded, under every symmetry */
    sp_file *f = sp_file_read(a5, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    int P = g->planes, hw = 49;
    float *x0 = malloc(sizeof(float) * P * hw), *x1 = malloc(sizeof(float) * P * hw);
    float pi0[49], pi1[49], z0[2], z1[2];
    uint8_t l0[49], l1[49];
    for (int64_t j = 0; j < n5; j += 3) {
        int64_t i = n7 + j;
        ck_assert_int_eq(dataset_side(d, i), 5);
        ck_assert_int_eq(dataset_side(d, j < n7 ? j : 0), 0);
        dataset_get(d, i, SYM_ID, x0, pi0, l0, z0, NULL, NULL, NULL);
        for (int q = 0; q < hw; q++) {
            int r = q / 7, cc = q % 7, on = r < 5 && cc < 5, fq = r * 5 + cc;
            ck_assert(l0[q] == (on ? f->legal[j * 25 + fq] : 0));
            ck_assert(pi0[q] == (on ? f->pi[j * 25 + fq] : 0));
            for (int p = 0; p < P; p++)
                ck_assert(x0[p * hw + q] == (on ? f->state[(j * P + p) * 25 + fq] / 255.0f : 0));
        }
        ck_assert(z0[0] == f->z[j * 2]);
        for (int k = 0; k < 8; k++) {
            sym_id sy = g->sym[k];
            dataset_get(d, i, sy, x1, pi1, l1, z1, NULL, NULL, NULL);
            for (int q = 0; q < hw; q++) {
                int r = q / 7, cc = q % 7, r2, c2;
                if (r >= 5 || cc >= 5) { /* nothing is mapped onto the padding */
                    ck_assert(l1[q] == 0 && pi1[q] == 0 && x1[q] == 0 && x1[hw + q] == 0);
                    continue;
                }
                sym_map_point(sy, 5, 5, r, cc, &r2, &c2);
                int b = r2 * 7 + c2;
                for (int p = 0; p < P; p++)
                    ck_assert(x1[p * hw + b] == x0[p * hw + q]);
                ck_assert(pi1[b] == pi0[q] && l1[b] == l0[q]);
            }
        }
    }
    /* served with their boards */
    rng r;
    rng_seed(&r, 85);
    int n = 64;
    float *xb = malloc(sizeof(float) * n * P * hw), *pib = malloc(sizeof(float) * n * hw), zb[128];
    uint8_t *lb = malloc((size_t)n * hw), rows[64], cols[64];
    dataset_sample(d, &r, n, 1, xb, pib, lb, zb, NULL, NULL, NULL, rows, cols);
    int seen5 = 0;
    for (int b = 0; b < n; b++) {
        ck_assert(rows[b] == cols[b] && (rows[b] == 5 || rows[b] == 7));
        seen5 += rows[b] == 5;
        for (int q = 0; q < hw && rows[b] == 5; q++)
            if (q / 7 >= 5 || q % 7 >= 5)
                ck_assert(lb[b * hw + q] == 0 && xb[((size_t)b * P + P - 1) * hw + q] == 0);
    }
    ck_assert(seen5 > 5 && seen5 < n - 5);
    /* calibration's distinct positions: the full board's only */
    int64_t *idx = NULL, m = dataset_distinct(d, 0, &idx);
    ck_assert(m > 0);
    for (int64_t k = 0; k < m; k++)
        ck_assert(idx[k] < n7);
    free(idx);
    /* a rectangular game's window cannot mix sizes */
    game *gr = gen_mnk(7, 6, 4);
    dataset *dr = dataset_new(gr, 0, err, sizeof err);
    gz_config cr = c;
    cr.game.cols = 6;
    ck_assert(!dataset_allow_sizes(dr, &cr.game));
    dataset_free(dr);
    game_free(gr);
    free(x0), free(x1), free(xb), free(pib), free(lb);
    sp_file_free(f);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* A mixed-size window (7x7 and 5x5 games of one game section) trains: the loss of batches
 * that mix the sizes falls (the first 10 steps' mean against the last 10 of 120), with
 * every masking head, and the validation of mixed batches runs. */
START_TEST(mixed_sizes_train)
{
    mk_tmpdir();
    game *g;
    char err[512];
    dataset *d = mixed_window(&g, 7, 5, 4, 6, 91, 0.2);
    nn_spec s = aux_policy(mean_max(spec_for(g, 1, 16)));
    nn_params *p = nn_params_new(&s, err, sizeof err);
    nn_params_init_he(p, 93);
    cfg_train tc = train_cfg("adam", 32, 0.003, 1e-4);
    trainer *t = trainer_new(p, &tc, 120, 94, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    double first = 0, last = 0;
    train_losses l;
    for (int k = 0; k < 120; k++) {
        ck_assert_msg(trainer_step(t, d, &l, NULL, err, sizeof err) == 0, "%s", err);
        if (k < 10)
            first += l.total / 10;
        if (k >= 110)
            last += l.total / 10;
    }
    ck_assert_msg(last < first - 0.2, "the loss did not fall: %.4f -> %.4f", first, last);
    train_losses v;
    ck_assert(trainer_validate(t, d, 0, &v) > 0 && isfinite(v.total) && v.total > 0);
    trainer_free(t);
    dataset_free(d);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* gridzero train end to end: sample files -> a model the reference forward loads and
 * runs; metrics JSON lines; a second invocation --from the model; a mismatched data
 * file refused by name with exit status 2 and no model written. */
START_TEST(cli_train_end_to_end)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    mk_tmpdir();
    game *g = gen_mnk(3, 3, 3);
    char data[300], path[700], model[300], model2[300], metrics[300], cmd[2048], err[512];
    snprintf(data, sizeof data, "%s/data", tmpdir);
    ck_assert_int_eq(mkdir(data, 0755), 0);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/gen%d.h5", data, k);
        gen_random_games(g, path, 60, 80 + k, k);
    }
    snprintf(model, sizeof model, "%s/m1.h5", tmpdir);
    snprintf(model2, sizeof model2, "%s/m2.h5", tmpdir);
    snprintf(metrics, sizeof metrics, "%s/metrics.jsonl", tmpdir);
    snprintf(cmd, sizeof cmd,
             "%s train --set train.batch_size=32 --set train.log_every=10 --data %s -o %s --steps 30 "
             "--metrics %s > %s/out.txt 2>&1",
             bin, data, model, metrics, tmpdir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    nn_ckpt_meta meta;
    nn_params *p = nn_ckpt_load(model, g, &meta, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(meta.generation, 2);
    ck_assert_int_eq(meta.step, 30);
    float x[45] = {0}, pol[9], val[2];
    for (int i = 27; i < 36; i++)
        x[i] = 1; /* the on-board plane */
    ck_assert(nn_ref_forward(p, 3, 3, 1, x, NULL, pol, val, NULL, err, sizeof err) == 0);
    ck_assert(isfinite(val[0]) && isfinite(pol[4]));
    /* the oneDNN inference (what the network evaluator plays with) loads it and agrees */
    nn_infer *inf = nn_infer_new(p, 3, 3, NN_PREC_FP32, 1, err, sizeof err);
    ck_assert_msg(inf != NULL, "%s", err);
    float pol2[9], val2[2];
    ck_assert_msg(nn_infer_run(inf, 1, x, NULL, pol2, val2, err, sizeof err) == 0, "%s", err);
    for (int a = 0; a < 9; a++)
        ck_assert(fabsf(pol[a] - pol2[a]) < 1e-3f);
    ck_assert(fabsf(val[0] - val2[0]) < 1e-3f && fabsf(val[1] - val2[1]) < 1e-3f);
    nn_infer_free(inf);
    nn_params_free(p);
    FILE *f = fopen(metrics, "r");
    ck_assert_ptr_nonnull(f);
    char line[2048];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        ck_assert(strstr(line, "\"policy_ce\"") && strstr(line, "\"val_value_mse\"") &&
                  strstr(line, "\"samples_per_s\""));
        lines++;
    }
    fclose(f);
    ck_assert_int_eq(lines, 3);
    snprintf(cmd, sizeof cmd, "%s train --set train.batch_size=32 --data %s --from %s -o %s --steps 5 > /dev/null 2>&1",
             bin, data, model, model2);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    p = nn_ckpt_load(model2, g, &meta, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(meta.step, 35);
    ck_assert_str_eq(meta.parent, model);
    nn_params_free(p);
    /* --from a model without the training-only heads the config asks for: they are added
     * (initialised afresh), the rest kept, and the optimizer starts a new run */
    char model4[300];
    snprintf(model4, sizeof model4, "%s/m4.h5", tmpdir);
    snprintf(cmd, sizeof cmd, "%s train --set train.batch_size=32 --set net.aux_owner=true --set "
             "net.aux_policy=true --data %s --from %s -o %s --steps 2 > %s/out4.txt 2>&1",
             bin, data, model2, model4, tmpdir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    p = nn_ckpt_load(model4, g, &meta, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert(p->layout.spec.aux_owner && p->layout.spec.aux_policy);
    ck_assert_int_ge(p->layout.own_w, 0);
    nn_params_free(p);
    snprintf(path, sizeof path, "%s/out4.txt", tmpdir);
    f = fopen(path, "r");
    ck_assert(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    ck_assert_msg(strstr(line, "heads added: policy.aux.weight, policy.aux.bias, owner.weight, owner.bias") &&
                      strstr(line, "a new optimizer run"),
                  "%s", line);
    /* gridzero info describes a sample file */
    snprintf(cmd, sizeof cmd, "%s info %s/gen1.h5 > %s/info.txt 2>&1", bin, data, tmpdir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/info.txt", tmpdir);
    f = fopen(path, "r");
    ck_assert(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    ck_assert_msg(strstr(line, "gridzero samples"), "%s", line);
    /* a file of a larger board: refused by name, exit 2, nothing written */
    game *g5 = gen_mnk(5, 5, 4);
    snprintf(path, sizeof path, "%s/other.h5", data);
    gen_random_games(g5, path, 2, 1, 0);
    char model3[300];
    snprintf(model3, sizeof model3, "%s/m3.h5", tmpdir);
    snprintf(cmd, sizeof cmd, "%s train --data %s -o %s --steps 5 > %s/out3.txt 2>&1", bin, data, model3, tmpdir);
    int st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    ck_assert(access(model3, F_OK) != 0);
    snprintf(path, sizeof path, "%s/out3.txt", tmpdir);
    f = fopen(path, "r");
    ck_assert(fgets(line, sizeof line, f) != NULL);
    fclose(f);
    ck_assert_msg(strstr(line, "other.h5") && strstr(line, "larger") && strstr(line, "rows is 5, expected at most 3"),
                  "%s", line);
    /* -o onto a --data file, or into a --data directory: refused, the samples intact */
    snprintf(path, sizeof path, "%s/gen1.h5", data);
    snprintf(cmd, sizeof cmd, "%s train --data %s -o %s --steps 1 > /dev/null 2>&1", bin, path, path);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    snprintf(cmd, sizeof cmd, "%s info %s 2>&1", bin, path);
    f = popen(cmd, "r");
    ck_assert(fgets(line, sizeof line, f) != NULL);
    pclose(f);
    ck_assert_msg(strstr(line, "gridzero samples"), "%s", line);
    snprintf(path, sizeof path, "%s/m4.h5", data);
    snprintf(cmd, sizeof cmd, "%s train --data %s -o %s --steps 1 > /dev/null 2>&1", bin, data, path);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    ck_assert(access(path, F_OK) != 0);
    game_free(g5);
    game_free(g);
    rm_tmpdir();
}
END_TEST

/* Runs cmd (stdout and stderr into out); returns its exit status. */
static int run_capture(const char *cmd, char *out, size_t outlen)
{
    char full[2200];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, outlen - 1, f);
    out[n] = 0;
    int st = pclose(f);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* gridzero train and info on sample files they must refuse: an empty file (no
 * training samples: the message names it), and a file whose legal masks are all zero
 * (no legal move: named with the dataset and the sample). Exit 2, no model written. */
START_TEST(cli_train_refuses_bad_files)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    mk_tmpdir();
    game *g = gen_mnk(3, 3, 3);
    char empty[300], model[300], cmd[2048], out[4096], err[512];
    snprintf(empty, sizeof empty, "%s/empty.h5", tmpdir);
    snprintf(model, sizeof model, "%s/m.h5", tmpdir);
    sp_writer *w = sp_writer_open(empty, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    snprintf(cmd, sizeof cmd, "%s train --data %s -o %s --steps 1", bin, empty, model);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "no training samples") && strstr(out, empty), "%s", out);
    ck_assert(access(model, F_OK) != 0);
    /* all-zero legal masks: written through HDF5 directly (the writer keeps them 0/1) */
    char zero[300];
    snprintf(zero, sizeof zero, "%s/zero.h5", tmpdir);
    gen_random_games(g, zero, 2, 1, 0);
    hid_t f = H5Fopen(zero, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t d = H5Dopen2(f, "legal", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    uint8_t *zeros = calloc(dims[0] * dims[1], 1);
    ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros), 0);
    free(zeros);
    H5Sclose(sp);
    H5Dclose(d);
    ck_assert_int_ge(H5Fclose(f), 0);
    snprintf(cmd, sizeof cmd, "%s train --data %s -o %s --steps 1", bin, zero, model);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, zero) && strstr(out, "dataset legal") && strstr(out, "sample 0") &&
                      strstr(out, "no legal move"), "%s", out);
    ck_assert(access(model, F_OK) != 0);
    snprintf(cmd, sizeof cmd, "%s info %s", bin, zero);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, zero) && strstr(out, "no legal move"), "%s", out);
    game_free(g);
    rm_tmpdir();
}
END_TEST

#ifdef GZ_TRAIN_SLOW
/* The slow suite (test_train_slow.c includes this file): the same oracles on larger
 * nets, where im2col runs in several chunks and every layer has realistic widths. */
START_TEST(slow_grad_bigger)
{
    grad_case(tiny_spec(GAME_LATTICE_HEX, 7, 7, 2, 6, 3, NN_POLICY_DENSE, NN_TRUNK_RESIDUAL), 101);
    grad_case(tiny_spec(GAME_LATTICE_SQUARE, 6, 5, 2, 6, 2, NN_POLICY_CONV, NN_TRUNK_PLAIN), 102);
}
END_TEST

START_TEST(slow_eval_reference_large)
{
    nn_spec a = tiny_spec(GAME_LATTICE_SQUARE, 15, 15, 2, 32, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
    a.planes = 5;
    ref_case(a, 111);
    nn_spec b = tiny_spec(GAME_LATTICE_HEX, 32, 32, 1, 16, 3, NN_POLICY_CONV, NN_TRUNK_RESIDUAL);
    b.planes = 7;
    ref_case(b, 112);
}
END_TEST
#endif

static Suite *train_suite(void)
{
#ifdef GZ_TRAIN_SLOW
    Suite *slow = suite_create("train_slow");
    TCase *ts = tcase_create("large");
    tcase_set_timeout(ts, 1200);
    tcase_add_test(ts, slow_grad_bigger);
    tcase_add_test(ts, slow_eval_reference_large);
    suite_add_tcase(slow, ts);
    return slow;
#endif
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("net");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, grad_square_residual);
    tcase_add_test(tc, grad_hex_residual);
    tcase_add_test(tc, grad_winograd_trunk);
    tcase_add_test(tc, grad_square_plain_dense);
    tcase_add_test(tc, grad_zerosum_value);
    tcase_add_test(tc, grad_wdl_value);
    tcase_add_test(tc, grad_value_pool_mean_max);
    tcase_add_test(tc, grad_score_value);
    tcase_add_test(tc, grad_action_value);
    tcase_add_test(tc, grad_aux_policy);
    tcase_add_test(tc, grad_aux_owner);
    tcase_add_test(tc, zerosum_values_and_loss);
    tcase_add_test(tc, wdl_values_and_loss);
    tcase_add_test(tc, eval_equals_reference);
    tcase_add_test(tc, grad_mixed_boards);
    tcase_add_test(tc, mixed_equals_native);
    tcase_add_test(tc, mixed_batch_is_its_sizes);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("training");
    tcase_set_timeout(tl, 120);
    tcase_add_test(tl, schedules);
    tcase_add_test(tl, overfit_tiny_batch);
    tcase_add_test(tl, value_learns_rule);
    tcase_add_test(tl, augmentation_square);
    tcase_add_test(tl, augmentation_rect);
    tcase_add_test(tl, resume_sgd);
    tcase_add_test(tl, resume_adam);
    tcase_add_test(tl, data_parallel_equals_one_process);
    tcase_add_test(tl, data_parallel_mixed_sizes);
    tcase_add_test(tl, hex_mask_and_nan);
    tcase_add_test(tl, dataset_refuses_mismatch);
    tcase_add_test(tl, dataset_mixed_sizes);
    tcase_add_test(tl, mixed_sizes_train);
    tcase_add_test(tl, policy_weight_round_trip);
    tcase_add_test(tl, q_value_target);
    tcase_add_test(tl, opponent_reply_targets);
    tcase_add_test(tl, ownership_targets);
    tcase_add_test(tl, cli_train_end_to_end);
    tcase_add_test(tl, cli_train_refuses_bad_files);
    suite_add_tcase(s, tl);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(train_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
