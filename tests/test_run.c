/* gridzero run (loop/loop.h), end to end through the binary ($GZ_BIN) on tic-tac-toe
 * with tiny settings: the run directory's contents; resume after a simulated crash
 * (GZ_RUN_CRASH_AFTER=GEN:STAGE sends SIGKILL after that stage) and after a real
 * kill -9 at an arbitrary moment — finished files are not rewritten, no .tmp is left,
 * and arena.jsonl / ratings.csv are byte-identical to an uninterrupted run with the same
 * seed; a run directory made with another config is refused (exit 2); a finished run is
 * extended by asking for more generations; a truncated sample file in the window is
 * reported by name and skipped; a second run on a directory in use is refused (the lock),
 * and a kill -9 of the holder does not block the resume; a full disk ends a run with
 * exit 1 and no .tmp, and the run then resumes. */
#include "run_util.h"
#include "loop/rundata.h"
#include "loop/rundir.h"
#include "nn/checkpoint.h"
#include "nn/ntuple.h"
#include "selfplay/samples.h"

/* Writes lines into DIR/arena/gen_0002.jsonl (the directory made as needed). */
static void write_arena(const char *rd, const char *lines)
{
    char p[400];
    mkdir(rd, 0755);
    mkdir(pathf(p, sizeof p, rd, "arena"), 0755);
    FILE *f = fopen(pathf(p, sizeof p, rd, "arena/gen_0002.jsonl"), "wb");
    ck_assert_ptr_nonnull(f);
    fputs(lines, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The promote rule (loop/rundir.c): the candidate's head-to-head score against the best
 * model, from the games of those two alone. Two players: wins + draws / 2 per game.
 * Three players: every (candidate seat, best seat) pair, so the games with the
 * candidate alone and those with two candidates count alike. */
START_TEST(promote_score_head_to_head)
{
    char rd[300];
    double s = -1;
    snprintf(rd, sizeof rd, "%s/two", dir);
    ck_assert_int_eq(rundir_best_score(rd, 2, 1, &s), 0); /* no file: not played yet */
    write_arena(rd, "{\"players\":[\"gen_0002\",\"gen_0001\"],\"result\":[1,-1]}\n"
                    "{\"players\":[\"gen_0001\",\"gen_0002\"],\"result\":[0,0]}\n"
                    "{\"players\":[\"gen_0002\",\"random\"],\"result\":[-1,1]}\n"
                    "{\"players\":[\"gen_0001\",\"gen_0002\"],\"result\":[1,-1]}\n");
    ck_assert_int_eq(rundir_best_score(rd, 2, 1, &s), 3);
    ck_assert_double_eq_tol(s, 1.5 / 3, 1e-12);

    snprintf(rd, sizeof rd, "%s/three", dir);
    write_arena(rd,
                /* alone, middle place: above one copy, below the other */
                "{\"players\":[\"gen_0002\",\"gen_0001\",\"gen_0001\"],\"result\":[0,1,-1]}\n"
                /* twice: one copy above the best, one below */
                "{\"players\":[\"gen_0002\",\"gen_0002\",\"gen_0001\"],\"result\":[1,-1,0]}\n"
                /* alone, last: below both copies */
                "{\"players\":[\"gen_0001\",\"gen_0001\",\"gen_0002\"],\"result\":[0.5,0.5,-1]}\n"
                /* twice, all level: a level pair counts a half */
                "{\"players\":[\"gen_0001\",\"gen_0002\",\"gen_0002\"],\"result\":[0,0,0]}\n"
                /* a baseline at the table: not a game against the best */
                "{\"players\":[\"gen_0002\",\"gen_0001\",\"random\"],\"result\":[1,0,-1]}\n"
                "{\"players\":[\"gen_0002\",\"random\",\"random\"],\"result\":[1,0,-1]}\n");
    ck_assert_int_eq(rundir_best_score(rd, 2, 1, &s), 4);
    /* pairs: 1 of 2, 1 of 2, 0 of 2, 1 of 2 (two level pairs) */
    ck_assert_double_eq_tol(s, 3.0 / 8, 1e-12);

    double got = -1;
    int n = -1;
    ck_assert(rundir_promotes(rd, 0, 2, 1, &got, &n)); /* gate 0: always */
    ck_assert(rundir_promotes(rd, 0.375, 2, 1, NULL, NULL));
    ck_assert(!rundir_promotes(rd, 0.4, 2, 1, &got, &n));
    ck_assert_int_eq(n, 4);
    ck_assert_double_eq_tol(got, 3.0 / 8, 1e-12);

    /* a file from before the balanced seats (the candidate never twice) keeps its rule:
     * the lone candidate's first place 1, last 0, else 1/2 (pairs would say 7/8) */
    snprintf(rd, sizeof rd, "%s/old", dir);
    write_arena(rd, "{\"players\":[\"gen_0002\",\"gen_0001\",\"gen_0001\"],\"result\":[1,1,-1]}\n"
                    "{\"players\":[\"gen_0001\",\"gen_0002\",\"gen_0001\"],\"result\":[-1,1,0]}\n");
    ck_assert_int_eq(rundir_best_score(rd, 2, 1, &s), 2);
    ck_assert_double_eq_tol(s, 0.75, 1e-12);
}
END_TEST

/* Writes text into DIR/name. */
static void write_file(const char *rd, const char *name, const char *text)
{
    char p[400];
    FILE *f = fopen(pathf(p, sizeof p, rd, name), "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* What the loop, serve and selfplay --follow read of a run directory (loop/rundir.c):
 * state.json's generation and stage, the best model from `best` (no file: none yet;
 * anything but a model of the run: refused), and the paths of a generation's files. */
START_TEST(rundir_state_and_best)
{
    char rd[300], p[400], stage[32] = "", rel[64] = "";
    int gen = -1;
    snprintf(rd, sizeof rd, "%s/state", dir);
    ck_assert_int_eq(mkdir(rd, 0755), 0);
    ck_assert_int_eq(rundir_read_state(rd, &gen, stage, sizeof stage), 0);
    ck_assert_int_eq(rundir_read_best(rd, rel, sizeof rel, &gen), 0);
    write_file(rd, "state.json", "{\"generation\": 3, \"stage\": \"train\", \"best\": \"x\"}\n");
    ck_assert_int_eq(rundir_read_state(rd, &gen, stage, sizeof stage), 1);
    ck_assert_int_eq(gen, 3);
    ck_assert_str_eq(stage, "train");
    write_file(rd, "state.json", "{\"generation\": 3}\n");
    ck_assert_int_eq(rundir_read_state(rd, &gen, stage, sizeof stage), -1);
    write_file(rd, "best", "models/gen_0002.h5\n");
    ck_assert_int_eq(rundir_read_best(rd, rel, sizeof rel, &gen), 1);
    ck_assert_str_eq(rel, "models/gen_0002.h5");
    ck_assert_int_eq(gen, 2);
    write_file(rd, "best", "../elsewhere.h5\n");
    ck_assert_int_eq(rundir_read_best(rd, rel, sizeof rel, NULL), -1);
    rundir_path(p, sizeof p, rd, "arena/gen_%04d.jsonl", 12);
    ck_assert_str_eq(p + strlen(rd), "/arena/gen_0012.jsonl");
    ck_assert(!rundir_exists(p));
    ck_assert(rundir_exists(rd));
}
END_TEST

/* each_event callback: the arena event's match against gen_0001 (the best) */
static void arena_vs_best(const cJSON *o, void *ctx)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "gen_0001");
    if (m)
        *(cJSON **)ctx = cJSON_Duplicate(m, true);
}

/* each_event callback: the promote event's score */
static void promote_score(const cJSON *o, void *ctx)
{
    *(double *)ctx = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "score_vs_best"));
}

/* Three players (Sanling): the arena balances the seats between the candidate and each
 * opponent. Half the games have the candidate alone against two copies, half two
 * copies of the candidate against one; the opponent sits in every seat of both halves;
 * the event counts head-to-head pairs (two a game), and promotion reads the same score. */
START_TEST(three_players_balanced_seats)
{
    char rd[300], out[16384], cfg[400];
    snprintf(rd, sizeof rd, "%s/sanling", dir);
    snprintf(cfg, sizeof cfg, "%s/configs/sanling9.json", getenv("GZ_SRC"));
    const char *extra[] = {"-c", cfg, "--set", "game.size=5", "--set", "game.moves=12",
                           "--set", "arena.games=12", "--set", "arena.baselines=[\"random\"]",
                           "--set", "mcts.temperature_moves=0", NULL};
    int rc = gz_run(rd, 2, NULL, extra, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    char *text = slurp_rel(rd, "arena/gen_0002.jsonl");
    ck_assert_ptr_nonnull(text);
    /* seat[0][k]: games with the candidate alone in seat k; seat[1][k]: the best alone */
    int alone = 0, twice = 0, vs_random = 0, seat[2][3] = {{0}};
    int pair[3] = {0}; /* the candidate's pairs against the best: above, level, below */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *pl = cJSON_GetObjectItemCaseSensitive(o, "players");
        ck_assert_int_eq(cJSON_GetArraySize(pl), 3);
        int cand = 0, best = 0, cseat = -1, oseat = -1;
        for (int k = 0; k < 3; k++) {
            const char *nm = cJSON_GetArrayItem(pl, k)->valuestring;
            if (!strcmp(nm, "gen_0002"))
                cand++, cseat = k;
            else if (!strcmp(nm, "gen_0001") || !strcmp(nm, "random"))
                best++, oseat = k;
        }
        ck_assert_int_eq(cand + best, 3);
        ck_assert_int_ge(cand, 1);
        ck_assert_int_ge(best, 1);
        if (strstr(line, "random"))
            vs_random++;
        else if (cand == 1)
            alone++, seat[0][cseat]++;
        else
            twice++, seat[1][oseat]++;
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
        for (int i = 0; i < 3 && !strstr(line, "random"); i++)
            for (int j = 0; j < 3; j++) {
                bool ci = !strcmp(cJSON_GetArrayItem(pl, i)->valuestring, "gen_0002");
                bool cj = !strcmp(cJSON_GetArrayItem(pl, j)->valuestring, "gen_0002");
                if (!ci || cj)
                    continue;
                double zi = cJSON_GetArrayItem(res, i)->valuedouble;
                double zj = cJSON_GetArrayItem(res, j)->valuedouble;
                pair[zi > zj ? 0 : zi == zj ? 1 : 2]++;
            }
        cJSON_Delete(o);
    }
    free(text);
    ck_assert_int_eq(alone, 6);
    ck_assert_int_eq(twice, 6);
    ck_assert_int_eq(vs_random, 12);
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(seat[0][k] == 2, "the candidate alone sat in seat %d %d times", k,
                      seat[0][k]);
        ck_assert_msg(seat[1][k] == 2, "the best alone sat in seat %d %d times", k, seat[1][k]);
    }
    cJSON *m = NULL;
    ck_assert_int_eq(each_event(rd, "arena", arena_vs_best, &m), 2);
    ck_assert_ptr_nonnull(m);
    int w = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "wins"));
    int d = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "draws"));
    int l = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "losses"));
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "games")), 12);
    ck_assert_int_eq(w + d + l, 24);
    /* the event counts the candidate's side of each pair (with wins != losses here, a
     * count from the opponent's side would not match) */
    ck_assert_msg(w == pair[0] && d == pair[1] && l == pair[2], "event %d-%d-%d, games %d-%d-%d",
                  w, d, l, pair[0], pair[1], pair[2]);
    ck_assert_int_ne(w, l);
    double score = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "score"));
    ck_assert_double_eq_tol(score, (w + 0.5 * d) / 24, 1e-9);
    cJSON_Delete(m);
    double promoted = -1, direct = -1;
    ck_assert_int_eq(each_event(rd, "promote", promote_score, &promoted), 2);
    ck_assert_double_eq_tol(promoted, score, 1e-9);
    ck_assert_int_eq(rundir_best_score(rd, 2, 1, &direct), 12);
    ck_assert_double_eq_tol(direct, score, 1e-9);
}
END_TEST

/* each_event callback: bit g of *mask set when generation g's arena event met ctx's name */
typedef struct lookback_seen {
    unsigned mask;
    int lookback;
} lookback_seen;

static void arena_lookback(const cJSON *o, void *ctx)
{
    lookback_seen *x = ctx;
    int gen = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
    char name[32];
    snprintf(name, sizeof name, "gen_%04d", gen - x->lookback);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, name);
    if (m) {
        ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "games")), 4);
        x->mask |= 1u << gen;
    }
}

/* arena.lookback: each candidate also plays the model that many generations older, in
 * its arena file (so in the ratings) and its arena event; not when that model is the
 * best (already met) or does not exist. */
START_TEST(lookback_match)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/back2", dir);
    const char *two[] = {"--set", "arena.lookback=2", NULL};
    int rc = gz_run(rd, 3, NULL, two, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    lookback_seen x = {0, 2};
    ck_assert_int_eq(each_event(rd, "arena", arena_lookback, &x), 3);
    /* always promoted (gate 0): gen 2 meets gen 0, gen 3 gen 1; gen 1 has none older */
    ck_assert_uint_eq(x.mask, (1u << 2) | (1u << 3));
    char *a = slurp_rel(rd, "arena/gen_0003.jsonl");
    ck_assert_ptr_nonnull(a);
    ck_assert_msg(strstr(a, "\"gen_0001\"") != NULL, "%s", a);
    free(a);

    /* lookback 1 with every candidate promoted: the older model is the best, met once */
    snprintf(rd, sizeof rd, "%s/back1", dir);
    const char *one[] = {"--set", "arena.lookback=1", NULL};
    rc = gz_run(rd, 2, NULL, one, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    x = (lookback_seen){0, 1};
    ck_assert_int_eq(each_event(rd, "arena", arena_lookback, &x), 2);
    ck_assert_uint_eq(x.mask, (1u << 1) | (1u << 2)); /* as the best */
    char *b = slurp_rel(rd, "arena/gen_0002.jsonl");
    int vs_prev = 0;
    for (const char *q = b; (q = strstr(q, "\"gen_0001\"")) != NULL; q++)
        vs_prev++;
    ck_assert_int_eq(vs_prev, 4); /* one match of 4 games, not two */
    free(b);
}
END_TEST

/* arena.every 2: generations 1 and 3 play no arena games (an empty file marks the stage
 * done) and are promoted (gate 0); generation 2 plays its matches as usual; with a gate,
 * a generation without games is not promoted. */
START_TEST(arena_every)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/every2", dir);
    const char *two[] = {"--set", "arena.every=2", NULL};
    int rc = gz_run(rd, 3, NULL, two, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    for (int gen = 1; gen <= 3; gen++) {
        char rel[64];
        snprintf(rel, sizeof rel, "arena/gen_%04d.jsonl", gen);
        char *a = slurp_rel(rd, rel);
        ck_assert_msg(a != NULL, "%s missing", rel);
        if (gen == 2)
            ck_assert_msg(strstr(a, "\"gen_0001\"") != NULL, "%s", a);
        else
            ck_assert_msg(a[0] == 0, "generation %d played: %s", gen, a);
        free(a);
    }
    char *best = slurp_rel(rd, "best");
    ck_assert_msg(best && strstr(best, "gen_0003"), "%s", best ? best : "(none)");
    free(best);
    snprintf(rd, sizeof rd, "%s/every2gate", dir);
    const char *gated[] = {"--set", "arena.every=2", "--set", "arena.gate=0.01", NULL};
    rc = gz_run(rd, 1, NULL, gated, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    best = slurp_rel(rd, "best");
    ck_assert_msg(best && strstr(best, "gen_0000"), "%s", best ? best : "(none)");
    free(best);
}
END_TEST

/* each_event callback: generation 2's selfplay event into ctx */
static void selfplay_gen2(const cJSON *o, void *ctx)
{
    if ((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation")) == 2)
        *(cJSON **)ctx = cJSON_Duplicate(o, 1);
}

/* selfplay.part_minutes: a run killed in the middle of a generation's self-play keeps
 * the games of the parts it closed, and the same command plays only the rest: the parts
 * then gen_0002.h5 hold the generation's 16 games, numbered 0..15 with none twice, and
 * training reads them all. */
START_TEST(selfplay_parts_survive_a_kill)
{
    char rd[300], out[16384], p[400], rel[64], err[512];
    snprintf(rd, sizeof rd, "%s/parts", dir);
    const char *parts[] = {"--set", "selfplay.part_minutes=1e-9", NULL};
    int rc = gz_run(rd, 2, "2:selfplay-game3", parts, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "exit %d, not killed:\n%s", rc, out);
    /* a part after each finished game: the first three are there, whole */
    for (int k = 0; k < 3; k++) {
        snprintf(rel, sizeof rel, "data/gen_0002.p%03d.h5", k);
        int64_t games;
        ck_assert_msg(sp_read_games(pathf(p, sizeof p, rd, rel), &games, NULL, err, sizeof err) == 0,
                      "%s", err);
        ck_assert_int_eq(games, 1);
    }
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.h5")));
    ck_assert(!exists(pathf(p, sizeof p, rd, "models/gen_0002.h5")));

    rc = gz_run(rd, 2, NULL, parts, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "resume exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "gen 2 selfplay: 3 games kept from an interrupted session; "
                              "playing 13 more") != NULL, "%s", out);
    ck_assert(exists(pathf(p, sizeof p, rd, "models/gen_0002.h5")));
    /* the generation's files: its parts in a row, then gen_0002.h5 */
    int nparts = 0, seen[64] = {0}, next = 0;
    int64_t games_all = 0, samples = 0;
    for (int k = 0;; k++) {
        bool last = false;
        snprintf(rel, sizeof rel, "data/gen_0002.p%03d.h5", k);
        if (!exists(pathf(p, sizeof p, rd, rel))) {
            snprintf(rel, sizeof rel, "data/gen_0002.h5");
            last = true;
        } else {
            nparts++;
        }
        int64_t games;
        int32_t nx;
        ck_assert_msg(sp_read_games(pathf(p, sizeof p, rd, rel), &games, &nx, err, sizeof err) == 0,
                      "%s", err);
        games_all += games;
        if (k < 3)
            next = nx > next ? nx : next;
        sp_file *f = sp_file_read(p, NULL, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        ck_assert_int_eq(f->meta.generation, 2);
        samples += f->n;
        for (int64_t i = 0; i < f->n; i++) {
            ck_assert(f->gameix[i] >= 0 && f->gameix[i] < 64);
            seen[f->gameix[i]] |= 1 << (k < 3 ? 0 : 1); /* kept, or played after */
        }
        sp_file_free(f);
        if (last)
            break;
    }
    ck_assert_int_eq(games_all, 16);
    ck_assert_int_eq(nparts, 15); /* 3 kept, 12 more: the last game goes to gen_0002.h5 */
    /* the new games are numbered after the kept ones' largest number: none twice */
    int kept_n = 0, new_n = 0;
    for (int i = 0; i < 64; i++) {
        ck_assert_msg(seen[i] != 3, "game %d in the kept parts and after them", i);
        kept_n += seen[i] == 1;
        new_n += seen[i] == 2;
        if (seen[i] == 2)
            ck_assert_int_ge(i, next);
        if (seen[i] == 1)
            ck_assert_int_lt(i, next);
    }
    ck_assert_int_eq(kept_n, 3); /* tic-tac-toe: every game has samples */
    ck_assert_int_eq(new_n, 13);
    cJSON *ev = NULL;
    each_event(rd, "selfplay", selfplay_gen2, &ev);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "games")), 13);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "games_kept")), 3);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "parts")), 12);
    cJSON_Delete(ev);
    /* training read every file of the window: 16 of generation 1 (a part after each
     * game but the last) and 16 of generation 2 */
    ev = NULL;
    each_event(rd, "train_data", selfplay_gen2, &ev);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "files")), 32);
    ck_assert_int_eq((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "new_positions")),
                     samples);
    cJSON_Delete(ev);

    /* killed again at the same point; a part damaged since, and parts off for the rest:
     * the damaged part is named and its game played again, the new games are still
     * numbered after the kept ones, all in gen_0002.h5 */
    snprintf(rd, sizeof rd, "%s/parts_off", dir);
    rc = gz_run(rd, 2, "2:selfplay-game3", parts, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "exit %d, not killed:\n%s", rc, out);
    FILE *f = fopen(pathf(p, sizeof p, rd, "data/gen_0002.p001.h5"), "wb");
    ck_assert_ptr_nonnull(f);
    fputs("not HDF5", f);
    fclose(f);
    next = 0;
    for (int k = 0; k < 3; k += 2) {
        int64_t games;
        int32_t nx;
        snprintf(rel, sizeof rel, "data/gen_0002.p%03d.h5", k);
        ck_assert_msg(sp_read_games(pathf(p, sizeof p, rd, rel), &games, &nx, err, sizeof err) == 0,
                      "%s", err);
        next = nx > next ? nx : next;
    }
    const char *off[] = {"--set", "selfplay.part_minutes=0", NULL};
    rc = gz_run(rd, 2, NULL, off, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "resume exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "gen_0002.p001.h5: not an HDF5 file") != NULL &&
                  strstr(out, "its games are played again") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "gen 2 selfplay: 2 games kept from an interrupted session; "
                              "playing 14 more") != NULL, "%s", out);
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.p003.h5")));
    sp_file *last = sp_file_read(pathf(p, sizeof p, rd, "data/gen_0002.h5"), NULL, err, sizeof err);
    ck_assert_msg(last != NULL, "%s", err);
    for (int64_t i = 0; i < last->n; i++)
        ck_assert_int_ge(last->gameix[i], next);
    sp_file_free(last);
    int64_t games;
    ck_assert_msg(sp_read_games(p, &games, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(games, 14);
    ck_assert_int_eq(count_events(rd, "data_skipped"), 1);
}
END_TEST

/* selfplay.sizes' split of a generation's games (loop/rundata.h): the smaller boards' share
 * moves linearly from sizes_fraction to sizes_fraction_end over the run's budget, shared
 * equally between them (the later ones get the remainder); the full board plays at least
 * one game; none without sizes or with one game. */
START_TEST(sizes_split)
{
    cfg_selfplay sp = {.nsizes = 3, .sizes = {9, 11, 13}, .sizes_fraction = 0.5, .sizes_fraction_end = 0.1};
    rd_sizes s;
    const struct {
        int games;
        double used;
        int want[3];
    } cases[] = {{100, 0, {16, 17, 17}}, {100, 0.5, {10, 10, 10}}, {100, 1, {3, 3, 4}},
                 {100, 7, {3, 3, 4}},    {100, -1, {16, 17, 17}},  {2, 0, {0, 0, 1}}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rd_sizes_split(&sp, cases[k].games, cases[k].used, &s);
        ck_assert_int_eq(s.n, 3);
        for (int i = 0; i < 3; i++) {
            ck_assert_int_eq(s.side[i], sp.sizes[i]);
            ck_assert_msg(s.games[i] == cases[k].want[i], "%d games at %g: board %d gets %d, not %d",
                          cases[k].games, cases[k].used, s.side[i], s.games[i], cases[k].want[i]);
        }
    }
    sp.sizes_fraction = sp.sizes_fraction_end = 0.95;
    rd_sizes_split(&sp, 10, 0.3, &s);
    ck_assert_int_eq(rd_sizes_small_games(&s), 9); /* the full board keeps one */
    rd_sizes_split(&sp, 1, 0, &s);
    ck_assert_int_eq(s.n, 0);
    sp.nsizes = 0;
    rd_sizes_split(&sp, 100, 0, &s);
    ck_assert_int_eq(s.n, 0);
    /* the split's file round trip; a damaged one is named */
    char rd[300], p[400], err[512];
    snprintf(rd, sizeof rd, "%s/split", dir);
    ck_assert_int_eq(mkdir(rd, 0755), 0);
    ck_assert_int_eq(mkdir(pathf(p, sizeof p, rd, "data"), 0755), 0);
    rd_sizes w = {2, {4, 5}, {3, 7}}, r;
    ck_assert_int_eq(rd_sizes_read(rd, 3, &r, err, sizeof err), 0);
    ck_assert_msg(rd_sizes_write(rd, 3, &w, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(rd_sizes_read(rd, 3, &r, err, sizeof err), 1);
    ck_assert(r.n == 2 && r.side[1] == 5 && r.games[0] == 3 && r.games[1] == 7);
    FILE *f = fopen(pathf(p, sizeof p, rd, "data/gen_0003.sizes.json"), "wb");
    fputs("{\"sizes\": [4], \"games\": [1, 2]}", f);
    fclose(f);
    ck_assert_int_eq(rd_sizes_read(rd, 3, &r, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "gen_0003.sizes.json") != NULL, "%s", err);
}
END_TEST

/* each_event callback: a selfplay event's simulations into ctx's slot of its generation
 * (ctx: int[8]) */
static void sims_by_gen(const cJSON *o, void *ctx)
{
    int g = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation"));
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "simulations");
    ck_assert_msg(cJSON_IsNumber(n), "generation %d's selfplay event has no simulations", g);
    if (g >= 1 && g < 8)
        ((int *)ctx)[g] = (int)n->valuedouble;
}

/* selfplay.simulations_end (loop/rundata.h): a generation's self-play budget moves
 * linearly from mcts.simulations to simulations_end over the run's budget, rounded and
 * clamped; 0 keeps mcts.simulations. In a 3-generation run at 16 simulations with
 * simulations_end 46, generation 1 is the rollout bootstrap (its 32), generations 2 and 3
 * play at 1/3 and 2/3 of the run: 26 and 36, as their selfplay events say. */
START_TEST(simulations_ramp)
{
    cfg_selfplay sp = {.simulations_end = 400};
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 0), 64);
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 0.5), 232);
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 1), 400);
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 3), 400);  /* past the budget */
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, -1), 64);
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 0.001), 64); /* 64.336 */
    sp.simulations_end = 1;                                  /* it may fall too */
    ck_assert_int_eq(rd_sp_simulations(&sp, 9, 0.5), 5);
    sp.simulations_end = 0;
    ck_assert_int_eq(rd_sp_simulations(&sp, 64, 0.7), 64);

    char rd[300], out[8192];
    snprintf(rd, sizeof rd, "%s/ramp", dir);
    const char *ramp[] = {"--set", "selfplay.simulations_end=46", NULL};
    int rc = gz_run(rd, 3, NULL, ramp, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "run: exit %d\n%s", rc, out);
    int sims[8] = {0};
    ck_assert_int_eq(each_event(rd, "selfplay", sims_by_gen, sims), 3);
    ck_assert_int_eq(sims[1], 32);
    ck_assert_int_eq(sims[2], 26);
    ck_assert_int_eq(sims[3], 36);
    /* each generation's budget is kept from its start: a resumed session plays the kept one
     * (40 here, where 4 generations' schedule gives 39), and the follower reads it */
    char p[400], err[512];
    int kept = 0;
    ck_assert_int_eq(rd_sims_read(rd, 3, &kept, err, sizeof err), 1);
    ck_assert_int_eq(kept, 36);
    ck_assert_int_eq(rd_sims_read(rd, 1, &kept, err, sizeof err), 0); /* the bootstrap's own */
    ck_assert_int_eq(rd_sims_read(rd, 4, &kept, err, sizeof err), 0);
    ck_assert_msg(rd_sims_write(rd, 4, 40, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(rd_sims_latest(rd, 9, 16, &kept, err, sizeof err), 0);
    ck_assert_int_eq(kept, 40);
    ck_assert_int_eq(rd_sims_latest(rd, 3, 16, &kept, err, sizeof err), 0);
    ck_assert_int_eq(kept, 36);
    ck_assert_int_eq(rd_sims_latest(rd, 1, 16, &kept, err, sizeof err), 0);
    ck_assert_int_eq(kept, 16);
    rc = gz_run(rd, 4, NULL, ramp, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "run: exit %d\n%s", rc, out);
    int sims4[8] = {0};
    ck_assert_int_eq(each_event(rd, "selfplay", sims_by_gen, sims4), 4);
    ck_assert_int_eq(sims4[4], 40);
    /* a follower now helps generation 5, whose self-play has not started: it searches with
     * the newest kept budget */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' selfplay --follow '%s' --files 1 --games 2 --seed 3 "
             "--set selfplay.threads=1 2>&1", getenv("GZ_BIN"), rd);
    FILE *pf = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, pf);
    out[n] = 0;
    ck_assert_int_eq(WEXITSTATUS(pclose(pf)), 0);
    ck_assert_msg(strstr(out, "generation 5 (models/gen_0004.h5, 40 simulations)"), "%s", out);
    /* a file changed by hand is named, and nothing is played */
    FILE *f = fopen(pathf(p, sizeof p, rd, "data/gen_0005.simulations.json"), "wb");
    fputs("{\"simulations\": 0}", f);
    fclose(f);
    ck_assert_int_eq(rd_sims_read(rd, 5, &kept, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "gen_0005.simulations.json") != NULL, "%s", err);
    ck_assert_int_eq(rd_sims_latest(rd, 5, 16, &kept, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "gen_0005.simulations.json") != NULL, "%s", err);
    rc = gz_run(rd, 5, NULL, ramp, 0, out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "gen_0005.simulations.json"), "exit %d\n%s", rc, out);
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0005.h5")));
    pf = popen(cmd, "r"); /* the follower, too, names it and plays nothing */
    n = fread(out, 1, sizeof out - 1, pf);
    out[n] = 0;
    ck_assert_int_ne(WEXITSTATUS(pclose(pf)), 0);
    ck_assert_msg(strstr(out, "gen_0005.simulations.json"), "%s", out);
}
END_TEST

/* The games of generation gen's board (side, 0: the full board) in rd's files, and their
 * samples; every file's board and game_config say that board. */
static int64_t board_games(const char *rd, int gen, int side, int full, int64_t *samples)
{
    rd_files fl;
    char err[512], want[64];
    ck_assert_msg(rd_list(rd, gen, &fl, err, sizeof err) == 0, "%s", err);
    int b = side ? side : full;
    snprintf(want, sizeof want, "\"rows\":%d,\"cols\":%d", b, b);
    int64_t games = 0;
    *samples = 0;
    for (int i = 0; i < fl.n; i++) {
        char stem[32];
        if (side)
            snprintf(stem, sizeof stem, "gen_%04d.s%02d.", gen, side);
        else
            snprintf(stem, sizeof stem, "gen_%04d.", gen);
        const char *name = strrchr(fl.path[i], '/') + 1;
        if (strncmp(name, stem, strlen(stem)) != 0 || (!side && name[strlen(stem)] == 's'))
            continue;
        sp_file *f = sp_file_read(fl.path[i], NULL, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        ck_assert_msg(f->rows == b && f->cols == b && strstr(f->game_config, want), "%s: %dx%d, %s",
                      fl.path[i], f->rows, f->cols, f->game_config);
        *samples += f->n;
        sp_file_free(f);
        int64_t g;
        ck_assert_msg(sp_read_games(fl.path[i], &g, NULL, err, sizeof err) == 0, "%s", err);
        games += g;
    }
    rd_files_free(&fl);
    return games;
}

/* each_event callback: the selfplay event of generation 2's 5x5 board into ctx */
static void selfplay_gen2_5x5(const cJSON *o, void *ctx)
{
    if ((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation")) == 2 &&
        (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "board")) == 5)
        *(cJSON **)ctx = cJSON_Duplicate(o, 1);
}

/* each_event callback: generation 2's train_data event into ctx */
static void train_data_gen2(const cJSON *o, void *ctx)
{
    if ((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation")) == 2)
        *(cJSON **)ctx = cJSON_Duplicate(o, 1);
}

/* selfplay.sizes on 6x6 Gomoku-like boards (k = 4) with 4x4 and 5x5 games: each board's
 * games in files of their own (parts, then data/gen_NNNN.sSS.h5; the full board's last),
 * played with the board in the file's game_config, and the trainer reads them all. A
 * run killed in the 5x5 board's games of generation 2 resumes with the same command:
 * the 4x4 board's files and the 5x5 parts are kept untouched, only the 5x5 board's
 * remaining games and the full board's are played, and the generation holds the split
 * of data/gen_0002.sizes.json (4 + 4 of 16 games at a share of 0.5) with no game twice. */
START_TEST(selfplay_sizes_survive_a_kill)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/sizes", dir);
    const char *sizes[] = {"--set", "game.rows=6", "--set", "game.cols=6", "--set", "game.k=4",
                           "--set", "selfplay.sizes=[4,5]", "--set", "selfplay.sizes_fraction=0.5",
                           "--set", "selfplay.sizes_fraction_end=0.5", "--set", "arena.baselines=[\"random\"]",
                           "--set", "selfplay.part_minutes=1e-9", NULL};
    int rc = gz_run(rd, 2, "2:selfplay-s05-game2", sizes, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "exit %d, not killed:\n%s", rc, out);
    ck_assert(exists(pathf(p, sizeof p, rd, "data/gen_0002.s04.h5")));
    ck_assert(exists(pathf(p, sizeof p, rd, "data/gen_0002.s05.p001.h5")));
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.s05.h5")));
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.h5")));
    char *split = slurp_rel(rd, "data/gen_0002.sizes.json");
    ck_assert_msg(split && strstr(split, "\"sizes\": [4, 5], \"games\": [4, 4]"), "%s", split ? split : "none");
    free(split);
    /* the finished files, to be kept untouched */
    const char *kept[] = {"data/gen_0001.s04.h5", "data/gen_0001.s05.h5", "data/gen_0001.h5",
                          "data/gen_0002.s04.h5", "data/gen_0002.s04.p000.h5",
                          "data/gen_0002.s05.p000.h5", "data/gen_0002.s05.p001.h5",
                          "models/gen_0001.h5"};
    char *before[8];
    size_t blen[8];
    for (int k = 0; k < 8; k++) {
        before[k] = slurp(pathf(p, sizeof p, rd, kept[k]), &blen[k]);
        ck_assert_msg(before[k] != NULL, "%s missing", kept[k]);
    }
    rc = gz_run(rd, 2, NULL, sizes, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "resume exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "gen 2 selfplay 5x5: 2 games kept from an interrupted session; "
                              "playing 2 more") != NULL && !strstr(out, "gen 2 selfplay 4x4"), "%s", out);
    for (int k = 0; k < 8; k++) {
        size_t len;
        char *now = slurp(pathf(p, sizeof p, rd, kept[k]), &len);
        ck_assert_msg(now && len == blen[k] && memcmp(now, before[k], len) == 0, "%s was rewritten",
                      kept[k]);
        free(now), free(before[k]);
    }
    ck_assert_int_eq(count_tmp(rd), 0);
    /* each board's games, in files of its board */
    int64_t s4, s5, s6, games[2][3];
    for (int gen = 1; gen <= 2; gen++) {
        games[gen - 1][0] = board_games(rd, gen, 4, 6, &s4);
        games[gen - 1][1] = board_games(rd, gen, 5, 6, &s5);
        games[gen - 1][2] = board_games(rd, gen, 0, 6, &s6);
        ck_assert(s4 > 0 && s5 > 0 && s6 > 0);
    }
    for (int gen = 0; gen < 2; gen++)
        ck_assert_msg(games[gen][0] == 4 && games[gen][1] == 4 && games[gen][2] == 8,
                      "gen %d: %lld, %lld, %lld games", gen + 1, (long long)games[gen][0],
                      (long long)games[gen][1], (long long)games[gen][2]);
    /* the 5x5 games after the kill are numbered after the kept ones: none twice */
    char err[512];
    int seen[64] = {0};
    for (int k = 0;; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "data/gen_0002.s05.p%03d.h5", k);
        if (!exists(pathf(p, sizeof p, rd, rel)))
            pathf(p, sizeof p, rd, "data/gen_0002.s05.h5");
        sp_file *f = sp_file_read(p, NULL, err, sizeof err);
        ck_assert_msg(f != NULL, "%s", err);
        int mark[64] = {0};
        for (int64_t i = 0; i < f->n; i++)
            mark[f->gameix[i] & 63] = 1;
        for (int i = 0; i < 64; i++)
            seen[i] += mark[i];
        sp_file_free(f);
        if (strstr(p, "s05.h5"))
            break;
    }
    for (int i = 0; i < 64; i++)
        ck_assert_msg(seen[i] <= 1, "5x5 game %d in two files", i);
    cJSON *ev = NULL;
    each_event(rd, "selfplay", selfplay_gen2_5x5, &ev);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "games")), 2);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "games_kept")), 2);
    cJSON_Delete(ev);
    /* training read every board's files: every sample of both generations */
    ev = NULL;
    each_event(rd, "train_data", train_data_gen2, &ev);
    ck_assert_ptr_nonnull(ev);
    int64_t smaller = 0, all = 0;
    for (int gen = 1; gen <= 2; gen++) {
        board_games(rd, gen, 4, 6, &s4);
        board_games(rd, gen, 5, 6, &s5);
        board_games(rd, gen, 0, 6, &s6);
        smaller += s4 + s5;
        all += s4 + s5 + s6;
    }
    ck_assert_int_eq((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "samples")), all);
    ck_assert_int_eq((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "smaller_board_samples")),
                     smaller);
    ck_assert_int_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "skipped")), 0);
    cJSON_Delete(ev);
    ck_assert(exists(pathf(p, sizeof p, rd, "models/gen_0002.h5")));
}
END_TEST

START_TEST(full_run)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/ref", dir);
    int rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "run: 2 generations") != NULL, "%s", out);
    check_run_dir(rd, 2);
}
END_TEST

/* Simulated crashes after a few of the stages (test_run_slow.c has the others). */
START_TEST(resume_after_crash)
{
    char ref[300], out[16384];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    int rc = gz_run(ref, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const int points[] = {RUN_CRASH_1_SELFPLAY, RUN_CRASH_1_TRAIN, RUN_CRASH_1_ARENA,
                          RUN_CRASH_2_PROMOTE};
    for (size_t i = 0; i < sizeof points / sizeof *points; i++)
        crash_and_resume(ref, points[i]);
}
END_TEST

/* train.swa 2: every generation also writes models/swa_i.h5, the mean of generations
 * i-1 and i (generation 1: itself), and plays it: best names it, self-play's games come
 * from it. An average already there when its stage runs (as a stage killed between
 * the two saves leaves one) is written again, not kept. Off, no average is written. */
START_TEST(swa_models_played)
{
    char run[300], out[16384], p[400], q[400];
    snprintf(run, sizeof run, "%s/swa", dir);
    const char *swa[] = {"--set", "train.swa=2", "--set", "arena.gate=0", "--set",
                         "train.calibrate=always", NULL};
    int rc = gz_run(run, 2, NULL, swa, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    char err[256];
    nn_params *g1 = nn_ckpt_load(pathf(p, sizeof p, run, "models/gen_0001.h5"), NULL, NULL, err, sizeof err);
    nn_params *g2 = nn_ckpt_load(pathf(p, sizeof p, run, "models/gen_0002.h5"), NULL, NULL, err, sizeof err);
    nn_params *s1 = nn_ckpt_load(pathf(p, sizeof p, run, "models/swa_0001.h5"), NULL, NULL, err, sizeof err);
    nn_params *s2 = nn_ckpt_load(pathf(p, sizeof p, run, "models/swa_0002.h5"), NULL, NULL, err, sizeof err);
    ck_assert_msg(g1 && g2 && s1 && s2, "%s", err);
    for (size_t i = 0; i < g1->layout.count; i++) {
        ck_assert(s1->data[i] == g1->data[i]);
        ck_assert(s2->data[i] == (float)(((double)g1->data[i] + g2->data[i]) / 2));
    }
    ck_assert(memcmp(g1->data, g2->data, sizeof(float) * g1->layout.count) != 0);
    char rel[64];
    int gen = -1;
    ck_assert_int_eq(rundir_read_best(run, rel, sizeof rel, &gen), 1);
    ck_assert_str_eq(rel, "models/swa_0002.h5");
    ck_assert_int_eq(gen, 2);
    char *metrics = slurp_rel(run, "metrics.jsonl");
    ck_assert_msg(strstr(metrics, "\"model\":\"models/swa_0001.h5\""), "gen 2 self-play did not "
                  "play swa_0001:\n%s", metrics);
    /* only the averages are calibrated (one event a generation, for the average): gen_i
     * never plays */
    int ncal = 0;
    for (const char *c = metrics; (c = strstr(c, "\"event\":\"calibration\"")); c++) {
        const char *eol = strchr(c, '\n');
        ck_assert_ptr_nonnull(eol);
        char *line = strndup(c, (size_t)(eol - c));
        ck_assert_msg(strstr(line, "\"model\":\"swa\""), "a calibration not of the average: %s", line);
        free(line);
        ncal++;
    }
    ck_assert_int_eq(ncal, 2);
    ck_assert_ptr_null(g2->calib);
    free(metrics);
    /* a stale average of generation 3, then generation 3 */
    FILE *f = fopen(pathf(q, sizeof q, run, "models/swa_0003.h5"), "w");
    fputs("not a model", f);
    fclose(f);
    rc = gz_run(run, 3, NULL, swa, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    nn_params *s3 = nn_ckpt_load(q, NULL, NULL, err, sizeof err);
    ck_assert_msg(s3 != NULL, "%s", err);
    nn_params_free(s3);
    nn_params_free(g1);
    nn_params_free(g2);
    nn_params_free(s1);
    nn_params_free(s2);
    /* off: none */
    snprintf(run, sizeof run, "%s/plain", dir);
    rc = gz_run(run, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert(!exists(pathf(p, sizeof p, run, "models/swa_0001.h5")));
}
END_TEST

/* A real kill -9 at an arbitrary moment (inside a stage, too), then the same command. */
START_TEST(resume_after_kill)
{
    char ref[300], out[16384];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    int rc = gz_run(ref, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    kill_and_resume(ref, 1200, 2);
}
END_TEST

/* Ctrl-C (SIGINT) stops the run cleanly: exit 1 and a message when it was still
 * running, no temporary file left, and the same command then finishes the run with
 * the uninterrupted ladder. */
START_TEST(interrupt_then_resume)
{
    char ref[300], rd[300], out[16384];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    int rc = gz_run(ref, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const int at_ms[] = {600, 1500, 2500};
    for (size_t i = 0; i < sizeof at_ms / sizeof *at_ms; i++) {
        snprintf(rd, sizeof rd, "%s/int%zu", dir, i);
        rc = gz_run_sig(rd, 2, NULL, tiny, NULL, at_ms[i], SIGINT, out, sizeof out);
        /* 130: the signal came after the run had finished and restored the default
         * action (a fast machine), which its last line shows */
        ck_assert_msg(rc == 0 || (rc == 1 && strstr(out, "interrupted") != NULL) ||
                          (rc == 130 && strstr(out, "run: 2 generations") != NULL),
                      "SIGINT at %d ms: exit %d:\n%s", at_ms[i], rc, out);
        ck_assert_msg(count_tmp(rd) == 0, "SIGINT at %d ms left a temporary file:\n%s", at_ms[i],
                      out);
        rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
        ck_assert_msg(rc == 0, "resume exit %d:\n%s", rc, out);
        check_run_dir(rd, 2);
        check_same_file(ref, rd, "arena.jsonl");
        check_same_file(ref, rd, "ratings.csv");
    }
}
END_TEST

/* A metrics event named ev (of generation gen; any when gen is 0), the first or the last
 * one: its number field key (or -1). */
static double event_number(const char *rd, const char *ev, int gen, const char *key, bool last)
{
    char *text = slurp_rel(rd, "metrics.jsonl");
    double v = -1;
    for (char *line = strtok(text, "\n"); line && (last || v < 0); line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "event");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "generation");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, key);
        if (cJSON_IsString(e) && !strcmp(e->valuestring, ev) && cJSON_IsNumber(k) &&
            (gen == 0 || (cJSON_IsNumber(g) && g->valueint == gen)))
            v = k->valuedouble;
        cJSON_Delete(o);
    }
    free(text);
    return v;
}

static double last_event_number(const char *rd, const char *ev, const char *key)
{
    return event_number(rd, ev, 0, key, true);
}

static double clock_seconds(const char *rd)
{
    char *text = slurp_rel(rd, "clock.json");
    ck_assert_msg(text != NULL, "%s/clock.json is missing", rd);
    cJSON *o = cJSON_Parse(text);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "seconds");
    ck_assert(cJSON_IsNumber(s));
    double v = s->valuedouble;
    cJSON_Delete(o);
    free(text);
    return v;
}

/* --time: the budget counts every session of the run (clock.json survives a kill -9),
 * a spent budget starts no stage and exits 0 with a message, and a bad duration is
 * refused with exit 2. */
START_TEST(time_budget_resumes)
{
    char rd[300], out[16384], path[400];
    snprintf(rd, sizeof rd, "%s/timed", dir);
    const char *hour[] = {"--time", "1h", NULL};
    int rc = gz_run(rd, 2, "1:train", hour, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "exit %d:\n%s", rc, out);
    double c1 = clock_seconds(rd);
    ck_assert(c1 > 0);
    rc = gz_run(rd, 2, NULL, hour, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    double c2 = clock_seconds(rd);
    ck_assert_msg(c2 > c1, "the clock went from %g to %g s", c1, c2);
    /* the metrics carry the run's clock, so ratings can be drawn against time */
    ck_assert(last_event_number(rd, "elo", "run_seconds") > c1);
    /* a budget already spent: nothing more is started (0.01 s: two small generations can
     * take less than half a second on a quiet machine) */
    const char *tiny_budget[] = {"--time", "0.01s", NULL};
    rc = gz_run(rd, 4, NULL, tiny_budget, 0, out, sizeof out);
    ck_assert_msg(rc == 0 && strstr(out, "time budget") != NULL, "exit %d:\n%s", rc, out);
    ck_assert(!exists(pathf(path, sizeof path, rd, "data/gen_0003.h5")));
    ck_assert(clock_seconds(rd) >= c2);
    const char *bad[] = {"--time", "soon", NULL};
    rc = gz_run(rd, 4, NULL, bad, 0, out, sizeof out);
    ck_assert_msg(rc == 2 && strstr(out, "--time") != NULL, "exit %d:\n%s", rc, out);
}
END_TEST

/* --clock cpu: the clock counts the process's CPU seconds over the cores, recorded as
 * such in clock.json, and never runs ahead of the wall clock; a bad clock is refused
 * with exit 2. */
START_TEST(cpu_clock)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/cpuclock", dir);
    const char *cpu[] = {"--clock", "cpu", "--time", "1h", NULL};
    int rc = gz_run(rd, 2, NULL, cpu, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    double c = clock_seconds(rd);
    char *text = slurp_rel(rd, "clock.json");
    ck_assert_msg(text && strstr(text, "\"clock\": \"cpu\""), "%s", text ? text : "(none)");
    free(text);
    ck_assert(c > 0);
    /* no more than the wall time the run took: the metrics' last event has the clock too */
    ck_assert(last_event_number(rd, "elo", "run_seconds") <= c + 1e-6);
    const char *bad[] = {"--clock", "sundial", NULL};
    rc = gz_run(rd, 3, NULL, bad, 0, out, sizeof out);
    ck_assert_msg(rc == 2 && strstr(out, "--clock") != NULL, "exit %d:\n%s", rc, out);
}
END_TEST

/* train.reuse: the steps of a generation come from the positions its self-play made
 * (ceil(reuse * positions / batch_size)), not from train.steps. */
START_TEST(reuse_sets_steps)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/reuse", dir);
    const char *reuse[] = {"--set", "train.reuse=3", "--set", "train.log_every=1", NULL};
    int rc = gz_run(rd, 1, NULL, reuse, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    double positions = last_event_number(rd, "selfplay", "positions");
    ck_assert(positions > 0);
    double steps = last_event_number(rd, "train", "step");
    ck_assert_msg(steps == ceil(3 * positions / 128), "%g positions, %g steps", positions, steps);
}
END_TEST

/* train.schedule_span budget: the run-long cosine spans the run's generations (no
 * train.run_steps needed): 20 steps a generation over 3 generations make a 60-step
 * schedule, so each generation's first step stands at 0, 1/3 and 2/3 of the cosine. */
START_TEST(schedule_spans_the_budget)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/span", dir);
    const char *span[] = {"--set", "train.schedule=cosine", "--set", "train.schedule_span=budget",
                          "--set", "train.lr_floor=0", "--set", "train.log_every=1",
                          "--set", "train.lr=0.01", NULL};
    int rc = gz_run(rd, 3, NULL, span, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const double want[] = {1.0, 0.75, 0.25}; /* (1 + cos(pi x (g - 1) / 3)) / 2 */
    for (int g = 1; g <= 3; g++) {
        ck_assert_double_eq(event_number(rd, "train_data", g, "schedule_steps", false), 60);
        double lr = event_number(rd, "train", g, "lr", false);
        ck_assert_msg(fabs(lr - 0.01 * want[g - 1]) < 1e-9, "generation %d: lr %g, want %g", g,
                      lr, 0.01 * want[g - 1]);
    }
    /* with the steps span (the default), a cosine over the run needs train.run_steps */
    const char *no_len[] = {"--set", "train.schedule=cosine", NULL};
    snprintf(rd, sizeof rd, "%s/span_refused", dir);
    rc = gz_run(rd, 1, NULL, no_len, 0, out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "train.run_steps") && strstr(out, "schedule_span"),
                  "exit %d:\n%s", rc, out);
}
END_TEST

/* train.calibrate: `always` measures an int8 calibration of each new model on its
 * window and keeps it only when the gates pass (or says why it could not: no VNNI);
 * `never` leaves the models uncalibrated and logs nothing. */
static char *last_event_json(const char *rd, const char *ev)
{
    char *text = slurp_rel(rd, "metrics.jsonl"), *found = NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "event");
        if (cJSON_IsString(e) && !strcmp(e->valuestring, ev)) {
            free(found);
            found = strdup(line);
        }
        cJSON_Delete(o);
    }
    free(text);
    return found;
}

static void model_info(const char *rd, const char *rel, char *out, size_t len)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "'%s' info '%s/%s' 2>&1", getenv("GZ_BIN"), rd, rel);
    FILE *pp = popen(cmd, "r");
    ck_assert_ptr_nonnull(pp);
    size_t n = fread(out, 1, len - 1, pp);
    out[n] = 0;
    ck_assert_int_eq(pclose(pp), 0);
}

START_TEST(calibrate_in_the_loop)
{
    char rd[300], out[16384], info[8192];
    snprintf(rd, sizeof rd, "%s/calib", dir);
    const char *always[] = {"--set", "train.calibrate=always", "--set",
                            "train.validation_fraction=0.25", NULL};
    int rc = gz_run(rd, 1, NULL, always, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_int_eq(count_events(rd, "calibration"), 1);
    char *ev = last_event_json(rd, "calibration");
    ck_assert_ptr_nonnull(ev);
    cJSON *o = cJSON_Parse(ev);
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(o, "calibrated");
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(o, "skipped");
    ck_assert(cJSON_IsBool(cal));
    model_info(rd, "models/gen_0001.h5", info, sizeof info);
    if (skipped) { /* the only reason with a validation split: this CPU cannot run int8 */
        ck_assert_msg(strstr(skipped->valuestring, "VNNI") != NULL, "%s", ev);
        ck_assert(cJSON_IsFalse(cal));
    } else {
        const cJSON *pass = cJSON_GetObjectItemCaseSensitive(o, "pass");
        double top1 = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "top1"));
        double dv = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "mean_dvalue"));
        ck_assert_msg(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "heldout")) > 0,
                      "%s", ev);
        ck_assert_msg(top1 >= 0 && top1 <= 1 && dv >= 0, "%s", ev);
        ck_assert(cJSON_IsBool(pass));
        ck_assert_msg(cJSON_IsTrue(cal) == cJSON_IsTrue(pass), "%s", ev);
        ck_assert_msg(cJSON_IsTrue(pass) == (top1 >= 0.98 && dv <= 0.02), "%s", ev);
        ck_assert_msg(cJSON_IsTrue(cal) ? strstr(info, "gates on") != NULL
                                        : strstr(info, "not calibrated") != NULL,
                      "%s\n%s", ev, info);
    }
    cJSON_Delete(o);
    free(ev);
    /* never: no event, no calibration */
    snprintf(rd, sizeof rd, "%s/nocalib", dir);
    const char *never[] = {"--set", "train.calibrate=never", NULL};
    rc = gz_run(rd, 1, NULL, never, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_int_eq(count_events(rd, "calibration"), 0);
    model_info(rd, "models/gen_0001.h5", info, sizeof info);
    ck_assert_msg(strstr(info, "not calibrated") != NULL, "%s", info);
}
END_TEST

START_TEST(other_config_refused)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/r", dir);
    int rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    snapshot snap;
    take_snapshot(rd, 1, &snap);
    char *cfg = slurp_rel(rd, "config.json");
    const char *other[] = {"--set", "train.lr=0.01", NULL};
    rc = gz_run(rd, 2, NULL, other, 0, out, sizeof out);
    ck_assert_msg(rc == 2, "exit %d (want 2):\n%s", rc, out);
    ck_assert_msg(strstr(out, "different config") != NULL && strstr(out, rd) != NULL, "%s", out);
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.h5")));
    check_unchanged(rd, &snap, "refused run");
    char *cfg2 = slurp_rel(rd, "config.json");
    ck_assert_str_eq(cfg, cfg2);
    free(cfg);
    free(cfg2);
    /* an unreadable config.json is refused too, by name */
    FILE *f = fopen(pathf(p, sizeof p, rd, "config.json"), "wb");
    fputs("{\"game\": ", f);
    fclose(f);
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc != 0 && strstr(out, "config.json") != NULL, "exit %d:\n%s", rc, out);
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.h5")));
}
END_TEST

START_TEST(extend_finished_run)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/r", dir);
    int rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    snapshot snap;
    take_snapshot(rd, 2, &snap);
    /* the same command again: nothing to do, nothing rewritten */
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    check_unchanged(rd, &snap, "rerun");
    check_run_dir(rd, 2);
    /* more generations continue it */
    rc = gz_run(rd, 3, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    check_unchanged(rd, &snap, "extended");
    check_run_dir(rd, 3);
}
END_TEST

static void truncate_half(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
}

/* A damaged sample file in the window is skipped, by name (metrics: data_skipped); a
 * generation with no readable samples at all stops the run with a message. */
START_TEST(corrupt_sample_file)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/r", dir);
    int rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    truncate_half(pathf(p, sizeof p, rd, "data/gen_0001.h5"));
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "skipping") != NULL && strstr(out, "data/gen_0001.h5") != NULL, "%s",
                  out);
    ck_assert_int_eq(count_events(rd, "data_skipped"), 1);
    char *m = slurp_rel(rd, "metrics.jsonl");
    ck_assert_ptr_nonnull(strstr(m, "data/gen_0001.h5"));
    free(m);
    ck_assert(exists(pathf(p, sizeof p, rd, "models/gen_0002.h5")));

    /* the only file of the window damaged: a clear error, no model */
    snprintf(rd, sizeof rd, "%s/r2", dir);
    rc = gz_run(rd, 1, "1:selfplay", NULL, 0, out, sizeof out);
    ck_assert_int_eq(rc, 128 + SIGKILL);
    truncate_half(pathf(p, sizeof p, rd, "data/gen_0001.h5"));
    rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "data/gen_0001.h5") != NULL && strstr(out, "no readable samples"), "%s",
                  out);
    ck_assert(!exists(pathf(p, sizeof p, rd, "models/gen_0001.h5")));
    /* garbage instead of HDF5: the same */
    FILE *f = fopen(pathf(p, sizeof p, rd, "data/gen_0001.h5"), "wb");
    fputs("not an HDF5 file\n", f);
    fclose(f);
    rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 1 && strstr(out, "data/gen_0001.h5") != NULL, "exit %d:\n%s", rc, out);
    ck_assert_int_eq(count_tmp(rd), 0);
}
END_TEST

/* A run directory deeper than a player spec may be long (PLAYER_NAME_LEN): the run's
 * own models still play their arena games. */
START_TEST(deep_run_dir)
{
    char rd[300], out[16384];
    snprintf(rd, sizeof rd, "%s/a_directory_name_long_enough_to_make_model_specs_outgrow_the_"
             "player_name_limit_of_128_characters", dir);
    const char *fewer[] = {"--set", "arena.games=2", "--set", "selfplay.games=4", NULL};
    int rc = gz_run(rd, 1, NULL, fewer, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    char *a = slurp_rel(rd, "arena.jsonl");
    ck_assert_int_eq(count_lines(a), 6);
    free(a);
}
END_TEST

/* A garbage line in a generation's arena file: the run stops (exit 1) naming that file
 * and line, not arena.jsonl, which is made from the per-generation files. */
START_TEST(arena_error_names_the_file)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/bad_arena", dir);
    const char *fewer[] = {"--set", "arena.games=2", "--set", "selfplay.games=4", NULL};
    int rc = gz_run(rd, 2, NULL, fewer, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    int lines = count_lines_rel(rd, "arena/gen_0001.jsonl");
    FILE *f = fopen(pathf(p, sizeof p, rd, "arena/gen_0001.jsonl"), "ab");
    fputs("{\"players\": \"garbage\"}\n", f);
    fclose(f);
    rc = gz_run(rd, 3, NULL, fewer, 0, out, sizeof out);
    char want[64];
    snprintf(want, sizeof want, "arena/gen_0001.jsonl:%d", lines + 1);
    ck_assert_msg(rc == 1 && strstr(out, want) && !strstr(out, "arena.jsonl:"), "exit %d:\n%s", rc, out);
    ck_assert_int_eq(count_tmp(rd), 0);
}
END_TEST

/* The pid holding RUN_DIR/lock (an fcntl write lock), 0 when nobody holds it. */
static long lock_holder(const char *rd)
{
    char p[400];
    int fd = open(pathf(p, sizeof p, rd, "lock"), O_RDWR);
    if (fd < 0)
        return 0;
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    long pid = fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : 0;
    close(fd);
    return pid;
}

/* Two runs on one directory: the second is refused at once (exit 2, naming the
 * directory and the first one's pid); the first, killed with SIGKILL, leaves no lock
 * behind, and the same command then finishes the run. */
START_TEST(lock_two_runs)
{
    char rd[300], log[400], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/r", dir);
    snprintf(log, sizeof log, "%s/holder.log", dir);
    /* many generations: the holder is still running when it is killed */
    pid_t a = gz_run_spawn(rd, 1000, NULL, tiny, NULL, log);
    long holder = 0;
    for (int i = 0; i < 6000 && holder != (long)a; i++) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
        holder = lock_holder(rd);
    }
    ck_assert_msg(holder == (long)a, "the first run (pid %ld) never took the lock", (long)a);
    int rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 2, "second run: exit %d (want 2):\n%s", rc, out);
    char pid[32];
    snprintf(pid, sizeof pid, "pid %ld", (long)a);
    ck_assert_msg(strstr(out, rd) && strstr(out, pid) && strstr(out, "in use"), "%s", out);
    ck_assert_int_eq(kill(a, SIGKILL), 0);
    int st;
    ck_assert_int_eq(waitpid(a, &st, 0), a);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ck_assert_int_eq(lock_holder(rd), 0);
    /* resume: the generations the holder got to (its last one unfinished) */
    int gens = 1;
    for (int k = 2; k < 1000; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "data/gen_%04d.h5", k);
        if (!exists(pathf(p, sizeof p, rd, rel)))
            break;
        gens = k;
    }
    rc = gz_run(rd, gens, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "resume after kill -9 of the holder: exit %d:\n%s", rc, out);
    check_run_dir(rd, gens);
}
END_TEST

/* A held lock refuses a run before it writes or removes anything: not the holder's
 * temporaries, not metrics.jsonl, state.json or config.json. Released, the run goes on. */
START_TEST(lock_refusal_writes_nothing)
{
    char rd[300], out[16384], p[400];
    snprintf(rd, sizeof rd, "%s/r", dir);
    int rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    int fd = open(pathf(p, sizeof p, rd, "lock"), O_RDWR);
    ck_assert_int_ge(fd, 0);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    ck_assert_int_eq(fcntl(fd, F_SETLK, &fl), 0);
    FILE *f = fopen(pathf(p, sizeof p, rd, "data/gen_0002.h5.tmp"), "wb");
    ck_assert_ptr_nonnull(f);
    fputs("the holder's file being written", f);
    fclose(f);
    snapshot snap;
    take_snapshot(rd, 2, &snap);
    const char *kept[] = {"metrics.jsonl", "state.json", "config.json", "ratings.csv", "best"};
    char *before[5];
    for (int i = 0; i < 5; i++)
        before[i] = slurp_rel(rd, kept[i]);
    const char *other[] = {"--set", "train.lr=0.01", NULL}; /* refused before the config check */
    for (int k = 0; k < 2; k++) {
        rc = gz_run(rd, 2, NULL, k ? other : NULL, 0, out, sizeof out);
        ck_assert_msg(rc == 2, "exit %d (want 2):\n%s", rc, out);
        char pid[32];
        snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
        ck_assert_msg(strstr(out, rd) && strstr(out, pid), "%s", out);
    }
    check_unchanged(rd, &snap, "refused run");
    for (int i = 0; i < 5; i++) {
        char *after = slurp_rel(rd, kept[i]);
        ck_assert_msg(!strcmp(before[i], after), "%s changed", kept[i]);
        free(after);
        free(before[i]);
    }
    ck_assert(exists(pathf(p, sizeof p, rd, "data/gen_0002.h5.tmp")));
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0002.h5")));
    close(fd); /* released: the run continues (and removes the stale temporary) */
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    check_run_dir(rd, 2);
}
END_TEST

/* A full disk at five of the HDF5 writes of a 1-generation run, the first and the last
 * among them (test_run_slow.c tries many more): exit 1, a message, no .tmp, and the run
 * then resumes to the end. */
START_TEST(run_disk_full)
{
    ck_assert_int_ge(run_disk_full_sweep(60), 4);
}
END_TEST

/* A `selfplay --follow` worker adds a file to the generation whose training has not
 * started, and the next training reads it (the train_data event counts it, the summary
 * counts its games); a directory that is not a run, and a --set that would change the
 * games, are refused. */
START_TEST(follow_worker_files_used)
{
    char rd[300], out[16384], cmd[1200];
    snprintf(rd, sizeof rd, "%s/follow", dir);
    int rc = gz_run(rd, 1, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    const char *bin = getenv("GZ_BIN");
    snprintf(cmd, sizeof cmd, "'%s' selfplay --follow '%s' --files 1 --games 4 --seed 9 "
             "--set selfplay.threads=1 >'%s/follow.log' 2>&1", bin, rd, dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    /* exactly one follower file, of generation 2, played by the best model */
    char dd[400], fp[700] = "";
    snprintf(dd, sizeof dd, "%s/data", rd);
    DIR *d = opendir(dd);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    int nf = 0;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, "gen_0002.f", 10)) {
            nf++;
            snprintf(fp, sizeof fp, "%s/%s", dd, de->d_name);
        }
    closedir(d);
    ck_assert_int_eq(nf, 1);
    char err[512];
    sp_file *f = sp_file_read(fp, NULL, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    ck_assert_int_eq(f->meta.generation, 2);
    ck_assert_str_eq(f->meta.model, "models/gen_0001.h5");
    int64_t fpos = f->n;
    int32_t top = 0;
    for (int64_t i = 0; i < f->n; i++)
        top = f->gameix[i] > top ? f->gameix[i] : top;
    ck_assert_int_eq(top, 3);
    ck_assert_int_eq(f->rows, 3);
    sp_file_free(f);
    /* the next training uses it */
    rc = gz_run(rd, 2, NULL, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "4 from --follow workers") != NULL, "%s", out);
    double files = last_event_number(rd, "train_data", "follower_files");
    double positions = last_event_number(rd, "train_data", "follower_positions");
    double games = last_event_number(rd, "train_data", "follower_games");
    double newpos = last_event_number(rd, "train_data", "new_positions");
    double own = last_event_number(rd, "selfplay", "positions");
    ck_assert_msg(files == 1 && positions == (double)fpos && games == 4,
                  "train_data: %g follower files, %g positions (the file has %lld), %g games", files,
                  positions, (long long)fpos, games);
    ck_assert_msg(newpos == own + (double)fpos, "new positions %g, own %g + follower %lld", newpos, own,
                  (long long)fpos);
    /* bad input */
    snprintf(cmd, sizeof cmd, "'%s' selfplay --follow '%s/nothing' >/dev/null 2>&1", bin, dir);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof cmd, "'%s' selfplay --follow '%s' --set mcts.simulations=2 2>&1", bin, rd);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    ck_assert_int_eq(WEXITSTATUS(pclose(p)), 2);
    ck_assert_msg(strstr(out, "mcts.simulations") != NULL, "%s", out);
}
END_TEST

/* net.kind ntuple (2048 4x4): a generation is its TD games and its n-tuple file (no
 * samples); the arena plays model-expectimax; a kill after generation 2's training and
 * the same command again: generation 2 is kept as it was (its games are not played
 * again), and the run ends with every game counted once. A run --from it with stages
 * added (net.ntuple_stages). --mpi, other games and a --from of another kind are refused. */
START_TEST(ntuple_run_resumes)
{
    char rd[300], out[16384], cfg[400], p[400], err[512];
    snprintf(rd, sizeof rd, "%s/ntuple", dir);
    snprintf(cfg, sizeof cfg, "%s/configs/2048-ntuple.json", getenv("GZ_SRC"));
    const char *base[] = {"-c", cfg, "--set", "selfplay.games=150", "--set", "selfplay.threads=1",
                          "--set", "arena.games=2", "--set", "arena.baselines=[\"random\"]", NULL};
    int rc = gz_run_base(rd, 2, "2:train", base, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 128 + SIGKILL, "exit %d:\n%s", rc, out);
    ck_assert_ptr_nonnull(strstr(out, "gen 1 td: 150 games"));
    ntuple *g2 = ntuple_load(pathf(p, sizeof p, rd, "models/gen_0002.h5"), err, sizeof err);
    ck_assert_msg(g2 != NULL, "%s", err);
    ck_assert_int_eq(g2->games, 300);
    ck_assert_int_eq(g2->generation, 2);
    rc = gz_run_base(rd, 3, NULL, base, NULL, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_ptr_null(strstr(out, "gen 2 td:"));
    ck_assert_ptr_nonnull(strstr(out, "gen 3 td: 150 games"));
    ntuple *again = ntuple_load(p, err, sizeof err);
    ck_assert_msg(again != NULL, "%s", err);
    for (int t = 0; t < NT_TUPLES; t++)
        ck_assert(memcmp(again->w[0][t], g2->w[0][t], NT_ENTRIES * sizeof(float)) == 0);
    ntuple_free(again);
    ntuple_free(g2);
    ntuple *g3 = ntuple_load(pathf(p, sizeof p, rd, "models/gen_0003.h5"), err, sizeof err);
    ck_assert_msg(g3 != NULL, "%s", err);
    ck_assert_int_eq(g3->games, 450);
    ntuple_free(g3);
    ck_assert(!exists(pathf(p, sizeof p, rd, "data/gen_0001.h5")));
    char *csv = slurp_rel(rd, "ratings.csv");
    ck_assert_msg(strstr(csv, "\ngen_0003,") && strstr(csv, "\nrandom,"), "%s", csv);
    free(csv);
    char *arena = slurp_rel(rd, "arena/gen_0003.jsonl");
    ck_assert_int_eq(count_lines(arena), 2);
    free(arena);
    char *m = slurp_rel(rd, "metrics.jsonl");
    ck_assert_ptr_nonnull(strstr(m, "\"kind\":\"ntuple\""));
    free(m);
    /* a run from that network with stages added above it (net.ntuple_stages): generation
     * 0 is the network with its games, and the games after the 256 tile write stage 1 */
    char from[400], st[300];
    pathf(from, sizeof from, rd, "models/gen_0003.h5");
    snprintf(st, sizeof st, "%s/ntuple_st", dir);
    const char *staged[] = {"--from", from, "--set", "net.ntuple_stages=[256,4096]", NULL};
    rc = gz_run_base(st, 1, NULL, base, staged, 0, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ntuple *s0 = ntuple_load(pathf(p, sizeof p, st, "models/gen_0000.h5"), err, sizeof err);
    ck_assert_msg(s0 != NULL, "%s", err);
    ck_assert_int_eq(s0->stages, 3);
    ck_assert_int_eq(s0->games, 450);
    ntuple_free(s0);
    ntuple *s1 = ntuple_load(pathf(p, sizeof p, st, "models/gen_0001.h5"), err, sizeof err);
    ck_assert_msg(s1 != NULL, "%s", err);
    ck_assert_int_eq(s1->games, 600);
    size_t own = 0;
    for (int t = 0; t < NT_TUPLES; t++)
        for (uint32_t i = 0; i < NT_ENTRIES / 64; i++)
            own += s1->used[1][t][i] != 0;
    ck_assert_uint_gt(own, 0);
    ntuple_free(s1);
    /* a --from that is not an n-tuple network is named */
    snprintf(st, sizeof st, "%s/ntuple_from_bad", dir);
    const char *badfrom[] = {"--from", cfg, NULL};
    rc = gz_run_base(st, 1, NULL, base, badfrom, 0, out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "--from: ") && strstr(out, "not an HDF5 file"), "%s", out);
    /* refusals */
    const char *mpi[] = {"-c", cfg, "--mpi", NULL};
    snprintf(rd, sizeof rd, "%s/ntuple_mpi", dir);
    rc = gz_run_base(rd, 1, NULL, mpi, NULL, 0, out, sizeof out);
    ck_assert_int_ne(rc, 0);
    const char *mnk[] = {"--set", "net.kind=ntuple", NULL};
    snprintf(rd, sizeof rd, "%s/ntuple_mnk", dir);
    rc = gz_run_base(rd, 1, NULL, mnk, NULL, 0, out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "net.kind: ntuple networks play 2048 on the 4x4 board"), "%s", out);
}
END_TEST

static Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, full_run);
    tcase_add_test(tc, swa_models_played);
    tcase_add_test(tc, promote_score_head_to_head);
    tcase_add_test(tc, rundir_state_and_best);
    tcase_add_test(tc, three_players_balanced_seats);
    tcase_add_test(tc, lookback_match);
    tcase_add_test(tc, arena_every);
    tcase_add_test(tc, resume_after_crash);
    tcase_add_test(tc, selfplay_parts_survive_a_kill);
    tcase_add_test(tc, sizes_split);
    tcase_add_test(tc, simulations_ramp);
    tcase_add_test(tc, selfplay_sizes_survive_a_kill);
    tcase_add_test(tc, resume_after_kill);
    tcase_add_test(tc, interrupt_then_resume);
    tcase_add_test(tc, other_config_refused);
    tcase_add_test(tc, time_budget_resumes);
    tcase_add_test(tc, cpu_clock);
    tcase_add_test(tc, reuse_sets_steps);
    tcase_add_test(tc, schedule_spans_the_budget);
    tcase_add_test(tc, calibrate_in_the_loop);
    tcase_add_test(tc, extend_finished_run);
    tcase_add_test(tc, corrupt_sample_file);
    tcase_add_test(tc, deep_run_dir);
    tcase_add_test(tc, arena_error_names_the_file);
    tcase_add_test(tc, lock_two_runs);
    tcase_add_test(tc, lock_refusal_writes_nothing);
    tcase_add_test(tc, run_disk_full);
    tcase_add_test(tc, follow_worker_files_used);
    tcase_add_test(tc, ntuple_run_resumes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(run_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
