/* gridzero bench rules — the cost of renju's forbidden-point check (renju.h): per
 * check, per legal-move mask and per encoding, on positions of random games played by
 * the rules, against the same calls under freestyle. */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "engine/games/renju.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero bench rules [-c CONFIG] [--set KEY=VALUE]... [--positions N]\n"
            "                            [--repeats R] [--json]\n\n"
            "Plays random games of the config's m,n,k board under renju (whatever the config's\n"
            "rule) and keeps N positions (default 2000) spread over every ply. Times, best of\n"
            "R repeats (default 5): renju_check at every empty point of every position (ns per\n"
            "check, and the share of points forbidden), the legal-move mask with black to move\n"
            "and the encoding (us per position), each also under freestyle on the same\n"
            "positions. Prints one line per measure; --json prints one JSON object.\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine may be shared */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds of the best of `reps` runs of legal() (or encode()) over every position. */
static double best_time(const game *g, const unsigned char *pos, int n, bool encode, int reps,
                        float *planes, long *sink)
{
    double best = 1e30;
    uint8_t mask[GAME_MAX_ACTIONS];
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            const game_state *s = (const game_state *)(pos + (size_t)i * g->state_size);
            if (encode) {
                game_encode(g, s, planes);
                *sink += planes[0] > 0;
            } else {
                *sink += game_legal(g, s, mask);
            }
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    return best;
}

int cmd_bench_rules(int argc, char **argv)
{
    const char *cfg_path = NULL;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, npos = 2000, reps = 5, json = 0, rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && v) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && v) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--positions") && v) {
            if (cli_parse_int(argv[++i], 1, 1000000, &npos) < 0) {
                cli_error("bench rules: --positions: expected 1..1000000, got \"%s\"", v);
                goto done;
            }
        } else if (!strcmp(a, "--repeats") && v) {
            if (cli_parse_int(argv[++i], 1, 1000, &reps) < 0) {
                cli_error("bench rules: --repeats: expected 1..1000, got \"%s\"", v);
                goto done;
            }
        } else {
            cli_error("bench rules: unexpected argument \"%s\" (see gridzero bench rules --help)", a);
            goto done;
        }
    }
    gz_config c;
    if ((rc = cli_load_config(&c, cfg_path, sets, nsets)) != 0)
        goto done;
    rc = EXIT_USAGE;
    if (strcmp(c.game.name, "mnk") || c.game.k != 5) {
        cli_error("bench rules: renju is a rule of m,n,k games with k = 5 (the config's game is %s%s)",
                  c.game.name, strcmp(c.game.name, "mnk") ? "" : " with another k");
        goto done;
    }
    char err[512];
    cfg_game_set_rule(&c.game, CFG_RULE_RENJU);
    game *g = game_new(&c.game, err, sizeof err);
    cfg_game_set_rule(&c.game, CFG_RULE_FREESTYLE);
    game *gf = g ? game_new(&c.game, err, sizeof err) : NULL;
    unsigned char *pos = g ? malloc(g->state_size * (size_t)npos) : NULL;
    float *planes = g ? malloc(sizeof(float) * (size_t)g->planes * (size_t)g->actions) : NULL;
    game_state *s = g ? game_state_new(g, NULL) : NULL;
    if (!g || !gf || !pos || !planes || !s) {
        cli_error("bench rules: %s", g && gf ? "out of memory" : err);
        rc = g && gf ? EXIT_FAIL : EXIT_USAGE;
        goto out;
    }
    /* Positions: every ply of random games by the renju rules, black to move only for
     * the legal-mask timing (white's mask needs no check), until npos are kept. */
    rng r;
    rng_seed(&r, c.seed);
    uint8_t mask[GAME_MAX_ACTIONS];
    int kept = 0, games = 0;
    while (kept < npos) {
        game_init(g, s, NULL);
        games++;
        while (!game_terminal(g, s) && kept < npos) {
            if (game_current_player(g, s) == 0)
                memcpy(pos + (size_t)kept++ * g->state_size, s, g->state_size);
            int n = game_legal(g, s, mask), pick = (int)rng_below(&r, (uint32_t)n);
            for (int a = 0; a < g->actions; a++)
                if (mask[a] && pick-- == 0) {
                    game_play(g, s, a);
                    break;
                }
        }
    }
    /* The checks themselves, at every empty point (the board of an m,n,k state is read
     * through the encoding's stone planes, outside the timing). */
    uint8_t *boards = malloc((size_t)npos * (size_t)g->actions);
    if (!boards) {
        cli_error("bench rules: out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    long checks = 0, verdicts[5] = {0}, sink = 0;
    for (int i = 0; i < npos; i++) {
        game_encode(g, (const game_state *)(pos + (size_t)i * g->state_size), planes);
        for (int a = 0; a < g->actions; a++) /* black to move: plane 0 is black's */
            boards[(size_t)i * g->actions + a] = planes[a] > 0.5f ? 1 : planes[g->actions + a] > 0.5f ? 2 : 0;
    }
    double best_check = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        long n = 0;
        double t0 = now_s();
        for (int i = 0; i < npos; i++) {
            const uint8_t *b = boards + (size_t)i * g->actions;
            for (int a = 0; a < g->actions; a++)
                if (!b[a]) {
                    renju_verdict v = renju_check(b, g->rows, g->cols, a, 1);
                    if (rep == 0)
                        verdicts[v]++;
                    n++;
                }
        }
        double dt = now_s() - t0;
        checks = n;
        if (dt < best_check)
            best_check = dt;
    }
    double t_legal = best_time(g, pos, npos, false, reps, planes, &sink);
    double t_legal_free = best_time(gf, pos, npos, false, reps, planes, &sink);
    double t_enc = best_time(g, pos, npos, true, reps, planes, &sink);
    double t_enc_free = best_time(gf, pos, npos, true, reps, planes, &sink);
    long forbidden = verdicts[RENJU_OVERLINE] + verdicts[RENJU_DOUBLE_FOUR] + verdicts[RENJU_DOUBLE_THREE];
    double ns = 1e9 * best_check / (double)(checks ? checks : 1);
    if (json) {
        printf("{\"rows\": %d, \"cols\": %d, \"positions\": %d, \"games\": %d, \"checks\": %ld, "
               "\"ns_per_check\": %.1f, \"forbidden\": %ld, \"overline\": %ld, \"double_four\": %ld, "
               "\"double_three\": %ld, \"five\": %ld, \"legal_us\": %.3f, \"legal_freestyle_us\": %.3f, "
               "\"encode_us\": %.3f, \"encode_freestyle_us\": %.3f}\n",
               g->rows, g->cols, npos, games, checks, ns, forbidden, verdicts[RENJU_OVERLINE],
               verdicts[RENJU_DOUBLE_FOUR], verdicts[RENJU_DOUBLE_THREE], verdicts[RENJU_FIVE],
               1e6 * t_legal / npos, 1e6 * t_legal_free / npos, 1e6 * t_enc / npos,
               1e6 * t_enc_free / npos);
    } else {
        printf("rules: %dx%d renju, %d positions with black to move from %d random games, best of "
               "%d\n", g->rows, g->cols, npos, games, reps);
        printf("  renju_check  %.1f ns per point (%ld empty points; forbidden %.2f%%: overline %ld, "
               "double four %ld, double three %ld; fives %ld)\n",
               ns, checks, 100.0 * forbidden / (double)(checks ? checks : 1), verdicts[RENJU_OVERLINE],
               verdicts[RENJU_DOUBLE_FOUR], verdicts[RENJU_DOUBLE_THREE], verdicts[RENJU_FIVE]);
        printf("  legal()      %.2f us per position (freestyle %.2f us)\n", 1e6 * t_legal / npos,
               1e6 * t_legal_free / npos);
        printf("  encode()     %.2f us per position (freestyle %.2f us, one plane fewer)\n",
               1e6 * t_enc / npos, 1e6 * t_enc_free / npos);
    }
    if (sink == 42)
        fputc('\n', stderr); /* keeps the timed calls from being optimised away */
    free(boards);
    rc = EXIT_OK;
out:
    free(s);
    free(planes);
    free(pos);
    game_free(gf);
    game_free(g);
done:
    free(sets);
    return rc;
}
