/* gridzero selfplay -c CONFIG [-m MODEL] -o FILE.h5 [--games N] */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "selfplay/sp_eval.h"

static void selfplay_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero selfplay [-c CONFIG] [--set KEY=VALUE]... [-m MODEL] -o FILE.h5\n"
            "                         [--games N] [--threads N] [--seed S] [--generation G]\n\n"
            "Plays games of the search against itself and writes every position as a sample\n"
            "(encoded state, visit distribution pi, legal moves, outcome z) to FILE.h5 — written\n"
            "as FILE.h5.tmp and renamed when complete. The search uses the network of MODEL,\n"
            "or with no -m, pure MCTS with random rollouts (selfplay.bootstrap_simulations\n"
            "simulations per move: how generation 0 makes its data). Root Dirichlet noise and\n"
            "the temperature schedule come from the mcts section; resignation from selfplay.\n\n"
            "  -c, --config FILE  the config (default: the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE    override a config key\n"
            "  -m, --model FILE   the network checkpoint to play with\n"
            "  -o, --output FILE  the sample file to write\n"
            "  --games N          games (default selfplay.games)\n"
            "  --threads N        worker threads (default selfplay.threads; 0 = all cores)\n"
            "  --seed S           seed (default: the config's)\n"
            "  --generation G     generation number stored in the file (default 0)\n\n"
            "gridzero selfplay --follow RUN_DIR: a worker that adds games to a running `gridzero run`\n"
            "(see gridzero selfplay --follow --help).\n");
}

static volatile int stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct sp_progress_ctx {
    cli_progress p;
} sp_progress_ctx;

static void on_progress(void *ctx, const sp_stats *st, int total)
{
    sp_progress_ctx *x = ctx;
    if (!cli_progress_due(&x->p, st->games == total))
        return;
    double dt = cli_now() - x->p.start;
    double rate = dt > 0 ? (double)st->positions / dt : 0;
    double eta = st->games > 0 ? dt * (total - st->games) / st->games : 0;
    fprintf(stderr, "selfplay: %d/%d games, %lld positions, %.0f positions/s, ETA %.0f s%s",
            st->games, total, (long long)st->positions, rate, eta, x->p.tty ? "   " : "\n");
    if (x->p.tty && st->games == total)
        fputc('\n', stderr);
}

int cmd_selfplay(int argc, char **argv)
{
    const char *cfg_path = NULL, *model = NULL, *out = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, games = -1, threads = -1, gen = 0;
    uint64_t seed = 0;
    int have_seed = 0, rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--follow")) {
            free(sets);
            return cmd_selfplay_follow(argc, argv);
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            selfplay_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && v) {
            model = v, i++;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            out = v, i++;
        } else if (!strcmp(a, "--games") && v) {
            if (cli_parse_int(argv[++i], 1, 100000000, &games) < 0) {
                cli_error("selfplay: --games: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--threads") && v) {
            if (cli_parse_int(argv[++i], 0, 256, &threads) < 0) {
                cli_error("selfplay: --threads: expected 0..256, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--generation") && v) {
            if (cli_parse_int(argv[++i], 0, 1000000000, &gen) < 0) {
                cli_error("selfplay: --generation: expected a number >= 0, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--seed") && v) {
            if (cli_parse_u64(argv[++i], &seed) < 0) {
                cli_error("selfplay: --seed: expected a non-negative integer, got \"%s\"", v);
                goto done;
            }
            have_seed = 1;
        } else {
            cli_error("selfplay: unexpected argument \"%s\" (see gridzero selfplay --help)", a);
            goto done;
        }
    }
    if (!out) {
        cli_error("selfplay: -o FILE.h5 is required (see gridzero selfplay --help)");
        goto done;
    }
    struct stat ost;
    if (stat(out, &ost) == 0 && S_ISDIR(ost.st_mode)) {
        cli_error("selfplay: -o %s is a directory; expected a file name (FILE.h5)", out);
        goto done;
    }
    gz_config c;
    if ((rc = cli_load_config(&c, cfg_path, sets, nsets)) != 0)
        goto done;
    rc = EXIT_USAGE;
    if (have_seed)
        c.seed = seed;
    if (threads >= 0)
        c.selfplay.threads = threads;
    char err[1024];
    game *g = game_new(&c.game, err, sizeof err);
    if (!g) {
        cli_error("%s", err);
        goto done;
    }
    opening_book *book = NULL;
    if (c.selfplay.openings[0] && !(book = openings_load(g, c.selfplay.openings, err, sizeof err))) {
        cli_error("selfplay.openings: %s", err);
        game_free(g);
        goto done;
    }
    sp_evals ev;
    if (sp_evals_init(&ev, &c, g, model, err, sizeof err) < 0) {
        cli_error("%s", err);
        openings_free(book);
        game_free(g);
        goto done;
    }
    sp_opts o;
    sp_opts_from_config(&o, &c);
    o.book = book;
    if (games > 0)
        o.games = games;
    if (!model) {
        o.search.simulations = c.selfplay.bootstrap_simulations;
        mcts_params_pure(&o.search);
        o.pure = true;
        if (g->players == 1 && game_scored(g)) /* seed 003: the trees' nodes */
            o.export_min_visits = c.selfplay.bootstrap_export;
    }
    o.generation = gen;
    o.model = model ? model : "rollout";
    char *gcfg = sp_game_config_json(&c);
    o.game_config = gcfg;
    sp_progress_ctx pc;
    cli_progress_init(&pc.p, 5.0);
    o.progress = on_progress;
    o.progress_ctx = &pc;
    o.stop = &stop_flag;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    sp_stats st;
    int r = sp_run(g, &o, sp_evals_make, &ev, out, &st, err, sizeof err);
    if (r < 0) {
        cli_error("selfplay: %s", err);
        rc = EXIT_FAIL;
    } else if (r == 1) {
        cli_error("selfplay: interrupted: nothing written");
        rc = EXIT_FAIL;
    } else {
        printf("selfplay: %d games, %lld positions in %.1f s (%.0f positions/s, %.0f simulations/s);",
               st.games, (long long)st.positions, st.seconds, st.positions / (st.seconds + 1e-9),
               st.simulations / (st.seconds + 1e-9));
        if (g->players == 1) {
            printf(" mean score %.1f", st.games ? st.score_sum / st.games : 0.0);
            if (st.best_tile >= 0 && st.best_tile < 53)
                printf(", largest tile %llu", 1ull << st.best_tile);
            if (o.export_min_visits > 0)
                printf(" (samples: the search trees' nodes with >= %d visits)", o.export_min_visits);
        } else {
            for (int k = 0; k < g->players; k++)
                printf(" seat %d won %d,", k + 1, st.seat_wins[k]);
            printf(" no single winner %d; resigned %d; false resignations %d/%d in the no-resign games",
                   st.draws, st.resigned, st.resign_false, st.resign_checked);
        }
        printf("; written to %s\n", out);
        rc = EXIT_OK;
    }
    free(gcfg);
    sp_evals_deinit(&ev);
    openings_free(book);
    game_free(g);
done:
    free(sets);
    return rc;
}
