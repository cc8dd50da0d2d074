/* solo.c — the score tables and the promotion rule of one-player arenas (see solo.h). */
#include "solo.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct solo_row *row_of(solo_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->rows[i].name, name))
            return &t->rows[i];
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        struct solo_row *nr = realloc(t->rows, sizeof *nr * (size_t)cap);
        if (!nr)
            return NULL;
        t->rows = nr;
        t->cap = cap;
    }
    struct solo_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

static int row_add(struct solo_row *r, double score, int tile)
{
    if (r->games == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        double *s = realloc(r->scores, sizeof *s * (size_t)cap);
        if (!s)
            return -1;
        r->scores = s;
        int *ti = realloc(r->tiles, sizeof *ti * (size_t)cap);
        if (!ti)
            return -1;
        r->tiles = ti;
        r->cap = cap;
    }
    r->scores[r->games] = score;
    r->tiles[r->games] = tile;
    r->games++;
    return 0;
}

int solo_table_add_text(solo_table *t, const char *text)
{
    const char *p = text;
    int rc = 0;
    while (p && *p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        cJSON *o = cJSON_ParseWithLength(p, n);
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(o, "players");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "score");
        const cJSON *tile = cJSON_GetObjectItemCaseSensitive(o, "tile");
        if (cJSON_GetArraySize(pl) == 1 && cJSON_GetArraySize(sc) == 1 &&
            cJSON_IsString(cJSON_GetArrayItem(pl, 0)) && cJSON_IsNumber(cJSON_GetArrayItem(sc, 0))) {
            int k = -1;
            if (cJSON_IsNumber(tile) && tile->valuedouble >= 1)
                k = (int)lround(log2(tile->valuedouble));
            struct solo_row *r = row_of(t, cJSON_GetArrayItem(pl, 0)->valuestring);
            rc = r ? row_add(r, cJSON_GetArrayItem(sc, 0)->valuedouble, k) : -1;
        }
        cJSON_Delete(o);
        p = nl ? nl + 1 : NULL;
    }
    return rc;
}

int solo_table_add_file(solo_table *t, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len + 4097 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                rc = -1;
                break;
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, 4096, f);
        len += n;
        if (n < 4096)
            break;
    }
    fclose(f);
    if (rc == 0 && buf) {
        buf[len] = 0;
        rc = solo_table_add_text(t, buf);
    }
    free(buf);
    return rc;
}

const struct solo_row *solo_table_find(const solo_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->rows[i].name, name))
            return &t->rows[i];
    return NULL;
}

void solo_table_free(solo_table *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->rows[i].scores);
        free(t->rows[i].tiles);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

void solo_row_summary(const struct solo_row *r, arena_solo_summary *out)
{
    arena_solo_summarise(r->scores, r->tiles, r->games, 0.0, 0, out);
}

bool solo_promote(const arena_solo_summary *cand, const arena_solo_summary *best, double gate,
                  double *diff, double *half)
{
    *diff = cand->mean - best->mean;
    double se2 = 0;
    if (cand->games > 0)
        se2 += cand->sd * cand->sd / cand->games;
    if (best->games > 0)
        se2 += best->sd * best->sd / best->games;
    *half = 1.96 * sqrt(se2);
    if (gate <= 0)
        return true;
    if (cand->games == 0)
        return false;
    return *diff > 0 && *diff >= gate * *half;
}

char *solo_table_csv(const solo_table *t, cJSON *event)
{
    int top = -1;
    arena_solo_summary *m = calloc((size_t)(t->n ? t->n : 1), sizeof *m);
    if (!m)
        return NULL;
    for (int i = 0; i < t->n; i++) {
        solo_row_summary(&t->rows[i], &m[i]);
        top = m[i].best_tile > top ? m[i].best_tile : top;
    }
    int first = 3; /* the 8 tile: smaller ones every game reaches */
    size_t cap = 256 + (size_t)(t->n + 1) * (size_t)(200 + 16 * (top > 0 ? top : 1)), off = 0;
    char *csv = malloc(cap);
    if (!csv) {
        free(m);
        return NULL;
    }
    /* mean, lo, hi second to fourth, where the Elo table has elo, lo, hi: the plots read both */
    off += (size_t)snprintf(csv + off, cap - off, "name,mean,lo,hi,games,median,sd,max_tile");
    for (int k = first; k <= top && k < 53; k++)
        off += (size_t)snprintf(csv + off, cap - off, ",reached_%llu", (unsigned long long)1 << k);
    off += (size_t)snprintf(csv + off, cap - off, "\n");
    cJSON *arr = event ? cJSON_AddArrayToObject(event, "scores") : NULL;
    for (int i = 0; i < t->n; i++) {
        const arena_solo_summary *s = &m[i];
        unsigned long long mt = s->best_tile >= 0 && s->best_tile < 53 ? 1ull << s->best_tile : 0;
        off += (size_t)snprintf(csv + off, cap - off, "%s,%.1f,%.1f,%.1f,%d,%.1f,%.1f,%llu", t->rows[i].name,
                                s->mean, s->lo, s->hi, s->games, s->median, s->sd, mt);
        for (int k = first; k <= top && k < 53; k++)
            off += (size_t)snprintf(csv + off, cap - off, ",%.3f", s->reached[k]);
        off += (size_t)snprintf(csv + off, cap - off, "\n");
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", t->rows[i].name);
            cJSON_AddNumberToObject(o, "games", s->games);
            cJSON_AddNumberToObject(o, "mean", round(s->mean * 10) / 10);
            cJSON_AddNumberToObject(o, "lo", round(s->lo * 10) / 10);
            cJSON_AddNumberToObject(o, "hi", round(s->hi * 10) / 10);
            cJSON_AddNumberToObject(o, "median", s->median);
            cJSON_AddNumberToObject(o, "max_tile", (double)mt);
            cJSON *rch = cJSON_AddObjectToObject(o, "reached");
            for (int k = first; k <= top && k < 53; k++) {
                char key[24];
                snprintf(key, sizeof key, "%llu", 1ull << k);
                cJSON_AddNumberToObject(rch, key, round(s->reached[k] * 1000) / 1000);
            }
            cJSON_AddItemToArray(arr, o);
        }
    }
    free(m);
    return csv;
}
