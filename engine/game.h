/* game.h — the game interface every part of gridzero talks to (DESIGN.md §2).
 *
 * A game is a table of functions (game_ops) over a fixed-size, plain-data state that
 * is copied with memcpy: no pointers inside a state. Generic code never looks inside a
 * state; it only knows its size (game->state_size) and hands it to the ops. A game
 * instance (struct game) is created from the `game` config section and is immutable
 * afterwards, so it may be shared by threads.
 *
 * Conventions for every game:
 * - Players are numbered 0..players-1 in seat order (0 moves first).
 * - Actions are integers 0..actions-1. For placement games an action is the point
 *   r * cols + c (r = row 0 at the top of the tensor, c = column).
 * - Outcomes z[p] are in [-1, 1], indexed by absolute player number.
 * - encode() writes planes[planes][rows][cols] from the point of view of the player
 *   to move.
 * This module must not know about networks, search or files.
 */
#ifndef GZ_GAME_H
#define GZ_GAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"

#define GAME_MAX_PLAYERS 3
#define GAME_MAX_SIDE 64
#define GAME_MAX_CELLS (GAME_MAX_SIDE * GAME_MAX_SIDE)
#define GAME_MAX_ACTIONS GAME_MAX_CELLS
#define GAME_MAX_SYM 8
#define GAME_NAME_LEN 16
#define GAME_MAX_CHANCE 128 /* outcomes of one chance event (2048 on 8x8: 64 cells x 2) */

typedef enum { GAME_LATTICE_SQUARE = 0, GAME_LATTICE_HEX = 1 } game_lattice;

/* What game_ops.cells writes for a point that holds no player's stone. */
enum { GAME_CELL_EMPTY = -1, GAME_CELL_NEUTRAL = -2 };

/* Symmetry elements, as maps of an R x C array (r, c) -> (r', c'). The hex group of an
 * N x N rhombus is the subgroup {ID, ROT180, TRANSPOSE, ANTITRANSPOSE}. Implemented in
 * symmetry.c. */
typedef enum {
    SYM_ID = 0,        /* (r, c) -> (r, c) */
    SYM_ROT90,         /* (r, c) -> (c, N-1-r)      clockwise, square only */
    SYM_ROT180,        /* (r, c) -> (R-1-r, C-1-c) */
    SYM_ROT270,        /* (r, c) -> (N-1-c, r)      square only */
    SYM_FLIP_V,        /* (r, c) -> (R-1-r, c)      mirror top/bottom */
    SYM_FLIP_H,        /* (r, c) -> (r, C-1-c)      mirror left/right */
    SYM_TRANSPOSE,     /* (r, c) -> (c, r)          square only */
    SYM_ANTITRANSPOSE, /* (r, c) -> (N-1-c, N-1-r)  square only */
    SYM_COUNT
} sym_id;

typedef struct game_state game_state; /* opaque: each game defines its own layout */
typedef struct game game;
struct cfg_game;

/* The function table of one game. Every member gets the game instance (immutable) and
 * borrows its state arguments. None of them allocate. */
typedef struct game_ops {
    const char *name; /* config name: "mnk", "sanling" */

    /* Fills g's dimensions, state_size, symmetry list and private data from cfg.
     * Returns 0, or -1 with a message in err naming the key. May allocate g->data,
     * which destroy() frees. */
    int (*create)(game *g, const struct cfg_game *cfg, char *err, size_t errlen);
    void (*destroy)(game *g);

    /* The start position. rng is for games with a random start (may be NULL). */
    void (*init)(const game *g, game_state *s, rng *r);
    int (*current_player)(const game *g, const game_state *s);
    /* Writes mask[actions] (1 = legal) and returns the number of legal actions
     * (0 only at a terminal position). */
    int (*legal)(const game *g, const game_state *s, uint8_t *mask);
    /* Plays action for the player to move. Returns 0, or -1 (state unchanged) when the
     * action is out of range, illegal, or the game is over. */
    int (*play)(const game *g, game_state *s, int action);
    bool (*terminal)(const game *g, const game_state *s);
    /* Outcome per absolute player, z[players], each in [-1, 1]. Only at terminal. */
    void (*result)(const game *g, const game_state *s, float *z);
    /* planes[planes * rows * cols], player-to-move point of view. */
    void (*encode)(const game *g, const game_state *s, float *planes);
    /* Zobrist hash covering everything encode() shows. */
    uint64_t (*hash)(const game *g, const game_state *s);
    /* Human-readable board with coordinates. */
    void (*render)(const game *g, const game_state *s, FILE *f);
    /* Parses a move in the game's usual notation (and any alternative notation the
     * game documents). Returns 0 and *action, or -1 with a message in err. Does not
     * check legality in a position. */
    int (*parse_move)(const game *g, const char *str, int *action, char *err, size_t errlen);
    /* Writes the usual notation of action into buf; returns buf. */
    char *(*format_move)(const game *g, int action, char *buf, size_t len);
    /* Optional (may be NULL): an action that wins at once for the player to move, or
     * -1. Used by search to prove immediate wins without a network call. */
    int (*winning_move)(const game *g, const game_state *s);
    /* Number of moves played so far. */
    int (*ply)(const game *g, const game_state *s);
    /* Optional (may be NULL: games whose actions are not points): what stands on each
     * point, cells[rows * cols] in action order: GAME_CELL_EMPTY, GAME_CELL_NEUTRAL, or
     * the number of the player whose stone it is. For drawing a board (gridzero serve). */
    void (*cells)(const game *g, const game_state *s, int8_t *cells);
    /* Optional (may be NULL): why `action` cannot be played in s, in words for a person
     * ("the point is occupied", "forbidden for black: double three (renju)"), written
     * to buf; returns buf, or NULL when the move is legal. */
    const char *(*why_illegal)(const game *g, const game_state *s, int action, char *buf,
                               size_t len);

    /* Optional threat-space search (all four or none; NULL in games without one, e.g.
     * sanling; m,n,k with k >= 4 uses engine/games/threat.h). A workspace is made once
     * per user (a search tree, a player) and reused; the calls do not allocate.
     * threat_new: a workspace for g with a transposition table of 2^tt_log2 entries
     *   (16 bytes each); NULL with a message in err when g has no threat search (e.g.
     *   k = 3). Free with threat_free (accepts NULL).
     * threat_win: a proven VCF win for `player` moving first (the player to move, or
     *   the other one as if it were his turn: "does my opponent threaten a VCF") within
     *   budget nodes (> 0), or with vct_depth > 0 a VCT (threes too, up to vct_depth
     *   attacker moves before the search hands over to VCF; as sound a proof as a
     *   VCF): writes the line (attacker move, forced reply, ..., the completing move)
     *   to pv[pvmax] and returns its length (> 0, truncated to pvmax >= 1), or 0 (no
     *   win found, the position is terminal, or the budget is <= 0).
     * threat_defend: when the opponent of the player to move has a VCF (found within
     *   budget nodes), writes mask[actions] (1 = the move defends it: after it no VCF is
     *   found) and returns the number of such moves (> 0); returns 0 (mask untouched)
     *   when there is no VCF to answer or no move answers it. */
    void *(*threat_new)(const game *g, int tt_log2, char *err, size_t errlen);
    void (*threat_free)(void *ws);
    int (*threat_win)(const game *g, const game_state *s, void *ws, int player, long budget,
                      int vct_depth, int *pv, int pvmax);
    int (*threat_defend)(const game *g, const game_state *s, void *ws, long budget, uint8_t *mask);

    /* Optional chance events (both or neither; NULL in deterministic games). After some
     * moves nature moves next (2048: a tile spawns); such a position is a CHANCE STATE.
     * At a chance state terminal() is false, legal() returns 0 and play() -1: only
     * chance_play moves on. Whoever plays a game resolves chance states as they come
     * (game_resolve_chance); the search treats them as chance nodes (mcts.c).
     * chance_outcomes: at a chance state, writes its outcomes (ids in 0..max_chance-1,
     *   increasing) to outcome[] and their probabilities (> 0, summing to 1) to prob[]
     *   and returns how many (1..max_chance); at any other state returns 0. With outcome
     *   and prob NULL it only counts (cheap: game_is_chance uses it).
     * chance_play: applies one of the listed outcomes. Returns 0, or -1 (state
     *   unchanged) when s is not a chance state or the outcome is not one of its own. */
    int (*chance_outcomes)(const game *g, const game_state *s, int *outcome, float *prob);
    int (*chance_play)(const game *g, game_state *s, int outcome);
    /* Optional (NULL: the game's goal is its outcome): the points each absolute player
     * has scored so far, out[players] (2048: the sum of the merged tiles). With it the
     * search keeps the points gained on every edge as that edge's reward, values are
     * the points still to come (evaluators return those, not outcomes) and Q is
     * normalised min-max over the tree for PUCT (mcts.c); the arena reports scores.
     * result() still writes outcomes in [-1, 1]. */
    void (*score)(const game *g, const game_state *s, float *out);
    /* Optional (NULL: actions are the points r * cols + c): the image of action under
     * symmetry element sym (a sym_id the game lists). 2048 maps its four directions. */
    int (*sym_action)(const game *g, int sym, int action);
    /* Optional (NULL: no tiles): log2 of the largest tile on the board (2048: 11 for the
     * 2048 tile), for the arena's table of tiles reached. */
    int (*best_tile)(const game *g, const game_state *s);
} game_ops;

struct game {
    const game_ops *ops;
    char name[GAME_NAME_LEN];
    /* immutable after create */
    int players;         /* 1, 2 or 3 */
    int rows, cols;      /* tensor shape of the board */
    game_lattice lattice;
    int actions;         /* size of the policy vector */
    int planes;          /* input planes of encode() */
    size_t state_size;   /* bytes of one state; states are memcpy-copyable */
    int nsym;            /* the symmetry subgroup the rules keep */
    sym_id sym[GAME_MAX_SYM]; /* sym[0] == SYM_ID */
    int max_game_length; /* upper bound on plies (for buffers) */
    int max_chance;      /* most outcomes of one chance event; 0 = no chance events */
    bool costly_legal;   /* legal() costs far more than play() of one move (renju: the
                            forbidden points): random playouts sample moves by trying them */
    char rule[GAME_NAME_LEN]; /* the rule variant a model must have been trained under
                                 (m,n,k: "freestyle", "exact", "renju", "caro"); "" none */
    int k;               /* m,n,k: stones in a row to win, which a model must have been
                            trained for too; 0 for other games */
    void *data;          /* game-private immutable data (owned, freed by destroy) */
};

/* Creates a game from its config section. Returns a new game (free with game_free) or
 * NULL with a message in err. */
game *game_new(const struct cfg_game *cfg, char *err, size_t errlen);
void game_free(game *g);

/* The registry: NULL-terminated array of every game's ops. */
extern const game_ops *const game_registry[];
const game_ops *game_find(const char *name);

/* Convenience wrappers: they read better at call sites than g->ops->x(g, ...). */
static inline void game_init(const game *g, game_state *s, rng *r) { g->ops->init(g, s, r); }
static inline int game_current_player(const game *g, const game_state *s) { return g->ops->current_player(g, s); }
static inline int game_legal(const game *g, const game_state *s, uint8_t *mask) { return g->ops->legal(g, s, mask); }
static inline int game_play(const game *g, game_state *s, int a) { return g->ops->play(g, s, a); }
static inline bool game_terminal(const game *g, const game_state *s) { return g->ops->terminal(g, s); }
static inline void game_result(const game *g, const game_state *s, float *z) { g->ops->result(g, s, z); }
static inline void game_encode(const game *g, const game_state *s, float *p) { g->ops->encode(g, s, p); }
static inline uint64_t game_hash(const game *g, const game_state *s) { return g->ops->hash(g, s); }
static inline void game_copy(const game *g, game_state *dst, const game_state *src)
{
    memcpy(dst, src, g->state_size);
}

/* Whether s is a chance state (nature moves next: game_ops.chance_outcomes). */
static inline bool game_is_chance(const game *g, const game_state *s)
{
    return g->ops->chance_outcomes && g->ops->chance_outcomes(g, s, NULL, NULL) > 0;
}
/* Whether the game keeps a score (game_ops.score). */
static inline bool game_scored(const game *g) { return g->ops->score != NULL; }
/* Player 0's points so far (game_ops.score); 0 in a game without a score. */
float game_score0(const game *g, const game_state *s);

/* One outcome of chance state s drawn with r in proportion to its probability (one
 * uniform draw), or -1 when s is not a chance state (r untouched). */
int game_chance_sample(const game *g, const game_state *s, rng *r);
/* Samples one outcome of chance state s in proportion to its probability with r and
 * applies it; repeats while s is a chance state. Returns the number of events resolved
 * (0 for a deterministic game or a state that is not a chance state: r is then not
 * touched, so deterministic games draw nothing from it). */
int game_resolve_chance(const game *g, game_state *s, rng *r);
/* Why action cannot be played in s (the game's why_illegal, else a plain "not a legal
 * move" / "the game is over"), or NULL when it can. buf receives the words. */
const char *game_why_illegal(const game *g, const game_state *s, int action, char *buf,
                             size_t len);

/* A heap state of g->state_size bytes (free with free()), initialised with init(). */
game_state *game_state_new(const game *g, rng *r);

/* Plays uniformly random moves to the end (resolving chance events with r too); writes
 * z[players]. Uses scratch space on the stack only. Returns the number of plies played.
 * With g->costly_legal a move is a uniformly random action that play() accepts (up to 8
 * tries, then one from the legal mask): the same distribution, another use of r. */
int game_random_playout(const game *g, game_state *s, rng *r, float *z);

#endif
