/* The symmetry module: the D4 table (inverses, composition, closure of every game's
 * declared subgroup), and equivariance: mapping a position's planes and legal mask by
 * an element equals playing the mapped moves, for square and rectangular m,n,k boards
 * and Sanling on odd and even N; hex elements keep the six-neighbour set. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/sanling.h"
#include "engine/symmetry.h"

#define REQUIRE(cond, ...)                                                                  \
    do {                                                                                    \
        if (!(cond))                                                                        \
            ck_abort_msg(__VA_ARGS__);                                                      \
    } while (0)

static game *make_mnk(int rows, int cols, int k)
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

static game *make_sanling(int n, int players, int moves)
{
    gz_config c;
    cfg_defaults(&c, "sanling");
    snprintf(c.game.name, sizeof c.game.name, "sanling");
    c.game.size = n;
    c.game.players = players;
    c.game.moves = moves;
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* Every game shape the tests look at. */
static game *make_case(int i)
{
    switch (i) {
    case 0: return make_mnk(3, 3, 3);
    case 1: return make_mnk(15, 15, 5);
    case 2: return make_mnk(7, 9, 4);
    case 3: return make_mnk(9, 7, 4);
    case 4: return make_sanling(5, 3, 24);
    case 5: return make_sanling(13, 3, 36);
    case 6: return make_sanling(6, 2, 35);
    case 7: return make_sanling(12, 3, 60);
    default: return NULL;
    }
}
#define NCASES 8

static bool in_group(const game *g, sym_id s)
{
    for (int i = 0; i < g->nsym; i++)
        if (g->sym[i] == s)
            return true;
    return false;
}

START_TEST(d4_table)
{
    /* clockwise quarter turn: the top-left corner goes to the top-right */
    int r, c;
    sym_map_point(SYM_ROT90, 4, 4, 0, 0, &r, &c);
    ck_assert(r == 0 && c == 3);
    sym_map_point(SYM_ROT90, 4, 4, 0, 3, &r, &c);
    ck_assert(r == 3 && c == 3);
    ck_assert_int_eq(sym_compose(SYM_ROT90, SYM_ROT90), SYM_ROT180);
    ck_assert_int_eq(sym_compose(SYM_ROT90, SYM_ROT180), SYM_ROT270);
    ck_assert_int_eq(sym_compose(SYM_FLIP_H, SYM_FLIP_V), SYM_ROT180);
    ck_assert_int_eq(sym_compose(SYM_TRANSPOSE, SYM_ANTITRANSPOSE), SYM_ROT180);
    ck_assert_int_eq(sym_inverse(SYM_ROT90), SYM_ROT270);
    ck_assert_int_eq(sym_inverse(SYM_ROT270), SYM_ROT90);
    /* composition agrees with applying one map after the other, on several shapes;
     * the inverse undoes the element; all eight differ */
    int sides[] = {1, 2, 3, 4, 5, 8};
    for (size_t t = 0; t < sizeof sides / sizeof sides[0]; t++) {
        int n = sides[t];
        for (int a = 0; a < SYM_COUNT; a++) {
            sym_id ia = sym_inverse((sym_id)a);
            for (int b = 0; b < SYM_COUNT; b++) {
                sym_id ab = sym_compose((sym_id)a, (sym_id)b);
                bool differ = false;
                for (int i = 0; i < n * n; i++) {
                    int r1, c1, r2, c2, r3, c3;
                    sym_map_point((sym_id)b, n, n, i / n, i % n, &r1, &c1);
                    sym_map_point((sym_id)a, n, n, r1, c1, &r2, &c2);
                    sym_map_point(ab, n, n, i / n, i % n, &r3, &c3);
                    REQUIRE(r2 == r3 && c2 == c3, "%s o %s on %dx%d", sym_name((sym_id)a),
                            sym_name((sym_id)b), n, n);
                    sym_map_point((sym_id)a, n, n, i / n, i % n, &r1, &c1);
                    sym_map_point(ia, n, n, r1, c1, &r2, &c2);
                    REQUIRE(r2 == i / n && c2 == i % n, "inverse of %s", sym_name((sym_id)a));
                    REQUIRE(r1 >= 0 && r1 < n && c1 >= 0 && c1 < n, "off the board");
                    sym_map_point((sym_id)b, n, n, i / n, i % n, &r2, &c2);
                    differ |= r1 != r2 || c1 != c2;
                }
                if (n >= 3)
                    REQUIRE(differ == (a != b), "%s and %s", sym_name((sym_id)a), sym_name((sym_id)b));
            }
        }
    }
    /* the four elements that fit rectangles map them onto themselves */
    sym_id rect[] = {SYM_ID, SYM_ROT180, SYM_FLIP_V, SYM_FLIP_H};
    for (int e = 0; e < 4; e++)
        for (int i = 0; i < 7 * 9; i++) {
            sym_map_point(rect[e], 7, 9, i / 9, i % 9, &r, &c);
            REQUIRE(r >= 0 && r < 7 && c >= 0 && c < 9, "%s off the 7x9 board", sym_name(rect[e]));
        }
}
END_TEST

START_TEST(declared_groups_closed)
{
    int expect[NCASES] = {8, 8, 4, 4, 4, 4, 2, 2};
    for (int t = 0; t < NCASES; t++) {
        game *g = make_case(t);
        ck_assert_int_eq(g->nsym, expect[t]);
        ck_assert_int_eq(g->sym[0], SYM_ID);
        for (int i = 0; i < g->nsym; i++) {
            for (int j = 0; j < i; j++)
                ck_assert_int_ne(g->sym[i], g->sym[j]);
            ck_assert_msg(in_group(g, sym_inverse(g->sym[i])), "case %d: inverse of %s", t,
                          sym_name(g->sym[i]));
            for (int j = 0; j < g->nsym; j++)
                ck_assert_msg(in_group(g, sym_compose(g->sym[i], g->sym[j])), "case %d: %s o %s", t,
                              sym_name(g->sym[i]), sym_name(g->sym[j]));
        }
        game_free(g);
    }
}
END_TEST

/* Hex: the declared elements keep the six-neighbour set and the centre stone; on an
 * odd N the group is all four elements of the rhombus group, and every other D4
 * element breaks adjacency. */
START_TEST(hex_keeps_neighbours)
{
    int sizes[] = {5, 6, 13, 12, 64};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        game *g = make_sanling(n, 3, 24);
        int centre = (n / 2) * n + n / 2;
        for (int e = 0; e < SYM_COUNT; e++) {
            bool keeps = true;
            for (int a = 0; a < n * n && keeps; a++) {
                int nb[6], mnb[6];
                int k = sanling_neighbours(g, a, nb);
                int ma = sym_map_action(g, (sym_id)e, a);
                int mk = sanling_neighbours(g, ma, mnb);
                keeps = k == mk;
                for (int i = 0; i < k && keeps; i++) {
                    int m = sym_map_action(g, (sym_id)e, nb[i]);
                    bool found = false;
                    for (int j = 0; j < mk; j++)
                        found |= mnb[j] == m;
                    keeps = found;
                }
            }
            bool hex = e == SYM_ID || e == SYM_ROT180 || e == SYM_TRANSPOSE || e == SYM_ANTITRANSPOSE;
            ck_assert_msg(keeps == hex, "N=%d %s", n, sym_name((sym_id)e));
            bool fixes_centre = sym_map_action(g, (sym_id)e, centre) == centre;
            ck_assert_msg(in_group(g, (sym_id)e) == (hex && fixes_centre), "N=%d %s", n,
                          sym_name((sym_id)e));
        }
        game_free(g);
    }
}
END_TEST

/* Random games played twice: as drawn, and with every move mapped by an element. At
 * every ply the mapped planes and legal mask of the first equal those of the second,
 * and so do the outcomes at the end. */
START_TEST(planes_and_legal_equivariant)
{
    rng r;
    rng_seed(&r, 2024);
    static float pa[(GAME_MAX_PLAYERS + 4) * GAME_MAX_CELLS], pm[(GAME_MAX_PLAYERS + 4) * GAME_MAX_CELLS],
        pb[(GAME_MAX_PLAYERS + 4) * GAME_MAX_CELLS];
    static uint8_t la[GAME_MAX_ACTIONS], lm[GAME_MAX_ACTIONS], lb[GAME_MAX_ACTIONS];
    static uint8_t ua[8 * GAME_MAX_CELLS], um[8 * GAME_MAX_CELLS];
    for (int t = 0; t < NCASES; t++) {
        game *g = make_case(t);
        int hw = g->rows * g->cols, np = g->planes * hw;
        game_state *a = malloc(g->state_size), *b = malloc(g->state_size);
        for (int e = 0; e < g->nsym; e++) {
            sym_id s = g->sym[e];
            for (int rep = 0; rep < 3; rep++) {
                game_init(g, a, NULL);
                game_init(g, b, NULL);
                for (;;) {
                    game_encode(g, a, pa);
                    game_encode(g, b, pb);
                    sym_map_planes_f32(g, s, g->planes, pa, pm);
                    for (int i = 0; i < np; i++)
                        REQUIRE(pm[i] == pb[i], "case %d %s: plane %d point %d", t, sym_name(s),
                                i / hw, i % hw);
                    int na = game_legal(g, a, la), nb = game_legal(g, b, lb);
                    ck_assert_int_eq(na, nb);
                    sym_map_policy_u8(g, s, la, lm);
                    for (int i = 0; i < g->actions; i++)
                        REQUIRE(lm[i] == lb[i], "case %d %s: legal %d", t, sym_name(s), i);
                    /* u8 planes map like float planes; the inverse maps back */
                    for (int i = 0; i < np; i++)
                        ua[i] = (uint8_t)(pa[i] * 255.0f);
                    sym_map_planes_u8(g, s, g->planes, ua, um);
                    for (int i = 0; i < np; i++)
                        REQUIRE(um[i] == (uint8_t)(pb[i] * 255.0f), "u8 planes");
                    sym_map_planes_f32(g, sym_inverse(s), g->planes, pm, pb);
                    REQUIRE(memcmp(pb, pa, sizeof(float) * (size_t)np) == 0, "inverse");
                    if (game_terminal(g, a)) {
                        ck_assert(game_terminal(g, b));
                        float za[3], zb[3];
                        game_result(g, a, za);
                        game_result(g, b, zb);
                        for (int p = 0; p < g->players; p++)
                            ck_assert_float_eq(za[p], zb[p]);
                        break;
                    }
                    uint32_t pick = rng_below(&r, (uint32_t)na);
                    int m = 0;
                    while (!la[m] || pick--)
                        m++;
                    ck_assert_int_eq(game_play(g, a, m), 0);
                    ck_assert_int_eq(game_play(g, b, sym_map_action(g, s, m)), 0);
                }
            }
        }
        free(a);
        free(b);
        game_free(g);
    }
}
END_TEST

START_TEST(policy_maps_like_actions)
{
    game *g = make_mnk(7, 9, 4);
    float in[63], out[63];
    for (int i = 0; i < 63; i++)
        in[i] = (float)i;
    for (int e = 0; e < g->nsym; e++) {
        sym_map_policy_f32(g, g->sym[e], in, out);
        for (int i = 0; i < 63; i++)
            ck_assert_float_eq(out[sym_map_action(g, g->sym[e], i)], (float)i);
    }
    ck_assert_str_eq(sym_name(SYM_ANTITRANSPOSE), "antitranspose");
    ck_assert_str_eq(sym_name((sym_id)99), "?");
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("symmetry");
    TCase *tc = tcase_create("symmetry");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, d4_table);
    tcase_add_test(tc, declared_groups_closed);
    tcase_add_test(tc, hex_keeps_neighbours);
    tcase_add_test(tc, planes_and_legal_equivariant);
    tcase_add_test(tc, policy_maps_like_actions);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
