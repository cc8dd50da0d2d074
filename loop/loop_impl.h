/* loop_impl.h — what the files of the generation loop share (not a public header; loop.h
 * says which file holds which piece): the run's context, the metrics log, and the
 * functions one file calls in another. Functions here are collectives where they say so
 * (every rank calls them, in the same order); the others run on the rank that calls
 * them. Not thread-safe: the loop runs on one thread (self-play, training and the arena
 * have their own workers inside).
 */
#ifndef GZ_LOOP_IMPL_H
#define GZ_LOOP_IMPL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "comm.h"
#include "loop.h"
#include "rundir.h"
#include "engine/config.h"
#include "engine/game.h"
#include "engine/openings.h"
#include "engine/player.h"

#define PATH_LEN RUNDIR_PATH_LEN

/* Set by SIGINT and SIGTERM (loop.c, one process only): the stages stop after the
 * current step with status 1 and the message "interrupted". */
extern volatile sig_atomic_t run_interrupted;

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
    loop_progress pace;  /* the caller's pacing of the progress lines (loop.h) */
    struct {
        int tty;         /* lines rewritten in place (pace.tty, once a stage has started) */
        double start;    /* when the current stage's progress started (run_now) */
    } prog;
    /* --time: the run's budget, counted over every session of the run */
    double budget;       /* seconds; 0 = none */
    bool cpu_clock;      /* --clock cpu: the clock counts the process's CPU seconds over the
                          * machine's cores (run_clock), not wall seconds */
    double clock_before; /* seconds spent by earlier sessions (clock.json) */
    double session_t0;   /* this session's start (run_now) */
    bool solo;           /* a one-player scored game (solo.h) */
    bool ntuple;         /* net.kind ntuple: TD generations (stage_td.c), no samples */
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

/* Monotonic seconds: the loop's clock (engine/player.h's). */
static inline double run_now(void)
{
    return player_clock();
}

/* Whether this rank leads the job (rank 0; always without --mpi). */
static inline bool lead(const run_ctx *r)
{
    return r->rank == 0;
}

/* The run's clock now: wall seconds (run_now), or with --clock cpu the CPU seconds of
 * this process (every thread) divided by the machine's cores, which equals wall time when
 * the run has every core to itself and counts only what it got when others share them. */
double run_clock(const run_ctx *r);

/* Seconds the run has spent so far, earlier sessions included. */
static inline double run_seconds(const run_ctx *r)
{
    return r->clock_before + (run_clock(r) - r->session_t0);
}

/* DIR/fmt with generation gen (fmt: "models/gen_%04d.h5"), into out (PATH_LEN chars). */
static inline void join(char *out, const run_ctx *r, const char *fmt, int gen)
{
    rundir_path(out, PATH_LEN, r->dir, fmt, gen);
}

/* The model generation gen plays (self-play, the arena, best), relative to the run
 * directory, into out[len]: models/swa_i.h5 with train.swa >= 2 (gen >= 1), else
 * models/gen_i.h5. */
static inline void run_played_model(const run_ctx *r, int gen, char *out, size_t len)
{
    snprintf(out, len, r->c.train.swa >= 2 && gen >= 1 ? "models/swa_%04d.h5" : "models/gen_%04d.h5",
             gen);
}

/* A stage's live progress starts (the caller's pace starts again). */
static inline void run_progress_start(run_ctx *r)
{
    r->prog.tty = r->pace.tty;
    r->prog.start = run_now();
    if (r->pace.start)
        r->pace.start(r->pace.ctx);
}

/* Whether to show a progress line now (loop_progress.due). */
static inline bool run_progress_due(run_ctx *r)
{
    return r->pace.due && r->pace.due(r->pace.ctx);
}

/* ---- loop.c ---- */

/* Appends one event to metrics.jsonl with the run's clock (run_seconds) added, in one
 * write(); a failed write is reported on stderr. Takes ownership of obj. Rank 0. */
void run_metric(run_ctx *r, cJSON *obj);
/* A new event {"event": name, "generation": gen} (free with cJSON_Delete, or hand it to
 * run_metric). */
cJSON *run_event(const char *name, int gen);
/* The test hook GZ_RUN_CRASH_AFTER=GEN:STAGE[@RANK]: SIGKILL after that stage. */
void run_maybe_crash(const run_ctx *r, int gen, const char *stage);

/* ---- the stages: each returns 0 (done now, or already), 1 when interrupted, -1 with a
 * message; collectives, every rank returns the same ---- */

/* Self-play of generation gen with r->best (stage_selfplay.c). */
int run_stage_selfplay(run_ctx *r, int gen, char *err, size_t errlen);
/* Training of generation gen from gen - 1's weights (stage_train.c). */
int run_stage_train(run_ctx *r, int gen, char *err, size_t errlen);
/* The arena of generation gen's model (stage_arena.c). */
int run_stage_arena(run_ctx *r, int gen, char *err, size_t errlen);

/* ---- ladder.c and plots.c: rank 0 ---- */

/* Replays the promotions of generations 1..upto from the arena files into r->best and
 * r->best_gen; with log, generation upto's promote event is logged. */
void run_replay_promotions(run_ctx *r, int upto, bool log);
/* Rewrites arena.jsonl and ratings.csv from the arena files of generations 1..upto and
 * logs the elo (or scores) event. Returns 0, or -1 with a message. */
int run_write_ladder(run_ctx *r, int upto, char *err, size_t errlen);
/* Redraws the plots (gnuplot missing or failing: a line on stderr, nothing else). */
void run_write_plots(run_ctx *r);

/* ---- rundir_state.c: rank 0 ---- */

/* Rewrites clock.json with run_seconds. Returns 0, or -1 with a message. */
int run_write_clock(run_ctx *r, char *err, size_t errlen);
/* The seconds clock.json records (0 when missing or unreadable). */
double run_read_clock(const run_ctx *r);
/* Whether the --time budget is spent (then no further stage starts). */
bool run_out_of_time(const run_ctx *r);
/* The share of the run's budget used when generation gen starts: the larger of the
 * generations' ((gen - 1) / loop.generations) and the --time clock's (rank 0's clock,
 * the same on every rank: a collective). May exceed 1 once the budget is spent. */
double run_budget_used(run_ctx *r, int gen);
/* Writes best, state.json (generation gen finished `stage`) and clock.json. Returns 0,
 * or -1 with a message. */
int run_write_state(run_ctx *r, int gen, const char *stage, char *err, size_t errlen);
/* Takes the lock of run directory dir (creating dir): its descriptor, -2 with a message
 * when another process holds it, -1 with a message on an I/O error. */
int run_lock_dir(const char *dir, char *err, size_t errlen);
/* The config as runs compare it (malloc'd JSON; free with free()). */
char *run_config_identity(const gz_config *c);
/* Sets up the run directory: its folders without stale temporaries, config.json (or the
 * check that it is this run's), generation 0, metrics.jsonl opened into r->metrics.
 * Returns 0, -2 with a message on bad input, -1 with a message on an I/O error. */
int run_setup_dir(run_ctx *r, char *err, size_t errlen);
/* The last generation state.json records as done (0 when none). */
int run_generations_done(const run_ctx *r);
/* net.kind ntuple (stage_td.c): generation 0 (zeros) at path; 0, -2 bad input, -1 I/O. */
int run_setup_ntuple_gen0(run_ctx *r, const char *path, char *err, size_t errlen);
/* net.kind ntuple: generation gen's learning games and models/gen_NNNN.h5 (the train
 * stage; there is no self-play stage). 0, 1 interrupted, -1 with a message. */
int run_stage_td(run_ctx *r, int gen, char *err, size_t errlen);

#endif
