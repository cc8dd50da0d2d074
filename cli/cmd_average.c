/* gridzero average: the weight average of checkpoints (nn_params_average). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "nn/checkpoint.h"
#include "nn/params.h"

static void average_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero average -o OUT MODEL MODEL...\n\n"
            "Writes OUT, a model whose every parameter (weights, biases, batch-norm\n"
            "statistics) is the mean of the MODELs': stochastic weight averaging of\n"
            "checkpoints of one run (e.g. its last generations), as KataGo ships its nets.\n"
            "The MODELs must have the same network. OUT keeps the last MODEL's generation\n"
            "and step; its parent names the models averaged. It has no int8 calibration:\n"
            "gridzero quantize -m OUT --data RUN/data -o OUT adds one. OUT is written\n"
            "whole or not at all.\n");
}

int cmd_average(int argc, char **argv)
{
    const char *out = NULL;
    const char **models = malloc(sizeof(char *) * (size_t)argc);
    nn_params **p = calloc((size_t)argc, sizeof *p);
    int n = 0, rc = EXIT_USAGE;
    if (!models || !p) {
        free(models);
        free(p);
        return EXIT_FAIL;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            average_usage(stdout);
            rc = EXIT_OK;
            goto done;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-') {
            cli_error("average: unknown or incomplete option \"%s\" (see gridzero average --help)",
                      argv[i]);
            goto done;
        } else {
            models[n++] = argv[i];
        }
    }
    if (!out || n < 2) {
        average_usage(stderr);
        cli_error("average: name the output (-o OUT) and at least two models (%d named)", n);
        goto done;
    }
    char err[512];
    nn_ckpt_meta meta;
    for (int k = 0; k < n; k++)
        if (!(p[k] = nn_ckpt_load(models[k], NULL, k == n - 1 ? &meta : NULL, err, sizeof err))) {
            cli_error("average: %s", err);
            goto done;
        }
    int bad = nn_params_average(p[0], (const nn_params *const *)p, n, err, sizeof err);
    if (bad > 0) {
        cli_error("average: %s has another network (spec) than %s", models[bad - 1], models[0]);
        goto done;
    } else if (bad < 0) {
        cli_error("average: %s", err);
        goto done;
    }
    snprintf(meta.parent, sizeof meta.parent, "average of %d: %s .. %s", n, models[0], models[n - 1]);
    if (nn_ckpt_save(out, p[0], &meta, NULL, 0, err, sizeof err) < 0) {
        cli_error("average: %s", err);
        rc = EXIT_FAIL;
        goto done;
    }
    printf("average: %d models -> %s (generation %lld, no int8 calibration)\n", n, out,
           (long long)meta.generation);
    rc = EXIT_OK;
done:
    for (int k = 0; k < n; k++)
        nn_params_free(p[k]);
    free(p);
    free(models);
    return rc;
}
