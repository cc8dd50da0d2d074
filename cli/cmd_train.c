/* gridzero train: trains a model on sample files (DESIGN.md §6). */
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "engine/game.h"
#include "loop/comm.h"
#include "nn/checkpoint.h"
#include "train/dataset.h"
#include "train/trainer.h"

#define MAX_DATA 256
#define VAL_SAMPLES 4096 /* validation samples evaluated at each log line */

/* Whether writing the model to `out` would destroy or pollute the samples: out is one
 * of the --data files, or goes into a --data directory (which is read as *.h5 samples
 * only, so a model there would make the next training refuse the directory). */
static const char *out_clashes(const char *out, const char *const *data, int ndata)
{
    struct stat so, sd, sdir;
    bool have_out = stat(out, &so) == 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", out);
    bool have_dir = stat(dirname(buf), &sdir) == 0;
    for (int i = 0; i < ndata; i++) {
        if (stat(data[i], &sd) != 0)
            continue;
        if (S_ISDIR(sd.st_mode)) {
            if (have_dir && sd.st_dev == sdir.st_dev && sd.st_ino == sdir.st_ino)
                return data[i];
        } else if (have_out && sd.st_dev == so.st_dev && sd.st_ino == so.st_ino) {
            return data[i];
        }
    }
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero train [-c CONFIG] [--set KEY=VALUE]... --data FILE_OR_DIR [--data ...]\n"
            "                      [--from MODEL] -o MODEL [--steps N] [--metrics FILE]\n"
            "                      [--generation G] [--mpi]\n"
            "(-c is also --config, -o also --output; -o may not be a --data file or directory)\n\n"
            "Trains the network of CONFIG (train and net sections) on sample files (a file, or\n"
            "every *.h5 of a directory; files of another game or shape are refused by name),\n"
            "keeping the newest train.window generations, with a random symmetry per sample and\n"
            "train.validation_fraction of the games held out. Starts from MODEL (--from) or from\n"
            "random He weights (seed from the config); --from keeps MODEL's architecture, adding\n"
            "the training-only heads net.aux_policy / net.aux_owner when CONFIG sets them true\n"
            "and MODEL lacks them (initialised afresh; the optimizer then starts a new run).\n"
            "Otherwise, when MODEL holds the optimizer state of an unfinished run (same\n"
            "optimizer), that run resumes exactly: its schedule, momentum and sampling rng\n"
            "continue. --steps (default train.steps) counts the steps of this\n"
            "invocation. Every train.log_every steps prints policy CE, value MSE, L2, total,\n"
            "policy entropy, value sign accuracy, lr, samples/s and the validation losses\n"
            "(JSON lines to --metrics FILE, appended). A NaN/Inf loss stops training naming the\n"
            "step, and nothing is written (the last good checkpoint stays). The model is written\n"
            "with its optimizer state (temp file + rename) as generation G (default: the newest\n"
            "sample generation + 1).\n\n"
            "--mpi (mpirun -np K gridzero train --mpi ...): data-parallel over the K ranks: each\n"
            "reads the same files, computes its share of every batch, and the gradients and\n"
            "batch-norm statistics are summed over the ranks (the weights equal one process's up\n"
            "to rounding); rank 0 prints, validates and writes MODEL.\n");
}

static void log_line(FILE *mf, int64_t step, int64_t steps, const train_losses *l, double lr,
                     double sps, const train_losses *v, int64_t nval)
{
    printf("step %lld/%lld  policy %.4f  value %.4f  l2 %.4f  total %.4f  entropy %.3f  vacc %.3f  "
           "lr %.5g  %.0f samples/s",
           (long long)step, (long long)steps, l->policy, l->value, l->l2, l->total, l->entropy,
           l->value_acc, lr, sps);
    if (l->aux != 0)
        printf("  aux %.4f", l->aux);
    if (l->owner != 0)
        printf("  owner %.4f", l->owner);
    if (l->action_value != 0)
        printf("  action_value %.4f", l->action_value);
    if (nval)
        printf("  | val policy %.4f value %.4f vacc %.3f", v->policy, v->value, v->value_acc);
    printf("\n");
    fflush(stdout);
    if (mf) {
        fprintf(mf,
                "{\"event\":\"train\",\"step\":%lld,\"steps\":%lld,\"policy_ce\":%.6g,\"value_mse\":%.6g,"
                "\"l2\":%.6g,\"total\":%.6g,\"policy_entropy\":%.6g,\"value_acc\":%.6g,\"lr\":%.6g,"
                "\"samples_per_s\":%.6g",
                (long long)step, (long long)steps, l->policy, l->value, l->l2, l->total, l->entropy,
                l->value_acc, lr, sps);
        if (l->aux != 0)
            fprintf(mf, ",\"aux_policy_ce\":%.6g", l->aux);
        if (l->owner != 0)
            fprintf(mf, ",\"owner_ce\":%.6g", l->owner);
        if (l->action_value != 0)
            fprintf(mf, ",\"action_value_mse\":%.6g", l->action_value);
        if (nval)
            fprintf(mf, ",\"val_samples\":%lld,\"val_policy_ce\":%.6g,\"val_value_mse\":%.6g,"
                        "\"val_total\":%.6g,\"val_value_acc\":%.6g",
                    (long long)nval, v->policy, v->value, v->total, v->value_acc);
        fprintf(mf, "}\n");
        fflush(mf);
    }
}

int cmd_train(int argc, char **argv)
{
    const char *cfg_path = NULL, *from = NULL, *out = NULL, *metrics = NULL;
    const char *data[MAX_DATA];
    int ndata = 0, nsets = 0;
    long long steps_arg = -1, gen_arg = -1;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int rc = EXIT_USAGE;
    game *g = NULL;
    dataset *d = NULL;
    trainer *t = NULL;
    FILE *mf = NULL;
    comm *cm = NULL;
    bool use_mpi = false;
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
        } else if (!strcmp(a, "--data") && v) {
            if (ndata == MAX_DATA) {
                cli_error("train: at most %d --data arguments", MAX_DATA);
                goto out;
            }
            data[ndata++] = v, i++;
        } else if (!strcmp(a, "--from") && v) {
            from = v, i++;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            out = v, i++;
        } else if (!strcmp(a, "--mpi")) {
            use_mpi = true;
        } else if (!strcmp(a, "--metrics") && v) {
            metrics = v, i++;
        } else if ((!strcmp(a, "--steps") || !strcmp(a, "--generation")) && v) {
            char *end;
            errno = 0;
            long long n = strtoll(v, &end, 10);
            if (!*v || *end || errno || n < (a[2] == 's' ? 1 : 0) || n > INT32_MAX) {
                cli_error("train: %s: expected a %s integer up to 2147483647, got \"%s\"", a,
                          a[2] == 's' ? "positive" : "non-negative", v);
                goto out;
            }
            if (a[2] == 's')
                steps_arg = n;
            else
                gen_arg = n;
            i++;
        } else {
            cli_error("train: unexpected argument \"%s\" (see gridzero train --help)", a);
            goto out;
        }
    }
    if (!ndata || !out) {
        cli_error("train: %s is required (see gridzero train --help)", !ndata ? "--data" : "-o MODEL");
        goto out;
    }
    const char *clash = out_clashes(out, data, ndata);
    if (clash) {
        cli_error("train: -o %s would overwrite or join the sample data --data %s; write the "
                  "model elsewhere", out, clash);
        goto out;
    }
    char err[1024];
    if (!(cm = comm_new(use_mpi, err, sizeof err))) {
        cli_error("train: %s", err);
        rc = comm_mpi_built() ? EXIT_FAIL : EXIT_USAGE;
        goto out;
    }
    /* ranks other than 0 only compute: no output */
    bool lead = comm_rank(cm) == 0;
    gz_config c;
    rc = EXIT_USAGE;
    if (!(g = cli_load_game(&c, cfg_path, sets, nsets)))
        goto out;
    d = dataset_new(g, c.train.validation_fraction, err, sizeof err);
    if (!d) {
        cli_error("%s", err);
        goto out;
    }
    dataset_set_q_ratio(d, c.train.q_ratio);
    dataset_allow_sizes(d, &c.game); /* smaller square boards of the game: padded, masked */
    for (int i = 0; i < ndata; i++)
        if (dataset_add_path(d, data[i], err, sizeof err) < 0) {
            cli_error("%s", err);
            goto out;
        }
    dataset_apply_window(d, c.train.window);
    if (dataset_train_count(d) == 0) {
        char names[512] = "";
        for (int i = 0, off = 0; i < ndata && off < (int)sizeof names; i++)
            off += snprintf(names + off, sizeof names - (size_t)off, "%s%s", i ? ", " : "", data[i]);
        cli_error("train: no training samples in %s (%lld held out for validation; train.window "
                  "%d)", names, (long long)dataset_val_count(d), c.train.window);
        goto out;
    }
    nn_ckpt_meta from_meta = {0};
    nn_params *p = NULL;
    char added[512] = "";
    if (from) {
        p = nn_ckpt_load(from, g, &from_meta, err, sizeof err);
        /* the model's architecture is kept; a training-only head the config asks for and
         * the model lacks is added to it, initialised afresh */
        if (p && ((c.net.aux_policy && !p->layout.spec.aux_policy) ||
                  (c.net.aux_owner && !p->layout.spec.aux_owner))) {
            nn_spec ns = p->layout.spec;
            ns.aux_policy |= c.net.aux_policy;
            ns.aux_owner |= c.net.aux_owner;
            char report[400];
            nn_params *q = NULL;
            if (nn_spec_validate(&ns, err, sizeof err) == 0)
                q = nn_params_adapt(p, &ns, rng_derive(c.seed, 0x617578), report, sizeof report, err,
                                    sizeof err);
            nn_params_free(p);
            p = q;
            if (!p) {
                cli_error("%s: cannot add the head net.aux_policy / net.aux_owner asks for: %s", from,
                          err);
                goto out;
            }
            snprintf(added, sizeof added, "; heads added: %s", report);
        }
    } else {
        nn_spec s;
        if (nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0 &&
            (p = nn_params_new(&s, err, sizeof err)) != NULL)
            nn_params_init_he(p, c.seed);
    }
    if (!p) {
        cli_error("%s", err);
        goto out;
    }
    if (dataset_smaller_count(d) > 0 && nn_policy_is_fc(&p->layout.spec)) {
        cli_error("train: %lld samples of boards smaller than %dx%d (mixed board sizes) need the "
                  "fully convolutional policy head; the model's is net.policy_head %s",
                  (long long)dataset_smaller_count(d), g->rows, g->cols,
                  nn_policy_name(p->layout.spec.policy));
        nn_params_free(p);
        goto out;
    }
    int64_t steps = steps_arg > 0 ? steps_arg : c.train.steps;
    t = trainer_new(p, &c.train, steps, rng_derive(c.seed, 0x747261696e), err, sizeof err);
    if (!t) {
        cli_error("%s", err);
        rc = EXIT_FAIL;
        goto out;
    }
    train_reducer red = comm_reducer(cm);
    if (trainer_set_reducer(t, &red, err, sizeof err) < 0) {
        cli_error("train: %s", err);
        goto out;
    }
    const char *resumed = "";
    if (from && added[0]) {
        resumed = " (a new optimizer run: the layout changed)";
    } else if (from) {
        int r = trainer_resume(t, from, err, sizeof err);
        if (r < 0) {
            cli_error("%s", err);
            goto out;
        }
        if (r == 0)
            resumed = " (resuming its optimizer run)";
    }
    if (lead && metrics && !(mf = fopen(metrics, "a"))) {
        cli_error("%s: cannot open for appending", metrics);
        goto out;
    }
    char smaller[96] = "";
    if (dataset_smaller_count(d) > 0)
        snprintf(smaller, sizeof smaller, " (%lld of them on smaller boards, padded)",
                 (long long)dataset_smaller_count(d));
    if (lead)
        printf("train: %lld training + %lld validation samples%s from %d file(s), generations up to "
           "%lld; %s%s%s; %lld steps of batch %d, %s%s\n",
           (long long)dataset_train_count(d), (long long)dataset_val_count(d), smaller, dataset_files(d),
           (long long)dataset_newest_generation(d), from ? from : "random init", resumed, added,
           (long long)steps, c.train.batch_size, c.train.optimizer,
           comm_size(cm) > 1 ? ", data-parallel over MPI ranks" : "");
    rc = EXIT_FAIL;
    train_losses sum = {0}, l, v = {0};
    int nsum = 0;
    double lr = 0, t_start = cli_now(), t_log = t_start;
    int64_t nval = 0;
    for (int64_t k = 1; k <= steps; k++) {
        if (trainer_step(t, d, &l, &lr, err, sizeof err) < 0) {
            cli_error("train: %s; %s not written (the last good checkpoint stays%s%s)", err, out,
                      from ? ": " : "", from ? from : "");
            goto out;
        }
        sum.policy += l.policy, sum.value += l.value, sum.l2 += l.l2, sum.total += l.total;
        sum.entropy += l.entropy, sum.value_acc += l.value_acc, sum.aux += l.aux;
        sum.owner += l.owner, sum.action_value += l.action_value;
        nsum++;
        if ((k % c.train.log_every == 0 || k == steps) && lead) {
            double tn = cli_now();
            double sps = (double)nsum * c.train.batch_size / (tn - t_log);
            train_losses avg = {sum.policy / nsum, sum.value / nsum, sum.l2 / nsum, sum.total / nsum,
                                sum.entropy / nsum, sum.value_acc / nsum, sum.aux / nsum,
                                sum.owner / nsum, sum.action_value / nsum};
            nval = trainer_validate(t, d, VAL_SAMPLES, &v);
            log_line(mf, k, steps, &avg, lr, sps, &v, nval);
            t_log = cli_now();
        }
        if (k % c.train.log_every == 0 || k == steps) {
            memset(&sum, 0, sizeof sum);
            nsum = 0;
        }
    }
    nn_ckpt_meta meta = {0};
    meta.generation = gen_arg >= 0 ? gen_arg : dataset_newest_generation(d) + 1;
    meta.step = from_meta.step + steps;
    snprintf(meta.parent, sizeof meta.parent, "%s", from ? from : "");
    if (lead && trainer_save(t, out, &meta, err, sizeof err) < 0) {
        cli_error("%s", err);
        comm_abort(cm, EXIT_FAIL); /* the others are done; nothing is left to share */
    }
    double el = cli_now() - t_start;
    if (lead)
        printf("train: %lld steps in %.1f s (%.0f samples/s); final loss %.4f (val %.4f); wrote %s "
           "(generation %lld, step %lld)\n",
           (long long)steps, el, (double)steps * c.train.batch_size / el, l.total, nval ? v.total : NAN,
           out, (long long)meta.generation, (long long)meta.step);
    rc = EXIT_OK;
out:
    if (mf)
        fclose(mf);
    trainer_free(t);
    dataset_free(d);
    game_free(g);
    free(sets);
    comm_free(cm);
    return rc;
}
