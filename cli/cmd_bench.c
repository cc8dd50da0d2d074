/* gridzero bench WHAT: throughput measurements. `nn`: the network's forward pass,
 * oneDNN and the reference, at several batch sizes. Other benchmarks add a row to the
 * table at the bottom. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "engine/game.h"
#include "nn/checkpoint.h"
#include "nn/infer.h"
#include "nn/quant.h"

#define MAX_BATCHES 16
#define MAX_PRECS 4

static void bench_nn_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero bench nn [-c CONFIG] [--set KEY=VALUE]... [-m MODEL]\n"
            "                         [--batches 1,8,32,64,256] [--precision P[,P...]]\n"
            "                         [--threads N] [--repeats R] [--no-ref] [--json] [--save FILE]\n\n"
            "Times the network of CONFIG (random He weights, seed from the config) or of MODEL:\n"
            "oneDNN inference at each batch size (median of R timed repeats of at least 0.2 s\n"
            "each, after a warm-up) and the plain-C reference forward (batches 1 and 8 only: it\n"
            "is slow and its speed does not depend on the batch). Inputs are encodings of random\n"
            "positions of the config's game. Prints positions/s, ms per batch and GFLOP/s (from\n"
            "the FLOP count of `gridzero info`; GOP/s in int8), the share of the peak of the\n"
            "precision's arithmetic (one core's, measured first: fp32 FMAs, bf16 vdpbf16ps or\n"
            "int8 vpdpbusd dot products, times the threads) and the process CPU time per\n"
            "batch (on a shared machine, wall time over CPU time shows the share of the cores\n"
            "the run got);\n"
            "P is auto, fp32, bf16, int8, int8:onednn, int8:direct or int8:winograd (default\n"
            "net.precision; int8's kernel from net.int8_kernel unless named; Winograd's\n"
            "GOP/s and share of the peak count a direct convolution's operations, so they\n"
            "can pass 100%%); auto picks what a\n"
            "self-play worker would. int8 needs a calibrated MODEL (gridzero quantize); random\n"
            "weights are calibrated on the benchmark's own positions first. Several\n"
            "precisions (--precision int8,bf16) are timed interleaved, repeat by repeat, and\n"
            "compared by their best and median times: on a shared machine only such ratios\n"
            "mean much.\n"
            "--json prints one JSON object. --save writes\n"
            "the random model to FILE (a checkpoint of generation 0).\n");
}

int cli_random_positions(const game *g, int n, uint64_t seed, float *in, uint8_t *legal)
{
    game_state *st = malloc(g->state_size);
    if (!st)
        return -1;
    size_t per = (size_t)g->planes * (size_t)g->rows * (size_t)g->cols;
    rng r;
    rng_seed(&r, seed);
    for (int b = 0; b < n; b++) {
        uint8_t *m = legal + (size_t)b * g->actions;
        game_init(g, st, &r);
        int plies = (int)rng_below(&r, (uint32_t)(g->max_game_length / 3 + 1));
        for (int k = 0; k < plies && !game_terminal(g, st); k++) {
            int nl = game_legal(g, st, m);
            uint32_t pick = rng_below(&r, (uint32_t)nl);
            for (int a = 0; a < g->actions; a++)
                if (m[a] && pick-- == 0) {
                    game_play(g, st, a);
                    game_resolve_chance(g, st, &r); /* 2048's spawn; nothing elsewhere */
                    break;
                }
        }
        if (game_terminal(g, st))
            game_init(g, st, &r);
        game_encode(g, st, in + per * (size_t)b);
        game_legal(g, st, m);
    }
    free(st);
    return 0;
}

typedef struct bench_row {
    int batch;
    double ms, pps, gflops; /* median */
    double best_ms;         /* the fastest repeat */
    double cpu_ms; /* process CPU time per batch (all threads): on a shared machine,
                      wall time / CPU time shows how much of the cores we actually got */
} bench_row;

/* Times fn over `reps` repeats; each repeat runs enough iterations for >= min_s. */
typedef struct runner {
    nn_infer *ctx;           /* NULL: reference */
    const nn_params *p;
    int rows, cols;
    const float *in;
    const uint8_t *legal;
    float *pol, *val;
} runner;

static int run_once(runner *r, int n, char *err, size_t errlen)
{
    if (r->ctx)
        return nn_infer_run(r->ctx, n, r->in, r->legal, r->pol, r->val, err, errlen);
    return nn_ref_forward(r->p, r->rows, r->cols, n, r->in, r->legal, r->pol, r->val, NULL, err,
                          errlen);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof(double), cli_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Times batch n on the nr runners r, interleaved: each repeat runs every runner in turn
 * for >= min_s (its iteration count from one timed run after a warm-up that builds the
 * plan), so that a change of the machine's load hits all of them alike. */
static int time_batch(runner *r, int nr, int n, int reps, double min_s, double flops,
                      bench_row *row, char *err, size_t errlen)
{
    int iters[MAX_PRECS];
    for (int j = 0; j < nr; j++) {
        if (run_once(&r[j], n, err, errlen) < 0) /* warm-up: builds the plan */
            return -1;
        double t0 = cli_now();
        if (run_once(&r[j], n, err, errlen) < 0)
            return -1;
        double one = cli_now() - t0;
        iters[j] = one > 0 ? (int)(min_s / one) + 1 : 1000;
        if (iters[j] > 100000)
            iters[j] = 100000;
    }
    double ms[MAX_PRECS][64], cms[MAX_PRECS][64];
    if (reps > 64)
        reps = 64;
    for (int k = 0; k < reps; k++)
        for (int j = 0; j < nr; j++) {
            double t0 = cli_now(), c0 = cli_cpu_now();
            for (int i = 0; i < iters[j]; i++)
                if (run_once(&r[j], n, err, errlen) < 0)
                    return -1;
            ms[j][k] = (cli_now() - t0) * 1e3 / iters[j];
            cms[j][k] = (cli_cpu_now() - c0) * 1e3 / iters[j];
        }
    for (int j = 0; j < nr; j++) {
        bench_row *w = &row[j];
        w->batch = n;
        w->cpu_ms = median(cms[j], reps);
        w->ms = median(ms[j], reps);
        w->best_ms = ms[j][0]; /* sorted by median() */
        w->pps = n * 1e3 / w->ms;
        w->gflops = w->pps * flops / 1e9;
    }
    return 0;
}

/* peak: the run's peak in G(FL)OP/s (one core's times the threads); 0 = not known */
static cJSON *rows_json(const bench_row *rows, int n, double peak)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "batch", rows[i].batch);
        cJSON_AddNumberToObject(o, "positions_per_s", rows[i].pps);
        cJSON_AddNumberToObject(o, "ms_per_batch", rows[i].ms);
        cJSON_AddNumberToObject(o, "best_ms_per_batch", rows[i].best_ms);
        cJSON_AddNumberToObject(o, "gflops", rows[i].gflops);
        cJSON_AddNumberToObject(o, "cpu_ms_per_batch", rows[i].cpu_ms);
        if (peak > 0)
            cJSON_AddNumberToObject(o, "peak_share", rows[i].gflops / peak);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static int bench_nn(int argc, char **argv)
{
    const char *cfg_path = NULL, *model = NULL, *prec_word = NULL, *save = NULL;
    char **sets = malloc(sizeof(char *) * (size_t)(argc + 1));
    int nsets = 0, threads = -1, reps = 5, nb = 0, json = 0, ref = 1;
    int batches[MAX_BATCHES];
    const char *blist = "1,8,32,64,256";
    int rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            bench_nn_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && v) {
            model = v, i++;
        } else if (!strcmp(a, "--batches") && v) {
            blist = v, i++;
        } else if (!strcmp(a, "--precision") && v) {
            prec_word = v, i++;
        } else if (!strcmp(a, "--threads") && v) {
            i++;
            if (cli_parse_int(v, 0, 256, &threads) < 0) {
                cli_error("bench nn: --threads: expected an integer in 0..256, got \"%s\"", v);
                goto out;
            }
        } else if (!strcmp(a, "--repeats") && v) {
            i++;
            if (cli_parse_int(v, 1, 64, &reps) < 0) {
                cli_error("bench nn: --repeats: expected an integer in 1..64, got \"%s\"", v);
                goto out;
            }
        } else if (!strcmp(a, "--save") && v) {
            save = v, i++;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-ref")) {
            ref = 0;
        } else {
            cli_error("bench nn: unexpected argument \"%s\" (see gridzero bench nn --help)", a);
            goto out;
        }
    }
    for (const char *q = blist; *q;) {
        char *end;
        long b = strtol(q, &end, 10);
        if (end == q || b < 1 || b > NN_MAX_BATCH || nb == MAX_BATCHES || (*end && *end != ',')) {
            cli_error("bench nn: --batches: expected up to %d comma-separated sizes in 1..%d, got "
                      "\"%s\"", MAX_BATCHES, NN_MAX_BATCH, blist);
            goto out;
        }
        batches[nb++] = (int)b;
        q = *end ? end + 1 : end;
    }
    gz_config c;
    rc = EXIT_USAGE;
    game *g = cli_load_game(&c, cfg_path, sets, nsets);
    if (!g)
        goto out;
    char err[512];
    nn_params *p = NULL;
    if (model) {
        p = nn_ckpt_load(model, g, NULL, err, sizeof err);
    } else {
        nn_spec s;
        if (nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0 &&
            (p = nn_params_new(&s, err, sizeof err)) != NULL)
            nn_params_init_he(p, c.seed);
    }
    if (!p) {
        cli_error("%s", err);
        game_free(g);
        goto out;
    }
    if (save && nn_ckpt_save(save, p, NULL, NULL, 0, err, sizeof err) < 0) {
        cli_error("%s", err);
        nn_params_free(p);
        game_free(g);
        goto out;
    }
    nn_precision prec[MAX_PRECS];
    nn_int8_kernel kern[MAX_PRECS];
    const char *label[MAX_PRECS];
    nn_int8_kernel kdef;
    if (nn_int8_kernel_parse(c.net.int8_kernel, &kdef) < 0) {
        cli_error("bench nn: key net.int8_kernel: expected auto, onednn, direct or winograd, got \"%s\"",
                  c.net.int8_kernel);
        nn_params_free(p);
        game_free(g);
        goto out;
    }
    int np = 0;
    const char *plist = prec_word ? prec_word : c.net.precision;
    for (const char *q = plist; *q;) {
        char word[24];
        size_t len = strcspn(q, ",");
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), q);
        /* int8:onednn, int8:direct: one int8 kernel (net.int8_kernel) for this run */
        char *colon = strchr(word, ':');
        kern[np] = kdef;
        if (colon)
            *colon = 0;
        if (np == MAX_PRECS || len >= sizeof word || nn_precision_parse(word, &prec[np]) < 0 ||
            (colon && (prec[np] != NN_PREC_INT8 || nn_int8_kernel_parse(colon + 1, &kern[np]) < 0))) {
            cli_error("bench nn: precision: expected up to %d of auto, fp32, bf16, int8, "
                      "int8:onednn, int8:direct separated by commas, got \"%s\"", MAX_PRECS, plist);
            nn_params_free(p);
            game_free(g);
            goto out;
        }
        np++;
        q += len;
        q += *q == ',';
    }
    if (threads < 0)
        threads = c.net.threads;
    int eff_threads = threads > 0 ? threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    rc = EXIT_FAIL;
    int maxb = 8;
    for (int i = 0; i < nb; i++)
        maxb = batches[i] > maxb ? batches[i] : maxb;
    size_t per = (size_t)g->planes * g->rows * g->cols;
    float *in = malloc(sizeof(float) * per * (size_t)maxb);
    uint8_t *legal = malloc((size_t)g->actions * (size_t)maxb);
    float *pol = malloc(sizeof(float) * (size_t)g->actions * (size_t)maxb);
    float *val = malloc(sizeof(float) * (size_t)g->players * (size_t)maxb);
    nn_infer *ctx[MAX_PRECS] = {0};
    if (!in || !legal || !pol || !val || cli_random_positions(g, maxb, c.seed, in, legal) < 0) {
        cli_error("bench nn: out of memory");
        goto done;
    }
    bool want8 = false;
    for (int j = 0; j < np; j++)
        want8 |= prec[j] == NN_PREC_INT8;
    if (want8 && !model && nn_cpu_has_vnni() &&
        nn_calibrate(p, g->rows, g->cols, maxb, in, threads, err, sizeof err) < 0) {
        cli_error("bench nn: calibrating the random weights: %s", err);
        goto done;
    }
    if (want8 && nn_int8_check(p, err, sizeof err) < 0) {
        cli_error("bench nn: %s: %s", model ? model : "random weights", err);
        rc = EXIT_USAGE;
        goto done;
    }
    double flops = nn_spec_flops(&p->layout.spec, g->rows, g->cols);
    bench_row rows[MAX_BATCHES][MAX_PRECS], rrows[2];
    int nref = 0;
    runner rn[MAX_PRECS];
    for (int j = 0; j < np; j++) {
        ctx[j] = nn_infer_new(p, g->rows, g->cols, prec[j], threads, err, sizeof err);
        if (!ctx[j] || nn_infer_set_int8_kernel(ctx[j], kern[j], err, sizeof err) < 0) {
            cli_error("%s", err);
            rc = ctx[j] ? EXIT_USAGE : rc;
            goto done;
        }
        prec[j] = nn_infer_precision(ctx[j]);
        label[j] = nn_infer_kind(ctx[j]);
        rn[j] = (runner){ctx[j], p, g->rows, g->cols, in, legal, pol, val};
    }
    /* each precision's arithmetic peak (one core, measured), for the share of it reached:
     * the FLOP count of a direct convolution against fp32 FMAs, bf16 dot products or int8
     * VNNI dot products */
    double peak[MAX_PRECS];
    int lanes[MAX_PRECS];
    for (int j = 0; j < np; j++) {
        cli_peak_kind k = prec[j] == NN_PREC_INT8   ? CLI_PEAK_INT8
                          : prec[j] == NN_PREC_BF16 ? CLI_PEAK_BF16
                                                    : CLI_PEAK_FP32;
        peak[j] = cli_peak_measure(k, &lanes[j]);
    }
    for (int i = 0; i < nb; i++)
        if (time_batch(rn, np, batches[i], reps, 0.2, flops, rows[i], err, sizeof err) < 0) {
            cli_error("%s", err);
            goto done;
        }
    if (ref) {
        runner rr = {NULL, p, g->rows, g->cols, in, legal, pol, val};
        int rb[2] = {1, 8};
        for (nref = 0; nref < 2; nref++)
            if (time_batch(&rr, 1, rb[nref], reps < 3 ? reps : 3, 0.0, flops, &rrows[nref], err,
                           sizeof err) < 0) {
                cli_error("%s", err);
                goto done;
            }
    }
    const nn_spec *s = &p->layout.spec;
    if (json) {
        cJSON *o = cJSON_CreateObject();
        char *sj = nn_spec_to_json(s);
        cJSON_AddItemToObject(o, "spec", cJSON_Parse(sj));
        free(sj);
        cJSON_AddStringToObject(o, "model", model ? model : "random");
        cJSON_AddStringToObject(o, "precision", nn_precision_name(prec[0]));
        cJSON_AddNumberToObject(o, "threads", eff_threads);
        cJSON_AddNumberToObject(o, "flops_per_position", flops);
        cJSON *runs = cJSON_AddArrayToObject(o, "runs");
        for (int j = 0; j < np; j++) {
            bench_row col[MAX_BATCHES];
            for (int i = 0; i < nb; i++)
                col[i] = rows[i][j];
            double pk = peak[j] * eff_threads;
            if (j == 0) /* the first precision's rows, as before runs existed */
                cJSON_AddItemToObject(o, "batches", rows_json(col, nb, pk));
            cJSON *ro = cJSON_CreateObject();
            cJSON_AddStringToObject(ro, "precision", nn_precision_name(prec[j]));
            if (prec[j] == NN_PREC_INT8)
                cJSON_AddStringToObject(ro, "int8_kernel",
                                        nn_int8_kernel_name(nn_infer_int8_kernel(ctx[j])));
            if (peak[j] > 0)
                cJSON_AddNumberToObject(ro, "core_peak_gops", peak[j]);
            cJSON_AddItemToObject(ro, "batches", rows_json(col, nb, pk));
            cJSON_AddItemToArray(runs, ro);
        }
        if (ref) {
            cJSON *ro = cJSON_AddObjectToObject(o, "reference");
            cJSON_AddItemToObject(ro, "batches", rows_json(rrows, nref, 0));
        }
        char *txt = cJSON_PrintUnformatted(o);
        printf("%s\n", txt);
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("network: %s, %d %s block%s x %d channels, %dx%d %s, %d players; %.1f MFLOP/position\n",
               model ? model : "random weights", s->blocks, nn_trunk_name(s->trunk),
               s->blocks == 1 ? "" : "s", s->channels,
               g->rows, g->cols, nn_lattice_name(s->lattice), s->players, flops / 1e6);
        for (int j = 0; j < np; j++) {
            static const char *const instr[] = {"FMAs", "vdpbf16ps", "vpdpbusd"};
            int k = prec[j] == NN_PREC_INT8 ? 2 : prec[j] == NN_PREC_BF16 ? 1 : 0;
            double pk = peak[j] * eff_threads;
            printf("%s %s, %d threads (median of %d repeats%s)\n",
                   prec[j] != NN_PREC_INT8                                   ? "oneDNN"
                   : nn_infer_int8_kernel(ctx[j]) == NN_INT8_DIRECT   ? "direct VNNI"
                   : nn_infer_int8_kernel(ctx[j]) == NN_INT8_WINOGRAD ? "Winograd VNNI"
                                                                      : "oneDNN",
                   label[j],
                   eff_threads, reps, np > 1 ? ", interleaved with the other precisions" : "");
            if (peak[j] > 0)
                printf("  %s peak of one core, measured (%d-lane %s, best of 10 x 20 ms of "
                       "CPU): %.1f G%s/s; %d thread%s: %.1f\n", nn_precision_name(prec[j]),
                       lanes[j], instr[k], peak[j], k == 2 ? "OP" : "FLOP", eff_threads,
                       eff_threads > 1 ? "s" : "", pk);
            else
                printf("  (no %s peak measured: the CPU lacks %s)\n", nn_precision_name(prec[j]),
                       instr[k]);
            printf("  %6s %14s %12s %12s %10s %8s %16s\n", "batch", "positions/s", "ms/batch",
                   "best ms", k == 2 ? "GOP/s" : "GFLOP/s", "% peak", "CPU ms/batch");
            for (int i = 0; i < nb; i++) {
                const bench_row *w = &rows[i][j];
                char share[16] = "-";
                if (pk > 0)
                    snprintf(share, sizeof share, "%.0f%%", 100 * w->gflops / pk);
                printf("  %6d %14.1f %12.3f %12.3f %10.1f %8s %16.3f\n", w->batch, w->pps, w->ms,
                       w->best_ms, w->gflops, share, w->cpu_ms);
            }
        }
        for (int j = 1; j < np; j++)
            for (int i = 0; i < nb; i++)
                printf("%s / %s at batch %d: %.2fx (best repeats), %.2fx (medians), %.2fx (CPU "
                       "time medians)\n", label[0], label[j],
                       batches[i], rows[i][j].best_ms / rows[i][0].best_ms,
                       rows[i][j].ms / rows[i][0].ms, rows[i][j].cpu_ms / rows[i][0].cpu_ms);
        if (ref) {
            printf("reference forward (plain C, one thread)\n");
            printf("  %6s %14s %12s %12s %10s %16s\n", "batch", "positions/s", "ms/batch",
                   "best ms", "GFLOP/s", "CPU ms/batch");
            for (int i = 0; i < nref; i++)
                printf("  %6d %14.1f %12.3f %12.3f %10.1f %16.3f\n", rrows[i].batch, rrows[i].pps,
                       rrows[i].ms, rrows[i].best_ms, rrows[i].gflops, rrows[i].cpu_ms);
        }
    }
    rc = EXIT_OK;
done:
    for (int j = 0; j < MAX_PRECS; j++)
        nn_infer_free(ctx[j]);
    free(in), free(legal), free(pol), free(val);
    nn_params_free(p);
    game_free(g);
out:
    free(sets);
    return rc;
}

typedef struct bench_kind {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} bench_kind;

static const bench_kind benches[] = {
    {"nn", bench_nn, "network forward: oneDNN and the reference, by batch size"},
    {"train", cmd_bench_train, "training steps (forward, backward, optimizer): samples/s"},
    {"search", cmd_bench_search, "PUCT search over many games at once: simulations/s"},
    {"rules", cmd_bench_rules, "renju's forbidden-point check: ns per point, legal() and encode()"},
};
#define NBENCHES (sizeof benches / sizeof benches[0])

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2)
        for (size_t i = 0; i < NBENCHES; i++)
            if (!strcmp(argv[1], benches[i].name))
                return benches[i].run(argc - 1, argv + 1);
    FILE *f = argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? stdout : stderr;
    if (argc >= 2 && f == stderr)
        cli_error("bench: unknown benchmark \"%s\"", argv[1]);
    fprintf(f, "usage: gridzero bench WHAT [OPTIONS]   (gridzero bench WHAT --help)\n");
    for (size_t i = 0; i < NBENCHES; i++)
        fprintf(f, "  %-8s %s\n", benches[i].name, benches[i].summary);
    return f == stdout ? EXIT_OK : EXIT_USAGE;
}
