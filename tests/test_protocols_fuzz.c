/* Protocols under random input (slow suite): millions of random, grammar-built and
 * mutated lines into the pbrain and GTP line modules: no crash, no hang (the test's
 * timeout), no leak (run it under ASan: build with -Db_sanitize=address,undefined),
 * and every answer well formed: pbrain answers are whole lines, GTP answers start
 * with '=' or '?' and end with an empty line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gtp.h"
#include "cli/pbrain.h"
#include "engine/config.h"
#include "engine/rng.h"

static const char *const words[] = {
    "START", "RECTSTART", "RESTART", "BEGIN", "TURN", "BOARD", "DONE", "INFO", "END", "ABOUT", "TAKEBACK",
    "timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule", "folder", "evaluate",
    "protocol_version", "name", "version", "known_command", "list_commands", "boardsize", "clear_board",
    "komi", "play", "genmove", "undo", "showboard", "quit", "time_settings", "time_left",
    "gridzero-analyze", "b", "w", "black", "white", "1", "2", "3", "pass", "resign", "h8", "a1", "e5",
    "z99", "aa1", "7,7", "0,0", "14,14", "19,19", "25,25", "-1,0", "7,7,1", "8,8,2", "9,9,3", "1,2,3,4", ",",
    ",,", "0", "5", "6", "9", "15", "20", "25", "26", "64", "65", "-5", "1e9", "nan", "inf", "0.5",
    "99999999999999999999", "#", "\t", "\r", " ", "",
};
#define NWORDS (int)(sizeof words / sizeof words[0])

/* A valid-looking session to mutate. */
static const char *const script_pb[] = {
    "START 15", "INFO timeout_turn 0", "BEGIN", "TURN 7,8", "TURN 6,6", "TAKEBACK 6,6", "RESTART",
    "BOARD", "7,7,1", "8,8,2", "DONE", "RECTSTART 10,6", "TURN 3,3", "ABOUT", "INFO rule 1", "START 20",
};
static const char *const script_gtp[] = {
    "1 boardsize 9", "play b e5", "genmove w", "showboard", "undo", "time_settings 1 0 0",
    "time_left b 0.1 0", "genmove b", "2 gridzero-analyze 3", "clear_board", "known_command play",
    "list_commands", "komi 0.5", "boardsize 15",
};

/* Writes a random line of up to cap-1 bytes into line; returns its length. */
static size_t make_line(rng *r, char *line, size_t cap, const char *const *script, int nscript)
{
    size_t n = 0;
    unsigned kind = (unsigned)(rng_next(r) % 10);
    if (kind < 4) { /* words */
        int parts = 1 + (int)(rng_next(r) % 5);
        for (int k = 0; k < parts && n + 40 < cap; k++)
            n += (size_t)snprintf(line + n, cap - n, "%s%s", k && rng_next(r) % 4 ? " " : "",
                                  words[rng_next(r) % NWORDS]);
    } else if (kind < 8) { /* a script line, mutated */
        n = (size_t)snprintf(line, cap, "%s", script[rng_next(r) % (uint64_t)nscript]);
        int muts = (int)(rng_next(r) % 4);
        for (int m = 0; m < muts; m++) {
            size_t at = n ? (size_t)(rng_next(r) % n) : 0;
            switch (rng_next(r) % 3) {
            case 0: /* replace */
                if (n)
                    line[at] = (char)(1 + rng_next(r) % 255);
                break;
            case 1: /* delete */
                if (n) {
                    memmove(line + at, line + at + 1, n - at);
                    n--;
                }
                break;
            default: /* insert */
                if (n + 2 < cap) {
                    memmove(line + at + 1, line + at, n - at + 1);
                    line[at] = (char)(1 + rng_next(r) % 255);
                    n++;
                }
            }
        }
    } else if (kind < 9) { /* random bytes (no NUL: a line never holds one) */
        size_t len = (size_t)(rng_next(r) % 64);
        for (; n < len && n + 1 < cap; n++)
            line[n] = (char)(1 + rng_next(r) % 255);
    } else { /* a long line */
        size_t len = (size_t)(rng_next(r) % (cap - 1));
        for (; n < len; n++)
            line[n] = rng_next(r) % 8 ? (char)('0' + rng_next(r) % 10) : ',';
    }
    line[n] = 0;
    return n;
}

static gz_config make_cfg(const char *json)
{
    gz_config c;
    char err[512];
    ck_assert_msg(cfg_parse(&c, json, "fuzz", err, sizeof err) == 0, "%s", err);
    return c;
}

/* Checks that out[0..len) is whole lines (pbrain) or whole GTP answers. */
static void check_answer(const char *out, size_t len, bool is_gtp, const char *line)
{
    if (len == 0)
        return;
    ck_assert_msg(out[len - 1] == '\n', "answer to \"%s\" does not end a line: \"%s\"", line, out);
    if (is_gtp) {
        ck_assert_msg((out[0] == '=' || out[0] == '?') && len >= 2 && out[len - 2] == '\n' &&
                          strstr(out, "\n\n") == out + len - 2,
                      "answer to \"%s\": \"%s\"", line, out);
    }
}

static void fuzz(const char *json, const char *spec, bool is_gtp, long lines, uint64_t seed)
{
    gz_config c = make_cfg(json);
    brain_opts bo = {.spec = spec};
    char err[512];
    pbrain *p = NULL;
    gtp *s = NULL;
    if (is_gtp)
        s = gtp_new(&c, &bo, err, sizeof err);
    else
        p = pbrain_new(&c, &bo, true, err, sizeof err);
    ck_assert_msg(p || s, "%s", err);
    rng r;
    rng_seed(&r, seed);
    static char line[16384];
    for (long i = 0; i < lines; i++) {
        size_t cap = rng_next(&r) % 50 ? 256 : sizeof line;
        if (is_gtp)
            make_line(&r, line, cap, script_gtp, (int)(sizeof script_gtp / sizeof *script_gtp));
        else
            make_line(&r, line, cap, script_pb, (int)(sizeof script_pb / sizeof *script_pb));
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert(f != NULL);
        if (is_gtp)
            (void)gtp_line(s, line, f);
        else
            (void)pbrain_line(p, line, f);
        fclose(f);
        check_answer(buf, len, is_gtp, line);
        free(buf);
    }
    pbrain_free(p);
    gtp_free(s);
}

static const char *gomoku = "{\"seed\": 5, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5},"
                            " \"mcts\": {\"simulations\": 8, \"batch\": 2}}";
static const char *sanling3 = "{\"seed\": 5, \"game\": {\"name\": \"sanling\", \"size\": 9, \"players\": 3, "
                              "\"moves\": 30}, \"mcts\": {\"simulations\": 8, \"batch\": 2}}";

START_TEST(pbrain_random_lines) { fuzz(gomoku, "random", false, 1500000, 1); }
END_TEST
START_TEST(pbrain_random_lines_search) { fuzz(gomoku, "mcts:4", false, 200000, 2); }
END_TEST
START_TEST(gtp_random_lines) { fuzz(gomoku, "random", true, 1500000, 3); }
END_TEST
START_TEST(gtp_random_lines_sanling) { fuzz(sanling3, "mcts:4", true, 500000, 4); }
END_TEST

int main(void)
{
    Suite *s = suite_create("protocols_fuzz");
    TCase *tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, pbrain_random_lines);
    tcase_add_test(tc, pbrain_random_lines_search);
    tcase_add_test(tc, gtp_random_lines);
    tcase_add_test(tc, gtp_random_lines_sanling);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
