/* gridzero under MPI (issue 13), through the binary and mpirun with 2 and 3 ranks on
 * one machine (--oversubscribe): data-parallel training equals one process's; a run
 * over ranks writes self-play shards, gathers the arena, logs per rank; a rank killed
 * in the middle of a generation, then a restart with another number of ranks, loses
 * and repeats no file and makes the same shards; ranks with different configs or
 * different run directories are refused. Without MPI in the build (or no mpirun) the
 * MPI tests say why and pass; what a build without MPI must do (refuse --mpi, saying
 * how to build with it) is tested there instead. */
#include <math.h>

#include "mpi_util.h"
#include "loop/rundata.h"
#include "nn/checkpoint.h"
#include "sample_gen.h"

/* --mpi needs MPI in the build; K copies of a one-process run under mpirun are refused. */
START_TEST(refusals_without_mpi)
{
    const char *bin = getenv("GZ_BIN");
    char cmd[1200], out[4096];
    FILE *p;
    size_t n;
    const char *built = getenv("GZ_MPI");
    if (!built || strcmp(built, "1") != 0) {
        const char *cmds[] = {"run --mpi -o '%s/never'", "train --mpi --data '%s' -o /tmp/never.h5"};
        for (int k = 0; k < 2; k++) {
            char sub[600];
            snprintf(sub, sizeof sub, cmds[k], dir);
            snprintf(cmd, sizeof cmd, "'%s' %s 2>&1; echo \"exit $?\"", bin, sub);
            p = popen(cmd, "r");
            n = fread(out, 1, sizeof out - 1, p);
            out[n] = 0;
            pclose(p);
            ck_assert_msg(strstr(out, "exit 2") != NULL, "%s:\n%s", cmd, out);
            ck_assert_msg(strstr(out, "built without MPI") && strstr(out, "-Dmpi=enabled"), "%s", out);
        }
        char never[400];
        snprintf(never, sizeof never, "%s/never", dir);
        ck_assert(!exists(never));
    }
    /* started as one of 2 ranks (what mpirun's environment says) but without --mpi */
    snprintf(cmd, sizeof cmd, "OMPI_COMM_WORLD_SIZE=2 '%s' run -o '%s/copies' 2>&1; echo \"exit $?\"",
             bin, dir);
    p = popen(cmd, "r");
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    pclose(p);
    ck_assert_msg(strstr(out, "exit 2") && strstr(out, "without --mpi"), "%s", out);
}
END_TEST

/* max over tensors of max|a - b| / max(max|a|, 0.01) (see test_train.c). */
static double ckpt_rel_diff(const char *pa, const char *pb, const game *g, char *worst, size_t wl)
{
    char err[512];
    nn_params *a = nn_ckpt_load(pa, g, NULL, err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    nn_params *b = nn_ckpt_load(pb, g, NULL, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq((int)a->layout.count, (int)b->layout.count);
    double w = 0;
    for (int i = 0; i < a->layout.ntensors; i++) {
        const nn_tensor *T = &a->layout.t[i];
        double ma = 0, md = 0;
        for (size_t j = 0; j < T->size; j++) {
            ma = fmax(ma, fabs(a->data[T->offset + j]));
            md = fmax(md, fabs(a->data[T->offset + j] - b->data[T->offset + j]));
        }
        double rel = md / fmax(ma, 1e-2);
        if (rel > w) {
            w = rel;
            snprintf(worst, wl, "%s", T->name);
        }
    }
    nn_params_free(a);
    nn_params_free(b);
    return w;
}

/* 1 process, 2 ranks and 3 ranks train on the same data: the same weights within 1e-5
 * (relative to each tensor's scale), BN running statistics included. */
START_TEST(train_ranks_match_one_process)
{
    MPI_SKIP_IF_UNAVAILABLE();
    game *g = gen_mnk(3, 3, 3);
    char data[400], m1[400], mk[400], out[16384];
    snprintf(data, sizeof data, "%s/samples.h5", dir);
    gen_random_games(g, data, 60, 13, 1);
    const char *common[] = {"--data", data, "--steps", "12", "--set", "net.blocks=2", "--set",
                            "net.channels=8", "--set", "train.batch_size=30", "--set", "seed=4",
                            "--set", "train.weight_decay=0.001", NULL};
    /* one process, through the same binary */
    snprintf(m1, sizeof m1, "%s/one.h5", dir);
    char cmd[2000];
    int off = snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 '%s' train -o '%s'", getenv("GZ_BIN"), m1);
    for (int i = 0; common[i]; i++)
        off += snprintf(cmd + off, sizeof cmd - (size_t)off, " '%s'", common[i]);
    snprintf(cmd + off, sizeof cmd - (size_t)off, " >'%s/one.log' 2>&1", dir);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    for (int K = 2; K <= 3; K++) {
        snprintf(mk, sizeof mk, "%s/ranks%d.h5", dir, K);
        const char *a[32];
        int n = 0;
        a[n++] = "train";
        a[n++] = "--mpi";
        a[n++] = "-o";
        a[n++] = mk;
        for (int i = 0; common[i]; i++)
            a[n++] = common[i];
        a[n] = NULL;
        const char *const *args[1] = {a};
        int rc = mpi_exec(1, &K, args, NULL, out, sizeof out);
        ck_assert_msg(rc == 0, "mpirun -np %d gridzero train --mpi: exit %d\n%s", K, rc, out);
        ck_assert_msg(strstr(out, "data-parallel over MPI ranks") != NULL, "%s", out);
        char worst[64] = "";
        double rel = ckpt_rel_diff(m1, mk, g, worst, sizeof worst);
        fprintf(stderr, "train_ranks_match_one_process: %d ranks: largest difference %.3g (%s)\n", K,
                rel, worst);
        ck_assert_msg(rel < 1e-5, "%d ranks: %s differs from one process's by %.3g (relative)", K,
                      worst, rel);
    }
    game_free(g);
}
END_TEST

/* A sample file's games: its highest game index + 1 (each file numbers them from 0), and
 * its samples. */
static int file_games(const char *path, const game *g, int64_t *samples)
{
    char err[512];
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    int top = -1;
    for (int64_t i = 0; i < f->n; i++)
        top = f->gameix[i] > top ? f->gameix[i] : top;
    if (samples)
        *samples = f->n;
    sp_file_free(f);
    return top + 1;
}

/* The data files of a run: generation k has a plan of want[k] shards (0: the single file
 * gen_NNNN.h5), every shard present, the shards' games summing to 16, and nothing else
 * in data/ (no second copy, no follower file, no temporary). */
static void check_data(const char *rd, int gens, const int *want, const game *g)
{
    char p[RD_PATH], err[512];
    int expected_files = 0;
    for (int k = 1; k <= gens; k++) {
        rd_plan plan;
        int pr = rd_plan_read(rd, k, &plan, err, sizeof err);
        rd_single_path(p, rd, k);
        if (want[k] == 0) {
            ck_assert_msg(pr == 0 && exists(p), "generation %d: expected %s and no plan", k, p);
            ck_assert_int_eq(file_games(p, g, NULL), 16);
            expected_files += 1;
            continue;
        }
        ck_assert_msg(pr == 1, "generation %d: no plan (%s)", k, err);
        ck_assert_int_eq(plan.shards, want[k]);
        ck_assert_int_eq(plan.games, 16);
        ck_assert_msg(!exists(p), "generation %d has both a plan and %s", k, p);
        int games = 0;
        for (int s = 0; s < plan.shards; s++) {
            rd_shard_path(p, rd, k, s);
            ck_assert_msg(exists(p), "%s: missing", p);
            int n = file_games(p, g, NULL);
            ck_assert_int_eq(n, rd_plan_games(&plan, s));
            games += n;
        }
        ck_assert_int_eq(games, 16);
        expected_files += 1 + plan.shards;
    }
    /* nothing else */
    char dd[RD_PATH];
    snprintf(dd, sizeof dd, "%s/data", rd);
    DIR *d = opendir(dd);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') {
            n++;
            ck_assert_msg(!strstr(de->d_name, ".tmp"), "left over: %s", de->d_name);
        }
    closedir(d);
    ck_assert_int_eq(n, expected_files);
}

/* Every data file's name, mtime and size. */
typedef struct data_snap {
    int n;
    char name[32][64];
    struct timespec mtime[32];
    off_t size[32];
} data_snap;

static void snap_data(const char *rd, data_snap *s)
{
    memset(s, 0, sizeof *s);
    char dd[RD_PATH];
    snprintf(dd, sizeof dd, "%s/data", rd);
    DIR *d = opendir(dd);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
            continue;
        ck_assert_int_lt(s->n, 32);
        char p[RD_PATH + 64];
        snprintf(p, sizeof p, "%s/%s", dd, de->d_name);
        struct stat st;
        ck_assert_int_eq(stat(p, &st), 0);
        snprintf(s->name[s->n], sizeof s->name[0], "%s", de->d_name);
        s->mtime[s->n] = st.st_mtim;
        s->size[s->n++] = st.st_size;
    }
    closedir(d);
}

static void check_snap_kept(const char *rd, const data_snap *s)
{
    for (int i = 0; i < s->n; i++) {
        char p[RD_PATH + 64];
        snprintf(p, sizeof p, "%s/data/%s", rd, s->name[i]);
        struct stat st;
        ck_assert_msg(stat(p, &st) == 0, "%s: lost", p);
        ck_assert_msg(st.st_mtim.tv_sec == s->mtime[i].tv_sec &&
                          st.st_mtim.tv_nsec == s->mtime[i].tv_nsec && st.st_size == s->size[i],
                      "%s: rewritten", p);
    }
}

/* Two sample files hold the same samples. */
static void check_same_samples(const char *a, const char *b, const game *g)
{
    char err[512];
    sp_expect ex = sp_expect_game(g);
    sp_file *x = sp_file_read(a, &ex, err, sizeof err), *y = NULL;
    ck_assert_msg(x != NULL, "%s", err);
    y = sp_file_read(b, &ex, err, sizeof err);
    ck_assert_msg(y != NULL, "%s", err);
    ck_assert_msg(x->n == y->n, "%s has %lld samples, %s %lld", a, (long long)x->n, b, (long long)y->n);
    size_t hw = (size_t)g->rows * g->cols;
    ck_assert(!memcmp(x->state, y->state, (size_t)x->n * g->planes * hw));
    ck_assert(!memcmp(x->pi, y->pi, sizeof(float) * (size_t)x->n * g->actions));
    ck_assert(!memcmp(x->z, y->z, sizeof(float) * (size_t)x->n * g->players));
    ck_assert(!memcmp(x->gameix, y->gameix, sizeof(int32_t) * (size_t)x->n));
    sp_file_free(x);
    sp_file_free(y);
}

/* metrics.jsonl's events named ev of generation gen with a "rank" field: a bit per rank. */
static unsigned ranks_logged(const char *rd, const char *ev, int gen)
{
    char *text = slurp_rel(rd, "metrics.jsonl");
    unsigned mask = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "event");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rank");
        if (cJSON_IsString(e) && !strcmp(e->valuestring, ev) && cJSON_IsNumber(r) &&
            (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "generation")) == gen)
            mask |= 1u << r->valueint;
        cJSON_Delete(o);
    }
    free(text);
    return mask;
}

/* each_event callback: every match of an "arena" event covers 4 games; counts them */
static void check_match_games(const cJSON *o, void *ctx)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(m, "wins");
        if (!cJSON_IsObject(m) || !cJSON_IsNumber(w))
            continue;
        int d = cJSON_GetObjectItemCaseSensitive(m, "draws")->valueint;
        int l = cJSON_GetObjectItemCaseSensitive(m, "losses")->valueint;
        ck_assert_msg(w->valueint + d + l == 4, "%s: %d-%d-%d", m->string, w->valueint, d, l);
        ++*(int *)ctx;
    }
}

/* A 2-rank run of 2 generations (the reference), and the same run with rank 1 killed
 * (SIGKILL) in the middle of generation 2's self-play, then started again on 3 ranks:
 * no file lost, rewritten or played twice, the missing shard made again identical to
 * the reference's, the arena gathered once; then extended to a third generation on
 * one rank (mpirun -np 1 --mpi): the plain one-file layout. */
START_TEST(run_ranks_kill_restart)
{
    MPI_SKIP_IF_UNAVAILABLE();
    game *g = gen_mnk(3, 3, 3);
    static char out[65536];
    char ref[300], rd[300];
    snprintf(ref, sizeof ref, "%s/ref", dir);
    snprintf(rd, sizeof rd, "%s/killed", dir);
    int rc = mpi_run(2, ref, 2, NULL, tiny, NULL, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "on 2 MPI ranks") && strstr(out, "games/hour"), "%s", out);
    int want2[3] = {0, 2, 2};
    check_data(ref, 2, want2, g);
    /* per-rank self-play events, a total, the arena gathered once: 4 games against the
     * best and each of 2 baselines, in game order */
    for (int k = 1; k <= 2; k++) {
        ck_assert_uint_eq(ranks_logged(ref, "selfplay", k), 3u);
        char rel[64];
        snprintf(rel, sizeof rel, "arena/gen_%04d.jsonl", k);
        char *text = slurp_rel(ref, rel);
        ck_assert_int_eq(count_lines(text), 12);
        int i = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), i++) {
            cJSON *o = cJSON_Parse(line);
            ck_assert_msg(o != NULL, "%s: %s", rel, line);
            ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(o, "index")->valueint, i % 4);
            cJSON_Delete(o);
        }
        free(text);
    }
    ck_assert_int_eq(count_events(ref, "selfplay_total"), 2);
    /* the ranks' tallies are summed: each match's W-D-L covers all 4 games, though each
     * rank played 2 of them */
    int matches = 0;
    ck_assert_int_eq(each_event(ref, "arena", check_match_games, &matches), 2);
    ck_assert_int_eq(matches, 6); /* 2 generations x (the best + 2 baselines) */
    ck_assert_int_eq(count_lines_rel(ref, "arena.jsonl"), 24);
    ck_assert_int_eq(count_tmp(ref), 0);

    /* the killed run */
    rc = mpi_run(2, rd, 2, "2:selfplay-game@1", tiny, NULL, out, sizeof out);
    ck_assert_msg(rc != 0, "the job with a killed rank exited 0:\n%s", out);
    char p[RD_PATH];
    rd_plan plan;
    char err[512];
    ck_assert_msg(rd_plan_read(rd, 2, &plan, err, sizeof err) == 1 && plan.shards == 2,
                  "generation 2's plan: %s", err);
    rd_shard_path(p, rd, 2, 1);
    ck_assert_msg(!exists(p), "the killed rank's shard exists");
    data_snap before;
    snap_data(rd, &before);
    /* again, on 3 ranks */
    rc = mpi_run(3, rd, 2, NULL, tiny, NULL, out, sizeof out);
    ck_assert_msg(rc == 0, "restart on 3 ranks: exit %d:\n%s", rc, out);
    check_snap_kept(rd, &before);
    check_data(rd, 2, want2, g);
    for (int s = 0; s < 2; s++) {
        char a[RD_PATH], b[RD_PATH];
        rd_shard_path(a, ref, 2, s);
        rd_shard_path(b, rd, 2, s);
        check_same_samples(a, b, g);
    }
    ck_assert_int_eq(count_lines_rel(rd, "arena.jsonl"), 24);
    ck_assert_int_eq(count_tmp(rd), 0);
    /* one more generation on one rank */
    snap_data(rd, &before);
    rc = mpi_run(1, rd, 3, NULL, tiny, NULL, out, sizeof out);
    ck_assert_msg(rc == 0, "one rank: exit %d:\n%s", rc, out);
    check_snap_kept(rd, &before);
    int want3[4] = {0, 2, 2, 0};
    check_data(rd, 3, want3, g);
    ck_assert_int_eq(count_lines_rel(rd, "arena.jsonl"), 36);
    char *best = slurp_rel(rd, "best");
    ck_assert_str_eq(best, "models/gen_0003.h5\n");
    free(best);
    game_free(g);
}
END_TEST

/* Ranks that disagree are refused before anything is written: different configs (the
 * key is named), and a run directory that is not the same directory for every rank. */
START_TEST(ranks_must_agree)
{
    MPI_SKIP_IF_UNAVAILABLE();
    static char out[16384];
    char rd[300], other[300];
    snprintf(rd, sizeof rd, "%s/agree", dir);
    snprintf(other, sizeof other, "%s/elsewhere", dir);
    const char *a0[] = {"run", "--mpi", "-o", rd, "--set", "mcts.simulations=16", NULL};
    const char *a1[] = {"run", "--mpi", "-o", rd, "--set", "mcts.simulations=32", NULL};
    const char *const *args[2] = {a0, a1};
    int np[2] = {1, 1};
    int rc = mpi_exec(2, np, args, NULL, out, sizeof out);
    ck_assert_msg(rc != 0, "%s", out);
    ck_assert_msg(strstr(out, "differs between ranks") && strstr(out, "mcts.simulations") &&
                      strstr(out, "rank 1"), "%s", out);
    ck_assert_msg(!exists(rd), "%s was created", rd);
    /* the same config, two directories: rank 1 does not see rank 0's */
    const char *b0[] = {"run", "--mpi", "-o", rd, NULL};
    const char *b1[] = {"run", "--mpi", "-o", other, NULL};
    const char *const *args2[2] = {b0, b1};
    rc = mpi_exec(2, np, args2, NULL, out, sizeof out);
    ck_assert_msg(rc != 0, "%s", out);
    ck_assert_msg(strstr(out, "not the same directory on every rank") && strstr(out, "rank 1"), "%s",
                  out);
    char p[400];
    ck_assert_msg(!exists(pathf(p, sizeof p, rd, "config.json")), "config.json was written");
    ck_assert_msg(!exists(pathf(p, sizeof p, rd, "models")), "models/ was made");
}
END_TEST

/* The sample file's model name (its meta). */
static void file_model(const char *path, const game *g, char *model, size_t len)
{
    char err[512];
    sp_expect ex = sp_expect_game(g);
    sp_file *f = sp_file_read(path, &ex, err, sizeof err);
    ck_assert_msg(f != NULL, "%s", err);
    snprintf(model, len, "%s", f->meta.model);
    sp_file_free(f);
}

/* 2048 (one player, scores) on 2 ranks: generation 1's rollout bootstrap in one shard per
 * rank; the one-player arena's games shared between the ranks and gathered in game order
 * for each player (the candidate, generation 0, the baseline), with the score table; then
 * a run --from that model on 2 ranks: both ranks play generation 1 with the model (rank 1
 * learns from rank 0 that generation 0 came from a model: no rollout bootstrap). */
START_TEST(run_2048_on_ranks)
{
    MPI_SKIP_IF_UNAVAILABLE();
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    char cfgp[600], rd[300], rd2[300], from[400];
    snprintf(cfgp, sizeof cfgp, "%s/configs/2048-3x3.json", src);
    snprintf(rd, sizeof rd, "%s/g48", dir);
    snprintf(rd2, sizeof rd2, "%s/g48from", dir);
    snprintf(from, sizeof from, "%s/models/gen_0001.h5", rd);
    const char *const small[] = {"-c", cfgp, "--set", "selfplay.games=2", "--set", "arena.games=3",
                                 "--set", "selfplay.bootstrap_simulations=24", "--set",
                                 "selfplay.bootstrap_export=4", "--set", "selfplay.threads=1",
                                 "--set", "net.threads=1", "--set", "train.reuse=0", "--set",
                                 "train.steps=4", "--set", "mcts.simulations=8", "--set",
                                 "arena.simulations=8", "--set", "net.blocks=1", "--set",
                                 "net.channels=8", "--set", "arena.baselines=[\"random\"]",
                                 "--set", "selfplay.parallel_games=2", NULL};
    gz_config c;
    cfg_defaults(&c, "2048");
    c.game.rows = c.game.cols = 3;
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    static char out[65536];
    int rc = mpi_run(2, rd, 1, NULL, small, NULL, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    char p[RD_PATH], model[SP_MODEL_LEN];
    for (int k = 0; k < 2; k++) {
        rd_shard_path(p, rd, 1, k);
        ck_assert_msg(exists(p), "%s: missing", p);
        file_model(p, g, model, sizeof model);
        ck_assert_str_eq(model, "rollout");
    }
    /* each player's 3 games, in game order, once */
    char *text = slurp_rel(rd, "arena/gen_0001.jsonl");
    const char *names[] = {"gen_0001", "gen_0000", "random"};
    int next[3] = {0, 0, 0}, lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_msg(o != NULL, "%s", line);
        const char *who = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "players"), 0)->valuestring;
        int k = 0;
        while (k < 3 && strcmp(who, names[k]))
            k++;
        ck_assert_msg(k < 3, "player %s", who);
        ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(o, "index")->valueint, next[k]++);
        ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(o, "score"));
        cJSON_Delete(o);
    }
    free(text);
    ck_assert_int_eq(lines, 9);
    char *ratings = slurp_rel(rd, "ratings.csv");
    ck_assert_msg(strstr(ratings, "name,mean,lo,hi") && strstr(ratings, "\ngen_0001,") &&
                      strstr(ratings, "\nrandom,"), "%s", ratings);
    free(ratings);
    /* the curriculum's second stage on 2 ranks (the same board: only the start differs) */
    const char *const extra[] = {"--from", from, NULL};
    rc = mpi_run(2, rd2, 1, NULL, small, extra, out, sizeof out);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    for (int k = 0; k < 2; k++) {
        rd_shard_path(p, rd2, 1, k);
        file_model(p, g, model, sizeof model);
        ck_assert_msg(strstr(model, "gen_0000"), "shard %d played by %s", k, model);
    }
    game_free(g);
}
END_TEST

static Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *tc = tcase_create("ranks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, refusals_without_mpi);
    tcase_add_test(tc, ranks_must_agree);
    tcase_add_test(tc, train_ranks_match_one_process);
    tcase_add_test(tc, run_ranks_kill_restart);
    tcase_add_test(tc, run_2048_on_ranks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *why = mpi_unavailable();
    if (why)
        fprintf(stderr, "test_mpi: the MPI tests are skipped: %s\n", why);
    SRunner *sr = srunner_create(mpi_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
