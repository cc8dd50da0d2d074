#include "solve.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SOLVE_MAX_PLANES = 8 };

struct solver {
    /* immutable after solve_new */
    const game *g;                 /* borrowed */
    int cells;
    uint32_t pow3[SOLVE_MAX_CELLS];
    /* mutated while solving */
    uint8_t *table;                /* 2 bits per board: 0 unknown, else value + 2 */
    long positions;
    uint8_t *states;               /* (cells + 1) scratch states, one per depth */
    uint8_t *masks;                /* (cells + 1) x cells legal masks */
};

static int table_get(const solver *sv, uint32_t idx)
{
    return (sv->table[idx >> 2] >> ((idx & 3) * 2)) & 3;
}

static void table_set(solver *sv, uint32_t idx, int code)
{
    sv->table[idx >> 2] = (uint8_t)(sv->table[idx >> 2] | (code << ((idx & 3) * 2)));
}

static game_state *state_at(const solver *sv, int depth)
{
    return (game_state *)(sv->states + (size_t)depth * sv->g->state_size);
}

/* The base-3 index of s's board: digit 1 for player 0's stones, 2 for player 1's. */
static uint32_t board_index(const solver *sv, const game_state *s)
{
    float planes[SOLVE_MAX_PLANES * SOLVE_MAX_CELLS];
    game_encode(sv->g, s, planes);
    int me = game_current_player(sv->g, s);
    uint32_t idx = 0;
    for (int i = 0; i < sv->cells; i++) {
        if (planes[i] > 0.5f)
            idx += sv->pow3[i] * (uint32_t)(me + 1);
        else if (planes[sv->cells + i] > 0.5f)
            idx += sv->pow3[i] * (uint32_t)(2 - me);
    }
    return idx;
}

/* Negamax over every child (no pruning: every reachable position gets its exact
 * value). state_at(depth) holds the position whose index is idx. */
static int solve_rec(solver *sv, int depth, uint32_t idx)
{
    int code = table_get(sv, idx);
    if (code)
        return code - 2;
    const game *g = sv->g;
    const game_state *s = state_at(sv, depth);
    int me = game_current_player(g, s), v;
    if (game_terminal(g, s)) {
        float z[GAME_MAX_PLAYERS];
        game_result(g, s, z);
        v = z[me] > 0.5f ? 1 : z[me] < -0.5f ? -1 : 0;
    } else {
        assert(depth < sv->cells);
        uint8_t *mask = sv->masks + (size_t)depth * (size_t)sv->cells;
        game_legal(g, s, mask);
        game_state *child = state_at(sv, depth + 1);
        v = -1;
        for (int a = 0; a < sv->cells; a++) {
            if (!mask[a])
                continue;
            uint32_t cidx = idx + sv->pow3[a] * (uint32_t)(me + 1);
            int cv, ccode = table_get(sv, cidx);
            if (ccode) { /* a transposition: no need to play the move */
                cv = -(ccode - 2);
            } else {
                game_copy(g, child, s);
                int rc = game_play(g, child, a);
                assert(rc == 0);
                (void)rc;
                cv = -solve_rec(sv, depth + 1, cidx);
            }
            if (cv > v)
                v = cv;
        }
    }
    table_set(sv, idx, v + 2);
    sv->positions++;
    return v;
}

solver *solve_new(const game *g, char *err, size_t errlen)
{
    if (strcmp(g->name, "mnk") != 0 || g->players != 2 || g->planes > SOLVE_MAX_PLANES) {
        snprintf(err, errlen, "solver: only m,n,k games can be solved exactly (game %s)", g->name);
        return NULL;
    }
    if (g->actions > SOLVE_MAX_CELLS) {
        snprintf(err, errlen, "solver: a %dx%d board (%d points) is too large to solve exactly "
                 "(at most %d points)", g->rows, g->cols, g->actions, SOLVE_MAX_CELLS);
        return NULL;
    }
    solver *sv = calloc(1, sizeof *sv);
    if (!sv)
        goto oom;
    sv->g = g;
    sv->cells = g->actions;
    uint64_t boards = 1;
    for (int i = 0; i < sv->cells; i++) {
        sv->pow3[i] = (uint32_t)boards;
        boards *= 3;
    }
    sv->table = calloc((size_t)(boards + 3) / 4, 1);
    sv->states = malloc((size_t)(sv->cells + 1) * g->state_size);
    sv->masks = malloc((size_t)(sv->cells + 1) * (size_t)sv->cells);
    if (!sv->table || !sv->states || !sv->masks)
        goto oom;
    game_init(g, state_at(sv, 0), NULL);
    solve_rec(sv, 0, board_index(sv, state_at(sv, 0)));
    return sv;
oom:
    solve_free(sv);
    snprintf(err, errlen, "solver: out of memory");
    return NULL;
}

void solve_free(solver *sv)
{
    if (!sv)
        return;
    free(sv->table);
    free(sv->states);
    free(sv->masks);
    free(sv);
}

int solve_value(solver *sv, const game_state *s)
{
    uint32_t idx = board_index(sv, s);
    int code = table_get(sv, idx);
    if (code)
        return code - 2;
    game_copy(sv->g, state_at(sv, 0), s);
    return solve_rec(sv, 0, idx);
}

int solve_best_moves(solver *sv, const game_state *s, uint8_t *mask)
{
    const game *g = sv->g;
    int n = game_legal(g, s, mask);
    if (!n)
        return 0;
    int me = game_current_player(g, s), best = solve_value(sv, s), count = 0;
    uint32_t idx = board_index(sv, s);
    for (int a = 0; a < sv->cells; a++) {
        if (!mask[a])
            continue;
        uint32_t child = idx + sv->pow3[a] * (uint32_t)(me + 1);
        int code = table_get(sv, child);
        if (!code) { /* only off the solved tree */
            game_copy(g, state_at(sv, 0), s);
            int rc = game_play(g, state_at(sv, 0), a);
            assert(rc == 0);
            (void)rc;
            code = solve_rec(sv, 0, child) + 2;
        }
        mask[a] = -(code - 2) == best;
        count += mask[a];
    }
    assert(count > 0);
    return count;
}

long solve_positions(const solver *sv) { return sv->positions; }
