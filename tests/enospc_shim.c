/* enospc_shim.c — an LD_PRELOAD library for the disk-full tests (enospc_util.h): it
 * makes writes into the files whose path contains GZ_ENOSPC_MATCH (default ".tmp": the
 * files gridzero writes before renaming them into place) fail with ENOSPC, as on a full
 * disk, once GZ_ENOSPC_AFTER bytes have gone into such files (unset or negative: never).
 * With GZ_ENOSPC_LOG=FILE it appends the size of every such write to FILE, one a line,
 * so a test can aim a failure at each write in turn. write, pwrite and pwrite64 are
 * wrapped: HDF5's default driver writes with pwrite; glibc's stdio calls its internal
 * write and is not affected. Writes are all-or-nothing, unless GZ_ENOSPC_PARTIAL is set
 * (then the write that meets the limit is short). */
#define _GNU_SOURCE
#undef _FILE_OFFSET_BITS /* pwrite and pwrite64 are wrapped as the two symbols they are */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static long long shim_written; /* bytes written into matching files so far */

/* Whether fd is a file whose path contains the match string. */
static int shim_matches(int fd)
{
    const char *match = getenv("GZ_ENOSPC_MATCH");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0)
        return 0;
    path[n] = 0;
    return strstr(path, match ? match : ".tmp") != NULL;
}

static void shim_log(size_t n)
{
    const char *log = getenv("GZ_ENOSPC_LOG");
    if (!log)
        return;
    write_fn real;
    *(void **)&real = dlsym(RTLD_NEXT, "write"); /* POSIX's way to a function pointer */
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[32];
    int len = snprintf(line, sizeof line, "%zu\n", n);
    if (real(fd, line, (size_t)len) != len)
        errno = 0;
    close(fd);
}

/* How much of a write of n bytes to fd goes through: n, or -1 (refused with ENOSPC); with
 * GZ_ENOSPC_PARTIAL set, the write that crosses the budget writes what fits (a short
 * write, as a real disk does) and only the next one is refused. */
static ssize_t shim_check(int fd, size_t n)
{
    if (n == 0 || !shim_matches(fd))
        return (ssize_t)n;
    const char *after = getenv("GZ_ENOSPC_AFTER");
    long long budget = after ? atoll(after) : -1;
    long long done = __atomic_fetch_add(&shim_written, (long long)n, __ATOMIC_SEQ_CST);
    if (budget >= 0 && done + (long long)n > budget) {
        long long fits = budget - done;
        if (getenv("GZ_ENOSPC_PARTIAL") && fits > 0) {
            __atomic_fetch_sub(&shim_written, (long long)n - fits, __ATOMIC_SEQ_CST);
            shim_log((size_t)fits);
            return (ssize_t)fits;
        }
        __atomic_fetch_sub(&shim_written, (long long)n, __ATOMIC_SEQ_CST);
        errno = ENOSPC;
        return -1;
    }
    shim_log(n);
    return (ssize_t)n;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static write_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "write");
    ssize_t k = shim_check(fd, n);
    return k < 0 ? -1 : real(fd, buf, (size_t)k);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite");
    ssize_t k = shim_check(fd, n);
    return k < 0 ? -1 : real(fd, buf, (size_t)k, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite64");
    ssize_t k = shim_check(fd, n);
    return k < 0 ? -1 : real(fd, buf, (size_t)k, off);
}
