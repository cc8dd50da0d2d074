/* loop.h — the generation loop as a library (DESIGN.md §1, §7): `gridzero run` is one
 * call of loop_run; the command line only turns its options into a loop_opts.
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
 * One-player scored games (2048) have no opponent (loop/solo.h): the arena stage plays
 * the candidate alone on the same numbered games every generation (generation 1 adds
 * generation 0 and the baselines), promotion compares mean scores, and ratings.csv is
 * the score table; the rollout bootstrap exports its search trees (seed 003). With
 * `from`, generation 0 is that model's weights carried to this board (the curriculum:
 * a 3x3 model starting a 4x4 run) and generation 1's games come from it.
 *
 * Where each piece lives (loop_impl.h is their shared context):
 *   loop.c            loop_run: the checks, the ranks' agreement, the generations
 *   stage_selfplay.c  self-play, with part files and the ranks' shards
 *   stage_train.c     training, the schedule's span, the int8 calibration
 *   stage_td.c        net.kind ntuple (2048): a generation's TD games and model file,
 *                     in place of self-play and training
 *   stage_arena.c     the arena's matches, the one-player arena (solo.c: its tables)
 *   ladder.c          promotions, arena.jsonl and ratings.csv
 *   plots.c           elo.png, elo_time.png, loss.png (gnuplot)
 *   rundir_state.c    the lock, clock.json, state.json, the directory's set-up
 *   rundir.c, rundata.c  reading a run directory (shared with `gridzero serve` and
 *                     `gridzero selfplay --follow`)
 *   comm*.c, dist.c   the MPI ranks (one rank without MPI) and what they agree on
 * This module must not know about the command line or the HTTP server.
 */
#ifndef GZ_LOOP_LOOP_H
#define GZ_LOOP_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/config.h"
#include "selfplay/selfplay.h"

/* How often the stages show their live progress lines (self-play games, training
 * steps, arena games). The loop writes the lines to stderr; the caller paces them.
 * A zeroed loop_progress shows none (only each stage's closing line). */
typedef struct loop_progress {
    /* A stage's progress starts: the pace starts again. May be NULL. */
    void (*start)(void *ctx);
    /* Whether to show a progress line now. On a terminal (tty) it writes '\r' first, so
     * the line replaces the previous one. NULL: never. */
    bool (*due)(void *ctx);
    bool tty;  /* stderr is a terminal: lines are rewritten in place, not ended by '\n' */
    void *ctx; /* borrowed; passed to start and due */
} loop_progress;

/* What `gridzero run` asks for. Every pointer is borrowed for the call. */
typedef struct loop_opts {
    const char *config_path; /* the config file; NULL: the built-in tic-tac-toe */
    char **sets;             /* (nsets) "KEY=VALUE" overrides, applied in order */
    int nsets;
    const char *dir;         /* the run directory (created when missing) */
    int generations;         /* > 0: generations in all (else loop.generations) */
    double budget;           /* seconds of the run's clock for the whole run, counted over
                              * every session (clock.json); 0 = none */
    bool cpu_clock;          /* the clock counts CPU seconds over the machine's cores, not
                              * wall seconds (loop_impl.h: run_clock) */
    const char *from;        /* generation 0's weights from this model; NULL: random init */
    bool mpi;                /* one run over the ranks of an MPI job (comm.h) */
    loop_progress progress;
    /* Prints the message this rank has to print at the end (cli_error's format), called
     * before the MPI job is finalized: a rank that exits first makes mpirun end the job,
     * so a message printed after finalizing can be lost. NULL: the message is left in
     * err for the caller. */
    void (*report)(const char *msg);
} loop_opts;

/* Runs the generation loop into o->dir until the run has o->generations (or
 * loop.generations) generations, or the budget is spent before a stage, continuing
 * whatever an earlier session of the same run left (see top). Takes the run directory's
 * lock for the call (another process holding it: bad input). Writes the stages' lines to
 * stderr and the closing summary to stdout. Without MPI, SIGINT and SIGTERM stop it
 * after the current step (a second one exits at once with status 130); their handlers
 * are restored on return. With MPI every rank of the job calls it with the same options;
 * a signal ends the rank. The test hook GZ_RUN_CRASH_AFTER=GEN:STAGE[@RANK] (environment)
 * kills the process after that stage.
 * Returns 0 when done (or the budget is spent), 1 when interrupted, -2 on bad input
 * (options, config, a run directory made with another config or in use), -1 on a failure
 * (I/O, a stage). err gets the message this rank should print ("" when none: another
 * rank prints the one they share, or the run said it already, or o->report printed it). */
int loop_run(const loop_opts *o, char *err, size_t errlen);

/* Sets o (from sp_opts_from_config) for the rollout bootstrap of generation 1: pure MCTS
 * with c's selfplay.bootstrap_simulations per move, every move searched in full (the
 * rollouts are the data). Shared with `gridzero selfplay --follow`, whose workers play
 * the run's bootstrap. */
void loop_sp_bootstrap(sp_opts *o, const gz_config *c);

#endif
