/* The rule layers (engine/games/renju.h): renju's forbidden points and every rule's win
 * check.
 *
 * - A table of hand-built positions, each a board diagram with the point '?' and the
 *   verdict it must get, with the reason in words: true and false double threes
 *   (including threes whose only four-making point is itself forbidden, one and two
 *   levels deep), double fours in two lines and in one, overlines, a five that also
 *   makes a forbidden shape (a win), and the same shapes in white's stones (allowed to
 *   white in the game, while the same stones in black's colour are forbidden).
 * - Every verdict of the table, and of every empty point of a few hundred random
 *   boards, is checked again by a brute-force implementation of the definitions that
 *   shares no code with renju.c (it places stones and measures runs, where renju.c reads
 *   13-cell lines once).
 * - The game under renju and caro: legal moves, refused moves with their reason, the
 *   forbidden-point plane, wins (white's overline, black's five with a forbidden shape,
 *   caro's blocked five), and the rule checks of the config and of game_new.
 */
#include <check.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/games/renju.h"
#include "engine/games/threat.h"
#include "engine/player.h"
#include "engine/rng.h"

enum { MAXR = 15 };

typedef struct rj_case {
    const char *name;      /* the reason, in words */
    int who;               /* 1: black's verdict; 2: the shape is white's ('O'): allowed */
    renju_verdict want;    /* who 1: the verdict; who 2: the verdict of the same stones
                              if they were black's */
    const char *rows[MAXR + 1]; /* NULL-terminated; 'X' black, 'O' white, '?' the point */
} rj_case;

static const rj_case cases[] = {
    /* ---- double threes ---- */
    {"double three: two open threes crossing", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", "...XX?.....",
      "...........", "...........", "...........", NULL}},
    {"double three: a split three (X.XX) and a three", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", "..X.X?.....",
      "...........", "...........", "...........", NULL}},
    {"double three: both diagonals", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...X...X...", "....X.X....", ".....?.....", "...........",
      "...........", "...........", NULL}},
    {"double three: two split threes", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "....X......", "...........", "....X......", "..X.?X.....",
      "...........", "...........", "...........", NULL}},
    {"double three: a diagonal and a column", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", "...X.......", "....X.X....", "......X....",
      "......?....", "...........", "...........", "...........", NULL}},
    {"double three: a white stone two beyond one three leaves it open", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", ".O.XX?.....",
      "...........", "...........", "...........", NULL}},
    {"double three: .XXX.O is a three (it becomes XXXX. O's side stays a five)", 1,
     RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", "....X......", "....X......", "..XX?.O....",
      "...........", "...........", "...........", NULL}},
    {"double three: a three one point from the edge still has room", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", "...X.......", "...X.......", ".XX?.......",
      "...........", "...........", "...........", NULL}},
    {"double three: the overline stone is three away (X...XX? only needs the right side)", 1,
     RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", "X..XX?.....",
      "...........", "...........", "...........", NULL}},
    {"double three: the only four-making point is a five elsewhere (allowed), so the three "
     "counts", 1, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....X.....", "...XX.XX...", ".....X.....",
      "...XX?.....", "...........", "...........", "...........", NULL}},
    {"double three: its four-making point is a four-three (allowed) for black", 1,
     RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", "....XX.....", "...XX......", ".....X.....",
      "...XX?.....", "...........", "...........", "...........", NULL}},
    {"no double three: one three is blocked by a white stone at its end", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", "..OXX?.....",
      "...........", "...........", "...........", NULL}},
    {"no double three: one line runs into the edge (XX? at the border)", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", "..X........", "..X........", "XX?........",
      "...........", "...........", "...........", NULL}},
    {"no double three: X..XX?..X, both fours would end in an overline", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", "X..XX?..X..",
      "...........", "...........", "...........", NULL}},
    {"no double three: the only four-making point is forbidden (an overline)", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", "..XXX.XX...", ".....X.....",
      "...XX?.....", "...........", "...........", "...........", NULL}},
    {"no double three: the only four-making point is forbidden (a double four)", 1,
     RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", "..XXX......", ".....X.....",
      "...XX?.....", "...........", "...........", "...........", NULL}},
    {"no double three: the only four-making point is a double three (two levels deep)", 1,
     RENJU_ALLOWED,
     {"...........", "...........", "...X.......", "....XX.....", "...XX......", ".....X.....",
      "...XX?.....", "...........", "...........", "...........", NULL}},
    {"no double three: X.X.? is no three (a gap of one too many)", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", ".X.X.?.....",
      "...........", "...........", "...........", NULL}},
    {"no double three: XX.?.XX makes no three (each four's far end meets a black stone)", 1,
     RENJU_ALLOWED,
     {"...........", "...........", "...........", "....X......", "....X......", ".XX.?.XX...",
      "...........", "...........", "...........", NULL}},
    {"no double three: .XX?.O with the edge: neither four is straight", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", "...X.......", "...X.......", ".XX?.O.....",
      "...........", "...........", "...........", NULL}},
    {"allowed: one three and a two", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", "...........", ".....X.....", "...XX?.....",
      "...........", "...........", "...........", NULL}},
    {"allowed: an empty board", 1, RENJU_ALLOWED,
     {".........", ".........", ".........", ".........", "....?....", ".........", ".........",
      ".........", ".........", NULL}},
    /* ---- double fours ---- */
    {"double four: a four in a row and a straight four in a column", 1, RENJU_DOUBLE_FOUR,
     {"...........", "...........", ".....X.....", ".....X.....", ".....X.....", ".OXXX?.....",
      "...........", "...........", "...........", NULL}},
    {"double four in one line: X.XXX.X", 1, RENJU_DOUBLE_FOUR,
     {"...........", "...........", "...........", "...........", ".X.X?X.X...", "...........",
      "...........", "...........", NULL}},
    {"double four in one line: XX.XX.XX", 1, RENJU_DOUBLE_FOUR,
     {"...........", "...........", "...........", "...........", ".XX.?X.XX..", "...........",
      "...........", "...........", NULL}},
    {"double four in one line: XXX.X.XXX", 1, RENJU_DOUBLE_FOUR,
     {"...........", "...........", "...........", "...........", "XXX.?.XXX..", "...........",
      "...........", "...........", NULL}},
    {"double four: two diagonals", 1, RENJU_DOUBLE_FOUR,
     {"...........", ".X.....X...", "..X...X....", "...X.X.....", "....?......", "...O.......",
      "...........", "...........", NULL}},
    {"double four: one four is split (XX.X) and blocked, the other in a column", 1,
     RENJU_DOUBLE_FOUR,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", ".....X.....",
      "OXX.X?O....", "...........", "...........", NULL}},
    {"double four that is also a double three counts as a double four", 1, RENJU_DOUBLE_FOUR,
     {"...........", "...........", ".....X.....", ".....X.....", ".....X.....", ".OXXX?.....",
      "....X.X....", "...X...X...", "...........", NULL}},
    {"allowed: a straight four is one four", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", "...........", "..XXX?.....", "...........",
      "...........", "...........", NULL}},
    {"allowed: a four and a three (four-three)", 1, RENJU_ALLOWED,
     {"...........", "...........", "...........", ".....X.....", ".....X.....", ".OXXX?.....",
      "...........", "...........", "...........", NULL}},
    {"allowed: XX.XX?O is no four (its five-point would make six), so one four only", 1,
     RENJU_ALLOWED,
     {"...........", "......O....", "......X....", "......X....", "......X....", ".XX.XX?O...",
      "...........", "...........", "...........", NULL}},
    /* ---- overlines ---- */
    {"overline: XXX?XX", 1, RENJU_OVERLINE,
     {"...........", "...........", "...........", "...........", ".XXX?XX....", "...........",
      "...........", NULL}},
    {"overline: XX?XXX (six)", 1, RENJU_OVERLINE,
     {"...........", "...........", "...........", "...........", ".XX?XXX....", "...........",
      "...........", NULL}},
    {"overline: XXX?XXX (seven)", 1, RENJU_OVERLINE,
     {"...........", "...........", "...........", "...........", "XXX?XXX....", "...........",
      "...........", NULL}},
    {"overline on a diagonal", 1, RENJU_OVERLINE,
     {"X..........", ".X.........", "..X........", "...?.......", "....X......", ".....X.....",
      "...........", NULL}},
    /* ---- five wins whatever else ---- */
    {"five: a plain five", 1, RENJU_FIVE,
     {"...........", "...........", "...........", "...........", "..XXXX?....", "...........",
      "...........", NULL}},
    {"five with an overline in another line: the five wins", 1, RENJU_FIVE,
     {"...........", "....X......", "....X......", "....X......", ".XXX?XX....", "....X......",
      "...........", NULL}},
    {"five with a double three: the five wins", 1, RENJU_FIVE,
     {"...........", "...........", "...........", "....X.X....", ".....X.....", "..XX?XX....",
      "....X......", "...X.......", "...........", NULL}},
    {"five with a double four: the five wins", 1, RENJU_FIVE,
     {"...........", "...........", ".X.........", "..X........", "...X.......", "XXXX?......",
      "....X......", "....X......", "....X......", "...........", NULL}},
    {"five split across the point (XX?XX)", 1, RENJU_FIVE,
     {"...........", "...........", "...........", "...........", "..XX?XX....", "...........",
      "...........", NULL}},
    /* ---- the same shapes in white's stones: allowed for white ---- */
    {"white: a double three is allowed", 2, RENJU_DOUBLE_THREE,
     {"...........", "...........", "...........", ".....O.....", ".....O.....", "...OO?.....",
      "...........", "..X.X.X....", "...X.X.....", NULL}},
    {"white: a double four is allowed", 2, RENJU_DOUBLE_FOUR,
     {"...........", "...........", ".....O.....", ".....O.....", ".....O.....", ".XOOO?.....",
      "...........", "X.X.X.X....", "X.X........", NULL}},
    {"white: a double four in one line is allowed", 2, RENJU_DOUBLE_FOUR,
     {"...........", "...........", "...........", "...........", ".O.O?O.O...", "...........",
      "...........", "X.X.X.X....", "X..........", NULL}},
    {"white: an overline is allowed (and wins)", 2, RENJU_OVERLINE,
     {"...........", "...........", "...........", "...........", ".OOO?OO....", "...........",
      "...........", "X.X.X.X....", "X.X........", NULL}},
};

enum { NCASES = sizeof cases / sizeof cases[0] };

/* Reads a case's diagram: board (0/1/2), size, the '?' cell. */
static void read_case(const rj_case *c, uint8_t *board, int *rows, int *cols, int *cell)
{
    int r = 0;
    *cell = -1;
    *cols = (int)strlen(c->rows[0]);
    for (; c->rows[r]; r++) {
        ck_assert_msg((int)strlen(c->rows[r]) == *cols, "%s: row %d has another width", c->name, r);
        for (int k = 0; k < *cols; k++) {
            char ch = c->rows[r][k];
            int i = r * *cols + k;
            board[i] = ch == 'X' ? 1 : ch == 'O' ? 2 : 0;
            if (ch == '?') {
                ck_assert_msg(*cell < 0, "%s: two '?'", c->name);
                *cell = i;
            }
        }
    }
    *rows = r;
    ck_assert_msg(*cell >= 0, "%s: no '?'", c->name);
}

/* ---- the brute-force reference: the definitions, by placing stones ---- */

static const int bd[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};

typedef struct bf {
    uint8_t *b;
    int rows, cols, black;
} bf;

static int bf_at(const bf *x, int r, int c)
{
    return r < 0 || r >= x->rows || c < 0 || c >= x->cols ? -1 : x->b[r * x->cols + c];
}

/* The run of black through (r, c) along d: its ends as offsets lo..hi (the cell is 0). */
static void bf_run(const bf *x, int r, int c, int d, int *lo, int *hi)
{
    int l = 0, h = 0;
    while (bf_at(x, r + (l - 1) * bd[d][0], c + (l - 1) * bd[d][1]) == x->black)
        l--;
    while (bf_at(x, r + (h + 1) * bd[d][0], c + (h + 1) * bd[d][1]) == x->black)
        h++;
    *lo = l;
    *hi = h;
}

/* Five-points on line d through (r, c) (black there): offsets t with an empty cell whose
 * stone makes exactly five covering the cell. Writes the five's ends too. */
static int bf_fives(bf *x, int r, int c, int d, int *t, int *flo, int *fhi)
{
    int n = 0;
    for (int o = -5; o <= 5; o++) {
        int rr = r + o * bd[d][0], cc = c + o * bd[d][1];
        if (o == 0 || bf_at(x, rr, cc) != 0)
            continue;
        x->b[rr * x->cols + cc] = (uint8_t)x->black;
        int lo, hi;
        bf_run(x, rr, cc, d, &lo, &hi);
        x->b[rr * x->cols + cc] = 0;
        if (hi - lo + 1 == 5 && o + lo <= 0 && o + hi >= 0) {
            t[n] = o;
            flo[n] = o + lo;
            fhi[n] = o + hi;
            n++;
        }
    }
    return n;
}

/* Fours on line d through (r, c): five-points grouped by their four stones. */
static int bf_fours(bf *x, int r, int c, int d)
{
    int t[12], lo[12], hi[12];
    int n = bf_fives(x, r, c, d, t, lo, hi);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        bool same = false;
        for (int j = 0; j < i && !same; j++) {
            /* the four stones of i are those of j when the windows minus their points match */
            same = true;
            for (int o = -6; o <= 6; o++) {
                bool in_i = o >= lo[i] && o <= hi[i] && o != t[i];
                bool in_j = o >= lo[j] && o <= hi[j] && o != t[j];
                if (in_i != in_j)
                    same = false;
            }
        }
        distinct += !same;
    }
    return distinct;
}

static renju_verdict bf_verdict(bf *x, int cell, int depth);

/* A real three on line d through (r, c) (black there): an empty q whose stone makes a
 * straight four covering the cell and q (two five-points from the same four stones),
 * q itself not forbidden. */
static bool bf_three(bf *x, int r, int c, int d, int depth)
{
    for (int o = -4; o <= 4; o++) {
        int rr = r + o * bd[d][0], cc = c + o * bd[d][1];
        if (o == 0 || bf_at(x, rr, cc) != 0)
            continue;
        int q = rr * x->cols + cc;
        x->b[q] = (uint8_t)x->black;
        int t[12], lo[12], hi[12];
        int n = bf_fives(x, r, c, d, t, lo, hi);
        bool straight = n == 2 && t[1] - t[0] == 5 && t[0] < o && o < t[1];
        x->b[q] = 0;
        if (straight && (depth >= RENJU_MAX_DEPTH || !renju_verdict_forbidden(bf_verdict(x, q, depth + 1))))
            return true;
    }
    return false;
}

static renju_verdict bf_verdict(bf *x, int cell, int depth)
{
    int r = cell / x->cols, c = cell % x->cols;
    x->b[cell] = (uint8_t)x->black;
    renju_verdict v = RENJU_ALLOWED;
    int longest = 0, five = 0;
    for (int d = 0; d < 4; d++) {
        int lo, hi;
        bf_run(x, r, c, d, &lo, &hi);
        five |= hi - lo + 1 == 5;
        longest = hi - lo + 1 > longest ? hi - lo + 1 : longest;
    }
    if (five) {
        v = RENJU_FIVE;
    } else if (longest > 5) {
        v = RENJU_OVERLINE;
    } else {
        int fours = 0, threes = 0;
        int f[4];
        for (int d = 0; d < 4; d++) {
            f[d] = bf_fours(x, r, c, d);
            fours += f[d];
        }
        if (fours >= 2) {
            v = RENJU_DOUBLE_FOUR;
        } else {
            for (int d = 0; d < 4; d++)
                threes += f[d] == 0 && bf_three(x, r, c, d, depth);
            v = threes >= 2 ? RENJU_DOUBLE_THREE : RENJU_ALLOWED;
        }
    }
    x->b[cell] = 0;
    return v;
}

static renju_verdict brute(const uint8_t *board, int rows, int cols, int cell, int black)
{
    static uint8_t copy[RENJU_MAX_CELLS];
    memcpy(copy, board, (size_t)(rows * cols));
    bf x = {copy, rows, cols, black};
    return bf_verdict(&x, cell, 0);
}

/* ---- the table ---- */

START_TEST(table_size)
{
    ck_assert_int_ge(NCASES, 40);
    int kinds[5] = {0}, white = 0;
    for (int i = 0; i < NCASES; i++) {
        if (cases[i].who == 2)
            white++;
        else
            kinds[cases[i].want]++;
    }
    for (int k = 0; k < 5; k++)
        ck_assert_msg(kinds[k] >= 3, "too few cases of %s", renju_verdict_name((renju_verdict)k));
    ck_assert_int_ge(white, 4);
}
END_TEST

START_TEST(table_black)
{
    const rj_case *c = &cases[_i];
    if (c->who != 1)
        return;
    uint8_t board[RENJU_MAX_CELLS];
    int rows, cols, cell;
    read_case(c, board, &rows, &cols, &cell);
    renju_verdict v = renju_check(board, rows, cols, cell, 1);
    ck_assert_msg(v == c->want, "case %d \"%s\": got %s, expected %s", _i, c->name,
                  renju_verdict_name(v), renju_verdict_name(c->want));
    ck_assert_msg(brute(board, rows, cols, cell, 1) == c->want, "case %d \"%s\": the brute force "
                  "disagrees with the table", _i, c->name);
    ck_assert(renju_forbidden(board, rows, cols, cell, 1) == renju_verdict_forbidden(c->want));
    /* colours swapped (black's stones stored as 2): the same verdict */
    for (int i = 0; i < rows * cols; i++)
        board[i] = board[i] ? (uint8_t)(3 - board[i]) : 0;
    ck_assert_int_eq(renju_check(board, rows, cols, cell, 2), c->want);
}
END_TEST

/* A renju game holding the diagram's stones with the side to move as asked: the stones
 * are played alternately in reading order (black's first). */
static game *renju_game(int rows, int cols)
{
    gz_config cfg;
    cfg_defaults(&cfg, "mnk");
    cfg.game.rows = rows;
    cfg.game.cols = cols;
    cfg.game.k = 5;
    cfg_game_set_rule(&cfg.game, CFG_RULE_RENJU);
    char err[256];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

static game_state *state_of(const game *g, const uint8_t *board)
{
    int xs[RENJU_MAX_CELLS], os[RENJU_MAX_CELLS], nx = 0, no = 0;
    for (int i = 0; i < g->actions; i++) {
        if (board[i] == 1)
            xs[nx++] = i;
        else if (board[i] == 2)
            os[no++] = i;
    }
    ck_assert_msg(nx == no || nx == no + 1, "diagram: %d black and %d white stones", nx, no);
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < nx + no; i++) {
        int a = i % 2 == 0 ? xs[i / 2] : os[i / 2];
        ck_assert_msg(game_play(g, s, a) == 0, "setting up: stone %d refused", a);
    }
    return s;
}

START_TEST(table_white)
{
    const rj_case *c = &cases[_i];
    if (c->who != 2)
        return;
    uint8_t board[RENJU_MAX_CELLS];
    int rows, cols, cell;
    read_case(c, board, &rows, &cols, &cell);
    /* the same stones in black's colour would be forbidden */
    ck_assert_msg(renju_check(board, rows, cols, cell, 2) == c->want, "case %d \"%s\"", _i, c->name);
    ck_assert_int_eq(brute(board, rows, cols, cell, 2), c->want);
    /* in a renju game with white to move the point is legal */
    game *g = renju_game(rows, cols);
    game_state *s = state_of(g, board);
    ck_assert_int_eq(game_current_player(g, s), 1);
    uint8_t mask[GAME_MAX_ACTIONS];
    game_legal(g, s, mask);
    ck_assert_msg(mask[cell], "case %d \"%s\": white may play it", _i, c->name);
    char why[128];
    ck_assert_ptr_null(game_why_illegal(g, s, cell, why, sizeof why));
    ck_assert_int_eq(game_play(g, s, cell), 0);
    if (c->want == RENJU_OVERLINE) {
        ck_assert(game_terminal(g, s));
        float z[2];
        game_result(g, s, z);
        ck_assert_float_eq(z[1], 1.0f); /* white's overline wins */
    }
    free(s);
    game_free(g);
}
END_TEST

/* ---- random positions against the brute force ---- */

START_TEST(random_boards_agree)
{
    rng r;
    rng_seed(&r, 12);
    int counted[5] = {0};
    for (int t = 0; t < 400; t++) {
        int rows = 9 + (int)rng_below(&r, 7), cols = 9 + (int)rng_below(&r, 7);
        uint8_t board[RENJU_MAX_CELLS];
        /* dense black in a small area, so that fours, threes and overlines are common */
        int pb = 15 + (int)rng_below(&r, 30), pw = 5 + (int)rng_below(&r, 15);
        for (int i = 0; i < rows * cols; i++) {
            int x = (int)rng_below(&r, 100);
            board[i] = x < pb ? 1 : x < pb + pw ? 2 : 0;
        }
        for (int i = 0; i < rows * cols; i++) {
            if (board[i])
                continue;
            renju_verdict a = renju_check(board, rows, cols, i, 1), b = brute(board, rows, cols, i, 1);
            if (a != b) {
                char pic[4096];
                int n = 0;
                for (int y = 0; y < rows; y++) {
                    for (int x = 0; x < cols; x++)
                        pic[n++] = y * cols + x == i ? '?' : ".XO"[board[y * cols + x]];
                    pic[n++] = '\n';
                }
                pic[n] = 0;
                ck_abort_msg("board %d point %d: renju_check %s, brute force %s\n%s", t, i,
                             renju_verdict_name(a), renju_verdict_name(b), pic);
            }
            counted[a]++;
        }
        /* the whole-board mask (with its quick filter) agrees with the point checks */
        uint8_t mask[RENJU_MAX_CELLS];
        int nf = renju_forbidden_mask(board, rows, cols, 1, mask), want = 0;
        for (int i = 0; i < rows * cols; i++) {
            bool f = !board[i] && renju_forbidden(board, rows, cols, i, 1);
            ck_assert_msg(mask[i] == f, "board %d point %d: mask %d, check %d", t, i, mask[i], f);
            want += f;
        }
        ck_assert_int_eq(nf, want);
    }
    for (int k = 0; k < 5; k++)
        ck_assert_msg(counted[k] > 20, "random boards: only %d points of %s", counted[k],
                      renju_verdict_name((renju_verdict)k));
}
END_TEST

/* ---- the game under renju ---- */

START_TEST(game_refuses_forbidden)
{
    const rj_case *c = &cases[0]; /* a double three */
    uint8_t board[RENJU_MAX_CELLS];
    int rows, cols, cell;
    read_case(c, board, &rows, &cols, &cell);
    /* four black stones and four white ones (black to move), white's far from the shape */
    board[8 * cols + 0] = 2;
    board[8 * cols + 2] = 2;
    board[8 * cols + 10] = 2;
    board[7 * cols + 10] = 2;
    game *g = renju_game(rows, cols);
    game_state *s = state_of(g, board);
    ck_assert_int_eq(game_current_player(g, s), 0);
    uint8_t mask[GAME_MAX_ACTIONS];
    int n = game_legal(g, s, mask);
    ck_assert(!mask[cell]);
    int empty = 0, forbidden = renju_forbidden_mask(board, rows, cols, 1, mask);
    for (int i = 0; i < rows * cols; i++)
        empty += !board[i];
    ck_assert_int_ge(forbidden, 1);
    ck_assert_int_eq(n, empty - forbidden);
    ck_assert_int_eq(game_play(g, s, cell), -1);
    char why[128];
    const char *no = game_why_illegal(g, s, cell, why, sizeof why);
    ck_assert_ptr_nonnull(no);
    ck_assert_msg(strstr(no, "double three") != NULL, "%s", no);
    /* the forbidden-point plane (the sixth) marks exactly the forbidden points */
    ck_assert_int_eq(g->planes, 6);
    ck_assert_str_eq(g->rule, "renju");
    float *planes = malloc(sizeof(float) * 6 * (size_t)g->actions);
    game_encode(g, s, planes);
    for (int i = 0; i < g->actions; i++)
        ck_assert_float_eq(planes[5 * g->actions + i], mask[i] ? 1.0f : 0.0f);
    /* white to move: the plane still shows black's forbidden points */
    int w = 0;
    while (board[w] || mask[w])
        w++;
    ck_assert_int_eq(game_play(g, s, w), 0);
    board[w] = 1;
    int x = 0;
    while (board[x] || x == cell)
        x++;
    game_encode(g, s, planes);
    int marked = 0;
    for (int i = 0; i < g->actions; i++)
        marked += planes[5 * g->actions + i] > 0.5f;
    ck_assert_int_ge(marked, 1);
    ck_assert_int_eq(game_play(g, s, x), 0); /* white plays anywhere */
    free(planes);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(game_black_five_with_forbidden_wins)
{
    /* "five with a double three": black's five there wins the game */
    const rj_case *c = NULL;
    for (int i = 0; i < NCASES; i++)
        if (strstr(cases[i].name, "five with a double three"))
            c = &cases[i];
    ck_assert_ptr_nonnull(c);
    uint8_t board[RENJU_MAX_CELLS];
    int rows, cols, cell;
    read_case(c, board, &rows, &cols, &cell);
    int nx = 0, no = 0;
    for (int i = 0; i < rows * cols; i++)
        nx += board[i] == 1, no += board[i] == 2;
    for (int i = rows * cols - 1; no < nx; i--)
        if (!board[i] && i % cols > 7) {
            board[i] = 2;
            no++;
        }
    game *g = renju_game(rows, cols);
    game_state *s = state_of(g, board);
    ck_assert_int_eq(game_current_player(g, s), 0);
    ck_assert_int_eq(g->ops->winning_move(g, s), cell);
    ck_assert_int_eq(game_play(g, s, cell), 0);
    ck_assert(game_terminal(g, s));
    float z[2];
    game_result(g, s, z);
    ck_assert_float_eq(z[0], 1.0f);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(game_black_overline_is_no_win)
{
    /* black XXX.XX with black to move: the gap is an overline, illegal, no winning move */
    uint8_t board[81] = {0};
    int cols = 9;
    const int xs[] = {1, 2, 3, 5, 6}, os[] = {72, 74, 76, 78, 80};
    for (int i = 0; i < 5; i++) {
        board[4 * cols + xs[i]] = 1;
        board[os[i]] = 2;
    }
    game *g = renju_game(9, 9);
    game_state *s = state_of(g, board);
    ck_assert_int_eq(g->ops->winning_move(g, s), -1);
    int gap = 4 * cols + 4;
    ck_assert_int_eq(game_play(g, s, gap), -1);
    char why[128];
    ck_assert_msg(strstr(game_why_illegal(g, s, gap, why, sizeof why), "overline") != NULL, "%s", why);
    free(s);
    game_free(g);
}
END_TEST


/* ---- the threat solver and the alpha-beta player under renju ---- */

/* A 15x15 board: black's double three at F = (7,7) (threes along row 7 and column 7),
 * a white diagonal (4,4) (5,5) (6,6) pointing at F, closed by black at (2,2) and (8,8):
 * white's four at (3,3) has F as its only completion point. */
static void f_board(uint8_t *b)
{
    memset(b, 0, 225);
    const int black[] = {5 * 15 + 7, 6 * 15 + 7, 7 * 15 + 5, 7 * 15 + 6, 2 * 15 + 2, 8 * 15 + 8};
    const int white[] = {4 * 15 + 4, 5 * 15 + 5, 6 * 15 + 6};
    for (int i = 0; i < 6; i++)
        b[black[i]] = 1;
    for (int i = 0; i < 3; i++)
        b[white[i]] = 2;
}

static bool threat_forbidden_cb(void *ctx, const uint8_t *board, int cell, int color)
{
    (void)ctx;
    return color == 1 && renju_forbidden(board, 15, 15, cell, 1);
}

START_TEST(threat_respects_forbidden)
{
    char err[256];
    int pv[64], len;
    uint8_t b[225];
    f_board(b);
    int F = 7 * 15 + 7;
    ck_assert_int_eq(renju_check(b, 15, 15, F, 1), RENJU_DOUBLE_THREE);
    threat_solver *t = threat_new(15, 15, 5, false, 14, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    /* freestyle: white's four at (3,3) is blocked at F, and nothing follows */
    ck_assert_int_eq(threat_solve(t, b, 2, THREAT_VCF, 100000, 0, 1, pv, 64, &len, err, sizeof err),
                     THREAT_NONE);
    /* renju: black cannot block at F (forbidden): white's four wins */
    threat_set_forbidden(t, threat_forbidden_cb, NULL);
    ck_assert_int_eq(threat_solve(t, b, 2, THREAT_VCF, 100000, 0, 1, pv, 64, &len, err, sizeof err),
                     THREAT_WIN);
    ck_assert_int_eq(pv[0], 3 * 15 + 3);
    ck_assert_int_eq(pv[len - 1], F);
    /* black's double four at (9,9) would win at once in freestyle; under renju it is
     * forbidden: no attack for black */
    uint8_t d[225] = {0};
    const int bl[] = {9 * 15 + 6, 9 * 15 + 7, 9 * 15 + 8, 6 * 15 + 9, 7 * 15 + 9, 8 * 15 + 9};
    for (int i = 0; i < 6; i++)
        d[bl[i]] = 1;
    d[9 * 15 + 5] = 2; /* both fours closed at one end: two completion points, one move */
    d[5 * 15 + 9] = 2;
    ck_assert_int_eq(renju_check(d, 15, 15, 9 * 15 + 9, 1), RENJU_DOUBLE_FOUR);
    ck_assert_int_eq(threat_solve(t, d, 1, THREAT_VCF, 100000, 0, 1, pv, 64, &len, err, sizeof err),
                     THREAT_NONE);
    threat_set_forbidden(t, NULL, NULL);
    ck_assert_int_eq(threat_solve(t, d, 1, THREAT_VCF, 100000, 0, 1, pv, 64, &len, err, sizeof err),
                     THREAT_WIN);
    ck_assert_int_eq(pv[0], 9 * 15 + 9);
    threat_free(t);
}
END_TEST

/* A renju game on 15x15 from stone lists (black first, alternately, extra stones of one
 * colour placed where told). */
static game_state *play_list(const game *g, const int *moves, int n)
{
    game_state *s = game_state_new(g, NULL);
    for (int i = 0; i < n; i++)
        ck_assert_msg(game_play(g, s, moves[i]) == 0, "move %d (%d) refused", i, moves[i]);
    return s;
}

START_TEST(players_respect_renju)
{
    game *g = renju_game(15, 15);
    gz_config cfg;
    cfg_defaults(&cfg, "mnk");
    cfg_game_set_rule(&cfg.game, CFG_RULE_RENJU);
    char err[256];
    const char *specs[] = {"alphabeta:1", "alphabeta:2", "threat:2"};
    /* 1. Black to move, his best-looking point F = (7,7) is a double three: never played.
     *    Stones: black (5,7) (6,7) (7,5) (7,6), white far away. */
    const int m1[] = {5 * 15 + 7, 0, 6 * 15 + 7, 14, 7 * 15 + 5, 14 * 15, 7 * 15 + 6, 224};
    /* 2. Black to move: XXX.XX on row 3 (the gap an overline), white threatens a five on
     *    row 11 (XOOOO. closed by black): black must block at (11,5), not hope for the gap. */
    const int m2[] = {3 * 15 + 1, 11 * 15 + 1, 3 * 15 + 2, 11 * 15 + 2, 3 * 15 + 3, 11 * 15 + 3,
                      3 * 15 + 5, 11 * 15 + 4, 3 * 15 + 6, 13 * 15 + 13, 11 * 15 + 0, 13 * 15 + 11};
    /* 3. The same shapes, colours swapped (white's OOO.OO, black's OXXXX.) with white to
     *    move: white wins at once with the overline. */
    const int m3[] = {11 * 15 + 1, 3 * 15 + 1, 11 * 15 + 2, 3 * 15 + 2, 11 * 15 + 3, 3 * 15 + 3,
                      11 * 15 + 4, 3 * 15 + 5, 9 * 15 + 9, 3 * 15 + 6, 13 * 15 + 13, 11 * 15 + 0,
                      13 * 15 + 11};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        player *p = player_new(specs[k], g, &cfg, NULL, err, sizeof err);
        ck_assert_msg(p != NULL, "%s", err);
        rng r;
        rng_seed(&r, 3);
        game_state *s = play_list(g, m1, 8);
        int a = player_choose(p, s, &r, NULL, err, sizeof err);
        ck_assert_msg(a >= 0, "%s", err);
        ck_assert_msg(a != 7 * 15 + 7, "%s played the forbidden double three", specs[k]);
        ck_assert_int_eq(game_play(g, s, a), 0);
        free(s);
        player_reset(p);
        s = play_list(g, m2, 12);
        ck_assert_int_eq(game_current_player(g, s), 0);
        a = player_choose(p, s, &r, NULL, err, sizeof err);
        ck_assert_msg(a == 11 * 15 + 5, "%s: black chose %d, not the block (%s)", specs[k], a,
                      a < 0 ? err : "");
        free(s);
        player_reset(p);
        s = play_list(g, m3, 13);
        ck_assert_int_eq(game_current_player(g, s), 1);
        a = player_choose(p, s, &r, NULL, err, sizeof err);
        ck_assert_msg(a == 3 * 15 + 4, "%s: white chose %d, not the winning overline", specs[k], a);
        free(s);
        player_free(p);
    }
    game_free(g);
}
END_TEST

/* ---- caro ---- */

static game *caro_game(void)
{
    gz_config cfg;
    cfg_defaults(&cfg, "mnk");
    cfg.game.rows = cfg.game.cols = 11;
    cfg_game_set_rule(&cfg.game, CFG_RULE_CARO);
    char err[256];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

START_TEST(caro_blocked_five)
{
    /* row 5: O XXXX ? O: the five would be shut at both ends: no win; with one end open, or
     * against the edge, a five wins; an overline never does */
    struct {
        const char *row; /* 11 cells, '?' the move */
        bool wins;
    } t[] = {
        {".OXXXX?O...", false},
        {"..XXXX?O...", true},
        {"OXXXX?.....", true},
        {"XXXX?O.....", true},  /* the edge does not block */
        {".OX?XXXO...", false},
        {"..XXX?XX...", false}, /* six: an overline */
        {".O.XXXX?...", true},
    };
    game *g = caro_game();
    ck_assert_str_eq(g->rule, "caro");
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t board[121] = {0};
        int cell = -1, nx = 0, no = 0;
        for (int c = 0; c < 11; c++) {
            char ch = t[i].row[c];
            board[5 * 11 + c] = ch == 'X' ? 1 : ch == 'O' ? 2 : 0;
            nx += ch == 'X';
            no += ch == 'O';
            if (ch == '?')
                cell = 5 * 11 + c;
        }
        /* pad white's stones (black to move) on the first and last rows, apart */
        static const int pad[] = {110, 112, 114, 116, 118, 120, 0, 2, 4, 6, 8, 10};
        for (int j = 0; no < nx; j++, no++)
            board[pad[j]] = 2;
        ck_assert(renju_wins(board, 11, 11, 5, CFG_RULE_CARO, cell, 1, 1) == t[i].wins);
        game_state *s = state_of(g, board);
        ck_assert_int_eq(game_current_player(g, s), 0);
        if (!t[i].wins)
            ck_assert_int_eq(g->ops->winning_move(g, s), -1);
        ck_assert_int_eq(game_play(g, s, cell), 0);
        ck_assert_msg(game_terminal(g, s) == t[i].wins, "caro row %s", t[i].row);
        free(s);
    }
    game_free(g);
}
END_TEST

START_TEST(wins_by_rule)
{
    /* XXXX? on one row; XXXXX? (overline) on another */
    uint8_t board[121] = {0};
    for (int c = 0; c < 4; c++)
        board[2 * 11 + 1 + c] = 1;
    for (int c = 0; c < 5; c++)
        board[6 * 11 + c] = 1;
    int five = 2 * 11 + 5, six = 6 * 11 + 5;
    for (int rule = 0; rule < 4; rule++) {
        ck_assert(renju_wins(board, 11, 11, 5, (cfg_rule)rule, five, 1, 1));
        bool overline_wins = rule == CFG_RULE_FREESTYLE;
        ck_assert(renju_wins(board, 11, 11, 5, (cfg_rule)rule, six, 1, 1) == overline_wins);
        /* the same stones as white's (black = 2): renju lets white's overline win */
        ck_assert(renju_wins(board, 11, 11, 5, (cfg_rule)rule, six, 1, 2) ==
                  (overline_wins || rule == CFG_RULE_RENJU));
    }
}
END_TEST

/* ---- config and game_new ---- */

START_TEST(rule_checks)
{
    gz_config c;
    char err[512];
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"rule\": \"renju\"}}", "t", err,
                               sizeof err), 0);
    ck_assert_int_eq(cfg_game_rule(&c.game), CFG_RULE_RENJU);
    /* renju and caro on tic-tac-toe: refused naming the key */
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"rows\": 3, \"cols\": 3, \"k\": 3, "
                                   "\"rule\": \"renju\"}}", "t", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.rule") != NULL, "%s", err);
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"k\": 4, \"rule\": \"caro\"}}",
                               "t", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.rule") != NULL, "%s", err);
    /* an unknown rule */
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"rule\": \"pente\"}}", "t", err,
                               sizeof err), -1);
    ck_assert_msg(strstr(err, "game.rule") && strstr(err, "freestyle|exact|renju|caro"), "%s", err);
    /* the old key: exact true is the rule exact; both keys at once are refused */
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"exact\": true}}", "t", err,
                               sizeof err), 0);
    ck_assert_str_eq(c.game.rule, "exact");
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"exact\": false}}", "t", err,
                               sizeof err), 0);
    ck_assert_str_eq(c.game.rule, "freestyle");
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"exact\": true, \"rule\": \"renju\"}}",
                               "t", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.exact") != NULL, "%s", err);
    /* --set: the rule, the alias, and the k check */
    cfg_defaults(&c, "mnk");
    ck_assert_int_eq(cfg_set(&c, "game.exact=true", err, sizeof err), 0);
    ck_assert_str_eq(c.game.rule, "exact");
    ck_assert_int_eq(cfg_set(&c, "game.rule=renju", err, sizeof err), 0);
    ck_assert_int_eq(cfg_set(&c, "game.exact=true", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.exact") != NULL, "%s", err);
    ck_assert_int_eq(cfg_set(&c, "game.k=4", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.rule") != NULL, "%s", err);
    /* written out: the rule, never the alias */
    char *json = cfg_to_json(&c);
    ck_assert_ptr_nonnull(strstr(json, "\"rule\":\t\"renju\""));
    ck_assert_ptr_null(strstr(json, "\"exact\""));
    free(json);
    /* game_new checks the same (protocols change the game section directly) */
    cfg_defaults(&c, "mnk");
    c.game.rows = c.game.cols = c.game.k = 3;
    cfg_game_set_rule(&c.game, CFG_RULE_RENJU);
    ck_assert_ptr_null(game_new(&c.game, err, sizeof err));
    ck_assert_msg(strstr(err, "game.rule") != NULL, "%s", err);
    snprintf(c.game.rule, sizeof c.game.rule, "gomoku");
    c.game.rows = c.game.cols = 15;
    c.game.k = 5;
    ck_assert_ptr_null(game_new(&c.game, err, sizeof err));
    ck_assert_msg(strstr(err, "game.rule") != NULL, "%s", err);
}
END_TEST

START_TEST(render_marks_forbidden)
{
    /* the board drawn for a person: black's forbidden points as '#', black to move */
    const rj_case *c = &cases[0];
    uint8_t board[RENJU_MAX_CELLS];
    int rows, cols, cell;
    read_case(c, board, &rows, &cols, &cell);
    board[8 * cols + 0] = 2;
    board[8 * cols + 2] = 2;
    board[8 * cols + 10] = 2;
    board[7 * cols + 10] = 2;
    game *g = renju_game(rows, cols);
    game_state *s = state_of(g, board);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    g->ops->render(g, s, f);
    fclose(f);
    ck_assert_msg(strstr(buf, "# = forbidden for black"), "%s", buf);
    /* the '?' of the diagram is row 5, column 5 (f): drawn '#' on the line of row 4 */
    int marks = 0;
    for (char *q = buf; *q; q++)
        marks += *q == '#';
    ck_assert_int_eq(marks, 1 + 1); /* the point and the legend */
    char *line = strstr(buf, "\n  4");
    ck_assert_ptr_nonnull(line);
    ck_assert_msg(line[4 + 2 * 5 + 1] == '#', "%s", buf);
    free(buf);
    free(s);
    game_free(g);
}
END_TEST

START_TEST(bench_rules_runs)
{
    /* gridzero bench rules: a short run prints its JSON line (docs/benchmarks.md's figure) */
    const char *bin = getenv("GZ_BIN"), *src = getenv("GZ_SRC");
    ck_assert_msg(bin && src, "GZ_BIN / GZ_SRC not set (run through meson test)");
    char cmd[2048], out[4096] = "";
    snprintf(cmd, sizeof cmd, "%s bench rules -c %s/configs/gomoku9.json --positions 40 --repeats 1 --json",
             bin, src);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(strstr(out, "\"ns_per_check\"") && strstr(out, "\"positions\": 40"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s bench rules -c %s/configs/sanling9.json 2>/dev/null", bin, src);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int st = pclose(p);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* bad rules through the binary: exit 2, the key named */
    const char *bad[] = {"--set game.rule=renju", "-c %s/configs/gomoku9.json --set game.rule=pente",
                         "-c %s/configs/gomoku9.json --set game.k=4 --set game.rule=caro"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, bad[i], src);
        snprintf(cmd, sizeof cmd, "%s config check %s 2>&1", bin, args);
        p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        n = fread(out, 1, sizeof out - 1, p);
        out[n] = 0;
        st = pclose(p);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: status %d", cmd, st);
        ck_assert_msg(strstr(out, "game.rule") != NULL, "%s: %s", cmd, out);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("renju");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, table_size);
    tcase_add_loop_test(tc, table_black, 0, NCASES);
    tcase_add_loop_test(tc, table_white, 0, NCASES);
    tcase_add_test(tc, random_boards_agree);
    tcase_add_test(tc, game_refuses_forbidden);
    tcase_add_test(tc, game_black_five_with_forbidden_wins);
    tcase_add_test(tc, game_black_overline_is_no_win);
    tcase_add_test(tc, threat_respects_forbidden);
    tcase_add_test(tc, players_respect_renju);
    tcase_add_test(tc, caro_blocked_five);
    tcase_add_test(tc, wins_by_rule);
    tcase_add_test(tc, rule_checks);
    tcase_add_test(tc, bench_rules_runs);
    tcase_add_test(tc, render_marks_forbidden);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
