/* run_summary.c — GET /api/run: what the dashboard shows of a run directory, read the
 * way the run's resume reads it: only finished files (a stage's file exists once it is
 * complete; .tmp files are never opened; metrics.jsonl only up to its last complete
 * line), without taking the run's lock, so a live `gridzero run` is never disturbed.
 *
 * The answer: the run's game config, state.json and clock; one row per generation
 * (which stages are finished, the self-play event, the last training losses, the arena
 * event, the promotion replayed from the arena files as the run replays it, its Elo
 * with the 95% interval and the run's clock when it finished); every rating; the
 * training-loss curve; and the games of the newest arena file (for replays). Elo is
 * computed here from the finished arena files (engine/elo.h), so the dashboard is
 * never behind ratings.csv. Cached for half a second: many tabs cost one reading. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/elo.h"
#include "engine/parse.h"
#include "loop/rundata.h"
#include "loop/rundir.h"
#include "web_impl.h"

#define RUN_MAX_GENERATIONS 100000
#define RUN_MAX_LOSS_POINTS 2000
#define RUN_MAX_GAMES 40

static bool exists(const char *dir, const char *fmt, int gen)
{
    char path[WEB_PATH_LEN + 64];
    rundir_path(path, sizeof path, dir, fmt, gen);
    return rundir_exists(path);
}

/* The highest N of the finished files DIR/sub/gen_NNNN.ext. */
static int highest_generation(const char *dir, const char *sub, const char *ext)
{
    char path[WEB_PATH_LEN + 16];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int best = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        long long gen;
        const char *tail;
        if (!strncmp(de->d_name, "gen_", 4) && isdigit((unsigned char)de->d_name[4]) &&
            parse_ll_prefix(de->d_name + 4, &tail, 0, RUN_MAX_GENERATIONS, &gen) == 0 && gen > best &&
            !strcmp(tail, ext)) /* "gen_0003.h5", never "gen_0003.h5.tmp" */
            best = (int)gen;
    }
    closedir(d);
    return best;
}

typedef struct gen_row {
    cJSON *selfplay, *train, *validation, *arena; /* owned copies of the last events */
    double seconds;                               /* the run's clock at its last event */
    int trained_steps;
} gen_row;

static cJSON *build(web_server *s)
{
    const char *dir = s->run_dir;
    cJSON *o = cJSON_CreateObject();
    cJSON *warnings = cJSON_CreateArray();
    const char *base = strrchr(dir, '/');
    cJSON_AddStringToObject(o, "dir", base && base[1] ? base + 1 : dir);
    /* the run's own config (its game and gate), else the server's */
    gz_config rc;
    char path[WEB_PATH_LEN + 32], err[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (cfg_load(&rc, path, err, sizeof err) < 0) {
        rc = s->o.cfg;
        cJSON_AddItemToArray(warnings, cJSON_CreateString(err));
    }
    char *text = cfg_to_json(&rc);
    cJSON *all = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON *sec = all ? cJSON_DetachItemFromObjectCaseSensitive(all, "game") : NULL;
    cJSON_Delete(all);
    cJSON_AddItemToObject(o, "game", sec ? sec : cJSON_CreateObject());
    cJSON_AddNumberToObject(o, "gate", rc.arena.gate);
    cJSON_AddNumberToObject(o, "planned_generations", rc.loop.generations);
    cJSON *st = rundir_read_json(dir, "state.json");
    cJSON_AddItemToObject(o, "state", st ? st : cJSON_CreateNull());
    cJSON *clock = rundir_read_json(dir, "clock.json");
    const cJSON *sec_item = cJSON_GetObjectItemCaseSensitive(clock, "seconds");
    cJSON_AddNumberToObject(o, "seconds", cJSON_IsNumber(sec_item) ? sec_item->valuedouble : 0);
    cJSON_Delete(clock);

    /* the arena files that can be read: an invalid one (named in the warnings) counts for
     * nothing, not for a generation, its games or a promotion; the valid ones' games go
     * into the Elo table */
    int ga = highest_generation(dir, "arena", ".jsonl");
    bool *arena_ok = calloc((size_t)ga + 1, sizeof *arena_ok);
    elo_table *t = elo_table_new();
    int G = 0;
    for (int k = 1; t && arena_ok && k <= ga; k++) {
        if (!exists(dir, "arena/gen_%04d.jsonl", k))
            continue;
        char ap[WEB_PATH_LEN + 32];
        snprintf(ap, sizeof ap, "%s/arena/gen_%04d.jsonl", dir, k);
        elo_table *chk = elo_table_new(); /* first alone: a bad line must not leave half a file */
        if (chk && elo_load_file(chk, ap, err, sizeof err) < 0) {
            cJSON_AddItemToArray(warnings, cJSON_CreateString(err));
        } else if (chk && elo_load_file(t, ap, err, sizeof err) >= 0) {
            arena_ok[k] = true;
            G = k;
        }
        elo_table_free(chk);
    }
    int gm = highest_generation(dir, "models", ".h5"), gd = highest_generation(dir, "data", ".h5");
    G = gm > G ? gm : G;
    G = gd > G ? gd : G;

    /* metrics.jsonl: complete lines only (a line is written with one write(), but a
     * reader may still catch the end of one being appended) */
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    size_t len = 0;
    char *metrics = rundir_read_text(path, &len);
    while (metrics && len > 0 && metrics[len - 1] != '\n')
        metrics[--len] = 0;
    int ntrain = 0;
    for (char *p = metrics; p && (p = strstr(p, "\"event\":\"train\"")); p++)
        ntrain++;
    int stride = ntrain > RUN_MAX_LOSS_POINTS ? (ntrain + RUN_MAX_LOSS_POINTS - 1) / RUN_MAX_LOSS_POINTS : 1;
    /* events name their generation; rows for every generation any file or event names */
    char *save = NULL;
    int maxev = 0;
    cJSON **events = NULL;
    size_t nev = 0, capev = 0;
    for (char *line = metrics ? strtok_r(metrics, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *e = cJSON_Parse(line);
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive(e, "generation");
        if (!cJSON_IsNumber(gen) || gen->valuedouble < 0 || gen->valuedouble > RUN_MAX_GENERATIONS) {
            cJSON_Delete(e);
            continue;
        }
        if (nev == capev) {
            capev = capev ? 2 * capev : 256;
            cJSON **ne = realloc(events, capev * sizeof *events);
            if (!ne) {
                cJSON_Delete(e);
                break;
            }
            events = ne;
        }
        events[nev++] = e;
        maxev = gen->valueint > maxev ? gen->valueint : maxev;
    }
    free(metrics);
    G = maxev > G ? maxev : G;
    gen_row *rows = calloc((size_t)G + 1, sizeof *rows);
    cJSON *losses = cJSON_CreateArray();
    int seen_train = 0;
    for (size_t i = 0; rows && i < nev; i++) {
        cJSON *e = events[i];
        int gen = cJSON_GetObjectItemCaseSensitive(e, "generation")->valueint;
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "event");
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(e, "run_seconds");
        gen_row *r = &rows[gen];
        if (cJSON_IsNumber(rs) && rs->valuedouble > r->seconds)
            r->seconds = rs->valuedouble;
        if (!cJSON_IsString(ev))
            continue;
        cJSON **slot = NULL;
        /* with MPI ranks one selfplay event per rank, then selfplay_total (the last) */
        if (!strcmp(ev->valuestring, "selfplay") || !strcmp(ev->valuestring, "selfplay_total"))
            slot = &r->selfplay;
        else if (!strcmp(ev->valuestring, "validation"))
            slot = &r->validation;
        else if (!strcmp(ev->valuestring, "arena"))
            slot = &r->arena;
        else if (!strcmp(ev->valuestring, "train")) {
            slot = &r->train;
            const cJSON *step = cJSON_GetObjectItemCaseSensitive(e, "step");
            if (cJSON_IsNumber(step) && step->valueint > r->trained_steps)
                r->trained_steps = step->valueint;
            if (seen_train++ % stride == 0) {
                cJSON *pt = cJSON_CreateObject();
                static const char *const keep[] = {"generation", "step", "policy", "value", "total", "lr"};
                for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
                    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, keep[k]);
                    if (cJSON_IsNumber(v))
                        cJSON_AddNumberToObject(pt, keep[k], v->valuedouble);
                }
                cJSON_AddItemToArray(losses, pt);
            }
        }
        if (slot) {
            cJSON_Delete(*slot);
            *slot = cJSON_Duplicate(e, 1); /* a resumed stage logs again: the last one counts */
        }
    }
    for (size_t i = 0; i < nev; i++)
        cJSON_Delete(events[i]);
    free(events);

    /* Elo from the valid arena files */
    int np = 0;
    elo_rating *rt = NULL;
    if (t && (np = elo_players(t)) >= 2 && (rt = calloc((size_t)np, sizeof *rt))) {
        elo_opts eo = elo_default_opts();
        if (elo_compute(t, &eo, rt, err, sizeof err) < 0) {
            cJSON_AddItemToArray(warnings, cJSON_CreateString(err));
            free(rt);
            rt = NULL;
        }
    }
    cJSON *ratings = cJSON_AddArrayToObject(o, "ratings");
    for (int i = 0; rt && i < np; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", rt[i].name);
        cJSON_AddNumberToObject(r, "elo", round(rt[i].elo * 10) / 10);
        cJSON_AddNumberToObject(r, "lo", round(rt[i].lo * 10) / 10);
        cJSON_AddNumberToObject(r, "hi", round(rt[i].hi * 10) / 10);
        cJSON_AddNumberToObject(r, "games", rt[i].games);
        cJSON_AddNumberToObject(r, "score", round(rt[i].score * 1e4) / 1e4);
        cJSON_AddBoolToObject(r, "anchor", rt[i].anchor);
        cJSON_AddItemToArray(ratings, r);
    }

    /* one row per generation; promotions replayed from the arena files */
    cJSON *gens = cJSON_AddArrayToObject(o, "generations");
    int best = 0, newest_arena = 0;
    for (int k = 0; rows && k <= G; k++) {
        gen_row *r = &rows[k];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddNumberToObject(row, "generation", k);
        cJSON_AddBoolToObject(row, "data", k > 0 && rd_selfplay_done(dir, k));
        cJSON_AddBoolToObject(row, "model", exists(dir, "models/gen_%04d.h5", k));
        bool arena = k > 0 && k <= ga && arena_ok && arena_ok[k];
        cJSON_AddBoolToObject(row, "arena_done", arena);
        if (arena) {
            double score;
            int n;
            bool promoted = rundir_promotes(dir, rc.arena.gate, k, best, &score, &n);
            cJSON_AddNumberToObject(row, "vs_best", best);
            cJSON_AddNumberToObject(row, "score_vs_best", round(score * 1e4) / 1e4);
            cJSON_AddNumberToObject(row, "games_vs_best", n);
            cJSON_AddBoolToObject(row, "promoted", promoted);
            if (promoted)
                best = k;
            newest_arena = k;
        }
        char name[32];
        snprintf(name, sizeof name, "gen_%04d", k);
        for (int i = 0; rt && i < np; i++)
            if (!strcmp(rt[i].name, name)) {
                cJSON_AddNumberToObject(row, "elo", round(rt[i].elo * 10) / 10);
                cJSON_AddNumberToObject(row, "lo", round(rt[i].lo * 10) / 10);
                cJSON_AddNumberToObject(row, "hi", round(rt[i].hi * 10) / 10);
            }
        cJSON_AddNumberToObject(row, "seconds", round(r->seconds * 10) / 10);
        if (r->selfplay)
            cJSON_AddItemToObject(row, "selfplay", r->selfplay);
        if (r->train) {
            cJSON_AddNumberToObject(r->train, "steps", r->trained_steps);
            cJSON_AddItemToObject(row, "train", r->train);
        }
        if (r->validation)
            cJSON_AddItemToObject(row, "validation", r->validation);
        if (r->arena)
            cJSON_AddItemToObject(row, "arena", r->arena);
        cJSON_AddItemToArray(gens, row);
    }
    cJSON_AddNumberToObject(o, "best", best);
    free(rt);
    elo_table_free(t);
    free(arena_ok);
    free(rows);
    cJSON_AddItemToObject(o, "losses", losses);

    /* the newest arena file's games, for replays */
    cJSON *games = cJSON_AddArrayToObject(o, "games");
    if (newest_arena) {
        char ap[WEB_PATH_LEN + 32];
        snprintf(ap, sizeof ap, "%s/arena/gen_%04d.jsonl", dir, newest_arena);
        cJSON_AddNumberToObject(o, "games_generation", newest_arena);
        char *gt = rundir_read_text(ap, NULL);
        int n = 0;
        char *sv = NULL;
        for (char *line = gt ? strtok_r(gt, "\n", &sv) : NULL; line && n < RUN_MAX_GAMES;
             line = strtok_r(NULL, "\n", &sv)) {
            cJSON *gobj = cJSON_Parse(line);
            cJSON *g2 = cJSON_CreateObject();
            static const char *const keep[] = {"players", "result", "moves", "opening", "index"};
            for (size_t k = 0; gobj && k < sizeof keep / sizeof keep[0]; k++) {
                cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(gobj, keep[k]);
                if (v)
                    cJSON_AddItemToObject(g2, keep[k], v);
            }
            cJSON_Delete(gobj);
            cJSON_AddItemToArray(games, g2);
            n++;
        }
        free(gt);
    }
    cJSON_AddItemToObject(o, "warnings", warnings);
    return o;
}

web_reply web_run_summary(web_server *s)
{
    if (!s->o.run_dir)
        return web_error(404, "no run directory: start gridzero serve with --run RUN_DIR");
    pthread_mutex_lock(&s->run_lock);
    double now = player_clock();
    if (!s->run_cache || now - s->run_cache_time > 0.5) {
        free(s->run_cache);
        cJSON *o = build(s);
        s->run_cache = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        s->run_cache_time = now;
    }
    web_reply r = {200, s->run_cache ? strdup(s->run_cache) : NULL};
    pthread_mutex_unlock(&s->run_lock);
    if (!r.body)
        return web_error(500, "out of memory");
    return r;
}
