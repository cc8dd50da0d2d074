/* run_util.h — test helpers for `gridzero run` through the binary ($GZ_BIN): running it
 * (with a simulated crash or a kill -9), snapshots of the finished stage files, and the
 * checks of a finished run directory. Header-only, static: included by test_run.c and
 * test_run_slow.c. */
#ifndef GZ_TESTS_RUN_UTIL_H
#define GZ_TESTS_RUN_UTIL_H

#include <check.h>
#include <math.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/config.h"
#include "engine/game.h"
#include "enospc_util.h"
#include "selfplay/samples.h"

static char dir[256];

static inline void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gz_test_run_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The tiny settings every run here uses (plus -o DIR and --generations). */
static const char *const tiny[] = {
    "--set", "selfplay.games=16",  "--set", "train.steps=20",        "--set", "arena.games=4",
    "--set", "train.reuse=0",
    "--set", "net.blocks=1",       "--set", "net.channels=8",        "--set", "selfplay.threads=1",
    "--set", "mcts.simulations=16", "--set", "selfplay.bootstrap_simulations=32",
    "--set", "arena.simulations=16", "--set", "train.log_every=5", "--set", "seed=5", NULL};

#define MAXARGS 64

/* Starts `gridzero run -o rundir [--generations gens] [base...] [extra...]` with
 * GZ_RUN_CRASH_AFTER=crash (NULL: unset), output to the file log, and returns its pid
 * at once (wait for it with waitpid). */
static inline pid_t gz_run_spawn(const char *rundir, int gens, const char *crash,
                                 const char *const *base, const char *const *extra,
                                 const char *log)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN is not set (run through meson test)");
    char gbuf[16];
    snprintf(gbuf, sizeof gbuf, "%d", gens);
    const char *argv[MAXARGS];
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "run";
    argv[n++] = "-o";
    argv[n++] = rundir;
    if (gens > 0) {
        argv[n++] = "--generations";
        argv[n++] = gbuf;
    }
    for (int i = 0; base && base[i]; i++)
        argv[n++] = base[i];
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    ck_assert_int_lt(n, MAXARGS);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        if (crash)
            setenv("GZ_RUN_CRASH_AFTER", crash, 1);
        else
            unsetenv("GZ_RUN_CRASH_AFTER");
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* A whole log file into out (NUL-terminated; may be NULL). */
static inline void gz_read_log(const char *log, char *out, size_t outlen)
{
    if (!out)
        return;
    FILE *f = fopen(log, "rb");
    size_t len = f ? fread(out, 1, outlen - 1, f) : 0;
    out[len] = 0;
    if (f)
        fclose(f);
}

/* Runs `gridzero run -o rundir [--generations gens] [base...] [extra...]` with
 * GZ_RUN_CRASH_AFTER=crash (NULL: unset), output to rundir.log.N. kill_ms > 0: signal
 * sig after that many milliseconds if still running. Returns the exit status, or 128+signal.
 * The output is copied into out (may be NULL). */
static inline int gz_run_sig(const char *rundir, int gens, const char *crash,
                             const char *const *base, const char *const *extra, int kill_ms,
                             int sig, char *out, size_t outlen)
{
    static int nlog;
    char log[400];
    snprintf(log, sizeof log, "%s.log.%d", rundir, nlog++);
    pid_t pid = gz_run_spawn(rundir, gens, crash, base, extra, log);
    int st = 0;
    if (kill_ms > 0) {
        struct timespec ts = {kill_ms / 1000, (long)(kill_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, sig);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    gz_read_log(log, out, outlen);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* gz_run_sig with SIGKILL. */
static inline int gz_run_base(const char *rundir, int gens, const char *crash,
                              const char *const *base, const char *const *extra, int kill_ms,
                              char *out, size_t outlen)
{
    return gz_run_sig(rundir, gens, crash, base, extra, kill_ms, SIGKILL, out, outlen);
}

/* gz_run_base with the tiny settings. */
static inline int gz_run(const char *rundir, int gens, const char *crash, const char *const *extra,
                         int kill_ms, char *out, size_t outlen)
{
    return gz_run_base(rundir, gens, crash, tiny, extra, kill_ms, out, outlen);
}

static inline int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static inline char *pathf(char *buf, size_t len, const char *rundir, const char *rel)
{
    snprintf(buf, len, "%s/%s", rundir, rel);
    return buf;
}

/* A whole file (malloc'd, NUL-terminated) or NULL. */
static inline char *slurp(const char *path, size_t *lenp)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    fclose(f);
    b[got] = 0;
    if (lenp)
        *lenp = got;
    return b;
}

static inline char *slurp_rel(const char *rundir, const char *rel)
{
    char p[400];
    char *t = slurp(pathf(p, sizeof p, rundir, rel), NULL);
    ck_assert_msg(t != NULL, "%s: missing", p);
    return t;
}

static inline int count_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c; c++)
        n += *c == '\n';
    return n;
}

/* The lines of rundir/rel (which must exist). */
static inline int count_lines_rel(const char *rundir, const char *rel)
{
    char *text = slurp_rel(rundir, rel);
    int n = count_lines(text);
    free(text);
    return n;
}

/* Files under rundir whose name contains ".tmp" (recursively): their number. */
static inline int count_tmp(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dd))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            n += count_tmp(p);
        else if (strstr(de->d_name, ".tmp")) {
            fprintf(stderr, "test_run: leftover %s\n", p);
            n++;
        }
    }
    closedir(dd);
    return n;
}

/* The finished stage files of a run and their modification times. */
#define NSTAGE_FILES 16
typedef struct snapshot {
    char rel[NSTAGE_FILES][64];
    struct timespec mtime[NSTAGE_FILES];
    off_t size[NSTAGE_FILES];
    int n;
} snapshot;

static inline void take_snapshot(const char *rundir, int gens, snapshot *s)
{
    memset(s, 0, sizeof *s);
    for (int g = 0; g <= gens; g++) {
        const char *fmts[] = {"models/gen_%04d.h5", "data/gen_%04d.h5", "arena/gen_%04d.jsonl"};
        for (int k = 0; k < 3; k++) {
            if (g == 0 && k > 0)
                continue;
            char rel[64], p[400];
            snprintf(rel, sizeof rel, fmts[k], g);
            struct stat st;
            if (stat(pathf(p, sizeof p, rundir, rel), &st) != 0)
                continue;
            ck_assert_int_lt(s->n, NSTAGE_FILES);
            snprintf(s->rel[s->n], sizeof s->rel[s->n], "%s", rel);
            s->mtime[s->n] = st.st_mtim;
            s->size[s->n] = st.st_size;
            s->n++;
        }
    }
}

/* Every file of s is still there, never rewritten. */
static inline void check_unchanged(const char *rundir, const snapshot *s, const char *what)
{
    for (int i = 0; i < s->n; i++) {
        char p[400];
        struct stat st;
        ck_assert_msg(stat(pathf(p, sizeof p, rundir, s->rel[i]), &st) == 0, "%s: %s lost", what,
                      s->rel[i]);
        ck_assert_msg(st.st_mtim.tv_sec == s->mtime[i].tv_sec &&
                          st.st_mtim.tv_nsec == s->mtime[i].tv_nsec && st.st_size == s->size[i],
                      "%s: %s was rewritten", what, s->rel[i]);
    }
}

static inline void check_same_file(const char *a, const char *b, const char *rel)
{
    char pa[400], pb[400];
    size_t la = 0, lb = 0;
    char *ta = slurp(pathf(pa, sizeof pa, a, rel), &la);
    char *tb = slurp(pathf(pb, sizeof pb, b, rel), &lb);
    ck_assert_msg(ta && tb, "%s or %s missing", pa, pb);
    ck_assert_msg(la == lb && memcmp(ta, tb, la) == 0, "%s differs from %s:\n%s\n--- vs ---\n%s", pb,
                  pa, tb, ta);
    free(ta);
    free(tb);
}

/* Calls fn(event, ctx) on each event of metrics.jsonl named ev (fn may be NULL) and
 * returns how many there are; every line must be a JSON object with "event". */
static inline int each_event(const char *rundir, const char *ev, void (*fn)(const cJSON *, void *),
                             void *ctx)
{
    char *text = slurp_rel(rundir, "metrics.jsonl");
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_msg(o != NULL, "metrics.jsonl: not JSON: %s", line);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "event");
        ck_assert_msg(cJSON_IsString(e), "metrics.jsonl: no event: %s", line);
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "generation")));
        if (!strcmp(e->valuestring, ev)) {
            n++;
            if (fn)
                fn(o, ctx);
        }
        cJSON_Delete(o);
    }
    free(text);
    return n;
}

/* Events of metrics.jsonl named ev. */
static inline int count_events(const char *rundir, const char *ev)
{
    return each_event(rundir, ev, NULL, NULL);
}

/* The contents of a finished run of `gens` generations with the tiny settings (4 arena
 * games against the best and each of the 2 default baselines). */
static inline void check_run_dir(const char *rd, int gens)
{
    char p[400], rel[64], err[512];
    /* config.json: the effective config, readable */
    char *text = slurp_rel(rd, "config.json");
    gz_config c;
    ck_assert_msg(cfg_parse(&c, text, "config.json", err, sizeof err) == 0, "%s", err);
    free(text);
    ck_assert_int_eq(c.selfplay.games, 16);
    ck_assert_int_eq(c.train.steps, 20);
    ck_assert_int_eq(c.net.channels, 8);
    ck_assert_int_eq(c.arena.nbaselines, 2);
    int per_gen = c.arena.games * (1 + c.arena.nbaselines);
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    /* models, data, arena files */
    for (int k = 0; k <= gens + 1; k++) {
        snprintf(rel, sizeof rel, "models/gen_%04d.h5", k);
        ck_assert_msg(exists(pathf(p, sizeof p, rd, rel)) == (k <= gens), "%s", p);
        if (k == 0)
            continue;
        snprintf(rel, sizeof rel, "data/gen_%04d.h5", k);
        ck_assert_msg(exists(pathf(p, sizeof p, rd, rel)) == (k <= gens), "%s", p);
        if (k <= gens) {
            sp_expect ex = sp_expect_game(g);
            sp_file *f = sp_file_read(p, &ex, err, sizeof err);
            ck_assert_msg(f != NULL, "%s", err);
            ck_assert_int_eq(f->meta.generation, k);
            if (k == 1)
                ck_assert_str_eq(f->meta.model, "rollout");
            else
                ck_assert_ptr_nonnull(strstr(f->meta.model, "models/gen_"));
            ck_assert_int_gt(f->n, 16 * 5 - 1); /* 16 games of >= 5 moves */
            int32_t maxg = 0;
            for (int64_t i = 0; i < f->n; i++)
                maxg = f->gameix[i] > maxg ? f->gameix[i] : maxg;
            ck_assert_int_eq(maxg, 15);
            sp_file_free(f);
        }
        snprintf(rel, sizeof rel, "arena/gen_%04d.jsonl", k);
        ck_assert_msg(exists(pathf(p, sizeof p, rd, rel)) == (k <= gens), "%s", p);
        if (k <= gens) {
            text = slurp_rel(rd, rel);
            ck_assert_int_eq(count_lines(text), per_gen);
            free(text);
        }
    }
    /* arena.jsonl: every arena game, one JSON line each, the arena files in order */
    text = slurp_rel(rd, "arena.jsonl");
    ck_assert_int_eq(count_lines(text), per_gen * gens);
    size_t off = 0;
    for (int k = 1; k <= gens; k++) {
        snprintf(rel, sizeof rel, "arena/gen_%04d.jsonl", k);
        char *part = slurp_rel(rd, rel);
        ck_assert_msg(!strncmp(text + off, part, strlen(part)), "arena.jsonl: %s not in place", rel);
        off += strlen(part);
        free(part);
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_msg(o != NULL, "arena.jsonl: not JSON: %s", line);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "players")), 2);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "result")), 2);
        cJSON_Delete(o);
    }
    free(text);
    /* metrics.jsonl */
    ck_assert_int_ge(count_events(rd, "start"), 1);
    ck_assert_int_eq(count_events(rd, "selfplay"), gens);
    ck_assert_int_ge(count_events(rd, "train"), gens * 4); /* 20 steps, a line every 5 */
    ck_assert_int_eq(count_events(rd, "arena"), gens);
    ck_assert_int_eq(count_events(rd, "promote"), gens);
    ck_assert_int_ge(count_events(rd, "elo"), gens);
    /* ratings.csv: header, one row per player, random = 0 */
    text = slurp_rel(rd, "ratings.csv");
    ck_assert_msg(!strncmp(text, "name,elo,lo,hi,games,score\n", 27), "ratings.csv: %s", text);
    ck_assert_int_eq(count_lines(text), 1 + (gens + 1) + 2);
    ck_assert_ptr_nonnull(strstr(text, "\nrandom,0.0,"));
    ck_assert_ptr_nonnull(strstr(text, "\nperfect,"));
    for (int k = 0; k <= gens; k++) {
        char row[32];
        snprintf(row, sizeof row, "\ngen_%04d,", k);
        ck_assert_msg(strstr(text, row) != NULL, "ratings.csv lacks %s: %s", row + 1, text);
    }
    free(text);
    /* best and state.json: gate 0 promotes every candidate */
    text = slurp_rel(rd, "best");
    char want[64];
    snprintf(want, sizeof want, "models/gen_%04d.h5\n", gens);
    ck_assert_str_eq(text, want);
    free(text);
    text = slurp_rel(rd, "state.json");
    cJSON *s = cJSON_Parse(text);
    ck_assert_msg(s != NULL, "state.json: %s", text);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s, "generation")), gens);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "stage")), "done");
    want[strlen(want) - 1] = 0;
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "best")), want);
    cJSON_Delete(s);
    free(text);
    /* plots when gnuplot is there */
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        ck_assert(exists(pathf(p, sizeof p, rd, "elo.png")));
        ck_assert(exists(pathf(p, sizeof p, rd, "loss.png")));
    }
    ck_assert_int_eq(count_tmp(rd), 0);
    game_free(g);
}

/* Runs an `arena ... --json` command line; returns its last JSON line parsed (the
 * summary; the caller frees it), after printing it with `what`. */
static inline cJSON *arena_summary(const char *cmd, const char *what)
{
    FILE *pp = popen(cmd, "r");
    ck_assert_ptr_nonnull(pp);
    char line[4096], last[4096] = "";
    while (fgets(line, sizeof line, pp))
        if (line[0] == '{')
            snprintf(last, sizeof last, "%s", line);
    ck_assert_int_eq(pclose(pp), 0);
    fprintf(stderr, "%s: %s", what, last);
    cJSON *o = cJSON_Parse(last);
    ck_assert_msg(o != NULL, "no JSON summary from: %s", cmd);
    return o;
}

/* The tic-tac-toe acceptance of a finished default run in rd (issue 6): its best model
 * with 50 simulations never loses to `perfect` in 40 games with one random opening move,
 * its raw network (1 simulation a move) scores at least 30 of 40 against the random-init
 * gen_0000's, and no temporary is left. what names the test in the messages. */
static inline void check_learned_tictactoe(const char *rd, const char *what)
{
    char p[400];
    char *best = slurp_rel(rd, "best");
    best[strcspn(best, "\n")] = 0;
    char *ratings = slurp_rel(rd, "ratings.csv");
    fprintf(stderr, "%s: best %s; ratings.csv:\n%s", what, best, ratings);

    /* the acceptance match */
    const char *bin = getenv("GZ_BIN");
    ck_assert_ptr_nonnull(bin);
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "'%s' arena 'model:%s/%s:50' perfect --games 40 --set arena.opening_moves=1 --json "
             "--results '%s/acceptance.jsonl' 2>/dev/null",
             bin, rd, best, rd);
    cJSON *o = arena_summary(cmd, what);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "games")), 40);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "players"), 0);
    ck_assert_ptr_nonnull(m);
    int losses = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "losses"));
    int wins = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "wins"));
    int draws = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "draws"));
    ck_assert_int_eq(wins + draws + losses, 40);
    if (losses > 0) {
        /* keep the run for a look, and show the lost games */
        snprintf(cmd, sizeof cmd,
                 "rm -rf /tmp/gz_test_run_slow_kept && cp -r '%s' /tmp/gz_test_run_slow_kept && "
                 "grep -v '\"result\": *\\[0, *0\\]' '%s/acceptance.jsonl' >&2",
                 rd, rd);
        fprintf(stderr, "%s: the run is kept in /tmp/gz_test_run_slow_kept; games "
                "not drawn:\n", what);
        fflush(stderr);
        ck_assert_int_ge(system(cmd), 0);
    }
    ck_assert_msg(losses == 0, "%s lost %d of 40 games to perfect", best, losses);
    cJSON_Delete(o);

    /* learning, with the search taken out: at 50 simulations tic-tac-toe's search (and its
     * solver) plays nearly perfectly on random weights too, so the ladder cannot tell the
     * best model from gen_0000 (both rate level with perfect). At 1 simulation a move the
     * raw networks play: the trained one must beat the random-init one clearly (measured:
     * 37-3-0 and 40-0-0 on two seeds; gen_0000 alone loses 25 of 40 to perfect). */
    snprintf(cmd, sizeof cmd,
             "'%s' arena 'model:%s/%s:1' 'model:%s/models/gen_0000.h5:1' --games 40 --seed 3 "
             "--json 2>/dev/null",
             bin, rd, best, rd);
    cJSON *r = arena_summary(cmd, what);
    const cJSON *rb = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "players"), 0);
    ck_assert_ptr_nonnull(rb);
    double rw = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rb, "wins"));
    double rdr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rb, "draws"));
    ck_assert_msg(rw + rdr / 2 >= 30, "the raw network of %s scored %.1f of 40 against "
                  "gen_0000's", best, rw + rdr / 2);
    cJSON_Delete(r);
    ck_assert_int_eq(count_tmp(rd), 0);
    ck_assert(exists(pathf(p, sizeof p, rd, "state.json")));
    free(best);
    free(ratings);
}

/* The simulated crash points (GZ_RUN_CRASH_AFTER) of a 2-generation run. */
enum {
    RUN_CRASH_1_SELFPLAY, RUN_CRASH_1_TRAIN, RUN_CRASH_1_ARENA, RUN_CRASH_1_PROMOTE,
    RUN_CRASH_2_SELFPLAY, RUN_CRASH_2_TRAIN, RUN_CRASH_2_ARENA, RUN_CRASH_2_PROMOTE
};

/* A fresh 2-generation run dies at crash point i; the same command again finishes,
 * rewrites no finished stage file, ignores planted stale temporaries, leaves no .tmp,
 * and ends with the uninterrupted run ref's arena.jsonl, ratings.csv and best. */
static inline void crash_and_resume(const char *ref, int i)
{
    static const char *const points[] = {"1:selfplay", "1:train", "1:arena", "1:promote",
                                         "2:selfplay", "2:train", "2:arena", "2:promote"};
    /* the file each point has just finished, and the next one (not there yet) */
    static const char *const done[] = {"data/gen_0001.h5", "models/gen_0001.h5",
                                       "arena/gen_0001.jsonl", "best", "data/gen_0002.h5",
                                       "models/gen_0002.h5", "arena/gen_0002.jsonl", "best"};
    static const char *const next[] = {"models/gen_0001.h5", "arena/gen_0001.jsonl", "ratings.csv",
                                       "data/gen_0002.h5", "models/gen_0002.h5",
                                       "arena/gen_0002.jsonl", NULL, NULL};
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/crash%d", dir, i);
    int rc = gz_run(rd, 2, points[i], NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "%s: exit %d, not killed:\n%s", points[i], rc, out);
    ck_assert_msg(strstr(out, "test hook: killed after") != NULL, "%s", out);
    ck_assert_msg(exists(pathf(p, sizeof p, rd, done[i])), "%s: no %s", points[i], done[i]);
    if (next[i])
        ck_assert_msg(!exists(pathf(p, sizeof p, rd, next[i])), "%s: %s already there", points[i],
                      next[i]);
    snapshot snap;
    take_snapshot(rd, 2, &snap);
    /* stale temporaries a kill inside a stage would leave: never taken for complete */
    const char *stale[] = {"data/gen_0002.h5.tmp", "models/gen_0002.h5.tmp",
                           "arena/gen_0002.jsonl.tmp", "ratings.csv.tmp"};
    for (int k = 0; k < 4; k++) {
        FILE *f = fopen(pathf(p, sizeof p, rd, stale[k]), "wb");
        ck_assert_ptr_nonnull(f);
        fputs("partial", f);
        fclose(f);
    }
    /* and a torn last line in metrics.jsonl (a kill inside a long write) */
    FILE *f = fopen(pathf(p, sizeof p, rd, "metrics.jsonl"), "ab");
    ck_assert_ptr_nonnull(f);
    fputs("{\"event\":\"elo\",\"generation\":1,\"ratings\":[{\"na", f);
    fclose(f);
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "%s: resume exit %d:\n%s", points[i], rc, out);
    check_unchanged(rd, &snap, points[i]);
    check_run_dir(rd, 2);
    check_same_file(ref, rd, "arena.jsonl");
    check_same_file(ref, rd, "ratings.csv");
    check_same_file(ref, rd, "best");
}

/* A fresh 2-generation run killed (SIGKILL) `times` times, after kill_ms, kill_ms - 300,
 * ... milliseconds, then left to finish: the same ladder as the uninterrupted run ref. */
static inline void kill_and_resume(const char *ref, int kill_ms, int times)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/kill%d", dir, kill_ms);
    for (int k = 0; k < times; k++)
        gz_run(rd, 2, NULL, NULL, kill_ms - 300 * k, NULL, 0);
    int rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "killed at %d ms: resume exit %d:\n%s", kill_ms, rc, out);
    check_run_dir(rd, 2);
    check_same_file(ref, rd, "arena.jsonl");
    check_same_file(ref, rd, "ratings.csv");
    check_same_file(ref, rd, "best");
}

/* ---- a full disk (enospc_util.h) ---- */

static inline void fresh_run_dir(const char *rd)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rd);
    ck_assert_int_eq(system(cmd), 0);
}

/* After a run that failed on a full disk: the same command, space back, finishes. */
static inline void resume_after_disk_full(const char *rd, int k)
{
    char out[16384];
    int rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "resume after write %d failed: exit %d:\n%s", k, rc, out);
    check_run_dir(rd, 1);
}

/* A 1-generation tiny run with every stride-th HDF5 write (and the last) failing on a
 * full disk in turn: each exits 1 with a message and no .tmp, and resumes to the end.
 * Returns the number of failure points tried. */
static inline int run_disk_full_sweep(int stride)
{
    char rd[300];
    snprintf(rd, sizeof rd, "%s/full", dir);
    const char *args[MAXARGS];
    int n = 0;
    const char *head[] = {"run", "-o", rd, "--generations", "1"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        args[n++] = head[i];
    for (int i = 0; tiny[i]; i++)
        args[n++] = tiny[i];
    args[n] = NULL;
    return enospc_sweep("run -o RUN_DIR", args, rd, dir, stride, fresh_run_dir,
                        resume_after_disk_full);
}

#endif
