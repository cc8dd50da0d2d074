/* gridzero pbrain [-m MODEL | --player SPEC] [-c CONFIG] [--sims N] [--debug] — the
 * Gomocup protocol on stdin/stdout (cli/pbrain.h), for Gomoku managers (piskvork and
 * its ports). Ends after END or at end of input, with exit status 0. */
#include <string.h>

#include "commands.h"
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
            "  --player SPEC     or any player: mcts[:N] (pure MCTS, the default), alphabeta[:D],\n"
            "                    random, perfect, model:FILE[:sims]\n"
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
    const char *cfg_path = NULL, *model = NULL, *spec = NULL;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    if (!sets)
        return EXIT_FAIL;
    int nsets = 0, sims = 0, rc = EXIT_USAGE;
    double memory = 0;
    bool debug = false;
    pbrain *pb = NULL;
    char *line = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            pbrain_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && more) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && more) {
            model = argv[++i];
        } else if (!strcmp(a, "--player") && more) {
            spec = argv[++i];
        } else if ((!strcmp(a, "--sims") || !strcmp(a, "--nodes")) && more) {
            if (cli_parse_int(argv[++i], 1, 1 << 28, &sims) < 0) {
                cli_error("pbrain: %s \"%s\": expected a whole number >= 1", a, argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--memory") && more) {
            int mb;
            if (cli_parse_int(argv[++i], 1, 1 << 20, &mb) < 0) {
                cli_error("pbrain: --memory \"%s\": expected megabytes >= 1", argv[i]);
                goto out;
            }
            memory = mb;
        } else if (!strcmp(a, "--debug")) {
            debug = true;
        } else {
            cli_error("pbrain: unknown or incomplete option \"%s\" (see gridzero pbrain --help)", a);
            goto out;
        }
    }
    if (model && spec) {
        cli_error("pbrain: give -m MODEL or --player SPEC, not both");
        goto out;
    }
    gz_config c;
    if (cli_load_config(&c, cfg_path, sets, nsets))
        goto out;
    if (!cfg_path && !strcmp(c.game.name, "mnk")) {
        /* The built-in default is tic-tac-toe: the protocol is for Gomoku. */
        c.game.rows = c.game.cols = 15;
        c.game.k = 5;
    }
    char pspec[PLAYER_NAME_LEN + 8];
    if (model) {
        if (snprintf(pspec, sizeof pspec, "model:%s", model) >= PLAYER_NAME_LEN) {
            cli_error("pbrain: model path \"%s\" too long", model);
            goto out;
        }
        spec = pspec;
    }
    brain_opts bo = {.spec = spec, .sims = sims, .memory_mb = memory};
    char err[1024];
    pb = pbrain_new(&c, &bo, debug, err, sizeof err);
    if (!pb) {
        cli_error("pbrain: %s", err);
        goto out;
    }
    size_t cap = 0;
    rc = EXIT_OK;
    while (getline(&line, &cap, stdin) >= 0)
        if (pbrain_line(pb, line, stdout))
            break;
out:
    free(line);
    pbrain_free(pb);
    free(sets);
    return rc;
}
