#include "selfplay.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/errmsg.h"
#include "samples.h"

static int cmp_check(const void *a, const void *b)
{
    float x = ((const sp_resign_check *)a)->value, y = ((const sp_resign_check *)b)->value;
    return (x > y) - (x < y);
}

/* The one-sided 95% upper confidence bound (Wilson score) of a proportion k / n. */
static double wilson_upper(int k, int n)
{
    const double z = 1.6448536269514722; /* the standard normal's 95th percentile */
    double p = (double)k / n, z2n = z * z / n;
    return (p + z2n / 2 + z * sqrt(p * (1 - p) / n + z2n / (4.0 * n))) / (1 + z2n);
}

double sp_resign_calibrate(const sp_resign_check *r, int n, double target, int min_records,
                           double cap)
{
    if (n < min_records || n <= 0)
        return -1.0;
    sp_resign_check *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return -1.0;
    memcpy(s, r, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_check);
    /* thresholds just above each record's value, lowest first: the records below the
     * threshold are s[0..i]; keep the highest whose false fraction meets the target with
     * 95% confidence. The point estimate alone was optimistic: the highest of many
     * thresholds on a few dozen records resigned the next generation's games with 36%
     * false resignations against a 5% target. */
    double best = -1.0;
    int wrong = 0;
    for (int i = 0; i < n && s[i].value < cap; i++) {
        wrong += !s[i].lost;
        bool last_of_value = i + 1 == n || s[i + 1].value > s[i].value;
        if (last_of_value && wilson_upper(wrong, i + 1) <= target) {
            double t = i + 1 < n && s[i + 1].value < cap ? s[i + 1].value : cap;
            if (t > best)
                best = t;
        }
    }
    free(s);
    return best > cap ? cap : best;
}

int sp_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

void sp_search_from_config(mcts_params *mp, const gz_config *c)
{
    mcts_params_from_config(mp, &c->mcts);
    if (!c->selfplay.threat_checks) {
        /* the VCF checks are for play unless asked for (selfplay.threat_checks) */
        mp->vcf_root = 0;
        mp->vcf_leaf = 0;
        mp->vcf_defend = false;
        mp->vct_root = 0;
        if (c->selfplay.adjudicate_vcf > 0)
            mp->vcf_root = c->selfplay.adjudicate_vcf;
    }
    mp->gumbel = c->selfplay.gumbel;
    mp->gumbel_m = c->selfplay.gumbel_m;
    mp->lcb_stdevs = 0.0f; /* a player's move choice: self-play plays from the visits */
    mp->contempt = 0.0f;   /* one tree plays both sides: no side to favour */
}

void sp_opts_from_config(sp_opts *o, const gz_config *c)
{
    memset(o, 0, sizeof *o);
    o->games = c->selfplay.games;
    o->parallel_games = c->selfplay.parallel_games;
    o->threads = c->selfplay.threads > 0 ? c->selfplay.threads : sp_cores();
    sp_search_from_config(&o->search, c);
    o->search.noise = true;
    o->resign_threshold = c->selfplay.resign_threshold;
    o->resign_disabled_fraction = c->selfplay.resign_disabled_fraction;
    o->full_fraction = c->selfplay.full_fraction;
    o->fast_simulations = c->selfplay.fast_simulations;
    o->zero_weight_proven = c->selfplay.zero_weight_proven;
    o->adjudicate = c->selfplay.adjudicate;
    o->record_fast = c->selfplay.record_fast;
    o->value_steps = c->selfplay.value_steps;
    o->swap2 = !strcmp(c->selfplay.opening, "swap2");
    o->seed = c->seed;
}

/* One game in progress in a worker's slot. Its samples are kept compactly until the
 * game ends and z is known. */
typedef struct sp_slot {
    mcts *tree;
    int gameix;           /* game number in the run, -1 = slot idle */
    bool no_resign;       /* this game never resigns (false-resignation check) */
    int low[GAME_MAX_PLAYERS];        /* consecutive own moves below the threshold */
    bool would_resign[GAME_MAX_PLAYERS];
    float prev_v[GAME_MAX_PLAYERS];   /* the player's root value at its previous move (NAN) */
    float resign_at[GAME_MAX_PLAYERS]; /* min over its consecutive move pairs of the pair's
                                        * max: it would resign under any threshold above */
    int n;                /* samples so far */
    int cap;              /* samples the buffers hold (grown by doubling, up to max_len) */
    uint8_t *planes;      /* (cap, planes*hw) x255 */
    float *pi;            /* (cap, actions) */
    uint8_t *legal;       /* (cap, actions) */
    int8_t *mover;        /* (cap) player to move */
    int32_t *ply;         /* (cap) the sample's ply in its game */
    int mcap;             /* moves the per-move arrays hold (scored games) */
    float *mscore;        /* (mcap, players) scored games: points before each move */
    float *mvalue;        /* (mcap, players) scored games: the search's root value there */
    int plies;            /* moves played in the game */
    float *weight;        /* (cap) policy weight */
    float *q;             /* (cap, players) root value, mover-first */
    float *qa;            /* (cap, actions) games with a score: each move's Q in points
                           * (its reward + the child's mean points to come), NaN for moves
                           * the search did not visit (samples.h: qa); else NULL */
    rng r;                /* full or fast search per move (playout cap randomisation) */
    bool full;            /* this move's search is a full one */
} sp_slot;

/* What every worker shares. */
typedef struct sp_shared {
    const game *g;
    const sp_opts *o;
    pthread_mutex_t lock;
    sp_writer *w;         /* guarded by lock (HDF5 is not thread-safe) */
    const char *out_path; /* where w's file appears, unless it becomes a part */
    const sp_meta *meta;  /* for the next part's writer */
    int file_games;       /* guarded: games written into w's file */
    double file_t0;       /* guarded: when w's file was opened */
    int next_part;        /* guarded: the next part's number */
    int next_game;        /* guarded */
    sp_stats st;          /* guarded */
    sp_resign_check *checks; /* guarded: the no-resign games' records */
    int nchecks, capchecks;
    int failed;           /* guarded: first failure wins */
    char err[512];        /* guarded */
} sp_shared;

/* A worker's scratch for choosing swap2 openings (SP_SWAP2_CANDIDATES positions). */
typedef struct sp_swap2 {
    unsigned char *states;     /* (K, state_size) */
    const game_state **ptrs;   /* (K) */
    uint64_t *keys;            /* (K) */
    uint8_t *legal;            /* (K, actions) */
    float *priors;             /* (K, actions) */
    float *values;             /* (K, players) */
} sp_swap2;

typedef struct sp_worker {
    sp_shared *sh;
    int id;
    evaluator *e;
    sp_swap2 sw;               /* allocated when the run uses swap2 */
    pthread_t thread;
} sp_worker;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool should_stop(const sp_shared *sh)
{
    return sh->o->stop && *sh->o->stop;
}

static void fail_shared(sp_shared *sh, const char *msg)
{
    pthread_mutex_lock(&sh->lock);
    if (!sh->failed) {
        sh->failed = 1;
        snprintf(sh->err, sizeof sh->err, "%s", msg);
    }
    pthread_mutex_unlock(&sh->lock);
}

/* Claims the next game number, or -1 when all are given out. */
static int claim_game(sp_shared *sh)
{
    pthread_mutex_lock(&sh->lock);
    int ix = (!sh->failed && sh->next_game < sh->o->games) ? sh->next_game++ : -1;
    pthread_mutex_unlock(&sh->lock);
    return ix;
}

/* Makes room for `need` samples in s's buffers (a game of 2048 can last thousands of
 * moves: buffers start small and double). Returns false when out of memory. */
static bool slot_reserve(const game *g, sp_slot *s, int need)
{
    if (need <= s->cap)
        return true;
    int cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    size_t np = (size_t)g->planes * g->rows * g->cols, A = (size_t)g->actions, c = (size_t)cap;
    void *p;
    if (!(p = realloc(s->planes, c * np))) return false;
    s->planes = p;
    if (!(p = realloc(s->pi, c * A * sizeof(float)))) return false;
    s->pi = p;
    if (!(p = realloc(s->legal, c * A))) return false;
    s->legal = p;
    if (!(p = realloc(s->mover, c))) return false;
    s->mover = p;
    if (!(p = realloc(s->ply, c * sizeof(int32_t)))) return false;
    s->ply = p;
    if (!(p = realloc(s->weight, c * sizeof(float)))) return false;
    s->weight = p;
    if (!(p = realloc(s->q, c * (size_t)g->players * sizeof(float)))) return false;
    s->q = p;
    if (sp_game_has_qa(g)) {
        if (!(p = realloc(s->qa, c * A * sizeof(float)))) return false;
        s->qa = p;
    }
    s->cap = cap;
    return true;
}

/* Room for `need` moves in s's per-move arrays (scored games' targets). */
static bool slot_reserve_moves(const game *g, sp_slot *s, int need)
{
    if (need <= s->mcap)
        return true;
    int cap = s->mcap ? s->mcap : 64;
    while (cap < need)
        cap *= 2;
    size_t n = (size_t)cap * (size_t)g->players * sizeof(float);
    float *a = realloc(s->mscore, n);
    if (!a)
        return false;
    s->mscore = a;
    float *b = realloc(s->mvalue, n);
    if (!b)
        return false;
    s->mvalue = b;
    s->mcap = cap;
    return true;
}

/* Adds `stones` stones to s: the most balanced (white's value, white to move after them,
 * nearest 0) of SP_SWAP2_CANDIDATES random placements within the central side x side
 * points. *v_white receives that value. Returns 0 or -1 with a message (evaluator). */
static int swap2_place(const game *g, evaluator *e, sp_swap2 *sw, int batch, game_state *s,
                       int stones, int side, rng *r, float *v_white, char *err, size_t errlen)
{
    const int K = SP_SWAP2_CANDIDATES, A = g->actions, P = g->players;
    int n = 0;
    for (int tries = 0; n < K && tries < 4 * K; tries++) {
        game_state *c = (game_state *)(sw->states + (size_t)n * g->state_size);
        game_copy(g, c, s);
        bool ok = true;
        for (int k = 0; k < stones && ok; k++) {
            int a = openings_central_point(g, c, side, r);
            ok = a >= 0 && game_play(g, c, a) == 0 && !game_terminal(g, c);
        }
        if (!ok)
            continue;
        sw->ptrs[n] = c;
        sw->keys[n] = game_hash(g, c);
        game_legal(g, c, sw->legal + (size_t)n * A);
        n++;
    }
    if (n == 0) {
        *v_white = 0;
        return 0; /* no room for a swap2 opening: the game starts as it is */
    }
    int step = batch > 0 ? batch : 1;
    for (int i = 0; i < n; i += step) {
        int m = n - i < step ? n - i : step;
        if (evaluator_run(e, m, sw->ptrs + i, sw->keys + i, sw->legal + (size_t)i * A,
                          sw->priors + (size_t)i * A, sw->values + (size_t)i * P, err, errlen) < 0)
            return -1;
    }
    int best = 0;
    for (int i = 1; i < n; i++)
        if (fabsf(sw->values[(size_t)i * P + 1]) < fabsf(sw->values[(size_t)best * P + 1]))
            best = i;
    game_copy(g, s, sw->ptrs[best]);
    *v_white = sw->values[(size_t)best * P + 1];
    return 0;
}

/* A swap2 opening on s (the start position); see selfplay.h. Returns the stones placed,
 * or -1 with a message. */
static int swap2_open(const game *g, evaluator *e, sp_swap2 *sw, int batch, game_state *s, rng *r,
                      char *err, size_t errlen)
{
    float v;
    int before = g->ops->ply(g, s);
    if (swap2_place(g, e, sw, batch, s, 3, 7, r, &v, err, errlen) < 0)
        return -1;
    /* The responder: white's value v against black's -v. Taking a colour changes no
     * move here; placing two more does. */
    if (g->ops->ply(g, s) == before + 3 && fabsf(v - (-v)) < SP_SWAP2_PLACE2 &&
        swap2_place(g, e, sw, batch, s, 2, 9, r, &v, err, errlen) < 0)
        return -1;
    return g->ops->ply(g, s) - before;
}

static void swap2_free(sp_swap2 *sw)
{
    free(sw->states);
    free(sw->ptrs);
    free(sw->keys);
    free(sw->legal);
    free(sw->priors);
    free(sw->values);
    memset(sw, 0, sizeof *sw);
}

static int swap2_alloc(sp_swap2 *sw, const game *g)
{
    size_t K = SP_SWAP2_CANDIDATES, A = (size_t)g->actions;
    sw->states = malloc(K * g->state_size);
    sw->ptrs = malloc(K * sizeof *sw->ptrs);
    sw->keys = malloc(K * sizeof *sw->keys);
    sw->legal = malloc(K * A);
    sw->priors = malloc(K * A * sizeof *sw->priors);
    sw->values = malloc(K * (size_t)g->players * sizeof *sw->values);
    if (!sw->states || !sw->ptrs || !sw->keys || !sw->legal || !sw->priors || !sw->values) {
        swap2_free(sw);
        return -1;
    }
    return 0;
}

/* Starts game gameix in slot s: the start position, then the opening (a book line or
 * swap2). Returns 0 or -1 with a message (the evaluator failed). */
static int slot_start(sp_worker *wk, sp_slot *s, int gameix, game_state *scratch, char *err,
                      size_t errlen)
{
    sp_shared *sh = wk->sh;
    const game *g = sh->g;
    s->gameix = gameix;
    s->n = 0;
    s->plies = 0;
    memset(s->low, 0, sizeof s->low);
    memset(s->would_resign, 0, sizeof s->would_resign);
    for (int k = 0; k < GAME_MAX_PLAYERS; k++) {
        s->prev_v[k] = NAN;
        s->resign_at[k] = 2.0f; /* never */
    }
    /* Whether this game may resign is a pure function of the seed and the game number,
     * so it does not depend on which worker plays it. */
    rng r;
    rng_seed(&r, rng_derive(sh->o->seed, 0x7265736967ULL + (uint64_t)gameix));
    s->no_resign = g->players != 2 || sh->o->resign_threshold <= -1.0 ||
                   rng_uniform(&r) < sh->o->resign_disabled_fraction;
    game_init(g, scratch, &r);
    const sp_opts *o = sh->o;
    if (o->book) {
        int count = openings_count(o->book);
        uint64_t offset = rng_derive(o->seed, 0x626f6f6bULL) % (uint64_t)count;
        int line = (int)((offset + (uint64_t)gameix) % (uint64_t)count);
        if (openings_play(o->book, line, g, scratch) < 0)
            return gz_fail(err, errlen, "self-play: opening book line %d does not fit the game", line + 1);
    } else if (o->swap2) {
        rng sr;
        rng_seed(&sr, rng_derive(o->seed, 0x7377617032ULL + (uint64_t)gameix));
        if (swap2_open(g, wk->e, &wk->sw, o->search.batch, scratch, &sr, err, errlen) < 0)
            return -1;
    }
    s->plies = g->ops->ply(g, scratch);
    mcts_set_root(s->tree, scratch);
    rng_seed(&s->r, rng_derive(sh->o->seed, 0x706372ULL + (uint64_t)gameix));
    return 0;
}

/* A scored game's value target for player q at ply t: the points the next value_steps
 * moves scored plus the search's root value after them (MuZero's n-step return), or,
 * when the game ends first or value_steps is 0, the points to the end. */
static float points_to_come(const game *g, const sp_opts *o, const sp_slot *s, int t, int q,
                            const float *final)
{
    size_t P = (size_t)g->players;
    float now = s->mscore[(size_t)t * P + q];
    int n = o->value_steps;
    if (n > 0 && t + n < s->plies) {
        size_t k = (size_t)(t + n) * P + q;
        return s->mscore[k] - now + s->mvalue[k];
    }
    return final[q] - now;
}

/* Whether finished games go into part files (sp_opts.part_seconds). Not with the tree
 * export (seed 003's bootstrap): it writes a game's nodes while the game goes on, so a
 * part would hold pieces of games it does not count. */
static bool parts_on(const sp_opts *o)
{
    return o->part_seconds > 0 && o->part_path && o->export_min_visits <= 0;
}

/* Closes the file being written as the next part (with its games' resignation records)
 * and, with reopen, opens a new one at out_path. The caller holds the lock (or is the
 * only thread left). Returns 0, or -1 with a message, also recorded as the run's
 * failure (sh->w is then NULL or the new writer). */
static int next_part(sp_shared *sh, bool reopen, char *err, size_t errlen)
{
    const sp_opts *o = sh->o;
    char path[4096];
    o->part_path(o->part_ctx, sh->next_part, path, sizeof path);
    sp_writer *w = sh->w;
    sh->w = NULL;
    sp_writer_set_games(w, sh->file_games);
    int rc = 0;
    if (sh->nchecks > 0 && sp_writer_put_resign_checks(w, sh->checks, sh->nchecks, err, errlen) < 0) {
        sp_writer_abort(w);
        rc = -1;
    } else if (sp_writer_close_as(w, path, err, errlen) < 0) {
        rc = -1;
    } else {
        sh->next_part++;
        sh->st.parts++;
        sh->nchecks = 0;
        sh->file_games = 0;
        sh->file_t0 = now_seconds();
        if (reopen && !(sh->w = sp_writer_open(sh->out_path, sh->g, o->game_config, sh->meta, err,
                                                errlen)))
            rc = -1;
    }
    if (rc < 0 && !sh->failed) { /* this cause, not the missing writer, is the run's error */
        sh->failed = 1;
        snprintf(sh->err, sizeof sh->err, "%s", err);
    }
    return rc;
}

/* The game in slot s ended with outcome z (absolute players): write its samples. A game
 * with point cells that ended on the board (not resigned) gives each sample the final
 * position's owners seen from its mover (samples.h: the owner dataset); a resigned
 * game's are unknown. */
static int slot_finish(sp_shared *sh, sp_slot *s, const game_state *end, const float *z,
                       bool resigned, bool adjudged, float *fplanes, char *err, size_t errlen)
{
    const game *g = sh->g;
    int hw = g->rows * g->cols, np = g->planes * hw, A = g->actions, P = g->players;
    int rc = 0;
    bool scored = game_scored(g);
    float final[GAME_MAX_PLAYERS] = {0};
    if (scored)
        g->ops->score(g, end, final);
    /* the final position's cells (absolute players), once; each sample's map in owner */
    int8_t cells[GAME_MAX_CELLS], owner[GAME_MAX_CELLS];
    bool owned = sp_game_has_owner(g) && !resigned && !adjudged; /* the board is final */
    assert(hw <= GAME_MAX_CELLS);
    if (owned)
        g->ops->cells(g, end, cells);
    pthread_mutex_lock(&sh->lock);
    if (!sh->w) /* a part's new file failed to open: the run is failing */
        rc = gz_fail(err, errlen, "self-play: no sample file to write to");
    for (int i = 0; i < s->n && rc == 0; i++) {
        for (int k = 0; k < np; k++)
            fplanes[k] = (float)s->planes[(size_t)i * np + k] * (1.0f / 255.0f);
        float zm[GAME_MAX_PLAYERS];
        for (int k = 0; k < P; k++) {
            int q = (s->mover[i] + k) % P;
            /* a scored game's target: the points still to come from this position */
            zm[k] = scored ? points_to_come(g, sh->o, s, s->ply[i], q, final) : z[q];
        }
        if (owned) /* a stone of player c: 1 + its seats after the mover; else nobody */
            for (int k = 0; k < hw; k++)
                owner[k] = (int8_t)(cells[k] >= 0 ? 1 + (cells[k] - s->mover[i] + P) % P : 0);
        rc = sp_writer_append_full(sh->w, fplanes, s->pi + (size_t)i * A, s->legal + (size_t)i * A,
                                   zm, s->q + (size_t)i * P, s->weight[i], owned ? owner : NULL,
                                   s->qa ? s->qa + (size_t)i * A : NULL,
                                   s->gameix + sh->o->gameix_base, s->ply[i], err, errlen);
        sh->st.policy_targets += rc == 0 && s->weight[i] > 0;
    }
    if (rc == 0) {
        sp_stats *st = &sh->st;
        st->games++;
        st->positions += s->n;
        st->plies += s->plies;
        st->score_sum += final[0];
        if (g->ops->best_tile) {
            int bt = g->ops->best_tile(g, end);
            st->best_tile = bt > st->best_tile ? bt : st->best_tile;
        }
        int best = 0, nbest = 1;
        for (int k = 1; k < P; k++) {
            if (z[k] > z[best]) {
                best = k;
                nbest = 1;
            } else if (z[k] == z[best]) {
                nbest++;
            }
        }
        if (nbest == 1 && P > 1)
            st->seat_wins[best]++;
        else
            st->draws++;
        st->resigned += resigned;
        st->adjudicated += adjudged;
        /* a no-resign game measures where each player would have resigned and whether
         * that would have been false (selfplay.h: resignation calibration) */
        if (s->no_resign && P == 2 && !sh->o->pure)
            for (int k = 0; k < P && rc == 0; k++) {
                if (sh->nchecks == sh->capchecks) {
                    int cap = sh->capchecks ? 2 * sh->capchecks : 256;
                    sp_resign_check *nc = realloc(sh->checks, sizeof *nc * (size_t)cap);
                    if (!nc) {
                        rc = gz_fail(err, errlen, "self-play: out of memory");
                        break;
                    }
                    sh->checks = nc;
                    sh->capchecks = cap;
                }
                sh->checks[sh->nchecks].value = s->resign_at[k];
                sh->checks[sh->nchecks].lost = z[k] <= -1.0f;
                sh->nchecks++;
            }
        for (int k = 0; k < P; k++)
            if (s->would_resign[k]) {
                st->resign_checked++;
                st->resign_false += z[k] > -1.0f;
            }
        sh->file_games++;
        if (rc == 0 && parts_on(sh->o) && st->games < sh->o->games &&
            now_seconds() - sh->file_t0 >= sh->o->part_seconds)
            rc = next_part(sh, true, err, errlen);
        if (rc == 0 && sh->o->progress)
            sh->o->progress(sh->o->progress_ctx, st, sh->o->games);
    }
    pthread_mutex_unlock(&sh->lock);
    s->gameix = -1;
    return rc;
}

/* mcts_export's callback: one tree node as a sample (the caller holds the lock). */
typedef struct export_ctx {
    sp_shared *sh;
    sp_slot *s;
    float *fplanes;
    int ply;          /* the root's ply */
    int64_t written;
    char *err;
    size_t errlen;
} export_ctx;

static int export_node(void *ctx, const mcts_node_sample *ns)
{
    export_ctx *x = ctx;
    const game *g = x->sh->g;
    game_encode(g, ns->state, x->fplanes);
    /* z: the best points to come reached through the node; q: their mean; qa: per move
     * the best points reached through it (its reward included), seed 003's targets of
     * its move values; moves never tried have none */
    float z[GAME_MAX_PLAYERS] = {ns->best}, q[GAME_MAX_PLAYERS] = {ns->value[0]};
    float qa[GAME_MAX_ACTIONS];
    bool has_qa = sp_game_has_qa(g);
    for (int a = 0; has_qa && a < g->actions; a++)
        qa[a] = ns->best_after && ns->best_after[a] > -FLT_MAX ? ns->best_after[a] : NAN;
    if (sp_writer_append_full(x->sh->w, x->fplanes, ns->pi, ns->legal, z, q, 1.0f, NULL,
                              has_qa ? qa : NULL, x->s->gameix + x->sh->o->gameix_base,
                              x->ply + ns->depth, x->err, x->errlen) < 0)
        return 1;
    x->written++;
    return 0;
}

static void *worker_main(void *arg)
{
    sp_worker *wk = arg;
    sp_shared *sh = wk->sh;
    const game *g = sh->g;
    const sp_opts *o = sh->o;
    int hw = g->rows * g->cols, np = g->planes * hw, A = g->actions;
    int L = g->max_game_length > 0 ? g->max_game_length : A;
    int nslots = o->parallel_games;
    char err[512];

    sp_slot *slots = calloc((size_t)nslots, sizeof *slots);
    mcts **active = calloc((size_t)nslots, sizeof *active);
    int *active_ix = calloc((size_t)nslots, sizeof *active_ix);
    float *fplanes = malloc(sizeof(float) * (size_t)np);
    float *pi = malloc(sizeof(float) * (size_t)A);
    game_state *scratch = malloc(g->state_size);
    mcts_child_info *kids = malloc(sizeof *kids * (size_t)A); /* the root's children (qa) */
    mcts_batch *batch = mcts_batch_new(g, nslots * o->search.batch);
    bool ok = slots && active && active_ix && fplanes && pi && scratch && kids && batch &&
              (!o->swap2 || swap2_alloc(&wk->sw, g) == 0);
    for (int i = 0; ok && i < nslots; i++) {
        sp_slot *s = &slots[i];
        s->gameix = -1;
        uint64_t seed = rng_derive(o->seed, ((uint64_t)wk->id << 20) + (uint64_t)i + 1);
        mcts_params sp = o->search;
        sp.track_best = sp.track_best || o->export_min_visits > 0;
        s->tree = mcts_new(g, &sp, seed, err, sizeof err);
        if (!s->tree) {
            fail_shared(sh, err);
            ok = false;
        } else if (!slot_reserve(g, s, L < 64 ? L : 64)) {
            ok = false;
        }
    }
    if (!ok)
        fail_shared(sh, "self-play: out of memory");

    while (ok) {
        /* Fill idle slots with new games. */
        int nact = 0;
        for (int i = 0; i < nslots; i++) {
            if (slots[i].gameix < 0) {
                int ix = claim_game(sh);
                if (ix >= 0 && slot_start(wk, &slots[i], ix, scratch, err, sizeof err) < 0) {
                    fail_shared(sh, err);
                    slots[i].gameix = -1;
                    ok = false;
                    break;
                }
            }
            if (slots[i].gameix >= 0) {
                active_ix[nact] = i;
                active[nact++] = slots[i].tree;
            }
        }
        if (!ok || nact == 0 || should_stop(sh))
            break;
        pthread_mutex_lock(&sh->lock);
        bool failed = sh->failed;
        pthread_mutex_unlock(&sh->lock);
        if (failed)
            break;

        /* One move in every active game: search them together. */
        /* (zero-filled options, as tests make them by hand, mean no randomisation) */
        bool pcr = o->full_fraction > 0 && o->full_fraction < 1.0 && o->fast_simulations >= 1;
        for (int j = 0; j < nact; j++) {
            sp_slot *s = &slots[active_ix[j]];
            s->full = true;
            if (pcr) {
                s->full = rng_uniform(&s->r) < o->full_fraction;
                mcts_set_simulations(active[j], s->full ? o->search.simulations : o->fast_simulations);
                mcts_set_noise(active[j], s->full && o->search.noise);
            }
            mcts_begin(active[j]);
        }
        for (;;) {
            bool all_done = true;
            for (int j = 0; j < nact && all_done; j++)
                all_done = mcts_done(active[j]);
            if (all_done)
                break;
            if (mcts_step_many(active, nact, batch, wk->e, err, sizeof err) < 0) {
                fail_shared(sh, err);
                ok = false;
                break;
            }
        }
        if (!ok)
            break;
        for (int j = 0; j < nact && ok; j++) {
            sp_slot *s = &slots[active_ix[j]];
            mcts_result res;
            mcts_finish(s->tree, pi, &res);
            const game_state *root = mcts_root_state(s->tree);
            int mover = game_current_player(g, root);
            assert(s->n < L);
            if (o->export_min_visits > 0) {
                /* seed 003: the tree's nodes, each with the best points reached after it */
                pthread_mutex_lock(&sh->lock);
                export_ctx ec = {sh, s, fplanes, s->plies, 0, err, sizeof err};
                int erc = sh->w ? mcts_export(s->tree, o->export_min_visits, export_node, &ec)
                                : (snprintf(err, sizeof err, "self-play: no sample file to write to"), 1);
                sh->st.positions += ec.written;
                sh->st.policy_targets += ec.written;
                pthread_mutex_unlock(&sh->lock);
                if (erc != 0) {
                    fail_shared(sh, erc < 0 ? "self-play: out of memory" : err);
                    ok = false;
                    break;
                }
            } else if ((s->full || o->record_fast) && !slot_reserve(g, s, s->n + 1)) {
                fail_shared(sh, "self-play: out of memory");
                ok = false;
                break;
            } else if (s->full || o->record_fast) {
                /* playout cap randomisation: a fast search's position is a sample only with
                 * record_fast (then with policy weight 0) */
                game_encode(g, root, fplanes);
                uint8_t *dst = s->planes + (size_t)s->n * np;
                for (int k = 0; k < np; k++) {
                    float v = fplanes[k] < 0 ? 0 : fplanes[k] > 1 ? 1 : fplanes[k];
                    dst[k] = (uint8_t)lrintf(v * 255.0f);
                }
                memcpy(s->pi + (size_t)s->n * A, pi, sizeof(float) * (size_t)A);
                game_legal(g, root, s->legal + (size_t)s->n * A);
                s->mover[s->n] = (int8_t)mover;
                s->ply[s->n] = s->plies;

                bool degenerate = o->zero_weight_proven && res.proven && res.value[mover] < 1.0f;
                s->weight[s->n] = s->full && !degenerate ? 1.0f : 0.0f;
                /* the root value, mover-first as z, clamped: a backed-up mean is in
                 * [-1, 1] up to rounding (a scored game's: points to come, as they are) */
                for (int k = 0; k < g->players; k++) {
                    float v = res.value[(mover + k) % g->players];
                    if (!isfinite(v))
                        v = 0;
                    else if (!game_scored(g))
                        v = v < -1 ? -1 : v > 1 ? 1 : v;
                    s->q[(size_t)s->n * g->players + k] = v;
                }
                if (s->qa) {
                    /* each visited move's Q in points: the action-value head's target */
                    float *qa = s->qa + (size_t)s->n * A;
                    for (int a = 0; a < A; a++)
                        qa[a] = NAN;
                    int nc = mcts_children(s->tree, MCTS_ROOT, kids, A);
                    for (int c = 0; c < nc; c++)
                        if (kids[c].visits > 0 && isfinite(kids[c].q))
                            qa[kids[c].action] = kids[c].q;
                }
                s->n++;
            }
            if (game_scored(g)) {
                /* the points so far and the search's value here: the value targets */
                if (!slot_reserve_moves(g, s, s->plies + 1)) {
                    fail_shared(sh, "self-play: out of memory");
                    ok = false;
                    break;
                }
                size_t P = (size_t)g->players;
                g->ops->score(g, root, s->mscore + (size_t)s->plies * P);
                for (size_t q = 0; q < P; q++)
                    s->mvalue[(size_t)s->plies * P + q] = res.value[q];
            }
            s->plies++;
            pthread_mutex_lock(&sh->lock);
            sh->st.simulations += res.stats.simulations;
            sh->st.evaluated += res.stats.evaluated;
            pthread_mutex_unlock(&sh->lock);

            /* Resignation: two consecutive own moves below the threshold. */
            bool resign = false;
            if (g->players == 2) {
                float v = res.value[mover], pv = s->prev_v[mover];
                if (!isnan(pv)) {
                    float pair = v > pv ? v : pv;
                    if (pair < s->resign_at[mover])
                        s->resign_at[mover] = pair;
                }
                s->prev_v[mover] = v;
            }
            if (g->players == 2 && o->resign_threshold > -1.0) {
                if (res.value[mover] < o->resign_threshold)
                    s->low[mover]++;
                else
                    s->low[mover] = 0;
                if (s->low[mover] >= 2) {
                    if (s->no_resign)
                        s->would_resign[mover] = true;
                    else
                        resign = true;
                }
            }
            float z[GAME_MAX_PLAYERS];
            /* adjudication: a proven root ends the game with its proven outcome */
            bool adjudged = !resign && o->adjudicate && res.proven && g->players == 2 &&
                            !game_scored(g);
            if (adjudged) {
                memcpy(z, res.value, sizeof(float) * (size_t)g->players);
            } else if (resign) {
                for (int k = 0; k < g->players; k++)
                    z[k] = 1.0f;
                z[mover] = -1.0f;
            } else {
                if (mcts_play(s->tree, res.action) < 0) {
                    fail_shared(sh, "self-play: the search chose an illegal move (bug)");
                    ok = false;
                    break;
                }
                root = mcts_root_state(s->tree);
                if (!game_terminal(g, root))
                    continue;
                game_result(g, root, z);
            }
            if (slot_finish(sh, s, mcts_root_state(s->tree), z, resign, adjudged, fplanes, err,
                            sizeof err) < 0) {
                fail_shared(sh, err);
                ok = false;
            }
        }
    }
    pthread_mutex_lock(&sh->lock);
    sh->st.cache_hits += wk->e->cache_hits;
    pthread_mutex_unlock(&sh->lock);
    for (int i = 0; slots && i < nslots; i++) {
        mcts_free(slots[i].tree);
        free(slots[i].planes);
        free(slots[i].pi);
        free(slots[i].legal);
        free(slots[i].mover);
        free(slots[i].weight);
        free(slots[i].q);
        free(slots[i].qa);
        free(slots[i].ply);
        free(slots[i].mscore);
        free(slots[i].mvalue);
    }
    free(slots);
    free(active);
    free(active_ix);
    free(fplanes);
    free(pi);
    free(scratch);
    free(kids);
    mcts_batch_free(batch);
    swap2_free(&wk->sw);
    return NULL;
}

int sp_run(const game *g, const sp_opts *o, sp_eval_factory make_eval, void *eval_ctx,
           const char *out_path, sp_stats *stats, char *err, size_t errlen)
{
    if (o->games < 1 || o->parallel_games < 1 || o->threads < 1) {
        snprintf(err, errlen, "self-play: games, parallel_games and threads must be >= 1");
        return -1;
    }
    if (o->export_min_visits > 0 && (g->players != 1 || !game_scored(g))) {
        snprintf(err, errlen, "self-play: exporting the search trees (seed 003's bootstrap) needs a "
                              "one-player game with a score; game %s is not one", g->name);
        return -1;
    }
    sp_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.g = g;
    sh.o = o;
    pthread_mutex_init(&sh.lock, NULL);
    sp_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.generation = o->generation;
    snprintf(meta.model, sizeof meta.model, "%s", o->model ? o->model : "");
    sh.out_path = out_path;
    sh.meta = &meta;
    sh.next_part = o->part_first;
    sh.file_t0 = now_seconds();
    sh.w = sp_writer_open(out_path, g, o->game_config, &meta, err, errlen);
    if (!sh.w) {
        pthread_mutex_destroy(&sh.lock);
        return -1;
    }
    int nthreads = o->threads < o->games ? o->threads : o->games;
    sp_worker *wk = calloc((size_t)nthreads, sizeof *wk);
    int made = 0, rc = 0;
    if (!wk) {
        snprintf(err, errlen, "self-play: out of memory");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < nthreads; i++) {
        wk[i].sh = &sh;
        wk[i].id = i;
        wk[i].e = make_eval(eval_ctx, i, nthreads, err, errlen);
        if (!wk[i].e)
            rc = -1;
        else
            made++;
    }
    double t0 = now_seconds();
    int started = 0;
    for (int i = 0; rc == 0 && i < made; i++) {
        if (pthread_create(&wk[i].thread, NULL, worker_main, &wk[i]) != 0) {
            fail_shared(&sh, "self-play: cannot start a worker thread");
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(wk[i].thread, NULL);
    for (int i = 0; i < made; i++)
        evaluator_free(wk[i].e);
    free(wk);
    sh.st.seconds = now_seconds() - t0;
    if (rc == 0 && sh.failed) {
        snprintf(err, errlen, "%s", sh.err);
        rc = -1;
    }
    if (rc == 0 && should_stop(&sh) && sh.st.games < o->games) { /* (all played: done) */
        rc = 1;
        /* stopped: the games finished since the last part are kept as one more */
        char perr[512];
        if (parts_on(o) && sh.file_games > 0 && sh.w && next_part(&sh, false, perr, sizeof perr) < 0) {
            snprintf(err, errlen, "%s", perr);
            rc = -1;
        }
    }
    if (rc == 0 && sh.nchecks > 0 &&
        sp_writer_put_resign_checks(sh.w, sh.checks, sh.nchecks, err, errlen) < 0) {
        sp_writer_abort(sh.w);
        sh.w = NULL;
        rc = -1;
    }
    if (rc == 0) {
        sp_writer_set_games(sh.w, sh.file_games);
        if (sp_writer_close(sh.w, err, errlen) < 0)
            rc = -1;
    } else {
        sp_writer_abort(sh.w); /* accepts NULL (a part's writer that failed to open) */
    }
    if (stats)
        *stats = sh.st;
    free(sh.checks);
    pthread_mutex_destroy(&sh.lock);
    return rc;
}
