/* renju.c — renju's forbidden points and every rule's win check (see renju.h).
 *
 * A point's four lines are read into 13-cell arrays centred on it (offsets -6..6:
 * enough to tell a five from an overline for every pattern that matters), each cell
 * EMPTY, BLACK or WALL (a white stone or off the board: both end black's lines). On one
 * line, with p black and a / b black stones running on from p to the left / right:
 *   - a five-point (a point that would make a five through p) can only be the first
 *     non-black cell on either side of that run, so a line has at most two; they come
 *     from one straight four when the run is 4, else they are two fours;
 *   - a four-making point q of a three is also the first non-black cell on one side:
 *     after it the run must be exactly 4 with both ends empty and neither end followed
 *     by a black stone (so both ends make exactly five).
 * So one line is judged in O(1) reads, and only the three check recurses (on q, with p
 * on the board).
 */
#include "renju.h"

#include <assert.h>
#include <string.h>

enum { RJ_EMPTY = 0, RJ_BLACK = 1, RJ_WALL = 2 };
enum { RJ_HALF = 6, RJ_LEN = 2 * RJ_HALF + 1 };

static const int rj_dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};

typedef struct rj_board {
    uint8_t *b; /* mutable only inside the recursion (a private copy) */
    int rows, cols;
    int black;
} rj_board;

/* What one line through p says, p counted as black. */
typedef struct rj_line {
    int run;   /* black stones in a row through p */
    int fours; /* 0, 1 or 2 */
    int nq;    /* four-making points of a three through p (offsets in q[]) */
    int q[2];
} rj_line;

const char *renju_verdict_name(renju_verdict v)
{
    switch (v) {
    case RENJU_ALLOWED: return "allowed";
    case RENJU_FIVE: return "five";
    case RENJU_OVERLINE: return "overline";
    case RENJU_DOUBLE_FOUR: return "double four";
    case RENJU_DOUBLE_THREE: return "double three";
    }
    return "?";
}

/* Steps from (r, c) along (dr, dc) that stay on the board, at most RJ_HALF. */
static inline int rj_room(const rj_board *x, int r, int c, int dr, int dc)
{
    int k = RJ_HALF;
    if (dr > 0 && x->rows - 1 - r < k)
        k = x->rows - 1 - r;
    if (dr < 0 && r < k)
        k = r;
    if (dc > 0 && x->cols - 1 - c < k)
        k = x->cols - 1 - c;
    if (dc < 0 && c < k)
        k = c;
    return k;
}

/* L[RJ_LEN]: the line through cell along direction d, cell itself black. */
static void rj_read(const rj_board *x, int cell, int d, int8_t *L)
{
    int r = cell / x->cols, c = cell % x->cols, dr = rj_dirs[d][0], dc = rj_dirs[d][1];
    int step = dr * x->cols + dc;
    L[RJ_HALF] = RJ_BLACK;
    for (int s = -1; s <= 1; s += 2) {
        int room = rj_room(x, r, c, s * dr, s * dc), i = 1;
        for (const uint8_t *p = x->b + cell + s * step; i <= room; i++, p += s * step)
            L[RJ_HALF + s * i] = *p == 0 ? RJ_EMPTY : *p == x->black ? RJ_BLACK : RJ_WALL;
        for (; i <= RJ_HALF; i++)
            L[RJ_HALF + s * i] = RJ_WALL; /* off the board */
    }
}

/* Black stones in a row from index i going by step (i itself not counted). */
static inline int rj_count(const int8_t *L, int i, int step)
{
    int n = 0;
    for (i += step; i >= 0 && i < RJ_LEN && L[i] == RJ_BLACK; i += step)
        n++;
    return n;
}

static inline bool rj_is(const int8_t *L, int i, int v)
{
    return i >= 0 && i < RJ_LEN && L[i] == v;
}

static void rj_analyse(const int8_t *L, rj_line *o)
{
    int a = rj_count(L, RJ_HALF, -1), b = rj_count(L, RJ_HALF, 1);
    o->run = a + b + 1;
    o->fours = 0;
    o->nq = 0;
    if (o->run >= 5)
        return;
    int end[2] = {RJ_HALF - a - 1, RJ_HALF + b + 1}; /* first non-black cell each side */
    int beyond[2];
    bool five[2];
    for (int s = 0; s < 2; s++) {
        int step = s ? 1 : -1;
        beyond[s] = rj_is(L, end[s], RJ_EMPTY) ? rj_count(L, end[s], step) : -1;
        five[s] = beyond[s] >= 0 && o->run + 1 + beyond[s] == 5;
    }
    o->fours = five[0] + five[1];
    if (o->fours == 2 && o->run == 4)
        o->fours = 1; /* the straight four .XXXX.: one four, two ways to five */
    if (o->fours)
        return; /* a line with a four makes no three */
    for (int s = 0; s < 2; s++) {
        if (beyond[s] < 0 || o->run + 1 + beyond[s] != 4)
            continue;
        /* with q = end[s] filled: four stones from lo to hi */
        int lo = s ? RJ_HALF - a : end[0] - beyond[0];
        int hi = s ? end[1] + beyond[1] : RJ_HALF + b;
        if (rj_is(L, lo - 1, RJ_EMPTY) && rj_is(L, hi + 1, RJ_EMPTY) &&
            !rj_is(L, lo - 2, RJ_BLACK) && !rj_is(L, hi + 2, RJ_BLACK))
            o->q[o->nq++] = end[s] - RJ_HALF;
    }
}

/* The verdict at empty cell. x->b may be written (a private copy) when scratch is NULL;
 * otherwise the board is copied into scratch (RENJU_MAX_CELLS bytes) before the first
 * write, so that the caller's board is never changed. */
static renju_verdict rj_verdict(rj_board *x, int cell, int depth, uint8_t *scratch)
{
    rj_line ln[4];
    int8_t L[RJ_LEN];
    for (int d = 0; d < 4; d++) {
        rj_read(x, cell, d, L);
        rj_analyse(L, &ln[d]);
    }
    for (int d = 0; d < 4; d++)
        if (ln[d].run == 5)
            return RENJU_FIVE;
    for (int d = 0; d < 4; d++)
        if (ln[d].run > 5)
            return RENJU_OVERLINE;
    int fours = ln[0].fours + ln[1].fours + ln[2].fours + ln[3].fours;
    if (fours >= 2)
        return RENJU_DOUBLE_FOUR;
    int cand = 0;
    for (int d = 0; d < 4; d++)
        cand += ln[d].nq > 0;
    if (cand < 2)
        return RENJU_ALLOWED;
    if (depth >= RENJU_MAX_DEPTH)
        return RENJU_DOUBLE_THREE; /* too deep to look at q: the threes count */
    rj_board y = *x;
    if (scratch) {
        memcpy(scratch, x->b, (size_t)x->rows * (size_t)x->cols);
        y.b = scratch;
    }
    int r = cell / x->cols, c = cell % x->cols;
    y.b[cell] = (uint8_t)x->black;
    int threes = 0, left = cand;
    for (int d = 0; d < 4 && threes < 2 && threes + left >= 2; d++) {
        if (ln[d].nq == 0)
            continue;
        left--;
        for (int i = 0; i < ln[d].nq; i++) {
            int off = ln[d].q[i];
            int q = (r + off * rj_dirs[d][0]) * x->cols + c + off * rj_dirs[d][1];
            assert(y.b[q] == 0);
            if (!renju_verdict_forbidden(rj_verdict(&y, q, depth + 1, NULL))) {
                threes++;
                break;
            }
        }
    }
    y.b[cell] = 0;
    return threes >= 2 ? RENJU_DOUBLE_THREE : RENJU_ALLOWED;
}

renju_verdict renju_check(const uint8_t *board, int rows, int cols, int cell, int black)
{
    assert(rows >= 1 && cols >= 1 && rows * cols <= RENJU_MAX_CELLS);
    assert(cell >= 0 && cell < rows * cols && board[cell] == 0);
    /* The board is only read unless a recursion is needed, which copies it first. */
    rj_board x = {.b = (uint8_t *)(uintptr_t)board, .rows = rows, .cols = cols, .black = black};
    uint8_t scratch[RENJU_MAX_CELLS];
    return rj_verdict(&x, cell, 0, scratch);
}

bool renju_forbidden(const uint8_t *board, int rows, int cols, int cell, int black)
{
    return renju_verdict_forbidden(renju_check(board, rows, cols, cell, black));
}

int renju_forbidden_mask(const uint8_t *board, int rows, int cols, int black, uint8_t *mask)
{
    /* A point can only be forbidden with black stones near it on its lines: an overline
     * needs 5 within 5 points on one line, a double four 3 on each of two lines (or 4 on
     * one), a double three 2 on each of two. So count, for every point and line, the
     * black stones within 5 points (white stones ignored: a count too high only costs a
     * full check), and check in full only the points with 2 or more on two lines or 4
     * or more on one. */
    int n = rows * cols, count = 0;
    assert(n <= RENJU_MAX_CELLS);
    uint8_t near[4][RENJU_MAX_CELLS];
    memset(near, 0, sizeof near[0] * 4);
    for (int i = 0; i < n; i++) {
        if (board[i] != black)
            continue;
        int r = i / cols, c = i % cols;
        for (int d = 0; d < 4; d++)
            for (int s = -1; s <= 1; s += 2)
                for (int k = 1; k <= 5; k++) {
                    int rr = r + s * k * rj_dirs[d][0], cc = c + s * k * rj_dirs[d][1];
                    if (rr < 0 || rr >= rows || cc < 0 || cc >= cols)
                        break;
                    near[d][rr * cols + cc]++;
                }
    }
    for (int i = 0; i < n; i++) {
        mask[i] = 0;
        if (board[i])
            continue;
        int two = (near[0][i] >= 2) + (near[1][i] >= 2) + (near[2][i] >= 2) + (near[3][i] >= 2);
        bool four = near[0][i] >= 4 || near[1][i] >= 4 || near[2][i] >= 4 || near[3][i] >= 4;
        if (two < 2 && !four)
            continue;
        mask[i] = renju_forbidden(board, rows, cols, i, black);
        count += mask[i];
    }
    return count;
}

bool renju_wins(const uint8_t *board, int rows, int cols, int k, cfg_rule rule, int cell,
                int color, int black)
{
    int r = cell / cols, c = cell % cols;
    for (int d = 0; d < 4; d++) {
        int dr = rj_dirs[d][0], dc = rj_dirs[d][1], n = 1, endv[2] = {0, 0};
        for (int s = -1; s <= 1; s += 2) {
            int rr = r + s * dr, cc = c + s * dc;
            while (rr >= 0 && rr < rows && cc >= 0 && cc < cols && board[rr * cols + cc] == color) {
                n++;
                rr += s * dr;
                cc += s * dc;
            }
            /* what lies just beyond the run: 0 empty or off the board, else a stone */
            endv[s > 0] = (rr >= 0 && rr < rows && cc >= 0 && cc < cols) ? board[rr * cols + cc] : 0;
        }
        switch (rule) {
        case CFG_RULE_FREESTYLE:
            if (n >= k)
                return true;
            break;
        case CFG_RULE_EXACT:
            if (n == k)
                return true;
            break;
        case CFG_RULE_RENJU:
            if (color == black ? n == k : n >= k)
                return true;
            break;
        case CFG_RULE_CARO:
            /* endv holds no stone of color (the run stopped there): non-zero = opponent */
            if (n == k && !(endv[0] && endv[1]))
                return true;
            break;
        }
    }
    return false;
}
