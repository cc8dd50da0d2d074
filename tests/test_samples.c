/* Sample files: round trip through the one writer and reader, attributes, the .tmp
 * protocol, and corrupt / truncated / mismatched files (a message naming the file,
 * never a crash). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        legal[i] = rng_below(&r, 4) != 0;
        pi[i] = legal[i] ? (float)rng_uniform(&r) : 0;
    }
    for (int i = 0; i < n * 2; i++)
        z[i] = (float)(rng_below(&r, 3)) - 1.0f;
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

static Suite *samples_suite(void)
{
    Suite *s = suite_create("samples");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, random_games_and_abort);
    tcase_add_test(tc, corrupt_truncated_mismatched);
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
