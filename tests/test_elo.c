/* Elo: maximum likelihood on synthetic games from known ratings, intervals, anchoring,
 * all-win records, three-player games as pairwise results, and results files. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/elo.h"
#include "engine/rng.h"

#define NP 5
static const char *names[NP] = {"alpha", "random", "beta", "gamma", "delta"};
static const double truth[NP] = {150, 0, 400, -200, 650}; /* "random" is the anchor */

/* Games between random pairs drawn from the Bradley-Terry model with draws: a draw
 * with probability t = min(p, 1-p) / 2, so the expected score stays p. */
static elo_table *synthetic(int games, uint64_t seed)
{
    elo_table *t = elo_table_new();
    rng r;
    rng_seed(&r, seed);
    char err[128];
    for (int k = 0; k < games; k++) {
        int i = (int)rng_below(&r, NP), j = (int)rng_below(&r, NP - 1);
        if (j >= i)
            j++;
        double p = 1.0 / (1.0 + pow(10.0, (truth[j] - truth[i]) / 400.0));
        double draw = fmin(p, 1 - p) / 2, u = rng_uniform(&r);
        float z[2];
        if (u < p - draw / 2) {
            z[0] = 1, z[1] = -1;
        } else if (u < p + draw / 2) {
            z[0] = z[1] = 0;
        } else {
            z[0] = -1, z[1] = 1;
        }
        const char *pair[2] = {names[i], names[j]};
        ck_assert_int_eq(elo_add_game(t, 2, pair, z, err, sizeof err), 0);
    }
    return t;
}

static const elo_rating *find(const elo_rating *r, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].name, name))
            return &r[i];
    ck_abort_msg("no rating for %s", name);
    return NULL;
}

START_TEST(mle_reproduces_known_ratings)
{
    elo_table *t = synthetic(8000, 12345);
    ck_assert_int_eq(elo_players(t), NP);
    ck_assert_int_eq(elo_games(t), 8000);
    elo_rating r[NP];
    char err[256];
    ck_assert_msg(elo_compute(t, NULL, r, err, sizeof err) == 0, "%s", err);
    const elo_rating *anchor = find(r, NP, "random");
    ck_assert(anchor->anchor);
    ck_assert_double_eq_tol(anchor->elo, 0.0, 1e-9);
    ck_assert_double_eq_tol(anchor->se, 0.0, 1e-9);
    for (int i = 0; i < NP; i++) {
        const elo_rating *e = find(r, NP, names[i]);
        ck_assert_msg(fabs(e->elo - truth[i]) < 40, "%s: %.1f, truth %.0f", names[i], e->elo,
                      truth[i]);
        if (i != 1) {
            /* About 3200 games each: the standard error is some 10-20 Elo. */
            ck_assert_msg(e->se > 5 && e->se < 30, "%s: se %.1f", names[i], e->se);
            ck_assert_msg(e->lo <= truth[i] && truth[i] <= e->hi, "%s: [%.1f, %.1f] misses %.0f",
                          names[i], e->lo, e->hi, truth[i]);
            ck_assert_double_eq_tol(e->hi - e->lo, 2 * 1.96 * e->se, 1e-9);
        }
    }
    elo_table_free(t);
}
END_TEST

START_TEST(intervals_cover_truth_at_about_95_percent)
{
    /* 40 small tournaments: each rating's 95% interval should cover the truth in most of
     * them (expected 95%; a broken interval would give far fewer). */
    int covered = 0, total = 0;
    for (int rep = 0; rep < 40; rep++) {
        elo_table *t = synthetic(1500, 1000 + (uint64_t)rep);
        elo_rating r[NP];
        char err[256];
        ck_assert_msg(elo_compute(t, NULL, r, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < NP; i++) {
            if (i == 1)
                continue;
            const elo_rating *e = find(r, NP, names[i]);
            covered += e->lo <= truth[i] && truth[i] <= e->hi;
            total++;
        }
        elo_table_free(t);
    }
    double rate = (double)covered / total;
    ck_assert_msg(rate > 0.88 && rate <= 1.0, "coverage %.3f", rate);
}
END_TEST

START_TEST(anchoring)
{
    elo_table *t = synthetic(3000, 77);
    elo_rating a[NP], b[NP];
    char err[256];
    ck_assert(elo_compute(t, NULL, a, err, sizeof err) == 0);
    elo_opts o = elo_default_opts();
    o.anchor = "beta";
    ck_assert_msg(elo_compute(t, &o, b, err, sizeof err) == 0, "%s", err);
    ck_assert_double_eq_tol(find(b, NP, "beta")->elo, 0.0, 1e-9);
    ck_assert(find(b, NP, "beta")->anchor);
    /* Differences do not depend on the anchor (the wide prior moves them a hair). */
    for (int i = 0; i < NP; i++)
        ck_assert_double_eq_tol(a[i].elo - find(a, NP, "beta")->elo, b[i].elo, 1.0);
    o.anchor = "nobody";
    ck_assert(elo_compute(t, &o, b, err, sizeof err) < 0);
    ck_assert_msg(strstr(err, "nobody"), "%s", err);
    elo_table_free(t);

    /* Without random, the first player seen is the anchor. */
    t = elo_table_new();
    const char *p[2] = {"x", "y"};
    float z[2] = {-1, 1};
    for (int i = 0; i < 6; i++)
        ck_assert(elo_add_game(t, 2, p, z, err, sizeof err) == 0);
    float zd[2] = {0, 0};
    ck_assert(elo_add_game(t, 2, p, zd, err, sizeof err) == 0);
    elo_rating r[2];
    elo_opts flat = elo_default_opts();
    flat.prior_sigma = 1e6; /* only the virtual draw, for an exact expectation */
    ck_assert(elo_compute(t, &flat, r, err, sizeof err) == 0);
    ck_assert_str_eq(r[0].name, "x");
    ck_assert(r[0].anchor);
    ck_assert_double_eq_tol(r[0].elo, 0, 1e-9);
    /* y scored 6.5 of 7, +1 virtual draw: 7/8 -> 400 log10(7) = 338 */
    ck_assert_double_eq_tol(r[1].elo, 400 * log10(7.0), 2.0);
    elo_table_free(t);
}
END_TEST

START_TEST(only_wins_stays_finite)
{
    elo_table *t = elo_table_new();
    char err[256];
    const char *p[2] = {"random", "strong"};
    float z[2] = {-1, 1};
    for (int i = 0; i < 20; i++)
        ck_assert(elo_add_game(t, 2, p, z, err, sizeof err) == 0);
    elo_rating r[2];
    elo_opts flat = elo_default_opts();
    flat.prior_sigma = 1e6;
    ck_assert_msg(elo_compute(t, &flat, r, err, sizeof err) == 0, "%s", err);
    /* 20-0 plus one virtual draw: 20.5 / 21 -> 400 log10(41) = 645 Elo. */
    ck_assert_double_eq_tol(r[1].elo, 400 * log10(41.0), 0.5);
    /* The default wide N(0, 2000^2) prior pulls an uncertain rating in a little. */
    ck_assert_msg(elo_compute(t, NULL, r, err, sizeof err) == 0, "%s", err);
    ck_assert(r[1].elo < 400 * log10(41.0) && r[1].elo > 400 * log10(41.0) - 20);
    ck_assert(isfinite(r[1].se) && r[1].se > 50);
    ck_assert_double_eq_tol(r[1].score, 1.0, 1e-12);
    ck_assert_double_eq_tol(r[0].score, 0.0, 1e-12);
    elo_table_free(t);
}
END_TEST

START_TEST(three_player_games_are_pairwise_by_rank)
{
    elo_table *t = elo_table_new();
    char err[256];
    const char *p[3] = {"first", "random", "last"};
    float z[3] = {1, 0, -1};
    for (int i = 0; i < 30; i++)
        ck_assert(elo_add_game(t, 3, p, z, err, sizeof err) == 0);
    float tie[3] = {0.5f, 0.5f, -1};
    ck_assert(elo_add_game(t, 3, p, tie, err, sizeof err) == 0);
    elo_rating r[3];
    ck_assert(elo_compute(t, NULL, r, err, sizeof err) == 0);
    ck_assert_int_eq(r[0].games, 31);
    /* first: 30 + 30 + 0.5 + 1 of 62 pairwise games. */
    ck_assert_double_eq_tol(r[0].score, 61.5 / 62.0, 1e-12);
    ck_assert_double_eq_tol(r[2].score, 0.0, 1e-12);
    ck_assert(r[0].elo > 300 && r[2].elo < -300);
    ck_assert(r[1].anchor);
    /* The same name in two seats: only the pairs with the other player count. */
    const char *twice[3] = {"first", "random", "random"};
    ck_assert(elo_add_game(t, 3, twice, z, err, sizeof err) == 0);
    ck_assert(elo_compute(t, NULL, r, err, sizeof err) == 0);
    ck_assert_int_eq(r[0].games, 32);
    ck_assert_int_eq(r[1].games, 32);
    ck_assert_double_eq_tol(r[0].score, 63.5 / 64.0, 1e-12);
    ck_assert(elo_add_game(t, 1, twice, z, err, sizeof err) < 0);
    elo_table_free(t);
}
END_TEST

START_TEST(results_file)
{
    char path[] = "/tmp/gz_test_elo_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"game\":\"mnk\",\"players\":[\"a\",\"random\"],\"result\":[1,-1],\"moves\":[]}\n"
               "\n"
               "{\"players\":[\"random\",\"a\"],\"result\":[0,0]}\n"
               "{\"players\":[\"a\",\"b\",\"random\"],\"result\":[1,0,-1]}\n");
    fclose(f);
    elo_table *t = elo_table_new();
    char err[256];
    ck_assert_int_eq(elo_load_file(t, path, err, sizeof err), 3);
    ck_assert_int_eq(elo_players(t), 3);
    elo_rating r[3];
    ck_assert(elo_compute(t, NULL, r, err, sizeof err) == 0);
    ck_assert(r[1].anchor);
    elo_table_free(t);

    f = fopen(path, "a");
    fprintf(f, "{\"players\":[\"a\"],\"result\":[1]}\n");
    fclose(f);
    t = elo_table_new();
    ck_assert(elo_load_file(t, path, err, sizeof err) < 0);
    ck_assert_msg(strstr(err, path) && strstr(err, ":5:"), "%s", err);
    elo_table_free(t);

    /* impossible results are refused, naming the line: outcomes outside [-1, 1], two
     * winners of a two-player game, a player against itself */
    const char *impossible[] = {
        "{\"players\":[\"a\",\"b\"],\"result\":[1e308,-1e308]}",
        "{\"players\":[\"a\",\"b\"],\"result\":[-1,-1]}",
        "{\"players\":[\"a\",\"b\"],\"result\":[1,1]}",
        "{\"players\":[\"a\",\"b\"],\"result\":[2,-2]}",
        "{\"players\":[\"a\",\"a\"],\"result\":[1,-1]}",
        "{\"players\":[\"a\",\"b\",\"c\"],\"result\":[1,0,-7]}",
        "{\"players\":[\"a\",\"a\",\"a\"],\"result\":[1,0,-1]}",
    };
    for (size_t i = 0; i < sizeof impossible / sizeof *impossible; i++) {
        f = fopen(path, "w");
        fprintf(f, "{\"players\":[\"a\",\"b\"],\"result\":[1,-1]}\n%s\n", impossible[i]);
        fclose(f);
        t = elo_table_new();
        ck_assert_msg(elo_load_file(t, path, err, sizeof err) < 0, "accepted %s", impossible[i]);
        ck_assert_msg(strstr(err, ":2:"), "%s", err);
        elo_table_free(t);
    }
    unlink(path);

    t = elo_table_new();
    ck_assert(elo_load_file(t, "/nonexistent/results.jsonl", err, sizeof err) < 0);
    ck_assert_msg(strstr(err, "/nonexistent/results.jsonl"), "%s", err);
    elo_rating none[1];
    ck_assert(elo_compute(t, NULL, none, err, sizeof err) < 0);
    elo_table_free(t);
}
END_TEST

/* SPRT on synthetic matches: results drawn with a known Elo advantage and a 30% draw
 * rate. With H0 = 0, H1 = 100 and alpha = beta = 0.05, a true 0 must be taken for 100
 * rarely, a true 100 for 0 rarely, and the tests must stop well before a fixed-size
 * match of the same power would (about 500 games). */
static int sprt_run(const elo_sprt *s, double elo, rng *r, int *games)
{
    double e = 1.0 / (1.0 + pow(10.0, -elo / 400.0));
    double pd = 0.3, pw = e - pd / 2, pl = 1 - pw - pd;
    ck_assert(pw > 0 && pl > 0);
    int w = 0, d = 0, l = 0;
    for (int n = 1; n <= 20000; n++) {
        double u = rng_uniform(r);
        if (u < pw)
            w++;
        else if (u < pw + pd)
            d++;
        else
            l++;
        int v = elo_sprt_decide(s, w, d, l, NULL);
        if (v != 0) {
            *games = n;
            return v;
        }
    }
    *games = 20000;
    return 0;
}

START_TEST(sprt_error_rates)
{
    elo_sprt s;
    char err[128];
    s.alpha = s.beta = 0.05;
    ck_assert_msg(elo_sprt_parse(&s, "0,100", err, sizeof err) == 0, "%s", err);
    ck_assert_double_eq(s.elo0, 0);
    ck_assert_double_eq(s.elo1, 100);
    rng r;
    rng_seed(&r, 2024);
    const int T = 400;
    int false_h1 = 0, false_h0 = 0, undecided = 0;
    long games0 = 0, games1 = 0;
    for (int t = 0; t < T; t++) {
        int n;
        int v = sprt_run(&s, 0, &r, &n);
        false_h1 += v > 0;
        undecided += v == 0;
        games0 += n;
        v = sprt_run(&s, 100, &r, &n);
        false_h0 += v < 0;
        undecided += v == 0;
        games1 += n;
    }
    ck_assert_int_eq(undecided, 0);
    ck_assert_msg(false_h1 <= T * 0.08, "true 0 taken for 100 in %d of %d", false_h1, T);
    ck_assert_msg(false_h0 <= T * 0.08, "true 100 taken for 0 in %d of %d", false_h0, T);
    ck_assert_msg(games0 / T < 300 && games1 / T < 300, "mean games %ld and %ld", games0 / T, games1 / T);
    /* a 4-0 start decides nothing; the LLR grows with a winning record */
    ck_assert_int_eq(elo_sprt_decide(&s, 4, 0, 0, NULL), 0);
    ck_assert(elo_sprt_llr(&s, 40, 10, 10) > elo_sprt_llr(&s, 30, 10, 20));
    /* bad specifications */
    ck_assert_int_eq(elo_sprt_parse(&s, "50,0", err, sizeof err), -1);
    ck_assert_int_eq(elo_sprt_parse(&s, "abc", err, sizeof err), -1);
    ck_assert_int_eq(elo_sprt_parse(&s, "0,", err, sizeof err), -1);
    ck_assert(strstr(err, "ELO0,ELO1") != NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("elo");
    TCase *tc = tcase_create("elo");
    tcase_set_timeout(tc, 120); /* Check's 4 s default is too short on a loaded machine */
    tcase_add_test(tc, mle_reproduces_known_ratings);
    tcase_add_test(tc, intervals_cover_truth_at_about_95_percent);
    tcase_add_test(tc, anchoring);
    tcase_add_test(tc, only_wins_stays_finite);
    tcase_add_test(tc, three_player_games_are_pairwise_by_rank);
    tcase_add_test(tc, results_file);
    tcase_add_test(tc, sprt_error_rates);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
