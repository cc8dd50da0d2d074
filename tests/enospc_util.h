/* enospc_util.h — test helpers for a full disk without root: the gridzero binary
 * ($GZ_BIN) run with tests/enospc_shim.c preloaded ($GZ_ENOSPC_SHIM), so that writes
 * into its temporary files (names containing ".tmp") fail with ENOSPC after a given
 * number of bytes; and a sweep that first logs every such write of a command, then runs
 * the command again once per write with that write failing, checking each time: exit
 * 1 (never a signal: the crash in HDF5's exit handler), a message that gives the
 * reason (ENOSPC's text), and no .tmp file left in the output directory. Header-only, static. */
#ifndef GZ_TESTS_ENOSPC_UTIL_H
#define GZ_TESTS_ENOSPC_UTIL_H

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs GZ_BIN with args (NULL-terminated) and the shim preloaded: writes into .tmp files
 * fail after `after` bytes (< 0: never), each such write's size is appended to log (may
 * be NULL). Output (stdout and stderr) into the file out_path. Returns the exit status,
 * or 128 + the signal. */
static int enospc_exec(const char *const *args, long long after, const char *log,
                       const char *out_path)
{
    const char *bin = getenv("GZ_BIN"), *shim = getenv("GZ_ENOSPC_SHIM");
    ck_assert_msg(bin && shim, "GZ_BIN or GZ_ENOSPC_SHIM not set (run through meson test)");
    const char *argv[64];
    int n = 0;
    argv[n++] = bin;
    for (int i = 0; args[i]; i++) {
        ck_assert_int_lt(n, 62);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        char budget[32];
        snprintf(budget, sizeof budget, "%lld", after);
        setenv("LD_PRELOAD", shim, 1);
        setenv("GZ_ENOSPC_AFTER", budget, 1);
        if (log)
            setenv("GZ_ENOSPC_LOG", log, 1);
        else
            unsetenv("GZ_ENOSPC_LOG");
        unsetenv("GZ_RUN_CRASH_AFTER");
        /* a sanitized build: the shim comes before the ASan runtime, which is fine; and an
         * ASan report must not pass for the expected exit status 1 */
        setenv("ASAN_OPTIONS", "verify_asan_link_order=0:exitcode=99", 0);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Files under d (recursively) whose name contains ".tmp". */
static int enospc_count_tmp(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dd))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            n += enospc_count_tmp(p);
        else if (strstr(de->d_name, ".tmp"))
            n++;
    }
    closedir(dd);
    return n;
}

/* The sizes of the logged writes (malloc'd; free with free()), their number in *n. */
static long long *enospc_read_log(const char *log, int *n)
{
    FILE *f = fopen(log, "r");
    ck_assert_msg(f != NULL, "%s: no writes were logged (is the shim preloaded?)", log);
    long long *v = NULL, x;
    int cap = 0;
    *n = 0;
    while (fscanf(f, "%lld", &x) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            v = realloc(v, sizeof *v * (size_t)cap);
            ck_assert_ptr_nonnull(v);
        }
        v[(*n)++] = x;
    }
    fclose(f);
    return v;
}

/* Prepares the output directory before each run of a sweep (may be NULL). */
typedef void (*enospc_prepare_fn)(const char *outdir);

/* The sweep: args once with every .tmp write logged (it must succeed), then once per
 * logged write k (every `stride`-th one; 1: all) with write k failing. Each failing run
 * must exit 1 with "gridzero:" and "No space left on device" in its output and leave no
 * .tmp under outdir. `check`
 * (may be NULL) then looks at the directory (resume it, say). Prints the number of
 * failure points and the distinct messages (digits dropped) to stderr, under `what`.
 * Returns the number of failure points tried. */
static int enospc_sweep(const char *what, const char *const *args, const char *outdir,
                        const char *workdir, int stride, enospc_prepare_fn prepare,
                        void (*check)(const char *outdir, int k))
{
    char log[600], out[600];
    snprintf(log, sizeof log, "%s/enospc_writes.log", workdir);
    snprintf(out, sizeof out, "%s/enospc_out.txt", workdir);
    unlink(log);
    if (prepare)
        prepare(outdir);
    int rc = enospc_exec(args, -1, log, out);
    ck_assert_msg(rc == 0, "%s: exit %d without a failure", what, rc);
    int n;
    long long *sizes = enospc_read_log(log, &n);
    ck_assert_int_gt(n, 0);
    char msgs[16][256];
    int nmsg = 0, tried = 0;
    long long before = 0;
    for (int k = 0; k < n; k++) {
        if (k % stride == 0 || k == n - 1) {
            if (prepare)
                prepare(outdir);
            rc = enospc_exec(args, before, NULL, out);
            FILE *f = fopen(out, "rb");
            char text[8192];
            size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
            text[len] = 0;
            if (f)
                fclose(f);
            ck_assert_msg(rc == 1, "%s: write %d of %d failing (after %lld bytes): exit %d:\n%s", what,
                          k, n, before, rc, text);
            const char *m = strstr(text, "gridzero:");
            ck_assert_msg(m != NULL, "%s: write %d failing: no message:\n%s", what, k, text);
            /* the reason, as the system gave it, not just "cannot write" */
            ck_assert_msg(strstr(m, "No space left on device") != NULL,
                          "%s: write %d failing: the message does not say the disk is full:\n%s",
                          what, k, text);
            ck_assert_msg(enospc_count_tmp(outdir) == 0, "%s: write %d failing left a .tmp file",
                          what, k);
            char word[256];
            size_t w = 0;
            for (const char *c = m; *c && *c != '\n' && w < sizeof word - 1; c++)
                if (*c < '0' || *c > '9')
                    word[w++] = *c;
            word[w] = 0;
            int seen = 0;
            for (int j = 0; j < nmsg; j++)
                seen |= !strcmp(msgs[j], word);
            if (!seen && nmsg < 16)
                snprintf(msgs[nmsg++], sizeof msgs[0], "%s", word);
            if (check)
                check(outdir, k);
            tried++;
        }
        before += sizes[k];
    }
    fprintf(stderr, "%s: %d of %d writes made to fail, each: exit 1, a message, no .tmp left; "
            "%d distinct messages:\n", what, tried, n, nmsg);
    for (int j = 0; j < nmsg; j++)
        fprintf(stderr, "  %s\n", msgs[j]);
    free(sizes);
    return tried;
}

#endif
