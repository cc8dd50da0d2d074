/* stage_td.c — the training stage of a run whose network is an n-tuple network
 * (net.kind ntuple: 2048 on 4x4, nn/ntuple.h): generation gen is selfplay.games more
 * learning games (train/td.h) from generation gen - 1's weights, saved as
 * models/gen_NNNN.h5. The games are the self-play: no sample files are written, and a
 * killed stage plays its games again from the last saved generation (a few minutes).
 * The step size is train.lr, cosine down to train.lr x train.lr_floor over the run's
 * budget (run_budget_used) when train.schedule is cosine, else constant. Game i of
 * generation gen plays from a seed derived from the run's seed, gen and i, so one
 * thread (selfplay.threads 1) reproduces the weights. Generation 0 is zeros, or --from's
 * n-tuple network (its games counted on), with net.ntuple_stages added above its own. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loop_impl.h"
#include "engine/rng.h"
#include "nn/ntuple.h"
#include "selfplay/selfplay.h"
#include "train/td.h"

/* Gives n the config's stages (net.ntuple_stages), adding any above its own. */
static int td_stages(const run_ctx *r, ntuple *n, const char *path, char *err, size_t errlen)
{
    char why[512];
    if (ntuple_set_stages(n, r->c.net.nntuple_stages, r->c.net.ntuple_stages, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: net.ntuple_stages: %s", path, why);
        return -1;
    }
    return 0;
}

int run_setup_ntuple_gen0(run_ctx *r, const char *path, char *err, size_t errlen)
{
    char why[512];
    ntuple *n = r->from ? ntuple_load(r->from, why, sizeof why) : ntuple_new(why, sizeof why);
    if (!n) {
        snprintf(err, errlen, "%s%s", r->from ? "--from: " : "", why);
        return r->from ? -2 : -1;
    }
    int rc = td_stages(r, n, r->from ? r->from : path, err, errlen) < 0 ? -2 : 0;
    if (rc == 0 && r->from) {
        fprintf(stderr, "run: generation 0 is %s (%lld games, %d stage%s)\n", r->from, (long long)n->games,
                n->stages, n->stages > 1 ? "s" : "");
        n->generation = 0;
    }
    if (rc == 0 && ntuple_save(n, path, err, errlen) < 0)
        rc = -1;
    ntuple_free(n);
    return rc;
}

int run_stage_td(run_ctx *r, int gen, char *err, size_t errlen)
{
    char out[PATH_LEN], from[PATH_LEN];
    join(out, r, "models/gen_%04d.h5", gen);
    if (rundir_exists(out))
        return 0;
    join(from, r, "models/gen_%04d.h5", gen - 1);
    ntuple *n = ntuple_load(from, err, errlen);
    if (!n)
        return -1;
    if (td_stages(r, n, from, err, errlen) < 0) {
        ntuple_free(n);
        return -1;
    }
    double used = run_budget_used(r, gen), lr = r->c.train.lr;
    if (!strcmp(r->c.train.schedule, "cosine")) {
        double f = used < 1 ? used : 1, floor = r->c.train.lr_floor;
        lr *= floor + (1 - floor) * 0.5 * (1 + cos(M_PI * f));
    }
    int threads = r->c.selfplay.threads > 0 ? r->c.selfplay.threads : sp_cores();
    td_opts o = {.lr = lr, .lambda = r->c.selfplay.td_lambda, .threads = threads < 1 ? 1 : threads,
                 .seed = rng_derive(r->c.seed, 0x54440000ULL + (uint64_t)gen) & ((1ULL << 40) - 1)};
    td_stats st;
    double t0 = run_now();
    int rc = td_learn(n, r->g, r->c.selfplay.games, &o, &run_interrupted, &st, err, errlen);
    double secs = run_now() - t0;
    if (rc == 0 && run_interrupted) {
        snprintf(err, errlen, "interrupted");
        rc = 1;
    }
    if (rc == 0) {
        n->generation = gen;
        if (ntuple_save(n, out, err, errlen) < 0)
            rc = -1;
    }
    if (rc == 0) {
        double mean = st.games ? st.score_sum / (double)st.games : 0;
        cJSON *m = run_event("train", gen);
        cJSON_AddStringToObject(m, "kind", "ntuple");
        cJSON_AddNumberToObject(m, "games", (double)st.games);
        cJSON_AddNumberToObject(m, "moves", (double)st.moves);
        cJSON_AddNumberToObject(m, "mean_score", mean);
        cJSON_AddNumberToObject(m, "lr", lr);
        cJSON_AddNumberToObject(m, "lambda", o.lambda);
        cJSON_AddNumberToObject(m, "games_total", (double)n->games);
        cJSON_AddNumberToObject(m, "seconds", secs);
        for (int k = 11; k < 18; k++)
            if (st.games) {
                char key[16];
                snprintf(key, sizeof key, "tile_%llu", 1ULL << k);
                cJSON_AddNumberToObject(m, key, (double)st.tile_games[k] / (double)st.games);
            }
        run_metric(r, m);
        r->sp_games += st.games;
        fprintf(stderr, "gen %d td: %lld games, %lld moves in %.1f s (%.0f moves/s), lr %.4g: mean score "
                "%.0f, 2048 in %.0f%%, 8192 in %.0f%%, 16384 in %.0f%% (%lld games in all)\n",
                gen, (long long)st.games, (long long)st.moves, secs, st.moves / (secs + 1e-9), lr, mean,
                st.games ? 100.0 * st.tile_games[11] / st.games : 0,
                st.games ? 100.0 * st.tile_games[13] / st.games : 0,
                st.games ? 100.0 * st.tile_games[14] / st.games : 0, (long long)n->games);
    }
    ntuple_free(n);
    return rc;
}
