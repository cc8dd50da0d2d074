/* Players: spec parsing and errors, the random player, the alpha-beta engine's
 * immediate wins and forced blocks on hand-made Gomoku boards, and its strength against
 * random. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "engine/arena.h"
#include "engine/config.h"
#include "engine/game.h"
#include "engine/player.h"

static gz_config cfg;

static game *make_mnk(int rows, int cols, int k)
{
    cfg_defaults(&cfg, "mnk");
    cfg.game.rows = rows;
    cfg.game.cols = cols;
    cfg.game.k = k;
    char err[256];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

static int parse(const game *g, const char *mv)
{
    int a;
    char err[128];
    ck_assert_msg(g->ops->parse_move(g, mv, &a, err, sizeof err) == 0, "%s", err);
    return a;
}

/* Black and white stones played alternately, black first: nb == nw (black to move) or
 * nb == nw + 1 (white to move). Returns the state (free with free()). */
static game_state *setup(const game *g, const char *const *black, int nb, const char *const *white,
                         int nw)
{
    ck_assert(nb == nw || nb == nw + 1);
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < nb; i++) {
        ck_assert_int_eq(game_play(g, s, parse(g, black[i])), 0);
        if (i < nw)
            ck_assert_int_eq(game_play(g, s, parse(g, white[i])), 0);
        ck_assert(!game_terminal(g, s));
    }
    return s;
}

static int choose(player *p, const game_state *s)
{
    rng r;
    rng_seed(&r, 7);
    char err[256];
    player_reset(p);
    int a = player_choose(p, s, &r, NULL, err, sizeof err);
    ck_assert_msg(a >= 0, "%s", err);
    return a;
}

static player *make_player(const char *spec, const game *g)
{
    char err[512];
    player *p = player_new(spec, g, &cfg, NULL, err, sizeof err);
    ck_assert_msg(p != NULL, "%s: %s", spec, err);
    return p;
}

START_TEST(bad_specs_name_the_spec)
{
    game *g = make_mnk(15, 15, 5);
    const char *bad[] = {"", "foo", "random:3", "alphabeta:x", "alphabeta:0", "alphabeta:-2",
                         "alphabeta:99", "alphabeta:s", "alphabeta:-1s", "alphabeta:4q"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[512] = "";
        player *p = player_new(bad[i], g, &cfg, NULL, err, sizeof err);
        ck_assert_msg(p == NULL, "spec \"%s\" accepted", bad[i]);
        char quoted[160];
        snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
        ck_assert_msg(strstr(err, quoted) != NULL, "message for %s: %s", bad[i], err);
    }
    char err[512];
    ck_assert(player_new("foo", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "unknown kind") && strstr(err, "alphabeta"), "%s", err);
    game_free(g);
}
END_TEST

static int ext_calls;
static int fake_ext(void *ctx, const char *spec, const game *g, const gz_config *c, player **out,
                    char *err, size_t errlen)
{
    (void)ctx;
    (void)c;
    ext_calls++;
    if (strncmp(spec, "model:", 6) != 0)
        return 0;
    if (!strcmp(spec, "model:"))  {
        snprintf(err, errlen, "expected model:FILE");
        return -1;
    }
    /* Stands in for the network player: reuse the random kind's table. */
    player *p = player_alloc(spec, "model", g);
    char msg[128];
    ck_assert_int_eq(player_kinds[0]->create(p, NULL, g, c, msg, sizeof msg), 0);
    *out = p;
    return 1;
}

START_TEST(extension_adds_kinds)
{
    game *g = make_mnk(3, 3, 3);
    player_ext ext = {.try = fake_ext, .syntax = "model:FILE[:sims]", .ctx = NULL};
    char err[512];
    player *p = player_new("model:x.h5", g, &cfg, &ext, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_str_eq(p->name, "model:x.h5");
    ck_assert_str_eq(p->kind, "model");
    player_free(p);
    ck_assert(player_new("model:", g, &cfg, &ext, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"model:\"") && strstr(err, "expected model:FILE"), "%s", err);
    /* Engine kinds still work through the hook; unknown kinds list the hook's syntax. */
    p = player_new("random", g, &cfg, &ext, err, sizeof err);
    ck_assert(p != NULL);
    player_free(p);
    ck_assert(player_new("nope", g, &cfg, &ext, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "model:FILE[:sims]"), "%s", err);
    game_free(g);
}
END_TEST

START_TEST(random_plays_legal_moves)
{
    game *g = make_mnk(7, 7, 4);
    player *p = make_player("random", g);
    rng r;
    rng_seed(&r, 3);
    for (int game_no = 0; game_no < 20; game_no++) {
        game_state *s = game_state_new(g, NULL);
        while (!game_terminal(g, s)) {
            char err[128];
            int a = player_choose(p, s, &r, NULL, err, sizeof err);
            ck_assert_int_eq(game_play(g, s, a), 0);
        }
        free(s);
    }
    player_free(p);
    game_free(g);
}
END_TEST

static void assert_wins_with(const game *g, player *p, const char *const *black, int nb,
                             const char *const *white, int nw, const char *const *expect, int nexp)
{
    game_state *s = setup(g, black, nb, white, nw);
    int a = choose(p, s);
    char mv[16];
    bool ok = false;
    for (int i = 0; i < nexp; i++)
        ok |= a == parse(g, expect[i]);
    ck_assert_msg(ok, "%s played %s, expected %s", p->name, g->ops->format_move(g, a, mv, sizeof mv),
                  expect[0]);
    free(s);
}

START_TEST(alphabeta_takes_immediate_wins)
{
    game *g = make_mnk(15, 15, 5);
    const char *depths[] = {"alphabeta:1", "alphabeta:2", "alphabeta"};
    for (int d = 0; d < 3; d++) {
        player *p = make_player(depths[d], g);
        /* Open four on a column. */
        const char *b1[] = {"h8", "h9", "h10", "h11"}, *w1[] = {"a1", "c1", "e1", "o15"};
        const char *e1[] = {"h7", "h12"};
        assert_wins_with(g, p, b1, 4, w1, 4, e1, 2);
        /* Diagonal from the corner: only e5 completes it. */
        const char *b2[] = {"a1", "b2", "c3", "d4"}, *w2[] = {"o15", "m15", "k15", "h13"};
        const char *e2[] = {"e5"};
        assert_wins_with(g, p, b2, 4, w2, 4, e2, 1);
        /* Split four: the gap wins. */
        const char *b3[] = {"h8", "h9", "h11", "h12"}, *w3[] = {"j1", "l1", "n1", "a15"};
        const char *e3[] = {"h10"};
        assert_wins_with(g, p, b3, 4, w3, 4, e3, 1);
        /* White to move wins on the anti-diagonal at the right edge. */
        const char *b4[] = {"a15", "c15", "e15", "g13", "b8"}, *w4[] = {"o5", "n6", "m7", "l8"};
        const char *e4[] = {"k9"};
        assert_wins_with(g, p, b4, 5, w4, 4, e4, 1);
        /* Own win beats blocking the opponent's four. */
        const char *b5[] = {"h8", "h9", "h10", "h11"}, *w5[] = {"b2", "c2", "d2", "e2"};
        const char *e5[] = {"h7", "h12"};
        game_state *s = setup(g, b5, 4, w5, 4);
        int a = choose(p, s);
        ck_assert(a == parse(g, e5[0]) || a == parse(g, e5[1]));
        free(s);
        player_free(p);
    }
    game_free(g);
}
END_TEST

START_TEST(alphabeta_blocks_immediate_losses)
{
    game *g = make_mnk(15, 15, 5);
    const char *depths[] = {"alphabeta:1", "alphabeta:2", "alphabeta", "alphabeta:0.05s"};
    for (int d = 0; d < 4; d++) {
        player *p = make_player(depths[d], g);
        /* White's closed four on row 4: only h4 stops it. */
        const char *b1[] = {"c4", "m12", "k10", "k14"}, *w1[] = {"d4", "e4", "f4", "g4"};
        const char *e1[] = {"h4"};
        assert_wins_with(g, p, b1, 4, w1, 4, e1, 1);
        /* White's four from the corner along the anti-diagonal. */
        const char *b2[] = {"a15", "c15", "e15", "g15"}, *w2[] = {"o1", "n2", "m3", "l4"};
        const char *e2[] = {"k5"};
        assert_wins_with(g, p, b2, 4, w2, 4, e2, 1);
        /* White's split four on the top edge. */
        const char *b3[] = {"a1", "c1", "e1", "g1"}, *w3[] = {"f15", "g15", "i15", "j15"};
        const char *e3[] = {"h15"};
        assert_wins_with(g, p, b3, 4, w3, 4, e3, 1);
        player_free(p);
    }
    game_free(g);
}
END_TEST

START_TEST(alphabeta_blocks_at_tictactoe)
{
    game *g = make_mnk(3, 3, 3);
    player *p = make_player("alphabeta", g);
    /* X a1, O b2, X b1: O to move must block at c1. */
    const char *b[] = {"a1", "b1"}, *w[] = {"b2"};
    const char *e[] = {"c1"};
    assert_wins_with(g, p, b, 2, w, 1, e, 1);
    player_free(p);
    game_free(g);
}
END_TEST

/* The threat player: a VCF found at the root is played (alphabeta:2 cannot see it), a
 * threatened VCF is answered, the immediate tactics of alphabeta still hold, and bad
 * specs and games are refused. Black: h8 i8 j8 (g8 white) and k6 k7, so k8 is a four
 * and an open three at once; the only VCF starts with k8. */
START_TEST(threat_player_finds_and_stops_vcf)
{
    game *g = make_mnk(15, 15, 5);
    const char *b[] = {"h8", "i8", "j8", "k6", "k7", "b14"};
    const char *w[] = {"g8", "a1", "a15", "o1", "o15"};
    const char *specs[] = {"threat:0.3s", "threat:2"};
    char err[256];
    void *ws = g->ops->threat_new(g, 14, err, sizeof err);
    for (int i = 0; i < 2; i++) {
        player *p = make_player(specs[i], g);
        ck_assert_str_eq(p->kind, "threat");
        const char *e1[] = {"k8"};
        assert_wins_with(g, p, b, 5, w, 5, e1, 1);
        /* white to move (b14 added) must answer the VCF */
        game_state *s = setup(g, b, 6, w, 5);
        uint8_t mask[225];
        ck_assert_int_gt(g->ops->threat_defend(g, s, ws, 100000, mask), 0);
        int a = choose(p, s);
        ck_assert_msg(mask[a], "%s: %d does not answer the VCF", specs[i], a);
        game_play(g, s, a);
        int pv[64];
        ck_assert_int_eq(g->ops->threat_win(g, s, ws, game_current_player(g, s), 100000, 0, pv, 64), 0);
        free(s);
        /* immediate tactics as alphabeta */
        const char *b2[] = {"c4", "m12", "k10", "k14"}, *w2[] = {"d4", "e4", "f4", "g4"};
        const char *e2[] = {"h4"};
        assert_wins_with(g, p, b2, 4, w2, 4, e2, 1);
        player_free(p);
    }
    g->ops->threat_free(ws);
    const char *bad[] = {"threat:0", "threat:x", "threat:-1s", "threat:99", "threat:s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert(player_new(bad[i], g, &cfg, NULL, err, sizeof err) == NULL);
        ck_assert_msg(strstr(err, "expected threat:"), "%s: %s", bad[i], err);
    }
    game_free(g);
    g = make_mnk(3, 3, 3);
    ck_assert(player_new("threat", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"threat\"") && strstr(err, "k = 3"), "%s", err);
    game_free(g);
}
END_TEST

static game *make_sanling(int players)
{
    cfg_defaults(&cfg, "sanling");
    cfg.game.players = players;
    char err[256];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

START_TEST(mcts_specs)
{
    game *g = make_mnk(9, 9, 5);
    const char *bad[] = {"mcts:abc", "mcts:0", "mcts:", "mcts:-5", "mcts:12x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[512] = "";
        ck_assert_msg(player_new(bad[i], g, &cfg, NULL, err, sizeof err) == NULL, "%s", bad[i]);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
        ck_assert_msg(strstr(err, quoted) && strstr(err, "mcts:N"), "%s", err);
    }
    player *p = make_player("mcts:64", g);
    ck_assert_str_eq(p->kind, "mcts");
    /* The info a hint shows: visit counts, most visited first, and root values. */
    game_state *s = game_state_new(g, NULL);
    rng r;
    rng_seed(&r, 1);
    player_info info;
    char err[256];
    int a = player_choose(p, s, &r, &info, err, sizeof err);
    ck_assert_msg(a >= 0, "%s", err);
    ck_assert_int_eq(info.action, a);
    ck_assert_int_ge(info.simulations, 64);
    ck_assert(info.has_value && info.ntop > 0);
    int sum = 0;
    for (int i = 0; i < info.ntop; i++) {
        sum += info.top[i].visits;
        if (i)
            ck_assert_int_ge(info.top[i - 1].visits, info.top[i].visits);
    }
    ck_assert_int_le(sum, info.simulations);
    /* Tree reuse through notify, then a position the tree has not seen. */
    game_state *before = malloc(g->state_size);
    game_copy(g, before, s);
    ck_assert_int_eq(game_play(g, s, a), 0);
    player_notify_move(p, before, a);
    a = player_choose(p, s, &r, NULL, err, sizeof err);
    ck_assert_int_eq(game_play(g, s, a), 0);
    game_state *fresh = game_state_new(g, NULL);
    ck_assert_int_ge(player_choose(p, fresh, &r, NULL, err, sizeof err), 0);
    free(fresh);
    free(before);
    free(s);
    player_free(p);
    game_free(g);
}
END_TEST

/* player_ctl: a search told to stop (before it starts, or by a deadline) returns a legal
 * move at once and says how far it got. */
START_TEST(ctl_stops_searches)
{
    game *g = make_mnk(9, 9, 5);
    const char *black[] = {"e5", "f6"}, *white[] = {"d4"};
    game_state *s = setup(g, black, 2, white, 1);
    uint8_t mask[81];
    game_legal(g, s, mask);
    const char *specs[] = {"mcts:20000", "alphabeta:20", "threat:20"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        for (int how = 0; how < 2; how++) {
            player *p = make_player(specs[i], g);
            player_ctl ctl = {0};
            if (how == 0)
                atomic_store(&ctl.stop, 1);
            else
                ctl.deadline = player_clock() + 0.2;
            p->ctl = &ctl;
            double t0 = player_clock();
            int a = choose(p, s);
            double took = player_clock() - t0;
            ck_assert_msg(a >= 0 && a < 81 && mask[a], "%s: action %d", specs[i], a);
            ck_assert_msg(took < (how == 0 ? 1.0 : 3.0), "%s took %.2f s", specs[i], took);
            if (how == 1 && i == 0)
                ck_assert_int_gt(atomic_load(&ctl.progress), 0);
            player_free(p);
        }
    }
    free(s);
    game_free(g);
}
END_TEST

/* A time per move (player_mcts_set_seconds, "model:FILE:Ts"): the search stops at the
 * clock with fewer simulations than its cap, and the parser takes "Ts" only. */
START_TEST(mcts_seconds_per_move)
{
    double v = 0;
    ck_assert_int_eq(player_parse_seconds("0.5s", &v), 0);
    ck_assert_double_eq(v, 0.5);
    ck_assert_int_eq(player_parse_seconds("2s", &v), 0);
    ck_assert_double_eq(v, 2.0);
    const char *bad[] = {"0s", "s", "-1s", "1", "1.5xs", "abc", "", "1e9s", "+1s", " 1s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(player_parse_seconds(bad[i], &v) < 0, "\"%s\" accepted", bad[i]);

    game *g = make_mnk(9, 9, 5);
    game_state *s = game_state_new(g, NULL);
    player *p = make_player("mcts:200000", g);
    player_mcts_set_seconds(p, 0.1);
    rng r;
    rng_seed(&r, 1);
    player_info info;
    char err[256];
    double t0 = player_clock();
    int a = player_choose(p, s, &r, &info, err, sizeof err);
    double took = player_clock() - t0;
    ck_assert_msg(a >= 0 && a < 81, "%s", err);
    ck_assert_msg(took >= 0.1 && took < 3.0, "took %.3f s", took);
    ck_assert_int_gt(info.simulations, 0);
    ck_assert_int_lt(info.simulations, 200000);
    free(s);
    player_free(p);
    game_free(g);
}
END_TEST

START_TEST(kinds_refuse_games_they_cannot_play)
{
    game *g = make_sanling(3);
    char err[512];
    ck_assert(player_new("alphabeta", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"alphabeta\"") && strstr(err, "m,n,k"), "%s", err);
    ck_assert(player_new("alphabeta:3", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"alphabeta:3\""), "%s", err);
    ck_assert(player_new("threat:1s", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"threat:1s\"") && strstr(err, "m,n,k"), "%s", err);
    player *p = player_new("random", g, &cfg, NULL, err, sizeof err);
    ck_assert(p != NULL);
    player_free(p);
    game_free(g);
}
END_TEST

START_TEST(mcts400_beats_random_at_sanling3)
{
    game *g = make_sanling(3);
    ck_assert_int_eq(g->players, 3);
    player *pl[3] = {make_player("mcts:400", g), make_player("random", g),
                     make_player("random", g)};
    arena_opts o = {.games = 12, .opening_moves = 2, .seed = 424242};
    arena_tally t[3];
    char err[512];
    ck_assert_msg(arena_run(g, pl, 3, &o, t, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(t[0].games, 12);
    /* Ranked (strictly) first in a majority of the games, from every seat. */
    ck_assert_msg(t[0].wins > 6, "mcts:400 first in only %d of 12", t[0].wins);
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(t[0].seat_games[s], 4);
    ck_assert(arena_score(&t[0], 3) > arena_score(&t[1], 3));
    for (int i = 0; i < 3; i++)
        player_free(pl[i]);
    game_free(g);
}
END_TEST

/* Plays a match from the empty board (no random openings) and returns the tallies. */
static void match(const game *g, const char *a, const char *b, int games, uint64_t seed,
                  arena_tally t[2])
{
    player *pl[2] = {make_player(a, g), make_player(b, g)};
    arena_opts o = {.games = games, .opening_moves = 0, .seed = seed};
    char err[512];
    ck_assert_msg(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0, "%s", err);
    player_free(pl[0]);
    player_free(pl[1]);
}

START_TEST(perfect_at_tictactoe)
{
    game *g = make_mnk(3, 3, 3);
    arena_tally t[2];
    match(g, "perfect", "random", 400, 11, t);
    ck_assert_int_eq(t[0].losses, 0);
    ck_assert_int_gt(t[0].wins, 300);
    match(g, "perfect", "perfect", 40, 12, t);
    ck_assert_int_eq(t[0].draws, 40);
    /* The alpha-beta engine at depth 4 sees tic-tac-toe to the end: it holds the draw. */
    match(g, "perfect", "alphabeta", 20, 13, t);
    ck_assert_int_eq(t[0].draws, 20);
    /* The player says what the solver knows: every optimal move, the exact value. */
    player *p = make_player("perfect", g);
    game_state *s = game_state_new(g, NULL);
    rng r;
    rng_seed(&r, 1);
    player_info info;
    char err[256];
    ck_assert(player_choose(p, s, &r, &info, err, sizeof err) >= 0);
    ck_assert(info.has_value);
    ck_assert_float_eq(info.value[0], 0.0f);
    ck_assert_int_eq(info.ntop, 9); /* every first move draws */
    free(s);
    player_free(p);
    game_free(g);
}
END_TEST

START_TEST(perfect_refuses_big_boards)
{
    game *g = make_mnk(15, 15, 5);
    char err[512];
    ck_assert(player_new("perfect", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"perfect\"") && strstr(err, "solver"), "%s", err);
    game_free(g);
    g = make_sanling(3);
    ck_assert(player_new("perfect", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"perfect\""), "%s", err);
    game_free(g);
    g = make_mnk(3, 3, 3);
    ck_assert(player_new("perfect:1", g, &cfg, NULL, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "\"perfect:1\""), "%s", err);
    game_free(g);
}
END_TEST

START_TEST(alphabeta2_beats_random_at_gomoku)
{
    game *g = make_mnk(15, 15, 5);
    player *pl[2] = {make_player("alphabeta:2", g), make_player("random", g)};
    arena_opts o = {.games = 20, .opening_moves = 2, .seed = 20261129};
    arena_tally t[2];
    char err[512];
    ck_assert_msg(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(t[0].games, 20);
    ck_assert_msg(t[0].wins >= 19, "alphabeta:2 won only %d of 20", t[0].wins);
    player_free(pl[0]);
    player_free(pl[1]);
    game_free(g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("player");
    TCase *tc = tcase_create("players");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bad_specs_name_the_spec);
    tcase_add_test(tc, extension_adds_kinds);
    tcase_add_test(tc, random_plays_legal_moves);
    tcase_add_test(tc, alphabeta_takes_immediate_wins);
    tcase_add_test(tc, alphabeta_blocks_immediate_losses);
    tcase_add_test(tc, alphabeta_blocks_at_tictactoe);
    tcase_add_test(tc, threat_player_finds_and_stops_vcf);
    tcase_add_test(tc, alphabeta2_beats_random_at_gomoku);
    tcase_add_test(tc, mcts_specs);
    tcase_add_test(tc, ctl_stops_searches);
    tcase_add_test(tc, mcts_seconds_per_move);
    tcase_add_test(tc, kinds_refuse_games_they_cannot_play);
    tcase_add_test(tc, mcts400_beats_random_at_sanling3);
    tcase_add_test(tc, perfect_at_tictactoe);
    tcase_add_test(tc, perfect_refuses_big_boards);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
