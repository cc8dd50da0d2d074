/* dataset.c — the replay window (see dataset.h). */
#include "dataset.h"

#include <assert.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "engine/symmetry.h"
#include "nn/spec.h"

/* One split's samples, contiguous. */
typedef struct split {
    int64_t n, cap;
    uint8_t *state; /* (n, planes*HW) */
    float *pi;      /* (n, A) */
    uint8_t *legal; /* (n, A) */
    float *z;       /* (n, P) */
    int64_t *gen;   /* (n) generation */
    int32_t *next;  /* (n) the offset in this split of the same game's next ply, 0 = none
                     * (a game's samples share one file, so they stay together here and
                     * the window keeps or drops them together: the offsets hold) */
    double wsum;    /* sum of the held samples' policy weights (= their pi masses) */
    int8_t *own;    /* (n, HW) final owners, mover-relative (samples.h; -1 unknown), or NULL
                     * in a game without them */
    float *qa;      /* (n, A) action-value targets in points (samples.h; NaN = none), or
                     * NULL in a game without a score */
    uint8_t *side;  /* (n) the side of a smaller square board padded at the top left into
                     * rows x cols (dataset_allow_sizes), 0 = the full board */
} split;

struct dataset {
    /* immutable after new */
    const game *g;
    sp_expect expect;
    double val_fraction;
    size_t per_state, A, P;
    size_t hw_own;      /* points of an ownership map: rows*cols in a game with point cells,
                         * else 0 (no maps held) */
    int has_qa;         /* action-value targets held (a game with a score) */
    uint8_t *sym_u8;    /* (per_state) scratch: planes under a symmetry */
    float q_ratio;
    /* mixed board sizes (dataset_allow_sizes): the game section g was made from, and the
     * game of each smaller side met so far (owned; its symmetries augment its samples) */
    bool sizes;
    cfg_game gc;
    game *sub[GAME_MAX_SIDE + 1];
    /* mutated by add/window */
    split tr, va;
    int files;
    int64_t games; /* per file read: its highest game index + 1 */
};

static void split_free(split *s)
{
    free(s->state), free(s->pi), free(s->legal), free(s->z), free(s->gen), free(s->next);
    free(s->own), free(s->qa), free(s->side);
    memset(s, 0, sizeof *s);
}

static int split_reserve(const dataset *d, split *s, int64_t need)
{
    if (need <= s->cap)
        return 0;
    int64_t cap = s->cap ? s->cap : 1024;
    while (cap < need)
        cap *= 2;
    uint8_t *st = realloc(s->state, (size_t)cap * d->per_state);
    if (st)
        s->state = st;
    float *pi = realloc(s->pi, sizeof(float) * (size_t)cap * d->A);
    if (pi)
        s->pi = pi;
    uint8_t *lg = realloc(s->legal, (size_t)cap * d->A);
    if (lg)
        s->legal = lg;
    float *z = realloc(s->z, sizeof(float) * (size_t)cap * d->P);
    if (z)
        s->z = z;
    int64_t *gen = realloc(s->gen, sizeof(int64_t) * (size_t)cap);
    if (gen)
        s->gen = gen;
    int32_t *nx = realloc(s->next, sizeof(int32_t) * (size_t)cap);
    if (nx)
        s->next = nx;
    uint8_t *sd = realloc(s->side, (size_t)cap);
    if (sd)
        s->side = sd;
    int8_t *own = s->own;
    if (d->hw_own) {
        own = realloc(s->own, (size_t)cap * d->hw_own);
        if (own)
            s->own = own;
    }
    float *qa = s->qa;
    if (d->has_qa) {
        qa = realloc(s->qa, sizeof(float) * (size_t)cap * d->A);
        if (qa)
            s->qa = qa;
    }
    if (!st || !pi || !lg || !z || !gen || !nx || !sd || (d->hw_own && !own) || (d->has_qa && !qa))
        return -1;
    s->cap = cap;
    return 0;
}

dataset *dataset_new(const game *g, double validation_fraction, char *err, size_t errlen)
{
    dataset *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->g = g;
    d->expect = sp_expect_game(g);
    d->val_fraction = validation_fraction;
    d->per_state = (size_t)g->planes * g->rows * g->cols;
    d->A = (size_t)g->actions;
    d->P = (size_t)g->players;
    size_t hw = (size_t)g->rows * g->cols;
    d->hw_own = sp_game_has_owner(g) ? hw : 0;
    d->has_qa = sp_game_has_qa(g);
    d->sym_u8 = malloc(d->per_state);
    if (!d->sym_u8) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    return d;
}

void dataset_free(dataset *d)
{
    if (!d)
        return;
    split_free(&d->tr);
    split_free(&d->va);
    free(d->sym_u8);
    for (int k = 0; k <= GAME_MAX_SIDE; k++)
        game_free(d->sub[k]);
    free(d);
}

/* A stable hash of (generation, game index) in [0, 1). */
static double game_hash01(int64_t gen, int32_t gameix)
{
    uint64_t x = (uint64_t)gen * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)gameix;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0;
}

void dataset_set_q_ratio(dataset *d, double ratio)
{
    d->q_ratio = (float)(ratio < 0 ? 0 : ratio > 1 ? 1 : ratio);
}

bool dataset_allow_sizes(dataset *d, const cfg_game *gc)
{
    const game *g = d->g;
    if (g->rows != g->cols || g->lattice != GAME_LATTICE_SQUARE || g->actions != g->rows * g->cols)
        return false;
    assert(!strcmp(gc->name, g->name) && gc->rows == g->rows && gc->cols == g->cols);
    d->sizes = true;
    d->gc = *gc;
    return true;
}

/* Whether `json` (a file's game_config) is the game section gc with rows = cols = side. */
static bool same_game_sized(const cfg_game *gc, int side, const char *json)
{
    gz_config c;
    cfg_defaults(&c, gc->name);
    c.game = *gc;
    c.game.rows = c.game.cols = side;
    char *want = sp_game_config_json(&c);
    cJSON *a = want ? cJSON_Parse(want) : NULL, *b = json ? cJSON_Parse(json) : NULL;
    bool same = a && b && cJSON_Compare(a, b, true);
    cJSON_Delete(a);
    cJSON_Delete(b);
    free(want);
    return same;
}

/* The board of file f (read with rows, cols and actions unchecked when sizes are
 * allowed): 0 for g's own board; a smaller square board's side, its game made on first
 * use; -1 with a message naming the file otherwise (a larger board, another game). */
static int file_side(dataset *d, const sp_file *f, char *err, size_t errlen)
{
    const game *g = d->g;
    if (f->rows == g->rows && f->cols == g->cols && f->actions == g->actions)
        return 0;
    if (f->rows > g->rows || f->cols > g->cols) {
        snprintf(err, errlen, "%s: a %dx%d board, larger than the network's %dx%d (rows is %d, "
                 "expected at most %d)", f->path, f->rows, f->cols, g->rows, g->cols, f->rows, g->rows);
        return -1;
    }
    if (f->rows != f->cols || f->actions != f->rows * f->cols) {
        snprintf(err, errlen, "%s: a %dx%d board with %d actions: a smaller board must be square, "
                 "its actions its points (rows is %d, expected %d)", f->path, f->rows, f->cols,
                 f->actions, f->rows, g->rows);
        return -1;
    }
    int side = f->rows;
    if (!same_game_sized(&d->gc, side, f->game_config)) {
        snprintf(err, errlen, "%s: its game_config %s is not this game's on a %dx%d board (the same "
                 "game section but for rows and cols)", f->path, f->game_config ? f->game_config : "",
                 side, side);
        return -1;
    }
    if (!d->sub[side]) {
        cfg_game sg = d->gc;
        sg.rows = sg.cols = side;
        char why[256];
        d->sub[side] = game_new(&sg, why, sizeof why);
        if (!d->sub[side]) {
            snprintf(err, errlen, "%s: a %dx%d board of this game: %s", f->path, side, side, why);
            return -1;
        }
    }
    const game *sg = d->sub[side];
    if (sg->planes != g->planes || sg->players != g->players || sg->actions != f->actions) {
        snprintf(err, errlen, "%s: a %dx%d board of this game has %d planes and %d actions, the "
                 "file %d and %d", f->path, side, side, sg->planes, sg->actions, f->planes, f->actions);
        return -1;
    }
    return side;
}

/* A file's sample by game and ply, for finding each sample's next ply. */
typedef struct game_ply {
    int32_t game, ply;
    int64_t i;
} game_ply;

static int cmp_game_ply(const void *a, const void *b)
{
    const game_ply *x = a, *y = b;
    if (x->game != y->game)
        return x->game < y->game ? -1 : 1;
    if (x->ply != y->ply)
        return x->ply < y->ply ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Links each sample of file f (added as split positions pos[i] of splits which[i]) to
 * the same game's sample one ply later, when the file has exactly one of each. */
static int link_next_plies(dataset *d, const sp_file *f, const int64_t *pos, const uint8_t *which)
{
    game_ply *o = malloc(sizeof *o * (size_t)(f->n ? f->n : 1));
    if (!o)
        return -1;
    for (int64_t i = 0; i < f->n; i++)
        o[i] = (game_ply){f->gameix[i], f->ply[i], i};
    qsort(o, (size_t)f->n, sizeof *o, cmp_game_ply);
    for (int64_t k = 0; k + 1 < f->n; k++) {
        const game_ply *a = &o[k], *b = &o[k + 1];
        int unique = (k == 0 || o[k - 1].game != a->game || o[k - 1].ply != a->ply) &&
                     (k + 2 >= f->n || o[k + 2].game != b->game || o[k + 2].ply != b->ply);
        if (a->game != b->game || b->ply != a->ply + 1 || !unique || which[a->i] != which[b->i])
            continue;
        split *s = which[a->i] ? &d->va : &d->tr;
        int64_t off = pos[b->i] - pos[a->i];
        if (off > INT32_MIN && off < INT32_MAX)
            s->next[pos[a->i]] = (int32_t)off;
    }
    free(o);
    return 0;
}

/* Sample i of file f, of a side x side board, held as split s's sample k padded at the
 * top left into rows x cols: planes 0, pi 0, no legal move and no known owner off the
 * board. */
static void hold_padded(dataset *d, split *s, int64_t k, const sp_file *f, int64_t i, int side)
{
    size_t C = (size_t)d->g->cols, hw = (size_t)d->g->rows * C, fhw = (size_t)side * side;
    uint8_t *st = s->state + (size_t)k * d->per_state;
    float *pk = s->pi + (size_t)k * d->A;
    uint8_t *lk = s->legal + (size_t)k * d->A;
    int8_t *ok = d->hw_own ? s->own + (size_t)k * d->hw_own : NULL;
    memset(st, 0, d->per_state);
    memset(pk, 0, sizeof(float) * d->A);
    memset(lk, 0, d->A);
    if (ok)
        memset(ok, -1, d->hw_own);
    for (size_t q = 0; q < fhw; q++) {
        size_t at = (q / (size_t)side) * C + q % (size_t)side;
        for (int pl = 0; pl < f->planes; pl++)
            st[pl * hw + at] = f->state[((size_t)i * f->planes + pl) * fhw + q];
        pk[at] = f->weight[i] * f->pi[(size_t)i * fhw + q];
        lk[at] = f->legal[(size_t)i * fhw + q];
        if (ok && f->owner)
            ok[at] = f->owner[(size_t)i * fhw + q];
    }
}

static int add_file(dataset *d, const char *path, char *err, size_t errlen)
{
    sp_expect ex = d->expect;
    if (d->sizes) /* any smaller square board of the game: file_side checks it */
        ex.rows = ex.cols = ex.actions = -1;
    sp_file *f = sp_file_read(path, &ex, err, errlen);
    if (!f)
        return -1;
    int side = file_side(d, f, err, errlen);
    if (side < 0) {
        sp_file_free(f);
        return -1;
    }
    int64_t *pos = malloc(sizeof *pos * (size_t)(f->n ? f->n : 1));
    uint8_t *which = malloc((size_t)(f->n ? f->n : 1));
    if (!pos || !which) {
        snprintf(err, errlen, "%s: out of memory", path);
        free(pos), free(which), sp_file_free(f);
        return -1;
    }
    for (int64_t i = 0; i < f->n; i++) {
        split *s = game_hash01(f->meta.generation, f->gameix[i]) < d->val_fraction ? &d->va : &d->tr;
        if (split_reserve(d, s, s->n + 1) < 0) {
            snprintf(err, errlen, "%s: out of memory holding %lld samples", path, (long long)s->n);
            free(pos), free(which), sp_file_free(f);
            return -1;
        }
        int64_t k = s->n++;
        pos[i] = k;
        which[i] = s == &d->va;
        s->next[k] = 0;
        s->side[k] = (uint8_t)side;
        if (side) {
            hold_padded(d, s, k, f, i, side);
        } else {
            memcpy(s->state + (size_t)k * d->per_state, f->state + (size_t)i * d->per_state,
                   d->per_state);
            /* the policy weight scales the target's mass: the cross-entropy and its
             * gradient (train/layers.h) are then weighted per sample with no other change */
            float *pk = s->pi + (size_t)k * d->A;
            const float *pf = f->pi + (size_t)i * d->A;
            for (size_t a = 0; a < d->A; a++)
                pk[a] = f->weight[i] * pf[a];
            memcpy(s->legal + (size_t)k * d->A, f->legal + (size_t)i * d->A, d->A);
        }
        s->wsum += f->weight[i];
        float *zk = s->z + (size_t)k * d->P;
        const float *zf = f->z + (size_t)i * d->P, *qf = f->q + (size_t)i * d->P;
        for (size_t p = 0; p < d->P; p++)
            zk[p] = d->q_ratio > 0 ? (1 - d->q_ratio) * zf[p] + d->q_ratio * qf[p] : zf[p];
        s->gen[k] = f->meta.generation;
        if (d->hw_own && !side) {
            int8_t *ok = s->own + (size_t)k * d->hw_own;
            if (f->owner)
                memcpy(ok, f->owner + (size_t)i * d->hw_own, d->hw_own);
            else
                memset(ok, -1, d->hw_own); /* files before version 4: no ownership target */
        }
        if (d->has_qa) {
            float *qk = s->qa + (size_t)k * d->A;
            for (size_t a = 0; a < d->A; a++) /* files before version 5: no targets */
                qk[a] = f->qa ? f->qa[(size_t)i * d->A + a] : NAN;
        }
    }
    int linked = link_next_plies(d, f, pos, which);
    free(pos), free(which);
    if (linked < 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        sp_file_free(f);
        return -1;
    }
    int32_t top = -1;
    for (int64_t i = 0; i < f->n; i++)
        top = f->gameix[i] > top ? f->gameix[i] : top;
    d->games += top + 1;
    d->files++;
    sp_file_free(f);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int dataset_add_path(dataset *d, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: no such file or directory", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_file(d, path, err, errlen);
    DIR *dir = opendir(path);
    if (!dir) {
        snprintf(err, errlen, "%s: cannot open the directory", path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(dir))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".h5") != 0)
            continue; /* also skips NAME.h5.tmp files being written */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, sizeof *names * cap);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        size_t pl = strlen(path) + l + 2;
        names[n] = malloc(pl);
        if (!names[n]) {
            rc = -1;
            break;
        }
        snprintf(names[n++], pl, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (rc < 0)
        snprintf(err, errlen, "%s: out of memory listing the directory", path);
    else if (n == 0) {
        snprintf(err, errlen, "%s: no sample files (*.h5) in the directory", path);
        rc = -1;
    } else {
        qsort(names, n, sizeof *names, cmp_str);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = add_file(d, names[i], err, errlen);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static void window_split(dataset *d, split *s, int64_t oldest)
{
    int64_t k = 0;
    s->wsum = 0;
    for (int64_t i = 0; i < s->n; i++) {
        if (s->gen[i] < oldest)
            continue;
        for (size_t a = 0; a < d->A; a++)
            s->wsum += s->pi[(size_t)i * d->A + a];
        if (k != i) {
            memmove(s->state + (size_t)k * d->per_state, s->state + (size_t)i * d->per_state, d->per_state);
            memmove(s->pi + (size_t)k * d->A, s->pi + (size_t)i * d->A, sizeof(float) * d->A);
            memmove(s->legal + (size_t)k * d->A, s->legal + (size_t)i * d->A, d->A);
            memmove(s->z + (size_t)k * d->P, s->z + (size_t)i * d->P, sizeof(float) * d->P);
            s->gen[k] = s->gen[i];
            s->next[k] = s->next[i];
            s->side[k] = s->side[i];
            if (d->hw_own)
                memmove(s->own + (size_t)k * d->hw_own, s->own + (size_t)i * d->hw_own, d->hw_own);
            if (d->has_qa)
                memmove(s->qa + (size_t)k * d->A, s->qa + (size_t)i * d->A, sizeof(float) * d->A);
        }
        k++;
    }
    s->n = k;
}

void dataset_apply_window(dataset *d, int window)
{
    int64_t newest = INT64_MIN;
    for (int64_t i = 0; i < d->tr.n; i++)
        newest = d->tr.gen[i] > newest ? d->tr.gen[i] : newest;
    for (int64_t i = 0; i < d->va.n; i++)
        newest = d->va.gen[i] > newest ? d->va.gen[i] : newest;
    if (newest == INT64_MIN || window < 1)
        return;
    int64_t oldest = newest - window + 1;
    window_split(d, &d->tr, oldest);
    window_split(d, &d->va, oldest);
}

int64_t dataset_train_count(const dataset *d) { return d->tr.n; }
int64_t dataset_val_count(const dataset *d) { return d->va.n; }
int64_t dataset_games(const dataset *d) { return d->games; }

int dataset_files(const dataset *d) { return d->files; }

int64_t dataset_newest_generation(const dataset *d)
{
    int64_t newest = -1;
    for (int64_t i = 0; i < d->tr.n; i++)
        newest = d->tr.gen[i] > newest ? d->tr.gen[i] : newest;
    for (int64_t i = 0; i < d->va.n; i++)
        newest = d->va.gen[i] > newest ? d->va.gen[i] : newest;
    return newest;
}

/* dst = src (A) under symmetry sym, as get_one maps pi. */
static void map_pi(const dataset *d, sym_id sym, const float *src, float *dst)
{
    const game *g = d->g;
    size_t hw = (size_t)g->rows * g->cols;
    if (sym == SYM_ID || (d->A != hw && !g->ops->sym_action)) {
        memcpy(dst, src, sizeof(float) * d->A);
        return;
    }
    for (size_t a = 0; a < d->A; a++)
        dst[sym_map_action(g, sym, (int)a)] = src[a];
}

/* z of sample i of split s into z (players), served as get_one says, and pi (A) scaled by
 * the split's normalisation of the policy weights; returns that scale. */
static float get_z_scale(const dataset *d, const split *s, int64_t i, float *z, float *pi)
{
    memcpy(z, s->z + (size_t)i * d->P, sizeof(float) * d->P);
    /* a scored game's files hold points to come; the score head learns h(points) */
    if (game_scored(d->g))
        for (size_t q = 0; q < d->P; q++)
            z[q] = (float)nn_score_to_value(z[q]);
    /* weights are served normalised to a mean of 1 over the split, so that samples
     * without a policy target (fast searches) do not dilute the policy's gradient: the
     * policy learns per step as fast as with every weight 1 */
    float scale = s->wsum > 0 && s->wsum != (double)s->n ? (float)((double)s->n / s->wsum) : 1;
    if (scale != 1)
        for (size_t a = 0; a < d->A; a++)
            pi[a] *= scale;
    return scale;
}

/* get_one of a smaller board's sample (side x side, held padded at the top left): its
 * points mapped under sym as a side x side board (its own game's symmetry), the padding
 * 0 (planes, pi, legal, opp), -1 (own) and NaN (qa). */
static void get_padded(const dataset *d, const split *s, int64_t i, sym_id sym, float *x,
                       float *pi, uint8_t *legal, float *z, float *opp, int8_t *own, float *qa)
{
    int side = s->side[i], C = d->g->cols, planes = d->g->planes;
    size_t hw = (size_t)d->g->rows * C;
    const uint8_t *st = s->state + (size_t)i * d->per_state;
    const float *p = s->pi + (size_t)i * d->A;
    const uint8_t *lg = s->legal + (size_t)i * d->A;
    const int8_t *ow = d->hw_own ? s->own + (size_t)i * d->hw_own : NULL;
    const float *nx = opp && s->next[i] ? s->pi + (size_t)(i + s->next[i]) * d->A : NULL;
    memset(x, 0, sizeof(float) * d->per_state);
    memset(pi, 0, sizeof(float) * d->A);
    memset(legal, 0, d->A);
    if (opp)
        memset(opp, 0, sizeof(float) * d->A);
    if (own)
        memset(own, -1, hw);
    for (size_t a = 0; qa && a < d->A; a++)
        qa[a] = NAN;
    float scale = get_z_scale(d, s, i, z, pi); /* (pi is still 0: scaled below) */
    for (int r = 0; r < side; r++)
        for (int c = 0; c < side; c++) {
            int r2, c2;
            sym_map_point(sym, side, side, r, c, &r2, &c2);
            size_t from = (size_t)r * C + c, to = (size_t)r2 * C + c2;
            for (int pl = 0; pl < planes; pl++)
                x[pl * hw + to] = st[pl * hw + from] * (1.0f / 255.0f);
            pi[to] = p[from] * scale;
            legal[to] = lg[from];
            if (own && ow)
                own[to] = ow[from];
            if (nx)
                opp[to] = nx[from] * scale;
        }
}

/* Sample i of split s under symmetry sym into the outputs' row 0; opp (may be NULL): the
 * next ply's pi (the reply), or zeros; own (may be NULL): the ownership map, or all -1 in
 * a game without one; qa (may be NULL): the action-value targets h(points) mapped as pi,
 * NaN where there is none (always in a game without a score). */
static void get_one(const dataset *d, const split *s, int64_t i, sym_id sym, float *x, float *pi,
                    uint8_t *legal, float *z, float *opp, int8_t *own, float *qa)
{
    if (s->side[i]) {
        get_padded(d, s, i, sym, x, pi, legal, z, opp, own, qa);
        return;
    }
    if (qa) {
        if (!d->has_qa) {
            for (size_t a = 0; a < d->A; a++)
                qa[a] = NAN;
        } else {
            map_pi(d, sym, s->qa + (size_t)i * d->A, qa);
            for (size_t a = 0; a < d->A; a++) /* NaN stays NaN: no target */
                qa[a] = isnan(qa[a]) ? NAN : (float)nn_score_to_value(qa[a]);
        }
    }
    if (own) {
        size_t hw = (size_t)d->g->rows * d->g->cols;
        if (!d->hw_own)
            memset(own, -1, hw);
        else if (sym == SYM_ID)
            memcpy(own, s->own + (size_t)i * hw, hw);
        else
            for (size_t a = 0; a < hw; a++)
                own[sym_map_action(d->g, sym, (int)a)] = s->own[(size_t)i * hw + a];
    }
    const game *g = d->g;
    size_t hw = (size_t)g->rows * g->cols;
    const uint8_t *st = s->state + (size_t)i * d->per_state;
    const float *p = s->pi + (size_t)i * d->A;
    const uint8_t *lg = s->legal + (size_t)i * d->A;
    const float k = 1.0f / 255.0f;
    if (sym == SYM_ID || (d->A != hw && !g->ops->sym_action)) {
        for (size_t j = 0; j < d->per_state; j++)
            x[j] = st[j] * k;
        memcpy(pi, p, sizeof(float) * d->A);
        memcpy(legal, lg, d->A);
    } else if (d->A != hw) {
        /* actions that are not points (2048's directions): the planes map by cell, pi and
         * legal through the game's own map of its actions */
        sym_map_planes_u8(g, sym, g->planes, st, d->sym_u8);
        for (size_t j = 0; j < d->per_state; j++)
            x[j] = d->sym_u8[j] * k;
        for (size_t a = 0; a < d->A; a++) {
            size_t b = (size_t)sym_map_action(g, sym, (int)a);
            pi[b] = p[a];
            legal[b] = lg[a];
        }
    } else {
        /* out[s(a)] = in[a] for every point, on every plane, pi and legal alike */
        for (size_t a = 0; a < hw; a++) {
            size_t b = (size_t)sym_map_action(g, sym, (int)a);
            for (int pl = 0; pl < g->planes; pl++)
                x[pl * hw + b] = st[pl * hw + a] * k;
            pi[b] = p[a];
            legal[b] = lg[a];
        }
    }
    float scale = get_z_scale(d, s, i, z, pi);
    if (!opp)
        return;
    if (!s->next[i]) {
        memset(opp, 0, sizeof(float) * d->A);
        return;
    }
    map_pi(d, sym, s->pi + (size_t)(i + s->next[i]) * d->A, opp);
    if (scale != 1)
        for (size_t a = 0; a < d->A; a++)
            opp[a] *= scale;
}

void dataset_get(const dataset *d, int64_t i, sym_id s, float *x, float *pi, uint8_t *legal, float *z,
                 float *opp, int8_t *own, float *qa)
{
    get_one(d, &d->tr, i, s, x, pi, legal, z, opp, own, qa);
}

/* Sample i of split s's board into rows[k], cols[k] (when rows is not NULL). */
static void put_board(const dataset *d, const split *s, int64_t i, size_t k, uint8_t *rows,
                      uint8_t *cols)
{
    if (!rows)
        return;
    rows[k] = s->side[i] ? s->side[i] : (uint8_t)d->g->rows;
    cols[k] = s->side[i] ? s->side[i] : (uint8_t)d->g->cols;
}

void dataset_sample_part(const dataset *d, rng *r, int n, int lo, int hi, int augment, float *x,
                         float *pi, uint8_t *legal, float *z, float *opp, int8_t *own, float *qa,
                         uint8_t *rows, uint8_t *cols)
{
    size_t hw = (size_t)d->g->rows * d->g->cols;
    for (int b = 0; b < n; b++) {
        int64_t i = (int64_t)(rng_uniform(r) * (double)d->tr.n);
        if (i >= d->tr.n)
            i = d->tr.n - 1;
        /* a smaller board's sample: its own board's symmetries */
        const game *sg = d->tr.side[i] ? d->sub[d->tr.side[i]] : d->g;
        sym_id s = augment ? sg->sym[rng_below(r, (uint32_t)sg->nsym)] : SYM_ID;
        if (b < lo || b >= hi)
            continue;
        size_t k = (size_t)(b - lo);
        get_one(d, &d->tr, i, s, x + k * d->per_state, pi + k * d->A, legal + k * d->A,
                z + k * d->P, opp ? opp + k * d->A : NULL, own ? own + k * hw : NULL,
                qa ? qa + k * d->A : NULL);
        put_board(d, &d->tr, i, k, rows, cols);
    }
}

void dataset_sample(const dataset *d, rng *r, int n, int augment, float *x, float *pi,
                    uint8_t *legal, float *z, float *opp, int8_t *own, float *qa, uint8_t *rows,
                    uint8_t *cols)
{
    dataset_sample_part(d, r, n, 0, n, augment, x, pi, legal, z, opp, own, qa, rows, cols);
}

void dataset_val_batch(const dataset *d, int64_t start, int n, float *x, float *pi, uint8_t *legal,
                       float *z, float *opp, int8_t *own, float *qa, uint8_t *rows, uint8_t *cols)
{
    size_t hw = (size_t)d->g->rows * d->g->cols;
    for (int b = 0; b < n; b++) {
        get_one(d, &d->va, start + b, SYM_ID, x + (size_t)b * d->per_state, pi + (size_t)b * d->A,
                legal + (size_t)b * d->A, z + (size_t)b * d->P, opp ? opp + (size_t)b * d->A : NULL,
                own ? own + (size_t)b * hw : NULL, qa ? qa + (size_t)b * d->A : NULL);
        put_board(d, &d->va, start + b, (size_t)b, rows, cols);
    }
}

int dataset_side(const dataset *d, int64_t i)
{
    return d->tr.side[i];
}

int64_t dataset_smaller_count(const dataset *d)
{
    int64_t k = 0;
    for (int64_t i = 0; i < d->tr.n; i++)
        k += d->tr.side[i] != 0;
    for (int64_t i = 0; i < d->va.n; i++)
        k += d->va.side[i] != 0;
    return k;
}

/* FNV-1a of a held sample's planes and legal mask (its compact bytes). */
static uint64_t sample_hash(const dataset *d, const split *s, int64_t i)
{
    uint64_t h = 1469598103934665603ULL;
    const uint8_t *st = s->state + (size_t)i * d->per_state, *lg = s->legal + (size_t)i * d->A;
    for (size_t j = 0; j < d->per_state; j++)
        h = (h ^ st[j]) * 1099511628211ULL;
    for (size_t j = 0; j < d->A; j++)
        h = (h ^ lg[j]) * 1099511628211ULL;
    return h;
}

typedef struct keyed {
    uint64_t h;
    int64_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int64_t dataset_distinct(const dataset *d, int val, int64_t **idx)
{
    const split *s = val ? &d->va : &d->tr;
    size_t n = (size_t)(s->n > 0 ? s->n : 1);
    keyed *k = malloc(sizeof *k * n);
    *idx = malloc(sizeof **idx * n);
    if (!k || !*idx) {
        free(k), free(*idx);
        *idx = NULL;
        return -1;
    }
    int64_t nk = 0;
    for (int64_t i = 0; i < s->n; i++)
        if (!s->side[i]) /* the full board's samples only */
            k[nk++] = (keyed){sample_hash(d, s, i), i};
    qsort(k, (size_t)nk, sizeof *k, cmp_keyed);
    int64_t m = 0;
    for (int64_t i = 0; i < nk; i++)
        if (i == 0 || k[i].h != k[i - 1].h)
            (*idx)[m++] = k[i].i; /* the first of equal hashes: cmp_keyed orders by index */
    /* back to file order, so that "spread evenly" spreads over the games */
    for (int64_t i = 0; i < m; i++)
        k[i] = (keyed){(uint64_t)(*idx)[i], 0};
    qsort(k, (size_t)m, sizeof *k, cmp_keyed);
    for (int64_t i = 0; i < m; i++)
        (*idx)[i] = (int64_t)k[i].h;
    free(k);
    return m;
}

int dataset_take(const dataset *d, int val, const int64_t *idx, int64_t m, int n, float *x,
                 uint8_t *legal)
{
    const split *s = val ? &d->va : &d->tr;
    float *pi = malloc(sizeof(float) * d->A), *z = malloc(sizeof(float) * d->P);
    if (!pi || !z) {
        free(pi), free(z);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int64_t k = idx[(int64_t)((double)i * (double)m / n)];
        get_one(d, s, k, SYM_ID, x + d->per_state * (size_t)i, pi, legal + d->A * (size_t)i, z, NULL,
                NULL, NULL);
    }
    free(pi), free(z);
    return 0;
}
