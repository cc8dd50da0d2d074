/* Protocols: scripted Gomocup (pbrain) and GTP sessions through the line modules
 * (cli/pbrain.c, cli/gtp.c over nn/brain.c, whose own tests are in test_brain.c),
 * checked line by line; a short session of each through the binary (GZ_BIN); a whole
 * 15x15 Gomoku game between two `gridzero pbrain` processes driven over pipes, its
 * result checked on the board; and a short random-input smoke run (the long one is
 * test_protocols_fuzz, slow).
 * Moves that a search could vary are checked for format and legality only; exact
 * moves come from alphabeta (deterministic) or fixed-seed searches without a clock. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/gtp.h"
#include "cli/pbrain.h"
#include "model_util.h"
#include "engine/config.h"
#include "engine/game.h"
#include "engine/rng.h"
#include "nn/brain.h"
#include "nn/checkpoint.h"
#include "nn/params.h"

/* Wall-clock slack for time checks on a loaded machine (other jobs share the cores). */
#define SLACK 0.25

static gz_config gomoku_cfg(void)
{
    gz_config c;
    char err[512];
    const char *json = "{\"seed\": 7, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5},"
                       " \"mcts\": {\"simulations\": 50, \"batch\": 4}}";
    ck_assert_msg(cfg_parse(&c, json, "test", err, sizeof err) == 0, "%s", err);
    return c;
}

static gz_config sanling_cfg(int players)
{
    gz_config c;
    char err[512], json[256];
    snprintf(json, sizeof json,
             "{\"seed\": 3, \"game\": {\"name\": \"sanling\", \"size\": 7, \"players\": %d, \"moves\": 9},"
             " \"mcts\": {\"simulations\": 30, \"batch\": 4}}",
             players);
    ck_assert_msg(cfg_parse(&c, json, "test", err, sizeof err) == 0, "%s", err);
    return c;
}

/* Everything the session writes for one input line (malloc'd). */
static char *pb(pbrain *s, const char *line, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f != NULL);
    int r = pbrain_line(s, line, f);
    if (rc)
        *rc = r;
    fclose(f);
    char *res = strdup(buf); /* a copy: GCC loses track of open_memstream's buffer */
    free(buf);
    ck_assert(res != NULL);
    return res;
}

#define PB_EXPECT(s, line, want)                                                                  \
    do {                                                                                          \
        char *got_ = pb(s, line, NULL);                                                           \
        ck_assert_msg(!strcmp(got_, want), "pbrain \"%s\": got \"%s\", want \"%s\"", line, got_, want); \
        free(got_);                                                                               \
    } while (0)

#define PB_PREFIX(s, line, prefix)                                                                \
    do {                                                                                          \
        char *got_ = pb(s, line, NULL);                                                           \
        ck_assert_msg(!strncmp(got_, prefix, strlen(prefix)) && strchr(got_, '\n') == got_ + strlen(got_) - 1, \
                      "pbrain \"%s\": got \"%s\", want one line starting \"%s\"", line, got_, prefix); \
        free(got_);                                                                               \
    } while (0)

/* Reads "x,y\n" (one line); returns 1 and the coordinates or 0. */
static int read_xy(const char *s, int *x, int *y)
{
    int n = 0;
    return sscanf(s, "%d,%d\n%n", x, y, &n) == 2 && n > 0 && s[n] == 0;
}

START_TEST(pbrain_session)
{
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "alphabeta:1"};
    char err[512];
    pbrain *s = pbrain_new(&c, &bo, false, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_PREFIX(s, "ABOUT", "name=\"gridzero\", version=");
    PB_PREFIX(s, "BEGIN", "ERROR BEGIN: no game yet");
    PB_PREFIX(s, "TURN 7,7", "ERROR TURN: no game yet");
    /* BOARD without START: the stone lines are swallowed, DONE answers the error. */
    PB_EXPECT(s, "BOARD", "");
    PB_EXPECT(s, "7,7,1", "");
    PB_PREFIX(s, "DONE", "ERROR BOARD: no game yet");
    PB_PREFIX(s, "START 4", "ERROR unsupported size 4x4");
    PB_PREFIX(s, "START 26", "ERROR unsupported size 26x26");
    PB_PREFIX(s, "START x", "ERROR START: expected a board size");
    PB_PREFIX(s, "START", "ERROR START");
    PB_EXPECT(s, "START 15\r\n", "OK\n");
    PB_EXPECT(s, "INFO timeout_turn 2000", "");
    PB_EXPECT(s, "INFO timeout_match 100000", "");
    PB_EXPECT(s, "INFO time_left 100000", "");
    PB_EXPECT(s, "INFO max_memory 83886080", "");
    PB_EXPECT(s, "INFO game_type 1", "");
    PB_EXPECT(s, "INFO rule 0", "");
    PB_EXPECT(s, "INFO folder /tmp", "");
    PB_PREFIX(s, "INFO timeout_turn soon", "ERROR INFO timeout_turn: expected a whole number");
    PB_PREFIX(s, "INFO rule 12", "ERROR INFO rule 12: renju (4) and caro (8) at once");
    PB_PREFIX(s, "INFO rule 2", "ERROR INFO rule 2: bit 2 (continuous game");
    PB_PREFIX(s, "INFO rule 6", "ERROR INFO rule 6: bit 2 (continuous game");
    PB_PREFIX(s, "INFO rule 16", "ERROR INFO rule 16: unknown bits");
    /* alphabeta opens in the centre. */
    PB_EXPECT(s, "BEGIN", "7,7\n");
    PB_PREFIX(s, "BEGIN", "ERROR BEGIN: the board is not empty");
    char *out = pb(s, "TURN 8,8", NULL);
    int x, y;
    ck_assert_msg(read_xy(out, &x, &y) && x >= 0 && x < 15 && y >= 0 && y < 15 &&
                      !(x == 7 && y == 7) && !(x == 8 && y == 8),
                  "%s", out);
    free(out);
    PB_PREFIX(s, "TURN 8,8", "ERROR TURN 8,8: the point is occupied");
    PB_PREFIX(s, "TURN 7,7", "ERROR TURN 7,7: the point is occupied");
    PB_PREFIX(s, "TURN 15,0", "ERROR TURN: 15,0 is off the 15x15 board");
    PB_PREFIX(s, "TURN -1,3", "ERROR TURN: expected x,y");
    PB_PREFIX(s, "TURN 3", "ERROR TURN: expected x,y");
    PB_PREFIX(s, "TURN 3,4,5", "ERROR TURN: expected x,y");
    PB_PREFIX(s, "TURN", "ERROR TURN: expected x,y");
    PB_PREFIX(s, "FROBNICATE 1", "UNKNOWN command \"FROBNICATE\"");
    /* TAKEBACK: only the last move. */
    PB_PREFIX(s, "TAKEBACK 8,8", "ERROR TAKEBACK 8,8: not the last move");
    char tb[32];
    snprintf(tb, sizeof tb, "TAKEBACK %d,%d", x, y);
    PB_EXPECT(s, tb, "OK\n");
    PB_EXPECT(s, "TAKEBACK 8,8", "OK\n");
    PB_EXPECT(s, "TAKEBACK 7,7", "OK\n");
    PB_PREFIX(s, "TAKEBACK 7,7", "ERROR TAKEBACK 7,7: not the last move");
    PB_EXPECT(s, "BEGIN", "7,7\n");

    /* RESTART, then BOARD: own four in a row open at both ends (we are black: 4 own,
     * 4 opponent's) -> alphabeta completes the five. */
    PB_EXPECT(s, "RESTART", "OK\n");
    const char *stones[] = {"3,7,1", "3,0,2", "4,7,1", "5,0,2", "5,7,1", "7,0,2", "6,7,1", "9,0,2"};
    PB_EXPECT(s, "BOARD", "");
    for (int i = 0; i < 8; i++)
        PB_EXPECT(s, stones[i], "");
    out = pb(s, "DONE", NULL);
    ck_assert_msg(!strcmp(out, "2,7\n") || !strcmp(out, "7,7\n"), "%s", out);
    free(out);
    /* As white (3 own, 4 opponent's): the opponent has an open three in column 7
     * (7,7 7,8 7,9) -> alphabeta:1 blocks at one of its ends. */
    PB_EXPECT(s, "RESTART", "OK\n");
    const char *w[] = {"7,7,2", "0,0,1", "7,8,2", "0,2,1", "7,9,2", "0,4,1", "3,3,2"};
    PB_EXPECT(s, "BOARD", "");
    for (int i = 0; i < 7; i++)
        PB_EXPECT(s, w[i], "");
    out = pb(s, "DONE", NULL);
    ck_assert_msg(!strcmp(out, "7,6\n") || !strcmp(out, "7,10\n"), "%s", out);
    free(out);

    /* BOARD errors: each answered once at DONE; the session goes on. */
    const char *bad[][3] = {
        {"7,7,1", "8,8,1", "ERROR BOARD: 2 own and 0 opponent's"},
        {"7,7,1", "7,7,2", "ERROR BOARD: 7,7 is given twice"},
        {"7,7,3", "8,8,2", "ERROR BOARD line \"7,7,3\": field 3"},
        {"7,7,4", "8,8,2", "ERROR BOARD line \"7,7,4\": field must be"},
        {"7,7", "8,8,2", "ERROR BOARD line \"7,7\": expected x,y,field"},
        {"77,7,1", "8,8,2", "ERROR BOARD: 77,7 is off the 15x15 board"},
        {"a,b,c", "8,8,2", "ERROR BOARD line \"a,b,c\": expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PB_EXPECT(s, "RESTART", "OK\n");
        PB_EXPECT(s, "BOARD", "");
        PB_EXPECT(s, bad[i][0], "");
        PB_EXPECT(s, bad[i][1], "");
        PB_PREFIX(s, "DONE", bad[i][2]);
    }
    /* A decided board: black has five. */
    PB_EXPECT(s, "RESTART", "OK\n");
    PB_EXPECT(s, "BOARD", "");
    for (int i = 0; i < 5; i++) {
        char l[32];
        snprintf(l, sizeof l, "%d,5,1", i);
        PB_EXPECT(s, l, "");
        snprintf(l, sizeof l, "%d,9,2", i);
        PB_EXPECT(s, l, "");
    }
    PB_PREFIX(s, "DONE", "ERROR BOARD: the position is already decided");
    /* The rule: white (the opponent) has six in a row (its stones given in play order,
     * the sixth last). Freestyle: decided. Exact five (INFO rule 1, applied from the
     * next RESTART as stones are on the board): an overline does not win, play on. */
    for (int exact = 0; exact < 2; exact++) {
        PB_EXPECT(s, exact ? "INFO rule 1" : "INFO rule 0", "");
        PB_EXPECT(s, "RESTART", "OK\n");
        PB_EXPECT(s, "BOARD", "");
        const char *opp[] = {"0,7,2", "1,7,2", "2,7,2", "3,7,2", "5,7,2", "4,7,2"};
        for (int i = 0; i < 6; i++) {
            char l[32];
            snprintf(l, sizeof l, "%d,0,1", 2 * i);
            PB_EXPECT(s, l, "");
            PB_EXPECT(s, opp[i], "");
        }
        if (exact) {
            out = pb(s, "DONE", NULL);
            ck_assert_msg(read_xy(out, &x, &y), "%s", out);
            free(out);
        } else {
            PB_PREFIX(s, "DONE", "ERROR BOARD: the position is already decided");
        }
    }
    PB_EXPECT(s, "INFO rule 0", "");
    /* Other sizes, and RECTSTART. */
    PB_EXPECT(s, "START 20", "OK\n");
    PB_EXPECT(s, "BEGIN", "10,10\n");
    PB_EXPECT(s, "RECTSTART 9,6", "OK\n");
    out = pb(s, "TURN 8,5", NULL);
    ck_assert_msg(read_xy(out, &x, &y) && x < 9 && y < 6, "%s", out);
    free(out);
    PB_PREFIX(s, "RECTSTART 9", "ERROR RECTSTART: expected width,height");
    PB_PREFIX(s, "RECTSTART 3,30", "ERROR unsupported size 3x30");
    int rc;
    out = pb(s, "END", &rc);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(rc, 1);
    free(out);
    pbrain_free(s);

    /* The config must be an m,n,k game. */
    gz_config sc = sanling_cfg(3);
    ck_assert(pbrain_new(&sc, &bo, false, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "m,n,k"), "%s", err);
    /* A bad engine spec fails at once. */
    brain_opts badbo = {.spec = "alphabeta:q"};
    ck_assert(pbrain_new(&c, &badbo, false, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "alphabeta:q"), "%s", err);
    brain_opts nomodel = {.spec = "model:/nonexistent/model.h5"};
    ck_assert(pbrain_new(&c, &nomodel, false, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "/nonexistent/model.h5"), "%s", err);
}
END_TEST

/* Reads "x,y x,y ..." (one line) into xs/ys; returns how many, 0 when malformed. */
static int read_xys(const char *s, int *xs, int *ys, int max)
{
    int n = 0, used;
    while (n < max && sscanf(s, "%d,%d%n", &xs[n], &ys[n], &used) == 2) {
        n++;
        s += used;
        if (*s == ' ')
            s++;
        else
            break;
    }
    return *s == '\n' && !s[1] ? n : 0;
}

/* SWAP2BOARD: each stage's answer, with a plain player (deterministic: it stays white)
 * and with a search (any of the allowed answers, legal); bad stone counts are errors
 * and the session goes on. */
START_TEST(pbrain_swap2)
{
    gz_config c = gomoku_cfg();
    char err[512];
    const char *specs[] = {"alphabeta:1", "mcts:16"};
    for (int k = 0; k < 2; k++) {
        brain_opts bo = {.spec = specs[k]};
        pbrain *s = pbrain_new(&c, &bo, false, err, sizeof err);
        ck_assert_msg(s != NULL, "%s", err);
        PB_EXPECT(s, "SWAP2BOARD", "");
        PB_PREFIX(s, "DONE", "ERROR SWAP2BOARD: no game yet");
        PB_EXPECT(s, "START 15", "OK\n");
        PB_EXPECT(s, "INFO timeout_turn 300", "");
        /* the opener: three stones in the central 7x7, distinct */
        PB_EXPECT(s, "SWAP2BOARD", "");
        char *out = pb(s, "DONE", NULL);
        int xs[8], ys[8];
        ck_assert_msg(read_xys(out, xs, ys, 8) == 3, "%s: %s", specs[k], out);
        for (int i = 0; i < 3; i++) {
            ck_assert_msg(xs[i] >= 4 && xs[i] <= 10 && ys[i] >= 4 && ys[i] <= 10, "%s", out);
            for (int j = 0; j < i; j++)
                ck_assert(xs[i] != xs[j] || ys[i] != ys[j]);
        }
        free(out);
        /* the responder */
        const char *three[] = {"7,7", "8,6", "6,8"};
        PB_EXPECT(s, "SWAP2BOARD", "");
        for (int i = 0; i < 3; i++)
            PB_EXPECT(s, three[i], "");
        out = pb(s, "DONE", NULL);
        int n = read_xys(out, xs, ys, 8);
        if (k == 0)
            ck_assert_msg(n == 1, "a plain player stays white and plays: %s", out);
        else
            ck_assert_msg(!strcmp(out, "SWAP\n") || n == 1 || n == 2, "%s", out);
        for (int i = 0; i < n; i++)
            ck_assert_msg(!(xs[i] == 7 && ys[i] == 7) && !(xs[i] == 8 && ys[i] == 6) &&
                          !(xs[i] == 6 && ys[i] == 8), "%s", out);
        bool swapped = !strcmp(out, "SWAP\n");
        free(out);
        /* the game goes on from there: the opponent's move, the brain's answer */
        (void)swapped; /* either way the opponent moves next */
        out = pb(s, "TURN 0,14", NULL);
        int x, y;
        ck_assert_msg(read_xy(out, &x, &y), "%s", out);
        free(out);
        /* the opener's choice after five */
        const char *five[] = {"7,7", "8,6", "6,8", "7,6", "9,9"};
        PB_EXPECT(s, "SWAP2BOARD", "");
        for (int i = 0; i < 5; i++)
            PB_EXPECT(s, five[i], "");
        out = pb(s, "DONE", NULL);
        n = read_xys(out, xs, ys, 8);
        ck_assert_msg(n == 1 || (k == 1 && !strcmp(out, "SWAP\n")), "%s", out);
        free(out);
        /* bad input: stone counts, a repeated stone, a stray field; the session goes on */
        for (int bad = 1; bad <= 6; bad++) {
            if (bad == 3 || bad == 5)
                continue;
            PB_EXPECT(s, "SWAP2BOARD", "");
            for (int i = 0; i < bad; i++) {
                char l[16];
                snprintf(l, sizeof l, "%d,%d", i, i);
                PB_EXPECT(s, l, "");
            }
            char want[64];
            snprintf(want, sizeof want, "ERROR SWAP2BOARD: %d stones (expected 0, 3 or 5", bad);
            PB_PREFIX(s, "DONE", want);
        }
        PB_EXPECT(s, "SWAP2BOARD", "");
        PB_EXPECT(s, "7,7", "");
        PB_EXPECT(s, "7,7", "");
        PB_EXPECT(s, "8,8", "");
        PB_PREFIX(s, "DONE", "ERROR SWAP2BOARD: 7,7 is given twice");
        PB_EXPECT(s, "SWAP2BOARD", "");
        PB_EXPECT(s, "7,7,1", "");
        PB_PREFIX(s, "DONE", "ERROR SWAP2BOARD line \"7,7,1\": expected x,y");
        PB_EXPECT(s, "RESTART", "OK\n");
        out = pb(s, "BEGIN", NULL);
        ck_assert_msg(read_xy(out, &x, &y), "%s", out);
        free(out);
        pbrain_free(s);
    }
}
END_TEST

START_TEST(pbrain_search_clock)
{
    gz_config c = gomoku_cfg();
    /* Pure MCTS without a cap: the clock alone stops it. timeout_turn 500 ms ->
     * budget 0.4 s; the answer must come well within the turn limit. */
    brain_opts bo = {.spec = "mcts"};
    char err[512];
    pbrain *s = pbrain_new(&c, &bo, true, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_EXPECT(s, "START 15", "OK\n");
    PB_EXPECT(s, "INFO timeout_turn 500", "");
    double t0 = brain_now();
    char *out = pb(s, "BEGIN", NULL);
    double dt = brain_now() - t0;
    /* Bounds with slack for a loaded machine (the search reads the wall clock). */
    ck_assert_msg(dt < 0.5 + SLACK, "took %.3f s", dt);
    ck_assert_msg(dt > 0.1, "took only %.3f s of a 0.4 s budget", dt);
    ck_assert_msg(!strncmp(out, "DEBUG mcts: ", 12) && strstr(out, "simulations in"), "%s", out);
    int x, y;
    const char *mv = strchr(out, '\n') + 1;
    ck_assert_msg(read_xy(mv, &x, &y), "%s", out);
    free(out);
    /* The match clock: 1 s left -> at most 1/30 of it. */
    PB_EXPECT(s, "INFO timeout_match 60000", "");
    PB_EXPECT(s, "INFO time_left 1000", "");
    t0 = brain_now();
    out = pb(s, "TURN 0,0", NULL);
    dt = brain_now() - t0;
    ck_assert_msg(dt < 0.2 + SLACK, "took %.3f s", dt);
    free(out);
    /* timeout_turn 0: as fast as possible (one search step). */
    PB_EXPECT(s, "INFO timeout_turn 0", "");
    PB_EXPECT(s, "INFO timeout_match 0", "");
    out = pb(s, "TURN 0,1", NULL);
    ck_assert_msg(strstr(out, "budget 0.000 s"), "%s", out);
    free(out);
    pbrain_free(s);

    /* A simulation cap without a clock is reproducible: same seed, same moves. */
    char first[64] = "";
    for (int run = 0; run < 2; run++) {
        brain_opts capped = {.spec = "mcts", .sims = 300};
        s = pbrain_new(&c, &capped, false, err, sizeof err);
        ck_assert_msg(s != NULL, "%s", err);
        PB_EXPECT(s, "START 15", "OK\n");
        PB_EXPECT(s, "INFO timeout_turn 60000", "");
        char *a = pb(s, "BEGIN", NULL), *b = pb(s, "TURN 6,6", NULL);
        char both[64];
        snprintf(both, sizeof both, "%s%s", a, b);
        if (run == 0)
            snprintf(first, sizeof first, "%s", both);
        else
            ck_assert_str_eq(both, first);
        free(a);
        free(b);
        pbrain_free(s);
    }
}
END_TEST

static char *gt(gtp *s, const char *line, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f != NULL);
    int r = gtp_line(s, line, f);
    if (rc)
        *rc = r;
    fclose(f);
    char *res = strdup(buf); /* a copy: GCC loses track of open_memstream's buffer */
    free(buf);
    ck_assert(res != NULL);
    return res;
}

#define GTP_EXPECT(s, line, want)                                                                 \
    do {                                                                                          \
        char *got_ = gt(s, line, NULL);                                                           \
        ck_assert_msg(!strcmp(got_, want), "gtp \"%s\": got \"%s\", want \"%s\"", line, got_, want); \
        free(got_);                                                                               \
    } while (0)

#define GTP_PREFIX(s, line, prefix)                                                               \
    do {                                                                                          \
        char *got_ = gt(s, line, NULL);                                                           \
        size_t n_ = strlen(got_);                                                                 \
        ck_assert_msg(!strncmp(got_, prefix, strlen(prefix)) && n_ >= 2 && !strcmp(got_ + n_ - 2, "\n\n") && \
                          !strstr(got_, "\n\n\n") && strstr(got_, "\n\n") == got_ + n_ - 2,      \
                      "gtp \"%s\": got \"%s\", want an answer starting \"%s\"", line, got_, prefix); \
        free(got_);                                                                               \
    } while (0)

START_TEST(gtp_session_gomoku)
{
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "alphabeta:1"};
    char err[512];
    gtp *s = gtp_new(&c, &bo, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_EXPECT(s, "protocol_version", "= 2\n\n");
    GTP_EXPECT(s, "1 protocol_version", "=1 2\n\n");
    GTP_EXPECT(s, "2 name", "=2 gridzero\n\n");
    GTP_PREFIX(s, "version", "= ");
    GTP_EXPECT(s, "known_command genmove", "= true\n\n");
    GTP_EXPECT(s, "known_command gridzero-analyze", "= true\n\n");
    GTP_EXPECT(s, "known_command frobnicate", "= false\n\n");
    char *out = gt(s, "list_commands", NULL);
    ck_assert_msg(!strncmp(out, "= protocol_version\nname\n", 24) && strstr(out, "\ngridzero-analyze\n") &&
                      strstr(out, "\ngridzero-rule\n\n"),
                  "%s", out);
    free(out);
    GTP_EXPECT(s, "", "");
    GTP_EXPECT(s, "   \t ", "");
    GTP_EXPECT(s, "# a comment", "");
    GTP_EXPECT(s, "3 frobnicate", "?3 unknown command\n\n");
    GTP_EXPECT(s, "4 boardsize 9", "=4\n\n");
    GTP_EXPECT(s, "boardsize 4", "? unacceptable size (5 in a row: 5..25)\n\n");
    GTP_EXPECT(s, "boardsize 26", "? unacceptable size (5 in a row: 5..25)\n\n");
    GTP_EXPECT(s, "boardsize x", "? syntax error: expected boardsize N\n\n");
    GTP_EXPECT(s, "komi 6.5", "=\n\n");
    GTP_EXPECT(s, "komi lots", "? syntax error: expected komi FLOAT\n\n");
    GTP_EXPECT(s, "5 play b e5", "=5\n\n");
    GTP_EXPECT(s, "6 play b e6",
               "?6 illegal move: white is to move, not black (moves out of turn are not allowed)\n\n");
    GTP_EXPECT(s, "play w e5", "? illegal move: e5: the point is occupied\n\n");
    GTP_PREFIX(s, "play w pass", "? illegal move: pass is not a move");
    GTP_PREFIX(s, "play w resign", "? illegal move: resign is not a move");
    GTP_PREFIX(s, "play w j1", "? illegal move: move \"j1\": outside the board");
    GTP_PREFIX(s, "play w zz", "? illegal move: move \"zz\"");
    GTP_PREFIX(s, "play x e4", "? syntax error: invalid color \"x\"");
    GTP_PREFIX(s, "play w", "? syntax error: expected play COLOR MOVE");
    GTP_PREFIX(s, "genmove b", "? illegal move: white is to move, not black");
    /* The Gomocup notation is read too: 4,3 = e6 on a 9x9 board. */
    GTP_EXPECT(s, "PLAY w e6", "? unknown command\n\n"); /* commands are case-sensitive */
    GTP_EXPECT(s, "play WHITE 4,3", "=\n\n");
    GTP_EXPECT(s, "7 genmove b", "=7 d5\n\n");
    GTP_EXPECT(s, "showboard",
               "=\n    a b c d e f g h i\n  9 . . . . . . . . . 9\n  8 . . . . . . . . . 8\n"
               "  7 . . . . . . . . . 7\n  6 . . . . O . . . . 6\n  5 . . .(X)X . . . . 5\n"
               "  4 . . . . . . . . . 4\n  3 . . . . . . . . . 3\n  2 . . . . . . . . . 2\n"
               "  1 . . . . . . . . . 1\n    a b c d e f g h i\nO (white) to move\n\n");
    GTP_EXPECT(s, "undo", "=\n\n");
    GTP_EXPECT(s, "undo", "=\n\n");
    GTP_PREFIX(s, "showboard", "=\n");
    GTP_EXPECT(s, "undo", "=\n\n");
    GTP_EXPECT(s, "8 undo", "?8 cannot undo\n\n");
    /* alphabeta is not a search: no analysis. */
    GTP_PREFIX(s, "gridzero-analyze", "? gridzero-analyze needs a searching engine");
    /* Time settings and time_left are accepted (alphabeta:1 has no clock to use). */
    GTP_EXPECT(s, "time_settings 300 30 5", "=\n\n");
    GTP_EXPECT(s, "time_left b 120 0", "=\n\n");
    GTP_EXPECT(s, "time_left w 20 3", "=\n\n");
    GTP_PREFIX(s, "time_left x 20 3", "? syntax error: invalid color");
    GTP_PREFIX(s, "time_settings 1 2", "? syntax error: expected time_settings");
    GTP_PREFIX(s, "time_settings -1 0 0", "? syntax error: expected time_settings");
    GTP_EXPECT(s, "genmove black", "= e5\n\n");
    GTP_EXPECT(s, "clear_board", "=\n\n");
    GTP_PREFIX(s, "12", "?12 syntax error");
    GTP_PREFIX(s, "1 2 3 4 5 6 7 8 9 10 11 12", "?1 syntax error: too many arguments");
    int rc;
    out = gt(s, "99 quit", &rc);
    ck_assert_str_eq(out, "=99\n\n");
    ck_assert_int_eq(rc, 1);
    free(out);
    gtp_free(s);
}
END_TEST

/* Renju and caro through both protocols: INFO rule and gridzero-rule, forbidden moves
 * refused with the reason, the engine's move never forbidden, a model made for another
 * rule refused. */
START_TEST(protocols_renju)
{
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "alphabeta:1"};
    char err[512];
    pbrain *s = pbrain_new(&c, &bo, false, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_EXPECT(s, "START 15", "OK\n");
    PB_EXPECT(s, "INFO rule 4", "");
    /* black (the opponent) has the double-three point F = 7,7 and a closed four on row 12
     * that white (the brain) must block at 5,12 */
    PB_EXPECT(s, "BOARD", "");
    const char *board[] = {"1,12,2", "0,12,1", "2,12,2", "0,0,1", "3,12,2", "3,0,1", "4,12,2", "6,0,1",
                           "7,5,2",  "9,0,1",  "7,6,2",  "12,0,1", "5,7,2", "14,14,1", "6,7,2", NULL};
    for (int i = 0; board[i]; i++)
        PB_EXPECT(s, board[i], "");
    PB_EXPECT(s, "DONE", "5,12\n");
    PB_EXPECT(s, "TURN 7,7", "ERROR TURN 7,7: forbidden for black under renju: double three\n");
    char *out = pb(s, "TURN 8,9", NULL); /* an allowed point: the game goes on */
    int x, y;
    ck_assert_msg(read_xy(out, &x, &y), "%s", out);
    free(out);
    /* a BOARD whose black stone, in the order given, lands on a forbidden point */
    PB_EXPECT(s, "BOARD", "");
    const char *bad[] = {"7,5,2", "0,0,1", "7,6,2", "2,0,1", "5,7,2", "4,0,1", "6,7,2", "6,0,1",
                         "7,7,2", NULL};
    for (int i = 0; bad[i]; i++)
        PB_EXPECT(s, bad[i], "");
    PB_EXPECT(s, "DONE", "ERROR BOARD: stone 7,7 (black's, played in the order given): forbidden "
                         "for black under renju: double three\n");
    /* caro is accepted; caro with renju is not */
    PB_EXPECT(s, "INFO rule 8", "");
    PB_EXPECT(s, "RESTART", "OK\n");
    PB_EXPECT(s, "BEGIN", "7,7\n");
    PB_PREFIX(s, "INFO rule 12", "ERROR INFO rule 12");
    pbrain_free(s);

    /* renju needs k = 5 */
    gz_config c4 = c;
    c4.game.k = 4;
    s = pbrain_new(&c4, &bo, false, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_EXPECT(s, "START 15", "OK\n");
    PB_EXPECT(s, "INFO rule 4", "ERROR INFO rule 4: renju is a rule of five in a row, but the "
                                "config's game.k is 4\n");
    pbrain_free(s);

    /* GTP: gridzero-rule and the forbidden point */
    gtp *t = gtp_new(&c, &bo, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    GTP_EXPECT(t, "gridzero-rule", "= freestyle\n\n");
    GTP_EXPECT(t, "known_command gridzero-rule", "= true\n\n");
    GTP_EXPECT(t, "gridzero-rule pente", "? syntax error: expected gridzero-rule "
                                         "[freestyle|exact|renju|caro]\n\n");
    GTP_EXPECT(t, "gridzero-rule renju", "=\n\n");
    GTP_EXPECT(t, "gridzero-rule", "= renju\n\n");
    const char *moves[] = {"play b h10", "play w a1", "play b h9", "play w a3", "play b f8",
                           "play w a5", "play b g8", "play w a7", NULL};
    for (int i = 0; moves[i]; i++)
        GTP_EXPECT(t, moves[i], "=\n\n");
    GTP_EXPECT(t, "play b h8", "? illegal move: h8: forbidden for black under renju: double three\n\n");
    out = gt(t, "genmove b", NULL);
    ck_assert_msg(out[0] == '=' && strncmp(out, "= h8", 4), "%s", out);
    free(out);
    gtp_free(t);
    gz_config c3 = c;
    c3.game.rows = c3.game.cols = c3.game.k = 3;
    t = gtp_new(&c3, &bo, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    out = gt(t, "gridzero-rule renju", NULL);
    ck_assert_msg(strstr(out, "? unacceptable rule") && strstr(out, "game.rule"), "%s", out);
    free(out);
    GTP_EXPECT(t, "gridzero-rule", "= freestyle\n\n");
    gtp_free(t);

    /* a model made under freestyle is refused under renju, by name */
    nn_spec sp = {.planes = 5, .rows = 15, .cols = 15, .lattice = GAME_LATTICE_SQUARE, .players = 2,
                  .actions = 225, .blocks = 1, .channels = 4, .head_channels = 2, .value_hidden = 4,
                  .policy = NN_POLICY_CONV, .value = NN_VALUE_ZEROSUM, .rule = "freestyle"};
    nn_params *np = nn_params_new(&sp, err, sizeof err);
    ck_assert_msg(np != NULL, "%s", err);
    nn_params_init_he(np, 1);
    char path[] = "/tmp/gz_renju_model_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(nn_ckpt_save(path, np, NULL, NULL, 0, err, sizeof err) == 0, "%s", err);
    nn_params_free(np);
    char spec[128];
    snprintf(spec, sizeof spec, "model:%s:8", path);
    brain_opts mo = {.spec = spec};
    s = pbrain_new(&c, &mo, false, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_EXPECT(s, "START 15", "OK\n");
    out = pb(s, "INFO rule 4", NULL);
    ck_assert_msg(!strncmp(out, "ERROR INFO rule: ", 17) && strstr(out, "trained under rule freestyle") &&
                      strstr(out, "rule renju"), "%s", out);
    free(out);
    out = pb(s, "BEGIN", NULL); /* the old rule and the model still play */
    ck_assert_msg(read_xy(out, &x, &y), "%s", out);
    free(out);
    pbrain_free(s);
    gz_config cr = c;
    cfg_game_set_rule(&cr.game, CFG_RULE_RENJU);
    ck_assert(pbrain_new(&cr, &mo, false, err, sizeof err) == NULL);
    ck_assert_msg(strstr(err, "trained under rule freestyle"), "%s", err);
    unlink(path);
}
END_TEST

START_TEST(gtp_session_search_and_sanling)
{
    /* A fixed-seed search without a clock: analysis lines, reproducible. */
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "mcts:200"};
    char err[512];
    gtp *s = gtp_new(&c, &bo, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_EXPECT(s, "play b h8", "=\n\n");
    char *out = gt(s, "5 gridzero-analyze 3", NULL);
    ck_assert_msg(!strncmp(out, "=5 ", 3), "%s", out);
    char mv[8];
    int visits, total = 0, lines = 0;
    float prior, value;
    for (char *l = out + 3; *l && *l != '\n'; l = strchr(l, '\n') + 1) {
        ck_assert_msg(sscanf(l, "%7s visits %d prior %f value %f", mv, &visits, &prior, &value) == 4, "%s", out);
        ck_assert(visits > 0 && prior > 0 && prior <= 1 && value >= -1 && value <= 1);
        total += visits;
        lines++;
    }
    ck_assert_msg(lines == 3 && total <= 200, "%s", out);
    free(out);
    GTP_PREFIX(s, "gridzero-analyze 0", "? syntax error: expected gridzero-analyze [N]");
    out = gt(s, "genmove w", NULL);
    ck_assert_msg(out[0] == '=' && out[1] == ' ', "%s", out);
    free(out);
    /* With a clock: time_settings 0 0 0 -> budget 0: one search step, still a move. */
    GTP_EXPECT(s, "time_settings 0 0 0", "=\n\n");
    out = gt(s, "genmove b", NULL);
    ck_assert_msg(out[0] == '=' && out[1] == ' ', "%s", out);
    free(out);
    gtp_free(s);
    /* Pure MCTS without a cap: only the clock stops it. 3 s of absolute time for about
     * 30 moves -> 0.1 s a move less the margins; time_left in byo-yomi: 1 s for 2
     * stones -> 0.4 s. */
    brain_opts open_ended = {.spec = "mcts"};
    s = gtp_new(&c, &open_ended, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_EXPECT(s, "time_settings 3 0 0", "=\n\n");
    double t0 = brain_now();
    GTP_PREFIX(s, "genmove b", "= ");
    double dt = brain_now() - t0;
    ck_assert_msg(dt < 0.3 + SLACK, "genmove took %.3f s of a 0.04 s budget", dt);
    GTP_EXPECT(s, "time_left w 1 2", "=\n\n");
    t0 = brain_now();
    GTP_PREFIX(s, "genmove w", "= ");
    dt = brain_now() - t0;
    ck_assert_msg(dt > 0.1 && dt < 0.5 + SLACK, "genmove took %.3f s of a 0.4 s budget", dt);
    /* byo-yomi time with no stones means no limit. */
    GTP_EXPECT(s, "time_settings 0 1 0", "=\n\n");
    GTP_PREFIX(s, "genmove b", "= ");
    gtp_free(s);

    /* Three-player Sanling: colors 1 2 3, strict turn order, its own notation. */
    c = sanling_cfg(3);
    brain_opts r = {.spec = "mcts:30"};
    s = gtp_new(&c, &r, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_PREFIX(s, "play b d3", "? syntax error: invalid color \"b\" (1, 2 or 3)");
    GTP_EXPECT(s, "play 1 a1", "? illegal move: a1 is not free or not next to a stone\n\n");
    GTP_EXPECT(s, "play 1 d4", "? illegal move: d4 is not free or not next to a stone\n\n");
    GTP_EXPECT(s, "play 1 d3", "=\n\n");
    GTP_EXPECT(s, "play 3 e3",
               "? illegal move: color 2 is to move, not color 3 (moves out of turn are not allowed)\n\n");
    GTP_EXPECT(s, "play 2 e3", "=\n\n");
    out = gt(s, "genmove 3", NULL);
    ck_assert_msg(out[0] == '=' && out[1] == ' ' && out[2] >= 'a' && out[2] <= 'g', "%s", out);
    free(out);
    out = gt(s, "showboard", NULL);
    ck_assert_msg(strstr(out, "X to move") && !strncmp(out, "=\n", 2), "%s", out);
    free(out);
    GTP_PREFIX(s, "gridzero-analyze 2", "= ");
    GTP_EXPECT(s, "undo", "=\n\n");
    GTP_PREFIX(s, "genmove 1", "? illegal move: color 3 is to move");
    GTP_EXPECT(s, "boardsize 9", "=\n\n");
    GTP_EXPECT(s, "play 1 e4", "=\n\n");
    GTP_EXPECT(s, "boardsize 4", "? unacceptable size (sanling: 5..64)\n\n");
    /* A whole game by genmove: 9 moves, then the game is over. */
    GTP_EXPECT(s, "boardsize 5", "=\n\n");
    for (int i = 0; i < 9; i++) {
        char cmd[32];
        snprintf(cmd, sizeof cmd, "genmove %d", i % 3 + 1);
        GTP_PREFIX(s, cmd, "= ");
    }
    GTP_EXPECT(s, "genmove 1", "? illegal move: the game is over\n\n");
    GTP_EXPECT(s, "gridzero-analyze", "? the game is over\n\n");
    out = gt(s, "showboard", NULL);
    ck_assert_msg(strstr(out, "game over after 9 moves"), "%s", out);
    free(out);
    gtp_free(s);

    /* Two-player Sanling: b/w and 1/2 both work. */
    c = sanling_cfg(2);
    s = gtp_new(&c, &r, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_EXPECT(s, "play black d3", "=\n\n");
    GTP_EXPECT(s, "play 2 e3", "=\n\n");
    GTP_EXPECT(s, "play 3 c4", "? syntax error: invalid color \"3\" (b, black, w, white, 1 or 2)\n\n");
    gtp_free(s);

    /* boardsize keeps the config's rules between keys: a 36-move game does not fit a
     * 5x5 board (24 free points); it is refused, not cut short */
    gz_config c36;
    ck_assert(cfg_parse(&c36, "{\"game\": {\"name\": \"sanling\", \"size\": 9, \"moves\": 36}, "
                        "\"mcts\": {\"simulations\": 8}}", "test", err, sizeof err) == 0);
    s = gtp_new(&c36, &r, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    GTP_PREFIX(s, "boardsize 5", "? unacceptable size (boardsize 5: key game.moves: expected at most "
                                 "size*size-1 = 24");
    out = gt(s, "showboard", NULL);
    ck_assert_msg(strstr(out, "a b c d e f g h i") && strstr(out, "move 1 of 36"), "still 9x9, 36 "
                  "moves: %s", out);
    free(out);
    GTP_EXPECT(s, "boardsize 7", "=\n\n"); /* 48 free points */
    GTP_EXPECT(s, "boardsize 6", "? unacceptable size (boardsize 6: key game.moves: expected at most "
                                 "size*size-1 = 35 (the free points), got 36)\n\n");
    gtp_free(s);
}
END_TEST

/* How many MESSAGE lines out has. */
static int count_msgs(const char *out)
{
    int n = 0;
    for (const char *p = out; (p = strstr(p, "MESSAGE")); p++)
        n++;
    return n;
}

/* Runs `GZ_BIN args` with input on stdin; returns the exit status and its stdout. */
static int run_bin(const char *args, const char *input, char **out)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set");
    char in[] = "/tmp/gz_proto_inXXXXXX", res[] = "/tmp/gz_proto_outXXXXXX";
    int fi = mkstemp(in), fo = mkstemp(res);
    ck_assert(fi >= 0 && fo >= 0);
    ck_assert(write(fi, input, strlen(input)) == (ssize_t)strlen(input));
    close(fi);
    close(fo);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "\"%s\" %s < %s > %s 2>&1", bin, args, in, res);
    int st = system(cmd);
    FILE *f = fopen(res, "r");
    ck_assert(f != NULL);
    size_t cap = 1 << 16, n = 0;
    *out = malloc(cap);
    size_t k;
    while ((k = fread(*out + n, 1, cap - 1 - n, f)) > 0)
        n += k;
    (*out)[n] = 0;
    fclose(f);
    unlink(in);
    unlink(res);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(through_the_binary)
{
    char *out;
    int rc = run_bin("pbrain --player alphabeta:1",
                     "START 15\nINFO timeout_turn 1000\nBEGIN\nTURN 7,8\nFOO\nABOUT\nEND\nTURN 1,1\n", &out);
    ck_assert_int_eq(rc, 0);
    int x, y, n = 0;
    ck_assert_msg(sscanf(out, "OK\n7,7\n%d,%d\nUNKNOWN command \"FOO\"\nname=\"gridzero\"%n", &x, &y, &n) == 2 &&
                      n > 0,
                  "%s", out);
    ck_assert_msg(strchr(out + n, '\n') && strchr(out + n, '\n')[1] == 0, "after END: %s", out);
    free(out);
    /* EOF without END ends cleanly too; a bad option or engine is exit 2. */
    rc = run_bin("pbrain --player random", "START 10\nBEGIN\n", &out);
    ck_assert_int_eq(rc, 0);
    free(out);
    rc = run_bin("pbrain --player nonsense", "", &out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "nonsense"), "%s", out);
    free(out);
    rc = run_bin("pbrain --sims 0", "", &out);
    ck_assert_int_eq(rc, 2);
    free(out);
    rc = run_bin("pbrain --help", "", &out);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "usage: gridzero pbrain"), "%s", out);
    free(out);

    rc = run_bin("gtp --player alphabeta:1 --set game.rows=9 --set game.cols=9 --set game.k=5",
                 "1 name\n2 play b e5\n3 genmove w\n4 play b pass\nquit\nname\n", &out);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(!strncmp(out, "=1 gridzero\n\n=2\n\n=3 ", 20), "%s", out);
    ck_assert_msg(strstr(out, "\n\n?4 illegal move: pass") && strstr(out, "\n\n=\n\n") &&
                      !strstr(out, "= gridzero\n\n=\n\n="),
                  "%s", out);
    free(out);
    rc = run_bin("gtp -c /nonexistent.json", "", &out);
    ck_assert_int_eq(rc, 2);
    free(out);
    rc = run_bin("--help", "", &out);
    ck_assert_msg(rc == 0 && strstr(out, "pbrain") && strstr(out, "gtp"), "%s", out);
    free(out);

    /* No -m or --player: Gomoku plays the shipped model (here a random one in $GZ_MODELS)
     * and says so on stderr; --player keeps pure MCTS. */
    char dir[] = "/tmp/gz_proto_modelsXXXXXX", file[1100], err[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/gomoku15.h5", dir);
    gz_config c;
    ck_assert_msg(cfg_parse(&c, "{\"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, "
                                "\"k\": 5}}", "test", err, sizeof err) == 0, "%s", err);
    model_write_random(file, &c, 5);
    ck_assert_int_eq(setenv("GZ_MODELS", dir, 1), 0);
    rc = run_bin("pbrain --sims 20", "START 15\nBEGIN\nEND\n", &out);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "pbrain: playing the shipped model ") && strstr(out, file), "%s", out);
    ck_assert_msg(sscanf(strstr(out, "OK\n"), "OK\n%d,%d\n", &x, &y) == 2 && x >= 0 && x < 15 &&
                      y >= 0 && y < 15, "%s", out);
    free(out);
    /* renju, which the model was not trained for: pure MCTS, said once in a MESSAGE;
     * back to freestyle, the model again */
    rc = run_bin("pbrain --sims 20", "START 15\nINFO rule 4\nBEGIN\nINFO rule 0\nRESTART\nBEGIN\nEND\n",
                 &out);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "\nMESSAGE gomoku15.h5 does not fit this game (renju, k = 5): playing mcts\n"),
                  "%s", out);
    ck_assert_msg(count_msgs(out) == 1, "%s", out);
    free(out);
    rc = run_bin("pbrain --player mcts:20", "START 15\nBEGIN\nEND\n", &out);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(!strstr(out, "shipped"), "%s", out);
    free(out);
    rc = run_bin("pbrain -c /dev/null", "", &out); /* a bad config still fails first */
    ck_assert_int_eq(rc, 2);
    free(out);
    ck_assert_int_eq(unsetenv("GZ_MODELS"), 0);
    ck_assert_int_eq(unlink(file), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A child `gridzero pbrain ARGS` with pipes to its stdin and from its stdout. */
typedef struct child {
    pid_t pid;
    FILE *to, *from;
} child;

static child spawn(const char *spec)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set");
    int in[2], out[2];
    ck_assert(pipe(in) == 0 && pipe(out) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(bin, bin, "pbrain", "--player", spec, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    child c = {pid, fdopen(in[1], "w"), fdopen(out[0], "r")};
    ck_assert(c.to && c.from);
    return c;
}

static void send_line(child *c, const char *line)
{
    fprintf(c->to, "%s\r\n", line); /* managers end lines with CR LF */
    fflush(c->to);
}

/* The next line that is not MESSAGE/DEBUG (malloc'd), or NULL at EOF. */
static char *recv_line(child *c)
{
    char *line = NULL;
    size_t cap = 0;
    for (;;) {
        if (getline(&line, &cap, c->from) < 0) {
            free(line);
            return NULL;
        }
        if (strncmp(line, "MESSAGE", 7) && strncmp(line, "DEBUG", 5))
            return line;
    }
}

/* Whether color (1/2) has five or more in a row on board[15*15]. */
static int has_five(const int *board, int color)
{
    static const int d[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int r = 0; r < 15; r++)
        for (int c = 0; c < 15; c++)
            for (int k = 0; k < 4; k++) {
                int n = 0;
                while (n < 5) {
                    int rr = r + n * d[k][0], cc = c + n * d[k][1];
                    if (rr < 0 || rr >= 15 || cc < 0 || cc >= 15 || board[rr * 15 + cc] != color)
                        break;
                    n++;
                }
                if (n == 5)
                    return 1;
            }
    return 0;
}

START_TEST(self_match_over_pipes)
{
    signal(SIGPIPE, SIG_IGN);
    child p[2] = {spawn("alphabeta:1"), spawn("mcts:50")};
    for (int i = 0; i < 2; i++) {
        send_line(&p[i], "START 15");
        char *l = recv_line(&p[i]);
        ck_assert_msg(l && !strcmp(l, "OK\n"), "START: %s", l ? l : "EOF");
        free(l);
        send_line(&p[i], "INFO timeout_turn 2000");
        send_line(&p[i], "INFO rule 0");
    }
    gz_config cfg = gomoku_cfg();
    char err[256];
    game *g = game_new(&cfg.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    game_state *st = game_state_new(g, NULL);
    int board[225] = {0};
    int mover = 0, moves = 0;
    char cmd[32] = "BEGIN";
    while (!game_terminal(g, st)) {
        send_line(&p[mover], cmd);
        char *l = recv_line(&p[mover]);
        int x = -1, y = -1;
        ck_assert_msg(l && read_xy(l, &x, &y), "move %d: brain %d answered %s", moves, mover, l ? l : "EOF");
        free(l);
        ck_assert_msg(x >= 0 && x < 15 && y >= 0 && y < 15 && board[y * 15 + x] == 0, "move %d: %d,%d", moves, x,
                      y);
        ck_assert(game_play(g, st, y * 15 + x) == 0);
        board[y * 15 + x] = mover + 1;
        moves++;
        snprintf(cmd, sizeof cmd, "TURN %d,%d", x, y);
        mover ^= 1;
    }
    /* The result matches the board: the winner has a five, the loser none; or a full
     * board. (alphabeta:1 beats mcts:50 almost always, but any result is accepted.) */
    float z[2];
    game_result(g, st, z);
    if (z[0] > 0)
        ck_assert(has_five(board, 1) && !has_five(board, 2));
    else if (z[1] > 0)
        ck_assert(has_five(board, 2) && !has_five(board, 1));
    else
        ck_assert(moves == 225 && !has_five(board, 1) && !has_five(board, 2));
    /* The winner made the last move. */
    if (z[0] != z[1])
        ck_assert_int_eq(z[0] > 0 ? 0 : 1, (moves - 1) % 2);
    for (int i = 0; i < 2; i++) {
        send_line(&p[i], "END");
        int st_code;
        ck_assert(waitpid(p[i].pid, &st_code, 0) == p[i].pid);
        ck_assert_msg(WIFEXITED(st_code) && WEXITSTATUS(st_code) == 0, "brain %d exit %d", i, st_code);
        fclose(p[i].to);
        fclose(p[i].from);
    }
    free(st);
    game_free(g);
}
END_TEST

/* The root VCF check: a random player behind pbrain and gtp still plays the forced win.
 * Own stones h8 i8 j8 (g8 the opponent's) and k6 k7: k8 (10,7) is a four and an open
 * three; after the forced l8 (11,7), k9 or k5 makes an open four, then the five. */
START_TEST(protocols_play_vcf_with_a_weak_player)
{
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "random"};
    char err[512];
    pbrain *s = pbrain_new(&c, &bo, false, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    PB_EXPECT(s, "START 15", "OK\n");
    const char *stones[] = {"7,7,1", "6,7,2", "8,7,1", "0,14,2", "9,7,1",
                            "0,0,2", "10,9,1", "14,14,2", "10,8,1", "14,0,2"};
    PB_EXPECT(s, "BOARD", "");
    for (int i = 0; i < 10; i++)
        PB_EXPECT(s, stones[i], "");
    PB_EXPECT(s, "DONE", "10,7\n");
    char *out = pb(s, "TURN 11,7", NULL);
    ck_assert_msg(!strcmp(out, "10,6\n") || !strcmp(out, "10,10\n"), "%s", out);
    bool up = !strcmp(out, "10,6\n");
    free(out);
    /* block one end of the open four: the other end completes five */
    PB_EXPECT(s, up ? "TURN 10,5" : "TURN 10,11", up ? "10,10\n" : "10,6\n");
    pbrain_free(s);

    gtp *g = gtp_new(&c, &bo, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    const char *moves[] = {"play b h8", "play w g8", "play b i8", "play w a1", "play b j8",
                           "play w a15", "play b k6", "play w o1", "play b k7", "play w o15"};
    for (int i = 0; i < 10; i++)
        GTP_EXPECT(g, moves[i], "=\n\n");
    GTP_EXPECT(g, "genmove b", "= k8\n\n");
    gtp_free(g);
}
END_TEST

/* A short random-input run (the long one is the slow suite's test_protocols_fuzz). */
START_TEST(random_input_smoke)
{
    gz_config c = gomoku_cfg();
    brain_opts bo = {.spec = "random"};
    char err[512];
    pbrain *p = pbrain_new(&c, &bo, false, err, sizeof err);
    gtp *s = gtp_new(&c, &bo, err, sizeof err);
    ck_assert(p && s);
    FILE *null = fopen("/dev/null", "w");
    ck_assert(null != NULL);
    rng r;
    rng_seed(&r, 99);
    static const char *words[] = {"START", "BEGIN", "TURN", "BOARD", "DONE", "INFO", "RESTART", "END", "ABOUT",
                                  "TAKEBACK", "RECTSTART", "play", "genmove", "undo", "boardsize", "showboard",
                                  "b", "w", "h8", "7,7", "15", "0", "-1", "9999999999999", ",", "1,2,3", "#",
                                  "\t", "\r", "timeout_turn", "rule", "time_settings", "time_left", "pass"};
    int nw = (int)(sizeof words / sizeof words[0]);
    char line[256];
    for (int i = 0; i < 20000; i++) {
        int n = 0, parts = 1 + (int)(rng_next(&r) % 4);
        for (int k = 0; k < parts && n < 200; k++) {
            if (rng_next(&r) % 5 == 0)
                line[n++] = (char)(1 + rng_next(&r) % 255);
            else
                n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", k ? " " : "",
                              words[rng_next(&r) % (uint64_t)nw]);
        }
        line[n] = 0;
        /* After END (1) the module stays usable; cmd_pbrain stops reading there. */
        (void)pbrain_line(p, line, null);
        gtp_line(s, line, null);
    }
    fclose(null);
    pbrain_free(p);
    gtp_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("protocols");
    TCase *tc = tcase_create("protocols");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pbrain_session);
    tcase_add_test(tc, pbrain_search_clock);
    tcase_add_test(tc, pbrain_swap2);
    tcase_add_test(tc, gtp_session_gomoku);
    tcase_add_test(tc, gtp_session_search_and_sanling);
    tcase_add_test(tc, protocols_renju);
    tcase_add_test(tc, through_the_binary);
    tcase_add_test(tc, self_match_over_pipes);
    tcase_add_test(tc, random_input_smoke);
    tcase_add_test(tc, protocols_play_vcf_with_a_weak_player);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
