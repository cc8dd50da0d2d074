/* brain.c — see brain.h. */
#include "brain.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/mcts.h"
#include "engine/player.h"
#include "nn/net_eval.h"
#include "nn/net_player.h"

/* A cap large enough to mean "until the clock stops it" (the arena bounds memory). */
#define BRAIN_SIMS_UNLIMITED (INT_MAX / 4)
/* The VCF check before every choice: at most this many nodes (about 0.1 s), and at most
 * a quarter of a clocked move's budget at 2 million nodes a second. */
enum { BRAIN_VCF_NODES = 200000, BRAIN_VCF_MIN_NODES = 2000, BRAIN_VCF_PV = 64,
       BRAIN_VCF_TT_LOG2 = 18 };

struct brain {
    /* immutable after brain_new */
    gz_config cfg;
    char spec[PLAYER_NAME_LEN];
    char model[1024];    /* model file of a "model:" spec, "" otherwise */
    bool search;         /* a tree search (model or mcts), else a plain player */
    int cap;             /* simulation cap; 0 = none */
    double memory_mb;
    /* rebuilt by brain_set_game */
    const game *g;       /* borrowed */
    player *p;           /* plain players; owned */
    mcts *t;             /* searches; owned */
    evaluator *e;        /* owned */
    mcts_batch *batch;   /* owned */
    mcts_child_info *kids; /* (actions) scratch */
    void *threat;        /* the game's threat workspace (owned); NULL: the game has none */
    void (*threat_free)(void *); /* its free (kept: the game may be gone when freeing) */
    rng r;
};

double brain_now(void) { return player_clock(); }

#ifndef GZ_MODELS_DIR
#define GZ_MODELS_DIR "models"
#endif

static int brain_try_model(const char *dir, const char *file, char *path, size_t len)
{
    if (!dir || !*dir)
        return -1;
    char joined[1200], real[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s", dir, file);
    if (access(joined, R_OK) != 0 || !realpath(joined, real))
        return -1;
    int n = snprintf(path, len, "%s", real);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int brain_shipped_model(const gz_config *c, char *path, size_t len)
{
    if (strcmp(c->game.name, "mnk") || c->game.k != 5 ||
        cfg_game_rule(&c->game) != CFG_RULE_FREESTYLE)
        return -1;
    const char *file = "gomoku15.h5";
    if (brain_try_model(getenv("GZ_MODELS"), file, path, len) == 0)
        return 0;
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0; /* the binary's directory; models/ sits beside it */
            char dir[1100];
            snprintf(dir, sizeof dir, "%s/../models", exe);
            if (brain_try_model(dir, file, path, len) == 0)
                return 0;
        }
    }
    return brain_try_model(GZ_MODELS_DIR, file, path, len);
}

double brain_budget(double turn, double left, int moves_left)
{
    if (turn < 0 && left < 0)
        return -1;
    double b = turn;
    if (left >= 0) {
        double share = left / (moves_left > 1 ? moves_left : 1);
        if (b < 0 || share < b)
            b = share;
    }
    b = b * 0.9 - 0.05;
    return b > 0 ? b : 0;
}

static void brain_clear(brain *b)
{
    player_free(b->p);
    mcts_free(b->t);
    evaluator_free(b->e);
    mcts_batch_free(b->batch);
    free(b->kids);
    if (b->threat)
        b->threat_free(b->threat);
    b->threat = NULL;
    b->p = NULL;
    b->t = NULL;
    b->e = NULL;
    b->batch = NULL;
    b->kids = NULL;
    b->g = NULL;
}

/* The root VCF check's workspace for g (none when g has no threat solver, e.g.
 * tic-tac-toe or sanling: then the check is skipped). */
static void brain_threat_setup(brain *b, const game *g)
{
    char why[256];
    b->threat = g->ops->threat_new ? g->ops->threat_new(g, BRAIN_VCF_TT_LOG2, why, sizeof why) : NULL;
    b->threat_free = g->ops->threat_free;
}

int brain_set_game(brain *b, const game *g, char *err, size_t errlen)
{
    brain_clear(b);
    char why[512];
    if (!b->search) {
        b->p = player_new(b->spec, g, &b->cfg, net_player_ext(), err, errlen);
        if (!b->p)
            return -1;
        player_reset(b->p);
        b->g = g;
        brain_threat_setup(b, g);
        return 0;
    }
    /* the seeds of the player of the same spec (so a capped search plays its moves) */
    uint64_t seed = b->model[0] ? net_player_seed(&b->cfg, b->spec) : player_mcts_seed(&b->cfg);
    if (b->model[0]) {
        b->e = net_eval_load(g, &b->cfg, b->model, why, sizeof why);
        if (!b->e) {
            snprintf(err, errlen, "player \"%s\": %s", b->spec, why);
            return -1;
        }
    } else {
        b->e = eval_rollout_new(g, b->cfg.mcts.rollouts, rng_derive(seed, 1));
    }
    mcts_params mp;
    mcts_params_from_config(&mp, &b->cfg.mcts);
    if (!b->model[0])
        mcts_params_pure(&mp);
    mp.noise = false;
    mp.temperature_moves = 0;
    mp.simulations = b->cap > 0 ? b->cap : BRAIN_SIMS_UNLIMITED;
    /* Arena: what the memory cap allows (a node is 48 bytes plus its edges, about one
     * per legal move), and never more than the simulation cap needs: with a cap that
     * fits, mcts_new's automatic size for it (the player's). */
    int per_node_edges = g->actions; /* an early node on a big board has them all */
    double node_bytes = 48.0 + 8.0 * per_node_edges;
    double nodes = b->memory_mb * 1024.0 * 1024.0 / node_bytes;
    if (b->cap > 0 && nodes >= 2.0 * (b->cap + mp.batch) + 64) {
        mp.max_nodes = 0;
        mp.max_edges = 0;
    } else {
        if (nodes < 1024)
            nodes = 1024;
        if (nodes > (double)(INT32_MAX / 2))
            nodes = (double)(INT32_MAX / 2);
        mp.max_nodes = (int32_t)nodes;
        mp.max_edges = (int64_t)mp.max_nodes * per_node_edges;
    }
    b->batch = mcts_batch_new(g, mp.batch);
    b->kids = malloc(sizeof *b->kids * (size_t)g->actions);
    if (!b->e || !b->batch || !b->kids) {
        snprintf(err, errlen, "player \"%s\": out of memory", b->spec);
        brain_clear(b);
        return -1;
    }
    b->t = mcts_new(g, &mp, seed, why, sizeof why);
    if (!b->t) {
        snprintf(err, errlen, "player \"%s\": %s", b->spec, why);
        brain_clear(b);
        return -1;
    }
    b->g = g;
    brain_threat_setup(b, g);
    /* oneDNN's plans of every batch size the search sends, now: not inside a move */
    if (b->model[0] && net_eval_warm_up(b->e, mp.batch, why, sizeof why) < 0) {
        snprintf(err, errlen, "player \"%s\": %s", b->spec, why);
        brain_clear(b);
        return -1;
    }
    return 0;
}

brain *brain_new(const game *g, const gz_config *cfg, const brain_opts *o, char *err,
                 size_t errlen)
{
    brain *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->cfg = *cfg;
    const char *spec = o->spec && *o->spec ? o->spec : "mcts";
    if (strlen(spec) >= sizeof b->spec) {
        snprintf(err, errlen, "player \"%.40s...\": spec too long", spec);
        free(b);
        return NULL;
    }
    snprintf(b->spec, sizeof b->spec, "%s", spec);
    b->memory_mb = o->memory_mb > 0 ? o->memory_mb : 256;
    rng_seed(&b->r, rng_derive(cfg->seed, 0x70726f746fULL));
    char why[512];
    if (!strncmp(spec, "model:", 6)) {
        int sims;
        if (net_player_parse(spec + 6, b->model, sizeof b->model, &sims, why, sizeof why) < 0) {
            snprintf(err, errlen, "player \"%s\": %s", spec, why);
            free(b);
            return NULL;
        }
        b->search = true;
        b->cap = sims;
    } else if (!strcmp(spec, "mcts") || !strncmp(spec, "mcts:", 5)) {
        b->search = true;
        if (spec[4] == ':' && player_parse_count(spec + 5, &b->cap) < 0) {
            snprintf(err, errlen, "player \"%s\": expected mcts:N with N simulations >= 1", spec);
            free(b);
            return NULL;
        }
    }
    if (o->sims > 0)
        b->cap = o->sims;
    if (brain_set_game(b, g, err, errlen) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

void brain_free(brain *b)
{
    if (!b)
        return;
    brain_clear(b);
    free(b);
}

bool brain_searches(const brain *b) { return b->search; }
const char *brain_name(const brain *b) { return b->spec; }
void brain_reseed(brain *b, uint64_t seed) { rng_seed(&b->r, seed); }

void brain_move_info(const brain_move *m, player_info *info)
{
    player_info_clear(info);
    info->action = m->action;
    info->simulations = m->sims;
    info->depth = m->depth;
    info->has_value = m->has_value;
    memcpy(info->value, m->values, sizeof info->value);
    /* a tree's (or a proof's) entries are visits: the unvisited ones are not news; a
     * plain player's are its own counts (alpha-beta's scores may be 0 or less) */
    bool visits = m->searched || m->proven;
    for (int i = 0; i < m->ntop && info->ntop < PLAYER_INFO_TOP; i++) {
        if (visits && m->top[i].visits == 0)
            break;
        info->top[info->ntop].action = m->top[i].action;
        info->top[info->ntop].visits = m->top[i].visits;
        info->ntop++;
    }
}

void brain_reset(brain *b)
{
    if (b->p)
        player_reset(b->p);
    /* A tree whose root differs from the next position asked about is dropped then. */
}

void brain_notify(brain *b, const game_state *s_before, int action)
{
    if (b->p)
        player_notify_move(b->p, s_before, action);
    if (b->t && memcmp(mcts_root_state(b->t), s_before, b->g->state_size) == 0)
        (void)mcts_play(b->t, action);
}

static int cmp_kids(const void *x, const void *y)
{
    const mcts_child_info *a = x, *c = y;
    if (a->visits != c->visits)
        return a->visits > c->visits ? -1 : 1;
    if (a->prior != c->prior)
        return a->prior > c->prior ? -1 : 1;
    return a->action - c->action;
}

/* A plain player's choice, its player_info copied into out. */
static int brain_choose_plain(brain *b, const game_state *s, player_ctl *ctl, brain_move *out,
                              char *err, size_t errlen)
{
    player_info info;
    player_info_clear(&info);
    b->p->ctl = ctl;
    int a = player_choose(b->p, s, &b->r, &info, err, errlen);
    b->p->ctl = NULL;
    out->action = a;
    out->sims = info.simulations;
    out->depth = info.depth;
    if (info.has_value) {
        out->has_value = true;
        memcpy(out->values, info.value, sizeof out->values);
        out->value = info.value[game_current_player(b->g, s)];
    }
    for (int i = 0; i < info.ntop && out->ntop < BRAIN_TOP; i++) {
        out->top[out->ntop].action = info.top[i].action;
        out->top[out->ntop].visits = info.top[i].visits;
        out->ntop++;
    }
    return a;
}

int brain_choose(brain *b, const game_state *s, double budget, player_ctl *ctl, brain_move *out,
                 char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->action = -1;
    if (!b->g) {
        snprintf(err, errlen, "no engine (the last board change failed)");
        return -1;
    }
    if (game_terminal(b->g, s)) {
        snprintf(err, errlen, "the game is over");
        return -1;
    }
    double t0 = brain_now();
    if (ctl && ctl->deadline > 0) {
        double left = ctl->deadline > t0 ? ctl->deadline - t0 : 0;
        if (budget < 0 || left < budget)
            budget = left;
    }
    int mover = game_current_player(b->g, s);
    if (b->threat) {
        /* whatever the player: a proven VCF of the side to move is played at once */
        long nodes = budget < 0 ? BRAIN_VCF_NODES : (long)(budget * 500000.0);
        nodes = nodes < BRAIN_VCF_MIN_NODES ? BRAIN_VCF_MIN_NODES
                : nodes > BRAIN_VCF_NODES   ? BRAIN_VCF_NODES : nodes;
        int pv[BRAIN_VCF_PV];
        if (b->g->ops->threat_win(b->g, s, b->threat, mover, nodes, 0, pv, BRAIN_VCF_PV) > 0) {
            out->action = pv[0];
            out->proven = true;
            out->has_value = true;
            out->value = 1.0f;
            /* the games with threat hooks have two players: the other one loses */
            for (int i = 0; i < b->g->players; i++)
                out->values[i] = i == mover ? 1.0f : -1.0f;
            out->ntop = 1;
            out->top[0].action = pv[0];
            out->top[0].value = 1.0f;
            out->seconds = brain_now() - t0;
            return pv[0];
        }
    }
    if (!b->search) {
        int a = brain_choose_plain(b, s, ctl, out, err, errlen);
        out->seconds = brain_now() - t0;
        return a;
    }
    if (memcmp(mcts_root_state(b->t), s, b->g->state_size) != 0)
        mcts_set_root_near(b->t, s);
    int cap = b->cap > 0 ? b->cap : budget < 0 ? b->cfg.mcts.simulations : BRAIN_SIMS_UNLIMITED;
    mcts_set_simulations(b->t, cap);
    /* A step (one evaluator call) cannot be interrupted: do not start one that would
     * likely end after the deadline (the last step's duration as the estimate). The
     * first step is always made, so there is a move. */
    double deadline = t0 + budget, step = 0, now = t0;
    int before = mcts_root_visits(b->t);
    mcts_begin(b->t);
    do {
        double last = now;
        if (mcts_step_many(&b->t, 1, b->batch, b->e, err, errlen) < 0)
            return -1;
        now = brain_now();
        step = now - last;
        if (ctl)
            atomic_store_explicit(&ctl->progress, (long)(mcts_root_visits(b->t) - before),
                                  memory_order_relaxed);
    } while (!mcts_done(b->t) && !player_ctl_expired(ctl) && (budget < 0 || now + step < deadline));
    mcts_result res;
    mcts_finish(b->t, NULL, &res);
    out->action = res.action;
    out->searched = true;
    out->sims = res.stats.simulations;
    out->proven = res.proven;
    out->full = res.stats.arena_full;
    out->has_value = true;
    out->value = res.value[mover];
    memcpy(out->values, res.value, sizeof(float) * (size_t)b->g->players);
    int n = mcts_children(b->t, MCTS_ROOT, b->kids, b->g->actions);
    qsort(b->kids, (size_t)n, sizeof *b->kids, cmp_kids);
    for (int i = 0; i < n && out->ntop < BRAIN_TOP; i++) {
        out->top[out->ntop].action = b->kids[i].action;
        out->top[out->ntop].visits = b->kids[i].visits;
        out->top[out->ntop].prior = b->kids[i].prior;
        out->top[out->ntop].value = b->kids[i].visits ? b->kids[i].value[mover] : 0;
        out->ntop++;
    }
    out->seconds = brain_now() - t0;
    return res.action;
}
