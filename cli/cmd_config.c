/* gridzero config check [FILE | -c FILE] | gridzero config keys */
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static void config_usage(FILE *f)
{
    fprintf(f, "usage: gridzero config check [FILE | -c FILE] [--set KEY=VALUE]...\n"
               "       gridzero config keys\n\n"
               "check: validates FILE (no FILE: the built-in default, tic-tac-toe) and prints the\n"
               "       effective config as JSON, every default filled in. Exit 2 on any error\n"
               "       (including arena.baselines that are not players of the game).\n"
               "keys:  lists every config key with its type, default and meaning.\n");
}

int cmd_config(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        config_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "keys")) {
        if (argc > 2) {
            cli_error("config keys: unexpected argument \"%s\"", argv[2]);
            return EXIT_USAGE;
        }
        cfg_print_keys(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "check") != 0) {
        cli_error("config: unknown action \"%s\" (check or keys)", argv[1]);
        return EXIT_USAGE;
    }
    const char *path = NULL;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    int nsets = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            sets[nsets++] = argv[++i];
        } else if (!strncmp(argv[i], "--set=", 6)) {
            sets[nsets++] = argv[i] + 6;
        } else if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) && i + 1 < argc &&
                   !path) {
            path = argv[++i]; /* the form every other command takes */
        } else if (argv[i][0] == '-' || path) {
            cli_error("config check: unexpected argument \"%s\"", argv[i]);
            free(sets);
            return EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    gz_config c;
    int rc = cli_load_config(&c, path, sets, nsets);
    free(sets);
    if (rc)
        return rc;
    /* What run would refuse: the game and the baseline players. */
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    if (!g) {
        cli_error("%s: %s", path ? path : "built-in config", err);
        return EXIT_USAGE;
    }
    rc = cli_check_baselines(&c, g, path);
    game_free(g);
    if (rc)
        return rc;
    char *json = cfg_to_json(&c);
    printf("%s\n", json);
    free(json);
    return EXIT_OK;
}
