/* The slow suite's arena checks: the strength claims of the unit tests over many more
 * games (minutes, not seconds), run by scripts/test --slow. */
#include <check.h>
#include <stdlib.h>

#include "engine/arena.h"
#include "engine/config.h"
#include "engine/game.h"
#include "engine/player.h"

static gz_config cfg;

static void run_match(const char *const *specs, int n, int games, int opening, uint64_t seed,
                      arena_tally *t)
{
    char err[512];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    player *pl[GAME_MAX_PLAYERS];
    for (int i = 0; i < n; i++) {
        pl[i] = player_new(specs[i], g, &cfg, NULL, err, sizeof err);
        ck_assert_msg(pl[i] != NULL, "%s", err);
    }
    arena_opts o = {.games = games, .opening_moves = opening, .seed = seed};
    ck_assert_msg(arena_run(g, pl, n, &o, t, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < n; i++)
        player_free(pl[i]);
    game_free(g);
}

START_TEST(alphabeta2_vs_random_gomoku_200)
{
    cfg_defaults(&cfg, "mnk"); /* 15x15, k = 5 */
    const char *specs[2] = {"alphabeta:2", "random"};
    arena_tally t[2];
    run_match(specs, 2, 200, 2, 1, t);
    ck_assert_msg(t[0].wins >= 190, "alphabeta:2 won %d of 200", t[0].wins);
}
END_TEST

START_TEST(alphabeta4_vs_mcts400_gomoku)
{
    cfg_defaults(&cfg, "mnk");
    const char *specs[2] = {"alphabeta", "mcts:400"};
    arena_tally t[2];
    run_match(specs, 2, 20, 2, 2, t);
    ck_assert_msg(t[0].wins >= 15, "alphabeta won %d of 20 against pure MCTS", t[0].wins);
}
END_TEST

START_TEST(mcts400_vs_random_sanling3_60)
{
    cfg_defaults(&cfg, "sanling"); /* 13, 3 players, 36 moves */
    const char *specs[3] = {"mcts:400", "random", "random"};
    arena_tally t[3];
    run_match(specs, 3, 60, 2, 3, t);
    ck_assert_msg(t[0].wins > 40, "mcts:400 first in %d of 60", t[0].wins);
}
END_TEST

START_TEST(perfect_vs_random_tictactoe_5000)
{
    cfg_defaults(&cfg, "mnk");
    cfg.game.rows = cfg.game.cols = cfg.game.k = 3;
    const char *specs[2] = {"perfect", "random"};
    arena_tally t[2];
    run_match(specs, 2, 5000, 0, 4, t);
    ck_assert_int_eq(t[0].losses, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arena_slow");
    TCase *tc = tcase_create("strength");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, alphabeta2_vs_random_gomoku_200);
    tcase_add_test(tc, alphabeta4_vs_mcts400_gomoku);
    tcase_add_test(tc, mcts400_vs_random_sanling3_60);
    tcase_add_test(tc, perfect_vs_random_tictactoe_5000);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
