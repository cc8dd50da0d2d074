/* samples.c — the sample file writer and reader (see samples.h). */
#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <hdf5.h>
#include "engine/errmsg.h"
#include "nn/h5util.h"

/* HDF5 errors become our messages, never prints. */

static const char *lattice_word(game_lattice l) { return l == GAME_LATTICE_HEX ? "hex" : "square"; }

/* Whether a game of these ops and shape has owner targets (sp_game_has_owner). */
static bool owner_targets(const game_ops *ops, int rows, int cols, int actions)
{
    return ops && ops->cells && actions == rows * cols;
}

bool sp_game_has_owner(const game *g)
{
    return owner_targets(g->ops, g->rows, g->cols, g->actions);
}

/* Whether a game of these ops has action-value targets (sp_game_has_qa). */
static bool qa_targets(const game_ops *ops) { return ops && ops->score; }

bool sp_game_has_qa(const game *g) { return qa_targets(g->ops); }

sp_expect sp_expect_game(const game *g)
{
    sp_expect e;
    memset(&e, 0, sizeof e);
    snprintf(e.game, sizeof e.game, "%s", g->name);
    e.players = g->players;
    e.planes = g->planes;
    e.rows = g->rows;
    e.cols = g->cols;
    e.actions = g->actions;
    e.lattice = (int)g->lattice;
    snprintf(e.rule, sizeof e.rule, "%s", g->rule);
    return e;
}

char *sp_game_config_json(const gz_config *c)
{
    char *all = cfg_to_json(c);
    if (!all)
        return NULL;
    cJSON *root = cJSON_Parse(all);
    free(all);
    if (!root)
        return NULL;
    cJSON *gsec = cJSON_GetObjectItemCaseSensitive(root, "game");
    char *out = gsec ? cJSON_PrintUnformatted(gsec) : NULL;
    cJSON_Delete(root);
    if (!out)
        return NULL;
    /* cJSON's allocator is malloc by default; copy so the caller frees with free(). */
    char *copy = strdup(out);
    cJSON_free(out);
    return copy;
}

/* ---- writer -------------------------------------------------------------------- */

/* In the order the versions added them: a file of version v has the first 6 (v 1), 7
 * (v 2), 8 (v 3), with owner targets owner (v 4), with action-value targets qa (v 5). */
enum { DS_STATE, DS_PI, DS_LEGAL, DS_Z, DS_GAME, DS_PLY, DS_WEIGHT, DS_Q, DS_OWNER, DS_QA, DS_COUNT };
static const char *const ds_names[DS_COUNT] = {"state", "pi", "legal", "z", "game", "ply",
                                               "policy_weight", "q", "owner", "qa"};
#define DS_BIT(i) (1u << (i))
/* The datasets of a file of version v: the first `upto` of ds_names, then owner and qa
 * when it has those targets. */
static unsigned ds_mask(int upto, bool owned, bool qa)
{
    return (DS_BIT(upto) - 1) | (owned ? DS_BIT(DS_OWNER) : 0) | (qa ? DS_BIT(DS_QA) : 0);
}

struct sp_writer {
    /* immutable after open */
    char *path, *tmp;
    int planes, rows, cols, actions, players, chunk;
    bool scored;          /* z holds points to come (a scored game), not outcomes */
    unsigned mask;        /* datasets written (DS_BIT): the first DS_OWNER, owner with owner
                           * targets, qa with action-value targets */
    size_t per[DS_COUNT]; /* elements per sample of each dataset */
    hid_t file, ds[DS_COUNT];
    /* mutated */
    int64_t written; /* samples in the file */
    int nbuf;        /* samples in the buffers */
    uint8_t *b_state, *b_legal;
    float *b_pi, *b_z, *b_weight, *b_q;
    int32_t *b_game, *b_ply;
    int8_t *b_owner; /* NULL without owner targets */
    float *b_qa;     /* NULL without action-value targets */
    bool discarded;  /* the file was pointed at memory after a write error */
    int64_t games;   /* the "games" attribute written on close; -1 = none */
};

/* After a write error: the file's later writes (its closes) go to memory, once (see
 * nn_h5_discard). */
static void writer_discard(sp_writer *w)
{
    if (w->file >= 0 && !w->discarded)
        nn_h5_discard(w->file);
    w->discarded = true;
}

static hid_t ds_file_type(int i)
{
    switch (i) {
    case DS_STATE:
    case DS_LEGAL: return H5T_STD_U8LE;
    case DS_OWNER: return H5T_STD_I8LE;
    case DS_PI:
    case DS_Z:
    case DS_WEIGHT:
    case DS_QA:
    case DS_Q: return H5T_IEEE_F32LE;
    default: return H5T_STD_I32LE;
    }
}

static hid_t ds_mem_type(int i)
{
    switch (i) {
    case DS_STATE:
    case DS_LEGAL: return H5T_NATIVE_UINT8;
    case DS_OWNER: return H5T_NATIVE_INT8;
    case DS_PI:
    case DS_Z:
    case DS_WEIGHT:
    case DS_QA:
    case DS_Q: return H5T_NATIVE_FLOAT;
    default: return H5T_NATIVE_INT32;
    }
}

static void writer_free(sp_writer *w)
{
    free(w->path), free(w->tmp), free(w->b_state), free(w->b_legal), free(w->b_pi), free(w->b_z);
    free(w->b_game), free(w->b_ply), free(w->b_weight), free(w->b_q), free(w->b_owner);
    free(w->b_qa);
    free(w);
}

/* Closes the datasets and the file. Returns 0, or -1 when a close failed (its last
 * writes did not reach the disk). */
static int writer_close_h5(sp_writer *w)
{
    int rc = 0;
    for (int i = 0; i < DS_COUNT; i++)
        if (w->ds[i] >= 0) {
            rc |= H5Dclose(w->ds[i]) < 0 ? -1 : 0;
            w->ds[i] = -1;
        }
    if (w->file >= 0) {
        rc |= H5Fclose(w->file) < 0 ? -1 : 0;
        w->file = -1;
    }
    return rc;
}

sp_writer *sp_writer_open(const char *path, const game *g, const char *game_config,
                          const sp_meta *meta, char *err, size_t errlen)
{
    nn_h5_quiet();
    sp_writer *w = calloc(1, sizeof *w);
    if (!w) {
        gz_fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    w->file = -1;
    w->games = -1;
    for (int i = 0; i < DS_COUNT; i++)
        w->ds[i] = -1;
    w->planes = g->planes;
    w->rows = g->rows;
    w->cols = g->cols;
    w->actions = g->actions;
    w->players = g->players;
    w->scored = game_scored(g);
    bool owned = sp_game_has_owner(g);
    bool qa = sp_game_has_qa(g);
    w->mask = ds_mask(DS_OWNER, owned, qa);
    size_t hw = (size_t)g->rows * g->cols;
    w->per[DS_STATE] = (size_t)g->planes * hw;
    w->per[DS_PI] = w->per[DS_LEGAL] = (size_t)g->actions;
    w->per[DS_Z] = w->per[DS_Q] = (size_t)g->players;
    w->per[DS_GAME] = w->per[DS_PLY] = w->per[DS_WEIGHT] = 1;
    w->per[DS_OWNER] = hw;
    w->per[DS_QA] = (size_t)g->actions;
    /* chunks of about 256 KB of state, 16..1024 samples */
    size_t ch = (256u << 10) / w->per[DS_STATE];
    w->chunk = ch < 16 ? 16 : ch > 1024 ? 1024 : (int)ch;
    w->path = strdup(path);
    size_t tl = strlen(path) + 5;
    w->tmp = malloc(tl);
    w->b_state = malloc(w->per[DS_STATE] * w->chunk);
    w->b_legal = malloc(w->per[DS_LEGAL] * w->chunk);
    w->b_pi = malloc(sizeof(float) * w->per[DS_PI] * w->chunk);
    w->b_z = malloc(sizeof(float) * w->per[DS_Z] * w->chunk);
    w->b_game = malloc(sizeof(int32_t) * w->chunk);
    w->b_ply = malloc(sizeof(int32_t) * w->chunk);
    w->b_weight = malloc(sizeof(float) * w->chunk);
    w->b_q = malloc(sizeof(float) * w->per[DS_Q] * w->chunk);
    w->b_owner = owned ? malloc(w->per[DS_OWNER] * w->chunk) : NULL;
    w->b_qa = qa ? malloc(sizeof(float) * w->per[DS_QA] * w->chunk) : NULL;
    if (!w->path || !w->tmp || !w->b_state || !w->b_legal || !w->b_pi || !w->b_z || !w->b_game || !w->b_ply ||
        !w->b_weight || !w->b_q || (owned && !w->b_owner) || (qa && !w->b_qa)) {
        gz_fail(err, errlen, "%s: out of memory", path);
        writer_free(w);
        return NULL;
    }
    snprintf(w->tmp, tl, "%s.tmp", path);
    w->file = H5Fcreate(w->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0) {
        gz_fail(err, errlen, "%s: cannot create: %s", w->tmp, nn_h5_reason());
        unlink(w->tmp); /* created, but its first write failed */
        writer_free(w);
        return NULL;
    }
    int bad = 0;
    bad |= nn_h5_attr_put_str(w->file, "format", SP_FORMAT);
    bad |= nn_h5_attr_put_i64(w->file, "version", SP_VERSION);
    bad |= nn_h5_attr_put_str(w->file, "game", g->name);
    bad |= nn_h5_attr_put_str(w->file, "game_config", game_config ? game_config : "{}");
    bad |= nn_h5_attr_put_i64(w->file, "generation", meta ? meta->generation : 0);
    bad |= nn_h5_attr_put_str(w->file, "model", meta ? meta->model : "");
    bad |= nn_h5_attr_put_i64(w->file, "players", g->players);
    bad |= nn_h5_attr_put_i64(w->file, "planes", g->planes);
    bad |= nn_h5_attr_put_i64(w->file, "rows", g->rows);
    bad |= nn_h5_attr_put_i64(w->file, "cols", g->cols);
    bad |= nn_h5_attr_put_i64(w->file, "actions", g->actions);
    bad |= nn_h5_attr_put_str(w->file, "lattice", lattice_word(g->lattice));
    for (int i = 0; i < DS_COUNT && !bad; i++) {
        if (!(w->mask & DS_BIT(i)))
            continue;
        hsize_t dims[4] = {0}, maxd[4], chunk[4];
        int rank;
        if (i == DS_STATE) {
            rank = 4;
            hsize_t d[4] = {0, (hsize_t)g->planes, (hsize_t)g->rows, (hsize_t)g->cols};
            memcpy(dims, d, sizeof d);
        } else if (i == DS_GAME || i == DS_PLY || i == DS_WEIGHT) {
            rank = 1;
        } else {
            rank = 2;
            dims[1] = w->per[i];
        }
        memcpy(maxd, dims, sizeof dims);
        memcpy(chunk, dims, sizeof dims);
        maxd[0] = H5S_UNLIMITED;
        chunk[0] = (hsize_t)w->chunk;
        hid_t sp = H5Screate_simple(rank, dims, maxd);
        hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
        if (sp < 0 || pl < 0 || H5Pset_chunk(pl, rank, chunk) < 0 ||
            H5Pset_fletcher32(pl) < 0 || H5Pset_deflate(pl, 4) < 0)
            bad = 1;
        else
            w->ds[i] = H5Dcreate2(w->file, ds_names[i], ds_file_type(i), sp, H5P_DEFAULT, pl, H5P_DEFAULT);
        if (w->ds[i] < 0)
            bad = 1;
        if (sp >= 0)
            H5Sclose(sp);
        if (pl >= 0)
            H5Pclose(pl);
    }
    if (bad) {
        gz_fail(err, errlen, "%s: cannot write the file's attributes and datasets: %s", w->tmp, nn_h5_reason());
        sp_writer_abort(w);
        return NULL;
    }
    return w;
}

static int writer_flush(sp_writer *w, char *err, size_t errlen)
{
    if (w->nbuf == 0)
        return 0;
    const void *bufs[DS_COUNT] = {w->b_state, w->b_pi, w->b_legal, w->b_z, w->b_game, w->b_ply,
                                  w->b_weight, w->b_q, w->b_owner, w->b_qa};
    for (int i = 0; i < DS_COUNT; i++) {
        if (!(w->mask & DS_BIT(i)))
            continue;
        int rank = i == DS_STATE ? 4 : (i == DS_GAME || i == DS_PLY || i == DS_WEIGHT) ? 1 : 2;
        hsize_t dims[4], start[4] = {0}, count[4];
        dims[0] = (hsize_t)(w->written + w->nbuf);
        count[0] = (hsize_t)w->nbuf;
        start[0] = (hsize_t)w->written;
        if (i == DS_STATE) {
            dims[1] = count[1] = (hsize_t)w->planes;
            dims[2] = count[2] = (hsize_t)w->rows;
            dims[3] = count[3] = (hsize_t)w->cols;
        } else if (rank == 2) {
            dims[1] = count[1] = w->per[i];
        }
        int ok = H5Dset_extent(w->ds[i], dims) >= 0;
        hid_t fs = ok ? H5Dget_space(w->ds[i]) : -1;
        hid_t ms = H5Screate_simple(rank, count, NULL);
        ok = ok && fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dwrite(w->ds[i], ds_mem_type(i), ms, fs, H5P_DEFAULT, bufs[i]) >= 0;
        if (fs >= 0)
            H5Sclose(fs);
        if (ms >= 0)
            H5Sclose(ms);
        if (!ok)
            return gz_fail(err, errlen, "%s: cannot write dataset %s: %s", w->tmp,
                        ds_names[i], nn_h5_reason());
    }
    w->written += w->nbuf;
    w->nbuf = 0;
    return 0;
}

int sp_writer_append(sp_writer *w, const float *planes, const float *pi, const uint8_t *legal,
                     const float *z, int32_t gameix, int32_t ply, char *err, size_t errlen)
{
    return sp_writer_append_weighted(w, planes, pi, legal, z, NULL, 1.0f, gameix, ply, err, errlen);
}

int sp_writer_append_weighted(sp_writer *w, const float *planes, const float *pi,
                              const uint8_t *legal, const float *z, const float *q,
                              float policy_weight, int32_t gameix, int32_t ply, char *err,
                              size_t errlen)
{
    return sp_writer_append_owned(w, planes, pi, legal, z, q, policy_weight, NULL, gameix, ply,
                                  err, errlen);
}

int sp_writer_append_owned(sp_writer *w, const float *planes, const float *pi,
                           const uint8_t *legal, const float *z, const float *q,
                           float policy_weight, const int8_t *owner, int32_t gameix,
                           int32_t ply, char *err, size_t errlen)
{
    return sp_writer_append_full(w, planes, pi, legal, z, q, policy_weight, owner, NULL, gameix,
                                 ply, err, errlen);
}

/* Checks one sample's action-value targets (n moves): each NaN (no target) or finite
 * points of magnitude <= SP_MAX_POINTS, and NaN on every illegal move. Returns the first
 * bad move, or -1 when they are fine. */
static int qa_bad_move(const float *qa, const uint8_t *legal, size_t n)
{
    for (size_t a = 0; a < n; a++)
        if (!isnan(qa[a]) && (!legal[a] || !(fabsf(qa[a]) <= SP_MAX_POINTS)))
            return (int)a;
    return -1;
}

/* Checks one sample's owner map (n points, values for `players`): each value in
 * [-1, players], and all -1 or none. Returns the first bad point, or -1 when it is fine;
 * *mixed says whether the map mixes unknown and known points. */
static int owner_bad_point(const int8_t *owner, size_t n, int players, bool *mixed)
{
    size_t unknown = 0;
    *mixed = false;
    for (size_t p = 0; p < n; p++) {
        if (owner[p] < -1 || owner[p] > players)
            return (int)p;
        unknown += owner[p] == -1;
    }
    *mixed = unknown != 0 && unknown != n;
    return -1;
}

int sp_writer_append_full(sp_writer *w, const float *planes, const float *pi,
                          const uint8_t *legal, const float *z, const float *q,
                          float policy_weight, const int8_t *owner, const float *qa,
                          int32_t gameix, int32_t ply, char *err, size_t errlen)
{
    if (!q)
        q = z;
    size_t k = (size_t)w->nbuf;
    if (!(policy_weight >= 0.0f && policy_weight <= SP_MAX_WEIGHT))
        return gz_fail(err, errlen, "%s: sample %lld: policy weight %g is not in [0, %g]", w->tmp,
                       (long long)(w->written + w->nbuf), (double)policy_weight, SP_MAX_WEIGHT);
    if (owner && !w->b_owner)
        return gz_fail(err, errlen, "%s: sample %lld: an owner map for a game without point cells "
                       "(no owner targets)", w->tmp, (long long)(w->written + w->nbuf));
    if (owner) {
        bool mixed;
        int bad = owner_bad_point(owner, w->per[DS_OWNER], w->players, &mixed);
        if (bad >= 0)
            return gz_fail(err, errlen, "%s: sample %lld: owner[%d] = %d is not in [-1, %d]", w->tmp,
                           (long long)(w->written + w->nbuf), bad, owner[bad], w->players);
        if (mixed)
            return gz_fail(err, errlen, "%s: sample %lld: the owner map mixes unknown (-1) and known "
                           "points", w->tmp, (long long)(w->written + w->nbuf));
    }
    if (qa && !w->b_qa)
        return gz_fail(err, errlen, "%s: sample %lld: action-value targets for a game without a "
                       "score", w->tmp, (long long)(w->written + w->nbuf));
    if (qa) {
        int bad = qa_bad_move(qa, legal, w->per[DS_QA]);
        if (bad >= 0)
            return gz_fail(err, errlen, "%s: sample %lld: qa[%d] = %g is not a target (NaN, or "
                           "finite points of magnitude at most %g on a legal move)", w->tmp,
                           (long long)(w->written + w->nbuf), bad, (double)qa[bad], SP_MAX_POINTS);
    }
    uint8_t *st = w->b_state + k * w->per[DS_STATE];
    for (size_t i = 0; i < w->per[DS_STATE]; i++) {
        float v = planes[i];
        if (!(v >= 0.0f)) /* NaN too */
            v = 0.0f;
        if (v > 1.0f)
            v = 1.0f;
        st[i] = (uint8_t)lrintf(v * 255.0f);
    }
    for (size_t i = 0; i < w->per[DS_PI]; i++)
        if (!isfinite(pi[i]) || pi[i] < 0)
            return gz_fail(err, errlen, "%s: sample %lld: pi[%zu] = %g is not a probability", w->tmp,
                        (long long)(w->written + w->nbuf), i, (double)pi[i]);
    for (size_t i = 0; i < w->per[DS_Z]; i++) {
        if (w->scored && !(fabsf(z[i]) <= SP_MAX_POINTS))
            return gz_fail(err, errlen, "%s: sample %lld: z[%zu] = %g points is not a score (finite, "
                           "at most %g in magnitude)", w->tmp, (long long)(w->written + w->nbuf), i,
                           (double)z[i], SP_MAX_POINTS);
        if (!w->scored && (!isfinite(z[i]) || z[i] < -1 || z[i] > 1))
            return gz_fail(err, errlen, "%s: sample %lld: z[%zu] = %g is not in [-1, 1]", w->tmp,
                        (long long)(w->written + w->nbuf), i, (double)z[i]);
    }
    for (size_t i = 0; i < w->per[DS_Q]; i++) {
        if (w->scored && !(fabsf(q[i]) <= SP_MAX_POINTS))
            return gz_fail(err, errlen, "%s: sample %lld: q[%zu] = %g points is not a score (finite, "
                           "at most %g in magnitude)", w->tmp, (long long)(w->written + w->nbuf), i,
                           (double)q[i], SP_MAX_POINTS);
        if (!w->scored && (!isfinite(q[i]) || q[i] < -1 || q[i] > 1))
            return gz_fail(err, errlen, "%s: sample %lld: q[%zu] = %g is not in [-1, 1]", w->tmp,
                           (long long)(w->written + w->nbuf), i, (double)q[i]);
    }
    memcpy(w->b_pi + k * w->per[DS_PI], pi, sizeof(float) * w->per[DS_PI]);
    uint8_t *lg = w->b_legal + k * w->per[DS_LEGAL];
    for (size_t i = 0; i < w->per[DS_LEGAL]; i++)
        lg[i] = legal[i] ? 1 : 0;
    memcpy(w->b_z + k * w->per[DS_Z], z, sizeof(float) * w->per[DS_Z]);
    memcpy(w->b_q + k * w->per[DS_Q], q, sizeof(float) * w->per[DS_Q]);
    w->b_game[k] = gameix;
    w->b_ply[k] = ply;
    w->b_weight[k] = policy_weight;
    if (w->b_owner) {
        int8_t *ow = w->b_owner + k * w->per[DS_OWNER];
        if (owner)
            memcpy(ow, owner, w->per[DS_OWNER]);
        else
            memset(ow, -1, w->per[DS_OWNER]); /* unknown */
    }
    if (w->b_qa) {
        float *qk = w->b_qa + k * w->per[DS_QA];
        for (size_t a = 0; a < w->per[DS_QA]; a++)
            qk[a] = qa ? qa[a] : NAN; /* no target */
    }
    w->nbuf++;
    if (w->nbuf == w->chunk)
        return writer_flush(w, err, errlen);
    return 0;
}

int64_t sp_writer_count(const sp_writer *w) { return w->written + w->nbuf; }

void sp_writer_set_games(sp_writer *w, int64_t games) { w->games = games; }

int sp_writer_close(sp_writer *w, char *err, size_t errlen)
{
    if (writer_flush(w, err, errlen) < 0) {
        sp_writer_abort(w);
        return -1;
    }
    if ((w->games >= 0 && nn_h5_attr_put_i64(w->file, "games", w->games) < 0) ||
        nn_h5_attr_put_i64(w->file, "complete", 1) < 0 || H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        gz_fail(err, errlen, "%s: cannot finish the file: %s", w->tmp, nn_h5_reason());
        sp_writer_abort(w);
        return -1;
    }
    if (writer_close_h5(w) < 0) {
        gz_fail(err, errlen, "%s: cannot finish the file (closing it failed): %s", w->tmp, nn_h5_reason());
        unlink(w->tmp);
        writer_free(w);
        return -1;
    }
    if (rename(w->tmp, w->path) != 0) {
        gz_fail(err, errlen, "%s: cannot rename to %s: %s", w->tmp, w->path, strerror(errno));
        unlink(w->tmp);
        writer_free(w);
        return -1;
    }
    writer_free(w);
    return 0;
}

int sp_writer_close_as(sp_writer *w, const char *path, char *err, size_t errlen)
{
    char *p = strdup(path);
    if (!p) {
        sp_writer_abort(w);
        return gz_fail(err, errlen, "%s: out of memory", path);
    }
    free(w->path);
    w->path = p;
    return sp_writer_close(w, err, errlen);
}

void sp_writer_abort(sp_writer *w)
{
    if (!w)
        return;
    writer_discard(w); /* the closes cannot fail on a full disk (see nn/h5util.h) */
    writer_close_h5(w);
    unlink(w->tmp);
    writer_free(w);
}

/* ---- reader -------------------------------------------------------------------- */

void sp_file_free(sp_file *f)
{
    if (!f)
        return;
    free(f->path), free(f->game_config), free(f->state), free(f->pi), free(f->legal), free(f->z);
    free(f->gameix), free(f->ply), free(f->weight), free(f->q), free(f->owner);
    free(f->qa);
    free(f);
}

/* Opens dataset name, checks its rank, its trailing dims and its element type, and
 * reads it whole into a new buffer (*out). *n is dimension 0 (checked equal to a
 * previous *n when *n >= 0). */
static int read_ds(hid_t file, const char *path, int i, int rank, const hsize_t *trail, int64_t *n,
                   void **out, char *err, size_t errlen)
{
    const char *name = ds_names[i];
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
        return gz_fail(err, errlen, "%s: dataset %s is missing", path, name);
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    if (d < 0)
        return gz_fail(err, errlen, "%s: dataset %s cannot be opened", path, name);
    int rc = -1;
    hid_t sp = H5Dget_space(d), ft = H5Dget_type(d);
    hsize_t dims[8] = {0};
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (r != rank || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
        gz_fail(err, errlen, "%s: dataset %s has rank %d, expected %d", path, name, r, rank);
        goto out;
    }
    for (int k = 1; k < rank; k++)
        if (dims[k] != trail[k - 1]) {
            gz_fail(err, errlen, "%s: dataset %s dimension %d is %llu, expected %llu", path, name, k,
                 (unsigned long long)dims[k], (unsigned long long)trail[k - 1]);
            goto out;
        }
    if (*n >= 0 && (int64_t)dims[0] != *n) {
        gz_fail(err, errlen, "%s: dataset %s has %llu samples, the others %lld", path, name,
             (unsigned long long)dims[0], (long long)*n);
        goto out;
    }
    H5T_class_t cls = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
    size_t sz = ft >= 0 ? H5Tget_size(ft) : 0;
    int want_float = i == DS_PI || i == DS_Z || i == DS_WEIGHT || i == DS_Q || i == DS_QA;
    size_t want_sz = (i == DS_STATE || i == DS_LEGAL || i == DS_OWNER) ? 1 : 4;
    /* 1-byte datasets: unsigned, except the signed owner codes */
    H5T_sign_t want_sign = i == DS_OWNER ? H5T_SGN_2 : H5T_SGN_NONE;
    int type_ok = want_float ? cls == H5T_FLOAT && sz == 4
                             : cls == H5T_INTEGER && sz == want_sz &&
                                   (want_sz == 4 || H5Tget_sign(ft) == want_sign);
    if (!type_ok) {
        gz_fail(err, errlen, "%s: dataset %s has the wrong type (expected %s)", path, name,
             want_float ? "float32" : i == DS_OWNER ? "int8" : want_sz == 1 ? "uint8" : "int32");
        goto out;
    }
    size_t per = 1;
    for (int k = 1; k < rank; k++)
        per *= (size_t)dims[k];
    if (dims[0] > (1ull << 31) || (double)dims[0] * per * want_sz > 64e9) {
        gz_fail(err, errlen, "%s: dataset %s is implausibly large (%llu samples)", path, name,
             (unsigned long long)dims[0]);
        goto out;
    }
    size_t bytes = (size_t)dims[0] * per * want_sz;
    *out = malloc(bytes ? bytes : 1);
    if (!*out) {
        gz_fail(err, errlen, "%s: out of memory reading dataset %s", path, name);
        goto out;
    }
    if (bytes && H5Dread(d, ds_mem_type(i), H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
        gz_fail(err, errlen, "%s: dataset %s cannot be read (truncated or corrupt file)", path, name);
        goto out;
    }
    *n = (int64_t)dims[0];
    rc = 0;
out:
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
    H5Dclose(d);
    return rc;
}

/* Deflate packs at most about 1032:1; with the chunk index and headers, no sample file
 * holds more than this many bytes of data per byte of file. */
#define SP_MAX_PACK_RATIO 1100.0

/* Whether dataset d's storage may hold what it declares: only the filters the writer
 * uses (deflate, Fletcher-32, and shuffle), which bound its packing ratio, and every
 * chunk allocated (a dataset extended and never written reads back as fill values: the
 * cost of reading it follows what it declares, not what the file holds), or contiguous
 * storage as large as the data. space: d's dataspace (all selected); bytes: the data's
 * size in memory. */
static int check_storage(hid_t d, hid_t space, const char *path, const char *name, int rank,
                         const hsize_t *dims, double bytes, char *err, size_t errlen)
{
    hid_t pl = H5Dget_create_plist(d);
    if (pl < 0)
        return gz_fail(err, errlen, "%s: dataset %s: cannot read its storage properties", path, name);
    int rc = -1;
    H5D_layout_t layout = H5Pget_layout(pl);
    int nf = H5Pget_nfilters(pl);
    for (int k = 0; k < nf; k++) {
        unsigned flags;
        size_t ncd = 0;
        char fname[64];
        H5Z_filter_t id = H5Pget_filter2(pl, (unsigned)k, &flags, &ncd, NULL, sizeof fname, fname, NULL);
        if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_FLETCHER32 && id != H5Z_FILTER_SHUFFLE) {
            gz_fail(err, errlen, "%s: dataset %s: unsupported HDF5 filter %d (gridzero writes deflate "
                    "and Fletcher-32 only)", path, name, (int)id);
            goto out;
        }
    }
    if (nf < 0) {
        gz_fail(err, errlen, "%s: dataset %s: cannot read its filters", path, name);
        goto out;
    }
    if (layout == H5D_CHUNKED) {
        hsize_t chunk[8];
        if (H5Pget_chunk(pl, rank, chunk) != rank) {
            gz_fail(err, errlen, "%s: dataset %s: cannot read its chunk shape", path, name);
            goto out;
        }
        double want = 1;
        for (int k = 0; k < rank; k++)
            want *= chunk[k] ? (double)((dims[k] + chunk[k] - 1) / chunk[k]) : 0;
        hsize_t have = 0;
        if (H5Dget_num_chunks(d, space, &have) < 0) {
            gz_fail(err, errlen, "%s: dataset %s: cannot count its chunks (corrupt file?)", path, name);
            goto out;
        }
        if ((double)have < want) {
            gz_fail(err, errlen, "%s: dataset %s declares %llu samples but stores %llu of its %.0f "
                    "chunks (a sparse, unfinished or forged file)", path, name,
                    (unsigned long long)dims[0], (unsigned long long)have, want);
            goto out;
        }
    } else if ((double)H5Dget_storage_size(d) < bytes) {
        gz_fail(err, errlen, "%s: dataset %s declares %llu samples (%.0f bytes) but stores %llu bytes",
                path, name, (unsigned long long)dims[0], bytes,
                (unsigned long long)H5Dget_storage_size(d));
        goto out;
    }
    rc = 0;
out:
    H5Pclose(pl);
    return rc;
}

/* Checks, before anything proportional to the declared sample count is allocated, that
 * the datasets of mask (DS_BIT: the ones the file's version has) exist, agree on
 * the number of samples, and really hold them: the storage of each (check_storage) and
 * the whole against the file's size. Shapes and types are checked by read_ds. */
static int check_extents(hid_t file, const char *path, unsigned mask, char *err, size_t errlen)
{
    hsize_t n0 = 0;
    double total = 0;
    for (int i = 0; i < DS_COUNT; i++) {
        if (!(mask & DS_BIT(i)))
            continue;
        const char *name = ds_names[i];
        if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
            return gz_fail(err, errlen, "%s: dataset %s is missing", path, name);
        hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
        if (d < 0)
            return gz_fail(err, errlen, "%s: dataset %s cannot be opened", path, name);
        hid_t sp = H5Dget_space(d), ft = H5Dget_type(d);
        hsize_t dims[8] = {0};
        int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        size_t esz = ft >= 0 ? H5Tget_size(ft) : 0;
        int rc = -1;
        if (r < 1 || r > 8 || H5Sget_simple_extent_dims(sp, dims, NULL) < 0 || esz == 0 || esz > 16) {
            gz_fail(err, errlen, "%s: dataset %s: unreadable shape or type", path, name);
        } else if (i > 0 && dims[0] != n0) {
            gz_fail(err, errlen, "%s: dataset %s has %llu samples, dataset %s %llu", path, name,
                    (unsigned long long)dims[0], ds_names[0], (unsigned long long)n0);
        } else {
            n0 = dims[0];
            double bytes = (double)esz;
            for (int k = 0; k < r; k++)
                bytes *= (double)dims[k];
            total += bytes;
            rc = check_storage(d, sp, path, name, r, dims, bytes, err, errlen);
        }
        if (ft >= 0)
            H5Tclose(ft);
        if (sp >= 0)
            H5Sclose(sp);
        H5Dclose(d);
        if (rc < 0)
            return -1;
    }
    hsize_t fsize = 0;
    if (H5Fget_filesize(file, &fsize) < 0)
        return gz_fail(err, errlen, "%s: cannot get the file's size", path);
    if (total > SP_MAX_PACK_RATIO * (double)fsize + (double)(1 << 20))
        return gz_fail(err, errlen, "%s: declares %llu samples (%.0f MB of data) in a file of %llu "
                       "bytes: more than it can hold", path, (unsigned long long)n0, total / 1e6,
                       (unsigned long long)fsize);
    return 0;
}

/* Sample i's game and ply indices (ix: its number in the file, for the message). */
static int check_indices(const sp_file *f, int64_t i, const char *p, long long ix, char *err,
                         size_t errlen)
{
    if (f->gameix[i] < 0)
        return gz_fail(err, errlen, "%s: dataset game, sample %lld: negative game index %d", p, ix,
                       (int)f->gameix[i]);
    if (f->ply[i] < 0)
        return gz_fail(err, errlen, "%s: dataset ply, sample %lld: negative ply %d", p, ix, (int)f->ply[i]);
    return 0;
}

/* Sample i's owner map, when the file has one: each point in [-1, players], all -1
 * (unknown) or none. */
static int check_owner(const sp_file *f, int64_t i, const char *p, long long ix, char *err,
                       size_t errlen)
{
    if (!f->owner)
        return 0;
    size_t hw = (size_t)f->rows * f->cols;
    bool mixed;
    int bad = owner_bad_point(f->owner + (size_t)i * hw, hw, f->players, &mixed);
    if (bad >= 0)
        return gz_fail(err, errlen, "%s: dataset owner, sample %lld: point %d is %d, not in [-1, %d]",
                       p, ix, bad, f->owner[(size_t)i * hw + (size_t)bad], f->players);
    if (mixed)
        return gz_fail(err, errlen, "%s: dataset owner, sample %lld: mixes unknown (-1) and known "
                       "points (a map is all -1 or has none)", p, ix);
    return 0;
}

/* Sample i's action-value targets, when the file has them: NaN or finite points of
 * magnitude <= SP_MAX_POINTS, NaN on illegal moves. */
static int check_qa(const sp_file *f, int64_t i, const char *p, long long ix, char *err,
                    size_t errlen)
{
    if (!f->qa)
        return 0;
    const float *qa = f->qa + (size_t)i * f->actions;
    int bad = qa_bad_move(qa, f->legal + (size_t)i * f->actions, (size_t)f->actions);
    if (bad >= 0)
        return gz_fail(err, errlen, "%s: dataset qa, sample %lld: move %d is %g, not a target (NaN, "
                       "or finite points of magnitude at most %g on a legal move)", p, ix, bad,
                       (double)qa[bad], SP_MAX_POINTS);
    return 0;
}

/* Checks sample i of f in one pass over its rows: legal 0/1 with at least one legal
 * move; pi finite, >= 0, no mass on illegal moves and summing to 1 over the legal ones;
 * z finite in [-1, 1] and, with two or more players, summing to 0 (every outcome rule
 * of the games is zero-sum: win/loss/draw, and Sanling's places); q finite in [-1, 1];
 * a scored game's z and q finite points, |.| <= SP_MAX_POINTS; game and ply >= 0.
 * Returns 0, or -1 with a message naming the file (p), the dataset and the sample. */
static int check_sample(const sp_file *f, const char *p, int64_t i, char *err, size_t errlen)
{
    const float *pi = f->pi + (size_t)i * f->actions;
    const uint8_t *lg = f->legal + (size_t)i * f->actions;
    const float *z = f->z + (size_t)i * f->players;
    long long ix = (long long)i;
    int nlegal = 0;
    double sum = 0, illegal = 0;
    for (int a = 0; a < f->actions; a++) {
        if (lg[a] > 1)
            return gz_fail(err, errlen, "%s: dataset legal, sample %lld: entry %d is %d, not 0/1", p, ix,
                           a, lg[a]);
        if (!isfinite(pi[a]) || pi[a] < 0)
            return gz_fail(err, errlen, "%s: dataset pi, sample %lld: pi[%d] = %g is not a probability",
                           p, ix, a, (double)pi[a]);
        nlegal += lg[a];
        if (lg[a])
            sum += pi[a];
        else
            illegal += pi[a];
    }
    if (nlegal == 0)
        return gz_fail(err, errlen, "%s: dataset legal, sample %lld: no legal move (an all-zero mask)", p,
                       ix);
    if (illegal > 1e-6)
        return gz_fail(err, errlen, "%s: dataset pi, sample %lld: %g of the probability is on illegal "
                       "moves", p, ix, illegal);
    if (fabs(sum - 1) > 1e-3)
        return gz_fail(err, errlen, "%s: dataset pi, sample %lld: sums to %g over the legal moves, not 1",
                       p, ix, sum);
    double zsum = 0;
    const game_ops *ops = game_find(f->game);
    const float *q = f->q + (size_t)i * f->players;
    if (ops && ops->score) { /* a scored game: points to come, no zero sum */
        for (int k = 0; k < f->players; k++) {
            if (!(fabsf(z[k]) <= SP_MAX_POINTS))
                return gz_fail(err, errlen, "%s: dataset z, sample %lld: z[%d] = %g points is not a "
                               "score (finite, at most %g in magnitude)", p, ix, k, (double)z[k],
                               SP_MAX_POINTS);
            if (!(fabsf(q[k]) <= SP_MAX_POINTS))
                return gz_fail(err, errlen, "%s: dataset q, sample %lld: q[%d] = %g points is not a "
                               "score (finite, at most %g in magnitude)", p, ix, k, (double)q[k],
                               SP_MAX_POINTS);
        }
        return check_indices(f, i, p, ix, err, errlen);
    }
    for (int k = 0; k < f->players; k++) {
        if (!isfinite(z[k]) || z[k] < -1 || z[k] > 1)
            return gz_fail(err, errlen, "%s: dataset z, sample %lld: z[%d] = %g is not in [-1, 1]", p, ix,
                           k, (double)z[k]);
        zsum += z[k];
    }
    if (f->players > 1 && fabs(zsum) > 1e-3)
        return gz_fail(err, errlen, "%s: dataset z, sample %lld: outcomes sum to %g; every game's "
                       "outcomes sum to 0", p, ix, zsum);
    for (int k = 0; k < f->players; k++)
        if (!isfinite(q[k]) || q[k] < -1 || q[k] > 1)
            return gz_fail(err, errlen, "%s: dataset q, sample %lld: q[%d] = %g is not in [-1, 1]", p, ix,
                           k, (double)q[k]);
    return check_indices(f, i, p, ix, err, errlen);
}

sp_file *sp_file_read(const char *path, const sp_expect *expect, char *err, size_t errlen)
{
    nn_h5_quiet();
    size_t pl = strlen(path);
    if (pl >= 4 && strcmp(path + pl - 4, ".tmp") == 0) {
        gz_fail(err, errlen, "%s: a temporary file (being written, or left by a crash): not a sample file", path);
        return NULL;
    }
    if (access(path, R_OK) != 0) {
        gz_fail(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    if (H5Fis_hdf5(path) <= 0) {
        gz_fail(err, errlen, "%s: not an HDF5 file (or truncated)", path);
        return NULL;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        gz_fail(err, errlen, "%s: cannot open as HDF5 (corrupt or truncated)", path);
        return NULL;
    }
    sp_file *f = calloc(1, sizeof *f);
    char *s = NULL;
    if (!f) {
        gz_fail(err, errlen, "%s: out of memory", path);
        goto bad;
    }
    f->path = strdup(path);
    s = nn_h5_attr_get_str(file, "format");
    if (!s || strcmp(s, SP_FORMAT) != 0) {
        gz_fail(err, errlen, "%s: not a gridzero sample file (format attribute %s%s%s, expected \"%s\")",
             path, s ? "\"" : "missing", s ? s : "", s ? "\"" : "", SP_FORMAT);
        goto bad;
    }
    free(s);
    s = NULL;
    int64_t v;
    if (nn_h5_attr_get_i64(file, "version", &v) < 0 || v < 1 || v > SP_VERSION) {
        gz_fail(err, errlen, "%s: unsupported sample format version (expected 1..%d)", path, SP_VERSION);
        goto bad;
    }
    int version = (int)v;
    f->version = version;
    if (nn_h5_attr_get_i64(file, "complete", &v) < 0 || v != 1) {
        gz_fail(err, errlen, "%s: incomplete sample file (no \"complete\" mark: its writer did not finish)", path);
        goto bad;
    }
    s = nn_h5_attr_get_str(file, "game");
    if (!s || !s[0] || strlen(s) >= GAME_NAME_LEN) {
        gz_fail(err, errlen, "%s: attribute game is missing or invalid", path);
        goto bad;
    }
    snprintf(f->game, sizeof f->game, "%s", s);
    free(s);
    s = NULL;
    f->game_config = nn_h5_attr_get_str(file, "game_config");
    if (!f->game_config) {
        gz_fail(err, errlen, "%s: attribute game_config is missing", path);
        goto bad;
    }
    if (nn_h5_attr_get_i64(file, "generation", &f->meta.generation) < 0) {
        gz_fail(err, errlen, "%s: attribute generation is missing or not an integer", path);
        goto bad;
    }
    s = nn_h5_attr_get_str(file, "model");
    if (!s) {
        gz_fail(err, errlen, "%s: attribute model is missing", path);
        goto bad;
    }
    snprintf(f->meta.model, sizeof f->meta.model, "%s", s);
    free(s);
    s = NULL;
    struct {
        const char *name;
        int *dst;
        int lo, hi;
    } ints[] = {{"players", &f->players, 1, GAME_MAX_PLAYERS}, {"planes", &f->planes, 1, 256},
                {"rows", &f->rows, 1, GAME_MAX_SIDE},         {"cols", &f->cols, 1, GAME_MAX_SIDE},
                {"actions", &f->actions, 1, GAME_MAX_ACTIONS}};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        if (nn_h5_attr_get_i64(file, ints[k].name, &v) < 0 || v < ints[k].lo || v > ints[k].hi) {
            gz_fail(err, errlen, "%s: attribute %s is missing or out of range [%d, %d]", path, ints[k].name,
                 ints[k].lo, ints[k].hi);
            goto bad;
        }
        *ints[k].dst = (int)v;
    }
    s = nn_h5_attr_get_str(file, "lattice");
    if (!s || (strcmp(s, "square") && strcmp(s, "hex"))) {
        gz_fail(err, errlen, "%s: attribute lattice is missing or not square|hex", path);
        goto bad;
    }
    f->lattice = strcmp(s, "hex") == 0 ? GAME_LATTICE_HEX : GAME_LATTICE_SQUARE;
    free(s);
    s = NULL;
    if (expect) {
        if (expect->game[0] && strcmp(expect->game, f->game)) {
            gz_fail(err, errlen, "%s: samples of game %s, expected %s", path, f->game, expect->game);
            goto bad;
        }
        struct {
            const char *name;
            int have, want;
        } cmp[] = {{"players", f->players, expect->players}, {"planes", f->planes, expect->planes},
                   {"rows", f->rows, expect->rows},          {"cols", f->cols, expect->cols},
                   {"actions", f->actions, expect->actions}, {"lattice", (int)f->lattice, expect->lattice}};
        for (size_t k = 0; k < sizeof cmp / sizeof cmp[0]; k++)
            if (cmp[k].want >= 0 && cmp[k].have != cmp[k].want) {
                if (k == 5)
                    gz_fail(err, errlen, "%s: lattice is %s, expected %s", path, lattice_word(f->lattice),
                         lattice_word((game_lattice)cmp[k].want));
                else
                    gz_fail(err, errlen, "%s: %s is %d, expected %d", path, cmp[k].name, cmp[k].have, cmp[k].want);
                goto bad;
            }
    }
    if (expect && expect->rule[0]) {
        cJSON *gc = cJSON_Parse(f->game_config);
        const cJSON *r = gc ? cJSON_GetObjectItemCaseSensitive(gc, "rule") : NULL;
        char have[GAME_NAME_LEN] = "";
        if (cJSON_IsString(r))
            snprintf(have, sizeof have, "%s", r->valuestring);
        cJSON_Delete(gc);
        bool old_ok = !strcmp(expect->rule, "freestyle") || !strcmp(expect->rule, "exact");
        if (have[0] ? strcmp(have, expect->rule) != 0 : !old_ok) {
            gz_fail(err, errlen, "%s: samples played under rule %s, expected %s (game.rule)", path,
                    have[0] ? have : "freestyle or exact (none recorded)", expect->rule);
            goto bad;
        }
    }
    /* Owner targets: a version 4 file has them exactly when its game has point cells; a
     * file of a game this build does not know, when it has the dataset. Earlier versions
     * have none (an owner dataset in them is not looked at). */
    bool owned = false;
    if (version >= 4) {
        const game_ops *gops = game_find(f->game);
        htri_t present = H5Lexists(file, ds_names[DS_OWNER], H5P_DEFAULT);
        owned = gops ? owner_targets(gops, f->rows, f->cols, f->actions) : present > 0;
        if (!owned && present > 0) {
            gz_fail(err, errlen, "%s: dataset owner in a file of game %s, whose actions are not its "
                    "points (no owner targets)", path, f->game);
            goto bad;
        }
    }
    /* Action-value targets: a version 5 file has them exactly when its game keeps a
     * score; a file of a game this build does not know, when it has the dataset. Earlier
     * versions have none (a qa dataset in them is not looked at). */
    bool has_qa = false;
    if (version >= 5) {
        const game_ops *gops = game_find(f->game);
        htri_t present = H5Lexists(file, ds_names[DS_QA], H5P_DEFAULT);
        has_qa = gops ? qa_targets(gops) : present > 0;
        if (!has_qa && present > 0) {
            gz_fail(err, errlen, "%s: dataset qa in a file of game %s, which keeps no score (no "
                    "action-value targets)", path, f->game);
            goto bad;
        }
    }
    /* version 1 files have the datasets before policy_weight, version 2 those before q,
     * version 3 and later those before owner, then owner and qa where they apply */
    unsigned mask = ds_mask(version >= 3 ? DS_OWNER : version == 2 ? DS_Q : DS_WEIGHT, owned, has_qa);
    if (check_extents(file, path, mask, err, errlen) < 0)
        goto bad;
    f->n = -1;
    hsize_t t_state[3] = {(hsize_t)f->planes, (hsize_t)f->rows, (hsize_t)f->cols};
    hsize_t t_act[1] = {(hsize_t)f->actions}, t_pl[1] = {(hsize_t)f->players};
    if (read_ds(file, path, DS_STATE, 4, t_state, &f->n, (void **)&f->state, err, errlen) < 0 ||
        read_ds(file, path, DS_PI, 2, t_act, &f->n, (void **)&f->pi, err, errlen) < 0 ||
        read_ds(file, path, DS_LEGAL, 2, t_act, &f->n, (void **)&f->legal, err, errlen) < 0 ||
        read_ds(file, path, DS_Z, 2, t_pl, &f->n, (void **)&f->z, err, errlen) < 0 ||
        read_ds(file, path, DS_GAME, 1, NULL, &f->n, (void **)&f->gameix, err, errlen) < 0 ||
        read_ds(file, path, DS_PLY, 1, NULL, &f->n, (void **)&f->ply, err, errlen) < 0)
        goto bad;
    if (version >= 2) {
        if (read_ds(file, path, DS_WEIGHT, 1, NULL, &f->n, (void **)&f->weight, err, errlen) < 0)
            goto bad;
        for (int64_t i = 0; i < f->n; i++)
            if (!(f->weight[i] >= 0.0f && f->weight[i] <= SP_MAX_WEIGHT)) {
                gz_fail(err, errlen, "%s: policy_weight of sample %lld is not in [0, %g] (%g)", path,
                        (long long)i, SP_MAX_WEIGHT, (double)f->weight[i]);
                goto bad;
            }
    } else {
        /* version 1 files have no weights: every policy target counts fully */
        f->weight = malloc(sizeof(float) * (size_t)(f->n > 0 ? f->n : 1));
        if (!f->weight) {
            gz_fail(err, errlen, "%s: out of memory", path);
            goto bad;
        }
        for (int64_t i = 0; i < f->n; i++)
            f->weight[i] = 1.0f;
    }
    if (version >= 3) {
        if (read_ds(file, path, DS_Q, 2, t_pl, &f->n, (void **)&f->q, err, errlen) < 0)
            goto bad;
    } else {
        /* files before version 3 have no search values: q is the outcome */
        size_t bytes = sizeof(float) * (size_t)f->players * (size_t)(f->n > 0 ? f->n : 1);
        f->q = malloc(bytes);
        if (!f->q) {
            gz_fail(err, errlen, "%s: out of memory", path);
            goto bad;
        }
        memcpy(f->q, f->z, sizeof(float) * (size_t)f->players * (size_t)f->n);
    }
    if (owned) {
        hsize_t t_hw[1] = {(hsize_t)f->rows * (hsize_t)f->cols};
        if (read_ds(file, path, DS_OWNER, 2, t_hw, &f->n, (void **)&f->owner, err, errlen) < 0)
            goto bad;
    }
    if (has_qa && read_ds(file, path, DS_QA, 2, t_act, &f->n, (void **)&f->qa, err, errlen) < 0)
        goto bad;
    for (int64_t i = 0; i < f->n; i++)
        if (check_sample(f, path, i, err, errlen) < 0 ||
            check_owner(f, i, path, (long long)i, err, errlen) < 0 ||
            check_qa(f, i, path, (long long)i, err, errlen) < 0)
            goto bad;
    H5Fclose(file);
    return f;
bad:
    free(s);
    sp_file_free(f);
    H5Fclose(file);
    return NULL;
}

/* ---- resignation records ----------------------------------------------------------- */

int sp_writer_put_resign_checks(sp_writer *w, const sp_resign_check *c, int n, char *err,
                                size_t errlen)
{
    if (n <= 0)
        return 0;
    float *buf = malloc(sizeof(float) * 2 * (size_t)n);
    if (!buf)
        return gz_fail(err, errlen, "%s: out of memory", w->tmp);
    for (int i = 0; i < n; i++) {
        buf[2 * i] = c[i].value;
        buf[2 * i + 1] = c[i].lost ? 1.0f : 0.0f;
    }
    hsize_t dims[2] = {(hsize_t)n, 2};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t d = sp >= 0 ? H5Dcreate2(w->file, "resign_checks", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT)
                      : -1;
    /* flushed before the close, so that a full disk shows while the file can still be
     * discarded, not inside the close */
    int ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 &&
             H5Dflush(d) >= 0;
    if (!ok)
        writer_discard(w);
    if (d >= 0 && H5Dclose(d) < 0)
        ok = 0;
    if (sp >= 0)
        H5Sclose(sp);
    free(buf);
    if (!ok)
        return gz_fail(err, errlen, "%s: cannot write dataset resign_checks: %s", w->tmp, nn_h5_reason());
    return 0;
}

/* Opens path read-only. Returns the file, or -1 with a message naming it. */
static hid_t open_read(const char *path, char *err, size_t errlen)
{
    nn_h5_quiet();
    if (H5Fis_hdf5(path) <= 0)
        return gz_fail(err, errlen, "%s: not an HDF5 file (or truncated)", path);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return gz_fail(err, errlen, "%s: cannot open as HDF5 (corrupt or truncated)", path);
    return file;
}

int sp_read_resign_checks(const char *path, sp_resign_check **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    hid_t file = open_read(path, err, errlen);
    if (file < 0)
        return -1;
    int rc = 0;
    if (H5Lexists(file, "resign_checks", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(file, "resign_checks", H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
        hsize_t dims[2] = {0, 0};
        int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 &&
                 H5Sget_simple_extent_dims(sp, dims, NULL) == 2 && dims[1] == 2 && dims[0] <= (1u << 24);
        /* the records it declares really stored, before the buffers (check_storage) */
        int stored = !ok || check_storage(d, sp, path, "resign_checks", 2, dims,
                                          (double)dims[0] * 2 * sizeof(float), err, errlen) == 0;
        ok = ok && stored;
        float *buf = ok ? malloc(sizeof(float) * 2 * (size_t)(dims[0] ? dims[0] : 1)) : NULL;
        ok = ok && buf && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
        sp_resign_check *c = ok ? malloc(sizeof *c * (size_t)(dims[0] ? dims[0] : 1)) : NULL;
        for (hsize_t i = 0; c && i < dims[0]; i++) {
            float v = buf[2 * i], l = buf[2 * i + 1];
            if (!isfinite(v) || v < -1 || v > 2 || (l != 0 && l != 1)) {
                free(c);
                c = NULL;
                break;
            }
            c[i].value = v;
            c[i].lost = l == 1;
        }
        if (c) {
            *out = c;
            *n = (int)dims[0];
        } else if (!stored) {
            rc = -1; /* check_storage said why */
        } else {
            rc = gz_fail(err, errlen, "%s: dataset resign_checks is not [K, 2] records of a value in "
                                      "[-1, 2] and 0/1", path);
        }
        free(buf);
        if (sp >= 0)
            H5Sclose(sp);
        if (d >= 0)
            H5Dclose(d);
    }
    H5Fclose(file);
    return rc;
}

int sp_read_games(const char *path, int64_t *games, int32_t *next_game, char *err, size_t errlen)
{
    *games = 0;
    hid_t file = open_read(path, err, errlen);
    if (file < 0)
        return -1;
    int64_t complete = 0, n = -1;
    int rc = 0;
    if (nn_h5_attr_get_i64(file, "complete", &complete) < 0 || complete != 1)
        rc = gz_fail(err, errlen, "%s: not marked complete", path);
    else if (nn_h5_attr_get_i64(file, "games", &n) < 0)
        rc = gz_fail(err, errlen, "%s: no games attribute (written before part files)", path);
    else if (n < 0 || n > (1 << 30))
        rc = gz_fail(err, errlen, "%s: games attribute %lld out of range", path, (long long)n);
    else
        *games = n;
    if (rc == 0 && next_game) {
        /* one past the largest game number of its samples (0: none), the game dataset
         * checked as sp_file_read checks it (stored as declared) before it is read */
        *next_game = 0;
        int64_t ns = -1;
        int32_t *ix = NULL;
        rc = check_extents(file, path, DS_BIT(DS_STATE) | DS_BIT(DS_GAME), err, errlen) < 0 ||
                     read_ds(file, path, DS_GAME, 1, NULL, &ns, (void **)&ix, err, errlen) < 0
                 ? -1
                 : 0;
        for (int64_t i = 0; rc == 0 && i < ns; i++) {
            if (ix[i] < 0 || ix[i] >= (1 << 30))
                rc = gz_fail(err, errlen, "%s: dataset game: sample %lld has game %d", path,
                             (long long)i, ix[i]);
            else if (ix[i] + 1 > *next_game)
                *next_game = ix[i] + 1;
        }
        free(ix);
    }
    H5Fclose(file);
    return rc;
}
