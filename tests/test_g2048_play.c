/* 2048's players and commands: the expectimax player (moves on hand-made boards, its
 * refusals), the one-player arena (the score summary, `arena --json`, the results
 * file), `play` through a pipe, `gtp`'s refusal and `bench nn` on 2048. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/arena.h"
#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/g2048.h"
#include "engine/player.h"
#include "cli_util.h"

static game *make(int rows, int cols, gz_config *c)
{
    cfg_defaults(c, "2048");
    c->game.rows = rows;
    c->game.cols = cols;
    char err[256];
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

static const char *cfg_path(void)
{
    static char path[512];
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    snprintf(path, sizeof path, "%s/configs/2048-4x4.json", src);
    return path;
}

START_TEST(expectimax_moves)
{
    gz_config c;
    game *g = make(4, 4, &c);
    char err[256];
    player *p = player_new("expectimax:2", g, &c, NULL, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    game_state *s = malloc(g->state_size);
    rng r;
    rng_seed(&r, 1);
    /* the only move that does not lose at once: full board, one pair to merge */
    uint8_t full[16] = {1, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 3, 3, 4, 1};
    g2048_set(g, s, full, 0, 0);
    int a = player_choose(p, s, &r, NULL, err, sizeof err);
    ck_assert(a == G2048_LEFT || a == G2048_RIGHT);
    /* keep the big tiles on their edge: down would pull the top row off it */
    uint8_t corner[16] = {10, 9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    g2048_set(g, s, corner, 0, 0);
    a = player_choose(p, s, &r, NULL, err, sizeof err);
    ck_assert_msg(a != G2048_DOWN, "chose %d", a);
    /* the game over: an error, not a move */
    uint8_t dead[16] = {1, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 2, 1, 2, 1};
    g2048_set(g, s, dead, 0, 0);
    ck_assert_int_eq(player_choose(p, s, &r, NULL, err, sizeof err), -1);
    player_free(p);
    /* bad specs and other games are refused by name */
    ck_assert_ptr_null(player_new("expectimax:0", g, &c, NULL, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "expectimax:D"));
    ck_assert_ptr_null(player_new("expectimax:9", g, &c, NULL, err, sizeof err));
    gz_config m;
    cfg_defaults(&m, "mnk");
    game *gm = game_new(&m.game, err, sizeof err);
    ck_assert_ptr_null(player_new("expectimax", gm, &m, NULL, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "2048 only"));
    game_free(gm);
    free(s);
    game_free(g);
}
END_TEST

/* One-player matches: each player plays every game number; deeper expectimax scores
 * more than random; the summary's arithmetic. */
START_TEST(solo_arena_and_summary)
{
    gz_config c;
    game *g = make(3, 3, &c);
    char err[256];
    player *ps[3];
    const char *specs[3] = {"random", "expectimax:1", "expectimax:2"};
    for (int i = 0; i < 3; i++) {
        ps[i] = player_new(specs[i], g, &c, NULL, err, sizeof err);
        ck_assert_msg(ps[i] != NULL, "%s", err);
    }
    arena_opts o = {.games = 30, .opening_moves = 0, .seed = 4};
    arena_tally t[3];
    ck_assert_int_eq(arena_run(g, ps, 3, &o, t, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(t[i].games, 30);
        ck_assert(t[i].score_sum > 0 && t[i].score_sq >= t[i].score_sum * t[i].score_sum / 30 - 1e-6);
    }
    double mean[3];
    for (int i = 0; i < 3; i++)
        mean[i] = t[i].score_sum / t[i].games;
    ck_assert_msg(mean[2] > mean[0] && mean[1] > mean[0], "means %.0f %.0f %.0f", mean[0], mean[1],
                  mean[2]);
    /* more than ARENA_MAX_SOLO players is refused */
    player *many[ARENA_MAX_SOLO + 1];
    for (int i = 0; i <= ARENA_MAX_SOLO; i++)
        many[i] = ps[0];
    ck_assert_int_eq(arena_run(g, many, ARENA_MAX_SOLO + 1, &o, t, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "one-player"));
    for (int i = 0; i < 3; i++)
        player_free(ps[i]);
    /* the summary */
    double sc[5] = {100, 300, 200, 500, 400};
    int tiles[5] = {7, 8, 8, 9, 11};
    arena_solo_summary m;
    arena_solo_summarise(sc, tiles, 5, 2.0, 400, &m);
    ck_assert_double_eq_tol(m.mean, 300, 1e-9);
    ck_assert_double_eq_tol(m.median, 300, 1e-9);
    ck_assert_double_eq_tol(m.sd, sqrt(25000.0), 1e-6);
    ck_assert_double_eq_tol(m.hi - m.mean, 1.96 * sqrt(25000.0) / sqrt(5.0), 1e-6);
    ck_assert_double_eq_tol(m.mean - m.lo, m.hi - m.mean, 1e-9);
    ck_assert_double_eq(m.min, 100);
    ck_assert_double_eq(m.max, 500);
    ck_assert_int_eq(m.best_tile, 11);
    ck_assert_double_eq_tol(m.reached[7], 1.0, 1e-9);
    ck_assert_double_eq_tol(m.reached[8], 0.8, 1e-9);
    ck_assert_double_eq_tol(m.reached[9], 0.4, 1e-9);
    ck_assert_double_eq_tol(m.reached[10], 0.2, 1e-9);
    ck_assert_double_eq_tol(m.reached[11], 0.2, 1e-9);
    ck_assert_double_eq_tol(m.seconds_per_move, 0.005, 1e-12);
    double two[2] = {1, 2};
    arena_solo_summarise(two, NULL, 2, 0, 0, &m);
    ck_assert_double_eq_tol(m.median, 1.5, 1e-12);
    ck_assert_int_eq(m.best_tile, -1);
    game_free(g);
}
END_TEST

START_TEST(arena_command_one_player)
{
    char *out, *err, args[1024];
    char res[] = "/tmp/gz_2048_res_XXXXXX";
    int fd = mkstemp(res);
    ck_assert(fd >= 0);
    close(fd);
    snprintf(args, sizeof args,
             "arena -c %s --set game.rows=3 --set game.cols=3 random expectimax:2 --games 6 --json "
             "--seed 9 --results %s", cfg_path(), res);
    int rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "games")->valueint, 6);
    cJSON *pl = cJSON_GetObjectItem(j, "players");
    ck_assert_int_eq(cJSON_GetArraySize(pl), 2);
    for (int i = 0; i < 2; i++) {
        cJSON *p = cJSON_GetArrayItem(pl, i);
        double mean = cJSON_GetObjectItem(p, "mean")->valuedouble;
        ck_assert_int_eq(cJSON_GetObjectItem(p, "games")->valueint, 6);
        ck_assert(cJSON_GetObjectItem(p, "lo")->valuedouble <= mean);
        ck_assert(cJSON_GetObjectItem(p, "hi")->valuedouble >= mean);
        ck_assert(cJSON_GetObjectItem(p, "median")->valuedouble >= 0);
        ck_assert(cJSON_GetObjectItem(p, "seconds_per_move")->valuedouble >= 0);
        cJSON *reached = cJSON_GetObjectItem(p, "reached");
        ck_assert_ptr_nonnull(reached);
        ck_assert_double_eq_tol(cJSON_GetObjectItem(reached, "4")->valuedouble, 1.0, 1e-9);
        ck_assert(cJSON_GetObjectItem(p, "max_tile")->valueint >= 8);
    }
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(pl, 1), "name")->valuestring,
                     "expectimax:2");
    cJSON_Delete(j);
    ck_assert_msg(strstr(err, "arena: 12 games of 2048 3x3"), "%s", err);
    free(out);
    free(err);
    /* the results file: one line per player and game, with score and tile */
    FILE *f = fopen(res, "r");
    char line[65536];
    int lines = 0;
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(cJSON_GetObjectItem(o, "game")->valuestring, "2048");
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "players")), 1);
        ck_assert(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "score"), 0)->valuedouble >= 0);
        ck_assert(cJSON_GetObjectItem(o, "tile")->valueint >= 4);
        cJSON_Delete(o);
        lines++;
    }
    fclose(f);
    unlink(res);
    ck_assert_int_eq(lines, 12);
    /* the table on a terminal-less stdout */
    snprintf(args, sizeof args, "arena -c %s --set game.rows=3 --set game.cols=3 expectimax:1 --games 3",
             cfg_path());
    rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_ptr_nonnull(strstr(out, "95% interval"));
    ck_assert_ptr_nonnull(strstr(out, "median"));
    ck_assert_ptr_nonnull(strstr(out, "expectimax:1"));
    free(out);
    free(err);
}
END_TEST

START_TEST(play_and_gtp)
{
    char *out, *err, args[1024];
    /* a person through a pipe: moves, a hint, an illegal word, undo, quit */
    snprintf(args, sizeof args, "play -c %s --hint expectimax:2 --seed 3", cfg_path());
    int rc = run_bin(args, "hint\nl\nr\nxyz\nundo\nu\nquit\n", &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_ptr_nonnull(strstr(out, "hint (expectimax:2)"));
    ck_assert_ptr_nonnull(strstr(out, "your move (u d l r"));
    ck_assert_ptr_nonnull(strstr(out, "cannot read"));
    ck_assert_ptr_nonnull(strstr(out, "undo: back to your turn"));
    ck_assert_ptr_nonnull(strstr(out, "quit: game abandoned"));
    free(out);
    free(err);
    /* a whole game played by feeding moves until it ends */
    char moves[40000] = "";
    for (int i = 0; i < 3000; i++)
        strcat(moves, i % 4 == 0 ? "l\n" : i % 4 == 1 ? "d\n" : i % 4 == 2 ? "r\n" : "u\n");
    snprintf(args, sizeof args, "play -c %s --set game.rows=2 --set game.cols=2", cfg_path());
    rc = run_bin(args, moves, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "game over after"), "%s", out + (strlen(out) > 400 ? strlen(out) - 400 : 0));
    ck_assert_ptr_nonnull(strstr(out, "largest tile"));
    free(out);
    free(err);
    /* opponents named for a one-player game are a usage error */
    snprintf(args, sizeof args, "play -c %s random", cfg_path());
    rc = run_bin(args, "quit\n", &out, &err);
    ck_assert_int_eq(rc, 2);
    free(out);
    free(err);
    /* GTP refuses the game clearly */
    snprintf(args, sizeof args, "gtp -c %s", cfg_path());
    rc = run_bin(args, "protocol_version\n", &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "GTP plays games of 2 or 3 players"), "%s", err);
    free(out);
    free(err);
    /* a config with two players or a one-cell-wide board: exit 2 naming the key */
    rc = run_bin("config check --set game.rows=3", NULL, &out, &err); /* mnk: fine */
    ck_assert_int_eq(rc, 0);
    free(out);
    free(err);
    snprintf(args, sizeof args, "arena -c %s random --set game.players=2", cfg_path());
    rc = run_bin(args, NULL, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "game.players"), "%s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "arena -c %s random --set game.cols=1", cfg_path());
    rc = run_bin(args, NULL, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "game.cols"), "%s", err);
    free(out);
    free(err);
}
END_TEST

/* bench nn makes its positions by random play, spawns included (a chance state has no
 * legal move to pick from). */
START_TEST(bench_nn_positions)
{
    char *out, *err, args[1024];
    snprintf(args, sizeof args,
             "bench nn -c %s --set net.blocks=1 --set net.channels=8 --batches 1,4 --repeats 1 "
             "--precision fp32 --json", cfg_path());
    int rc = run_bin(args, NULL, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_msg(strstr(out, "\"positions_per_s\""), "%s", out);
    free(out);
    free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("g2048_play");
    TCase *tc = tcase_create("players");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, expectimax_moves);
    tcase_add_test(tc, solo_arena_and_summary);
    tcase_add_test(tc, arena_command_one_player);
    tcase_add_test(tc, play_and_gtp);
    tcase_add_test(tc, bench_nn_positions);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
