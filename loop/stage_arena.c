/* stage_arena.c — the arena stage of the generation loop: the new model against the
 * best one, the one arena.lookback generations older and every arena.baselines player
 * into arena/gen_NNNN.jsonl (three players: the seats balanced between the two sides,
 * match()); with several MPI ranks each plays its share of the games and rank 0 writes
 * them in game order. One-player scored games (2048, loop/solo.h) have no opponent:
 * every model plays the same numbered games alone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "loop_impl.h"
#include "solo.h"
#include "engine/arena.h"
#include "engine/rng.h"
#include "nn/net_eval.h"
#include "nn/net_player.h"

typedef struct arena_prog {
    run_ctx *r;
    int gen;
    const char *opp;
} arena_prog;

static void arena_progress(void *ctx, int done, int total, const arena_tally *t, int np)
{
    (void)np;
    arena_prog *x = ctx;
    if (!lead(x->r) || done == total || !run_progress_due(x->r)) /* the stage sums up */
        return;
    if (x->r->solo) {
        fprintf(stderr, "gen %d arena %s: %d/%d games, mean score %.0f%s", x->gen, x->opp, done, total,
                t[0].games ? t[0].score_sum / t[0].games : 0.0, x->r->prog.tty ? "   " : "\n");
        return;
    }
    fprintf(stderr, "gen %d arena vs %s: %d/%d games, %d-%d-%d%s", x->gen, x->opp, done, total,
            t[0].wins, t[0].draws, t[0].losses, x->r->prog.tty ? "   " : "\n");
}

/* Makes a player and names it `name` (Elo tables use the names). */
static player *make_player(run_ctx *r, const char *spec, const char *name, char *err, size_t errlen)
{
    player *p = player_new(spec, r->g, &r->c, net_player_ext(), err, errlen);
    if (p && name)
        snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* The run's model rel (relative to the run directory) as a player named name, searching
 * arena.simulations per move. Made here rather than through a "model:PATH" spec, which
 * would hold the whole run directory path and outgrow PLAYER_NAME_LEN in a deep one. */
static player *make_model_player(run_ctx *r, const char *rel, const char *name, char *err,
                                 size_t errlen)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/%s", r->dir, rel);
    if (r->ntuple) { /* expectimax over the n-tuple values, arena.depth moves deep */
        char spec[PATH_LEN + 64];
        snprintf(spec, sizeof spec, "model-expectimax:%s:%d", path, r->c.arena.depth);
        return make_player(r, spec, name, err, errlen);
    }
    evaluator *e = net_eval_load(r->g, &r->c, path, err, errlen);
    if (!e)
        return NULL;
    uint64_t seed = rng_derive(r->c.seed, 0x706c6179 ^ (uint64_t)strlen(name));
    return player_mcts_new(r->g, &r->c, e, r->c.arena.simulations, seed, name, "model", err, errlen);
}

/* With several ranks, after a match in which each rank wrote its share of the games to
 * its own file `mine` (RESULTS.rR): rank 0 appends every rank's games to `results` in
 * game order, the n tallies are summed on every rank, and `mine` is removed. rc is this
 * rank's status so far; returns the status all ranks agree on. */
static int gather_games(run_ctx *r, int rc, const char *mine, const char *results,
                        arena_tally *tally, int n, char *err, size_t errlen)
{
    comm_wait_all(r->cm);
    if ((rc = dist_agree(r->cm, rc, err, errlen)) == 0) {
        char *text = rundir_read_text(mine, NULL);
        char *merged = dist_merge_games(r->cm, text ? text : "", err, errlen);
        free(text);
        if (lead(r)) {
            FILE *f = merged ? fopen(results, "ab") : NULL;
            size_t len = merged ? strlen(merged) : 0;
            if (!merged)
                rc = -1;
            else if (!f || fwrite(merged, 1, len, f) != len || fflush(f) != 0)
                snprintf(err, errlen, "%s: cannot append: %s", results, strerror(errno)), rc = -1;
            if (f && fclose(f) != 0 && rc == 0)
                snprintf(err, errlen, "%s: cannot append: %s", results, strerror(errno)), rc = -1;
        }
        free(merged);
        dist_sum_tallies(r->cm, tally, n);
        rc = dist_agree(r->cm, rc, err, errlen);
    }
    unlink(mine);
    return rc;
}

/* One arena_run of ps[] (g->players of them, seats rotated) on `games` games from seed
 * into results. With several ranks each plays its share of the games (arena.h: game i
 * goes to rank i % ranks) into its own results file RESULTS.rR; rank 0 then appends
 * every rank's games to `results` in game order and the tallies are summed on every
 * rank. */
static int play_games(run_ctx *r, int gen, player *const *ps, int games, uint64_t seed,
                      const char *opp_name, const char *results, arena_tally *tally, char *err,
                      size_t errlen)
{
    arena_opts o = {0};
    o.games = games;
    o.opening_moves = r->c.arena.opening_moves;
    o.seed = seed;
    char mine[PATH_LEN + 16];
    snprintf(mine, sizeof mine, "%s.r%d", results, r->rank);
    o.results_path = results;
    if (r->ranks > 1) {
        o.shards = r->ranks;
        o.shard = r->rank;
        o.results_path = mine;
        unlink(mine);
    }
    arena_prog ap = {r, gen, opp_name};
    run_progress_start(r);
    o.progress = arena_progress;
    o.progress_ctx = &ap;
    int rc = arena_run(r->g, ps, r->g->players, &o, tally, err, errlen);
    if (r->prog.tty && lead(r))
        fputc('\n', stderr);
    if (r->ranks > 1)
        rc = gather_games(r, rc, mine, results, tally, r->g->players, err, errlen);
    return rc;
}

/* A match's result for the candidate: two players, its games' wins, draws and losses;
 * three players, its head-to-head pairs against the opponent (each game counts every
 * pair of a candidate seat and an opponent seat: above, level or below). */
typedef struct match_result {
    int games, wins, draws, losses;
} match_result;

static double match_score(const match_result *m)
{
    int n = m->wins + m->draws + m->losses;
    return n ? (m->wins + 0.5 * m->draws) / n : 0;
}

/* One match of the candidate against opp: opp_model (relative to the run directory)
 * when not NULL, else the player opp_spec. Two players: arena.games games, colours
 * alternating. Three players: the seats are balanced between the two sides, since two
 * copies of one model play like a team against the third player (docs/strength.md,
 * Sanling): half the games are {cand, opp, opp} and half {cand, cand2, opp}
 * (cand2 a second instance of the candidate), on the same openings; the result counts
 * head-to-head pairs. The games' seed comes from the generation and the opponent's name
 * (its length: the seeds of earlier runs' matches stay as they were), xor salt: the
 * lookback match takes one of its own, since every gen_NNNN name has the best model's
 * length and its games would otherwise be the best match's. */
static int match(run_ctx *r, int gen, player *cand, player *cand2, const char *opp_model,
                 const char *opp_spec, const char *opp_name, uint64_t salt, const char *results,
                 match_result *res, char *err, size_t errlen)
{
    player *ps[GAME_MAX_PLAYERS] = {cand, NULL, NULL};
    int np = r->g->players, rc = 0;
    for (int k = 1; k < np && rc == 0; k++) {
        ps[k] = opp_model ? make_model_player(r, opp_model, opp_name, err, errlen)
                          : make_player(r, opp_spec, opp_name, err, errlen);
        if (!ps[k])
            rc = -1;
    }
    memset(res, 0, sizeof *res);
    uint64_t seed = rng_derive(r->c.seed, 0x41520000ULL + (uint64_t)gen * 64 + strlen(opp_name)) ^
                    salt;
    int games = r->c.arena.games;
    if (rc == 0 && np == 2) {
        arena_tally t[GAME_MAX_PLAYERS];
        rc = play_games(r, gen, ps, games, seed, opp_name, results, t, err, errlen);
        *res = (match_result){t[0].games, t[0].wins, t[0].draws, t[0].losses};
    } else if (rc == 0) {
        /* {cand, opp, opp} on the first (games + 1) / 2, {cand, cand2, opp} on the rest */
        int half[2] = {(games + 1) / 2, games / 2};
        for (int part = 0; part < 2 && rc == 0; part++) {
            if (half[part] == 0)
                continue;
            player *seats[GAME_MAX_PLAYERS] = {cand, part ? cand2 : ps[1], part ? ps[1] : ps[2]};
            arena_tally t[GAME_MAX_PLAYERS];
            rc = play_games(r, gen, seats, half[part], seed, opp_name, results, t, err, errlen);
            if (rc != 0)
                break;
            res->games += t[0].games;
            /* the candidate's seats against the opponent's */
            for (int i = 0; i < np; i++)
                for (int j = 0; j < np; j++) {
                    bool ci = i == 0 || (part && i == 1), cj = j == 0 || (part && j == 1);
                    if (!ci || cj)
                        continue;
                    res->wins += t[i].above[j];
                    res->draws += t[i].level[j];
                    res->losses += t[i].games - t[i].above[j] - t[i].level[j];
                }
        }
    } else if (r->ranks > 1) {
        /* a player that cannot be made fails on every rank, but agree anyway */
        comm_wait_all(r->cm);
        rc = dist_agree(r->cm, rc, err, errlen);
    }
    for (int k = 1; k < np; k++)
        player_free(ps[k]);
    return rc;
}

/* One player of a one-player arena: `games` numbered games on the run's fixed seeds,
 * appended to results (tmp; by rank 0, with every rank's share of the games). */
static int solo_games(run_ctx *r, int gen, player *p, const char *results, arena_solo_summary *sum,
                      char *err, size_t errlen)
{
    /* the same seed every generation: every model plays the same numbered games */
    arena_tally t;
    int rc = play_games(r, gen, &p, r->c.arena.games, rng_derive(r->c.seed, 0x534f4c4fULL),
                        p->name, results, &t, err, errlen);
    if (rc != 0)
        return rc;
    /* the scores just written are read back by the caller's table */
    sum->games = t.games;
    sum->mean = t.games ? t.score_sum / t.games : 0;
    return 0;
}

/* The arena stage of a one-player game: the candidate's games; in generation 1 also
 * generation 0's and the baselines' (their scores do not change: once is enough). */
static int stage_arena_solo(run_ctx *r, int gen, const char *tmp, player *cand, cJSON *m,
                            char *err, size_t errlen)
{
    int rc = 0;
    player *others[CFG_LIST_MAX + 1];
    int no = 0;
    if (gen == 1) {
        others[no] = make_model_player(r, "models/gen_0000.h5", "gen_0000", err, errlen);
        if (!others[no])
            rc = -1;
        else
            no++;
        for (int b = 0; b < r->c.arena.nbaselines && rc == 0; b++) {
            others[no] = make_player(r, r->c.arena.baselines[b], r->c.arena.baselines[b], err, errlen);
            if (!others[no])
                rc = -1;
            else
                no++;
        }
    }
    rc = dist_agree(r->cm, rc, err, errlen); /* every rank plays, or none */
    arena_solo_summary sum;
    if (rc == 0)
        rc = solo_games(r, gen, cand, tmp, &sum, err, errlen);
    for (int k = 0; k < no && rc == 0; k++) {
        rc = solo_games(r, gen, others[k], tmp, &sum, err, errlen);
        if (run_interrupted && rc == 0) {
            snprintf(err, errlen, "interrupted");
            rc = 1;
        }
    }
    for (int k = 0; k < no; k++)
        player_free(others[k]);
    if (rc != 0 || !lead(r)) /* the table: rank 0's, from the gathered games */
        return rc;
    solo_table t = {0};
    if (solo_table_add_file(&t, tmp) < 0) {
        solo_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < t.n; i++) {
        arena_solo_summary s;
        solo_row_summary(&t.rows[i], &s);
        cJSON *o = cJSON_AddObjectToObject(m, t.rows[i].name);
        cJSON_AddNumberToObject(o, "games", s.games);
        cJSON_AddNumberToObject(o, "mean", s.mean);
        cJSON_AddNumberToObject(o, "lo", s.lo);
        cJSON_AddNumberToObject(o, "hi", s.hi);
        cJSON_AddNumberToObject(o, "median", s.median);
        if (s.best_tile >= 0 && s.best_tile < 53)
            cJSON_AddNumberToObject(o, "max_tile", (double)(1ull << s.best_tile));
        fprintf(stderr, "gen %d arena: %s mean score %.0f [%.0f, %.0f], median %.0f", gen,
                t.rows[i].name, s.mean, s.lo, s.hi, s.median);
        if (s.best_tile >= 0 && s.best_tile < 53)
            fprintf(stderr, ", largest tile %llu (%.0f%% of games)", 1ull << s.best_tile,
                    100 * s.reached[s.best_tile]);
        fputc('\n', stderr);
    }
    solo_table_free(&t);
    return 0;
}

int run_stage_arena(run_ctx *r, int gen, char *err, size_t errlen)
{
    char out[PATH_LEN], tmp[PATH_LEN + 8], name[32], rel[64];
    join(out, r, "arena/gen_%04d.jsonl", gen);
    int64_t done = lead(r) ? rundir_exists(out) : 0;
    comm_bcast(r->cm, &done, sizeof done, 0);
    if (done)
        return 0;
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    if (lead(r))
        unlink(tmp); /* a killed arena's partial games are played again */
    run_played_model(r, gen, rel, sizeof rel);
    snprintf(name, sizeof name, "gen_%04d", gen);
    player *cand = make_model_player(r, rel, name, err, errlen), *cand2 = NULL;
    if (cand && !r->solo && r->g->players == 3) /* the candidate's second seat: match() */
        cand2 = make_model_player(r, rel, name, err, errlen);
    int rc = dist_agree(r->cm, cand && (r->solo || r->g->players < 3 || cand2) ? 0 : -1, err,
                        errlen);
    if (rc != 0) {
        player_free(cand);
        player_free(cand2);
        return rc;
    }
    cJSON *m = run_event("arena", gen);
    /* arena.every: the other generations play no games (promoted when arena.gate is 0) */
    bool games = r->c.arena.games > 0 && gen % r->c.arena.every == 0;
    if (r->solo && games) {
        rc = stage_arena_solo(r, gen, tmp, cand, m, err, errlen);
    } else if (games) {
        /* against the best model, the one arena.lookback generations older, then every
         * baseline (b = -2, -1, 0...) */
        char bname[32], lname[32], lrel[64];
        snprintf(bname, sizeof bname, "gen_%04d", r->best_gen);
        int back = gen - r->c.arena.lookback;
        snprintf(lname, sizeof lname, "gen_%04d", back);
        run_played_model(r, back, lrel, sizeof lrel);
        bool lookback = r->c.arena.lookback > 0 && back >= 0 && back != r->best_gen;
        const char *pairs = r->g->players > 2 ? " head to head" : "";
        for (int b = -2; rc == 0 && b < r->c.arena.nbaselines; b++) {
            if (b == -1 && !lookback)
                continue;
            const char *opp = b == -2 ? bname : b == -1 ? lname : r->c.arena.baselines[b];
            const char *model = b == -2 ? r->best : b == -1 ? lrel : NULL;
            match_result x;
            /* the lookback's games differ from the best match's (same name length) */
            uint64_t salt = b == -1 ? rng_derive(0x4c4f4f4bULL, (uint64_t)back) : 0;
            rc = match(r, gen, cand, cand2, model, opp, opp, salt, tmp, &x, err, errlen);
            if (rc == 0) {
                cJSON *o = cJSON_AddObjectToObject(m, opp);
                cJSON_AddNumberToObject(o, "games", x.games);
                cJSON_AddNumberToObject(o, "wins", x.wins);
                cJSON_AddNumberToObject(o, "draws", x.draws);
                cJSON_AddNumberToObject(o, "losses", x.losses);
                cJSON_AddNumberToObject(o, "score", match_score(&x));
                if (lead(r))
                    fprintf(stderr, "gen %d arena: vs %s%s %d-%d-%d%s\n", gen, opp,
                            b == -2 ? " (best)" : "", x.wins, x.draws, x.losses, pairs);
            }
            if (run_interrupted && rc == 0) {
                snprintf(err, errlen, "interrupted");
                rc = 1;
            }
        }
    }
    player_free(cand2);
    player_free(cand);
    if (rc == 0 && lead(r)) {
        if (!rundir_exists(tmp)) { /* no games: an empty file still marks the stage done */
            FILE *f = fopen(tmp, "wb");
            if (f)
                fclose(f);
        }
        if (rename(tmp, out) < 0) {
            snprintf(err, errlen, "%s: cannot rename: %s", tmp, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0) {
        if (r->ranks > 1)
            cJSON_AddNumberToObject(m, "ranks", r->ranks);
        run_metric(r, m);
    } else {
        cJSON_Delete(m);
        if (lead(r))
            unlink(tmp); /* interrupted or failed: its games are played again next time */
    }
    return dist_agree(r->cm, rc, err, errlen);
}
