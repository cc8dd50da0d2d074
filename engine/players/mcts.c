/* mcts.c (player) — a player that searches with PUCT MCTS (engine/mcts.h): "mcts:N" is
 * pure MCTS, uniform priors and random-rollout values (seed 003), N simulations a move,
 * with the search's pure-MCTS settings (mcts_params_pure: absolute FPU, every move tried
 * once first); player_mcts_new is the same player over any evaluator with the config's
 * settings (the network player uses it).
 *
 * The tree follows the game through notify_move (mcts_play: the chosen child's subtree
 * is reused). choose() compares the tree's root with the position it is asked about
 * (byte for byte: states are plain data, initialised whole by the games) and starts a
 * fresh tree when they differ (after an undo, a reset, or a missed notification). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "../mcts.h"
#include "../player.h"

typedef struct mcts_player {
    mcts *t;                 /* owned */
    mcts_batch *batch;       /* owned: leaves of one step (capacity params.batch) */
    evaluator *e;            /* owned */
    float *pi;               /* (actions) scratch */
    mcts_child_info *kids;   /* (actions) scratch for info */
    double seconds;          /* wall clock per search, 0 = none (player_mcts_set_seconds) */
} mcts_player;

static int cmp_visits(const void *a, const void *b)
{
    const mcts_child_info *x = a, *y = b;
    if (x->visits != y->visits)
        return x->visits > y->visits ? -1 : 1;
    return x->action - y->action;
}

static int mp_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                     size_t errlen)
{
    (void)r; /* the tree has its own rng, seeded at creation */
    mcts_player *m = p->ctx;
    const game *g = p->g;
    if (game_terminal(g, s)) {
        snprintf(err, errlen, "no legal move (the game is over)");
        return -1;
    }
    if (memcmp(mcts_root_state(m->t), s, g->state_size) != 0)
        mcts_set_root_near(m->t, s);
    /* mcts_search, step by step, so that p->ctl can stop it (after at least one step:
     * the root is then expanded and mcts_finish picks a legal move). */
    mcts_result res;
    int before = mcts_root_visits(m->t);
    double deadline = m->seconds > 0 ? player_clock() + m->seconds : 0;
    mcts_begin(m->t);
    while (!mcts_done(m->t)) {
        if (mcts_step_many(&m->t, 1, m->batch, m->e, err, errlen) < 0)
            return -1;
        if (p->ctl)
            atomic_store_explicit(&p->ctl->progress, (long)(mcts_root_visits(m->t) - before),
                                  memory_order_relaxed);
        if (player_ctl_expired(p->ctl) || (deadline > 0 && player_clock() > deadline))
            break;
    }
    mcts_finish(m->t, m->pi, &res);
    if (info) {
        info->simulations = res.stats.simulations;
        info->has_value = 1;
        for (int i = 0; i < g->players; i++)
            info->value[i] = res.value[i];
        int n = mcts_children(m->t, MCTS_ROOT, m->kids, g->actions);
        qsort(m->kids, (size_t)n, sizeof *m->kids, cmp_visits);
        info->ntop = 0;
        for (int i = 0; i < n && info->ntop < PLAYER_INFO_TOP; i++) {
            if (m->kids[i].visits == 0)
                break;
            info->top[info->ntop].action = m->kids[i].action;
            info->top[info->ntop].visits = m->kids[i].visits;
            info->ntop++;
        }
    }
    return res.action;
}

static void mp_notify(player *p, const game_state *s_before, int action)
{
    mcts_player *m = p->ctx;
    /* a move followed by chance events (2048's spawn): the game draws them, not the tree,
     * so choose() finds the position among the kept grandchildren (mcts_set_root_near) */
    if (p->g->max_chance > 0)
        return;
    /* Only a tree that is at s_before can follow the move; otherwise choose() resets. */
    if (memcmp(mcts_root_state(m->t), s_before, p->g->state_size) == 0)
        (void)mcts_play(m->t, action);
}

static void mp_destroy(player *p)
{
    mcts_player *m = p->ctx;
    if (m) {
        mcts_free(m->t);
        mcts_batch_free(m->batch);
        evaluator_free(m->e);
        free(m->pi);
        free(m->kids);
        free(m);
    }
    p->ctx = NULL;
}

player *player_mcts_new_params(const game *g, const mcts_params *mp, evaluator *e,
                               uint64_t seed, const char *name, const char *kind, char *err,
                               size_t errlen)
{
    player *p = player_alloc(name, kind, g);
    mcts_player *m = calloc(1, sizeof *m);
    if (!p || !m || !e) {
        snprintf(err, errlen, !e ? "no evaluator" : "out of memory");
        goto fail;
    }
    p->ctx = m;
    p->destroy = mp_destroy;
    m->e = e;
    e = NULL; /* owned by m from here */
    m->pi = malloc(sizeof(float) * (size_t)g->actions);
    m->kids = malloc(sizeof(mcts_child_info) * (size_t)g->actions);
    if (!m->pi || !m->kids) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    m->t = mcts_new(g, mp, seed, err, errlen);
    if (!m->t)
        goto fail;
    m->batch = mcts_batch_new(g, mp->batch > 0 ? mp->batch : 1);
    if (!m->batch) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    p->choose = mp_choose;
    p->notify_move = mp_notify;
    return p;
fail:
    if (p && p->ctx) {
        player_free(p); /* frees m and the evaluator through mp_destroy */
    } else {
        free(m);
        free(p);
        evaluator_free(e);
    }
    return NULL;
}

void player_mcts_set_seconds(player *p, double seconds)
{
    assert(p->choose == mp_choose);
    ((mcts_player *)p->ctx)->seconds = seconds > 0 ? seconds : 0;
}

/* The arena's and play's settings: the config's search without noise, temperature 0. */
static void player_params(mcts_params *mp, const gz_config *cfg, int simulations)
{
    mcts_params_from_config(mp, &cfg->mcts);
    mp->simulations = simulations;
    mp->noise = false;
    mp->temperature_moves = 0;
}

player *player_mcts_new(const game *g, const gz_config *cfg, evaluator *e, int simulations,
                        uint64_t seed, const char *name, const char *kind, char *err,
                        size_t errlen)
{
    mcts_params mp;
    player_params(&mp, cfg, simulations);
    return player_mcts_new_params(g, &mp, e, seed, name, kind, err, errlen);
}

uint64_t player_mcts_seed(const gz_config *cfg) { return rng_derive(cfg->seed, 0x6d637473ULL); }

/* "mcts:N" — pure MCTS with the rollout evaluator (mcts.rollouts playouts a leaf). */
static int mcts_kind_create(player *p, const char *arg, const game *g, const gz_config *cfg,
                            char *err, size_t errlen)
{
    int sims = cfg->mcts.simulations;
    if (arg && player_parse_count(arg, &sims) < 0) {
        snprintf(err, errlen, "expected mcts:N with N simulations per move (a whole number >= 1)");
        return -1;
    }
    uint64_t seed = player_mcts_seed(cfg);
    evaluator *e = eval_rollout_new(g, cfg->mcts.rollouts, rng_derive(seed, 1));
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    mcts_params mp;
    player_params(&mp, cfg, sims);
    mcts_params_pure(&mp); /* uniform priors: try every move once first (UCT-like) */
    player *inner = player_mcts_new_params(g, &mp, e, seed, p->name, "mcts", err, errlen);
    if (!inner)
        return -1;
    /* Move the inner player's table into p (p is what player_new hands out). */
    p->choose = inner->choose;
    p->notify_move = inner->notify_move;
    p->reset = inner->reset;
    p->destroy = inner->destroy;
    p->ctx = inner->ctx;
    free(inner);
    return 0;
}

const player_kind player_kind_mcts = {
    .name = "mcts",
    .syntax = "mcts[:N]",
    .help = "pure MCTS: random-rollout values, N simulations a move (default mcts.simulations)",
    .create = mcts_kind_create,
};
