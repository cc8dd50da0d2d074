/* perfect.c — the player that never errs: every move keeps the exact game value
 * (engine/solve.h), chosen at random among the optimal moves so that games between
 * perfect players still differ. Only boards the solver handles (m,n,k games of at most
 * SOLVE_MAX_CELLS points: tic-tac-toe, 4x4); anything else is refused at creation. */
#include <assert.h>
#include <stdlib.h>

#include "../player.h"
#include "../solve.h"

static int perfect_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                          size_t errlen)
{
    solver *sv = p->ctx;
    uint8_t mask[GAME_MAX_ACTIONS];
    int n = solve_best_moves(sv, s, mask);
    if (n <= 0) {
        snprintf(err, errlen, "no legal move (the game is over)");
        return -1;
    }
    if (info) {
        info->has_value = 1;
        int v = solve_value(sv, s), me = game_current_player(p->g, s);
        for (int i = 0; i < p->g->players; i++)
            info->value[i] = (float)(i == me ? v : -v);
        for (int a = 0; a < p->g->actions && info->ntop < PLAYER_INFO_TOP; a++)
            if (mask[a]) {
                info->top[info->ntop].action = a;
                info->top[info->ntop].visits = 1;
                info->ntop++;
            }
    }
    uint32_t pick = rng_below(r, (uint32_t)n);
    for (int a = 0; a < p->g->actions; a++)
        if (mask[a] && pick-- == 0)
            return a;
    assert(0 && "best-move mask and count disagree");
    return -1;
}

static void perfect_destroy(player *p)
{
    solve_free(p->ctx);
    p->ctx = NULL;
}

static int perfect_create(player *p, const char *arg, const game *g, const gz_config *cfg,
                          char *err, size_t errlen)
{
    (void)cfg;
    if (arg) {
        snprintf(err, errlen, "perfect takes no argument (write \"perfect\")");
        return -1;
    }
    char msg[256];
    solver *sv = solve_new(g, msg, sizeof msg);
    if (!sv) {
        snprintf(err, errlen, "perfect plays only boards the exact solver solves (m,n,k with at "
                              "most %d points, e.g. tic-tac-toe): %s", SOLVE_MAX_CELLS, msg);
        return -1;
    }
    p->ctx = sv;
    p->choose = perfect_choose;
    p->destroy = perfect_destroy;
    return 0;
}

const player_kind player_kind_perfect = {
    .name = "perfect",
    .syntax = "perfect",
    .help = "exact play from the solver (tic-tac-toe, m,n,k boards up to 16 points)",
    .create = perfect_create,
};
