/* dist.c — the loop's collectives (see dist.h). */
#include "dist.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

/* FNV-1a of a string. */
static uint64_t hash_text(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* The first key path where a and b differ ("mcts.simulations"), with both values as
 * JSON text (malloc'd). Returns 1 when found. */
static int first_diff(const cJSON *a, const cJSON *b, char *path, size_t plen, char **va, char **vb)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        size_t base = strlen(path);
        for (const cJSON *x = a->child; x; x = x->next) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            snprintf(path + base, plen - base, "%s%s", base ? "." : "", x->string);
            if (!y) {
                *va = cJSON_PrintUnformatted(x);
                *vb = strdup("(missing)");
                return 1;
            }
            if (first_diff(x, y, path, plen, va, vb))
                return 1;
        }
        for (const cJSON *y = b->child; y; y = y->next) {
            if (!cJSON_GetObjectItemCaseSensitive(a, y->string)) {
                snprintf(path + base, plen - base, "%s%s", base ? "." : "", y->string);
                *va = strdup("(missing)");
                *vb = cJSON_PrintUnformatted(y);
                return 1;
            }
        }
        path[base] = 0;
        return 0;
    }
    if (cJSON_Compare(a, b, 1))
        return 0;
    *va = cJSON_PrintUnformatted(a);
    *vb = cJSON_PrintUnformatted(b);
    return 1;
}

/* Rank 0's message on every rank. */
static void bcast_message(comm *c, char *err, size_t errlen)
{
    char *m = dist_bcast_text(c, err);
    if (!m)
        comm_abort(c, 1);
    snprintf(err, errlen, "%s", m);
    free(m);
}

int dist_check_same(comm *c, const char *what, const char *json, char *err, size_t errlen)
{
    int K = comm_size(c);
    uint64_t *h = malloc(sizeof *h * (size_t)K);
    if (!h)
        comm_abort(c, 1);
    comm_allgather_u64(c, hash_text(json), h);
    int bad = -1;
    for (int k = 1; k < K && bad < 0; k++)
        if (h[k] != h[0])
            bad = k;
    free(h);
    if (bad < 0)
        return 0;
    /* who differs and where: rank 0 compares the texts */
    char **texts = comm_gather_text(c, json, 0);
    char **hosts = comm_gather_text(c, comm_host(c), 0);
    err[0] = 0;
    if (comm_rank(c) == 0) {
        if (!texts || !hosts) {
            snprintf(err, errlen, "the %s differs between ranks 0 and %d", what, bad);
        } else {
            cJSON *a = cJSON_Parse(texts[0]), *b = cJSON_Parse(texts[bad]);
            char path[256] = "", *va = NULL, *vb = NULL;
            if (a && b && first_diff(a, b, path, sizeof path, &va, &vb))
                snprintf(err, errlen, "the %s differs between ranks: %s is %s on rank 0 (%s) and %s "
                         "on rank %d (%s); start every rank with the same arguments and files",
                         what, path, va, hosts[0], vb, bad, hosts[bad]);
            else
                snprintf(err, errlen, "the %s differs between rank 0 (%s) and rank %d (%s); start "
                         "every rank with the same arguments and files", what, hosts[0], bad, hosts[bad]);
            free(va);
            free(vb);
            cJSON_Delete(a);
            cJSON_Delete(b);
        }
    }
    comm_texts_free(c, texts);
    comm_texts_free(c, hosts);
    bcast_message(c, err, errlen);
    return -2;
}

int dist_check_dir(comm *c, const char *dir, char *err, size_t errlen)
{
    /* the token: rank 0's clock, pid and host, so no earlier check's file matches */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t token = hash_text(comm_host(c)) ^ ((uint64_t)ts.tv_sec * 1000000007ULL) ^
                     ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid();
    comm_bcast(c, &token, sizeof token, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/.ranks-%016llx", dir, (unsigned long long)token);
    int64_t wrote = 1;
    if (comm_rank(c) == 0) {
        FILE *f = fopen(path, "wb");
        wrote = f && fprintf(f, "%016llx\n", (unsigned long long)token) > 0;
        if (f && fclose(f) != 0)
            wrote = 0;
        if (!wrote)
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    }
    comm_bcast(c, &wrote, sizeof wrote, 0);
    if (!wrote) {
        bcast_message(c, err, errlen);
        return -1;
    }
    comm_wait_all(c);
    uint64_t seen = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        unsigned long long v = 0;
        seen = fscanf(f, "%llx", &v) == 1 && v == token;
        fclose(f);
    }
    int K = comm_size(c);
    uint64_t *all = malloc(sizeof *all * (size_t)K);
    if (!all)
        comm_abort(c, 1);
    comm_allgather_u64(c, seen, all);
    char **hosts = comm_gather_text(c, comm_host(c), 0);
    int blind = 0;
    for (int k = 0; k < K; k++)
        blind += !all[k];
    if (comm_rank(c) == 0) {
        unlink(path);
        if (blind) {
            size_t off = (size_t)snprintf(err, errlen, "the run directory %s is not the same "
                                          "directory on every rank: rank%s", dir, blind > 1 ? "s" : "");
            int listed = 0;
            for (int k = 0; k < K && off < errlen && listed < 8; k++)
                if (!all[k]) {
                    off += (size_t)snprintf(err + off, errlen - off, "%s %d (%s)", listed ? "," : "", k,
                                            hosts ? hosts[k] : "?");
                    listed++;
                }
            if (off < errlen)
                snprintf(err + off, errlen - off, "%s cannot see the file rank 0 (%s) wrote there; "
                         "put RUN_DIR on a filesystem every rank sees (NFS on a cluster)",
                         blind > listed ? " and more" : "", hosts ? hosts[0] : "?");
        }
    }
    comm_texts_free(c, hosts);
    free(all);
    if (!blind)
        return 0;
    bcast_message(c, err, errlen);
    return -2;
}

/* The order of statuses: failures (< 0, the lowest first), then interrupted (1) and
 * out of time (2), then success. */
static int64_t severity(int rc)
{
    return rc < 0 ? rc : rc == 0 ? 1000 : 100 + rc;
}

int dist_agree(comm *c, int rc, char *err, size_t errlen)
{
    if (comm_size(c) == 1)
        return rc;
    int64_t worst = comm_min_i64(c, severity(rc));
    if (worst == 1000)
        return 0;
    /* the lowest rank with the worst status tells */
    int64_t who = comm_min_i64(c, severity(rc) == worst ? comm_rank(c) : INT64_MAX);
    char msg[2048] = "";
    if (comm_rank(c) == who) {
        if (who == 0)
            snprintf(msg, sizeof msg, "%s", err);
        else
            snprintf(msg, sizeof msg, "rank %d (%s): %s", comm_rank(c), comm_host(c), err);
    }
    comm_bcast(c, msg, sizeof msg, (int)who);
    snprintf(err, errlen, "%s", msg);
    return worst < 0 ? (int)worst : (int)(worst - 100);
}

char *dist_bcast_text(comm *c, const char *root_text)
{
    int64_t len = comm_rank(c) == 0 ? (int64_t)strlen(root_text) : 0;
    comm_bcast(c, &len, sizeof len, 0);
    char *t = malloc((size_t)len + 1);
    if (!t)
        comm_abort(c, 1);
    if (comm_rank(c) == 0)
        memcpy(t, root_text, (size_t)len + 1);
    comm_bcast(c, t, (size_t)len + 1, 0);
    return t;
}

int dist_share(int n, int rank, int ranks, int *mine)
{
    int m = 0;
    for (int j = 0; j < n; j++)
        if (j % ranks == rank)
            mine[m++] = j;
    return m;
}

typedef struct game_line {
    int index;
    const char *text;
    size_t len;
} game_line;

static int cmp_line(const void *a, const void *b)
{
    const game_line *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

char *dist_merge_games(comm *c, const char *mine, char *err, size_t errlen)
{
    char **texts = comm_gather_text(c, mine, 0);
    if (comm_rank(c) != 0)
        return NULL;
    if (!texts) {
        snprintf(err, errlen, "out of memory gathering the arena's games");
        return NULL;
    }
    int K = comm_size(c), n = 0, cap = 64;
    size_t total = 1;
    game_line *lines = malloc(sizeof *lines * (size_t)cap);
    char *out = NULL;
    for (int k = 0; lines && k < K; k++) {
        for (char *p = texts[k]; *p;) {
            char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            if (len > 0) {
                char *copy = strndup(p, len);
                cJSON *o = copy ? cJSON_Parse(copy) : NULL;
                const cJSON *ix = cJSON_GetObjectItemCaseSensitive(o, "index");
                int ok = cJSON_IsNumber(ix);
                int index = ok ? ix->valueint : 0;
                cJSON_Delete(o);
                free(copy);
                if (!ok) {
                    snprintf(err, errlen, "rank %d's arena results hold a line that is not a game "
                             "record: %.80s", k, p);
                    goto done;
                }
                if (n == cap) {
                    game_line *nb = realloc(lines, sizeof *lines * (size_t)(cap *= 2));
                    if (!nb)
                        goto oom;
                    lines = nb;
                }
                lines[n++] = (game_line){index, p, len};
                total += len + 1;
            }
            p = nl ? nl + 1 : p + len;
        }
    }
    if (!lines)
        goto oom;
    qsort(lines, (size_t)n, sizeof *lines, cmp_line);
    out = malloc(total);
    if (!out)
        goto oom;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        memcpy(out + off, lines[i].text, lines[i].len);
        off += lines[i].len;
        out[off++] = '\n';
    }
    out[off] = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory merging the arena's games");
done:
    free(lines);
    comm_texts_free(c, texts);
    return out;
}

void dist_sum_tallies(comm *c, arena_tally *t, int n)
{
    if (comm_size(c) == 1)
        return;
    /* every field as a double: counts well below 2^53 */
    enum { G = GAME_MAX_PLAYERS, PER = 8 + 6 * GAME_MAX_PLAYERS };
    double buf[GAME_MAX_PLAYERS * PER];
    for (int i = 0; i < n; i++) {
        double *b = buf + i * PER;
        b[0] = t[i].games, b[1] = t[i].wins, b[2] = t[i].draws, b[3] = t[i].losses;
        b[4] = t[i].outcome_sum;
        b[5] = t[i].score_sum;
        b[6] = t[i].score_sq;
        b[7] = t[i].first_share;
        for (int s = 0; s < G; s++) {
            b[8 + s] = t[i].seat_games[s];
            b[8 + G + s] = t[i].seat_wins[s];
            b[8 + 2 * G + s] = t[i].seat_draws[s];
            b[8 + 3 * G + s] = t[i].seat_losses[s];
            b[8 + 4 * G + s] = t[i].above[s];
            b[8 + 5 * G + s] = t[i].level[s];
        }
    }
    comm_sum_f64(c, buf, (size_t)(n * PER));
    for (int i = 0; i < n; i++) {
        const double *b = buf + i * PER;
        t[i].games = (int)lround(b[0]), t[i].wins = (int)lround(b[1]);
        t[i].draws = (int)lround(b[2]), t[i].losses = (int)lround(b[3]);
        t[i].outcome_sum = b[4];
        t[i].score_sum = b[5];
        t[i].score_sq = b[6];
        t[i].first_share = b[7];
        for (int s = 0; s < G; s++) {
            t[i].seat_games[s] = (int)lround(b[8 + s]);
            t[i].seat_wins[s] = (int)lround(b[8 + G + s]);
            t[i].seat_draws[s] = (int)lround(b[8 + 2 * G + s]);
            t[i].seat_losses[s] = (int)lround(b[8 + 3 * G + s]);
            t[i].above[s] = (int)lround(b[8 + 4 * G + s]);
            t[i].level[s] = (int)lround(b[8 + 5 * G + s]);
        }
    }
}
