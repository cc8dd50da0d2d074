/* gridzero run — the generation loop's command: parses the options into a loop_opts and
 * calls loop_run (loop/loop.h, where the loop and its stages live). */
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "loop/loop.h"

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero run [-c CONFIG] [--set KEY=VALUE]... [-o RUN_DIR] [--generations N]\n"
            "                    [--time DURATION] [--clock wall|cpu] [--from MODEL] [--mpi]\n\n"
            "The generation loop: each generation plays self-play games with the best model,\n"
            "trains the next model on the last train.window generations of samples, plays it\n"
            "against the best model and the arena.baselines, promotes it (always, or at\n"
            "arena.gate score), and rates every model with Elo (random = 0).\n\n"
            "  -c, --config FILE   the config (default: the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE     override a config key\n"
            "  -o, --output DIR    the run directory (default runs/<config name>, built-in:\n"
            "                      runs/tictactoe)\n"
            "  --generations N     generations in all (default loop.generations); a finished run\n"
            "                      is continued by asking for more\n"
            "  --time DURATION     a budget for the whole run on its clock (90s, 60m, 2h; a plain\n"
            "                      number is seconds), counted over every session of it: no stage\n"
            "                      starts once it is spent (clock.json keeps the count)\n"
            "  --clock wall|cpu    the run's clock: wall seconds (default), or the CPU seconds the\n"
            "                      process used divided by the machine's cores, which is wall time\n"
            "                      on a machine of its own and counts only what the run got on a\n"
            "                      shared one (so recipes sharing a machine get equal budgets)\n"
            "  --from MODEL        generation 0 is MODEL's weights (a curriculum: a 3x3 2048 model\n"
            "                      starting a 4x4 run): every tensor of the same name and shape\n"
            "                      is kept, the others (a dense policy head on another board)\n"
            "                      start afresh; generation 1's games come from it (no bootstrap)\n"
            "  --mpi               one run over the ranks of an MPI job (mpirun -np K gridzero run\n"
            "                      --mpi ...; RUN_DIR on a filesystem every rank sees): self-play\n"
            "                      shards data/gen_NNNN.rS.h5, data-parallel training, the arena's\n"
            "                      games shared; restarted with any K it continues from the files\n\n"
            "One-player games (2048): every model plays arena.games numbered games alone (the\n"
            "same games every generation), promotion compares mean scores (arena.gate > 0: the\n"
            "gain must reach gate x its 95%% interval), and ratings.csv is the score table.\n\n"
            "RUN_DIR holds config.json, models/gen_NNNN.h5, data/gen_NNNN.h5, arena/gen_NNNN.jsonl,\n"
            "arena.jsonl, metrics.jsonl, ratings.csv, best, state.json, clock.json and (with\n"
            "gnuplot) elo.png, elo_time.png (against the run's clock and self-play games) and\n"
            "loss.png; with selfplay.sizes each smaller board's games are in data/gen_NNNN.sSS.h5\n"
            "(docs/run.md). Killed at any moment and started again with the same command, the run\n"
            "continues with the unfinished stage. Ctrl-C stops after the current step.\n");
}

static void default_dir(char *out, size_t len, const char *cfg_path)
{
    if (!cfg_path) {
        snprintf(out, len, "runs/tictactoe");
        return;
    }
    const char *base = strrchr(cfg_path, '/');
    base = base ? base + 1 : cfg_path;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".json"))
        n -= 5;
    snprintf(out, len, "runs/%.*s", (int)n, base);
}

/* The pace of the loop's progress lines (loop_progress): cli_progress's. */
static void pace_start(void *ctx)
{
    cli_progress_init(ctx, 10.0);
}

static bool pace_due(void *ctx)
{
    return cli_progress_due(ctx, 0) != 0;
}

static void report_error(const char *msg) { cli_error("%s", msg); }

int cmd_run(int argc, char **argv)
{
    const char *cfg_path = NULL, *dir = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, gens = 0, rc = EXIT_USAGE;
    bool use_mpi = false;
    loop_opts o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            dir = v, i++;
        } else if (!strcmp(a, "--mpi")) {
            use_mpi = true;
        } else if (!strcmp(a, "--time") && v) {
            if (cli_parse_duration(argv[++i], &o.budget) < 0) {
                cli_error("run: --time: expected a duration such as 90s, 60m or 2h, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--clock") && v) {
            if (strcmp(v, "wall") && strcmp(v, "cpu")) {
                cli_error("run: --clock: expected wall or cpu, got \"%s\"", v);
                goto done;
            }
            o.cpu_clock = !strcmp(argv[++i], "cpu");
        } else if (!strcmp(a, "--from") && v) {
            o.from = v, i++;
        } else if (!strcmp(a, "--generations") && v) {
            if (cli_parse_int(argv[++i], 1, 1000000, &gens) < 0) {
                cli_error("run: --generations: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else {
            cli_error("run: unexpected argument \"%s\" (see gridzero run --help)", a);
            goto done;
        }
    }
    char dirbuf[1024], err[4096];
    if (!dir) {
        default_dir(dirbuf, sizeof dirbuf, cfg_path);
        dir = dirbuf;
    }
    cli_progress pace;
    o.config_path = cfg_path;
    o.sets = sets;
    o.nsets = nsets;
    o.dir = dir;
    o.generations = gens;
    o.mpi = use_mpi;
    o.progress = (loop_progress){pace_start, pace_due, isatty(2) != 0, &pace};
    o.report = report_error;
    int st = loop_run(&o, err, sizeof err);
    if (err[0])
        cli_error("%s", err);
    rc = st == 0 ? EXIT_OK : st == -2 ? EXIT_USAGE : EXIT_FAIL;
done:
    free(sets);
    return rc;
}
