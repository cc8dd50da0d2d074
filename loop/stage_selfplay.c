/* stage_selfplay.c — the self-play stage of the generation loop: generation i's games
 * with the best model (generation 1 with selfplay.bootstrap = rollout: pure MCTS) into
 * data/gen_NNNN.h5, in part files every selfplay.part_minutes so that a stopped or
 * killed session keeps its finished games, or as the shards of a plan shared between
 * MPI ranks (loop/rundata.h has the file layout). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dist.h"
#include "loop_impl.h"
#include "rundata.h"
#include "engine/rng.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "selfplay/sp_eval.h"

typedef struct sp_prog {
    run_ctx *r;
    int gen;
    int kept; /* games of the generation in parts from an earlier session */
} sp_prog;

static void sp_progress(void *ctx, const sp_stats *st, int total)
{
    sp_prog *x = ctx;
    /* test hook: a rank killed in the middle of its self-play */
    run_maybe_crash(x->r, x->gen, "selfplay-game");
    char at[48];
    snprintf(at, sizeof at, "selfplay-game%d", x->kept + st->games);
    run_maybe_crash(x->r, x->gen, at);
    if (!lead(x->r))
        return;
    if (st->games == total || !run_progress_due(x->r)) /* the stage sums up */
        return;
    double dt = run_now() - x->r->prog.start;
    fprintf(stderr, "gen %d selfplay: %d/%d games, %lld positions, %.0f positions/s%s", x->gen,
            x->kept + st->games, x->kept + total, (long long)st->positions, dt > 0 ? st->positions / dt : 0.0,
            x->r->prog.tty ? "   " : "\n");
}

/* The resignation threshold for generation gen's self-play (loop/rundata.h). */
static double calibrated_resign(run_ctx *r, int gen)
{
    return rd_resign_threshold(r->dir, gen, r->c.train.window, r->c.selfplay.resign_target,
                               r->c.selfplay.resign_min_checks);
}

/* The selfplay event of one self-play file's (or one rank's) games. */
static cJSON *selfplay_event(const game *g, int gen, const sp_opts *o, const sp_stats *st)
{
    cJSON *m = run_event("selfplay", gen);
    cJSON_AddStringToObject(m, "model", o->model);
    cJSON_AddNumberToObject(m, "games", st->games);
    cJSON_AddNumberToObject(m, "positions", (double)st->positions);
    cJSON_AddNumberToObject(m, "seconds", st->seconds);
    cJSON_AddNumberToObject(m, "positions_per_s", st->positions / (st->seconds + 1e-9));
    cJSON_AddNumberToObject(m, "simulations_per_s", st->simulations / (st->seconds + 1e-9));
    cJSON_AddNumberToObject(m, "mean_length", st->games ? (double)st->plies / st->games : 0);
    cJSON_AddNumberToObject(m, "first_seat_wins", st->seat_wins[0]);
    cJSON_AddNumberToObject(m, "draws", st->draws);
    cJSON_AddNumberToObject(m, "resigned", st->resigned);
    cJSON_AddNumberToObject(m, "adjudicated", st->adjudicated);
    cJSON_AddNumberToObject(m, "resign_threshold", o->resign_threshold);
    cJSON_AddNumberToObject(m, "policy_targets", (double)st->policy_targets);
    cJSON_AddNumberToObject(m, "false_resign_rate",
                            st->resign_checked ? (double)st->resign_false / st->resign_checked : 0);
    cJSON_AddNumberToObject(m, "cache_hit_rate",
                            st->evaluated ? (double)st->cache_hits / (double)st->evaluated : 0);
    if (game_scored(g)) {
        cJSON_AddNumberToObject(m, "mean_score", st->games ? st->score_sum / st->games : 0);
        if (st->best_tile >= 0 && st->best_tile < 53)
            cJSON_AddNumberToObject(m, "max_tile", (double)(1ull << st->best_tile));
        cJSON_AddNumberToObject(m, "exported_nodes", o->export_min_visits > 0 ? (double)st->positions : 0);
    }
    return m;
}

/* Adds b's counts to a (seconds too: a rank's shards are played one after another). */
static void sp_stats_add(sp_stats *a, const sp_stats *b)
{
    a->games += b->games, a->positions += b->positions, a->plies += b->plies;
    for (int k = 0; k < GAME_MAX_PLAYERS; k++)
        a->seat_wins[k] += b->seat_wins[k];
    a->draws += b->draws, a->resigned += b->resigned, a->resign_checked += b->resign_checked;
    a->adjudicated += b->adjudicated;
    a->resign_false += b->resign_false, a->simulations += b->simulations;
    a->evaluated += b->evaluated, a->cache_hits += b->cache_hits;
    a->policy_targets += b->policy_targets, a->seconds += b->seconds;
    a->score_sum += b->score_sum;
    a->best_tile = b->best_tile > a->best_tile ? b->best_tile : a->best_tile;
}

void loop_sp_bootstrap(sp_opts *o, const gz_config *c)
{
    o->search.simulations = c->selfplay.bootstrap_simulations;
    mcts_params_pure(&o->search);
    o->pure = true;
    o->full_fraction = 1; /* the bootstrap's rollouts are the data: every move in full */
}

/* rundata's part path as sp_opts.part_path wants it */
typedef struct part_ctx {
    const char *dir;
    int gen;
} part_ctx;

static void part_path(void *ctx, int part, char *out, size_t len)
{
    const part_ctx *x = ctx;
    char p[RD_PATH];
    rd_part_path(p, x->dir, x->gen, part);
    snprintf(out, len, "%s", p);
}

/* Plays `games` games of generation gen into out with the run's settings; shard >= 0:
 * shard `shard` of the generation's plan (its own seeds), -1: the whole generation in
 * one file (the seeds of a run of one process), in part files every
 * selfplay.part_minutes after the `parts` parts already there, which hold `kept` games
 * (then this session's games have seeds of their own and are numbered from first_game,
 * past those).
 * Returns sp_run's status. */
static int play_selfplay_file(run_ctx *r, int gen, int shard, int games, int parts, int kept,
                              int first_game, double resign, const char *out, sp_opts *o,
                              sp_stats *st, char *err, size_t errlen)
{
    char model[PATH_LEN];
    bool rollout = gen == 1 && !strcmp(r->c.selfplay.bootstrap, "rollout") && !r->gen0_from_model;
    snprintf(model, sizeof model, "%s/%s", r->dir, r->best);
    /* a shard's evaluators take their seeds from the shard's config copy */
    gz_config sc = r->c;
    uint64_t seed = rng_derive(r->c.seed, 0x5350000ULL + (uint64_t)gen);
    if (shard >= 0) {
        seed = rng_derive(seed, 0x5348415244ULL + (uint64_t)shard);
        sc.seed = rng_derive(seed, 1);
    } else if (parts > 0) {
        seed = rng_derive(seed, 0x50415254ULL + (uint64_t)parts);
        sc.seed = rng_derive(seed, 1);
    }
    sp_evals ev;
    if (sp_evals_init(&ev, &sc, r->g, rollout ? NULL : model, err, errlen) < 0)
        return -1;
    sp_opts_from_config(o, &sc);
    o->book = r->book;
    o->games = games;
    if (rollout) {
        loop_sp_bootstrap(o, &r->c);
        if (r->solo) /* seed 003: the trees' nodes with their best scores reached */
            o->export_min_visits = r->c.selfplay.bootstrap_export;
    }
    o->seed = seed;
    o->generation = gen;
    if (r->c.selfplay.resign_target > 0 && r->g->players == 2)
        o->resign_threshold = resign;
    o->model = rollout ? "rollout" : r->best;
    char *gcfg = sp_game_config_json(&r->c);
    o->game_config = gcfg;
    sp_prog pp = {r, gen, kept};
    run_progress_start(r);
    o->progress = sp_progress;
    o->progress_ctx = &pp;
    o->stop = (const volatile int *)&run_interrupted;
    part_ctx pc = {r->dir, gen};
    if (shard < 0) {
        /* numbered after the kept games' even when parts are now off */
        o->gameix_base = first_game;
        if (r->c.selfplay.part_minutes > 0) {
            o->part_seconds = 60 * r->c.selfplay.part_minutes;
            o->part_path = part_path;
            o->part_ctx = &pc;
            o->part_first = parts;
        }
    }
    int rc = sp_run(r->g, o, sp_evals_make, &ev, out, st, err, errlen);
    o->game_config = NULL;
    free(gcfg);
    sp_evals_deinit(&ev);
    if (rc == 1)
        snprintf(err, errlen, "interrupted");
    return rc;
}

/* The parts of generation gen's self-play an interrupted session left (rundata.h): one
 * past their largest number, the games they hold and one past their largest game
 * number (the games played after them are numbered from there). A part that cannot be
 * read counts no games (its games are played again; training skips it as damaged, with
 * a data_skipped event), with a warning naming it. */
static void parts_kept(const run_ctx *r, int gen, int *parts, int *kept, int *next)
{
    *parts = rd_parts(r->dir, gen);
    int64_t games = 0;
    *next = 0;
    for (int k = 0; k < *parts; k++) {
        char pp[RD_PATH], why[512];
        int64_t n;
        int32_t nx;
        rd_part_path(pp, r->dir, gen, k);
        if (!rundir_exists(pp))
            continue;
        if (sp_read_games(pp, &n, &nx, why, sizeof why) < 0) {
            if (lead(r))
                fprintf(stderr, "run: %s; its games are played again\n", why);
            continue;
        }
        games += n;
        if (nx > *next)
            *next = nx;
    }
    *kept = games < r->c.selfplay.games ? (int)games : r->c.selfplay.games;
}

/* Self-play of generation gen (rundata.h): one file with one rank and no plan; else the
 * plan's missing shards shared between the ranks. Rank 0 decides from the files what is
 * left and tells the others, so every rank acts on the same view of the directory. */
int run_stage_selfplay(run_ctx *r, int gen, char *err, size_t errlen)
{
    int rc = 0;
    /* done?, the plan's shards (0: one file) and games */
    int64_t info[3] = {0, 0, 0};
    if (lead(r)) {
        rd_plan p = {0};
        if (rd_selfplay_done(r->dir, gen)) {
            info[0] = 1;
        } else {
            int pr = rd_plan_read(r->dir, gen, &p, err, errlen);
            int parts = 0, kept = 0, next = 0;
            if (pr == 0 && r->ranks > 1) {
                parts_kept(r, gen, &parts, &kept, &next);
                /* the shards play what a one-process session's parts did not */
                p.games = r->c.selfplay.games - kept > 1 ? r->c.selfplay.games - kept : 1;
                p.shards = r->ranks < p.games ? r->ranks : p.games;
                pr = rd_plan_write(r->dir, gen, &p, err, errlen) < 0 ? -1 : 1;
            }
            rc = pr < 0 ? -1 : 0;
            if (pr == 1)
                info[1] = p.shards, info[2] = p.games;
        }
    }
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    comm_bcast(r->cm, info, sizeof info, 0);
    if (info[0])
        return 0;
    double resign = -1;
    if (lead(r) && r->c.selfplay.resign_target > 0 && r->g->players == 2)
        resign = calibrated_resign(r, gen);
    comm_bcast(r->cm, &resign, sizeof resign, 0);
    double t0 = run_now();
    sp_opts o;
    sp_stats mine;
    memset(&mine, 0, sizeof mine);
    mine.best_tile = -1;
    memset(&o, 0, sizeof o);
    int nshards = 0, played = 0, kept = 0;
    if (info[1] == 0) {
        /* one process, no plan: data/gen_NNNN.h5 as always, after the parts an
         * interrupted session closed (their games are kept; the rest are played) */
        char out[PATH_LEN];
        int parts = 0, next = 0;
        parts_kept(r, gen, &parts, &kept, &next);
        int left = r->c.selfplay.games - kept;
        if (parts > 0 && lead(r))
            fprintf(stderr, "gen %d selfplay: %d games kept from an interrupted session; playing "
                    "%d more\n", gen, kept, left > 1 ? left : 1);
        rd_single_path(out, r->dir, gen);
        rc = play_selfplay_file(r, gen, -1, left > 1 ? left : 1, parts, kept, next, resign, out,
                                &o, &mine, err, errlen);
        played = rc == 0;
    } else {
        rd_plan p = {(int)info[1], (int)info[2]};
        /* the shards still missing, in rank 0's view, shared round-robin */
        int *missing = calloc((size_t)p.shards, sizeof(int)), *take = calloc((size_t)p.shards, sizeof(int));
        if (!missing || !take)
            comm_abort(r->cm, 1);
        if (lead(r))
            for (int k = 0; k < p.shards; k++) {
                char sp[PATH_LEN];
                rd_shard_path(sp, r->dir, gen, k);
                struct stat st;
                if (stat(sp, &st) != 0)
                    missing[nshards++] = k;
            }
        comm_bcast(r->cm, &nshards, sizeof nshards, 0);
        comm_bcast(r->cm, missing, sizeof(int) * (size_t)nshards, 0);
        int ntake = dist_share(nshards, r->rank, r->ranks, take);
        for (int j = 0; j < ntake && rc == 0; j++) {
            int shard = missing[take[j]];
            char out[PATH_LEN];
            rd_shard_path(out, r->dir, gen, shard);
            sp_stats st;
            rc = play_selfplay_file(r, gen, shard, rd_plan_games(&p, shard), 0, 0, 0, resign, out,
                                    &o, &st, err, errlen);
            if (rc == 0) {
                sp_stats_add(&mine, &st);
                played++;
            }
        }
        free(missing);
        free(take);
    }
    /* the ranks that finish early sleep until the last shard is written */
    comm_wait_all(r->cm);
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    /* one selfplay event per rank that played (with its rank), then the stage's totals */
    cJSON *ev = NULL;
    if (played) {
        ev = selfplay_event(r->g, gen, &o, &mine);
        if (kept > 0)
            cJSON_AddNumberToObject(ev, "games_kept", kept);
        if (mine.parts > 0)
            cJSON_AddNumberToObject(ev, "parts", mine.parts);
        if (r->ranks > 1) {
            cJSON_AddNumberToObject(ev, "rank", r->rank);
            cJSON_AddStringToObject(ev, "host", comm_host(r->cm));
        }
    }
    char *text = ev ? cJSON_PrintUnformatted(ev) : strdup("");
    cJSON_Delete(ev);
    char **all = comm_gather_text(r->cm, text ? text : "", 0);
    free(text);
    double wall = run_now() - t0;
    if (lead(r)) {
        int64_t games = 0, positions = 0;
        double draws = 0, plies = 0;
        for (int k = 0; all && k < r->ranks; k++) {
            cJSON *m = all[k][0] ? cJSON_Parse(all[k]) : NULL;
            if (!m)
                continue;
            double g = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "games"));
            games += (int64_t)g;
            positions += (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "positions"));
            draws += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "draws"));
            plies += g * cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "mean_length"));
            run_metric(r, m);
        }
        if (r->ranks > 1) {
            cJSON *m = run_event("selfplay_total", gen);
            cJSON_AddNumberToObject(m, "ranks", r->ranks);
            cJSON_AddNumberToObject(m, "shards", (double)info[1]);
            cJSON_AddNumberToObject(m, "shards_played", nshards);
            cJSON_AddNumberToObject(m, "games", (double)games);
            cJSON_AddNumberToObject(m, "positions", (double)positions);
            cJSON_AddNumberToObject(m, "seconds", wall);
            cJSON_AddNumberToObject(m, "positions_per_s", positions / (wall + 1e-9));
            cJSON_AddNumberToObject(m, "games_per_hour", games * 3600.0 / (wall + 1e-9));
            cJSON_AddNumberToObject(m, "draws", draws);
            cJSON_AddNumberToObject(m, "mean_length", games ? plies / (double)games : 0);
            run_metric(r, m);
        }
        r->sp_games += games;
        r->sp_positions += positions;
        r->sp_seconds += wall;
        char on[48] = "";
        if (r->ranks > 1)
            snprintf(on, sizeof on, " on %d ranks", r->ranks);
        fprintf(stderr, "%sgen %d selfplay: %lld games, %lld positions in %.1f s (%.0f positions/s%s)\n",
                r->prog.tty ? "\r" : "", gen, (long long)games, (long long)positions, wall,
                positions / (wall + 1e-9), on);
    }
    comm_texts_free(r->cm, all);
    return 0;
}
