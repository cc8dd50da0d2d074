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
#include "nn/brain.h"
#include "nn/checkpoint.h"
#include "nn/net_player.h"
#include "nn/params.h"

/* Wall-clock slack for time checks on a loaded machine (other jobs share the cores). */
#define SLACK 0.25

static gz_config gomoku_cfg(void)
{
    gz_config c;
    char err[512];
    const char *json = "{\"seed\": 7, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5},"
                       " \"mcts\": {\"simulations\": 50, \"batch\": 4}}";
    ck_assert_msg(cfg_parse(&c, json, "test", err, sizeof err) == 0, "%s", err);
    return c;
}

/* The position after moves (space-separated, in the game's notation), into s. */
static void play_moves(const game *g, game_state *s, const char *moves)
{
    char buf[512], err[256];
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) {
        int a;
        ck_assert_msg(g->ops->parse_move(g, t, &a, err, sizeof err) == 0, "%s: %s", t, err);
        ck_assert_int_eq(game_play(g, s, a), 0);
    }
}

/* Black (to move) has h8 i8 j8 (g8 is White's) and k6 k7: k8 is a four and an open
 * three at once, a win by fours (the position of test_protocols' weak-player VCF). */
static const char *const VCF_MOVES = "h8 g8 i8 a1 j8 a15 k6 o1 k7 o15";

static int action_of(const game *g, const char *mv)
{
    int a;
    char err[256];
    ck_assert_msg(g->ops->parse_move(g, mv, &a, err, sizeof err) == 0, "%s", err);
    return a;
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

/* Whatever the player (random, a search), the forced win is played at once, proven. */
START_TEST(vcf_first)
{
    gz_config c = gomoku_cfg();
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    play_moves(g, s, VCF_MOVES);
    const char *specs[] = {"random", "mcts:30"};
    for (int k = 0; k < 2; k++) {
        brain_opts bo = {.spec = specs[k]};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
        brain_move m;
        ck_assert_int_eq(brain_choose(b, s, -1, NULL, &m, err, sizeof err), action_of(g, "k8"));
        ck_assert(m.proven && !m.searched && m.has_value && m.value == 1.0f);
        player_info info;
        brain_move_info(&m, &info);
        ck_assert_int_eq(info.action, action_of(g, "k8"));
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
    gz_config c = gomoku_cfg();
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    play_moves(g, s, "h8 i9");
    brain_move m[2];
    for (int run = 0; run < 2; run++) {
        brain_opts bo = {.spec = "mcts", .sims = 120};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s", err);
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

/* A tiny random-weight model of c's game at path (a mkstemp template). */
static void write_model(char *path, const gz_config *c, const game *g)
{
    char err[512];
    gz_config cc = *c;
    cc.net.blocks = 1;
    cc.net.channels = 8;
    nn_spec sp;
    ck_assert_msg(nn_spec_from_config(&sp, &cc.net, g, err, sizeof err) == 0, "%s", err);
    nn_params *np = nn_params_new(&sp, err, sizeof err);
    ck_assert_msg(np != NULL, "%s", err);
    nn_params_init_he(np, 5);
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(nn_ckpt_save(path, np, NULL, NULL, 0, err, sizeof err) == 0, "%s", err);
    nn_params_free(np);
}

/* Without a clock a brain plays what the player of its spec (player_new, as the arena
 * makes it) plays, move after move with the tree kept: the same seeds and settings;
 * a plain player gets the brain's random source, reseeded here as the player's. */
START_TEST(plays_as_the_player)
{
    gz_config c;
    char err[512];
    ck_assert(cfg_parse(&c, "{\"seed\": 11, \"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, "
                        "\"k\": 5}, \"mcts\": {\"simulations\": 40, \"batch\": 4}}", "test", err, sizeof err) == 0);
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    char path[] = "/tmp/gz_brain_model_XXXXXX", model[64];
    write_model(path, &c, g);
    snprintf(model, sizeof model, "model:%s:24", path);
    const char *specs[] = {"mcts:40", "mcts", model, "random", "alphabeta:2"};
    for (int k = 0; k < 5; k++) {
        brain_opts bo = {.spec = specs[k]};
        brain *b = brain_new(g, &c, &bo, err, sizeof err);
        ck_assert_msg(b != NULL, "%s: %s", specs[k], err);
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

/* A player_ctl: the stop flag ends a search (still a legal move), the deadline bounds
 * the budget, progress counts the simulations; a plain player gets the ctl too. */
START_TEST(ctl_stop_deadline_progress)
{
    gz_config c = gomoku_cfg();
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    play_moves(g, s, "h8");
    uint8_t mask[GAME_MAX_ACTIONS];
    game_legal(g, s, mask);
    brain_opts bo = {.spec = "mcts:10000000"};
    brain *b = brain_new(g, &c, &bo, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    brain_move m;

    /* stopped before it starts: one step (mcts.batch 4 leaves) */
    player_ctl ctl = {0};
    atomic_store(&ctl.stop, 1);
    int a = brain_choose(b, s, -1, &ctl, &m, err, sizeof err);
    ck_assert_msg(a >= 0 && mask[a], "%s", err);
    ck_assert(m.searched && m.sims >= 1 && m.sims <= 4);
    ck_assert_int_eq(atomic_load(&ctl.progress), m.sims);

    /* stopped by another thread: within a step of the request */
    brain_reset(b);
    player_ctl ctl2 = {0};
    pthread_t th;
    double t0 = brain_now();
    ck_assert_int_eq(pthread_create(&th, NULL, stop_later, &ctl2), 0);
    a = brain_choose(b, s, -1, &ctl2, &m, err, sizeof err);
    double dt = brain_now() - t0;
    pthread_join(th, NULL);
    ck_assert_msg(a >= 0 && mask[a], "%s", err);
    ck_assert_msg(dt > 0.15 && dt < 0.2 + SLACK, "stopped after %.3f s", dt);
    ck_assert(atomic_load(&ctl2.progress) > 0);
    brain_free(b);

    /* a deadline and no cap: the clock alone stops it, and before the deadline */
    brain_opts open = {.spec = "mcts"};
    b = brain_new(g, &c, &open, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    player_ctl ctl3 = {0};
    t0 = brain_now();
    ctl3.deadline = t0 + 0.3;
    a = brain_choose(b, s, -1, &ctl3, &m, err, sizeof err);
    dt = brain_now() - t0;
    ck_assert_msg(a >= 0 && mask[a], "%s", err);
    ck_assert_msg(dt > 0.1 && dt < 0.3 + SLACK, "took %.3f s of 0.3 s", dt);
    ck_assert_msg(m.sims > 50, "%d simulations: the cap of mcts.simulations stopped it", m.sims);
    ck_assert(atomic_load(&ctl3.progress) >= m.sims);
    /* a clocked budget shorter than the deadline wins */
    player_ctl ctl4 = {0};
    t0 = brain_now();
    ctl4.deadline = t0 + 30;
    a = brain_choose(b, s, 0.2, &ctl4, &m, err, sizeof err);
    dt = brain_now() - t0;
    ck_assert_msg(a >= 0 && dt < 0.2 + SLACK, "took %.3f s of 0.2 s", dt);
    brain_free(b);

    /* a plain player: alpha-beta to depth 20 stops at the deadline, says how deep */
    brain_opts ab = {.spec = "alphabeta:20"};
    b = brain_new(g, &c, &ab, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    player_ctl ctl5 = {0};
    t0 = brain_now();
    ctl5.deadline = t0 + 0.3;
    a = brain_choose(b, s, -1, &ctl5, &m, err, sizeof err);
    dt = brain_now() - t0;
    ck_assert_msg(a >= 0 && mask[a], "%s", err);
    ck_assert_msg(dt < 0.3 + SLACK, "took %.3f s of 0.3 s", dt);
    ck_assert(!m.searched && m.depth >= 1 && m.depth < 20 && m.ntop >= 1);
    ck_assert(atomic_load(&ctl5.progress) > 0);
    player_info info;
    brain_move_info(&m, &info);
    ck_assert_int_eq(info.depth, m.depth);
    ck_assert_int_eq(info.top[0].action, m.top[0].action);
    brain_free(b);
    free(s);
    game_free(g);
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
    tcase_add_test(tc, plays_as_the_player);
    tcase_add_test(tc, ctl_stop_deadline_progress);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
