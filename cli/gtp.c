/* gtp.c — the Go Text Protocol for gridzero's games (see gtp.h). */
#include "gtp.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifndef GZ_VERSION
#define GZ_VERSION "unknown"
#endif

enum { GTP_MAX_ARGS = 8 };

static const char *const gtp_commands[] = {
    "protocol_version", "name",      "version",       "known_command", "list_commands",
    "boardsize",        "clear_board", "komi",        "play",          "genmove",
    "undo",             "showboard", "quit",          "time_settings", "time_left",
    "gridzero-analyze", "gridzero-rule", NULL,
};

struct gtp {
    /* mutated */
    gz_config cfg;        /* game size follows boardsize */
    brain_opts bo;        /* bo.spec points at spec */
    char spec[PLAYER_NAME_LEN];
    game *g;              /* owned */
    brain *b;             /* owned */
    unsigned char *hist;  /* (max_game_length + 1) states */
    int nmoves;
    /* clock (seconds) */
    bool timed;           /* time_settings gave a limit */
    double main_s, byo_s;
    int byo_stones;
    double left_s[GAME_MAX_PLAYERS];
    int left_stones[GAME_MAX_PLAYERS]; /* > 0: in byo-yomi with this many moves to make */
};

static game_state *gtp_state(gtp *s, int i)
{
    return (game_state *)(s->hist + (size_t)i * s->g->state_size);
}

/* Writes "=id body" or "?id body" and the empty line that ends a GTP answer. Empty
 * lines inside body are dropped (they would end the answer early). */
static void reply(FILE *out, const char *id, bool ok, const char *body)
{
    fprintf(out, "%c%s", ok ? '=' : '?', id);
    if (body && *body) {
        if (*body != '\n')
            fputc(' ', out);
        bool at_line_start = false;
        for (const char *p = body; *p; p++) {
            if (*p == '\n' && at_line_start)
                continue;
            at_line_start = *p == '\n';
            fputc(*p, out);
        }
        if (!at_line_start)
            fputc('\n', out);
    } else {
        fputc('\n', out);
    }
    fputc('\n', out);
    fflush(out);
}

static void replyf(FILE *out, const char *id, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void replyf(FILE *out, const char *id, bool ok, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    reply(out, id, ok, buf);
}

/* Makes the game for cfg and the brain for it; on failure everything stays as it was. */
static int gtp_new_game(gtp *s, const gz_config *cfg, char *err, size_t errlen)
{
    char why[512];
    game *g = game_new(&cfg->game, why, sizeof why);
    if (!g) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (g->players < 2 || g->max_chance > 0) {
        /* GTP is two or three players taking turns on a board; 2048 has one player and
         * tiles that spawn at random */
        snprintf(err, errlen, "game %s: GTP plays games of 2 or 3 players without chance "
                 "events; %s has %d player%s%s (play it with gridzero play or gridzero arena)",
                 g->name, g->name, g->players, g->players == 1 ? "" : "s",
                 g->max_chance > 0 ? " and random events" : "");
        game_free(g);
        return -1;
    }
    unsigned char *hist = malloc(g->state_size * (size_t)(g->max_game_length + 1));
    brain *b = hist ? brain_new(g, cfg, &s->bo, why, sizeof why) : NULL;
    if (!b) {
        snprintf(err, errlen, "%s", hist ? why : "out of memory");
        free(hist);
        game_free(g);
        return -1;
    }
    brain_free(s->b);
    game_free(s->g);
    free(s->hist);
    s->cfg = *cfg;
    s->g = g;
    s->b = b;
    s->hist = hist;
    s->nmoves = 0;
    game_init(g, gtp_state(s, 0), NULL);
    return 0;
}

static void gtp_clear(gtp *s)
{
    s->nmoves = 0;
    game_init(s->g, gtp_state(s, 0), NULL);
    brain_reset(s->b);
    for (int p = 0; p < GAME_MAX_PLAYERS; p++) {
        s->left_s[p] = s->main_s;
        s->left_stones[p] = 0;
    }
}

/* A color: b/black/w/white (two players), or 1..players. Returns the player or -1. */
static int parse_color(const gtp *s, const char *c)
{
    if (s->g->players == 2) {
        if (!strcasecmp(c, "b") || !strcasecmp(c, "black"))
            return 0;
        if (!strcasecmp(c, "w") || !strcasecmp(c, "white"))
            return 1;
    }
    if (c[0] >= '1' && c[0] < '1' + s->g->players && !c[1])
        return c[0] - '1';
    return -1;
}

static const char *color_name(const gtp *s, int p, char *buf, size_t len)
{
    if (s->g->players == 2)
        snprintf(buf, len, "%s", p == 0 ? "black" : "white");
    else
        snprintf(buf, len, "color %d", p + 1);
    return buf;
}

static int color_error(const gtp *s, char *err, size_t errlen, const char *c)
{
    if (s->g->players == 2)
        snprintf(err, errlen, "syntax error: invalid color \"%.20s\" (b, black, w, white, 1 or 2)", c);
    else
        snprintf(err, errlen, "syntax error: invalid color \"%.20s\" (1, 2 or 3)", c);
    return -1;
}

/* Checks that color p may move now. Returns 0, or -1 with the GTP message. */
static int check_turn(gtp *s, int p, char *err, size_t errlen)
{
    const game_state *cur = gtp_state(s, s->nmoves);
    if (game_terminal(s->g, cur)) {
        snprintf(err, errlen, "illegal move: the game is over");
        return -1;
    }
    int who = game_current_player(s->g, cur);
    if (who != p) {
        char a[16], b[16];
        snprintf(err, errlen, "illegal move: %s is to move, not %s (moves out of turn are not allowed)",
                 color_name(s, who, a, sizeof a), color_name(s, p, b, sizeof b));
        return -1;
    }
    return 0;
}

static void gtp_play_action(gtp *s, int a)
{
    game_state *cur = gtp_state(s, s->nmoves), *next = gtp_state(s, s->nmoves + 1);
    game_copy(s->g, next, cur);
    int rc = game_play(s->g, next, a);
    (void)rc;
    brain_notify(s->b, cur, a);
    s->nmoves++;
}

/* Estimated moves color p still has to make. */
static int moves_left(gtp *s)
{
    const game_state *cur = gtp_state(s, s->nmoves);
    int ply = s->g->ops->ply(s->g, cur);
    if (!strcmp(s->g->name, "sanling")) {
        int left = (s->g->max_game_length - ply + s->g->players - 1) / s->g->players;
        return left > 1 ? left : 1;
    }
    int est = (s->g->actions - ply) / 2;
    return est < 8 ? 8 : est > 30 ? 30 : est;
}

static double gtp_budget(gtp *s, int p)
{
    if (!s->timed)
        return -1;
    double left = s->left_s[p];
    if (left < 0)
        left = 0;
    if (s->left_stones[p] > 0)
        return brain_budget(left / s->left_stones[p], -1, 1);
    double per_byo = s->byo_stones > 0 ? s->byo_s / s->byo_stones : 0;
    double cap = left + per_byo, share = left / moves_left(s) + per_byo;
    return brain_budget(share < cap ? share : cap, -1, 1);
}

/* Charges seconds of thinking to p's clock (the controller's time_left corrects it). */
static void gtp_charge(gtp *s, int p, double seconds)
{
    if (!s->timed)
        return;
    s->left_s[p] -= seconds;
    if (s->left_stones[p] > 0) {
        if (--s->left_stones[p] == 0) {
            s->left_s[p] = s->byo_s;
            s->left_stones[p] = s->byo_stones;
        }
    } else if (s->left_s[p] <= 0 && s->byo_stones > 0) {
        s->left_s[p] = s->byo_s;
        s->left_stones[p] = s->byo_stones;
    }
}

static bool parse_double(const char *str, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(str, &end);
    if (errno || end == str || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_int(const char *str, int lo, int hi, int *out)
{
    if (!*str)
        return false;
    char *end;
    errno = 0;
    long v = strtol(str, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

static void cmd_boardsize(gtp *s, const char *id, int argc, char **argv, FILE *out)
{
    int n;
    if (argc != 1 || !parse_int(argv[0], 1, 1000, &n)) {
        reply(out, id, false, "syntax error: expected boardsize N");
        return;
    }
    gz_config c = s->cfg;
    if (!strcmp(c.game.name, "mnk")) {
        if (n < c.game.k || n > 25) {
            replyf(out, id, false, "unacceptable size (%d in a row: %d..25)", c.game.k, c.game.k);
            return;
        }
        c.game.rows = c.game.cols = n;
    } else if (!strcmp(c.game.name, "sanling")) {
        if (n < 5 || n > GAME_MAX_SIDE) {
            replyf(out, id, false, "unacceptable size (sanling: 5..%d)", GAME_MAX_SIDE);
            return;
        }
        c.game.size = n; /* game.moves stays: a board too small for it is refused below */
    } else {
        reply(out, id, false, "unacceptable size (this game has a fixed board)");
        return;
    }
    char err[512], src[48];
    snprintf(src, sizeof src, "boardsize %d", n);
    if (cfg_check(&c, src, err, sizeof err) < 0) {
        replyf(out, id, false, "unacceptable size (%s)", err);
        return;
    }
    if (s->g->rows == n && s->g->cols == n && !memcmp(&c.game, &s->cfg.game, sizeof c.game)) {
        gtp_clear(s);
    } else if (gtp_new_game(s, &c, err, sizeof err) < 0) {
        replyf(out, id, false, "unacceptable size (%s)", err);
        return;
    } else {
        gtp_clear(s);
    }
    reply(out, id, true, NULL);
}

static void cmd_play(gtp *s, const char *id, int argc, char **argv, FILE *out)
{
    char err[512];
    if (argc != 2) {
        reply(out, id, false, "syntax error: expected play COLOR MOVE");
        return;
    }
    int p = parse_color(s, argv[0]);
    if (p < 0) {
        color_error(s, err, sizeof err, argv[0]);
        reply(out, id, false, err);
        return;
    }
    if (!strcasecmp(argv[1], "pass") || !strcasecmp(argv[1], "resign")) {
        replyf(out, id, false, "illegal move: %s is not a move in %s (these games have no passing)",
               argv[1], !strcmp(s->g->name, "mnk") ? "k-in-a-row games" : s->g->name);
        return;
    }
    int a;
    char why[256];
    if (s->g->ops->parse_move(s->g, argv[1], &a, why, sizeof why) < 0) {
        replyf(out, id, false, "illegal move: %s", why);
        return;
    }
    if (check_turn(s, p, err, sizeof err) < 0) {
        reply(out, id, false, err);
        return;
    }
    const char *no = game_why_illegal(s->g, gtp_state(s, s->nmoves), a, why, sizeof why);
    if (no) {
        char mv[32];
        s->g->ops->format_move(s->g, a, mv, sizeof mv);
        if (!strcmp(s->g->name, "sanling"))
            replyf(out, id, false, "illegal move: %s is not free or not next to a stone", mv);
        else
            replyf(out, id, false, "illegal move: %s: %s", mv, no);
        return;
    }
    gtp_play_action(s, a);
    reply(out, id, true, NULL);
}

static void cmd_genmove(gtp *s, const char *id, int argc, char **argv, FILE *out, bool analyze)
{
    char err[512];
    int p, top = 10;
    if (analyze) {
        if (argc > 1 || (argc == 1 && !parse_int(argv[0], 1, BRAIN_TOP, &top))) {
            replyf(out, id, false, "syntax error: expected gridzero-analyze [N] with N 1..%d", BRAIN_TOP);
            return;
        }
        if (!brain_searches(s->b)) {
            replyf(out, id, false, "gridzero-analyze needs a searching engine (-m MODEL or --player mcts[:N]), not %s",
                   brain_name(s->b));
            return;
        }
        const game_state *cur = gtp_state(s, s->nmoves);
        if (game_terminal(s->g, cur)) {
            reply(out, id, false, "the game is over");
            return;
        }
        p = game_current_player(s->g, cur);
    } else {
        if (argc != 1) {
            reply(out, id, false, "syntax error: expected genmove COLOR");
            return;
        }
        p = parse_color(s, argv[0]);
        if (p < 0) {
            color_error(s, err, sizeof err, argv[0]);
            reply(out, id, false, err);
            return;
        }
        if (check_turn(s, p, err, sizeof err) < 0) {
            reply(out, id, false, err);
            return;
        }
    }
    brain_move m;
    int a = brain_choose(s->b, gtp_state(s, s->nmoves), gtp_budget(s, p), NULL, &m, err, sizeof err);
    if (a < 0) {
        replyf(out, id, false, "engine failure: %s", err);
        return;
    }
    gtp_charge(s, p, m.seconds);
    char mv[32];
    if (!analyze) {
        uint8_t mask[GAME_MAX_ACTIONS];
        game_legal(s->g, gtp_state(s, s->nmoves), mask);
        if (a >= s->g->actions || !mask[a]) {
            replyf(out, id, false, "engine failure: illegal move chosen (action %d)", a);
            return;
        }
        gtp_play_action(s, a);
        reply(out, id, true, s->g->ops->format_move(s->g, a, mv, sizeof mv));
        return;
    }
    char body[BRAIN_TOP * 96];
    size_t n = 0;
    for (int i = 0; i < m.ntop && i < top; i++) {
        if (i > 0 && m.top[i].visits == 0)
            break;
        n += (size_t)snprintf(body + n, sizeof body - n, "%s%s visits %d prior %.4f value %.4f", i ? "\n" : "",
                              s->g->ops->format_move(s->g, m.top[i].action, mv, sizeof mv), m.top[i].visits,
                              (double)m.top[i].prior, (double)m.top[i].value);
        if (n >= sizeof body)
            break;
    }
    reply(out, id, true, body);
}

/* gridzero-rule [RULE]: the m,n,k rule (freestyle, exact, renju, caro); setting it
 * clears the board (like boardsize). Without an argument: the rule in play. */
static void cmd_rule(gtp *s, const char *id, int argc, char **argv, FILE *out)
{
    if (strcmp(s->cfg.game.name, "mnk")) {
        replyf(out, id, false, "gridzero-rule: game %s has no rules to choose", s->g->name);
        return;
    }
    if (argc == 0) {
        reply(out, id, true, s->cfg.game.rule);
        return;
    }
    int r = argc == 1 ? cfg_rule_parse(argv[0]) : -1;
    if (r < 0) {
        reply(out, id, false, "syntax error: expected gridzero-rule [freestyle|exact|renju|caro]");
        return;
    }
    gz_config c = s->cfg;
    cfg_game_set_rule(&c.game, (cfg_rule)r);
    char err[512], src[48];
    snprintf(src, sizeof src, "gridzero-rule %s", argv[0]);
    if (cfg_check(&c, src, err, sizeof err) < 0 || gtp_new_game(s, &c, err, sizeof err) < 0) {
        replyf(out, id, false, "unacceptable rule (%s)", err);
        return;
    }
    gtp_clear(s);
    reply(out, id, true, NULL);
}

static void cmd_showboard(gtp *s, const char *id, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        reply(out, id, false, "out of memory");
        return;
    }
    fputc('\n', f);
    s->g->ops->render(s->g, gtp_state(s, s->nmoves), f);
    fclose(f);
    reply(out, id, true, buf);
    free(buf);
}

static void cmd_time_settings(gtp *s, const char *id, int argc, char **argv, FILE *out)
{
    double main_s, byo_s;
    int stones;
    if (argc != 3 || !parse_double(argv[0], &main_s) || !parse_double(argv[1], &byo_s) ||
        !parse_int(argv[2], 0, 1000000, &stones) || main_s < 0 || byo_s < 0) {
        reply(out, id, false, "syntax error: expected time_settings MAIN BYO_YOMI STONES (seconds, >= 0)");
        return;
    }
    /* GTP: byo-yomi time with no stones means no time limit. */
    s->timed = !(byo_s > 0 && stones == 0);
    s->main_s = main_s;
    s->byo_s = byo_s;
    s->byo_stones = stones;
    for (int p = 0; p < GAME_MAX_PLAYERS; p++) {
        s->left_s[p] = main_s;
        s->left_stones[p] = 0;
    }
    reply(out, id, true, NULL);
}

static void cmd_time_left(gtp *s, const char *id, int argc, char **argv, FILE *out)
{
    double t;
    int stones, p = argc == 3 ? parse_color(s, argv[0]) : -1;
    if (argc != 3 || !parse_double(argv[1], &t) || !parse_int(argv[2], 0, 1000000, &stones)) {
        reply(out, id, false, "syntax error: expected time_left COLOR SECONDS STONES");
        return;
    }
    if (p < 0) {
        char err[128];
        color_error(s, err, sizeof err, argv[0]);
        reply(out, id, false, err);
        return;
    }
    s->left_s[p] = t;
    s->left_stones[p] = stones;
    reply(out, id, true, NULL);
}

int gtp_line(gtp *s, const char *raw, FILE *out)
{
    /* GTP preprocessing: control characters other than HT and LF removed, HT -> space,
     * everything from '#' on dropped. */
    size_t len = strlen(raw);
    char *line = malloc(len + 1);
    if (!line) {
        reply(out, "", false, "out of memory");
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < len && raw[i] != '#'; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == '\t' || c == '\n')
            line[n++] = ' ';
        else if (c >= 32 && c != 127)
            line[n++] = (char)c;
    }
    line[n] = 0;
    char *argv[GTP_MAX_ARGS + 2];
    int argc = 0;
    bool too_many = false;
    for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " ")) {
        if (argc < GTP_MAX_ARGS + 2)
            argv[argc++] = tok;
        else
            too_many = true;
    }
    int rc = 0;
    if (argc == 0)
        goto out;
    char id[24] = "";
    if (isdigit((unsigned char)argv[0][0])) {
        bool digits = strspn(argv[0], "0123456789") == strlen(argv[0]);
        if (digits && strlen(argv[0]) < sizeof id) {
            snprintf(id, sizeof id, "%s", argv[0]);
            for (int i = 1; i < argc; i++)
                argv[i - 1] = argv[i];
            argc--;
            if (argc == 0) {
                reply(out, id, false, "syntax error: an id without a command");
                goto out;
            }
        }
    }
    const char *cmd = argv[0];
    char **args = argv + 1;
    int nargs = argc - 1;
    if (too_many || nargs > GTP_MAX_ARGS) {
        reply(out, id, false, "syntax error: too many arguments");
        goto out;
    }
    if (!strcmp(cmd, "protocol_version")) {
        reply(out, id, true, "2");
    } else if (!strcmp(cmd, "name")) {
        reply(out, id, true, "gridzero");
    } else if (!strcmp(cmd, "version")) {
        reply(out, id, true, GZ_VERSION);
    } else if (!strcmp(cmd, "known_command")) {
        bool known = false;
        for (int i = 0; nargs == 1 && gtp_commands[i]; i++)
            known |= !strcmp(args[0], gtp_commands[i]);
        reply(out, id, true, known ? "true" : "false");
    } else if (!strcmp(cmd, "list_commands")) {
        char body[512];
        size_t k = 0;
        for (int i = 0; gtp_commands[i]; i++)
            k += (size_t)snprintf(body + k, sizeof body - k, "%s%s", i ? "\n" : "", gtp_commands[i]);
        reply(out, id, true, body);
    } else if (!strcmp(cmd, "quit")) {
        reply(out, id, true, NULL);
        rc = 1;
    } else if (!strcmp(cmd, "boardsize")) {
        cmd_boardsize(s, id, nargs, args, out);
    } else if (!strcmp(cmd, "clear_board")) {
        gtp_clear(s);
        reply(out, id, true, NULL);
    } else if (!strcmp(cmd, "komi")) {
        double k;
        if (nargs != 1 || !parse_double(args[0], &k))
            reply(out, id, false, "syntax error: expected komi FLOAT");
        else
            reply(out, id, true, NULL); /* no komi in these games: accepted, ignored */
    } else if (!strcmp(cmd, "play")) {
        cmd_play(s, id, nargs, args, out);
    } else if (!strcmp(cmd, "genmove")) {
        cmd_genmove(s, id, nargs, args, out, false);
    } else if (!strcmp(cmd, "gridzero-analyze")) {
        cmd_genmove(s, id, nargs, args, out, true);
    } else if (!strcmp(cmd, "undo")) {
        if (s->nmoves == 0) {
            reply(out, id, false, "cannot undo");
        } else {
            s->nmoves--;
            reply(out, id, true, NULL);
        }
    } else if (!strcmp(cmd, "gridzero-rule")) {
        cmd_rule(s, id, nargs, args, out);
    } else if (!strcmp(cmd, "showboard")) {
        cmd_showboard(s, id, out);
    } else if (!strcmp(cmd, "time_settings")) {
        cmd_time_settings(s, id, nargs, args, out);
    } else if (!strcmp(cmd, "time_left")) {
        cmd_time_left(s, id, nargs, args, out);
    } else {
        reply(out, id, false, "unknown command");
    }
out:
    free(line);
    return rc;
}

gtp *gtp_new(const gz_config *cfg, const brain_opts *bo, char *err, size_t errlen)
{
    gtp *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->bo = *bo;
    snprintf(s->spec, sizeof s->spec, "%s", bo->spec && *bo->spec ? bo->spec : "mcts");
    s->bo.spec = s->spec;
    if (gtp_new_game(s, cfg, err, errlen) < 0) {
        free(s);
        return NULL;
    }
    gtp_clear(s);
    return s;
}

void gtp_free(gtp *s)
{
    if (!s)
        return;
    brain_free(s->b);
    game_free(s->g);
    free(s->hist);
    free(s);
}
