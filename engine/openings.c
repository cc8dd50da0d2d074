/* openings.c — opening books (see openings.h). */
#include "openings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "symmetry.h"

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

openings_gen_opts openings_gen_default(void)
{
    openings_gen_opts o = {.count = 50, .stones = 4, .side = 5, .vct_depth = 6,
                           .budget = 200000, .tries = 100000, .judge = NULL, .within = 0.2f,
                           .progress = NULL, .progress_ctx = NULL};
    return o;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The opening's key, the same for all its symmetric images and move orders: for each of
 * the game's symmetries the sorted (point, colour) codes, the least of them in
 * lexicographic order. key[n], tmp[n] scratch. */
static void opening_key(const game *g, const int *moves, int n, int *key, int *tmp)
{
    for (int e = 0; e < g->nsym; e++) {
        for (int i = 0; i < n; i++)
            tmp[i] = 2 * sym_map_action(g, g->sym[e], moves[i]) + (i & 1);
        qsort(tmp, (size_t)n, sizeof *tmp, cmp_int);
        if (e == 0 || memcmp(tmp, key, sizeof *tmp * (size_t)n) < 0)
            memcpy(key, tmp, sizeof *tmp * (size_t)n);
    }
}

/* Is key[n] among the kept keys (keys: n ints each, nkeys of them)? */
static bool key_seen(const int *keys, int nkeys, const int *key, int n)
{
    for (int i = 0; i < nkeys; i++)
        if (!memcmp(keys + (size_t)i * (size_t)n, key, sizeof *key * (size_t)n))
            return true;
    return false;
}

int openings_generate(const game *g, const openings_gen_opts *o, const opening_book *avoid,
                      rng *r, FILE *out, char *err, size_t errlen)
{
    if (o->count < 1 || o->stones < 1 || o->side < 1 || o->vct_depth < 1 || o->vct_depth > 20 ||
        o->budget <= 0 || o->tries <= 0) {
        gz_fail(err, errlen, "openings: count, stones, side, budget and tries must be >= 1 and "
                "the VCT depth 1..20 (got count %d, stones %d, side %d, VCT depth %d, budget %ld, "
                "tries %ld)", o->count, o->stones, o->side, o->vct_depth, o->budget, o->tries);
        return OPENINGS_BAD_INPUT;
    }
    if (o->judge && !(o->within > 0.0f && o->within <= 1.0f)) {
        gz_fail(err, errlen, "openings: the judge's bound must be in (0, 1] (got %g)",
                (double)o->within);
        return OPENINGS_BAD_INPUT;
    }
    int h = o->side < g->rows ? o->side : g->rows, w = o->side < g->cols ? o->side : g->cols;
    if (o->stones > h * w) {
        gz_fail(err, errlen, "openings: %d stones do not fit the centred %dx%d square",
                o->stones, h, w);
        return OPENINGS_BAD_INPUT;
    }
    if (g->players != 2 || !g->ops->threat_new) {
        gz_fail(err, errlen, "openings: the game %s has no threat search to check the openings' "
                "balance (m,n,k games with k >= 4 have one)", g->ops->name);
        return OPENINGS_BAD_INPUT;
    }
    void *ws = g->ops->threat_new(g, 20, err, errlen);
    if (!ws) /* the game's: m,n,k with k < 4 has none */
        return OPENINGS_BAD_INPUT;
    /* at most min(count, tries) draws are kept: the key table is sized by that, not
     * by a --count that the draws could never reach */
    int n = o->stones, nav = avoid ? openings_count(avoid) : 0;
    size_t cap = (size_t)nav + (size_t)(o->tries < o->count ? o->tries : o->count);
    int *keys = cap > SIZE_MAX / sizeof(int) / (size_t)n ? NULL : malloc(sizeof *keys * (size_t)n * cap);
    int *moves = malloc(sizeof *moves * (size_t)n), *tmp = malloc(sizeof *tmp * (size_t)n);
    game_state *s = malloc(g->state_size);
    int nkeys = 0, made = 0, rc = -1;
    if (!keys || !moves || !tmp || !s) {
        gz_fail(err, errlen, "openings: out of memory for %zu openings of %d stones (count %d, "
                "tries %ld, %d avoided)", cap, n, o->count, o->tries, nav);
        goto out;
    }
    for (int i = 0; i < nav; i++) { /* the avoided book's openings of this length */
        int m;
        const int *am = openings_moves(avoid, i, &m);
        if (m != n)
            continue;
        opening_key(g, am, n, keys + (size_t)nkeys * (size_t)n, tmp);
        nkeys++;
    }
    int pv[1];
    for (long t = 0; t < o->tries && made < o->count; t++) {
        game_init(g, s, NULL);
        bool ok = true;
        for (int i = 0; i < n && ok; i++) {
            moves[i] = openings_central_point(g, s, o->side, r);
            ok = moves[i] >= 0 && game_play(g, s, moves[i]) == 0 && !game_terminal(g, s);
        }
        for (int p = 0; p < 2 && ok; p++)
            ok = g->ops->threat_win(g, s, ws, p, o->budget, o->vct_depth, pv, 1) == 0;
        if (!ok)
            continue;
        int *key = keys + (size_t)nkeys * (size_t)n;
        opening_key(g, moves, n, key, tmp);
        if (key_seen(keys, nkeys, key, n))
            continue;
        if (o->judge) {
            player_info info;
            char why[256];
            player_reset(o->judge);
            if (player_choose(o->judge, s, r, &info, why, sizeof why) < 0) {
                gz_fail(err, errlen, "openings: the judge %s: %s", o->judge->name, why);
                goto out;
            }
            if (!info.has_value) {
                gz_fail(err, errlen, "openings: the judge %s gives no value (a search player "
                        "does: mcts:N, model:FILE)", o->judge->name);
                rc = OPENINGS_BAD_INPUT;
                goto out;
            }
            float v = info.value[game_current_player(g, s)];
            bool even = fabsf(v) <= o->within;
            if (o->progress)
                o->progress(o->progress_ctx, made + even, t + 1);
            if (!even)
                continue;
        }
        nkeys++;
        for (int i = 0; i < n; i++) {
            char buf[32];
            fprintf(out, "%s%s", i ? " " : "", g->ops->format_move(g, moves[i], buf, sizeof buf));
        }
        fputc('\n', out);
        made++;
    }
    if (made < o->count)
        gz_fail(err, errlen, "openings: %d of %d openings found in %ld draws (more draws, or "
                "settings that allow more openings: more stones, a larger square)", made,
                o->count, o->tries);
    else
        rc = made;
out:
    free(keys);
    free(moves);
    free(tmp);
    free(s);
    g->ops->threat_free(ws);
    return rc;
}
