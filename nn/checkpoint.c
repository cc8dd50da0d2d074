/* checkpoint.c — HDF5 checkpoints (see checkpoint.h). Every HDF5 call is checked; the
 * library's automatic error printing is turned off so a corrupt file only ever becomes
 * a message. */
#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include "engine/errmsg.h"
#include "h5util.h"

/* The first parameter of tensor i that is not finite or exceeds NN_CKPT_MAX_ABS in
 * magnitude: its index, or -1 when there is none. */
static long long bad_param(const nn_layout *L, const float *data, int i)
{
    const float *v = nn_tensor_cptr(L, data, i);
    for (size_t j = 0; j < L->t[i].size; j++)
        if (!(fabsf(v[j]) <= NN_CKPT_MAX_ABS)) /* NaN too */
            return (long long)j;
    return -1;
}

/* "block03.conv1.weight" -> "/block03/conv1/weight" */
static void tensor_path(const char *name, char *out, size_t len)
{
    snprintf(out, len, "/%s", name);
    for (char *c = out; *c; c++)
        if (*c == '.')
            *c = '/';
}

/* Writes one float dataset. Its data is flushed before the dataset is closed, so that a
 * full disk shows while the file can still be discarded (nn_h5_discard), never inside
 * a close; on failure the file is discarded (*discarded set), and the caller only
 * closes what it holds. */
static int write_dataset(hid_t f, hid_t lcpl, const char *path, int ndim, const hsize_t *dims,
                         const float *data, bool *discarded)
{
    hid_t sp = H5Screate_simple(ndim, dims, NULL);
    if (sp < 0)
        return -1;
    hid_t d = H5Dcreate2(f, path, H5T_IEEE_F32LE, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ||
                     H5Dflush(d) < 0
                 ? -1
                 : 0;
    if (rc < 0 && !*discarded) {
        nn_h5_discard(f);
        *discarded = true;
    }
    if (d >= 0 && H5Dclose(d) < 0)
        rc = -1;
    H5Sclose(sp);
    return rc;
}

/* Ends writing file f, the temporary tmp of path: flushed when rc is 0 (so that a full
 * disk shows here, where the file can still be discarded, and not inside H5Fclose: see
 * nn_h5_discard), discarded on failure (unless `discarded` says it already is), the
 * group mg and property list lcpl (each -1: none) and the file closed, then tmp renamed
 * to path, or removed on failure. Returns rc, or -1 with a message when this failed. */
static int finish_write(hid_t f, int rc, bool discarded, hid_t mg, hid_t lcpl, const char *tmp,
                        const char *path, char *err, size_t errlen)
{
    if (rc == 0 && H5Fflush(f, H5F_SCOPE_LOCAL) < 0)
        rc = gz_fail(err, errlen, "%s: cannot write %s: %s", path, tmp, nn_h5_reason());
    if (rc != 0 && !discarded)
        nn_h5_discard(f);
    if (mg >= 0)
        H5Gclose(mg);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (H5Fclose(f) < 0 && rc == 0)
        rc = gz_fail(err, errlen, "%s: error closing %s: %s", path, tmp, nn_h5_reason());
    if (rc == 0 && rename(tmp, path) != 0)
        rc = gz_fail(err, errlen, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Whether a calibration's values are in range: 0, or -1 with a message naming the
 * dataset (file: the file's name). */
static int calib_check(const nn_calib *c, const char *file, char *err, size_t errlen)
{
    for (int i = 0; i < c->nact; i++)
        if (!(c->act_range[i] >= 0 && c->act_range[i] <= NN_CKPT_MAX_ABS))
            return gz_fail(err, errlen, "%s: dataset /quant/act_range: %g at index %d is not a range "
                           "in [0, %g]", file, (double)c->act_range[i], i, (double)NN_CKPT_MAX_ABS);
    if (!(c->top1 >= 0 && c->top1 <= 1 && c->top1_strict >= 0 && c->top1_strict <= 1 &&
          c->mean_dvalue >= 0 && c->mean_dvalue <= 2))
        return gz_fail(err, errlen, "%s: dataset /quant/gates: expected two agreements in [0, 1] and "
                       "a value error in [0, 2], got %g, %g and %g", file, (double)c->top1,
                       (double)c->top1_strict, (double)c->mean_dvalue);
    if (c->positions < 0 || c->heldout < 0)
        return gz_fail(err, errlen, "%s: group /quant: negative position counts", file);
    return 0;
}

/* /quant: the int8 calibration (see checkpoint.h). */
static int write_calib(hid_t f, hid_t lcpl, const nn_calib *c, bool *discarded)
{
    hsize_t na[1] = {(hsize_t)c->nact}, ng[1] = {3};
    float gates[3] = {c->top1, c->top1_strict, c->mean_dvalue};
    if (write_dataset(f, lcpl, "/quant/act_range", 1, na, c->act_range, discarded) < 0 ||
        write_dataset(f, lcpl, "/quant/gates", 1, ng, gates, discarded) < 0)
        return -1;
    hid_t q = H5Gopen2(f, "/quant", H5P_DEFAULT);
    if (q < 0)
        return -1;
    int rc = nn_h5_attr_put_i64(q, "params_checksum", (int64_t)c->params_checksum) ||
                     nn_h5_attr_put_i64(q, "positions", c->positions) ||
                     nn_h5_attr_put_i64(q, "heldout", c->heldout)
                 ? -1
                 : 0;
    H5Gclose(q);
    return rc;
}

int nn_ckpt_save(const char *path, const nn_params *p, const nn_ckpt_meta *meta,
                 const nn_ckpt_extra *extra, int nextra, char *err, size_t errlen)
{
    nn_h5_quiet();
    const nn_layout *L = &p->layout;
    int bad = nn_layout_check_mask(L, p->data);
    if (bad >= 0)
        return gz_fail(err, errlen, "%s: not saved: tensor %s has a non-zero masked hex tap", path,
                    L->t[bad].name);
    for (int i = 0; i < L->ntensors; i++) {
        long long j = bad_param(L, p->data, i);
        if (j >= 0)
            return gz_fail(err, errlen, "%s: not saved: tensor %s has %g at index %lld (not finite, or "
                           "beyond %g: a diverged training?)", path, L->t[i].name,
                           (double)nn_tensor_cptr(L, p->data, i)[j], j, (double)NN_CKPT_MAX_ABS);
    }
    nn_ckpt_meta zero = {0};
    if (!meta)
        meta = &zero;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return gz_fail(err, errlen, "%s: path too long", path);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        int e = errno;
        unlink(tmp); /* created, but its first write failed */
        return gz_fail(err, errlen, "%s: cannot create %s (%s)", path, tmp,
                       e ? strerror(e) : "directory missing or not writable?");
    }
    int rc = -1;
    bool discarded = false;
    char *spec = nn_spec_to_json(&L->spec);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t mg = H5Gcreate2(f, "/meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (!spec || lcpl < 0 || mg < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        gz_fail(err, errlen, "%s: cannot write /meta: %s", path, nn_h5_reason());
        goto out;
    }
    if (nn_h5_attr_put_str(mg, "format", NN_CKPT_FORMAT) || nn_h5_attr_put_i64(mg, "version", NN_CKPT_VERSION) ||
        nn_h5_attr_put_str(mg, "spec", spec) || nn_h5_attr_put_i64(mg, "generation", meta->generation) ||
        nn_h5_attr_put_i64(mg, "step", meta->step) || nn_h5_attr_put_str(mg, "parent", meta->parent) ||
        nn_h5_attr_put_i64(mg, "checksum", (int64_t)nn_params_checksum(p))) {
        gz_fail(err, errlen, "%s: cannot write the /meta attributes: %s", path, nn_h5_reason());
        goto out;
    }
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *t = &L->t[i];
        char dp[128];
        tensor_path(t->name, dp, sizeof dp);
        hsize_t dims[4];
        for (int k = 0; k < t->ndim; k++)
            dims[k] = (hsize_t)t->shape[k];
        if (write_dataset(f, lcpl, dp, t->ndim, dims, nn_tensor_cptr(L, p->data, i), &discarded) < 0) {
            gz_fail(err, errlen, "%s: cannot write dataset %s: %s", path, dp, nn_h5_reason());
            goto out;
        }
    }
    if (nn_params_calibrated(p) && write_calib(f, lcpl, p->calib, &discarded) < 0) {
        gz_fail(err, errlen, "%s: cannot write the int8 calibration /quant: %s", path, nn_h5_reason());
        goto out;
    }
    for (int i = 0; i < nextra; i++) {
        char dp[256];
        snprintf(dp, sizeof dp, "/optim/%s", extra[i].name);
        hsize_t dims[1] = {(hsize_t)extra[i].count};
        if (write_dataset(f, lcpl, dp, 1, dims, extra[i].data, &discarded) < 0) {
            gz_fail(err, errlen, "%s: cannot write dataset %s: %s", path, dp, nn_h5_reason());
            goto out;
        }
    }
    rc = 0;
out:
    free(spec);
    return finish_write(f, rc, discarded, mg, lcpl, tmp, path, err, errlen);
}

/* Reads a float dataset with exactly the given shape into out. */
static int read_dataset(hid_t f, const char *file, const char *dp, int ndim, const int *shape,
                        float *out, size_t count, char *err, size_t errlen)
{
    if (H5Lexists(f, dp, H5P_DEFAULT) <= 0) {
        /* a missing intermediate group makes H5Lexists fail: same message */
        return gz_fail(err, errlen, "%s: dataset %s missing", file, dp);
    }
    hid_t d = H5Dopen2(f, dp, H5P_DEFAULT);
    if (d < 0)
        return gz_fail(err, errlen, "%s: dataset %s cannot be opened", file, dp);
    int rc = -1;
    hid_t sp = H5Dget_space(d);
    hid_t ft = H5Dget_type(d);
    hsize_t dims[8];
    int nd = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    if (ft < 0 || H5Tget_class(ft) != H5T_FLOAT) {
        gz_fail(err, errlen, "%s: dataset %s: expected floating-point data", file, dp);
        goto out;
    }
    if (nd != ndim || nd > 8 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
        gz_fail(err, errlen, "%s: dataset %s: expected %d dimensions, got %d", file, dp, ndim, nd);
        goto out;
    }
    for (int k = 0; k < ndim; k++)
        if (dims[k] != (hsize_t)shape[k]) {
            char want[64] = "", got[64] = "";
            for (int j = 0; j < ndim; j++) {
                size_t a = strlen(want), b = strlen(got);
                snprintf(want + a, sizeof want - a, "%s%d", j ? "," : "", shape[j]);
                snprintf(got + b, sizeof got - b, "%s%llu", j ? "," : "", (unsigned long long)dims[j]);
            }
            gz_fail(err, errlen, "%s: dataset %s: expected shape (%s), got (%s)", file, dp, want, got);
            goto out;
        }
    if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        gz_fail(err, errlen, "%s: dataset %s: read error (corrupt file?)", file, dp);
        goto out;
    }
    for (size_t i = 0; i < count; i++)
        if (!isfinite(out[i])) {
            gz_fail(err, errlen, "%s: dataset %s: non-finite value at index %zu", file, dp, i);
            goto out;
        }
    rc = 0;
out:
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Dclose(d);
    return rc;
}

/* Reads /quant into a new calibration for p (none: *out NULL). A damaged /quant is an
 * error naming what is wrong; one measured on other weights is kept as it is (inference
 * and saving check the checksum, `gridzero info` reports it as stale). */
static int read_calib(hid_t f, const char *path, const nn_params *p, nn_calib **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    if (H5Lexists(f, "/quant", H5P_DEFAULT) <= 0)
        return 0;
    nn_calib *c = calloc(1, sizeof *c);
    if (!c)
        return gz_fail(err, errlen, "out of memory");
    c->nact = 2 + 2 * p->layout.spec.blocks;
    int na[1] = {c->nact}, ng[1] = {3};
    float gates[3];
    int64_t sum = 0, pos = 0, held = 0;
    hid_t q = -1;
    if (read_dataset(f, path, "/quant/act_range", 1, na, c->act_range, (size_t)c->nact, err, errlen) < 0 ||
        read_dataset(f, path, "/quant/gates", 1, ng, gates, 3, err, errlen) < 0)
        goto bad;
    q = H5Gopen2(f, "/quant", H5P_DEFAULT);
    if (q < 0 || nn_h5_attr_get_i64(q, "params_checksum", &sum) < 0 ||
        nn_h5_attr_get_i64(q, "positions", &pos) < 0 || nn_h5_attr_get_i64(q, "heldout", &held) < 0 ||
        pos < 0 || held < 0 || pos > INT32_MAX || held > INT32_MAX) {
        gz_fail(err, errlen, "%s: group /quant: attributes params_checksum, positions, heldout "
                "missing or not integers >= 0", path);
        goto bad;
    }
    H5Gclose(q);
    c->params_checksum = (uint64_t)sum;
    c->positions = (int)pos;
    c->heldout = (int)held;
    c->top1 = gates[0];
    c->top1_strict = gates[1];
    c->mean_dvalue = gates[2];
    if (calib_check(c, path, err, errlen) < 0)
        goto bad_closed;
    *out = c;
    return 0;
bad:
    if (q >= 0)
        H5Gclose(q);
bad_closed:
    free(c);
    return -1;
}

static hid_t open_file(const char *path, char *err, size_t errlen)
{
    nn_h5_quiet();
    if (access(path, R_OK) != 0) {
        gz_fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (H5Fis_hdf5(path) <= 0) {
        gz_fail(err, errlen, "%s: not an HDF5 file", path);
        return -1;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        gz_fail(err, errlen, "%s: cannot open as HDF5 (corrupt or truncated?)", path);
    return f;
}

nn_params *nn_ckpt_load(const char *path, const game *g, nn_ckpt_meta *meta, char *err,
                        size_t errlen)
{
    hid_t f = open_file(path, err, errlen);
    if (f < 0)
        return NULL;
    nn_params *p = NULL;
    char *fmt = NULL, *spec_json = NULL, *parent = NULL;
    hid_t mg = -1;
    if (H5Lexists(f, "/meta", H5P_DEFAULT) <= 0 || (mg = H5Gopen2(f, "/meta", H5P_DEFAULT)) < 0) {
        gz_fail(err, errlen, "%s: no /meta group: not a gridzero model", path);
        goto bad;
    }
    fmt = nn_h5_attr_get_str(mg, "format");
    if (!fmt || strcmp(fmt, NN_CKPT_FORMAT) != 0) {
        gz_fail(err, errlen, "%s: attribute /meta format: expected \"%s\", got %s%s%s", path,
             NN_CKPT_FORMAT, fmt ? "\"" : "none", fmt ? fmt : "", fmt ? "\"" : "");
        goto bad;
    }
    int64_t version = 0;
    if (nn_h5_attr_get_i64(mg, "version", &version) < 0) {
        gz_fail(err, errlen, "%s: attribute /meta version missing or not an integer", path);
        goto bad;
    }
    if (version < 1 || version > NN_CKPT_VERSION) {
        gz_fail(err, errlen, "%s: attribute /meta version: this build reads version 1..%d, got %lld",
             path, NN_CKPT_VERSION, (long long)version);
        goto bad;
    }
    spec_json = nn_h5_attr_get_str(mg, "spec");
    if (!spec_json) {
        if (H5Aexists(mg, "spec") > 0)
            gz_fail(err, errlen, "%s: attribute /meta spec: unreadable (expected one JSON string of "
                    "at most 16 MB)", path);
        else
            gz_fail(err, errlen, "%s: attribute /meta spec missing", path);
        goto bad;
    }
    nn_spec spec;
    char e2[256];
    if (nn_spec_from_json(&spec, spec_json, e2, sizeof e2) < 0) {
        gz_fail(err, errlen, "%s: attribute /meta spec: %s", path, e2);
        goto bad;
    }
    if (g && nn_spec_check_game(&spec, g, e2, sizeof e2) < 0) {
        gz_fail(err, errlen, "%s: model does not fit the config's game: %s", path, e2);
        goto bad;
    }
    nn_ckpt_meta m;
    memset(&m, 0, sizeof m);
    if (nn_h5_attr_get_i64(mg, "generation", &m.generation) < 0 || nn_h5_attr_get_i64(mg, "step", &m.step) < 0) {
        gz_fail(err, errlen, "%s: attribute /meta %s missing or not an integer", path,
             nn_h5_attr_get_i64(mg, "generation", &m.generation) < 0 ? "generation" : "step");
        goto bad;
    }
    parent = nn_h5_attr_get_str(mg, "parent");
    if (parent)
        snprintf(m.parent, sizeof m.parent, "%s", parent);
    p = nn_params_new(&spec, e2, sizeof e2);
    if (!p) {
        gz_fail(err, errlen, "%s: %s", path, e2);
        goto bad;
    }
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++) {
        char dp[128];
        tensor_path(L->t[i].name, dp, sizeof dp);
        if (read_dataset(f, path, dp, L->t[i].ndim, L->t[i].shape, nn_tensor_ptr(L, p->data, i),
                         L->t[i].size, err, errlen) < 0)
            goto bad;
        long long big = bad_param(L, p->data, i);
        if (big >= 0) {
            gz_fail(err, errlen, "%s: dataset %s: %g at index %lld is beyond the bound %g on a "
                    "parameter's magnitude", path, dp, (double)nn_tensor_ptr(L, p->data, i)[big], big,
                    (double)NN_CKPT_MAX_ABS);
            goto bad;
        }
        if (L->t[i].kind == NN_T_BN_VAR)
            for (size_t j = 0; j < L->t[i].size; j++)
                if (nn_tensor_ptr(L, p->data, i)[j] < 0) {
                    gz_fail(err, errlen, "%s: dataset %s: negative variance at index %zu", path, dp, j);
                    goto bad;
                }
    }
    int badm = nn_layout_check_mask(L, p->data);
    if (badm >= 0) {
        char dp[128];
        tensor_path(L->t[badm].name, dp, sizeof dp);
        gz_fail(err, errlen, "%s: dataset %s: non-zero masked hex tap ((0,0) or (2,2)): the hex lattice "
             "keeps them zero", path, dp);
        goto bad;
    }
    int64_t sum;
    if (H5Aexists(mg, "checksum") > 0) {
        if (nn_h5_attr_get_i64(mg, "checksum", &sum) < 0) {
            gz_fail(err, errlen, "%s: attribute /meta checksum: not an integer", path);
            goto bad;
        }
        if ((uint64_t)sum != nn_params_checksum(p)) {
            gz_fail(err, errlen, "%s: the parameters do not match attribute /meta checksum (corrupt "
                 "file?)", path);
            goto bad;
        }
    }
    if (read_calib(f, path, p, &p->calib, err, errlen) < 0)
        goto bad;
    if (meta)
        *meta = m;
    goto done;
bad:
    nn_params_free(p);
    p = NULL;
done:
    free(fmt);
    free(spec_json);
    free(parent);
    if (mg >= 0)
        H5Gclose(mg);
    H5Fclose(f);
    return p;
}

/* Copies file src to dst byte for byte. Returns 0 or -1 with a message. */
static int copy_file(const char *src, const char *dst, char *err, size_t errlen)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return gz_fail(err, errlen, "%s: cannot open: %s", src, strerror(errno));
    FILE *out = fopen(dst, "wb");
    if (!out) {
        int e = errno;
        fclose(in);
        return gz_fail(err, errlen, "%s: cannot create: %s", dst, strerror(e));
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = gz_fail(err, errlen, "%s: write error: %s", dst, strerror(errno));
            break;
        }
    if (rc == 0 && ferror(in))
        rc = gz_fail(err, errlen, "%s: read error", src);
    fclose(in);
    if (fclose(out) != 0 && rc == 0)
        rc = gz_fail(err, errlen, "%s: write error: %s", dst, strerror(errno));
    return rc;
}

int nn_ckpt_save_calibrated(const char *src, const char *dst, const nn_calib *c, char *err,
                            size_t errlen)
{
    nn_params *p = nn_ckpt_load(src, NULL, NULL, err, errlen);
    if (!p)
        return -1;
    nn_calib *old = p->calib;
    p->calib = (nn_calib *)c;
    bool fits = nn_params_calibrated(p);
    p->calib = old;
    nn_params_free(p);
    if (!fits)
        return gz_fail(err, errlen, "%s: the calibration was measured on other weights", src);
    if (calib_check(c, dst, err, errlen) < 0)
        return -1;
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dst, (long)getpid()) >= sizeof tmp)
        return gz_fail(err, errlen, "%s: path too long", dst);
    if (copy_file(src, tmp, err, errlen) < 0) {
        unlink(tmp);
        return -1;
    }
    nn_h5_quiet();
    hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) {
        unlink(tmp);
        return gz_fail(err, errlen, "%s: cannot open %s for writing", dst, tmp);
    }
    int rc = -1;
    bool discarded = false;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
        (H5Lexists(f, "/quant", H5P_DEFAULT) > 0 && H5Ldelete(f, "/quant", H5P_DEFAULT) < 0) ||
        write_calib(f, lcpl, c, &discarded) < 0) {
        gz_fail(err, errlen, "%s: cannot write the int8 calibration /quant", dst);
        goto out;
    }
    rc = 0;
out:
    return finish_write(f, rc, discarded, -1, lcpl, tmp, dst, err, errlen);
}

int nn_ckpt_read_extra(const char *path, const nn_ckpt_extra *e, char *err, size_t errlen)
{
    hid_t f = open_file(path, err, errlen);
    if (f < 0)
        return -1;
    char dp[256];
    snprintf(dp, sizeof dp, "/optim/%s", e->name);
    int rc;
    if (H5Lexists(f, "/optim", H5P_DEFAULT) <= 0 || H5Lexists(f, dp, H5P_DEFAULT) <= 0) {
        rc = 1;
    } else {
        int shape[1] = {(int)e->count};
        if ((size_t)shape[0] != e->count) {
            rc = gz_fail(err, errlen, "%s: dataset %s: too large", path, dp);
        } else {
            float *tmp = malloc(sizeof(float) * (e->count ? e->count : 1));
            rc = tmp ? read_dataset(f, path, dp, 1, shape, tmp, e->count, err, errlen)
                     : gz_fail(err, errlen, "out of memory");
            if (rc == 0)
                memcpy(e->data, tmp, sizeof(float) * e->count);
            free(tmp);
        }
    }
    H5Fclose(f);
    return rc;
}

int nn_h5_format(const char *path, char *fmt, size_t len, char *err, size_t errlen)
{
    hid_t f = open_file(path, err, errlen);
    if (f < 0)
        return -1;
    char *s = NULL;
    if (H5Lexists(f, "/meta", H5P_DEFAULT) > 0) {
        hid_t mg = H5Gopen2(f, "/meta", H5P_DEFAULT);
        if (mg >= 0) {
            s = nn_h5_attr_get_str(mg, "format");
            H5Gclose(mg);
        }
    }
    if (!s) {
        hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
        if (root >= 0) {
            s = nn_h5_attr_get_str(root, "format");
            H5Gclose(root);
        }
    }
    H5Fclose(f);
    if (!s)
        return gz_fail(err, errlen, "%s: no format attribute (in /meta or /): not a gridzero file", path);
    snprintf(fmt, len, "%s", s);
    free(s);
    return 0;
}
