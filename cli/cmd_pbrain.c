/* gridzero pbrain [-m MODEL | --player SPEC] [-c CONFIG] [--sims N] [--debug] — the
 * Gomocup protocol on stdin/stdout (cli/pbrain.h), for Gomoku managers (piskvork and
 * its ports). Ends after END or at end of input, with exit status 0. */
#include <string.h>

#include "commands.h"
#include "engine_args.h"
#include "pbrain.h"

static void pbrain_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero pbrain [-m MODEL | --player SPEC] [-c CONFIG] [--set KEY=VALUE]...\n"
            "                       [--sims N] [--memory MB] [--debug]\n\n"
            "Speaks the Gomocup brain protocol on stdin/stdout (START, RECTSTART, RESTART, BEGIN,\n"
            "TURN, BOARD, TAKEBACK, INFO, ABOUT, END). The game is the config's m,n,k game (without\n"
            "-c: Gomoku, five in a row, freestyle) at the size START asks for (k..25).\n\n"
            "  -m, --model FILE  play with this model (search settings from the config)\n"
            "  --player SPEC     or any player: mcts[:N] (pure MCTS), alphabeta[:D], random,\n"
            "                    perfect, model:FILE[:sims]\n"
            "                    neither: Gomoku (freestyle, five) plays the shipped model\n"
            "                    models/gomoku15.h5 (models/gomoku15.md), other games pure MCTS\n"
            "  --sims N          stop every search at N simulations (also --nodes; for\n"
            "                    reproducible matches; the clock still applies)\n"
            "  --memory MB       search tree memory (default 256, or half of INFO max_memory)\n"
            "  --debug           DEBUG lines with search statistics before each move\n\n"
            "Time: a search runs for min(timeout_turn, time_left / moves left) less 10%% and\n"
            "50 ms, or until the root is proven or the simulation cap is reached.\n\n"
            "players:\n");
    player_print_kinds(f, cli_player_ext());
}

int cmd_pbrain(int argc, char **argv)
{
    cli_engine_args args;
    gz_config c;
    brain_opts bo;
    pbrain *pb = NULL;
    char *line = NULL;
    int rc = EXIT_USAGE;
    int p = cli_engine_args_parse(argc, argv, "pbrain", true, pbrain_usage, &args, &c, &bo);
    if (p != 0) {
        rc = p > 0 ? EXIT_OK : EXIT_USAGE;
        goto out;
    }
    if (!args.cfg_path && !strcmp(c.game.name, "mnk")) {
        /* The built-in default is tic-tac-toe: the protocol is for Gomoku. */
        c.game.rows = c.game.cols = 15;
        c.game.k = 5;
    }
    bool shipped = cli_engine_args_shipped(&args, &c, &bo, "pbrain");
    char err[1024];
    pb = pbrain_new(&c, &bo, args.debug, err, sizeof err);
    if (!pb) {
        cli_error("pbrain: %s", err);
        goto out;
    }
    if (shipped) /* another rule (INFO rule: renju, caro, exact five): pure MCTS */
        pbrain_set_fallback(pb, "mcts");
    size_t cap = 0;
    rc = EXIT_OK;
    while (getline(&line, &cap, stdin) >= 0)
        if (pbrain_line(pb, line, stdout))
            break;
out:
    free(line);
    pbrain_free(pb);
    cli_engine_args_deinit(&args);
    return rc;
}
