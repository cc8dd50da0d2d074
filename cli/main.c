/* main.c — the gridzero command: finds the subcommand and hands it the arguments. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "train/blas_tune.h"

static const cli_command commands[] = {
    {"run", cmd_run, "the generation loop: self-play, train, arena, promote, Elo (the main job)"},
    {"selfplay", cmd_selfplay, "play games of the search against itself and write samples (HDF5)"},
    {"train", cmd_train, "train a model on self-play sample files"},
    {"arena", cmd_arena, "play a match between players (random, mcts:N, alphabeta, perfect, model:FILE)"},
    {"elo", cmd_elo, "maximum-likelihood Elo ratings with 95% intervals from arena results files"},
    {"openings", cmd_openings, "draw a book of balanced openings (no VCT for either side) for arena and self-play"},
    {"play", cmd_play, "play against one or more players in the terminal"},
    {"bench", cmd_bench, "measure throughput (nn: inference; train: training steps; search: simulations)"},
    {"average", cmd_average, "average the weights of checkpoints (stochastic weight averaging)"},
    {"quantize", cmd_quantize, "calibrate a model for int8 inference on sample files; check its accuracy"},
    {"info", cmd_info, "describe a gridzero file (a model or a sample file)"},
    {"config", cmd_config, "check a config file and print the effective config; list the keys"},
    {"pbrain", cmd_pbrain, "the Gomocup brain protocol on stdin/stdout (Gomoku managers)"},
    {"gtp", cmd_gtp, "the Go Text Protocol (v2) on stdin/stdout, for every game (GTP tools)"},
#ifdef GZ_HAVE_SERVE
    {"serve", cmd_serve, "play and analyse in the browser, watch a run live (HTTP on localhost)"},
#endif
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gridzero: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_load_config(gz_config *c, const char *path, char **sets, int nsets)
{
    char err[512];
    if (cfg_load(c, path, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    if (cfg_set_all(c, sets, nsets, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    return 0;
}

game *cli_load_game(gz_config *c, const char *path, char **sets, int nsets)
{
    if (cli_load_config(c, path, sets, nsets))
        return NULL;
    char err[512];
    game *g = game_new(&c->game, err, sizeof err);
    if (!g)
        cli_error("%s: %s", path ? path : "built-in config", err);
    return g;
}

static void usage(FILE *f)
{
    fprintf(f, "gridzero %s — AlphaZero-style self-play training for grid games, on the CPU\n\n"
               "usage: gridzero COMMAND [OPTIONS]\n\ncommands:\n", GZ_VERSION);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`gridzero COMMAND --help` describes a command's options.\n"
               "Exit status: 0 ok, 1 run-time failure, 2 bad input (usage, config, files, moves).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gridzero %s\n", GZ_VERSION);
        return EXIT_OK;
    }
    /* The trainer's GEMMs: pick OpenBLAS's AVX-512 kernels where it misdetects the CPU
     * (may re-execute the process once; see train/blas_tune.h). */
    if (!strcmp(argv[1], "train") || !strcmp(argv[1], "bench"))
        blas_tune_reexec(argv);
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    cli_error("unknown command \"%s\" (see gridzero --help)", argv[1]);
    return EXIT_USAGE;
}
