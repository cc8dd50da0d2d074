/* session.c — sessions of gridzero serve: one game each (its own game instance, players
 * and history), the table that bounds how many exist, and the one background search a
 * session may run (a move from a player, or an analysis with the model). The players
 * (seats and hints) are brains (nn/brain.h), the engine of the protocols: a VCF is
 * played at once and a search keeps the protocols' clock rule. Locking rules are in
 * web_impl.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/games/sanling.h"
#include "engine/mcts.h"
#include "nn/net_eval.h"
#include "web_impl.h"

/* ---- the table ---- */

static void make_id(web_server *s, uint64_t serial, char *id)
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* no kernel randomness: still unique, only guessable */
        rng r;
        rng_seed(&r, rng_derive((uint64_t)(player_clock() * 1e9), serial ^ (uint64_t)(uintptr_t)s));
        for (int i = 0; i < 16; i += 8) {
            uint64_t v = rng_next(&r);
            memcpy(b + i, &v, 8);
        }
    }
    for (int i = 0; i < 16; i++)
        snprintf(id + 2 * i, 3, "%02x", b[i]);
}

static void session_free(web_session *ss)
{
    if (!ss)
        return;
    if (ss->job.thread_live) {
        atomic_store(&ss->job.ctl.stop, 1);
        pthread_join(ss->job.th, NULL);
    }
    for (int p = 0; p < GAME_MAX_PLAYERS; p++)
        brain_free(ss->seat[p]);
    brain_free(ss->job.own);
    evaluator_free(ss->an_eval);
    free(ss->moves);
    free(ss->states);
    free(ss->values);
    free(ss->value_src);
    free(ss->job.policy);
    free(ss->job.visits);
    free(ss->job.q);
    game_free(ss->g);
    pthread_mutex_destroy(&ss->mu);
    pthread_mutex_destroy(&ss->req_lock);
    free(ss);
}

int web_game_supported(const game *g, char *err, size_t errlen)
{
    if (g->max_chance > 0) {
        snprintf(err, errlen, "game %s has random events, which serve does not replay (play it "
                 "with gridzero play or gridzero arena)", g->name);
        return -1;
    }
    return 0;
}

brain *web_brain_new(web_server *s, const game *g, const gz_config *cfg, const char *spec, int sims,
                     char *err, size_t errlen)
{
    bool model = !strncmp(spec, "model:", 6);
    brain_opts bo = {.spec = spec, .sims = sims};
    if (model)
        pthread_mutex_lock(&s->h5_lock);
    brain *b = brain_new(g, cfg, &bo, err, errlen);
    if (model)
        pthread_mutex_unlock(&s->h5_lock);
    return b;
}

web_session *web_session_new(web_server *s, const gz_config *cfg, char spec[][PLAYER_NAME_LEN],
                             const int *sims, int *status, char *err, size_t errlen)
{
    web_session *ss = calloc(1, sizeof *ss);
    *status = 500;
    if (!ss) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&ss->mu, NULL);
    pthread_mutex_init(&ss->req_lock, NULL);
    ss->srv = s;
    ss->cfg = *cfg;
    ss->g = game_new(&cfg->game, err, errlen);
    if (!ss->g || web_game_supported(ss->g, err, errlen) < 0) {
        *status = 400;
        goto fail;
    }
    const game *g = ss->g;
    size_t L = (size_t)g->max_game_length;
    ss->moves = malloc(sizeof(int) * (L + 1));
    ss->states = malloc(g->state_size * (L + 1));
    ss->values = calloc((L + 1) * (size_t)g->players, sizeof(float));
    ss->value_src = calloc(L + 1, 1);
    ss->job.policy = calloc((size_t)g->actions, sizeof(float));
    ss->job.visits = calloc((size_t)g->actions, sizeof(int));
    ss->job.q = calloc((size_t)g->actions, sizeof(float));
    if (!ss->moves || !ss->states || !ss->values || !ss->value_src || !ss->job.policy ||
        !ss->job.visits || !ss->job.q) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    pthread_mutex_lock(&s->lock);
    uint64_t serial = ++s->next_session;
    pthread_mutex_unlock(&s->lock);
    /* deterministic given the config's seed and the order sessions are made */
    ss->seed = rng_derive(cfg->seed, 0x7365737369ULL + serial);
    rng_seed(&ss->r, ss->seed);
    game_init(g, (game_state *)ss->states, &ss->r);
    for (int p = 0; p < g->players; p++) {
        snprintf(ss->spec[p], PLAYER_NAME_LEN, "%s", spec[p]);
        if (!strcmp(spec[p], "human"))
            continue;
        gz_config pc = *cfg;
        pc.seed = rng_derive(ss->seed, (uint64_t)p + 1);
        char msg[WEB_ERR_LEN];
        ss->seat[p] = web_brain_new(s, g, &pc, spec[p], sims[p], msg, sizeof msg);
        if (!ss->seat[p]) {
            snprintf(err, errlen, "field \"players\": seat %d: %s", p + 1, msg);
            *status = 400;
            goto fail;
        }
    }
    make_id(s, serial, ss->id);

    web_session *victim = NULL;
    pthread_mutex_lock(&s->lock);
    int slot = -1;
    for (int i = 0; i < s->o.max_sessions && slot < 0; i++)
        if (!s->sessions[i])
            slot = i;
    if (slot < 0) {
        /* full: drop the least recently used session nobody is using or searching with */
        for (int i = 0; i < s->o.max_sessions; i++) {
            web_session *v = s->sessions[i];
            if (v->refs == 0 && !v->searching &&
                (slot < 0 || v->last_used < s->sessions[slot]->last_used))
                slot = i;
        }
        if (slot >= 0) {
            victim = s->sessions[slot];
            victim->closed = true;
        }
    }
    if (slot < 0) {
        pthread_mutex_unlock(&s->lock);
        snprintf(err, errlen, "all %d sessions are in use (searching): try again later, or close one",
                 s->o.max_sessions);
        *status = 503;
        goto fail;
    }
    s->sessions[slot] = ss;
    ss->refs = 1;
    ss->last_used = player_clock();
    pthread_mutex_unlock(&s->lock);
    session_free(victim);
    return ss;
fail:
    session_free(ss);
    return NULL;
}

web_session *web_session_get(web_server *s, const char *id)
{
    web_session *found = NULL;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->o.max_sessions && !found; i++)
        if (s->sessions[i] && !strcmp(s->sessions[i]->id, id))
            found = s->sessions[i];
    if (found) {
        found->refs++;
        found->last_used = player_clock();
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

void web_session_release(web_session *ss)
{
    web_server *s = ss->srv;
    pthread_mutex_lock(&s->lock);
    bool gone = --ss->refs == 0 && ss->closed;
    pthread_mutex_unlock(&s->lock);
    if (gone)
        session_free(ss);
}

void web_session_close(web_session *ss)
{
    web_server *s = ss->srv;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->o.max_sessions; i++)
        if (s->sessions[i] == ss)
            s->sessions[i] = NULL;
    ss->closed = true;
    pthread_mutex_unlock(&s->lock);
}

void web_sessions_shutdown(web_server *s)
{
    /* the HTTP threads are stopped: nobody holds a reference */
    for (int i = 0; i < s->o.max_sessions; i++) {
        session_free(s->sessions[i]);
        s->sessions[i] = NULL;
    }
}

/* ---- the game ---- */

const game_state *web_session_state(web_session *ss, int k)
{
    return (const game_state *)(ss->states + (size_t)k * ss->g->state_size);
}

void web_session_play(web_session *ss, int action)
{
    const game *g = ss->g;
    int k = ss->nmoves;
    const game_state *cur = web_session_state(ss, k);
    game_state *next = (game_state *)(ss->states + (size_t)(k + 1) * g->state_size);
    game_copy(g, next, cur);
    int rc = game_play(g, next, action);
    (void)rc; /* the caller checked legality */
    ss->moves[k] = action;
    ss->nmoves = k + 1;
    ss->value_src[k + 1] = 0;
    for (int p = 0; p < g->players; p++)
        if (ss->seat[p])
            brain_notify(ss->seat[p], cur, action);
}

void web_session_truncate(web_session *ss, int k)
{
    ss->nmoves = k;
    for (int i = k + 1; i <= ss->g->max_game_length; i++)
        ss->value_src[i] = 0;
    /* the players' memories (reused trees) belong to the abandoned line */
    for (int p = 0; p < ss->g->players; p++)
        if (ss->seat[p])
            brain_reset(ss->seat[p]);
}

/* ---- searches ---- */

void web_session_stop_job(web_session *ss, bool cancel)
{
    web_job *j = &ss->job;
    if (!j->thread_live)
        return;
    pthread_mutex_lock(&ss->mu);
    if (j->status == JOB_RUNNING) {
        if (cancel)
            j->cancelled = true;
        atomic_store(&j->ctl.stop, 1);
    }
    pthread_mutex_unlock(&ss->mu);
    pthread_join(j->th, NULL);
    j->thread_live = false;
}

/* The thread's last words on the server's count (before it publishes its result, so a
 * client that sees the result can start the next search at once). */
static void job_leaves(web_session *ss)
{
    web_server *s = ss->srv;
    pthread_mutex_lock(&s->lock);
    s->searches--;
    ss->searching = false;
    pthread_mutex_unlock(&s->lock);
}

static void *genmove_main(void *arg)
{
    web_session *ss = arg;
    web_job *j = &ss->job;
    const game *g = ss->g;
    /* the moves do not change while this thread runs: every request that changes them
     * joins it first */
    const game_state *pos = web_session_state(ss, j->ply);
    brain *b = j->own ? j->own : ss->seat[game_current_player(g, pos)];
    char err[WEB_ERR_LEN] = "";
    /* a plain player's random source depends on the ply only: the same move after an
     * undo (searches keep their trees' seeds) */
    brain_reseed(b, rng_derive(ss->seed, 0x67656e6dULL * 1000003ULL + (uint64_t)j->ply));
    /* no clock but the job's: ctl.deadline (the request's seconds) bounds the budget */
    brain_move m;
    int a = brain_choose(b, pos, -1, &j->ctl, &m, err, sizeof err);
    player_info info;
    brain_move_info(&m, &info);
    uint8_t *mask = malloc((size_t)g->actions);
    if (a >= 0 && mask) {
        game_legal(g, pos, mask);
        if (a >= g->actions || !mask[a]) {
            snprintf(err, sizeof err, "player \"%s\" chose an illegal move (action %d)", brain_name(b), a);
            a = -1;
        }
    } else if (a >= 0) {
        snprintf(err, sizeof err, "out of memory");
        a = -1;
    }
    free(mask);
    job_leaves(ss);
    pthread_mutex_lock(&ss->mu);
    j->t1 = player_clock();
    if (a < 0) {
        snprintf(j->err, sizeof j->err, "%s", err);
        j->status = JOB_FAILED;
    } else {
        j->action = a;
        j->info = info;
        if (info.has_value) {
            for (int i = 0; i < g->players; i++)
                ss->values[(size_t)j->ply * (size_t)g->players + (size_t)i] = info.value[i];
            ss->value_src[j->ply] = 2;
        }
        if (j->cancelled) {
            j->status = JOB_CANCELLED;
        } else {
            if (j->play && ss->nmoves == j->ply) {
                web_session_play(ss, a);
                j->played = true;
            }
            j->status = JOB_DONE;
        }
    }
    brain_free(j->own);
    j->own = NULL;
    pthread_mutex_unlock(&ss->mu);
    return NULL;
}

/* Publishes the tree's root statistics and principal variation into the job. */
static void publish_tree(web_session *ss, mcts *t, mcts_child_info *kids)
{
    const game *g = ss->g;
    web_job *j = &ss->job;
    int pv[WEB_PV_MAX], npv = 0;
    int32_t node = MCTS_ROOT;
    while (npv < WEB_PV_MAX) {
        int n = mcts_children(t, node, kids, g->actions), best = -1;
        for (int i = 0; i < n; i++)
            if (kids[i].visits > 0 && (best < 0 || kids[i].visits > kids[best].visits))
                best = i;
        if (best < 0)
            break;
        pv[npv++] = kids[best].action;
        node = kids[best].node;
        if (node < 0)
            break;
    }
    int n = mcts_children(t, MCTS_ROOT, kids, g->actions);
    double v[GAME_MAX_PLAYERS] = {0};
    long total = 0;
    pthread_mutex_lock(&ss->mu);
    for (int a = 0; a < g->actions; a++) {
        j->visits[a] = 0;
        j->q[a] = NAN;
    }
    for (int i = 0; i < n; i++) {
        j->visits[kids[i].action] = kids[i].visits;
        if (kids[i].visits > 0) {
            j->q[kids[i].action] = kids[i].q;
            for (int p = 0; p < g->players; p++)
                v[p] += (double)kids[i].visits * kids[i].value[p];
            total += kids[i].visits;
        }
    }
    if (total > 0) {
        for (int p = 0; p < g->players; p++)
            j->value[p] = (float)(v[p] / (double)total);
        j->has_value = true;
    }
    /* the root's visits: every playout of this fresh tree (the first one expanded the
     * root itself, so the children hold one visit fewer) */
    j->done = mcts_root_visits(t);
    memcpy(j->pv, pv, sizeof(int) * (size_t)npv);
    j->npv = npv;
    atomic_store(&j->ctl.progress, j->done);
    pthread_mutex_unlock(&ss->mu);
}

static void *analyze_main(void *arg)
{
    web_session *ss = arg;
    web_job *j = &ss->job;
    const game *g = ss->g;
    evaluator *e = ss->an_eval;
    char err[WEB_ERR_LEN] = "";
    mcts_params mp;
    mcts_params_from_config(&mp, &ss->cfg.mcts);
    mp.simulations = j->target;
    mp.noise = false;
    mp.temperature_moves = 0;
    mp.reuse_tree = false;
    if (strcmp(ss->an_eval_name, "model"))
        mcts_params_pure(&mp); /* uniform priors: every move tried once first */
    mcts *t = mcts_new(g, &mp, rng_derive(ss->seed, 0x616e616cULL + (uint64_t)j->ply), err, sizeof err);
    mcts_batch *b = mcts_batch_new(g, mp.batch > 0 ? mp.batch : 1);
    float *priors = malloc(sizeof(float) * (size_t)g->actions);
    uint8_t *mask = malloc((size_t)g->actions);
    mcts_child_info *kids = malloc(sizeof *kids * (size_t)g->actions);
    int ok = t && b && priors && mask && kids;
    if (t && !ok)
        snprintf(err, sizeof err, "out of memory");
    /* the value graph: the evaluator's value of every position so far not yet valued */
    for (int k = 0; ok && j->graph && k <= j->ply && !player_ctl_expired(&j->ctl); k++) {
        pthread_mutex_lock(&ss->mu);
        bool known = ss->value_src[k] != 0;
        pthread_mutex_unlock(&ss->mu);
        if (known)
            continue;
        const game_state *s = web_session_state(ss, k);
        float vals[GAME_MAX_PLAYERS];
        if (game_terminal(g, s)) {
            game_result(g, s, vals);
        } else {
            uint64_t key = game_hash(g, s);
            game_legal(g, s, mask);
            if (evaluator_run(e, 1, &s, &key, mask, priors, vals, err, sizeof err) < 0) {
                ok = 0;
                break;
            }
        }
        pthread_mutex_lock(&ss->mu);
        memcpy(ss->values + (size_t)k * (size_t)g->players, vals, sizeof(float) * (size_t)g->players);
        ss->value_src[k] = 1;
        pthread_mutex_unlock(&ss->mu);
    }
    const game_state *pos = web_session_state(ss, j->ply);
    if (ok) {
        /* the evaluator's own view of the root: the policy heatmap */
        float vals[GAME_MAX_PLAYERS];
        uint64_t key = game_hash(g, pos);
        game_legal(g, pos, mask);
        ok = evaluator_run(e, 1, &pos, &key, mask, priors, vals, err, sizeof err) == 0;
        float wdl[3];
        int has_wdl = ok ? net_eval_wdl(e, pos, wdl, err, sizeof err) : 0;
        ok = ok && has_wdl >= 0;
        if (ok) {
            pthread_mutex_lock(&ss->mu);
            memcpy(j->policy, priors, sizeof(float) * (size_t)g->actions);
            memcpy(j->net_value, vals, sizeof vals);
            j->has_wdl = has_wdl == 1;
            if (j->has_wdl)
                memcpy(j->net_wdl, wdl, sizeof wdl);
            pthread_mutex_unlock(&ss->mu);
        }
    }
    if (ok) {
        mcts_set_root(t, pos);
        mcts_begin(t);
        double last = player_clock();
        while (!mcts_done(t)) {
            if (mcts_step_many(&t, 1, b, e, err, sizeof err) < 0) {
                ok = 0;
                break;
            }
            if (player_ctl_expired(&j->ctl))
                break;
            if (player_clock() - last > 0.2) {
                publish_tree(ss, t, kids);
                last = player_clock();
            }
        }
    }
    mcts_result res;
    if (ok) {
        mcts_finish(t, NULL, &res);
        publish_tree(ss, t, kids);
    }
    job_leaves(ss);
    pthread_mutex_lock(&ss->mu);
    j->t1 = player_clock();
    if (!ok) {
        snprintf(j->err, sizeof j->err, "%s", err);
        j->status = JOB_FAILED;
    } else {
        j->action = res.action;
        memcpy(j->value, res.value, sizeof j->value);
        j->has_value = true;
        memcpy(ss->values + (size_t)j->ply * (size_t)g->players, res.value,
               sizeof(float) * (size_t)g->players);
        ss->value_src[j->ply] = 2;
        j->status = j->cancelled ? JOB_CANCELLED : JOB_DONE;
    }
    pthread_mutex_unlock(&ss->mu);
    free(kids);
    free(mask);
    free(priors);
    mcts_batch_free(b);
    mcts_free(t);
    return NULL;
}

int web_session_start_job(web_session *ss, char *err, size_t errlen)
{
    web_server *s = ss->srv;
    web_job *j = &ss->job;
    pthread_mutex_lock(&s->lock);
    if (s->searches >= s->o.max_searches) {
        pthread_mutex_unlock(&s->lock);
        snprintf(err, errlen, "%d searches are running, the most this server runs at once: try "
                 "again when one finishes", s->searches);
        return 503;
    }
    s->searches++;
    ss->searching = true;
    pthread_mutex_unlock(&s->lock);
    /* no thread runs: the fields are this request's to set */
    j->status = JOB_RUNNING;
    j->cancelled = false;
    atomic_store(&j->ctl.stop, 0);
    atomic_store(&j->ctl.progress, 0);
    j->t0 = player_clock();
    j->t1 = 0;
    j->err[0] = 0;
    j->played = false;
    j->action = -1;
    player_info_clear(&j->info);
    j->done = 0;
    j->has_value = false;
    j->has_wdl = false;
    j->npv = 0;
    for (int a = 0; a < ss->g->actions; a++) {
        j->policy[a] = 0;
        j->visits[a] = 0;
        j->q[a] = NAN;
    }
    if (pthread_create(&j->th, NULL, j->kind == JOB_GENMOVE ? genmove_main : analyze_main, ss) != 0) {
        job_leaves(ss);
        j->status = JOB_FAILED;
        snprintf(err, errlen, "cannot start a thread");
        return 500;
    }
    j->thread_live = true;
    return 0;
}

/* ---- the session as JSON ---- */

static double round_to(double x, double unit) { return round(x / unit) * unit; }

static cJSON *value_array(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(round_to(v[i], 1e-4)));
    return a;
}

/* Splits a move's notation into its letters and its number ("h8" -> "h", "8"). */
static void split_label(const char *mv, char *letters, char *digits)
{
    size_t i = 0;
    while (mv[i] && !(mv[i] >= '0' && mv[i] <= '9'))
        i++;
    snprintf(letters, 8, "%.*s", (int)i, mv);
    snprintf(digits, 8, "%s", mv + i);
}

static cJSON *game_json(const web_session *ss)
{
    const game *g = ss->g;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddNumberToObject(o, "rows", g->rows);
    cJSON_AddNumberToObject(o, "cols", g->cols);
    cJSON_AddStringToObject(o, "lattice", g->lattice == GAME_LATTICE_HEX ? "hex" : "square");
    cJSON_AddNumberToObject(o, "players", g->players);
    cJSON_AddNumberToObject(o, "actions", g->actions);
    cJSON_AddNumberToObject(o, "max_moves", g->max_game_length);
    char *cfg = cfg_to_json(&ss->cfg);
    cJSON *all = cfg ? cJSON_Parse(cfg) : NULL;
    free(cfg);
    cJSON *sec = all ? cJSON_DetachItemFromObjectCaseSensitive(all, "game") : NULL;
    cJSON_Delete(all);
    cJSON_AddItemToObject(o, "config", sec ? sec : cJSON_CreateObject());
    /* axis labels in the game's notation: columns from the left, rows from the top */
    cJSON *cl = cJSON_AddArrayToObject(o, "col_labels"), *rl = cJSON_AddArrayToObject(o, "row_labels");
    char mv[32], letters[8], digits[8];
    for (int c = 0; c < g->cols; c++) {
        split_label(g->ops->format_move(g, c, mv, sizeof mv), letters, digits);
        cJSON_AddItemToArray(cl, cJSON_CreateString(letters));
    }
    for (int r = 0; r < g->rows; r++) {
        split_label(g->ops->format_move(g, r * g->cols, mv, sizeof mv), letters, digits);
        cJSON_AddItemToArray(rl, cJSON_CreateString(digits));
    }
    return o;
}

static cJSON *move_string(const game *g, int a)
{
    char mv[32];
    return cJSON_CreateString(g->ops->format_move(g, a, mv, sizeof mv));
}

static cJSON *job_json(web_session *ss)
{
    const game *g = ss->g;
    web_job *j = &ss->job;
    static const char *const status[] = {"running", "done", "cancelled", "failed"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", j->kind == JOB_GENMOVE ? "genmove" : "analyze");
    cJSON_AddStringToObject(o, "status", status[j->status]);
    cJSON_AddNumberToObject(o, "ply", j->ply);
    cJSON_AddStringToObject(o, j->kind == JOB_GENMOVE ? "player" : "evaluator", j->who);
    cJSON_AddNumberToObject(o, "progress", (double)atomic_load(&j->ctl.progress));
    cJSON_AddNumberToObject(o, "target", j->target);
    double end = j->status == JOB_RUNNING ? player_clock() : j->t1;
    cJSON_AddNumberToObject(o, "seconds", round_to(end - j->t0, 1e-3));
    if (j->status == JOB_FAILED)
        cJSON_AddStringToObject(o, "error", j->err);
    if (j->note[0])
        cJSON_AddStringToObject(o, "note", j->note);
    if (j->kind == JOB_GENMOVE) {
        cJSON_AddItemToObject(o, "move", j->action >= 0 ? move_string(g, j->action) : cJSON_CreateNull());
        cJSON_AddNumberToObject(o, "action", j->action);
        cJSON_AddBoolToObject(o, "played", j->played);
        cJSON_AddItemToObject(o, "value", j->action >= 0 && j->info.has_value
                                              ? value_array(j->info.value, g->players)
                                              : cJSON_CreateNull());
        if (j->info.depth)
            cJSON_AddNumberToObject(o, "depth", j->info.depth);
        cJSON *top = cJSON_AddArrayToObject(o, "top");
        for (int i = 0; j->action >= 0 && i < j->info.ntop; i++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddItemToObject(t, "move", move_string(g, j->info.top[i].action));
            cJSON_AddNumberToObject(t, j->info.depth ? "score" : "visits", j->info.top[i].visits);
            cJSON_AddItemToArray(top, t);
        }
        return o;
    }
    cJSON_AddNumberToObject(o, "done", j->done);
    cJSON_AddItemToObject(o, "best", j->action >= 0 ? move_string(g, j->action) : cJSON_CreateNull());
    cJSON *pol = cJSON_AddArrayToObject(o, "policy");
    cJSON *vis = cJSON_AddArrayToObject(o, "visits");
    cJSON *q = cJSON_AddArrayToObject(o, "q");
    for (int a = 0; a < g->actions; a++) {
        cJSON_AddItemToArray(pol, cJSON_CreateNumber(round_to(j->policy[a], 1e-4)));
        cJSON_AddItemToArray(vis, cJSON_CreateNumber(j->visits[a]));
        cJSON_AddItemToArray(q, isnan(j->q[a]) ? cJSON_CreateNull()
                                               : cJSON_CreateNumber(round_to(j->q[a], 1e-4)));
    }
    cJSON_AddItemToObject(o, "net_value", value_array(j->net_value, g->players));
    /* a wdl model: its win, draw and loss probabilities for the player to move */
    cJSON_AddItemToObject(o, "net_wdl", j->has_wdl ? value_array(j->net_wdl, 3) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "value", j->has_value ? value_array(j->value, g->players) : cJSON_CreateNull());
    cJSON *pv = cJSON_AddArrayToObject(o, "pv");
    for (int i = 0; i < j->npv; i++)
        cJSON_AddItemToArray(pv, move_string(g, j->pv[i]));
    return o;
}

cJSON *web_session_json(web_session *ss)
{
    const game *g = ss->g;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "session", ss->id);
    cJSON_AddItemToObject(o, "game", game_json(ss));
    cJSON *pl = cJSON_AddArrayToObject(o, "players");
    for (int p = 0; p < g->players; p++)
        cJSON_AddItemToArray(pl, cJSON_CreateString(ss->spec[p]));
    pthread_mutex_lock(&ss->mu);
    const game_state *s = web_session_state(ss, ss->nmoves);
    bool over = game_terminal(g, s);
    cJSON *mv = cJSON_AddArrayToObject(o, "moves");
    for (int k = 0; k < ss->nmoves; k++)
        cJSON_AddItemToArray(mv, move_string(g, ss->moves[k]));
    cJSON_AddNumberToObject(o, "ply", ss->nmoves);
    cJSON_AddItemToObject(o, "to_move", over ? cJSON_CreateNull()
                                             : cJSON_CreateNumber(game_current_player(g, s)));
    cJSON_AddBoolToObject(o, "over", over);
    if (over) {
        float z[GAME_MAX_PLAYERS];
        game_result(g, s, z);
        cJSON_AddItemToObject(o, "result", value_array(z, g->players));
    } else {
        cJSON_AddNullToObject(o, "result");
    }
    cJSON *board = cJSON_AddArrayToObject(o, "board");
    if (g->ops->cells) {
        int8_t *cells = malloc((size_t)g->actions);
        if (cells) {
            g->ops->cells(g, s, cells);
            for (int a = 0; a < g->actions; a++)
                cJSON_AddItemToArray(board, cJSON_CreateNumber(cells[a]));
            free(cells);
        }
    }
    cJSON *legal = cJSON_AddArrayToObject(o, "legal");
    uint8_t *mask = malloc((size_t)g->actions);
    if (mask) {
        game_legal(g, s, mask);
        for (int a = 0; a < g->actions; a++)
            if (mask[a])
                cJSON_AddItemToArray(legal, cJSON_CreateNumber(a));
        free(mask);
    }
    cJSON_AddNumberToObject(o, "last", ss->nmoves ? ss->moves[ss->nmoves - 1] : -1);
    if (!strcmp(g->name, "sanling")) {
        int tri[GAME_MAX_PLAYERS], grp[GAME_MAX_PLAYERS];
        sanling_score(g, s, tri, grp);
        cJSON *sc = cJSON_AddObjectToObject(o, "score");
        cJSON *t = cJSON_AddArrayToObject(sc, "triangles"), *gr = cJSON_AddArrayToObject(sc, "groups");
        for (int p = 0; p < g->players; p++) {
            cJSON_AddItemToArray(t, cJSON_CreateNumber(tri[p]));
            cJSON_AddItemToArray(gr, cJSON_CreateNumber(grp[p]));
        }
    }
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (int k = 0; k <= ss->nmoves; k++)
        cJSON_AddItemToArray(vals, ss->value_src[k]
                                       ? value_array(ss->values + (size_t)k * (size_t)g->players, g->players)
                                       : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "search", ss->job.kind == JOB_NONE ? cJSON_CreateNull() : job_json(ss));
    pthread_mutex_unlock(&ss->mu);
    return o;
}
