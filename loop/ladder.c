/* ladder.c — after each generation's arena: the promotions (replayed from the arena
 * files, so `best` never disagrees with them; loop/rundir.h's rule, or the mean scores
 * of one-player games) and the ladder: arena.jsonl (every arena game so far) and
 * ratings.csv (maximum-likelihood Elo with random = 0, or loop/solo.h's score table). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loop_impl.h"
#include "rundata.h"
#include "solo.h"
#include "engine/elo.h"

/* One-player games: the scores of gen_k's own games (gen_0000's are in generation 1's
 * file). */
static void solo_scores_of(const run_ctx *r, int k, arena_solo_summary *s)
{
    char path[PATH_LEN], name[32];
    join(path, r, "arena/gen_%04d.jsonl", k > 0 ? k : 1);
    snprintf(name, sizeof name, "gen_%04d", k);
    solo_table t = {0};
    memset(s, 0, sizeof *s);
    if (solo_table_add_file(&t, path) == 0) {
        const struct solo_row *row = solo_table_find(&t, name);
        if (row)
            solo_row_summary(row, s);
    }
    solo_table_free(&t);
}

/* Replays the promotions of generations 1..upto from the arena files into r->best. */
void run_replay_promotions(run_ctx *r, int upto, bool log)
{
    r->best_gen = 0;
    snprintf(r->best, sizeof r->best, "models/gen_0000.h5");
    for (int k = 1; k <= upto && r->solo; k++) {
        /* mean scores on the same numbered games; the gate asks the difference to be
         * gate x its 95% interval's half-width (solo.h) */
        arena_solo_summary cs, bs;
        solo_scores_of(r, k, &cs);
        solo_scores_of(r, r->best_gen, &bs);
        double diff, half;
        bool promote = solo_promote(&cs, &bs, r->c.arena.gate, &diff, &half);
        if (log && k == upto) {
            cJSON *m = run_event("promote", k);
            cJSON_AddNumberToObject(m, "mean", cs.mean);
            cJSON_AddNumberToObject(m, "best_mean", bs.mean);
            cJSON_AddNumberToObject(m, "difference", diff);
            cJSON_AddNumberToObject(m, "difference_95", half);
            cJSON_AddNumberToObject(m, "games", cs.games);
            cJSON_AddBoolToObject(m, "promoted", promote);
            run_metric(r, m);
        }
        if (promote) {
            r->best_gen = k;
            run_played_model(r, k, r->best, sizeof r->best);
        }
    }
    for (int k = 1; k <= upto && !r->solo; k++) {
        double score = 0;
        int n = 0;
        bool promote = rundir_promotes(r->dir, r->c.arena.gate, k, r->best_gen, &score, &n);
        if (log && k == upto) {
            cJSON *m = run_event("promote", k);
            cJSON_AddNumberToObject(m, "score_vs_best", score);
            cJSON_AddNumberToObject(m, "games_vs_best", n);
            cJSON_AddBoolToObject(m, "promoted", promote);
            run_metric(r, m);
        }
        if (promote) {
            r->best_gen = k;
            run_played_model(r, k, r->best, sizeof r->best);
        }
    }
}

int run_write_ladder(run_ctx *r, int upto, char *err, size_t errlen)
{
    size_t cap = 1 << 16, len = 0;
    char *all = malloc(cap);
    if (!all) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    all[0] = 0;
    for (int k = 1; k <= upto; k++) {
        char p[PATH_LEN];
        join(p, r, "arena/gen_%04d.jsonl", k);
        char *t = rundir_read_text(p, NULL);
        if (!t)
            continue;
        size_t n = strlen(t);
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap)
                cap *= 2;
            char *na = realloc(all, cap);
            if (!na) {
                free(t);
                free(all);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            all = na;
        }
        memcpy(all + len, t, n + 1);
        len += n;
        free(t);
    }
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/arena.jsonl", r->dir);
    int rc = rd_write_atomic(path, all, err, errlen);
    if (rc < 0 || r->solo) {
        /* one-player: the score table instead of Elo */
        solo_table st = {0};
        char *csv = NULL;
        cJSON *m = rc < 0 ? NULL : run_event("scores", upto);
        if (rc == 0 && (solo_table_add_text(&st, all) < 0 || !(csv = solo_table_csv(&st, m)))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        free(all);
        if (rc == 0) {
            run_metric(r, m);
            m = NULL;
            snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
            rc = rd_write_atomic(path, csv, err, errlen);
            char cname[32];
            snprintf(cname, sizeof cname, "gen_%04d", upto);
            const struct solo_row *row = solo_table_find(&st, cname);
            if (row) {
                arena_solo_summary s;
                solo_row_summary(row, &s);
                fprintf(stderr, "gen %d: mean score %.0f [%.0f, %.0f], median %.0f; best is gen_%04d\n",
                        upto, s.mean, s.lo, s.hi, s.median, r->best_gen);
            }
        }
        cJSON_Delete(m);
        free(csv);
        solo_table_free(&st);
        return rc < 0 ? -1 : 0;
    }
    free(all);

    elo_table *t = elo_table_new();
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* from the per-generation files, so that an error names the file at fault, not
     * arena.jsonl, which is made from them */
    for (int k = 1; k <= upto; k++) {
        char p[PATH_LEN];
        join(p, r, "arena/gen_%04d.jsonl", k);
        if (rundir_exists(p) && elo_load_file(t, p, err, errlen) < 0) {
            elo_table_free(t);
            return -1;
        }
    }
    int np = elo_players(t);
    if (np < 2) {
        elo_table_free(t);
        return 0;
    }
    elo_rating *rt = calloc((size_t)np, sizeof *rt);
    elo_opts eo = elo_default_opts();
    if (!rt || elo_compute(t, &eo, rt, err, errlen) < 0) {
        free(rt);
        elo_table_free(t);
        return -1;
    }
    size_t cl = 128 + (size_t)np * 160;
    char *csv = malloc(cl);
    size_t off = (size_t)snprintf(csv, cl, "name,elo,lo,hi,games,score\n");
    cJSON *m = run_event("elo", upto);
    cJSON *arr = cJSON_AddArrayToObject(m, "ratings");
    for (int i = 0; i < np; i++) {
        off += (size_t)snprintf(csv + off, cl - off, "%s,%.1f,%.1f,%.1f,%d,%.4f\n", rt[i].name,
                                rt[i].elo, rt[i].lo, rt[i].hi, rt[i].games, rt[i].score);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", rt[i].name);
        cJSON_AddNumberToObject(o, "elo", round(rt[i].elo * 10) / 10);
        cJSON_AddNumberToObject(o, "lo", round(rt[i].lo * 10) / 10);
        cJSON_AddNumberToObject(o, "hi", round(rt[i].hi * 10) / 10);
        cJSON_AddItemToArray(arr, o);
    }
    run_metric(r, m);
    snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
    rc = rd_write_atomic(path, csv, err, errlen);
    /* the summary: this generation's rating */
    char cname[32];
    snprintf(cname, sizeof cname, "gen_%04d", upto);
    for (int i = 0; i < np; i++)
        if (!strcmp(rt[i].name, cname))
            fprintf(stderr, "gen %d: Elo %.0f [%.0f, %.0f] (random = 0); best is gen_%04d\n", upto,
                    rt[i].elo, rt[i].lo, rt[i].hi, r->best_gen);
    free(csv);
    free(rt);
    elo_table_free(t);
    return rc;
}
