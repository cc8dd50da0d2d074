/* threat.c — VCF / VCT threat-space search (see threat.h).
 *
 * Windows. Every run of k cells along a row, column or diagonal is a window; each keeps
 * code = (black stones) | (white stones) << 4. A window with no opponent stone and
 * k-1 / k-2 / k-3 stones of a colour is in that colour's class 2 / 1 / 0 bitset
 * (toggled in place and unplace, so the sets are always current):
 *   class 2: its one empty cell completes k (a "completion point");
 *   class 1: either of its two empty cells makes a four, with the other as completion;
 *   class 0: its empty cells are candidate threes for VCT.
 * Under exact, a window whose neighbour cell just before or after it holds the same
 * colour would complete an overline, so it is skipped when read (the check is at read
 * time because a stone outside a window changes it without changing its code).
 *
 * Nodes. attack() has the attacker to move, defend() the defender:
 *   attack: a completion point of his own wins; two of the defender's lose (he can
 *     block one); one of the defender's must be blocked (the only move); otherwise the
 *     moves are his fours (double fours first) and, in VCT, his threes.
 *   defend: a completion point of the defender's loses the attack; two of the
 *     attacker's win; one is the forced block; with none, VCF fails, and VCT computes
 *     the attacker's winning follow-ups W (moves that make two completion points). A
 *     defender move x that is not a counter-four leaves some m in W intact unless x is
 *     m or (m has exactly two completion points) one of them, so the replies are the
 *     intersection over W of {m} + those points, plus every counter-four. No W: no
 *     threat, the attack fails; W but no reply: the attack wins.
 * A VCT node at its depth limit continues as VCF. Results go to the transposition
 * table keyed by the stones' Zobrist key, the mode, the attacker and the side to move:
 * wins for ever, failures with the depth they were searched to (a budget abort is not
 * stored). The line is read back from the table afterwards (re-searched if an entry was
 * overwritten).
 */
#include "threat.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rng.h"

enum { TH_MAX_PLY = 176, TH_VCF_DEPTH = 120, TH_MAX_PART = 4, TH_MAX_VCT = 20 };
enum { R_FAIL = 0, R_WIN = 1, R_ABORT = 2 };
enum { TT_WIN = 1, TT_FAIL = 2 };
#define TH_DEPTH_ANY 255 /* a failure that no depth can change */

typedef struct tt_entry {
    uint64_t key;
    int16_t best;  /* the winning move (attack) or -1 */
    uint8_t flag;  /* TT_WIN / TT_FAIL */
    uint8_t depth; /* plies searched for a failure */
    uint32_t pad;
} tt_entry;

struct threat_solver {
    /* immutable after threat_new */
    int rows, cols, n, k;
    bool exact;
    bool caro;        /* threat_set_caro */
    int nw, nwords;
    int16_t *wcell;   /* [nw][k] cells of each window */
    int16_t *wend;    /* [nw][2] the cell before / after the window, -1 off the board */
    int16_t *cellw;   /* [n][4k] windows through each cell */
    uint8_t *ncellw;  /* [n] */
    uint64_t *zob;    /* [2][n] */
    uint64_t side_key[2][2][2]; /* [mode][attacker - 1][defender to move] */
    tt_entry *tt;     /* [tt_mask + 1] */
    uint64_t tt_mask;
    threat_forbidden_fn forbidden;
    void *fctx;
    bool naive;       /* threat_set_naive */
    /* mutated by a search */
    uint8_t *board;   /* [n] */
    uint8_t *code;    /* [nw] */
    uint64_t *bits;   /* [2 colours][3 classes][nwords] */
    uint64_t key;
    int16_t *moves;   /* [TH_MAX_PLY][n] move list per ply */
    int16_t *tmp, *tmp2; /* [n] scratch lists */
    int16_t *walk;    /* [2 * TH_MAX_PLY] stones placed while reading the line */
    uint32_t *mark, *mark2; /* [n] stamps */
    uint16_t *hit;    /* [n] */
    int16_t *part;    /* [n][TH_MAX_PART] completion points a four-move makes */
    uint8_t *npart;   /* [n] */
    uint32_t stamp;
    int att;          /* the attacker's colour */
    int mode;         /* THREAT_VCF / THREAT_VCT */
    long nodes, limit;
    double deadline;  /* monotonic seconds, 0 = none */
    bool aborted;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *threat_status_to_string(threat_status s)
{
    switch (s) {
    case THREAT_ERROR: return "error";
    case THREAT_NONE: return "none";
    case THREAT_WIN: return "win";
    case THREAT_UNKNOWN: return "unknown";
    }
    return "?";
}

/* ---- life cycle ------------------------------------------------------------------ */

threat_solver *threat_new(int rows, int cols, int k, bool exact, int tt_log2, char *err,
                          size_t errlen)
{
    if (rows < 1 || rows > 64 || cols < 1 || cols > 64) {
        snprintf(err, errlen, "threat: board %dx%d: expected 1..64 a side", rows, cols);
        return NULL;
    }
    if (k < 4 || k > 15 || (k > rows && k > cols)) {
        snprintf(err, errlen, "threat: k = %d: the threat solver needs 4 <= k <= 15 and a line "
                              "of k on the board (tic-tac-toe's k = 3 has no fours and threes)", k);
        return NULL;
    }
    if (tt_log2 < 10 || tt_log2 > 26) {
        snprintf(err, errlen, "threat: tt_log2 = %d: expected 10..26", tt_log2);
        return NULL;
    }
    threat_solver *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "threat: out of memory");
        return NULL;
    }
    t->rows = rows;
    t->cols = cols;
    t->n = rows * cols;
    t->k = k;
    t->exact = exact;
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int nw = 0;
    for (int d = 0; d < 4; d++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                int er = r + (k - 1) * dirs[d][0], ec = c + (k - 1) * dirs[d][1];
                if (er >= 0 && er < rows && ec >= 0 && ec < cols)
                    nw++;
            }
    t->nw = nw;
    t->nwords = (nw + 63) / 64;
    size_t n = (size_t)t->n;
    t->wcell = malloc((size_t)nw * (size_t)k * sizeof *t->wcell);
    t->wend = malloc((size_t)nw * 2 * sizeof *t->wend);
    t->cellw = malloc(n * 4 * (size_t)k * sizeof *t->cellw);
    t->ncellw = calloc(n, 1);
    t->zob = malloc(2 * n * sizeof *t->zob);
    t->tt_mask = ((uint64_t)1 << tt_log2) - 1;
    t->tt = calloc((size_t)1 << tt_log2, sizeof *t->tt);
    t->board = calloc(n, 1);
    t->code = calloc((size_t)nw > 0 ? (size_t)nw : 1, 1);
    t->bits = calloc((size_t)6 * (size_t)(t->nwords > 0 ? t->nwords : 1), sizeof *t->bits);
    t->moves = malloc((size_t)TH_MAX_PLY * n * sizeof *t->moves);
    t->tmp = malloc(n * sizeof *t->tmp);
    t->tmp2 = malloc(n * sizeof *t->tmp2);
    t->walk = malloc(2 * TH_MAX_PLY * sizeof *t->walk);
    t->mark = calloc(n, sizeof *t->mark);
    t->mark2 = calloc(n, sizeof *t->mark2);
    t->hit = calloc(n, sizeof *t->hit);
    t->part = malloc(n * TH_MAX_PART * sizeof *t->part);
    t->npart = calloc(n, 1);
    if (!t->wcell || !t->wend || !t->cellw || !t->ncellw || !t->zob || !t->tt || !t->board ||
        !t->code || !t->bits || !t->moves || !t->tmp || !t->tmp2 || !t->walk || !t->mark ||
        !t->mark2 || !t->hit || !t->part || !t->npart) {
        threat_free(t);
        snprintf(err, errlen, "threat: out of memory (table of 2^%d entries)", tt_log2);
        return NULL;
    }
    int w = 0;
    for (int d = 0; d < 4; d++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                int dr = dirs[d][0], dc = dirs[d][1];
                int er = r + (k - 1) * dr, ec = c + (k - 1) * dc;
                if (er < 0 || er >= rows || ec < 0 || ec >= cols)
                    continue;
                for (int i = 0; i < k; i++) {
                    int cell = (r + i * dr) * cols + c + i * dc;
                    t->wcell[w * k + i] = (int16_t)cell;
                    t->cellw[(size_t)cell * 4 * (size_t)k + t->ncellw[cell]++] = (int16_t)w;
                }
                int br = r - dr, bc = c - dc, ar = er + dr, ac = ec + dc;
                t->wend[2 * w] = (int16_t)((br >= 0 && br < rows && bc >= 0 && bc < cols)
                                               ? br * cols + bc : -1);
                t->wend[2 * w + 1] = (int16_t)((ar >= 0 && ar < rows && ac >= 0 && ac < cols)
                                                   ? ar * cols + ac : -1);
                w++;
            }
    rng r;
    rng_seed(&r, 0x7468726561747321ULL ^ (uint64_t)(rows * 977 + cols * 31 + k));
    for (size_t i = 0; i < 2 * n; i++)
        t->zob[i] = rng_next(&r);
    for (int m = 0; m < 2; m++)
        for (int a = 0; a < 2; a++)
            for (int s = 0; s < 2; s++)
                t->side_key[m][a][s] = rng_next(&r);
    t->stamp = 1;
    return t;
}

void threat_free(threat_solver *t)
{
    if (!t)
        return;
    free(t->wcell);
    free(t->wend);
    free(t->cellw);
    free(t->ncellw);
    free(t->zob);
    free(t->tt);
    free(t->board);
    free(t->code);
    free(t->bits);
    free(t->moves);
    free(t->tmp);
    free(t->tmp2);
    free(t->walk);
    free(t->mark);
    free(t->mark2);
    free(t->hit);
    free(t->part);
    free(t->npart);
    free(t);
}

void threat_set_forbidden(threat_solver *t, threat_forbidden_fn fn, void *ctx)
{
    t->forbidden = fn;
    t->fctx = ctx;
    memset(t->tt, 0, (size_t)(t->tt_mask + 1) * sizeof *t->tt);
}

void threat_set_caro(threat_solver *t, bool caro)
{
    t->caro = caro;
    memset(t->tt, 0, (size_t)(t->tt_mask + 1) * sizeof *t->tt);
}

void threat_set_naive(threat_solver *t, bool naive)
{
    t->naive = naive;
    memset(t->tt, 0, (size_t)(t->tt_mask + 1) * sizeof *t->tt);
}

long threat_nodes(const threat_solver *t)
{
    return t->nodes;
}

/* ---- board and patterns ---------------------------------------------------------- */

static inline void toggle(threat_solver *t, int w, int code)
{
    int b = code & 15, wh = code >> 4, lo = t->k - 3;
    uint64_t bit = (uint64_t)1 << (w & 63);
    if (wh == 0 && b >= lo && b <= t->k - 1)
        t->bits[(size_t)(b - lo) * (size_t)t->nwords + (size_t)(w >> 6)] ^= bit;
    if (b == 0 && wh >= lo && wh <= t->k - 1)
        t->bits[(size_t)(3 + wh - lo) * (size_t)t->nwords + (size_t)(w >> 6)] ^= bit;
}

static inline void place(threat_solver *t, int cell, int color)
{
    assert(t->board[cell] == 0);
    t->board[cell] = (uint8_t)color;
    t->key ^= t->zob[(size_t)(color - 1) * (size_t)t->n + (size_t)cell];
    int add = color == 1 ? 1 : 16;
    const int16_t *ws = t->cellw + (size_t)cell * 4 * (size_t)t->k;
    for (int j = 0; j < t->ncellw[cell]; j++) {
        int w = ws[j];
        toggle(t, w, t->code[w]);
        t->code[w] = (uint8_t)(t->code[w] + add);
        toggle(t, w, t->code[w]);
    }
    t->nodes++;
}

static inline void unplace(threat_solver *t, int cell)
{
    int color = t->board[cell];
    assert(color == 1 || color == 2);
    t->board[cell] = 0;
    t->key ^= t->zob[(size_t)(color - 1) * (size_t)t->n + (size_t)cell];
    int add = color == 1 ? 1 : 16;
    const int16_t *ws = t->cellw + (size_t)cell * 4 * (size_t)t->k;
    for (int j = 0; j < t->ncellw[cell]; j++) {
        int w = ws[j];
        toggle(t, w, t->code[w]);
        t->code[w] = (uint8_t)(t->code[w] - add);
        toggle(t, w, t->code[w]);
    }
}

static uint32_t next_stamp(threat_solver *t)
{
    if (++t->stamp == 0) {
        memset(t->mark, 0, (size_t)t->n * sizeof *t->mark);
        memset(t->mark2, 0, (size_t)t->n * sizeof *t->mark2);
        t->stamp = 1;
    }
    return t->stamp;
}

static inline bool is_forbidden(const threat_solver *t, int cell, int color)
{
    return t->forbidden && t->forbidden(t->fctx, t->board, cell, color);
}

/* Would filling window w with color make no win: under exact an overline, under caro
 * also a line whose two neighbours hold the opponent's stones? */
static inline bool overline_end(const threat_solver *t, int w, int color)
{
    if (!t->exact)
        return false;
    int b = t->wend[2 * w], a = t->wend[2 * w + 1];
    if ((b >= 0 && t->board[b] == color) || (a >= 0 && t->board[a] == color))
        return true;
    return t->caro && b >= 0 && a >= 0 && t->board[b] == 3 - color && t->board[a] == 3 - color;
}

#define FOR_EACH_WINDOW(t, color, cls, w)                                                     \
    for (int wi_ = 0; wi_ < (t)->nwords; wi_++)                                               \
        for (uint64_t bw_ = (t)->bits[(size_t)(((color) - 1) * 3 + (cls)) * (size_t)(t)->nwords \
                                      + (size_t)wi_];                                          \
             bw_ && ((w) = wi_ * 64 + __builtin_ctzll(bw_), 1); bw_ &= bw_ - 1)

/* Completion points of color (empty cells that make a line of k): written to out,
 * distinct; returns how many. */
static int fives(threat_solver *t, int color, int16_t *out)
{
    uint32_t s = next_stamp(t);
    int n = 0, w;
    FOR_EACH_WINDOW(t, color, 2, w)
    {
        if (overline_end(t, w, color))
            continue;
        const int16_t *c = t->wcell + (size_t)w * (size_t)t->k;
        int e = -1;
        for (int i = 0; i < t->k; i++)
            if (!t->board[c[i]]) {
                e = c[i];
                break;
            }
        assert(e >= 0);
        if (t->mark[e] == s || is_forbidden(t, e, color))
            continue;
        t->mark[e] = s;
        out[n++] = (int16_t)e;
    }
    return n;
}

static void add_partner(threat_solver *t, uint32_t s, int m, int e, int color, int16_t *out,
                        int *n)
{
    if (is_forbidden(t, m, color) || is_forbidden(t, e, color))
        return;
    if (t->mark[m] != s) {
        t->mark[m] = s;
        t->npart[m] = 0;
        out[(*n)++] = (int16_t)m;
    }
    int16_t *p = t->part + (size_t)m * TH_MAX_PART;
    for (int i = 0; i < t->npart[m]; i++)
        if (p[i] == e)
            return;
    if (t->npart[m] < TH_MAX_PART)
        p[t->npart[m]++] = (int16_t)e;
}

/* The four-moves of color (moves after which it has a completion point): written to
 * out, double fours (two or more completion points) first; each move's completion
 * points are in part/npart until the next call. Returns how many. */
static int fours(threat_solver *t, int color, int16_t *out)
{
    uint32_t s = next_stamp(t);
    int n = 0, w;
    FOR_EACH_WINDOW(t, color, 1, w)
    {
        if (overline_end(t, w, color))
            continue;
        const int16_t *c = t->wcell + (size_t)w * (size_t)t->k;
        int e[2], ne = 0;
        for (int i = 0; i < t->k && ne < 2; i++)
            if (!t->board[c[i]])
                e[ne++] = c[i];
        assert(ne == 2);
        add_partner(t, s, e[0], e[1], color, out, &n);
        add_partner(t, s, e[1], e[0], color, out, &n);
    }
    /* double fours to the front, otherwise in order (deterministic) */
    int d = 0;
    for (int i = 0; i < n; i++)
        if (t->npart[out[i]] >= 2) {
            int16_t x = out[i];
            memmove(out + d + 1, out + d, (size_t)(i - d) * sizeof *out);
            out[d++] = x;
        }
    return n;
}

/* VCT threes of color: the empty cells of its class-0 windows that are not among the
 * n moves already in out; appended; returns how many were added. */
static int threes(threat_solver *t, int color, int16_t *out, int n)
{
    uint32_t s = next_stamp(t);
    for (int i = 0; i < n; i++)
        t->mark[out[i]] = s;
    int added = 0, w;
    FOR_EACH_WINDOW(t, color, 0, w)
    {
        if (overline_end(t, w, color))
            continue;
        const int16_t *c = t->wcell + (size_t)w * (size_t)t->k;
        for (int i = 0; i < t->k; i++) {
            int e = c[i];
            if (t->board[e] || t->mark[e] == s)
                continue;
            t->mark[e] = s;
            if (is_forbidden(t, e, color))
                continue;
            out[n + added++] = (int16_t)e;
        }
    }
    return added;
}

/* The defender's replies to the attacker's threat when the attacker has no completion
 * point (see the header comment). Returns -1 when the attacker has no winning follow-up
 * (no threat), else the number of replies written to out (0: nothing defends). */
static int vct_replies(threat_solver *t, int att, int def, int16_t *out)
{
    int nf = fours(t, att, t->tmp);
    int nw = 0;
    for (int i = 0; i < nf && t->npart[t->tmp[i]] >= 2; i++)
        nw++; /* double fours are at the front */
    if (nw == 0)
        return -1;
    /* intersection of the W sets: count hits per cell */
    next_stamp(t);
    uint32_t s2 = t->stamp;
    for (int i = 0; i < nw; i++) {
        int m = t->tmp[i];
        int cells[1 + TH_MAX_PART], nc = 0;
        cells[nc++] = m;
        if (t->npart[m] == 2) {
            cells[nc++] = t->part[(size_t)m * TH_MAX_PART];
            cells[nc++] = t->part[(size_t)m * TH_MAX_PART + 1];
        }
        for (int j = 0; j < nc; j++) {
            int x = cells[j];
            if (t->mark2[x] != s2) {
                t->mark2[x] = s2;
                t->hit[x] = 0;
            }
            t->hit[x]++;
        }
    }
    int n = 0;
    {
        int m = t->tmp[0];
        int cells[3], nc = 0;
        cells[nc++] = m;
        if (t->npart[m] == 2) {
            cells[nc++] = t->part[(size_t)m * TH_MAX_PART];
            cells[nc++] = t->part[(size_t)m * TH_MAX_PART + 1];
        }
        for (int j = 0; j < nc; j++)
            if (t->hit[cells[j]] == nw && !is_forbidden(t, cells[j], def))
                out[n++] = (int16_t)cells[j];
    }
    if (t->naive)
        return n;
    /* every counter-four of the defender */
    uint32_t s3 = next_stamp(t);
    for (int i = 0; i < n; i++)
        t->mark2[out[i]] = s3;
    int nd = fours(t, def, t->tmp2);
    for (int i = 0; i < nd; i++)
        if (t->mark2[t->tmp2[i]] != s3) {
            t->mark2[t->tmp2[i]] = s3;
            out[n++] = t->tmp2[i];
        }
    return n;
}

/* ---- search ---------------------------------------------------------------------- */

static bool out_of_budget(threat_solver *t)
{
    if (t->aborted)
        return true;
    if (t->nodes >= t->limit || (t->deadline > 0 && (t->nodes & 255) == 0 && now_seconds() > t->deadline))
        t->aborted = true;
    return t->aborted;
}

static inline uint64_t node_key(const threat_solver *t, int def_to_move)
{
    return t->key ^ t->side_key[t->mode][t->att - 1][def_to_move];
}

static void tt_store(threat_solver *t, uint64_t key, int flag, int best, int depth)
{
    tt_entry *e = &t->tt[key & t->tt_mask];
    e->key = key;
    e->flag = (uint8_t)flag;
    e->best = (int16_t)best;
    e->depth = (uint8_t)(depth < 0 ? 0 : depth > TH_DEPTH_ANY ? TH_DEPTH_ANY : depth);
}

static const tt_entry *tt_probe(const threat_solver *t, uint64_t key)
{
    const tt_entry *e = &t->tt[key & t->tt_mask];
    return e->key == key && e->flag ? e : NULL;
}

static int defend(threat_solver *t, int ply, int depth);

static int attack(threat_solver *t, int ply, int depth)
{
    if (out_of_budget(t))
        return R_ABORT;
    if (ply >= TH_MAX_PLY - 2)
        return R_FAIL;
    int A = t->att, D = 3 - A;
    uint64_t key = node_key(t, 0);
    const tt_entry *e = tt_probe(t, key);
    if (e && (e->flag == TT_WIN || e->depth >= depth))
        return e->flag == TT_WIN ? R_WIN : R_FAIL;
    int16_t *mv = t->moves + (size_t)ply * (size_t)t->n;
    if (fives(t, A, mv) > 0) {
        tt_store(t, key, TT_WIN, mv[0], 0);
        return R_WIN;
    }
    int nd = fives(t, D, mv);
    if (nd >= 2) {
        tt_store(t, key, TT_FAIL, -1, TH_DEPTH_ANY);
        return R_FAIL;
    }
    if (depth <= 0) {
        if (t->mode != THREAT_VCT)
            return R_FAIL;
        t->mode = THREAT_VCF;
        int r = attack(t, ply, TH_VCF_DEPTH);
        const tt_entry *v = r == R_WIN ? tt_probe(t, node_key(t, 0)) : NULL;
        t->mode = THREAT_VCT;
        if (v && v->flag == TT_WIN)
            tt_store(t, key, TT_WIN, v->best, 0);
        return r;
    }
    int nm;
    if (nd == 1) {
        if (is_forbidden(t, mv[0], A)) {
            tt_store(t, key, TT_FAIL, -1, TH_DEPTH_ANY);
            return R_FAIL;
        }
        nm = 1;
    } else {
        nm = fours(t, A, mv);
        if (t->mode == THREAT_VCT)
            nm += threes(t, A, mv, nm);
    }
    for (int i = 0; i < nm; i++) {
        int m = mv[i];
        place(t, m, A);
        int r = defend(t, ply + 1, depth - 1);
        unplace(t, m);
        if (r == R_WIN) {
            tt_store(t, key, TT_WIN, m, 0);
            return R_WIN;
        }
        if (r == R_ABORT)
            return R_ABORT;
    }
    tt_store(t, key, TT_FAIL, -1, depth);
    return R_FAIL;
}

/* The defender's moves at a defend node: returns -2 (the attack fails at once), -1 (the
 * attack wins at once) or the number of replies in mv. */
static int defender_moves(threat_solver *t, int16_t *mv)
{
    int A = t->att, D = 3 - A;
    if (fives(t, D, mv) > 0)
        return -2;
    int na = fives(t, A, mv);
    if (na >= 2)
        return -1;
    if (na == 1)
        return is_forbidden(t, mv[0], D) ? -1 : 1;
    if (t->mode != THREAT_VCT)
        return -2;
    int n = vct_replies(t, A, D, mv);
    return n < 0 ? -2 : n == 0 ? -1 : n;
}

static int defend(threat_solver *t, int ply, int depth)
{
    if (out_of_budget(t))
        return R_ABORT;
    uint64_t key = node_key(t, 1);
    const tt_entry *e = tt_probe(t, key);
    if (e && (e->flag == TT_WIN || e->depth >= depth))
        return e->flag == TT_WIN ? R_WIN : R_FAIL;
    int16_t *mv = t->moves + (size_t)ply * (size_t)t->n;
    int nm = defender_moves(t, mv);
    if (nm == -2) {
        tt_store(t, key, TT_FAIL, -1, TH_DEPTH_ANY);
        return R_FAIL;
    }
    if (nm == -1) {
        tt_store(t, key, TT_WIN, -1, 0);
        return R_WIN;
    }
    for (int i = 0; i < nm; i++) {
        int x = mv[i];
        place(t, x, 3 - t->att);
        int r = attack(t, ply + 1, depth - 1);
        unplace(t, x);
        if (r == R_FAIL) {
            tt_store(t, key, TT_FAIL, -1, depth);
            return R_FAIL;
        }
        if (r == R_ABORT)
            return R_ABORT;
    }
    tt_store(t, key, TT_WIN, -1, 0);
    return R_WIN;
}

/* Loads board; returns 0 or -1 with a message. */
static int load(threat_solver *t, const uint8_t *board, char *err, size_t errlen)
{
    memset(t->board, 0, (size_t)t->n);
    memset(t->code, 0, (size_t)t->nw);
    memset(t->bits, 0, (size_t)6 * (size_t)t->nwords * sizeof *t->bits);
    t->key = 0;
    for (int i = 0; i < t->n; i++) {
        if (board[i] > 2) {
            snprintf(err, errlen, "threat: board cell %d holds %d (expected 0, 1 or 2)", i, board[i]);
            return -1;
        }
        if (board[i])
            place(t, i, board[i]);
    }
    for (int w = 0; w < t->nw; w++) {
        int b = t->code[w] & 15, wh = t->code[w] >> 4;
        int color = b == t->k ? 1 : wh == t->k ? 2 : 0;
        if (color && !overline_end(t, w, color)) {
            snprintf(err, errlen, "threat: the board already has a line of %d (%s): the game is over",
                     t->k, color == 1 ? "black" : "white");
            return -1;
        }
    }
    return 0;
}

/* Searches the loaded board for attacker; budget counts from the current node count. */
static int run(threat_solver *t, int attacker, threat_kind kind, long budget, double seconds,
               int vct_depth)
{
    t->att = attacker;
    t->limit = t->nodes + budget;
    t->deadline = seconds > 0 ? now_seconds() + seconds : 0;
    t->aborted = false;
    if (kind == THREAT_VCF) {
        t->mode = THREAT_VCF;
        return attack(t, 0, TH_VCF_DEPTH);
    }
    int r = R_FAIL;
    for (int d = 0; d <= vct_depth && r == R_FAIL; d++) {
        t->mode = THREAT_VCT;
        r = attack(t, 0, 2 * d);
    }
    t->mode = THREAT_VCT;
    return r;
}

/* Reads the proven line from the table (re-searching lost entries); the board is left
 * as it was. Returns the line's length, or -1 if a step could not be re-proven. */
static int read_line(threat_solver *t, threat_kind kind, long budget, int vct_depth, int *pv,
                     int pvmax)
{
    int A = t->att, D = 3 - A, nwalk = 0, len = 0, root_mode = t->mode, reruns = 0;
    int16_t *mv = t->moves; /* ply 0's list: nothing else uses it between steps */
    bool ok = false;
    while (nwalk < 2 * TH_MAX_PLY - 2) {
        /* attacker */
        int m = -1;
        if (fives(t, A, mv) > 0) {
            m = mv[0];
        } else {
            for (int mode = root_mode; mode >= 0 && m < 0; mode--) {
                int saved = t->mode;
                t->mode = mode;
                const tt_entry *e = tt_probe(t, node_key(t, 0));
                t->mode = saved;
                if (e && e->flag == TT_WIN && e->best >= 0 && !t->board[e->best])
                    m = e->best;
            }
            if (m < 0) {
                int r = run(t, A, kind, budget, 0, vct_depth);
                t->mode = root_mode;
                if (r != R_WIN || ++reruns > 2)
                    break;
                continue; /* the table has it now */
            }
            reruns = 0;
        }
        bool five = fives(t, A, mv) > 0;
        place(t, m, A);
        t->walk[nwalk++] = (int16_t)m;
        if (len < pvmax)
            pv[len] = m;
        len++;
        if (five) {
            ok = true;
            break;
        }
        /* defender */
        t->mode = root_mode;
        int nm = defender_moves(t, mv);
        int x;
        if (nm == -2) {
            break; /* cannot happen on a proven line */
        } else if (nm == -1) {
            /* nothing defends: block a completion point or the first follow-up, else
             * any point the defender may play */
            int nf = fives(t, A, mv);
            if (nf == 0) {
                nf = fours(t, A, mv);
                nf = nf > 0 ? 1 : 0;
            }
            x = -1;
            for (int i = 0; i < nf && x < 0; i++)
                if (!is_forbidden(t, mv[i], D))
                    x = mv[i];
            for (int i = 0; i < t->n && x < 0; i++)
                if (!t->board[i] && !is_forbidden(t, i, D))
                    x = i;
            if (x < 0)
                break;
        } else {
            x = mv[0];
        }
        place(t, x, D);
        t->walk[nwalk++] = (int16_t)x;
        if (len < pvmax)
            pv[len] = x;
        len++;
    }
    while (nwalk > 0)
        unplace(t, t->walk[--nwalk]);
    t->mode = root_mode;
    return ok ? len : -1;
}

threat_status threat_solve(threat_solver *t, const uint8_t *board, int attacker, threat_kind kind,
                           long budget, double seconds, int vct_depth, int *pv, int pvmax,
                           int *pvlen, char *err, size_t errlen)
{
    *pvlen = 0;
    if (budget <= 0) {
        snprintf(err, errlen, "threat: node budget %ld: expected > 0", budget);
        return THREAT_ERROR;
    }
    if (attacker != 1 && attacker != 2) {
        snprintf(err, errlen, "threat: attacker %d: expected 1 (black) or 2 (white)", attacker);
        return THREAT_ERROR;
    }
    if (kind != THREAT_VCF && kind != THREAT_VCT) {
        snprintf(err, errlen, "threat: unknown kind %d", (int)kind);
        return THREAT_ERROR;
    }
    if (kind == THREAT_VCT && (vct_depth < 1 || vct_depth > TH_MAX_VCT)) {
        snprintf(err, errlen, "threat: VCT depth %d: expected 1..%d", vct_depth, TH_MAX_VCT);
        return THREAT_ERROR;
    }
    if (pvmax < 0 || (pvmax > 0 && !pv)) {
        snprintf(err, errlen, "threat: no room for the line");
        return THREAT_ERROR;
    }
    t->nodes = 0;
    if (load(t, board, err, errlen) < 0)
        return THREAT_ERROR;
    t->nodes = 0;
    int r = run(t, attacker, kind, budget, seconds, vct_depth);
    if (r == R_ABORT)
        return THREAT_UNKNOWN;
    if (r == R_FAIL)
        return THREAT_NONE;
    int len = read_line(t, kind, budget, vct_depth, pv, pvmax);
    if (len < 0) {
        snprintf(err, errlen, "threat: proven win but its line could not be read back "
                              "(budget %ld too small to re-prove a lost table entry)", budget);
        return THREAT_UNKNOWN;
    }
    *pvlen = len < pvmax ? len : pvmax;
    return THREAT_WIN;
}

int threat_defences(threat_solver *t, const uint8_t *board, int defender, long budget,
                    uint8_t *mask, bool *found, char *err, size_t errlen)
{
    *found = false;
    if (defender != 1 && defender != 2) {
        snprintf(err, errlen, "threat: defender %d: expected 1 (black) or 2 (white)", defender);
        return -1;
    }
    int pv[2 * TH_MAX_PLY], len;
    threat_status st = threat_solve(t, board, 3 - defender, THREAT_VCF, budget, 0, 1, pv,
                                    2 * TH_MAX_PLY, &len, err, errlen);
    if (st == THREAT_ERROR)
        return -1;
    if (st != THREAT_WIN)
        return 0;
    *found = true;
    int A = 3 - defender, D = defender;
    memset(mask, 0, (size_t)t->n);
    int16_t *cand = t->moves + (size_t)(TH_MAX_PLY - 1) * (size_t)t->n; /* unused by a VCF */
    /* a completion point of the defender wins at once: those alone */
    int nc = fives(t, D, cand);
    if (nc > 0) {
        for (int i = 0; i < nc; i++)
            mask[cand[i]] = 1;
        return nc;
    }
    uint32_t s = next_stamp(t);
    nc = 0;
    for (int i = 0; i < len; i++)
        if (t->mark2[pv[i]] != s) {
            t->mark2[pv[i]] = s;
            cand[nc++] = (int16_t)pv[i];
        }
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int r0 = pv[0] / t->cols, c0 = pv[0] % t->cols;
    for (int d = 0; d < 4; d++)
        for (int step = -(t->k - 1); step <= t->k - 1; step++) {
            int r = r0 + step * dirs[d][0], c = c0 + step * dirs[d][1];
            if (r < 0 || r >= t->rows || c < 0 || c >= t->cols)
                continue;
            int cell = r * t->cols + c;
            if (!t->board[cell] && t->mark2[cell] != s) {
                t->mark2[cell] = s;
                cand[nc++] = (int16_t)cell;
            }
        }
    int nf = fours(t, D, t->tmp2);
    for (int i = 0; i < nf; i++)
        if (t->mark2[t->tmp2[i]] != s) {
            t->mark2[t->tmp2[i]] = s;
            cand[nc++] = t->tmp2[i];
        }
    int count = 0;
    for (int i = 0; i < nc; i++) {
        int x = cand[i];
        if (is_forbidden(t, x, D))
            continue;
        place(t, x, D);
        int r = run(t, A, THREAT_VCF, budget, 0, 1);
        unplace(t, x);
        if (r != R_WIN) {
            mask[x] = 1;
            count++;
        }
    }
    return count;
}
