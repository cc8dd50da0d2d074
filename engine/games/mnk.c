/* mnk.c — every "k in a row on an m x n board" game: tic-tac-toe (3,3,3), Gomoku
 * (15,15,5) and any board from 3 to 25 a side (DESIGN.md §2.1).
 *
 * Player 0 is black (moves first, 'X'), player 1 white ('O'). The rule (game.rule,
 * renju.h): freestyle by default (k or more in a row wins); exact (only exactly k wins,
 * standard Gomoku); renju (k = 5: black's forbidden points are illegal, so legal()
 * leaves them out and play() refuses them, as Gomocup does; black wins only with
 * exactly five, white with five or more); caro (k = 5: exactly five, not blocked by
 * the opponent at both ends). A full board without a win is a draw; so is a renju
 * position where black is to move and every empty point is forbidden for him (the game
 * cannot go on: no rule book settles it, and it never happens in real games). The win
 * check looks only at the four lines through the last stone.
 *
 * Notation: "h8" as Gomoku players write it (column letter a.. from the left, 'i'
 * included; row number counted from the bottom), and Gomocup's "x,y" (0-based column,
 * row from the top). Actions are r * cols + c with r = 0 the top row.
 *
 * Planes (player-to-move view): own stones, opponent stones, last move, ones (on-board),
 * side to move (all ones when black is to move); under renju a sixth plane: black's
 * forbidden points (whoever is to move: white plays towards them too).
 */
#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "../game.h"
#include "../parse.h"
#include "../symmetry.h"
#include "renju.h"
#include "threat.h"

enum { MNK_PLANES = 5, MNK_RENJU_PLANES = 6 };

typedef struct mnk_state {
    uint64_t stones_hash; /* Zobrist of the stones only */
    int16_t ply;
    int16_t last;         /* last action, -1 at the start */
    int8_t winner;        /* -1 none yet, 0 or 1 the winner */
    uint8_t stalled;      /* renju: black to move and every empty point forbidden (draw) */
    uint8_t pad[2];
    uint8_t board[];      /* rows*cols: 0 empty, 1 black, 2 white */
} mnk_state;

typedef struct mnk_data {
    int k;
    cfg_rule rule;
    int rows, cols;                    /* for the threat solver's forbidden-point hook */
    uint64_t side_key;                 /* white to move */
    uint64_t stone_key[2][GAME_MAX_CELLS];
    uint64_t last_key[GAME_MAX_CELLS];
} mnk_data;

#define ST(s) ((mnk_state *)(s))
#define CST(s) ((const mnk_state *)(s))
#define DATA(g) ((const mnk_data *)(g)->data)

static int mnk_create(game *g, const cfg_game *cfg, char *err, size_t errlen)
{
    if (cfg->rows < 3 || cfg->rows > 25 || cfg->cols < 3 || cfg->cols > 25) {
        snprintf(err, errlen, "key game.rows/game.cols: expected 3..25");
        return -1;
    }
    int longest = cfg->rows > cfg->cols ? cfg->rows : cfg->cols;
    if (cfg->k < 3 || cfg->k > longest) {
        snprintf(err, errlen, "key game.k: expected 3..%d", longest);
        return -1;
    }
    cfg_rule rule = cfg_game_rule(cfg);
    if (strcmp(cfg->rule, cfg_rule_name(rule))) {
        snprintf(err, errlen, "key game.rule: expected freestyle, exact, renju or caro, got \"%s\"",
                 cfg->rule);
        return -1;
    }
    if ((rule == CFG_RULE_RENJU || rule == CFG_RULE_CARO) && cfg->k != 5) {
        snprintf(err, errlen, "key game.rule: %s is a rule of five in a row (game.k = 5), but "
                 "game.k is %d", cfg->rule, cfg->k);
        return -1;
    }
    mnk_data *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->k = cfg->k;
    d->rule = rule;
    d->rows = cfg->rows;
    d->cols = cfg->cols;
    rng r;
    rng_seed(&r, 0x6d6e6b5a4f425249ULL ^ (uint64_t)(cfg->rows * 131 + cfg->cols));
    d->side_key = rng_next(&r);
    for (int i = 0; i < cfg->rows * cfg->cols; i++) {
        d->stone_key[0][i] = rng_next(&r);
        d->stone_key[1][i] = rng_next(&r);
        d->last_key[i] = rng_next(&r);
    }
    g->data = d;
    g->players = 2;
    g->rows = cfg->rows;
    g->cols = cfg->cols;
    g->lattice = GAME_LATTICE_SQUARE;
    g->actions = cfg->rows * cfg->cols;
    g->planes = rule == CFG_RULE_RENJU ? MNK_RENJU_PLANES : MNK_PLANES;
    snprintf(g->rule, sizeof g->rule, "%s", cfg_rule_name(rule));
    g->k = cfg->k;
    g->costly_legal = rule == CFG_RULE_RENJU;
    g->state_size = (sizeof(mnk_state) + (size_t)g->actions + 7) & ~(size_t)7;
    g->max_game_length = g->actions;
    sym_set_square_group(g);
    return 0;
}

static void mnk_destroy(game *g)
{
    free(g->data);
    g->data = NULL;
}

static void mnk_init(const game *g, game_state *gs, rng *r)
{
    (void)r;
    mnk_state *s = ST(gs);
    memset(s, 0, g->state_size);
    s->last = -1;
    s->winner = -1;
}

static int mnk_current_player(const game *g, const game_state *s)
{
    (void)g;
    return CST(s)->ply & 1;
}

static bool mnk_terminal(const game *g, const game_state *gs)
{
    const mnk_state *s = CST(gs);
    return s->winner >= 0 || s->ply >= g->actions || s->stalled;
}

/* Renju: black (to move) may not play a forbidden point. */
static inline bool black_forbidden(const game *g, const mnk_state *s, int a)
{
    return DATA(g)->rule == CFG_RULE_RENJU && !(s->ply & 1) &&
           renju_forbidden(s->board, g->rows, g->cols, a, 1);
}

static int mnk_legal(const game *g, const game_state *gs, uint8_t *mask)
{
    const mnk_state *s = CST(gs);
    if (mnk_terminal(g, gs)) {
        memset(mask, 0, (size_t)g->actions);
        return 0;
    }
    int n = 0;
    if (DATA(g)->rule == CFG_RULE_RENJU && !(s->ply & 1)) {
        renju_forbidden_mask(s->board, g->rows, g->cols, 1, mask); /* 1 = forbidden */
        for (int i = 0; i < g->actions; i++) {
            mask[i] = s->board[i] == 0 && !mask[i];
            n += mask[i];
        }
        return n;
    }
    for (int i = 0; i < g->actions; i++) {
        mask[i] = s->board[i] == 0;
        n += mask[i];
    }
    return n;
}

/* Would a stone of `color` at action a make a winning line under the game's rule? */
static bool makes_win(const game *g, const uint8_t *board, int a, int color)
{
    const mnk_data *d = DATA(g);
    return renju_wins(board, g->rows, g->cols, d->k, d->rule, a, color, 1);
}

static int mnk_play(const game *g, game_state *gs, int a)
{
    mnk_state *s = ST(gs);
    if (a < 0 || a >= g->actions || mnk_terminal(g, gs) || s->board[a])
        return -1;
    int p = s->ply & 1;
    bool win = makes_win(g, s->board, a, p + 1);
    if (!win && black_forbidden(g, s, a)) /* a five is never forbidden */
        return -1;
    s->board[a] = (uint8_t)(p + 1);
    s->stones_hash ^= DATA(g)->stone_key[p][a];
    s->last = (int16_t)a;
    s->ply++;
    if (win) {
        s->winner = (int8_t)p;
    } else if (p == 1 && DATA(g)->rule == CFG_RULE_RENJU && s->ply < g->actions) {
        /* black to move: he needs one allowed point (almost always the first empty one
         * looked at, so this costs about one check) */
        bool any = false;
        for (int i = 0; i < g->actions && !any; i++)
            any = !s->board[i] && !renju_forbidden(s->board, g->rows, g->cols, i, 1);
        s->stalled = !any;
    }
    return 0;
}

static void mnk_result(const game *g, const game_state *gs, float *z)
{
    (void)g;
    const mnk_state *s = CST(gs);
    if (s->winner < 0) {
        z[0] = z[1] = 0.0f;
    } else {
        z[s->winner] = 1.0f;
        z[1 - s->winner] = -1.0f;
    }
}

static void mnk_cells(const game *g, const game_state *gs, int8_t *cells)
{
    const mnk_state *s = CST(gs);
    for (int i = 0; i < g->actions; i++)
        cells[i] = (int8_t)(s->board[i] ? s->board[i] - 1 : GAME_CELL_EMPTY);
}

static void mnk_encode(const game *g, const game_state *gs, float *planes)
{
    const mnk_state *s = CST(gs);
    int hw = g->actions;
    uint8_t own = (uint8_t)((s->ply & 1) + 1), opp = (uint8_t)(3 - own);
    float black = (s->ply & 1) ? 0.0f : 1.0f;
    memset(planes, 0, sizeof(float) * (size_t)g->planes * (size_t)hw);
    for (int i = 0; i < hw; i++) {
        planes[i] = s->board[i] == own;
        planes[hw + i] = s->board[i] == opp;
        planes[3 * hw + i] = 1.0f;
        planes[4 * hw + i] = black;
    }
    if (s->last >= 0)
        planes[2 * hw + s->last] = 1.0f;
    if (DATA(g)->rule == CFG_RULE_RENJU && !mnk_terminal(g, gs)) {
        uint8_t forbidden[GAME_MAX_CELLS];
        renju_forbidden_mask(s->board, g->rows, g->cols, 1, forbidden);
        for (int i = 0; i < hw; i++)
            planes[5 * hw + i] = forbidden[i];
    }
}

static uint64_t mnk_hash(const game *g, const game_state *gs)
{
    const mnk_state *s = CST(gs);
    const mnk_data *d = DATA(g);
    uint64_t h = s->stones_hash;
    if (s->ply & 1)
        h ^= d->side_key;
    if (s->last >= 0)
        h ^= d->last_key[s->last];
    return h;
}

static char *mnk_format_move(const game *g, int a, char *buf, size_t len)
{
    if (a < 0 || a >= g->actions) {
        snprintf(buf, len, "?");
        return buf;
    }
    int r = a / g->cols, c = a % g->cols;
    snprintf(buf, len, "%c%d", 'a' + c, g->rows - r);
    return buf;
}

static int mnk_parse_move(const game *g, const char *str, int *action, char *err, size_t errlen)
{
    while (isspace((unsigned char)*str))
        str++;
    const char *p = str;
    long long x, y;
    if (isdigit((unsigned char)str[0])) {
        /* Gomocup: x,y with x the column and y the row from the top, 0-based. Each number
         * is range-checked as read (a too-large one must not wrap into a move). */
        int rx = parse_ll_prefix(p, &p, 0, INT_MAX, &x);
        p += strspn(p, " \t");
        if (*p != ',') {
            snprintf(err, errlen, "move \"%s\": expected a letter and a number (h8) or x,y", str);
            return -1;
        }
        p++;
        p += strspn(p, " \t");
        int ry = isdigit((unsigned char)*p) ? parse_ll_prefix(p, &p, 0, INT_MAX, &y) : -2;
        if (ry == -2 || p[strspn(p, " \t\r\n")]) {
            snprintf(err, errlen, "move \"%s\": expected a letter and a number (h8) or x,y", str);
            return -1;
        }
        if (rx < 0 || ry < 0 || x >= g->cols || y >= g->rows) {
            snprintf(err, errlen, "move \"%s\": x,y outside the %dx%d board (0-based)", str, g->cols,
                     g->rows);
            return -1;
        }
        *action = (int)y * g->cols + (int)x;
        return 0;
    }
    int letter = tolower((unsigned char)str[0]);
    if (letter < 'a' || letter > 'z' || !isdigit((unsigned char)str[1])) {
        snprintf(err, errlen, "move \"%s\": expected a letter and a number (h8) or x,y", str);
        return -1;
    }
    int ry = parse_ll_prefix(str + 1, &p, 1, INT_MAX, &y);
    if (p[strspn(p, " \t\r\n")]) {
        snprintf(err, errlen, "move \"%s\": expected a letter and a number (h8) or x,y", str);
        return -1;
    }
    x = letter - 'a';
    if (ry < 0 || x >= g->cols || y > g->rows) {
        snprintf(err, errlen, "move \"%s\": outside the board (columns a-%c, rows 1-%d)", str,
                 'a' + g->cols - 1, g->rows);
        return -1;
    }
    *action = (g->rows - (int)y) * g->cols + (int)x;
    return 0;
}

static void mnk_render(const game *g, const game_state *gs, FILE *f)
{
    const mnk_state *s = CST(gs);
    /* renju, black to move: his forbidden points are drawn '#' */
    bool renju_black = DATA(g)->rule == CFG_RULE_RENJU && !(s->ply & 1) && !mnk_terminal(g, gs);
    fprintf(f, "   ");
    for (int c = 0; c < g->cols; c++)
        fprintf(f, " %c", 'a' + c);
    fprintf(f, "\n");
    for (int r = 0; r < g->rows; r++) {
        fprintf(f, "%3d", g->rows - r);
        for (int c = 0; c < g->cols; c++) {
            int a = r * g->cols + c;
            char ch = s->board[a] == 1 ? 'X' : s->board[a] == 2 ? 'O' : '.';
            if (ch == '.' && renju_black && renju_forbidden(s->board, g->rows, g->cols, a, 1))
                ch = '#';
            fprintf(f, "%c%c", a == s->last ? '(' : (a - 1 == s->last && c > 0) ? ')' : ' ', ch);
        }
        fprintf(f, "%c%d\n", (r * g->cols + g->cols - 1 == s->last) ? ')' : ' ', g->rows - r);
    }
    fprintf(f, "   ");
    for (int c = 0; c < g->cols; c++)
        fprintf(f, " %c", 'a' + c);
    fprintf(f, "\n");
    if (s->winner >= 0)
        fprintf(f, "%s wins\n", s->winner == 0 ? "X (black)" : "O (white)");
    else if (s->ply >= g->actions || s->stalled)
        fprintf(f, "draw%s\n", s->stalled ? " (black has only forbidden points)" : "");
    else
        fprintf(f, "%s to move%s\n", (s->ply & 1) ? "O (white)" : "X (black)",
                renju_black ? " (# = forbidden for black)" : "");
}

/* The start columns c of the k-windows from (r, c) in direction (dr, dc) whose k points
 * hold k - 1 of the mover's stones and one empty point: a superset of where a stone wins
 * (a winning run of k or more, whatever the rule, has such a window through the new
 * stone). Bit-parallel over the columns: a window is kept when each of its points is own
 * or empty (points off the board are neither: the shifts bring in zeros) and exactly
 * one is empty. */
static uint64_t win_windows(const uint64_t *own, const uint64_t *empty, int r, int dr, int dc,
                            int k, int C)
{
    uint64_t mine = (1ull << C) - 1, acc1 = 0, acc2 = 0; /* C <= 25 */
    for (int i = 0; i < k; i++) {
        uint64_t o = own[r + i * dr], e = empty[r + i * dr];
        if (dc > 0) {
            o >>= i;
            e >>= i;
        } else if (dc < 0) {
            o <<= i;
            e <<= i;
        }
        acc2 |= acc1 & e;
        acc1 |= e;
        mine &= o | e;
    }
    return mine & acc1 & ~acc2;
}

static int mnk_winning_move(const game *g, const game_state *gs)
{
    const mnk_state *s = CST(gs);
    if (mnk_terminal(g, gs))
        return -1;
    int color = (s->ply & 1) + 1;
    int k = DATA(g)->k;
    /* Fewer than k-1 own stones cannot make k. */
    if (s->ply / 2 < k - 1)
        return -1;
    /* A winning point completes a k-window of k - 1 own stones (win_windows): those
     * windows are found for the four directions with one bit mask a row (cols <= 25),
     * their empty points checked in full by the rule, in index order, so the first is
     * the lowest, as a full scan gives. */
    int R = g->rows, C = g->cols;
    uint64_t own[25] = {0}, empty[25] = {0}, cand[25] = {0};
    const uint8_t *b = s->board;
    for (int r = 0; r < R; r++) {
        uint64_t o = 0, e = 0;
        for (int c = 0; c < C; c++) {
            o |= (uint64_t)(b[r * C + c] == color) << c;
            e |= (uint64_t)(b[r * C + c] == 0) << c;
        }
        own[r] = o;
        empty[r] = e;
    }
    static const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int d = 0; d < 4; d++) {
        int dr = dirs[d][0], dc = dirs[d][1];
        for (int r = 0; r + (k - 1) * dr < R; r++) {
            uint64_t w = win_windows(own, empty, r, dr, dc, k, C);
            for (int i = 0; w && i < k; i++) {
                uint64_t at = dc > 0 ? w << i : dc < 0 ? w >> i : w;
                cand[r + i * dr] |= at & empty[r + i * dr];
            }
        }
    }
    for (int r = 0; r < R; r++)
        for (uint64_t m = cand[r]; m; m &= m - 1) {
            int a = r * C + __builtin_ctzll(m);
            if (makes_win(g, b, a, color))
                return a;
        }
    return -1;
}

static const char *mnk_why_illegal(const game *g, const game_state *gs, int a, char *buf,
                                   size_t len)
{
    const mnk_state *s = CST(gs);
    if (a < 0 || a >= g->actions)
        snprintf(buf, len, "action %d is off the board", a);
    else if (mnk_terminal(g, gs))
        snprintf(buf, len, "the game is over");
    else if (s->board[a])
        snprintf(buf, len, "the point is occupied");
    else if (DATA(g)->rule == CFG_RULE_RENJU && !(s->ply & 1)) {
        renju_verdict v = renju_check(s->board, g->rows, g->cols, a, 1);
        if (!renju_verdict_forbidden(v))
            return NULL;
        snprintf(buf, len, "forbidden for black under renju: %s", renju_verdict_name(v));
    } else
        return NULL;
    return buf;
}

static int mnk_ply(const game *g, const game_state *s)
{
    (void)g;
    return CST(s)->ply;
}

/* The threat solver's forbidden-point hook under renju (ctx: the game's mnk_data). */
static bool mnk_threat_forbidden(void *ctx, const uint8_t *board, int cell, int color)
{
    const mnk_data *d = ctx;
    return color == 1 && renju_forbidden(board, d->rows, d->cols, cell, 1);
}

static void *mnk_threat_new(const game *g, int tt_log2, char *err, size_t errlen)
{
    const mnk_data *d = DATA(g);
    threat_solver *t = threat_new(g->rows, g->cols, d->k,
                                  d->rule == CFG_RULE_EXACT || d->rule == CFG_RULE_CARO, tt_log2,
                                  err, errlen);
    if (t && d->rule == CFG_RULE_RENJU)
        threat_set_forbidden(t, mnk_threat_forbidden, g->data);
    if (t && d->rule == CFG_RULE_CARO)
        threat_set_caro(t, true);
    return t;
}

static void mnk_threat_free(void *ws)
{
    threat_free(ws);
}

static int mnk_threat_win(const game *g, const game_state *gs, void *ws, int player, long budget,
                          int vct_depth, int *pv, int pvmax)
{
    const mnk_state *s = CST(gs);
    /* a VCF needs k-1 stones of the attacker after his next move (a four), a VCT k-2:
     * black (player 0) has (ply + 1) / 2 stones, white ply / 2 */
    int stones = player == 0 ? (s->ply + 1) / 2 : s->ply / 2;
    int need = vct_depth > 0 ? DATA(g)->k - 3 : DATA(g)->k - 2;
    if (budget <= 0 || pvmax < 1 || (player != 0 && player != 1) || mnk_terminal(g, gs) ||
        stones < need)
        return 0;
    char err[160];
    int len = 0;
    threat_status st = threat_solve(ws, s->board, player + 1,
                                    vct_depth > 0 ? THREAT_VCT : THREAT_VCF, budget, 0,
                                    vct_depth > 0 ? (vct_depth < 20 ? vct_depth : 20) : 1, pv,
                                    pvmax, &len, err, sizeof err);
    return st == THREAT_WIN ? len : 0;
}

static int mnk_threat_defend(const game *g, const game_state *gs, void *ws, long budget,
                             uint8_t *mask)
{
    const mnk_state *s = CST(gs);
    if (budget <= 0 || mnk_terminal(g, gs) || s->ply < 2 * (DATA(g)->k - 2) - 1)
        return 0;
    char err[160];
    bool found;
    int n = threat_defences(ws, s->board, (s->ply & 1) + 1, budget, mask, &found, err, sizeof err);
    return n > 0 ? n : 0;
}

const game_ops mnk_ops = {
    .name = "mnk",
    .create = mnk_create,
    .destroy = mnk_destroy,
    .init = mnk_init,
    .current_player = mnk_current_player,
    .legal = mnk_legal,
    .play = mnk_play,
    .terminal = mnk_terminal,
    .result = mnk_result,
    .encode = mnk_encode,
    .hash = mnk_hash,
    .render = mnk_render,
    .parse_move = mnk_parse_move,
    .format_move = mnk_format_move,
    .winning_move = mnk_winning_move,
    .ply = mnk_ply,
    .cells = mnk_cells,
    .why_illegal = mnk_why_illegal,
    .threat_new = mnk_threat_new,
    .threat_free = mnk_threat_free,
    .threat_win = mnk_threat_win,
    .threat_defend = mnk_threat_defend,
};
