#include "elo.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errmsg.h"

struct elo_table {
    int n, cap;        /* players, capacity of the matrices */
    char **names;      /* (cap) owned */
    int *games;        /* (cap) games per player */
    double *pairs;     /* (cap, cap) pairwise results between i and j (symmetric) */
    double *score;     /* (cap, cap) score of i against j */
    int ngames;
};

elo_opts elo_default_opts(void)
{
    return (elo_opts){.prior_draws = 1.0, .prior_sigma = 2000.0, .anchor = NULL};
}

elo_table *elo_table_new(void) { return calloc(1, sizeof(elo_table)); }

void elo_table_free(elo_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->games);
    free(t->pairs);
    free(t->score);
    free(t);
}

int elo_players(const elo_table *t) { return t->n; }
int elo_games(const elo_table *t) { return t->ngames; }

static int grow(elo_table *t)
{
    int cap = t->cap ? 2 * t->cap : 8;
    char **names = realloc(t->names, sizeof(char *) * (size_t)cap);
    if (!names)
        return -1;
    t->names = names;
    int *games = realloc(t->games, sizeof(int) * (size_t)cap);
    if (!games)
        return -1;
    t->games = games;
    double *pairs = calloc((size_t)cap * (size_t)cap, sizeof(double));
    double *score = calloc((size_t)cap * (size_t)cap, sizeof(double));
    if (!pairs || !score) {
        free(pairs);
        free(score);
        return -1;
    }
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->n; j++) {
            pairs[i * cap + j] = t->pairs[i * t->cap + j];
            score[i * cap + j] = t->score[i * t->cap + j];
        }
    free(t->pairs);
    free(t->score);
    t->pairs = pairs;
    t->score = score;
    t->cap = cap;
    return 0;
}

static int find_or_add(elo_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->names[i], name))
            return i;
    if (t->n == t->cap && grow(t) < 0)
        return -1;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    t->names[t->n] = copy;
    t->games[t->n] = 0;
    return t->n++;
}

int elo_add_game(elo_table *t, int n, const char *const *names, const float *z, char *err,
                 size_t errlen)
{
    if (n < 2 || n > 3) {
        snprintf(err, errlen, "a game needs 2 or 3 players, not %d", n);
        return -1;
    }
    /* outcomes are in [-1, 1] (arena's result); two players' are win/draw/loss, summing to
     * 0; at least two different players (in three-player games a name may take two seats) */
    for (int i = 0; i < n; i++)
        if (!(z[i] >= -1.0f && z[i] <= 1.0f)) {
            snprintf(err, errlen, "result %g of player %d: outcomes lie in [-1, 1]", (double)z[i], i + 1);
            return -1;
        }
    if (n == 2 && fabsf(z[0] + z[1]) > 1e-6f) {
        snprintf(err, errlen, "result [%g, %g]: a two-player game's outcomes sum to 0 (win, draw or loss)",
                 (double)z[0], (double)z[1]);
        return -1;
    }
    bool distinct = false;
    for (int i = 1; i < n; i++)
        distinct |= strcmp(names[i], names[0]) != 0;
    if (!distinct) {
        snprintf(err, errlen, "player \"%s\" against itself: nothing to rate", names[0]);
        return -1;
    }
    int idx[3];
    for (int i = 0; i < n; i++) {
        idx[i] = find_or_add(t, names[i]);
        if (idx[i] < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= idx[j] == idx[i];
        if (!seen)
            t->games[idx[i]]++;
        for (int j = 0; j < n; j++) {
            if (idx[i] == idx[j])
                continue; /* a player against itself (two "random" seats) tells nothing */
            double s = z[i] > z[j] ? 1.0 : z[i] < z[j] ? 0.0 : 0.5;
            t->pairs[idx[i] * t->cap + idx[j]] += 1.0;
            t->score[idx[i] * t->cap + idx[j]] += s;
        }
    }
    t->ngames++;
    return 0;
}

int elo_load_file(elo_table *t, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, added = 0, rc = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue;
        cJSON *o = cJSON_Parse(line);
        const cJSON *pl = o ? cJSON_GetObjectItemCaseSensitive(o, "players") : NULL;
        const cJSON *res = o ? cJSON_GetObjectItemCaseSensitive(o, "result") : NULL;
        int n = cJSON_IsArray(pl) ? cJSON_GetArraySize(pl) : -1;
        if (!o || !cJSON_IsArray(pl) || !cJSON_IsArray(res) || n != cJSON_GetArraySize(res) ||
            n < 2 || n > 3) {
            snprintf(err, errlen, "%s:%d: expected a JSON object with \"players\" (2 or 3 names) "
                     "and \"result\" (one number per player)", path, lineno);
            cJSON_Delete(o);
            rc = -1;
            break;
        }
        const char *names[3];
        float z[3];
        for (int i = 0; i < n && rc == 0; i++) {
            const cJSON *nm = cJSON_GetArrayItem(pl, i), *v = cJSON_GetArrayItem(res, i);
            if (!cJSON_IsString(nm) || !cJSON_IsNumber(v)) {
                snprintf(err, errlen, "%s:%d: players must be strings and result numbers", path,
                         lineno);
                rc = -1;
            } else {
                names[i] = nm->valuestring;
                z[i] = (float)v->valuedouble;
            }
        }
        if (rc == 0) {
            char msg[256];
            if (elo_add_game(t, n, names, z, msg, sizeof msg) < 0) {
                snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
                rc = -1;
            } else {
                added++;
            }
        }
        cJSON_Delete(o);
        if (rc)
            break;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc < 0 ? -1 : added;
}

/* Cholesky solve of the m x m positive-definite system a x = b in place (a is
 * overwritten by its factor, b by x). Returns -1 when a is not positive definite. */
static int cholesky(double *a, int m)
{
    for (int j = 0; j < m; j++) {
        double d = a[j * m + j];
        for (int k = 0; k < j; k++)
            d -= a[j * m + k] * a[j * m + k];
        if (!(d > 0))
            return -1;
        d = sqrt(d);
        a[j * m + j] = d;
        for (int i = j + 1; i < m; i++) {
            double s = a[i * m + j];
            for (int k = 0; k < j; k++)
                s -= a[i * m + k] * a[j * m + k];
            a[i * m + j] = s / d;
        }
    }
    return 0;
}

static void cholesky_solve(const double *l, int m, double *b)
{
    for (int i = 0; i < m; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= l[i * m + k] * b[k];
        b[i] = s / l[i * m + i];
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < m; k++)
            s -= l[k * m + i] * b[k];
        b[i] = s / l[i * m + i];
    }
}

/* Gradient and negative Hessian of the log-posterior in the free ratings. free_of[i] is
 * i's index among the free ratings or -1 for the anchor. */
static void derivatives(const elo_table *t, const elo_opts *o, const double *r,
                        const int *free_of, int m, double *grad, double *neg_h)
{
    const double c = log(10.0) / 400.0, prec = 1.0 / (o->prior_sigma * o->prior_sigma);
    memset(grad, 0, sizeof(double) * (size_t)m);
    memset(neg_h, 0, sizeof(double) * (size_t)m * (size_t)m);
    for (int i = 0; i < t->n; i++) {
        int fi = free_of[i];
        if (fi < 0)
            continue;
        grad[fi] -= r[i] * prec;
        neg_h[fi * m + fi] += prec;
        for (int j = 0; j < t->n; j++) {
            double n = t->pairs[i * t->cap + j];
            if (j == i || n <= 0)
                continue;
            double s = t->score[i * t->cap + j] + 0.5 * o->prior_draws;
            n += o->prior_draws;
            double p = 1.0 / (1.0 + exp(-c * (r[i] - r[j])));
            grad[fi] += c * (s - n * p);
            double w = c * c * n * p * (1.0 - p);
            neg_h[fi * m + fi] += w;
            int fj = free_of[j];
            if (fj >= 0)
                neg_h[fi * m + fj] -= w;
        }
    }
}

int elo_compute(const elo_table *t, const elo_opts *opts, elo_rating *out, char *err,
                size_t errlen)
{
    elo_opts o = opts ? *opts : elo_default_opts();
    if (t->n == 0 || t->ngames == 0) {
        snprintf(err, errlen, "no games to rate");
        return -1;
    }
    if (!(o.prior_sigma > 0) || o.prior_draws < 0) {
        snprintf(err, errlen, "prior_sigma must be > 0 and prior_draws >= 0");
        return -1;
    }
    int anchor = -1;
    if (o.anchor) {
        for (int i = 0; i < t->n; i++)
            if (!strcmp(t->names[i], o.anchor))
                anchor = i;
        if (anchor < 0) {
            snprintf(err, errlen, "anchor \"%s\" played no game", o.anchor);
            return -1;
        }
    } else {
        anchor = 0;
        for (int i = 0; i < t->n; i++)
            if (!strcmp(t->names[i], "random"))
                anchor = i;
    }
    int n = t->n, m = n - 1;
    double *r = calloc((size_t)n, sizeof(double));
    int *free_of = malloc(sizeof(int) * (size_t)n);
    double *grad = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    double *h = malloc(sizeof(double) * (size_t)(m > 0 ? m * m : 1));
    int rc = 0;
    if (!r || !free_of || !grad || !h) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        goto done;
    }
    for (int i = 0, k = 0; i < n; i++)
        free_of[i] = i == anchor ? -1 : k++;
    bool converged = m == 0;
    for (int it = 0; it < 500 && !converged; it++) {
        derivatives(t, &o, r, free_of, m, grad, h);
        if (cholesky(h, m) < 0) {
            snprintf(err, errlen, "the information matrix is singular (internal error)");
            rc = -1;
            goto done;
        }
        cholesky_solve(h, m, grad); /* grad now holds the Newton step */
        double biggest = 0;
        for (int k = 0; k < m; k++)
            if (fabs(grad[k]) > biggest)
                biggest = fabs(grad[k]);
        /* Damped: far from the optimum a full Newton step can overshoot. */
        double scale = biggest > 200 ? 200 / biggest : 1.0;
        for (int i = 0; i < n; i++)
            if (free_of[i] >= 0)
                r[i] += scale * grad[free_of[i]];
        converged = biggest < 1e-7;
    }
    if (!converged) {
        snprintf(err, errlen, "the ratings did not converge");
        rc = -1;
        goto done;
    }
    /* Standard errors: diagonal of the inverse negative Hessian at the optimum. */
    if (m > 0) {
        derivatives(t, &o, r, free_of, m, grad, h);
        if (cholesky(h, m) < 0) {
            snprintf(err, errlen, "the information matrix is singular (internal error)");
            rc = -1;
            goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        elo_rating *e = &out[i];
        e->name = t->names[i];
        e->elo = r[i] - r[anchor];
        e->anchor = i == anchor;
        e->se = 0;
        if (free_of[i] >= 0) {
            memset(grad, 0, sizeof(double) * (size_t)m);
            grad[free_of[i]] = 1.0;
            cholesky_solve(h, m, grad);
            e->se = sqrt(grad[free_of[i]] > 0 ? grad[free_of[i]] : 0);
        }
        e->lo = e->elo - 1.96 * e->se;
        e->hi = e->elo + 1.96 * e->se;
        e->games = t->games[i];
        double s = 0, pairs = 0;
        for (int j = 0; j < n; j++) {
            s += t->score[i * t->cap + j];
            pairs += t->pairs[i * t->cap + j];
        }
        e->score = pairs > 0 ? s / pairs : 0.5;
    }
done:
    free(r);
    free(free_of);
    free(grad);
    free(h);
    return rc;
}

/* ---- SPRT ------------------------------------------------------------------------- */

static double expected_score(double elo)
{
    return 1.0 / (1.0 + pow(10.0, -elo / 400.0));
}

double elo_sprt_llr(const elo_sprt *s, int wins, int draws, int losses)
{
    double n = (double)wins + draws + losses;
    if (n <= 0)
        return 0;
    double m = (wins + 0.5 * draws) / n;
    double v = (wins + 0.25 * draws) / n - m * m;
    double s0 = expected_score(s->elo0), s1 = expected_score(s->elo1);
    /* Early on the observed variance is unreliable (a 4-0 start has none at all), so it
     * is shrunk towards a drawless game's variance between the hypotheses with the
     * weight of 8 games: a one-sided start cannot end the test after a few games, and
     * after a few dozen the data decide alone. */
    double sm = 0.5 * (s0 + s1), k = 8.0;
    v = (n * v + k * sm * (1.0 - sm)) / (n + k);
    return n * (s1 - s0) * (2.0 * m - s0 - s1) / (2.0 * v);
}

int elo_sprt_decide(const elo_sprt *s, int wins, int draws, int losses, double *llr)
{
    double l = elo_sprt_llr(s, wins, draws, losses);
    if (llr)
        *llr = l;
    if (l >= log((1.0 - s->beta) / s->alpha))
        return 1;
    if (l <= log(s->beta / (1.0 - s->alpha)))
        return -1;
    return 0;
}

int elo_sprt_parse(elo_sprt *s, const char *text, char *err, size_t errlen)
{
    char *end;
    double a = strtod(text, &end);
    if (end == text || *end != ',')
        return gz_fail(err, errlen, "--sprt \"%s\": expected ELO0,ELO1 (e.g. 0,50)", text);
    const char *p = end + 1;
    double b = strtod(p, &end);
    if (end == p || *end || !isfinite(a) || !isfinite(b) || !(a < b) || fabs(a) > 2000 || fabs(b) > 2000)
        return gz_fail(err, errlen, "--sprt \"%s\": expected ELO0,ELO1 with ELO0 < ELO1 (e.g. 0,50)", text);
    s->elo0 = a;
    s->elo1 = b;
    if (!(s->alpha > 0 && s->alpha < 0.5))
        s->alpha = 0.05;
    if (!(s->beta > 0 && s->beta < 0.5))
        s->beta = 0.05;
    return 0;
}
