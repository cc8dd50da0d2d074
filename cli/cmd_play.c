/* gridzero play [-c CONFIG] [--seat N] [--hint SPEC] [--seed S] OPPONENT... — a person
 * against players in the terminal. Plain line-based input and output (no terminal
 * control), so it works the same through a pipe; end of input ends the game cleanly. */
#include <assert.h>
#include <ctype.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

static void play_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero play [-c CONFIG] [--set KEY=VALUE]... [--seat N] [--hint SPEC]\n"
            "                     [--seed S] OPPONENT...\n\n"
            "You play seat N (1 = moves first; default 1) against the named players, which take\n"
            "the other seats in order (one for a two-player game, two for three players; none\n"
            "for a one-player game: gridzero play -c configs/2048-4x4.json, moves u d l r).\n"
            "Type a move in the game's notation (Gomoku: h8 or x,y), or:\n"
            "  undo   take back to your previous turn\n"
            "  hint   what the search would play here, with its visit counts\n"
            "  board  draw the board again\n"
            "  quit   leave the game\n\n"
            "  -c, --config FILE  the config (default: the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE    override a config key\n"
            "  --seat N           your seat (1 = moves first; default 1)\n"
            "  --hint SPEC        the player that gives hints (default mcts:<mcts.simulations>,\n"
            "                     or alphabeta when no search is built in)\n"
            "  --seed S           seed of the players' randomness (default: the config's)\n\n"
            "players:\n");
    player_print_kinds(f, cli_player_ext());
}

typedef struct play_session {
    const game *g;
    gz_config *cfg;
    int seat;                            /* the person's seat, 0-based */
    player *seated[GAME_MAX_PLAYERS];    /* NULL at the person's seat */
    player *hint;                        /* --hint: made at start; default: on the first `hint` */
    char hint_spec[PLAYER_NAME_LEN];
    unsigned char *hist;                 /* (max_game_length + 1, state_size) */
    int nmoves;
    bool tty_in;                         /* stdin is a terminal */
    rng r;
    rng chance;                          /* chance events (2048's tiles) */
} play_session;

static game_state *state_at(play_session *ps, int i)
{
    return (game_state *)(ps->hist + (size_t)i * ps->g->state_size);
}

/* Plays a on the current state (and the chance events after it), records it and tells
 * every player. */
static void session_play(play_session *ps, int a)
{
    game_state *cur = state_at(ps, ps->nmoves), *next = state_at(ps, ps->nmoves + 1);
    game_copy(ps->g, next, cur);
    int rc = game_play(ps->g, next, a);
    assert(rc == 0);
    (void)rc;
    game_resolve_chance(ps->g, next, &ps->chance);
    for (int s = 0; s < ps->g->players; s++)
        if (ps->seated[s])
            player_notify_move(ps->seated[s], cur, a);
    ps->nmoves++;
}

static void show_hint(play_session *ps)
{
    char err[512];
    if (!ps->hint) {
        ps->hint = player_new(ps->hint_spec, ps->g, ps->cfg, cli_player_ext(), err, sizeof err);
        if (!ps->hint) {
            printf("no hint: %s\n", err);
            return;
        }
    }
    player_info info;
    player_reset(ps->hint);
    int a = player_choose(ps->hint, state_at(ps, ps->nmoves), &ps->r, &info, err, sizeof err);
    if (a < 0) {
        printf("no hint: %s\n", err);
        return;
    }
    char mv[32];
    printf("hint (%s): %s", ps->hint->name, ps->g->ops->format_move(ps->g, a, mv, sizeof mv));
    if (info.ntop > 0) {
        bool visits = info.simulations > 0 && !info.depth;
        printf("  (%s:", visits ? "visits" : info.depth ? "scores" : "candidates");
        for (int i = 0; i < info.ntop; i++)
            printf(" %s %d", ps->g->ops->format_move(ps->g, info.top[i].action, mv, sizeof mv),
                   info.top[i].visits);
        printf(")");
    }
    if (info.simulations > 0 || info.depth > 0) {
        printf("  [");
        if (info.simulations > 0)
            printf("%d %s", info.simulations, info.depth ? "nodes" : "simulations");
        if (info.depth)
            printf("%sdepth %d", info.simulations > 0 ? ", " : "", info.depth);
        printf("]");
    }
    if (info.has_value && game_scored(ps->g))
        printf("  expected points to come %.0f", (double)info.value[ps->seat]);
    else if (info.has_value)
        printf("  value for you %+.2f", (double)info.value[ps->seat]);
    printf("\n");
}

/* Back to the person's previous turn (the last state before the current one where the
 * person was to move). Returns false when there is none. */
static bool session_undo(play_session *ps)
{
    for (int k = ps->nmoves - 1; k >= 0; k--)
        if (game_current_player(ps->g, state_at(ps, k)) == ps->seat) {
            ps->nmoves = k;
            /* The players' memories (reused trees) belong to the abandoned line. */
            for (int s = 0; s < ps->g->players; s++)
                if (ps->seated[s])
                    player_reset(ps->seated[s]);
            return true;
        }
    return false;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static void print_result(play_session *ps)
{
    const game *g = ps->g;
    if (g->players == 1) {
        printf("game over after %d moves", ps->nmoves);
        if (game_scored(g))
            printf(": score %.0f", (double)game_score0(g, state_at(ps, ps->nmoves)));
        if (g->ops->best_tile) {
            int k = g->ops->best_tile(g, state_at(ps, ps->nmoves));
            if (k < 53)
                printf(", largest tile %llu", (unsigned long long)1 << k);
        }
        printf("\n");
        return;
    }
    float z[GAME_MAX_PLAYERS];
    game_result(g, state_at(ps, ps->nmoves), z);
    bool best = true, worst = true;
    for (int s = 0; s < g->players; s++) {
        if (s == ps->seat)
            continue;
        if (z[s] >= z[ps->seat])
            best = false;
        if (z[s] <= z[ps->seat])
            worst = false;
    }
    printf("game over after %d moves: %s (outcome", ps->nmoves,
           best ? "you win" : worst ? "you lose" : g->players == 2 ? "draw" : "you are in the middle");
    for (int s = 0; s < g->players; s++)
        printf(" %s %+.2g", s == ps->seat ? "you" : ps->seated[s]->name, (double)z[s]);
    printf(")\n");
}

/* The game loop. Returns the exit status. */
static int session_run(play_session *ps)
{
    const game *g = ps->g;
    char *line = NULL;
    size_t cap = 0;
    int rc = EXIT_OK;
    bool drawn = false;
    char err[512], mv[32];
    while (!game_terminal(g, state_at(ps, ps->nmoves))) {
        game_state *cur = state_at(ps, ps->nmoves);
        int who = game_current_player(g, cur);
        if (who != ps->seat) {
            int a = player_choose(ps->seated[who], cur, &ps->r, NULL, err, sizeof err);
            if (a < 0) {
                cli_error("play: player \"%s\": %s", ps->seated[who]->name, err);
                rc = EXIT_FAIL;
                break;
            }
            uint8_t mask[GAME_MAX_ACTIONS];
            game_legal(g, cur, mask);
            if (a >= g->actions || !mask[a]) {
                cli_error("play: player \"%s\" chose an illegal move (action %d)",
                          ps->seated[who]->name, a);
                rc = EXIT_FAIL;
                break;
            }
            printf("seat %d (%s) plays %s\n", who + 1, ps->seated[who]->name,
                   g->ops->format_move(g, a, mv, sizeof mv));
            session_play(ps, a);
            drawn = false;
            continue;
        }
        if (!drawn) {
            printf("\n");
            g->ops->render(g, cur, stdout);
            drawn = true;
        }
        if (g->players == 1) {
            char moves[64] = "";
            for (int a = 0; a < g->actions && g->actions <= 8; a++) {
                size_t n = strlen(moves);
                snprintf(moves + n, sizeof moves - n, "%s%s", a ? " " : "",
                         g->ops->format_move(g, a, mv, sizeof mv));
            }
            printf("your move (%s; undo, hint, quit)> ", moves);
        } else {
            printf("your move (seat %d; undo, hint, quit)> ", ps->seat + 1);
        }
        fflush(stdout);
        if (getline(&line, &cap, stdin) < 0) {
            printf("\nend of input: game abandoned after %d moves\n", ps->nmoves);
            goto out;
        }
        char *in = trim(line);
        if (!ps->tty_in)
            printf("%s\n", in); /* echo piped input so the transcript reads like a session */
        if (!*in)
            continue;
        if (!strcmp(in, "quit") || !strcmp(in, "exit") || !strcmp(in, "q")) {
            printf("quit: game abandoned after %d moves\n", ps->nmoves);
            goto out;
        }
        if (!strcmp(in, "help") || !strcmp(in, "?")) {
            printf("type a move (e.g. %s), or undo, hint, board, quit\n",
                   g->ops->format_move(g, g->actions / 2, mv, sizeof mv));
            continue;
        }
        if (!strcmp(in, "board")) {
            drawn = false;
            continue;
        }
        if (!strcmp(in, "undo")) {
            if (session_undo(ps)) {
                printf("undo: back to your turn at move %d\n", ps->nmoves + 1);
                drawn = false;
            } else {
                printf("undo: nothing to take back\n");
            }
            continue;
        }
        if (!strcmp(in, "hint")) {
            show_hint(ps);
            continue;
        }
        int a;
        if (g->ops->parse_move(g, in, &a, err, sizeof err) < 0) {
            printf("cannot read %s; type a move, undo, hint or quit\n", err);
            continue;
        }
        char why[160];
        const char *no = game_why_illegal(g, cur, a, why, sizeof why);
        if (no) {
            printf("illegal move \"%s\": %s: %s\n", in, g->ops->format_move(g, a, mv, sizeof mv),
                   g->ops->why_illegal ? no : "not a legal move in this position");
            continue;
        }
        session_play(ps, a);
        if (g->players == 1)
            drawn = false; /* nobody else moves: show the board the move (and spawn) made */
    }
    if (rc == EXIT_OK) {
        printf("\n");
        g->ops->render(g, state_at(ps, ps->nmoves), stdout);
        print_result(ps);
    }
out:
    free(line);
    return rc;
}

int cmd_play(int argc, char **argv)
{
    const char *cfg_path = NULL, *hint_spec = NULL;
    const char *specs[GAME_MAX_PLAYERS];
    int nspecs = 0, seat = 1;
    bool have_seed = false;
    uint64_t seed = 0;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    if (!sets)
        return EXIT_FAIL;
    int nsets = 0, rc = EXIT_USAGE;
    game *g = NULL;
    play_session ps = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            play_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && more) {
            sets[nsets++] = argv[++i];
        } else if (!strcmp(a, "--seat") && more) {
            if (cli_parse_int(argv[++i], 1, GAME_MAX_PLAYERS, &seat) < 0) {
                cli_error("play: --seat \"%s\": expected 1..%d", argv[i], GAME_MAX_PLAYERS);
                goto out;
            }
        } else if (!strcmp(a, "--hint") && more) {
            hint_spec = argv[++i];
        } else if (!strcmp(a, "--seed") && more) {
            if (cli_parse_u64(argv[++i], &seed) < 0) {
                cli_error("play: --seed \"%s\": expected a whole number >= 0", argv[i]);
                goto out;
            }
            have_seed = true;
        } else if (a[0] == '-') {
            cli_error("play: unknown or incomplete option \"%s\" (see gridzero play --help)", a);
            goto out;
        } else if (nspecs < GAME_MAX_PLAYERS - 1) {
            specs[nspecs++] = a;
        } else {
            cli_error("play: too many opponents (at most %d)", GAME_MAX_PLAYERS - 1);
            goto out;
        }
    }
    gz_config c;
    if (!(g = cli_load_game(&c, cfg_path, sets, nsets)))
        goto out;
    char err[512];
    if (nspecs != g->players - 1) {
        play_usage(stderr);
        cli_error("play: %s has %d players: name %d opponent%s (%d named)", g->name, g->players,
                  g->players - 1, g->players == 2 ? "" : "s", nspecs);
        goto out;
    }
    if (seat > g->players) {
        cli_error("play: --seat %d: %s has seats 1..%d", seat, g->name, g->players);
        goto out;
    }
    ps.g = g;
    ps.cfg = &c;
    ps.seat = seat - 1;
    ps.tty_in = isatty(0);
    rng_seed(&ps.r, have_seed ? seed : c.seed);
    rng_seed(&ps.chance, rng_derive(have_seed ? seed : c.seed, 0x636861ULL));
    for (int s = 0, k = 0; s < g->players; s++) {
        if (s == ps.seat)
            continue;
        ps.seated[s] = player_new(specs[k++], g, &c, cli_player_ext(), err, sizeof err);
        if (!ps.seated[s]) {
            cli_error("play: %s", err);
            goto out;
        }
        player_reset(ps.seated[s]);
    }
    if (hint_spec) {
        /* Made now, so that a bad spec is a usage error and not a surprise at `hint`. */
        snprintf(ps.hint_spec, sizeof ps.hint_spec, "%s", hint_spec);
        ps.hint = player_new(hint_spec, g, &c, cli_player_ext(), err, sizeof err);
        if (!ps.hint) {
            cli_error("play: --hint: %s", err);
            goto out;
        }
    } else {
        /* The search when it is built in, else the alpha-beta engine where it plays. */
        snprintf(ps.hint_spec, sizeof ps.hint_spec, "mcts:%d", c.mcts.simulations);
        player *probe = player_new(ps.hint_spec, g, &c, cli_player_ext(), err, sizeof err);
        if (!probe)
            snprintf(ps.hint_spec, sizeof ps.hint_spec, "alphabeta");
        player_free(probe);
    }
    ps.hist = malloc(g->state_size * (size_t)(g->max_game_length + 1));
    if (!ps.hist) {
        rc = EXIT_FAIL;
        goto out;
    }
    game_init(g, state_at(&ps, 0), &ps.r);
    printf("gridzero play: %s, you are seat %d of %d", g->name, seat, g->players);
    for (int s = 0; s < g->players; s++)
        if (ps.seated[s])
            printf("; seat %d: %s", s + 1, ps.seated[s]->name);
    printf("\n");
    rc = session_run(&ps);
out:
    for (int s = 0; s < GAME_MAX_PLAYERS; s++)
        player_free(ps.seated[s]);
    player_free(ps.hint);
    free(ps.hist);
    game_free(g);
    free(sets);
    return rc;
}
