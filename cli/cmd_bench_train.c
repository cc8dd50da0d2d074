/* gridzero bench train: samples/s of a full training step (forward in training mode,
 * losses, backward, SGD step) at several batch sizes, on synthetic batches. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/game.h"
#include "loop/comm.h"
#include "nn/params.h"
#include "train/blas_tune.h"
#include "train/trainer.h"

#define MAX_BATCHES 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero bench train [--net A|B | -c CONFIG [--set KEY=VALUE]...]\n"
            "                            [--batches 64,256] [--repeats R] [--seconds S] [--json]\n"
            "                            [--mpi]\n\n"
            "Times full training steps (training-mode forward, policy CE + value MSE + L2,\n"
            "backward, SGD with momentum 0.9, weight decay 1e-4) on random synthetic batches.\n"
            "Net A (default): 5 planes, 15x15 square, 6 blocks x 64 channels, 2 players; net B:\n"
            "7 planes, 32x32 hex, 6 x 64, 3 players (the nets of shared/bench/torch_ref.py);\n"
            "-c CONFIG: the config's game and net. Prints the median over R repeats (default 3)\n"
            "of at least S seconds (default 1) each, after a warm-up step: samples/s, ms per\n"
            "step, GFLOP/s (3x the forward FLOPs of a direct convolution: an effective rate\n"
            "where the 3x3 convs run as Winograd, which does 2.25x fewer multiplications; see\n"
            "train.conv, im2col for the direct count), and samples per CPU-second (all threads'\n"
            "CPU time: on a shared machine the figure that load changes least). It first measures\n"
            "one core's fp32 FMA peak (FMA chains on the widest vectors, the best of 10 x 20 ms\n"
            "of CPU time; a busy machine makes it read low) and gives each GFLOP/s as a share\n"
            "of that peak times the threads (and ranks); --json prints one JSON object\n"
            "(fma_peak_gflops, threads, and peak_share per batch). Threads:\n"
            "OPENBLAS_NUM_THREADS (default: every core).\n"
            "--mpi (mpirun -np K gridzero bench train --mpi ...): data-parallel steps over the K\n"
            "ranks (each computes B/K samples of every batch of B; gradients, batch-norm\n"
            "statistics and losses summed with MPI_Allreduce); samples/s counts whole batches,\n"
            "and allreduce_ms is the time per step spent in the sums (waiting for the slowest\n"
            "rank included); gradient_sum_ms times one sum of the gradients with every rank\n"
            "ready (the communication alone). Rank 0 prints.\n");
}

static nn_spec net_preset(int b)
{
    nn_spec s;
    memset(&s, 0, sizeof s);
    s.planes = b ? 7 : 5;
    s.rows = s.cols = b ? 32 : 15;
    s.lattice = b ? GAME_LATTICE_HEX : GAME_LATTICE_SQUARE;
    s.players = b ? 3 : 2;
    s.actions = s.rows * s.cols;
    s.blocks = 6;
    s.channels = 64;
    s.head_channels = 32;
    s.value_hidden = 64;
    s.policy = NN_POLICY_CONV;
    s.trunk = NN_TRUNK_RESIDUAL;
    return s;
}

int cmd_bench_train(int argc, char **argv)
{
    const char *cfg_path = NULL, *net = NULL, *blist = "64,256";
    int nsets = 0, json = 0, repeats = 3, nb = 0, batches[MAX_BATCHES];
    double min_s = 1.0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int rc = EXIT_USAGE;
    bool use_mpi = false;
    comm *cm = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = EXIT_OK;
            goto out;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = v, i++;
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--net") && v) {
            net = v, i++;
            if (strcmp(net, "A") && strcmp(net, "B")) {
                cli_error("bench train: --net: expected A or B, got \"%s\"", net);
                goto out;
            }
        } else if (!strcmp(a, "--batches") && v) {
            blist = v, i++;
        } else if (!strcmp(a, "--repeats") && v) {
            i++;
            if (cli_parse_int(v, 1, 100, &repeats) < 0) {
                cli_error("bench train: --repeats: expected 1..100, got \"%s\"", v);
                goto out;
            }
        } else if (!strcmp(a, "--seconds") && v) {
            min_s = atof(v), i++;
            if (!(min_s > 0 && min_s <= 600)) {
                cli_error("bench train: --seconds: expected a number in (0, 600], got \"%s\"", v);
                goto out;
            }
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--mpi")) {
            use_mpi = true;
        } else {
            cli_error("bench train: unexpected argument \"%s\" (see gridzero bench train --help)", a);
            goto out;
        }
    }
    for (const char *q = blist; *q;) {
        char *end;
        long b = strtol(q, &end, 10);
        if (end == q || b < 1 || b > 8192 || nb == MAX_BATCHES || (*end && *end != ',')) {
            cli_error("bench train: --batches: expected up to %d comma-separated sizes in 1..8192, "
                      "got \"%s\"", MAX_BATCHES, blist);
            goto out;
        }
        batches[nb++] = (int)b;
        q = *end ? end + 1 : end;
    }
    char err[512];
    if (!(cm = comm_new(use_mpi, err, sizeof err))) {
        cli_error("bench train: %s", err);
        rc = comm_mpi_built() ? EXIT_FAIL : EXIT_USAGE;
        goto out;
    }
    /* only rank 0 prints: the others' output goes nowhere */
    if (comm_rank(cm) != 0 && !freopen("/dev/null", "w", stdout))
        goto out;
    int K = comm_size(cm);
    gz_config c;
    if ((rc = cli_load_config(&c, cfg_path, sets, nsets)) != 0)
        goto out;
    rc = EXIT_USAGE;
    nn_spec s;
    const char *label = net ? net : "A";
    if (cfg_path && !net) {
        game *g = game_new(&c.game, err, sizeof err);
        int ok = g && nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0;
        game_free(g);
        if (!ok) {
            cli_error("%s: %s", cfg_path, err);
            goto out;
        }
        label = "config";
    } else {
        s = net_preset(net && !strcmp(net, "B"));
    }
    rc = EXIT_FAIL;
    cfg_train tc = c.train;
    snprintf(tc.optimizer, sizeof tc.optimizer, "sgd");
    snprintf(tc.schedule, sizeof tc.schedule, "constant");
    tc.lr = 0.01;
    tc.momentum = 0.9;
    tc.weight_decay = 1e-4;
    tc.warmup_steps = 0;
    tc.value_weight = 1.0;
    double flops = 3 * nn_spec_flops(&s, s.rows, s.cols);
    size_t hw = (size_t)s.rows * s.cols;
    /* the share of the peak: every thread of every rank at one core's measured peak */
    int nthreads = blas_threads(), lanes;
    nthreads = nthreads < 1 ? 1 : nthreads;
    double peak = cli_peak_measure(CLI_PEAK_FP32, &lanes), peak_all = peak * nthreads * K;
    if (json)
        printf("{\"net\":\"%s\",\"planes\":%d,\"rows\":%d,\"cols\":%d,\"lattice\":\"%s\",\"blocks\":%d,"
               "\"channels\":%d,\"players\":%d,\"flops_per_sample\":%.0f,\"blas_core\":\"%s\","
               "\"threads\":%d,\"fma_peak_gflops\":%.1f,\"conv\":\"%s\",\"batches\":[",
               label, s.planes, s.rows, s.cols, nn_lattice_name(s.lattice), s.blocks, s.channels,
               s.players, flops, blas_core_name(), nthreads, peak, c.train.conv);
    else {
        printf("bench train: net %s (%d planes, %dx%d %s, %d blocks x %d channels, %d players), "
               "SGD, median of %d x %.1f s, OpenBLAS %s kernels, train.conv %s%s\n",
               label, s.planes, s.rows, s.cols, nn_lattice_name(s.lattice), s.blocks, s.channels,
               s.players, repeats, min_s, blas_core_name(), c.train.conv,
               K > 1 ? ", data-parallel over MPI ranks" : "");
        if (peak > 0)
            printf("fp32 FMA peak of one core, measured (%d-lane FMAs, best of 10 x 20 ms of CPU): %.1f GFLOP/s; "
                   "%d thread%s%s: %.1f GFLOP/s\n", lanes, peak, nthreads, nthreads > 1 ? "s" : "",
                   K > 1 ? " a rank" : "", peak_all);
    }
    for (int bi = 0; bi < nb; bi++) {
        int B = batches[bi];
        tc.batch_size = B;
        nn_params *p = nn_params_new(&s, err, sizeof err);
        if (!p) {
            cli_error("%s", err);
            goto out;
        }
        nn_params_init_he(p, c.seed);
        size_t nparams = nn_params_count(p); /* p goes to the trainer */
        trainer *t = trainer_new(p, &tc, 1000000, c.seed, err, sizeof err);
        train_reducer red = comm_reducer(cm);
        if (t && trainer_set_reducer(t, &red, err, sizeof err) < 0) {
            cli_error("bench train: %s", err);
            trainer_free(t);
            goto out;
        }
        /* this rank's shard of the batch (all of it with one rank) */
        int lo = (int)((long long)B * comm_rank(cm) / K), hi = (int)((long long)B * (comm_rank(cm) + 1) / K);
        float *x = malloc(sizeof(float) * (size_t)B * s.planes * hw);
        float *pi = malloc(sizeof(float) * (size_t)B * s.actions);
        float *z = malloc(sizeof(float) * (size_t)B * s.players);
        uint8_t *legal = malloc((size_t)B * s.actions);
        if (!t || !x || !pi || !z || !legal) {
            cli_error("bench train: batch %d: %s", B, t ? "out of memory" : err);
            trainer_free(t);
            free(x), free(pi), free(z), free(legal);
            goto out;
        }
        rng r;
        rng_seed(&r, c.seed);
        for (size_t i = 0; i < (size_t)B * s.planes * hw; i++)
            x[i] = (float)rng_below(&r, 2);
        for (int n = 0; n < B; n++) {
            double sum = 0;
            for (int a = 0; a < s.actions; a++) {
                size_t k = (size_t)n * s.actions + a;
                legal[k] = rng_below(&r, 5) != 0 || a == 0;
                pi[k] = legal[k] ? (float)rng_uniform(&r) : 0.0f;
                sum += pi[k];
            }
            for (int a = 0; a < s.actions; a++)
                pi[(size_t)n * s.actions + a] /= (float)sum;
            for (int q = 0; q < s.players; q++)
                z[n * s.players + q] = rng_below(&r, 2) ? 1.0f : -1.0f;
        }
        double rates[100], cpu_rates[100], red_ms[100];
        size_t ps = (size_t)s.planes * hw;
#define SHARD(base, per) ((base) + (size_t)lo * (per))
        double tw = cli_now();
        int fail_step = trainer_step_batch(t, hi - lo, SHARD(x, ps), SHARD(pi, s.actions),
                                           SHARD(legal, s.actions), SHARD(z, s.players), NULL, NULL,
                                           err, sizeof err);
        /* with ranks every rank must take the same steps: rank 0's count from the warm-up */
        int64_t fixed = (int64_t)(min_s / (cli_now() - tw + 1e-9)) + 1;
        comm_bcast(cm, &fixed, sizeof fixed, 0);
        for (int k = 0; k < repeats && fail_step == 0; k++) {
            int steps = 0;
            int64_t calls;
            double t0 = cli_now(), c0 = cli_cpu_now(), el, r0 = comm_sum_seconds(cm, &calls);
            do {
                fail_step = trainer_step_batch(t, hi - lo, SHARD(x, ps), SHARD(pi, s.actions),
                                               SHARD(legal, s.actions), SHARD(z, s.players), NULL,
                                               NULL, err, sizeof err);
                steps++;
                el = cli_now() - t0;
            } while (fail_step == 0 && (K > 1 ? steps < fixed : el < min_s));
            rates[k] = steps * B / el;
            red_ms[k] = 1e3 * (comm_sum_seconds(cm, &calls) - r0) / steps;
            double cpu = cli_cpu_now() - c0;
            comm_sum_f64(cm, &cpu, 1); /* every rank's CPU time */
            cpu_rates[k] = steps * B / cpu;
        }
#undef SHARD
        trainer_free(t);
        free(x), free(pi), free(z), free(legal);
        if (fail_step) {
            cli_error("bench train: %s", err);
            goto out;
        }
        qsort(rates, (size_t)repeats, sizeof rates[0], cli_cmp_double);
        qsort(cpu_rates, (size_t)repeats, sizeof cpu_rates[0], cli_cmp_double);
        double med = rates[repeats / 2], cmed = cpu_rates[repeats / 2];
        qsort(red_ms, (size_t)repeats, sizeof red_ms[0], cli_cmp_double);
        double rmed = red_ms[repeats / 2];
        /* the gradients' sum alone, every rank ready: the cost of the wire, not of the
         * slowest rank (median of 15) */
        double wire[15], wmed = 0;
        float *gbuf = K > 1 ? calloc(nparams, sizeof(float)) : NULL;
        for (int k = 0; gbuf && k < 15; k++) {
            comm_wait_all(cm);
            double w0 = cli_now();
            comm_sum_f32(cm, gbuf, nparams);
            wire[k] = 1e3 * (cli_now() - w0);
        }
        if (gbuf) {
            qsort(wire, 15, sizeof wire[0], cli_cmp_double);
            wmed = wire[7];
        }
        free(gbuf);
        if (json)
            printf("%s{\"batch\":%d,\"samples_per_s\":%.1f,\"min\":%.1f,\"max\":%.1f,\"ms_per_step\":%.2f,"
                   "\"gflops\":%.1f,\"peak_share\":%.4f,\"samples_per_cpu_s\":%.1f,\"ranks\":%d,"
                   "\"allreduce_ms\":%.3f,\"gradient_sum_ms\":%.3f}",
                   bi ? "," : "", B, med, rates[0], rates[repeats - 1], 1e3 * B / med, med * flops / 1e9,
                   peak_all > 0 ? med * flops / 1e9 / peak_all : 0, cmed, K, rmed, wmed);
        else
            printf("batch %4d: %8.1f samples/s (min %.1f, max %.1f), %.1f ms/step, ~%.1f GFLOP/s "
                   "(%.0f%% of the peak); %.1f samples per CPU-second%s",
                   B, med, rates[0], rates[repeats - 1], 1e3 * B / med, med * flops / 1e9,
                   peak_all > 0 ? 100 * med * flops / 1e9 / peak_all : 0, cmed, K > 1 ? "" : "\n");
        if (!json && K > 1)
            printf("; %d ranks, %.2f ms/step in allreduce; the %.2f MB gradient sum alone %.2f ms\n",
                   K, rmed, 4e-6 * (double)nparams, wmed);
        fflush(stdout);
    }
    if (json)
        printf("]}\n");
    rc = EXIT_OK;
out:
    free(sets);
    comm_free(cm);
    return rc;
}
