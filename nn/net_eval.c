/* net_eval.c — the network evaluator and its position cache (see net_eval.h). */
#include "net_eval.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "engine/rng.h"
#include "engine/symmetry.h"

/* ---- the cache ---- */

#define CACHE_STRIPES 64

typedef struct cache_entry {
    uint64_t key;    /* 0 with used == 0: empty */
    uint32_t used;
    float scale;     /* 1 / the sum of (q + 0.5) over the stored priors: a hit is one pass */
    float values[GAME_MAX_PLAYERS];
} cache_entry;

struct nn_cache {
    /* immutable after nn_cache_new */
    int entries, actions, players;
    /* mutated under stripe locks */
    cache_entry *e;
    uint16_t *prior; /* entries x actions, quantised priors in legal-action order */
    pthread_mutex_t lock[CACHE_STRIPES];
};

nn_cache *nn_cache_new(int entries, int actions, int players)
{
    if (entries < 1 || actions < 1 || players < 1 || players > GAME_MAX_PLAYERS)
        return NULL;
    nn_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->entries = entries;
    c->actions = actions;
    c->players = players;
    c->e = calloc((size_t)entries, sizeof *c->e);
    c->prior = malloc(sizeof(uint16_t) * (size_t)entries * (size_t)actions);
    if (!c->e || !c->prior) {
        free(c->e);
        free(c->prior);
        free(c);
        return NULL;
    }
    for (int i = 0; i < CACHE_STRIPES; i++)
        pthread_mutex_init(&c->lock[i], NULL);
    return c;
}

void nn_cache_free(nn_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CACHE_STRIPES; i++)
        pthread_mutex_destroy(&c->lock[i]);
    free(c->e);
    free(c->prior);
    free(c);
}

static size_t slot_of(const nn_cache *c, uint64_t key)
{
    /* the key is a Zobrist hash: mix anyway so that low bits of structured keys spread */
    uint64_t h = key * 0x9e3779b97f4a7c15ULL;
    return (size_t)((h >> 20) % (uint64_t)c->entries);
}

bool nn_cache_get(nn_cache *c, uint64_t key, const uint8_t *legal, float *priors, float *values)
{
    size_t i = slot_of(c, key);
    pthread_mutex_t *m = &c->lock[i % CACHE_STRIPES];
    pthread_mutex_lock(m);
    cache_entry *e = &c->e[i];
    bool hit = e->used && e->key == key;
    if (hit) {
        const uint16_t *q = c->prior + i * (size_t)c->actions;
        float scale = e->scale;
        for (int a = 0, k = 0; a < c->actions; a++)
            priors[a] = legal[a] ? ((float)q[k++] + 0.5f) * scale : 0.0f;
        memcpy(values, e->values, sizeof(float) * (size_t)c->players);
    }
    pthread_mutex_unlock(m);
    return hit;
}

void nn_cache_put(nn_cache *c, uint64_t key, const uint8_t *legal, const float *priors,
                  const float *values)
{
    size_t i = slot_of(c, key);
    pthread_mutex_t *m = &c->lock[i % CACHE_STRIPES];
    pthread_mutex_lock(m);
    cache_entry *e = &c->e[i];
    e->key = key;
    e->used = 1;
    memcpy(e->values, values, sizeof(float) * (size_t)c->players);
    uint16_t *q = c->prior + i * (size_t)c->actions;
    int k = 0;
    double sum = 0;
    for (int a = 0; a < c->actions; a++)
        if (legal[a]) {
            float v = priors[a] * 65535.0f;
            q[k] = (uint16_t)(v > 65535.0f ? 65535.0f : v < 0 ? 0 : v);
            sum += q[k++] + 0.5;
        }
    e->scale = sum > 0 ? (float)(1.0 / sum) : 0.0f;
    pthread_mutex_unlock(m);
}

/* ---- the evaluator ---- */

typedef struct net_eval {
    /* immutable after net_eval_new */
    const game *g;
    net_eval_opts o;
    int planes, hw, actions, players, max_batch;
    bool point_actions;   /* actions map under symmetries (points, or the game's hook) */
    bool score_head;      /* the model's values are h(points to come) */
    bool wdl_head;        /* the model's values are W - L of a win/draw/loss head */
    /* owned */
    nn_infer *inf;
    nn_cache *own_cache;
    /* mutated per call (preallocated scratch) */
    nn_cache *cache; /* own_cache or the shared one */
    rng r;
    float *planes_buf;    /* planes * hw: encode before a symmetry */
    uint8_t *legal_sym;   /* max_batch * actions */
    float *pol;           /* max_batch * actions: network output (symmetric frame) */
    float *val;           /* max_batch * players: mover-first */
    int *idx;             /* max_batch: which input position each batch row is */
    int *symk;            /* max_batch: the row's symmetry, an index into g->sym */
    int32_t *map;         /* [nsym][hw]: map[k][i] = g->sym[k](i), point i's image (with
                             point actions; NULL otherwise) */
    int32_t *amap;        /* [nsym][actions]: amap[k][a] = action a's image under g->sym[k]
                             (= map for point actions; the game's sym_action for 2048) */
    net_eval_times times;
} net_eval;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void net_eval_destroy(evaluator *e)
{
    if (!e)
        return;
    net_eval *ne = e->ctx;
    if (ne) {
        nn_infer_free(ne->inf);
        nn_cache_free(ne->own_cache);
        free(ne->planes_buf), free(ne->legal_sym), free(ne->pol), free(ne->val), free(ne->idx),
            free(ne->symk), free(ne->map), free(ne->amap);
        free(ne);
    }
    free(e);
}

/* Runs rows [0, m) of the current chunk and writes their outputs. Symmetries go through
 * the index tables: planes and the legal mask scattered to their images, the policy
 * gathered back (pr[a] = po[s(a)]). */
static int run_chunk(net_eval *ne, int m, const game_state *const *states, const uint64_t *keys,
                     const uint8_t *legal, float *priors, float *values, char *err, size_t errlen)
{
    const game *g = ne->g;
    double t0 = now_s();
    float *in = nn_infer_input(ne->inf, m, err, errlen);
    if (!in)
        return -1;
    ne->times.setup_s += now_s() - t0;
    int hw = ne->hw, A = ne->actions, P = ne->players;
    size_t per = (size_t)ne->planes * (size_t)hw;
    for (int j = 0; j < m; j++) {
        int i = ne->idx[j];
        const uint8_t *lg = legal + (size_t)i * A;
        uint8_t *ls = ne->legal_sym + (size_t)j * A;
        float *x = in + per * (size_t)j;
        if (g->sym[ne->symk[j]] == SYM_ID) {
            game_encode(g, states[i], x);
            memcpy(ls, lg, (size_t)A);
            continue;
        }
        const int32_t *map = ne->map + (size_t)ne->symk[j] * hw;
        game_encode(g, states[i], ne->planes_buf);
        for (int p = 0; p < ne->planes; p++) {
            const float *src = ne->planes_buf + (size_t)p * hw;
            float *dst = x + (size_t)p * hw;
            for (int q = 0; q < hw; q++)
                dst[map[q]] = src[q];
        }
        const int32_t *amap = ne->amap + (size_t)ne->symk[j] * A;
        for (int a = 0; a < A; a++)
            ls[amap[a]] = lg[a];
    }
    t0 = now_s();
    if (nn_infer_run(ne->inf, m, in, ne->legal_sym, ne->pol, ne->val, err, errlen) < 0)
        return -1;
    ne->times.forward_s += now_s() - t0;
    ne->times.forwards++;
    for (int j = 0; j < m; j++) {
        int i = ne->idx[j];
        float *pr = priors + (size_t)i * A;
        const float *po = ne->pol + (size_t)j * A;
        if (g->sym[ne->symk[j]] == SYM_ID) {
            memcpy(pr, po, sizeof(float) * (size_t)A);
        } else {
            const int32_t *amap = ne->amap + (size_t)ne->symk[j] * A;
            for (int a = 0; a < A; a++)
                pr[a] = po[amap[a]];
        }
        int mover = game_current_player(g, states[i]);
        float *v = values + (size_t)i * P;
        for (int k = 0; k < P; k++)
            v[(mover + k) % P] = ne->val[(size_t)j * P + k];
        if (ne->score_head) /* h(points) back to points for the search */
            for (int k = 0; k < P; k++)
                v[k] = (float)nn_value_to_score(v[k]);
        if (ne->cache && keys)
            nn_cache_put(ne->cache, keys[i], legal + (size_t)i * A, pr, v);
    }
    return 0;
}

/* evaluate() without its clock: cache probes, then the misses in chunks of max_batch. */
static int evaluate_timed(evaluator *e, int n, const game_state *const *states,
                          const uint64_t *keys, const uint8_t *legal, float *priors, float *values,
                          char *err, size_t errlen)
{
    net_eval *ne = e->ctx;
    int m = 0;
    for (int i = 0; i < n; i++) {
        const uint8_t *lg = legal + (size_t)i * ne->actions;
        if (ne->cache && keys &&
            nn_cache_get(ne->cache, keys[i], lg, priors + (size_t)i * ne->actions,
                         values + (size_t)i * ne->players)) {
            e->cache_hits++;
            continue;
        }
        ne->idx[m] = i;
        if (ne->o.symmetry == NET_SYM_RANDOM && ne->map)
            ne->symk[m] = (int)rng_below(&ne->r, (uint32_t)ne->g->nsym);
        else if (ne->o.symmetry >= 0 && ne->map)
            ne->symk[m] = ne->o.symmetry;
        else
            ne->symk[m] = 0; /* g->sym[0] is the identity */
        if (++m == ne->max_batch) {
            if (run_chunk(ne, m, states, keys, legal, priors, values, err, errlen) < 0)
                return -1;
            m = 0;
        }
    }
    if (m > 0 && run_chunk(ne, m, states, keys, legal, priors, values, err, errlen) < 0)
        return -1;
    return 0;
}

static int net_eval_evaluate(evaluator *e, int n, const game_state *const *states,
                             const uint64_t *keys, const uint8_t *legal, float *priors,
                             float *values, char *err, size_t errlen)
{
    net_eval *ne = e->ctx;
    double t0 = now_s();
    int rc = evaluate_timed(e, n, states, keys, legal, priors, values, err, errlen);
    ne->times.evaluate_s += now_s() - t0;
    return rc;
}

int net_eval_warm_up(evaluator *e, int batch, char *err, size_t errlen)
{
    assert(e->evaluate == net_eval_evaluate);
    net_eval *ne = e->ctx;
    if (batch > ne->max_batch)
        batch = ne->max_batch;
    /* zero planes and every action legal: the values do not matter, the plans do */
    memset(ne->legal_sym, 1, (size_t)batch * (size_t)ne->actions);
    for (int n = 1; n <= batch; n++) {
        float *in = nn_infer_input(ne->inf, n, err, errlen);
        if (!in)
            return -1;
        memset(in, 0, sizeof(float) * (size_t)n * (size_t)ne->planes * (size_t)ne->hw);
        if (nn_infer_run(ne->inf, n, in, ne->legal_sym, ne->pol, ne->val, err, errlen) < 0)
            return -1;
    }
    return 0;
}

bool net_eval_times_get(const evaluator *e, net_eval_times *t)
{
    memset(t, 0, sizeof *t);
    if (!e || e->evaluate != net_eval_evaluate)
        return false;
    *t = ((const net_eval *)e->ctx)->times;
    return true;
}

int net_eval_wdl(evaluator *e, const game_state *s, float *wdl, char *err, size_t errlen)
{
    if (e->evaluate != net_eval_evaluate || !((net_eval *)e->ctx)->wdl_head)
        return 0;
    net_eval *ne = e->ctx;
    const game *g = ne->g;
    float *in = nn_infer_input(ne->inf, 1, err, errlen);
    if (!in)
        return -1;
    game_encode(g, s, in);
    game_legal(g, s, ne->legal_sym);
    float raw[NN_VALUE_MAX_OUTPUTS];
    if (nn_infer_run_raw(ne->inf, 1, in, ne->legal_sym, ne->pol, ne->val, raw, err, errlen) < 0)
        return -1;
    nn_value_wdl(raw, wdl);
    return 1;
}

nn_precision net_eval_precision(const evaluator *e)
{
    assert(e->evaluate == net_eval_evaluate);
    return nn_infer_precision(((const net_eval *)e->ctx)->inf);
}

const char *net_eval_kind(const evaluator *e)
{
    assert(e->evaluate == net_eval_evaluate);
    return nn_infer_kind(((const net_eval *)e->ctx)->inf);
}

int net_eval_opts_from_config(net_eval_opts *o, const gz_config *c, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (nn_precision_parse(c->net.precision, &o->precision) < 0) {
        snprintf(err, errlen, "key net.precision: expected auto, fp32, bf16 or int8, got \"%s\"",
                 c->net.precision);
        return -1;
    }
    if (nn_int8_kernel_parse(c->net.int8_kernel, &o->int8_kernel) < 0) {
        snprintf(err, errlen, "key net.int8_kernel: expected auto, onednn, direct or winograd, got \"%s\"",
                 c->net.int8_kernel);
        return -1;
    }
    o->threads = c->net.threads;
    /* a self-play worker gathers up to parallel_games * batch leaves per call */
    long mb = (long)c->mcts.batch * c->selfplay.parallel_games;
    if (c->net.max_batch > 0 && c->net.max_batch < mb)
        mb = c->net.max_batch;
    o->max_batch = mb < NN_MAX_BATCH ? (int)mb : NN_MAX_BATCH;
    o->first_batch = c->mcts.batch < o->max_batch ? c->mcts.batch : o->max_batch;
    o->symmetry = NET_SYM_RANDOM;
    o->seed = rng_derive(c->seed, 0x6e6574);
    o->cache_entries = c->net.cache;
    o->cache = NULL;
    return 0;
}

evaluator *net_eval_new(const game *g, const nn_params *p, const net_eval_opts *o, char *err,
                        size_t errlen)
{
    if (nn_spec_check_game(&p->layout.spec, g, err, errlen) < 0)
        return NULL;
    if (o->max_batch < 1 || o->max_batch > NN_MAX_BATCH) {
        snprintf(err, errlen, "network evaluator: max batch %d out of range 1..%d", o->max_batch,
                 NN_MAX_BATCH);
        return NULL;
    }
    if (o->symmetry >= g->nsym) {
        snprintf(err, errlen, "network evaluator: symmetry %d: game %s has %d", o->symmetry, g->name,
                 g->nsym);
        return NULL;
    }
    evaluator *e = calloc(1, sizeof *e);
    net_eval *ne = calloc(1, sizeof *ne);
    if (!e || !ne) {
        free(e);
        free(ne);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->name = "net";
    e->g = g;
    e->evaluate = net_eval_evaluate;
    e->destroy = net_eval_destroy;
    e->ctx = ne;
    ne->g = g;
    ne->o = *o;
    ne->planes = g->planes;
    ne->hw = g->rows * g->cols;
    ne->actions = g->actions;
    ne->players = g->players;
    ne->max_batch = o->max_batch;
    /* symmetries need actions that map: points, or the game's own map (2048) */
    ne->point_actions = g->actions == g->rows * g->cols || g->ops->sym_action;
    ne->score_head = p->layout.spec.value == NN_VALUE_SCORE;
    ne->wdl_head = p->layout.spec.value == NN_VALUE_WDL;
    rng_seed(&ne->r, o->seed);
    size_t mb = (size_t)o->max_batch;
    ne->planes_buf = malloc(sizeof(float) * (size_t)ne->planes * (size_t)ne->hw);
    ne->legal_sym = malloc(mb * (size_t)ne->actions);
    ne->pol = malloc(sizeof(float) * mb * (size_t)ne->actions);
    ne->val = malloc(sizeof(float) * mb * (size_t)ne->players);
    ne->idx = malloc(sizeof(int) * mb);
    ne->symk = malloc(sizeof(int) * mb);
    if (ne->point_actions) {
        ne->map = malloc(sizeof(int32_t) * (size_t)g->nsym * (size_t)ne->hw);
        ne->amap = malloc(sizeof(int32_t) * (size_t)g->nsym * (size_t)ne->actions);
    }
    assert(g->nsym >= 1 && g->sym[0] == SYM_ID);
    for (int k = 0; ne->map && ne->amap && k < g->nsym; k++) {
        for (int q = 0; q < ne->hw; q++) {
            int r2, c2;
            sym_map_point(g->sym[k], g->rows, g->cols, q / g->cols, q % g->cols, &r2, &c2);
            ne->map[(size_t)k * ne->hw + q] = r2 * g->cols + c2;
        }
        for (int a = 0; a < ne->actions; a++)
            ne->amap[(size_t)k * ne->actions + a] = sym_map_action(g, g->sym[k], a);
    }
    if (!ne->planes_buf || !ne->legal_sym || !ne->pol || !ne->val || !ne->idx || !ne->symk ||
        (ne->point_actions && (!ne->map || !ne->amap))) {
        snprintf(err, errlen, "out of memory");
        net_eval_destroy(e);
        return NULL;
    }
    if (o->cache) {
        ne->cache = o->cache;
    } else if (o->cache_entries > 0) {
        ne->own_cache = nn_cache_new(o->cache_entries, g->actions, g->players);
        if (!ne->own_cache) {
            snprintf(err, errlen, "out of memory (cache of %d entries)", o->cache_entries);
            net_eval_destroy(e);
            return NULL;
        }
        ne->cache = ne->own_cache;
    }
    ne->inf = nn_infer_new(p, g->rows, g->cols, o->precision, o->threads, err, errlen);
    if (!ne->inf || nn_infer_set_int8_kernel(ne->inf, o->int8_kernel, err, errlen) < 0) {
        net_eval_destroy(e);
        return NULL;
    }
    /* build the plan of the usual batch now, not in the first search step */
    int first = o->first_batch >= 1 && o->first_batch <= o->max_batch ? o->first_batch : o->max_batch;
    if (!nn_infer_input(ne->inf, first, err, errlen)) {
        net_eval_destroy(e);
        return NULL;
    }
    return e;
}

evaluator *net_eval_load(const game *g, const gz_config *c, const char *path, char *err,
                         size_t errlen)
{
    net_eval_opts o;
    if (net_eval_opts_from_config(&o, c, err, errlen) < 0)
        return NULL;
    nn_params *p = nn_ckpt_load(path, g, NULL, err, errlen);
    if (!p)
        return NULL;
    evaluator *e = net_eval_new(g, p, &o, err, errlen);
    nn_params_free(p);
    return e;
}
