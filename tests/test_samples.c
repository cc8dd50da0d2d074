/* Sample files: round trip through the one writer and reader, attributes, the .tmp
 * protocol, corrupt / truncated / mismatched files (a message naming the file, never a
 * crash), forged sample counts (refused before any allocation) and values that are not
 * a training target (refused naming the dataset and the sample). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "enospc_util.h"
#include "sample_gen.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/gz_test_samples_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

START_TEST(round_trip)
{
    game *g = gen_mnk(15, 15, 5); /* 1125-byte states: several chunks */
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/a.h5", dir);
    sp_meta meta = {7, "models/gen006.h5"};
    sp_writer *w = sp_writer_open(path, g, "{\"name\":\"mnk\",\"rows\":15}", &meta, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    rng r;
    rng_seed(&r, 1);
    const int n = 700;
    int hw = 225, sz = 5 * hw;
    float *planes = malloc(sizeof(float) * n * sz), *pi = malloc(sizeof(float) * n * hw);
    float *z = malloc(sizeof(float) * n * 2);
    uint8_t *legal = malloc((size_t)n * hw);
    for (int i = 0; i < n * sz; i++)
        planes[i] = i % 3 == 0 ? (float)rng_uniform(&r) : (float)(rng_below(&r, 2));
    for (int i = 0; i < n * hw; i++) {
        legal[i] = rng_below(&r, 4) != 0 || i % hw == 0; /* never an all-zero mask */
        pi[i] = legal[i] ? (float)rng_uniform(&r) : 0;
    }
    for (int i = 0; i < n; i++) { /* pi a distribution over the legal moves */
        double sum = 0;
        for (int a = 0; a < hw; a++)
            sum += pi[i * hw + a];
        for (int a = 0; a < hw; a++)
            pi[i * hw + a] = (float)(pi[i * hw + a] / sum);
    }
    for (int i = 0; i < n; i++) { /* zero-sum outcomes */
        z[i * 2] = (float)(rng_below(&r, 3)) - 1.0f;
        z[i * 2 + 1] = -z[i * 2];
    }
    for (int i = 0; i < n; i++) {
        ck_assert(sp_writer_append(w, planes + (size_t)i * sz, pi + (size_t)i * hw, legal + (size_t)i * hw,
                                   z + i * 2, i / 10, i % 10, err, sizeof err) == 0);
        /* never a complete-looking file while writing */
        if (i == 400) {
            ck_assert(!exists(path));
            char tmp[310];
            snprintf(tmp, sizeof tmp, "%s.tmp", path);
            ck_assert(exists(tmp));
            ck_assert_ptr_null(sp_file_read(tmp, NULL, err, sizeof err));
            ck_assert_msg(strstr(err, tmp) != NULL, "%s", err);
        }
    }
    ck_assert_int_eq(sp_writer_count(w), n);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    ck_assert(exists(path));
    sp_expect e = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, n);
    ck_assert_str_eq(f->game, "mnk");
    ck_assert_str_eq(f->game_config, "{\"name\":\"mnk\",\"rows\":15}");
    ck_assert_int_eq(f->meta.generation, 7);
    ck_assert_str_eq(f->meta.model, "models/gen006.h5");
    ck_assert_int_eq(f->planes, 5);
    ck_assert_int_eq(f->rows, 15);
    ck_assert_int_eq(f->cols, 15);
    ck_assert_int_eq(f->actions, 225);
    ck_assert_int_eq(f->players, 2);
    ck_assert_int_eq(f->lattice, GAME_LATTICE_SQUARE);
    for (int i = 0; i < n * sz; i++) {
        ck_assert_int_eq(f->state[i], (int)lrintf(planes[i] * 255));
        if (planes[i] == 0.0f || planes[i] == 1.0f)
            ck_assert(f->state[i] / 255.0f == planes[i]); /* binary planes exact */
    }
    ck_assert(memcmp(f->pi, pi, sizeof(float) * n * hw) == 0);
    ck_assert(memcmp(f->legal, legal, (size_t)n * hw) == 0);
    ck_assert(memcmp(f->z, z, sizeof(float) * n * 2) == 0);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(f->gameix[i], i / 10);
        ck_assert_int_eq(f->ply[i], i % 10);
    }
    sp_file_free(f);
    free(planes), free(pi), free(z), free(legal);
    game_free(g);
}
END_TEST

START_TEST(random_games_and_abort)
{
    game *g = gen_mnk(3, 3, 3);
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/ttt.h5", dir);
    int64_t n = gen_random_games(g, path, 20, 5, 1);
    ck_assert(n >= 20 * 5);
    sp_expect e = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, n);
    /* every pi sums to 1 over legal moves; z mover-first sums to 0 in a 2-player game */
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int a = 0; a < 9; a++)
            s += f->legal[i * 9 + a] ? f->pi[i * 9 + a] : 0;
        ck_assert(fabs(s - 1) < 1e-5);
        ck_assert(f->z[i * 2] == -f->z[i * 2 + 1]);
    }
    sp_file_free(f);
    /* abort leaves nothing */
    char p2[300], tmp[310];
    snprintf(p2, sizeof p2, "%s/aborted.h5", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p2);
    sp_writer *w = sp_writer_open(p2, g, NULL, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    ck_assert(exists(tmp));
    sp_writer_abort(w);
    ck_assert(!exists(tmp) && !exists(p2));
    /* the writer refuses non-probabilities and out-of-range outcomes */
    w = sp_writer_open(p2, g, NULL, NULL, err, sizeof err);
    float planes[45] = {0}, pi[9] = {0}, z[2] = {0};
    uint8_t legal[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    pi[3] = NAN;
    ck_assert_int_eq(sp_writer_append(w, planes, pi, legal, z, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "pi") != NULL, "%s", err);
    pi[3] = 0;
    z[1] = 2;
    ck_assert_int_eq(sp_writer_append(w, planes, pi, legal, z, 0, 0, err, sizeof err), -1);
    sp_writer_abort(w);
    ck_assert(!exists(tmp));
    game_free(g);
}
END_TEST

static void copy_prefix(const char *src, const char *dst, long len)
{
    FILE *a = fopen(src, "rb"), *b = fopen(dst, "wb");
    ck_assert(a && b);
    for (long i = 0; i < len; i++) {
        int c = fgetc(a);
        if (c == EOF)
            break;
        fputc(c, b);
    }
    fclose(a);
    fclose(b);
}

START_TEST(corrupt_truncated_mismatched)
{
    game *g = gen_mnk(3, 3, 3);
    char path[300], bad[300], err[512];
    snprintf(path, sizeof path, "%s/good.h5", dir);
    gen_random_games(g, path, 30, 9, 0);
    struct stat st;
    ck_assert(stat(path, &st) == 0);
    sp_expect e = sp_expect_game(g);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    /* truncated at many lengths */
    for (long len = 0; len < st.st_size; len += st.st_size / 23 + 1) {
        copy_prefix(path, bad, len);
        sp_file *f = sp_file_read(bad, &e, err, sizeof err);
        ck_assert_msg(f == NULL, "a file truncated to %ld of %ld bytes was accepted", len, (long)st.st_size);
        ck_assert_msg(strstr(err, bad) != NULL, "message does not name the file: %s", err);
    }
    /* bytes overwritten anywhere: an error naming the file, or (when only unused bytes
     * were hit) the same data; never a crash, never silently different data (checksums) */
    sp_file *orig = sp_file_read(path, &e, err, sizeof err);
    ck_assert_ptr_nonnull(orig);
    for (int k = 0; k < 20; k++) {
        copy_prefix(path, bad, st.st_size);
        FILE *fp = fopen(bad, "r+b");
        long at = (long)((k * 7919L) % st.st_size);
        fseek(fp, at, SEEK_SET);
        for (int j = 0; j < 64; j++)
            fputc((j * 37 + k) & 0xff, fp);
        fclose(fp);
        sp_file *f = sp_file_read(bad, &e, err, sizeof err);
        if (!f)
            ck_assert_msg(strstr(err, bad) != NULL, "%s", err);
        else
            ck_assert_msg(f->n == orig->n && !memcmp(f->pi, orig->pi, sizeof(float) * f->n * 9) &&
                              !memcmp(f->state, orig->state, (size_t)f->n * 45) &&
                              !memcmp(f->legal, orig->legal, (size_t)f->n * 9) &&
                              !memcmp(f->z, orig->z, sizeof(float) * f->n * 2) &&
                              !memcmp(f->gameix, orig->gameix, sizeof *f->gameix * f->n) &&
                              !memcmp(f->ply, orig->ply, sizeof *f->ply * f->n) &&
                              f->meta.generation == orig->meta.generation &&
                              !strcmp(f->game_config, orig->game_config),
                          "damage at %ld went unnoticed", at);
        sp_file_free(f);
    }
    sp_file_free(orig);
    /* not HDF5 at all */
    FILE *fp = fopen(bad, "w");
    fputs("hello, not a sample file\n", fp);
    fclose(fp);
    ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
    ck_assert(strstr(err, bad) && strstr(err, "HDF5"));
    /* missing file */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    ck_assert_ptr_null(sp_file_read(missing, &e, err, sizeof err));
    ck_assert(strstr(err, missing) != NULL);
    /* another game's shape: refused by name, naming the field */
    game *g5 = gen_mnk(5, 5, 4);
    char other[300];
    snprintf(other, sizeof other, "%s/other.h5", dir);
    gen_random_games(g5, other, 2, 3, 0);
    ck_assert_ptr_null(sp_file_read(other, &e, err, sizeof err));
    ck_assert_msg(strstr(err, other) && strstr(err, "rows is 5, expected 3"), "%s", err);
    sp_expect e2 = e;
    snprintf(e2.game, sizeof e2.game, "sanling");
    ck_assert_ptr_null(sp_file_read(path, &e2, err, sizeof err));
    ck_assert_msg(strstr(err, "game mnk, expected sanling"), "%s", err);
    e2 = e;
    e2.lattice = GAME_LATTICE_HEX;
    ck_assert_ptr_null(sp_file_read(path, &e2, err, sizeof err));
    ck_assert_msg(strstr(err, "lattice is square, expected hex"), "%s", err);
    game_free(g5);
    game_free(g);
}
END_TEST

/* Sets dimension 0 of every dataset named in names (NULL-terminated) of the sample file
 * path to n, writing nothing: the "declares more than it holds" forgery. */
static void forge_extent(const char *path, const char *const *names, hsize_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    for (int i = 0; names[i]; i++) {
        hid_t d = H5Dopen2(f, names[i], H5P_DEFAULT);
        ck_assert_int_ge(d, 0);
        hid_t sp = H5Dget_space(d);
        hsize_t dims[4];
        int r = H5Sget_simple_extent_dims(sp, dims, NULL);
        ck_assert_int_ge(r, 1);
        dims[0] = n;
        ck_assert_int_ge(H5Dset_extent(d, dims), 0);
        H5Sclose(sp);
        H5Dclose(d);
    }
    ck_assert_int_ge(H5Fclose(f), 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A small file that declares millions of samples it never wrote, or datasets of
 * different lengths: refused at once (well under 1 s, well under 100 MB), by name. */
START_TEST(declared_count_refused)
{
    game *g = gen_mnk(3, 3, 3);
    char good[300], bad[300], err[512];
    snprintf(good, sizeof good, "%s/good.h5", dir);
    snprintf(bad, sizeof bad, "%s/forged.h5", dir);
    int64_t n = gen_random_games(g, good, 10, 4, 0);
    struct stat st;
    ck_assert(stat(good, &st) == 0);
    sp_expect e = sp_expect_game(g);
    const char *all[] = {"state", "pi", "legal", "z", "game", "ply", "policy_weight", NULL};
    const hsize_t counts[] = {3000000, 1u << 24, (hsize_t)1 << 36};
    for (int k = 0; k < 3; k++) {
        copy_prefix(good, bad, st.st_size);
        forge_extent(bad, all, counts[k]);
        long rss0 = peak_rss_kb();
        double t0 = now_s();
        sp_file *f = sp_file_read(bad, &e, err, sizeof err);
        double dt = now_s() - t0;
        long grew = peak_rss_kb() - rss0;
        ck_assert_msg(f == NULL, "%llu declared samples accepted", (unsigned long long)counts[k]);
        ck_assert_msg(strstr(err, bad) && strstr(err, "declares"), "%s", err);
        ck_assert_msg(dt < 1.0, "%llu declared samples: refused after %.2f s", (unsigned long long)counts[k], dt);
        ck_assert_msg(grew < 100 * 1024, "%llu declared samples: memory grew by %ld KB",
                      (unsigned long long)counts[k], grew);
    }
    /* one dataset longer than the others: refused before any is read */
    copy_prefix(good, bad, st.st_size);
    const char *one[] = {"z", NULL};
    forge_extent(bad, one, (hsize_t)n + 5);
    ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
    ck_assert_msg(strstr(err, bad) && strstr(err, "dataset z") && strstr(err, "samples"), "%s", err);
    /* shorter: the same */
    copy_prefix(good, bad, st.st_size);
    const char *two[] = {"ply", NULL};
    forge_extent(bad, two, (hsize_t)n - 1);
    ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
    ck_assert_msg(strstr(err, bad) && strstr(err, "dataset ply"), "%s", err);
    /* resignation records declared and never written: refused before the buffers */
    copy_prefix(good, bad, st.st_size);
    hid_t hf = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(hf, 0);
    hsize_t rdims[2] = {1u << 24, 2};
    hid_t rs = H5Screate_simple(2, rdims, NULL);
    hid_t rd = H5Dcreate2(hf, "resign_checks", H5T_IEEE_F32LE, rs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(rd, 0);
    H5Dclose(rd), H5Sclose(rs);
    ck_assert_int_ge(H5Fclose(hf), 0);
    sp_resign_check *rc_out = NULL;
    int nrc = -1;
    long rss0 = peak_rss_kb();
    ck_assert_int_eq(sp_read_resign_checks(bad, &rc_out, &nrc, err, sizeof err), -1);
    ck_assert_msg(peak_rss_kb() - rss0 < 100 * 1024, "memory grew reading forged resign_checks");
    ck_assert_msg(strstr(err, bad) && strstr(err, "resign_checks") && strstr(err, "declares"), "%s", err);
    ck_assert_ptr_null(rc_out);
    /* the untouched file still reads */
    sp_file *f = sp_file_read(good, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->n, n);
    sp_file_free(f);
    game_free(g);
}
END_TEST

/* Overwrites `count` values of sample `sample` of dataset name (float or uint8 rows)
 * in a copy of src at dst, through HDF5 (so the checksums stay right). */
static void forge_row(const char *src, const char *dst, const char *name, hsize_t sample,
                      const void *vals, hsize_t count, int is_float)
{
    struct stat st;
    ck_assert(stat(src, &st) == 0);
    copy_prefix(src, dst, st.st_size);
    hid_t f = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    ck_assert_int_ge(d, 0);
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {sample, 0}, cnt[2] = {1, count};
    ck_assert_int_ge(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL), 0);
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    ck_assert_int_ge(H5Dwrite(d, is_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT,
                              vals), 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    ck_assert_int_ge(H5Fclose(f), 0);
}

/* Values that are not a training target: refused with the file, the dataset and the
 * sample named. */
START_TEST(bad_values_refused)
{
    game *g = gen_mnk(3, 3, 3);
    char good[300], bad[300], err[512];
    snprintf(good, sizeof good, "%s/good.h5", dir);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    gen_random_games(g, good, 10, 4, 0);
    sp_expect e = sp_expect_game(g);
    sp_file *orig = sp_file_read(good, &e, err, sizeof err);
    ck_assert_msg(orig != NULL, "%s", err);
    const int s = 3; /* a sample at ply 3 (of game 0): 6 empty points */
    ck_assert_int_eq(orig->ply[s], 3);
    const uint8_t *lg = orig->legal + s * 9;
    int on = -1, off = -1;
    for (int a = 0; a < 9; a++) {
        if (lg[a] && on < 0)
            on = a;
        if (!lg[a] && off < 0)
            off = a;
    }
    ck_assert(on >= 0 && off >= 0);
    struct {
        const char *what, *ds, *want;
        float pi[9];
        uint8_t legal[9];
        float z[2];
    } cases[] = {
        {"all-zero legal mask", "legal", "no legal move", {0}, {0}, {0}},
        {"legal entry 2", "legal", "not 0/1", {0}, {2, 1, 1, 1, 1, 1, 1, 1, 1}, {0}},
        {"pi on an illegal move", "pi", "illegal", {0}, {0}, {0}},
        {"pi sums to 0.5", "pi", "sums to 0.5", {0}, {0}, {0}},
        {"pi all zero", "pi", "sums to 0", {0}, {0}, {0}},
        {"pi negative", "pi", "not a probability", {0}, {0}, {0}},
        {"pi NaN", "pi", "not a probability", {0}, {0}, {0}},
        {"pi 3e38", "pi", "sums to", {0}, {0}, {0}},
        {"z 2", "z", "not in [-1, 1]", {0}, {0}, {2, -1}},
        {"z NaN", "z", "not in [-1, 1]", {0}, {0}, {NAN, 0}},
        {"z both win", "z", "sum to 2", {0}, {0}, {1, 1}},
    };
    int nc = (int)(sizeof cases / sizeof cases[0]);
    for (int k = 0; k < nc; k++) {
        float pi[9];
        memcpy(pi, orig->pi + s * 9, sizeof pi);
        if (!strcmp(cases[k].ds, "legal")) {
            forge_row(good, bad, "legal", s, cases[k].legal, 9, 0);
        } else if (!strcmp(cases[k].ds, "z")) {
            forge_row(good, bad, "z", s, cases[k].z, 2, 1);
        } else {
            if (k == 2)
                pi[off] = 0.25f;
            else if (k == 3)
                for (int a = 0; a < 9; a++)
                    pi[a] *= 0.5f;
            else if (k == 4)
                memset(pi, 0, sizeof pi);
            else if (k == 5)
                pi[on] = -pi[on] - 0.1f;
            else if (k == 6)
                pi[on] = NAN;
            else
                pi[on] = 3e38f;
            forge_row(good, bad, "pi", s, pi, 9, 1);
        }
        ck_assert_msg(sp_file_read(bad, &e, err, sizeof err) == NULL, "%s: accepted", cases[k].what);
        char ds[32];
        snprintf(ds, sizeof ds, "dataset %s", cases[k].ds);
        ck_assert_msg(strstr(err, bad) && strstr(err, ds) && strstr(err, "sample 3") &&
                          strstr(err, cases[k].want),
                      "%s: %s", cases[k].what, err);
    }
    /* within tolerance: a distribution off by float rounding is fine */
    float pi[9];
    memcpy(pi, orig->pi + s * 9, sizeof pi);
    pi[on] += 1e-5f;
    forge_row(good, bad, "pi", s, pi, 9, 1);
    sp_file *f = sp_file_read(bad, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    sp_file_free(f);
    sp_file_free(orig);
    game_free(g);
}
END_TEST

static void fresh_dir(const char *d)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", d, d);
    ck_assert_int_eq(system(cmd), 0);
}

/* A full disk at every write of a sample file (`gridzero selfplay -o`, three chunks):
 * exit 1 with a message, no crash in HDF5's exit handler, no .tmp left, and never a
 * file renamed into place when its last write failed. */
START_TEST(writer_disk_full)
{
    char outdir[300], file[400];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    snprintf(file, sizeof file, "%s/a.h5", outdir);
    const char *args[] = {"selfplay", "--set", "selfplay.games=300", "--set", "selfplay.threads=1",
                          "--set", "mcts.simulations=8", "-o", file, NULL};
    int tried = enospc_sweep("selfplay -o FILE", args, outdir, dir, 1, fresh_dir, NULL);
    ck_assert_int_ge(tried, 9);
    ck_assert(!exists(file));
}
END_TEST

static Suite *samples_suite(void)
{
    Suite *s = suite_create("samples");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, random_games_and_abort);
    tcase_add_test(tc, corrupt_truncated_mismatched);
    tcase_add_test(tc, declared_count_refused);
    tcase_add_test(tc, bad_values_refused);
    tcase_add_test(tc, writer_disk_full);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(samples_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
