/* gridzero run — the generation loop (DESIGN.md §7).
 *
 * Generation i (1, 2, ...) has four stages, each finished by one file that appears
 * atomically (written to a temporary name, then renamed):
 *   selfplay  data/gen_i.h5      games of the best model against itself (generation 1
 *                                with selfplay.bootstrap = rollout: pure MCTS)
 *   train     models/gen_i.h5    the previous generation's weights trained on the samples
 *                                of the last train.window generations
 *   arena     arena/gen_i.jsonl  gen_i against the best model and every baseline (three
 *                                players: half the games gen_i alone, half twice: match())
 *   promote   best               gen_i becomes the best model when its head-to-head
 *                                score against the best reaches arena.gate (always when
 *                                the gate is 0; loop/rundir.h)
 * then arena.jsonl (every arena game so far), ratings.csv (Elo, random = 0), the plots
 * and state.json are rewritten from those files. A stage whose file exists is done, so
 * a run killed at any moment (kill -9 included) and started again with the same
 * command redoes only the unfinished stage; the outputs are deterministic given the
 * seed with one self-play thread, so the ratings are the same as without the
 * interruption. The decision of each promote stage is recomputed from the arena files,
 * so `best` never disagrees with them.
 *
 * One-player scored games (2048) have no opponent (run_solo.h): the arena stage plays
 * the candidate alone on the same numbered games every generation (generation 1 adds
 * generation 0 and the baselines), promotion compares mean scores, and ratings.csv is
 * the score table; the rollout bootstrap exports its search trees (seed 003). With
 * --from MODEL, generation 0 is MODEL's weights carried to this board (the curriculum:
 * a 3x3 model starting a 4x4 run) and generation 1's games come from it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "run_solo.h"
#include "engine/arena.h"
#include "engine/elo.h"
#include "loop/comm.h"
#include "loop/dist.h"
#include "loop/rundir.h"
#include "loop/rundata.h"
#include "nn/checkpoint.h"
#include "nn/infer.h"
#include "nn/net_eval.h"
#include "nn/params.h"
#include "nn/quant.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "selfplay/sp_eval.h"
#include "train/dataset.h"
#include "train/trainer.h"

#define PATH_LEN 1024

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    if (interrupted) /* a second Ctrl-C: every file on disk is complete or temporary */
        _exit(130);
    interrupted = 1;
}

typedef struct run_ctx {
    gz_config c;
    const char *dir;
    game *g;
    opening_book *book;     /* selfplay.openings, loaded once; NULL = none */
    FILE *metrics;      /* metrics.jsonl, appended */
    char best[PATH_LEN]; /* relative to dir: "models/gen_0003.h5" */
    int best_gen;
    int done_upto;      /* generations state.json recorded as done at the start */
    const char *crash_after; /* test hook: "GEN:STAGE" -> SIGKILL after that stage */
    cli_progress prog;
    /* --time: the run's wall-clock budget, counted over every session of the run */
    double budget;       /* seconds; 0 = none */
    double clock_before; /* seconds spent by earlier sessions (clock.json) */
    double session_t0;   /* this session's start (cli_now) */
    bool solo;           /* a one-player scored game (run_solo.h) */
    const char *from;    /* --from MODEL: generation 0's weights (NULL: random init) */
    bool gen0_from_model; /* gen_0000 was made from a model (its parent is set) */
    /* --mpi: the job's ranks (loop/comm.h; one rank without --mpi). Rank 0 leads: it
     * alone holds the lock and writes the run's shared files (metrics.jsonl, state.json,
     * ratings, arena files, checkpoints); every rank plays self-play shards, trains its
     * share of each batch and plays its share of the arena games. */
    comm *cm;
    int rank, ranks;
    /* this session's self-play over every rank (rank 0), for the summary line */
    int64_t sp_games, sp_positions, follower_games;
    double sp_seconds;
} run_ctx;

/* Whether this rank leads the job (rank 0; always without --mpi). */
static bool lead(const run_ctx *r)
{
    return r->rank == 0;
}

/* Seconds the run has spent so far, earlier sessions included. */
static double run_seconds(const run_ctx *r)
{
    return r->clock_before + (cli_now() - r->session_t0);
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero run [-c CONFIG] [--set KEY=VALUE]... [-o RUN_DIR] [--generations N]\n"
            "                    [--time DURATION] [--from MODEL] [--mpi]\n\n"
            "The generation loop: each generation plays self-play games with the best model,\n"
            "trains the next model on the last train.window generations of samples, plays it\n"
            "against the best model and the arena.baselines, promotes it (always, or at\n"
            "arena.gate score), and rates every model with Elo (random = 0).\n\n"
            "  -c, --config FILE   the config (default: the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE     override a config key\n"
            "  -o, --output DIR    the run directory (default runs/<config name>, built-in:\n"
            "                      runs/tictactoe)\n"
            "  --generations N     generations in all (default loop.generations); a finished run\n"
            "                      is continued by asking for more\n"
            "  --time DURATION     a wall-clock budget for the whole run (90s, 60m, 2h; a plain\n"
            "                      number is seconds), counted over every session of it: no stage\n"
            "                      starts once it is spent (clock.json keeps the count)\n"
            "  --from MODEL        generation 0 is MODEL's weights (a curriculum: a 3x3 2048 model\n"
            "                      starting a 4x4 run): every tensor of the same name and shape\n"
            "                      is kept, the others (a dense policy head on another board)\n"
            "                      start afresh; generation 1's games come from it (no bootstrap)\n"
            "  --mpi               one run over the ranks of an MPI job (mpirun -np K gridzero run\n"
            "                      --mpi ...; RUN_DIR on a filesystem every rank sees): self-play\n"
            "                      shards data/gen_NNNN.rS.h5, data-parallel training, the arena's\n"
            "                      games shared; restarted with any K it continues from the files\n\n"
            "One-player games (2048): every model plays arena.games numbered games alone (the\n"
            "same games every generation), promotion compares mean scores (arena.gate > 0: the\n"
            "gain must reach gate x its 95%% interval), and ratings.csv is the score table.\n\n"
            "RUN_DIR holds config.json, models/gen_NNNN.h5, data/gen_NNNN.h5, arena/gen_NNNN.jsonl,\n"
            "arena.jsonl, metrics.jsonl, ratings.csv, best, state.json, clock.json and (with\n"
            "gnuplot) elo.png, elo_time.png (against the run's clock and self-play games) and\n"
            "loss.png. Killed at any moment and started again with the same command, the run\n"
            "continues with the unfinished stage. Ctrl-C stops after the current step.\n");
}

static int path_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void join(char *out, const run_ctx *r, const char *fmt, int gen)
{
    char rel[PATH_LEN];
    snprintf(rel, sizeof rel, fmt, gen);
    snprintf(out, PATH_LEN, "%s/%s", r->dir, rel);
}

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char tmp[PATH_LEN];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create directory: %s", tmp, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create directory: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes text to path atomically (path.tmp, fsync, rename). */
static int write_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    return rd_write_atomic(path, text, err, errlen);
}

/* Appends one event to metrics.jsonl (takes ownership of obj). */
static void metric(run_ctx *r, cJSON *obj)
{
    cJSON_AddNumberToObject(obj, "run_seconds", run_seconds(r));
    char *s = cJSON_PrintUnformatted(obj);
    if (s && r->metrics) {
        /* One write() of the whole line (the file is opened for appending), so a kill
         * lands before or after an event, not inside it. */
        size_t n = strlen(s);
        char *line = realloc(s, n + 2);
        if (line) {
            s = line;
            s[n] = '\n';
            if (write(fileno(r->metrics), s, n + 1) != (ssize_t)(n + 1))
                fprintf(stderr, "run: metrics.jsonl: write failed: %s\n", strerror(errno));
        }
    }
    free(s);
    cJSON_Delete(obj);
}

static cJSON *event(const char *name, int gen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "event", name);
    cJSON_AddNumberToObject(o, "generation", gen);
    return o;
}

/* The test hook GZ_RUN_CRASH_AFTER=GEN:STAGE[@RANK]: SIGKILL after that stage (the rank
 * given, or rank 0). */
static void maybe_crash(const run_ctx *r, int gen, const char *stage)
{
    if (!r->crash_after)
        return;
    const char *at = strchr(r->crash_after, '@');
    if ((at ? atoi(at + 1) : 0) != r->rank)
        return;
    char want[64];
    snprintf(want, sizeof want, "%d:%s", gen, stage);
    size_t n = at ? (size_t)(at - r->crash_after) : strlen(r->crash_after);
    if (n == strlen(want) && !strncmp(r->crash_after, want, n)) {
        fprintf(stderr, "run: test hook: killed after %s\n", want);
        fflush(NULL);
        raise(SIGKILL);
    }
}

/* Removes stale temporary files a killed run may have left in dir. */
static void remove_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strstr(de->d_name, ".tmp")) {
            char p[PATH_LEN];
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

/* ---- stage 1: self-play ---- */

typedef struct sp_prog {
    run_ctx *r;
    int gen;
    int kept; /* games of the generation in parts from an earlier session */
} sp_prog;

static void sp_progress(void *ctx, const sp_stats *st, int total)
{
    sp_prog *x = ctx;
    /* test hook: a rank killed in the middle of its self-play */
    maybe_crash(x->r, x->gen, "selfplay-game");
    char at[48];
    snprintf(at, sizeof at, "selfplay-game%d", x->kept + st->games);
    maybe_crash(x->r, x->gen, at);
    if (!lead(x->r))
        return;
    if (st->games == total || !cli_progress_due(&x->r->prog, 0)) /* the stage sums up */
        return;
    double dt = cli_now() - x->r->prog.start;
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
    cJSON *m = event("selfplay", gen);
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
    a->resign_false += b->resign_false, a->simulations += b->simulations;
    a->evaluated += b->evaluated, a->cache_hits += b->cache_hits;
    a->policy_targets += b->policy_targets, a->seconds += b->seconds;
    a->score_sum += b->score_sum;
    a->best_tile = b->best_tile > a->best_tile ? b->best_tile : a->best_tile;
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
        o->search.simulations = r->c.selfplay.bootstrap_simulations;
        mcts_params_pure(&o->search);
        o->pure = true;
        o->full_fraction = 1; /* the bootstrap's rollouts are the data: every move in full */
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
    cli_progress_init(&r->prog, 10.0);
    o->progress = sp_progress;
    o->progress_ctx = &pp;
    o->stop = (const volatile int *)&interrupted;
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
        if (!path_exists(pp))
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
static int stage_selfplay(run_ctx *r, int gen, char *err, size_t errlen)
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
    double t0 = cli_now();
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
    double wall = cli_now() - t0;
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
            metric(r, m);
        }
        if (r->ranks > 1) {
            cJSON *m = event("selfplay_total", gen);
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
            metric(r, m);
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

/* ---- stage 2: training ---- */

static void add_losses(cJSON *o, const char *prefix, const train_losses *l)
{
    char k[64];
    snprintf(k, sizeof k, "%spolicy", prefix);
    cJSON_AddNumberToObject(o, k, l->policy);
    snprintf(k, sizeof k, "%svalue", prefix);
    cJSON_AddNumberToObject(o, k, l->value);
    snprintf(k, sizeof k, "%sl2", prefix);
    cJSON_AddNumberToObject(o, k, l->l2);
    snprintf(k, sizeof k, "%stotal", prefix);
    cJSON_AddNumberToObject(o, k, l->total);
    snprintf(k, sizeof k, "%sentropy", prefix);
    cJSON_AddNumberToObject(o, k, l->entropy);
    snprintf(k, sizeof k, "%svalue_acc", prefix);
    cJSON_AddNumberToObject(o, k, l->value_acc);
    if (l->aux != 0) { /* a net with the opponent-reply head */
        snprintf(k, sizeof k, "%saux", prefix);
        cJSON_AddNumberToObject(o, k, l->aux);
    }
    if (l->owner != 0) { /* a net with the ownership head */
        snprintf(k, sizeof k, "%sowner", prefix);
        cJSON_AddNumberToObject(o, k, l->owner);
    }
    if (l->action_value != 0) { /* a net with the action-value head */
        snprintf(k, sizeof k, "%saction_value", prefix);
        cJSON_AddNumberToObject(o, k, l->action_value);
    }
}

/* The training window's sample files, as rank 0 lists them for every rank: one line
 * per file, "GEN FOLLOWER PATH" (FOLLOWER 1 for a --follow worker's file). Returns a
 * malloc'd text, or NULL with a message. */
static char *window_files(run_ctx *r, int first, int gen, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    text[0] = 0;
    for (int k = first; k <= gen; k++) {
        rd_files fl;
        if (rd_list(r->dir, k, &fl, err, errlen) < 0) {
            free(text);
            return NULL;
        }
        for (int i = 0; i < fl.n; i++) {
            size_t need = len + strlen(fl.path[i]) + 32;
            if (need > cap) {
                char *nt = realloc(text, cap = need * 2);
                if (!nt) {
                    free(text);
                    rd_files_free(&fl);
                    snprintf(err, errlen, "out of memory");
                    return NULL;
                }
                text = nt;
            }
            len += (size_t)snprintf(text + len, cap - len, "%d %d %s\n", k, fl.follower[i] ? 1 : 0,
                                    fl.path[i]);
        }
        rd_files_free(&fl);
    }
    return text;
}

/* A hash of the weights' bytes (FNV-1a), to check that the ranks hold the same. */
static uint64_t params_hash(const nn_params *p)
{
    const unsigned char *b = (const unsigned char *)p->data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < p->layout.count * sizeof(float); i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* train.calibrate: an int8 calibration of the new weights p (nn/quant.h) on up to 2048
 * distinct positions of the window's training split, its accuracy gates measured on up
 * to 2048 of the held-out games' positions; kept in p->calib (saved with the model, so
 * net.precision auto runs it in int8) only when both gates pass. Never fails the stage:
 * int8 is a speed-up, and a model without a calibration runs in bf16 or fp32. */
static void calibrate_model(run_ctx *r, int gen, const dataset *d, nn_params *p)
{
    const char *mode = r->c.train.calibrate;
    if (!strcmp(mode, "never"))
        return;
    free(p->calib); /* the parent's calibration, if any, belongs to other weights */
    p->calib = NULL;
    bool aut = !strcmp(mode, "auto");
    const char *skip = NULL;
    if (!nn_cpu_has_vnni())
        skip = "no VNNI on this CPU (int8 cannot run)";
    else if (aut && strcmp(r->c.net.precision, "auto") != 0)
        skip = "net.precision is not auto";
    else if (aut && !nn_int8_preferred(&p->layout.spec))
        skip = "int8 is no faster than bf16 here for this net (AMX, fewer than 64 channels)";
    if (skip && aut)
        return; /* auto: nothing to do on this machine, every generation alike */
    cJSON *m = event("calibration", gen);
    int64_t *itr = NULL, *iva = NULL, ntr = 0, nva = 0;
    float *xc = NULL, *xh = NULL;
    uint8_t *lc = NULL, *lh = NULL;
    char why[512] = "";
    double t0 = cli_now();
    if (skip) {
        snprintf(why, sizeof why, "%s", skip);
        goto out;
    }
    ntr = dataset_distinct(d, 0, &itr);
    nva = dataset_distinct(d, 1, &iva);
    if (ntr < 0 || nva < 0) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    if (ntr == 0 || nva == 0) {
        snprintf(why, sizeof why, "no held-out positions to measure the gates on "
                 "(train.validation_fraction %g)", r->c.train.validation_fraction);
        goto out;
    }
    const game *g = r->g;
    int nc = ntr < 2048 ? (int)ntr : 2048, nh = nva < 2048 ? (int)nva : 2048;
    size_t per = (size_t)g->planes * (size_t)g->rows * (size_t)g->cols;
    xc = malloc(sizeof(float) * per * (size_t)nc), xh = malloc(sizeof(float) * per * (size_t)nh);
    lc = malloc((size_t)g->actions * (size_t)nc), lh = malloc((size_t)g->actions * (size_t)nh);
    if (!xc || !xh || !lc || !lh || dataset_take(d, 0, itr, ntr, nc, xc, lc) < 0 ||
        dataset_take(d, 1, iva, nva, nh, xh, lh) < 0) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    nn_int8_gates gt;
    if (nn_int8_calibrate_gated(p, g, nc, xc, nh, xh, lh, r->c.net.threads, &gt, why,
                                sizeof why) < 0)
        goto out;
    cJSON_AddNumberToObject(m, "positions", nc);
    cJSON_AddNumberToObject(m, "heldout", gt.positions);
    cJSON_AddNumberToObject(m, "top1", gt.top1);
    cJSON_AddNumberToObject(m, "top1_strict", gt.top1_strict);
    cJSON_AddNumberToObject(m, "mean_dvalue", gt.mean_dvalue);
    cJSON_AddNumberToObject(m, "value_scale", gt.value_scale);
    cJSON_AddBoolToObject(m, "pass", gt.pass);
    fprintf(stderr, "gen %d calibrate: int8 against fp32 on %d held-out positions: top-1 %.2f%% "
            "(strict %.2f%%), mean |dvalue| %.4f: %s%s (%.1f s)\n", gen, gt.positions,
            100 * gt.top1, 100 * gt.top1_strict, gt.mean_dvalue,
            gt.pass ? "kept; net.precision auto runs the model in " : "a gate failed, not kept",
            gt.pass ? nn_precision_name(nn_precision_resolve(NN_PREC_AUTO, p)) : "",
            cli_now() - t0);
    if (!gt.pass) {
        free(p->calib);
        p->calib = NULL;
    }
out:
    cJSON_AddBoolToObject(m, "calibrated", p->calib != NULL);
    if (why[0]) {
        cJSON_AddStringToObject(m, "skipped", why);
        fprintf(stderr, "gen %d calibrate: no int8 calibration: %s\n", gen, why);
    }
    cJSON_AddNumberToObject(m, "seconds", cli_now() - t0);
    metric(r, m);
    free(itr), free(iva), free(xc), free(xh), free(lc), free(lh);
}

/* train.schedule_span budget: the schedule's length in global steps for generation gen's
 * training, extrapolated from the `done` global steps taken so far to the end of the
 * run's budget. The share of the budget used is the larger of the --time clock's and the
 * generations' (gen - 1 of loop.generations); the steps so far over that share give the
 * total, so the schedule stands where the budget stands when the stage starts. With no
 * steps yet (generation 1) this generation's `steps` stand in for them. Rank 0's clock,
 * the same on every rank. */
static int64_t budget_span_steps(run_ctx *r, int gen, int64_t done, int steps)
{
    int G = r->c.loop.generations > 0 ? r->c.loop.generations : 1;
    double used = (double)(gen - 1) / G;
    if (lead(r) && r->budget > 0) {
        double t = run_seconds(r) / r->budget;
        used = t > used ? t : used;
    }
    comm_bcast(r->cm, &used, sizeof used, 0);
    double have = done > 0 ? (double)done : (double)steps;
    double total = used > 1e-6 ? have / used : have * G;
    if (total > 1e15)
        total = 1e15;
    int64_t n = (int64_t)ceil(total);
    return n > done ? n : done + 1;
}

/* Training of generation gen. Every rank loads the same window (the files rank 0
 * lists) and the same trainer; with several ranks each computes its share of every
 * batch and the gradients are summed (train/trainer.h). Rank 0 logs, validates and
 * writes the checkpoint. */
static int stage_train(run_ctx *r, int gen, char *err, size_t errlen)
{
    char out[PATH_LEN], from[PATH_LEN], parent[PATH_LEN];
    join(out, r, "models/gen_%04d.h5", gen);
    int64_t done = lead(r) ? path_exists(out) : 0;
    comm_bcast(r->cm, &done, sizeof done, 0);
    if (done)
        return 0;
    join(from, r, "models/gen_%04d.h5", gen - 1);
    snprintf(parent, sizeof parent, "models/gen_%04d.h5", gen - 1);
    int first = gen - r->c.train.window + 1;
    if (first < 1)
        first = 1;
    int rc = 0;
    char *list = lead(r) ? window_files(r, first, gen, err, errlen) : NULL;
    if ((rc = dist_agree(r->cm, lead(r) && !list ? -1 : 0, err, errlen)) != 0)
        return rc;
    char *files = dist_bcast_text(r->cm, list ? list : "");
    free(list);
    nn_ckpt_meta pm;
    nn_params *p = nn_ckpt_load(from, r->g, &pm, err, errlen);
    dataset *d = p ? dataset_new(r->g, r->c.train.validation_fraction, err, errlen) : NULL;
    trainer *t = NULL;
    int64_t new_positions = 0, follower_positions = 0, follower_games = 0;
    int nfiles = 0, nfollower = 0, nskipped = 0;
    int steps = r->c.train.steps;
    int64_t total = 0; /* the schedule's length in steps */
    bool run_scope = !strcmp(r->c.train.schedule_scope, "run");
    if (!d) {
        nn_params_free(p);
        p = NULL;
        rc = -1;
    } else {
        dataset_set_q_ratio(d, r->c.train.q_ratio);
        for (char *line = strtok(files, "\n"); line; line = strtok(NULL, "\n")) {
            int k, fol, off = 0;
            if (sscanf(line, "%d %d %n", &k, &fol, &off) != 2 || off <= 0)
                continue;
            const char *dp = line + off;
            int64_t before = dataset_train_count(d) + dataset_val_count(d);
            int64_t games_before = dataset_games(d);
            char why[512];
            if (dataset_add_path(d, dp, why, sizeof why) < 0) {
                /* A damaged file is skipped, loudly: the run goes on with the rest. */
                nskipped++;
                if (lead(r)) {
                    fprintf(stderr, "gen %d train: skipping %s\n", gen, why);
                    cJSON *m = event("data_skipped", gen);
                    cJSON_AddStringToObject(m, "error", why);
                    metric(r, m);
                }
                continue;
            }
            int64_t added = dataset_train_count(d) + dataset_val_count(d) - before;
            nfiles++;
            if (k == gen)
                new_positions += added;
            if (fol) {
                nfollower++;
                follower_positions += added;
                if (k == gen)
                    follower_games += dataset_games(d) - games_before;
            }
        }
        if (dataset_train_count(d) == 0) {
            snprintf(err, errlen, "gen %d: no readable samples in the sample files of generations "
                     "%d..%d (data/gen_%04d*.h5..gen_%04d*.h5)", gen, first, gen, first, gen);
            rc = -1;
        }
    }
    free(files);
    /* every rank must hold the same window: the same samples in the same order */
    int64_t have = rc == 0 ? dataset_train_count(d) * 1000003 + dataset_val_count(d) : -1;
    if (rc == 0 && r->ranks > 1 && comm_min_i64(r->cm, have) != comm_max_i64(r->cm, have)) {
        snprintf(err, errlen, "the ranks read different samples from the same files (a file "
                 "damaged or unreadable on some hosts only?)");
        rc = -1;
    }
    if (rc == 0) {
        /* Steps from the data made (train.reuse: each new position is drawn about `reuse`
         * times), not a fixed count that reuses a small generation 10-18 times. */
        if (r->c.train.reuse > 0) {
            double sf = ceil(r->c.train.reuse * (double)new_positions / r->c.train.batch_size);
            steps = sf < 1 ? 1 : sf > 100000000 ? 100000000 : (int)sf;
        }
        /* schedule_scope run: one optimizer over the whole run. The momentum (or Adam's
         * moments) comes from the parent's /optim/ and the schedule reads the global step
         * (pm.step), over train.run_steps or (schedule_span budget) the run's budget.
         * generation: a fresh optimizer of `steps` steps. */
        total = !run_scope ? steps
                        : !strcmp(r->c.train.schedule_span, "budget")
                            ? budget_span_steps(r, gen, pm.step, steps)
                            : (r->c.train.run_steps > 0 ? r->c.train.run_steps : 0);
        t = trainer_new(p, &r->c.train, total, rng_derive(r->c.seed, 0x54520000ULL + (uint64_t)gen),
                        err, errlen);
        if (!t || (run_scope && trainer_continue(t, from, pm.step, err, errlen) < 0))
            rc = -1;
        train_reducer red = comm_reducer(r->cm);
        if (rc == 0 && trainer_set_reducer(t, &red, err, errlen) < 0)
            rc = -2;
    } else {
        nn_params_free(p);
    }
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0) {
        trainer_free(t);
        dataset_free(d);
        return rc;
    }
    if (lead(r)) {
        cJSON *m = event("train_data", gen);
        cJSON_AddNumberToObject(m, "files", nfiles);
        cJSON_AddNumberToObject(m, "skipped", nskipped);
        cJSON_AddNumberToObject(m, "samples", (double)(dataset_train_count(d) + dataset_val_count(d)));
        cJSON_AddNumberToObject(m, "new_positions", (double)new_positions);
        cJSON_AddNumberToObject(m, "follower_files", nfollower);
        cJSON_AddNumberToObject(m, "follower_positions", (double)follower_positions);
        cJSON_AddNumberToObject(m, "follower_games", (double)follower_games);
        cJSON_AddNumberToObject(m, "steps", steps);
        cJSON_AddNumberToObject(m, "schedule_steps", (double)total);
        cJSON_AddNumberToObject(m, "ranks", r->ranks);
        metric(r, m);
        r->follower_games += follower_games;
    }
    cli_progress_init(&r->prog, 10.0);
    train_losses acc = {0}, l;
    int nacc = 0;
    int64_t calls0;
    double lr = 0, t0 = cli_now(), tlog = t0, red0 = comm_sum_seconds(r->cm, &calls0);
    for (int s = 1; s <= steps; s++) {
        if (interrupted) {
            snprintf(err, errlen, "interrupted");
            rc = 1;
            break;
        }
        if (trainer_step(t, d, &l, &lr, err, errlen) < 0) {
            rc = -1;
            break;
        }
        acc.policy += l.policy, acc.value += l.value, acc.l2 += l.l2, acc.total += l.total;
        acc.entropy += l.entropy, acc.value_acc += l.value_acc, acc.aux += l.aux;
        acc.owner += l.owner, acc.action_value += l.action_value;
        nacc++;
        if ((s % r->c.train.log_every == 0 || s == steps) && lead(r)) {
            double now = cli_now();
            train_losses mean = {acc.policy / nacc, acc.value / nacc, acc.l2 / nacc,
                                 acc.total / nacc, acc.entropy / nacc, acc.value_acc / nacc,
                                 acc.aux / nacc, acc.owner / nacc, acc.action_value / nacc};
            cJSON *m = event("train", gen);
            cJSON_AddNumberToObject(m, "step", s);
            cJSON_AddNumberToObject(m, "lr", lr);
            add_losses(m, "", &mean);
            cJSON_AddNumberToObject(m, "samples_per_s",
                                    nacc * r->c.train.batch_size / (now - tlog + 1e-9));
            if (r->ranks > 1) {
                /* the communication's share: the sums of gradients, BN statistics, losses */
                int64_t calls;
                double red = comm_sum_seconds(r->cm, &calls);
                cJSON_AddNumberToObject(m, "ranks", r->ranks);
                cJSON_AddNumberToObject(m, "allreduce_ms_per_step", 1000 * (red - red0) / nacc);
                cJSON_AddNumberToObject(m, "allreduce_calls_per_step", (double)(calls - calls0) / nacc);
                red0 = red, calls0 = calls;
            }
            metric(r, m);
            if (s < steps && cli_progress_due(&r->prog, 0))
                fprintf(stderr, "gen %d train: step %d/%d  loss %.3f (policy %.3f value %.3f)  "
                        "%.0f samples/s%s", gen, s, steps, mean.total, mean.policy, mean.value,
                        nacc * r->c.train.batch_size / (now - tlog + 1e-9), r->prog.tty ? "   " : "\n");
            tlog = now;
        }
        if (s % r->c.train.log_every == 0 || s == steps) {
            memset(&acc, 0, sizeof acc);
            nacc = 0;
        }
    }
    /* every rank took the same steps: a NaN stops all of them at the same step */
    if (rc == 0 && r->ranks > 1) {
        uint64_t *h = calloc((size_t)r->ranks, sizeof *h);
        if (!h)
            comm_abort(r->cm, 1);
        comm_allgather_u64(r->cm, params_hash(trainer_params(t)), h);
        int same = 1;
        for (int k = 1; k < r->ranks; k++)
            same &= h[k] == h[0];
        free(h);
        if (!same) {
            /* the sums gave different roundings on some ranks: rank 0's weights win */
            if (lead(r))
                fprintf(stderr, "gen %d train: the ranks' weights drifted apart by rounding; "
                        "using rank 0's\n", gen);
            nn_params *tp = trainer_params(t);
            comm_bcast(r->cm, tp->data, sizeof(float) * tp->layout.count, 0);
        }
    }
    if (rc == 0 && lead(r)) {
        train_losses v;
        cJSON *m = event("validation", gen);
        if (trainer_validate(t, d, 4096, &v) > 0) {
            add_losses(m, "", &v);
            metric(r, m);
        } else {
            cJSON_Delete(m);
        }
        calibrate_model(r, gen, d, trainer_params(t));
        nn_ckpt_meta meta = {.generation = gen, .step = pm.step + steps};
        snprintf(meta.parent, sizeof meta.parent, "%s", parent);
        rc = trainer_save(t, out, &meta, err, errlen);
        if (r->prog.tty)
            fputc('\n', stderr);
        if (rc == 0)
            fprintf(stderr, "gen %d train: %d steps in %.1f s%s, saved models/gen_%04d.h5\n", gen,
                    steps, cli_now() - t0, r->ranks > 1 ? " (data-parallel)" : "", gen);
    }
    trainer_free(t);
    dataset_free(d);
    /* the others sleep while rank 0 validates and writes */
    comm_wait_all(r->cm);
    return dist_agree(r->cm, rc, err, errlen);
}

/* ---- stage 3: arena ---- */

typedef struct arena_prog {
    run_ctx *r;
    int gen;
    const char *opp;
} arena_prog;

static void arena_progress(void *ctx, int done, int total, const arena_tally *t, int np)
{
    (void)np;
    arena_prog *x = ctx;
    if (!lead(x->r) || done == total || !cli_progress_due(&x->r->prog, 0)) /* the stage sums up */
        return;
    if (x->r->solo) {
        fprintf(stderr, "gen %d arena %s: %d/%d games, mean score %.0f%s", x->gen, x->opp, done, total,
                t[0].games ? t[0].score_sum / t[0].games : 0.0, x->r->prog.tty ? "   " : "\n");
        return;
    }
    fprintf(stderr, "gen %d arena vs %s: %d/%d games, %d-%d-%d%s", x->gen, x->opp, done, total,
            t[0].wins, t[0].draws, t[0].losses, x->r->prog.tty ? "   " : "\n");
}

/* Makes a player and names it `name` (Elo tables use the names). */
static player *make_player(run_ctx *r, const char *spec, const char *name, char *err, size_t errlen)
{
    player *p = player_new(spec, r->g, &r->c, cli_player_ext(), err, errlen);
    if (p && name)
        snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* The run's model rel (relative to the run directory) as a player named name, searching
 * arena.simulations per move. Made here rather than through a "model:PATH" spec, which
 * would hold the whole run directory path and outgrow PLAYER_NAME_LEN in a deep one. */
static player *make_model_player(run_ctx *r, const char *rel, const char *name, char *err,
                                 size_t errlen)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s", r->dir, rel);
    evaluator *e = net_eval_load(r->g, &r->c, path, err, errlen);
    if (!e)
        return NULL;
    uint64_t seed = rng_derive(r->c.seed, 0x706c6179 ^ (uint64_t)strlen(name));
    return player_mcts_new(r->g, &r->c, e, r->c.arena.simulations, seed, name, "model", err, errlen);
}

/* With several ranks, after a match in which each rank wrote its share of the games to
 * its own file `mine` (RESULTS.rR): rank 0 appends every rank's games to `results` in
 * game order, the n tallies are summed on every rank, and `mine` is removed. rc is this
 * rank's status so far; returns the status all ranks agree on. */
static int gather_games(run_ctx *r, int rc, const char *mine, const char *results,
                        arena_tally *tally, int n, char *err, size_t errlen)
{
    comm_wait_all(r->cm);
    if ((rc = dist_agree(r->cm, rc, err, errlen)) == 0) {
        char *text = rundir_read_text(mine, NULL);
        char *merged = dist_merge_games(r->cm, text ? text : "", err, errlen);
        free(text);
        if (lead(r)) {
            FILE *f = merged ? fopen(results, "ab") : NULL;
            size_t len = merged ? strlen(merged) : 0;
            if (!merged)
                rc = -1;
            else if (!f || fwrite(merged, 1, len, f) != len || fflush(f) != 0)
                snprintf(err, errlen, "%s: cannot append: %s", results, strerror(errno)), rc = -1;
            if (f && fclose(f) != 0 && rc == 0)
                snprintf(err, errlen, "%s: cannot append: %s", results, strerror(errno)), rc = -1;
        }
        free(merged);
        dist_sum_tallies(r->cm, tally, n);
        rc = dist_agree(r->cm, rc, err, errlen);
    }
    unlink(mine);
    return rc;
}

/* One arena_run of ps[] (g->players of them, seats rotated) on `games` games from seed
 * into results. With several ranks each plays its share of the games (arena.h: game i
 * goes to rank i % ranks) into its own results file RESULTS.rR; rank 0 then appends
 * every rank's games to `results` in game order and the tallies are summed on every
 * rank. */
static int play_games(run_ctx *r, int gen, player *const *ps, int games, uint64_t seed,
                      const char *opp_name, const char *results, arena_tally *tally, char *err,
                      size_t errlen)
{
    arena_opts o = {0};
    o.games = games;
    o.opening_moves = r->c.arena.opening_moves;
    o.seed = seed;
    char mine[PATH_LEN + 16];
    snprintf(mine, sizeof mine, "%s.r%d", results, r->rank);
    o.results_path = results;
    if (r->ranks > 1) {
        o.shards = r->ranks;
        o.shard = r->rank;
        o.results_path = mine;
        unlink(mine);
    }
    arena_prog ap = {r, gen, opp_name};
    cli_progress_init(&r->prog, 10.0);
    o.progress = arena_progress;
    o.progress_ctx = &ap;
    int rc = arena_run(r->g, ps, r->g->players, &o, tally, err, errlen);
    if (r->prog.tty && lead(r))
        fputc('\n', stderr);
    if (r->ranks > 1)
        rc = gather_games(r, rc, mine, results, tally, r->g->players, err, errlen);
    return rc;
}

/* A match's result for the candidate: two players, its games' wins, draws and losses;
 * three players, its head-to-head pairs against the opponent (each game counts every
 * pair of a candidate seat and an opponent seat: above, level or below). */
typedef struct match_result {
    int games, wins, draws, losses;
} match_result;

static double match_score(const match_result *m)
{
    int n = m->wins + m->draws + m->losses;
    return n ? (m->wins + 0.5 * m->draws) / n : 0;
}

/* One match of the candidate against opp: opp_model (relative to the run directory)
 * when not NULL, else the player opp_spec. Two players: arena.games games, colours
 * alternating. Three players: the seats are balanced between the two sides, since two
 * copies of one model play like a team against the third player (README, the seventh
 * strength round): half the games are {cand, opp, opp} and half {cand, cand2, opp}
 * (cand2 a second instance of the candidate), on the same openings; the result counts
 * head-to-head pairs. The games' seed comes from the generation and the opponent's name
 * (its length: the seeds of earlier runs' matches stay as they were), xor salt: the
 * lookback match takes one of its own, since every gen_NNNN name has the best model's
 * length and its games would otherwise be the best match's. */
static int match(run_ctx *r, int gen, player *cand, player *cand2, const char *opp_model,
                 const char *opp_spec, const char *opp_name, uint64_t salt, const char *results,
                 match_result *res, char *err, size_t errlen)
{
    player *ps[GAME_MAX_PLAYERS] = {cand, NULL, NULL};
    int np = r->g->players, rc = 0;
    for (int k = 1; k < np && rc == 0; k++) {
        ps[k] = opp_model ? make_model_player(r, opp_model, opp_name, err, errlen)
                          : make_player(r, opp_spec, opp_name, err, errlen);
        if (!ps[k])
            rc = -1;
    }
    memset(res, 0, sizeof *res);
    uint64_t seed = rng_derive(r->c.seed, 0x41520000ULL + (uint64_t)gen * 64 + strlen(opp_name)) ^
                    salt;
    int games = r->c.arena.games;
    if (rc == 0 && np == 2) {
        arena_tally t[GAME_MAX_PLAYERS];
        rc = play_games(r, gen, ps, games, seed, opp_name, results, t, err, errlen);
        *res = (match_result){t[0].games, t[0].wins, t[0].draws, t[0].losses};
    } else if (rc == 0) {
        /* {cand, opp, opp} on the first (games + 1) / 2, {cand, cand2, opp} on the rest */
        int half[2] = {(games + 1) / 2, games / 2};
        for (int part = 0; part < 2 && rc == 0; part++) {
            if (half[part] == 0)
                continue;
            player *seats[GAME_MAX_PLAYERS] = {cand, part ? cand2 : ps[1], part ? ps[1] : ps[2]};
            arena_tally t[GAME_MAX_PLAYERS];
            rc = play_games(r, gen, seats, half[part], seed, opp_name, results, t, err, errlen);
            if (rc != 0)
                break;
            res->games += t[0].games;
            /* the candidate's seats against the opponent's */
            for (int i = 0; i < np; i++)
                for (int j = 0; j < np; j++) {
                    bool ci = i == 0 || (part && i == 1), cj = j == 0 || (part && j == 1);
                    if (!ci || cj)
                        continue;
                    res->wins += t[i].above[j];
                    res->draws += t[i].level[j];
                    res->losses += t[i].games - t[i].above[j] - t[i].level[j];
                }
        }
    } else if (r->ranks > 1) {
        /* a player that cannot be made fails on every rank, but agree anyway */
        comm_wait_all(r->cm);
        rc = dist_agree(r->cm, rc, err, errlen);
    }
    for (int k = 1; k < np; k++)
        player_free(ps[k]);
    return rc;
}

/* One player of a one-player arena: `games` numbered games on the run's fixed seeds,
 * appended to results (tmp; by rank 0, with every rank's share of the games). */
static int solo_games(run_ctx *r, int gen, player *p, const char *results, arena_solo_summary *sum,
                      char *err, size_t errlen)
{
    /* the same seed every generation: every model plays the same numbered games */
    arena_tally t;
    int rc = play_games(r, gen, &p, r->c.arena.games, rng_derive(r->c.seed, 0x534f4c4fULL),
                        p->name, results, &t, err, errlen);
    if (rc != 0)
        return rc;
    /* the scores just written are read back by the caller's table */
    sum->games = t.games;
    sum->mean = t.games ? t.score_sum / t.games : 0;
    return 0;
}

/* The arena stage of a one-player game: the candidate's games; in generation 1 also
 * generation 0's and the baselines' (their scores do not change: once is enough). */
static int stage_arena_solo(run_ctx *r, int gen, const char *tmp, player *cand, cJSON *m,
                            char *err, size_t errlen)
{
    int rc = 0;
    player *others[CFG_LIST_MAX + 1];
    int no = 0;
    if (gen == 1) {
        others[no] = make_model_player(r, "models/gen_0000.h5", "gen_0000", err, errlen);
        if (!others[no])
            rc = -1;
        else
            no++;
        for (int b = 0; b < r->c.arena.nbaselines && rc == 0; b++) {
            others[no] = make_player(r, r->c.arena.baselines[b], r->c.arena.baselines[b], err, errlen);
            if (!others[no])
                rc = -1;
            else
                no++;
        }
    }
    rc = dist_agree(r->cm, rc, err, errlen); /* every rank plays, or none */
    arena_solo_summary sum;
    if (rc == 0)
        rc = solo_games(r, gen, cand, tmp, &sum, err, errlen);
    for (int k = 0; k < no && rc == 0; k++) {
        rc = solo_games(r, gen, others[k], tmp, &sum, err, errlen);
        if (interrupted && rc == 0) {
            snprintf(err, errlen, "interrupted");
            rc = 1;
        }
    }
    for (int k = 0; k < no; k++)
        player_free(others[k]);
    if (rc != 0 || !lead(r)) /* the table: rank 0's, from the gathered games */
        return rc;
    solo_table t = {0};
    if (solo_table_add_file(&t, tmp) < 0) {
        solo_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < t.n; i++) {
        arena_solo_summary s;
        solo_row_summary(&t.rows[i], &s);
        cJSON *o = cJSON_AddObjectToObject(m, t.rows[i].name);
        cJSON_AddNumberToObject(o, "games", s.games);
        cJSON_AddNumberToObject(o, "mean", s.mean);
        cJSON_AddNumberToObject(o, "lo", s.lo);
        cJSON_AddNumberToObject(o, "hi", s.hi);
        cJSON_AddNumberToObject(o, "median", s.median);
        if (s.best_tile >= 0 && s.best_tile < 53)
            cJSON_AddNumberToObject(o, "max_tile", (double)(1ull << s.best_tile));
        fprintf(stderr, "gen %d arena: %s mean score %.0f [%.0f, %.0f], median %.0f", gen,
                t.rows[i].name, s.mean, s.lo, s.hi, s.median);
        if (s.best_tile >= 0 && s.best_tile < 53)
            fprintf(stderr, ", largest tile %llu (%.0f%% of games)", 1ull << s.best_tile,
                    100 * s.reached[s.best_tile]);
        fputc('\n', stderr);
    }
    solo_table_free(&t);
    return 0;
}

static int stage_arena(run_ctx *r, int gen, char *err, size_t errlen)
{
    char out[PATH_LEN], tmp[PATH_LEN + 8], name[32], rel[64];
    join(out, r, "arena/gen_%04d.jsonl", gen);
    int64_t done = lead(r) ? path_exists(out) : 0;
    comm_bcast(r->cm, &done, sizeof done, 0);
    if (done)
        return 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    if (lead(r))
        unlink(tmp); /* a killed arena's partial games are played again */
    snprintf(rel, sizeof rel, "models/gen_%04d.h5", gen);
    snprintf(name, sizeof name, "gen_%04d", gen);
    player *cand = make_model_player(r, rel, name, err, errlen), *cand2 = NULL;
    if (cand && !r->solo && r->g->players == 3) /* the candidate's second seat: match() */
        cand2 = make_model_player(r, rel, name, err, errlen);
    int rc = dist_agree(r->cm, cand && (r->solo || r->g->players < 3 || cand2) ? 0 : -1, err,
                        errlen);
    if (rc != 0) {
        player_free(cand);
        player_free(cand2);
        return rc;
    }
    cJSON *m = event("arena", gen);
    if (r->solo && r->c.arena.games > 0) {
        rc = stage_arena_solo(r, gen, tmp, cand, m, err, errlen);
    } else if (r->c.arena.games > 0) {
        /* against the best model, the one arena.lookback generations older, then every
         * baseline (b = -2, -1, 0...) */
        char bname[32], lname[32], lrel[64];
        snprintf(bname, sizeof bname, "gen_%04d", r->best_gen);
        int back = gen - r->c.arena.lookback;
        snprintf(lname, sizeof lname, "gen_%04d", back);
        snprintf(lrel, sizeof lrel, "models/gen_%04d.h5", back);
        bool lookback = r->c.arena.lookback > 0 && back >= 0 && back != r->best_gen;
        const char *pairs = r->g->players > 2 ? " head to head" : "";
        for (int b = -2; rc == 0 && b < r->c.arena.nbaselines; b++) {
            if (b == -1 && !lookback)
                continue;
            const char *opp = b == -2 ? bname : b == -1 ? lname : r->c.arena.baselines[b];
            const char *model = b == -2 ? r->best : b == -1 ? lrel : NULL;
            match_result x;
            /* the lookback's games differ from the best match's (same name length) */
            uint64_t salt = b == -1 ? rng_derive(0x4c4f4f4bULL, (uint64_t)back) : 0;
            rc = match(r, gen, cand, cand2, model, opp, opp, salt, tmp, &x, err, errlen);
            if (rc == 0) {
                cJSON *o = cJSON_AddObjectToObject(m, opp);
                cJSON_AddNumberToObject(o, "games", x.games);
                cJSON_AddNumberToObject(o, "wins", x.wins);
                cJSON_AddNumberToObject(o, "draws", x.draws);
                cJSON_AddNumberToObject(o, "losses", x.losses);
                cJSON_AddNumberToObject(o, "score", match_score(&x));
                if (lead(r))
                    fprintf(stderr, "gen %d arena: vs %s%s %d-%d-%d%s\n", gen, opp,
                            b == -2 ? " (best)" : "", x.wins, x.draws, x.losses, pairs);
            }
            if (interrupted && rc == 0) {
                snprintf(err, errlen, "interrupted");
                rc = 1;
            }
        }
    }
    player_free(cand2);
    player_free(cand);
    if (rc == 0 && lead(r)) {
        if (!path_exists(tmp)) { /* no games: an empty file still marks the stage done */
            FILE *f = fopen(tmp, "wb");
            if (f)
                fclose(f);
        }
        if (rename(tmp, out) < 0) {
            snprintf(err, errlen, "%s: cannot rename: %s", tmp, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0) {
        if (r->ranks > 1)
            cJSON_AddNumberToObject(m, "ranks", r->ranks);
        metric(r, m);
    } else {
        cJSON_Delete(m);
        if (lead(r))
            unlink(tmp); /* interrupted or failed: its games are played again next time */
    }
    return dist_agree(r->cm, rc, err, errlen);
}

/* One-player games: the scores of gen_k's own games (gen_0000's are in generation 1's
 * file). */
static void solo_scores_of(const run_ctx *r, int k, arena_solo_summary *s)
{
    char path[PATH_LEN], name[32];
    join(path, r, "arena/gen_%04d.jsonl", k > 0 ? k : 1);
    snprintf(name, sizeof name, "gen_%04d", k);
    solo_table t = {0};
    memset(s, 0, sizeof *s);
    if (solo_table_add_file(&t, path) == 0) {
        const struct solo_row *row = solo_table_find(&t, name);
        if (row)
            solo_row_summary(row, s);
    }
    solo_table_free(&t);
}

/* Replays the promotions of generations 1..upto from the arena files into r->best. */
static void replay_promotions(run_ctx *r, int upto, bool log)
{
    r->best_gen = 0;
    snprintf(r->best, sizeof r->best, "models/gen_0000.h5");
    for (int k = 1; k <= upto && r->solo; k++) {
        /* mean scores on the same numbered games; the gate asks the difference to be
         * gate x its 95% interval's half-width (run_solo.h) */
        arena_solo_summary cs, bs;
        solo_scores_of(r, k, &cs);
        solo_scores_of(r, r->best_gen, &bs);
        double diff, half;
        bool promote = solo_promote(&cs, &bs, r->c.arena.gate, &diff, &half);
        if (log && k == upto) {
            cJSON *m = event("promote", k);
            cJSON_AddNumberToObject(m, "mean", cs.mean);
            cJSON_AddNumberToObject(m, "best_mean", bs.mean);
            cJSON_AddNumberToObject(m, "difference", diff);
            cJSON_AddNumberToObject(m, "difference_95", half);
            cJSON_AddNumberToObject(m, "games", cs.games);
            cJSON_AddBoolToObject(m, "promoted", promote);
            metric(r, m);
        }
        if (promote) {
            r->best_gen = k;
            snprintf(r->best, sizeof r->best, "models/gen_%04d.h5", k);
        }
    }
    for (int k = 1; k <= upto && !r->solo; k++) {
        double score = 0;
        int n = 0;
        bool promote = rundir_promotes(r->dir, r->c.arena.gate, k, r->best_gen, &score, &n);
        if (log && k == upto) {
            cJSON *m = event("promote", k);
            cJSON_AddNumberToObject(m, "score_vs_best", score);
            cJSON_AddNumberToObject(m, "games_vs_best", n);
            cJSON_AddBoolToObject(m, "promoted", promote);
            metric(r, m);
        }
        if (promote) {
            r->best_gen = k;
            snprintf(r->best, sizeof r->best, "models/gen_%04d.h5", k);
        }
    }
}

/* ---- after each generation: arena.jsonl, ratings, plots, state ---- */

static int write_ladder(run_ctx *r, int upto, char *err, size_t errlen)
{
    size_t cap = 1 << 16, len = 0;
    char *all = malloc(cap);
    if (!all) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    all[0] = 0;
    for (int k = 1; k <= upto; k++) {
        char p[PATH_LEN];
        join(p, r, "arena/gen_%04d.jsonl", k);
        char *t = rundir_read_text(p, NULL);
        if (!t)
            continue;
        size_t n = strlen(t);
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap)
                cap *= 2;
            char *na = realloc(all, cap);
            if (!na) {
                free(t);
                free(all);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            all = na;
        }
        memcpy(all + len, t, n + 1);
        len += n;
        free(t);
    }
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/arena.jsonl", r->dir);
    int rc = write_atomic(path, all, err, errlen);
    if (rc < 0 || r->solo) {
        /* one-player: the score table instead of Elo */
        solo_table st = {0};
        char *csv = NULL;
        cJSON *m = rc < 0 ? NULL : event("scores", upto);
        if (rc == 0 && (solo_table_add_text(&st, all) < 0 || !(csv = solo_table_csv(&st, m)))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        free(all);
        if (rc == 0) {
            metric(r, m);
            m = NULL;
            snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
            rc = write_atomic(path, csv, err, errlen);
            char cname[32];
            snprintf(cname, sizeof cname, "gen_%04d", upto);
            const struct solo_row *row = solo_table_find(&st, cname);
            if (row) {
                arena_solo_summary s;
                solo_row_summary(row, &s);
                fprintf(stderr, "gen %d: mean score %.0f [%.0f, %.0f], median %.0f; best is gen_%04d\n",
                        upto, s.mean, s.lo, s.hi, s.median, r->best_gen);
            }
        }
        cJSON_Delete(m);
        free(csv);
        solo_table_free(&st);
        return rc < 0 ? -1 : 0;
    }
    free(all);

    elo_table *t = elo_table_new();
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (elo_load_file(t, path, err, errlen) < 0) {
        elo_table_free(t);
        return -1;
    }
    int np = elo_players(t);
    if (np < 2) {
        elo_table_free(t);
        return 0;
    }
    elo_rating *rt = calloc((size_t)np, sizeof *rt);
    elo_opts eo = elo_default_opts();
    if (!rt || elo_compute(t, &eo, rt, err, errlen) < 0) {
        free(rt);
        elo_table_free(t);
        return -1;
    }
    size_t cl = 128 + (size_t)np * 160;
    char *csv = malloc(cl);
    size_t off = (size_t)snprintf(csv, cl, "name,elo,lo,hi,games,score\n");
    cJSON *m = event("elo", upto);
    cJSON *arr = cJSON_AddArrayToObject(m, "ratings");
    for (int i = 0; i < np; i++) {
        off += (size_t)snprintf(csv + off, cl - off, "%s,%.1f,%.1f,%.1f,%d,%.4f\n", rt[i].name,
                                rt[i].elo, rt[i].lo, rt[i].hi, rt[i].games, rt[i].score);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", rt[i].name);
        cJSON_AddNumberToObject(o, "elo", round(rt[i].elo * 10) / 10);
        cJSON_AddNumberToObject(o, "lo", round(rt[i].lo * 10) / 10);
        cJSON_AddNumberToObject(o, "hi", round(rt[i].hi * 10) / 10);
        cJSON_AddItemToArray(arr, o);
    }
    metric(r, m);
    snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
    rc = write_atomic(path, csv, err, errlen);
    /* the summary: this generation's rating */
    char cname[32];
    snprintf(cname, sizeof cname, "gen_%04d", upto);
    for (int i = 0; i < np; i++)
        if (!strcmp(rt[i].name, cname))
            fprintf(stderr, "gen %d: Elo %.0f [%.0f, %.0f] (random = 0); best is gen_%04d\n", upto,
                    rt[i].elo, rt[i].lo, rt[i].hi, r->best_gen);
    free(csv);
    free(rt);
    elo_table_free(t);
    return rc;
}

/* Plots with gnuplot when it is installed: elo.png from ratings.csv, elo_time.png (the
 * same ratings against the run's clock and the self-play games so far), loss.png from
 * the train events of metrics.jsonl. */
static void write_plots(run_ctx *r)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        static int said;
        if (!said++)
            fprintf(stderr, "run: gnuplot is not installed: skipping elo.png and loss.png\n");
        return;
    }
    char path[PATH_LEN], tsv[PATH_LEN], err[256];
    snprintf(path, sizeof path, "%s/metrics.jsonl", r->dir);
    char *text = rundir_read_text(path, NULL);
    if (!text)
        return;
    size_t cap = strlen(text) + 64, off = 0;
    char *rows = malloc(cap);
    /* per generation (the last event of each, as a resumed stage logs again): the
     * steps it trained, the run's clock when it was rated, its self-play games */
    int G = r->c.loop.generations;
    double *steps_of = calloc((size_t)G + 2, sizeof(double));
    double *time_of = calloc((size_t)G + 2, sizeof(double));
    double *games_of = calloc((size_t)G + 2, sizeof(double));
    if (!rows || !steps_of || !time_of || !games_of) {
        free(text), free(rows), free(steps_of), free(time_of), free(games_of);
        return;
    }
    rows[0] = 0;
    char *copy = strdup(text);
    for (char *line = copy ? strtok(copy, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        int gen = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
        if (cJSON_IsString(ev) && gen >= 1 && gen <= G) {
            if (!strcmp(ev->valuestring, "train")) {
                double st = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "step"));
                steps_of[gen] = st > steps_of[gen] ? st : steps_of[gen];
            } else if (!strcmp(ev->valuestring, "elo") || !strcmp(ev->valuestring, "scores")) {
                time_of[gen] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "run_seconds"));
            } else if (!strcmp(ev->valuestring, "selfplay") ||
                       !strcmp(ev->valuestring, "selfplay_total")) {
                /* with ranks: one selfplay event per rank, then the total (the last) */
                games_of[gen] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "games"));
            }
        }
        cJSON_Delete(o);
    }
    free(copy);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "train")) {
            double gen = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
            double step = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "step"));
            int gi = (int)gen;
            double steps = gi >= 1 && gi <= G && steps_of[gi] > 0 ? steps_of[gi] : r->c.train.steps;
            off += (size_t)snprintf(rows + off, cap - off, "%.3f %g %g %g\n",
                                    gen - 1 + step / steps,
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "policy")),
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "value")),
                                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "total")));
        }
        cJSON_Delete(o);
        if (off + 128 > cap)
            break;
    }
    free(text);
    snprintf(tsv, sizeof tsv, "%s/loss.tsv", r->dir);
    write_atomic(tsv, rows, err, sizeof err);
    free(rows);
    /* elo.tsv: the models' ratings by generation; the baselines become level lines. */
    snprintf(path, sizeof path, "%s/ratings.csv", r->dir);
    char *csv = rundir_read_text(path, NULL);
    char elo_rows[8192] = "", lines[2048] = "";
    size_t eo = 0, lo = 0;
    if (csv) {
        for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
            char name[64];
            double elo, low, high;
            if (sscanf(line, "%63[^,],%lf,%lf,%lf", name, &elo, &low, &high) != 4)
                continue;
            int gen;
            if (sscanf(name, "gen_%d", &gen) == 1) {
                if (eo < sizeof elo_rows - 80)
                    eo += (size_t)snprintf(elo_rows + eo, sizeof elo_rows - eo, "%d %.1f %.1f %.1f\n",
                                           gen, elo, low, high);
            } else if (lo < sizeof lines - 120 && !strpbrk(name, "'\"\\")) {
                lo += (size_t)snprintf(lines + lo, sizeof lines - lo, ", %.1f w l dt 2 t '%s'", elo, name);
            }
        }
        free(csv);
    }
    snprintf(tsv, sizeof tsv, "%s/elo.tsv", r->dir);
    /* sorted by generation (ratings.csv lists players in the order they were first seen) */
    char sorted[8192] = "";
    size_t so = 0;
    for (int want = 0; want <= r->c.loop.generations && so < sizeof sorted - 80; want++) {
        for (char *q = elo_rows; *q;) {
            char *nl = strchr(q, '\n');
            int gen;
            if (sscanf(q, "%d", &gen) == 1 && gen == want) {
                so += (size_t)snprintf(sorted + so, sizeof sorted - so, "%.*s\n", (int)(nl - q), q);
            }
            q = nl ? nl + 1 : q + strlen(q);
        }
    }
    write_atomic(tsv, sorted, err, sizeof err);
    /* elo_time.tsv: generation, hours of the run's clock, self-play games so far, Elo,
     * interval: the ladder against compute, not only against generations */
    char timed[12288] = "";
    size_t to = 0;
    double games = 0;
    int next = 1;
    for (char *q = sorted; *q && to < sizeof timed - 120;) {
        char *nl = strchr(q, '\n');
        int gen;
        double elo, low, high;
        if (sscanf(q, "%d %lf %lf %lf", &gen, &elo, &low, &high) == 4 && gen <= G) {
            for (; next <= gen; next++)
                games += games_of[next];
            to += (size_t)snprintf(timed + to, sizeof timed - to, "%d %.4f %.0f %.1f %.1f %.1f\n", gen,
                                   time_of[gen] / 3600.0, games, elo, low, high);
        }
        q = nl ? nl + 1 : q + strlen(q);
    }
    free(steps_of), free(time_of), free(games_of);
    snprintf(tsv, sizeof tsv, "%s/elo_time.tsv", r->dir);
    write_atomic(tsv, timed, err, sizeof err);
    if (strchr(r->dir, '\'')) {
        fprintf(stderr, "run: the run directory's name has a quote: plots skipped\n");
        return;
    }
    char cmd[4 * PATH_LEN + 8192];
    /* one-player games: the same plots of the mean scores (ratings.csv has mean, lo, hi
     * where the Elo table has elo, lo, hi) */
    const char *yl = r->solo ? "mean score" : "Elo (random = 0)";
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gnuplot -e \"set terminal png size 800,500; set output 'loss.png.tmp';"
             " set xlabel 'generation'; set ylabel 'loss'; set key top right;"
             " plot 'loss.tsv' u 1:2 w l t 'policy CE', '' u 1:3 w l t 'value MSE', '' u 1:4 w l t 'total'\""
             " >/dev/null 2>&1 && mv loss.png.tmp loss.png &&"
             " gnuplot -e \"set terminal png size 800,500; set output 'elo.png.tmp';"
             " set xlabel 'generation'; set ylabel '%s'; set key outside right;"
             " plot 'elo.tsv' u 1:2:3:4 w yerrorlines t 'models'%s\" >/dev/null 2>&1 && mv elo.png.tmp elo.png &&"
             " gnuplot -e \"set terminal png size 1000,450; set output 'elo_time.png.tmp';"
             " set multiplot layout 1,2; set ylabel '%s'; set key top left;"
             " set xlabel 'hours (run clock)'; plot 'elo_time.tsv' u 2:4:5:6 w yerrorlines t 'models'%s;"
             " set xlabel 'self-play games'; plot 'elo_time.tsv' u 3:4:5:6 w yerrorlines t 'models'%s;"
             " unset multiplot\" >/dev/null 2>&1 && mv elo_time.png.tmp elo_time.png",
             r->dir, yl, lines, yl, lines, lines);
    if (system(cmd) != 0)
        fprintf(stderr, "run: gnuplot failed; plots not updated\n");
}

/* clock.json: the seconds the run has spent, rewritten (atomically) after every stage,
 * so --time counts every session; a kill loses at most the stage in progress. */
static int write_clock(run_ctx *r, char *err, size_t errlen)
{
    char path[PATH_LEN], text[128];
    snprintf(path, sizeof path, "%s/clock.json", r->dir);
    snprintf(text, sizeof text, "{\"seconds\": %.3f}\n", run_seconds(r));
    return write_atomic(path, text, err, errlen);
}

static double read_clock(const run_ctx *r)
{
    cJSON *o = rundir_read_json(r->dir, "clock.json");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "seconds");
    double v = cJSON_IsNumber(s) && s->valuedouble >= 0 ? s->valuedouble : 0;
    cJSON_Delete(o);
    return v;
}

/* Whether the --time budget is spent (then no further stage starts). */
static bool out_of_time(const run_ctx *r)
{
    return r->budget > 0 && run_seconds(r) >= r->budget;
}

static int write_state(run_ctx *r, int gen, const char *stage, char *err, size_t errlen)
{
    char path[PATH_LEN], text[PATH_LEN + 128];
    snprintf(path, sizeof path, "%s/best", r->dir);
    snprintf(text, sizeof text, "%s\n", r->best);
    if (write_atomic(path, text, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/state.json", r->dir);
    snprintf(text, sizeof text, "{\"generation\": %d, \"stage\": \"%s\", \"best\": \"%s\"}\n", gen, stage,
             r->best);
    /* the clock after the state: a kill in between must not make a finished stage's
     * events be logged again */
    if (write_atomic(path, text, err, errlen) < 0)
        return -1;
    return write_clock(r, err, errlen);
}

/* ---- the run directory's lock ---- */

/* Takes the run directory's lock: an advisory fcntl write lock on RUN_DIR/lock, held
 * for the whole run. The kernel releases it when the process ends, however it ends
 * (kill -9 included), so a killed run never blocks its resume. Creates RUN_DIR when
 * missing; writes nothing else. Returns the lock's descriptor (close it, or exit, to
 * release), -2 with a message naming the directory and the holder's pid when another
 * process holds the lock, or -1 with a message on an I/O error. */
static int lock_run_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir_p(dir, err, errlen) < 0)
        return -1;
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open the run directory's lock file: %s", path,
                 strerror(errno));
        return -1;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &fl) == 0) {
        /* the holder's pid for people; the lock itself is what counts */
        char text[32];
        int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n)
            fprintf(stderr, "run: %s: cannot write the pid (the lock holds anyway)\n", path);
        return fd;
    }
    int e = errno;
    if (e != EACCES && e != EAGAIN) {
        snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    long pid = fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : 0;
    close(fd);
    char who[48] = "another process";
    if (pid > 0)
        snprintf(who, sizeof who, "another process (pid %ld)", pid);
    snprintf(err, errlen, "%s is in use: %s holds its lock %s; only one gridzero run may write "
             "into a run directory (wait for it to end, or stop it)", dir, who, path);
    return -2;
}

/* ---- setup ---- */

/* The config compared between runs: everything but the run length and the settings
 * that only decide how fast the same work runs on this machine. */
static char *config_identity(const gz_config *c)
{
    gz_config x = *c;
    x.loop.generations = 0;
    x.selfplay.threads = 0;
    x.net.threads = 0;
    x.net.cache = 0;
    x.net.max_batch = 0;
    x.selfplay.part_minutes = 0;
    return cfg_to_json(&x);
}

/* Returns 0; -2 with a message when the directory holds another or an unreadable config
 * (bad input); -1 with a message on an I/O error (a full or read-only disk). */
static int setup_dir(run_ctx *r, char *err, size_t errlen)
{
    char p[PATH_LEN];
    const char *subs[] = {"", "/models", "/data", "/arena"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", r->dir, subs[i]);
        if (mkdir_p(p, err, errlen) < 0)
            return -1;
        remove_temporaries(p);
    }
    snprintf(p, sizeof p, "%s/config.json", r->dir);
    char *mine = config_identity(&r->c);
    char *text = rundir_read_text(p, NULL);
    int rc = 0;
    if (text) {
        gz_config old;
        char why[512];
        if (cfg_parse(&old, text, p, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: the run's config is unreadable: %s", p, why);
            rc = -2;
        } else {
            char *theirs = config_identity(&old);
            if (strcmp(mine, theirs) != 0) {
                snprintf(err, errlen, "%s was made with a different config (only loop.generations, "
                         "selfplay.threads, selfplay.part_minutes, net.threads, net.cache and net.max_batch may change when continuing a run): use another -o RUN_DIR, or the same config",
                         r->dir);
                rc = -2;
            }
            free(theirs);
        }
        free(text);
    } else {
        char *full = cfg_to_json(&r->c);
        rc = write_atomic(p, full, err, errlen);
        free(full);
    }
    free(mine);
    if (rc < 0)
        return rc;
    /* generation 0: the random-init network everything starts from, or --from's model
     * carried to this board */
    snprintf(p, sizeof p, "%s/models/gen_0000.h5", r->dir);
    if (!path_exists(p)) {
        nn_spec spec;
        if (nn_spec_from_config(&spec, &r->c.net, r->g, err, errlen) < 0)
            return -2; /* the config's net does not fit its game */
        nn_params *params = NULL;
        nn_ckpt_meta meta = {0};
        if (r->from) {
            char why[512], report[512];
            nn_params *src = nn_ckpt_load(r->from, NULL, NULL, why, sizeof why);
            if (!src) {
                snprintf(err, errlen, "--from: %s", why);
                return -2;
            }
            params = nn_params_adapt(src, &spec, rng_derive(r->c.seed, 0x47454e30ULL), report,
                                     sizeof report, why, sizeof why);
            nn_params_free(src);
            if (!params) {
                snprintf(err, errlen, "--from %s: %s", r->from, why);
                return -2;
            }
            fprintf(stderr, "run: generation 0 is %s on this %dx%d board: %s\n", r->from, r->g->rows,
                    r->g->cols, report);
            snprintf(meta.parent, sizeof meta.parent, "%s", r->from);
        } else {
            params = nn_params_new(&spec, err, errlen);
            if (!params)
                return -1;
            nn_params_init_he(params, rng_derive(r->c.seed, 0x47454e30ULL));
        }
        rc = nn_ckpt_save(p, params, &meta, NULL, 0, err, errlen);
        nn_params_free(params);
        if (rc < 0)
            return -1;
    } else if (r->from) {
        fprintf(stderr, "run: --from %s ignored: %s already has its generation 0\n", r->from, r->dir);
    }
    /* a generation 0 made from a model plays generation 1's games itself (no bootstrap) */
    nn_ckpt_meta m0;
    nn_params *p0 = nn_ckpt_load(p, r->g, &m0, err, errlen);
    if (!p0)
        return -1;
    nn_params_free(p0);
    r->gen0_from_model = m0.parent[0] != 0;
    snprintf(p, sizeof p, "%s/metrics.jsonl", r->dir);
    /* A torn last line (a full disk, or a file from an older version that wrote events
     * through stdio's buffer) is cut off so every line stays one JSON object. */
    char *old = rundir_read_text(p, NULL);
    if (old) {
        size_t n = strlen(old);
        if (n > 0 && old[n - 1] != '\n') {
            char *nl = strrchr(old, '\n');
            if (truncate(p, nl ? (off_t)(nl - old + 1) : 0) < 0) {
                snprintf(err, errlen, "%s: cannot cut a torn last line: %s", p, strerror(errno));
                free(old);
                return -1;
            }
        }
        free(old);
    }
    r->metrics = fopen(p, "a");
    if (!r->metrics) {
        snprintf(err, errlen, "%s: cannot append: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

/* The last generation state.json records as done (0 when none or no state.json). */
static int generations_done(const run_ctx *r)
{
    cJSON *o = rundir_read_json(r->dir, "state.json");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "generation");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stage");
    int done = 0;
    if (cJSON_IsNumber(g) && cJSON_IsString(st))
        done = !strcmp(st->valuestring, "done") ? g->valueint : g->valueint - 1;
    cJSON_Delete(o);
    return done > 0 ? done : 0;
}

/* Rank 0's best model on every rank (it read the arena files; the others may see
 * them later on a network filesystem). */
static void sync_best(run_ctx *r)
{
    comm_bcast(r->cm, r->best, sizeof r->best, 0);
    comm_bcast(r->cm, &r->best_gen, sizeof r->best_gen, 0);
}

/* Whether the --time budget is spent, in rank 0's clock, on every rank. */
static bool out_of_time_all(run_ctx *r)
{
    int64_t spent = lead(r) ? out_of_time(r) : 0;
    comm_bcast(r->cm, &spent, sizeof spent, 0);
    return spent != 0;
}

/* Writes state.json (rank 0; every rank learns whether it worked). */
static int write_state_all(run_ctx *r, int gen, const char *stage, char *err, size_t errlen)
{
    int rc = lead(r) ? write_state(r, gen, stage, err, errlen) : 0;
    return dist_agree(r->cm, rc, err, errlen);
}

/* One generation's stages; each is skipped when its file exists. Returns 0, 1 when
 * interrupted, 2 when the --time budget is spent before a stage, -1 with a message.
 * With several ranks every rank returns the same. */
static int run_generation(run_ctx *r, int gen, char *err, size_t errlen)
{
    int st;
    /* A generation state.json already records as done is only walked through: its files
     * exist, state.json must not step back, its promote event is not logged again, and
     * only the last such generation rewrites the ladder (in case a kill came between
     * state.json and ratings.csv). */
    bool replay = gen <= r->done_upto;
    if (lead(r))
        replay_promotions(r, gen - 1, false);
    sync_best(r);
    if (!replay && out_of_time_all(r))
        return 2;
    if ((st = stage_selfplay(r, gen, err, errlen)) != 0)
        return st;
    maybe_crash(r, gen, "selfplay");
    if (!replay && write_state_all(r, gen, "selfplay", err, errlen) < 0)
        return -1;
    if (!replay && out_of_time_all(r))
        return 2;
    if ((st = stage_train(r, gen, err, errlen)) != 0)
        return st;
    maybe_crash(r, gen, "train");
    if (!replay && write_state_all(r, gen, "train", err, errlen) < 0)
        return -1;
    /* the arena of a trained model still runs: it rates the model the budget paid for */
    if ((st = stage_arena(r, gen, err, errlen)) != 0)
        return st;
    maybe_crash(r, gen, "arena");
    if (lead(r))
        replay_promotions(r, gen, false);
    sync_best(r);
    if (replay && gen < r->done_upto)
        return 0;
    int rc = 0;
    if (lead(r)) {
        /* the promote event after state.json says done, not before: a failure in between
         * (a full disk on `best`) would otherwise log it again on the resume */
        if (!replay && write_state(r, gen, "done", err, errlen) < 0)
            rc = -1;
        else {
            if (!replay)
                replay_promotions(r, gen, true);
            if (write_ladder(r, gen, err, errlen) < 0)
                rc = -1;
            else
                write_plots(r);
        }
    }
    /* the others sleep while rank 0 rates and plots */
    comm_wait_all(r->cm);
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    maybe_crash(r, gen, "promote");
    return 0;
}

static void default_dir(char *out, size_t len, const char *cfg_path)
{
    if (!cfg_path) {
        snprintf(out, len, "runs/tictactoe");
        return;
    }
    const char *base = strrchr(cfg_path, '/');
    base = base ? base + 1 : cfg_path;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".json"))
        n -= 5;
    snprintf(out, len, "runs/%.*s", (int)n, base);
}

/* The run's identity for the ranks' check: the config as the run directory compares it,
 * plus the options that steer the loop. Malloc'd. */
static char *ranks_identity(const run_ctx *r)
{
    char *cfg = config_identity(&r->c);
    size_t n = (cfg ? strlen(cfg) : 0) + 128;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "{\"config\": %s, \"run\": {\"generations\": %d, \"time\": %.17g}}",
                 cfg ? cfg : "null", r->c.loop.generations, r->budget);
    free(cfg);
    return s;
}

/* Everything before the first generation, on every rank: the checks that the ranks agree
 * (the same config and options, one run directory), then rank 0's lock and setup.
 * Returns 0, or an exit status with the message printed (by rank 0 for a shared one). */
static int run_start(run_ctx *r, const char *dir, int *lock_fd)
{
    char err[2048] = "";
    int rc = 0;
    if (r->ranks > 1) {
        char *id = ranks_identity(r);
        if (!id)
            comm_abort(r->cm, EXIT_FAIL);
        rc = dist_check_same(r->cm, "config", id, err, sizeof err);
        free(id);
        if (rc == 0 && r->c.train.batch_size < r->ranks) {
            snprintf(err, sizeof err, "train.batch_size %d is smaller than the %d ranks: each rank "
                     "trains on its share of every batch (raise train.batch_size or start fewer ranks)",
                     r->c.train.batch_size, r->ranks);
            rc = -2;
        }
        if (rc != 0) {
            if (lead(r))
                cli_error("run: %s", err);
            return EXIT_USAGE;
        }
    }
    /* The lock comes before anything is written or cleaned up in the directory: a second
     * run must not remove the first one's temporaries nor append to its files. Rank 0
     * holds it for the job. */
    if (lead(r)) {
        *lock_fd = lock_run_dir(dir, err, sizeof err);
        rc = *lock_fd == -2 ? -2 : *lock_fd < 0 ? -1 : 0;
    }
    rc = dist_agree(r->cm, rc, err, sizeof err);
    if (rc == 0 && r->ranks > 1)
        rc = dist_check_dir(r->cm, dir, err, sizeof err);
    if (rc == 0 && lead(r))
        rc = setup_dir(r, err, sizeof err);
    if ((rc = dist_agree(r->cm, rc, err, sizeof err)) != 0) {
        if (lead(r))
            cli_error("run: %s", err);
        return rc == -2 ? EXIT_USAGE : EXIT_FAIL; /* a full or read-only disk is no bad input */
    }
    int64_t done = lead(r) ? generations_done(r) : 0;
    double before = lead(r) ? read_clock(r) : 0;
    int64_t from_model = lead(r) ? r->gen0_from_model : 0; /* setup_dir's reading */
    comm_bcast(r->cm, &done, sizeof done, 0);
    comm_bcast(r->cm, &before, sizeof before, 0);
    comm_bcast(r->cm, &from_model, sizeof from_model, 0);
    r->gen0_from_model = from_model != 0;
    r->done_upto = (int)done;
    r->clock_before = before;
    return 0;
}

int cmd_run(int argc, char **argv)
{
    const char *cfg_path = NULL, *dir = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, gens = 0, rc = EXIT_USAGE, lock_fd = -1;
    bool use_mpi = false;
    run_ctx r;
    memset(&r, 0, sizeof r);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            dir = v, i++;
        } else if (!strcmp(a, "--mpi")) {
            use_mpi = true;
        } else if (!strcmp(a, "--time") && v) {
            if (cli_parse_duration(argv[++i], &r.budget) < 0) {
                cli_error("run: --time: expected a duration such as 90s, 60m or 2h, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--from") && v) {
            r.from = v, i++;
        } else if (!strcmp(a, "--generations") && v) {
            if (cli_parse_int(argv[++i], 1, 1000000, &gens) < 0) {
                cli_error("run: --generations: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else {
            cli_error("run: unexpected argument \"%s\" (see gridzero run --help)", a);
            goto done;
        }
    }
    char dirbuf[PATH_LEN], err[1024];
    int launched = comm_launcher_ranks();
    if (!use_mpi && launched > 1) {
        /* K copies of a one-process run would fight over one run directory */
        cli_error("run: started as one of %d MPI ranks but without --mpi: add --mpi "
                  "(mpirun -np %d gridzero run --mpi ...)", launched, launched);
        goto done;
    }
    r.cm = comm_new(use_mpi, err, sizeof err);
    if (!r.cm) {
        cli_error("run: %s", err);
        rc = comm_mpi_built() ? EXIT_FAIL : EXIT_USAGE;
        goto done;
    }
    r.rank = comm_rank(r.cm);
    r.ranks = comm_size(r.cm);
    /* Every rank checks its own arguments; if any rank finds bad input, every rank stops
     * (the bad one has said why). */
    int bad = cli_load_config(&r.c, cfg_path, sets, nsets) != 0;
    if (!bad && gens > 0)
        r.c.loop.generations = gens;
    if (!dir) {
        default_dir(dirbuf, sizeof dirbuf, cfg_path);
        dir = dirbuf;
    }
    r.dir = dir;
    r.crash_after = getenv("GZ_RUN_CRASH_AFTER");
    if (!bad) {
        r.g = game_new(&r.c.game, err, sizeof err);
        if (!r.g)
            cli_error("%s", err);
    }
    if (!strcmp(r.c.net.precision, "int8")) {
        cli_error("%s: key net.precision: int8 needs a calibrated model (gridzero quantize), and "
                  "the models a run trains are not calibrated: use auto, fp32 or bf16",
                  cfg_path ? cfg_path : "built-in config");
        goto done;
    }
    r.solo = r.g && r.g->players == 1 && game_scored(r.g);
    /* A bad baseline would otherwise surface only at the first arena, after a whole
     * generation of self-play and training. */
    bad = bad || !r.g || cli_check_baselines(&r.c, r.g, cfg_path);
    if (!bad && r.c.selfplay.openings[0] &&
        !(r.book = openings_load(r.g, r.c.selfplay.openings, err, sizeof err))) {
        cli_error("selfplay.openings: %s", err);
        bad = 1;
    }
    if (comm_max_i64(r.cm, bad)) {
        if (!bad)
            cli_error("run: rank %d: another rank refused its arguments (see its message)", r.rank);
        goto done;
    }
    if ((rc = run_start(&r, dir, &lock_fd)) != 0)
        goto done;
    r.session_t0 = cli_now();
    /* With MPI a signal ends the rank at once (mpirun then ends the job): stopping the
     * ranks at different points would leave the others waiting. Every file on disk is
     * complete or temporary either way. */
    if (!comm_is_mpi(r.cm)) {
        signal(SIGINT, on_sigint);
        signal(SIGTERM, on_sigint);
    }
    rc = EXIT_FAIL;
    double t0 = cli_now();
    int G = r.c.loop.generations;
    if (lead(&r)) {
        char on[64] = "";
        if (comm_is_mpi(r.cm))
            snprintf(on, sizeof on, " on %d MPI rank%s", r.ranks, r.ranks > 1 ? "s" : "");
        fprintf(stderr, "run: %s, %d generations into %s%s\n",
                cfg_path ? cfg_path : "built-in tic-tac-toe", G, dir, on);
    }
    cJSON *m = event("start", 0);
    cJSON_AddNumberToObject(m, "generations", G);
    if (comm_is_mpi(r.cm))
        cJSON_AddNumberToObject(m, "ranks", r.ranks);
    metric(&r, m);
    for (int gen = 1; gen <= G; gen++) {
        int st = run_generation(&r, gen, err, sizeof err);
        if (st == 1) {
            fprintf(stderr, "\nrun: interrupted in generation %d; finished files are kept: run the "
                    "same command to continue\n", gen);
            goto done;
        }
        if (st < 0) {
            if (lead(&r))
                cli_error("run: generation %d: %s", gen, err);
            goto done;
        }
        if (st == 2) {
            if (lead(&r)) {
                char e2[256];
                if (write_clock(&r, e2, sizeof e2) < 0)
                    fprintf(stderr, "run: %s\n", e2);
                printf("run: time budget of %.0f s spent (%.0f s in all) before generation %d; best "
                       "model %s/%s; ratings in %s/ratings.csv\n",
                       r.budget, run_seconds(&r), gen, dir, r.best, dir);
            }
            rc = EXIT_OK;
            goto done;
        }
    }
    if (lead(&r)) {
        char e2[256];
        if (write_clock(&r, e2, sizeof e2) < 0)
            fprintf(stderr, "run: %s\n", e2);
        double el = cli_now() - t0;
        /* self-play over every rank and the --follow workers' games the training used */
        char sp[256] = "";
        if (r.sp_games + r.follower_games > 0) {
            char fol[64] = "";
            if (r.follower_games > 0)
                snprintf(fol, sizeof fol, " + %lld from --follow workers", (long long)r.follower_games);
            snprintf(sp, sizeof sp, "; %lld self-play games on %d rank%s%s: %.0f games/hour",
                     (long long)r.sp_games, r.ranks, r.ranks > 1 ? "s" : "", fol,
                     (r.sp_games + r.follower_games) * 3600.0 / (el + 1e-9));
        }
        printf("run: %d generations in %s (%.0f s this session%s); best model %s/%s; ratings in "
               "%s/ratings.csv\n", G, dir, el, sp, dir, r.best, dir);
    }
    rc = EXIT_OK;
done:
    if (r.metrics)
        fclose(r.metrics);
    if (lock_fd >= 0)
        close(lock_fd); /* releases the run directory */
    openings_free(r.book);
    game_free(r.g);
    free(sets);
    comm_free(r.cm);
    return rc;
}
