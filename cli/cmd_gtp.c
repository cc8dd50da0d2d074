/* gridzero gtp [-m MODEL | --player SPEC] [-c CONFIG] [--sims N] — the Go Text Protocol
 * (version 2) on stdin/stdout for every game (cli/gtp.h), for GTP tools (gogui, Sabaki,
 * HexGui). Ends after quit or at end of input, with exit status 0. */
#include <string.h>

#include "commands.h"
#include "engine_args.h"
#include "gtp.h"

static void gtp_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero gtp [-m MODEL | --player SPEC] [-c CONFIG] [--set KEY=VALUE]...\n"
            "                    [--sims N] [--memory MB]\n\n"
            "Speaks GTP version 2 on stdin/stdout for the config's game (m,n,k or Sanling):\n"
            "protocol_version name version known_command list_commands boardsize clear_board\n"
            "komi play genmove undo showboard quit time_settings time_left gridzero-analyze.\n"
            "Moves in the game's notation (Gomoku h8, Sanling a1 = top left); colors b/w, or\n"
            "1 2 3 for three-player Sanling; moves out of turn and pass are refused.\n\n"
            "  -m, --model FILE  play with this model (search settings from the config)\n"
            "  --player SPEC     or any player: mcts[:N] (pure MCTS), alphabeta[:D], random,\n"
            "                    perfect, model:FILE[:sims]\n"
            "                    neither: Gomoku (freestyle, five) plays the shipped model\n"
            "                    models/gomoku15.h5 (models/gomoku15.md), other games pure MCTS\n"
            "  --sims N          stop every search at N simulations (also --nodes); without\n"
            "                    time_settings searches stop at N, or mcts.simulations\n"
            "  --memory MB       search tree memory (default 256)\n\n"
            "players:\n");
    player_print_kinds(f, cli_player_ext());
}

int cmd_gtp(int argc, char **argv)
{
    cli_engine_args args;
    gz_config c;
    brain_opts bo;
    gtp *s = NULL;
    char *line = NULL;
    int rc = EXIT_USAGE;
    int p = cli_engine_args_parse(argc, argv, "gtp", false, gtp_usage, &args, &c, &bo);
    if (p != 0) {
        rc = p > 0 ? EXIT_OK : EXIT_USAGE;
        goto out;
    }
    cli_engine_args_shipped(&args, &c, &bo, "gtp");
    char err[1024];
    s = gtp_new(&c, &bo, err, sizeof err);
    if (!s) {
        cli_error("gtp: %s", err);
        goto out;
    }
    size_t cap = 0;
    rc = EXIT_OK;
    while (getline(&line, &cap, stdin) >= 0)
        if (gtp_line(s, line, stdout))
            break;
out:
    free(line);
    gtp_free(s);
    cli_engine_args_deinit(&args);
    return rc;
}
