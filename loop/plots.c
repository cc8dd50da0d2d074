/* plots.c — the run's plots, with gnuplot when it is installed: elo.png (the models'
 * ratings by generation), elo_time.png (the same against the run's clock and the
 * self-play games so far) and loss.png (the training losses), from ratings.csv and
 * metrics.jsonl, through the tables elo.tsv, elo_time.tsv and loss.tsv. */
#include <stdlib.h>
#include <string.h>

#include "loop_impl.h"
#include "rundata.h"

/* Plots with gnuplot when it is installed: elo.png from ratings.csv, elo_time.png (the
 * same ratings against the run's clock and the self-play games so far), loss.png from
 * the train events of metrics.jsonl. */
void run_write_plots(run_ctx *r)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        static int said;
        if (!said++)
            fprintf(stderr, "run: gnuplot is not installed: skipping elo.png and loss.png\n");
        return;
    }
    char path[PATH_LEN], tsv[PATH_LEN], err[256];
    snprintf(path, sizeof path, "%s/metrics.jsonl", r->dir);
    char *text = rundir_read_text(path, NULL);
    if (!text)
        return;
    size_t cap = strlen(text) + 64, off = 0;
    char *rows = malloc(cap);
    /* per generation (the last event of each, as a resumed stage logs again): the
     * steps it trained, the run's clock when it was rated, its self-play games */
    int G = r->c.loop.generations;
    double *steps_of = calloc((size_t)G + 2, sizeof(double));
    double *time_of = calloc((size_t)G + 2, sizeof(double));
    double *games_of = calloc((size_t)G + 2, sizeof(double));
    if (!rows || !steps_of || !time_of || !games_of) {
        free(text), free(rows), free(steps_of), free(time_of), free(games_of);
        return;
    }
    rows[0] = 0;
    char *copy = strdup(text);
    for (char *line = copy ? strtok(copy, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        int gen = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
        if (cJSON_IsString(ev) && gen >= 1 && gen <= G) {
            if (!strcmp(ev->valuestring, "train") && cJSON_HasObjectItem(o, "kind")) {
                /* net.kind ntuple: the learning games are the self-play */
                games_of[gen] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "games"));
            } else if (!strcmp(ev->valuestring, "train")) {
                double st = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "step"));
                steps_of[gen] = st > steps_of[gen] ? st : steps_of[gen];
            } else if (!strcmp(ev->valuestring, "elo") || !strcmp(ev->valuestring, "scores")) {
                time_of[gen] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "run_seconds"));
            } else if (!strcmp(ev->valuestring, "selfplay") ||
                       !strcmp(ev->valuestring, "selfplay_total")) {
                /* with ranks: one selfplay event per rank, then the total (the last) */
                games_of[gen] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "games"));
            }
        }
        cJSON_Delete(o);
    }
    free(copy);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "train") && cJSON_HasObjectItem(o, "step")) {
            double gen = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
            double step = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "step"));
            int gi = (int)gen;
            double steps = gi >= 1 && gi <= G && steps_of[gi] > 0 ? steps_of[gi] : r->c.train.steps;
            off += (size_t)snprintf(rows + off, cap - off, "%.3f %g %g %g\n",
                                    gen - 1 + step / steps,
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "policy")),
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "value")),
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "total")));
        }
        cJSON_Delete(o);
        if (off + 128 > cap)
            break;
    }
    free(text);
    snprintf(tsv, sizeof tsv, "%s/loss.tsv", r->dir);
    rd_write_atomic(tsv, rows, err, sizeof err);
    bool have_losses = rows[0] != 0;
    free(rows);
    /* elo.tsv: the models' ratings by generation; the baselines become level lines. */
    snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
    char *csv = rundir_read_text(path, NULL);
    char elo_rows[8192] = "", lines[2048] = "";
    size_t eo = 0, lo = 0;
    if (csv) {
        for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
            char name[64];
            double elo, low, high;
            if (sscanf(line, "%63[^,],%lf,%lf,%lf", name, &elo, &low, &high) != 4)
                continue;
            int gen;
            if (sscanf(name, "gen_%d", &gen) == 1) {
                if (eo < sizeof elo_rows - 80)
                    eo += (size_t)snprintf(elo_rows + eo, sizeof elo_rows - eo, "%d %.1f %.1f %.1f\n",
                                           gen, elo, low, high);
            } else if (lo < sizeof lines - 120 && !strpbrk(name, "'\"\\")) {
                lo += (size_t)snprintf(lines + lo, sizeof lines - lo, ", %.1f w l dt 2 t '%s'", elo, name);
            }
        }
        free(csv);
    }
    snprintf(tsv, sizeof tsv, "%s/elo.tsv", r->dir);
    /* sorted by generation (ratings.csv lists players in the order they were first seen) */
    char sorted[8192] = "";
    size_t so = 0;
    for (int want = 0; want <= r->c.loop.generations && so < sizeof sorted - 80; want++) {
        for (char *q = elo_rows; *q;) {
            char *nl = strchr(q, '\n');
            int gen;
            if (sscanf(q, "%d", &gen) == 1 && gen == want) {
                so += (size_t)snprintf(sorted + so, sizeof sorted - so, "%.*s\n", (int)(nl - q), q);
            }
            q = nl ? nl + 1 : q + strlen(q);
        }
    }
    rd_write_atomic(tsv, sorted, err, sizeof err);
    /* elo_time.tsv: generation, hours of the run's clock, self-play games so far, Elo,
     * interval: the ladder against compute, not only against generations */
    char timed[12288] = "";
    size_t to = 0;
    double games = 0;
    int next = 1;
    for (char *q = sorted; *q && to < sizeof timed - 120;) {
        char *nl = strchr(q, '\n');
        int gen;
        double elo, low, high;
        if (sscanf(q, "%d %lf %lf %lf", &gen, &elo, &low, &high) == 4 && gen <= G) {
            for (; next <= gen; next++)
                games += games_of[next];
            to += (size_t)snprintf(timed + to, sizeof timed - to, "%d %.4f %.0f %.1f %.1f %.1f\n", gen,
                                   time_of[gen] / 3600.0, games, elo, low, high);
        }
        q = nl ? nl + 1 : q + strlen(q);
    }
    free(steps_of), free(time_of), free(games_of);
    snprintf(tsv, sizeof tsv, "%s/elo_time.tsv", r->dir);
    rd_write_atomic(tsv, timed, err, sizeof err);
    if (strchr(r->dir, '\'')) {
        fprintf(stderr, "run: the run directory's name has a quote: plots skipped\n");
        return;
    }
    char cmd[4 * PATH_LEN + 8192];
    /* one-player games: the same plots of the mean scores (ratings.csv has mean, lo, hi
     * where the Elo table has elo, lo, hi) */
    const char *yl = r->solo ? "mean score" : "Elo (random = 0)";
    int n = snprintf(cmd, sizeof cmd, "cd '%s'", r->dir);
    /* the loss plot once there are losses (none in net.kind ntuple runs) */
    if (have_losses && n > 0 && (size_t)n < sizeof cmd)
        n += snprintf(cmd + n, sizeof cmd - (size_t)n,
             " && gnuplot -e \"set terminal png size 800,500; set output 'loss.png.tmp';"
             " set xlabel 'generation'; set ylabel 'loss'; set key top right;"
             " plot 'loss.tsv' u 1:2 w l t 'policy CE', '' u 1:3 w l t 'value MSE', '' u 1:4 w l t 'total'\""
             " >/dev/null 2>&1 && mv loss.png.tmp loss.png");
    /* the rating plots once there are ratings (none with arena.games 0) */
    if (*sorted && n > 0 && (size_t)n < sizeof cmd)
        snprintf(cmd + n, sizeof cmd - (size_t)n,
             " && gnuplot -e \"set terminal png size 800,500; set output 'elo.png.tmp';"
             " set xlabel 'generation'; set ylabel '%s'; set key outside right;"
             " plot 'elo.tsv' u 1:2:3:4 w yerrorlines t 'models'%s\" >/dev/null 2>&1 && mv elo.png.tmp elo.png &&"
             " gnuplot -e \"set terminal png size 1000,450; set output 'elo_time.png.tmp';"
             " set multiplot layout 1,2; set ylabel '%s'; set key top left;"
             " set xlabel 'hours (run clock)'; plot 'elo_time.tsv' u 2:4:5:6 w yerrorlines t 'models'%s;"
             " set xlabel 'self-play games'; plot 'elo_time.tsv' u 3:4:5:6 w yerrorlines t 'models'%s;"
             " unset multiplot\" >/dev/null 2>&1 && mv elo_time.png.tmp elo_time.png",
             yl, lines, yl, lines, lines);
    if (system(cmd) != 0)
        fprintf(stderr, "run: gnuplot failed; plots not updated\n");
}
