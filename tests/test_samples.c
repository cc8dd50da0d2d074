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

#include "cli_util.h"
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
    ck_assert_ptr_nonnull(orig->owner);
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
                              f->owner && !memcmp(f->owner, orig->owner, (size_t)f->n * 9) &&
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
    const char *all[] = {"state", "pi", "legal", "z", "game", "ply", "policy_weight", "q", "owner", NULL};
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
    /* the owner targets alone longer: the same */
    copy_prefix(good, bad, st.st_size);
    const char *three[] = {"owner", NULL};
    forge_extent(bad, three, (hsize_t)n + 1);
    ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
    ck_assert_msg(strstr(err, bad) && strstr(err, "dataset owner") && strstr(err, "samples"), "%s", err);
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

/* Overwrites `count` values of sample `sample` of dataset name (rows of the memory type
 * mem) in a copy of src at dst, through HDF5 (so the checksums stay right). */
static void forge_row(const char *src, const char *dst, const char *name, hsize_t sample,
                      const void *vals, hsize_t count, hid_t mem)
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
    ck_assert_int_ge(H5Dwrite(d, mem, ms, fs, H5P_DEFAULT, vals), 0);
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
            forge_row(good, bad, "legal", s, cases[k].legal, 9, H5T_NATIVE_UINT8);
        } else if (!strcmp(cases[k].ds, "z")) {
            forge_row(good, bad, "z", s, cases[k].z, 2, H5T_NATIVE_FLOAT);
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
            forge_row(good, bad, "pi", s, pi, 9, H5T_NATIVE_FLOAT);
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
    forge_row(good, bad, "pi", s, pi, 9, H5T_NATIVE_FLOAT);
    sp_file *f = sp_file_read(bad, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    sp_file_free(f);
    sp_file_free(orig);
    game_free(g);
}
END_TEST

/* ---- owner targets (format 4) ---- */

/* Small three-player Sanling (5 x 5 points, 25 actions): owner codes 0..3. */
static game *owner_game(const char *name)
{
    gz_config c;
    cfg_defaults(&c, name);
    if (!strcmp(name, "sanling")) {
        c.game.size = 5;
        c.game.players = 3;
        c.game.moves = 9;
    } else { /* 2048 */
        c.game.rows = 3;
        c.game.cols = 3;
    }
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

enum { OWN_N = 40 };

/* Sample i's owner map in owner_file: i % 4 == 0 none given (NULL), 1 written by the
 * old wrapper sp_writer_append, 2 and 3 a map of every code: all -1 read back for the
 * first two. */
static int8_t own_want(int i, int p) { return i % 4 < 2 ? -1 : (int8_t)((i + p) % 4); }

/* Writes OWN_N samples of the Sanling game g to path, their owner maps as own_want. */
static void owner_file(const game *g, const char *path)
{
    char err[512];
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int hw = g->rows * g->cols, np = g->planes * hw;
    float *planes = calloc((size_t)np, sizeof(float)), pi[25], z[3] = {1, -0.5f, -0.5f};
    uint8_t legal[25];
    int8_t owner[25];
    ck_assert_int_eq(g->actions, 25);
    for (int a = 0; a < 25; a++)
        pi[a] = 1.0f / 25, legal[a] = 1;
    for (int i = 0; i < OWN_N; i++) {
        for (int p = 0; p < hw; p++)
            owner[p] = own_want(i, p);
        int rc = i % 4 == 1 ? sp_writer_append(w, planes, pi, legal, z, i, 0, err, sizeof err)
                            : sp_writer_append_owned(w, planes, pi, legal, z, NULL, 1.0f,
                                                     i % 4 ? owner : NULL, i, 0, err, sizeof err);
        ck_assert_msg(rc == 0, "%s", err);
    }
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    free(planes);
}

/* Runs `gridzero info path` (cli_util.h's run_bin) and copies its output into out. */
static void run_info(const char *path, char *out, size_t len)
{
    char args[600], *o, *e;
    snprintf(args, sizeof args, "info '%s'", path);
    int rc = run_bin(args, NULL, &o, &e);
    ck_assert_msg(rc == 0, "info %s: exit %d: %s", path, rc, e);
    snprintf(out, len, "%s%s", o, e);
    free(o);
    free(e);
}

/* Owner maps go through the writer and the reader exactly; NULL and the old wrappers
 * write unknown (-1) maps; the writer refuses codes out of [-1, players], mixed maps,
 * and any map in a game without point cells (2048), whose files have no owner. */
START_TEST(owner_round_trip)
{
    game *g = owner_game("sanling");
    ck_assert(sp_game_has_owner(g));
    char path[300], err[512], out[4096];
    snprintf(path, sizeof path, "%s/own.h5", dir);
    owner_file(g, path);
    sp_expect e = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, SP_VERSION);
    ck_assert_int_eq(SP_VERSION, 5);
    ck_assert_int_eq(f->n, OWN_N);
    ck_assert_ptr_nonnull(f->owner);
    for (int i = 0; i < OWN_N; i++)
        for (int p = 0; p < 25; p++)
            ck_assert_msg(f->owner[i * 25 + p] == own_want(f->gameix[i], p),
                          "sample %d point %d: owner %d, wrote %d", i, p, f->owner[i * 25 + p],
                          own_want(f->gameix[i], p));
    sp_file_free(f);
    /* gridzero info: half of the samples have a map (the rest: unknown) */
    run_info(path, out, sizeof out);
    ck_assert_msg(strstr(out, "for 20 of 40 samples (50.0%"), "%s", out);
    /* refusals, each naming the sample and the point */
    char p2[300];
    snprintf(p2, sizeof p2, "%s/refused.h5", dir);
    sp_writer *w = sp_writer_open(p2, g, NULL, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    float *planes = calloc((size_t)g->planes * 25, sizeof(float)), pi[25], z[3] = {0, 0, 0};
    uint8_t legal[25];
    int8_t owner[25] = {0};
    for (int a = 0; a < 25; a++)
        pi[a] = 1.0f / 25, legal[a] = 1;
    owner[7] = 4; /* three players: codes up to 3 */
    ck_assert_int_eq(sp_writer_append_owned(w, planes, pi, legal, z, NULL, 1, owner, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "sample 0") && strstr(err, "owner[7] = 4 is not in [-1, 3]"), "%s", err);
    owner[7] = -2;
    ck_assert_int_eq(sp_writer_append_owned(w, planes, pi, legal, z, NULL, 1, owner, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "owner[7] = -2"), "%s", err);
    owner[7] = -1; /* one unknown point among known ones */
    ck_assert_int_eq(sp_writer_append_owned(w, planes, pi, legal, z, NULL, 1, owner, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "mixes unknown"), "%s", err);
    sp_writer_abort(w);
    free(planes);
    game_free(g);

    /* 2048: no point cells, no owner dataset; a map is refused */
    g = owner_game("2048");
    ck_assert(!sp_game_has_owner(g));
    snprintf(path, sizeof path, "%s/g2048.h5", dir);
    w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    planes = calloc((size_t)g->planes * 9, sizeof(float));
    float p4[4] = {0.25f, 0.25f, 0.25f, 0.25f}, pts = 12;
    uint8_t l4[4] = {1, 1, 1, 1};
    int8_t o9[9] = {0};
    ck_assert_int_eq(sp_writer_append_owned(w, planes, p4, l4, &pts, NULL, 1, o9, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "owner map for a game without point cells"), "%s", err);
    ck_assert_msg(sp_writer_append_owned(w, planes, p4, l4, &pts, NULL, 1, NULL, 0, 0, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_msg(sp_writer_append(w, planes, p4, l4, &pts, 0, 1, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
    e = sp_expect_game(g);
    f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, 5);
    ck_assert_int_eq(f->n, 2);
    ck_assert_ptr_null(f->owner);
    ck_assert_ptr_nonnull(f->qa); /* a scored game: the dataset, here without targets */
    for (int k = 0; k < 8; k++)
        ck_assert(isnan(f->qa[k]));
    sp_file_free(f);
    hid_t hf = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(hf, 0);
    ck_assert_int_eq(H5Lexists(hf, "owner", H5P_DEFAULT), 0);
    H5Fclose(hf);
    run_info(path, out, sizeof out);
    ck_assert_msg(strstr(out, "owner       none (the game's actions are not its points)"), "%s", out);
    /* a forged owner dataset in a 2048 file: refused by name */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/g2048_owner.h5", dir);
    struct stat st;
    ck_assert(stat(path, &st) == 0);
    copy_prefix(path, bad, st.st_size);
    hf = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    hsize_t od[2] = {2, 9};
    hid_t os = H5Screate_simple(2, od, NULL);
    hid_t d = H5Dcreate2(hf, "owner", H5T_STD_I8LE, os, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int8_t zeros[18] = {0};
    ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_INT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros), 0);
    H5Dclose(d), H5Sclose(os);
    ck_assert_int_ge(H5Fclose(hf), 0);
    ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
    ck_assert_msg(strstr(err, bad) && strstr(err, "dataset owner in a file of game 2048"), "%s", err);
    free(planes);
    game_free(g);

    /* m,n,k through the old wrapper (gen_random_games): an owner dataset of unknowns */
    g = gen_mnk(3, 3, 3);
    snprintf(path, sizeof path, "%s/ttt.h5", dir);
    int64_t n = gen_random_games(g, path, 3, 2, 0);
    e = sp_expect_game(g);
    f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_ptr_nonnull(f->owner);
    for (int64_t i = 0; i < n * 9; i++)
        ck_assert_int_eq(f->owner[i], -1);
    sp_file_free(f);
    run_info(path, out, sizeof out);
    ck_assert_msg(strstr(out, "for 0 of"), "%s", out);
    game_free(g);
}
END_TEST

/* Copies src to dst and edits dst: deletes dataset del (NULL: none) and sets the
 * version attribute to version (0: unchanged). */
static void forge_version(const char *src, const char *dst, const char *del, int version)
{
    struct stat st;
    ck_assert(stat(src, &st) == 0);
    copy_prefix(src, dst, st.st_size);
    hid_t hf = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(hf, 0);
    if (del)
        ck_assert_int_ge(H5Ldelete(hf, del, H5P_DEFAULT), 0);
    if (version) {
        ck_assert_int_ge(H5Adelete(hf, "version"), 0);
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(hf, "version", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        long long v = version;
        ck_assert_int_ge(H5Awrite(a, H5T_NATIVE_LLONG, &v), 0);
        H5Aclose(a), H5Sclose(sp);
    }
    ck_assert_int_ge(H5Fclose(hf), 0);
}

/* Files before version 4 read with owner NULL (an owner dataset in them is not looked
 * at); a version 4 file of a point game without its owner dataset is refused. */
START_TEST(owner_older_versions)
{
    game *g = owner_game("sanling");
    char path[300], old[300], err[512], out[4096];
    snprintf(path, sizeof path, "%s/own.h5", dir);
    snprintf(old, sizeof old, "%s/v3.h5", dir);
    owner_file(g, path);
    sp_expect e = sp_expect_game(g);
    sp_file *cur = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(cur != NULL, "%s", err);
    for (int keep = 0; keep < 2; keep++) {
        forge_version(path, old, keep ? NULL : "owner", 3);
        sp_file *f = sp_file_read(old, &e, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        ck_assert_int_eq(f->version, 3);
        ck_assert_ptr_null(f->owner);
        ck_assert_int_eq(f->n, cur->n);
        ck_assert(!memcmp(f->z, cur->z, sizeof(float) * 3 * (size_t)f->n));
        ck_assert(!memcmp(f->q, cur->q, sizeof(float) * 3 * (size_t)f->n));
        ck_assert(!memcmp(f->state, cur->state, (size_t)f->n * (size_t)g->planes * 25));
        sp_file_free(f);
    }
    run_info(old, out, sizeof out);
    ck_assert_msg(strstr(out, "version 3") && strstr(out, "owner       none (a file before version 4)"),
                  "%s", out);
    /* version 1 (no policy_weight, no q), too */
    forge_version(path, old, "q", 0);
    char v1[300];
    snprintf(v1, sizeof v1, "%s/v1.h5", dir);
    forge_version(old, v1, "policy_weight", 1);
    sp_file *f = sp_file_read(v1, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, 1);
    ck_assert_ptr_null(f->owner);
    sp_file_free(f);
    /* version 4 without the dataset: missing */
    forge_version(path, old, "owner", 0);
    ck_assert_ptr_null(sp_file_read(old, &e, err, sizeof err));
    ck_assert_msg(strstr(err, old) && strstr(err, "dataset owner is missing"), "%s", err);
    sp_file_free(cur);
    game_free(g);
}
END_TEST

/* Owner codes out of [-1, players], a map mixing unknown and known points, and an owner
 * dataset of another type or width: refused naming the dataset and the sample. */
START_TEST(owner_bad_values_refused)
{
    game *g = owner_game("sanling");
    char good[300], bad[300], err[512];
    snprintf(good, sizeof good, "%s/own.h5", dir);
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    owner_file(g, good);
    sp_expect e = sp_expect_game(g);
    struct {
        int sample, point, value;
        const char *want;
    } cases[] = {
        {3, 2, 5, "point 2 is 5, not in [-1, 3]"},  /* sample 3: a known map */
        {3, 24, 4, "point 24 is 4, not in [-1, 3]"},
        {6, 0, -2, "point 0 is -2, not in [-1, 3]"},
        {7, 11, -1, "mixes unknown (-1) and known"}, /* one unknown among known */
        {4, 11, 0, "mixes unknown (-1) and known"},  /* one known among unknown */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int8_t row[25];
        for (int p = 0; p < 25; p++)
            row[p] = own_want(cases[k].sample, p);
        row[cases[k].point] = (int8_t)cases[k].value;
        forge_row(good, bad, "owner", (hsize_t)cases[k].sample, row, 25, H5T_NATIVE_INT8);
        ck_assert_msg(sp_file_read(bad, &e, err, sizeof err) == NULL, "case %zu accepted", k);
        char want[64];
        snprintf(want, sizeof want, "sample %d:", cases[k].sample);
        ck_assert_msg(strstr(err, bad) && strstr(err, "dataset owner") && strstr(err, want) &&
                          strstr(err, cases[k].want),
                      "case %zu: %s", k, err);
    }
    /* another type (uint8) or width (24 points): refused by name */
    for (int k = 0; k < 2; k++) {
        forge_version(good, bad, "owner", 0);
        hid_t hf = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
        hsize_t od[2] = {OWN_N, k ? 24 : 25};
        hid_t os = H5Screate_simple(2, od, NULL);
        hid_t d = H5Dcreate2(hf, "owner", k ? H5T_STD_I8LE : H5T_STD_U8LE, os, H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT);
        int8_t *zeros = calloc(OWN_N * 25, 1);
        ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_INT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros), 0);
        free(zeros);
        H5Dclose(d), H5Sclose(os);
        ck_assert_int_ge(H5Fclose(hf), 0);
        ck_assert_ptr_null(sp_file_read(bad, &e, err, sizeof err));
        ck_assert_msg(strstr(err, bad) && strstr(err, "dataset owner") &&
                          strstr(err, k ? "dimension 1 is 24, expected 25" : "wrong type (expected int8)"),
                      "%s", err);
    }
    game_free(g);
}
END_TEST

/* 2048 (3x3) sample i's action-value targets as qa_file writes them: move a in points,
 * NaN for the moves without a target (every third sample has none at all; move 3 is
 * illegal in the odd samples). */
static float qa_want(int i, int a)
{
    if (i % 3 == 2 || (a == 3 && i % 2) || (a + i) % 4 == 1)
        return NAN;
    return 16.0f * (float)i + 4.0f * (float)a + 0.5f;
}

#define QA_N 30

static void qa_file(game *g, const char *path)
{
    char err[512];
    sp_writer *w = sp_writer_open(path, g, NULL, NULL, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    float *planes = calloc((size_t)g->planes * 9, sizeof(float));
    for (int i = 0; i < QA_N; i++) {
        uint8_t legal[4] = {1, 1, 1, (uint8_t)(i % 2 ? 0 : 1)};
        float pi[4] = {0.5f, 0.25f, 0.25f, 0}, z = 100.0f + (float)i, qa[4];
        for (int a = 0; a < 4; a++)
            qa[a] = qa_want(i, a);
        ck_assert_msg(sp_writer_append_full(w, planes, pi, legal, &z, NULL, 1, NULL,
                                            i % 3 == 2 ? NULL : qa, i / 5, i % 5, err, sizeof err) == 0,
                      "%s", err);
    }
    free(planes);
    ck_assert_msg(sp_writer_close(w, err, sizeof err) == 0, "%s", err);
}

/* Action-value targets (format 5, games with a score): written and read back exactly,
 * NaN where there is none (NULL writes none); the writer refuses a target on an illegal
 * move, an infinite one, and any in a game without a score; a version 4 file (no qa
 * dataset, or one that is not looked at) reads with qa NULL, the documented default (no
 * targets); a version 5 file of 2048 without it is refused; forged values, another type
 * or width: refused naming the dataset and the sample. */
START_TEST(qa_round_trip_and_versions)
{
    game *g = owner_game("2048");
    ck_assert(sp_game_has_qa(g));
    char path[300], old[300], err[512], out[4096];
    snprintf(path, sizeof path, "%s/qa.h5", dir);
    snprintf(old, sizeof old, "%s/qa_v4.h5", dir);
    qa_file(g, path);
    sp_expect e = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &e, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->version, 5);
    ck_assert_ptr_nonnull(f->qa);
    for (int i = 0; i < QA_N; i++)
        for (int a = 0; a < 4; a++) {
            float want = qa_want(i, a), have = f->qa[i * 4 + a];
            ck_assert_msg(isnan(want) ? isnan(have) : have == want, "sample %d move %d: %g, wrote %g",
                          i, a, (double)have, (double)want);
        }
    sp_file_free(f);
    run_info(path, out, sizeof out);
    ck_assert_msg(strstr(out, "qa          for 20 of 30 samples"), "%s", out);
    /* version 4, with or without the dataset: no targets */
    for (int keep = 0; keep < 2; keep++) {
        forge_version(path, old, keep ? NULL : "qa", 4);
        f = sp_file_read(old, &e, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        ck_assert_int_eq(f->version, 4);
        ck_assert_ptr_null(f->qa);
        ck_assert_int_eq(f->n, QA_N);
        sp_file_free(f);
    }
    run_info(old, out, sizeof out);
    ck_assert_msg(strstr(out, "qa          none (a file before version 5)"), "%s", out);
    /* version 5 without it: missing */
    forge_version(path, old, "qa", 0);
    ck_assert_ptr_null(sp_file_read(old, &e, err, sizeof err));
    ck_assert_msg(strstr(err, old) && strstr(err, "dataset qa is missing"), "%s", err);
    /* forged values: a target on an illegal move (sample 1 move 3), an infinite or huge one */
    struct {
        int sample, move;
        float value;
    } cases[] = {{1, 3, 5.0f}, {0, 0, INFINITY}, {4, 2, 2e9f}, {6, 0, -INFINITY}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        float row[4];
        for (int a = 0; a < 4; a++)
            row[a] = qa_want(cases[k].sample, a);
        row[cases[k].move] = cases[k].value;
        forge_row(path, old, "qa", (hsize_t)cases[k].sample, row, 4, H5T_NATIVE_FLOAT);
        ck_assert_msg(sp_file_read(old, &e, err, sizeof err) == NULL, "case %zu accepted", k);
        char want[64];
        snprintf(want, sizeof want, "sample %d: move %d is", cases[k].sample, cases[k].move);
        ck_assert_msg(strstr(err, old) && strstr(err, "dataset qa") && strstr(err, want), "case %zu: %s",
                      k, err);
    }
    /* another type (int32) or width (3 moves): refused by name */
    for (int k = 0; k < 2; k++) {
        forge_version(path, old, "qa", 0);
        hid_t hf = H5Fopen(old, H5F_ACC_RDWR, H5P_DEFAULT);
        hsize_t qd[2] = {QA_N, k ? 3 : 4};
        hid_t qs = H5Screate_simple(2, qd, NULL);
        hid_t d = H5Dcreate2(hf, "qa", k ? H5T_IEEE_F32LE : H5T_STD_I32LE, qs, H5P_DEFAULT,
                             H5P_DEFAULT, H5P_DEFAULT);
        int32_t *zeros = calloc(QA_N * 4, sizeof(int32_t));
        ck_assert_int_ge(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros), 0);
        free(zeros);
        H5Dclose(d), H5Sclose(qs);
        ck_assert_int_ge(H5Fclose(hf), 0);
        ck_assert_ptr_null(sp_file_read(old, &e, err, sizeof err));
        ck_assert_msg(strstr(err, old) && strstr(err, "dataset qa") &&
                          strstr(err, k ? "dimension 1 is 3, expected 4" : "wrong type (expected float32)"),
                      "%s", err);
    }
    /* the writer's refusals, naming the sample and the move */
    sp_writer *w = sp_writer_open(old, g, NULL, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    float *planes = calloc((size_t)g->planes * 9, sizeof(float));
    float pi[4] = {0.5f, 0.5f, 0, 0}, z = 8, qa[4] = {1, 2, NAN, 7};
    uint8_t legal[4] = {1, 1, 1, 0};
    ck_assert_int_eq(sp_writer_append_full(w, planes, pi, legal, &z, NULL, 1, NULL, qa, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "sample 0") && strstr(err, "qa[3] = 7"), "%s", err);
    qa[3] = NAN;
    qa[1] = INFINITY;
    ck_assert_int_eq(sp_writer_append_full(w, planes, pi, legal, &z, NULL, 1, NULL, qa, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "qa[1] = inf"), "%s", err);
    sp_writer_abort(w);
    free(planes);
    game_free(g);
    /* a game without a score: no qa dataset, and targets refused */
    g = owner_game("sanling");
    ck_assert(!sp_game_has_qa(g));
    w = sp_writer_open(old, g, NULL, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(w);
    planes = calloc((size_t)g->planes * 25, sizeof(float));
    float p25[25], z3[3] = {0, 0, 0}, q25[25];
    uint8_t l25[25];
    for (int a = 0; a < 25; a++)
        p25[a] = 1.0f / 25, l25[a] = 1, q25[a] = NAN;
    ck_assert_int_eq(sp_writer_append_full(w, planes, p25, l25, z3, NULL, 1, NULL, q25, 0, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "action-value targets for a game without a score"), "%s", err);
    sp_writer_abort(w);
    free(planes);
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
    tcase_add_test(tc, owner_round_trip);
    tcase_add_test(tc, owner_older_versions);
    tcase_add_test(tc, owner_bad_values_refused);
    tcase_add_test(tc, qa_round_trip_and_versions);
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
