/* test_openings.c — engine/openings.c's generator of balanced books (openings_generate):
 * what it writes loads as a book, keeps to the centred square, has no VCT for either
 * side, holds no two symmetric images, avoids a given book, is the same for the same
 * seed, and refuses what it cannot do with a message. (Loading books is tested where
 * they are used: test_arena, test_selfplay.) */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/openings.h"
#include "engine/player.h"
#include "engine/rng.h"
#include "engine/symmetry.h"

#include "cli_util.h"

static game *make_game(const char *name, int size, int k, int rule)
{
    gz_config c;
    cfg_defaults(&c, name);
    if (strcmp(name, "mnk") == 0) {
        c.game.rows = c.game.cols = size;
        c.game.k = k;
        cfg_game_set_rule(&c.game, rule);
    }
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    return g;
}

/* Runs the generator into a string (returned, the caller frees it); *rc its result. */
static char *generate(const game *g, const openings_gen_opts *o, const opening_book *avoid,
                      uint64_t seed, int *rc, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert(f != NULL);
    rng r;
    rng_seed(&r, seed);
    *rc = openings_generate(g, o, avoid, &r, f, err, errlen);
    fclose(f);
    return buf;
}

/* Writes text to a new temporary file; returns its path (static buffer). */
static const char *to_file(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/test_openings.XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static opening_book *load_text(const game *g, const char *text)
{
    const char *path = to_file(text);
    char err[256];
    opening_book *b = openings_load(g, path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    unlink(path);
    return b;
}

/* The stones of opening i as a board (0 empty, 1 black, 2 white). */
static void board_of(const opening_book *b, int i, int actions, uint8_t *board)
{
    int n;
    const int *m = openings_moves(b, i, &n);
    memset(board, 0, (size_t)actions);
    for (int k = 0; k < n; k++)
        board[m[k]] = (uint8_t)(1 + (k & 1));
}

/* Is opening j of b2 a symmetric image of opening i of b1 (same stones, any order)? */
static int symmetric(const game *g, const opening_book *b1, int i, const opening_book *b2, int j)
{
    uint8_t x[GAME_MAX_ACTIONS], y[GAME_MAX_ACTIONS], z[GAME_MAX_ACTIONS];
    board_of(b1, i, g->actions, x);
    board_of(b2, j, g->actions, y);
    for (int e = 0; e < g->nsym; e++) {
        memset(z, 0, sizeof z);
        for (int a = 0; a < g->actions; a++)
            z[sym_map_action(g, g->sym[e], a)] = x[a];
        if (!memcmp(z, y, (size_t)g->actions))
            return 1;
    }
    return 0;
}

/* Every opening of b: stones moves inside the centred side x side square, neither
 * player with a VCT moving first (the generator's own check, on a fresh solver), no two
 * symmetric. */
static void check_book(const game *g, const opening_book *b, const openings_gen_opts *o)
{
    char err[256];
    void *ws = g->ops->threat_new(g, 18, err, sizeof err);
    ck_assert_msg(ws != NULL, "%s", err);
    game_state *s = game_state_new(g, NULL);
    int lo = (g->rows - o->side) / 2, hi = lo + o->side;
    for (int i = 0; i < openings_count(b); i++) {
        int n;
        const int *m = openings_moves(b, i, &n);
        ck_assert_int_eq(n, o->stones);
        for (int k = 0; k < n; k++) {
            int r = m[k] / g->cols, c = m[k] % g->cols;
            ck_assert_msg(r >= lo && r < hi && c >= lo && c < hi,
                          "opening %d move %d at (%d,%d) outside the centred square", i, k, r, c);
        }
        game_init(g, s, NULL);
        ck_assert_int_eq(openings_play(b, i, g, s), 0);
        ck_assert(!game_terminal(g, s));
        int pv[64];
        for (int p = 0; p < 2; p++)
            ck_assert_msg(g->ops->threat_win(g, s, ws, p, o->budget, o->vct_depth, pv, 64) == 0,
                          "opening %d: player %d has a VCT", i, p);
        for (int j = 0; j < i; j++)
            ck_assert_msg(!symmetric(g, b, j, b, i), "openings %d and %d are symmetric", j, i);
    }
    free(s);
    g->ops->threat_free(ws);
}

/* The book of openings/gomoku15-4stones.txt's settings: 20 lines that load and keep to
 * its rules; the same seed makes the same text, another seed another. */
START_TEST(gomoku15_book)
{
    game *g = make_game("mnk", 15, 5, CFG_RULE_FREESTYLE);
    openings_gen_opts o = openings_gen_default();
    ck_assert_int_eq(o.stones, 4);
    ck_assert_int_eq(o.side, 5);
    o.count = 20;
    char err[256];
    int rc, rc2;
    char *text = generate(g, &o, NULL, 11, &rc, err, sizeof err);
    ck_assert_msg(rc == 20, "rc %d: %s", rc, err);
    opening_book *b = load_text(g, text);
    ck_assert_int_eq(openings_count(b), 20);
    check_book(g, b, &o);
    char *again = generate(g, &o, NULL, 11, &rc2, err, sizeof err);
    ck_assert_int_eq(rc2, 20);
    ck_assert_str_eq(again, text);
    char *other = generate(g, &o, NULL, 12, &rc2, err, sizeof err);
    ck_assert_int_eq(rc2, 20);
    ck_assert_str_ne(other, text);
    free(other);
    free(again);
    openings_free(b);
    free(text);
    game_free(g);
}
END_TEST

/* Six and seven stones on the centred 4x4 square of 9x9: VCTs are common there (a
 * third stone of a colour in a 4x4 block often makes one), so the filter has work to
 * do: with black to move (6) and with white to move (7), so that a check of only one
 * of the players, the one to move or the other, lets a VCT through in one of them. */
START_TEST(crowded_square_filtered)
{
    game *g = make_game("mnk", 9, 5, CFG_RULE_FREESTYLE);
    for (int stones = 6; stones <= 7; stones++) {
        openings_gen_opts o = openings_gen_default();
        o.count = 12;
        o.stones = stones;
        o.side = 4;
        o.budget = 20000;
        char err[256];
        int rc;
        char *text = generate(g, &o, NULL, 3, &rc, err, sizeof err);
        ck_assert_msg(rc == 12, "rc %d: %s", rc, err);
        opening_book *b = load_text(g, text);
        check_book(g, b, &o);
        openings_free(b);
        free(text);
    }
    game_free(g);
}
END_TEST

/* --avoid: nothing the new lines hold is a symmetric image of the avoided book's. */
START_TEST(avoids_a_book)
{
    game *g = make_game("mnk", 15, 5, CFG_RULE_FREESTYLE);
    openings_gen_opts o = openings_gen_default();
    o.count = 30;
    o.side = 4; /* about 210 openings up to symmetry: the avoided ones would come up */
    o.stones = 3;
    char err[256];
    int rc;
    char *t1 = generate(g, &o, NULL, 5, &rc, err, sizeof err);
    ck_assert_msg(rc == 30, "rc %d: %s", rc, err);
    opening_book *b1 = load_text(g, t1);
    char *t2 = generate(g, &o, b1, 6, &rc, err, sizeof err);
    ck_assert_msg(rc == 30, "rc %d: %s", rc, err);
    opening_book *b2 = load_text(g, t2);
    for (int i = 0; i < openings_count(b1); i++)
        for (int j = 0; j < openings_count(b2); j++)
            ck_assert_msg(!symmetric(g, b1, i, b2, j), "new opening %d is avoided one %d", j, i);
    /* without the avoided book, the same draws repeat some of them */
    char *t3 = generate(g, &o, NULL, 6, &rc, err, sizeof err);
    opening_book *b3 = load_text(g, t3);
    int repeats = 0;
    for (int i = 0; i < openings_count(b1); i++)
        for (int j = 0; j < openings_count(b3); j++)
            repeats += symmetric(g, b1, i, b3, j);
    ck_assert_int_gt(repeats, 0);
    openings_free(b1);
    openings_free(b2);
    openings_free(b3);
    free(t1);
    free(t2);
    free(t3);
    game_free(g);
}
END_TEST

/* A judge for the tests: black (to move after 4 stones) is "winning" (+0.9) when a
 * black stone is on the centre point, even (0) otherwise; fails on request. */
static int centre_judge(player *p, const game_state *s, rng *r, player_info *info, char *err,
                        size_t errlen)
{
    (void)r;
    int8_t cells[GAME_MAX_ACTIONS];
    p->g->ops->cells(p->g, s, cells);
    int centre = (p->g->rows / 2) * p->g->cols + p->g->cols / 2;
    player_info_clear(info);
    if (p->ctx) { /* the failing judge */
        snprintf(err, errlen, "no network");
        return -1;
    }
    info->has_value = strcmp(p->name, "mute") != 0;
    int mover = game_current_player(p->g, s);
    info->value[mover] = cells[centre] == 0 ? 0.9f : 0.0f; /* player 0's stone: black */
    info->value[1 - mover] = -info->value[mover];
    info->action = 0;
    return 0;
}

static player *judge_new(const game *g, const char *name, bool fails)
{
    player *p = player_alloc(name, "test", g);
    ck_assert(p != NULL);
    p->choose = centre_judge;
    p->ctx = fails ? (void *)p : NULL;
    return p;
}

/* With a judge, an opening is kept only when the judge values it within the bound for
 * the side to move: the centre judge's +0.9 openings (a black stone on h8) go, its even
 * ones stay (without the judge some of the same draws hold h8). A judge that fails or
 * gives no value is an error naming it. */
START_TEST(judge_keeps_the_balanced)
{
    game *g = make_game("mnk", 15, 5, CFG_RULE_FREESTYLE);
    openings_gen_opts o = openings_gen_default();
    o.count = 20;
    o.side = 3; /* the centre is one of 9 points: most draws put a stone on it */
    o.stones = 3;
    char err[256];
    int rc;
    int centre = 7 * 15 + 7;
    for (int judged = 0; judged < 2; judged++) {
        player *j = judged ? judge_new(g, "centre", false) : NULL;
        o.judge = j;
        o.within = 0.5f;
        char *t = generate(g, &o, NULL, 4, &rc, err, sizeof err);
        ck_assert_msg(rc == 20, "rc %d: %s", rc, err);
        opening_book *b = load_text(g, t);
        int black_centre = 0;
        for (int i = 0; i < openings_count(b); i++) {
            int n;
            const int *m = openings_moves(b, i, &n);
            for (int k = 0; k < n; k += 2)
                black_centre += m[k] == centre;
        }
        if (judged)
            ck_assert_int_eq(black_centre, 0);
        else
            ck_assert_int_gt(black_centre, 0);
        openings_free(b);
        free(t);
        player_free(j);
    }
    player *mute = judge_new(g, "mute", false), *broken = judge_new(g, "broken", true);
    o.judge = mute;
    free(generate(g, &o, NULL, 4, &rc, err, sizeof err));
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    ck_assert_msg(strstr(err, "the judge mute gives no value"), "%s", err);
    o.judge = broken;
    free(generate(g, &o, NULL, 4, &rc, err, sizeof err));
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "the judge broken: no network"), "%s", err);
    o.judge = mute;
    o.within = 0.0f;
    free(generate(g, &o, NULL, 4, &rc, err, sizeof err));
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    ck_assert_msg(strstr(err, "bound must be in (0, 1]"), "%s", err);
    broken->ctx = NULL; /* player_free would free ctx */
    player_free(mute);
    player_free(broken);
    game_free(g);
}
END_TEST

/* What it cannot do: a game without a threat search, stones that do not fit, bad
 * numbers, too few draws (the message says how many were found). */
START_TEST(refusals)
{
    char err[256];
    int rc;
    openings_gen_opts o = openings_gen_default();
    o.count = 2;
    game *g = make_game("mnk", 3, 3, CFG_RULE_FREESTYLE);
    free(generate(g, &o, NULL, 1, &rc, err, sizeof err));
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    ck_assert_msg(strstr(err, "k = 3"), "%s", err);
    game_free(g);
    g = make_game("sanling", 0, 0, 0);
    free(generate(g, &o, NULL, 1, &rc, err, sizeof err));
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    ck_assert_msg(strstr(err, "no threat search"), "%s", err);
    game_free(g);

    g = make_game("mnk", 15, 5, CFG_RULE_FREESTYLE);
    openings_gen_opts bad = o;
    bad.stones = 26;
    char *t = generate(g, &bad, NULL, 1, &rc, err, sizeof err);
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    ck_assert_msg(strstr(err, "26 stones do not fit the centred 5x5 square"), "%s", err);
    ck_assert_str_eq(t, "");
    free(t);
    for (int i = 0; i < 4; i++) {
        bad = o;
        if (i == 0)
            bad.count = 0;
        else if (i == 1)
            bad.stones = 0;
        else if (i == 2)
            bad.side = 0;
        else
            bad.vct_depth = 0;
        free(generate(g, &bad, NULL, 1, &rc, err, sizeof err));
        ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
        ck_assert_msg(strstr(err, "must be >= 1"), "%s", err);
    }
    bad = o;
    bad.vct_depth = 21;
    free(generate(g, &bad, NULL, 1, &rc, err, sizeof err));
    ck_assert_int_eq(rc, OPENINGS_BAD_INPUT);
    bad = o;
    bad.count = 10;
    bad.tries = 4;
    t = generate(g, &bad, NULL, 1, &rc, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "of 10 openings found in 4 draws"), "%s", err);
    int lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    ck_assert_int_le(lines, 4);
    free(t);
    /* a count far beyond the draws (the key table is sized by the draws): the count found */
    bad.count = 1000000000;
    bad.tries = 3;
    t = generate(g, &bad, NULL, 1, &rc, err, sizeof err);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err, "of 1000000000 openings found in 3 draws"), "%s", err);
    free(t);
    game_free(g);
}
END_TEST

/* The command: a book through -o with no temporary file left, and the exit codes (2 for
 * bad input, 1 for a run that found too few or cannot write), with nothing written. */
START_TEST(cli_openings)
{
    const char *src = getenv("GZ_SRC");
    ck_assert_msg(src != NULL, "GZ_SRC not set (run through meson test)");
    char dir[] = "/tmp/gz_openings_XXXXXX", args[2048], path[1100];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const struct { const char *cfg, *opts; int rc; const char *msg; } runs[] = {
        {"gomoku15", "--count 2", 0, "2 written to"},
        {"gomoku15", "--count 5 --tries 3", 1, "3 of 5 openings found in 3 draws"},
        {"gomoku15", "--count 0", 2, "--count \"0\""},
        {"tictactoe", "--count 2", 2, "k = 3"},
        {"gomoku15", "--count 2 --within 0.1", 2, "--balance PLAYER"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        snprintf(path, sizeof path, "%s/book%zu.txt", dir, k);
        snprintf(args, sizeof args, "openings -c %s/configs/%s.json %s -o %s", src, runs[k].cfg,
                 runs[k].opts, path);
        char *out, *err;
        int rc = run_bin(args, NULL, &out, &err);
        ck_assert_msg(rc == runs[k].rc, "%s: exit %d, not %d: %s", args, rc, runs[k].rc, err);
        ck_assert_msg(strstr(err, runs[k].msg), "%s: %s", args, err);
        ck_assert_int_eq(access(path, F_OK) == 0, runs[k].rc == 0);
        free(out);
        free(err);
    }
    opening_book *b = NULL;
    game *g = make_game("mnk", 15, 5, CFG_RULE_FREESTYLE);
    char err[256];
    snprintf(path, sizeof path, "%s/book0.txt", dir);
    ck_assert_msg((b = openings_load(g, path, err, sizeof err)) != NULL, "%s", err);
    ck_assert_int_eq(openings_count(b), 2);
    openings_free(b);
    game_free(g);
    /* an unwritable -o fails before any draw; the only file left is the book */
    char *out, *errout;
    snprintf(args, sizeof args, "openings -c %s/configs/gomoku15.json -o %s/no/such/dir/b.txt", src, dir);
    ck_assert_int_eq(run_bin(args, NULL, &out, &errout), 1);
    ck_assert_msg(strstr(errout, "cannot write") && strstr(errout, "No such file"), "%s", errout);
    free(out);
    free(errout);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            ck_assert_str_eq(e->d_name, "book0.txt");
            files++;
        }
    closedir(d);
    ck_assert_int_eq(files, 1);
    unlink(path);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("openings");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, gomoku15_book);
    tcase_add_test(t, crowded_square_filtered);
    tcase_add_test(t, avoids_a_book);
    tcase_add_test(t, judge_keeps_the_balanced);
    tcase_add_test(t, refusals);
    tcase_add_test(t, cli_openings);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
