/* gridzero bench search — search throughput: T games stepped together (as a self-play
 * worker steps them), each playing M moves of S simulations, valued by the network of a
 * model (random He weights when no model is given) or by random rollouts. */
#include <string.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "engine/mcts.h"
#include "nn/checkpoint.h"
#include "nn/net_eval.h"
#include "nn/quant.h"
#include "selfplay/selfplay.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero bench search [-c CONFIG] [--set KEY=VALUE]... [-m MODEL | --rollout]\n"
            "                             [--trees T] [--moves M] [--sims S] [--json]\n\n"
            "Plays M moves (default 8) in each of T games (default selfplay.parallel_games)\n"
            "searched together, S simulations a move (default mcts.simulations), with\n"
            "mcts.batch leaves per tree per evaluator call, on one thread; the evaluator is the\n"
            "network of MODEL (random weights when none; with net.precision int8 they are\n"
            "calibrated on random positions first), or random rollouts (--rollout).\n"
            "The search is self-play's: the mcts.vcf_* checks only with\n"
            "--set selfplay.threat_checks=true.\n"
            "Prints simulations/s, positions evaluated/s, the mean evaluator batch, the\n"
            "cache hit rate and, with a network, the share of the wall time spent in its\n"
            "forward pass (oneDNN and the heads), in the evaluator around it, and in the\n"
            "search and the rules (leaving out the time oneDNN spent building its plans for\n"
            "new batch sizes, printed apart); --json prints one JSON object.\n");
}

/* Random weights asked to run int8: calibrated on 256 random positions (as bench nn). */
static int calibrate_random(nn_params *p, const game *g, uint64_t seed, char *err, size_t errlen)
{
    enum { N = 256 };
    float *in = malloc(sizeof(float) * N * (size_t)g->planes * (size_t)g->rows * (size_t)g->cols);
    uint8_t *legal = malloc((size_t)N * (size_t)g->actions);
    int rc = -1;
    if (!in || !legal || cli_random_positions(g, N, seed, in, legal) < 0)
        snprintf(err, errlen, "out of memory");
    else
        rc = nn_calibrate(p, g->rows, g->cols, N, in, 0, err, errlen);
    free(in);
    free(legal);
    return rc;
}

int cmd_bench_search(int argc, char **argv)
{
    const char *cfg_path = NULL, *model = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, trees = 0, moves = 8, sims = 0, rollout = 0, json = 0, rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && v) {
            model = argv[++i];
        } else if (!strcmp(a, "--rollout")) {
            rollout = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--trees") && v) {
            if (cli_parse_int(argv[++i], 1, 4096, &trees) < 0) {
                cli_error("bench search: --trees: expected 1..4096, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--moves") && v) {
            if (cli_parse_int(argv[++i], 1, 100000, &moves) < 0) {
                cli_error("bench search: --moves: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--sims") && v) {
            if (cli_parse_int(argv[++i], 1, 10000000, &sims) < 0) {
                cli_error("bench search: --sims: expected a number >= 1, got \"%s\"", v);
                goto done;
            }
        } else {
            cli_error("bench search: unexpected argument \"%s\" (see gridzero bench search --help)", a);
            goto done;
        }
    }
    if (model && rollout) {
        cli_error("bench search: -m and --rollout exclude each other");
        goto done;
    }
    gz_config c;
    if ((rc = cli_load_config(&c, cfg_path, sets, nsets)) != 0)
        goto done;
    rc = EXIT_USAGE;
    char err[1024];
    game *g = game_new(&c.game, err, sizeof err);
    if (!g) {
        cli_error("%s", err);
        goto done;
    }
    if (trees == 0)
        trees = c.selfplay.parallel_games;
    /* the evaluator */
    evaluator *e = NULL;
    if (rollout) {
        e = eval_rollout_new(g, c.mcts.rollouts, c.seed);
    } else {
        nn_params *p = NULL;
        if (model) {
            p = nn_ckpt_load(model, g, NULL, err, sizeof err);
        } else {
            nn_spec spec;
            if (nn_spec_from_config(&spec, &c.net, g, err, sizeof err) == 0 &&
                (p = nn_params_new(&spec, err, sizeof err)))
                nn_params_init_he(p, c.seed);
        }
        net_eval_opts o;
        if (p && !model && !strcmp(c.net.precision, "int8") && nn_cpu_has_vnni() &&
            calibrate_random(p, g, c.seed, err, sizeof err) < 0) {
            nn_params_free(p);
            p = NULL;
        }
        if (p && net_eval_opts_from_config(&o, &c, err, sizeof err) == 0) {
            int want = c.mcts.batch * trees;
            o.max_batch = want < NN_MAX_BATCH ? want : NN_MAX_BATCH;
            e = net_eval_new(g, p, &o, err, sizeof err);
        }
        nn_params_free(p);
    }
    if (!e) {
        cli_error("bench search: %s", err);
        game_free(g);
        goto done;
    }
    mcts_params mp;
    sp_search_from_config(&mp, &c); /* self-play's search: the VCF checks only if asked */
    if (sims > 0)
        mp.simulations = sims;
    if (rollout)
        mcts_params_pure(&mp);
    mcts **t = calloc((size_t)trees, sizeof *t);
    mcts **live = calloc((size_t)trees, sizeof *live);
    mcts_batch *b = mcts_batch_new(g, trees * mp.batch);
    rc = EXIT_FAIL;
    for (int i = 0; i < trees; i++) {
        t[i] = mcts_new(g, &mp, rng_derive(c.seed, (uint64_t)i), err, sizeof err);
        if (!t[i]) {
            cli_error("bench search: %s", err);
            goto out;
        }
    }
    int64_t simulations = 0, calls = 0, leaves = 0, played = 0;
    double t0 = cli_now();
    for (int m = 0; m < moves; m++) {
        int n = 0;
        for (int i = 0; i < trees; i++)
            if (!game_terminal(g, mcts_root_state(t[i]))) {
                mcts_begin(t[i]);
                live[n++] = t[i];
            }
        if (n == 0)
            break;
        for (;;) {
            int busy = 0;
            for (int i = 0; i < n && !busy; i++)
                busy = !mcts_done(live[i]);
            if (!busy)
                break;
            int k = mcts_step_many(live, n, b, e, err, sizeof err);
            if (k < 0) {
                cli_error("bench search: %s", err);
                goto out;
            }
            calls += k > 0;
            leaves += k;
        }
        for (int i = 0; i < n; i++) {
            mcts_result res;
            mcts_finish(live[i], NULL, &res);
            simulations += res.stats.simulations;
            mcts_play(live[i], res.action);
            played++;
        }
    }
    double dt = cli_now() - t0;
    double hit = e->positions ? (double)e->cache_hits / (double)e->positions : 0;
    net_eval_times nt;
    bool net = net_eval_times_get(e, &nt);
    /* shares of the time after the oneDNN plans were built (a one-time cost per batch size) */
    double run = dt - nt.setup_s + 1e-9;
    double fwd = nt.forward_s / run, glue = (nt.evaluate_s - nt.forward_s - nt.setup_s) / run;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "evaluator", rollout ? "rollout" : model ? model : "random-net");
        cJSON_AddNumberToObject(o, "trees", trees);
        cJSON_AddNumberToObject(o, "moves", (double)played);
        cJSON_AddNumberToObject(o, "simulations", (double)simulations);
        cJSON_AddNumberToObject(o, "seconds", dt);
        cJSON_AddNumberToObject(o, "simulations_per_s", simulations / (dt + 1e-9));
        cJSON_AddNumberToObject(o, "positions_per_s", leaves / (dt + 1e-9));
        cJSON_AddNumberToObject(o, "mean_batch", calls ? (double)leaves / calls : 0);
        cJSON_AddNumberToObject(o, "cache_hit_rate", hit);
        if (net) {
            cJSON_AddStringToObject(o, "precision", nn_precision_name(net_eval_precision(e)));
            if (net_eval_precision(e) == NN_PREC_INT8)
                cJSON_AddStringToObject(o, "int8_kernel", strchr(net_eval_kind(e), '/') + 1);
            cJSON_AddNumberToObject(o, "forward_share", fwd);
            cJSON_AddNumberToObject(o, "evaluator_glue_share", glue);
            cJSON_AddNumberToObject(o, "search_share", 1 - fwd - glue);
            cJSON_AddNumberToObject(o, "forward_seconds", nt.forward_s);
            cJSON_AddNumberToObject(o, "plan_seconds", nt.setup_s);
            cJSON_AddNumberToObject(o, "forwards", (double)nt.forwards);
        }
        char *s = cJSON_PrintUnformatted(o);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
    } else {
        printf("bench search: %s, %d trees x %lld moves, %d simulations a move, batch %d a tree\n",
               rollout ? "rollout evaluator" : model ? model : "random-weight network", trees,
               (long long)(played / trees), mp.simulations, mp.batch);
        printf("  %lld simulations in %.2f s: %.0f simulations/s; %.0f positions evaluated/s; "
               "mean evaluator batch %.1f; cache hits %.1f%%\n", (long long)simulations, dt,
               simulations / (dt + 1e-9), leaves / (dt + 1e-9), calls ? (double)leaves / calls : 0,
               100 * hit);
        if (net)
            printf("  time (wall, after %.2f s of building oneDNN plans): network forward pass "
                   "%.1f%% (%s, %llu batches), evaluator glue (cache, encoding, symmetries, "
                   "copies) %.1f%%, search and rules %.1f%%\n", nt.setup_s, 100 * fwd,
                   net_eval_kind(e), (unsigned long long)nt.forwards,
                   100 * glue, 100 * (1 - fwd - glue));
    }
    rc = EXIT_OK;
out:
    for (int i = 0; i < trees; i++)
        mcts_free(t[i]);
    free(t);
    free(live);
    mcts_batch_free(b);
    evaluator_free(e);
    game_free(g);
done:
    free(sets);
    return rc;
}
