/* parse.h — integers read from input (moves, coordinates, sizes, counts, seeds), range-
 * checked: a number too large for its type is refused, never wrapped into another value
 * (sscanf("%d") and atoi do that silently). Knows nothing else; every library may use it. */
#ifndef GZ_PARSE_H
#define GZ_PARSE_H

/* Reads an optional sign and decimal digits at s (no leading space skipped) and sets
 * *end just past them (end may be NULL). Returns 0 and the value in *out, or -1 when s
 * starts with no digits or the value lies outside [lo, hi] (overflow included); *end is
 * then past the digits too, *out untouched. */
int parse_ll_prefix(const char *s, const char **end, long long lo, long long hi, long long *out);

/* The whole of s must be the number (no space, nothing after it). 0 or -1 as above. */
int parse_ll(const char *s, long long lo, long long hi, long long *out);
/* The same for an int. */
int parse_int(const char *s, int lo, int hi, int *out);

#endif
