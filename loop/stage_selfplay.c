/* stage_selfplay.c — the self-play stage of the generation loop: generation i's games
 * with the best model (generation 1 with selfplay.bootstrap = rollout: pure MCTS) into
 * data/gen_NNNN.h5, in part files every selfplay.part_minutes so that a stopped or
 * killed session keeps its finished games, or as the shards of a plan shared between
 * MPI ranks (loop/rundata.h has the file layout). With selfplay.sizes a share of the
 * games is played first on the smaller boards, the same way, each into its own files. */
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
    int side; /* the board (selfplay.sizes), 0: the full board */
    int kept; /* games of the generation's board in parts from an earlier session */
} sp_prog;

/* " 9x9" for a smaller board, "" for the full board: after "gen N selfplay". */
static const char *board_label(char *buf, size_t len, int side)
{
    if (side)
        snprintf(buf, len, " %dx%d", side, side);
    else
        buf[0] = 0;
    return buf;
}

static void sp_progress(void *ctx, const sp_stats *st, int total)
{
    sp_prog *x = ctx;
    /* test hook: a rank killed in the middle of its self-play */
    run_maybe_crash(x->r, x->gen, "selfplay-game");
    char at[48], lb[24];
    if (x->side)
        snprintf(at, sizeof at, "selfplay-s%02d-game%d", x->side, x->kept + st->games);
    else
        snprintf(at, sizeof at, "selfplay-game%d", x->kept + st->games);
    run_maybe_crash(x->r, x->gen, at);
    if (!lead(x->r))
        return;
    if (st->games == total || !run_progress_due(x->r)) /* the stage sums up */
        return;
    double dt = run_now() - x->r->prog.start;
    fprintf(stderr, "gen %d selfplay%s: %d/%d games, %lld positions, %.0f positions/s%s", x->gen,
            board_label(lb, sizeof lb, x->side), x->kept + st->games, x->kept + total,
            (long long)st->positions, dt > 0 ? st->positions / dt : 0.0, x->r->prog.tty ? "   " : "\n");
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
    cJSON_AddNumberToObject(m, "simulations", o->search.simulations);
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

/* Does generation gen play the rollout bootstrap (pure MCTS, no network)? */
static bool rollout_gen(const run_ctx *r, int gen)
{
    return gen == 1 && !strcmp(r->c.selfplay.bootstrap, "rollout") && !r->gen0_from_model;
}

/* rundata's part path as sp_opts.part_path wants it */
typedef struct part_ctx {
    const char *dir;
    int gen, side;
} part_ctx;

static void part_path(void *ctx, int part, char *out, size_t len)
{
    const part_ctx *x = ctx;
    char p[RD_PATH];
    rd_part_path_sized(p, x->dir, x->gen, x->side, part);
    snprintf(out, len, "%s", p);
}

/* Plays `games` games of generation gen's board `side` (0: the full board) into out with
 * the run's settings; shard >= 0: shard `shard` of the board's plan (its own seeds), -1:
 * the board's games in one file (the seeds of a run of one process), in part files every
 * selfplay.part_minutes after the `parts` parts already there, which hold `kept` games
 * (then this session's games have seeds of their own and are numbered from first_game,
 * past those). A smaller board's games: the same model on that board (the network is
 * fully convolutional), its own seeds, no opening book (its moves are the full board's).
 * Returns sp_run's status. */
static int play_selfplay_file(run_ctx *r, int gen, int side, int shard, int games, int parts,
                              int kept, int first_game, double resign, int sims, const char *out,
                              sp_opts *o, sp_stats *st, char *err, size_t errlen)
{
    char model[PATH_LEN];
    bool rollout = rollout_gen(r, gen);
    snprintf(model, sizeof model, "%s/%s", r->dir, r->best);
    /* a shard's evaluators take their seeds from the shard's config copy */
    gz_config sc = r->c;
    uint64_t seed = rng_derive(r->c.seed, 0x5350000ULL + (uint64_t)gen);
    game *sized = NULL;
    const game *g = r->g;
    if (side) {
        sc.game.rows = sc.game.cols = side;
        if (!(sized = game_new(&sc.game, err, errlen)))
            return -1;
        g = sized;
        seed = rng_derive(seed, 0x53495a45ULL + (uint64_t)side);
        sc.seed = rng_derive(seed, 1);
    }
    if (shard >= 0) {
        seed = rng_derive(seed, 0x5348415244ULL + (uint64_t)shard);
        sc.seed = rng_derive(seed, 1);
    } else if (parts > 0) {
        seed = rng_derive(seed, 0x50415254ULL + (uint64_t)parts);
        sc.seed = rng_derive(seed, 1);
    }
    sp_evals ev;
    if (sp_evals_init(&ev, &sc, g, rollout ? NULL : model, err, errlen) < 0) {
        game_free(sized);
        return -1;
    }
    sp_opts_from_config(o, &sc);
    o->search.simulations = sims;
    o->book = side ? NULL : r->book;
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
    char *gcfg = sp_game_config_json(&sc); /* the board the samples were played on */
    o->game_config = gcfg;
    sp_prog pp = {r, gen, side, kept};
    run_progress_start(r);
    o->progress = sp_progress;
    o->progress_ctx = &pp;
    o->stop = (const volatile int *)&run_interrupted;
    part_ctx pc = {r->dir, gen, side};
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
    int rc = sp_run(g, o, sp_evals_make, &ev, out, st, err, errlen);
    o->game_config = NULL;
    free(gcfg);
    sp_evals_deinit(&ev);
    game_free(sized);
    if (rc == 1)
        snprintf(err, errlen, "interrupted");
    return rc;
}

/* The parts of generation gen's self-play on board `side` an interrupted session left
 * (rundata.h): one past their largest number, the games they hold (at most `want`, the
 * board's games) and one past their largest game number (the games played after them
 * are numbered from there). A part that cannot be read counts no games (its games are
 * played again; training skips it as damaged, with a data_skipped event), with a
 * warning naming it. */
static void parts_kept(const run_ctx *r, int gen, int side, int want, int *parts, int *kept,
                       int *next)
{
    *parts = rd_parts_sized(r->dir, gen, side);
    int64_t games = 0;
    *next = 0;
    for (int k = 0; k < *parts; k++) {
        char pp[RD_PATH], why[512];
        int64_t n;
        int32_t nx;
        rd_part_path_sized(pp, r->dir, gen, side, k);
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
    *kept = games < want ? (int)games : want;
}

/* Self-play of generation gen's board `side` (0: the full board), `games` games
 * (rundata.h): one file with one rank and no plan; else the plan's missing shards shared
 * between the ranks. Rank 0 decides from the files what is left and tells the others, so
 * every rank acts on the same view of the directory. A collective; returns 0 (played
 * now, or before), 1 when interrupted, -1 with a message. */
static int selfplay_board(run_ctx *r, int gen, int side, int games, double resign, int sims,
                          char *err, size_t errlen)
{
    int rc = 0;
    char lb[24];
    board_label(lb, sizeof lb, side);
    /* done?, the plan's shards (0: one file) and games */
    int64_t info[3] = {0, 0, 0};
    if (lead(r)) {
        rd_plan p = {0};
        if (rd_board_done(r->dir, gen, side)) {
            info[0] = 1;
        } else {
            int pr = rd_plan_read_sized(r->dir, gen, side, &p, err, errlen);
            int parts = 0, kept = 0, next = 0;
            if (pr == 0 && r->ranks > 1) {
                parts_kept(r, gen, side, games, &parts, &kept, &next);
                /* the shards play what a one-process session's parts did not */
                p.games = games - kept > 1 ? games - kept : 1;
                p.shards = r->ranks < p.games ? r->ranks : p.games;
                pr = rd_plan_write_sized(r->dir, gen, side, &p, err, errlen) < 0 ? -1 : 1;
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
        parts_kept(r, gen, side, games, &parts, &kept, &next);
        int left = games - kept;
        if (parts > 0 && lead(r))
            fprintf(stderr, "gen %d selfplay%s: %d games kept from an interrupted session; playing "
                    "%d more\n", gen, lb, kept, left > 1 ? left : 1);
        rd_single_path_sized(out, r->dir, gen, side);
        rc = play_selfplay_file(r, gen, side, -1, left > 1 ? left : 1, parts, kept, next, resign, sims,
                                out, &o, &mine, err, errlen);
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
                rd_shard_path_sized(sp, r->dir, gen, side, k);
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
            rd_shard_path_sized(out, r->dir, gen, side, shard);
            sp_stats st;
            rc = play_selfplay_file(r, gen, side, shard, rd_plan_games(&p, shard), 0, 0, 0, resign,
                                    sims, out, &o, &st, err, errlen);
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
        if (r->c.selfplay.nsizes > 0)
            cJSON_AddNumberToObject(ev, "board", side ? side : r->g->rows);
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
        int64_t ngames = 0, positions = 0;
        double draws = 0, plies = 0;
        for (int k = 0; all && k < r->ranks; k++) {
            cJSON *m = all[k][0] ? cJSON_Parse(all[k]) : NULL;
            if (!m)
                continue;
            double g = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "games"));
            ngames += (int64_t)g;
            positions += (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "positions"));
            draws += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "draws"));
            plies += g * cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "mean_length"));
            run_metric(r, m);
        }
        if (r->ranks > 1) {
            cJSON *m = run_event("selfplay_total", gen);
            if (r->c.selfplay.nsizes > 0)
                cJSON_AddNumberToObject(m, "board", side ? side : r->g->rows);
            cJSON_AddNumberToObject(m, "ranks", r->ranks);
            cJSON_AddNumberToObject(m, "shards", (double)info[1]);
            cJSON_AddNumberToObject(m, "shards_played", nshards);
            cJSON_AddNumberToObject(m, "games", (double)ngames);
            cJSON_AddNumberToObject(m, "positions", (double)positions);
            cJSON_AddNumberToObject(m, "seconds", wall);
            cJSON_AddNumberToObject(m, "positions_per_s", positions / (wall + 1e-9));
            cJSON_AddNumberToObject(m, "games_per_hour", ngames * 3600.0 / (wall + 1e-9));
            cJSON_AddNumberToObject(m, "draws", draws);
            cJSON_AddNumberToObject(m, "mean_length", ngames ? plies / (double)ngames : 0);
            run_metric(r, m);
        }
        r->sp_games += ngames;
        r->sp_positions += positions;
        r->sp_seconds += wall;
        char on[48] = "";
        if (r->ranks > 1)
            snprintf(on, sizeof on, " on %d ranks", r->ranks);
        fprintf(stderr, "%sgen %d selfplay%s: %lld games, %lld positions in %.1f s (%.0f positions/s%s)\n",
                r->prog.tty ? "\r" : "", gen, lb, (long long)ngames, (long long)positions, wall,
                positions / (wall + 1e-9), on);
    }
    comm_texts_free(r->cm, all);
    return 0;
}

/* selfplay.sizes: generation gen's split of its games between the boards (rundata.h),
 * decided by rank 0 when the generation's self-play starts (from the share of the run's
 * budget used then) and kept in data/gen_NNNN.sizes.json, so that a resumed session
 * plays the same; every rank gets it. A collective; returns 0 or -1 with a message (an
 * unreadable split, or one of other boards than the config's). */
static int sizes_split(run_ctx *r, int gen, rd_sizes *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (r->c.selfplay.nsizes == 0)
        return 0;
    double used = run_budget_used(r, gen);
    int rc = 0;
    if (lead(r)) {
        int have = rd_sizes_read(r->dir, gen, s, err, errlen);
        if (have == 0) {
            rd_sizes_split(&r->c.selfplay, r->c.selfplay.games, used, s);
            rc = rd_sizes_write(r->dir, gen, s, err, errlen);
        } else if (have < 0) {
            rc = -1;
        } else {
            bool same = s->n == r->c.selfplay.nsizes;
            for (int i = 0; same && i < s->n; i++)
                same = s->side[i] == r->c.selfplay.sizes[i];
            if (!same || rd_sizes_small_games(s) >= r->c.selfplay.games) {
                snprintf(err, errlen, "%s/data/gen_%04d.sizes.json: a split of other boards or more "
                         "games than the config's selfplay.sizes and selfplay.games: restore it or "
                         "remove the generation's data files", r->dir, gen);
                rc = -2;
            }
        }
    }
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    comm_bcast(r->cm, s, sizeof *s, 0);
    return 0;
}

/* selfplay.simulations_end: generation gen's self-play simulations, from the share of the
 * run's budget used when its self-play starts, kept in data/gen_NNNN.simulations.json so
 * that a resumed session (and the followers) play the same; mcts.simulations without the
 * key (and no file for the rollout bootstrap, which plays bootstrap_simulations). A
 * collective; returns 0 or -1 with a message (an unreadable file). */
static int gen_simulations(run_ctx *r, int gen, int *sims, char *err, size_t errlen)
{
    *sims = r->c.mcts.simulations;
    if (r->c.selfplay.simulations_end <= 0 || rollout_gen(r, gen)) /* the bootstrap keeps its own */
        return 0;
    double used = run_budget_used(r, gen);
    int rc = 0;
    if (lead(r)) {
        int have = rd_sims_read(r->dir, gen, sims, err, errlen);
        if (have == 0) {
            *sims = rd_sp_simulations(&r->c.selfplay, r->c.mcts.simulations, used);
            rc = rd_sims_write(r->dir, gen, *sims, err, errlen);
        } else if (have < 0) {
            rc = -1;
        }
    }
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    comm_bcast(r->cm, sims, sizeof *sims, 0);
    return 0;
}

/* Self-play of generation gen: the smaller boards' games first (selfplay.sizes, in
 * increasing order), then the full board's, whose file marks the stage done. */
int run_stage_selfplay(run_ctx *r, int gen, char *err, size_t errlen)
{
    int64_t done = lead(r) && rd_selfplay_done(r->dir, gen);
    comm_bcast(r->cm, &done, sizeof done, 0);
    if (done)
        return 0;
    rd_sizes sz;
    int rc = sizes_split(r, gen, &sz, err, errlen);
    if (rc != 0)
        return rc;
    double resign = -1;
    if (lead(r) && r->c.selfplay.resign_target > 0 && r->g->players == 2)
        resign = calibrated_resign(r, gen);
    comm_bcast(r->cm, &resign, sizeof resign, 0);
    int sims;
    if ((rc = gen_simulations(r, gen, &sims, err, errlen)) != 0)
        return rc;
    for (int i = 0; i < sz.n && rc == 0; i++)
        if (sz.games[i] > 0)
            rc = selfplay_board(r, gen, sz.side[i], sz.games[i], resign, sims, err, errlen);
    if (rc == 0)
        rc = selfplay_board(r, gen, 0, r->c.selfplay.games - rd_sizes_small_games(&sz), resign, sims,
                            err, errlen);
    return rc;
}
