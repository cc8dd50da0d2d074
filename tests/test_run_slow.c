/* gridzero run, the long checks (suite 'slow'):
 * - learning: the tic-tac-toe acceptance of issue 6 — the built-in default config run to
 *   the end, then its best model with 50 simulations never loses to `perfect` over 40
 *   games with one random opening move (two random moves can hand a lost position to
 *   either side), and the ladder ends above the random-init generation 0;
 * - the simulated crash points test_run.c leaves out, and kill -9 at more moments. */
#include <math.h>

#include "run_util.h"

START_TEST(learns_tictactoe)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/tictactoe", dir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = gz_run_base(rd, 0, NULL, NULL, NULL, 0, out, sizeof out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    fprintf(stderr, "learns_tictactoe: the default run took %.0f s\n", secs);
    char *best = slurp_rel(rd, "best");
    best[strcspn(best, "\n")] = 0;
    char *ratings = slurp_rel(rd, "ratings.csv");
    fprintf(stderr, "learns_tictactoe: best %s; ratings.csv:\n%s", best, ratings);

    /* the acceptance match */
    const char *bin = getenv("GZ_BIN");
    ck_assert_ptr_nonnull(bin);
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "'%s' arena 'model:%s/%s:50' perfect --games 40 --set arena.opening_moves=1 --json "
             "--results '%s/acceptance.jsonl' 2>/dev/null",
             bin, rd, best, rd);
    FILE *pp = popen(cmd, "r");
    ck_assert_ptr_nonnull(pp);
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof line, pp))
        if (line[0] == '{')
            snprintf(last, sizeof last, "%s", line);
    ck_assert_int_eq(pclose(pp), 0);
    fprintf(stderr, "learns_tictactoe: %s", last);
    cJSON *o = cJSON_Parse(last);
    ck_assert_msg(o != NULL, "no JSON summary from: %s", cmd);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "games")), 40);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "players"), 0);
    ck_assert_ptr_nonnull(m);
    int losses = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "losses"));
    int wins = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "wins"));
    int draws = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "draws"));
    ck_assert_int_eq(wins + draws + losses, 40);
    if (losses > 0) {
        /* keep the run for a look, and show the lost games */
        snprintf(cmd, sizeof cmd,
                 "rm -rf /tmp/gz_test_run_slow_kept && cp -r '%s' /tmp/gz_test_run_slow_kept && "
                 "grep -v '\"result\": *\\[0, *0\\]' '%s/acceptance.jsonl' >&2",
                 rd, rd);
        fprintf(stderr, "learns_tictactoe: the run is kept in /tmp/gz_test_run_slow_kept; games "
                "not drawn:\n");
        fflush(stderr);
        ck_assert_int_ge(system(cmd), 0);
    }
    ck_assert_msg(losses == 0, "%s lost %d of 40 games to perfect: %s", best, losses, last);
    cJSON_Delete(o);

    /* the ladder: the best model rated above the random-init gen_0000 */
    double e0 = NAN, eb = NAN;
    const char *slash = strrchr(best, '/');
    char bname[64];
    snprintf(bname, sizeof bname, "\n%.*s,", 8, slash ? slash + 1 : best);
    const char *r0 = strstr(ratings, "\ngen_0000,"), *rb = strstr(ratings, bname);
    ck_assert(r0 && rb);
    e0 = atof(r0 + 10);
    eb = atof(rb + strlen(bname));
    ck_assert_msg(eb > e0, "best %s rated %.1f, not above gen_0000's %.1f", best, eb, e0);
    ck_assert_int_eq(count_tmp(rd), 0);
    ck_assert(exists(pathf(p, sizeof p, rd, "state.json")));
    free(best);
    free(ratings);
}
END_TEST

START_TEST(resume_after_crash_more)
{
    char ref[300], out[16384];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    int rc = gz_run(ref, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const int points[] = {RUN_CRASH_1_PROMOTE, RUN_CRASH_2_SELFPLAY, RUN_CRASH_2_TRAIN,
                          RUN_CRASH_2_ARENA};
    for (size_t i = 0; i < sizeof points / sizeof *points; i++)
        crash_and_resume(ref, points[i]);
    const int kill_ms[] = {700, 2000, 3000};
    for (size_t i = 0; i < sizeof kill_ms / sizeof *kill_ms; i++)
        kill_and_resume(ref, kill_ms[i], 3);
}
END_TEST

static Suite *run_slow_suite(void)
{
    Suite *s = suite_create("run_slow");
    TCase *tc = tcase_create("slow");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, learns_tictactoe);
    tcase_add_test(tc, resume_after_crash_more);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(run_slow_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
