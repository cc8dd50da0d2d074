/* h5util.h — the small HDF5 helpers every gridzero file format shares (checkpoints,
 * sample files): quiet error stacks, scalar string and 64-bit integer attributes. Errors
 * never print; each function reports by its return value. Not thread-safe (Debian's
 * serial HDF5). */
#ifndef GZ_NN_H5UTIL_H
#define GZ_NN_H5UTIL_H

#include <stdint.h>

#include <hdf5.h>

/* Turns off HDF5's printing of its error stack (we report errors ourselves). */
void nn_h5_quiet(void);
/* Writes a scalar fixed-length string attribute. Returns 0 or -1. */
int nn_h5_attr_put_str(hid_t loc, const char *name, const char *val);
/* Writes a scalar 64-bit integer attribute. Returns 0 or -1. */
int nn_h5_attr_put_i64(hid_t loc, const char *name, int64_t v);
/* A scalar string attribute (fixed or variable length) as a malloc'd string (free with
 * free()); NULL when missing or not a string. */
char *nn_h5_attr_get_str(hid_t loc, const char *name);
/* A scalar integer attribute into *v; 0 ok, -1 missing or not an integer. */
int nn_h5_attr_get_i64(hid_t loc, const char *name, int64_t *v);

#endif
