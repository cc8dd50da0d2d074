/* model_util.h — a tiny random-weight model for tests that need a model file but not a
 * trained one (the web and brain tests). Header-only, static. */
#ifndef GZ_TESTS_MODEL_UTIL_H
#define GZ_TESTS_MODEL_UTIL_H

#include <check.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/game.h"
#include "nn/checkpoint.h"
#include "nn/params.h"
#include "nn/spec.h"

/* Saves at path a network for c's game (c's net section with 1 block of 8 channels),
 * He-initialised from seed. */
static inline void model_write_random(const char *path, const gz_config *c, uint64_t seed)
{
    char err[512];
    game *g = game_new(&c->game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    gz_config cc = *c;
    cc.net.blocks = 1;
    cc.net.channels = 8;
    nn_spec s;
    ck_assert_msg(nn_spec_from_config(&s, &cc.net, g, err, sizeof err) == 0, "%s", err);
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    nn_params_init_he(p, seed);
    ck_assert_msg(nn_ckpt_save(path, p, NULL, NULL, 0, err, sizeof err) == 0, "%s", err);
    nn_params_free(p);
    game_free(g);
}

#endif
