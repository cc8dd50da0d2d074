/* gridzero elo FILE... [--json] [--anchor NAME] */
#include <string.h>

#include "commands.h"
#include "engine/elo.h"

static void elo_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero elo FILE... [--json] [--anchor NAME]\n\n"
            "Rates every player of arena results files (one JSON game per line, as written by\n"
            "gridzero arena --results) by maximum-likelihood Bradley-Terry Elo: draws count\n"
            "half, a three-player game counts as its pairwise results by final rank. Prints\n"
            "ratings with 95%% intervals, anchored at random = 0 when random played (else the\n"
            "first player seen, or NAME). Each pair of players that met gets one virtual draw\n"
            "(so all-win and all-loss records stay finite).\n\n"
            "  --json         {\"games\":N,\"anchor\":NAME,\"players\":[{\"name\",\"elo\",\"lo\",\"hi\",\n"
            "                 \"games\",\"score\"}]} sorted by rating\n"
            "  --anchor NAME  hold NAME at 0\n");
}

static const elo_rating *sort_base;
static int by_elo(const void *a, const void *b)
{
    const elo_rating *x = &sort_base[*(const int *)a], *y = &sort_base[*(const int *)b];
    return x->elo < y->elo ? 1 : x->elo > y->elo ? -1 : *(const int *)a - *(const int *)b;
}

int cmd_elo(int argc, char **argv)
{
    bool json = false;
    const char *anchor = NULL;
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            elo_usage(stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--anchor") && i + 1 < argc) {
            anchor = argv[++i];
        } else if (argv[i][0] == '-') {
            cli_error("elo: unknown or incomplete option \"%s\" (see gridzero elo --help)", argv[i]);
            return EXIT_USAGE;
        } else {
            nfiles++;
        }
    }
    if (!nfiles) {
        elo_usage(stderr);
        cli_error("elo: name a results file");
        return EXIT_USAGE;
    }
    elo_table *t = elo_table_new();
    if (!t)
        return EXIT_FAIL;
    char err[512];
    int rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--anchor")) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        if (elo_load_file(t, argv[i], err, sizeof err) < 0) {
            cli_error("elo: %s", err);
            goto out;
        }
    }
    int n = elo_players(t);
    elo_rating *r = calloc((size_t)(n ? n : 1), sizeof *r);
    int *order = calloc((size_t)(n ? n : 1), sizeof *order);
    if (!r || !order) {
        free(r);
        free(order);
        rc = EXIT_FAIL;
        goto out;
    }
    elo_opts o = elo_default_opts();
    o.anchor = anchor;
    if (elo_compute(t, &o, r, err, sizeof err) < 0) {
        cli_error("elo: %s", err);
        free(r);
        free(order);
        goto out;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_base = r;
    qsort(order, (size_t)n, sizeof *order, by_elo);
    const char *anchor_name = "";
    for (int i = 0; i < n; i++)
        if (r[i].anchor)
            anchor_name = r[i].name;
    if (json) {
        printf("{\"games\": %d, \"anchor\": ", elo_games(t));
        cli_json_string(stdout, anchor_name);
        printf(", \"players\": [");
        for (int k = 0; k < n; k++) {
            const elo_rating *e = &r[order[k]];
            printf("%s{\"name\": ", k ? ", " : "");
            cli_json_string(stdout, e->name);
            printf(", \"elo\": %.1f, \"lo\": %.1f, \"hi\": %.1f, \"games\": %d, \"score\": %.4f}",
                   e->elo, e->lo, e->hi, e->games, e->score);
        }
        printf("]}\n");
    } else {
        printf("%4s  %-28s %8s  %-19s %7s %7s\n", "rank", "player", "elo", "95% interval", "games",
               "score");
        for (int k = 0; k < n; k++) {
            const elo_rating *e = &r[order[k]];
            char iv[48];
            if (e->anchor)
                snprintf(iv, sizeof iv, "(anchor)");
            else
                snprintf(iv, sizeof iv, "[%7.1f, %7.1f]", e->lo, e->hi);
            printf("%4d  %-28s %8.1f  %-19s %7d %6.1f%%\n", k + 1, e->name, e->elo, iv, e->games,
                   100.0 * e->score);
        }
        printf("elo: %d games, %d players, anchor %s = 0\n", elo_games(t), n, anchor_name);
    }
    free(r);
    free(order);
    rc = EXIT_OK;
out:
    elo_table_free(t);
    return rc;
}
