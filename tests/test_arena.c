/* Arena: outcome classes, seat rotation, tallies and the results file; and the
 * commands through the binary (GZ_BIN): arena --json, bad specs, elo, and play driven
 * through a pipe. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/arena.h"
#include "engine/config.h"
#include "engine/elo.h"
#include "engine/game.h"
#include "engine/player.h"
#include "cli_util.h"

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

static player *make_player(const char *spec, const game *g)
{
    char err[512];
    player *p = player_new(spec, g, &cfg, NULL, err, sizeof err);
    ck_assert_msg(p != NULL, "%s: %s", spec, err);
    return p;
}

START_TEST(outcome_classes)
{
    float w[2] = {1, -1}, d[2] = {0, 0};
    ck_assert_int_eq(arena_outcome_class(2, w, 0), 1);
    ck_assert_int_eq(arena_outcome_class(2, w, 1), -1);
    ck_assert_int_eq(arena_outcome_class(2, d, 0), 0);
    float three[3] = {-1, 1, 0}, shared[3] = {0.5f, 0.5f, -1}, all[3] = {0, 0, 0};
    ck_assert_int_eq(arena_outcome_class(3, three, 1), 1);
    ck_assert_int_eq(arena_outcome_class(3, three, 2), 0);
    ck_assert_int_eq(arena_outcome_class(3, three, 0), -1);
    ck_assert_int_eq(arena_outcome_class(3, shared, 0), 0);
    ck_assert_int_eq(arena_outcome_class(3, shared, 2), -1);
    ck_assert_int_eq(arena_outcome_class(3, all, 1), 0);
}
END_TEST

START_TEST(seat_rotation)
{
    int order[3];
    arena_seat_order(2, 0, order);
    ck_assert(order[0] == 0 && order[1] == 1);
    arena_seat_order(2, 1, order);
    ck_assert(order[0] == 1 && order[1] == 0);
    /* Three players: every player in every seat twice over six games, and all six
     * orders distinct. */
    int count[3][3] = {{0}}, codes[6];
    for (int i = 0; i < 6; i++) {
        arena_seat_order(3, i, order);
        codes[i] = order[0] * 9 + order[1] * 3 + order[2];
        for (int s = 0; s < 3; s++)
            count[order[s]][s]++;
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(codes[i], codes[j]);
    }
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 3; s++)
            ck_assert_int_eq(count[p][s], 2);
}
END_TEST

START_TEST(match_tallies_and_results_file)
{
    game *g = make_mnk(3, 3, 3);
    player *pl[2] = {make_player("alphabeta", g), make_player("random", g)};
    char path[] = "/tmp/gz_test_arena_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    close(fd);
    arena_opts o = {.games = 12, .opening_moves = 1, .seed = 99, .results_path = path};
    arena_tally t[2];
    char err[512];
    ck_assert_msg(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(t[i].games, 12);
        ck_assert_int_eq(t[i].wins + t[i].draws + t[i].losses, 12);
        ck_assert_int_eq(t[i].seat_games[0], 6);
        ck_assert_int_eq(t[i].seat_games[1], 6);
    }
    ck_assert_int_eq(t[0].wins, t[1].losses);
    ck_assert_int_eq(t[0].draws, t[1].draws);
    /* head to head: with two players, the wins and draws themselves */
    ck_assert_int_eq(t[0].above[1], t[0].wins);
    ck_assert_int_eq(t[0].level[1], t[0].draws);
    ck_assert_int_eq(t[1].above[0], t[1].wins);
    ck_assert_int_eq(t[0].above[0] + t[0].level[0], 0);
    /* Depth-4 alpha-beta solves tic-tac-toe after one random move: it never loses. */
    ck_assert_int_eq(t[0].losses, 0);
    ck_assert_double_eq_tol(arena_score(&t[0], 2), t[0].wins + 0.5 * t[0].draws, 1e-12);

    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *j = cJSON_Parse(line);
        ck_assert_msg(j != NULL, "line %d: %s", n + 1, line);
        cJSON *names = cJSON_GetObjectItem(j, "players"), *res = cJSON_GetObjectItem(j, "result");
        cJSON *moves = cJSON_GetObjectItem(j, "moves");
        ck_assert_int_eq(cJSON_GetArraySize(names), 2);
        ck_assert_int_eq(cJSON_GetArraySize(res), 2);
        /* Seats alternate: alphabeta first in even games. */
        ck_assert_str_eq(cJSON_GetArrayItem(names, n % 2)->valuestring, "alphabeta");
        ck_assert_int_eq(cJSON_GetObjectItem(j, "index")->valueint, n);
        ck_assert_int_eq(cJSON_GetObjectItem(j, "opening")->valueint, 1);
        ck_assert_int_eq((int)cJSON_GetObjectItem(j, "seed")->valuedouble, 99);
        /* The moves replay to the recorded result. */
        game_state *s = game_state_new(g, NULL);
        for (int k = 0; k < cJSON_GetArraySize(moves); k++) {
            int a;
            ck_assert(g->ops->parse_move(g, cJSON_GetArrayItem(moves, k)->valuestring, &a, err,
                                         sizeof err) == 0);
            ck_assert_int_eq(game_play(g, s, a), 0);
        }
        ck_assert(game_terminal(g, s));
        float z[2];
        game_result(g, s, z);
        ck_assert_double_eq_tol(z[0], cJSON_GetArrayItem(res, 0)->valuedouble, 1e-6);
        ck_assert_double_eq_tol(z[1], cJSON_GetArrayItem(res, 1)->valuedouble, 1e-6);
        free(s);
        cJSON_Delete(j);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 12);

    /* The file rates: alphabeta above random, which is the anchor. */
    elo_table *et = elo_table_new();
    ck_assert_int_eq(elo_load_file(et, path, err, sizeof err), 12);
    elo_rating r[2];
    ck_assert(elo_compute(et, NULL, r, err, sizeof err) == 0);
    ck_assert_str_eq(r[1].name, "random");
    ck_assert(r[1].anchor && r[0].elo > 0);
    elo_table_free(et);
    unlink(path);

    /* Same seed, same games. */
    arena_tally t2[2];
    o.results_path = NULL;
    ck_assert(arena_run(g, pl, 2, &o, t2, err, sizeof err) == 0);
    ck_assert(memcmp(t, t2, sizeof t) == 0);
    /* A wrong number of players is refused; an unwritable file is named. */
    ck_assert(arena_run(g, pl, 1, &o, t2, err, sizeof err) < 0);
    o.results_path = "/nonexistent/dir/results.jsonl";
    ck_assert(arena_run(g, pl, 2, &o, t2, err, sizeof err) < 0);
    ck_assert_msg(strstr(err, "/nonexistent/dir/results.jsonl"), "%s", err);
    player_free(pl[0]);
    player_free(pl[1]);
    game_free(g);
}
END_TEST

/* Reads a results file's lines into lines[] (at most max); returns the count. */
static int read_lines(const char *path, char lines[][2048], int max)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    while (n < max && fgets(lines[n], 2048, f))
        n++;
    fclose(f);
    return n;
}

/* A match split into 3 shares (as 3 MPI ranks play it) makes the whole match's games:
 * each share plays the games of its indices, and together they are the same records
 * (random players: every choice comes from the game's rng). */
START_TEST(match_in_shares)
{
    game *g = make_mnk(3, 3, 3);
    player *pl[2] = {make_player("random", g), make_player("random", g)};
    snprintf(pl[1]->name, sizeof pl[1]->name, "random2");
    char whole[] = "/tmp/gz_test_arena_XXXXXX", part[] = "/tmp/gz_test_arena_XXXXXX";
    close(mkstemp(whole));
    close(mkstemp(part));
    arena_opts o = {.games = 11, .opening_moves = 1, .seed = 7, .results_path = whole};
    arena_tally t[2], ts[2], sum[2] = {{0}};
    char err[512];
    ck_assert_msg(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0, "%s", err);
    o.results_path = part;
    o.shards = 3;
    for (int k = 0; k < 3; k++) {
        o.shard = k;
        ck_assert_msg(arena_run(g, pl, 2, &o, ts, err, sizeof err) == 0, "%s", err);
        ck_assert_int_eq(ts[0].games, k < 2 ? 4 : 3); /* 11 games: 4, 4, 3 */
        for (int p = 0; p < 2; p++) {
            sum[p].games += ts[p].games;
            sum[p].wins += ts[p].wins;
            sum[p].draws += ts[p].draws;
            sum[p].losses += ts[p].losses;
        }
    }
    for (int p = 0; p < 2; p++) {
        ck_assert_int_eq(sum[p].games, t[p].games);
        ck_assert_int_eq(sum[p].wins, t[p].wins);
        ck_assert_int_eq(sum[p].draws, t[p].draws);
        ck_assert_int_eq(sum[p].losses, t[p].losses);
    }
    static char a[16][2048], b[16][2048];
    ck_assert_int_eq(read_lines(whole, a, 16), 11);
    ck_assert_int_eq(read_lines(part, b, 16), 11);
    /* share k's lines are games k, k+3, ...: each line equals the whole match's line of
     * the same index */
    for (int i = 0; i < 11; i++) {
        cJSON *j = cJSON_Parse(b[i]);
        int ix = cJSON_GetObjectItem(j, "index")->valueint;
        ck_assert_str_eq(b[i], a[ix]);
        cJSON_Delete(j);
    }
    unlink(whole);
    unlink(part);
    player_free(pl[0]);
    player_free(pl[1]);
    game_free(g);
}
END_TEST

START_TEST(openings_make_games_differ)
{
    game *g = make_mnk(3, 3, 3);
    player *pl[2] = {make_player("alphabeta", g), make_player("alphabeta:3", g)};
    char path[] = "/tmp/gz_test_open_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    arena_opts o = {.games = 8, .opening_moves = 2, .seed = 5, .results_path = path};
    arena_tally t[2];
    char err[512];
    ck_assert(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0);
    FILE *f = fopen(path, "r");
    char lines[8][2048];
    int n = 0;
    while (n < 8 && fgets(lines[n], sizeof lines[n], f))
        n++;
    fclose(f);
    unlink(path);
    ck_assert_int_eq(n, 8);
    /* Deterministic players: games differ only through the openings. Games 2j and 2j+1
     * share their opening (one per seat order), different pairs mostly do not. */
    int distinct = 0;
    char openings[4][64];
    for (int j = 0; j < 4; j++) {
        cJSON *a = cJSON_Parse(lines[2 * j]), *b = cJSON_Parse(lines[2 * j + 1]);
        cJSON *ma = cJSON_GetObjectItem(a, "moves"), *mb = cJSON_GetObjectItem(b, "moves");
        for (int k = 0; k < 2; k++)
            ck_assert_str_eq(cJSON_GetArrayItem(ma, k)->valuestring,
                             cJSON_GetArrayItem(mb, k)->valuestring);
        snprintf(openings[j], sizeof openings[j], "%s %s", cJSON_GetArrayItem(ma, 0)->valuestring,
                 cJSON_GetArrayItem(ma, 1)->valuestring);
        int same = 0;
        for (int i = 0; i < j; i++)
            same |= !strcmp(openings[i], openings[j]);
        distinct += !same;
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    ck_assert_int_ge(distinct, 3);
    player_free(pl[0]);
    player_free(pl[1]);
    game_free(g);
}
END_TEST

START_TEST(arena_command_json)
{
    char *out, *err;
    int rc = run_bin("arena --set game.rows=9 --set game.cols=9 --set game.k=5 alphabeta:1 random "
                     "--games 6 --json --seed 3", NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "games")->valueint, 6);
    cJSON *pl = cJSON_GetObjectItem(j, "players");
    ck_assert_int_eq(cJSON_GetArraySize(pl), 2);
    cJSON *a = cJSON_GetArrayItem(pl, 0), *b = cJSON_GetArrayItem(pl, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(a, "name")->valuestring, "alphabeta:1");
    ck_assert_str_eq(cJSON_GetObjectItem(b, "name")->valuestring, "random");
    int w = cJSON_GetObjectItem(a, "wins")->valueint, d = cJSON_GetObjectItem(a, "draws")->valueint,
        l = cJSON_GetObjectItem(a, "losses")->valueint;
    ck_assert_int_eq(w + d + l, 6);
    ck_assert_int_eq(cJSON_GetObjectItem(b, "wins")->valueint, l);
    ck_assert_int_eq(cJSON_GetObjectItem(b, "losses")->valueint, w);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(a, "score")->valuedouble, w + 0.5 * d, 1e-9);
    ck_assert_int_ge(w, 5);
    cJSON_Delete(j);
    /* The summary line goes to stderr with --json. */
    ck_assert_msg(strstr(err, "arena: 6 games"), "%s", err);
    free(out);
    free(err);
}
END_TEST

/* Writes a config file for Sanling with `players` players; returns its path in buf. */
static void sanling_config(char *buf, size_t len, int players)
{
    snprintf(buf, len, "/tmp/gz_test_sanling_%d_%d.json", (int)getpid(), players);
    FILE *f = fopen(buf, "w");
    ck_assert(f != NULL);
    fprintf(f, "{\"game\": {\"name\": \"sanling\", \"size\": 9, \"players\": %d, \"moves\": 24}}\n",
            players);
    fclose(f);
}

/* --pset: one player's own config keys. Two mcts players of one spec, one with a single
 * simulation a move against one with 400 at 7x7 k=4: the names carry the overrides, and
 * the overrides reach the player (400 simulations beat 1). */
START_TEST(arena_command_per_player_settings)
{
    char *out, *err;
    int rc = run_bin("arena --set game.rows=7 --set game.cols=7 --set game.k=4 --set "
                     "mcts.simulations=1 mcts mcts --pset 2:mcts.simulations=400 --pset "
                     "2:mcts.c_puct=1.5 --games 8 --json --seed 5",
                     NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    cJSON *pl = cJSON_GetObjectItem(j, "players");
    cJSON *a = cJSON_GetArrayItem(pl, 0), *b = cJSON_GetArrayItem(pl, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(a, "name")->valuestring, "mcts");
    ck_assert_str_eq(cJSON_GetObjectItem(b, "name")->valuestring,
                     "mcts {mcts.simulations=400,mcts.c_puct=1.5}");
    ck_assert_int_ge(cJSON_GetObjectItem(b, "wins")->valueint, 6);
    cJSON_Delete(j);
    free(out);
    free(err);
}
END_TEST

START_TEST(arena_command_three_players)
{
    char cfgpath[256], args[512], *out, *err;
    sanling_config(cfgpath, sizeof cfgpath, 3);
    snprintf(args, sizeof args, "arena -c %s mcts:50 random alphabeta --games 2", cfgpath);
    int rc = run_bin(args, NULL, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "\"alphabeta\"") && strstr(err, "m,n,k"), "%s", err);
    free(out);
    free(err);

    snprintf(args, sizeof args, "arena -c %s mcts:50 random random --games 6 --json", cfgpath);
    rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "games")->valueint, 6);
    cJSON *pl = cJSON_GetObjectItem(j, "players");
    ck_assert_int_eq(cJSON_GetArraySize(pl), 3);
    double score_sum = 0;
    /* head to head: a pair's above + level + the other's above is every game, level is
     * symmetric, nobody is above or level with itself; mcts:50 finishes above random more
     * often than below it */
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            cJSON *pi = cJSON_GetArrayItem(pl, i), *pk = cJSON_GetArrayItem(pl, k);
            int a = cJSON_GetArrayItem(cJSON_GetObjectItem(pi, "above"), k)->valueint;
            int l = cJSON_GetArrayItem(cJSON_GetObjectItem(pi, "level"), k)->valueint;
            int b = cJSON_GetArrayItem(cJSON_GetObjectItem(pk, "above"), i)->valueint;
            ck_assert_int_eq(l, cJSON_GetArrayItem(cJSON_GetObjectItem(pk, "level"), i)->valueint);
            ck_assert_int_eq(i == k ? a + l : a + l + b, i == k ? 0 : 6);
        }
    cJSON *above0 = cJSON_GetObjectItem(cJSON_GetArrayItem(pl, 0), "above");
    cJSON *above1 = cJSON_GetObjectItem(cJSON_GetArrayItem(pl, 1), "above");
    ck_assert_int_gt(cJSON_GetArrayItem(above0, 1)->valueint, cJSON_GetArrayItem(above1, 0)->valueint);
    for (int i = 0; i < 3; i++) {
        cJSON *p = cJSON_GetArrayItem(pl, i);
        ck_assert_int_eq(cJSON_GetObjectItem(p, "wins")->valueint +
                             cJSON_GetObjectItem(p, "draws")->valueint +
                             cJSON_GetObjectItem(p, "losses")->valueint, 6);
        double sc = cJSON_GetObjectItem(p, "score")->valuedouble;
        ck_assert(sc >= -1 && sc <= 1); /* three players: the mean outcome */
        score_sum += sc;
    }
    /* Sanling's outcomes sum to zero in every game. */
    ck_assert_double_eq_tol(score_sum, 0.0, 1e-4); /* printed with 6 digits */
    /* the shares of first place: every game hands out one first place (ties split), and
     * a player's share is at least its games won alone and at most its games not lost
     * alone */
    double firsts = 0;
    for (int i = 0; i < 3; i++) {
        cJSON *p = cJSON_GetArrayItem(pl, i);
        double f = cJSON_GetObjectItem(p, "first_share")->valuedouble;
        ck_assert(f * 6 >= cJSON_GetObjectItem(p, "wins")->valueint - 1e-4); /* 6 digits */
        ck_assert(f * 6 <= 6 - cJSON_GetObjectItem(p, "losses")->valueint + 1e-4);
        firsts += f;
    }
    ck_assert_double_eq_tol(firsts, 1.0, 1e-4);
    cJSON_Delete(j);
    free(out);
    free(err);
    unlink(cfgpath);
}
END_TEST

START_TEST(opening_book_both_colours)
{
    /* Gomoku 9x9 from a book of two openings: each seat rotation plays the book's next
     * line (game 2j and 2j+1 the same), so every line is played from both colours; the
     * command takes --openings and refuses a bad book with exit 2 naming it. */
    game *g = make_mnk(9, 9, 5);
    char book[] = "/tmp/gz_test_book_XXXXXX";
    int fd = mkstemp(book);
    ck_assert(fd >= 0);
    FILE *bf = fdopen(fd, "w");
    fputs("e5 d4 f6\n# a comment\n4,4 5,5\n", bf);
    fclose(bf);
    char err[512];
    opening_book *b = openings_load(g, book, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    player *pl[2] = {make_player("alphabeta:1", g), make_player("random", g)};
    char path[] = "/tmp/gz_test_bookres_XXXXXX";
    fd = mkstemp(path);
    close(fd);
    arena_opts o = {.games = 8, .opening_moves = 0, .seed = 4, .results_path = path, .book = b};
    arena_tally t[2];
    ck_assert_msg(arena_run(g, pl, 2, &o, t, err, sizeof err) == 0, "%s", err);
    FILE *f = fopen(path, "r");
    char line[8192];
    const char *want[2][3] = {{"e5", "d4", "f6"}, {"e5", "f4", NULL}};
    for (int i = 0; i < 8; i++) {
        ck_assert(fgets(line, sizeof line, f) != NULL);
        cJSON *j = cJSON_Parse(line);
        cJSON *mv = cJSON_GetObjectItem(j, "moves");
        int k = (i / 2) % 2, nw = k ? 2 : 3;
        for (int m = 0; m < nw; m++)
            ck_assert_str_eq(cJSON_GetArrayItem(mv, m)->valuestring, want[k][m]);
        ck_assert_int_eq(cJSON_GetObjectItem(j, "opening")->valueint, nw);
        cJSON_Delete(j);
    }
    fclose(f);
    unlink(path);
    openings_free(b);
    player_free(pl[0]);
    player_free(pl[1]);
    game_free(g);
    /* through the binary */
    char cfgp[] = "/tmp/gz_test_bookcfg_XXXXXX";
    fd = mkstemp(cfgp);
    bf = fdopen(fd, "w");
    fputs("{\"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, \"k\": 5}}\n", bf);
    fclose(bf);
    char args[512], *out, *eout;
    snprintf(args, sizeof args, "arena -c %s alphabeta:1 random --games 4 --openings %s", cfgp, book);
    int rc = run_bin(args, NULL, &out, &eout);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, eout);
    ck_assert_msg(strstr(out, "openings from") && strstr(out, "(2)"), "%s", out);
    free(out);
    free(eout);
    bf = fopen(book, "w");
    fputs("e5 e5\n", bf);
    fclose(bf);
    rc = run_bin(args, NULL, &out, &eout);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(eout, book) && strstr(eout, "occupied"), "%s", eout);
    free(out);
    free(eout);
    unlink(book);
    unlink(cfgp);
}
END_TEST

START_TEST(arena_command_results_and_elo)
{
    char path[] = "/tmp/gz_test_cmd_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    char args[512], *out, *err;
    snprintf(args, sizeof args, "arena alphabeta random --games 4 --results %s", path);
    int rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "per seat") && strstr(out, "arena: 4 games"), "%s", out);
    free(out);
    free(err);
    /* Seats alternate in the file the binary wrote. */
    FILE *f = fopen(path, "r");
    ck_assert(f != NULL);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *g = cJSON_Parse(line);
        ck_assert_msg(g != NULL, "%s", line);
        cJSON *names = cJSON_GetObjectItem(g, "players");
        ck_assert_str_eq(cJSON_GetArrayItem(names, n % 2)->valuestring, "alphabeta");
        ck_assert_str_eq(cJSON_GetArrayItem(names, 1 - n % 2)->valuestring, "random");
        cJSON_Delete(g);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 4);
    snprintf(args, sizeof args, "elo %s --json", path);
    rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "games")->valueint, 4);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "anchor")->valuestring, "random");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "players")), 2);
    cJSON_Delete(j);
    free(out);
    free(err);
    unlink(path);
    rc = run_bin("elo /nonexistent/r.jsonl", NULL, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "/nonexistent/r.jsonl"), "%s", err);
    free(out);
    free(err);
}
END_TEST

/* A full disk while the results file is appended: the game that did not fit is cut back
 * out (a real disk takes part of a write first: the shim's partial mode), the file holds
 * the whole games before it, and the command exits 1 saying why. */
START_TEST(arena_results_on_a_full_disk)
{
    const char *shim = getenv("GZ_ENOSPC_SHIM");
    ck_assert_msg(shim != NULL, "GZ_ENOSPC_SHIM not set (run through meson test)");
    char path[] = "/tmp/gz_test_full_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    char args[512], *out, *err;
    snprintf(args, sizeof args, "arena alphabeta random --games 4 --results %s", path);
    ck_assert_int_eq(run_bin(args, NULL, &out, &err), 0);
    free(out);
    free(err);
    FILE *f = fopen(path, "r");
    char line[4096];
    long len[4] = {0};
    for (int i = 0; i < 4; i++) {
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        len[i] = (long)strlen(line);
    }
    fclose(f);
    unlink(path);
    /* the same games again, the disk full in the middle of the third */
    char budget[32];
    snprintf(budget, sizeof budget, "%ld", len[0] + len[1] + len[2] / 2);
    setenv("LD_PRELOAD", shim, 1);
    setenv("GZ_ENOSPC_MATCH", path, 1);
    setenv("GZ_ENOSPC_AFTER", budget, 1);
    setenv("GZ_ENOSPC_PARTIAL", "1", 1);
    /* a sanitized build: the shim comes before the ASan runtime (as enospc_util.h) */
    setenv("ASAN_OPTIONS", "verify_asan_link_order=0:exitcode=99", 0);
    int rc = run_bin(args, NULL, &out, &err);
    unsetenv("LD_PRELOAD");
    unsetenv("GZ_ENOSPC_MATCH");
    unsetenv("GZ_ENOSPC_AFTER");
    unsetenv("GZ_ENOSPC_PARTIAL");
    ck_assert_msg(rc == 1 && strstr(err, "No space left on device") && strstr(err, path), "exit %d: %s",
                  rc, err);
    free(out);
    free(err);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    long total = 0;
    while (fgets(line, sizeof line, f)) {
        ck_assert_msg(line[strlen(line) - 1] == '\n', "a cut line: %s", line);
        cJSON *g = cJSON_Parse(line);
        ck_assert_msg(g != NULL, "%s", line);
        cJSON_Delete(g);
        total += (long)strlen(line);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(total, len[0] + len[1]);
    unlink(path);
}
END_TEST

START_TEST(arena_command_bad_input)
{
    struct {
        const char *args, *expect;
    } cases[] = {
        {"arena random mcts:abc --games 2", "\"mcts:abc\""},
        {"arena random alphabeta:x --games 2", "\"alphabeta:x\""},
        {"arena random wizard --games 2", "\"wizard\""},
        {"arena random --games 2", "two or three players"},
        {"arena --set game.rows=15 --set game.cols=15 --set game.k=5 perfect random --games 2",
         "\"perfect\""},
        {"arena random random random --games 2", "2 players; 3 were named"},
        {"arena random random --games 0", "--games"},
        {"arena random random --bogus", "--bogus"},
        {"arena random random --games 1 --results /nonexistent/dir/r.jsonl", "/nonexistent/dir/r.jsonl"},
        {"arena random random --set mcts.c_puct=-1", "mcts.c_puct"},
        {"arena random random --pset 3:mcts.c_puct=2 --games 2", "there are 2 players"},
        {"arena random random --pset 1:game.k=2 --games 2", "use --set"},
        {"arena random random --pset mcts.c_puct=2 --games 2", "N:KEY=VALUE"},
        {"arena random random --pset 0:mcts.c_puct=2 --games 2", "N:KEY=VALUE"},
        {"arena random random --pset 2:mcts.c_puct=-1 --games 2", "mcts.c_puct"},
        {"arena random random --pset 1:mcts.wizard=1 --games 2", "mcts.wizard"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = run_bin(cases[i].args, NULL, &out, &err);
        ck_assert_msg(rc == 2, "%s: exit %d", cases[i].args, rc);
        ck_assert_msg(strstr(err, cases[i].expect), "%s: stderr %s", cases[i].args, err);
        free(out);
        free(err);
    }
}
END_TEST

START_TEST(play_through_a_pipe)
{
    char *out, *err;
    /* zz: unreadable; b2 then b2 again: taken; undo; quit. */
    int rc = run_bin("play alphabeta", "zz\nb2\nb2\nundo\nhint\nquit\n", &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "cannot read move \"zz\""), "%s", out);
    ck_assert_msg(strstr(out, "seat 2 (alphabeta) plays"), "%s", out);
    ck_assert_msg(strstr(out, "illegal move \"b2\""), "%s", out);
    ck_assert_msg(strstr(out, "undo: back to your turn at move 1"), "%s", out);
    ck_assert_msg(strstr(out, "hint ("), "%s", out);
    ck_assert_msg(strstr(out, "quit: game abandoned after 0 moves"), "%s", out);
    free(out);
    free(err);

    /* End of input ends cleanly; undo with nothing to take back is answered. */
    rc = run_bin("play --seat 2 random", "undo\n", &out, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "undo: nothing to take back"), "%s", out);
    ck_assert_msg(strstr(out, "end of input"), "%s", out);
    free(out);
    free(err);

    /* A whole game: the person tries every point in order (taken ones are refused), so
     * the board fills or someone wins before the input runs out. */
    rc = run_bin("play alphabeta", "a1\na2\na3\nb1\nb2\nb3\nc1\nc2\nc3\n", &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "game over after"), "%s", out);
    free(out);
    free(err);

    rc = run_bin("play alphabeta:q", "", &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "\"alphabeta:q\""), "%s", err);
    free(out);
    free(err);
    rc = run_bin("play", "", &out, &err);
    ck_assert_int_eq(rc, 2);
    free(out);
    free(err);

    /* Three players: the person in seat 2 between two players; hint shows visits. */
    char cfgpath[256], args[512];
    sanling_config(cfgpath, sizeof cfgpath, 3);
    snprintf(args, sizeof args, "play -c %s --seat 2 --hint mcts:40 random random", cfgpath);
    rc = run_bin(args, "hint\nzz\na1\nquit\n", &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "seat 1 (random) plays"), "%s", out);
    ck_assert_msg(strstr(out, "hint (mcts:40)") && strstr(out, "visits:"), "%s", out);
    ck_assert_msg(strstr(out, "cannot read move \"zz\""), "%s", out);
    ck_assert_msg(strstr(out, "illegal move \"a1\""), "%s", out);
    ck_assert_msg(strstr(out, "quit: game abandoned"), "%s", out);
    free(out);
    free(err);
    snprintf(args, sizeof args, "play -c %s random", cfgpath);
    rc = run_bin(args, "", &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "name 2 opponents"), "%s", err);
    free(out);
    free(err);
    unlink(cfgpath);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("arena");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, outcome_classes);
    tcase_add_test(tc, seat_rotation);
    tcase_add_test(tc, match_tallies_and_results_file);
    tcase_add_test(tc, match_in_shares);
    tcase_add_test(tc, openings_make_games_differ);
    tcase_add_test(tc, arena_command_json);
    tcase_add_test(tc, arena_command_per_player_settings);
    tcase_add_test(tc, arena_command_three_players);
    tcase_add_test(tc, arena_command_results_and_elo);
    tcase_add_test(tc, arena_results_on_a_full_disk);
    tcase_add_test(tc, arena_command_bad_input);
    tcase_add_test(tc, play_through_a_pipe);
    tcase_add_test(tc, opening_book_both_colours);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
