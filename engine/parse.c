/* parse.c — see parse.h. */
#include "parse.h"

#include <ctype.h>
#include <stdbool.h>
#include <limits.h>

int parse_ll_prefix(const char *s, const char **end, long long lo, long long hi, long long *out)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!isdigit((unsigned char)*p)) {
        if (end)
            *end = s;
        return -1;
    }
    /* the magnitude in unsigned arithmetic, saturated: no overflow on any input */
    unsigned long long m = 0, cap = (unsigned long long)LLONG_MAX + 1ULL;
    bool over = false;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (m > (cap - d) / 10)
            over = true;
        else
            m = m * 10 + d;
    }
    if (end)
        *end = p;
    if (over || (!neg && m > (unsigned long long)LLONG_MAX))
        return -1;
    long long v = neg ? (m == cap ? LLONG_MIN : -(long long)m) : (long long)m;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
    const char *end;
    long long v;
    if (!s || parse_ll_prefix(s, &end, lo, hi, &v) < 0 || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_int(const char *s, int lo, int hi, int *out)
{
    long long v;
    if (parse_ll(s, lo, hi, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}
