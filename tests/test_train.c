/* The trainer: the whole network's gradient against finite differences (both lattices,
 * residual and plain trunks, conv and dense policy heads), the eval-mode forward
 * against nn's reference forward (the oracle), and training behaviour (overfitting,
 * a value rule, augmentation, resume, hex masks). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rng.h"
#include "nn/infer.h"
#include "nn/params.h"
#include "train/net_train.h"

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
        for (int p = 0; p < b.P; p++)
            b.z[i * b.P + p] = (float)(2 * rng_uniform(r) - 1);
    }
    return b;
}

static void free_batch(batch *b) { free(b->x), free(b->pi), free(b->z), free(b->legal); }

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
static void grad_case(nn_spec s, uint64_t seed)
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
    const nn_layout *L = &p->layout;
    int hw = s.rows * s.cols;
    /* double */
    dctx c = {train_net_new_f64(L, n, err, sizeof err), to_d(p->data, L->count),
              to_d(b.x, (size_t)n * s.planes * hw), to_d(b.pi, (size_t)n * s.actions),
              to_d(b.z, (size_t)n * s.players), b.legal, n};
    ck_assert_ptr_nonnull(c.t);
    double *dg = calloc(L->count, sizeof(double));
    dloss(&c);
    train_net_backward_f64(c.t, c.params, dg, VW, WD);
    /* float */
    train_net *t = train_net_new(L, n, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    float *fg = calloc(L->count, sizeof(float));
    train_losses fl;
    train_net_forward(t, p->data, n, b.x, b.pi, b.legal, b.z, TRAIN_MODE_TRAIN, VW, WD, &fl);
    train_net_backward(t, p->data, fg, VW, WD);
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
    free(dg), free(fg), free(c.params), free(c.x), free(c.pi), free(c.z);
    free_batch(&b);
    train_net_free_f64(c.t);
    train_net_free(t);
    nn_params_free(p);
}

START_TEST(grad_square_residual)
{
    grad_case(tiny_spec(GAME_LATTICE_SQUARE, 4, 4, 1, 4, 2, NN_POLICY_CONV, NN_TRUNK_RESIDUAL), 11);
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
}
END_TEST

static Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("net");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, grad_square_residual);
    tcase_add_test(tc, grad_hex_residual);
    tcase_add_test(tc, grad_square_plain_dense);
    tcase_add_test(tc, eval_equals_reference);
    suite_add_tcase(s, tc);
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
