/* gridzero selfplay --follow RUN_DIR — a self-play worker that helps a run from outside
 * it (no MPI needed: any machine that sees the run directory).
 *
 * It reads the run's config (RUN_DIR/config.json), then over and over: reads state.json
 * and best, plays --games games with the best model (in generation 1 with
 * selfplay.bootstrap = rollout: pure MCTS, as the run does) and writes them atomically
 * to data/gen_NNNN.fTAG.h5 (loop/rundata.h), NNNN being the generation whose training
 * has not started yet: state.json's generation + 1 (state.json names the last finished
 * stage; after "selfplay" of generation g, g's training is under way, so new games go
 * to g + 1). The run's trainer reads every file of the generations in its window that
 * exists when its training starts. A file that arrives later ("late": the generation
 * it names was already being trained) misses that training, does not count towards
 * its steps (train.reuse counts the positions present at its start), and is read by
 * the next trainings while its generation is in train.window.
 *
 * With selfplay.simulations_end it searches with the budget of the newest generation
 * whose self-play has started (data/gen_NNNN.simulations.json).
 *
 * It never takes the run's lock and writes nothing else. Seeds: --seed S gives
 * reproducible files (file k of generation g: rng_derive(S, g, k)); by default the seed
 * mixes the run's seed with the host, the pid and the time, so two workers never play
 * the same games. Stops after --files N files, or on Ctrl-C (the game batch in progress
 * is dropped: no partial file).
 */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "loop/loop.h"
#include "loop/rundata.h"
#include "loop/rundir.h"
#include "selfplay/samples.h"
#include "selfplay/selfplay.h"
#include "selfplay/sp_eval.h"

static volatile int follow_stop;
static void follow_on_signal(int sig)
{
    (void)sig;
    follow_stop = 1;
}

static void follow_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero selfplay --follow RUN_DIR [--games N] [--files N] [--seed S]\n"
            "                         [--threads N] [--set KEY=VALUE]...\n\n"
            "A self-play worker for a run in RUN_DIR (started by `gridzero run`, with or without\n"
            "MPI, on any machine that sees RUN_DIR): plays batches of games with the run's best\n"
            "model and adds them as data/gen_NNNN.fTAG.h5 to the generation whose training has not\n"
            "started (state.json's generation + 1). The run's trainer uses every file present when\n"
            "a training starts; a file that comes later is used by the next trainings while its\n"
            "generation is in train.window. The config is the run's (config.json); --set may\n"
            "change only selfplay.threads, net.threads, net.cache and net.max_batch.\n\n"
            "  --games N     games per file (default selfplay.games)\n"
            "  --files N     stop after N files (default: run until Ctrl-C)\n"
            "  --seed S      reproducible seeds (default: from the host, pid and clock)\n"
            "  --threads N   self-play threads (default selfplay.threads; 0 = all cores)\n");
}

/* state.json's generation (0 when there is none yet), -1 when unreadable. */
static int follow_state_gen(const char *dir)
{
    int gen = 0;
    char stage[32];
    int rc = rundir_read_state(dir, &gen, stage, sizeof stage);
    return rc == 0 ? 0 : rc == 1 && gen >= 0 ? gen : -1;
}

/* The best model's path relative to the run directory (from RUN_DIR/best; the
 * generation-0 model before the run wrote one). 0, or -1 when unreadable. */
static int follow_best(const char *dir, char *rel, size_t len)
{
    int rc = rundir_read_best(dir, rel, len, NULL);
    if (rc == 0)
        snprintf(rel, len, "models/gen_0000.h5");
    return rc < 0 ? -1 : 0;
}

static void nap(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
}

int cmd_selfplay_follow(int argc, char **argv)
{
    const char *dir = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, games = -1, files = 0, threads = -1, rc = EXIT_USAGE;
    uint64_t seed = 0;
    bool have_seed = false;
    game *g = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            follow_usage(stdout);
            rc = EXIT_OK;
            goto done;
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--follow") && v) {
            dir = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--games") && v) {
            if (cli_parse_int(argv[++i], 1, 100000000, &games) < 0) {
                cli_error("selfplay --follow: --games: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--files") && v) {
            if (cli_parse_int(argv[++i], 1, 100000000, &files) < 0) {
                cli_error("selfplay --follow: --files: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--threads") && v) {
            if (cli_parse_int(argv[++i], 0, 256, &threads) < 0) {
                cli_error("selfplay --follow: --threads: expected 0..256, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--seed") && v) {
            if (cli_parse_u64(argv[++i], &seed) < 0) {
                cli_error("selfplay --follow: --seed: expected a non-negative integer, got \"%s\"", v);
                goto done;
            }
            have_seed = true;
        } else {
            cli_error("selfplay --follow: unexpected argument \"%s\" (the config, model and output "
                      "come from the run directory; see gridzero selfplay --follow --help)", a);
            goto done;
        }
    }
    if (!dir) {
        cli_error("selfplay --follow: expected the run directory: --follow RUN_DIR");
        goto done;
    }
    for (int i = 0; i < nsets; i++) {
        const char *speed[] = {"selfplay.threads=", "net.threads=", "net.cache=", "net.max_batch=", NULL};
        bool ok = false;
        for (int k = 0; speed[k]; k++)
            ok |= !strncmp(sets[i], speed[k], strlen(speed[k]));
        if (!ok) {
            cli_error("selfplay --follow: --set %s: a worker plays the run's config; only "
                      "selfplay.threads, net.threads, net.cache and net.max_batch may change", sets[i]);
            goto done;
        }
    }
    char cfg_path[RD_PATH], err[1024];
    snprintf(cfg_path, sizeof cfg_path, "%s/config.json", dir);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || stat(cfg_path, &st) != 0) {
        cli_error("selfplay --follow: %s is not a run directory (no %s; start the run first: "
                  "gridzero run -o %s)", dir, cfg_path, dir);
        goto done;
    }
    gz_config c;
    if (cli_load_config(&c, cfg_path, sets, nsets) != 0)
        goto done;
    if (threads >= 0)
        c.selfplay.threads = threads;
    g = game_new(&c.game, err, sizeof err);
    if (!g) {
        cli_error("%s: %s", cfg_path, err);
        goto done;
    }
    if (!have_seed) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = c.seed ^ (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)ts.tv_nsec ^
               ((uint64_t)ts.tv_sec << 30);
        for (const char *h = host; *h; h++)
            seed = seed * 1099511628211ULL ^ (unsigned char)*h;
    }
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    signal(SIGINT, follow_on_signal);
    signal(SIGTERM, follow_on_signal);
    fprintf(stderr, "selfplay --follow: helping the run in %s (Ctrl-C stops)\n", dir);
    rc = EXIT_OK;
    int written = 0, waited = 0;
    int64_t total_games = 0, total_positions = 0;
    double t0 = cli_now();
    while (!follow_stop && (files == 0 || written < files)) {
        int sg = follow_state_gen(dir);
        char rel[512], model[RD_PATH + 600];
        if (sg < 0 || follow_best(dir, rel, sizeof rel) < 0) {
            nap(0.5); /* a file being replaced: read again */
            continue;
        }
        int gen = sg + 1;
        bool rollout = gen == 1 && !strcmp(c.selfplay.bootstrap, "rollout");
        snprintf(model, sizeof model, "%s/%s", dir, rel);
        if (!rollout && stat(model, &st) != 0) {
            if (!waited++)
                fprintf(stderr, "selfplay --follow: waiting for %s\n", model);
            nap(1.0);
            continue;
        }
        /* the run's grown search (selfplay.simulations_end), as it plays now */
        int sims = c.mcts.simulations;
        if (c.selfplay.simulations_end > 0 &&
            rd_sims_latest(dir, gen, c.mcts.simulations, &sims, err, sizeof err) < 0) {
            cli_error("selfplay --follow: %s", err);
            rc = EXIT_FAIL;
            break;
        }
        /* file k of this worker: its own seeds, its own name */
        gz_config fc = c;
        fc.seed = rng_derive(seed, ((uint64_t)gen << 32) + (uint64_t)written);
        sp_evals ev;
        if (sp_evals_init(&ev, &fc, g, rollout ? NULL : model, err, sizeof err) < 0) {
            /* best moved on and the old model went away: try again */
            nap(0.5);
            if (++waited > 120) {
                cli_error("selfplay --follow: %s", err);
                rc = EXIT_FAIL;
                break;
            }
            continue;
        }
        sp_opts o;
        sp_opts_from_config(&o, &fc);
        if (games > 0)
            o.games = games;
        if (rollout)
            loop_sp_bootstrap(&o, &c);
        else
            o.search.simulations = sims;
        o.seed = fc.seed;
        o.generation = gen;
        if (c.selfplay.resign_target > 0 && g->players == 2)
            o.resign_threshold = rd_resign_threshold(dir, gen, c.train.window,
                                                     c.selfplay.resign_target,
                                                     c.selfplay.resign_min_checks);
        o.model = rollout ? "rollout" : rel;
        char *gcfg = sp_game_config_json(&c);
        o.game_config = gcfg;
        o.stop = &follow_stop;
        char tag[128], out[RD_PATH];
        snprintf(tag, sizeof tag, "%s-%ld-%d", host, (long)getpid(), written + 1);
        rd_follower_path(out, dir, gen, tag);
        sp_stats sst;
        int r = sp_run(g, &o, sp_evals_make, &ev, out, &sst, err, sizeof err);
        free(gcfg);
        sp_evals_deinit(&ev);
        if (r == 1)
            break;
        if (r < 0) {
            cli_error("selfplay --follow: %s", err);
            rc = EXIT_FAIL;
            break;
        }
        written++;
        waited = 0;
        total_games += sst.games;
        total_positions += sst.positions;
        int now_gen = follow_state_gen(dir) + 1;
        fprintf(stderr, "selfplay --follow: generation %d (%s, %d simulations): %d games, %lld "
                "positions in %.1f s -> %s%s\n", gen, o.model, o.search.simulations, sst.games,
                (long long)sst.positions, sst.seconds, out,
                now_gen > gen ? " (late: that generation's training had started)" : "");
    }
    printf("selfplay --follow: %d files, %lld games, %lld positions in %.0f s into %s/data\n",
           written, (long long)total_games, (long long)total_positions, cli_now() - t0, dir);
done:
    game_free(g);
    free(sets);
    return rc;
}
