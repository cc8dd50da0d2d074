/* errmsg.h — filling a caller's error buffer (STYLE.md: functions that can fail return
 * a negative status and write a message naming the file, key or input into err).
 * Knows nothing else; every library may use it. */
#ifndef GZ_ERRMSG_H
#define GZ_ERRMSG_H

#include <stddef.h>

/* Formats the message into err (at most errlen bytes, cut at the end if longer; err may
 * be NULL when errlen is 0) and returns -1, so a failing path reads
 * `return gz_fail(err, errlen, "%s: ...", path);`. Thread-safe. */
int gz_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
