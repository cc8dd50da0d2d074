/* commands.h — the subcommands of the gridzero binary and what they share.
 *
 * Each subcommand is `int cmd_x(int argc, char **argv)` (argv[0] is the subcommand's
 * name) returning the process exit status: 0 ok, 1 a run-time failure, 2 bad input
 * (usage, config, files, moves). Only this folder prints errors and exits. */
#ifndef GZ_CLI_COMMANDS_H
#define GZ_CLI_COMMANDS_H

#include <stdio.h>

#include "engine/config.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* Loads the config file (NULL: the built-in default) and applies `--set` overrides.
 * Prints the error and returns EXIT_USAGE on failure, 0 on success. */
int cli_load_config(gz_config *c, const char *path, char **sets, int nsets);

/* Prints "gridzero: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_config(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_train(int argc, char **argv);
/* `gridzero bench train` (cmd_bench_train.c), dispatched by cmd_bench. */
int cmd_bench_train(int argc, char **argv);
/* `gridzero info` on a sample file (info_samples.c), a row of cmd_info's table. */
int info_samples(const char *path);

#endif
