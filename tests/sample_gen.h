/* sample_gen.h — test helper: sample files from random games through the one writer
 * (selfplay/samples.h). Header-only, static: included by the test files that need it. */
#ifndef GZ_TESTS_SAMPLE_GEN_H
#define GZ_TESTS_SAMPLE_GEN_H

#include <check.h>
#include <stdlib.h>

#include "engine/config.h"
#include "engine/game.h"
#include "selfplay/samples.h"

static game *gen_mnk(int rows, int cols, int k)
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

/* Writes `games` random games of g to path (every position one sample: pi a random
 * distribution over the legal moves, z mover-first), the file's game_config game_config
 * (JSON text). Returns the number of samples. */
static int64_t gen_random_games_as(const game *g, const char *path, int games, uint64_t seed,
                                   int64_t generation, const char *game_config)
{
    char err[512];
    sp_meta meta = {generation, "random"};
    sp_writer *w = sp_writer_open(path, g, game_config, &meta, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rng r;
    rng_seed(&r, seed);
    int hw = g->rows * g->cols;
    float *planes = malloc(sizeof(float) * (size_t)g->planes * hw);
    float *pi = malloc(sizeof(float) * (size_t)g->actions);
    uint8_t *legal = malloc((size_t)g->actions);
    int maxply = g->max_game_length + 1;
    float *zs = malloc(sizeof(float) * (size_t)maxply * g->players);
    int *movers = malloc(sizeof(int) * (size_t)maxply);
    float *buf_planes = malloc(sizeof(float) * (size_t)maxply * g->planes * hw);
    float *buf_pi = malloc(sizeof(float) * (size_t)maxply * g->actions);
    uint8_t *buf_legal = malloc((size_t)maxply * g->actions);
    for (int gi = 0; gi < games; gi++) {
        game_state *s = game_state_new(g, &r);
        int ply = 0;
        while (!game_terminal(g, s)) {
            int nl = game_legal(g, s, legal);
            game_encode(g, s, planes);
            double sum = 0;
            for (int a = 0; a < g->actions; a++) {
                pi[a] = legal[a] ? (float)rng_uniform(&r) : 0.0f;
                sum += pi[a];
            }
            for (int a = 0; a < g->actions; a++)
                pi[a] = (float)(pi[a] / sum);
            movers[ply] = game_current_player(g, s);
            memcpy(buf_planes + (size_t)ply * g->planes * hw, planes, sizeof(float) * (size_t)g->planes * hw);
            memcpy(buf_pi + (size_t)ply * g->actions, pi, sizeof(float) * (size_t)g->actions);
            memcpy(buf_legal + (size_t)ply * g->actions, legal, (size_t)g->actions);
            int pick = (int)rng_below(&r, (uint32_t)nl), a = 0;
            for (a = 0; a < g->actions; a++)
                if (legal[a] && pick-- == 0)
                    break;
            ck_assert_int_eq(game_play(g, s, a), 0);
            ply++;
        }
        float z[GAME_MAX_PLAYERS];
        game_result(g, s, z);
        for (int k = 0; k < ply; k++) {
            float zm[GAME_MAX_PLAYERS];
            for (int p = 0; p < g->players; p++)
                zm[p] = z[(movers[k] + p) % g->players];
            ck_assert_msg(sp_writer_append(w, buf_planes + (size_t)k * g->planes * hw,
                                           buf_pi + (size_t)k * g->actions, buf_legal + (size_t)k * g->actions,
                                           zm, gi, k, err, sizeof err) == 0, "%s", err);
        }
        free(s);
    }
    int64_t n = sp_writer_count(w);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    free(planes), free(pi), free(legal), free(zs), free(movers), free(buf_planes), free(buf_pi), free(buf_legal);
    return n;
}

/* gen_random_games_as with the game_config {"name":"mnk"}. */
static int64_t gen_random_games(const game *g, const char *path, int games, uint64_t seed,
                                int64_t generation)
{
    return gen_random_games_as(g, path, games, seed, generation, "{\"name\":\"mnk\"}");
}

#endif
