/* cli_util.h — running the gridzero binary ($GZ_BIN) from a test: a command line with
 * given input on stdin, its stdout and stderr captured. Header-only, static: included by
 * the tests that drive commands (test_arena.c, the 2048 tests). */
#ifndef GZ_TESTS_CLI_UTIL_H
#define GZ_TESTS_CLI_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs `GZ_BIN args` with input on stdin; captures stdout and stderr (malloc'd,
 * free them). Returns the exit status. */
static inline int run_bin(const char *args, const char *input, char **out, char **errout)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run through meson test)");
    char in_path[] = "/tmp/gz_in_XXXXXX", out_path[] = "/tmp/gz_out_XXXXXX",
         err_path[] = "/tmp/gz_err_XXXXXX";
    int fi = mkstemp(in_path), fo = mkstemp(out_path), fe = mkstemp(err_path);
    ck_assert(fi >= 0 && fo >= 0 && fe >= 0);
    if (input)
        ck_assert(write(fi, input, strlen(input)) == (ssize_t)strlen(input));
    close(fi);
    close(fo);
    close(fe);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s <%s >%s 2>%s", bin, args, in_path, out_path, err_path);
    int st = system(cmd);
    ck_assert(st != -1 && WIFEXITED(st));
    const char *paths[2] = {out_path, err_path};
    char **bufs[2] = {out, errout};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "r");
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        *bufs[i] = calloc((size_t)n + 1, 1);
        ck_assert(fread(*bufs[i], 1, (size_t)n, f) == (size_t)n);
        fclose(f);
    }
    unlink(in_path);
    unlink(out_path);
    unlink(err_path);
    return WEXITSTATUS(st);
}

#endif
