/* engine_args.c — the options `gridzero pbrain` and `gridzero gtp` share: which engine
 * (-m MODEL or --player SPEC), the config and its overrides, the search caps. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "engine_args.h"

int cli_engine_args_parse(int argc, char **argv, const char *name, bool allow_debug,
                          void (*usage)(FILE *), cli_engine_args *a, gz_config *c, brain_opts *bo)
{
    memset(a, 0, sizeof *a);
    a->sets = malloc(sizeof(char *) * (size_t)argc);
    if (!a->sets) {
        cli_error("%s: out of memory", name);
        return -1;
    }
    const char *cfg_path = NULL, *model = NULL, *spec = NULL;
    int sims = 0;
    double memory = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return 1;
        } else if ((!strcmp(o, "-c") || !strcmp(o, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(o, "--set") && more) {
            a->sets[a->nsets++] = argv[++i];
        } else if ((!strcmp(o, "-m") || !strcmp(o, "--model")) && more) {
            model = argv[++i];
        } else if (!strcmp(o, "--player") && more) {
            spec = argv[++i];
        } else if ((!strcmp(o, "--sims") || !strcmp(o, "--nodes")) && more) {
            if (cli_parse_int(argv[++i], 1, 1 << 28, &sims) < 0) {
                cli_error("%s: %s \"%s\": expected a whole number >= 1", name, o, argv[i]);
                return -1;
            }
        } else if (!strcmp(o, "--memory") && more) {
            int mb;
            if (cli_parse_int(argv[++i], 1, 1 << 20, &mb) < 0) {
                cli_error("%s: --memory \"%s\": expected megabytes >= 1", name, argv[i]);
                return -1;
            }
            memory = mb;
        } else if (allow_debug && !strcmp(o, "--debug")) {
            a->debug = true;
        } else {
            cli_error("%s: unknown or incomplete option \"%s\" (see gridzero %s --help)", name, o, name);
            return -1;
        }
    }
    if (model && spec) {
        cli_error("%s: give -m MODEL or --player SPEC, not both", name);
        return -1;
    }
    if (cli_load_config(c, cfg_path, a->sets, a->nsets))
        return -1;
    a->cfg_path = cfg_path;
    if (model) {
        if (snprintf(a->pspec, sizeof a->pspec, "model:%s", model) >= PLAYER_NAME_LEN) {
            cli_error("%s: model path \"%s\" too long", name, model);
            return -1;
        }
        spec = a->pspec;
    }
    *bo = (brain_opts){.spec = spec, .sims = sims, .memory_mb = memory};
    return 0;
}

bool cli_engine_args_shipped(cli_engine_args *a, const gz_config *c, brain_opts *bo,
                             const char *name)
{
    char path[PLAYER_NAME_LEN];
    if (bo->spec || brain_shipped_model(c, path, sizeof path - 8) != 0)
        return false;
    snprintf(a->pspec, sizeof a->pspec, "model:%s", path);
    bo->spec = a->pspec;
    fprintf(stderr, "%s: playing the shipped model %s (-m MODEL or --player SPEC for another)\n",
            name, path);
    return true;
}

void cli_engine_args_deinit(cli_engine_args *a)
{
    free(a->sets);
    a->sets = NULL;
}
