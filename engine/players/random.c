/* random.c — the uniform random player: every legal move equally likely. The anchor of
 * the Elo scale (rating 0). */
#include <assert.h>

#include "../player.h"

static int random_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                         size_t errlen)
{
    (void)info;
    uint8_t mask[GAME_MAX_ACTIONS];
    int n = game_legal(p->g, s, mask);
    if (n <= 0) {
        snprintf(err, errlen, "no legal move (the game is over)");
        return -1;
    }
    uint32_t pick = rng_below(r, (uint32_t)n);
    for (int a = 0; a < p->g->actions; a++)
        if (mask[a] && pick-- == 0)
            return a;
    assert(0 && "legal mask and count disagree");
    return -1;
}

static int random_create(player *p, const char *arg, const game *g, const gz_config *cfg,
                         char *err, size_t errlen)
{
    (void)g;
    (void)cfg;
    if (arg) {
        snprintf(err, errlen, "random takes no argument (write \"random\")");
        return -1;
    }
    p->choose = random_choose;
    return 0;
}

const player_kind player_kind_random = {
    .name = "random",
    .syntax = "random",
    .help = "uniform among the legal moves (Elo anchor 0)",
    .create = random_create,
};
