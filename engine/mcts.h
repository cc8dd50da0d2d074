/* mcts.h — PUCT Monte Carlo tree search (DESIGN.md §3).
 *
 * One `mcts` is the search tree of one game: a root position plus a preallocated arena
 * of nodes (indexed by int32, children of a node stored as one contiguous range of
 * compact edges: prior + child index + action). It knows the game (game.h) and talks to
 * an evaluator (eval.h) for priors and values; it knows nothing about networks.
 *
 * Values are vectors with one entry per ABSOLUTE player (as the evaluator returns
 * them); the Q of an edge is read from the view of the player who chose that move, so
 * 1-, 2- and 3-player games share one backup. Terminal positions are scored exactly by
 * game_result; with `solver` on, proven outcomes propagate (MCTS-solver, see mcts.c).
 *
 * Chance and scores come from the game interface, so any game that declares them gets
 * them with no change here (mcts.c has the details):
 * - a chance state (game_is_chance: 2048 after a move) is a CHANCE NODE: one edge per
 *   outcome with its probability, no evaluator call, its value the expectation over
 *   the outcomes (visited in proportion to their probabilities). The root is never a
 *   chance node: mcts_play draws the outcomes after the move with the tree's rng.
 * - a scored game (game_scored: 2048) keeps the points gained on every edge as that
 *   edge's reward; values (the evaluator's and the tree's) are the points still to
 *   come, so an edge's Q = its reward + the child's value, and PUCT reads Q normalised
 *   to [0, 1] by the range of Q seen in the search (MuZero's min-max); the solver is
 *   off (there are points to come, not outcomes to prove).
 *
 * Two ways to search:
 * - one tree:   mcts_search(t, e, pi, &res, err, errlen)  (does all of the below);
 * - many trees (self-play runs many games in one worker, one evaluator call per batch
 *   gathered across all of them):
 *       for each tree: mcts_begin(t)
 *       while (some tree is not mcts_done):
 *           mcts_step_many(trees, ntrees, batch, e, err, errlen)
 *       for each tree: mcts_finish(t, pi, &res); then mcts_play(t, res.action)
 *   mcts_step_many gathers up to params.batch leaves from each unfinished tree (with
 *   virtual loss), hands them all to the evaluator in ONE call, and backs them up.
 *   With ntrees == 1 it is exactly the single search. A descent that reaches a leaf
 *   already waiting in the batch (a duplicate) is discarded, not counted, and ends that
 *   tree's gathering for the step; terminal and proven leaves are backed up at once
 *   and need no evaluation.
 *
 * Memory: no allocation after mcts_new / mcts_batch_new; nothing in the per-simulation
 * path allocates. When the arena is full the search stops expanding and returns what
 * it has (stats.arena_full); it never crashes.
 *
 * Thread safety: a tree, a batch and an evaluator are used by one thread at a time.
 * Different trees may be searched by different threads with different batches and
 * evaluators. Deterministic given the seed (and a deterministic evaluator).
 */
#ifndef GZ_MCTS_H
#define GZ_MCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval.h"
#include "game.h"

struct cfg_mcts;

/* Search settings. Fill with mcts_params_from_config (or by hand). Immutable for the
 * life of a tree (copied by mcts_new). */
typedef struct mcts_params {
    int simulations;        /* playouts (leaf visits) added by one search, >= 1; visits
                             * carried over by tree reuse do not count toward it */
    float c_puct;           /* U = c_puct * P * sqrt(N_parent) / (1 + N_child) */
    float fpu_reduction;    /* unvisited child's Q = parent's Q (mover's view) - this */
    bool noise;             /* root Dirichlet noise: self-play only (default false) */
    float dirichlet_alpha;
    float dirichlet_eps;
    int temperature_moves;  /* plies (game ply, from the start of the game) during which
                             * the move is sampled in proportion to visits; later plies
                             * take the most visited move. 0 = always the most visited */
    int batch;              /* leaves gathered per tree per step, >= 1 */
    float virtual_loss;     /* each pending visit counts as this many visits of value -1
                             * for the mover; 0 = none */
    bool solver;            /* MCTS-solver and the game's winning_move hook */
    bool reuse_tree;        /* mcts_play keeps the chosen child's subtree */
    int32_t max_nodes;      /* arena capacity in nodes; 0 = automatic (see mcts_new) */
    int64_t max_edges;      /* arena capacity in edges; 0 = automatic */
    /* Added after the first version (zero = the behaviour above): */
    bool fpu_absolute;      /* unvisited child's Q = fpu_value instead of parent's Q -
                             * fpu_reduction (lc0's "absolute" FPU). With uniform priors
                             * (rollout/random evaluators: pure MCTS) use fpu_value = 1:
                             * every move is tried once, as in UCT; the reduction FPU then
                             * follows the first move tried depth-first. */
    float fpu_value;
    /* Threat-space checks (games with the threat hooks of game.h; zero = off; the two
     * proofs need `solver`): */
    int vcf_root;           /* VCF node budget at the root in mcts_begin: a proven win
                             * proves the root (played at once, pi one-hot) */
    int vcf_leaf;           /* VCF node budget at each new node: a mover with a VCF makes
                             * the node a proven win (no evaluator call) */
    bool vcf_defend;        /* a new node whose mover faces the opponent's VCF gets only
                             * the defending moves as children (budget vcf_leaf, or 1000) */
    int vct_root;           /* VCT node budget at the root in mcts_begin (after vcf_root;
                             * threes too, 6 attacker moves deep): a proven win proves the
                             * root as vcf_root does */
    /* The learning recipe (issue 10). Zero = off, except fresh_pi (see mcts_finish). */
    float dirichlet_total;  /* > 0: noise alpha = dirichlet_total / legal moves at the root
                             * (KataGo: 10.83), replacing dirichlet_alpha */
    float root_policy_temp; /* with noise: root priors ^ (1/T) renormalised; 0 or 1 = off */
    float forced_playouts;  /* with noise: a root child c whose visits are below
                             * sqrt(k P(c) N_root) is chosen first (KataGo's k = 2); 0 = off */
    bool policy_pruning;    /* with forced playouts: mcts_finish's pi drops the playouts PUCT
                             * would not have given (mcts_prune_policy) */
    bool fresh_pi;          /* pi counts only the playouts of this search (mcts_begin on),
                             * not the visits a reused subtree brought */
    /* Scored games (zero = off): */
    bool track_best;        /* keep each node's highest return backed up through it (player
                             * 0's points to come: seed 003's targets, mcts_export) */
    bool completed_q;       /* pi is Gumbel MuZero's improved policy softmax(log prior +
                             * sigma(completed Q)) (mcts_completed_q_policy), not visits */
    /* Move choice of players (noise off, after the temperature plies; zero = off): */
    float lcb_stdevs;       /* > 0: play the root child with the highest lower confidence
                             * bound Q - lcb_stdevs * stderr (KataGo) among the children
                             * with at least lcb_min_fraction of the most visited one's
                             * visits (mcts_lcb_select); 0: the most visited */
    float lcb_min_fraction;
    float contempt;         /* > 0, two-player games without a score: the searching player
                             * (the root's mover) takes a draw as -contempt and the
                             * opponent as +contempt; a backed-up value v (the searcher's
                             * view) becomes v - contempt (1 - |v|), 1 - |v| standing for
                             * the draw probability (mcts_contempt_value). 0 = off */
    /* Gumbel AlphaZero instead of PUCT (mcts_gumbel.c; zero = off; not for scored games): */
    bool gumbel;            /* the root considers gumbel_m moves (Gumbel-top-k with noise in
                             * the first temperature_moves plies, the top priors otherwise)
                             * and shares the simulations among
                             * them by sequential halving; below the root the improved
                             * policy's deterministic rule; pi is the completed-Q improved
                             * policy; the move is the halving's winner (no temperature,
                             * Dirichlet noise, forced playouts or LCB) */
    int gumbel_m;           /* moves considered at the root (mctx: 16), >= 1 */
} mcts_params;

/* Gumbel MuZero's improved policy (Danihelka et al. 2022, with mctx's constants) over n
 * root children: pi = softmax(log prior + sigma(qhat)), where qhat is a child's mean value
 * q (from the root mover's view, in [-1, 1]) when it has visits, and otherwise the mixed
 * value v_mix = (v + N * sum_visited prior q / sum_visited prior) / (1 + N) (v: the
 * root's value estimate, N: the children's total visits); qhat is rescaled to [0, 1] by
 * the min and max over the children, and sigma(x) = (50 + max visits) * 0.1 * x. prior
 * must be the network's (no noise), visits this search's. Writes pi[n]; a child with
 * prior 0 gets 0. Returns 0, or -1 when every prior is 0 (pi untouched). */
int mcts_completed_q_policy(int n, const float *prior, const float *q, const float *visits,
                            float v, float *pi);

/* Sequential halving's schedule (Gumbel AlphaZero, as mctx writes it) for m considered
 * moves and n simulations: visits[k] (k < n) is how many visits the move that simulation
 * k goes to must already have. Rounds of log2(m) phases: a phase gives each of the c
 * moves still considered max(1, floor(n / (ceil(log2 m) * c))) more visits, one visit
 * each in turn, then c halves (to no fewer than 2) until n simulations are placed. m = 1:
 * visits[k] = k. Returns 0, or -1 when m < 1 or n < 1. Pure function. */
int mcts_gumbel_schedule(int m, int n, int32_t *visits);

/* Gumbel AlphaZero's rule below the root over n children (arrays of n): prior, q (mean
 * value from the mover's view, of the visited children), visits, and v the node's own
 * evaluation from the mover's view: the child with the largest pi'(a) - visits(a) / (1 +
 * sum visits), pi' = mcts_completed_q_policy (written into pi[n]); ties to the lower
 * index; -1 when every prior is 0. The search does the same inside the tree (pending
 * visits counted as visits). Pure function. */
int mcts_gumbel_interior_pick(int n, const float *prior, const float *q, const float *visits,
                              float v, float *pi);

/* Draw contempt for the searching player s of a two-player game: v (both players'
 * values, v[1-s] = -v[s]) becomes v'[s] = v[s] - c (1 - |v[s]|), v'[1-s] = -v'[s]. A
 * proven draw (0) is -c; a win or a loss (+-1) is unchanged; the map is monotone in
 * v[s] for c < 1 and convex, so a subtree of mixed wins and losses is worth more to s
 * than one of draws with the same mean. */
void mcts_contempt_value(float c, int s, const float *v, float *out);

/* Copies the mcts config section into p; noise = false, capacities automatic. */
void mcts_params_from_config(mcts_params *p, const struct cfg_mcts *c);

/* KataGo's policy target pruning over n root children (arrays of n): prior, q (mean
 * value from the root mover's view, of the visited children) and visits (this search's
 * playouts; rewritten in place). best = the most visited child; for every other child
 * c, as many of its playouts as forced playouts could have added (sqrt(k P(c) N), N =
 * the sum of visits) are removed while PUCT (c_puct, sqrt(N) / (1 + n)) would still
 * rank c below best; a child left with a single playout loses it. Returns the playouts
 * removed. Pure function (no tree): tested on hand-made numbers. */
int mcts_prune_policy(int n, const float *prior, const float *q, float *visits, float c_puct,
                      float k);

/* LCB move choice over n root children (arrays of n): visits, q (mean value from the
 * root mover's view), sq (the sum of the squared backed-up values from that view) and
 * exact (1: a proven child, its q is exact: no uncertainty). A child's variance is its
 * sample variance shrunk toward 1 (the largest a value in [-1, 1] can have about mean 0)
 * by one pseudo-visit: (sq - visits q^2 + 1) / (visits + 1); its bound is q - z *
 * sqrt(variance / visits). Only children with visits >= max(2, min_fraction * the most
 * visits) compete (an exact child needs only one visit); the most visited child always
 * does. Returns the index of the highest bound (ties: more visits, then lower index), or
 * -1 when no child has visits. Pure function: tested on hand-made numbers. */
int mcts_lcb_select(int n, const float *visits, const float *q, const float *sq,
                    const uint8_t *exact, float z, float min_fraction);

/* Settings for pure MCTS (the rollout or random evaluator: uniform priors): sets
 * fpu_absolute with fpu_value 1, so every move is tried once before any is tried twice.
 * Measured: on Gomoku 15x15 with 1,000 rollout simulations it beats the reduction FPU
 * 9 games of 10. Turns gumbel off. Call after mcts_params_from_config. */
void mcts_params_pure(mcts_params *p);

/* Search statistics of the last search (since mcts_begin). */
typedef struct mcts_stats {
    int simulations;        /* playouts backed up (terminal/proven leaves included) */
    int root_visits;        /* the root's visit count (includes reused visits) */
    int32_t nodes;          /* nodes in use in the arena */
    int64_t edges;          /* edges in use in the arena */
    int max_depth;          /* deepest leaf reached, in plies below the root */
    int evaluator_calls;    /* evaluator calls this tree took part in */
    int evaluated;          /* leaves this tree sent to the evaluator */
    int collisions;         /* descents that reached a leaf already pending in the batch
                             * (discarded, see mcts.c) */
    double seconds;         /* wall time from mcts_begin to mcts_finish */
    bool proven;            /* the root's outcome is proven (solver) */
    bool arena_full;        /* the arena filled up: the search stopped expanding */
    int gumbel_fallbacks;   /* descents where the Gumbel rules named no move and PUCT chose */
    int pi_visits;          /* playouts behind pi (fresh_pi: this search's only; after
                             * policy pruning); 0 when pi is not built from visits */
} mcts_stats;

/* What a search decided. */
typedef struct mcts_result {
    int action;                     /* the move to play */
    float value[GAME_MAX_PLAYERS];  /* root value per absolute player (mean of backed-up
                                     * values, or the proven outcome) */
    bool proven;                    /* value is a proven outcome */
    mcts_stats stats;
} mcts_result;

/* One root child (or any node's child), for tests, hints and logging. */
typedef struct mcts_child_info {
    int action;
    int32_t node;           /* child node id, -1 when never visited */
    float prior;            /* prior (with root noise if it was applied) */
    int visits;
    float q;                /* mean value from the view of the player who chose the move
                             * (scored games: reward + mean points to come); 0 when
                             * visits == 0 */
    float value[GAME_MAX_PLAYERS]; /* mean value per absolute player; 0 when unvisited */
    bool proven;
    float proven_value[GAME_MAX_PLAYERS]; /* the proven outcome when proven */
} mcts_child_info;

typedef struct mcts mcts;              /* opaque: one search tree */
typedef struct mcts_batch mcts_batch;  /* opaque: leaf buffers for one evaluator call */

#define MCTS_ROOT 0 /* node id of the root */

/* A tree for game g (borrowed; outlives the tree) with settings p (copied), its rng
 * seeded with seed, and the root set to g's start position (game_init with that rng).
 * Automatic capacities: max_nodes = 2 * (simulations + batch) + 64 (one search creates
 * at most one node per playout; the factor 2 leaves room for a reused subtree) and
 * max_edges = max_nodes * actions (or the most chance outcomes, if more), so a search
 * never runs out of edges. Memory: 48 bytes a node, 8 an edge, reserved (only what the
 * tree uses is touched): Gomoku 15x15, 800 simulations, batch 16: at most 3 MB a tree. Returns NULL with a message in
 * err on bad params or out of memory. Free with mcts_free. */
mcts *mcts_new(const game *g, const mcts_params *p, uint64_t seed, char *err, size_t errlen);
/* Accepts NULL. */
void mcts_free(mcts *t);

/* Discards the tree and makes s (copied) the root position. */
void mcts_set_root(mcts *t, const game_state *s);
/* Makes s the root, keeping the subtree of the node that has s as its position when it
 * is a child of the root, or a grandchild through a chance node (the root's move and the
 * spawn that followed: how a player follows a game whose chance events someone else
 * draws), with reuse_tree; otherwise as mcts_set_root. */
void mcts_set_root_near(mcts *t, const game_state *s);
/* Plays action at the root: with reuse_tree, the child's subtree becomes the new tree
 * (compacted in place, see mcts.c), otherwise the tree is discarded. Returns 0, or -1
 * if the action is illegal (tree unchanged). */
int mcts_play(mcts *t, int action);
/* The root position (borrowed, valid until the next mcts_set_root/mcts_play). */
const game_state *mcts_root_state(const mcts *t);

/* Starts a search at the current root: resets stats and the playout count, applies
 * root noise if asked (once per root). The root must not be terminal. */
void mcts_begin(mcts *t);
/* True when the current search needs no more steps: simulations reached, root proven,
 * or the arena full. */
bool mcts_done(const mcts *t);
/* Ends the search: writes pi[actions] (may be NULL): the visit distribution over
 * actions, 0 on illegal moves, summing to 1 (one-hot on the proven move when the root
 * is a proven win; proven-losing moves get 0 when there is an alternative), chooses the
 * action (temperature phase: sampled from pi with the tree's rng; later: most visited,
 * ties by higher Q then lower action index; a proven root plays its proven move) and
 * fills res. */
void mcts_finish(mcts *t, float *pi, mcts_result *res);

/* Leaf buffers for up to `capacity` leaves of game g per evaluator call (for many
 * trees: ntrees * params.batch lets every tree contribute fully to every call; a
 * smaller capacity is shared fairly by rotating the first tree). Owned: free with
 * mcts_batch_free. NULL when out of memory. */
mcts_batch *mcts_batch_new(const game *g, int capacity);
void mcts_batch_free(mcts_batch *b);

/* One step over many trees of the same game: gathers up to params.batch leaves from
 * each tree that is not done (starting from a rotating tree so that a too-small batch
 * is fair), evaluates all gathered leaves with one evaluator call (none if every leaf
 * was terminal or proven), backs up. Returns the number of leaves evaluated (>= 0), or
 * -1 with the evaluator's message in err (the trees stay consistent: pending visits
 * are undone and the leaves left unexpanded). */
int mcts_step_many(mcts *const *trees, int ntrees, mcts_batch *b, evaluator *e, char *err,
                   size_t errlen);

/* A whole search of one tree: begin, step until done, finish (pi may be NULL).
 * Returns 0, or -1 with a message in err (evaluator failure, terminal root). */
int mcts_search(mcts *t, evaluator *e, float *pi, mcts_result *res, char *err, size_t errlen);

/* The root's visit count. */
int mcts_root_visits(const mcts *t);
/* Writes the children of node (MCTS_ROOT or an id from mcts_child_info.node) into
 * out[max], in action order; returns how many there are (0 for an unexpanded node). A
 * chance node's children are its outcomes: action = the outcome id, prior = its
 * probability, q from player 0's view. In a scored game q is the edge's Q in points
 * (the move's reward + the child's mean points to come); value stays the child's mean. */
int mcts_children(const mcts *t, int32_t node, mcts_child_info *out, int max);
/* One decision node of the tree, as mcts_export hands it out (all borrowed, valid during
 * the callback only). */
typedef struct mcts_node_sample {
    const game_state *state; /* the node's position */
    int depth;               /* plies below the root (chance events do not count) */
    int visits;              /* the node's visit count */
    const float *pi;         /* [actions] its children's share of the visits */
    const uint8_t *legal;    /* [actions] its legal moves */
    float value[GAME_MAX_PLAYERS]; /* mean backed-up value (scored: points to come) */
    float best;              /* track_best: the highest points to come (player 0) backed up
                              * through the node: the best score reached after it, less
                              * the score it had; -FLT_MAX without track_best */
    const float *best_after; /* [actions] track_best: per move, the points it gains plus
                              * the best points to come after it; -FLT_MAX for moves
                              * never visited */
} mcts_node_sample;

/* Calls fn for every decision node (not chance nodes, not terminal ones) with at least
 * min_visits (>= 1) visits and a visited child, in node order (the root first). Stops
 * when fn returns nonzero and returns that value; returns 0 after all, or -1 when out
 * of memory (one buffer of states for the tree, allocated per call: not a
 * per-simulation path). */
int mcts_export(mcts *t, int min_visits, int (*fn)(void *ctx, const mcts_node_sample *ns),
                void *ctx);

/* The current parameters (borrowed). */
const mcts_params *mcts_get_params(const mcts *t);
/* Changes the playouts of the following searches (>= 1), e.g. for KataGo's playout-cap
 * randomisation or a player's own count. The arena keeps the size mcts_new gave it:
 * more simulations than it was sized for may fill it (stats.arena_full). */
void mcts_set_simulations(mcts *t, int simulations);
/* Switches the root noise (and with it the root policy temperature and forced
 * playouts, which are self-play devices) on or off for the following searches, e.g. off
 * for the fast searches of playout cap randomisation. */
void mcts_set_noise(mcts *t, bool noise);

#endif
