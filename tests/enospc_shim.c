/* enospc_shim.c — an LD_PRELOAD library for the disk-full tests (enospc_util.h): it
 * makes writes into the files whose path contains GZ_ENOSPC_MATCH (default ".tmp": the
 * files gridzero writes before renaming them into place) fail with ENOSPC, as on a full
 * disk, once GZ_ENOSPC_AFTER bytes have gone into such files (unset or negative: never).
 * With GZ_ENOSPC_LOG=FILE it appends the size of every such write to FILE, one a line,
 * so a test can aim a failure at each write in turn. write, pwrite and pwrite64 are
 * wrapped: HDF5's default driver writes with pwrite; glibc's stdio calls its internal
 * write and is not affected. Writes are all-or-nothing. */
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

/* 0: let the write of n bytes to fd through; -1: refuse it with ENOSPC. */
static int shim_check(int fd, size_t n)
{
    if (n == 0 || !shim_matches(fd))
        return 0;
    const char *after = getenv("GZ_ENOSPC_AFTER");
    long long budget = after ? atoll(after) : -1;
    long long done = __atomic_fetch_add(&shim_written, (long long)n, __ATOMIC_SEQ_CST);
    if (budget >= 0 && done + (long long)n > budget) {
        __atomic_fetch_sub(&shim_written, (long long)n, __ATOMIC_SEQ_CST);
        errno = ENOSPC;
        return -1;
    }
    shim_log(n);
    return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static write_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "write");
    return shim_check(fd, n) < 0 ? -1 : real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    static pwrite_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite");
    return shim_check(fd, n) < 0 ? -1 : real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pwrite64");
    return shim_check(fd, n) < 0 ? -1 : real(fd, buf, n, off);
}
