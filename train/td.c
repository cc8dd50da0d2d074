/* td.c — see td.h. */
#include "td.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/games/g2048.h"
#include "engine/rng.h"

/* A state on the stack: 2048's states are well under this (checked by td_learn). */
enum { TD_STATE_BYTES = 512 };
typedef struct { _Alignas(16) unsigned char b[TD_STATE_BYTES]; } td_state;

void td_lambda_returns(const float *gain, const float *value, int T, double lambda, float *target)
{
    if (T <= 0)
        return;
    target[T - 1] = 0;
    for (int t = T - 2; t >= 0; t--)
        target[t] = (float)(gain[t + 1] + (1 - lambda) * value[t + 1] + lambda * target[t + 1]);
}

int td_greedy_move(const ntuple *n, const game *g, const game_state *s, float *gain, uint8_t *after)
{
    uint8_t mask[4];
    if (game_legal(g, s, mask) == 0)
        return -1;
    uint64_t base = g2048_score(g, s);
    int best = -1;
    float best_q = 0, best_gain = 0;
    uint8_t cells[G2048_MAX_CELLS], best_cells[NT_CELLS] = {0};
    td_state t;
    game_state *x = (game_state *)t.b;
    for (int a = 0; a < 4; a++) {
        if (!mask[a])
            continue;
        game_copy(g, x, s);
        if (game_play(g, x, a) != 0)
            continue;
        g2048_get_cells(g, x, cells);
        float r = (float)(g2048_score(g, x) - base);
        float q = r + ntuple_value(n, cells);
        if (best < 0 || q > best_q) {
            best = a, best_q = q, best_gain = r;
            memcpy(best_cells, cells, NT_CELLS);
        }
    }
    if (best >= 0 && gain)
        *gain = best_gain;
    if (best >= 0 && after)
        memcpy(after, best_cells, NT_CELLS);
    return best;
}

typedef struct td_worker {
    ntuple *n;
    const game *g;
    const td_opts *o;
    volatile sig_atomic_t *stop;
    int *next;               /* the next game to play (shared, under lock) */
    int games;
    pthread_mutex_t *lock;
    td_stats st;
    int failed;
} td_worker;

/* One learning game from seed; adds to st. Buffers (grown, never per move) for lambda. */
static void td_game(td_worker *w, uint64_t seed, uint8_t **hist, float **gains, float **vals,
                    float **targets, size_t *cap)
{
    const game *g = w->g;
    ntuple *n = w->n;
    float alpha = (float)(w->o->lr / NT_FEATURES);
    bool online = w->o->lambda <= 0;
    rng r;
    rng_seed(&r, seed);
    td_state t;
    game_state *s = (game_state *)t.b;
    game_init(g, s, &r);
    uint8_t prev[NT_CELLS], after[NT_CELLS];
    bool have_prev = false;
    size_t T = 0;
    for (;;) {
        float gain;
        int a = game_terminal(g, s) ? -1 : td_greedy_move(n, g, s, &gain, after);
        if (a < 0)
            break;
        game_play(g, s, a);
        game_resolve_chance(g, s, &r);
        w->st.moves++;
        if (online) {
            if (have_prev) {
                float d = gain + ntuple_value(n, after) - ntuple_value(n, prev);
                ntuple_update(n, prev, alpha * d);
            }
            memcpy(prev, after, NT_CELLS);
            have_prev = true;
            continue;
        }
        if (T == *cap) {
            size_t nc = *cap ? 2 * *cap : 4096;
            uint8_t *h = realloc(*hist, nc * NT_CELLS);
            float *gs = h ? realloc(*gains, nc * sizeof(float)) : NULL;
            float *vs = gs ? realloc(*vals, nc * sizeof(float)) : NULL;
            float *ts = vs ? realloc(*targets, nc * sizeof(float)) : NULL;
            if (h)
                *hist = h;
            if (gs)
                *gains = gs;
            if (vs)
                *vals = vs;
            if (ts)
                *targets = ts;
            if (!ts) {
                w->failed = 1;
                return;
            }
            *cap = nc;
        }
        memcpy(*hist + T * NT_CELLS, after, NT_CELLS);
        (*gains)[T] = gain;
        (*vals)[T] = ntuple_value(n, after);
        T++;
    }
    if (online && have_prev)
        ntuple_update(n, prev, alpha * (0 - ntuple_value(n, prev)));
    if (!online && T > 0) {
        td_lambda_returns(*gains, *vals, (int)T, w->o->lambda, *targets);
        for (size_t i = T; i-- > 0;) {
            const uint8_t *c = *hist + i * NT_CELLS;
            ntuple_update(n, c, alpha * ((*targets)[i] - ntuple_value(n, c)));
        }
    }
    uint8_t cells[G2048_MAX_CELLS];
    g2048_get_cells(g, s, cells);
    int top = 0;
    for (int i = 0; i < NT_CELLS; i++)
        if (cells[i] > top)
            top = cells[i];
    w->st.games++;
    w->st.score_sum += (double)g2048_score(g, s);
    for (int k = 0; k <= top && k < 18; k++)
        w->st.tile_games[k]++;
}

static void *td_thread(void *arg)
{
    td_worker *w = arg;
    uint8_t *hist = NULL;
    float *gains = NULL, *vals = NULL, *targets = NULL;
    size_t cap = 0;
    for (;;) {
        if (w->stop && *w->stop)
            break;
        pthread_mutex_lock(w->lock);
        int i = (*w->next)++;
        pthread_mutex_unlock(w->lock);
        if (i >= w->games)
            break;
        td_game(w, w->o->seed + (uint64_t)i, &hist, &gains, &vals, &targets, &cap);
        if (w->failed)
            break;
    }
    free(hist), free(gains), free(vals), free(targets);
    return NULL;
}

int td_learn(ntuple *n, const game *g, int games, const td_opts *o, volatile sig_atomic_t *stop, td_stats *st,
             char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (strcmp(g->ops->name, "2048") || g->rows != 4 || g->cols != 4) {
        snprintf(err, errlen, "n-tuple networks play 2048 on the 4x4 board (this game: %s %dx%d)",
                 g->ops->name, g->rows, g->cols);
        return -1;
    }
    if (g->state_size > TD_STATE_BYTES) {
        snprintf(err, errlen, "2048 state of %zu bytes: more than td.c's %d", g->state_size, TD_STATE_BYTES);
        return -1;
    }
    int nt = o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads;
    td_worker w[64];
    pthread_t tid[64];
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int next = 0, started = 0;
    for (int k = 0; k < nt; k++) {
        w[k] = (td_worker){.n = n, .g = g, .o = o, .stop = stop, .next = &next, .games = games, .lock = &lock};
        if (nt == 1 || pthread_create(&tid[k], NULL, td_thread, &w[k]) != 0)
            break;
        started++;
    }
    if (started == 0)
        td_thread(&w[0]);
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    int used = started ? started : 1, failed = 0;
    for (int k = 0; k < used; k++) {
        st->games += w[k].st.games;
        st->moves += w[k].st.moves;
        st->score_sum += w[k].st.score_sum;
        for (int t = 0; t < 18; t++)
            st->tile_games[t] += w[k].st.tile_games[t];
        failed |= w[k].failed;
    }
    n->games += st->games;
    if (failed) {
        snprintf(err, errlen, "out of memory for a game's history");
        return -1;
    }
    return 0;
}
