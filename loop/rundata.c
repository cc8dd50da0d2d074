/* rundata.c — a run directory's sample files (see rundata.h). */
#include "rundata.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "rundir.h"
#include "engine/game.h"
#include "selfplay/selfplay.h"

/* The file name's stem of generation gen's board `side` (0: the full board):
 * "gen_NNNN" or "gen_NNNN.sSS". */
static void board_stem(char *out, size_t len, int gen, int side)
{
    if (side)
        snprintf(out, len, "gen_%04d.s%02d", gen, side);
    else
        snprintf(out, len, "gen_%04d", gen);
}

void rd_single_path_sized(char *out, const char *dir, int gen, int side)
{
    char stem[32];
    board_stem(stem, sizeof stem, gen, side);
    snprintf(out, RD_PATH, "%s/data/%s.h5", dir, stem);
}

void rd_shard_path_sized(char *out, const char *dir, int gen, int side, int shard)
{
    char stem[32];
    board_stem(stem, sizeof stem, gen, side);
    snprintf(out, RD_PATH, "%s/data/%s.r%d.h5", dir, stem, shard);
}

void rd_part_path_sized(char *out, const char *dir, int gen, int side, int part)
{
    char stem[32];
    board_stem(stem, sizeof stem, gen, side);
    snprintf(out, RD_PATH, "%s/data/%s.p%03d.h5", dir, stem, part);
}

void rd_plan_path_sized(char *out, const char *dir, int gen, int side)
{
    char stem[32];
    board_stem(stem, sizeof stem, gen, side);
    snprintf(out, RD_PATH, "%s/data/%s.plan.json", dir, stem);
}

void rd_single_path(char *out, const char *dir, int gen) { rd_single_path_sized(out, dir, gen, 0); }

void rd_shard_path(char *out, const char *dir, int gen, int shard)
{
    rd_shard_path_sized(out, dir, gen, 0, shard);
}

void rd_part_path(char *out, const char *dir, int gen, int part)
{
    rd_part_path_sized(out, dir, gen, 0, part);
}

int rd_parts(const char *dir, int gen) { return rd_parts_sized(dir, gen, 0); }

int rd_parts_sized(const char *dir, int gen, int side)
{
    char ddir[RD_PATH], stem[32], prefix[40];
    snprintf(ddir, sizeof ddir, "%s/data", dir);
    board_stem(stem, sizeof stem, gen, side);
    int n = snprintf(prefix, sizeof prefix, "%s.p", stem);
    DIR *d = opendir(ddir);
    if (!d)
        return 0;
    int parts = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        /* gen_NNNN.pK.h5, K digits only (not a .tmp) */
        const char *q = de->d_name + n;
        if (strncmp(de->d_name, prefix, (size_t)n) != 0 || *q < '0' || *q > '9')
            continue;
        long k = strtol(q, (char **)&q, 10);
        if (strcmp(q, ".h5") == 0 && k >= 0 && k < 1000000 && k + 1 > parts)
            parts = (int)k + 1;
    }
    closedir(d);
    return parts;
}

void rd_plan_path(char *out, const char *dir, int gen) { rd_plan_path_sized(out, dir, gen, 0); }

void rd_follower_path(char *out, const char *dir, int gen, const char *tag)
{
    char t[128];
    size_t n = 0;
    for (const char *c = tag; *c && n < sizeof t - 1; c++)
        t[n++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
                     ? *c : '-';
    t[n] = 0;
    snprintf(out, RD_PATH, "%s/data/gen_%04d.f%s.h5", dir, gen, n ? t : "-");
}

int rd_plan_games(const rd_plan *p, int shard)
{
    long long G = p->games, K = p->shards;
    return (int)(G * (shard + 1) / K - G * shard / K);
}

int rd_plan_read(const char *dir, int gen, rd_plan *p, char *err, size_t errlen)
{
    return rd_plan_read_sized(dir, gen, 0, p, err, errlen);
}

int rd_plan_read_sized(const char *dir, int gen, int side, rd_plan *p, char *err, size_t errlen)
{
    char path[RD_PATH];
    rd_plan_path_sized(path, dir, gen, side);
    cJSON *o;
    int have = rundir_load_json(path, &o, err, errlen);
    if (have <= 0)
        return have;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "shards");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "games");
    int ok = cJSON_IsNumber(k) && cJSON_IsNumber(g) && k->valuedouble >= 1 &&
             k->valuedouble <= 1000000 && g->valuedouble >= 0 && g->valuedouble <= 1e9 &&
             k->valuedouble == (int)k->valuedouble && g->valuedouble == (int)g->valuedouble;
    if (ok) {
        p->shards = k->valueint;
        p->games = g->valueint;
    }
    cJSON_Delete(o);
    if (!ok) {
        snprintf(err, errlen, "%s: not a self-play plan (expected {\"shards\": K >= 1, \"games\": "
                 "G >= 0}); it was changed by hand: restore it or remove the generation's data "
                 "files", path);
        return -1;
    }
    return 1;
}

int rd_write_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[RD_PATH + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int rd_plan_write(const char *dir, int gen, const rd_plan *p, char *err, size_t errlen)
{
    return rd_plan_write_sized(dir, gen, 0, p, err, errlen);
}

int rd_plan_write_sized(const char *dir, int gen, int side, const rd_plan *p, char *err,
                        size_t errlen)
{
    char path[RD_PATH], text[128];
    rd_plan_path_sized(path, dir, gen, side);
    snprintf(text, sizeof text, "{\"shards\": %d, \"games\": %d}\n", p->shards, p->games);
    return rd_write_atomic(path, text, err, errlen);
}

bool rd_selfplay_done(const char *dir, int gen) { return rd_board_done(dir, gen, 0); }

bool rd_board_done(const char *dir, int gen, int side)
{
    char path[RD_PATH], why[256];
    rd_single_path_sized(path, dir, gen, side);
    if (rundir_exists(path))
        return true;
    rd_plan p;
    if (rd_plan_read_sized(dir, gen, side, &p, why, sizeof why) != 1)
        return false;
    for (int s = 0; s < p.shards; s++) {
        rd_shard_path_sized(path, dir, gen, side, s);
        if (!rundir_exists(path))
            return false;
    }
    return true;
}

static int push(rd_files *f, const char *path, bool follower)
{
    char **np = realloc(f->path, sizeof *np * (size_t)(f->n + 1));
    if (!np)
        return -1;
    f->path = np;
    bool *nf = realloc(f->follower, sizeof *nf * (size_t)(f->n + 1));
    if (!nf)
        return -1;
    f->follower = nf;
    if (!(f->path[f->n] = strdup(path)))
        return -1;
    f->follower[f->n++] = follower;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rd_files_free(rd_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
    free(f->follower);
    memset(f, 0, sizeof *f);
}

/* Adds board `side`'s files of generation gen to out: a one-process generation's parts,
 * then its last file (one file's order), then the shards of its plan. Returns 0, 1 when
 * out of memory, -1 with a message (an unreadable plan). */
static int list_board(const char *dir, int gen, int side, rd_files *out, char *err, size_t errlen)
{
    char path[RD_PATH];
    int oom = 0;
    for (int k = 0, np = rd_parts_sized(dir, gen, side); k < np && !oom; k++) {
        rd_part_path_sized(path, dir, gen, side, k);
        if (rundir_exists(path))
            oom |= push(out, path, false);
    }
    rd_single_path_sized(path, dir, gen, side);
    if (!oom && rundir_exists(path))
        oom |= push(out, path, false);
    rd_plan p;
    int pr = rd_plan_read_sized(dir, gen, side, &p, err, errlen);
    if (pr < 0)
        return -1;
    for (int s = 0; pr == 1 && s < p.shards && !oom; s++) {
        rd_shard_path_sized(path, dir, gen, side, s);
        if (rundir_exists(path))
            oom |= push(out, path, false);
    }
    return oom ? 1 : 0;
}

/* The smaller boards' sides with files of generation gen (gen_NNNN.sSS.*), increasing,
 * into has[side] (GAME_MAX_SIDE + 1 entries). */
static void sides_present(DIR *d, int gen, bool *has)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "gen_%04d.s", gen);
    struct dirent *de;
    rewinddir(d);
    while ((de = readdir(d))) {
        const char *q = de->d_name + n;
        if (strncmp(de->d_name, prefix, (size_t)n) != 0 || q[0] < '0' || q[0] > '9' || q[1] < '0' ||
            q[1] > '9' || q[2] != '.')
            continue;
        int side = (q[0] - '0') * 10 + (q[1] - '0');
        if (side >= 1 && side <= GAME_MAX_SIDE)
            has[side] = true;
    }
    rewinddir(d);
}

int rd_list(const char *dir, int gen, rd_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[RD_PATH];
    int oom = 0, rc = list_board(dir, gen, 0, out, err, errlen);
    if (rc < 0) {
        rd_files_free(out);
        return -1;
    }
    oom |= rc;
    /* followers: gen_NNNN.f*.h5 */
    char ddir[RD_PATH], prefix[64];
    snprintf(ddir, sizeof ddir, "%s/data", dir);
    snprintf(prefix, sizeof prefix, "gen_%04d.f", gen);
    DIR *d = opendir(ddir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot list: %s", ddir, strerror(errno));
        rd_files_free(out);
        return -1;
    }
    /* the smaller boards (selfplay.sizes), increasing, each as the full board */
    bool has[GAME_MAX_SIDE + 1] = {false};
    sides_present(d, gen, has);
    for (int side = 1; side <= GAME_MAX_SIDE && !oom; side++) {
        if (!has[side] || (rc = list_board(dir, gen, side, out, err, errlen)) == 0)
            continue;
        if (rc < 0) {
            closedir(d);
            rd_files_free(out);
            return -1;
        }
        oom = 1;
    }
    char **names = NULL;
    int nn = 0;
    size_t pl = strlen(prefix);
    struct dirent *de;
    while (!oom && (de = readdir(d))) {
        size_t L = strlen(de->d_name);
        if (L <= pl + 3 || strncmp(de->d_name, prefix, pl) != 0 || strcmp(de->d_name + L - 3, ".h5"))
            continue;
        char **nb = realloc(names, sizeof *nb * (size_t)(nn + 1));
        if (!nb || !(nb[nn] = strdup(de->d_name))) {
            names = nb ? nb : names;
            oom = 1;
            break;
        }
        names = nb;
        nn++;
    }
    closedir(d);
    if (nn > 1)
        qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int i = 0; i < nn; i++) {
        if (!oom) {
            snprintf(path, sizeof path, "%s/%s", ddir, names[i]);
            oom |= push(out, path, true);
        }
        free(names[i]);
    }
    free(names);
    if (oom) {
        snprintf(err, errlen, "out of memory listing generation %d's sample files", gen);
        rd_files_free(out);
        return -1;
    }
    return 0;
}

double rd_resign_threshold(const char *dir, int gen, int window, double target, int min_records)
{
    sp_resign_check *all = NULL;
    int n = 0;
    for (int k = gen - window; k < gen; k++) {
        rd_files fl;
        char why[512];
        if (k < 1 || rd_list(dir, k, &fl, why, sizeof why) < 0)
            continue;
        for (int i = 0; i < fl.n; i++) {
            sp_resign_check *c;
            int m;
            if (sp_read_resign_checks(fl.path[i], &c, &m, why, sizeof why) < 0 || m == 0)
                continue;
            sp_resign_check *grown = realloc(all, sizeof *all * (size_t)(n + m));
            if (grown) {
                all = grown;
                memcpy(all + n, c, sizeof *c * (size_t)m);
                n += m;
            }
            free(c);
        }
        rd_files_free(&fl);
    }
    double t = sp_resign_calibrate(all, n, target, min_records, 0.0);
    free(all);
    return t;
}

void rd_sizes_split(const cfg_selfplay *sp, int games, double used, rd_sizes *out)
{
    memset(out, 0, sizeof *out);
    if (sp->nsizes <= 0 || games < 2)
        return;
    used = used < 0 ? 0 : used > 1 ? 1 : used;
    double f = sp->sizes_fraction + (sp->sizes_fraction_end - sp->sizes_fraction) * used;
    long small = lround(f * games);
    small = small < 0 ? 0 : small > games - 1 ? games - 1 : small;
    out->n = sp->nsizes;
    for (int i = 0; i < sp->nsizes; i++) {
        out->side[i] = sp->sizes[i];
        out->games[i] = (int)(small * (i + 1) / sp->nsizes - small * i / sp->nsizes);
    }
}

int rd_sp_simulations(const cfg_selfplay *sp, int sims, double used)
{
    if (sp->simulations_end <= 0)
        return sims;
    used = used < 0 ? 0 : used > 1 ? 1 : used;
    long n = lround(sims + (double)(sp->simulations_end - sims) * used);
    return n < 1 ? 1 : (int)n; /* both ends are at most 10^7 (engine/config.c) */
}

int rd_sizes_small_games(const rd_sizes *s)
{
    int k = 0;
    for (int i = 0; i < s->n; i++)
        k += s->games[i];
    return k;
}

static void sizes_path(char *out, const char *dir, int gen)
{
    snprintf(out, RD_PATH, "%s/data/gen_%04d.sizes.json", dir, gen);
}

int rd_sizes_read(const char *dir, int gen, rd_sizes *s, char *err, size_t errlen)
{
    char path[RD_PATH];
    sizes_path(path, dir, gen);
    memset(s, 0, sizeof *s);
    cJSON *o;
    int have = rundir_load_json(path, &o, err, errlen);
    if (have <= 0)
        return have;
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "sizes");
    const cJSON *gm = cJSON_GetObjectItemCaseSensitive(o, "games");
    int n = cJSON_IsArray(sz) ? cJSON_GetArraySize(sz) : -1;
    bool ok = n >= 0 && n <= CFG_LIST_MAX && cJSON_IsArray(gm) && cJSON_GetArraySize(gm) == n;
    for (int i = 0; ok && i < n; i++) {
        const cJSON *a = cJSON_GetArrayItem(sz, i), *b = cJSON_GetArrayItem(gm, i);
        ok = cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble >= 1 &&
             a->valuedouble <= GAME_MAX_SIDE && a->valuedouble == (int)a->valuedouble &&
             b->valuedouble >= 0 && b->valuedouble <= 1e9 && b->valuedouble == (int)b->valuedouble;
        if (ok)
            s->side[i] = a->valueint, s->games[i] = b->valueint;
    }
    cJSON_Delete(o);
    if (!ok) {
        snprintf(err, errlen, "%s: not a split of the games between board sizes (expected "
                 "{\"sizes\": [S, ...], \"games\": [G, ...]}); it was changed by hand: restore it "
                 "or remove the generation's data files", path);
        memset(s, 0, sizeof *s);
        return -1;
    }
    s->n = n;
    return 1;
}

int rd_sizes_write(const char *dir, int gen, const rd_sizes *s, char *err, size_t errlen)
{
    char path[RD_PATH], text[512];
    sizes_path(path, dir, gen);
    size_t k = (size_t)snprintf(text, sizeof text, "{\"sizes\": [");
    for (int i = 0; i < s->n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%d", i ? ", " : "", s->side[i]);
    k += (size_t)snprintf(text + k, sizeof text - k, "], \"games\": [");
    for (int i = 0; i < s->n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%d", i ? ", " : "", s->games[i]);
    snprintf(text + k, sizeof text - k, "]}\n");
    return rd_write_atomic(path, text, err, errlen);
}

static void sims_path(char *out, const char *dir, int gen)
{
    snprintf(out, RD_PATH, "%s/data/gen_%04d.simulations.json", dir, gen);
}

int rd_sims_read(const char *dir, int gen, int *sims, char *err, size_t errlen)
{
    char path[RD_PATH];
    sims_path(path, dir, gen);
    *sims = 0;
    cJSON *o;
    int have = rundir_load_json(path, &o, err, errlen);
    if (have <= 0)
        return have;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "simulations");
    bool ok = cJSON_IsNumber(n) && n->valuedouble >= 1 && n->valuedouble <= CFG_SIMULATIONS_MAX &&
              n->valuedouble == (int)n->valuedouble;
    if (ok)
        *sims = n->valueint;
    cJSON_Delete(o);
    if (!ok) {
        snprintf(err, errlen, "%s: not a generation's self-play simulations (expected "
                 "{\"simulations\": N}, 1 <= N <= %d); it was changed by hand: restore it or "
                 "remove the generation's data files", path, CFG_SIMULATIONS_MAX);
        return -1;
    }
    return 1;
}

int rd_sims_latest(const char *dir, int gen, int fallback, int *sims, char *err, size_t errlen)
{
    for (int g = gen; g >= 1; g--) {
        int have = rd_sims_read(dir, g, sims, err, errlen);
        if (have != 0)
            return have < 0 ? -1 : 0;
    }
    *sims = fallback;
    return 0;
}

int rd_sims_write(const char *dir, int gen, int sims, char *err, size_t errlen)
{
    char path[RD_PATH], text[64];
    sims_path(path, dir, gen);
    snprintf(text, sizeof text, "{\"simulations\": %d}\n", sims);
    return rd_write_atomic(path, text, err, errlen);
}
