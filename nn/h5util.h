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
/* For a file being written that failed (a full disk, a write error) and is about to be
 * closed and removed: points the file's descriptor at an anonymous in-memory copy of
 * what was written so far (memory the size of the file, until it is closed), so that
 * the writes HDF5 still makes while the file's objects and the file itself are closed
 * cannot fail, and reads of what it evicted still find it. (When closing a file fails
 * to flush, HDF5 1.10 frees the file but keeps its id, and the library's exit handler
 * then crashes on it: HDFGroup/hdf5#2291.) Call it before closing anything of the file,
 * once; what is written after it never reaches the disk. f must use the default (sec2)
 * driver. Returns 0, or -1 when the descriptor could not be replaced (the closes may
 * then fail as before). */
int nn_h5_discard(hid_t f);
/* Why the HDF5 call that just failed failed, for a message: the system's error text
 * when HDF5's error stack holds one (a write's "errno = 28, error message = 'No space
 * left on device'"), else errno's text when errno is set, else "HDF5 error". The text
 * lives in a thread-local buffer until the next call. */
const char *nn_h5_reason(void);
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
