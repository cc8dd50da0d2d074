/* The config module through the gridzero binary (GZ_BIN, source root GZ_SRC): every
 * class of error names the file and the key and exits 2; every shipped config and the
 * built-in default validate and print JSON that validates again to the same result. */
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/config.h"

static char tmpdir[256];

/* Runs `gridzero ARGS` with stderr and stdout captured together; returns the exit
 * status and the output (free with free()). */
static int run(const char *args, char **out)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    ck_assert(WIFEXITED(st));
    *out = buf;
    return WEXITSTATUS(st);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup_dir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gz_test_config_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_dir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes json to a file, checks it, and expects exit 2 with the file name and every
 * word of `want` (space-separated) in the message. */
static void expect_error(const char *name, const char *json, const char *want)
{
    char path[512], args[600];
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    write_file(path, json);
    snprintf(args, sizeof args, "config check '%s'", path);
    char *out;
    int rc = run(args, &out);
    ck_assert_msg(rc == 2, "%s: exit %d, output: %s", name, rc, out);
    ck_assert_msg(strstr(out, path) != NULL, "%s: message does not name the file: %s", name, out);
    char words[256];
    snprintf(words, sizeof words, "%s", want);
    for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
        ck_assert_msg(strstr(out, w) != NULL, "%s: \"%s\" not in: %s", name, w, out);
    free(out);
}

START_TEST(error_classes)
{
    expect_error("not_json", "{\"game\": {\"name\": \"mnk\",\n", "not valid JSON");
    expect_error("not_object", "[1, 2]", "object");
    expect_error("unknown_top", "{\"sead\": 3}", "unknown key sead");
    expect_error("unknown_in_section", "{\"mcts\": {\"c_pucct\": 1.0}}", "unknown key mcts.c_pucct");
    expect_error("section_not_object", "{\"mcts\": 3}", "key mcts");
    expect_error("other_game_key", "{\"game\": {\"name\": \"mnk\", \"size\": 13}}",
                 "game.size not a key of game mnk");
    expect_error("other_game_key2", "{\"game\": {\"name\": \"sanling\", \"k\": 5}}",
                 "game.k not a key of game sanling");
    expect_error("wrong_type", "{\"mcts\": {\"c_puct\": \"high\"}}", "key mcts.c_puct expected");
    expect_error("wrong_type_bool", "{\"mcts\": {\"solver\": 1}}", "key mcts.solver true or false");
    expect_error("wrong_type_list", "{\"arena\": {\"baselines\": \"random\"}}", "key arena.baselines array");
    expect_error("wrong_type_list_item", "{\"arena\": {\"baselines\": [\"random\", 3]}}",
                 "arena.baselines");
    expect_error("repeated_key", "{\"mcts\": {\"simulations\": 10, \"simulations\": 20}}",
                 "key mcts.simulations twice");
    expect_error("repeated_section", "{\"arena\": {\"games\": 2}, \"arena\": {\"games\": 4}}",
                 "key arena twice");
    expect_error("bad_baseline", "{\"arena\": {\"baselines\": [\"random\", \"mcst:50\"]}}",
                 "key arena.baselines[1] mcst:50 unknown");
    expect_error("baseline_not_for_game",
                 "{\"game\": {\"name\": \"sanling\", \"size\": 9}, \"arena\": {\"baselines\": [\"alphabeta\"]}}",
                 "key arena.baselines[0] alphabeta sanling");
    expect_error("out_of_range", "{\"mcts\": {\"c_puct\": -1}}", "key mcts.c_puct expected");
    expect_error("out_of_range_int", "{\"game\": {\"name\": \"sanling\", \"size\": 65}}",
                 "key game.size 65");
    expect_error("not_integer", "{\"mcts\": {\"simulations\": 1.5}}", "key mcts.simulations integer");
    expect_error("bad_enum", "{\"train\": {\"optimizer\": \"rmsprop\"}}",
                 "key train.optimizer sgd|adam rmsprop");
    expect_error("unknown_game", "{\"game\": {\"name\": \"chess\"}}", "key game.name chess");
    expect_error("missing_game_name", "{\"game\": {\"rows\": 3}}", "key game.name missing");
    expect_error("mnk_k_too_big", "{\"game\": {\"name\": \"mnk\", \"rows\": 3, \"cols\": 4, \"k\": 5}}",
                 "key game.k 4");
    expect_error("sanling_moves_too_big",
                 "{\"game\": {\"name\": \"sanling\", \"size\": 5, \"players\": 2, \"moves\": 25}}",
                 "key game.moves 24");
    /* the win/draw/loss head: two-player games with outcomes only */
    expect_error("wdl_three_players",
                 "{\"game\": {\"name\": \"sanling\", \"players\": 3}, \"net\": {\"value_head\": \"wdl\"}}",
                 "key net.value_head wdl two-player sanling 3 players");
    expect_error("wdl_2048", "{\"game\": {\"name\": \"2048\"}, \"net\": {\"value_head\": \"wdl\"}}",
                 "key net.value_head wdl two-player 2048 score");
    expect_error("wdl_misspelt", "{\"net\": {\"value_head\": \"wld\"}}",
                 "key net.value_head zerosum|independent|score|wdl wld");
    /* n-tuple stages: net.kind ntuple, at most 3 increasing powers of two */
#define NT2048 "\"game\": {\"name\": \"2048\"}, "
    expect_error("stages_cnn", "{" NT2048 "\"net\": {\"ntuple_stages\": [8192]}}",
                 "key net.ntuple_stages net.kind ntuple");
    expect_error("stages_power", "{" NT2048 "\"net\": {\"kind\": \"ntuple\", \"ntuple_stages\": [8000]}}",
                 "key net.ntuple_stages[0] 8000 powers of two");
    expect_error("stages_order",
                 "{" NT2048 "\"net\": {\"kind\": \"ntuple\", \"ntuple_stages\": [16384, 8192]}}",
                 "key net.ntuple_stages[1] 8192 increasing");
    expect_error("stages_many",
                 "{" NT2048 "\"net\": {\"kind\": \"ntuple\", \"ntuple_stages\": [256, 512, 1024, 2048]}}",
                 "key net.ntuple_stages at most 3 4");
    expect_error("stages_range", "{" NT2048 "\"net\": {\"kind\": \"ntuple\", \"ntuple_stages\": [2]}}",
                 "key net.ntuple_stages[0] [4, 32768]");
    /* weight averaging: networks only */
    expect_error("swa_ntuple", "{" NT2048 "\"net\": {\"kind\": \"ntuple\"}, \"train\": {\"swa\": 4}}",
                 "key train.swa net.kind cnn");
    expect_error("swa_range", "{\"train\": {\"swa\": 65}}", "train.swa");
#undef NT2048
    /* mixed board sizes: m,n,k on a square board, each size in [k, N), increasing */
    expect_error("sizes_sanling", "{\"game\": {\"name\": \"sanling\"}, \"selfplay\": {\"sizes\": [9]}}",
                 "key selfplay.sizes m,n,k sanling");
    expect_error("sizes_not_square",
                 "{\"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 13}, \"selfplay\": {\"sizes\": [9]}}",
                 "key selfplay.sizes square 15x13");
    expect_error("sizes_too_big", "{\"game\": {\"name\": \"mnk\"}, \"selfplay\": {\"sizes\": [9, 15]}}",
                 "key selfplay.sizes[1] [5, 15) 15");
    expect_error("sizes_below_k", "{\"game\": {\"name\": \"mnk\"}, \"selfplay\": {\"sizes\": [4]}}",
                 "key selfplay.sizes[0] [5, 15) 4");
    expect_error("sizes_order", "{\"game\": {\"name\": \"mnk\"}, \"selfplay\": {\"sizes\": [11, 9]}}",
                 "key selfplay.sizes[1] increasing 9 11");
    expect_error("sizes_not_ints", "{\"selfplay\": {\"sizes\": [9.5]}}", "key selfplay.sizes[0] integer");
    expect_error("sizes_not_array", "{\"selfplay\": {\"sizes\": 9}}", "key selfplay.sizes array integers");
    expect_error("sizes_dense",
                 "{\"game\": {\"name\": \"mnk\"}, \"net\": {\"policy_head\": \"dense\"}, "
                 "\"selfplay\": {\"sizes\": [9]}}", "key selfplay.sizes policy_head conv dense");
    expect_error("sizes_swap2",
                 "{\"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, \"k\": 4}, \"selfplay\": "
                 "{\"sizes\": [4, 5], \"opening\": \"swap2\"}}", "key selfplay.sizes[0] swap2 25 4x4");
    expect_error("sizes_fraction", "{\"selfplay\": {\"sizes_fraction\": 1}}", "key selfplay.sizes_fraction");
    /* trailing text after the object (cJSON_Parse alone stops at the object's end) */
    expect_error("trailing_junk", "{\"seed\": 5} trailing junk {{{", "unexpected text after line 1");
    expect_error("trailing_object", "{\"seed\": 5}\n{\"seed\": 6}\n", "unexpected text after line 2");
    /* a missing file */
    char path[512], args[600], *out;
    snprintf(path, sizeof path, "%s/no_such_file.json", tmpdir);
    snprintf(args, sizeof args, "config check '%s'", path);
    ck_assert_int_eq(run(args, &out), 2);
    ck_assert_ptr_nonnull(strstr(out, path));
    free(out);
}
END_TEST

START_TEST(set_overrides)
{
    char *out;
    ck_assert_int_eq(run("config check --set mcts.c_puct=abc", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "mcts.c_puct"));
    free(out);
    ck_assert_int_eq(run("config check --set mcts.nope=1", &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "mcts.nope"));
    free(out);
    ck_assert_int_eq(run("config check --set game.size=9", &out), 2); /* mnk default */
    ck_assert_ptr_nonnull(strstr(out, "game.size"));
    free(out);
    /* a number followed by junk is not that number */
    ck_assert_int_eq(run("config check --set seed=5x", &out), 2);
    ck_assert_msg(strstr(out, "seed") != NULL, "%s", out);
    free(out);
    /* seeds: every integer up to 2^53 - 1 is exact in a double; 2^53 + 1 would round to
     * 2^53 and be another seed than the one asked for */
    ck_assert_int_eq(run("config check --set seed=9007199254740993", &out), 2);
    ck_assert_msg(strstr(out, "seed") != NULL, "%s", out);
    free(out);
    ck_assert_int_eq(run("config check --set seed=9007199254740992", &out), 2);
    free(out);
    ck_assert_int_eq(run("config check --set seed=9007199254740991", &out), 0);
    ck_assert_msg(strstr(out, "9007199254740991") != NULL, "%s", out);
    free(out);
    ck_assert_int_eq(run("config check --set mcts.c_puct=2.5", &out), 0);
    cJSON *j = cJSON_Parse(out);
    ck_assert_ptr_nonnull(j);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "mcts"), "c_puct");
    ck_assert_double_eq_tol(v->valuedouble, 2.5, 1e-12);
    cJSON_Delete(j);
    free(out);
    /* an array of integers from --set, written back as one */
    ck_assert_int_eq(run("config check --set game.rows=7 --set game.cols=7 --set "
                         "'selfplay.sizes=[3,4,6]' --set selfplay.sizes_fraction_end=0.2 "
                         "--set 'arena.baselines=[\"random\"]'", &out), 0);
    j = cJSON_Parse(out);
    ck_assert_ptr_nonnull(j);
    const cJSON *sp = cJSON_GetObjectItem(j, "selfplay");
    v = cJSON_GetObjectItem(sp, "sizes");
    ck_assert(cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3);
    ck_assert_int_eq(cJSON_GetArrayItem(v, 2)->valueint, 6);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(sp, "sizes_fraction_end")->valuedouble, 0.2, 1e-12);
    cJSON_Delete(j);
    free(out);
    ck_assert_int_eq(run("config check", &out), 0); /* off by default: [] */
    j = cJSON_Parse(out);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "selfplay"), "sizes")), 0);
    cJSON_Delete(j);
    free(out);
}
END_TEST

/* The rules between keys are checked once, after every --set: the order does not
 * matter; a combination that breaks a rule is refused naming the key. */
/* An array of integers other than selfplay.sizes (net.ntuple_stages) is read, written
 * and read again, its count beside it. */
START_TEST(ntuple_stages_round_trip)
{
    gz_config c, d;
    char err[512];
    ck_assert_msg(cfg_parse(&c, "{\"game\": {\"name\": \"2048\"}, \"net\": {\"kind\": \"ntuple\", "
                            "\"ntuple_stages\": [8192, 16384]}}", "t", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.net.nntuple_stages, 2);
    ck_assert_int_eq(c.net.ntuple_stages[1], 16384);
    ck_assert_int_eq(c.selfplay.nsizes, 0);
    char *json = cfg_to_json(&c);
    ck_assert_msg(strstr(json, "\"ntuple_stages\":\t[8192, 16384]"), "%s", json);
    ck_assert_msg(cfg_parse(&d, json, "t2", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(d.net.nntuple_stages, 2);
    ck_assert_int_eq(d.net.ntuple_stages[0], 8192);
    free(json);
}
END_TEST

START_TEST(set_order)
{
    char path[512], args[1200], *out;
    snprintf(path, sizeof path, "%s/sanling.json", tmpdir);
    write_file(path, "{\"game\": {\"name\": \"sanling\", \"size\": 13, \"moves\": 36}}\n");
    const char *orders[] = {"--set game.size=5 --set game.moves=10",
                            "--set game.moves=10 --set game.size=5"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "config check '%s' %s", path, orders[k]);
        int rc = run(args, &out);
        ck_assert_msg(rc == 0, "%s: exit %d: %s", orders[k], rc, out);
        cJSON *j = cJSON_Parse(out);
        ck_assert_ptr_nonnull(j);
        cJSON *g = cJSON_GetObjectItem(j, "game");
        ck_assert_int_eq(cJSON_GetObjectItem(g, "size")->valueint, 5);
        ck_assert_int_eq(cJSON_GetObjectItem(g, "moves")->valueint, 10);
        cJSON_Delete(j);
        free(out);
    }
    snprintf(args, sizeof args, "config check '%s' --set game.size=5", path);
    ck_assert_int_eq(run(args, &out), 2);
    ck_assert_msg(strstr(out, "game.moves") && strstr(out, "24"), "%s", out);
    free(out);
    /* the library call the commands use */
    gz_config c;
    char err[512];
    /* net.value_head wdl: two players with outcomes (m,n,k; sanling with 2), whichever of
     * game.players and value_head is set last */
    ck_assert_msg(cfg_parse(&c, "{\"net\": {\"value_head\": \"wdl\"}}", "t", err, sizeof err) == 0,
                  "%s", err);
    ck_assert_str_eq(c.net.value_head, "wdl");
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\"}}", "t", err, sizeof err), 0);
    char *w2[] = {"net.value_head=wdl", "game.players=2"}, *w3[] = {"game.players=2", "net.value_head=wdl"};
    ck_assert_msg(cfg_set_all(&c, w2, 2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\"}}", "t", err, sizeof err), 0);
    ck_assert_msg(cfg_set_all(&c, w3, 2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\"}}", "t", err, sizeof err), 0);
    ck_assert_int_eq(cfg_set_all(&c, w2, 1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.value_head") && strstr(err, "wdl"), "%s", err);
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\"}}", "t", err, sizeof err), 0);
    char *sets[] = {"game.size=5", "game.moves=10"};
    ck_assert_int_eq(cfg_set(&c, sets[0], err, sizeof err), -1); /* alone: 36 moves > 24 */
    ck_assert_int_eq(cfg_parse(&c, "{\"game\": {\"name\": \"sanling\"}}", "t", err, sizeof err), 0);
    ck_assert_msg(cfg_set_all(&c, sets, 2, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(c.game.size, 5);
    ck_assert_int_eq(c.game.moves, 10);
    char *bad[] = {"game.moves=30", "game.size=5"};
    ck_assert_int_eq(cfg_set_all(&c, bad, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "game.moves") != NULL, "%s", err);
    /* trailing text, straight through the parser */
    ck_assert_int_eq(cfg_parse(&c, "{\"seed\": 5} x", "file.json", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "file.json") && strstr(err, "after"), "%s", err);
    ck_assert_int_eq(cfg_parse(&c, "{\"seed\": 5} \n\t\r\n", "file.json", err, sizeof err), 0);
}
END_TEST

/* `config check -c FILE`, the form every other command takes, works like `config check
 * FILE`. */
START_TEST(check_dash_c)
{
    char path[512], args[1200], *out, *out2;
    snprintf(path, sizeof path, "%s/c.json", tmpdir);
    write_file(path, "{\"seed\": 7}\n");
    snprintf(args, sizeof args, "config check -c '%s'", path);
    ck_assert_int_eq(run(args, &out), 0);
    snprintf(args, sizeof args, "config check '%s'", path);
    ck_assert_int_eq(run(args, &out2), 0);
    ck_assert_str_eq(out, out2);
    free(out);
    free(out2);
    snprintf(args, sizeof args, "config check --config '%s' --set seed=9", path);
    ck_assert_int_eq(run(args, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"seed\":\t9"));
    free(out);
}
END_TEST

/* Checks a file (NULL: the built-in default): exit 0, JSON out, the JSON checks again
 * to the same text. Returns the parsed output (cJSON_Delete it). */
static cJSON *check_ok(const char *path)
{
    char args[1200], *out, *again;
    snprintf(args, sizeof args, "config check%s%s%s", path ? " '" : "", path ? path : "",
             path ? "'" : "");
    int rc = run(args, &out);
    ck_assert_msg(rc == 0, "%s: exit %d: %s", path ? path : "default", rc, out);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL && cJSON_IsObject(j), "%s: output is not a JSON object", path);
    char p2[512];
    snprintf(p2, sizeof p2, "%s/effective.json", tmpdir);
    write_file(p2, out);
    snprintf(args, sizeof args, "config check '%s'", p2);
    ck_assert_int_eq(run(args, &again), 0);
    ck_assert_str_eq(out, again);
    free(out);
    free(again);
    return j;
}

START_TEST(shipped_configs_validate)
{
    const char *src = getenv("GZ_SRC");
    ck_assert_msg(src != NULL, "GZ_SRC not set");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/configs", src);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        cJSON *j = check_ok(path);
        /* the game section is complete and the game builds */
        gz_config c;
        char err[512];
        ck_assert_msg(cfg_load(&c, path, err, sizeof err) == 0, "%s", err);
        cJSON_Delete(j);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 5);
}
END_TEST

START_TEST(shipped_configs_content)
{
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    struct { const char *file, *game; int a, b, c, blocks, channels; const char *rule; } want[] = {
        {"tictactoe.json", "mnk", 3, 3, 3, -1, -1, "freestyle"},
        {"gomoku15.json", "mnk", 15, 15, 5, 6, 64, "freestyle"},
        {"renju15.json", "mnk", 15, 15, 5, 6, 64, "renju"},
        {"sanling13.json", "sanling", 13, 3, 36, -1, -1, NULL},
        {"sanling13-2p.json", "sanling", 13, 2, 36, -1, -1, NULL},
        {"bench-sanling32.json", "sanling", 32, 3, -1, 6, 64, NULL},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/configs/%s", src, want[i].file);
        gz_config c;
        ck_assert_msg(cfg_load(&c, path, err, sizeof err) == 0, "%s", err);
        ck_assert_str_eq(c.game.name, want[i].game);
        if (!strcmp(want[i].game, "mnk")) {
            ck_assert_int_eq(c.game.rows, want[i].a);
            ck_assert_int_eq(c.game.cols, want[i].b);
            ck_assert_int_eq(c.game.k, want[i].c);
            ck_assert_str_eq(c.game.rule, want[i].rule);
        } else {
            ck_assert_int_eq(c.game.size, want[i].a);
            ck_assert_int_eq(c.game.players, want[i].b);
            if (want[i].c > 0)
                ck_assert_int_eq(c.game.moves, want[i].c);
        }
        if (want[i].blocks > 0) {
            ck_assert_int_eq(c.net.blocks, want[i].blocks);
            ck_assert_int_eq(c.net.channels, want[i].channels);
        }
    }
}
END_TEST

START_TEST(default_validates)
{
    gz_config c;
    char err[512];
    ck_assert_msg(cfg_load(&c, NULL, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(c.game.name, "mnk");
    ck_assert_int_eq(c.game.rows, 3);
    cJSON *j = check_ok(NULL);
    cJSON *g = cJSON_GetObjectItem(j, "game");
    ck_assert_str_eq(cJSON_GetObjectItem(g, "name")->valuestring, "mnk");
    ck_assert_int_eq(cJSON_GetObjectItem(g, "k")->valueint, 3);
    ck_assert_ptr_null(cJSON_GetObjectItem(g, "size")); /* other games' keys left out */
    cJSON_Delete(j);
    /* configs/tictactoe.json is the built-in default written out */
    const char *src = getenv("GZ_SRC");
    char path[1024], args[1200], *a, *b;
    snprintf(path, sizeof path, "%s/configs/tictactoe.json", src);
    snprintf(args, sizeof args, "config check '%s'", path);
    ck_assert_int_eq(run(args, &a), 0);
    ck_assert_int_eq(run("config check", &b), 0);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("binary");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
    tcase_add_test(tc, error_classes);
    tcase_add_test(tc, set_overrides);
    tcase_add_test(tc, set_order);
    tcase_add_test(tc, ntuple_stages_round_trip);
    tcase_add_test(tc, check_dash_c);
    tcase_add_test(tc, shipped_configs_validate);
    tcase_add_test(tc, shipped_configs_content);
    tcase_add_test(tc, default_validates);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
