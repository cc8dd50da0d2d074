/* ntuple.c — see ntuple.h. */
#include "ntuple.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5util.h"

static const uint8_t NT_LAYOUT[NT_TUPLES][NT_LEN] = {
    {0, 1, 2, 3, 4, 5},
    {4, 5, 6, 7, 8, 9},
    {0, 1, 2, 4, 5, 6},
    {4, 5, 6, 8, 9, 10},
};

static void nt_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void nt_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Cell i under symmetry s of the 4x4 square (the 8 maps of (r, c)). */
static int nt_sym_cell(int s, int i)
{
    int r = i / 4, c = i % 4, t;
    if (s & 4) /* transpose first */
        t = r, r = c, c = t;
    if (s & 1)
        c = 3 - c;
    if (s & 2)
        r = 3 - r;
    return r * 4 + c;
}

ntuple *ntuple_new(char *err, size_t errlen)
{
    ntuple *n = calloc(1, sizeof *n);
    if (!n) {
        nt_fail(err, errlen, "out of memory");
        return NULL;
    }
    n->stages = 1;
    for (int t = 0; t < NT_TUPLES; t++) {
        n->w[0][t] = calloc(NT_ENTRIES, sizeof(float));
        if (!n->w[0][t]) {
            nt_fail(err, errlen, "out of memory for the n-tuple tables (%u MB)",
                    (unsigned)((size_t)NT_TUPLES * NT_ENTRIES * sizeof(float) >> 20));
            ntuple_free(n);
            return NULL;
        }
        for (int s = 0; s < NT_SYMS; s++)
            for (int j = 0; j < NT_LEN; j++)
                n->cell[t][s][j] = (uint8_t)nt_sym_cell(s, NT_LAYOUT[t][j]);
    }
    return n;
}

void ntuple_free(ntuple *n)
{
    if (!n)
        return;
    for (int s = 0; s < NT_MAX_STAGES; s++)
        for (int t = 0; t < NT_TUPLES; t++)
            free(n->w[s][t]), free(n->used[s][t]);
    free(n);
}

enum { NT_USED_WORDS = NT_ENTRIES / 64 };

int ntuple_set_stages(ntuple *n, int ntiles, const int *tiles, char *err, size_t errlen)
{
    if (ntiles < 0 || ntiles > NT_MAX_STAGES - 1) {
        nt_fail(err, errlen, "%d stage thresholds: at most %d", ntiles, NT_MAX_STAGES - 1);
        return -1;
    }
    uint8_t ex[NT_MAX_STAGES] = {0};
    for (int i = 0; i < ntiles; i++) {
        int e = 0;
        while (e < 15 && (1 << e) < tiles[i])
            e++;
        if (tiles[i] < 4 || (1 << e) != tiles[i] || (i > 0 && e <= ex[i])) {
            nt_fail(err, errlen, "stage thresholds must be increasing powers of two from 4 to 32768 "
                    "(tile %d)", tiles[i]);
            return -1;
        }
        ex[i + 1] = (uint8_t)e;
    }
    if (ntiles + 1 < n->stages || memcmp(ex + 1, n->threshold + 1, (size_t)(n->stages - 1)) != 0) {
        char have[64] = "none", *q = have;
        for (int s = 1; s < n->stages; s++)
            q += snprintf(q, sizeof have - (size_t)(q - have), "%s%d", s > 1 ? "," : "", 1 << n->threshold[s]);
        nt_fail(err, errlen, "the network's stage thresholds (%s) are not the first of the ones asked for: "
                "stages can be added above, not changed", have);
        return -1;
    }
    for (int s = n->stages; s <= ntiles; s++)
        for (int t = 0; t < NT_TUPLES; t++) {
            n->w[s][t] = calloc(NT_ENTRIES, sizeof(float));
            n->used[s][t] = calloc(NT_USED_WORDS, sizeof(uint64_t));
            if (!n->w[s][t] || !n->used[s][t]) {
                for (int u = n->stages; u <= s; u++)
                    for (int k = 0; k < NT_TUPLES; k++) {
                        free(n->w[u][k]), free(n->used[u][k]);
                        n->w[u][k] = NULL, n->used[u][k] = NULL;
                    }
                nt_fail(err, errlen, "out of memory for an n-tuple stage (%u MB)",
                        (unsigned)((size_t)NT_TUPLES * NT_ENTRIES * sizeof(float) >> 20));
                return -1;
            }
        }
    for (int s = n->stages; s <= ntiles; s++)
        n->threshold[s] = ex[s];
    if (ntiles + 1 > n->stages)
        n->stages = ntiles + 1;
    return 0;
}

static inline uint32_t nt_index(const uint8_t *idx, const uint8_t *cells)
{
    uint32_t k = 0;
    for (int j = 0; j < NT_LEN; j++) {
        uint8_t e = cells[idx[j]];
        k |= (uint32_t)(e > 15 ? 15 : e) << (4 * j);
    }
    return k;
}

int ntuple_stage(const ntuple *n, const uint8_t *cells)
{
    if (n->stages == 1)
        return 0;
    uint8_t top = 0;
    for (int i = 0; i < NT_CELLS; i++)
        top = cells[i] > top ? cells[i] : top;
    int s = 0;
    while (s + 1 < n->stages && top >= n->threshold[s + 1])
        s++;
    return s;
}

static inline bool nt_used(const ntuple *n, int s, int t, uint32_t k)
{
    return __atomic_load_n(&n->used[s][t][k >> 6], __ATOMIC_ACQUIRE) >> (k & 63) & 1;
}

/* The weight k of tuple t as stage s reads it: its own once written, else the stage below's. */
static inline float nt_read(const ntuple *n, int s, int t, uint32_t k)
{
    while (s > 0 && !nt_used(n, s, t, k))
        s--;
    return n->w[s][t][k];
}

float ntuple_value(const ntuple *n, const uint8_t *cells)
{
    float v = 0;
    int st = ntuple_stage(n, cells);
    for (int t = 0; t < NT_TUPLES; t++)
        for (int s = 0; s < NT_SYMS; s++) {
            uint32_t k = nt_index(n->cell[t][s], cells);
            v += st ? nt_read(n, st, t, k) : n->w[0][t][k];
        }
    return v;
}

void ntuple_update(ntuple *n, const uint8_t *cells, float delta)
{
    int st = ntuple_stage(n, cells);
    for (int t = 0; t < NT_TUPLES; t++)
        for (int s = 0; s < NT_SYMS; s++) {
            uint32_t k = nt_index(n->cell[t][s], cells);
            if (st && !nt_used(n, st, t, k)) {
                n->w[st][t][k] = nt_read(n, st - 1, t, k);
                __atomic_fetch_or(&n->used[st][t][k >> 6], 1ULL << (k & 63), __ATOMIC_RELEASE);
            }
            n->w[st][t][k] += delta;
        }
}

int ntuple_is_file(const char *path)
{
    if (access(path, R_OK) != 0)
        return 0;
    nn_h5_quiet();
    if (H5Fis_hdf5(path) <= 0)
        return 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return 0;
    int yes = 0;
    if (H5Lexists(f, "meta", H5P_DEFAULT) > 0) {
        hid_t m = H5Gopen2(f, "meta", H5P_DEFAULT);
        if (m >= 0) {
            char *fmt = nn_h5_attr_get_str(m, "format");
            yes = fmt && !strcmp(fmt, NT_FORMAT);
            free(fmt);
            H5Gclose(m);
        }
    }
    H5Fclose(f);
    return yes;
}

/* Writes the 1-D dataset name of dim elements of type ftype (file) from buf (mtype),
 * chunked, shuffled and deflated. Returns whether it worked. */
static int nt_write_1d(hid_t f, const char *name, hid_t ftype, hid_t mtype, hsize_t dim, const void *buf)
{
    hsize_t chunk = dim < (1u << 16) ? dim : 1u << 16;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    int ok = sp >= 0 && pl >= 0 && H5Pset_chunk(pl, 1, &chunk) >= 0 && H5Pset_shuffle(pl) >= 0 &&
             H5Pset_deflate(pl, 1) >= 0;
    hid_t ds = ok ? H5Dcreate2(f, name, ftype, sp, H5P_DEFAULT, pl, H5P_DEFAULT) : -1;
    ok = ok && ds >= 0 && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    if (ds >= 0)
        H5Dclose(ds);
    if (pl >= 0)
        H5Pclose(pl);
    if (sp >= 0)
        H5Sclose(sp);
    return ok;
}

/* The names of stage s's tables of tuple t: /w<t> for stage 0, /s<s>w<t> and /s<s>used<t>. */
static void nt_names(int s, int t, char *w, char *used, size_t len)
{
    if (s == 0)
        snprintf(w, len, "w%d", t);
    else
        snprintf(w, len, "s%dw%d", s, t);
    snprintf(used, len, "s%dused%d", s, t);
}

int ntuple_save(const ntuple *n, const char *path, char *err, size_t errlen)
{
    nn_h5_quiet();
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        nt_fail(err, errlen, "%s: cannot create (%s)", path, nn_h5_reason());
        return -1;
    }
    int ok = 1, v2 = n->stages > 1;
    hid_t m = H5Gcreate2(f, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = m >= 0 && nn_h5_attr_put_str(m, "format", NT_FORMAT) == 0 &&
         nn_h5_attr_put_i64(m, "version", v2 ? 2 : 1) == 0 && nn_h5_attr_put_i64(m, "rows", 4) == 0 &&
         nn_h5_attr_put_i64(m, "cols", 4) == 0 && nn_h5_attr_put_i64(m, "tuples", NT_TUPLES) == 0 &&
         nn_h5_attr_put_i64(m, "tuple_len", NT_LEN) == 0 &&
         nn_h5_attr_put_i64(m, "games", n->games) == 0 &&
         nn_h5_attr_put_i64(m, "generation", n->generation) == 0 &&
         (!v2 || nn_h5_attr_put_i64(m, "stages", n->stages) == 0);
    if (m >= 0)
        H5Gclose(m);
    if (ok) {
        int32_t lay[NT_TUPLES][NT_LEN];
        for (int t = 0; t < NT_TUPLES; t++)
            for (int j = 0; j < NT_LEN; j++)
                lay[t][j] = NT_LAYOUT[t][j];
        hsize_t d2[2] = {NT_TUPLES, NT_LEN};
        hid_t sp = H5Screate_simple(2, d2, NULL);
        hid_t ds = sp < 0 ? -1 : H5Dcreate2(f, "tuples", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        ok = ds >= 0 && H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, lay) >= 0;
        if (ds >= 0)
            H5Dclose(ds);
        if (sp >= 0)
            H5Sclose(sp);
    }
    if (ok && v2) {
        int32_t tiles[NT_MAX_STAGES] = {0};
        for (int s = 1; s < n->stages; s++)
            tiles[s] = 1 << n->threshold[s];
        ok = nt_write_1d(f, "stage_tiles", H5T_STD_I32LE, H5T_NATIVE_INT32, (hsize_t)n->stages, tiles);
    }
    for (int s = 0; ok && s < n->stages; s++)
        for (int t = 0; ok && t < NT_TUPLES; t++) {
            char w[24], used[24];
            nt_names(s, t, w, used, sizeof w);
            ok = nt_write_1d(f, w, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, NT_ENTRIES, n->w[s][t]) &&
                 (s == 0 || nt_write_1d(f, used, H5T_STD_U64LE, H5T_NATIVE_UINT64, NT_USED_WORDS, n->used[s][t]));
        }
    if (!ok) {
        nt_fail(err, errlen, "%s: cannot write (%s)", path, nn_h5_reason());
        nn_h5_discard(f);
        H5Fclose(f);
        unlink(tmp);
        return -1;
    }
    if (H5Fclose(f) < 0) {
        nt_fail(err, errlen, "%s: cannot write (%s)", path, nn_h5_reason());
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        nt_fail(err, errlen, "%s: cannot rename %s over it (%s)", path, tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Reads the 1-D dataset name of exactly dim elements (mtype) into buf. Returns whether it worked. */
static int nt_read_1d(hid_t f, const char *name, hid_t mtype, hsize_t dim, void *buf)
{
    hid_t ds = H5Lexists(f, name, H5P_DEFAULT) > 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hsize_t d = 0;
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, &d, NULL) == 1 &&
             d == dim && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
    return ok;
}

static int nt_meta_i64(hid_t m, const char *name, int64_t want, int64_t *out, const char *path,
                       char *err, size_t errlen)
{
    int64_t v;
    if (nn_h5_attr_get_i64(m, name, &v) < 0) {
        nt_fail(err, errlen, "%s: /meta has no integer attribute %s", path, name);
        return -1;
    }
    if (want >= 0 && v != want) {
        nt_fail(err, errlen, "%s: /meta %s is %lld, this build reads %lld", path, name, (long long)v,
                (long long)want);
        return -1;
    }
    if (out)
        *out = v;
    return 0;
}

ntuple *ntuple_load(const char *path, char *err, size_t errlen)
{
    nn_h5_quiet();
    if (access(path, R_OK) != 0) {
        nt_fail(err, errlen, "%s: cannot read (%s)", path, strerror(errno));
        return NULL;
    }
    if (H5Fis_hdf5(path) <= 0) {
        nt_fail(err, errlen, "%s: not an HDF5 file", path);
        return NULL;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        nt_fail(err, errlen, "%s: cannot open (%s)", path, nn_h5_reason());
        return NULL;
    }
    ntuple *n = NULL;
    hid_t m = H5Lexists(f, "meta", H5P_DEFAULT) > 0 ? H5Gopen2(f, "meta", H5P_DEFAULT) : -1;
    if (m < 0) {
        nt_fail(err, errlen, "%s: no /meta group (not a gridzero n-tuple file)", path);
        goto out;
    }
    char *fmt = nn_h5_attr_get_str(m, "format");
    int fmt_ok = fmt && !strcmp(fmt, NT_FORMAT);
    if (!fmt_ok)
        nt_fail(err, errlen, "%s: /meta format is \"%s\", expected \"%s\"", path, fmt ? fmt : "(none)",
                NT_FORMAT);
    free(fmt);
    int64_t games = 0, gen = 0, version = 0, stages = 1;
    if (fmt_ok && nt_meta_i64(m, "version", -1, &version, path, err, errlen) == 0 && version != 1 &&
        version != 2) {
        nt_fail(err, errlen, "%s: /meta version is %lld, this build reads 1 and 2", path, (long long)version);
        fmt_ok = 0;
    }
    if (!fmt_ok || version == 0 ||
        (version == 2 && nt_meta_i64(m, "stages", -1, &stages, path, err, errlen) < 0) ||
        nt_meta_i64(m, "rows", 4, NULL, path, err, errlen) < 0 ||
        nt_meta_i64(m, "cols", 4, NULL, path, err, errlen) < 0 ||
        nt_meta_i64(m, "tuples", NT_TUPLES, NULL, path, err, errlen) < 0 ||
        nt_meta_i64(m, "tuple_len", NT_LEN, NULL, path, err, errlen) < 0 ||
        nt_meta_i64(m, "games", -1, &games, path, err, errlen) < 0 ||
        nt_meta_i64(m, "generation", -1, &gen, path, err, errlen) < 0) {
        H5Gclose(m);
        goto out;
    }
    H5Gclose(m);
    if (stages < 1 || stages > NT_MAX_STAGES) {
        nt_fail(err, errlen, "%s: /meta stages is %lld, this build reads 1..%d", path, (long long)stages,
                NT_MAX_STAGES);
        goto out;
    }
    int32_t tiles[NT_MAX_STAGES] = {0};
    if (stages > 1 && !nt_read_1d(f, "stage_tiles", H5T_NATIVE_INT32, (hsize_t)stages, tiles)) {
        nt_fail(err, errlen, "%s: /stage_tiles missing or not %lld integers", path, (long long)stages);
        goto out;
    }
    if (tiles[0] != 0) {
        nt_fail(err, errlen, "%s: /stage_tiles[0] is %d, not 0", path, (int)tiles[0]);
        goto out;
    }
    int32_t lay[NT_TUPLES][NT_LEN];
    hid_t ds = H5Lexists(f, "tuples", H5P_DEFAULT) > 0 ? H5Dopen2(f, "tuples", H5P_DEFAULT) : -1;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hsize_t d2[2] = {0, 0};
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 && H5Sget_simple_extent_dims(sp, d2, NULL) == 2 &&
             d2[0] == NT_TUPLES && d2[1] == NT_LEN &&
             H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, lay) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
    if (!ok) {
        nt_fail(err, errlen, "%s: /tuples missing or not %d x %d integers", path, NT_TUPLES, NT_LEN);
        goto out;
    }
    for (int t = 0; t < NT_TUPLES; t++)
        for (int j = 0; j < NT_LEN; j++)
            if (lay[t][j] != NT_LAYOUT[t][j]) {
                nt_fail(err, errlen, "%s: /tuples[%d][%d] is %d: not the layout this build reads", path, t, j,
                        (int)lay[t][j]);
                goto out;
            }
    n = ntuple_new(err, errlen);
    if (!n)
        goto out;
    if (ntuple_set_stages(n, (int)stages - 1, tiles + 1, err, errlen) < 0) {
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        nt_fail(err, errlen, "%s: /stage_tiles: %s", path, why);
        goto fail;
    }
    n->games = games;
    n->generation = gen;
    for (int s = 0; s < n->stages; s++)
        for (int t = 0; t < NT_TUPLES; t++) {
            char name[24], used[24];
            nt_names(s, t, name, used, sizeof name);
            if (!nt_read_1d(f, name, H5T_NATIVE_FLOAT, NT_ENTRIES, n->w[s][t])) {
                nt_fail(err, errlen, "%s: /%s missing, unreadable or not %u floats", path, name, NT_ENTRIES);
                goto fail;
            }
            if (s > 0 && !nt_read_1d(f, used, H5T_NATIVE_UINT64, NT_USED_WORDS, n->used[s][t])) {
                nt_fail(err, errlen, "%s: /%s missing, unreadable or not %u integers", path, used, NT_USED_WORDS);
                goto fail;
            }
            for (uint32_t i = 0; i < NT_ENTRIES; i++)
                if (!isfinite(n->w[s][t][i])) {
                    nt_fail(err, errlen, "%s: /%s[%u] is not finite", path, name, i);
                    goto fail;
                }
        }
    goto out;
fail:
    ntuple_free(n);
    n = NULL;
out:
    H5Fclose(f);
    return n;
}
