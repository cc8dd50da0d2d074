/* alphabeta.c — the classical m,n,k engine of seed 004: a baseline that is strong at
 * Gomoku without any learning.
 *
 * - Candidates: empty points within two points (Chebyshev distance) of a stone; the
 *   centre on an empty board.
 * - Immediate wins and forced blocks first: a move that makes k wins at once; if the
 *   opponent has a point that would make k, the only candidates are those points.
 * - Pattern evaluation: every maximal run of one colour along the four lines scores by
 *   how many stones it lacks to k and how many of its ends are open (five, open four,
 *   four, open three, three, open two, ...); runs without room to ever reach k score 0.
 *   Value = own score - opponent's score, the side to move's threats weighted up.
 * - Iterative-deepening negamax alpha-beta; moves ordered by the pattern value a stone
 *   would make there for either side (attack + defence), the previous iteration's best
 *   move first at the root; at most `width` candidates per inner node.
 * - Depth or time: "alphabeta:D" searches D plies (1..20), "alphabeta:T s" (e.g.
 *   "alphabeta:0.5s") deepens until T seconds are spent; "alphabeta" is depth 4.
 *
 * It reads the board through game_encode (own stones plane 0, opponent's plane 1), so
 * it needs no access to the m,n,k state layout; it refuses any game but mnk.
 *
 * Rules (game.rule, engine/games/renju.h): wins are judged by the rule (renju_wins), so
 * under exact and caro an overline is no win, under caro neither is a five blocked at
 * both ends, and under renju black wins only with exactly five (his overline scores
 * nothing) while white's overline wins. Under renju black never plays a forbidden point:
 * they are no candidates (nor forced blocks) for black at any node, and the threat
 * solver gets the same forbidden-point hook as the game's.
 *
 * The same engine with the threat solver (engine/games/threat.h) is the kind "threat"
 * ("threat:1s", "threat:D"; "threat" is 1 s a move). At the root: a proven VCF, then a
 * proven VCT, is played at once; when the opponent threatens a VCF, only the moves
 * that defend it (threat_defences) stay candidates; else, when he has a VCT, only the
 * root moves (the best-ordered AB_ROOT_WIDTH) after which he has none. Inside the
 * search: killer moves (two per ply) and a history table reorder the pattern-ordered
 * candidates, and a leaf whose mover has a VCF within a small node budget is scored as
 * a win. Time: up to 5% of T for our VCF, 15% for our VCT, 5% for the opponent's VCT
 * and 25% for checking the root moves against it; the rest for alpha-beta. Measured
 * on 15x15 (docs/strength.md, classical players).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../games/renju.h"
#include "../games/threat.h"
#include "../player.h"

enum { AB_WIN = 100000000, AB_MAX_DEPTH = 20, AB_ROOT_WIDTH = 32, AB_WIDTH = 12, AB_RADIUS = 2 };
/* threat kind: solver budgets in nodes (with a depth instead of a time) and the
 * per-leaf VCF budget; the killer bonus sits between a four and an open three. */
enum { TH_ROOT_NODES = 400000, TH_LEAF_NODES = 40, TH_VCT_DEPTH = 6, TH_KILLER_BONUS = 9000,
       TH_HISTORY_CAP = 4000, TH_PV = 256 };
/* m,n,k boards are at most 25 x 25 (config bounds): the per-node move list lives on the
 * stack, so it is sized for that, not for GAME_MAX_CELLS. */
#define AB_MAX_CELLS (25 * 25)

typedef struct ab_ctx {
    /* immutable after create */
    int rows, cols, n, k;
    cfg_rule rule;
    int depth;        /* fixed depth, or the deepest iteration with a time limit */
    double seconds;   /* 0 = fixed depth */
    /* mutated by a search */
    float *planes;    /* (planes, rows, cols) scratch for game_encode */
    uint8_t board[GAME_MAX_CELLS]; /* 0 empty, 1 the root's mover, 2 the opponent */
    int black;        /* the board value of black's stones (1 or 2) at this root */
    uint8_t near[GAME_MAX_CELLS];  /* stones within AB_RADIUS */
    int stones;
    long nodes;
    bool aborted;
    double deadline;  /* monotonic seconds */
    player_ctl *ctl;  /* the caller's controls (borrowed, may be NULL) */
    /* the threat kind (threat == false: plain alphabeta, none of these is used) */
    bool threat;
    threat_solver *ts;              /* owned */
    int killer[AB_MAX_DEPTH + 2][2]; /* per ply, -1 none */
    int history[GAME_MAX_CELLS];    /* cutoff counts weighted by depth^2 */
    uint8_t defend[GAME_MAX_CELLS]; /* root: moves that answer the opponent's VCF */
    long leaf_vcf;                  /* leaves proven won by the leaf VCF check */
} ab_ctx;

static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void ab_place(ab_ctx *c, int cell, int color)
{
    c->board[cell] = (uint8_t)color;
    c->stones++;
    int r = cell / c->cols, col = cell % c->cols;
    for (int dr = -AB_RADIUS; dr <= AB_RADIUS; dr++)
        for (int dc = -AB_RADIUS; dc <= AB_RADIUS; dc++) {
            int rr = r + dr, cc = col + dc;
            if (rr >= 0 && rr < c->rows && cc >= 0 && cc < c->cols)
                c->near[rr * c->cols + cc]++;
        }
}

static void ab_unplace(ab_ctx *c, int cell)
{
    c->board[cell] = 0;
    c->stones--;
    int r = cell / c->cols, col = cell % c->cols;
    for (int dr = -AB_RADIUS; dr <= AB_RADIUS; dr++)
        for (int dc = -AB_RADIUS; dc <= AB_RADIUS; dc++) {
            int rr = r + dr, cc = col + dc;
            if (rr >= 0 && rr < c->rows && cc >= 0 && cc < c->cols)
                c->near[rr * c->cols + cc]--;
        }
}

static inline int at(const ab_ctx *c, int r, int col)
{
    if (r < 0 || r >= c->rows || col < 0 || col >= c->cols)
        return -1; /* off the board: blocks like an opponent stone */
    return c->board[r * c->cols + col];
}

/* Under renju: is cell forbidden for color (only black has forbidden points)? */
static inline bool ab_forbidden(const ab_ctx *c, int cell, int color)
{
    return c->rule == CFG_RULE_RENJU && color == c->black &&
           renju_forbidden(c->board, c->rows, c->cols, cell, c->black);
}

/* The value of a run of `len` stones of color with `open` empty ends (0..2) and `space`
 * points (run + empties or own stones either side) in which it could still grow. */
static int pattern_value(const ab_ctx *c, int color, int len, int open, int space)
{
    if (len >= c->k) {
        bool overline_wins = c->rule == CFG_RULE_FREESTYLE ||
                             (c->rule == CFG_RULE_RENJU && color != c->black);
        if (len > c->k && !overline_wins)
            return 0;
        /* caro: a five shut at both ends (the edge counts here: a heuristic only; the
         * win itself is judged by renju_wins) */
        return c->rule == CFG_RULE_CARO && open == 0 ? 0 : AB_WIN / 10;
    }
    if (space < c->k)
        return 0; /* dead: can never make k here */
    static const int table[5][3] = {
        /* closed, one end open, both ends open */
        {0, 10000, 200000}, /* one stone short of k: four, open four */
        {0, 800, 8000},     /* two short: three, open three */
        {0, 60, 500},       /* three short: two, open two */
        {0, 5, 20},         /* four short */
        {0, 1, 2},
    };
    int d = c->k - len - 1;
    return d < 5 ? table[d][open] : 0;
}

/* Scans the line through (r, col) along direction i for `color`, treating (r, col) as
 * holding that colour. Fills the run length, open ends and room. */
static void line_scan(const ab_ctx *c, int r, int col, int i, int color, int *len, int *open,
                      int *space)
{
    int dr = dirs[i][0], dc = dirs[i][1];
    int n = 1, o = 0, room = 1;
    for (int s = -1; s <= 1; s += 2) {
        int rr = r + s * dr, cc = col + s * dc;
        while (at(c, rr, cc) == color) {
            n++;
            rr += s * dr;
            cc += s * dc;
        }
        int v = at(c, rr, cc);
        if (v == 0)
            o++;
        int extra = 0;
        while (extra < c->k && (v == 0 || v == color)) {
            extra++;
            rr += s * dr;
            cc += s * dc;
            v = at(c, rr, cc);
        }
        room += extra;
    }
    *len = n;
    *open = o;
    *space = room + n - 1;
}

/* Would a stone of color at cell make a winning line under the rule? */
static bool ab_makes_win(const ab_ctx *c, int cell, int color)
{
    return renju_wins(c->board, c->rows, c->cols, c->k, c->rule, cell, color, c->black);
}

/* The pattern value a stone of color at cell would make along its four lines. */
static int ab_point_value(const ab_ctx *c, int cell, int color)
{
    int r = cell / c->cols, col = cell % c->cols, v = 0;
    for (int i = 0; i < 4; i++) {
        int len, open, space;
        line_scan(c, r, col, i, color, &len, &open, &space);
        v += pattern_value(c, color, len, open, space);
    }
    return v;
}

/* Whole-board pattern score of each colour: score[1], score[2]. */
static void ab_patterns(const ab_ctx *c, long score[3])
{
    score[1] = score[2] = 0;
    for (int r = 0; r < c->rows; r++)
        for (int col = 0; col < c->cols; col++) {
            int color = c->board[r * c->cols + col];
            if (!color)
                continue;
            for (int i = 0; i < 4; i++) {
                /* Count each run once, from its first stone. */
                if (at(c, r - dirs[i][0], col - dirs[i][1]) == color)
                    continue;
                int len = 1;
                while (at(c, r + len * dirs[i][0], col + len * dirs[i][1]) == color)
                    len++;
                int before = at(c, r - dirs[i][0], col - dirs[i][1]);
                int after = at(c, r + len * dirs[i][0], col + len * dirs[i][1]);
                int open = (before == 0) + (after == 0);
                int room = len;
                for (int s = -1; s <= 1; s += 2) {
                    int rr = s < 0 ? r - dirs[i][0] : r + len * dirs[i][0];
                    int cc = s < 0 ? col - dirs[i][1] : col + len * dirs[i][1];
                    for (int e = 0; e < c->k; e++) {
                        int v = at(c, rr, cc);
                        if (v != 0 && v != color)
                            break;
                        room++;
                        rr += s * dirs[i][0];
                        cc += s * dirs[i][1];
                    }
                }
                score[color] += pattern_value(c, color, len, open, room);
            }
        }
}

/* Static value for the side `me` to move: positive is good for me. */
static int ab_evaluate(const ab_ctx *c, int me)
{
    long s[3];
    ab_patterns(c, s);
    long v = s[me] * 6 / 5 - s[3 - me];
    if (v > AB_WIN / 2)
        v = AB_WIN / 2;
    if (v < -AB_WIN / 2)
        v = -AB_WIN / 2;
    return (int)v;
}

typedef struct ab_move {
    int cell;
    int order;
} ab_move;

static int cmp_move(const void *a, const void *b)
{
    const ab_move *x = a, *y = b;
    if (x->order != y->order)
        return x->order > y->order ? -1 : 1;
    return x->cell - y->cell; /* deterministic */
}

/* Candidate moves for `me`, best first; returns their count. When `me` can win at once
 * *win is that point (else -1) and the count is 0. When the opponent threatens to win,
 * only the points that block are returned (forced blocks). */
static int ab_candidates(const ab_ctx *c, int me, ab_move *out, int *win)
{
    int n = 0, nblock = 0;
    *win = -1;
    if (c->stones == 0) {
        out[0].cell = (c->rows / 2) * c->cols + c->cols / 2;
        out[0].order = 0;
        return 1;
    }
    for (int cell = 0; cell < c->n; cell++) {
        if (c->board[cell] || !c->near[cell])
            continue;
        /* a five is never forbidden, so an allowed point is looked for only after it */
        if (ab_makes_win(c, cell, me)) {
            *win = cell;
            return 0;
        }
        if (ab_forbidden(c, cell, me))
            continue;
        if (ab_makes_win(c, cell, 3 - me)) {
            /* Forced block: keep only such points (at the front). */
            out[nblock].cell = cell;
            out[nblock].order = AB_WIN;
            nblock++;
            continue;
        }
        if (nblock)
            continue;
        out[n].cell = cell;
        n++;
    }
    if (nblock) {
        return nblock;
    }
    for (int i = 0; i < n; i++)
        out[i].order = ab_point_value(c, out[i].cell, me) + ab_point_value(c, out[i].cell, 3 - me) * 9 / 10;
    qsort(out, (size_t)n, sizeof *out, cmp_move);
    return n;
}

/* threat kind: killers (ply) and history raise a move's order; forced blocks (order
 * AB_WIN) stay first. Stable for equal orders. */
static void ab_reorder(ab_ctx *c, ab_move *moves, int n, int ply)
{
    if (n < 2 || moves[0].order >= AB_WIN)
        return;
    for (int i = 0; i < n; i++) {
        int cell = moves[i].cell;
        int h = c->history[cell] < TH_HISTORY_CAP ? c->history[cell] : TH_HISTORY_CAP;
        if (ply <= AB_MAX_DEPTH && (cell == c->killer[ply][0] || cell == c->killer[ply][1]))
            h += TH_KILLER_BONUS;
        moves[i].order += h;
    }
    qsort(moves, (size_t)n, sizeof *moves, cmp_move);
}

static void ab_note_cutoff(ab_ctx *c, int cell, int depth, int ply)
{
    c->history[cell] += depth * depth;
    if (ply <= AB_MAX_DEPTH && c->killer[ply][0] != cell) {
        c->killer[ply][1] = c->killer[ply][0];
        c->killer[ply][0] = cell;
    }
}

/* threat kind: does `me` (to move at a leaf) have a VCF within TH_LEAF_NODES? (The
 * solver fails at once when me has no four.) */
static bool ab_leaf_vcf(ab_ctx *c, int me)
{
    if (c->stones < 2 * (c->k - 2))
        return false;
    int pv[TH_PV], len;
    char err[128];
    threat_status st = threat_solve(c->ts, c->board, me, THREAT_VCF, TH_LEAF_NODES, 0, 1, pv,
                                    TH_PV, &len, err, sizeof err);
    if (st == THREAT_WIN)
        c->leaf_vcf++;
    return st == THREAT_WIN;
}

static int ab_negamax(ab_ctx *c, int depth, int alpha, int beta, int me, int ply)
{
    c->nodes++;
    if ((c->nodes & 1023) == 0) {
        if ((c->seconds > 0 && now_seconds() > c->deadline) || player_ctl_expired(c->ctl))
            c->aborted = true;
        if (c->ctl)
            atomic_store_explicit(&c->ctl->progress, c->nodes, memory_order_relaxed);
    }
    if (c->aborted)
        return 0;
    if (c->stones >= c->n)
        return 0; /* full board: draw */
    ab_move moves[AB_MAX_CELLS];
    int win;
    int n = ab_candidates(c, me, moves, &win);
    if (win >= 0)
        return AB_WIN - ply;
    if (n == 0)
        return 0;
    if (depth <= 0) {
        if (c->threat && ab_leaf_vcf(c, me))
            return AB_WIN - ply - 2; /* at least a four, a reply and the five */
        return ab_evaluate(c, me);
    }
    if (c->threat)
        ab_reorder(c, moves, n, ply);
    if (n > AB_WIDTH)
        n = AB_WIDTH;
    int best = -AB_WIN - 1;
    for (int i = 0; i < n; i++) {
        ab_place(c, moves[i].cell, me);
        int v = -ab_negamax(c, depth - 1, -beta, -alpha, 3 - me, ply + 1);
        ab_unplace(c, moves[i].cell);
        if (c->aborted)
            return 0;
        if (v > best)
            best = v;
        if (v > alpha)
            alpha = v;
        if (alpha >= beta) {
            if (c->threat)
                ab_note_cutoff(c, moves[i].cell, depth, ply);
            break;
        }
    }
    return best;
}

/* threat kind, at the root (the root's mover is colour 1): a proven VCF or VCT of ours
 * is returned at once; else, when the opponent has a VCF, the root moves are cut down to
 * the ones that defend it (*n updated; one left is returned). Returns -1 to search on. */
static int ab_threat_root(ab_ctx *c, ab_move *moves, int *n, player_info *info)
{
    int pv[TH_PV], len;
    char err[160];
    double T = c->seconds;
    for (int kind = THREAT_VCF; kind <= THREAT_VCT; kind++) {
        threat_status st = threat_solve(c->ts, c->board, 1, (threat_kind)kind, TH_ROOT_NODES,
                                        T > 0 ? T * (kind == THREAT_VCF ? 0.05 : 0.15) : 0,
                                        TH_VCT_DEPTH, pv, TH_PV, &len, err, sizeof err);
        c->nodes += threat_nodes(c->ts);
        if (st == THREAT_WIN) {
            if (info) {
                info->depth = len;
                info->ntop = 1;
                info->top[0].action = pv[0];
                info->top[0].visits = AB_WIN;
            }
            return pv[0];
        }
    }
    /* The opponent's VCF: only the moves that answer it (threat_defences checks each
     * candidate with its own VCF search: keep that cheap). */
    long budget = T > 0 ? (long)(T * 20000) : 50000;
    if (budget < 2000)
        budget = 2000;
    bool found;
    int nd = threat_defences(c->ts, c->board, 1, budget, c->defend, &found, err, sizeof err);
    c->nodes += threat_nodes(c->ts);
    int k = 0;
    if (found) {
        if (nd <= 0)
            return -1; /* nothing answers it: lost, search on */
        for (int i = 0; i < *n; i++)
            if (c->defend[moves[i].cell])
                moves[k++] = moves[i];
        for (int cell = 0; k == 0 && cell < c->n; cell++)
            if (c->defend[cell] && k < AB_ROOT_WIDTH)
                moves[k++] = (ab_move){.cell = cell, .order = 0};
        *n = k;
        return k == 1 ? moves[0].cell : -1;
    }
    /* The opponent's VCT: keep the best-ordered root moves after which he has none. */
    threat_status st = threat_solve(c->ts, c->board, 2, THREAT_VCT, TH_ROOT_NODES,
                                    T > 0 ? T * 0.05 : 0, TH_VCT_DEPTH, pv, TH_PV, &len, err,
                                    sizeof err);
    c->nodes += threat_nodes(c->ts);
    if (st != THREAT_WIN)
        return -1;
    int limit = *n < AB_ROOT_WIDTH ? *n : AB_ROOT_WIDTH;
    double per = T > 0 ? T * 0.25 / limit : 0;
    for (int i = 0; i < limit; i++) {
        ab_place(c, moves[i].cell, 1);
        st = threat_solve(c->ts, c->board, 2, THREAT_VCT, TH_ROOT_NODES / 8, per, TH_VCT_DEPTH,
                          pv, TH_PV, &len, err, sizeof err);
        c->nodes += threat_nodes(c->ts);
        ab_unplace(c, moves[i].cell);
        if (st != THREAT_WIN)
            moves[k++] = moves[i];
    }
    if (k == 0)
        return -1; /* every move loses to a VCT within the budgets: search them all */
    *n = k;
    return k == 1 ? moves[0].cell : -1;
}

/* The threat solver's forbidden-point hook under renju (ctx: the ab_ctx). */
static bool ab_threat_forbidden(void *ctx, const uint8_t *board, int cell, int color)
{
    const ab_ctx *c = ctx;
    return color == c->black && renju_forbidden(board, c->rows, c->cols, cell, c->black);
}

static int ab_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                     size_t errlen)
{
    (void)r;
    ab_ctx *c = p->ctx;
    const game *g = p->g;
    if (game_terminal(g, s)) {
        snprintf(err, errlen, "no legal move (the game is over)");
        return -1;
    }
    game_encode(g, s, c->planes);
    int black = game_current_player(g, s) == 0 ? 1 : 2;
    if (c->ts && c->rule == CFG_RULE_RENJU && black != c->black)
        threat_set_forbidden(c->ts, ab_threat_forbidden, c); /* clears its table too */
    c->black = black;
    memset(c->board, 0, sizeof c->board);
    memset(c->near, 0, sizeof c->near);
    c->stones = 0;
    for (int i = 0; i < c->n; i++) {
        if (c->planes[i] > 0.5f)
            ab_place(c, i, 1);
        else if (c->planes[c->n + i] > 0.5f)
            ab_place(c, i, 2);
    }
    c->nodes = 0;
    c->aborted = false;
    c->deadline = now_seconds() + c->seconds;
    c->ctl = p->ctl;

    ab_move moves[AB_MAX_CELLS];
    int win;
    int n = ab_candidates(c, 1, moves, &win);
    if (win >= 0 || n == 1) {
        int a = win >= 0 ? win : moves[0].cell;
        if (info) {
            info->depth = 1;
            info->ntop = 1;
            info->top[0].action = a;
            info->top[0].visits = win >= 0 ? AB_WIN : 0;
        }
        return a;
    }
    if (n == 0) {
        /* Every point near the stones is forbidden (renju) or none is near: take the
         * first legal point. */
        uint8_t *mask = c->defend; /* scratch: the threat kind refills it later */
        game_legal(g, s, mask);
        for (int i = 0; i < c->n; i++)
            if (mask[i])
                return i;
        snprintf(err, errlen, "no legal move");
        return -1;
    }
    if (c->threat) {
        int a = ab_threat_root(c, moves, &n, info);
        if (a >= 0)
            return a;
        for (int d = 0; d <= AB_MAX_DEPTH + 1; d++)
            c->killer[d][0] = c->killer[d][1] = -1;
        for (int i = 0; i < c->n; i++)
            c->history[i] /= 2; /* age the last move's history */
    }
    if (n > AB_ROOT_WIDTH)
        n = AB_ROOT_WIDTH;
    int best_cell = moves[0].cell, reached = 0;
    int scores[AB_ROOT_WIDTH];
    int maxd = c->seconds > 0 ? AB_MAX_DEPTH : c->depth;
    for (int d = 1; d <= maxd; d++) {
        int alpha = -AB_WIN - 1, beta = AB_WIN + 1, best = -AB_WIN - 1, bi = 0;
        for (int i = 0; i < n; i++) {
            ab_place(c, moves[i].cell, 1);
            /* Moves after the best so far are fail-low bounds: good enough to order. */
            int v = -ab_negamax(c, d - 1, -beta, -alpha, 2, 1);
            ab_unplace(c, moves[i].cell);
            if (c->aborted)
                break;
            scores[i] = v;
            if (v > best) {
                best = v;
                bi = i;
            }
            if (v > alpha)
                alpha = v;
        }
        if (c->aborted)
            break;
        reached = d;
        best_cell = moves[bi].cell;
        /* Next iteration: this iteration's values order the root (stable for ties). */
        for (int i = 0; i < n; i++)
            moves[i].order = scores[i];
        qsort(moves, (size_t)n, sizeof *moves, cmp_move);
        for (int i = 0; i < n; i++)
            scores[i] = moves[i].order;
        if (best >= AB_WIN - AB_MAX_DEPTH || best <= -AB_WIN + AB_MAX_DEPTH)
            break; /* a forced result: deeper search cannot change it */
        if ((c->seconds > 0 && now_seconds() > c->deadline) || player_ctl_expired(c->ctl))
            break;
    }
    if (info) {
        info->depth = reached;
        info->simulations = (int)(c->nodes > 2147483647L ? 2147483647L : c->nodes);
        info->ntop = 0;
        if (reached > 0)
            for (int i = 0; i < n && i < PLAYER_INFO_TOP; i++) {
                info->top[i].action = moves[i].cell;
                info->top[i].visits = moves[i].order;
                info->ntop++;
            }
    }
    return best_cell;
}

static void ab_destroy(player *p)
{
    ab_ctx *c = p->ctx;
    if (c) {
        free(c->planes);
        threat_free(c->ts);
    }
    free(c);
    p->ctx = NULL;
}

/* Makes an alphabeta (threat false) or threat player; kind names the kind in messages. */
static int ab_make(player *p, const char *kind, const char *arg, const game *g,
                   const gz_config *cfg, bool threat, char *err, size_t errlen)
{
    if (strcmp(g->name, "mnk") != 0 || g->actions > AB_MAX_CELLS) {
        snprintf(err, errlen, "%s plays only m,n,k games (tic-tac-toe, Gomoku), not %s", kind,
                 g->name);
        return -1;
    }
    int depth = 4;
    double seconds = threat ? 1.0 : 0;
    if (arg) {
        size_t len = strlen(arg);
        seconds = 0;
        if (len > 1 && arg[len - 1] == 's') {
            if (player_parse_seconds(arg, &seconds) < 0) {
                snprintf(err, errlen, "expected %s:D (depth 1..%d) or %s:Ts "
                                      "(seconds > 0, e.g. 0.5s)", kind, AB_MAX_DEPTH, kind);
                return -1;
            }
        } else if (player_parse_count(arg, &depth) < 0 || depth > AB_MAX_DEPTH) {
            snprintf(err, errlen, "expected %s:D (depth 1..%d) or %s:Ts (seconds > 0, "
                                  "e.g. 0.5s)", kind, AB_MAX_DEPTH, kind);
            return -1;
        }
    }
    /* the game's rule, not cfg's: a protocol may have made the game for another rule */
    int rule_id = cfg_rule_parse(g->rule);
    cfg_rule rule = rule_id < 0 ? CFG_RULE_FREESTYLE : (cfg_rule)rule_id;
    threat_solver *ts = NULL;
    if (threat) {
        /* 2^20 entries (16 MB): proven results carry over from move to move */
        ts = threat_new(g->rows, g->cols, cfg->game.k,
                        rule == CFG_RULE_EXACT || rule == CFG_RULE_CARO, 20, err, errlen);
        if (!ts)
            return -1;
        threat_set_caro(ts, rule == CFG_RULE_CARO);
    }
    ab_ctx *c = calloc(1, sizeof *c);
    float *planes = malloc(sizeof(float) * (size_t)g->planes * (size_t)g->actions);
    if (!c || !planes) {
        free(c);
        free(planes);
        threat_free(ts);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->rows = g->rows;
    c->cols = g->cols;
    c->n = g->rows * g->cols;
    c->k = cfg->game.k;
    c->rule = rule;
    c->black = 1;
    if (ts && c->rule == CFG_RULE_RENJU)
        threat_set_forbidden(ts, ab_threat_forbidden, c);
    c->depth = depth;
    c->seconds = seconds;
    c->planes = planes;
    c->threat = threat;
    c->ts = ts;
    assert(c->n == g->actions);
    p->ctx = c;
    p->choose = ab_choose;
    p->destroy = ab_destroy;
    return 0;
}

static int ab_create(player *p, const char *arg, const game *g, const gz_config *cfg, char *err,
                     size_t errlen)
{
    return ab_make(p, "alphabeta", arg, g, cfg, false, err, errlen);
}

static int threat_create(player *p, const char *arg, const game *g, const gz_config *cfg,
                         char *err, size_t errlen)
{
    return ab_make(p, "threat", arg, g, cfg, true, err, errlen);
}

const player_kind player_kind_alphabeta = {
    .name = "alphabeta",
    .syntax = "alphabeta[:D|:Ts]",
    .help = "m,n,k only: pattern-evaluation alpha-beta, D plies (default 4) or T seconds",
    .create = ab_create,
};

const player_kind player_kind_threat = {
    .name = "threat",
    .syntax = "threat[:Ts|:D]",
    .help = "m,n,k with k >= 4: alpha-beta with the VCF/VCT threat solver, killer and history "
            "ordering; T seconds (default 1s) or D plies",
    .create = threat_create,
};
