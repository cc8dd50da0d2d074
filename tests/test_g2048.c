/* 2048 (engine/games/g2048.c): the slide and merge rule on hand-written lines and
 * boards, legal moves and the end of the game, the chance events (outcomes, their
 * probabilities, a chi-square test of the spawns), the symmetries of states and moves,
 * notation, hashing and the config's checks. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "engine/symmetry.h"

static game *make(int rows, int cols)
{
    gz_config c;
    cfg_defaults(&c, "2048");
    c.game.rows = rows;
    c.game.cols = cols;
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* "2 2 . 4 / ..." rows separated by '/', tiles by spaces, '.' empty -> exponents. */
static void parse_board(const game *g, const char *text, uint8_t *cells)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        if (*p == ' ' || *p == '/') {
            p++;
            continue;
        }
        ck_assert_int_lt(n, g->rows * g->cols);
        if (*p == '.') {
            cells[n++] = 0;
            p++;
            continue;
        }
        char *end;
        long v = strtol(p, &end, 10);
        ck_assert_msg(end != p && v >= 2 && (v & (v - 1)) == 0, "bad tile in \"%s\"", text);
        int k = 0;
        while ((1L << k) < v)
            k++;
        cells[n++] = (uint8_t)k;
        p = end;
    }
    ck_assert_int_eq(n, g->rows * g->cols);
}

static game_state *board(const game *g, const char *text)
{
    uint8_t cells[G2048_MAX_CELLS];
    parse_board(g, text, cells);
    game_state *s = malloc(g->state_size);
    g2048_set(g, s, cells, 0, 0);
    return s;
}

static void assert_board(const game *g, const game_state *s, const char *text)
{
    uint8_t want[G2048_MAX_CELLS], got[G2048_MAX_CELLS];
    parse_board(g, text, want);
    g2048_get_cells(g, s, got);
    for (int i = 0; i < g->rows * g->cols; i++)
        ck_assert_msg(want[i] == got[i], "cell %d: want exponent %d, got %d (want %s)", i, want[i],
                      got[i], text);
}

static int move_of(const game *g, const char *m)
{
    int a;
    char err[128];
    ck_assert_msg(g->ops->parse_move(g, m, &a, err, sizeof err) == 0, "%s", err);
    return a;
}

START_TEST(slide_lines)
{
    static const struct {
        uint8_t in[4], out[4];
        uint64_t gain;
    } cases[] = {
        {{1, 1, 1, 1}, {2, 2, 0, 0}, 8},   /* 2 2 2 2 -> 4 4 */
        {{2, 2, 3, 0}, {3, 3, 0, 0}, 8},   /* 4 4 8 -> 8 8, not 16 */
        {{1, 1, 1, 0}, {2, 1, 0, 0}, 4},   /* 2 2 2 -> 4 2: the pair at the edge first */
        {{2, 1, 1, 0}, {2, 2, 0, 0}, 4},   /* 4 2 2 -> 4 4, no second merge */
        {{0, 1, 0, 1}, {2, 0, 0, 0}, 4},   /* gaps close before merging */
        {{1, 0, 0, 1}, {2, 0, 0, 0}, 4},
        {{3, 3, 3, 3}, {4, 4, 0, 0}, 32},  /* 8 8 8 8 -> 16 16 */
        {{1, 2, 1, 2}, {1, 2, 1, 2}, 0},   /* nothing moves */
        {{0, 0, 0, 5}, {5, 0, 0, 0}, 0},   /* a plain slide scores nothing */
        {{1, 1, 2, 2}, {2, 3, 0, 0}, 12},  /* 2 2 4 4 -> 4 8 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t v[4];
        memcpy(v, cases[i].in, 4);
        bool changed;
        uint64_t gain = g2048_slide_line(v, 4, &changed);
        ck_assert_msg(memcmp(v, cases[i].out, 4) == 0, "case %zu: got %d %d %d %d", i, v[0], v[1],
                      v[2], v[3]);
        ck_assert_uint_eq(gain, cases[i].gain);
        ck_assert_int_eq(changed, memcmp(cases[i].in, cases[i].out, 4) != 0);
    }
    /* lines of other lengths */
    uint8_t two[2] = {4, 4};
    bool ch;
    ck_assert_uint_eq(g2048_slide_line(two, 2, &ch), 32);
    ck_assert(two[0] == 5 && two[1] == 0 && ch);
    uint8_t eight[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ck_assert_uint_eq(g2048_slide_line(eight, 8, &ch), 16);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(eight[i], i < 4 ? 2 : 0);
}
END_TEST

START_TEST(board_moves_each_direction)
{
    game *g = make(4, 4);
    const char *start = "2 2 2 2 / 4 . 4 8 / . . . 2 / 2 . . 2";
    static const struct {
        const char *move, *after;
        uint64_t gain;
    } cases[] = {
        {"l", "4 4 . . / 8 8 . . / 2 . . . / 4 . . .", 8 + 8 + 4},
        {"r", ". . 4 4 / . . 8 8 / . . . 2 / . . . 4", 8 + 8 + 4},
        {"u", "2 2 2 2 / 4 . 4 8 / 2 . . 4 / . . . .", 4},
        {"d", ". . . . / 2 . . 2 / 4 . 2 8 / 2 2 4 4", 4},
    };
    for (int i = 0; i < 4; i++) {
        game_state *s = board(g, start);
        int a = move_of(g, cases[i].move);
        ck_assert_int_eq(game_play(g, s, a), 0);
        assert_board(g, s, cases[i].after);
        ck_assert_uint_eq(g2048_score(g, s), cases[i].gain);
        ck_assert_int_eq(g->ops->ply(g, s), 1);
        ck_assert(game_is_chance(g, s));
        float sc;
        g->ops->score(g, s, &sc);
        ck_assert_float_eq(sc, (float)cases[i].gain);
        free(s);
    }
    /* a rectangle: 2 x 3, moves along the short and the long side */
    game *h = make(2, 3);
    game_state *s = board(h, "2 . 2 / 4 4 4");
    ck_assert_int_eq(game_play(h, s, move_of(h, "right")), 0);
    assert_board(h, s, ". . 4 / . 4 8");
    free(s);
    s = board(h, "2 . 2 / 2 4 4");
    ck_assert_int_eq(game_play(h, s, move_of(h, "Up")), 0);
    assert_board(h, s, "4 4 2 / . . 4");
    free(s);
    game_free(h);
    game_free(g);
}
END_TEST

START_TEST(legal_moves_and_game_end)
{
    game *g = make(4, 4);
    uint8_t mask[4];
    /* full, no equal neighbours: the game is over */
    game_state *s = board(g, "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 2");
    ck_assert(game_terminal(g, s));
    ck_assert_int_eq(game_legal(g, s, mask), 0);
    for (int a = 0; a < 4; a++)
        ck_assert_int_eq(game_play(g, s, a), -1);
    free(s);
    /* full with one vertical pair: only up and down change the board */
    s = board(g, "2 4 2 4 / 4 2 4 2 / 2 4 8 4 / 4 2 8 2");
    ck_assert(!game_terminal(g, s));
    ck_assert_int_eq(game_legal(g, s, mask), 2);
    ck_assert(mask[G2048_UP] && mask[G2048_DOWN] && !mask[G2048_LEFT] && !mask[G2048_RIGHT]);
    ck_assert_int_eq(game_play(g, s, G2048_LEFT), -1);
    free(s);
    /* tiles packed to the left: left is illegal, the others move */
    s = board(g, "2 . . . / 4 . . . / 8 . . . / 16 . . .");
    ck_assert_int_eq(game_legal(g, s, mask), 1);
    ck_assert(mask[G2048_RIGHT]);
    /* after a move: a chance state; nobody moves until a tile spawns */
    ck_assert_int_eq(game_play(g, s, G2048_RIGHT), 0);
    ck_assert(game_is_chance(g, s));
    ck_assert(!game_terminal(g, s));
    ck_assert_int_eq(game_legal(g, s, mask), 0);
    ck_assert_int_eq(game_play(g, s, G2048_LEFT), -1);
    int out[GAME_MAX_CHANCE];
    float prob[GAME_MAX_CHANCE];
    int n = g->ops->chance_outcomes(g, s, out, prob);
    ck_assert_int_eq(n, 2 * 12);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += prob[i];
        ck_assert_float_eq_tol(prob[i], (out[i] & 1) ? 0.1f / 12 : 0.9f / 12, 1e-6f);
        ck_assert_int_ne(out[i] / 2 % 4, 3); /* never on the occupied right column */
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    ck_assert_int_eq(g->ops->chance_play(g, s, 2 * 3), -1); /* cell 3 holds the 2 */
    ck_assert_int_eq(g->ops->chance_play(g, s, 2 * 16), -1);
    ck_assert_int_eq(g->ops->chance_play(g, s, 2 * 0 + 1), 0); /* a 4 top-left */
    assert_board(g, s, "4 . . 2 / . . . 4 / . . . 8 / . . . 16");
    ck_assert(!game_is_chance(g, s));
    ck_assert_int_eq(g->ops->chance_outcomes(g, s, out, prob), 0);
    ck_assert_int_eq(g->ops->chance_play(g, s, 2), -1);
    free(s);
    /* the move cap (a bound for buffers): the game ends there */
    s = board(g, "2 . . . / . . . . / . . . . / . . . .");
    uint8_t c0[16];
    g2048_get_cells(g, s, c0);
    g2048_set(g, s, c0, 0, g->max_game_length - 1);
    ck_assert(!game_terminal(g, s));
    ck_assert_int_eq(game_play(g, s, G2048_RIGHT), 0);
    ck_assert(!game_terminal(g, s)); /* a tile spawns first */
    ck_assert_int_eq(g->ops->chance_play(g, s, 0), 0);
    ck_assert(game_terminal(g, s));
    ck_assert_int_eq(game_legal(g, s, mask), 0);
    free(s);
    /* the start: two tiles of 2 or 4, a decision state */
    rng r;
    rng_seed(&r, 5);
    for (int k = 0; k < 50; k++) {
        game_state *st = game_state_new(g, &r);
        uint8_t cells[16];
        g2048_get_cells(g, st, cells);
        int tiles = 0;
        for (int i = 0; i < 16; i++) {
            tiles += cells[i] != 0;
            ck_assert_int_le(cells[i], 2);
        }
        ck_assert_int_eq(tiles, 2);
        ck_assert(!game_is_chance(g, st));
        ck_assert_uint_eq(g2048_score(g, st), 0);
        free(st);
    }
    game_free(g);
}
END_TEST

/* Random games to the end: the tiles' sum is what spawned; the score is the merges. */
START_TEST(random_games_keep_invariants)
{
    int shapes[][2] = {{2, 2}, {3, 3}, {4, 4}, {3, 5}, {2, 8}};
    rng r;
    rng_seed(&r, 11);
    for (int t = 0; t < 5; t++) {
        game *g = make(shapes[t][0], shapes[t][1]);
        int cells = g->rows * g->cols;
        for (int k = 0; k < 20; k++) {
            game_state *s = game_state_new(g, &r);
            uint8_t c[G2048_MAX_CELLS];
            g2048_get_cells(g, s, c);
            uint64_t spawned = 0;
            for (int i = 0; i < cells; i++)
                spawned += c[i] ? (uint64_t)1 << c[i] : 0;
            uint8_t mask[4];
            int plies = 0;
            while (!game_terminal(g, s)) {
                int n = game_legal(g, s, mask);
                ck_assert_int_gt(n, 0);
                int pick = (int)rng_below(&r, (uint32_t)n), a = 0;
                for (; a < 4; a++)
                    if (mask[a] && pick-- == 0)
                        break;
                uint64_t before_sum = 0;
                g2048_get_cells(g, s, c);
                for (int i = 0; i < cells; i++)
                    before_sum += c[i] ? (uint64_t)1 << c[i] : 0;
                uint64_t sc0 = g2048_score(g, s);
                ck_assert_int_eq(game_play(g, s, a), 0);
                g2048_get_cells(g, s, c);
                uint64_t after_sum = 0;
                int empty = 0;
                for (int i = 0; i < cells; i++) {
                    after_sum += c[i] ? (uint64_t)1 << c[i] : 0;
                    empty += !c[i];
                }
                ck_assert_uint_eq(after_sum, before_sum); /* sliding keeps the sum */
                ck_assert_int_gt(empty, 0);
                ck_assert_uint_ge(g2048_score(g, s), sc0);
                ck_assert_int_eq(game_resolve_chance(g, s, &r), 1);
                g2048_get_cells(g, s, c);
                uint64_t now = 0;
                for (int i = 0; i < cells; i++)
                    now += c[i] ? (uint64_t)1 << c[i] : 0;
                ck_assert(now - after_sum == 2 || now - after_sum == 4);
                spawned += now - after_sum;
                plies++;
            }
            ck_assert_int_gt(plies, 0);
            ck_assert_int_lt(plies, g->max_game_length);
            ck_assert_int_eq(game_legal(g, s, mask), 0);
            float z;
            game_result(g, s, &z);
            ck_assert_float_eq(z, 0.0f);
            g2048_get_cells(g, s, c);
            uint64_t sum = 0;
            for (int i = 0; i < cells; i++)
                sum += c[i] ? (uint64_t)1 << c[i] : 0;
            ck_assert_uint_eq(sum, spawned);
            ck_assert_int_eq(g->ops->ply(g, s), plies);
            free(s);
        }
        game_free(g);
    }
}
END_TEST

/* Pearson's chi-square over the 2*empty outcomes of one after-state, and over the first
 * tiles of fresh games. Fixed seeds; the bounds are the 0.999 quantiles. */
START_TEST(spawn_odds_chi_square)
{
    game *g = make(4, 4);
    game_state *s0 = board(g, "2 4 8 16 / 32 . 64 128 / . 2 4 8 / 16 32 . 64");
    ck_assert_int_eq(game_play(g, s0, G2048_DOWN), 0); /* any after-state will do */
    int out[GAME_MAX_CHANCE];
    float prob[GAME_MAX_CHANCE];
    int n = g->ops->chance_outcomes(g, s0, out, prob);
    ck_assert_int_gt(n, 4);
    game_state *s = malloc(g->state_size);
    uint8_t before[16], after[16];
    g2048_get_cells(g, s0, before);
    long count[GAME_MAX_CHANCE] = {0};
    const long N = 200000;
    rng r;
    rng_seed(&r, 2024);
    for (long k = 0; k < N; k++) {
        memcpy(s, s0, g->state_size);
        ck_assert_int_eq(game_resolve_chance(g, s, &r), 1);
        g2048_get_cells(g, s, after);
        int o = -1;
        for (int i = 0; i < 16; i++)
            if (before[i] != after[i]) {
                ck_assert_int_eq(before[i], 0);
                o = 2 * i + (after[i] == 2);
            }
        int j = 0;
        while (j < n && out[j] != o)
            j++;
        ck_assert_int_lt(j, n);
        count[j]++;
    }
    double chi = 0;
    long fours = 0;
    for (int j = 0; j < n; j++) {
        double e = N * (double)prob[j];
        chi += (count[j] - e) * (count[j] - e) / e;
        if (out[j] & 1)
            fours += count[j];
    }
    /* n - 1 degrees of freedom (3 empty cells: n = 6); the 0.999 quantile for df = 5 */
    ck_assert_int_eq(n, 6);
    ck_assert_msg(chi < 20.52, "chi-square %.2f over %d outcomes", chi, n);
    ck_assert_msg(fabs((double)fours / N - 0.1) < 0.004, "4s: %.4f", (double)fours / N);
    /* the start position: 2s and 4s among the 2 x 20000 first tiles, 1 df */
    long t2 = 0, t4 = 0;
    for (int k = 0; k < 20000; k++) {
        game_state *st = game_state_new(g, &r);
        uint8_t c[16];
        g2048_get_cells(g, st, c);
        for (int i = 0; i < 16; i++) {
            t2 += c[i] == 1;
            t4 += c[i] == 2;
        }
        free(st);
    }
    double e2 = 0.9 * (t2 + t4), e4 = 0.1 * (t2 + t4);
    double chi1 = (t2 - e2) * (t2 - e2) / e2 + (t4 - e4) * (t4 - e4) / e4;
    ck_assert_int_eq(t2 + t4, 40000);
    ck_assert_msg(chi1 < 10.83, "chi-square %.2f (2s %ld, 4s %ld)", chi1, t2, t4);
    free(s);
    free(s0);
    game_free(g);
}
END_TEST

/* Symmetries: playing the image of a move on the image of a board gives the image of
 * the result (the after-states, before any spawn), and legal moves map likewise. */
START_TEST(symmetry_maps_states_and_moves)
{
    int shapes[][2] = {{4, 4}, {3, 3}, {3, 5}, {2, 4}};
    int want_nsym[] = {8, 8, 4, 4};
    rng r;
    rng_seed(&r, 3);
    for (int t = 0; t < 4; t++) {
        game *g = make(shapes[t][0], shapes[t][1]);
        ck_assert_int_eq(g->nsym, want_nsym[t]);
        int hw = g->rows * g->cols, np = g->planes;
        float *p1 = malloc(sizeof(float) * np * hw), *p2 = malloc(sizeof(float) * np * hw);
        float *p3 = malloc(sizeof(float) * np * hw);
        game_state *s = malloc(g->state_size), *m = malloc(g->state_size);
        for (int k = 0; k < 200; k++) {
            uint8_t c[G2048_MAX_CELLS], mc[G2048_MAX_CELLS];
            for (int i = 0; i < hw; i++)
                c[i] = rng_below(&r, 3) ? (uint8_t)rng_below(&r, 4) : 0;
            for (int e = 0; e < g->nsym; e++) {
                sym_id sy = g->sym[e];
                /* the image board: cell i goes to s(i) */
                for (int i = 0; i < hw; i++) {
                    int r2, c2;
                    sym_map_point(sy, g->rows, g->cols, i / g->cols, i % g->cols, &r2, &c2);
                    mc[r2 * g->cols + c2] = c[i];
                }
                g2048_set(g, s, c, 0, 0);
                g2048_set(g, m, mc, 0, 0);
                game_encode(g, s, p1);
                sym_map_planes_f32(g, sy, np, p1, p2);
                game_encode(g, m, p3);
                ck_assert(memcmp(p2, p3, sizeof(float) * np * hw) == 0);
                ck_assert_uint_eq(game_hash(g, m) == game_hash(g, s), memcmp(c, mc, hw) == 0);
                uint8_t ls[4], lm[4], lmap[4];
                game_legal(g, s, ls);
                game_legal(g, m, lm);
                sym_map_policy_u8(g, sy, ls, lmap);
                ck_assert(memcmp(lm, lmap, 4) == 0);
                for (int a = 0; a < 4; a++) {
                    if (!ls[a])
                        continue;
                    int b = sym_map_action(g, sy, a);
                    g2048_set(g, s, c, 0, 0);
                    g2048_set(g, m, mc, 0, 0);
                    ck_assert_int_eq(game_play(g, s, a), 0);
                    ck_assert_int_eq(game_play(g, m, b), 0);
                    ck_assert_uint_eq(g2048_score(g, s), g2048_score(g, m));
                    game_encode(g, s, p1);
                    sym_map_planes_f32(g, sy, np, p1, p2);
                    game_encode(g, m, p3);
                    ck_assert_msg(memcmp(p2, p3, sizeof(float) * np * hw) == 0, "%dx%d %s move %d",
                                  g->rows, g->cols, sym_name(sy), a);
                }
            }
        }
        /* the inverse element maps a move back */
        for (int e = 0; e < g->nsym; e++)
            for (int a = 0; a < 4; a++)
                ck_assert_int_eq(sym_map_action(g, sym_inverse(g->sym[e]), sym_map_action(g, g->sym[e], a)), a);
        free(p1), free(p2), free(p3), free(s), free(m);
        game_free(g);
    }
    /* by name: a clockwise quarter turn takes up to right, left to up */
    game *g = make(4, 4);
    ck_assert_int_eq(sym_map_action(g, SYM_ROT90, G2048_UP), G2048_RIGHT);
    ck_assert_int_eq(sym_map_action(g, SYM_ROT90, G2048_LEFT), G2048_UP);
    ck_assert_int_eq(sym_map_action(g, SYM_FLIP_H, G2048_LEFT), G2048_RIGHT);
    ck_assert_int_eq(sym_map_action(g, SYM_FLIP_H, G2048_UP), G2048_UP);
    ck_assert_int_eq(sym_map_action(g, SYM_TRANSPOSE, G2048_UP), G2048_LEFT);
    game_free(g);
}
END_TEST

START_TEST(encoding_planes)
{
    game *g = make(3, 3);
    ck_assert_int_eq(g->planes, 18);
    uint8_t c[9] = {0, 1, 2, 11, 15, 16, 17, 20, 0};
    game_state *s = malloc(g->state_size);
    g2048_set(g, s, c, 0, 0);
    float p[18 * 9];
    game_encode(g, s, p);
    for (int i = 0; i < 9; i++) {
        int want = c[i] == 0 ? 0 : c[i] < 16 ? c[i] : 16;
        for (int pl = 0; pl < 17; pl++)
            ck_assert_float_eq(p[pl * 9 + i], pl == want ? 1.0f : 0.0f);
        ck_assert_float_eq(p[17 * 9 + i], 1.0f);
    }
    free(s);
    game_free(g);
}
END_TEST

START_TEST(notation_render_hash)
{
    game *g = make(4, 4);
    const char *ok[] = {"u", "d", "l", "r", "U", "up", "DOWN", "Left", "right"};
    int want[] = {0, 1, 2, 3, 0, 0, 1, 2, 3};
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(move_of(g, ok[i]), want[i]);
    const char *bad[] = {"", "x", "upp", "w", "1", "u "};
    for (int i = 0; i < 6; i++) {
        int a;
        char err[128];
        ck_assert_int_eq(g->ops->parse_move(g, bad[i], &a, err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "u, d, l or r"));
    }
    char buf[8];
    for (int a = 0; a < 4; a++)
        ck_assert_int_eq(move_of(g, g->ops->format_move(g, a, buf, sizeof buf)), a);
    game_state *s = board(g, "2 . . 2048 / . . . . / . . 4 . / . . . 65536");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    g->ops->render(g, s, f);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "2048"));
    ck_assert_ptr_nonnull(strstr(text, "65536"));
    ck_assert_ptr_nonnull(strstr(text, "score 0"));
    free(text);
    ck_assert_int_eq(g->ops->best_tile(g, s), 16);
    /* the same board reached two ways hashes alike; the after-state differs */
    game_state *a = board(g, "2 2 . . / . . . . / . . . . / . . . .");
    game_state *b = board(g, ". . 2 2 / . . . . / . . . . / . . . .");
    ck_assert_int_eq(game_play(g, a, G2048_LEFT), 0);
    ck_assert_int_eq(game_play(g, b, G2048_LEFT), 0);
    ck_assert_uint_eq(game_hash(g, a), game_hash(g, b));
    game_state *c = board(g, "4 . . . / . . . . / . . . . / . . . .");
    ck_assert_uint_ne(game_hash(g, a), game_hash(g, c)); /* a tile spawns next in a */
    free(a), free(b), free(c), free(s);
    game_free(g);
}
END_TEST

static int parse_rc(const char *json, char *err, size_t errlen)
{
    gz_config c;
    return cfg_parse(&c, json, "test.json", err, errlen);
}

START_TEST(config_checks)
{
    char err[512];
    gz_config c;
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"2048\"}}", "t", err, sizeof err), 0);
    ck_assert_int_eq(c.game.rows, 4);
    ck_assert_int_eq(c.game.cols, 4);
    ck_assert_int_eq(c.game.players, 1);
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"2048\", \"rows\": 3, \"cols\": 3}}", "t",
                               err, sizeof err), 0);
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(g->players, 1);
    ck_assert_int_eq(g->actions, 4);
    ck_assert_int_eq(g->max_chance, 18);
    game_free(g);
    /* two players, a board too small or too big: refused naming the key */
    ck_assert_int_eq(parse_rc("{\"game\": {\"name\": \"2048\", \"players\": 2}}", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "game.players"));
    ck_assert_int_eq(parse_rc("{\"game\": {\"name\": \"2048\", \"rows\": 1}}", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "game.rows"));
    ck_assert_int_eq(parse_rc("{\"game\": {\"name\": \"2048\", \"cols\": 9}}", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "game.cols"));
    ck_assert_int_eq(parse_rc("{\"game\": {\"name\": \"2048\", \"k\": 3}}", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "game.k"));
    /* game_new's own checks, for configs made by hand */
    cfg_defaults(&c, "2048");
    c.game.players = 2;
    ck_assert_ptr_null(game_new(&c.game, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "game.players"));
    /* the other games keep their defaults */
    cfg_defaults(&c, "mnk");
    ck_assert_int_eq(c.game.rows, 15);
    ck_assert_int_eq(c.game.players, 3);
    cfg_defaults(&c, "sanling");
    ck_assert_int_eq(c.game.players, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("g2048");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, slide_lines);
    tcase_add_test(tc, board_moves_each_direction);
    tcase_add_test(tc, legal_moves_and_game_end);
    tcase_add_test(tc, random_games_keep_invariants);
    tcase_add_test(tc, spawn_odds_chi_square);
    tcase_add_test(tc, symmetry_maps_states_and_moves);
    tcase_add_test(tc, encoding_planes);
    tcase_add_test(tc, notation_render_hash);
    tcase_add_test(tc, config_checks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
