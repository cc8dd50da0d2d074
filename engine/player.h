/* player.h — something that picks a move for a state: the baselines (random, pure MCTS,
 * alpha-beta, perfect), and later the network player, all behind one table.
 *
 * A player is named on the command line by a spec: "random", "mcts:800",
 * "alphabeta", "alphabeta:4", "alphabeta:0.5s", "perfect" (and "model:FILE[:sims]",
 * which the caller supplies through a player_ext hook: this module knows nothing about
 * networks). The kinds engine/ knows are listed in player_kinds[], an explicit array.
 *
 * A player object belongs to one game at a time and is used by one thread at a time.
 * The sequence of calls for one game is: reset(), then for every move of the game
 * (whoever makes it) choose() when it is this player's turn, and notify_move() once
 * the move is played, so a player can keep state (tree reuse). notify_move is only a
 * hint: choose() must work on any position it is given (after an undo, a skipped
 * notification or a reset), falling back to a fresh search.
 */
#ifndef GZ_PLAYER_H
#define GZ_PLAYER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "eval.h"
#include "game.h"
#include "rng.h"

#define PLAYER_NAME_LEN 128
#define PLAYER_INFO_TOP 10

/* What a player can say about its choice (for `hint` and logs). Fields a player does
 * not know are left as player_info_clear() set them. */
typedef struct player_info {
    int action;       /* the chosen action */
    int simulations;  /* search simulations or nodes; 0 = not a search */
    int depth;        /* alpha-beta depth reached; 0 = not applicable */
    int has_value;    /* 1 when value[] is set */
    float value[GAME_MAX_PLAYERS]; /* expected outcome per absolute player */
    int ntop;         /* entries in top[], most visited first */
    struct {
        int action;
        int visits;   /* visit count (MCTS) or score (alpha-beta, mover's view) */
    } top[PLAYER_INFO_TOP];
} player_info;

void player_info_clear(player_info *info);

/* Controls of a choose() that runs in one thread while another watches it (gridzero
 * serve): the watcher may ask it to stop, and reads how far it got. The search players
 * (mcts, model, alphabeta, threat) check stop and deadline every few milliseconds and
 * then return the best move found so far (at least one playout or one iteration's
 * worth: a choose() that stops still returns a legal move); random and perfect are
 * instant and ignore them. */
typedef struct player_ctl {
    atomic_int stop;      /* set to 1 by any thread: choose() returns soon */
    double deadline;      /* player_clock() time after which choose() returns; 0 = none.
                           * Set before choose() starts. */
    atomic_long progress; /* written by choose(): simulations (MCTS) or nodes (alpha-beta)
                           * so far in this call */
} player_ctl;

/* Monotonic seconds (CLOCK_MONOTONIC), the clock of player_ctl.deadline. */
double player_clock(void);
/* Whether a choose() under ctl (may be NULL: never) should stop now: stop is set or the
 * deadline has passed. Reads the clock only when a deadline is set. */
bool player_ctl_expired(player_ctl *ctl);

typedef struct player player;

struct player {
    /* immutable after creation */
    char name[PLAYER_NAME_LEN]; /* the spec it was made from, e.g. "mcts:400" */
    const char *kind;           /* "random", "mcts", "alphabeta", "perfect", "model" */
    const game *g;              /* borrowed; outlives the player */

    /* Picks a legal action for s (not terminal; the player to move is this player).
     * r is the game's random source (for players that randomise); info may be NULL.
     * Returns the action (>= 0), or -1 with a message in err. */
    int (*choose)(player *p, const game_state *s, rng *r, player_info *info, char *err,
                  size_t errlen);
    /* Optional (may be NULL): action was played in the position s_before (by anyone). */
    void (*notify_move)(player *p, const game_state *s_before, int action);
    /* Optional (may be NULL): a new game starts; forget anything about the last one. */
    void (*reset)(player *p);
    /* Optional (may be NULL): frees ctx and whatever the player owns (not p itself). */
    void (*destroy)(player *p);
    void *ctx; /* the kind's private data, owned */

    /* set by the caller between calls */
    player_ctl *ctl; /* borrowed, NULL = none: the controls of the next choose() calls */
};

/* One kind of player engine/ can make. arg is the text after "kind:" (NULL when the
 * spec has no colon). create fills p's function pointers and ctx; returns 0, or -1 with
 * a message in err (the caller adds the spec to it). */
typedef struct player_kind {
    const char *name;   /* "mcts" */
    const char *syntax; /* "mcts:N" for help texts */
    const char *help;
    int (*create)(player *p, const char *arg, const game *g, const gz_config *cfg, char *err,
                  size_t errlen);
} player_kind;

/* NULL-terminated: every kind engine/ knows. */
extern const player_kind *const player_kinds[];

/* A hook through which a caller adds player kinds that engine/ must not know (the
 * network player). try() returns 1 and sets *out when it made the player, 0 when the
 * spec is not one of its kinds (player_new then reports an unknown kind), or -1 with a
 * message in err when the spec is its kind but invalid (bad file, bad number). */
typedef struct player_ext {
    int (*try)(void *ctx, const char *spec, const game *g, const gz_config *cfg, player **out,
               char *err, size_t errlen);
    const char *syntax; /* e.g. "model:FILE[:sims]", for the unknown-kind message; may be NULL */
    const char *help;   /* one line for player_print_kinds; may be NULL */
    const char *syntax2, *help2; /* a second kind of the hook, for the help; may be NULL */
    void *ctx;
} player_ext;

/* Makes a player from its spec for game g with settings from cfg (mcts section for
 * search players). ext may be NULL; it is asked first, then player_kinds[]. Returns a
 * new player (free with player_free), or NULL with a message in err that names the
 * spec ("player \"mcts:abc\": expected mcts:N with N a number of simulations >= 1").
 * g and cfg are borrowed; g must outlive the player, cfg need not. */
player *player_new(const char *spec, const game *g, const gz_config *cfg, const player_ext *ext,
                   char *err, size_t errlen);

/* An empty player with name set (for kinds and extensions that fill in the table).
 * Free with player_free. NULL when out of memory. */
player *player_alloc(const char *name, const char *kind, const game *g);

/* Accepts NULL. */
void player_free(player *p);

/* Wrappers that read better at call sites; notify/reset do nothing when absent. */
int player_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                  size_t errlen);
void player_notify_move(player *p, const game_state *s_before, int action);
void player_reset(player *p);

/* A PUCT search player (engine/mcts.c) valuing positions with evaluator e, which it
 * TAKES OWNERSHIP of (freed with the player, and also when this call fails). Search
 * settings come from cfg->mcts, except: `simulations` per move, no root noise and
 * temperature 0 (always the most visited move: the arena and play want strength; the
 * arena's random openings supply variety). The tree is reused across moves when
 * mcts.reuse_tree is on. seed seeds the tree's rng. name is the player's spec and kind
 * its kind ("mcts", "model"). The network player is this with the network evaluator.
 * Returns a new player (free with player_free) or NULL with a message in err. */
player *player_mcts_new(const game *g, const gz_config *cfg, evaluator *e, int simulations,
                        uint64_t seed, const char *name, const char *kind, char *err,
                        size_t errlen);

struct mcts_params;
/* The same with search settings given whole (p is copied; e.g. mcts_params_pure for
 * uniform-prior evaluators). Same ownership of e and same errors. */
player *player_mcts_new_params(const game *g, const struct mcts_params *p, evaluator *e,
                               uint64_t seed, const char *name, const char *kind, char *err,
                               size_t errlen);

/* The value of a 2048 after-state (cells: tile exponents, row-major) to a learned
 * expectimax's leaves: the points still to come. */
typedef double (*player_ex_leaf)(void *ctx, const uint8_t *cells);
/* An expectimax player (engine/players/expectimax.c) D moves deep whose leaves are
 * leaf(leaf_ctx, after-state) instead of the heuristic, and whose moves count their
 * points: a max node is max over moves of points + the chance node below. With
 * deep_empty >= 0 it searches D + 1 moves on a board with at most deep_empty empty
 * cells (-1: always D). 2048 only.
 * Owns leaf_ctx from the call (leaf_free, may be NULL, frees it, on failure too).
 * Returns the player, or NULL with a message. */
player *player_expectimax_new(const game *g, int depth, int deep_empty, player_ex_leaf leaf,
                              void *leaf_ctx, void (*leaf_free)(void *), const char *name,
                              const char *kind, char *err, size_t errlen);

/* Writes one line per kind ("  random  uniform among legal moves") into f. */
void player_print_kinds(FILE *f, const player_ext *ext);

/* Parses a positive int argument fully ("400" ok, "4x", "", "-1" not). Returns 0 or -1. */
int player_parse_count(const char *arg, int *out);

/* Parses a time per move written "Ts" ("0.5s", "2s"; 0 < T <= 86400) fully. Returns 0,
 * or -1 when arg is not of that form. */
int player_parse_seconds(const char *arg, double *out);

/* The seed of the tree of an "mcts[:N]" player made with cfg (its rollout evaluator's is
 * rng_derive(seed, 1)): another front end's pure MCTS (nn/brain.h) searches as that
 * player does. */
uint64_t player_mcts_seed(const gz_config *cfg);

/* An mcts player (player_mcts_new*) that also stops each search after `seconds` of wall
 * clock (0 = no limit; the simulation count stays the cap). */
void player_mcts_set_seconds(player *p, double seconds);

#endif
