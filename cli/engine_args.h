/* engine_args.h — the command-line options the engine protocols share (pbrain, gtp). */
#ifndef GZ_CLI_ENGINE_ARGS_H
#define GZ_CLI_ENGINE_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/config.h"
#include "engine/player.h"
#include "nn/brain.h"

typedef struct cli_engine_args {
    const char *cfg_path;              /* -c FILE, or NULL: the built-in default */
    bool debug;                        /* --debug (when allowed) */
    char **sets;                       /* --set overrides (owned array, borrowed strings) */
    int nsets;
    char pspec[PLAYER_NAME_LEN + 8];   /* "model:FILE" for -m FILE */
} cli_engine_args;

/* Parses argv (argv[0] is the command `name`, for messages): -c/--config, --set, -m/--model,
 * --player, --sims/--nodes, --memory, and --debug when allow_debug. Loads the config into
 * c and fills bo (bo->spec may point into a->pspec: a must outlive bo). Returns 0, 1 when
 * it printed the help (exit 0), or -1 after printing an error (exit 2). Call
 * cli_engine_args_deinit in every case. */
int cli_engine_args_parse(int argc, char **argv, const char *name, bool allow_debug,
                          void (*usage)(FILE *), cli_engine_args *a, gz_config *c, brain_opts *bo);
void cli_engine_args_deinit(cli_engine_args *a);

/* When neither -m nor --player was given and c's game has a shipped model
 * (brain_shipped_model), makes bo play "model:" that file and says so on stderr (the
 * protocol keeps stdout) and returns true; otherwise leaves bo as it is (pure MCTS). */
bool cli_engine_args_shipped(cli_engine_args *a, const gz_config *c, brain_opts *bo,
                             const char *name);

#endif
