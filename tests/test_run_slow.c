/* gridzero run, the long checks (suite 'slow'):
 * - learning: the tic-tac-toe acceptance of issue 6 — the built-in default config run to
 *   the end, then its best model with 50 simulations never loses to `perfect` over 40
 *   games with one random opening move (two random moves can hand a lost position to
 *   either side), and the ladder ends above the random-init generation 0;
 * - the simulated crash points test_run.c leaves out, and kill -9 at more moments;
 * - a real full disk: run, selfplay and train on small tmpfs mounts (root only; skipped
 *   with a message otherwise). */
#include <math.h>
#include <sys/mount.h>

#include "run_util.h"

START_TEST(learns_tictactoe)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/tictactoe", dir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = gz_run_base(rd, 0, NULL, NULL, NULL, 0, out, sizeof out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    fprintf(stderr, "learns_tictactoe: the default run took %.0f s\n", secs);
    check_learned_tictactoe(rd, "learns_tictactoe");
}
END_TEST

START_TEST(resume_after_crash_more)
{
    char ref[300], out[16384];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    int rc = gz_run(ref, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const int points[] = {RUN_CRASH_1_PROMOTE, RUN_CRASH_2_SELFPLAY, RUN_CRASH_2_TRAIN,
                          RUN_CRASH_2_ARENA};
    for (size_t i = 0; i < sizeof points / sizeof *points; i++)
        crash_and_resume(ref, points[i]);
    const int kill_ms[] = {700, 2000, 3000};
    for (size_t i = 0; i < sizeof kill_ms / sizeof *kill_ms; i++)
        kill_and_resume(ref, kill_ms[i], 3);
}
END_TEST

/* A full disk at every 7th HDF5 write of a 1-generation run (test_run.c tries five):
 * exit 1, a message, no .tmp, and the run then resumes to the end. */
START_TEST(run_disk_full_more)
{
    ck_assert_int_ge(run_disk_full_sweep(7), 20);
}
END_TEST

/* Runs GZ_BIN with args (NULL-terminated), output into out; exit status or 128+signal. */
static int run_bin(const char *const *args, char *out, size_t outlen)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_ptr_nonnull(bin);
    char cmd[2048] = "";
    size_t off = (size_t)snprintf(cmd, sizeof cmd, "'%s'", bin);
    for (int i = 0; args[i]; i++)
        off += (size_t)snprintf(cmd + off, sizeof cmd - off, " '%s'", args[i]);
    snprintf(cmd + off, sizeof cmd - off, " 2>&1");
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One command on a fresh tmpfs of `size` at mnt; the mount is gone when it returns
 * (nothing is asserted while it is mounted, so a failure cannot leave it behind).
 * keep (may be NULL): the tmpfs's "run" directory is first copied there. Returns the
 * command's exit status, or -1 when the tmpfs cannot be mounted; *tmps: .tmp files left. */
static int on_tmpfs(const char *mnt, const char *size, const char *const *args, const char *keep,
                    char *out, size_t outlen, int *tmps)
{
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    mkdir(mnt, 0755);
    if (mount("tmpfs", mnt, "tmpfs", 0, opts) != 0)
        return -1;
    int rc = run_bin(args, out, outlen);
    *tmps = count_tmp(mnt);
    if (keep) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s/run' '%s' 2>/dev/null", keep, mnt, keep);
        if (system(cmd) != 0)
            rc = 1000 + rc; /* no run directory to resume (refused before making it) */
    }
    umount(mnt);
    return rc;
}

/* A full disk for real: `run` (tiny: 270 KB in all) on tmpfs of 24 to 260 KB, `selfplay
 * -o` on 16 KB and `train -o` on 200 KB each end with exit 0 or 1 (never a signal), a
 * message when 1, no .tmp left; each run then resumes to the end once there is space (a
 * copy of its directory on the big disk); on a read-only disk run and selfplay exit 1.
 * Needs root for the mounts: skipped with a message otherwise. */
START_TEST(disk_full_tmpfs)
{
    char mnt[300], keep[300], out[16384];
    snprintf(mnt, sizeof mnt, "%s/mnt", dir);
    int tmps = 0;
    const char *probe[] = {"--version", NULL};
    if (geteuid() != 0 || on_tmpfs(mnt, "16k", probe, NULL, out, sizeof out, &tmps) < 0) {
        fprintf(stderr, "disk_full_tmpfs: skipped: mounting a tmpfs needs root\n");
        return;
    }
    char rundir[400], file[400], data[400];
    snprintf(rundir, sizeof rundir, "%s/run", mnt);
    const char *sizes[] = {"24k", "64k", "100k", "150k", "200k", "260k"}; /* the run: 270 KB */
    int failed = 0;
    for (int k = 0; k < 6; k++) {
        const char *args[MAXARGS];
        int n = 0;
        const char *head[] = {"run", "-o", rundir, "--generations", "2"};
        for (int i = 0; i < 5; i++)
            args[n++] = head[i];
        for (int i = 0; tiny[i]; i++)
            args[n++] = tiny[i];
        args[n] = NULL;
        snprintf(keep, sizeof keep, "%s/kept_%s", dir, sizes[k]);
        int rc = on_tmpfs(mnt, sizes[k], args, keep, out, sizeof out, &tmps);
        ck_assert_msg(rc == 0 || rc == 1, "run on a %s tmpfs: exit %d:\n%s", sizes[k], rc, out);
        ck_assert_msg(rc == 0 || strstr(out, "gridzero: run:"), "%s: %s", sizes[k], out);
        ck_assert_msg(tmps == 0, "run on a %s tmpfs left %d .tmp files", sizes[k], tmps);
        fprintf(stderr, "disk_full_tmpfs: run on %s: exit %d%s%.*s\n", sizes[k], rc, rc ? ": " : "",
                rc ? (int)strcspn(strstr(out, "gridzero: run:"), "\n") : 0,
                rc ? strstr(out, "gridzero: run:") : "");
        failed += rc == 1;
        rc = gz_run(keep, 2, NULL, NULL, 0, out, sizeof out);
        ck_assert_msg(rc == 0, "resume of the %s run: exit %d:\n%s", sizes[k], rc, out);
        check_run_dir(keep, 2);
    }
    ck_assert_int_ge(failed, 4);
    /* selfplay on 16 KB */
    snprintf(file, sizeof file, "%s/a.h5", mnt);
    const char *sp[] = {"selfplay", "--set", "selfplay.games=20", "--set", "selfplay.threads=1",
                        "--set", "mcts.simulations=16", "-o", file, NULL};
    int rc = on_tmpfs(mnt, "16k", sp, NULL, out, sizeof out, &tmps);
    ck_assert_msg(rc == 1 && strstr(out, "gridzero: selfplay:") && tmps == 0,
                  "selfplay on 16 KB: exit %d, %d .tmp:\n%s", rc, tmps, out);
    /* train (the default net with its optimizer state: 360 KB) on 200 KB */
    snprintf(data, sizeof data, "%s/kept_%s/data/gen_0001.h5", dir, sizes[5]);
    snprintf(file, sizeof file, "%s/m.h5", mnt);
    const char *tr[] = {"train", "--data", data, "-o", file, "--steps", "2", NULL};
    rc = on_tmpfs(mnt, "200k", tr, NULL, out, sizeof out, &tmps);
    ck_assert_msg(rc == 1 && strstr(out, "gridzero:") && strstr(out, "m.h5") && tmps == 0,
                  "train on 200 KB: exit %d, %d .tmp:\n%s", rc, tmps, out);
    /* a read-only disk is a run-time failure too (exit 1), not bad input (2) */
    ck_assert_int_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=1m"), 0);
    const char *mk[] = {"run", "-o", rundir, "--generations", "1", "--set", "arena.games=0",
                        "--set", "selfplay.games=2", "--set", "train.steps=2", NULL};
    int made = run_bin(mk, out, sizeof out);
    int ro = mount("tmpfs", mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL);
    char out2[4096] = "";
    int rc_run = run_bin(mk, out, sizeof out);
    snprintf(file, sizeof file, "%s/b.h5", mnt);
    const char *sp2[] = {"selfplay", "--set", "selfplay.games=2", "-o", file, NULL};
    int rc_sp = run_bin(sp2, out2, sizeof out2);
    umount(mnt);
    ck_assert_int_eq(made, 0);
    ck_assert_int_eq(ro, 0);
    ck_assert_msg(rc_run == 1 && strstr(out, "Read-only"), "run on a read-only disk: exit %d:\n%s",
                  rc_run, out);
    ck_assert_msg(rc_sp == 1 && strstr(out2, "Read-only"), "selfplay on a read-only disk: exit %d:\n%s",
                  rc_sp, out2);
}
END_TEST

static Suite *run_slow_suite(void)
{
    Suite *s = suite_create("run_slow");
    TCase *tc = tcase_create("slow");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, learns_tictactoe);
    tcase_add_test(tc, resume_after_crash_more);
    tcase_add_test(tc, disk_full_tmpfs);
    tcase_add_test(tc, run_disk_full_more);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(run_slow_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
