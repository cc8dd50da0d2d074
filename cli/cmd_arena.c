/* gridzero arena -c CONFIG A B [C] [--games N] [--results FILE] [--json] [--seed S]
 *                [--openings FILE] [--sprt ELO0,ELO1 [--alpha A] [--beta B]] */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "engine/arena.h"
#include "engine/elo.h"

static void arena_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero arena [-c CONFIG] [--set KEY=VALUE]... PLAYER PLAYER [PLAYER]\n"
            "                      [--pset N:KEY=VALUE]... [--games N] [--results FILE] [--json]\n"
            "                      [--seed S] [--openings FILE]\n"
            "                      [--sprt ELO0,ELO1 [--alpha A] [--beta B]]\n\n"
            "Plays a match between the players (as many as the game has seats), rotating seats\n"
            "(all six orders for three players) and starting every game with arena.opening_moves\n"
            "random moves (the same opening for each seat order). Prints the win/draw/loss table,\n"
            "per player and per seat, and a one-line summary.\n\n"
            "One-player games (2048): name 1 to %d players; each plays N games (game i from the\n"
            "same start and spawn seed for all). Prints each player's mean score with its 95%%\n"
            "interval, the median, the time per move and the share of games that reached each\n"
            "tile; --json gives {\"games\":N,\"players\":[{\"name\",\"games\",\"mean\",\"lo\",\"hi\",\n"
            "\"sd\",\"median\",\"min\",\"max\",\"seconds_per_move\",\"max_tile\",\"reached\":{\"2048\":0.5,...}}]}.\n\n"
            "  -c, --config FILE  the config (default: the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE    override a config key (e.g. --set arena.opening_moves=4)\n"
            "  --pset N:KEY=VALUE override a key for player N only (1 = the first named), on\n"
            "                     top of --set: e.g. the same model with and without the VCF\n"
            "                     checks (--pset 1:mcts.vcf_leaf=200); not game.* keys. The\n"
            "                     player's name then ends with its overrides in braces\n"
            "  --games N          games to play (default arena.games)\n"
            "  --results FILE     append every game to FILE, one JSON object per line\n"
            "                     (players in seat order, result per seat, moves, seed)\n"
            "  --json             print the summary as one JSON object on stdout:\n"
            "                     {\"games\":N,\"players\":[{\"name\",\"wins\",\"draws\",\"losses\",\"score\"}]}\n"
            "                     score = wins + draws/2 (two players), mean outcome (three)\n"
            "  --seed S           seed of openings and random players (default: the config's)\n"
            "  --openings FILE    an opening book (one move list a line, e.g. \"h8 i9 h10\"): each\n"
            "                     seat rotation starts from the book's next line, so every\n"
            "                     opening is played from both colours; arena.opening_moves random\n"
            "                     moves follow it (--set arena.opening_moves=0 for none)\n"
            "  --sprt ELO0,ELO1   two players: stop once a sequential probability ratio test on\n"
            "                     the first player's results decides between H0 \"its advantage is\n"
            "                     ELO0\" and H1 \"it is ELO1\" (checked after each colour-swapped\n"
            "                     pair; --games is the cap)\n"
            "  --alpha A, --beta B  the SPRT's error rates (default 0.05 each)\n\n"
            "A player wins a game when its outcome is strictly the best, loses when strictly the\n"
            "worst, draws otherwise (three players: a middle or shared place).\n\n"
            "players:\n", ARENA_MAX_SOLO);
    player_print_kinds(f, cli_player_ext());
}

typedef struct progress_state {
    bool tty;
    double start, last;
    const char *const *names;
} progress_state;

static void on_progress(void *ctx, int done, int total, const arena_tally *t, int np)
{
    progress_state *ps = ctx;
    double now = cli_now();
    if (ps->tty) {
        int width = 30, fill = total ? done * width / total : width;
        fprintf(stderr, "\r[%.*s%.*s] %d/%d games  %s %d-%d-%d", fill,
                "##############################", width - fill, "                              ",
                done, total, ps->names[0], t[0].wins, t[0].draws, t[0].losses);
        if (done == total)
            fputc('\n', stderr);
        fflush(stderr);
        return;
    }
    /* Plain lines: every 10% of the match, and at least every 30 s. */
    int step = total >= 10 ? total / 10 : 1;
    if (done % step == 0 || done == total || now - ps->last >= 30) {
        fprintf(stderr, "arena: %d/%d games, %.1f s:", done, total, now - ps->start);
        for (int i = 0; i < np; i++)
            fprintf(stderr, " %s %d-%d-%d", ps->names[i], t[i].wins, t[i].draws, t[i].losses);
        fputc('\n', stderr);
        ps->last = now;
    }
}

/* Two players: points (wins + draws/2, always a multiple of 0.5); three: mean outcome. */
static const char *score_text(const arena_tally *t, int np, char *buf, size_t len)
{
    snprintf(buf, len, np == 2 ? "%.1f" : "%+.3f", arena_score(t, np));
    return buf;
}

static void describe_game(const gz_config *c, const game *g, char *buf, size_t len)
{
    if (!strcmp(g->name, "mnk"))
        snprintf(buf, len, "mnk %dx%d k=%d%s%s", c->game.rows, c->game.cols, c->game.k,
                 strcmp(g->rule, "freestyle") ? " " : "", strcmp(g->rule, "freestyle") ? g->rule : "");
    else if (g->players == 1)
        snprintf(buf, len, "%s %dx%d", g->name, g->rows, g->cols);
    else
        snprintf(buf, len, "%s %dx%d, %d players", g->name, g->rows, g->cols, g->players);
}

/* ---- one-player games: scores, not wins ---- */

typedef struct solo_state {
    int nplayers, games;
    double *scores; /* (nplayers, games) */
    int *tiles;     /* (nplayers, games) */
    double think[ARENA_MAX_SOLO]; /* seconds choosing moves, per player */
    long choices[ARENA_MAX_SOLO]; /* moves chosen, per player */
    progress_state *ps;
} solo_state;

static void solo_on_game(void *ctx, const arena_record *rec)
{
    solo_state *so = ctx;
    int k = rec->seat_player[0];
    so->scores[(size_t)k * so->games + rec->index] = rec->score[0];
    so->tiles[(size_t)k * so->games + rec->index] = rec->best_tile;
    so->think[k] += rec->think[0];
    so->choices[k] += rec->choices[0];
}

static void solo_progress(void *ctx, int done, int total, const arena_tally *t, int np)
{
    solo_state *so = ctx;
    progress_state *ps = so->ps;
    double now = cli_now();
    int step = total >= 10 ? total / 10 : 1;
    if (!ps->tty && !(done % step == 0 || done == total || now - ps->last >= 30))
        return;
    fprintf(stderr, "%sarena: %d/%d games, %.1f s, mean score:", ps->tty ? "\r" : "", done, total,
            now - ps->start);
    for (int i = 0; i < np; i++)
        fprintf(stderr, " %s %.0f", ps->names[i], t[i].games ? t[i].score_sum / t[i].games : 0.0);
    fputs(ps->tty && done < total ? "   " : "\n", stderr);
    fflush(stderr);
    ps->last = now;
}

static void print_tile(FILE *f, int k)
{
    if (k < 53)
        fprintf(f, "%llu", (unsigned long long)1 << k);
}

static int arena_solo(const game *g, const char *desc, player *const *players, int np,
                      arena_opts *o, bool json, const char *results)
{
    solo_state so = {.nplayers = np, .games = o->games};
    so.scores = calloc((size_t)np * (size_t)o->games, sizeof *so.scores);
    so.tiles = calloc((size_t)np * (size_t)o->games, sizeof *so.tiles);
    if (!so.scores || !so.tiles) {
        free(so.scores);
        free(so.tiles);
        cli_error("arena: out of memory");
        return EXIT_FAIL;
    }
    const char *names[ARENA_MAX_SOLO];
    for (int i = 0; i < np; i++)
        names[i] = players[i]->name;
    progress_state ps = {.tty = isatty(2), .start = cli_now(), .names = names};
    ps.last = ps.start;
    so.ps = &ps;
    o->progress = solo_progress;
    o->progress_ctx = &so;
    o->on_game = solo_on_game;
    o->on_game_ctx = &so;
    if (!json)
        printf("arena: %s, %d games per player, %d random opening moves, seed %llu\n", desc,
               o->games, o->opening_moves, (unsigned long long)o->seed);
    fflush(stdout);
    arena_tally t[ARENA_MAX_SOLO];
    char err[512];
    int rc = EXIT_OK;
    if (arena_run(g, players, np, o, t, err, sizeof err) < 0) {
        cli_error("arena: %s", err);
        rc = EXIT_FAIL;
        goto out;
    }
    double secs = cli_now() - ps.start;
    arena_solo_summary sum[ARENA_MAX_SOLO];
    int top = -1;
    for (int i = 0; i < np; i++) {
        arena_solo_summarise(so.scores + (size_t)i * o->games,
                             g->ops->best_tile ? so.tiles + (size_t)i * o->games : NULL, o->games,
                             so.think[i], so.choices[i], &sum[i]);
        top = sum[i].best_tile > top ? sum[i].best_tile : top;
    }
    int first = top - 5 < 1 ? 1 : top - 5; /* the table's tile columns */
    if (json) {
        printf("{\"games\": %d, \"players\": [", o->games);
        for (int i = 0; i < np; i++) {
            const arena_solo_summary *m = &sum[i];
            fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
            cli_json_string(stdout, names[i]);
            printf(", \"games\": %d, \"mean\": %.6g, \"lo\": %.6g, \"hi\": %.6g, \"sd\": %.6g, "
                   "\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"seconds_per_move\": %.6g",
                   m->games, m->mean, m->lo, m->hi, m->sd, m->median, m->min, m->max,
                   m->seconds_per_move);
            if (m->best_tile >= 0) {
                printf(", \"max_tile\": ");
                print_tile(stdout, m->best_tile);
                printf(", \"reached\": {");
                for (int k = 1; k <= m->best_tile; k++) {
                    printf("%s\"", k > 1 ? ", " : "");
                    print_tile(stdout, k);
                    printf("\": %.6g", m->reached[k]);
                }
                printf("}");
            }
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("\n%-24s %6s %9s %21s %9s %10s", "player", "games", "mean", "95% interval", "median",
               "time/move");
        for (int k = first; top >= 0 && k <= top; k++) {
            char tb[24];
            snprintf(tb, sizeof tb, "%llu", (unsigned long long)1 << k);
            printf(" %6s", tb);
        }
        printf("\n");
        for (int i = 0; i < np; i++) {
            const arena_solo_summary *m = &sum[i];
            char iv[48];
            snprintf(iv, sizeof iv, "[%.0f, %.0f]", m->lo, m->hi);
            printf("%-24s %6d %9.1f %21s %9.1f %8.2f ms", names[i], m->games, m->mean, iv, m->median,
                   1e3 * m->seconds_per_move);
            for (int k = first; top >= 0 && k <= top; k++)
                printf(" %5.0f%%", 100.0 * m->reached[k]);
            printf("\n");
        }
        if (top >= 0)
            printf("(tile columns: share of games whose largest tile reached it)\n");
        printf("\n");
    }
    FILE *sf = json ? stderr : stdout;
    fprintf(sf, "arena: %d games of %s in %.1f s:", o->games * np, desc, secs);
    for (int i = 0; i < np; i++)
        fprintf(sf, "%s %s mean %.0f [%.0f, %.0f]", i ? "," : "", names[i], sum[i].mean, sum[i].lo,
                sum[i].hi);
    if (results)
        fprintf(sf, "; games appended to %s", results);
    fprintf(sf, "\n");
out:
    free(so.scores);
    free(so.tiles);
    return rc;
}

/* Splits "N:KEY=VALUE" (--pset) into the player number (1-based) and the assignment.
 * Returns the assignment, or NULL when the text is not of that form. */
static const char *pset_split(const char *text, int *n)
{
    const char *colon = strchr(text, ':');
    if (!colon || colon == text)
        return NULL;
    char num[16];
    size_t len = (size_t)(colon - text);
    if (len >= sizeof num)
        return NULL;
    memcpy(num, text, len);
    num[len] = 0;
    if (cli_parse_int(num, 1, ARENA_MAX_SOLO, n) < 0 || !strchr(colon + 1, '='))
        return NULL;
    return colon + 1;
}

/* Each player's config: c with its --pset overrides (checked as --set's are; game.*
 * keys refused, the players must play one game). *out gets nspecs configs (caller
 * frees). Returns 0, or -1 after the message. */
static int player_configs(const gz_config *c, char **psets, int npsets, int nspecs,
                          gz_config **out)
{
    gz_config *pc = malloc(sizeof *pc * (size_t)nspecs);
    char **mine = malloc(sizeof(char *) * (size_t)(npsets + 1));
    if (!pc || !mine) {
        free(pc);
        free(mine);
        cli_error("arena: out of memory");
        return -1;
    }
    *out = pc;
    for (int k = 0; k < npsets; k++) {
        int n;
        const char *as = pset_split(psets[k], &n);
        if (!as) {
            cli_error("arena: --pset \"%s\": expected N:KEY=VALUE with N a player number "
                      "(1 to %d)", psets[k], nspecs);
            free(mine);
            return -1;
        }
        if (n > nspecs) {
            cli_error("arena: --pset \"%s\": there are %d players", psets[k], nspecs);
            free(mine);
            return -1;
        }
        if (!strncmp(as, "game.", 5)) {
            cli_error("arena: --pset \"%s\": game keys apply to every player (use --set)",
                      psets[k]);
            free(mine);
            return -1;
        }
    }
    for (int i = 0; i < nspecs; i++) {
        pc[i] = *c;
        int m = 0, n;
        for (int k = 0; k < npsets; k++) {
            const char *as = pset_split(psets[k], &n);
            if (as && n == i + 1)
                mine[m++] = (char *)as;
        }
        char err[512];
        if (cfg_set_all(&pc[i], mine, m, err, sizeof err) < 0) {
            cli_error("arena: --pset for player %d: %s", i + 1, err);
            free(mine);
            return -1;
        }
    }
    free(mine);
    return 0;
}

/* Player i's name gets its --pset overrides: "model:a.h5:400 {mcts.vcf_leaf=200}" (cut
 * to the name's length), so that two players of one spec stay apart in the tables. */
static void name_overrides(player *p, char **psets, int npsets, int i)
{
    size_t len = strlen(p->name);
    bool any = false;
    for (int k = 0; k < npsets; k++) {
        int n;
        const char *as = pset_split(psets[k], &n);
        if (!as || n != i + 1)
            continue;
        if (len + 1 >= sizeof p->name)
            break;
        len += (size_t)snprintf(p->name + len, sizeof p->name - len, "%s%s", any ? "," : " {", as);
        any = true;
    }
    if (any && len + 1 < sizeof p->name) {
        p->name[len] = '}';
        p->name[len + 1] = 0;
    }
}

int cmd_arena(int argc, char **argv)
{
    const char *cfg_path = NULL, *results = NULL;
    const char *specs[ARENA_MAX_SOLO + 1];
    int nspecs = 0, games = -1;
    bool json = false, have_seed = false;
    uint64_t seed = 0;
    const char *sprt_text = NULL, *book_path = NULL;
    opening_book *book = NULL;
    elo_sprt sprt = {0, 0, 0.05, 0.05};
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    char **psets = malloc(sizeof(char *) * (size_t)argc); /* "N:KEY=VALUE", checked below */
    gz_config *pcfg = NULL;                                /* each player's config */
    if (!sets || !psets) {
        free(sets);
        free(psets);
        return EXIT_FAIL;
    }
    int nsets = 0, npsets = 0, rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            arena_usage(stdout);
            free(sets);
            free(psets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && more) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--pset") && more) {
            psets[npsets++] = argv[++i];
        } else if (!strcmp(a, "--games") && more) {
            if (cli_parse_int(argv[++i], 1, 100000000, &games) < 0) {
                cli_error("arena: --games \"%s\": expected a whole number >= 1", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--results") && more) {
            results = argv[++i];
        } else if (!strcmp(a, "--seed") && more) {
            if (cli_parse_u64(argv[++i], &seed) < 0) {
                cli_error("arena: --seed \"%s\": expected a whole number >= 0", argv[i]);
                goto out;
            }
            have_seed = true;
        } else if (!strcmp(a, "--openings") && more) {
            book_path = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--sprt") && more) {
            sprt_text = argv[++i];
        } else if ((!strcmp(a, "--alpha") || !strcmp(a, "--beta")) && more) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(v > 0 && v < 0.5)) {
                cli_error("arena: %s \"%s\": expected a probability in (0, 0.5)", a, argv[i]);
                goto out;
            }
            *(a[2] == 'a' ? &sprt.alpha : &sprt.beta) = v;
        } else if (a[0] == '-') {
            cli_error("arena: unknown or incomplete option \"%s\" (see gridzero arena --help)", a);
            goto out;
        } else if (nspecs < ARENA_MAX_SOLO) {
            specs[nspecs++] = a;
        } else {
            cli_error("arena: too many players (at most %d)", ARENA_MAX_SOLO);
            goto out;
        }
    }
    if (nspecs < 1) {
        arena_usage(stderr);
        cli_error("arena: name the players (two or three; one to %d in a one-player game)",
                  ARENA_MAX_SOLO);
        goto out;
    }

    gz_config c;
    game *g = cli_load_game(&c, cfg_path, sets, nsets);
    if (!g)
        goto out;
    char err[512];
    if (g->players > 1 && nspecs < 2) {
        arena_usage(stderr);
        cli_error("arena: name two or three players");
        game_free(g);
        goto out;
    }
    if (g->players > 1 && nspecs != g->players) {
        cli_error("arena: %s has %d players; %d were named", g->name, g->players, nspecs);
        game_free(g);
        goto out;
    }
    player *players[ARENA_MAX_SOLO] = {0};
    if (book_path && !(book = openings_load(g, book_path, err, sizeof err))) {
        cli_error("arena: --openings: %s", err);
        goto free_players;
    }
    if (player_configs(&c, psets, npsets, nspecs, &pcfg) < 0)
        goto free_players;
    for (int i = 0; i < nspecs; i++) {
        players[i] = player_new(specs[i], g, &pcfg[i], cli_player_ext(), err, sizeof err);
        if (!players[i]) {
            cli_error("arena: %s", err);
            goto free_players;
        }
        name_overrides(players[i], psets, npsets, i);
    }
    if (sprt_text) {
        char why[256];
        if (nspecs != 2 || g->players != 2) {
            cli_error("arena: --sprt needs exactly two players");
            goto free_players;
        }
        if (elo_sprt_parse(&sprt, sprt_text, why, sizeof why) < 0) {
            cli_error("arena: %s", why);
            goto free_players;
        }
    }
    arena_opts o = {
        .sprt = sprt_text ? &sprt : NULL,
        .games = games > 0 ? games : c.arena.games,
        .opening_moves = c.arena.opening_moves,
        .book = book,
        .seed = have_seed ? seed : c.seed,
        .results_path = results,
    };
    if (o.games < 1) {
        cli_error("arena: arena.games is 0; give --games N");
        goto free_players;
    }
    if (results) {
        /* An unwritable results file is bad input: say so before playing anything. */
        FILE *probe = fopen(results, "a");
        if (!probe) {
            cli_error("arena: results file %s: %s", results, strerror(errno));
            goto free_players;
        }
        fclose(probe);
    }
    if (g->players == 1) {
        char d1[96];
        describe_game(&c, g, d1, sizeof d1);
        rc = arena_solo(g, d1, players, nspecs, &o, json, results);
        goto free_players;
    }
    const char *names[GAME_MAX_PLAYERS];
    for (int i = 0; i < nspecs; i++)
        names[i] = players[i]->name;
    progress_state ps = {.tty = isatty(2), .start = cli_now(), .names = names};
    ps.last = ps.start;
    o.progress = on_progress;
    o.progress_ctx = &ps;
    arena_tally t[GAME_MAX_PLAYERS];
    char desc[96];
    describe_game(&c, g, desc, sizeof desc);
    if (!json && book)
        printf("arena: %s, %d games, openings from %s (%d) + %d random moves, seed %llu\n", desc,
               o.games, book_path, openings_count(book), o.opening_moves, (unsigned long long)o.seed);
    else if (!json)
        printf("arena: %s, %d games, %d random opening moves, seed %llu\n", desc, o.games,
               o.opening_moves, (unsigned long long)o.seed);
    fflush(stdout);
    if (arena_run(g, players, nspecs, &o, t, err, sizeof err) < 0) {
        cli_error("arena: %s", err);
        rc = EXIT_FAIL;
        goto free_players;
    }
    double secs = cli_now() - ps.start;
    char sc[GAME_MAX_PLAYERS][32];
    int played = t[0].games;
    double llr = 0;
    int verdict = sprt_text ? elo_sprt_decide(&sprt, t[0].wins, t[0].draws, t[0].losses, &llr) : 0;
    const char *vtext = verdict > 0 ? "H1" : verdict < 0 ? "H0" : "none";
    if (json) {
        printf("{\"games\": %d, ", played);
        if (sprt_text)
            printf("\"sprt\": {\"elo0\": %g, \"elo1\": %g, \"alpha\": %g, \"beta\": %g, \"llr\": %.4f, "
                   "\"lower\": %.4f, \"upper\": %.4f, \"accepted\": \"%s\"}, ",
                   sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta, llr, log(sprt.beta / (1 - sprt.alpha)),
                   log((1 - sprt.beta) / sprt.alpha), vtext);
        printf("\"players\": [");
        for (int i = 0; i < nspecs; i++) {
            fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
            cli_json_string(stdout, names[i]);
            printf(", \"wins\": %d, \"draws\": %d, \"losses\": %d, \"score\": %.6g", t[i].wins,
                   t[i].draws, t[i].losses, arena_score(&t[i], nspecs));
            if (nspecs > 2) { /* head to head against each player (0 against itself) */
                printf(", \"first_share\": %.6g", t[i].games ? t[i].first_share / t[i].games : 0.0);
                for (int k = 0; k < 2; k++) {
                    printf(k ? ", \"level\": [" : ", \"above\": [");
                    for (int j = 0; j < nspecs; j++)
                        printf("%s%d", j ? ", " : "", k ? t[i].level[j] : t[i].above[j]);
                    printf("]");
                }
            }
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("\n%-24s %6s %6s %6s %6s %8s %9s%s\n", "player", "games", "wins", "draws", "losses",
               "score", "outcome", nspecs > 2 ? "    firsts" : "");
        for (int i = 0; i < nspecs; i++) {
            printf("%-24s %6d %6d %6d %6d %8s %+9.3f", names[i], t[i].games, t[i].wins,
                   t[i].draws, t[i].losses, score_text(&t[i], nspecs, sc[i], sizeof sc[i]),
                   t[i].games ? t[i].outcome_sum / t[i].games : 0.0);
            if (nspecs > 2) /* the share of first places, ties split */
                printf("  %7.1f%%", t[i].games ? 100.0 * t[i].first_share / t[i].games : 0.0);
            printf("\n");
        }
        if (nspecs > 2)
            printf("(wins: first alone; losses: last alone; firsts: the share of first places, a "
                   "k-way tie for first counting 1/k)\n");
        printf("\nper seat (wins-draws-losses; seat 1 moves first):\n%-24s", "player");
        for (int s = 0; s < nspecs; s++)
            printf("  %12s %d", "seat", s + 1);
        printf("\n");
        for (int i = 0; i < nspecs; i++) {
            printf("%-24s", names[i]);
            for (int s = 0; s < nspecs; s++) {
                char cell[48];
                snprintf(cell, sizeof cell, "%d-%d-%d", t[i].seat_wins[s], t[i].seat_draws[s],
                         t[i].seat_losses[s]);
                printf("  %14s", cell);
            }
            printf("\n");
        }
        if (nspecs > 2) {
            printf("\nhead to head (the row's player above-level-below the column's, in the same "
                   "games; score = (above + level/2) / games):\n%-24s", "player");
            for (int j = 0; j < nspecs; j++)
                printf("  %20s %d", "vs player", j + 1);
            printf("\n");
            for (int i = 0; i < nspecs; i++) {
                printf("%-24s", names[i]);
                for (int j = 0; j < nspecs; j++) {
                    char cell[64] = "-";
                    int n = t[i].games, a = t[i].above[j], l = t[i].level[j];
                    if (j != i && n > 0)
                        snprintf(cell, sizeof cell, "%d-%d-%d %.1f%%", a, l, n - a - l,
                                 100.0 * (a + 0.5 * l) / n);
                    printf("  %22s", cell);
                }
                printf("\n");
            }
        }
        printf("\n");
    }
    FILE *sf = json ? stderr : stdout;
    if (sprt_text)
        fprintf(sf, "sprt: %s vs %s, H0 elo %g, H1 elo %g: %s after %d games (LLR %.2f, bounds %.2f, %.2f)\n",
                names[0], names[1], sprt.elo0, sprt.elo1,
                verdict > 0 ? "H1 accepted" : verdict < 0 ? "H0 accepted" : "undecided (the --games cap came first)",
                played, llr, log(sprt.beta / (1 - sprt.alpha)), log((1 - sprt.beta) / sprt.alpha));
    fprintf(sf, "arena: %d games of %s in %.1f s:", played, desc, secs);
    for (int i = 0; i < nspecs; i++)
        fprintf(sf, "%s %s %d-%d-%d (score %s)", i ? "," : "", names[i], t[i].wins, t[i].draws,
                t[i].losses, score_text(&t[i], nspecs, sc[i], sizeof sc[i]));
    if (results)
        fprintf(sf, "; games appended to %s", results);
    fprintf(sf, "\n");
    rc = EXIT_OK;
free_players:
    for (int i = 0; i < nspecs; i++)
        player_free(players[i]);
    openings_free(book);
    game_free(g);
out:
    free(sets);
    free(psets);
    free(pcfg);
    return rc;
}
