/* TD learning of the n-tuple network (train/td.c): the lambda-returns of a hand-made
 * game, the greedy move, reproducible learning with one thread, that learning raises
 * the score, and the refusal of boards other than 4x4. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "nn/ntuple.h"
#include "train/td.h"

static game *game2048(int side, gz_config *c)
{
    char err[256], json[128];
    snprintf(json, sizeof json, "{\"game\": {\"name\": \"2048\", \"rows\": %d, \"cols\": %d}}", side, side);
    ck_assert_msg(cfg_parse(c, json, "t", err, sizeof err) == 0, "%s", err);
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* Four after-states: the moves that made them scored 4, 8, 0, 16 points and they were
 * valued 10, 20, 30, 40 in play. No move follows the last one (target 0). */
START_TEST(lambda_returns_by_hand)
{
    const float gain[4] = {4, 8, 0, 16}, value[4] = {10, 20, 30, 40};
    float t[4];
    td_lambda_returns(gain, value, 4, 0.0, t); /* TD(0): next gain + next value */
    ck_assert_float_eq(t[3], 0);
    ck_assert_float_eq(t[2], 16 + 40);
    ck_assert_float_eq(t[1], 0 + 30);
    ck_assert_float_eq(t[0], 8 + 20);
    td_lambda_returns(gain, value, 4, 1.0, t); /* Monte Carlo: the points after each */
    ck_assert_float_eq(t[3], 0);
    ck_assert_float_eq(t[2], 16);
    ck_assert_float_eq(t[1], 16);
    ck_assert_float_eq(t[0], 24);
    td_lambda_returns(gain, value, 4, 0.5, t);
    ck_assert_float_eq(t[2], 16 + 0.5f * 40 + 0.5f * 0);
    ck_assert_float_eq(t[1], 0 + 0.5f * 30 + 0.5f * 36);
    ck_assert_float_eq(t[0], 8 + 0.5f * 20 + 0.5f * 33);
    td_lambda_returns(gain, value, 1, 0.5, t);
    ck_assert_float_eq(t[0], 0);
}
END_TEST

/* The greedy move: the points of the move plus the after-state's value. */
START_TEST(greedy_move)
{
    gz_config c;
    game *g = game2048(4, &c);
    char err[256];
    ntuple *n = ntuple_new(err, sizeof err);
    ck_assert_msg(n != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    /* row 0: 2 2 4 8; the rest empty: left or right scores 4, up none (no move), down 0 */
    uint8_t cells[G2048_MAX_CELLS] = {1, 1, 2, 3};
    g2048_set(g, s, cells, 0, 0);
    float gain;
    uint8_t after[16];
    ck_assert_int_eq(td_greedy_move(n, g, s, &gain, after), G2048_LEFT);
    ck_assert_float_eq(gain, 4);
    ck_assert_int_eq(after[0], 2);
    ck_assert_int_eq(after[1], 2);
    ck_assert_int_eq(after[2], 3);
    ck_assert_int_eq(after[3], 0);
    /* make down's after-state worth more than 4 points */
    uint8_t down[16] = {0};
    down[12] = 1, down[13] = 1, down[14] = 2, down[15] = 3;
    ntuple_update(n, down, 1.0f);
    ck_assert_int_eq(td_greedy_move(n, g, s, &gain, NULL), G2048_DOWN);
    ck_assert_float_eq(gain, 0);
    free(s);
    ntuple_free(n);
    game_free(g);
}
END_TEST

/* One thread: the same seed gives the same weights; learning lifts the mean score well
 * above the untrained greedy player's (about 1,000 points: a zero table is a fixed move
 * order); other boards are refused. */
START_TEST(learns_reproducibly)
{
    gz_config c;
    game *g = game2048(4, &c);
    char err[256];
    ntuple *a = ntuple_new(err, sizeof err), *b = ntuple_new(err, sizeof err);
    ck_assert_msg(a && b, "%s", err);
    td_opts o = {.lr = 0.1, .lambda = 0, .threads = 1, .seed = 42};
    td_stats s1, s2;
    ck_assert_msg(td_learn(a, g, 200, &o, NULL, &s1, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(td_learn(b, g, 200, &o, NULL, &s2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s1.games, 200);
    ck_assert_int_eq(s1.moves, s2.moves);
    ck_assert_int_eq(a->games, 200);
    for (int t = 0; t < NT_TUPLES; t++)
        ck_assert(memcmp(a->w[0][t], b->w[0][t], NT_ENTRIES * sizeof(float)) == 0);
    ck_assert_int_eq(s1.tile_games[1], 200); /* every game has a tile */
    double first = s1.score_sum / s1.games;
    o.seed = 1000;
    ck_assert_msg(td_learn(a, g, 2500, &o, NULL, &s1, err, sizeof err) == 0, "%s", err);
    o.seed = 5000;
    ck_assert_msg(td_learn(a, g, 500, &o, NULL, &s1, err, sizeof err) == 0, "%s", err);
    double later = s1.score_sum / s1.games;
    ck_assert_msg(later > 3 * first && later > 6000, "mean score %.0f after 3,200 games, %.0f in the first 200",
                  later, first);
    /* lambda-returns learn too (and differ from TD(0)) */
    ntuple *l = ntuple_new(err, sizeof err);
    td_opts ol = {.lr = 0.1, .lambda = 0.5, .threads = 2, .seed = 7};
    ck_assert_msg(td_learn(l, g, 1500, &ol, NULL, &s2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s2.games, 1500);
    ol.seed = 9000;
    ck_assert_msg(td_learn(l, g, 300, &ol, NULL, &s2, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(s2.score_sum / s2.games > 2 * first, "lambda 0.5: mean %.0f", s2.score_sum / s2.games);
    ntuple_free(l);
    /* a set stop flag: no game */
    volatile sig_atomic_t stop = 1;
    ck_assert_int_eq(td_learn(a, g, 100, &o, &stop, &s1, err, sizeof err), 0);
    ck_assert_int_eq(s1.games, 0);
    gz_config c3;
    game *g3 = game2048(3, &c3);
    ck_assert_int_eq(td_learn(a, g3, 1, &o, NULL, &s1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "4x4") && strstr(err, "3x3"), "%s", err);
    game_free(g3);
    ntuple_free(a);
    ntuple_free(b);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("td");
    TCase *tc = tcase_create("td");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, lambda_returns_by_hand);
    tcase_add_test(tc, greedy_move);
    tcase_add_test(tc, learns_reproducibly);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
