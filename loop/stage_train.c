/* stage_train.c — the training stage of the generation loop: the previous
 * generation's weights trained on the samples of the last train.window generations
 * (with several MPI ranks, data-parallel: each computes its share of every batch),
 * the schedule's length (train.schedule_scope run: one optimizer over the whole run,
 * its span from train.run_steps or the run's budget), and the int8 calibration of the
 * new weights (train.calibrate), into models/gen_NNNN.h5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "loop_impl.h"
#include "rundata.h"
#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/infer.h"
#include "nn/params.h"
#include "nn/quant.h"
#include "train/dataset.h"
#include "train/trainer.h"

static void add_losses(cJSON *o, const char *prefix, const train_losses *l)
{
    char k[64];
    snprintf(k, sizeof k, "%spolicy", prefix);
    cJSON_AddNumberToObject(o, k, l->policy);
    snprintf(k, sizeof k, "%svalue", prefix);
    cJSON_AddNumberToObject(o, k, l->value);
    snprintf(k, sizeof k, "%sl2", prefix);
    cJSON_AddNumberToObject(o, k, l->l2);
    snprintf(k, sizeof k, "%stotal", prefix);
    cJSON_AddNumberToObject(o, k, l->total);
    snprintf(k, sizeof k, "%sentropy", prefix);
    cJSON_AddNumberToObject(o, k, l->entropy);
    snprintf(k, sizeof k, "%svalue_acc", prefix);
    cJSON_AddNumberToObject(o, k, l->value_acc);
    if (l->aux != 0) { /* a net with the opponent-reply head */
        snprintf(k, sizeof k, "%saux", prefix);
        cJSON_AddNumberToObject(o, k, l->aux);
    }
    if (l->owner != 0) { /* a net with the ownership head */
        snprintf(k, sizeof k, "%sowner", prefix);
        cJSON_AddNumberToObject(o, k, l->owner);
    }
    if (l->action_value != 0) { /* a net with the action-value head */
        snprintf(k, sizeof k, "%saction_value", prefix);
        cJSON_AddNumberToObject(o, k, l->action_value);
    }
}

/* The training window's sample files, as rank 0 lists them for every rank: one line
 * per file, "GEN FOLLOWER PATH" (FOLLOWER 1 for a --follow worker's file). Returns a
 * malloc'd text, or NULL with a message. */
static char *window_files(run_ctx *r, int first, int gen, char *err, size_t errlen)
{
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    text[0] = 0;
    for (int k = first; k <= gen; k++) {
        rd_files fl;
        if (rd_list(r->dir, k, &fl, err, errlen) < 0) {
            free(text);
            return NULL;
        }
        for (int i = 0; i < fl.n; i++) {
            size_t need = len + strlen(fl.path[i]) + 32;
            if (need > cap) {
                char *nt = realloc(text, cap = need * 2);
                if (!nt) {
                    free(text);
                    rd_files_free(&fl);
                    snprintf(err, errlen, "out of memory");
                    return NULL;
                }
                text = nt;
            }
            len += (size_t)snprintf(text + len, cap - len, "%d %d %s\n", k, fl.follower[i] ? 1 : 0,
                                    fl.path[i]);
        }
        rd_files_free(&fl);
    }
    return text;
}

/* A hash of the weights' bytes (FNV-1a), to check that the ranks hold the same. */
static uint64_t params_hash(const nn_params *p)
{
    const unsigned char *b = (const unsigned char *)p->data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < p->layout.count * sizeof(float); i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* train.calibrate: an int8 calibration of the new weights p (nn/quant.h) on up to 2048
 * distinct positions of the window's training split, its accuracy gates measured on up
 * to 2048 of the held-out games' positions; kept in p->calib (saved with the model, so
 * net.precision auto runs it in int8) only when both gates pass. Never fails the stage:
 * int8 is a speed-up, and a model without a calibration runs in bf16 or fp32. */
static void calibrate_model(run_ctx *r, int gen, const dataset *d, nn_params *p,
                            const char *which)
{
    const char *mode = r->c.train.calibrate;
    if (!strcmp(mode, "never"))
        return;
    free(p->calib); /* the parent's calibration, if any, belongs to other weights */
    p->calib = NULL;
    bool aut = !strcmp(mode, "auto");
    const char *skip = NULL;
    if (!nn_cpu_has_vnni())
        skip = "no VNNI on this CPU (int8 cannot run)";
    else if (aut && strcmp(r->c.net.precision, "auto") != 0)
        skip = "net.precision is not auto";
    else if (aut && !nn_int8_preferred(&p->layout.spec))
        skip = "int8 is no faster than bf16 here for this net (AMX, fewer than 64 channels)";
    if (skip && aut)
        return; /* auto: nothing to do on this machine, every generation alike */
    cJSON *m = run_event("calibration", gen);
    if (which)
        cJSON_AddStringToObject(m, "model", which);
    int64_t *itr = NULL, *iva = NULL, ntr = 0, nva = 0;
    float *xc = NULL, *xh = NULL;
    uint8_t *lc = NULL, *lh = NULL;
    char why[512] = "";
    double t0 = run_now();
    if (skip) {
        snprintf(why, sizeof why, "%s", skip);
        goto out;
    }
    ntr = dataset_distinct(d, 0, &itr);
    nva = dataset_distinct(d, 1, &iva);
    if (ntr < 0 || nva < 0) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    if (ntr == 0 || nva == 0) {
        snprintf(why, sizeof why, "no held-out positions to measure the gates on "
                 "(train.validation_fraction %g)", r->c.train.validation_fraction);
        goto out;
    }
    const game *g = r->g;
    int nc = ntr < 2048 ? (int)ntr : 2048, nh = nva < 2048 ? (int)nva : 2048;
    size_t per = (size_t)g->planes * (size_t)g->rows * (size_t)g->cols;
    xc = malloc(sizeof(float) * per * (size_t)nc), xh = malloc(sizeof(float) * per * (size_t)nh);
    lc = malloc((size_t)g->actions * (size_t)nc), lh = malloc((size_t)g->actions * (size_t)nh);
    if (!xc || !xh || !lc || !lh || dataset_take(d, 0, itr, ntr, nc, xc, lc) < 0 ||
        dataset_take(d, 1, iva, nva, nh, xh, lh) < 0) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    nn_int8_gates gt;
    if (nn_int8_calibrate_gated(p, g, nc, xc, nh, xh, lh, r->c.net.threads, &gt, why,
                                sizeof why) < 0)
        goto out;
    cJSON_AddNumberToObject(m, "positions", nc);
    cJSON_AddNumberToObject(m, "heldout", gt.positions);
    cJSON_AddNumberToObject(m, "top1", gt.top1);
    cJSON_AddNumberToObject(m, "top1_strict", gt.top1_strict);
    cJSON_AddNumberToObject(m, "mean_dvalue", gt.mean_dvalue);
    cJSON_AddNumberToObject(m, "value_scale", gt.value_scale);
    cJSON_AddBoolToObject(m, "pass", gt.pass);
    fprintf(stderr, "gen %d calibrate%s%s: int8 against fp32 on %d held-out positions: top-1 %.2f%% "
            "(strict %.2f%%), mean |dvalue| %.4f: %s%s (%.1f s)\n", gen, which ? " " : "",
            which ? which : "", gt.positions,
            100 * gt.top1, 100 * gt.top1_strict, gt.mean_dvalue,
            gt.pass ? "kept; net.precision auto runs the model in " : "a gate failed, not kept",
            gt.pass ? nn_precision_name(nn_precision_resolve(NN_PREC_AUTO, p)) : "",
            run_now() - t0);
    if (!gt.pass) {
        free(p->calib);
        p->calib = NULL;
    }
out:
    cJSON_AddBoolToObject(m, "calibrated", p->calib != NULL);
    if (why[0]) {
        cJSON_AddStringToObject(m, "skipped", why);
        fprintf(stderr, "gen %d calibrate: no int8 calibration: %s\n", gen, why);
    }
    cJSON_AddNumberToObject(m, "seconds", run_now() - t0);
    run_metric(r, m);
    free(itr), free(iva), free(xc), free(xh), free(lc), free(lh);
}

/* train.swa >= 2: models/swa_<gen>.h5, the mean of the weights of generations
 * max(1, gen - swa + 1) .. gen (gen's own in p, not yet saved; the others read back),
 * calibrated on the window like gen's. Rank 0. Returns 0 or -1 with a message. */
static int write_swa(run_ctx *r, int gen, const dataset *d, const nn_params *p, int64_t step,
                     char *err, size_t errlen)
{
    int first = gen - r->c.train.swa + 1 < 1 ? 1 : gen - r->c.train.swa + 1, n = gen - first + 1;
    const nn_params **src = calloc((size_t)n, sizeof *src);
    nn_params **own = calloc((size_t)n, sizeof *own);
    nn_params *avg = nn_params_clone(p);
    int rc = -1;
    if (!src || !own || !avg) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int k = first; k < gen; k++) {
        char path[PATH_LEN];
        join(path, r, "models/gen_%04d.h5", k);
        if (!(own[k - first] = nn_ckpt_load(path, r->g, NULL, err, errlen)))
            goto out;
        src[k - first] = own[k - first];
    }
    src[n - 1] = p;
    int bad = nn_params_average(avg, src, n, err, errlen);
    if (bad > 0)
        snprintf(err, errlen, "train.swa: models/gen_%04d.h5 has another network (spec) than "
                 "generation %d's", first + bad - 1, gen);
    if (bad != 0)
        goto out;
    calibrate_model(r, gen, d, avg, "swa");
    nn_ckpt_meta meta = {.generation = gen, .step = step};
    snprintf(meta.parent, sizeof meta.parent, "average of %d: models/gen_%04d.h5 .. models/gen_%04d.h5",
             n, first, gen);
    char path[PATH_LEN];
    join(path, r, "models/swa_%04d.h5", gen);
    if ((rc = nn_ckpt_save(path, avg, &meta, NULL, 0, err, errlen)) == 0)
        fprintf(stderr, "gen %d train: saved models/swa_%04d.h5, the mean of generations %d .. %d\n",
                gen, gen, first, gen);
out:
    for (int k = 0; k < n && own; k++)
        nn_params_free(own[k]);
    free(own);
    free(src);
    nn_params_free(avg);
    return rc;
}

/* train.schedule_span budget: the schedule's length in global steps for generation gen's
 * training, extrapolated from the `done` global steps taken so far to the end of the
 * run's budget. The share of the budget used is the larger of the --time clock's and the
 * generations' (gen - 1 of loop.generations); the steps so far over that share give the
 * total, so the schedule stands where the budget stands when the stage starts. With no
 * steps yet (generation 1) this generation's `steps` stand in for them. Rank 0's clock,
 * the same on every rank. */
static int64_t budget_span_steps(run_ctx *r, int gen, int64_t done, int steps)
{
    int G = r->c.loop.generations > 0 ? r->c.loop.generations : 1;
    double used = run_budget_used(r, gen);
    double have = done > 0 ? (double)done : (double)steps;
    double total = used > 1e-6 ? have / used : have * G;
    if (total > 1e15)
        total = 1e15;
    int64_t n = (int64_t)ceil(total);
    return n > done ? n : done + 1;
}

/* Training of generation gen. Every rank loads the same window (the files rank 0
 * lists) and the same trainer; with several ranks each computes its share of every
 * batch and the gradients are summed (train/trainer.h). Rank 0 logs, validates and
 * writes the checkpoint. */
int run_stage_train(run_ctx *r, int gen, char *err, size_t errlen)
{
    char out[PATH_LEN], from[PATH_LEN], parent[PATH_LEN];
    join(out, r, "models/gen_%04d.h5", gen);
    int64_t done = lead(r) ? rundir_exists(out) : 0;
    comm_bcast(r->cm, &done, sizeof done, 0);
    if (done)
        return 0;
    join(from, r, "models/gen_%04d.h5", gen - 1);
    snprintf(parent, sizeof parent, "models/gen_%04d.h5", gen - 1);
    int first = gen - r->c.train.window + 1;
    if (first < 1)
        first = 1;
    int rc = 0;
    char *list = lead(r) ? window_files(r, first, gen, err, errlen) : NULL;
    if ((rc = dist_agree(r->cm, lead(r) && !list ? -1 : 0, err, errlen)) != 0)
        return rc;
    char *files = dist_bcast_text(r->cm, list ? list : "");
    free(list);
    nn_ckpt_meta pm;
    nn_params *p = nn_ckpt_load(from, r->g, &pm, err, errlen);
    dataset *d = p ? dataset_new(r->g, r->c.train.validation_fraction, err, errlen) : NULL;
    trainer *t = NULL;
    int64_t new_positions = 0, follower_positions = 0, follower_games = 0;
    int nfiles = 0, nfollower = 0, nskipped = 0;
    int steps = r->c.train.steps;
    int64_t total = 0; /* the schedule's length in steps */
    bool run_scope = !strcmp(r->c.train.schedule_scope, "run");
    if (!d) {
        nn_params_free(p);
        p = NULL;
        rc = -1;
    } else {
        dataset_set_q_ratio(d, r->c.train.q_ratio);
        /* selfplay.sizes: the smaller boards' files, padded and masked (a conv policy) */
        if (!nn_policy_is_fc(&p->layout.spec))
            dataset_allow_sizes(d, &r->c.game);
        for (char *line = strtok(files, "\n"); line; line = strtok(NULL, "\n")) {
            int k, fol, off = 0;
            if (sscanf(line, "%d %d %n", &k, &fol, &off) != 2 || off <= 0)
                continue;
            const char *dp = line + off;
            int64_t before = dataset_train_count(d) + dataset_val_count(d);
            int64_t games_before = dataset_games(d);
            char why[512];
            if (dataset_add_path(d, dp, why, sizeof why) < 0) {
                /* A damaged file is skipped, loudly: the run goes on with the rest. */
                nskipped++;
                if (lead(r)) {
                    fprintf(stderr, "gen %d train: skipping %s\n", gen, why);
                    cJSON *m = run_event("data_skipped", gen);
                    cJSON_AddStringToObject(m, "error", why);
                    run_metric(r, m);
                }
                continue;
            }
            int64_t added = dataset_train_count(d) + dataset_val_count(d) - before;
            nfiles++;
            if (k == gen)
                new_positions += added;
            if (fol) {
                nfollower++;
                follower_positions += added;
                if (k == gen)
                    follower_games += dataset_games(d) - games_before;
            }
        }
        if (dataset_train_count(d) == 0) {
            snprintf(err, errlen, "gen %d: no readable samples in the sample files of generations "
                     "%d..%d (data/gen_%04d*.h5..gen_%04d*.h5)", gen, first, gen, first, gen);
            rc = -1;
        }
    }
    free(files);
    /* every rank must hold the same window: the same samples in the same order */
    int64_t have = rc == 0 ? dataset_train_count(d) * 1000003 + dataset_val_count(d) : -1;
    if (rc == 0 && r->ranks > 1 && comm_min_i64(r->cm, have) != comm_max_i64(r->cm, have)) {
        snprintf(err, errlen, "the ranks read different samples from the same files (a file "
                 "damaged or unreadable on some hosts only?)");
        rc = -1;
    }
    if (rc == 0) {
        /* Steps from the data made (train.reuse: each new position is drawn about `reuse`
         * times), not a fixed count that reuses a small generation 10-18 times. */
        if (r->c.train.reuse > 0) {
            double sf = ceil(r->c.train.reuse * (double)new_positions / r->c.train.batch_size);
            steps = sf < 1 ? 1 : sf > 100000000 ? 100000000 : (int)sf;
        }
        /* schedule_scope run: one optimizer over the whole run. The momentum (or Adam's
         * moments) comes from the parent's /optim/ and the schedule reads the global step
         * (pm.step), over train.run_steps or (schedule_span budget) the run's budget.
         * generation: a fresh optimizer of `steps` steps. */
        total = !run_scope ? steps
                        : !strcmp(r->c.train.schedule_span, "budget")
                            ? budget_span_steps(r, gen, pm.step, steps)
                            : (r->c.train.run_steps > 0 ? r->c.train.run_steps : 0);
        t = trainer_new(p, &r->c.train, total, rng_derive(r->c.seed, 0x54520000ULL + (uint64_t)gen),
                        err, errlen);
        if (!t || (run_scope && trainer_continue(t, from, pm.step, err, errlen) < 0))
            rc = -1;
        train_reducer red = comm_reducer(r->cm);
        if (rc == 0 && trainer_set_reducer(t, &red, err, errlen) < 0)
            rc = -2;
    } else {
        nn_params_free(p);
    }
    if ((rc = dist_agree(r->cm, rc, err, errlen)) != 0) {
        trainer_free(t);
        dataset_free(d);
        return rc;
    }
    if (lead(r)) {
        cJSON *m = run_event("train_data", gen);
        cJSON_AddNumberToObject(m, "files", nfiles);
        cJSON_AddNumberToObject(m, "skipped", nskipped);
        cJSON_AddNumberToObject(m, "samples", (double)(dataset_train_count(d) + dataset_val_count(d)));
        if (r->c.selfplay.nsizes > 0)
            cJSON_AddNumberToObject(m, "smaller_board_samples", (double)dataset_smaller_count(d));
        cJSON_AddNumberToObject(m, "new_positions", (double)new_positions);
        cJSON_AddNumberToObject(m, "follower_files", nfollower);
        cJSON_AddNumberToObject(m, "follower_positions", (double)follower_positions);
        cJSON_AddNumberToObject(m, "follower_games", (double)follower_games);
        cJSON_AddNumberToObject(m, "steps", steps);
        cJSON_AddNumberToObject(m, "schedule_steps", (double)total);
        cJSON_AddNumberToObject(m, "ranks", r->ranks);
        run_metric(r, m);
        r->follower_games += follower_games;
    }
    run_progress_start(r);
    train_losses acc = {0}, l;
    int nacc = 0;
    int64_t calls0;
    double lr = 0, t0 = run_now(), tlog = t0, red0 = comm_sum_seconds(r->cm, &calls0);
    for (int s = 1; s <= steps; s++) {
        if (run_interrupted) {
            snprintf(err, errlen, "interrupted");
            rc = 1;
            break;
        }
        if (trainer_step(t, d, &l, &lr, err, errlen) < 0) {
            rc = -1;
            break;
        }
        acc.policy += l.policy, acc.value += l.value, acc.l2 += l.l2, acc.total += l.total;
        acc.entropy += l.entropy, acc.value_acc += l.value_acc, acc.aux += l.aux;
        acc.owner += l.owner, acc.action_value += l.action_value;
        nacc++;
        if ((s % r->c.train.log_every == 0 || s == steps) && lead(r)) {
            double now = run_now();
            train_losses mean = {acc.policy / nacc, acc.value / nacc, acc.l2 / nacc,
                                 acc.total / nacc, acc.entropy / nacc, acc.value_acc / nacc,
                                 acc.aux / nacc, acc.owner / nacc, acc.action_value / nacc};
            cJSON *m = run_event("train", gen);
            cJSON_AddNumberToObject(m, "step", s);
            cJSON_AddNumberToObject(m, "lr", lr);
            add_losses(m, "", &mean);
            cJSON_AddNumberToObject(m, "samples_per_s",
                                    nacc * r->c.train.batch_size / (now - tlog + 1e-9));
            if (r->ranks > 1) {
                /* the communication's share: the sums of gradients, BN statistics, losses */
                int64_t calls;
                double red = comm_sum_seconds(r->cm, &calls);
                cJSON_AddNumberToObject(m, "ranks", r->ranks);
                cJSON_AddNumberToObject(m, "allreduce_ms_per_step", 1000 * (red - red0) / nacc);
                cJSON_AddNumberToObject(m, "allreduce_calls_per_step", (double)(calls - calls0) / nacc);
                red0 = red, calls0 = calls;
            }
            run_metric(r, m);
            if (s < steps && run_progress_due(r))
                fprintf(stderr, "gen %d train: step %d/%d  loss %.3f (policy %.3f value %.3f)  "
                        "%.0f samples/s%s", gen, s, steps, mean.total, mean.policy, mean.value,
                        nacc * r->c.train.batch_size / (now - tlog + 1e-9), r->prog.tty ? "   " : "\n");
            tlog = now;
        }
        if (s % r->c.train.log_every == 0 || s == steps) {
            memset(&acc, 0, sizeof acc);
            nacc = 0;
        }
    }
    /* every rank took the same steps: a NaN stops all of them at the same step */
    if (rc == 0 && r->ranks > 1) {
        uint64_t *h = calloc((size_t)r->ranks, sizeof *h);
        if (!h)
            comm_abort(r->cm, 1);
        comm_allgather_u64(r->cm, params_hash(trainer_params(t)), h);
        int same = 1;
        for (int k = 1; k < r->ranks; k++)
            same &= h[k] == h[0];
        free(h);
        if (!same) {
            /* the sums gave different roundings on some ranks: rank 0's weights win */
            if (lead(r))
                fprintf(stderr, "gen %d train: the ranks' weights drifted apart by rounding; "
                        "using rank 0's\n", gen);
            nn_params *tp = trainer_params(t);
            comm_bcast(r->cm, tp->data, sizeof(float) * tp->layout.count, 0);
        }
    }
    if (rc == 0 && lead(r)) {
        train_losses v;
        cJSON *m = run_event("validation", gen);
        if (trainer_validate(t, d, 4096, &v) > 0) {
            add_losses(m, "", &v);
            run_metric(r, m);
        } else {
            cJSON_Delete(m);
        }
        /* with train.swa the average is what plays: only it is calibrated (gen_i's own
         * weights are where training goes on, read in fp32) */
        if (r->c.train.swa < 2) {
            calibrate_model(r, gen, d, trainer_params(t), NULL);
        } else { /* the parent's calibration belongs to other weights */
            free(trainer_params(t)->calib);
            trainer_params(t)->calib = NULL;
        }
        nn_ckpt_meta meta = {.generation = gen, .step = pm.step + steps};
        snprintf(meta.parent, sizeof meta.parent, "%s", parent);
        /* the average first: gen_i's file marks the stage done (a killed stage's average
         * is written again, renamed over the old one) */
        if (r->c.train.swa >= 2)
            rc = write_swa(r, gen, d, trainer_params(t), meta.step, err, errlen);
        if (rc == 0)
            rc = trainer_save(t, out, &meta, err, errlen);
        if (r->prog.tty)
            fputc('\n', stderr);
        if (rc == 0)
            fprintf(stderr, "gen %d train: %d steps in %.1f s%s, saved models/gen_%04d.h5\n", gen,
                    steps, run_now() - t0, r->ranks > 1 ? " (data-parallel)" : "", gen);
    }
    trainer_free(t);
    dataset_free(d);
    /* the others sleep while rank 0 validates and writes */
    comm_wait_all(r->cm);
    return dist_agree(r->cm, rc, err, errlen);
}
