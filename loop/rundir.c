/* rundir.c — reading a run directory (see rundir.h). */
#include "rundir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/arena.h"
#include "engine/game.h"
#include "engine/parse.h"

void rundir_path(char *out, size_t len, const char *dir, const char *fmt, int gen)
{
    char rel[RUNDIR_PATH_LEN];
    snprintf(rel, sizeof rel, fmt, gen);
    snprintf(out, len, "%s/%s", dir, rel);
}

bool rundir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *rundir_read_text(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = 0;
    if (len_out)
        *len_out = buf ? len : 0;
    return buf;
}

int rundir_load_json(const char *path, cJSON **o, char *err, size_t errlen)
{
    char *text = rundir_read_text(path, NULL);
    *o = NULL;
    if (!text) {
        if (errno == ENOENT)
            return 0;
        if (err)
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    *o = cJSON_Parse(text);
    free(text);
    return 1;
}

cJSON *rundir_read_json(const char *dir, const char *name)
{
    char path[RUNDIR_PATH_LEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cJSON *o;
    rundir_load_json(path, &o, NULL, 0);
    return o;
}

int rundir_read_state(const char *dir, int *gen, char *stage, size_t len)
{
    char path[RUNDIR_PATH_LEN];
    snprintf(path, sizeof path, "%s/state.json", dir);
    if (!rundir_exists(path))
        return 0;
    cJSON *o = rundir_read_json(dir, "state.json");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "generation");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stage");
    int rc = cJSON_IsNumber(g) && cJSON_IsString(st) ? 1 : -1;
    if (rc == 1) {
        *gen = g->valueint;
        snprintf(stage, len, "%s", st->valuestring);
    }
    cJSON_Delete(o);
    return rc;
}

int rundir_read_best(const char *dir, char *rel, size_t len, int *gen)
{
    char p[RUNDIR_PATH_LEN];
    snprintf(p, sizeof p, "%s/best", dir);
    char *text = rundir_read_text(p, NULL);
    if (!text)
        return rundir_exists(p) ? -1 : 0;
    long long g = -1;
    char check[64] = "";
    const char *end;
    bool swa = !strncmp(text, "models/swa_", 11);
    if ((swa || !strncmp(text, "models/gen_", 11)) &&
        parse_ll_prefix(text + 11, &end, 0, 999999999, &g) == 0 && !strncmp(end, ".h5", 3))
        snprintf(check, sizeof check, swa ? "models/swa_%04lld.h5" : "models/gen_%04lld.h5", g);
    bool ok = check[0] && !strncmp(text, check, strlen(check));
    free(text);
    if (!ok)
        return -1;
    snprintf(rel, len, "%s", check);
    if (gen)
        *gen = g;
    return 1;
}

int rundir_best_score(const char *dir, int gen, int best_gen, double *score)
{
    char path[RUNDIR_PATH_LEN], cname[32], bname[32];
    snprintf(path, sizeof path, "%s/arena/gen_%04d.jsonl", dir, gen);
    snprintf(cname, sizeof cname, "gen_%04d", gen);
    snprintf(bname, sizeof bname, "gen_%04d", best_gen);
    *score = 0;
    char *text = rundir_read_text(path, NULL);
    if (!text)
        return 0;
    int games = 0, twice = 0, three = 0;
    double sum = 0, pairs = 0, places = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(o, "players");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
        int n = cJSON_GetArraySize(pl), ncand = 0, nbest = 0;
        bool cand[GAME_MAX_PLAYERS] = {false};
        for (int k = 0; k < n && k < GAME_MAX_PLAYERS; k++) {
            const cJSON *nm = cJSON_GetArrayItem(pl, k);
            if (cJSON_IsString(nm) && !strcmp(nm->valuestring, cname))
                cand[k] = true, ncand++;
            else if (cJSON_IsString(nm) && !strcmp(nm->valuestring, bname))
                nbest++;
        }
        if (ncand > 0 && nbest > 0 && ncand + nbest == n && n <= GAME_MAX_PLAYERS &&
            cJSON_GetArraySize(res) == n) {
            double z[GAME_MAX_PLAYERS];
            for (int k = 0; k < n; k++)
                z[k] = cJSON_GetNumberValue(cJSON_GetArrayItem(res, k));
            /* every (candidate seat, best seat) pair: a place above, level or below */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (cand[i] && !cand[j]) {
                        sum += z[i] > z[j] ? 1.0 : z[i] == z[j] ? 0.5 : 0.0;
                        pairs++;
                    }
            /* the rule of files from before the balanced seats: the lone candidate's
             * first place a win, last a loss, else a draw */
            for (int i = 0; i < n && ncand == 1; i++)
                if (cand[i]) {
                    float zf[GAME_MAX_PLAYERS];
                    for (int k = 0; k < n; k++)
                        zf[k] = (float)z[k];
                    int cls = arena_outcome_class(n, zf, i);
                    places += cls > 0 ? 1.0 : cls == 0 ? 0.5 : 0.0;
                }
            twice += ncand > 1;
            three += n == 3;
            games++;
        }
        cJSON_Delete(o);
    }
    free(text);
    /* three players and never the candidate twice: a file written before the balanced
     * seats, whose promotions were decided by places; a resumed run replays them alike */
    if (three == games && twice == 0)
        *score = games ? places / games : 0;
    else
        *score = pairs > 0 ? sum / pairs : 0;
    return games;
}

bool rundir_promotes(const char *dir, double gate, int gen, int best_gen, double *score,
                     int *games)
{
    double s = 0;
    int n = rundir_best_score(dir, gen, best_gen, &s);
    if (score)
        *score = s;
    if (games)
        *games = n;
    return gate <= 0 || (n > 0 && s >= gate);
}
