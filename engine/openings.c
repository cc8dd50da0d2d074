/* openings.c — opening books (see openings.h). */
#include "openings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

struct opening_book {
    int count;
    int *start; /* (count + 1) offsets into moves */
    int *moves; /* every opening's actions, one after the other */
};

/* Appends x to a growing int array. Returns 0 or -1 (out of memory). */
static int push(int **a, int *n, int *cap, int x)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        int *na = realloc(*a, sizeof *na * (size_t)nc);
        if (!na)
            return -1;
        *a = na;
        *cap = nc;
    }
    (*a)[(*n)++] = x;
    return 0;
}

opening_book *openings_load(const game *g, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        gz_fail(err, errlen, "%s: cannot open the openings file: %s", path, strerror(errno));
        return NULL;
    }
    opening_book *o = calloc(1, sizeof *o);
    game_state *s = malloc(g->state_size);
    char *line = NULL;
    size_t cap = 0;
    int nmoves = 0, capmoves = 0, nstart = 0, capstart = 0, lineno = 0;
    bool ok = o && s && push(&o->start, &nstart, &capstart, 0) == 0;
    if (!ok)
        gz_fail(err, errlen, "%s: out of memory", path);
    while (ok && getline(&line, &cap, f) >= 0) {
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        game_init(g, s, NULL);
        int k = 0;
        for (char *tok = strtok(p, " \t\r\n"); ok && tok; tok = strtok(NULL, " \t\r\n")) {
            k++;
            int a;
            char why[160];
            const char *no = NULL;
            if (game_terminal(g, s)) {
                ok = false;
                gz_fail(err, errlen, "%s:%d: move %d \"%s\": the game is already over", path, lineno, k, tok);
            } else if (g->ops->parse_move(g, tok, &a, why, sizeof why) < 0) {
                ok = false;
                gz_fail(err, errlen, "%s:%d: move %d: %s", path, lineno, k, why);
            } else if ((no = game_why_illegal(g, s, a, why, sizeof why)) || game_play(g, s, a) < 0) {
                ok = false;
                gz_fail(err, errlen, "%s:%d: move %d \"%s\": %s", path, lineno, k, tok,
                        no ? no : "not a legal move");
            } else if (push(&o->moves, &nmoves, &capmoves, a) < 0) {
                ok = false;
                gz_fail(err, errlen, "%s: out of memory", path);
            }
        }
        if (ok && game_terminal(g, s)) {
            ok = false;
            gz_fail(err, errlen, "%s:%d: the opening ends the game (an opening must leave it to "
                    "be played)", path, lineno);
        }
        if (ok && push(&o->start, &nstart, &capstart, nmoves) < 0) {
            ok = false;
            gz_fail(err, errlen, "%s: out of memory", path);
        }
        if (ok)
            o->count++;
    }
    if (ok && ferror(f)) {
        ok = false;
        gz_fail(err, errlen, "%s: read error", path);
    }
    if (ok && o->count == 0) {
        ok = false;
        gz_fail(err, errlen, "%s: no openings (one move list a line; '#' starts a comment)", path);
    }
    free(line);
    free(s);
    fclose(f);
    if (!ok) {
        openings_free(o);
        return NULL;
    }
    return o;
}

void openings_free(opening_book *o)
{
    if (!o)
        return;
    free(o->start);
    free(o->moves);
    free(o);
}

int openings_count(const opening_book *o)
{
    return o->count;
}

const int *openings_moves(const opening_book *o, int i, int *n)
{
    *n = o->start[i + 1] - o->start[i];
    return o->moves + o->start[i];
}

int openings_central_point(const game *g, const game_state *s, int side, rng *r)
{
    uint8_t mask[GAME_MAX_ACTIONS];
    game_legal(g, s, mask);
    int h = side < g->rows ? side : g->rows, w = side < g->cols ? side : g->cols;
    int r0 = (g->rows - h) / 2, c0 = (g->cols - w) / 2, n = 0;
    for (int y = r0; y < r0 + h; y++)
        for (int x = c0; x < c0 + w; x++)
            n += mask[y * g->cols + x];
    if (n == 0)
        return -1;
    int pick = (int)rng_below(r, (uint32_t)n);
    for (int y = r0; y < r0 + h; y++)
        for (int x = c0; x < c0 + w; x++)
            if (mask[y * g->cols + x] && pick-- == 0)
                return y * g->cols + x;
    return -1;
}

int openings_play(const opening_book *o, int i, const game *g, game_state *s)
{
    int n;
    const int *m = openings_moves(o, i, &n);
    for (int k = 0; k < n; k++)
        if (game_play(g, s, m[k]) < 0)
            return -1;
    return 0;
}
