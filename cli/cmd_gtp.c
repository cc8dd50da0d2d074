/* gridzero gtp [-m MODEL | --player SPEC] [-c CONFIG] [--sims N] — the Go Text Protocol
 * (version 2) on stdin/stdout for every game (cli/gtp.h), for GTP tools (gogui, Sabaki,
 * HexGui). Ends after quit or at end of input, with exit status 0. */
#include <string.h>

#include "commands.h"
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
            "  --player SPEC     or any player: mcts[:N] (pure MCTS, the default), alphabeta[:D],\n"
            "                    random, perfect, model:FILE[:sims]\n"
            "  --sims N          stop every search at N simulations (also --nodes); without\n"
            "                    time_settings searches stop at N, or mcts.simulations\n"
            "  --memory MB       search tree memory (default 256)\n\n"
            "players:\n");
    player_print_kinds(f, cli_player_ext());
}

int cmd_gtp(int argc, char **argv)
{
    const char *cfg_path = NULL, *model = NULL, *spec = NULL;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    if (!sets)
        return EXIT_FAIL;
    int nsets = 0, sims = 0, rc = EXIT_USAGE;
    double memory = 0;
    gtp *s = NULL;
    char *line = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            gtp_usage(stdout);
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
                cli_error("gtp: %s \"%s\": expected a whole number >= 1", a, argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--memory") && more) {
            int mb;
            if (cli_parse_int(argv[++i], 1, 1 << 20, &mb) < 0) {
                cli_error("gtp: --memory \"%s\": expected megabytes >= 1", argv[i]);
                goto out;
            }
            memory = mb;
        } else {
            cli_error("gtp: unknown or incomplete option \"%s\" (see gridzero gtp --help)", a);
            goto out;
        }
    }
    if (model && spec) {
        cli_error("gtp: give -m MODEL or --player SPEC, not both");
        goto out;
    }
    gz_config c;
    if (cli_load_config(&c, cfg_path, sets, nsets))
        goto out;
    char pspec[PLAYER_NAME_LEN + 8];
    if (model) {
        if (snprintf(pspec, sizeof pspec, "model:%s", model) >= PLAYER_NAME_LEN) {
            cli_error("gtp: model path \"%s\" too long", model);
            goto out;
        }
        spec = pspec;
    }
    brain_opts bo = {.spec = spec, .sims = sims, .memory_mb = memory};
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
    free(sets);
    return rc;
}
