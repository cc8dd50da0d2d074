/* loop.c — the generation loop's entry point (loop.h): the checks of the options and
 * the config on every rank, the ranks' agreement, the run directory's lock and set-up,
 * then one generation after another (each stage skipped when its file exists), and the
 * session's summary. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "loop_impl.h"
#include "engine/parse.h"
#include "nn/net_player.h"

volatile sig_atomic_t run_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    if (run_interrupted) /* a second Ctrl-C: every file on disk is complete or temporary */
        _exit(130);
    run_interrupted = 1;
}

/* Appends one event to metrics.jsonl (takes ownership of obj). */
void run_metric(run_ctx *r, cJSON *obj)
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

cJSON *run_event(const char *name, int gen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "event", name);
    cJSON_AddNumberToObject(o, "generation", gen);
    return o;
}

/* The test hook GZ_RUN_CRASH_AFTER=GEN:STAGE[@RANK]: SIGKILL after that stage (the rank
 * given, or rank 0). */
void run_maybe_crash(const run_ctx *r, int gen, const char *stage)
{
    if (!r->crash_after)
        return;
    const char *at = strchr(r->crash_after, '@');
    int rank = 0;
    if (at && parse_int(at + 1, 0, 1 << 24, &rank) < 0)
        return;
    if (rank != r->rank)
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
    int64_t spent = lead(r) ? run_out_of_time(r) : 0;
    comm_bcast(r->cm, &spent, sizeof spent, 0);
    return spent != 0;
}

/* Writes state.json (rank 0; every rank learns whether it worked). */
static int write_state_all(run_ctx *r, int gen, const char *stage, char *err, size_t errlen)
{
    int rc = lead(r) ? run_write_state(r, gen, stage, err, errlen) : 0;
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
        run_replay_promotions(r, gen - 1, false);
    sync_best(r);
    if (!replay && out_of_time_all(r))
        return 2;
    if (!r->ntuple && (st = run_stage_selfplay(r, gen, err, errlen)) != 0)
        return st;
    run_maybe_crash(r, gen, "selfplay");
    if (!replay && write_state_all(r, gen, "selfplay", err, errlen) < 0)
        return -1;
    if (!replay && out_of_time_all(r))
        return 2;
    if ((st = r->ntuple ? run_stage_td(r, gen, err, errlen) : run_stage_train(r, gen, err, errlen)) != 0)
        return st;
    run_maybe_crash(r, gen, "train");
    if (!replay && write_state_all(r, gen, "train", err, errlen) < 0)
        return -1;
    /* the arena of a trained model still runs: it rates the model the budget paid for */
    if ((st = run_stage_arena(r, gen, err, errlen)) != 0)
        return st;
    run_maybe_crash(r, gen, "arena");
    if (lead(r))
        run_replay_promotions(r, gen, false);
    sync_best(r);
    if (replay && gen < r->done_upto)
        return 0;
    int rc = 0;
    if (lead(r)) {
        /* the promote event after state.json says done, not before: a failure in between
         * (a full disk on `best`) would otherwise log it again on the resume */
        if (!replay && run_write_state(r, gen, "done", err, errlen) < 0)
            rc = -1;
        else {
            if (!replay)
                run_replay_promotions(r, gen, true);
            if (run_write_ladder(r, gen, err, errlen) < 0)
                rc = -1;
            else
                run_write_plots(r);
        }
    }
    /* the others sleep while rank 0 rates and plots */
    comm_wait_all(r->cm);
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0)
        return rc;
    run_maybe_crash(r, gen, "promote");
    return 0;
}

/* The run's identity for the ranks' check: the config as the run directory compares it,
 * plus the options that steer the loop. Malloc'd. */
static char *ranks_identity(const run_ctx *r)
{
    char *cfg = run_config_identity(&r->c);
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
 * Returns 0, or -2 (bad input) or -1 (a failure) with the message in msg for rank 0 to
 * print (a shared one: the other ranks' msg stays empty). */
static int run_start(run_ctx *r, const char *dir, int *lock_fd, char *msg, size_t msglen)
{
    char err[2048] = "";
    int rc = 0;
    if (r->ranks > 1) {
        char *id = ranks_identity(r);
        if (!id)
            comm_abort(r->cm, 1);
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
                snprintf(msg, msglen, "run: %s", err);
            return -2;
        }
    }
    /* The lock comes before anything is written or cleaned up in the directory: a second
     * run must not remove the first one's temporaries nor append to its files. Rank 0
     * holds it for the job. */
    if (lead(r)) {
        *lock_fd = run_lock_dir(dir, err, sizeof err);
        rc = *lock_fd == -2 ? -2 : *lock_fd < 0 ? -1 : 0;
    }
    rc = dist_agree(r->cm, rc, err, sizeof err);
    if (rc == 0 && r->ranks > 1)
        rc = dist_check_dir(r->cm, dir, err, sizeof err);
    if (rc == 0 && lead(r))
        rc = run_setup_dir(r, err, sizeof err);
    if ((rc = dist_agree(r->cm, rc, err, sizeof err)) != 0) {
        if (lead(r))
            snprintf(msg, msglen, "run: %s", err);
        return rc == -2 ? -2 : -1; /* a full or read-only disk is no bad input */
    }
    int64_t done = lead(r) ? run_generations_done(r) : 0;
    double before = lead(r) ? run_read_clock(r) : 0;
    int64_t from_model = lead(r) ? r->gen0_from_model : 0; /* setup_dir's reading */
    comm_bcast(r->cm, &done, sizeof done, 0);
    comm_bcast(r->cm, &before, sizeof before, 0);
    comm_bcast(r->cm, &from_model, sizeof from_model, 0);
    r->gen0_from_model = from_model != 0;
    r->done_upto = (int)done;
    r->clock_before = before;
    return 0;
}

/* The message this rank's caller prints: the first one (a later one would be about
 * what the first made fail). */
static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    if (err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int loop_run(const loop_opts *o, char *msg, size_t msglen)
{
    const char *cfg_path = o->config_path, *dir = o->dir;
    int rc = -2, lock_fd = -1;
    void (*old_int)(int) = SIG_DFL, (*old_term)(int) = SIG_DFL;
    bool handlers = false;
    run_ctx r;
    memset(&r, 0, sizeof r);
    msg[0] = 0;
    r.budget = o->budget;
    r.cpu_clock = o->cpu_clock;
    r.from = o->from;
    r.pace = o->progress;
    run_interrupted = 0;
    char err[1024];
    int launched = comm_launcher_ranks();
    if (!o->mpi && launched > 1) {
        /* K copies of a one-process run would fight over one run directory */
        say(msg, msglen, "run: started as one of %d MPI ranks but without --mpi: add --mpi "
            "(mpirun -np %d gridzero run --mpi ...)", launched, launched);
        goto done;
    }
    r.cm = comm_new(o->mpi, err, sizeof err);
    if (!r.cm) {
        say(msg, msglen, "run: %s", err);
        rc = comm_mpi_built() ? -1 : -2;
        goto done;
    }
    r.rank = comm_rank(r.cm);
    r.ranks = comm_size(r.cm);
    /* Ctrl-C from here on stops the run at the next check (the set-up included: a
     * loaded machine can take a while to reach the first stage). With MPI a signal ends
     * the rank at once (mpirun then ends the job): stopping the ranks at different points
     * would leave the others waiting. Every file on disk is complete or temporary either
     * way. */
    handlers = !comm_is_mpi(r.cm);
    if (handlers) {
        old_int = signal(SIGINT, on_sigint);
        old_term = signal(SIGTERM, on_sigint);
    }
    /* Every rank checks its own arguments; if any rank finds bad input, every rank stops
     * (the bad one has said why). */
    char why[512];
    int bad = 0;
    if (cfg_load(&r.c, cfg_path, why, sizeof why) < 0 ||
        cfg_set_all(&r.c, o->sets, o->nsets, why, sizeof why) < 0) {
        say(msg, msglen, "%s", why);
        bad = 1;
    }
    if (!bad && o->generations > 0)
        r.c.loop.generations = o->generations;
    r.dir = dir;
    r.crash_after = getenv("GZ_RUN_CRASH_AFTER");
    if (!bad) {
        r.g = game_new(&r.c.game, err, sizeof err);
        if (!r.g)
            say(msg, msglen, "%s", err);
    }
    if (!strcmp(r.c.net.precision, "int8")) {
        say(msg, msglen, "%s: key net.precision: int8 needs a calibrated model (gridzero quantize), and "
            "the models a run trains are not calibrated: use auto, fp32 or bf16",
            cfg_path ? cfg_path : "built-in config");
        goto done;
    }
    r.solo = r.g && r.g->players == 1 && game_scored(r.g);
    r.ntuple = !strcmp(r.c.net.kind, "ntuple");
    if (!bad && r.ntuple && o->mpi) {
        say(msg, msglen, "run: net.kind ntuple runs in one process (its TD threads share one table): "
            "drop --mpi");
        bad = 1;
    }
    /* A bad baseline would otherwise surface only at the first arena, after a whole
     * generation of self-play and training. */
    if (!bad && r.g && net_player_check_baselines(&r.c, r.g, cfg_path, err, sizeof err) < 0)
        say(msg, msglen, "%s", err), bad = 1;
    bad = bad || !r.g;
    if (!bad && r.c.selfplay.openings[0] &&
        !(r.book = openings_load(r.g, r.c.selfplay.openings, err, sizeof err))) {
        say(msg, msglen, "selfplay.openings: %s", err);
        bad = 1;
    }
    if (comm_max_i64(r.cm, bad)) {
        if (!bad)
            say(msg, msglen, "run: rank %d: another rank refused its arguments (see its message)", r.rank);
        goto done;
    }
    if ((rc = run_start(&r, dir, &lock_fd, msg, msglen)) != 0)
        goto done;
    r.session_t0 = run_clock(&r);
    rc = -1;
    double t0 = run_now();
    int G = r.c.loop.generations;
    if (lead(&r)) {
        char on[64] = "";
        if (comm_is_mpi(r.cm))
            snprintf(on, sizeof on, " on %d MPI rank%s", r.ranks, r.ranks > 1 ? "s" : "");
        fprintf(stderr, "run: %s, %d generations into %s%s\n",
                cfg_path ? cfg_path : "built-in tic-tac-toe", G, dir, on);
    }
    cJSON *m = run_event("start", 0);
    cJSON_AddNumberToObject(m, "generations", G);
    if (comm_is_mpi(r.cm))
        cJSON_AddNumberToObject(m, "ranks", r.ranks);
    run_metric(&r, m);
    for (int gen = 1; gen <= G; gen++) {
        int st = run_generation(&r, gen, err, sizeof err);
        if (st == 1) {
            fprintf(stderr, "\nrun: interrupted in generation %d; finished files are kept: run the "
                    "same command to continue\n", gen);
            rc = 1;
            goto done;
        }
        if (st < 0) {
            if (lead(&r))
                say(msg, msglen, "run: generation %d: %s", gen, err);
            goto done;
        }
        if (st == 2) {
            if (lead(&r)) {
                char e2[256];
                if (run_write_clock(&r, e2, sizeof e2) < 0)
                    fprintf(stderr, "run: %s\n", e2);
                printf("run: time budget of %.0f s spent (%.0f s in all) before generation %d; best "
                       "model %s/%s; ratings in %s/ratings.csv\n",
                       r.budget, run_seconds(&r), gen, dir, r.best, dir);
            }
            rc = 0;
            goto done;
        }
    }
    if (lead(&r)) {
        char e2[256];
        if (run_write_clock(&r, e2, sizeof e2) < 0)
            fprintf(stderr, "run: %s\n", e2);
        double el = run_now() - t0;
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
    rc = 0;
done:
    if (handlers) {
        /* what the run said is on disk before a Ctrl-C can take the default action */
        fflush(stdout);
        signal(SIGINT, old_int);
        signal(SIGTERM, old_term);
    }
    if (r.metrics)
        fclose(r.metrics);
    if (lock_fd >= 0)
        close(lock_fd); /* releases the run directory */
    openings_free(r.book);
    game_free(r.g);
    if (msg[0] && o->report) { /* before MPI_Finalize, which the ranks pass together */
        o->report(msg);
        msg[0] = 0;
    }
    comm_free(r.cm);
    return rc;
}
