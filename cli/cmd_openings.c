/* gridzero openings: draws a book of balanced openings (engine/openings.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "engine/openings.h"
#include "engine/rng.h"

static void openings_usage(FILE *f)
{
    openings_gen_opts d = openings_gen_default();
    fprintf(f,
            "usage: gridzero openings [-c CONFIG] [--set KEY=VALUE]... [--count N] [--stones N]\n"
            "                         [--side N] [--vct-depth N] [--budget NODES] [--tries N]\n"
            "                         [--seed S] [--avoid BOOK] [--balance PLAYER]\n"
            "                         [--within V] [-o FILE]\n\n"
            "Draws an opening book for gridzero arena --openings and selfplay.openings: each\n"
            "move uniform on the free points of the centred square, the players in turn, kept\n"
            "when neither player has a VCT moving first (the threat solver) and it is no\n"
            "symmetric image of an opening kept before (or of one in --avoid). Games with a\n"
            "threat search only (m,n,k with k >= 4, every rule). Same seed, same book.\n\n"
            "  --count N        openings to write (default %d)\n"
            "  --stones N       moves in each opening (default %d)\n"
            "  --side N         the centred square's side (default %d)\n"
            "  --vct-depth N    the VCT's attacker moves before VCF takes over, 1..20 (default %d)\n"
            "  --budget NODES   threat-search nodes per check; a search that runs out counts\n"
            "                   as no VCT (default %ld)\n"
            "  --tries N        draws before giving up (default %ld)\n"
            "  --seed S         the draws' seed (default 1)\n"
            "  --avoid BOOK     skip the openings of BOOK (to extend it: append the output)\n"
            "  --balance PLAYER keep only openings that PLAYER (a search: mcts:N,\n"
            "                   model:FILE[:sims]) values within --within of even for the\n"
            "                   side to move; by simulations, the same seed gives the same book\n"
            "  --within V       the bound, in (0, 1] (default %.1f)\n"
            "  -o FILE          write the book to FILE, whole or not at all (default stdout)\n"
            "  --set KEY=VALUE  override a config key\n",
            d.count, d.stones, d.side, d.vct_depth, d.budget, d.tries, (double)d.within);
}

/* The judge's progress on stderr: a line rewritten on a terminal, else every 10 s. */
static void openings_progress(void *ctx, int kept, long drawn)
{
    cli_progress *p = ctx;
    if (cli_progress_due(p, 0))
        fprintf(stderr, "openings: %d kept, %ld drawn%s", kept, drawn, p->tty ? "" : "\n");
}

int cmd_openings(int argc, char **argv)
{
    const char *cfg_path = NULL, *avoid_path = NULL, *out_path = NULL, *judge_spec = NULL;
    openings_gen_opts o = openings_gen_default();
    uint64_t seed = 1;
    bool within_given = false;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    if (!sets)
        return EXIT_FAIL;
    int nsets = 0, rc = EXIT_USAGE;
    game *g = NULL;
    opening_book *avoid = NULL;
    FILE *out = NULL;
    char tmp[4096] = "";
    char *body = NULL; /* the book, made in memory */
    size_t blen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        int v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            openings_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && more) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--avoid") && more) {
            avoid_path = argv[++i];
        } else if (!strcmp(a, "--balance") && more) {
            judge_spec = argv[++i];
        } else if (!strcmp(a, "--within") && more) {
            char *end;
            double w = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(w > 0.0 && w <= 1.0)) {
                cli_error("openings: --within \"%s\": expected a number in (0, 1]", argv[i]);
                goto out;
            }
            o.within = (float)w;
            within_given = true;
        } else if (!strcmp(a, "-o") && more) {
            out_path = argv[++i];
        } else if (!strcmp(a, "--seed") && more) {
            if (cli_parse_u64(argv[++i], &seed) < 0) {
                cli_error("openings: --seed \"%s\": expected a whole number >= 0", argv[i]);
                goto out;
            }
        } else if ((!strcmp(a, "--count") || !strcmp(a, "--stones") || !strcmp(a, "--side") ||
                    !strcmp(a, "--vct-depth") || !strcmp(a, "--budget") || !strcmp(a, "--tries")) &&
                   more) {
            int lo = 1, hi = !strcmp(a, "--vct-depth") ? 20 : 1000000000;
            if (cli_parse_int(argv[++i], lo, hi, &v) < 0) {
                cli_error("openings: %s \"%s\": expected a whole number in %d..%d", a, argv[i], lo, hi);
                goto out;
            }
            if (!strcmp(a, "--count"))
                o.count = v;
            else if (!strcmp(a, "--stones"))
                o.stones = v;
            else if (!strcmp(a, "--side"))
                o.side = v;
            else if (!strcmp(a, "--vct-depth"))
                o.vct_depth = v;
            else if (!strcmp(a, "--budget"))
                o.budget = v;
            else
                o.tries = v;
        } else {
            cli_error("openings: unknown or incomplete option \"%s\" (see gridzero openings --help)", a);
            goto out;
        }
    }
    if (within_given && !judge_spec) {
        cli_error("openings: --within bounds the judge's value: name one with --balance PLAYER");
        goto out;
    }
    gz_config c;
    if (!(g = cli_load_game(&c, cfg_path, sets, nsets)))
        goto out;
    char err[512];
    if (avoid_path && !(avoid = openings_load(g, avoid_path, err, sizeof err))) {
        cli_error("openings: --avoid %s", err);
        goto out;
    }
    if (judge_spec && !(o.judge = player_new(judge_spec, g, &c, cli_player_ext(), err, sizeof err))) {
        cli_error("openings: --balance: %s", err);
        goto out;
    }
    /* -o's temporary file is tried before the draws, so an unwritable place fails at
     * once, then removed until the book is made */
    if (out_path) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out_path, (long)getpid()) >= (int)sizeof tmp) {
            cli_error("openings: -o \"%s\": the path is too long", out_path);
            tmp[0] = '\0';
            goto out;
        }
        FILE *probe = fopen(tmp, "w");
        if (!probe) {
            cli_error("openings: cannot write %s: %s", tmp, strerror(errno));
            tmp[0] = '\0';
            rc = EXIT_FAIL;
            goto out;
        }
        fclose(probe);
        unlink(tmp);
    }
    /* the book is made in memory, then written whole: a refused option or too few
     * openings leave no half-written book behind (nor a header alone on stdout) */
    FILE *mem = open_memstream(&body, &blen);
    if (!mem) {
        cli_error("openings: out of memory");
        rc = EXIT_FAIL;
        goto out;
    }
    rng r;
    rng_seed(&r, seed);
    cli_progress prog;
    cli_progress_init(&prog, 10.0);
    if (o.judge) {
        o.progress = openings_progress;
        o.progress_ctx = &prog;
    }
    int made = openings_generate(g, &o, avoid, &r, mem, err, sizeof err);
    if (o.judge && prog.tty)
        fputc('\n', stderr);
    fclose(mem);
    if (made < 0) {
        cli_error("%s", err);
        /* bad options: the input's; too few found, a judge that failed: the run's */
        rc = made == OPENINGS_BAD_INPUT ? EXIT_USAGE : EXIT_FAIL;
        goto out;
    }
    /* the temporary file only now: a kill during the draws (hours with a judge) leaves
     * none behind */
    if (out_path && !(out = fopen(tmp, "w"))) {
        cli_error("openings: cannot write %s: %s", tmp, strerror(errno));
        tmp[0] = '\0';
        rc = EXIT_FAIL;
        goto out;
    } else if (!out_path) {
        out = stdout;
    }
    fprintf(out, "# %d openings for %s %dx%d: %d stones, each uniform on the free points of the\n"
            "# centred %dx%d square, kept when neither side has a VCT moving first (threat solver,\n"
            "# depth %d, %ld nodes)", o.count, g->name, g->rows, g->cols, o.stones, o.side, o.side,
            o.vct_depth, o.budget);
    if (judge_spec)
        fprintf(out, " and %s values it within %g of even for the side to move", judge_spec,
                (double)o.within);
    fprintf(out, ".\n# Made by: gridzero openings");
    if (cfg_path)
        fprintf(out, " -c %s", cfg_path);
    for (int i = 0; i < nsets; i++)
        fprintf(out, " --set %s", sets[i]);
    fprintf(out, " --count %d --stones %d --side %d --vct-depth %d --budget %ld --tries %ld "
            "--seed %llu", o.count, o.stones, o.side, o.vct_depth, o.budget, o.tries,
            (unsigned long long)seed);
    if (avoid_path)
        fprintf(out, " --avoid %s", avoid_path);
    if (judge_spec)
        fprintf(out, " --balance %s --within %g", judge_spec, (double)o.within);
    fputc('\n', out);
    fwrite(body, 1, blen, out);
    if (fflush(out) != 0 || ferror(out)) {
        cli_error("openings: writing %s failed: %s", out_path ? tmp : "stdout", strerror(errno));
        rc = EXIT_FAIL;
        goto out;
    }
    if (out_path) {
        int bad = fsync(fileno(out)) != 0;
        bad |= fclose(out) != 0;
        out = NULL;
        if (bad || rename(tmp, out_path) != 0) {
            cli_error("openings: writing %s failed: %s", out_path, strerror(errno));
            rc = EXIT_FAIL;
            goto out;
        }
        tmp[0] = '\0';
        fprintf(stderr, "openings: %d written to %s\n", made, out_path);
    }
    rc = EXIT_OK;
out:
    free(body);
    if (out && out != stdout)
        fclose(out);
    if (tmp[0])
        unlink(tmp);
    openings_free(avoid);
    player_free(o.judge);
    if (g)
        game_free(g);
    free(sets);
    return rc;
}
