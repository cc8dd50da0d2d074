/* Rules of the m,n,k games: wins in every direction and at the edges, freestyle vs
 * exact, draws, illegal moves, notation round trips, Zobrist transpositions. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/rng.h"

static game *make(int rows, int cols, int k, bool exact)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.game.rows = rows;
    c.game.cols = cols;
    c.game.k = k;
    cfg_game_set_rule(&c.game, exact ? CFG_RULE_EXACT : CFG_RULE_FREESTYLE);
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* Plays moves given as notation strings; returns the state (free with free()). */
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

START_TEST(tictactoe_row_col_diag_wins)
{
    game *g = make(3, 3, 3, false);
    const char *row[] = {"a1", "a2", "b1", "b2", "c1"};
    const char *col[] = {"a1", "b1", "a2", "b2", "a3"};
    const char *diag[] = {"a1", "b1", "b2", "c1", "c3"};
    const char *anti[] = {"c1", "a1", "b2", "b1", "a3"};
    const char *const *lines[] = {row, col, diag, anti};
    for (int i = 0; i < 4; i++) {
        game_state *s = play_moves(g, lines[i], 4);
        ck_assert(!game_terminal(g, s));
        int a;
        char err[64];
        g->ops->parse_move(g, lines[i][4], &a, err, sizeof err);
        ck_assert_int_eq(g->ops->winning_move(g, s), a);
        ck_assert_int_eq(game_play(g, s, a), 0);
        ck_assert(game_terminal(g, s));
        float z[2];
        game_result(g, s, z);
        ck_assert_float_eq(z[0], 1.0f);
        ck_assert_float_eq(z[1], -1.0f);
        uint8_t mask[9];
        ck_assert_int_eq(game_legal(g, s, mask), 0);
        ck_assert_int_eq(game_play(g, s, 4), -1);
        free(s);
    }
    game_free(g);
}
END_TEST

/* winning_move against the definition on random positions of every shape and rule: the
 * lowest empty point where the mover's stone ends the game with his win (played on a
 * copy), or -1. Boards from 3x3 to 25x25 (the bit-mask rows at their widest), k 3..6. */
START_TEST(winning_move_matches_brute_force)
{
    const int shapes[][3] = {{3, 3, 3}, {5, 7, 4}, {9, 9, 5}, {8, 13, 5}, {15, 15, 5},
                             {25, 25, 6}, {25, 7, 5}, {7, 25, 5}};
    rng r;
    rng_seed(&r, 77);
    int wins = 0, checked = 0;
    for (int sh = 0; sh < 8; sh++) {
        for (int exact = 0; exact < 2; exact++) {
            game *g = make(shapes[sh][0], shapes[sh][1], shapes[sh][2], exact);
            game_state *s = game_state_new(g, NULL), *t = game_state_new(g, NULL);
            uint8_t *mask = malloc((size_t)g->actions);
            for (int trial = 0; trial < 40; trial++) {
                game_init(g, s, &r);
                int plies = (int)rng_below(&r, (uint32_t)(g->actions * 3 / 4));
                for (int i = 0; i < plies && !game_terminal(g, s); i++) {
                    int n = game_legal(g, s, mask), pick = (int)rng_below(&r, (uint32_t)n);
                    for (int a = 0; a < g->actions; a++)
                        if (mask[a] && pick-- == 0) {
                            ck_assert_int_eq(game_play(g, s, a), 0);
                            break;
                        }
                }
                if (game_terminal(g, s))
                    continue;
                int want = -1, me = game_current_player(g, s);
                game_legal(g, s, mask);
                for (int a = 0; a < g->actions && want < 0; a++) {
                    if (!mask[a])
                        continue;
                    memcpy(t, s, g->state_size);
                    ck_assert_int_eq(game_play(g, t, a), 0);
                    float z[2];
                    if (game_terminal(g, t)) {
                        game_result(g, t, z);
                        if (z[me] > 0)
                            want = a;
                    }
                }
                ck_assert_int_eq(g->ops->winning_move(g, s), want);
                wins += want >= 0;
                checked++;
            }
            free(mask);
            free(s);
            free(t);
            game_free(g);
        }
    }
    ck_assert_int_gt(wins, 20);
    ck_assert_int_gt(checked, 400);
}
END_TEST

START_TEST(cells_show_stones)
{
    game *g = make(3, 4, 3, false);
    const char *moves[] = {"a1", "d3", "b2"};
    game_state *s = play_moves(g, moves, 3);
    int8_t cells[12];
    g->ops->cells(g, s, cells);
    /* rows from the top: d3 is row 0 col 3, b2 row 1 col 1, a1 row 2 col 0 */
    const int8_t want[12] = {-1, -1, -1, 1, -1, 0, -1, -1, 0, -1, -1, -1};
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq(cells[i], want[i]);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(tictactoe_draw)
{
    game *g = make(3, 3, 3, false);
    const char *m[] = {"a3", "b2", "c3", "b3", "b1", "a1", "a2", "c2", "c1"};
    game_state *s = play_moves(g, m, 9);
    ck_assert(game_terminal(g, s));
    float z[2];
    game_result(g, s, z);
    ck_assert_float_eq(z[0], 0.0f);
    ck_assert_float_eq(z[1], 0.0f);
    free(s);
    game_free(g);
}
END_TEST

/* Five in a row in each direction, placed at every position that fits, white wins
 * too: black plays the line, white plays far away (or the reverse). */
START_TEST(gomoku_wins_everywhere)
{
    game *g = make(15, 15, 5, false);
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    game_state *s = malloc(g->state_size);
    int checked = 0;
    for (int d = 0; d < 4; d++)
        for (int r0 = 0; r0 < 15; r0++)
            for (int c0 = 0; c0 < 15; c0++) {
                int r4 = r0 + 4 * dirs[d][0], c4 = c0 + 4 * dirs[d][1];
                if (r4 < 0 || r4 >= 15 || c4 < 0 || c4 >= 15)
                    continue;
                game_init(g, s, NULL);
                /* White gets only four stones, so it cannot win: each goes on the
                 * first empty point off the line. */
                for (int i = 0; i < 5; i++) {
                    int a = (r0 + i * dirs[d][0]) * 15 + c0 + i * dirs[d][1];
                    ck_assert_int_eq(game_play(g, s, a), 0);
                    if (i == 4)
                        break;
                    ck_assert(!game_terminal(g, s));
                    for (int f = 0; f < 225; f++) {
                        bool on_line = false;
                        for (int j = 0; j < 5; j++)
                            on_line |= f == (r0 + j * dirs[d][0]) * 15 + c0 + j * dirs[d][1];
                        if (!on_line && game_play(g, s, f) == 0)
                            break;
                    }
                }
                ck_assert(game_terminal(g, s));
                float z[2];
                game_result(g, s, z);
                ck_assert_float_eq(z[0], 1.0f);
                checked++;
            }
    ck_assert_int_eq(checked, 2 * 15 * 11 + 2 * 11 * 11);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(overline_freestyle_vs_exact)
{
    /* Black: a8 b8 c8 e8 f8, then d8 makes six. White plays row 1. */
    const char *m[] = {"a8", "a1", "b8", "b1", "c8", "c1", "e8", "h1", "f8", "j1", "d8"};
    for (int exact = 0; exact <= 1; exact++) {
        game *g = make(15, 15, 5, exact);
        game_state *s = play_moves(g, m, 11);
        ck_assert_int_eq(game_terminal(g, s), !exact);
        free(s);
        game_free(g);
    }
    /* exactly five still wins under exact */
    game *g = make(15, 15, 5, true);
    const char *five[] = {"a8", "a1", "b8", "b1", "c8", "c1", "d8", "h1", "e8"};
    game_state *s = play_moves(g, five, 9);
    ck_assert(game_terminal(g, s));
    free(s);
    game_free(g);
}
END_TEST

START_TEST(notation_round_trip)
{
    game *g = make(15, 15, 5, false);
    for (int a = 0; a < g->actions; a++) {
        char buf[16], err[128];
        int b = -1;
        g->ops->format_move(g, a, buf, sizeof buf);
        ck_assert_int_eq(g->ops->parse_move(g, buf, &b, err, sizeof err), 0);
        ck_assert_int_eq(a, b);
        snprintf(buf, sizeof buf, "%d,%d", a % 15, a / 15);
        ck_assert_int_eq(g->ops->parse_move(g, buf, &b, err, sizeof err), 0);
        ck_assert_int_eq(a, b);
    }
    int a;
    char err[128];
    ck_assert_int_eq(g->ops->parse_move(g, "h8", &a, err, sizeof err), 0);
    ck_assert_int_eq(a, 7 * 15 + 7);
    ck_assert_int_eq(g->ops->parse_move(g, "a15", &a, err, sizeof err), 0);
    ck_assert_int_eq(a, 0);
    /* numbers past 2^32 must not wrap around into a move on the board (a4294967297 was
     * a1, 4294967297,0 was b1's neighbour) */
    const char *bad[] = {"", "z1", "a0", "a16", "p3", "15,0", "0,-1", "h", "8", "h8x", "h 8",
                         "a4294967297", "a4294967311", "4294967297,0", "0,4294967297",
                         "a99999999999999999999999", "18446744073709551617,1", "a-1", "a+1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(g->ops->parse_move(g, bad[i], &a, err, sizeof err) == -1, "accepted \"%s\"", bad[i]);
    game_free(g);
}
END_TEST

START_TEST(illegal_moves_rejected)
{
    game *g = make(15, 15, 5, false);
    game_state *s = game_state_new(g, NULL);
    ck_assert_int_eq(game_play(g, s, -1), -1);
    ck_assert_int_eq(game_play(g, s, 225), -1);
    ck_assert_int_eq(game_play(g, s, 112), 0);
    ck_assert_int_eq(game_play(g, s, 112), -1);
    ck_assert_int_eq(game_current_player(g, s), 1);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(zobrist_transposition)
{
    game *g = make(15, 15, 5, false);
    const char *m1[] = {"h8", "h9", "j8", "j9"};
    const char *m2[] = {"j8", "j9", "h8", "h9"};
    const char *m3[] = {"j8", "h9", "h8", "j9"};
    game_state *a = play_moves(g, m1, 4), *b = play_moves(g, m2, 4), *c = play_moves(g, m3, 4);
    /* same stones, same last move, same side to move */
    ck_assert_uint_eq(game_hash(g, a), game_hash(g, c));
    /* same stones but a different last move: the encoding differs, so must the hash */
    ck_assert_uint_ne(game_hash(g, a), game_hash(g, b));
    free(a);
    free(b);
    free(c);
    game_free(g);
}
END_TEST

START_TEST(encode_point_of_view)
{
    game *g = make(3, 3, 3, false);
    const char *m[] = {"a1"};
    game_state *s = play_moves(g, m, 1);
    float p[5 * 9];
    game_encode(g, s, p);
    int a1 = 2 * 3 + 0;
    ck_assert_float_eq(p[0 * 9 + a1], 0.0f); /* white to move: not its stone */
    ck_assert_float_eq(p[1 * 9 + a1], 1.0f); /* opponent's */
    ck_assert_float_eq(p[2 * 9 + a1], 1.0f); /* last move */
    ck_assert_float_eq(p[3 * 9 + 4], 1.0f);
    ck_assert_float_eq(p[4 * 9 + 4], 0.0f); /* white to move */
    free(s);
    game_free(g);
}
END_TEST

START_TEST(random_playouts_end)
{
    game *g = make(9, 9, 5, false);
    rng r;
    rng_seed(&r, 7);
    game_state *s = malloc(g->state_size);
    int wins[3] = {0, 0, 0};
    for (int i = 0; i < 200; i++) {
        game_init(g, s, NULL);
        float z[2];
        int plies = game_random_playout(g, s, &r, z);
        ck_assert_int_le(plies, 81);
        ck_assert_float_eq(z[0], -z[1]);
        wins[z[0] > 0 ? 0 : z[0] < 0 ? 1 : 2]++;
    }
    ck_assert_int_gt(wins[0], wins[1]); /* the first player's edge shows even at random */
    free(s);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mnk");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, tictactoe_row_col_diag_wins);
    tcase_add_test(tc, tictactoe_draw);
    tcase_add_test(tc, cells_show_stones);
    tcase_add_test(tc, winning_move_matches_brute_force);
    tcase_add_test(tc, gomoku_wins_everywhere);
    tcase_add_test(tc, overline_freestyle_vs_exact);
    tcase_add_test(tc, notation_round_trip);
    tcase_add_test(tc, illegal_moves_rejected);
    tcase_add_test(tc, zobrist_transposition);
    tcase_add_test(tc, encode_point_of_view);
    tcase_add_test(tc, random_playouts_end);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
