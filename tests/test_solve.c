/* The exact m,n,k solver: tic-tac-toe's known value (a draw) and its 5478 reachable
 * positions, optimal moves in known positions, agreement with an unmemoised minimax,
 * perfect play never losing, and refusing what it cannot solve. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/solve.h"

static game *make(int rows, int cols, int k)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.game.rows = rows;
    c.game.cols = cols;
    c.game.k = k;
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

static solver *make_solver(const game *g)
{
    char err[256];
    solver *sv = solve_new(g, err, sizeof err);
    ck_assert_msg(sv != NULL, "%s", err);
    return sv;
}

static game_state *play_moves(const game *g, const char *const *moves, int n)
{
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < n; i++) {
        int a;
        char err[128];
        ck_assert_msg(g->ops->parse_move(g, moves[i], &a, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(game_play(g, s, a) == 0, "move %s illegal", moves[i]);
    }
    return s;
}

/* Plain negamax without memo or pruning: the oracle's oracle. */
static int minimax(const game *g, const game_state *s)
{
    if (game_terminal(g, s)) {
        float z[2];
        game_result(g, s, z);
        return (int)z[game_current_player(g, s)];
    }
    uint8_t mask[GAME_MAX_ACTIONS];
    game_legal(g, s, mask);
    _Alignas(8) unsigned char buf[256]; /* no malloc: this visits ~10^5 nodes per call */
    if (g->state_size > sizeof buf) /* (ck_assert would write to Check's pipe per node) */
        ck_abort_msg("state larger than the test's buffer");
    game_state *c = (game_state *)buf;
    int best = -2;
    for (int a = 0; a < g->actions; a++)
        if (mask[a]) {
            game_copy(g, c, s);
            game_play(g, c, a);
            int v = -minimax(g, c);
            if (v > best)
                best = v;
        }
    return best;
}

START_TEST(tictactoe_value_and_positions)
{
    game *g = make(3, 3, 3);
    solver *sv = make_solver(g);
    ck_assert_int_eq(solve_positions(sv), 5478);
    game_state *s = game_state_new(g, NULL);
    ck_assert_int_eq(solve_value(sv, s), 0);
    uint8_t mask[9];
    ck_assert_int_eq(solve_best_moves(sv, s, mask), 9); /* every opening move draws */
    ck_assert_int_eq(solve_positions(sv), 5478);        /* lookups add nothing */
    free(s);
    solve_free(sv);
    game_free(g);
}
END_TEST

START_TEST(tictactoe_known_positions)
{
    game *g = make(3, 3, 3);
    solver *sv = make_solver(g);
    uint8_t mask[9];
    /* X in the centre: O must take a corner; an edge loses. */
    const char *centre[] = {"b2"};
    game_state *s = play_moves(g, centre, 1);
    ck_assert_int_eq(solve_value(sv, s), 0);
    ck_assert_int_eq(solve_best_moves(sv, s, mask), 4);
    ck_assert(mask[0] && mask[2] && mask[6] && mask[8]);
    free(s);
    const char *edge[] = {"b2", "b3"};
    s = play_moves(g, edge, 2);
    ck_assert_int_eq(solve_value(sv, s), 1); /* X to move wins */
    free(s);
    /* X to move with two ways to win at once, and O threatening: both wins are best. */
    const char *two[] = {"a1", "c3", "b1", "c2"};
    s = play_moves(g, two, 4);
    ck_assert_int_eq(solve_value(sv, s), 1);
    ck_assert_int_gt(solve_best_moves(sv, s, mask), 0);
    int c1;
    char err[64];
    g->ops->parse_move(g, "c1", &c1, err, sizeof err);
    ck_assert_int_eq(mask[c1], 1);
    free(s);
    /* a finished game: the mover has lost */
    const char *won[] = {"a1", "a2", "b1", "b2", "c1"};
    s = play_moves(g, won, 5);
    ck_assert_int_eq(solve_value(sv, s), -1);
    ck_assert_int_eq(solve_best_moves(sv, s, mask), 0);
    free(s);
    solve_free(sv);
    game_free(g);
}
END_TEST

/* Along random games, the solver agrees with an unmemoised minimax and every best move
 * keeps the value. */
START_TEST(agrees_with_minimax)
{
    game *g = make(3, 3, 3);
    solver *sv = make_solver(g);
    rng r;
    rng_seed(&r, 42);
    game_state *s = malloc(g->state_size), *c = malloc(g->state_size);
    uint8_t mask[9], best[9];
    for (int i = 0; i < 30; i++) {
        game_init(g, s, NULL);
        while (!game_terminal(g, s)) {
            int v = solve_value(sv, s);
            ck_assert_int_eq(v, minimax(g, s));
            int nb = solve_best_moves(sv, s, best);
            int n = game_legal(g, s, mask);
            ck_assert_int_le(nb, n);
            for (int a = 0; a < 9; a++) {
                if (!mask[a]) {
                    ck_assert_int_eq(best[a], 0);
                    continue;
                }
                game_copy(g, c, s);
                game_play(g, c, a);
                ck_assert_int_eq(best[a], -solve_value(sv, c) == v);
            }
            uint32_t pick = rng_below(&r, (uint32_t)n);
            int a = 0;
            while (!mask[a] || pick--)
                a++;
            game_play(g, s, a);
        }
    }
    ck_assert_int_eq(solve_positions(sv), 5478);
    free(s);
    free(c);
    solve_free(sv);
    game_free(g);
}
END_TEST

/* Perfect play against random play, on both sides, never loses; against itself it
 * draws. Also on 3x4 with k=3, a first-player win. */
START_TEST(perfect_never_loses)
{
    int shapes[2][3] = {{3, 3, 3}, {3, 4, 3}};
    for (int t = 0; t < 2; t++) {
        game *g = make(shapes[t][0], shapes[t][1], shapes[t][2]);
        solver *sv = make_solver(g);
        rng r;
        rng_seed(&r, 7 + (uint64_t)t);
        game_state *s = malloc(g->state_size);
        uint8_t mask[GAME_MAX_ACTIONS];
        game_init(g, s, NULL);
        int root = solve_value(sv, s);
        if (t == 1)
            ck_assert_int_eq(root, 1);
        for (int i = 0; i < 60; i++) {
            int perfect = i % 3 == 2 ? -1 : i % 3; /* -1: both sides perfect */
            game_init(g, s, NULL);
            while (!game_terminal(g, s)) {
                int me = game_current_player(g, s);
                int n = perfect < 0 || me == perfect ? solve_best_moves(sv, s, mask)
                                                     : game_legal(g, s, mask);
                uint32_t pick = rng_below(&r, (uint32_t)n);
                int a = 0;
                while (!mask[a] || pick--)
                    a++;
                game_play(g, s, a);
            }
            float z[2];
            game_result(g, s, z);
            if (perfect >= 0) {
                ck_assert(z[perfect] >= (perfect == 0 ? (float)root : (float)-root));
            } else {
                ck_assert_float_eq(z[0], (float)root);
            }
        }
        free(s);
        solve_free(sv);
        game_free(g);
    }
}
END_TEST

START_TEST(refuses_large_boards)
{
    char err[256];
    game *g = make(5, 5, 4);
    ck_assert_ptr_null(solve_new(g, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "too large"));
    game_free(g);
    gz_config c;
    cfg_defaults(&c, "sanling");
    snprintf(c.game.name, sizeof c.game.name, "sanling");
    c.game.size = 5;
    c.game.moves = 4;
    g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_null(solve_new(g, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "m,n,k"));
    game_free(g);
    solve_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("solve");
    TCase *tc = tcase_create("solve");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tictactoe_value_and_positions);
    tcase_add_test(tc, tictactoe_known_positions);
    tcase_add_test(tc, agrees_with_minimax);
    tcase_add_test(tc, perfect_never_loses);
    tcase_add_test(tc, refuses_large_boards);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
