/* expectimax.c — the classical 2048 player: depth-limited expectimax over the moves and
 * the tile spawns, with the standard board heuristic at the leaves. "expectimax:D"
 * searches D moves deep (default 2): a max node over the legal moves, then a chance
 * node averaging every spawn (a 2 with 0.9, a 4 with 0.1, on each empty cell), then the
 * next move, ..., and after the D-th move the after-state is valued by the heuristic.
 *
 * The heuristic is the one nneonneo's well-known 2048 AI uses (its weights), summed
 * over every row and every column of any R x C board, on tile exponents k:
 *   200000 + 270 * empty cells + 700 * merges (neighbouring runs of equal tiles)
 *   - 47 * min(monotonicity left, right) (sum of k^4 drops against the line's direction)
 *   - 11 * sum of k^3.5
 * and a board with no legal move is worth 0. Branches whose probability falls below
 * 1e-4 are cut (valued by the heuristic), and a transposition table of 2^16 entries,
 * allocated once per player and invalidated per move by a stamp, shares the values of
 * positions reached in several ways. Nothing allocates per move.
 * 2048 only (engine/games/g2048.h); deterministic (no randomness).
 *
 * player_expectimax_new (player.h) makes the same search with learned leaves (the
 * model-expectimax player of nn/net_player.c over an n-tuple network): the leaf is the
 * after-state's value in points still to come, and each move adds the points it
 * scores, so a value is points; a cut branch is valued by its leaf too. It may search
 * one move deeper on a board with at most E empty cells, where the spawns are few (the
 * search is cheap) and a misplaced tile ends the game.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../games/g2048.h"
#include "../player.h"

enum { EX_MAX_DEPTH = 8, EX_TT_LOG2 = 16 };

#define EX_CPROB_MIN 1e-4

typedef struct ex_entry {
    uint64_t key;
    uint32_t stamp;
    int32_t depth;
    double value;
} ex_entry;

typedef struct ex_ctx {
    int depth;
    bool gains;   /* a move's points count (learned values: the points still to come) */
    player_ex_leaf leaf; /* NULL: the heuristic */
    void *leaf_ctx;
    void (*leaf_free)(void *);
    int rows, cols, cells;
    double pow4[64], pow35[64];
    ex_entry *tt; /* 2^EX_TT_LOG2 */
    uint32_t stamp;
    long nodes;   /* heuristic evaluations of the last move */
    int deep_empty; /* one move deeper on a board with at most this many empty cells; -1: never */
} ex_ctx;

static double line_value(const ex_ctx *x, const uint8_t *v, int n)
{
    double sum = 0, left = 0, right = 0;
    int empty = 0, merges = 0, prev = 0, counter = 0;
    for (int i = 0; i < n; i++) {
        int k = v[i];
        sum += x->pow35[k];
        if (k == 0) {
            empty++;
        } else {
            if (prev == k) {
                counter++;
            } else if (counter > 0) {
                merges += 1 + counter;
                counter = 0;
            }
            prev = k;
        }
    }
    if (counter > 0)
        merges += 1 + counter;
    for (int i = 1; i < n; i++) {
        if (v[i - 1] > v[i])
            left += x->pow4[v[i - 1]] - x->pow4[v[i]];
        else
            right += x->pow4[v[i]] - x->pow4[v[i - 1]];
    }
    return 200000.0 + 270.0 * empty + 700.0 * merges - 47.0 * (left < right ? left : right) -
           11.0 * sum;
}

static double heuristic(ex_ctx *x, const uint8_t *c)
{
    uint8_t v[G2048_MAX_SIDE];
    double h = 0;
    x->nodes++;
    if (x->leaf)
        return x->leaf(x->leaf_ctx, c);
    for (int r = 0; r < x->rows; r++)
        h += line_value(x, c + r * x->cols, x->cols);
    for (int col = 0; col < x->cols; col++) {
        for (int r = 0; r < x->rows; r++)
            v[r] = c[r * x->cols + col];
        h += line_value(x, v, x->rows);
    }
    return h;
}

/* Move m on cells (into out); false when it changes nothing. *gain: its points. */
static bool slide(const ex_ctx *x, const uint8_t *c, int m, uint8_t *out, double *gain)
{
    *gain = 0;
    memcpy(out, c, (size_t)x->cells);
    bool any = false;
    bool vertical = m == G2048_UP || m == G2048_DOWN, rev = m == G2048_DOWN || m == G2048_RIGHT;
    int nlines = vertical ? x->cols : x->rows, len = vertical ? x->rows : x->cols;
    for (int l = 0; l < nlines; l++) {
        uint8_t v[G2048_MAX_SIDE];
        int ix[G2048_MAX_SIDE];
        for (int i = 0; i < len; i++) {
            int j = rev ? len - 1 - i : i;
            ix[i] = vertical ? j * x->cols + l : l * x->cols + j;
            v[i] = out[ix[i]];
        }
        bool ch;
        *gain += (double)g2048_slide_line(v, len, &ch);
        if (ch) {
            any = true;
            for (int i = 0; i < len; i++)
                out[ix[i]] = v[i];
        }
    }
    return any;
}

static uint64_t board_key(const ex_ctx *x, const uint8_t *c, int depth)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)depth;
    for (int i = 0; i < x->cells; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static double max_node(ex_ctx *x, const uint8_t *c, int depth, double cprob);

/* The after-state c: the expectation over its spawns, then `depth` more moves. */
static double chance_node(ex_ctx *x, const uint8_t *c, int depth, double cprob)
{
    if (depth == 0 || cprob < EX_CPROB_MIN)
        return heuristic(x, c);
    uint64_t key = board_key(x, c, depth);
    ex_entry *e = &x->tt[key & ((1u << EX_TT_LOG2) - 1)];
    if (e->stamp == x->stamp && e->key == key && e->depth == depth)
        return e->value;
    int empty = 0;
    for (int i = 0; i < x->cells; i++)
        empty += c[i] == 0;
    double sum = 0;
    uint8_t b[G2048_MAX_CELLS];
    memcpy(b, c, (size_t)x->cells);
    double p = cprob / empty;
    for (int i = 0; i < x->cells; i++) {
        if (c[i])
            continue;
        b[i] = 1;
        sum += 0.9 * max_node(x, b, depth, p * 0.9);
        b[i] = 2;
        sum += 0.1 * max_node(x, b, depth, p * 0.1);
        b[i] = 0;
    }
    double v = empty ? sum / empty : heuristic(x, c);
    e->key = key;
    e->stamp = x->stamp;
    e->depth = depth;
    e->value = v;
    return v;
}

/* A decision: the best move's value (0 when no move is left: the game is lost). */
static double max_node(ex_ctx *x, const uint8_t *c, int depth, double cprob)
{
    double best = 0, gain;
    uint8_t after[G2048_MAX_CELLS];
    bool any = false;
    for (int m = 0; m < 4; m++)
        if (slide(x, c, m, after, &gain)) {
            double v = chance_node(x, after, depth - 1, cprob) + (x->gains ? gain : 0);
            best = !any || v > best ? v : best;
            any = true;
        }
    return best;
}

static int ex_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                     size_t errlen)
{
    (void)r;
    ex_ctx *x = p->ctx;
    uint8_t c[G2048_MAX_CELLS], after[G2048_MAX_CELLS];
    g2048_get_cells(p->g, s, c);
    x->stamp++;
    x->nodes = 0;
    int best = -1, empty = 0;
    for (int i = 0; i < x->cells; i++)
        empty += c[i] == 0;
    int depth = x->depth + (empty <= x->deep_empty); /* few empty cells: few spawns, much risk */
    double bestv = -1, gain;
    for (int m = 0; m < 4; m++)
        if (slide(x, c, m, after, &gain)) {
            double v = chance_node(x, after, depth - 1, 1.0) + (x->gains ? gain : 0);
            if (best < 0 || v > bestv) {
                bestv = v;
                best = m;
            }
        }
    if (best < 0) {
        snprintf(err, errlen, "no legal move (the game is over)");
        return -1;
    }
    if (info) {
        if (x->gains) { /* learned leaves: the value is the points still to come */
            info->has_value = 1;
            info->value[0] = (float)bestv;
        }
        info->depth = depth;
        info->simulations = (int)(x->nodes < 2000000000L ? x->nodes : 2000000000L);
    }
    return best;
}

static void ex_destroy(player *p)
{
    ex_ctx *x = p->ctx;
    if (x) {
        free(x->tt);
        if (x->leaf_free)
            x->leaf_free(x->leaf_ctx);
    }
    free(x);
    p->ctx = NULL;
}

static ex_ctx *ex_ctx_new(const game *g, int depth, char *err, size_t errlen)
{
    ex_ctx *x = calloc(1, sizeof *x);
    if (x)
        x->tt = calloc((size_t)1 << EX_TT_LOG2, sizeof *x->tt);
    if (!x || !x->tt) {
        free(x);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->depth = depth;
    x->deep_empty = -1;
    x->rows = g->rows;
    x->cols = g->cols;
    x->cells = g->rows * g->cols;
    for (int k = 0; k < 64; k++) {
        x->pow4[k] = pow(k, 4.0);
        x->pow35[k] = pow(k, 3.5);
    }
    return x;
}

static int ex_create(player *p, const char *arg, const game *g, const gz_config *cfg, char *err,
                     size_t errlen)
{
    (void)cfg;
    if (strcmp(g->name, "2048") != 0) {
        snprintf(err, errlen, "expectimax plays 2048 only (this config's game is %s)", g->name);
        return -1;
    }
    int depth = 2;
    if (arg && (player_parse_count(arg, &depth) < 0 || depth > EX_MAX_DEPTH)) {
        snprintf(err, errlen, "expected expectimax:D with D the moves searched (1..%d)",
                 EX_MAX_DEPTH);
        return -1;
    }
    ex_ctx *x = ex_ctx_new(g, depth, err, errlen);
    if (!x)
        return -1;
    p->ctx = x;
    p->choose = ex_choose;
    p->destroy = ex_destroy;
    return 0;
}

player *player_expectimax_new(const game *g, int depth, int deep_empty, player_ex_leaf leaf,
                              void *leaf_ctx, void (*leaf_free)(void *), const char *name,
                              const char *kind, char *err, size_t errlen)
{
    const char *why = NULL;
    char buf[96];
    if (strcmp(g->name, "2048") != 0) {
        snprintf(buf, sizeof buf, "expectimax plays 2048 only (this game is %s)", g->name);
        why = buf;
    } else if (depth < 1 || depth > EX_MAX_DEPTH) {
        snprintf(buf, sizeof buf, "expectimax depth %d: expected 1..%d", depth, EX_MAX_DEPTH);
        why = buf;
    } else if (deep_empty >= 0 && depth + 1 > EX_MAX_DEPTH) {
        snprintf(buf, sizeof buf, "expectimax depth %d one deeper: expected 1..%d", depth, EX_MAX_DEPTH - 1);
        why = buf;
    } else if (!leaf) {
        why = "no leaf value";
    }
    if (why) {
        snprintf(err, errlen, "%s", why);
        if (leaf_free)
            leaf_free(leaf_ctx);
        return NULL;
    }
    player *p = player_alloc(name, kind, g);
    ex_ctx *x = p ? ex_ctx_new(g, depth, err, errlen) : NULL;
    if (!x) {
        if (!p)
            snprintf(err, errlen, "out of memory");
        free(p);
        if (leaf_free)
            leaf_free(leaf_ctx);
        return NULL;
    }
    x->deep_empty = deep_empty < 0 ? -1 : deep_empty;
    x->leaf = leaf;
    x->leaf_ctx = leaf_ctx;
    x->leaf_free = leaf_free;
    x->gains = true;
    p->ctx = x;
    p->choose = ex_choose;
    p->destroy = ex_destroy;
    return p;
}

const player_kind player_kind_expectimax = {
    .name = "expectimax",
    .syntax = "expectimax[:D]",
    .help = "2048 only: depth-limited expectimax over moves and spawns with the standard "
            "heuristic (empty cells, monotonicity, merges), D moves deep (default 2)",
    .create = ex_create,
};
