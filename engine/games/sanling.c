/* sanling.c — Sanling, the placement game on the triangular lattice (DESIGN.md §2.2,
 * seed 000's 三菱棋).
 *
 * Board: an N x N rhombus (N = game.size, 5..64) in axial coordinates; action = r*N + c
 * with r = 0 the top row. The six neighbours of (r,c) are (r-1,c) (r+1,c) (r,c-1)
 * (r,c+1) (r-1,c+1) (r+1,c-1); (r-1,c-1) and (r+1,c+1) are not neighbours.
 * Rules: a neutral stone starts at the centre (N/2, N/2). game.players (2 or 3) place
 * one stone each in turn, always on an empty point adjacent to any stone (the
 * frontier), for game.moves placements in total (or until no empty point is left).
 * Score: one point per unit triangle (three mutually adjacent points, the shapes
 * (r,c),(r,c+1),(r+1,c) and (r,c+1),(r+1,c),(r+1,c+1)) whose points all hold the
 * player's stones. Ties are broken by the player's largest six-connected group, then
 * shared. Outcome: place k (0 = best) is worth 1 - 2k/(players-1) (three players +1, 0,
 * -1; two players +1, -1); tied players share the average of the places they occupy.
 *
 * Notation (as in the game Hex, which uses the same rhombus and the same adjacency):
 * a column label then a row number, "a1" = the top-left point (r 0, c 0). Columns are
 * lettered a..z, then aa..az, ba..bl (bijective base 26, as spreadsheet columns), so
 * N = 64 ends at column "bl"; rows are numbered 1..N from the top. Letters are case
 * insensitive on input; no leading zeros in the number ("c07" is refused).
 *
 * Planes (player-to-move view), players + 4 of them: the stones of the player to move,
 * of the next player, (three players) of the one after; the neutral stone; the frontier
 * (empty points adjacent to a stone: the legal moves while the game runs); progress
 * moves_played / moves as a constant plane; ones (on-board marker).
 *
 * State: one byte per point (empty / neutral / player stone, plus a frontier bit kept
 * up to date by play(), never recomputed), the triangle count of each player (also
 * incremental: a stone completes at most the six triangles around it), the ply and
 * the Zobrist hash of the stones. N = 13: 200 bytes; N = 64: 4120 bytes.
 * Zobrist: a key per (player, point) and a key per ply; the ply fixes both the side to
 * move and the progress plane, and the stones fix the frontier.
 */
#include "sanling.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "../game.h"

enum {
    SL_EMPTY = 0,
    SL_NEUTRAL = 1,
    SL_STONE0 = 2,      /* player p's stone is SL_STONE0 + p */
    SL_FRONTIER = 0x80, /* on an empty point: adjacent to a stone */
    SL_FIXED_PLANES = 4 /* neutral, frontier, progress, ones */
};

typedef struct sl_state {
    uint64_t stones_hash; /* Zobrist of the players' stones */
    int16_t ply;          /* placements so far (the neutral stone not counted) */
    int16_t nfrontier;    /* empty points adjacent to a stone */
    int16_t tri[GAME_MAX_PLAYERS]; /* unit triangles of each player */
    int16_t pad;
    uint8_t cell[];       /* N*N: SL_EMPTY | SL_NEUTRAL | SL_STONE0+p, | SL_FRONTIER */
} sl_state;

typedef struct sl_data {
    int n, moves, centre;
    uint64_t stone_key[GAME_MAX_PLAYERS][GAME_MAX_CELLS];
    uint64_t ply_key[GAME_MAX_CELLS + 1];
} sl_data;

#define ST(s) ((sl_state *)(s))
#define CST(s) ((const sl_state *)(s))
#define DATA(g) ((const sl_data *)(g)->data)

/* Neighbour offsets in cyclic order: consecutive ones (and the last with the first) are
 * adjacent to each other, so each consecutive pair closes a unit triangle. */
static const int nb_dr[6] = {0, -1, -1, 0, 1, 1};
static const int nb_dc[6] = {1, 1, 0, -1, -1, 0};

static const char stone_char[GAME_MAX_PLAYERS] = {'X', 'O', 'V'};

static bool on_board(int n, int r, int c) { return r >= 0 && r < n && c >= 0 && c < n; }

static int sl_create(game *g, const cfg_game *cfg, char *err, size_t errlen)
{
    int n = cfg->size;
    if (n < 5 || n > GAME_MAX_SIDE) {
        snprintf(err, errlen, "key game.size: expected 5..%d", GAME_MAX_SIDE);
        return -1;
    }
    if (cfg->players < 2 || cfg->players > 3) {
        snprintf(err, errlen, "key game.players: expected 2 or 3");
        return -1;
    }
    if (cfg->moves < 1 || cfg->moves > n * n - 1) {
        snprintf(err, errlen, "key game.moves: expected 1..%d (size*size-1)", n * n - 1);
        return -1;
    }
    sl_data *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->n = n;
    d->moves = cfg->moves;
    d->centre = (n / 2) * n + n / 2;
    rng r;
    rng_seed(&r, 0x53414e4c494e4721ULL ^ (uint64_t)(n * 7 + cfg->players));
    for (int i = 0; i < n * n; i++)
        for (int p = 0; p < cfg->players; p++)
            d->stone_key[p][i] = rng_next(&r);
    for (int i = 0; i <= cfg->moves; i++)
        d->ply_key[i] = rng_next(&r);
    g->data = d;
    g->players = cfg->players;
    g->rows = g->cols = n;
    g->lattice = GAME_LATTICE_HEX;
    g->actions = n * n;
    g->planes = cfg->players + SL_FIXED_PLANES;
    g->state_size = (sizeof(sl_state) + (size_t)g->actions + 7) & ~(size_t)7;
    g->max_game_length = cfg->moves;
    /* Only the elements of the hex group that fix the centre stone: on an odd N the
     * whole group; on an even N the centre (N/2, N/2) is off the anti-diagonal axis, so
     * only the transpose keeps it. */
    g->sym[0] = SYM_ID;
    if (n % 2) {
        g->nsym = 4;
        g->sym[1] = SYM_ROT180;
        g->sym[2] = SYM_TRANSPOSE;
        g->sym[3] = SYM_ANTITRANSPOSE;
    } else {
        g->nsym = 2;
        g->sym[1] = SYM_TRANSPOSE;
    }
    return 0;
}

static void sl_destroy(game *g)
{
    free(g->data);
    g->data = NULL;
}

int sanling_neighbours(const game *g, int action, int *out)
{
    assert(strcmp(g->name, "sanling") == 0);
    int n = DATA(g)->n, r = action / n, c = action % n, k = 0;
    for (int i = 0; i < 6; i++)
        if (on_board(n, r + nb_dr[i], c + nb_dc[i]))
            out[k++] = (r + nb_dr[i]) * n + c + nb_dc[i];
    return k;
}

/* Marks the empty neighbours of a as frontier. */
static void grow_frontier(int n, sl_state *s, int a)
{
    int r = a / n, c = a % n;
    for (int i = 0; i < 6; i++) {
        int rr = r + nb_dr[i], cc = c + nb_dc[i];
        if (on_board(n, rr, cc) && s->cell[rr * n + cc] == SL_EMPTY) {
            s->cell[rr * n + cc] = SL_FRONTIER;
            s->nfrontier++;
        }
    }
}

/* Unit triangles through a whose three points hold `v`. */
static int triangles_at(int n, const uint8_t *cell, int a, uint8_t v)
{
    int r = a / n, c = a % n, k = 0;
    for (int i = 0; i < 6; i++) {
        int j = (i + 1) % 6;
        int r1 = r + nb_dr[i], c1 = c + nb_dc[i], r2 = r + nb_dr[j], c2 = c + nb_dc[j];
        k += on_board(n, r1, c1) && on_board(n, r2, c2) && cell[r1 * n + c1] == v &&
             cell[r2 * n + c2] == v;
    }
    return k;
}

static void sl_init(const game *g, game_state *gs, rng *r)
{
    (void)r;
    const sl_data *d = DATA(g);
    sl_state *s = ST(gs);
    memset(s, 0, g->state_size);
    s->cell[d->centre] = SL_NEUTRAL;
    grow_frontier(d->n, s, d->centre);
}

static int sl_current_player(const game *g, const game_state *s)
{
    return CST(s)->ply % g->players;
}

static bool sl_terminal(const game *g, const game_state *gs)
{
    const sl_state *s = CST(gs);
    return s->ply >= DATA(g)->moves || s->nfrontier == 0;
}

static int sl_legal(const game *g, const game_state *gs, uint8_t *mask)
{
    const sl_state *s = CST(gs);
    if (sl_terminal(g, gs)) {
        memset(mask, 0, (size_t)g->actions);
        return 0;
    }
    for (int i = 0; i < g->actions; i++)
        mask[i] = s->cell[i] == SL_FRONTIER;
    return s->nfrontier;
}

static int sl_play(const game *g, game_state *gs, int a)
{
    const sl_data *d = DATA(g);
    sl_state *s = ST(gs);
    if (a < 0 || a >= g->actions || s->cell[a] != SL_FRONTIER || sl_terminal(g, gs))
        return -1;
    int p = s->ply % g->players;
    uint8_t v = (uint8_t)(SL_STONE0 + p);
    s->cell[a] = v;
    s->nfrontier--;
    grow_frontier(d->n, s, a);
    s->tri[p] = (int16_t)(s->tri[p] + triangles_at(d->n, s->cell, a, v));
    s->stones_hash ^= d->stone_key[p][a];
    s->ply++;
    return 0;
}

void sanling_score(const game *g, const game_state *gs, int *triangles, int *largest_group)
{
    assert(strcmp(g->name, "sanling") == 0);
    const sl_state *s = CST(gs);
    int n = DATA(g)->n;
    uint8_t seen[GAME_MAX_CELLS];
    int16_t stack[GAME_MAX_CELLS];
    memset(seen, 0, (size_t)g->actions);
    for (int p = 0; p < g->players; p++) {
        triangles[p] = s->tri[p];
        largest_group[p] = 0;
    }
    for (int a = 0; a < g->actions; a++) {
        int v = s->cell[a];
        if (v < SL_STONE0 || v >= SL_STONE0 + g->players || seen[a])
            continue;
        /* Flood fill of the group of a; each point is pushed once. */
        int top = 0, size = 0;
        stack[top++] = (int16_t)a;
        seen[a] = 1;
        while (top) {
            int b = stack[--top], r = b / n, c = b % n;
            size++;
            for (int i = 0; i < 6; i++) {
                int rr = r + nb_dr[i], cc = c + nb_dc[i], e = rr * n + cc;
                if (on_board(n, rr, cc) && !seen[e] && s->cell[e] == v) {
                    seen[e] = 1;
                    stack[top++] = (int16_t)e;
                }
            }
        }
        if (size > largest_group[v - SL_STONE0])
            largest_group[v - SL_STONE0] = size;
    }
}

static void sl_result(const game *g, const game_state *gs, float *z)
{
    int tri[GAME_MAX_PLAYERS], grp[GAME_MAX_PLAYERS];
    sanling_score(g, gs, tri, grp);
    int np = g->players;
    for (int p = 0; p < np; p++) {
        int better = 0, equal = 0;
        for (int q = 0; q < np; q++) {
            if (tri[q] > tri[p] || (tri[q] == tri[p] && grp[q] > grp[p]))
                better++;
            else if (tri[q] == tri[p] && grp[q] == grp[p])
                equal++;
        }
        /* The places better .. better+equal-1, averaged: their mean index. */
        double mean_place = better + (equal - 1) / 2.0;
        z[p] = (float)(1.0 - 2.0 * mean_place / (np - 1));
    }
}

static void sl_encode(const game *g, const game_state *gs, float *planes)
{
    const sl_state *s = CST(gs);
    int hw = g->actions, np = g->players, me = s->ply % np;
    float progress = (float)s->ply / (float)DATA(g)->moves;
    memset(planes, 0, sizeof(float) * (size_t)(g->planes * hw));
    float *neutral = planes + np * hw, *frontier = neutral + hw, *prog = frontier + hw,
          *ones = prog + hw;
    for (int i = 0; i < hw; i++) {
        int v = s->cell[i];
        if (v >= SL_STONE0 && v < SL_FRONTIER)
            planes[((v - SL_STONE0 - me + np) % np) * hw + i] = 1.0f;
        neutral[i] = v == SL_NEUTRAL;
        frontier[i] = v == SL_FRONTIER;
        prog[i] = progress;
        ones[i] = 1.0f;
    }
}

static uint64_t sl_hash(const game *g, const game_state *gs)
{
    const sl_state *s = CST(gs);
    return s->stones_hash ^ DATA(g)->ply_key[s->ply];
}

static int sl_ply(const game *g, const game_state *s)
{
    (void)g;
    return CST(s)->ply;
}

/* Column label of c (bijective base 26: a..z, aa..az, ba..): at most 2 letters for
 * c < 702. */
static void col_label(int c, char *buf)
{
    if (c < 26) {
        buf[0] = (char)('a' + c);
        buf[1] = 0;
    } else {
        buf[0] = (char)('a' + c / 26 - 1);
        buf[1] = (char)('a' + c % 26);
        buf[2] = 0;
    }
}

static char *sl_format_move(const game *g, int a, char *buf, size_t len)
{
    if (a < 0 || a >= g->actions) {
        snprintf(buf, len, "?");
        return buf;
    }
    int n = DATA(g)->n;
    char col[4];
    col_label(a % n, col);
    snprintf(buf, len, "%s%d", col, a / n + 1);
    return buf;
}

static int sl_parse_move(const game *g, const char *str, int *action, char *err, size_t errlen)
{
    int n = DATA(g)->n;
    const char *p = str;
    while (isspace((unsigned char)*p))
        p++;
    int col = 0, letters = 0;
    while (isalpha((unsigned char)*p) && letters < 3) {
        col = col * 26 + (tolower((unsigned char)*p) - 'a' + 1);
        p++;
        letters++;
    }
    int row = 0, digits = 0;
    bool leading_zero = *p == '0';
    while (isdigit((unsigned char)*p) && digits < 3) {
        row = row * 10 + (*p - '0');
        p++;
        digits++;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (!letters || !digits || leading_zero || *p) {
        snprintf(err, errlen, "move \"%s\": expected a column letter and a row number (e.g. a1)", str);
        return -1;
    }
    char last[4];
    col_label(n - 1, last);
    if (col < 1 || col > n || row < 1 || row > n) {
        snprintf(err, errlen, "move \"%s\": outside the board (columns a-%s, rows 1-%d)", str, last, n);
        return -1;
    }
    *action = (row - 1) * n + (col - 1);
    return 0;
}

static void sl_cells(const game *g, const game_state *gs, int8_t *cells)
{
    const sl_state *s = CST(gs);
    for (int a = 0; a < g->actions; a++) {
        int v = s->cell[a];
        cells[a] = (int8_t)(v == SL_NEUTRAL ? GAME_CELL_NEUTRAL
                            : v >= SL_STONE0 && v < SL_FRONTIER ? v - SL_STONE0
                                                                 : GAME_CELL_EMPTY);
    }
}

static char cell_char(int v)
{
    if (v == SL_NEUTRAL)
        return '*';
    if (v == SL_FRONTIER)
        return '+';
    if (v >= SL_STONE0 && v < SL_STONE0 + GAME_MAX_PLAYERS)
        return stone_char[v - SL_STONE0];
    return '.';
}

/* Column labels starting at column x of the terminal; two lines when N > 26 (the first
 * letter above the second). */
static void render_labels(int n, int indent, FILE *f)
{
    for (int line = n > 26 ? 0 : 1; line < 2; line++) {
        fprintf(f, "%*s", indent, "");
        for (int c = 0; c < n; c++) {
            char lab[4];
            col_label(c, lab);
            char ch = lab[1] ? lab[line] : line ? lab[0] : ' ';
            fprintf(f, "%c ", ch);
        }
        fprintf(f, "\n");
    }
}

/* Each row is shifted half a point right of the row above (as a Hex board), so the
 * six neighbours of a point are the two beside it and two above and below it. */
static void sl_render(const game *g, const game_state *gs, FILE *f)
{
    const sl_state *s = CST(gs);
    int n = DATA(g)->n, np = g->players;
    render_labels(n, 3, f);
    for (int r = 0; r < n; r++) {
        fprintf(f, "%2d %*s", r + 1, r, "");
        for (int c = 0; c < n; c++)
            fprintf(f, "%c ", cell_char(s->cell[r * n + c]));
        fprintf(f, "%d\n", r + 1);
    }
    render_labels(n, 3 + n, f);
    int tri[GAME_MAX_PLAYERS], grp[GAME_MAX_PLAYERS];
    sanling_score(g, gs, tri, grp);
    for (int p = 0; p < np; p++)
        fprintf(f, "%s%c: %d triangles, largest group %d", p ? "; " : "", stone_char[p], tri[p],
                grp[p]);
    fprintf(f, "\n");
    if (sl_terminal(g, gs)) {
        float z[GAME_MAX_PLAYERS];
        sl_result(g, gs, z);
        fprintf(f, "game over after %d moves; outcome", s->ply);
        for (int p = 0; p < np; p++)
            fprintf(f, " %c %+.1f", stone_char[p], z[p]);
        fprintf(f, "\n");
    } else {
        fprintf(f, "%c to move (move %d of %d; '+' marks the legal points)\n",
                stone_char[s->ply % np], s->ply + 1, DATA(g)->moves);
    }
}

int sanling_setup(const game *g, game_state *gs, const char *diagram, char *err, size_t errlen)
{
    assert(strcmp(g->name, "sanling") == 0);
    const sl_data *d = DATA(g);
    sl_state *s = ST(gs);
    memset(s, 0, g->state_size);
    int n = d->n, i = 0, neutrals = 0;
    for (const char *p = diagram; *p; p++) {
        if (isspace((unsigned char)*p))
            continue;
        if (i >= n * n) {
            snprintf(err, errlen, "diagram: more than %d points", n * n);
            return -1;
        }
        int v;
        switch (*p) {
        case '.':
        case '+': v = SL_EMPTY; break;
        case '*': v = SL_NEUTRAL; neutrals++; break;
        case 'X': v = SL_STONE0; break;
        case 'O': v = SL_STONE0 + 1; break;
        case 'V': v = SL_STONE0 + 2; break;
        default:
            snprintf(err, errlen, "diagram: unexpected character '%c' at point %d", *p, i);
            return -1;
        }
        if (v >= SL_STONE0 + g->players) {
            snprintf(err, errlen, "diagram: a stone of player %d in a %d-player game",
                     v - SL_STONE0, g->players);
            return -1;
        }
        s->cell[i++] = (uint8_t)v;
    }
    if (i != n * n) {
        snprintf(err, errlen, "diagram: %d points, expected %d", i, n * n);
        return -1;
    }
    if (neutrals != 1 || s->cell[d->centre] != SL_NEUTRAL) {
        snprintf(err, errlen, "diagram: expected one neutral stone '*', at the centre");
        return -1;
    }
    for (int a = 0; a < n * n; a++) {
        int v = s->cell[a];
        if (v >= SL_STONE0) {
            s->ply++;
            s->stones_hash ^= d->stone_key[v - SL_STONE0][a];
        }
    }
    if (s->ply > d->moves) {
        snprintf(err, errlen, "diagram: %d stones, more than game.moves = %d", s->ply, d->moves);
        return -1;
    }
    /* Each triangle is counted once: at its point that comes first in index order,
     * where it is either shape below-right of it. */
    for (int a = 0; a < n * n; a++) {
        int v = s->cell[a], r = a / n, c = a % n;
        if (v >= SL_STONE0) {
            bool right = c + 1 < n && s->cell[a + 1] == v;
            bool below = r + 1 < n && s->cell[a + n] == v;
            bool below_left = r + 1 < n && c > 0 && s->cell[a + n - 1] == v;
            s->tri[v - SL_STONE0] = (int16_t)(s->tri[v - SL_STONE0] + (right && below) +
                                              (below_left && below));
        }
    }
    for (int a = 0; a < n * n; a++)
        if (s->cell[a] != SL_EMPTY && s->cell[a] != SL_FRONTIER)
            grow_frontier(n, s, a);
    return 0;
}

const game_ops sanling_ops = {
    .name = "sanling",
    .create = sl_create,
    .destroy = sl_destroy,
    .init = sl_init,
    .current_player = sl_current_player,
    .legal = sl_legal,
    .play = sl_play,
    .terminal = sl_terminal,
    .result = sl_result,
    .encode = sl_encode,
    .hash = sl_hash,
    .render = sl_render,
    .parse_move = sl_parse_move,
    .format_move = sl_format_move,
    .winning_move = NULL,
    .ply = sl_ply,
    .cells = sl_cells,
};
