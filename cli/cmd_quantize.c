/* gridzero quantize: calibrates a model for int8 inference on sample files and measures
 * the accuracy gates against fp32 on held-out games (nn/quant.h). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "engine/game.h"
#include "nn/checkpoint.h"
#include "nn/infer.h"
#include "nn/quant.h"
#include "train/dataset.h"

#define MAX_DATA 256

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero quantize -m MODEL --data FILE_OR_DIR [--data ...] -o OUT\n"
            "                         [-c CONFIG] [--set KEY=VALUE]... [--positions N]\n"
            "                         [--heldout N] [--threads N] [--force] [--json]\n\n"
            "Calibrates MODEL for int8 inference (net.precision int8, or auto): runs the fp32\n"
            "network on N distinct positions (default 2048) of the sample files (a file, or every *.h5\n"
            "of a directory, of CONFIG's game) and sets the range of every activation tensor\n"
            "the int8 forward stores as 8 bits. Then compares int8 with fp32 on up to\n"
            "--heldout distinct positions (default 2048) of other games (20%% of the games are held\n"
            "out, never used for calibration) and reports the gates: policy top-1 agreement\n"
            ">= %.0f%% (a move whose fp32 prior is within %.0f%% of the best counts as the best:\n"
            "the strict share, and fp32's own under a board symmetry, are printed beside it)\n"
            "and mean |value difference| <= %.2f (a score head's, 2048's, in units of half the\n"
            "span of its fp32 values on those positions). When both pass (or with --force),\n"
            "writes OUT: MODEL byte for byte plus the calibration (/quant; OUT may be MODEL).\n"
            "Exit 0 written, 1 a gate failed (nothing written), 2 bad input, no VNNI.\n",
            100 * NN_INT8_MIN_TOP1, 100 * NN_INT8_TIE, NN_INT8_MAX_MEAN_DVALUE);
}

int cmd_quantize(int argc, char **argv)
{
    const char *cfg_path = NULL, *model = NULL, *out = NULL;
    const char *data[MAX_DATA];
    int ndata = 0, nsets = 0, positions = 2048, heldout = 2048, threads = -1, force = 0, json = 0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int rc = EXIT_USAGE;
    game *g = NULL;
    dataset *d = NULL;
    nn_params *p = NULL;
    float *xc = NULL, *xh = NULL;
    uint8_t *lc = NULL, *lh = NULL;
    int64_t *itrain = NULL, *ival = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = EXIT_OK;
            goto out;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && v) {
            model = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            out = argv[++i];
        } else if (!strcmp(a, "--data") && v) {
            if (ndata == MAX_DATA) {
                cli_error("quantize: at most %d --data arguments", MAX_DATA);
                goto out;
            }
            data[ndata++] = argv[++i];
        } else if (!strcmp(a, "--positions") && v) {
            if (cli_parse_int(argv[++i], 1, 1 << 20, &positions) < 0) {
                cli_error("quantize: --positions: expected 1..%d, got \"%s\"", 1 << 20, v);
                goto out;
            }
        } else if (!strcmp(a, "--heldout") && v) {
            if (cli_parse_int(argv[++i], 1, 1 << 20, &heldout) < 0) {
                cli_error("quantize: --heldout: expected 1..%d, got \"%s\"", 1 << 20, v);
                goto out;
            }
        } else if (!strcmp(a, "--threads") && v) {
            if (cli_parse_int(argv[++i], 0, 256, &threads) < 0) {
                cli_error("quantize: --threads: expected 0..256, got \"%s\"", v);
                goto out;
            }
        } else if (!strcmp(a, "--force")) {
            force = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else {
            cli_error("quantize: unexpected argument \"%s\" (see gridzero quantize --help)", a);
            goto out;
        }
    }
    if (!model || !out || ndata == 0) {
        cli_error("quantize: -m MODEL, --data and -o OUT are required (see gridzero quantize --help)");
        goto out;
    }
    gz_config c;
    if ((rc = cli_load_config(&c, cfg_path, sets, nsets)) != 0)
        goto out;
    rc = EXIT_USAGE;
    if (threads < 0)
        threads = c.net.threads;
    char err[1024];
    if (!nn_cpu_has_vnni()) {
        cli_error("quantize: this CPU has no VNNI (AVX512-VNNI, AVX-VNNI or AMX): int8 cannot run "
                  "here, so its gates cannot be measured");
        goto out;
    }
    if (!(g = game_new(&c.game, err, sizeof err))) {
        cli_error("%s: %s", cfg_path ? cfg_path : "built-in config", err);
        goto out;
    }
    nn_ckpt_meta meta;
    if (!(p = nn_ckpt_load(model, g, &meta, err, sizeof err))) {
        cli_error("%s", err);
        goto out;
    }
    if (!(d = dataset_new(g, 0.2, err, sizeof err))) {
        cli_error("quantize: %s", err);
        goto out;
    }
    dataset_allow_sizes(d, &c.game); /* a run's smaller boards: read, left out (full board only) */
    for (int i = 0; i < ndata; i++)
        if (dataset_add_path(d, data[i], err, sizeof err) < 0) {
            cli_error("%s", err);
            goto out;
        }
    int64_t ntrain = dataset_distinct(d, 0, &itrain);
    int64_t nval = dataset_distinct(d, 1, &ival);
    if (ntrain < 0 || nval < 0) {
        cli_error("quantize: out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    if (ntrain == 0 || nval == 0) {
        cli_error("quantize: the data holds %lld distinct positions for calibration and %lld of "
                  "held-out games: both must be > 0 (more games are needed)", (long long)ntrain,
                  (long long)nval);
        goto out;
    }
    int nc = ntrain < positions ? (int)ntrain : positions, nh = nval < heldout ? (int)nval : heldout;
    size_t per = (size_t)g->planes * (size_t)g->rows * (size_t)g->cols;
    xc = malloc(sizeof(float) * per * (size_t)nc);
    xh = malloc(sizeof(float) * per * (size_t)nh);
    lc = malloc((size_t)g->actions * (size_t)nc);
    lh = malloc((size_t)g->actions * (size_t)nh);
    if (!xc || !xh || !lc || !lh) {
        cli_error("quantize: out of memory for %d + %d positions", nc, nh);
        rc = EXIT_FAIL;
        goto out;
    }
    if (dataset_take(d, 0, itrain, ntrain, nc, xc, lc) < 0 ||
        dataset_take(d, 1, ival, nval, nh, xh, lh) < 0) {
        cli_error("quantize: out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    rc = EXIT_FAIL;
    double t0 = cli_now();
    nn_int8_gates gt;
    if (nn_int8_calibrate_gated(p, g, nc, xc, nh, xh, lh, threads, &gt, err, sizeof err) < 0) {
        cli_error("quantize: %s", err);
        goto out;
    }
    double dt = cli_now() - t0;
    bool top1_ok = gt.top1 >= NN_INT8_MIN_TOP1, dv_ok = gt.mean_dvalue <= NN_INT8_MAX_MEAN_DVALUE;
    bool write = gt.pass || force;
    if (write && nn_ckpt_save_calibrated(model, out, p->calib, err, sizeof err) < 0) {
        cli_error("quantize: %s", err);
        goto out;
    }
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", model);
        cJSON_AddNumberToObject(o, "calibration_positions", nc);
        cJSON_AddNumberToObject(o, "heldout_positions", gt.positions);
        cJSON_AddNumberToObject(o, "top1_agreement", gt.top1);
        cJSON_AddNumberToObject(o, "top1_agreement_strict", gt.top1_strict);
        if (gt.sym_top1 >= 0)
            cJSON_AddNumberToObject(o, "fp32_symmetry_top1_agreement", gt.sym_top1);
        cJSON_AddNumberToObject(o, "mean_abs_dvalue", gt.mean_dvalue);
        cJSON_AddNumberToObject(o, "max_abs_dvalue", gt.max_dvalue);
        cJSON_AddNumberToObject(o, "value_scale", gt.value_scale);
        cJSON_AddNumberToObject(o, "max_abs_dprior", gt.max_dprior);
        cJSON_AddBoolToObject(o, "pass", gt.pass);
        cJSON_AddBoolToObject(o, "written", write);
        if (write)
            cJSON_AddStringToObject(o, "output", out);
        char *txt = cJSON_PrintUnformatted(o);
        printf("%s\n", txt);
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("quantize: %s calibrated on %d positions (%d files); gates on %d positions of "
               "held-out games (%.1f s):\n", model, nc, dataset_files(d), gt.positions, dt);
        printf("  policy top-1 agreement with fp32  %6.2f%%   (gate >= %.0f%%: %s; moves within %.0f%% "
               "of fp32's best prior count as its best)\n", 100 * gt.top1, 100 * NN_INT8_MIN_TOP1,
               top1_ok ? "pass" : "FAIL", 100 * NN_INT8_TIE);
        printf("  strict top-1 agreement            %6.2f%%", 100 * gt.top1_strict);
        if (gt.sym_top1 >= 0)
            printf("   (fp32 with itself under a random symmetry: %.2f%%)", 100 * gt.sym_top1);
        printf("\n");
        printf("  mean |value difference|           %8.4f   (gate <= %.2f: %s)", gt.mean_dvalue,
               NN_INT8_MAX_MEAN_DVALUE, dv_ok ? "pass" : "FAIL");
        if (gt.value_scale != 1)
            printf("   (score head: in units of %.2f, half the span of fp32's values)", gt.value_scale);
        printf("\n");
        printf("  largest value / prior difference  %8.4f / %.4f\n", gt.max_dvalue, gt.max_dprior);
        if (write)
            printf("quantize: written to %s%s\n", out, gt.pass ? "" : " (--force: a gate failed)");
        else
            printf("quantize: a gate failed: nothing written (--force writes anyway)\n");
    }
    rc = write ? EXIT_OK : EXIT_FAIL;
out:
    free(xc), free(xh), free(lc), free(lh), free(itrain), free(ival);
    nn_params_free(p);
    dataset_free(d);
    game_free(g);
    free(sets);
    return rc;
}
