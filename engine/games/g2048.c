/* g2048.c — 2048 (seed 003), the single-player game with chance events (DESIGN.md §2.3).
 *
 * Board: R x C cells (game.rows, game.cols: 2..8 each; 4 x 4 is the standard game),
 * each empty or holding a tile 2^k, stored as its exponent k. Actions: 0 up, 1 down,
 * 2 left, 3 right (notation u d l r; "up", "down", "left", "right" are read too).
 * A move slides every tile as far as it goes in that direction; two equal tiles that
 * meet merge into one of twice the value, each tile at most once per move, the pair
 * nearest the edge first (g2048_slide_line: 2 2 2 2 -> 4 4, 4 4 8 -> 8 8). A move is
 * legal when it changes the board. The score is the sum of the merged tiles' values.
 * After every move a tile spawns on an empty cell chosen uniformly: a 2 with
 * probability 0.9, a 4 with 0.1. The game starts with two spawned tiles and ends when
 * no move changes the board (or, as a bound for buffers that no game here comes near,
 * after G48_MOVE_CAP moves: the 32768 tile takes about 16,000).
 *
 * Chance (game.h): after a move the state is an after-state, a chance state whose
 * outcomes are 2 * cell (a 2 there) and 2 * cell + 1 (a 4 there) for every empty cell;
 * max_chance = 2 * cells. The search expands these as chance nodes.
 * One player: result() is 0 (there is nobody to beat); score() gives the points, which
 * is what the search, the value head and the arena work with.
 *
 * Planes (18, the same on every board size so that a net trained on 3 x 3 runs on
 * 4 x 4): 0 empty cells; 1..16 one per tile 2^1 .. 2^15, plane 16 also holding every
 * larger tile (seed 003's one-hot log2 planes); 17 ones (marks the board inside the
 * convolutions' zero padding). Symmetries: the 8 of the square on a square board, the
 * 4 that keep the axes (identity, 180 degrees, the two mirrors) otherwise; the moves
 * map with the board (a clockwise quarter turn takes up to right).
 * Zobrist: a key per (cell, exponent) and one for "a tile spawns next"; the score and
 * the move count are not in the encoding and not in the hash.
 * State: 80 bytes, whatever the board size (64 cells).
 */
#include "g2048.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "../symmetry.h"

enum { G48_MAX_EXP = 63, G48_MOVE_CAP = 65536 };

typedef struct g48_state {
    uint64_t score;   /* points: sum of the merged tiles */
    int32_t moves;    /* moves played */
    uint8_t chance;   /* 1: after-state, a tile spawns next */
    uint8_t pad[3];
    uint8_t cell[G2048_MAX_CELLS]; /* exponents, row-major; cells past rows*cols stay 0 */
} g48_state;

_Static_assert(sizeof(g48_state) == 80, "2048 states are 80 bytes");

typedef struct g48_data {
    int rows, cols, cells;
    int nlines[4], len[4];
    uint8_t line[4][G2048_MAX_SIDE][G2048_MAX_SIDE]; /* per move: lines of cell indices, the
                                                      * edge the tiles move to first */
    int8_t sym_move[SYM_COUNT][4];                   /* image of each move under each element */
    uint64_t key[G2048_MAX_CELLS][G48_MAX_EXP + 1];  /* [cell][0] unused */
    uint64_t chance_key;
} g48_data;

#define ST(s) ((g48_state *)(s))
#define CST(s) ((const g48_state *)(s))
#define DATA(g) ((const g48_data *)(g)->data)

static const char *const move_names[4] = {"u", "d", "l", "r"};
static const char *const move_words[4] = {"up", "down", "left", "right"};
static const int move_dr[4] = {-1, 1, 0, 0};
static const int move_dc[4] = {0, 0, -1, 1};

uint64_t g2048_slide_line(uint8_t *v, int n, bool *changed)
{
    assert(n >= 1 && n <= G2048_MAX_SIDE);
    uint8_t out[G2048_MAX_SIDE] = {0};
    uint64_t gain = 0;
    int k = 0;
    bool can_merge = false; /* out[k-1] is a tile that has not merged this move */
    for (int i = 0; i < n; i++) {
        if (!v[i])
            continue;
        if (can_merge && out[k - 1] == v[i]) {
            out[k - 1]++;
            gain += (uint64_t)1 << out[k - 1];
            can_merge = false;
        } else {
            out[k++] = v[i];
            can_merge = true;
        }
    }
    *changed = memcmp(out, v, (size_t)n) != 0;
    memcpy(v, out, (size_t)n);
    return gain;
}

/* Applies move m to cells (in place); returns the points gained, *changed as above. */
static uint64_t slide(const g48_data *d, uint8_t *cells, int m, bool *changed)
{
    uint64_t gain = 0;
    *changed = false;
    for (int l = 0; l < d->nlines[m]; l++) {
        uint8_t v[G2048_MAX_SIDE];
        const uint8_t *ix = d->line[m][l];
        for (int i = 0; i < d->len[m]; i++)
            v[i] = cells[ix[i]];
        bool ch;
        gain += g2048_slide_line(v, d->len[m], &ch);
        if (ch) {
            *changed = true;
            for (int i = 0; i < d->len[m]; i++)
                cells[ix[i]] = v[i];
        }
    }
    return gain;
}

/* Whether move m changes the board (no copy is written). */
static bool move_changes(const g48_data *d, const uint8_t *cells, int m)
{
    for (int l = 0; l < d->nlines[m]; l++) {
        const uint8_t *ix = d->line[m][l];
        bool seen_empty = false;
        for (int i = 0; i < d->len[m]; i++) {
            uint8_t x = cells[ix[i]];
            if (!x) {
                seen_empty = true;
                continue;
            }
            if (seen_empty)
                return true; /* a tile with an empty cell before it moves */
            if (i > 0 && cells[ix[i - 1]] == x)
                return true; /* two equal neighbours merge */
        }
    }
    return false;
}

static int g48_create(game *g, const cfg_game *cfg, char *err, size_t errlen)
{
    if (cfg->players != 1) {
        snprintf(err, errlen, "key game.players: 2048 is a one-player game (expected 1, got %d)",
                 cfg->players);
        return -1;
    }
    if (cfg->rows < 2 || cfg->rows > G2048_MAX_SIDE) {
        snprintf(err, errlen, "key game.rows: expected 2..%d, got %d", G2048_MAX_SIDE, cfg->rows);
        return -1;
    }
    if (cfg->cols < 2 || cfg->cols > G2048_MAX_SIDE) {
        snprintf(err, errlen, "key game.cols: expected 2..%d, got %d", G2048_MAX_SIDE, cfg->cols);
        return -1;
    }
    g48_data *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int R = cfg->rows, C = cfg->cols;
    d->rows = R;
    d->cols = C;
    d->cells = R * C;
    /* up: one line per column from the top; down: from the bottom; left/right: rows */
    d->nlines[G2048_UP] = d->nlines[G2048_DOWN] = C;
    d->len[G2048_UP] = d->len[G2048_DOWN] = R;
    d->nlines[G2048_LEFT] = d->nlines[G2048_RIGHT] = R;
    d->len[G2048_LEFT] = d->len[G2048_RIGHT] = C;
    for (int c = 0; c < C; c++)
        for (int r = 0; r < R; r++) {
            d->line[G2048_UP][c][r] = (uint8_t)(r * C + c);
            d->line[G2048_DOWN][c][r] = (uint8_t)((R - 1 - r) * C + c);
        }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            d->line[G2048_LEFT][r][c] = (uint8_t)(r * C + c);
            d->line[G2048_RIGHT][r][c] = (uint8_t)(r * C + (C - 1 - c));
        }
    rng r;
    rng_seed(&r, 0x32303438ULL ^ (uint64_t)(R * 16 + C));
    for (int i = 0; i < d->cells; i++)
        for (int k = 1; k <= G48_MAX_EXP; k++)
            d->key[i][k] = rng_next(&r);
    d->chance_key = rng_next(&r);
    g->data = d;
    g->players = 1;
    g->rows = R;
    g->cols = C;
    g->lattice = GAME_LATTICE_SQUARE;
    g->actions = 4;
    g->planes = G2048_PLANES;
    g->state_size = sizeof(g48_state);
    g->max_chance = 2 * d->cells;
    /* the tile sum grows by at least 2 a move and stays below cells * 2^(cells + 1) */
    double bound = d->cells * (double)((uint64_t)1 << (d->cells + 1 > 40 ? 40 : d->cells + 1)) / 2;
    g->max_game_length = bound < G48_MOVE_CAP ? (int)bound : G48_MOVE_CAP;
    sym_set_square_group(g);
    /* a move's image: the direction vector under the element's linear part */
    for (int k = 0; k < g->nsym; k++) {
        sym_id s = g->sym[k];
        int r0, c0, r1, c1, r2, c2;
        sym_map_point(s, R, C, 0, 0, &r0, &c0);
        sym_map_point(s, R, C, 1, 0, &r1, &c1); /* image of (1, 0) - image of (0, 0) */
        sym_map_point(s, R, C, 0, 1, &r2, &c2); /* image of (0, 1) - image of (0, 0) */
        for (int m = 0; m < 4; m++) {
            int dr = move_dr[m] * (r1 - r0) + move_dc[m] * (r2 - r0);
            int dc = move_dr[m] * (c1 - c0) + move_dc[m] * (c2 - c0);
            int img = -1;
            for (int m2 = 0; m2 < 4; m2++)
                if (move_dr[m2] == dr && move_dc[m2] == dc)
                    img = m2;
            assert(img >= 0);
            d->sym_move[s][m] = (int8_t)img;
        }
    }
    return 0;
}

static void g48_destroy(game *g)
{
    free(g->data);
    g->data = NULL;
}

static int g48_chance_outcomes(const game *g, const game_state *gs, int *outcome, float *prob)
{
    const g48_state *s = CST(gs);
    if (!s->chance)
        return 0;
    int cells = DATA(g)->cells, empty = 0;
    for (int i = 0; i < cells; i++)
        empty += s->cell[i] == 0;
    assert(empty > 0); /* a move that changed the board left a cell empty */
    if (!outcome)
        return 2 * empty;
    float p2 = 0.9f / (float)empty, p4 = 0.1f / (float)empty;
    int n = 0;
    for (int i = 0; i < cells; i++)
        if (!s->cell[i]) {
            outcome[n] = 2 * i;
            prob[n++] = p2;
            outcome[n] = 2 * i + 1;
            prob[n++] = p4;
        }
    return n;
}

static int g48_chance_play(const game *g, game_state *gs, int o)
{
    g48_state *s = ST(gs);
    if (!s->chance || o < 0 || o >= 2 * DATA(g)->cells || s->cell[o / 2])
        return -1;
    s->cell[o / 2] = (uint8_t)(1 + (o & 1));
    s->chance = 0;
    return 0;
}

static void g48_init(const game *g, game_state *gs, rng *r)
{
    g48_state *s = ST(gs);
    memset(s, 0, sizeof *s);
    rng fixed;
    if (!r) { /* no random source: one fixed start */
        rng_seed(&fixed, 2048);
        r = &fixed;
    }
    for (int k = 0; k < 2; k++) {
        s->chance = 1;
        game_resolve_chance(g, gs, r);
    }
}

static int g48_current_player(const game *g, const game_state *s)
{
    (void)g;
    (void)s;
    return 0;
}

static bool g48_terminal(const game *g, const game_state *gs)
{
    const g48_state *s = CST(gs);
    if (s->chance)
        return false;
    if (s->moves >= g->max_game_length)
        return true;
    for (int m = 0; m < 4; m++)
        if (move_changes(DATA(g), s->cell, m))
            return false;
    return true;
}

static int g48_legal(const game *g, const game_state *gs, uint8_t *mask)
{
    const g48_state *s = CST(gs);
    int n = 0;
    for (int m = 0; m < 4; m++) {
        mask[m] = !s->chance && s->moves < g->max_game_length && move_changes(DATA(g), s->cell, m);
        n += mask[m];
    }
    return n;
}

static int g48_play(const game *g, game_state *gs, int a)
{
    g48_state *s = ST(gs);
    if (a < 0 || a > 3 || s->chance || s->moves >= g->max_game_length)
        return -1;
    uint8_t cells[G2048_MAX_CELLS];
    memcpy(cells, s->cell, sizeof cells);
    bool changed;
    uint64_t gain = slide(DATA(g), cells, a, &changed);
    if (!changed)
        return -1;
    memcpy(s->cell, cells, sizeof cells);
    s->score += gain;
    s->moves++;
    s->chance = 1;
    return 0;
}

static void g48_result(const game *g, const game_state *s, float *z)
{
    (void)g;
    (void)s;
    z[0] = 0.0f; /* one player: no one to beat; the score is what counts */
}

static void g48_score(const game *g, const game_state *s, float *out)
{
    (void)g;
    out[0] = (float)CST(s)->score;
}

static int g48_best_tile(const game *g, const game_state *gs)
{
    const g48_state *s = CST(gs);
    int best = 0;
    for (int i = 0; i < DATA(g)->cells; i++)
        best = s->cell[i] > best ? s->cell[i] : best;
    return best;
}

static void g48_encode(const game *g, const game_state *gs, float *planes)
{
    const g48_state *s = CST(gs);
    int hw = DATA(g)->cells;
    memset(planes, 0, sizeof(float) * (size_t)G2048_PLANES * (size_t)hw);
    for (int i = 0; i < hw; i++) {
        int k = s->cell[i];
        int p = k == 0 ? 0 : k < G2048_TILE_PLANES ? k : G2048_TILE_PLANES;
        planes[p * hw + i] = 1.0f;
        planes[(G2048_PLANES - 1) * hw + i] = 1.0f;
    }
}

static uint64_t g48_hash(const game *g, const game_state *gs)
{
    const g48_state *s = CST(gs);
    const g48_data *d = DATA(g);
    uint64_t h = s->chance ? d->chance_key : 0;
    for (int i = 0; i < d->cells; i++)
        if (s->cell[i])
            h ^= d->key[i][s->cell[i]];
    return h;
}

static int g48_ply(const game *g, const game_state *s)
{
    (void)g;
    return CST(s)->moves;
}

static void g48_render(const game *g, const game_state *gs, FILE *f)
{
    const g48_state *s = CST(gs);
    const g48_data *d = DATA(g);
    fprintf(f, "score %llu, %d moves%s\n", (unsigned long long)s->score, s->moves,
            s->chance ? " (a tile spawns next)" : "");
    for (int r = 0; r < d->rows; r++) {
        for (int c = 0; c < d->cols; c++) {
            int k = s->cell[r * d->cols + c];
            if (!k)
                fprintf(f, "%7s", ".");
            else if (k < 64)
                fprintf(f, "%7llu", (unsigned long long)1 << k);
        }
        fputc('\n', f);
    }
}

static int g48_parse_move(const game *g, const char *str, int *action, char *err, size_t errlen)
{
    (void)g;
    char w[8];
    size_t n = 0;
    while (str[n] && n < sizeof w - 1) {
        w[n] = (char)tolower((unsigned char)str[n]);
        n++;
    }
    w[n] = 0;
    if (!str[n])
        for (int m = 0; m < 4; m++)
            if (!strcmp(w, move_names[m]) || !strcmp(w, move_words[m])) {
                *action = m;
                return 0;
            }
    snprintf(err, errlen, "\"%s\" is not a 2048 move (expected u, d, l or r)", str);
    return -1;
}

static char *g48_format_move(const game *g, int a, char *buf, size_t len)
{
    (void)g;
    snprintf(buf, len, "%s", a >= 0 && a < 4 ? move_names[a] : "?");
    return buf;
}

static int g48_sym_action(const game *g, int sym, int a)
{
    assert(a >= 0 && a < 4 && sym >= 0 && sym < SYM_COUNT);
    return DATA(g)->sym_move[sym][a];
}

void g2048_get_cells(const game *g, const game_state *s, uint8_t *cells)
{
    memcpy(cells, CST(s)->cell, (size_t)DATA(g)->cells);
}

void g2048_set(const game *g, game_state *gs, const uint8_t *cells, uint64_t score, int moves)
{
    g48_state *s = ST(gs);
    memset(s, 0, sizeof *s);
    for (int i = 0; i < DATA(g)->cells; i++) {
        assert(cells[i] <= G48_MAX_EXP);
        s->cell[i] = cells[i];
    }
    s->score = score;
    s->moves = moves;
}

uint64_t g2048_score(const game *g, const game_state *s)
{
    (void)g;
    return CST(s)->score;
}

const game_ops g2048_ops = {
    .name = "2048",
    .create = g48_create,
    .destroy = g48_destroy,
    .init = g48_init,
    .current_player = g48_current_player,
    .legal = g48_legal,
    .play = g48_play,
    .terminal = g48_terminal,
    .result = g48_result,
    .encode = g48_encode,
    .hash = g48_hash,
    .render = g48_render,
    .parse_move = g48_parse_move,
    .format_move = g48_format_move,
    .winning_move = NULL,
    .ply = g48_ply,
    .chance_outcomes = g48_chance_outcomes,
    .chance_play = g48_chance_play,
    .score = g48_score,
    .sym_action = g48_sym_action,
    .best_tile = g48_best_tile,
};
