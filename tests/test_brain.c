/* The brain (nn/brain.c): the time rule; the root VCF check, which plays a forced win
 * by fours whatever the player; a capped search without a clock is reproducible. The
 * protocols over it are tested in test_protocols.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "nn/brain.h"

static gz_config gomoku_cfg(void)
{
    gz_config c;
    char err[512];
    const char *json = "{\"seed\": 7, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5},"
                       " \"mcts\": {\"simulations\": 50, \"batch\": 4}}";
    ck_assert_msg(cfg_parse(&c, json, "test", err, sizeof err) == 0, "%s", err);
    return c;
}

/* The position after moves (space-separated, in the game's notation), into s. */
static void play_moves(const game *g, game_state *s, const char *moves)
{
    char buf[512], err[256];
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
        int a;
        ck_assert_msg(g->ops->parse_move(g, t, &a, err, sizeof err) == 0, "%s: %s", t, err);
        ck_assert_int_eq(game_play(g, s, a), 0);
    }
}

/* Black (to move) has h8 i8 j8 (g8 is White's) and k6 k7: k8 is a four and an open
 * three at once, a win by fours (the position of test_protocols' weak-player VCF). */
static const char *const VCF_MOVES = "h8 g8 i8 a1 j8 a15 k6 o1 k7 o15";

static int action_of(const game *g, const char *mv)
{
    int a;
    char err[256];
    ck_assert_msg(g->ops->parse_move(g, mv, &a, err, sizeof err) == 0, "%s", err);
    return a;
}

START_TEST(budget_rule)
{
    ck_assert(brain_budget(-1, -1, 10) < 0);
    ck_assert_double_eq_tol(brain_budget(1.0, -1, 10), 0.85, 1e-9);
    ck_assert_double_eq_tol(brain_budget(5.0, 20.0, 10), 1.75, 1e-9);
    ck_assert_double_eq_tol(brain_budget(-1, 20.0, 10), 1.75, 1e-9);
    ck_assert_double_eq_tol(brain_budget(1.0, 100.0, 10), 0.85, 1e-9);
    ck_assert_double_eq_tol(brain_budget(0.01, -1, 10), 0.0, 1e-12);
    ck_assert_double_eq_tol(brain_budget(0, 0, 0), 0.0, 1e-12);
    for (double t = 0; t < 100; t += 0.37)
        ck_assert(brain_budget(t, -1, 1) < t || t == 0);
}
END_TEST

/* Whatever the player (random, a search), the forced win is played at once, proven. */
START_TEST(vcf_first)
{
    gz_config c = gomoku_cfg();
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    play_moves(g, s, VCF_MOVES);
    const char *specs[] = {"random", "mcts:30"};
    for (int k = 0; k < 2; k++) {
        brain_opts bo = {.spec = specs[k]};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
        brain_move m;
        ck_assert_int_eq(brain_choose(b, s, -1, &m, err, sizeof err), action_of(g, "k8"));
        ck_assert(m.proven && !m.searched && m.value == 1.0f);
        brain_free(b);
    }
    free(s);
    game_free(g);
}
END_TEST

/* A simulation cap without a clock: the same seed gives the same search. */
START_TEST(capped_search_reproducible)
{
    gz_config c = gomoku_cfg();
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    play_moves(g, s, "h8 i9");
    brain_move m[2];
    for (int run = 0; run < 2; run++) {
        brain_opts bo = {.spec = "mcts", .sims = 120};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
        ck_assert(brain_searches(b));
        ck_assert_int_ge(brain_choose(b, s, -1, &m[run], err, sizeof err), 0);
        ck_assert(m[run].searched);
        ck_assert_int_ge(m[run].sims, 120);
        brain_free(b);
    }
    ck_assert_int_eq(m[0].action, m[1].action);
    ck_assert_int_eq(m[0].top[0].visits, m[1].top[0].visits);
    free(s);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("brain");
    TCase *tc = tcase_create("brain");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, budget_rule);
    tcase_add_test(tc, vcf_first);
    tcase_add_test(tc, capped_search_reproducible);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
