/* pbrain.c — the Gomocup protocol (see pbrain.h). */
#include "pbrain.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/openings.h"

#ifndef GZ_VERSION
#define GZ_VERSION "unknown"
#endif

enum {
    PB_MAX_SIDE = 25,           /* the m,n,k game's limit */
    PB_DEFAULT_TURN_MS = 5000,
    PB_RULE_EXACT = 1,
    PB_RULE_CONTINUOUS = 2,
    PB_RULE_RENJU = 4,
    PB_RULE_CARO = 8,
    PB_SWAP2_CANDIDATES = 8, /* placements compared for each swap2 choice of stones */
};
/* The responder's margin: with white's value within it of 0 it places two more stones
 * rather than take a colour. */
#define PB_SWAP2_MARGIN 0.1f

struct pbrain {
    /* immutable after pbrain_new */
    brain_opts bo;
    char spec[PLAYER_NAME_LEN];
    char fallback[PLAYER_NAME_LEN]; /* pbrain_set_fallback; "" = none */
    bool on_fallback;   /* the brain in use plays the fallback */
    char note[256];     /* a MESSAGE line owed to the manager, "" = none */
    bool debug;
    /* mutated */
    gz_config cfg;      /* game.rows/cols/rule follow START and INFO rule */
    game *g;            /* owned; NULL before START */
    brain *b;           /* owned */
    unsigned char *hist; /* (max_game_length + 1) states */
    int nmoves;
    int moves[PB_MAX_SIDE * PB_MAX_SIDE]; /* actions played, in order */
    double memory_mb;   /* of the brain in use */
    char made_rule[CFG_STR_LEN]; /* the rule the current game was made with */
    rng r;              /* swap2 candidate placements */
    /* BOARD ... DONE, SWAP2BOARD ... DONE */
    bool in_board;
    bool swap2;         /* the lines being read are SWAP2BOARD's (x,y, no field) */
    int nboard;
    int board_action[PB_MAX_SIDE * PB_MAX_SIDE];
    int board_field[PB_MAX_SIDE * PB_MAX_SIDE];
    char board_err[256]; /* the first problem, "" for none */
    /* INFO */
    long long turn_ms, match_ms, left_ms, max_memory;
    bool started;       /* a START/RECTSTART succeeded */
};

static game_state *pb_state(pbrain *pb, int i)
{
    return (game_state *)(pb->hist + (size_t)i * pb->g->state_size);
}

static void say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    fflush(out);
}

/* A whole non-negative decimal number (leading/trailing blanks allowed). */
static int parse_count(const char *s, long long max, long long *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* "x,y" (blanks allowed around the numbers); *rest gets what follows a second comma
 * (NULL when there is none). Returns 0 or -1. */
static int parse_xy(const char *s, int *x, int *y, const char **rest)
{
    char buf[64];
    const char *c1 = strchr(s, ',');
    if (!c1 || (size_t)(c1 - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(c1 - s));
    buf[c1 - s] = 0;
    long long v;
    if (parse_count(buf, 1000, &v) < 0)
        return -1;
    *x = (int)v;
    const char *p = c1 + 1;
    const char *c2 = strchr(p, ',');
    size_t n = c2 ? (size_t)(c2 - p) : strlen(p);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = 0;
    if (parse_count(buf, 1000, &v) < 0)
        return -1;
    *y = (int)v;
    if (rest)
        *rest = c2 ? c2 + 1 : NULL;
    else if (c2)
        return -1;
    return 0;
}

/* x,y -> action on the current board, or -1 with a message. */
static int xy_action(pbrain *pb, int x, int y, char *err, size_t errlen)
{
    if (x < 0 || y < 0 || x >= pb->g->cols || y >= pb->g->rows) {
        snprintf(err, errlen, "%d,%d is off the %dx%d board (x 0..%d, y 0..%d)", x, y, pb->g->cols,
                 pb->g->rows, pb->g->cols - 1, pb->g->rows - 1);
        return -1;
    }
    return y * pb->g->cols + x;
}

/* The tree memory for INFO max_memory: half of it, at most 256 MB, at least 1 MB. */
static double pb_memory_mb(const pbrain *pb)
{
    double mb = 256;
    if (pb->max_memory > 0 && pb->max_memory / 2.0 / (1024.0 * 1024.0) < mb)
        mb = pb->max_memory / 2.0 / (1024.0 * 1024.0);
    return mb < 1 ? 1 : mb;
}

/* Makes the game for the current cfg (size, rule) and the brain for it. */
static int pb_new_game(pbrain *pb, char *err, size_t errlen)
{
    char why[512];
    game *g = game_new(&pb->cfg.game, why, sizeof why);
    if (!g) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    unsigned char *hist = malloc(g->state_size * (size_t)(g->max_game_length + 1));
    if (!hist) {
        game_free(g);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double mb = pb_memory_mb(pb);
    int rc;
    if (pb->b && mb == pb->memory_mb && !pb->on_fallback) {
        rc = brain_set_game(pb->b, g, why, sizeof why);
    } else {
        brain_free(pb->b);
        brain_opts o = pb->bo;
        o.memory_mb = mb;
        pb->b = brain_new(g, &pb->cfg, &o, why, sizeof why);
        rc = pb->b ? 0 : -1;
    }
    bool was_fallback = pb->on_fallback;
    pb->on_fallback = false;
    if (rc < 0 && pb->fallback[0]) { /* the shipped model cannot play this game: the fallback */
        brain_free(pb->b);
        brain_opts o = pb->bo;
        o.spec = pb->fallback;
        o.memory_mb = mb;
        char why2[512];
        pb->b = brain_new(g, &pb->cfg, &o, why2, sizeof why2);
        rc = pb->b ? 0 : -1;
        if (rc == 0) {
            pb->on_fallback = true;
            if (!was_fallback) {
                const char *base = strrchr(pb->spec, '/');
                snprintf(pb->note, sizeof pb->note, "MESSAGE %s does not fit this game (%s, k = %d): "
                         "playing %s", base ? base + 1 : pb->spec, pb->cfg.game.rule, pb->cfg.game.k,
                         pb->fallback);
                fprintf(stderr, "pbrain: %s; playing %s\n", why, pb->fallback);
            }
        }
    }
    if (rc < 0) {
        /* The old game's brain is gone: drop the old game as well. */
        brain_free(pb->b);
        pb->b = NULL;
        game_free(g);
        free(hist);
        game_free(pb->g);
        free(pb->hist);
        pb->g = NULL;
        pb->hist = NULL;
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    pb->memory_mb = mb;
    snprintf(pb->made_rule, sizeof pb->made_rule, "%s", pb->cfg.game.rule);
    game_free(pb->g);
    free(pb->hist);
    pb->g = g;
    pb->hist = hist;
    game_init(g, pb_state(pb, 0), NULL);
    pb->nmoves = 0;
    brain_reset(pb->b);
    return 0;
}

/* Back to the empty board of the current game. */
static void pb_clear(pbrain *pb)
{
    pb->nmoves = 0;
    game_init(pb->g, pb_state(pb, 0), NULL);
    brain_reset(pb->b);
}

static int pb_play(pbrain *pb, int a)
{
    game_state *cur = pb_state(pb, pb->nmoves), *next = pb_state(pb, pb->nmoves + 1);
    game_copy(pb->g, next, cur);
    if (game_play(pb->g, next, a) < 0)
        return -1;
    brain_notify(pb->b, cur, a);
    pb->moves[pb->nmoves++] = a;
    return 0;
}

static int pb_empty_points(pbrain *pb)
{
    return pb->g->actions - pb->nmoves;
}

/* The time budget of the brain's next answer (seconds; < 0 = no clock). */
static double pb_budget(pbrain *pb)
{
    int est = pb_empty_points(pb) / 2;
    est = est < 8 ? 8 : est > 30 ? 30 : est;
    double turn = pb->turn_ms / 1000.0;
    double left = pb->match_ms > 0 && pb->left_ms >= 0 ? pb->left_ms / 1000.0 : -1;
    return brain_budget(turn, left, est);
}

/* The brain's move in the current position within budget seconds: written as "x,y"
 * and played. */
static void pb_move_within(pbrain *pb, double budget, FILE *out)
{
    game_state *cur = pb_state(pb, pb->nmoves);
    if (game_terminal(pb->g, cur)) {
        say(out, "ERROR the game is over (%s): no move to make",
            pb->nmoves >= pb->g->actions ? "the board is full" : "five in a row");
        return;
    }
    brain_move m;
    char err[512];
    int a = brain_choose(pb->b, cur, budget, NULL, &m, err, sizeof err);
    if (a < 0) {
        say(out, "ERROR engine: %s", err);
        return;
    }
    if (pb->debug) {
        if (m.searched)
            say(out, "DEBUG %s: %d simulations in %.3f s (budget %.3f s), value %+.3f%s%s", brain_name(pb->b),
                m.sims, m.seconds, budget, (double)m.value, m.proven ? " (proven)" : "",
                m.full ? " (stopped: the tree's memory is full, see --memory)" : "");
        else
            say(out, "DEBUG %s: chose in %.3f s", brain_name(pb->b), m.seconds);
    }
    if (pb_play(pb, a) < 0) {
        say(out, "ERROR engine chose an illegal move (action %d)", a);
        return;
    }
    say(out, "%d,%d", a % pb->g->cols, a / pb->g->cols);
}

/* The brain's move with the clock's budget. */
static void pb_move(pbrain *pb, FILE *out)
{
    pb_move_within(pb, pb_budget(pb), out);
}

static bool pb_need_game(pbrain *pb, FILE *out, const char *cmd)
{
    if (pb->started)
        return true;
    say(out, "ERROR %s: no game yet (send START first)", cmd);
    return false;
}

/* An empty board for the current settings (size, rule, memory): the same game and
 * engine when they still match them (no model reload), else new ones. Returns 0, or
 * -1 with a message (no game then: started is cleared). */
static int pb_fresh(pbrain *pb, char *err, size_t errlen)
{
    if (pb->g && pb->g->rows == pb->cfg.game.rows && pb->g->cols == pb->cfg.game.cols &&
        !strcmp(pb->made_rule, pb->cfg.game.rule) && pb->memory_mb == pb_memory_mb(pb)) {
        pb_clear(pb);
        return 0;
    }
    if (pb_new_game(pb, err, errlen) < 0) {
        pb->started = false;
        return -1;
    }
    return 0;
}

/* START n / RECTSTART w,h. */
static void pb_start(pbrain *pb, int w, int h, FILE *out)
{
    int k = pb->cfg.game.k;
    if (w < k || h < k || w > PB_MAX_SIDE || h > PB_MAX_SIDE) {
        say(out, "ERROR unsupported size %dx%d (%d-in-a-row: sides %d..%d)", w, h, k, k, PB_MAX_SIDE);
        return;
    }
    pb->cfg.game.cols = w;
    pb->cfg.game.rows = h;
    char err[512];
    if (pb_fresh(pb, err, sizeof err) < 0) {
        say(out, "ERROR %s", err);
        return;
    }
    pb->started = true;
    say(out, "OK");
}

static void pb_info(pbrain *pb, char *arg, FILE *out)
{
    char *key = arg, *val = arg;
    while (*val && !isspace((unsigned char)*val))
        val++;
    if (*val)
        *val++ = 0;
    long long v;
    bool numeric = parse_count(val, LLONG_MAX / 4, &v) == 0;
    const char *k = key;
    if (!strcasecmp(k, "timeout_turn") || !strcasecmp(k, "timeout_match") ||
        !strcasecmp(k, "time_left") || !strcasecmp(k, "max_memory") ||
        !strcasecmp(k, "game_type") || !strcasecmp(k, "rule")) {
        if (!numeric) {
            say(out, "ERROR INFO %s: expected a whole number >= 0, got \"%s\"", k, val);
            return;
        }
    }
    if (!strcasecmp(k, "timeout_turn")) {
        pb->turn_ms = v;
    } else if (!strcasecmp(k, "timeout_match")) {
        pb->match_ms = v;
    } else if (!strcasecmp(k, "time_left")) {
        pb->left_ms = v;
    } else if (!strcasecmp(k, "max_memory")) {
        pb->max_memory = v; /* takes effect at the next START */
    } else if (!strcasecmp(k, "rule")) {
        if (v & PB_RULE_CONTINUOUS) {
            say(out, "ERROR INFO rule %lld: bit 2 (continuous game: play on after a five) is not "
                     "supported (freestyle 0, exact five 1, renju 4 and caro 8 are)", v);
            return;
        }
        if ((v & PB_RULE_RENJU) && (v & PB_RULE_CARO)) {
            say(out, "ERROR INFO rule %lld: renju (4) and caro (8) at once", v);
            return;
        }
        if (v > (PB_RULE_EXACT | PB_RULE_RENJU | PB_RULE_CARO)) {
            say(out, "ERROR INFO rule %lld: unknown bits (freestyle 0, exact five 1, renju 4 and "
                     "caro 8 are supported)", v);
            return;
        }
        cfg_rule rule = (v & PB_RULE_RENJU) ? CFG_RULE_RENJU
                        : (v & PB_RULE_CARO) ? CFG_RULE_CARO
                        : (v & PB_RULE_EXACT) ? CFG_RULE_EXACT : CFG_RULE_FREESTYLE;
        if ((rule == CFG_RULE_RENJU || rule == CFG_RULE_CARO) && pb->cfg.game.k != 5) {
            say(out, "ERROR INFO rule %lld: %s is a rule of five in a row, but the config's game.k "
                     "is %d", v, cfg_rule_name(rule), pb->cfg.game.k);
            return;
        }
        cfg_rule old = cfg_game_rule(&pb->cfg.game);
        if (rule != old) {
            cfg_game_set_rule(&pb->cfg.game, rule);
            /* On an empty board the rule applies at once; otherwise from the next
             * RESTART, START or BOARD. An engine that cannot play it (a model made for
             * another rule) keeps the old rule. */
            if (pb->started && pb->nmoves == 0) {
                char err[512], again[512];
                if (pb_fresh(pb, err, sizeof err) < 0) {
                    cfg_game_set_rule(&pb->cfg.game, old);
                    if (pb_fresh(pb, again, sizeof again) == 0)
                        pb->started = true;
                    say(out, "ERROR INFO rule: %s (the rule stays %s)", err, cfg_rule_name(old));
                }
            }
        }
    }
    /* game_type, evaluate, folder and unknown keys: nothing to do (the protocol says
     * a brain ignores INFO it does not know). */
}

static void pb_board_line(pbrain *pb, const char *line)
{
    if (pb->board_err[0])
        return;
    int x, y;
    const char *rest;
    long long field;
    char err[256];
    if (pb->swap2) {
        /* SWAP2BOARD: x,y, the stones in the order placed (black, white, black, ...) */
        if (parse_xy(line, &x, &y, NULL) < 0) {
            snprintf(pb->board_err, sizeof pb->board_err, "SWAP2BOARD line \"%.40s\": expected x,y", line);
            return;
        }
        rest = NULL;
        field = 1 + pb->nboard % 2;
    } else if (parse_xy(line, &x, &y, &rest) < 0 || !rest || parse_count(rest, 100, &field) < 0) {
        snprintf(pb->board_err, sizeof pb->board_err, "BOARD line \"%.40s\": expected x,y,field", line);
        return;
    }
    if (field < 1 || field > 3) {
        snprintf(pb->board_err, sizeof pb->board_err,
                 "BOARD line \"%.40s\": field must be 1 (own), 2 (opponent's) or 3", line);
        return;
    }
    if (field == 3) {
        snprintf(pb->board_err, sizeof pb->board_err,
                 "BOARD line \"%.40s\": field 3 (continuous game) is not supported", line);
        return;
    }
    const char *cmd = pb->swap2 ? "SWAP2BOARD" : "BOARD";
    int a = xy_action(pb, x, y, err, sizeof err);
    if (a < 0) {
        snprintf(pb->board_err, sizeof pb->board_err, "%s: %s", cmd, err);
        return;
    }
    for (int i = 0; i < pb->nboard; i++)
        if (pb->board_action[i] == a) {
            snprintf(pb->board_err, sizeof pb->board_err, "%s: %d,%d is given twice", cmd, x, y);
            return;
        }
    pb->board_action[pb->nboard] = a;
    pb->board_field[pb->nboard] = (int)field;
    pb->nboard++;
}

/* DONE: set the position up from the collected stones and move. */
static void pb_board_done(pbrain *pb, FILE *out)
{
    pb->in_board = false;
    if (pb->board_err[0]) {
        say(out, "ERROR %s", pb->board_err);
        return;
    }
    int own = 0, opp = 0;
    for (int i = 0; i < pb->nboard; i++) {
        if (pb->board_field[i] == 1)
            own++;
        else
            opp++;
    }
    bool black;
    if (own == opp)
        black = true;
    else if (opp == own + 1)
        black = false;
    else {
        say(out, "ERROR BOARD: %d own and %d opponent's stones: it cannot be the brain's turn", own, opp);
        return;
    }
    /* Stones come in the order they were played (the protocol's advice): interleave
     * black's and white's in their given order. */
    int order[2][PB_MAX_SIDE * PB_MAX_SIDE], n[2] = {0, 0};
    for (int i = 0; i < pb->nboard; i++) {
        int color = (pb->board_field[i] == 1) == black ? 0 : 1;
        order[color][n[color]++] = pb->board_action[i];
    }
    char err[512];
    if (pb_fresh(pb, err, sizeof err) < 0) {
        say(out, "ERROR %s", err);
        return;
    }
    for (int i = 0; i < pb->nboard; i++) {
        int color = i & 1, a = order[color][i / 2];
        char why[160];
        const char *no = game_why_illegal(pb->g, pb_state(pb, pb->nmoves), a, why, sizeof why);
        if (no || pb_play(pb, a) < 0) {
            bool over = game_terminal(pb->g, pb_state(pb, pb->nmoves));
            pb_clear(pb);
            if (over)
                say(out, "ERROR BOARD: the position is already decided (a five on the board)");
            else
                say(out, "ERROR BOARD: stone %d,%d (%s's, played in the order given): %s",
                    a % pb->g->cols, a / pb->g->cols, color ? "white" : "black",
                    no ? no : "not a legal move");
            return;
        }
    }
    if (game_terminal(pb->g, pb_state(pb, pb->nmoves))) {
        bool full = pb->nmoves >= pb->g->actions;
        pb_clear(pb);
        say(out, "ERROR BOARD: the position is already decided (%s)", full ? "a full board" : "a five on the board");
        return;
    }
    pb_move(pb, out);
}

/* White's value (white to move in s) from the brain's search within budget seconds.
 * Returns false when the brain gives none (a plain player such as alphabeta). */
static bool pb_white_value(pbrain *pb, const game_state *s, double budget, float *v)
{
    brain_move m;
    char err[256];
    if (game_terminal(pb->g, s) || brain_choose(pb->b, s, budget, NULL, &m, err, sizeof err) < 0 ||
        !(m.searched || m.proven))
        return false;
    *v = game_current_player(pb->g, s) == 1 ? m.value : -m.value;
    return true;
}

/* Places `stones` stones in the current position: of PB_SWAP2_CANDIDATES random
 * placements in the central side x side points, the one whose value for white (to
 * move after them) is nearest 0 (a plain player, without values, takes the first).
 * Answers them as "x,y x,y ..." and plays them. */
static void pb_swap2_place(pbrain *pb, int stones, int side, double budget, FILE *out)
{
    const game *g = pb->g;
    game_state *cur = pb_state(pb, pb->nmoves);
    game_state *c = malloc(g->state_size);
    int best[5] = {-1, -1, -1, -1, -1}, cand[5];
    float best_v = 2;
    for (int k = 0; c && k < PB_SWAP2_CANDIDATES; k++) {
        game_copy(g, c, cur);
        bool ok = true;
        for (int i = 0; i < stones && ok; i++) {
            cand[i] = openings_central_point(g, c, side, &pb->r);
            ok = cand[i] >= 0 && game_play(g, c, cand[i]) == 0 && !game_terminal(g, c);
        }
        if (!ok)
            continue;
        float v = 0;
        bool known = pb_white_value(pb, c, budget < 0 ? -1 : budget / PB_SWAP2_CANDIDATES, &v);
        if (best[0] < 0 || (known && fabsf(v) < best_v)) {
            memcpy(best, cand, sizeof best);
            best_v = known ? fabsf(v) : 2;
        }
        if (!known)
            break;
    }
    free(c);
    if (best[0] < 0) {
        say(out, "ERROR SWAP2BOARD: no room for %d stones in the centre of the board", stones);
        return;
    }
    char line[96];
    int n = 0;
    for (int i = 0; i < stones; i++) {
        pb_play(pb, best[i]);
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%d,%d", i ? " " : "", best[i] % g->cols,
                      best[i] / g->cols);
    }
    say(out, "%s", line);
}

/* SWAP2BOARD ... DONE: the swap2 opening as Gomocup runs it. 0 stones: the brain, the
 * opener, places three (black, white, black). 3 stones: as the responder it answers
 * SWAP (it takes black: the opponent plays white's move next), one move (it stays white
 * and plays the fourth stone) or two moves (white and black: the opponent then chooses
 * a colour). 5 stones: as the opener it answers SWAP (it takes black) or a move (it
 * takes white and plays the sixth stone). The choices come from the search's value of
 * the position for white; a plain player (no values) stays white and plays. */
static void pb_swap2_done(pbrain *pb, FILE *out)
{
    pb->in_board = false;
    pb->swap2 = false;
    if (pb->board_err[0]) {
        say(out, "ERROR %s", pb->board_err);
        return;
    }
    int n = pb->nboard;
    if (n != 0 && n != 3 && n != 5) {
        say(out, "ERROR SWAP2BOARD: %d stones (expected 0, 3 or 5: none for the opener's three, "
                 "three for the responder's choice, five for the opener's choice)", n);
        return;
    }
    char err[512];
    if (pb_fresh(pb, err, sizeof err) < 0) {
        say(out, "ERROR %s", err);
        return;
    }
    for (int i = 0; i < n; i++) {
        int a = pb->board_action[i];
        char why[160];
        const char *no = game_why_illegal(pb->g, pb_state(pb, pb->nmoves), a, why, sizeof why);
        if (no || pb_play(pb, a) < 0) {
            pb_clear(pb);
            say(out, "ERROR SWAP2BOARD: stone %d,%d: %s", a % pb->g->cols, a / pb->g->cols,
                no ? no : "not a legal move");
            return;
        }
    }
    if (game_terminal(pb->g, pb_state(pb, pb->nmoves))) {
        pb_clear(pb);
        say(out, "ERROR SWAP2BOARD: the stones end the game");
        return;
    }
    double budget = pb_budget(pb);
    if (n == 0) {
        pb_swap2_place(pb, 3, 7, budget, out);
        return;
    }
    float v = 0;
    bool known = pb_white_value(pb, pb_state(pb, pb->nmoves), budget < 0 ? -1 : budget / 3, &v);
    if (!known || (n == 3 && v > PB_SWAP2_MARGIN) || (n == 5 && v >= 0))
        pb_move_within(pb, budget < 0 ? -1 : budget * 2 / 3, out); /* white is worth more (or
                                                                      no value to tell) */
    else if (n == 5 || v < -PB_SWAP2_MARGIN)
        say(out, "SWAP");
    else
        pb_swap2_place(pb, 2, 9, budget < 0 ? -1 : budget * 2 / 3, out);
}

int pbrain_line(pbrain *pb, const char *raw, FILE *out)
{
    size_t len = strlen(raw);
    char stack[512];
    char *line = len < sizeof stack ? stack : malloc(len + 1);
    if (!line) {
        say(out, "ERROR out of memory");
        return 0;
    }
    /* Trim: blanks and control characters (CR, LF, NUL-free) at both ends. */
    const char *s = raw;
    while (*s && (isspace((unsigned char)*s) || iscntrl((unsigned char)*s)))
        s++;
    size_t n = strlen(s);
    while (n && (isspace((unsigned char)s[n - 1]) || iscntrl((unsigned char)s[n - 1])))
        n--;
    memcpy(line, s, n);
    line[n] = 0;
    int rc = 0;
    if (!*line)
        goto out;
    if (pb->in_board) {
        if (!strcasecmp(line, "DONE") && pb->swap2)
            pb_swap2_done(pb, out);
        else if (!strcasecmp(line, "DONE"))
            pb_board_done(pb, out);
        else if ((!pb->g || pb->nboard >= pb->g->actions) && !pb->board_err[0])
            snprintf(pb->board_err, sizeof pb->board_err, "BOARD: more stones than points");
        else
            pb_board_line(pb, line);
        goto out;
    }
    char *arg = line;
    while (*arg && !isspace((unsigned char)*arg))
        arg++;
    if (*arg)
        *arg++ = 0;
    while (isspace((unsigned char)*arg))
        arg++;
    const char *cmd = line;
    char err[512];
    int x, y;
    if (!strcasecmp(cmd, "START")) {
        long long size;
        if (parse_count(arg, 1000, &size) < 0)
            say(out, "ERROR START: expected a board size, got \"%.40s\"", arg);
        else
            pb_start(pb, (int)size, (int)size, out);
    } else if (!strcasecmp(cmd, "RECTSTART")) {
        if (parse_xy(arg, &x, &y, NULL) < 0)
            say(out, "ERROR RECTSTART: expected width,height, got \"%.40s\"", arg);
        else
            pb_start(pb, x, y, out);
    } else if (!strcasecmp(cmd, "RESTART")) {
        if (pb_need_game(pb, out, "RESTART")) {
            if (pb_fresh(pb, err, sizeof err) < 0)
                say(out, "ERROR %s", err);
            else
                say(out, "OK");
        }
    } else if (!strcasecmp(cmd, "BEGIN")) {
        if (!pb_need_game(pb, out, "BEGIN"))
            goto out;
        if (pb->nmoves > 0)
            say(out, "ERROR BEGIN: the board is not empty (send RESTART first)");
        else
            pb_move(pb, out);
    } else if (!strcasecmp(cmd, "TURN")) {
        if (!pb_need_game(pb, out, "TURN"))
            goto out;
        if (parse_xy(arg, &x, &y, NULL) < 0) {
            say(out, "ERROR TURN: expected x,y, got \"%.40s\"", arg);
            goto out;
        }
        int a = xy_action(pb, x, y, err, sizeof err);
        if (a < 0) {
            say(out, "ERROR TURN: %s", err);
            goto out;
        }
        game_state *cur = pb_state(pb, pb->nmoves);
        if (game_terminal(pb->g, cur)) {
            say(out, "ERROR TURN %d,%d: the game is already over", x, y);
            goto out;
        }
        char why[160];
        const char *no = game_why_illegal(pb->g, cur, a, why, sizeof why);
        if (no) {
            say(out, "ERROR TURN %d,%d: %s", x, y, no);
            goto out;
        }
        pb_play(pb, a);
        pb_move(pb, out);
    } else if (!strcasecmp(cmd, "BOARD")) {
        /* Without a game the stone lines up to DONE are still swallowed (they would
         * read as unknown commands); DONE answers the error. */
        pb->in_board = true;
        pb->swap2 = false;
        pb->nboard = 0;
        pb->board_err[0] = 0;
        if (!pb->started)
            snprintf(pb->board_err, sizeof pb->board_err, "BOARD: no game yet (send START first)");
    } else if (!strcasecmp(cmd, "SWAP2BOARD")) {
        pb->in_board = true;
        pb->swap2 = true;
        pb->nboard = 0;
        pb->board_err[0] = 0;
        if (!pb->started)
            snprintf(pb->board_err, sizeof pb->board_err, "SWAP2BOARD: no game yet (send START first)");
    } else if (!strcasecmp(cmd, "TAKEBACK")) {
        if (!pb_need_game(pb, out, "TAKEBACK"))
            goto out;
        if (parse_xy(arg, &x, &y, NULL) < 0) {
            say(out, "ERROR TAKEBACK: expected x,y, got \"%.40s\"", arg);
            goto out;
        }
        int a = xy_action(pb, x, y, err, sizeof err);
        if (a < 0)
            say(out, "ERROR TAKEBACK: %s", err);
        else if (pb->nmoves == 0 || pb->moves[pb->nmoves - 1] != a)
            say(out, "ERROR TAKEBACK %d,%d: not the last move played", x, y);
        else {
            pb->nmoves--;
            say(out, "OK");
        }
    } else if (!strcasecmp(cmd, "INFO")) {
        pb_info(pb, arg, out);
    } else if (!strcasecmp(cmd, "ABOUT")) {
        say(out, "name=\"gridzero\", version=\"%s\", author=\"the gridzero developers\", "
                 "country=\"-\", www=\"-\", engine=\"%s\"",
            GZ_VERSION, pb->spec);
    } else if (!strcasecmp(cmd, "END")) {
        rc = 1;
    } else {
        say(out, "UNKNOWN command \"%.40s\"", cmd);
    }
out:
    if (pb->note[0]) { /* owed by this line's new game: said at once, after its answer */
        say(out, "%s", pb->note);
        pb->note[0] = 0;
    }
    if (line != stack)
        free(line);
    return rc;
}

pbrain *pbrain_new(const gz_config *cfg, const brain_opts *bo, bool debug, char *err,
                   size_t errlen)
{
    if (strcmp(cfg->game.name, "mnk") != 0) {
        snprintf(err, errlen, "the Gomocup protocol plays m,n,k games (Gomoku); the config's game is %s",
                 cfg->game.name);
        return NULL;
    }
    pbrain *pb = calloc(1, sizeof *pb);
    if (!pb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pb->cfg = *cfg;
    pb->bo = *bo;
    snprintf(pb->spec, sizeof pb->spec, "%s", bo->spec && *bo->spec ? bo->spec : "mcts");
    pb->bo.spec = pb->spec;
    pb->debug = debug;
    pb->turn_ms = PB_DEFAULT_TURN_MS;
    pb->match_ms = 0;
    pb->left_ms = -1;
    rng_seed(&pb->r, rng_derive(cfg->seed, 0x7377617032ULL));
    /* Check the engine now (bad spec, missing model file) on the config's board, so
     * that the command fails at once instead of at START. */
    char why[512];
    if (pb_new_game(pb, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s", why);
        pbrain_free(pb);
        return NULL;
    }
    return pb;
}

void pbrain_set_fallback(pbrain *pb, const char *spec)
{
    snprintf(pb->fallback, sizeof pb->fallback, "%s", spec ? spec : "");
}

void pbrain_free(pbrain *pb)
{
    if (!pb)
        return;
    brain_free(pb->b);
    game_free(pb->g);
    free(pb->hist);
    free(pb);
}
