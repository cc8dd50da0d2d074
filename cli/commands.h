/* commands.h — the subcommands of the gridzero binary and what they share.
 *
 * Each subcommand is `int cmd_x(int argc, char **argv)` (argv[0] is the subcommand's
 * name) returning the process exit status: 0 ok, 1 a run-time failure, 2 bad input
 * (usage, config, files, moves). Only this folder prints errors and exits. */
#ifndef GZ_CLI_COMMANDS_H
#define GZ_CLI_COMMANDS_H

#include <stdio.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/player.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* Loads the config file (NULL: the built-in default) and applies `--set` overrides.
 * Prints the error and returns EXIT_USAGE on failure, 0 on success. */
int cli_load_config(gz_config *c, const char *path, char **sets, int nsets);
/* cli_load_config, then the config's game: NULL after printing the error naming the
 * config file (or the built-in one). Free the game with game_free. */
game *cli_load_game(gz_config *c, const char *path, char **sets, int nsets);

/* Prints "gridzero: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The extra player kinds of the command line (e.g. the network player), or NULL.
 * Borrowed, static. Pass it to player_new. */
const player_ext *cli_player_ext(void);

/* Makes and frees each arena.baselines player of c for game g, so that a bad spec is
 * found before any work: prints the error naming the config file (cfg_path, NULL: the
 * built-in one) and the key, and returns EXIT_USAGE; or returns 0. */
int cli_check_baselines(const gz_config *c, const game *g, const char *cfg_path);

/* Whole-string number parsing for options: 0 ok, -1 not a number in range. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_int(const char *s, int lo, int hi, int *out);
/* A duration: a positive number with an optional unit s, m or h ("90s", "60m", "1.5h";
 * no unit = seconds). 0 and *seconds, or -1. */
int cli_parse_duration(const char *s, double *seconds);

/* Live progress: a line rewritten in place on a terminal, plain lines at most every
 * `every` seconds otherwise. */
typedef struct cli_progress {
    int tty;
    double start, last, every;
} cli_progress;
void cli_progress_init(cli_progress *p, double every);
/* Whether to print now (always when done); on a tty starts the line with '\r'. */
int cli_progress_due(cli_progress *p, int done);
/* Writes s as a JSON string literal (quotes, backslashes and control characters
 * escaped) to f: player names are specs typed by a person. */
void cli_json_string(FILE *f, const char *s);

/* Seconds: wall clock (monotonic), and the CPU time of all the process's threads. */
double cli_now(void);
double cli_cpu_now(void);
/* qsort comparator for doubles, ascending (medians of timings). */
int cli_cmp_double(const void *a, const void *b);

int cmd_config(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_arena(int argc, char **argv);
int cmd_elo(int argc, char **argv);
int cmd_openings(int argc, char **argv);
int cmd_average(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_pbrain(int argc, char **argv);
int cmd_gtp(int argc, char **argv);
int cmd_selfplay(int argc, char **argv);
/* `gridzero selfplay --follow RUN_DIR` (cmd_follow.c), dispatched by cmd_selfplay. */
int cmd_selfplay_follow(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_train(int argc, char **argv);
/* n positions of g after a random number of random moves (0 .. a third of the longest
 * game; never terminal), for benchmarks and for calibrating random weights: in[n] encoded
 * planes, legal[n] masks (the caller's). Deterministic given seed. 0, or -1 when out of
 * memory. */
int cli_random_positions(const game *g, int n, uint64_t seed, float *in, uint8_t *legal);
/* `gridzero serve` (cmd_serve.c; built with libmicrohttpd only). */
int cmd_serve(int argc, char **argv);
/* `gridzero bench train` (cmd_bench_train.c), dispatched by cmd_bench. */
int cmd_bench_train(int argc, char **argv);
/* `gridzero bench search` (cmd_bench_search.c), dispatched by cmd_bench. */
int cmd_bench_search(int argc, char **argv);
/* `gridzero bench rules` (cmd_bench_rules.c), dispatched by cmd_bench. */
int cmd_bench_rules(int argc, char **argv);
/* One core's arithmetic peak, measured in this thread's CPU time (the best of 10 chunks
 * of about 20 ms of 12 independent chains of one instruction on the widest vectors the
 * CPU has): fp32 FMAs (2 flops a lane), bf16 vdpbf16ps (4 a lane) or int8 vpdpbusd (8 ops
 * a lane), in G(FL)OP/s. *lanes gets the vector width in 32-bit lanes; 0 (and 0 lanes)
 * where the CPU has no such instruction. bench_peak.c. */
typedef enum { CLI_PEAK_FP32, CLI_PEAK_BF16, CLI_PEAK_INT8 } cli_peak_kind;
double cli_peak_measure(cli_peak_kind kind, int *lanes);
/* `gridzero info` on a sample file (info_samples.c), a row of cmd_info's table. */
int info_samples(const char *path);

#endif
