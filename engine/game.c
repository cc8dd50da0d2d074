#include "game.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

extern const game_ops mnk_ops;
extern const game_ops sanling_ops;
extern const game_ops g2048_ops;

const game_ops *const game_registry[] = {&mnk_ops, &sanling_ops, &g2048_ops, NULL};

const game_ops *game_find(const char *name)
{
    for (int i = 0; game_registry[i]; i++)
        if (strcmp(game_registry[i]->name, name) == 0)
            return game_registry[i];
    return NULL;
}

game *game_new(const cfg_game *cfg, char *err, size_t errlen)
{
    const game_ops *ops = game_find(cfg->name);
    if (!ops) {
        snprintf(err, errlen, "key game.name: unknown game \"%s\"", cfg->name);
        return NULL;
    }
    game *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->ops = ops;
    snprintf(g->name, sizeof g->name, "%s", ops->name);
    g->nsym = 1;
    g->sym[0] = SYM_ID;
    if (ops->create(g, cfg, err, errlen) < 0) {
        free(g);
        return NULL;
    }
    assert(g->players >= 1 && g->players <= GAME_MAX_PLAYERS);
    assert(g->actions >= 1 && g->actions <= GAME_MAX_ACTIONS);
    assert(g->rows >= 1 && g->rows <= GAME_MAX_SIDE && g->cols >= 1 && g->cols <= GAME_MAX_SIDE);
    assert(g->nsym >= 1 && g->nsym <= GAME_MAX_SYM && g->sym[0] == SYM_ID);
    assert(g->state_size > 0);
    assert((ops->chance_outcomes == NULL) == (ops->chance_play == NULL));
    assert((ops->chance_outcomes != NULL) == (g->max_chance > 0));
    return g;
}

void game_free(game *g)
{
    if (!g)
        return;
    if (g->ops->destroy)
        g->ops->destroy(g);
    free(g);
}

const char *game_why_illegal(const game *g, const game_state *s, int action, char *buf,
                             size_t len)
{
    if (g->ops->why_illegal)
        return g->ops->why_illegal(g, s, action, buf, len);
    uint8_t mask[GAME_MAX_ACTIONS];
    if (action < 0 || action >= g->actions) {
        snprintf(buf, len, "action %d is out of range (0..%d)", action, g->actions - 1);
        return buf;
    }
    if (game_terminal(g, s)) {
        snprintf(buf, len, "the game is over");
        return buf;
    }
    game_legal(g, s, mask);
    if (mask[action])
        return NULL;
    snprintf(buf, len, "not a legal move");
    return buf;
}

game_state *game_state_new(const game *g, rng *r)
{
    game_state *s = malloc(g->state_size);
    if (s)
        game_init(g, s, r);
    return s;
}

float game_score0(const game *g, const game_state *s)
{
    if (!g->ops->score)
        return 0.0f;
    float sc[GAME_MAX_PLAYERS];
    g->ops->score(g, s, sc);
    return sc[0];
}

int game_chance_sample(const game *g, const game_state *s, rng *r)
{
    if (!g->ops->chance_outcomes)
        return -1;
    int out[GAME_MAX_CHANCE];
    float prob[GAME_MAX_CHANCE];
    assert(g->max_chance <= GAME_MAX_CHANCE);
    int n = g->ops->chance_outcomes(g, s, out, prob);
    if (n <= 0)
        return -1;
    double u = rng_uniform(r), acc = 0;
    for (int i = 0; i < n - 1; i++) { /* rounding: the last outcome takes what is left */
        acc += prob[i];
        if (u < acc)
            return out[i];
    }
    return out[n - 1];
}

int game_resolve_chance(const game *g, game_state *s, rng *r)
{
    int events = 0;
    for (int o; (o = game_chance_sample(g, s, r)) >= 0; events++) {
        int rc = g->ops->chance_play(g, s, o);
        assert(rc == 0);
        (void)rc;
    }
    return events;
}

int game_random_playout(const game *g, game_state *s, rng *r, float *z)
{
    uint8_t mask[GAME_MAX_ACTIONS];
    int plies = 0;
    game_resolve_chance(g, s, r);
    while (!game_terminal(g, s)) {
        if (g->costly_legal) {
            /* A uniform action that play() accepts is a uniform legal move; a few tries
             * are far cheaper than the whole mask. */
            bool played = false;
            for (int t = 0; t < 8 && !played; t++)
                played = game_play(g, s, (int)rng_below(r, (uint32_t)g->actions)) == 0;
            if (played) {
                game_resolve_chance(g, s, r);
                plies++;
                continue;
            }
        }
        int n = game_legal(g, s, mask);
        assert(n > 0);
        uint32_t pick = rng_below(r, (uint32_t)n);
        int a = 0;
        for (;; a++) {
            if (mask[a] && pick-- == 0)
                break;
        }
        int rc = game_play(g, s, a);
        assert(rc == 0);
        (void)rc;
        game_resolve_chance(g, s, r);
        plies++;
    }
    game_result(g, s, z);
    return plies;
}
