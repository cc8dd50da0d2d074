/* The brain (nn/brain.c): the time rule; the root VCF check, which plays a forced win
 * by fours whatever the player; a capped search without a clock is reproducible and
 * plays the moves of the player of the same spec (mcts, model, random, alpha-beta);
 * a player_ctl's stop flag, deadline and progress, for searches and plain players; the
 * choice as a player_info. The protocols over it are tested in test_protocols.c. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/game.h"
#include "model_util.h"
#include "nn/brain.h"
#include "nn/net_player.h"

/* Wall-clock slack for time checks on a loaded machine (other jobs share the cores). */
#define SLACK 0.25

static const char *const GOMOKU15 = "{\"seed\": 7, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, "
                                    "\"k\": 5}, \"mcts\": {\"simulations\": 50, \"batch\": 4}}";
static const char *const GOMOKU9 = "{\"seed\": 11, \"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, "
                                   "\"k\": 5}, \"mcts\": {\"simulations\": 40, \"batch\": 4}}";

/* Black (to move) has h8 i8 j8 (g8 is White's) and k6 k7: k8 is a four and an open
 * three at once, a win by fours (the position of test_protocols' weak-player VCF). */
static const char *const VCF_MOVES = "h8 g8 i8 a1 j8 a15 k6 o1 k7 o15";

/* The config json into *c, its game (free with game_free) and, in *s, the position
 * after moves (space-separated, in the game's notation; free with free). */
static game *game_at(const char *json, gz_config *c, game_state **s, const char *moves)
{
    char err[512], buf[512];
    ck_assert_msg(cfg_parse(c, json, "test", err, sizeof err) == 0, "%s", err);
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    *s = game_state_new(g, NULL);
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
        int a;
        ck_assert_msg(g->ops->parse_move(g, t, &a, err, sizeof err) == 0, "%s: %s", t, err);
        ck_assert_int_eq(game_play(g, *s, a), 0);
    }
    return g;
}

static brain *brain_of(const game *g, const gz_config *c, const char *spec, int sims)
{
    char err[512];
    brain_opts bo = {.spec = spec, .sims = sims};
    brain *b = brain_new(g, c, &bo, err, sizeof err);
    ck_assert_msg(b != NULL, "%s: %s", spec, err);
    return b;
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

/* Whatever the player (random, a search), the forced win is played at once, proven,
 * and reads as Black's win in a player_info. */
START_TEST(vcf_first)
{
    gz_config c;
    game_state *s;
    game *g = game_at(GOMOKU15, &c, &s, VCF_MOVES);
    const char *specs[] = {"random", "mcts:30"};
    for (int k = 0; k < 2; k++) {
        brain *b = brain_of(g, &c, specs[k], 0);
        brain_move m;
        char err[512], mv[8];
        int a = brain_choose(b, s, -1, NULL, &m, err, sizeof err);
        ck_assert_msg(a >= 0, "%s", err);
        ck_assert_str_eq(g->ops->format_move(g, a, mv, sizeof mv), "k8");
        ck_assert(m.proven && !m.searched && m.has_value && m.value == 1.0f);
        player_info info;
        brain_move_info(&m, &info);
        ck_assert_int_eq(info.action, a);
        ck_assert(info.has_value && info.value[0] == 1.0f && info.value[1] == -1.0f);
        brain_free(b);
    }
    free(s);
    game_free(g);
}
END_TEST

/* A simulation cap without a clock: the same seed gives the same search. */
START_TEST(capped_search_reproducible)
{
    gz_config c;
    game_state *s;
    game *g = game_at(GOMOKU15, &c, &s, "h8 i9");
    brain_move m[2];
    for (int run = 0; run < 2; run++) {
        brain *b = brain_of(g, &c, "mcts", 120);
        char err[512];
        ck_assert(brain_searches(b));
        ck_assert_int_ge(brain_choose(b, s, -1, NULL, &m[run], err, sizeof err), 0);
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

/* The tree's memory: on 25x25 (625 edges a node early on) a small cap fills and the
 * move says so (full); a cap that holds the search does not. The edges are sized for
 * all of a node's moves (they were sized at 256, so a search ran out of them first). */
START_TEST(memory_full_reported)
{
    gz_config c;
    game_state *s;
    game *g = game_at("{\"seed\": 3, \"game\": {\"name\": \"mnk\", \"rows\": 25, \"cols\": 25, "
                      "\"k\": 5}, \"mcts\": {\"batch\": 8}}", &c, &s, "m13");
    char err[512];
    for (int k = 0; k < 2; k++) {
        brain_opts bo = {.spec = "mcts", .sims = 4000, .memory_mb = k ? 256 : 1};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
        brain_move m;
        ck_assert_int_ge(brain_choose(b, s, -1, NULL, &m, err, sizeof err), 0);
        ck_assert(m.searched);
        if (k == 0) {
            ck_assert(m.full);
            ck_assert_int_lt(m.sims, 4000);
        } else {
            ck_assert(!m.full);
            ck_assert_int_ge(m.sims, 4000);
        }
        brain_free(b);
    }
    free(s);
    game_free(g);
}
END_TEST

/* Without a clock a brain plays what the player of its spec (player_new, as the arena
 * makes it) plays, move after move with the tree kept: the same seeds and settings;
 * a plain player gets the brain's random source, reseeded here as the player's. */
START_TEST(plays_as_the_player)
{
    gz_config c;
    game_state *s0;
    game *g = game_at(GOMOKU9, &c, &s0, "");
    free(s0);
    char path[] = "/tmp/gz_brain_model_XXXXXX", model[64];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    model_write_random(path, &c, 5);
    snprintf(model, sizeof model, "model:%s:24", path);
    const char *specs[] = {"mcts:40", "mcts", model, "random", "alphabeta:2"};
    for (int k = 0; k < 5; k++) {
        char err[512];
        brain *b = brain_of(g, &c, specs[k], 0);
        player *p = player_new(specs[k], g, &c, net_player_ext(), err, sizeof err);
        ck_assert_msg(p != NULL, "%s: %s", specs[k], err);
        player_reset(p);
        game_state *s = game_state_new(g, NULL);
        for (int ply = 0; ply < 10; ply++) {
            rng r;
            rng_seed(&r, 1000 + (uint64_t)ply);
            brain_reseed(b, 1000 + (uint64_t)ply);
            brain_move m;
            player_info want, got;
            player_info_clear(&want);
            int a = brain_choose(b, s, -1, NULL, &m, err, sizeof err);
            ck_assert_msg(a >= 0, "%s", err);
            ck_assert_msg(!m.proven || m.searched, "%s ply %d: a VCF", specs[k], ply);
            int pa = player_choose(p, s, &r, &want, err, sizeof err);
            ck_assert_msg(pa == a, "%s ply %d: the player %d, the brain %d", specs[k], ply, pa, a);
            brain_move_info(&m, &got);
            ck_assert_int_eq(got.simulations, want.simulations);
            ck_assert_int_eq(got.depth, want.depth);
            ck_assert_int_eq(got.has_value, want.has_value);
            ck_assert_int_eq(got.ntop, want.ntop);
            /* the same counts; moves of equal visits may come in another order (the
             * brain puts the higher prior first, the player the lower action) */
            for (int i = 0; i < got.ntop; i++)
                ck_assert_int_eq(got.top[i].visits, want.top[i].visits);
            for (int i = 0; got.has_value && i < g->players; i++)
                ck_assert_float_eq_tol(got.value[i], want.value[i], 1e-6);
            brain_notify(b, s, a);
            player_notify_move(p, s, a);
            ck_assert_int_eq(game_play(g, s, a), 0);
        }
        free(s);
        player_free(p);
        brain_free(b);
    }
    unlink(path);
    game_free(g);
}
END_TEST

static void *stop_later(void *arg)
{
    player_ctl *ctl = arg;
    usleep(200000);
    atomic_store(&ctl->stop, 1);
    return NULL;
}

/* brain_choose under ctl (its deadline `deadline` seconds from now when > 0); checks
 * the move is legal; *dt gets the seconds it took. */
static void choose_under(brain *b, const game *g, const game_state *s, double budget, player_ctl *ctl,
                         double deadline, brain_move *m, double *dt)
{
    char err[512];
    uint8_t mask[GAME_MAX_ACTIONS];
    game_legal(g, s, mask);
    double t0 = brain_now();
    if (deadline > 0)
        ctl->deadline = t0 + deadline;
    int a = brain_choose(b, s, budget, ctl, m, err, sizeof err);
    *dt = brain_now() - t0;
    ck_assert_msg(a >= 0 && mask[a], "%s", err);
}

/* A player_ctl: the stop flag ends a search (still a legal move), the deadline bounds
 * the budget, progress counts the simulations; a plain player gets the ctl too. */
START_TEST(ctl_stop_deadline_progress)
{
    gz_config c;
    game_state *s;
    game *g = game_at(GOMOKU15, &c, &s, "h8");
    brain *b = brain_of(g, &c, "mcts:10000000", 0);
    brain_move m;
    double dt;

    /* stopped before it starts: one step (mcts.batch 4 leaves) */
    player_ctl stopped = {0};
    atomic_store(&stopped.stop, 1);
    choose_under(b, g, s, -1, &stopped, 0, &m, &dt);
    ck_assert(m.searched && m.sims >= 1 && m.sims <= 4);
    ck_assert_int_eq(atomic_load(&stopped.progress), m.sims);

    /* stopped by another thread: within a step of the request */
    brain_reset(b);
    player_ctl watched = {0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stop_later, &watched), 0);
    choose_under(b, g, s, -1, &watched, 0, &m, &dt);
    pthread_join(th, NULL);
    ck_assert_msg(dt > 0.15 && dt < 0.2 + SLACK, "stopped after %.3f s", dt);
    ck_assert(atomic_load(&watched.progress) > 0);
    brain_free(b);

    /* a deadline and no cap: the clock alone stops it, and before the deadline */
    b = brain_of(g, &c, "mcts", 0);
    player_ctl clocked = {0};
    choose_under(b, g, s, -1, &clocked, 0.3, &m, &dt);
    ck_assert_msg(dt > 0.1 && dt < 0.3 + SLACK, "took %.3f s of 0.3 s", dt);
    ck_assert_msg(m.sims > 50, "%d simulations: the cap of mcts.simulations stopped it", m.sims);
    ck_assert(atomic_load(&clocked.progress) >= m.sims);
    /* a budget shorter than the deadline wins */
    player_ctl later = {0};
    choose_under(b, g, s, 0.2, &later, 30, &m, &dt);
    ck_assert_msg(dt < 0.2 + SLACK, "took %.3f s of 0.2 s", dt);
    brain_free(b);

    /* a plain player: alpha-beta to depth 20 stops at the deadline, says how deep */
    b = brain_of(g, &c, "alphabeta:20", 0);
    player_ctl deep = {0};
    choose_under(b, g, s, -1, &deep, 0.3, &m, &dt);
    ck_assert_msg(dt < 0.3 + SLACK, "took %.3f s of 0.3 s", dt);
    ck_assert(!m.searched && m.depth >= 1 && m.depth < 20 && m.ntop >= 1);
    ck_assert(atomic_load(&deep.progress) > 0);
    player_info info;
    brain_move_info(&m, &info);
    ck_assert_int_eq(info.depth, m.depth);
    ck_assert_int_eq(info.top[0].action, m.top[0].action);
    brain_free(b);
    free(s);
    game_free(g);
}
END_TEST

/* brain_shipped_model: $GZ_MODELS first, for freestyle five only (renju, k = 4 and
 * tic-tac-toe have none); a directory without the file falls through to the next place. */
START_TEST(shipped_model_lookup)
{
    char dir[] = "/tmp/gz_test_models_XXXXXX", path[1024], file[1100], err[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    gz_config c;
    ck_assert_msg(cfg_parse(&c, GOMOKU15, "test", err, sizeof err) == 0, "%s", err);
    snprintf(file, sizeof file, "%s/gomoku15.h5", dir);
    model_write_random(file, &c, 3);
    ck_assert_int_eq(setenv("GZ_MODELS", dir, 1), 0);
    ck_assert_int_eq(brain_shipped_model(&c, path, sizeof path), 0);
    ck_assert_str_eq(path, file);
    ck_assert_int_eq(brain_shipped_model(&c, path, 8), -1); /* does not fit: none */
    gz_config r = c;
    cfg_game_set_rule(&r.game, CFG_RULE_RENJU);
    ck_assert_int_eq(brain_shipped_model(&r, path, sizeof path), -1);
    r = c;
    r.game.k = 4;
    ck_assert_int_eq(brain_shipped_model(&r, path, sizeof path), -1);
    gz_config t;
    const char *ttt = "{\"game\": {\"name\": \"mnk\", \"rows\": 3, \"cols\": 3, \"k\": 3}}";
    ck_assert_msg(cfg_parse(&t, ttt, "test", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(brain_shipped_model(&t, path, sizeof path), -1);
    /* another board size of the same game gets it too */
    gz_config g9;
    ck_assert_msg(cfg_parse(&g9, GOMOKU9, "test", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(brain_shipped_model(&g9, path, sizeof path), 0);
    ck_assert_str_eq(path, file);
    /* the file gone: the next places (the repository's models/) are tried */
    ck_assert_int_eq(unlink(file), 0);
    if (brain_shipped_model(&c, path, sizeof path) == 0)
        ck_assert_ptr_null(strstr(path, dir));
    ck_assert_int_eq(unsetenv("GZ_MODELS"), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The shipped 15x15 model (models/gomoku15.h5, found as brain_shipped_model finds it)
 * plays legal, winning moves on its own: its network and search alone (no VCF checks,
 * 200 simulations), on fixed positions with the winning (or only saving) moves listed. */
START_TEST(shipped_model_tactics)
{
    char path[1024], err[512], spec[1100];
    ck_assert_int_eq(unsetenv("GZ_MODELS"), 0);
    gz_config c;
    ck_assert_msg(cfg_parse(&c, GOMOKU15, "test", err, sizeof err) == 0, "%s", err);
    ck_assert_msg(brain_shipped_model(&c, path, sizeof path) == 0, "models/gomoku15.h5 not found");
    static const struct {
        const char *moves, *wins;
    } pos[] = {
        {"h8 a1 i8 a15 j8 o1 k8 o15", " g8 l8 "},          /* Black's open four: five */
        {"h8 h9 i8 i9 j8 j9 k8 a1", " g8 l8 "},            /* five before White's three */
        {"a1 h9 a15 i9 o1 j9 o15 k9 c3", " g9 l9 "},       /* White's open four: five */
        {"h8 a1 i8 a15 j8 o1", " g8 k8 "},                 /* open three: the open four */
        {"h8 g8 i8 a1 j8 a15 k8", " l8 "},                 /* Black's four: the one block */
        {"h8 e5 i8 f5 j8 g5 d5 h5", " i5 "},               /* block a four before an open three */
    };
    snprintf(spec, sizeof spec, "model:%s:200", path);
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        game_state *s;
        gz_config cc;
        game *g = game_at(GOMOKU15, &cc, &s, pos[i].moves);
        player *p = player_new(spec, g, &cc, net_player_ext(), err, sizeof err);
        ck_assert_msg(p != NULL, "%s", err);
        rng r;
        rng_seed(&r, 1);
        int a = p->choose(p, s, &r, NULL, err, sizeof err);
        ck_assert_msg(a >= 0, "%s", err);
        uint8_t mask[15 * 15];
        game_legal(g, s, mask);
        ck_assert(mask[a]);
        char mv[8], word[12];
        g->ops->format_move(g, a, mv, sizeof mv);
        snprintf(word, sizeof word, " %s ", mv);
        ck_assert_msg(strstr(pos[i].wins, word), "after %s: played %s, winning moves%s", pos[i].moves, mv,
                      pos[i].wins);
        player_free(p);
        free(s);
        game_free(g);
    }
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
    tcase_add_test(tc, memory_full_reported);
    tcase_add_test(tc, plays_as_the_player);
    tcase_add_test(tc, ctl_stop_deadline_progress);
    tcase_add_test(tc, shipped_model_lookup);
    tcase_add_test(tc, shipped_model_tactics);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
