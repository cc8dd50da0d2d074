#include "net_player.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "net_eval.h"
#include "ntuple.h"

int net_player_parse(const char *arg, char *path, size_t len, int *sims, char *err, size_t errlen)
{
    *sims = 0;
    size_t n = strlen(arg);
    const char *colon = strrchr(arg, ':');
    if (colon && colon[1]) {
        const char *d = colon + 1;
        while (*d && isdigit((unsigned char)*d))
            d++;
        if (!*d) {
            if (player_parse_count(colon + 1, sims) < 0) {
                snprintf(err, errlen, "expected model:FILE[:sims] with sims >= 1, got \"%s\"", colon + 1);
                return -1;
            }
            n = (size_t)(colon - arg);
        }
    }
    if (n == 0) {
        snprintf(err, errlen, "expected model:FILE[:sims] with a model file");
        return -1;
    }
    if (n >= len) {
        snprintf(err, errlen, "model path longer than %zu characters", len - 1);
        return -1;
    }
    memcpy(path, arg, n);
    path[n] = 0;
    return 0;
}

uint64_t net_player_seed(const gz_config *cfg, const char *spec)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of the spec: one seed per player */
    for (const char *q = spec; *q; q++)
        h = (h ^ (unsigned char)*q) * 1099511628211ULL;
    return rng_derive(cfg->seed, h);
}

static double nt_leaf(void *ctx, const uint8_t *cells) { return ntuple_value(ctx, cells); }
static void nt_leaf_free(void *ctx) { ntuple_free(ctx); }

/* A trailing ":N" of arg[0..n) with N all digits: its colon, else NULL. */
static const char *trailing_number(const char *arg, size_t n)
{
    for (size_t i = n; i > 0; i--)
        if (arg[i - 1] == ':')
            return i < n && strspn(arg + i, "0123456789") >= n - i ? arg + i - 1 : NULL;
    return NULL;
}

/* "model-expectimax:FILE[:D[:E]]": expectimax D moves deep (default 2) over the
 * after-state values of the n-tuple network in FILE (nn/ntuple.h), 2048 on 4x4; with E,
 * one move deeper on a board with at most E empty cells. */
static int ntuple_player_try(const char *spec, const game *g, player **out, char *err, size_t errlen)
{
    char path[1024];
    int depth = 2, deep = -1;
    const char *arg = spec + strlen("model-expectimax:");
    size_t n = strlen(arg);
    const char *last = trailing_number(arg, n);
    const char *prev = last ? trailing_number(arg, (size_t)(last - arg)) : NULL;
    if (last) {
        char num[16];
        const char *d = prev ? prev : last;
        size_t dl = prev ? (size_t)(last - prev - 1) : n - (size_t)(last - arg) - 1;
        snprintf(num, sizeof num, "%.*s", (int)(dl < 15 ? dl : 15), d + 1);
        if (dl >= 15 || player_parse_count(num, &depth) < 0 || depth > (prev ? 7 : 8)) {
            snprintf(err, errlen, "expected model-expectimax:FILE[:D[:E]] with D the moves searched "
                     "(1..8, or 1..7 with E), got \"%s\"", num);
            return -1;
        }
        if (prev) {
            size_t el = n - (size_t)(last - arg) - 1;
            snprintf(num, sizeof num, "%.*s", (int)(el < 15 ? el : 15), last + 1);
            if (el >= 15 || player_parse_count(num, &deep) < 0 || deep > 16) {
                snprintf(err, errlen, "expected model-expectimax:FILE:D:E with E the empty cells "
                         "(1..16) at which it searches one move deeper, got \"%s\"", num);
                return -1;
            }
        }
        n = (size_t)((prev ? prev : last) - arg);
    }
    if (n == 0 || n >= sizeof path) {
        snprintf(err, errlen, n ? "model path too long"
                                : "expected model-expectimax:FILE[:D[:E]] with a file");
        return -1;
    }
    memcpy(path, arg, n);
    path[n] = 0;
    if (strcmp(g->name, "2048") || g->rows != 4 || g->cols != 4) {
        snprintf(err, errlen, "model-expectimax plays 2048 on the 4x4 board (this game: %s %dx%d)", g->name,
                 g->rows, g->cols);
        return -1;
    }
    ntuple *nt = ntuple_load(path, err, errlen);
    if (!nt)
        return -1;
    *out = player_expectimax_new(g, depth, deep, nt_leaf, nt, nt_leaf_free, spec, "model-expectimax",
                                 err, errlen);
    return *out ? 1 : -1;
}

static int net_player_try(void *ctx, const char *spec, const game *g, const gz_config *cfg,
                          player **out, char *err, size_t errlen)
{
    (void)ctx;
    if (!strncmp(spec, "model-expectimax:", 17))
        return ntuple_player_try(spec, g, out, err, errlen);
    if (strncmp(spec, "model:", 6) != 0)
        return 0;
    char path[1024], why[512], arg[1100];
    int sims;
    /* a trailing ":fp32", ":bf16", ":int8" or ":auto" is this player's net.precision */
    snprintf(arg, sizeof arg, "%s", spec + 6);
    nn_precision prec = NN_PREC_AUTO;
    bool own_prec = false;
    char *colon = strrchr(arg, ':');
    if (colon && nn_precision_parse(colon + 1, &prec) == 0) {
        own_prec = true;
        *colon = 0;
    }
    /* then a trailing ":Ts" is a time per move, with sims (if given) as the cap */
    double seconds = 0;
    colon = strrchr(arg, ':');
    if (colon && player_parse_seconds(colon + 1, &seconds) == 0)
        *colon = 0;
    else if (colon && colon[1] && colon[strlen(colon) - 1] == 's' &&
             (isdigit((unsigned char)colon[1]) || colon[1] == '.')) {
        snprintf(err, errlen, "expected model:FILE[:sims][:Ts] with T seconds > 0 (e.g. 0.5s), "
                 "got \"%s\"", colon + 1);
        return -1;
    }
    if (net_player_parse(arg, path, sizeof path, &sims, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (sims == 0)
        sims = seconds > 0 ? NET_PLAYER_TIMED_SIMS : cfg->arena.simulations;
    nn_params *p = nn_ckpt_load(path, g, NULL, why, sizeof why);
    if (!p && ntuple_is_file(path)) {
        snprintf(err, errlen, "%s: an n-tuple network: play it with model-expectimax:%s[:D]", path, path);
        return -1;
    }
    if (!p) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    char note[256];
    if (nn_spec_game_note(&p->layout.spec, g, note, sizeof note)) /* it runs: say so, once */
        fprintf(stderr, "gridzero: note: model %s: %s\n", path, note);
    net_eval_opts o;
    evaluator *e = NULL;
    if (net_eval_opts_from_config(&o, cfg, why, sizeof why) == 0) {
        if (own_prec)
            o.precision = prec;
        e = net_eval_new(g, p, &o, why, sizeof why);
    }
    nn_params_free(p);
    if (!e) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    *out = player_mcts_new(g, cfg, e, sims, net_player_seed(cfg, spec), spec, "model", why, sizeof why);
    if (!*out) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    player_mcts_set_seconds(*out, seconds);
    return 1;
}

static const player_ext ext = {
    .try = net_player_try,
    .syntax = "model:FILE[:sims][:Ts][:precision]",
    .help = "PUCT search with the network of checkpoint FILE, sims simulations a move "
            "(default arena.simulations) or T seconds a move (e.g. 0.5s; sims is then the "
            "cap, default 20000), at precision fp32, bf16, int8 or auto (default "
            "net.precision)",
    .syntax2 = "model-expectimax:FILE[:D]",
    .help2 = "2048 (4x4): expectimax D moves deep (default 2) over the after-state values of the "
             "n-tuple network FILE (net.kind ntuple runs), a move's points counted",
    .ctx = NULL,
};

const player_ext *net_player_ext(void) { return &ext; }

int net_player_check_baselines(const gz_config *c, const game *g, const char *cfg_path,
                               char *err, size_t errlen)
{
    char why[768];
    for (int b = 0; b < c->arena.nbaselines; b++) {
        player *p = player_new(c->arena.baselines[b], g, c, net_player_ext(), why, sizeof why);
        if (!p) {
            snprintf(err, errlen, "%s: key arena.baselines[%d]: %s", cfg_path ? cfg_path : "built-in config",
                     b, why);
            return -1;
        }
        player_free(p);
    }
    return 0;
}
