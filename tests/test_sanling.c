/* Rules of Sanling (DESIGN.md §2.2): the lattice's neighbours, the incremental frontier
 * against a from-scratch dilation, triangle scoring of both orientations, tie-breaks,
 * outcome vectors for two and three players, game length, illegal moves, notation and
 * Zobrist transpositions. Positions are drawn as diagrams (sanling_setup): row 0 at the
 * top, each row half a point right of the one above. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/sanling.h"

/* Check's ck_assert writes to its pipe on every call, even on success; loops over
 * every point of every ply check with this instead and only call Check on a failure. */
#define REQUIRE(cond, ...)                                                                  \
    do {                                                                                    \
        if (!(cond))                                                                        \
            ck_abort_msg(__VA_ARGS__);                                                      \
    } while (0)

static game *make(int n, int players, int moves)
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

static game_state *setup(const game *g, const char *diagram)
{
    game_state *s = malloc(g->state_size);
    char err[256];
    ck_assert_msg(sanling_setup(g, s, diagram, err, sizeof err) == 0, "%s", err);
    return s;
}

/* The test's own reading of a position, from the encoding only: owner[i] = -1 empty,
 * -2 neutral, else the absolute player. */
static void read_board(const game *g, const game_state *s, int *owner, float *frontier_plane)
{
    int hw = g->actions, np = g->players;
    static float pl[(GAME_MAX_PLAYERS + 4) * GAME_MAX_CELLS];
    game_encode(g, s, pl);
    int me = game_current_player(g, s);
    for (int i = 0; i < hw; i++) {
        owner[i] = pl[np * hw + i] == 1.0f ? -2 : -1;
        for (int k = 0; k < np; k++)
            if (pl[k * hw + i] == 1.0f) {
                REQUIRE(owner[i] == -1, "two stones on point %d", i);
                owner[i] = (me + k) % np;
            }
        if (frontier_plane)
            frontier_plane[i] = pl[(np + 1) * hw + i];
    }
}

static bool adjacent(int n, int a, int b)
{
    int dr = b / n - a / n, dc = b % n - a % n;
    return (dr == 0 && (dc == 1 || dc == -1)) || (dc == 0 && (dr == 1 || dr == -1)) ||
           (dr == -1 && dc == 1) || (dr == 1 && dc == -1);
}

/* Both triangle shapes counted over the whole board. */
static void count_triangles(int n, const int *owner, int *tri)
{
    for (int p = 0; p < 3; p++)
        tri[p] = 0;
    for (int r = 0; r + 1 < n; r++)
        for (int c = 0; c + 1 < n; c++) {
            int a = owner[r * n + c], b = owner[r * n + c + 1], d = owner[(r + 1) * n + c],
                e = owner[(r + 1) * n + c + 1];
            if (a >= 0 && a == b && a == d)
                tri[a]++; /* (r,c) (r,c+1) (r+1,c): points down */
            if (b >= 0 && b == d && b == e)
                tri[b]++; /* (r,c+1) (r+1,c) (r+1,c+1): points up */
        }
}

START_TEST(neighbour_sets)
{
    int sizes[] = {5, 64};
    for (int t = 0; t < 2; t++) {
        int n = sizes[t];
        game *g = make(n, 3, 10);
        int out[6];
        /* interior (2,2): (1,2) (3,2) (2,1) (2,3) (1,3) (3,1) */
        int k = sanling_neighbours(g, 2 * n + 2, out);
        ck_assert_int_eq(k, 6);
        int want[6] = {2 * n + 3, 1 * n + 3, 1 * n + 2, 2 * n + 1, 3 * n + 1, 3 * n + 2};
        for (int i = 0; i < 6; i++)
            ck_assert_int_eq(out[i], want[i]);
        /* the two non-neighbours of the rhombus lattice */
        for (int i = 0; i < 6; i++) {
            ck_assert_int_ne(out[i], 1 * n + 1);
            ck_assert_int_ne(out[i], 3 * n + 3);
        }
        /* corners: the acute ones have 2 neighbours, the obtuse ones 3 */
        ck_assert_int_eq(sanling_neighbours(g, 0, out), 2);
        ck_assert_int_eq(out[0], 1);
        ck_assert_int_eq(out[1], n);
        ck_assert_int_eq(sanling_neighbours(g, n * n - 1, out), 2);
        ck_assert_int_eq(out[0], n * n - 1 - n);
        ck_assert_int_eq(out[1], n * n - 2);
        ck_assert_int_eq(sanling_neighbours(g, n - 1, out), 3);
        ck_assert_int_eq(out[0], n - 2);
        ck_assert_int_eq(out[1], 2 * n - 2);
        ck_assert_int_eq(out[2], 2 * n - 1);
        ck_assert_int_eq(sanling_neighbours(g, (n - 1) * n, out), 3);
        ck_assert_int_eq(out[0], (n - 1) * n + 1);
        ck_assert_int_eq(out[1], (n - 2) * n + 1);
        ck_assert_int_eq(out[2], (n - 2) * n);
        /* edges (not corners) have 4 */
        ck_assert_int_eq(sanling_neighbours(g, 2, out), 4);                 /* top */
        ck_assert_int_eq(sanling_neighbours(g, (n - 1) * n + 2, out), 4);   /* bottom */
        ck_assert_int_eq(sanling_neighbours(g, 2 * n, out), 4);             /* left */
        ck_assert_int_eq(sanling_neighbours(g, 2 * n + n - 1, out), 4);     /* right */
        /* every point: the list is exactly the adjacent on-board points */
        for (int a = 0; a < n * n; a++) {
            k = sanling_neighbours(g, a, out);
            int count = 0;
            for (int b = 0; b < n * n; b++)
                count += adjacent(n, a, b);
            REQUIRE(k == count, "point %d: %d neighbours, want %d", a, k, count);
            for (int i = 0; i < k; i++)
                REQUIRE(adjacent(n, a, out[i]), "point %d: %d is no neighbour", a, out[i]);
        }
        game_free(g);
    }
}
END_TEST

/* Random games: after every move the frontier plane and the legal mask equal the
 * dilation of the stones, minus the stones; triangles equal a full recount. */
START_TEST(frontier_is_dilation)
{
    struct { int n, players, moves; } cases[] = {
        {5, 2, 24}, {5, 3, 24}, {6, 3, 35}, {8, 2, 63}, {13, 3, 36}, {13, 2, 168}, {64, 3, 500},
        {64, 2, 300}};
    rng r;
    rng_seed(&r, 12345);
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        game *g = make(cases[t].n, cases[t].players, cases[t].moves);
        int n = cases[t].n, hw = n * n;
        game_state *s = malloc(g->state_size);
        int *owner = malloc(sizeof(int) * (size_t)hw);
        float *fp = malloc(sizeof(float) * (size_t)hw);
        uint8_t *mask = malloc((size_t)hw);
        int8_t *cells = malloc((size_t)hw);
        for (int game_no = 0; game_no < 2; game_no++) {
            game_init(g, s, NULL);
            for (int ply = 0;; ply++) {
                ck_assert_int_eq(g->ops->ply(g, s), ply);
                ck_assert_int_eq(game_current_player(g, s), ply % cases[t].players);
                read_board(g, s, owner, fp);
                /* the cells op (what a board drawing shows) agrees with the encoding */
                g->ops->cells(g, s, cells);
                for (int a = 0; a < hw; a++)
                    REQUIRE(cells[a] == owner[a], "cells: N=%d ply %d point %d", n, ply, a);
                int nlegal = game_legal(g, s, mask), nfront = 0;
                bool term = game_terminal(g, s);
                for (int a = 0; a < hw; a++) {
                    bool dil = false;
                    for (int dr = -1; dr <= 1 && owner[a] == -1; dr++)
                        for (int dc = -1; dc <= 1; dc++) {
                            int r2 = a / n + dr, c2 = a % n + dc;
                            if (r2 >= 0 && r2 < n && c2 >= 0 && c2 < n &&
                                adjacent(n, a, r2 * n + c2) && owner[r2 * n + c2] != -1)
                                dil = true;
                        }
                    REQUIRE(fp[a] == (dil ? 1.0f : 0.0f), "frontier: N=%d ply %d point %d", n, ply, a);
                    REQUIRE(mask[a] == (term ? 0 : dil), "legal: N=%d ply %d point %d", n, ply, a);
                    nfront += dil;
                }
                ck_assert_int_eq(nlegal, term ? 0 : nfront);
                int tri[3], grp[3], want[3];
                sanling_score(g, s, tri, grp);
                count_triangles(n, owner, want);
                for (int p = 0; p < cases[t].players; p++)
                    ck_assert_int_eq(tri[p], want[p]);
                if (term) {
                    ck_assert_int_eq(ply, cases[t].moves);
                    break;
                }
                uint32_t pick = rng_below(&r, (uint32_t)nlegal);
                int a = 0;
                while (!mask[a] || pick--)
                    a++;
                ck_assert_int_eq(game_play(g, s, a), 0);
            }
        }
        free(cells);
        free(mask);
        free(fp);
        free(owner);
        free(s);
        game_free(g);
    }
}
END_TEST

START_TEST(triangles_both_orientations)
{
    game *g = make(5, 2, 6);
    /* X: (1,1) (1,2) (2,1), a triangle pointing down; O: (2,3) (3,2) (3,3) pointing up. */
    game_state *s = setup(g, ". . . . ."
                             ". X X . ."
                             ". X * O ."
                             ". . O O ."
                             ". . . . .");
    int tri[3], grp[3];
    sanling_score(g, s, tri, grp);
    ck_assert_int_eq(tri[0], 1);
    ck_assert_int_eq(tri[1], 1);
    ck_assert_int_eq(grp[0], 3);
    ck_assert_int_eq(grp[1], 3);
    free(s);
    /* (1,1) (1,2) (2,2) is not a triangle: (1,1) and (2,2) are not neighbours. */
    s = setup(g, ". . . . ."
                 ". X X . ."
                 ". . * . ."
                 ". . . . ."
                 ". . . . .");
    sanling_score(g, s, tri, grp);
    ck_assert_int_eq(tri[0], 0);
    free(s);
    game_free(g);

    /* A filled hexagon around a point has 6 triangles; a rhombus of 4 has 2. */
    g = make(7, 3, 20);
    s = setup(g, ". . . . . . ."
                 ". . X X . . ."
                 ". X X X . . ."
                 ". X X * . . ."
                 ". . . . . . ."
                 ". . . . O O ."
                 ". . . . O O .");
    sanling_score(g, s, tri, grp);
    ck_assert_int_eq(tri[0], 6);
    ck_assert_int_eq(grp[0], 7);
    ck_assert_int_eq(tri[1], 2);
    ck_assert_int_eq(grp[1], 4);
    ck_assert_int_eq(tri[2], 0);
    ck_assert_int_eq(grp[2], 0);
    free(s);
    game_free(g);
}
END_TEST

/* Outcome of a finished diagram position; moves = its stone count so it is terminal. */
static void outcome(int n, int players, int stones, const char *diagram, const float *want)
{
    game *g = make(n, players, stones);
    game_state *s = setup(g, diagram);
    ck_assert(game_terminal(g, s));
    float z[3];
    game_result(g, s, z);
    for (int p = 0; p < players; p++)
        ck_assert_msg(z[p] > want[p] - 1e-6f && z[p] < want[p] + 1e-6f, "player %d: z %g, want %g", p,
                      z[p], want[p]);
    free(s);
    game_free(g);
}

START_TEST(tie_breaks_two_players)
{
    /* 1 triangle each, groups 3 and 3: shared. */
    outcome(5, 2, 6,
            ". . . . ."
            ". X X . ."
            ". X * O ."
            ". . O O ."
            ". . . . .",
            (float[]){0, 0});
    /* 1 triangle each; X's group has 4, O's 3: X wins. */
    outcome(5, 2, 8,
            ". . . . ."
            ". X X X ."
            ". X * O ."
            ". . O O ."
            "O . . . .",
            (float[]){1, -1});
    /* O has more triangles and a smaller group: triangles come first. */
    outcome(5, 2, 11,
            "X X X X X"
            "X . . . ."
            ". . * O O"
            ". . O O O"
            ". . . . .",
            (float[]){-1, 1});
}
END_TEST

START_TEST(outcomes_three_players)
{
    /* distinct scores: X 2 triangles, O 1, V 0 */
    outcome(7, 3, 9,
            "X X . . O O ."
            "X X . . O . ."
            ". . . . . . ."
            ". . . * . . ."
            ". . . . . . ."
            ". . . . . . V"
            ". . . . . . V",
            (float[]){1, 0, -1});
    /* all tied: one triangle and a group of 3 each */
    outcome(7, 3, 9,
            "X X . . O O ."
            "X . . . O . ."
            ". . . . . . ."
            ". . . * . . ."
            ". . . . . . ."
            ". . . . . . V"
            ". . . . . V V",
            (float[]){0, 0, 0});
    /* two tied first, the third last */
    outcome(7, 3, 8,
            "X X . . O O ."
            "X . . . O . ."
            ". . . . . . ."
            ". . . * . . ."
            ". . . . . . ."
            ". . . . . . V"
            ". . . . . . V",
            (float[]){0.5f, 0.5f, -1});
    /* the first alone, two tied last */
    outcome(7, 3, 8,
            "X X . . O O ."
            "X X . . . . ."
            ". . . . . . ."
            ". . . * . . ."
            ". . . . . . ."
            ". . . . . . V"
            ". . . . . . V",
            (float[]){1, -0.5f, -0.5f});
    /* equal triangles, the group decides between all three: V 5, O 4, X 3 */
    outcome(7, 3, 12,
            "X X . . O O O"
            "X . . . O . ."
            ". . . . . . ."
            ". . . * . . ."
            ". . . . . . V"
            ". . . . . . V"
            ". . . . V V V",
            (float[]){-1, 0, 1});
}
END_TEST

START_TEST(outcomes_sum_and_range)
{
    /* Random finished games: 2 players sum to 0 with values in {-1, 0, 1}; 3 players
     * sum to 0 too (places are symmetric around the middle). */
    rng r;
    rng_seed(&r, 99);
    for (int players = 2; players <= 3; players++) {
        game *g = make(9, players, 36);
        game_state *s = malloc(g->state_size);
        for (int i = 0; i < 50; i++) {
            game_init(g, s, NULL);
            float z[3];
            int plies = game_random_playout(g, s, &r, z);
            ck_assert_int_eq(plies, 36);
            float sum = 0;
            for (int p = 0; p < players; p++) {
                ck_assert(z[p] >= -1.0f && z[p] <= 1.0f);
                sum += z[p];
            }
            ck_assert(sum > -1e-5f && sum < 1e-5f);
        }
        free(s);
        game_free(g);
    }
}
END_TEST

START_TEST(game_ends_after_moves)
{
    /* moves = every free point of a 5x5 board: the board fills and the game ends. */
    int counts[] = {1, 7, 24};
    rng r;
    rng_seed(&r, 5);
    for (int t = 0; t < 3; t++) {
        game *g = make(5, 3, counts[t]);
        game_state *s = game_state_new(g, NULL);
        float z[3];
        ck_assert_int_eq(game_random_playout(g, s, &r, z), counts[t]);
        ck_assert(game_terminal(g, s));
        ck_assert_int_eq(g->ops->ply(g, s), counts[t]);
        uint8_t mask[25];
        ck_assert_int_eq(game_legal(g, s, mask), 0);
        for (int a = 0; a < 25; a++) {
            ck_assert_int_eq(mask[a], 0);
            ck_assert_int_eq(game_play(g, s, a), -1);
        }
        free(s);
        game_free(g);
    }
}
END_TEST

START_TEST(illegal_moves_rejected)
{
    game *g = make(7, 3, 36);
    game_state *s = game_state_new(g, NULL);
    game_state *before = malloc(g->state_size);
    int centre = 3 * 7 + 3;
    uint8_t mask[49];
    ck_assert_int_eq(game_legal(g, s, mask), 6);
    int bad[] = {-1, 49, 1000, centre, 0, 3 * 7 + 5, 2 * 7 + 2, 4 * 7 + 4};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memcpy(before, s, g->state_size);
        ck_assert_msg(game_play(g, s, bad[i]) == -1, "accepted %d", bad[i]);
        ck_assert(memcmp(before, s, g->state_size) == 0);
    }
    ck_assert_int_eq(game_play(g, s, centre + 1), 0);
    ck_assert_int_eq(game_play(g, s, centre + 1), -1); /* occupied */
    ck_assert_int_eq(game_play(g, s, centre + 2), 0);  /* the frontier grew */
    ck_assert_int_eq(game_current_player(g, s), 2);
    free(before);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(notation_round_trip)
{
    int sizes[] = {5, 13, 27, 64};
    for (int t = 0; t < 4; t++) {
        int n = sizes[t];
        game *g = make(n, 2, 10);
        for (int a = 0; a < n * n; a++) {
            char buf[16], err[128];
            int b = -1;
            g->ops->format_move(g, a, buf, sizeof buf);
            REQUIRE(g->ops->parse_move(g, buf, &b, err, sizeof err) == 0, "%s", err);
            REQUIRE(a == b, "%s: %d != %d", buf, a, b);
        }
        game_free(g);
    }
    game *g = make(64, 3, 36);
    char buf[16], err[128];
    int a;
    ck_assert_str_eq(g->ops->format_move(g, 0, buf, sizeof buf), "a1");
    ck_assert_str_eq(g->ops->format_move(g, 25, buf, sizeof buf), "z1");
    ck_assert_str_eq(g->ops->format_move(g, 26, buf, sizeof buf), "aa1");
    ck_assert_str_eq(g->ops->format_move(g, 52, buf, sizeof buf), "ba1");
    ck_assert_str_eq(g->ops->format_move(g, 64 * 64 - 1, buf, sizeof buf), "bl64");
    ck_assert_int_eq(g->ops->parse_move(g, "C2", &a, err, sizeof err), 0);
    ck_assert_int_eq(a, 64 + 2);
    ck_assert_int_eq(g->ops->parse_move(g, " ab10 ", &a, err, sizeof err), 0);
    ck_assert_int_eq(a, 9 * 64 + 27);
    const char *bad[] = {"", "a", "1", "a0", "a65", "bm1", "a01", "1a", "a1b", "aaa1", "a-1", "a 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(g->ops->parse_move(g, bad[i], &a, err, sizeof err) == -1, "accepted \"%s\"",
                      bad[i]);
    game_free(g);
    g = make(5, 3, 10);
    ck_assert_int_eq(g->ops->parse_move(g, "e5", &a, err, sizeof err), 0);
    ck_assert_int_eq(a, 24);
    ck_assert_int_eq(g->ops->parse_move(g, "f1", &a, err, sizeof err), -1);
    ck_assert_int_eq(g->ops->parse_move(g, "a6", &a, err, sizeof err), -1);
    game_free(g);
}
END_TEST

static game_state *play_seq(const game *g, const int *moves, int n)
{
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(game_play(g, s, moves[i]), 0);
    return s;
}

START_TEST(zobrist_transposition)
{
    game *g = make(7, 3, 36);
    int c = 3 * 7 + 3;
    int nb[6];
    ck_assert_int_eq(sanling_neighbours(g, c, nb), 6);
    /* X plays nb0 and nb3, O nb1 and nb4, V nb2 and nb5, in two orders. */
    int m1[] = {nb[0], nb[1], nb[2], nb[3], nb[4], nb[5]};
    int m2[] = {nb[3], nb[4], nb[5], nb[0], nb[1], nb[2]};
    int m3[] = {nb[3], nb[1], nb[2], nb[0], nb[4], nb[5]};
    /* the same points, but X and O swapped */
    int m4[] = {nb[1], nb[0], nb[2], nb[4], nb[3], nb[5]};
    game_state *a = play_seq(g, m1, 6), *b = play_seq(g, m2, 6), *d = play_seq(g, m3, 6),
               *e = play_seq(g, m4, 6), *f = play_seq(g, m1, 5);
    ck_assert_uint_eq(game_hash(g, a), game_hash(g, b));
    ck_assert_uint_eq(game_hash(g, a), game_hash(g, d));
    ck_assert(memcmp(a, b, g->state_size) == 0);
    ck_assert_uint_ne(game_hash(g, a), game_hash(g, e));
    ck_assert_uint_ne(game_hash(g, a), game_hash(g, f));
    /* a setup of the same position hashes the same */
    char diagram[64];
    memset(diagram, '.', 49);
    diagram[49] = 0;
    diagram[c] = '*';
    for (int i = 0; i < 6; i++)
        diagram[m1[i]] = "XOV"[i % 3];
    game_state *h = setup(g, diagram);
    ck_assert_uint_eq(game_hash(g, a), game_hash(g, h));
    ck_assert(memcmp(a, h, g->state_size) == 0);
    free(a);
    free(b);
    free(d);
    free(e);
    free(f);
    free(h);
    game_free(g);
}
END_TEST

START_TEST(encode_point_of_view)
{
    game *g = make(5, 3, 10);
    ck_assert_int_eq(g->planes, 7);
    int c = 12;
    game_state *s = play_seq(g, (int[]){c + 1, c - 1}, 2); /* X then O; V to move */
    float p[7 * 25];
    game_encode(g, s, p);
    ck_assert_float_eq(p[0 * 25 + c + 1], 0.0f);
    ck_assert_float_eq(p[1 * 25 + c + 1], 1.0f); /* X moves next after V */
    ck_assert_float_eq(p[2 * 25 + c - 1], 1.0f); /* O is the one after */
    ck_assert_float_eq(p[3 * 25 + c], 1.0f);     /* neutral */
    ck_assert_float_eq(p[4 * 25 + c + 2], 1.0f); /* frontier */
    ck_assert_float_eq(p[4 * 25 + c + 1], 0.0f);
    for (int i = 0; i < 25; i++) {
        ck_assert_float_eq_tol(p[5 * 25 + i], 0.2f, 1e-6f); /* 2 of 10 moves */
        ck_assert_float_eq(p[6 * 25 + i], 1.0f);
    }
    free(s);
    game_free(g);
    g = make(5, 2, 10);
    ck_assert_int_eq(g->planes, 6);
    game_free(g);
}
END_TEST

START_TEST(symmetry_group_declared)
{
    game *g = make(13, 3, 36);
    ck_assert_int_eq(g->lattice, GAME_LATTICE_HEX);
    ck_assert_int_eq(g->nsym, 4);
    game_free(g);
    g = make(12, 3, 36);
    ck_assert_int_eq(g->nsym, 2);
    ck_assert_int_eq(g->sym[1], SYM_TRANSPOSE);
    game_free(g);
}
END_TEST

START_TEST(render_draws_lattice)
{
    int sizes[] = {5, 30};
    for (int t = 0; t < 2; t++) {
        game *g = make(sizes[t], 3, 10);
        game_state *s = play_seq(g, (int[]){(sizes[t] / 2) * sizes[t] + sizes[t] / 2 + 1}, 1);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        g->ops->render(g, s, f);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(buf, "X"));
        ck_assert_ptr_nonnull(strstr(buf, "*"));
        ck_assert_ptr_nonnull(strstr(buf, "O to move"));
        /* row 2 is indented one column more than row 1 */
        char *r1 = strstr(buf, "\n 1 "), *r2 = strstr(buf, "\n 2 ");
        ck_assert_ptr_nonnull(r1);
        ck_assert_ptr_nonnull(r2);
        ck_assert_int_eq(strspn(r2 + 4, " "), strspn(r1 + 4, " ") + 1);
        free(buf);
        free(s);
        game_free(g);
    }
}
END_TEST

START_TEST(setup_rejects_bad_diagrams)
{
    game *g = make(5, 2, 4);
    game_state *s = malloc(g->state_size);
    char err[128];
    const char *bad[] = {
        ". . . . . . . . . . . . * . . . . . . . . . . .",       /* 24 points */
        ". . . . . . . . . . . . . . . . . . . . . . . . .",     /* no neutral */
        "* . . . . . . . . . . . . . . . . . . . . . . . .",     /* off centre */
        ". . . . . . . . . . . X * O . . . . . . . . . . V",     /* player 2 of 2 */
        "X X X . . . . . . . . O * O . . . . . . . . . . .",     /* 5 > moves */
        ". . . . . . . . . . . . * . . . . . . . . . . . q",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(sanling_setup(g, s, bad[i], err, sizeof err) == -1, "accepted %zu", i);
    free(s);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sanling");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, neighbour_sets);
    tcase_add_test(tc, frontier_is_dilation);
    tcase_add_test(tc, triangles_both_orientations);
    tcase_add_test(tc, tie_breaks_two_players);
    tcase_add_test(tc, outcomes_three_players);
    tcase_add_test(tc, outcomes_sum_and_range);
    tcase_add_test(tc, game_ends_after_moves);
    tcase_add_test(tc, illegal_moves_rejected);
    tcase_add_test(tc, notation_round_trip);
    tcase_add_test(tc, zobrist_transposition);
    tcase_add_test(tc, encode_point_of_view);
    tcase_add_test(tc, symmetry_group_declared);
    tcase_add_test(tc, render_draws_lattice);
    tcase_add_test(tc, setup_rejects_bad_diagrams);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
