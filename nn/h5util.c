#define _GNU_SOURCE /* memfd_create */
#include "h5util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void nn_h5_quiet(void)
{
    /* No library shutdown at exit: a file whose close failed (a full disk) stays in HDF5
     * 1.10's table of ids although it was freed, and the shutdown would crash on it
     * (HDFGroup/hdf5#2291). Every file is closed explicitly, so the shutdown has nothing
     * to flush. Only takes effect before HDF5's first use in the process. */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static _Thread_local char reason[256];

/* The innermost error that quotes the system's message (walking up from the most
 * specific): its text into reason. */
static herr_t find_reason(unsigned n, const H5E_error2_t *e, void *found)
{
    (void)n;
    const char *q = e->desc ? strstr(e->desc, "error message = '") : NULL;
    if (!q || *(int *)found)
        return 0;
    q += strlen("error message = '");
    size_t len = strcspn(q, "'");
    if (len >= sizeof reason)
        len = sizeof reason - 1;
    memcpy(reason, q, len);
    reason[len] = 0;
    *(int *)found = 1;
    return 0;
}

const char *nn_h5_reason(void)
{
    int e = errno, found = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_reason, &found);
    if (!found)
        snprintf(reason, sizeof reason, "%s", e ? strerror(e) : "HDF5 error");
    errno = e;
    return reason;
}

int nn_h5_discard(hid_t f)
{
    hid_t fapl = H5Fget_access_plist(f);
    if (fapl < 0)
        return -1;
    hid_t drv = H5Pget_driver(fapl);
    H5Pclose(fapl);
    void *handle = NULL;
    if (drv != H5FD_SEC2 || H5Fget_vfd_handle(f, H5P_DEFAULT, &handle) < 0 || !handle)
        return -1;
    int fd = *(int *)handle; /* the sec2 driver's handle is its descriptor */
    int mem = memfd_create("gridzero-discarded", MFD_CLOEXEC);
    if (mem < 0)
        return ftruncate(fd, 0) == 0 ? 0 : -1; /* at least the space comes back */
    /* HDF5 may read back what it wrote (metadata it evicted) while closing: the copy
     * holds the file as written so far. */
    char buf[1 << 16];
    off_t at = 0;
    ssize_t n;
    int rc = 0;
    while ((n = pread(fd, buf, sizeof buf, at)) > 0) {
        if (write(mem, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
        at += n;
    }
    if (n < 0 || rc < 0 || dup2(mem, fd) < 0)
        rc = -1;
    close(mem);
    return rc;
}

int nn_h5_attr_put_str(hid_t loc, const char *name, const char *val)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    size_t len = strlen(val);
    int rc = -1;
    hid_t s = -1, a = -1;
    if (H5Tset_size(t, len ? len : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)
        goto out;
    s = H5Screate(H5S_SCALAR);
    if (s < 0)
        goto out;
    a = H5Acreate2(loc, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        goto out;
    rc = H5Awrite(a, t, len ? val : "") < 0 ? -1 : 0;
out:
    if (a >= 0)
        H5Aclose(a);
    if (s >= 0)
        H5Sclose(s);
    H5Tclose(t);
    return rc;
}

int nn_h5_attr_put_i64(hid_t loc, const char *name, int64_t v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0)
        return -1;
    hid_t a = H5Acreate2(loc, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = -1;
    if (a >= 0) {
        rc = H5Awrite(a, H5T_NATIVE_INT64, &v) < 0 ? -1 : 0;
        H5Aclose(a);
    }
    H5Sclose(s);
    return rc;
}

/* A scalar string attribute (fixed or variable length), malloc'd; NULL when missing or
 * not a string. */
char *nn_h5_attr_get_str(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return NULL;
    char *out = NULL;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    if (ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1)
        goto done;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        char *v = NULL;
        if (H5Aread(a, mt, &v) >= 0 && v) {
            out = strdup(v);
            H5free_memory(v);
        }
        H5Tclose(mt);
    } else {
        size_t n = H5Tget_size(ft);
        if (n == 0 || n > (1u << 24))
            goto done;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, n + 1);
        H5Tset_strpad(mt, H5T_STR_NULLTERM);
        out = calloc(n + 2, 1);
        if (out && H5Aread(a, mt, out) < 0) {
            free(out);
            out = NULL;
        }
        H5Tclose(mt);
    }
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    return out;
}

/* A scalar integer attribute; 0 ok, -1 missing or not an integer. */
int nn_h5_attr_get_i64(hid_t loc, const char *name, int64_t *v)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    int rc = -1;
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    if (ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_INTEGER && H5Sget_simple_extent_npoints(sp) == 1)
        rc = H5Aread(a, H5T_NATIVE_INT64, v) < 0 ? -1 : 0;
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    return rc;
}
