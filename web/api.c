/* api.c — the JSON API of gridzero serve (docs/serve.md documents it). Every
 * POST body is one JSON object; every field is checked (type, range, legality) and an
 * unknown field is an error, as in config files: a request that is not understood gets
 * a 4xx and {"error": "..."} naming the field, and changes nothing. Player specs never
 * name files: "model" is the server's model (-m, or the run's best), "model:gen_N" a
 * finished model of the run directory. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/parse.h"
#include "loop/rundir.h"
#include "nn/net_eval.h"
#include "web_impl.h"

/* ---- field validation ---- */

/* err gets "field \"name\": ..." messages; every checker returns 0 or -1. */
static int check_fields(const cJSON *body, const char *const *allowed, char *err, size_t errlen)
{
    for (const cJSON *f = body->child; f; f = f->next) {
        bool ok = false;
        for (int i = 0; allowed[i] && !ok; i++)
            ok = !strcmp(f->string, allowed[i]);
        if (!ok) {
            char list[256] = "";
            size_t n = 0;
            for (int i = 0; allowed[i]; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", allowed[i]);
            snprintf(err, errlen, "unknown field \"%.60s\" (this request takes: %s)", f->string, list);
            return -1;
        }
    }
    return 0;
}

static const cJSON *field(const cJSON *body, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(body, name);
}

/* A string field; *out NULL when absent and not required. */
static int get_string(const cJSON *body, const char *name, bool required, size_t maxlen,
                      const char **out, char *err, size_t errlen)
{
    const cJSON *f = field(body, name);
    *out = NULL;
    if (!f) {
        if (required)
            snprintf(err, errlen, "field \"%s\" is missing", name);
        return required ? -1 : 0;
    }
    if (!cJSON_IsString(f)) {
        snprintf(err, errlen, "field \"%s\": expected a string", name);
        return -1;
    }
    if (strlen(f->valuestring) > maxlen) {
        snprintf(err, errlen, "field \"%s\": longer than %zu characters", name, maxlen);
        return -1;
    }
    *out = f->valuestring;
    return 0;
}

/* An integer field in lo..hi; *present says whether it was there. */
static int get_int(const cJSON *body, const char *name, int lo, int hi, int *out, bool *present,
                   char *err, size_t errlen)
{
    const cJSON *f = field(body, name);
    *present = f != NULL;
    if (!f)
        return 0;
    double v = cJSON_GetNumberValue(f);
    if (!cJSON_IsNumber(f) || v != floor(v) || v < lo || v > hi) {
        snprintf(err, errlen, "field \"%s\": expected a whole number from %d to %d", name, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int get_seconds(const cJSON *body, double max, double *out, char *err, size_t errlen)
{
    const cJSON *f = field(body, "seconds");
    *out = max;
    if (!f)
        return 0;
    double v = cJSON_GetNumberValue(f);
    if (!cJSON_IsNumber(f) || !(v > 0) || v > max) {
        snprintf(err, errlen, "field \"seconds\": expected a number of seconds above 0 and at most %g "
                 "(this server's limit)", max);
        return -1;
    }
    *out = v;
    return 0;
}

static int get_bool(const cJSON *body, const char *name, bool *out, bool *present, char *err,
                    size_t errlen)
{
    const cJSON *f = field(body, name);
    *present = f != NULL;
    if (!f)
        return 0;
    if (!cJSON_IsBool(f)) {
        snprintf(err, errlen, "field \"%s\": expected true or false", name);
        return -1;
    }
    *out = cJSON_IsTrue(f);
    return 0;
}

/* ---- player specs: models by name, never by path ---- */

/* The run's best model (from RUN_DIR/best) into path; 0 or -1 with a message. */
static int run_best_model(const web_server *s, char *path, size_t len, char *err, size_t errlen)
{
    char rel[64];
    if (rundir_read_best(s->run_dir, rel, sizeof rel, NULL) != 1) {
        snprintf(err, errlen, "the run has no best model yet (%s/best)", s->run_dir);
        return -1;
    }
    snprintf(path, len, "%s/%s", s->run_dir, rel);
    return 0;
}

/* The model file "model" means: -m MODEL, else the run's best. */
static int default_model(const web_server *s, char *path, size_t len, char *err, size_t errlen)
{
    if (s->o.model) {
        snprintf(path, len, "%s", s->model);
        return 0;
    }
    if (s->o.run_dir)
        return run_best_model(s, path, len, err, errlen);
    snprintf(err, errlen, "this server has no model (start it with -m MODEL or --run RUN_DIR)");
    return -1;
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* Turns a requested spec into one web_brain_new may make here: "human" as is; "model",
 * "model:SIMS", "model:gen_N[:SIMS]", "model:best[:SIMS]" into "model:PATH[:SIMS]";
 * engine kinds as they are, with their playouts checked against the limit. *playouts
 * gets the search's playouts a move (0 when it is not a playout count). */
static int resolve_spec(const web_server *s, const gz_config *cfg, const char *in, char *out,
                        size_t len, int *playouts, char *err, size_t errlen)
{
    *playouts = 0;
    if (!strcmp(in, "human")) {
        snprintf(out, len, "human");
        return 0;
    }
    const char *colon = strchr(in, ':');
    size_t kind_len = colon ? (size_t)(colon - in) : strlen(in);
    if (kind_len == 5 && !strncmp(in, "model", 5)) {
        char path[WEB_PATH_LEN], msg[WEB_ERR_LEN];
        const char *rest = colon ? colon + 1 : "";
        const char *sims = NULL;
        if (*rest && all_digits(rest, strlen(rest))) {
            sims = rest;
            rest = "";
        } else if (*rest) {
            const char *c2 = strchr(rest, ':');
            if (c2) {
                sims = c2 + 1;
                if (!all_digits(sims, strlen(sims))) {
                    snprintf(err, errlen, "player \"%s\": expected model[:SIMS], model:gen_N[:SIMS] or "
                             "model:best[:SIMS] (the server reads no file a request names)", in);
                    return -1;
                }
            }
        }
        size_t name_len = *rest ? (size_t)((sims ? sims - 1 : rest + strlen(rest)) - rest) : 0;
        if (name_len == 0) {
            if (default_model(s, path, sizeof path, msg, sizeof msg) < 0) {
                snprintf(err, errlen, "player \"%s\": %s", in, msg);
                return -1;
            }
        } else if (!s->o.run_dir) {
            snprintf(err, errlen, "player \"%s\": models are named only with --run (this server's "
                     "model is \"model\"; it reads no file a request names)", in);
            return -1;
        } else if (name_len == 4 && !strncmp(rest, "best", 4)) {
            if (run_best_model(s, path, sizeof path, msg, sizeof msg) < 0) {
                snprintf(err, errlen, "player \"%s\": %s", in, msg);
                return -1;
            }
        } else if (name_len > 4 && !strncmp(rest, "gen_", 4) && all_digits(rest + 4, name_len - 4)) {
            int gen = atoi(rest + 4); /* all_digits: at most 9 digits, no overflow */
            snprintf(path, sizeof path, "%s/models/gen_%04d.h5", s->run_dir, gen);
            struct stat st;
            if (stat(path, &st) < 0) {
                snprintf(err, errlen, "player \"%s\": the run has no finished model gen_%04d", in, gen);
                return -1;
            }
            /* with train.swa the generation played as its average (the arena's gen_N,
             * best): that is the model gen_N names */
            char swa[sizeof path];
            snprintf(swa, sizeof swa, "%s/models/swa_%04d.h5", s->run_dir, gen);
            if (stat(swa, &st) == 0)
                memcpy(path, swa, sizeof path);
        } else {
            snprintf(err, errlen, "player \"%s\": expected model[:SIMS], model:gen_N[:SIMS] or "
                     "model:best[:SIMS] (the server reads no file a request names)", in);
            return -1;
        }
        int n = cfg->arena.simulations;
        if ((sims && parse_int(sims, 1, s->o.max_playouts, &n) < 0) || n < 1 || n > s->o.max_playouts) {
            char asked[16];
            snprintf(asked, sizeof asked, "%d", n);
            snprintf(err, errlen, "player \"%s\": %.12s simulations a move; this server allows 1 to %d",
                     in, sims ? sims : asked, s->o.max_playouts);
            return -1;
        }
        *playouts = n;
        snprintf(out, len, "model:%s:%d", path, n);
        return 0;
    }
    if (kind_len == 4 && !strncmp(in, "mcts", 4)) {
        int n = cfg->mcts.simulations;
        if (colon && player_parse_count(colon + 1, &n) < 0) {
            snprintf(err, errlen, "player \"%s\": expected mcts:N with N simulations a move", in);
            return -1;
        }
        if (n > s->o.max_playouts) {
            snprintf(err, errlen, "player \"%s\": %d simulations a move; this server allows at most %d",
                     in, n, s->o.max_playouts);
            return -1;
        }
        *playouts = n;
    }
    snprintf(out, len, "%s", in);
    return 0;
}

/* The player that hints when no player is named: the model, else pure MCTS. */
static const char *hint_spec(const web_server *s)
{
    return s->o.model || s->o.run_dir ? "model" : "mcts";
}

/* A short spec to show for a resolved one (the path of a model is not news). */
static void display_spec(const char *requested, const char *resolved, char *out, size_t len)
{
    snprintf(out, len, "%s", strncmp(resolved, "model:", 6) ? resolved : requested);
}

/* ---- the game config of a new session ---- */

/* The server's config with its game section replaced by obj (checked like a file). */
static int game_config(const web_server *s, const cJSON *obj, gz_config *out, char *err, size_t errlen)
{
    *out = s->o.cfg;
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "field \"game\": expected an object such as {\"name\": \"sanling\", "
                 "\"size\": 9}");
        return -1;
    }
    char *text = cfg_to_json(&s->o.cfg);
    cJSON *all = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON *copy = cJSON_Duplicate(obj, 1);
    if (!all || !copy) {
        cJSON_Delete(all);
        cJSON_Delete(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(all, "game", copy);
    text = cJSON_PrintUnformatted(all);
    cJSON_Delete(all);
    char msg[WEB_ERR_LEN];
    int rc = text ? cfg_parse(out, text, "field game", msg, sizeof msg) : -1;
    free(text);
    if (rc < 0)
        snprintf(err, errlen, "%s", msg);
    return rc;
}

/* Parses a move list (an array of strings, or one string of moves separated by spaces)
 * into actions, checking each against the position it is played in. */
static int parse_moves(const game *g, const cJSON *f, int *actions, int *n, char *err, size_t errlen)
{
    *n = 0;
    game_state *s = game_state_new(g, NULL);
    uint8_t *mask = malloc((size_t)g->actions);
    char *words = NULL;
    int rc = -1;
    if (!s || !mask) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    int count = 0;
    const char **items = NULL;
    if (cJSON_IsArray(f)) {
        /* walked once (cJSON_GetArrayItem(f, i) walks from the start: quadratic), and no
         * longer than a game can be */
        count = cJSON_GetArraySize(f);
        if (count > g->max_game_length) {
            snprintf(err, errlen, "field \"moves\": %d moves; a game has at most %d moves", count,
                     g->max_game_length);
            goto out;
        }
        items = calloc((size_t)count + 1, sizeof *items);
        if (!items) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        int i = 0;
        for (const cJSON *m = f->child; m; m = m->next, i++) {
            if (!cJSON_IsString(m)) {
                snprintf(err, errlen, "field \"moves\": item %d is not a string", i + 1);
                free(items);
                goto out;
            }
            items[i] = m->valuestring;
        }
    } else if (cJSON_IsString(f)) {
        words = strdup(f->valuestring);
        size_t cap = strlen(f->valuestring) / 2 + 2;
        items = calloc(cap, sizeof *items);
        if (!words || !items) {
            snprintf(err, errlen, "out of memory");
            free(items);
            goto out;
        }
        char *save = NULL;
        for (char *w = strtok_r(words, " \t\r\n;", &save); w; w = strtok_r(NULL, " \t\r\n;", &save)) {
            if (count == g->max_game_length) {
                snprintf(err, errlen, "field \"moves\": more than %d moves; a game has at most %d moves",
                         count, g->max_game_length);
                free(items);
                goto out;
            }
            items[count++] = w;
        }
    } else {
        snprintf(err, errlen, "field \"moves\": expected a list of moves [\"h8\", \"h9\"] or a string "
                 "\"h8 h9\"");
        goto out;
    }
    game_init(g, s, NULL);
    for (int i = 0; i < count; i++) {
        int a;
        char msg[256];
        if (game_terminal(g, s)) {
            snprintf(err, errlen, "field \"moves\": move %d (\"%.20s\"): the game is already over", i + 1,
                     items[i]);
            free(items);
            goto out;
        }
        if (g->ops->parse_move(g, items[i], &a, msg, sizeof msg) < 0) {
            snprintf(err, errlen, "field \"moves\": move %d: cannot read %s", i + 1, msg);
            free(items);
            goto out;
        }
        game_legal(g, s, mask);
        if (!mask[a]) {
            char mv[32];
            snprintf(err, errlen, "field \"moves\": move %d (%s) is not legal in that position", i + 1,
                     g->ops->format_move(g, a, mv, sizeof mv));
            free(items);
            goto out;
        }
        game_play(g, s, a);
        actions[(*n)++] = a;
    }
    free(items);
    rc = 0;
out:
    free(words);
    free(mask);
    free(s);
    return rc;
}

/* ---- endpoints ---- */

typedef struct api_ctx {
    web_server *s;
    cJSON *body;      /* the request (an object) */
    web_session *ss;  /* the session named, with a reference and its req_lock held */
    char err[WEB_ERR_LEN];
} api_ctx;

static web_reply state_reply(api_ctx *x) { return web_json(web_session_json(x->ss)); }

static web_reply api_info(web_server *s)
{
    cJSON *o = cJSON_CreateObject();
    char *text = cfg_to_json(&s->o.cfg);
    cJSON *all = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON *sec = all ? cJSON_DetachItemFromObjectCaseSensitive(all, "game") : NULL;
    cJSON_Delete(all);
    cJSON_AddItemToObject(o, "game", sec ? sec : cJSON_CreateObject());
    cJSON_AddStringToObject(o, "config", s->cfg_name);
    if (s->o.model) {
        const char *base = strrchr(s->model, '/');
        cJSON_AddStringToObject(o, "model", base ? base + 1 : s->model);
    } else {
        cJSON_AddNullToObject(o, "model");
    }
    cJSON_AddBoolToObject(o, "run", s->o.run_dir != NULL);
    cJSON_AddStringToObject(o, "hint", hint_spec(s));
    cJSON_AddNumberToObject(o, "simulations", s->o.cfg.mcts.simulations);
    cJSON *lim = cJSON_AddObjectToObject(o, "limits");
    cJSON_AddNumberToObject(lim, "sessions", s->o.max_sessions);
    cJSON_AddNumberToObject(lim, "searches", s->o.max_searches);
    cJSON_AddNumberToObject(lim, "body_bytes", (double)s->o.max_body);
    cJSON_AddNumberToObject(lim, "playouts", s->o.max_playouts);
    cJSON_AddNumberToObject(lim, "seconds", s->o.max_seconds);
    cJSON *kinds = cJSON_AddArrayToObject(o, "players");
    cJSON_AddItemToArray(kinds, cJSON_CreateString("human"));
    for (int i = 0; player_kinds[i]; i++)
        cJSON_AddItemToArray(kinds, cJSON_CreateString(player_kinds[i]->syntax));
    cJSON_AddItemToArray(kinds, cJSON_CreateString(s->o.run_dir ? "model[:SIMS], model:gen_N[:SIMS], model:best[:SIMS]"
                                                                : "model[:SIMS]"));
    return web_json(o);
}

static web_reply api_new(api_ctx *x)
{
    web_server *s = x->s;
    static const char *const allowed[] = {"game", "players", "opponent", "seat", "moves", NULL};
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    gz_config cfg;
    if (game_config(s, field(x->body, "game"), &cfg, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    game *g = game_new(&cfg.game, x->err, sizeof x->err);
    if (!g)
        return web_error(400, "field \"game\": %s", x->err);
    int np = g->players;
    game_free(g);
    char spec[GAME_MAX_PLAYERS][PLAYER_NAME_LEN];
    const char *want[GAME_MAX_PLAYERS];
    const cJSON *players = field(x->body, "players");
    const char *opponent;
    int seat = 1;
    bool have_seat;
    if (get_string(x->body, "opponent", false, PLAYER_NAME_LEN - 1, &opponent, x->err, sizeof x->err) < 0 ||
        get_int(x->body, "seat", 1, np, &seat, &have_seat, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    if (players) {
        if (opponent || have_seat)
            return web_error(400, "field \"players\": give either players or opponent and seat, not both");
        if (!cJSON_IsArray(players) || cJSON_GetArraySize(players) != np)
            return web_error(400, "field \"players\": expected a list of %d player specs (\"human\", "
                             "\"mcts:800\", ...), one per seat", np);
        for (int p = 0; p < np; p++) {
            const cJSON *it = cJSON_GetArrayItem(players, p);
            if (!cJSON_IsString(it) || strlen(it->valuestring) >= PLAYER_NAME_LEN)
                return web_error(400, "field \"players\": item %d: expected a player spec (a string of "
                                 "at most %d characters)", p + 1, PLAYER_NAME_LEN - 1);
            want[p] = it->valuestring;
        }
    } else {
        for (int p = 0; p < np; p++)
            want[p] = p == seat - 1 ? "human" : opponent ? opponent : hint_spec(s);
    }
    int playouts[GAME_MAX_PLAYERS];
    for (int p = 0; p < np; p++) {
        char msg[WEB_ERR_LEN];
        if (resolve_spec(s, &cfg, want[p], spec[p], PLAYER_NAME_LEN, &playouts[p], msg, sizeof msg) < 0)
            return web_error(400, "field \"%s\": %s", players ? "players" : "opponent", msg);
    }
    int status;
    web_session *ss = web_session_new(s, &cfg, spec, playouts, &status, x->err, sizeof x->err);
    if (!ss)
        return web_error(status, "%s", x->err);
    /* show what was asked for, not the model's path */
    for (int p = 0; p < np; p++)
        display_spec(want[p], spec[p], ss->spec[p], PLAYER_NAME_LEN);
    pthread_mutex_lock(&ss->req_lock);
    x->ss = ss;
    const cJSON *moves = field(x->body, "moves");
    if (moves) {
        int *acts = malloc(sizeof(int) * (size_t)(ss->g->max_game_length + 1)), n = 0;
        if (!acts || parse_moves(ss->g, moves, acts, &n, x->err, sizeof x->err) < 0) {
            free(acts);
            web_session_close(ss);
            return web_error(400, "%s", acts ? x->err : "out of memory");
        }
        pthread_mutex_lock(&ss->mu);
        for (int i = 0; i < n; i++)
            web_session_play(ss, acts[i]);
        pthread_mutex_unlock(&ss->mu);
        free(acts);
    }
    return state_reply(x);
}

static const char *const session_only[] = {"session", NULL};

static web_reply api_state(api_ctx *x)
{
    if (check_fields(x->body, session_only, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    return state_reply(x);
}

static web_reply api_move(api_ctx *x)
{
    static const char *const allowed[] = {"session", "move", "action", NULL};
    web_session *ss = x->ss;
    const game *g = ss->g;
    const char *mv;
    int a = -1;
    bool have_action;
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0 ||
        get_string(x->body, "move", false, 32, &mv, x->err, sizeof x->err) < 0 ||
        get_int(x->body, "action", 0, g->actions - 1, &a, &have_action, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    if (!mv == !have_action)
        return web_error(400, "give the move as field \"move\" (e.g. \"%s\") or field \"action\" (a "
                         "point number), one of the two", g->ops->format_move(g, g->actions / 2, x->err, 32));
    if (mv) {
        char msg[256];
        if (g->ops->parse_move(g, mv, &a, msg, sizeof msg) < 0)
            return web_error(400, "field \"move\": cannot read %s", msg);
    }
    web_session_stop_job(ss, true);
    const game_state *s = web_session_state(ss, ss->nmoves);
    if (game_terminal(g, s))
        return web_error(400, "the game is over: no more moves (undo, or start a new game)");
    uint8_t *mask = malloc((size_t)g->actions);
    if (!mask)
        return web_error(500, "out of memory");
    game_legal(g, s, mask);
    bool legal = mask[a];
    free(mask);
    if (!legal) {
        char buf[32];
        return web_error(400, "field \"%s\": %s is not a legal move in this position", mv ? "move" : "action",
                         g->ops->format_move(g, a, buf, sizeof buf));
    }
    pthread_mutex_lock(&ss->mu);
    web_session_play(ss, a);
    pthread_mutex_unlock(&ss->mu);
    return state_reply(x);
}

static web_reply api_undo(api_ctx *x)
{
    static const char *const allowed[] = {"session", "plies", NULL};
    web_session *ss = x->ss;
    int plies = 0;
    bool have;
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0 ||
        get_int(x->body, "plies", 1, ss->g->max_game_length, &plies, &have, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    web_session_stop_job(ss, true);
    int k = ss->nmoves;
    if (have) {
        if (plies > k)
            return web_error(400, "field \"plies\": only %d moves to take back", k);
        k -= plies;
    } else {
        /* back to the previous position where a person was to move; one move when
         * nobody at the board is a person */
        bool humans = false;
        for (int p = 0; p < ss->g->players; p++)
            humans |= !ss->seat[p];
        int target = -1;
        for (int i = k - 1; i >= 0 && target < 0; i--)
            if (!humans || !ss->seat[game_current_player(ss->g, web_session_state(ss, i))])
                target = i;
        if (target < 0)
            return web_error(400, "nothing to take back");
        k = target;
    }
    pthread_mutex_lock(&ss->mu);
    web_session_truncate(ss, k);
    pthread_mutex_unlock(&ss->mu);
    return state_reply(x);
}

static web_reply api_load(api_ctx *x)
{
    static const char *const allowed[] = {"session", "moves", NULL};
    web_session *ss = x->ss;
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    const cJSON *moves = field(x->body, "moves");
    if (!moves)
        return web_error(400, "field \"moves\" is missing");
    int *acts = malloc(sizeof(int) * (size_t)(ss->g->max_game_length + 1)), n = 0;
    if (!acts)
        return web_error(500, "out of memory");
    if (parse_moves(ss->g, moves, acts, &n, x->err, sizeof x->err) < 0) {
        free(acts);
        return web_error(400, "%s", x->err);
    }
    web_session_stop_job(ss, true);
    pthread_mutex_lock(&ss->mu);
    web_session_truncate(ss, 0);
    for (int i = 0; i < n; i++)
        web_session_play(ss, acts[i]);
    pthread_mutex_unlock(&ss->mu);
    free(acts);
    return state_reply(x);
}

static web_reply api_genmove(api_ctx *x)
{
    static const char *const allowed[] = {"session", "player", "play", "seconds", NULL};
    web_server *s = x->s;
    web_session *ss = x->ss;
    const char *want;
    bool play = false, have_play;
    double seconds;
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0 ||
        get_string(x->body, "player", false, PLAYER_NAME_LEN - 1, &want, x->err, sizeof x->err) < 0 ||
        get_bool(x->body, "play", &play, &have_play, x->err, sizeof x->err) < 0 ||
        get_seconds(x->body, s->o.max_seconds, &seconds, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    web_session_stop_job(ss, true);
    const game_state *pos = web_session_state(ss, ss->nmoves);
    if (game_terminal(ss->g, pos))
        return web_error(400, "the game is over: no move to search for");
    int who = game_current_player(ss->g, pos);
    web_job *j = &ss->job;
    brain_free(j->own);
    j->own = NULL;
    int playouts = 0;
    char note[WEB_ERR_LEN] = "";
    if (want || !ss->seat[who]) {
        /* a hint: a player made for this search; unless the request named it, a model
         * that does not fit this game gives way to pure MCTS (the answer says why) */
        const char *ask = want ? want : hint_spec(s);
        char spec[PLAYER_NAME_LEN], msg[WEB_ERR_LEN];
        if (resolve_spec(s, &ss->cfg, ask, spec, sizeof spec, &playouts, msg, sizeof msg) == 0) {
            if (!strcmp(spec, "human"))
                return web_error(400, "field \"player\": \"human\" cannot search");
            j->own = web_brain_new(s, ss->g, &ss->cfg, spec, playouts, msg, sizeof msg);
        }
        if (!j->own && !want && strcmp(ask, "mcts")) {
            snprintf(note, sizeof note, "%s: pure MCTS instead", msg);
            ask = "mcts";
            if (resolve_spec(s, &ss->cfg, ask, spec, sizeof spec, &playouts, msg, sizeof msg) == 0)
                j->own = web_brain_new(s, ss->g, &ss->cfg, spec, playouts, msg, sizeof msg);
        }
        if (!j->own)
            return web_error(400, "field \"player\": %s", msg);
        display_spec(ask, spec, j->who, sizeof j->who);
        if (!have_play)
            play = false;
    } else {
        snprintf(j->who, sizeof j->who, "%s", ss->spec[who]);
        char spec[PLAYER_NAME_LEN], msg[WEB_ERR_LEN];
        if (resolve_spec(s, &ss->cfg, ss->spec[who], spec, sizeof spec, &playouts, msg, sizeof msg) < 0)
            playouts = 0; /* only for the progress bar */
        if (!have_play)
            play = true;
    }
    j->kind = JOB_GENMOVE;
    snprintf(j->note, sizeof j->note, "%s", note);
    j->ply = ss->nmoves;
    j->target = playouts;
    j->play = play;
    j->graph = false;
    j->ctl.deadline = player_clock() + seconds;
    int rc = web_session_start_job(ss, x->err, sizeof x->err);
    if (rc) {
        brain_free(j->own);
        j->own = NULL;
        j->kind = JOB_NONE;
        return web_error(rc, "%s", x->err);
    }
    return state_reply(x);
}

static web_reply api_analyze(api_ctx *x)
{
    static const char *const allowed[] = {"session", "playouts", "seconds", "ply", "graph", "evaluator",
                                          NULL};
    web_server *s = x->s;
    web_session *ss = x->ss;
    const game *g = ss->g;
    int playouts = ss->cfg.mcts.simulations, ply = ss->nmoves;
    bool have, graph = false;
    double seconds;
    const char *ev;
    if (check_fields(x->body, allowed, x->err, sizeof x->err) < 0 ||
        get_int(x->body, "playouts", 1, s->o.max_playouts, &playouts, &have, x->err, sizeof x->err) < 0 ||
        get_int(x->body, "ply", 0, ss->nmoves, &ply, &have, x->err, sizeof x->err) < 0 ||
        get_bool(x->body, "graph", &graph, &have, x->err, sizeof x->err) < 0 ||
        get_seconds(x->body, s->o.max_seconds, &seconds, x->err, sizeof x->err) < 0 ||
        get_string(x->body, "evaluator", false, 16, &ev, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    if (playouts > s->o.max_playouts)
        playouts = s->o.max_playouts; /* the config's default may exceed the limit */
    bool has_model = s->o.model || s->o.run_dir, named = ev != NULL;
    if (!ev)
        ev = has_model ? "model" : "rollout";
    if (strcmp(ev, "model") && strcmp(ev, "rollout"))
        return web_error(400, "field \"evaluator\": expected \"model\" or \"rollout\"");
    web_session_stop_job(ss, true);
    if (game_terminal(g, web_session_state(ss, ply)))
        return web_error(400, "the position after %d moves is the end of the game: nothing to analyse", ply);
    /* The evaluator: made once per session (again when the run's best model changes).
     * Unless the request named it, a model that does not fit this game (another game,
     * or no best model yet) gives way to pure MCTS, and the answer says why. */
    char path[WEB_PATH_LEN] = "", note[WEB_ERR_LEN] = "";
    if (!strcmp(ev, "model") && default_model(s, path, sizeof path, x->err, sizeof x->err) < 0) {
        if (named)
            return web_error(400, "field \"evaluator\": %s", x->err);
        snprintf(note, sizeof note, "%s: pure MCTS (random rollouts) instead", x->err);
        ev = "rollout";
        path[0] = 0;
    }
    if (!strcmp(ev, "model") && !strcmp(ss->an_eval_unfit, path)) {
        snprintf(note, sizeof note, "the model does not fit this game: pure MCTS (random rollouts) instead");
        ev = "rollout";
        path[0] = 0;
    }
    if (!ss->an_eval || strcmp(ss->an_eval_name, ev) || strcmp(ss->an_eval_path, path)) {
        evaluator_free(ss->an_eval);
        ss->an_eval = NULL;
        if (!strcmp(ev, "model")) {
            pthread_mutex_lock(&s->h5_lock);
            ss->an_eval = net_eval_load(g, &ss->cfg, path, x->err, sizeof x->err);
            pthread_mutex_unlock(&s->h5_lock);
            if (!ss->an_eval) {
                if (named)
                    return web_error(400, "evaluator \"model\" for this game: %s", x->err);
                snprintf(note, sizeof note, "%s: pure MCTS (random rollouts) instead", x->err);
                snprintf(ss->an_eval_unfit, sizeof ss->an_eval_unfit, "%s", path);
                ev = "rollout";
                path[0] = 0;
            }
        }
        if (!ss->an_eval) {
            ss->an_eval = eval_rollout_new(g, ss->cfg.mcts.rollouts, rng_derive(ss->seed, 0x726f6c6cULL));
            if (!ss->an_eval)
                return web_error(500, "out of memory");
        }
        snprintf(ss->an_eval_name, sizeof ss->an_eval_name, "%s", ev);
        snprintf(ss->an_eval_path, sizeof ss->an_eval_path, "%s", path);
    }
    web_job *j = &ss->job;
    brain_free(j->own);
    j->own = NULL;
    j->kind = JOB_ANALYZE;
    j->ply = ply;
    j->target = playouts;
    j->graph = graph && !strcmp(ev, "model"); /* a rollout's value is too noisy to draw */
    j->play = false;
    snprintf(j->who, sizeof j->who, "%s", ev);
    snprintf(j->note, sizeof j->note, "%s", note);
    j->ctl.deadline = player_clock() + seconds;
    int rc = web_session_start_job(ss, x->err, sizeof x->err);
    if (rc) {
        j->kind = JOB_NONE;
        return web_error(rc, "%s", x->err);
    }
    return state_reply(x);
}

static web_reply api_cancel(api_ctx *x)
{
    if (check_fields(x->body, session_only, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    web_session_stop_job(x->ss, true);
    return state_reply(x);
}

static web_reply api_close(api_ctx *x)
{
    if (check_fields(x->body, session_only, x->err, sizeof x->err) < 0)
        return web_error(400, "%s", x->err);
    web_session_stop_job(x->ss, true);
    web_session_close(x->ss);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "closed", x->ss->id);
    return web_json(o);
}

/* ---- routing ---- */

typedef struct api_route {
    const char *path;
    web_reply (*post)(api_ctx *x); /* NULL: a GET endpoint */
    bool session;                  /* takes field "session" */
} api_route;

static const api_route routes[] = {
    {"info", NULL, false},          {"run", NULL, false},
    {"new", api_new, false},        {"state", api_state, true},
    {"move", api_move, true},       {"undo", api_undo, true},
    {"load", api_load, true},       {"genmove", api_genmove, true},
    {"analyze", api_analyze, true}, {"cancel", api_cancel, true},
    {"close", api_close, true},
};

/* Whether the JSON text has a \u0000 escape inside a string: cJSON would decode it into a
 * NUL that silently cuts the string short ("random\u0000junk" read as "random"). */
static bool has_nul_escape(const char *p)
{
    bool in = false;
    for (; *p; p++) {
        if (!in) {
            in = *p == '"';
        } else if (*p == '"') {
            in = false;
        } else if (*p == '\\') {
            if (!*++p)
                return false;
            if (*p == 'u' && !strncmp(p + 1, "0000", 4))
                return true;
        }
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key that appears twice in one object of v (at any depth), or NULL: the first one
 * would win and the second never be checked. Sorting the names keeps it n log n. */
static const char *duplicate_key(const cJSON *v, const char **scratch)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return NULL;
    if (cJSON_IsObject(v)) {
        int n = 0;
        for (const cJSON *c = v->child; c; c = c->next)
            scratch[n++] = c->string;
        qsort(scratch, (size_t)n, sizeof *scratch, by_name);
        for (int i = 1; i < n; i++)
            if (!strcmp(scratch[i - 1], scratch[i]))
                return scratch[i];
    }
    for (const cJSON *c = v->child; c; c = c->next) {
        const char *d = duplicate_key(c, scratch);
        if (d)
            return d;
    }
    return NULL;
}

web_reply web_api(web_server *s, const char *method, const char *path, const char *body)
{
    const api_route *r = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strcmp(routes[i].path, path))
            r = &routes[i];
    if (!r)
        return web_error(404, "no such API endpoint: /api/%.100s", path);
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (!r->post) {
        if (!get)
            return web_error(405, "/api/%s answers GET", path);
        return !strcmp(path, "info") ? api_info(s) : web_run_summary(s);
    }
    if (strcmp(method, "POST"))
        return web_error(405, "/api/%s answers POST with a JSON object", path);
    api_ctx x = {.s = s};
    const char *end = NULL;
    x.body = body ? cJSON_ParseWithOpts(body, &end, 1) : cJSON_CreateObject();
    if (!x.body) {
        const char *at = end ? end : cJSON_GetErrorPtr();
        long off = at && at >= body ? (long)(at - body) : -1;
        return web_error(400, "request body: not JSON (at byte %ld)", off);
    }
    if (!cJSON_IsObject(x.body)) {
        cJSON_Delete(x.body);
        return web_error(400, "request body: expected a JSON object {...}");
    }
    if (body && has_nul_escape(body)) {
        cJSON_Delete(x.body);
        return web_error(400, "request body: a string holds \\u0000 (a NUL character), which no "
                         "field takes");
    }
    /* every member of every object is at most one entry of the scratch list: the body's
     * length bounds their number */
    const char **names = body ? malloc(sizeof *names * (strlen(body) / 4 + 1)) : NULL;
    if (body && !names) {
        cJSON_Delete(x.body);
        return web_error(503, "out of memory");
    }
    const char *dup = names ? duplicate_key(x.body, names) : NULL;
    if (dup) {
        web_reply e = web_error(400, "request body: key \"%.60s\" appears twice in one object", dup);
        free(names);
        cJSON_Delete(x.body);
        return e;
    }
    free(names);
    web_reply rep;
    if (r->session) {
        const char *id;
        if (get_string(x.body, "session", true, WEB_ID_LEN, &id, x.err, sizeof x.err) < 0) {
            cJSON_Delete(x.body);
            return web_error(400, "%s", x.err);
        }
        x.ss = web_session_get(s, id);
        if (!x.ss) {
            rep = web_error(404, "field \"session\": no session \"%.40s\" (it was closed, or dropped "
                            "for a newer one: start a new game)", id);
            cJSON_Delete(x.body);
            return rep;
        }
        pthread_mutex_lock(&x.ss->req_lock);
        rep = r->post(&x);
        pthread_mutex_unlock(&x.ss->req_lock);
        web_session_release(x.ss);
    } else {
        rep = r->post(&x); /* api_new: leaves its new session locked and referenced */
        if (x.ss) {
            pthread_mutex_unlock(&x.ss->req_lock);
            web_session_release(x.ss);
        }
    }
    cJSON_Delete(x.body);
    return rep;
}
