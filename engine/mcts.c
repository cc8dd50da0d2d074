/* mcts.c — PUCT search with batched leaves, virtual loss, MCTS-solver and tree reuse.
 *
 * Tree layout (Leela-style compact edges). Nodes live in one preallocated array indexed
 * by int32; a node's edges (one per legal move: prior, action, child index or -1) are a
 * contiguous range of one preallocated edge array. A child node is allocated the first
 * time its edge is traversed, together with its own edge range (its legal moves), so
 * two invariants hold and the compaction below relies on them:
 *   (1) a child's index is larger than its parent's;
 *   (2) edge ranges are laid out in node-index order.
 * The per-node statistics are the sum of backed-up value vectors (absolute players),
 * the visit count and the pending (in-flight) visit count. The Q of edge (x -> c) for
 * the player m who moves at x is c.w[m] / c.n.
 *
 * One simulation descends from the root by PUCT with virtual loss, playing the moves on
 * a copy of the root state in the batch's leaf slot, until it reaches
 *   - a proven node (terminal, or proven by the solver): its exact outcome vector is
 *     backed up at once, no evaluator call;
 *   - a new node (allocated, never evaluated): queued in the batch; pending visits are
 *     added along the path (virtual loss) until the batch is evaluated;
 *   - a node already queued in this batch (a collision, the duplicate-leaf case): the
 *     descent is discarded (no visit counted, nothing pending) and gathering from this
 *     tree stops for this step, as lc0 does; the next step sees the evaluated leaf. So a
 *     duplicate is never evaluated twice and never counted twice.
 *
 * MCTS-solver (`solver`), for 1, 2 and 3 players. A proven node carries an exact outcome
 * vector pz[players]. Terminal nodes are proven with game_result. When the game has a
 * winning_move hook, a new node whose mover has an immediate win is proven at once with
 * the outcome of playing it (no evaluator call); so a move that allows the opponent an
 * immediate win is proven (losing for its mover) as soon as its node is created. A node
 * x with mover m becomes proven when
 *   - one of its children is proven with pz[m] == 1 (the best outcome there is; the
 *     first such child to be proven gives x its pz and its move), or
 *   - all of its children are proven: x takes the proven child best for m (largest
 *     pz[m]; ties: first in action order). For two players that is "all children lose
 *     => lost" and "a draw is the best => draw"; for three players it is max-n.
 * Selection skips children proven with pz[m] == -1 (the worst outcome) and uses the
 * exact pz[m] as the Q of other proven children; a node with a winning child is itself
 * proven, so it is never selected through. The search stops when the root is proven and
 * plays the proven move. With solver off, terminals are still scored exactly but
 * nothing propagates and winning_move is not used.
 *
 * Threat checks (vcf_root, vcf_leaf, vcf_defend; games with the threat hooks): the tree
 * owns one threat workspace made by mcts_new. With vcf_leaf, node_setup proves a node
 * whose mover has a VCF (as winning_move does for an immediate win: no edges, no
 * evaluator call); with vcf_defend, a node whose mover faces the opponent's VCF gets
 * edges only for the moves that defend it (so "all children lost" there means "lost to
 * the VCF", within the defence set's heuristic, see threat.h); with vcf_root,
 * mcts_begin proves the root won when its mover has a VCF.
 *
 * Chance nodes (games with chance events, game.h; 2048's tile spawns). A node whose
 * position is a chance state has mover -1 ("nature"): one edge per outcome, the
 * outcome's probability stored as the edge's prior, and no evaluator call (it is
 * expanded when created). The descent chooses its outcome by deterministic stratified
 * sampling (select_outcome: the outcome whose visit share lags its probability most),
 * so the visits track the probabilities within about one visit and the node's plain
 * mean is the expectation over the outcomes. Enumerating every outcome as an edge costs
 * 8 bytes each (2048 on 4x4: at most 32) and the children are created lazily; drawing
 * outcomes at random (Stochastic MuZero) would add sampling noise for nothing. A chance
 * node is never proven and never the root (mcts_play draws the outcomes with the
 * tree's rng and keeps the drawn outcome's subtree).
 *
 * Scores (games with game_ops.score: 2048). Each node keeps, beside its statistics,
 * the points gained on the edge into it (reward[], a parallel array allocated only for
 * such games, so other games' nodes stay 48 bytes). Values are points still to come:
 * backup() adds each edge's reward as it climbs, so a node's mean is the expected
 * points from its own position, and an edge's Q = reward + the child's mean. Q is
 * unbounded, so PUCT reads it normalised to [0, 1] by the smallest and largest Q seen
 * in this search (MuZero's min-max); a pending visit counts as 0 there (virtual loss);
 * FPU and the fpu_value of pure MCTS are in the same [0, 1] scale. Terminal nodes have
 * no points to come. The solver is off: there are no outcomes to prove. With
 * track_best, every node also keeps the highest return backed up through it (seed
 * 003's "best score reached after it"), which mcts_export hands out with the nodes.
 *
 * Tree reuse: mcts_play re-roots at the chosen child and compacts the arena in place:
 * one sweep in index order keeps a node when it is the new root or its parent was kept
 * (invariant 1 makes this a single pass), moving it and its edge range down to the next
 * free slots (invariant 2 makes every move go downwards, so memmove in place is safe);
 * a second pass rewrites child and parent indices through the remap table. Cost: linear
 * in the nodes in use, once per move; no second buffer. The subtree is kept only if a
 * full search still fits after it; otherwise the tree starts afresh.
 */
#include "mcts.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"

enum { NODE_NEW = 0, NODE_PENDING = 1, NODE_EXPANDED = 2 };

typedef struct mnode {
    float w[GAME_MAX_PLAYERS];  /* sum of backed-up values, absolute players */
    float pz[GAME_MAX_PLAYERS]; /* the proven outcome, when proven */
    int32_t n;                  /* completed visits */
    int32_t pending;            /* visits in flight (virtual loss) */
    int32_t parent;             /* -1 at the root */
    int32_t first_edge;         /* -1: no edges (proven at creation, or no room) */
    int16_t nedges;
    int16_t best;               /* proven: the move that achieves pz; -1 none */
    int8_t mover;               /* player to move here */
    uint8_t status;             /* NODE_NEW / NODE_PENDING / NODE_EXPANDED */
    uint8_t proven;
    uint8_t terminal;
} mnode;

/* 8 bytes: the prior is stored in 16 bits as lc0 does (the float's bits shifted: an
 * 11-bit mantissa, about 0.05% relative error, exact range [2^-31, 1]). */
typedef struct medge {
    int32_t child;   /* -1 until first traversed */
    uint16_t action;
    uint16_t prior;  /* edge_prior() / edge_set_prior() */
} medge;

_Static_assert(sizeof(medge) == 8, "edges are 8 bytes");
_Static_assert(sizeof(mnode) == 48, "nodes are 48 bytes");

/* p is clamped to [0, 1] (NaN gives 0). */
static inline void edge_set_prior(medge *e, float p)
{
    p = p > 0.0f ? (p < 1.0f ? p : 1.0f) : 0.0f;
    int32_t bits;
    memcpy(&bits, &p, sizeof bits);
    bits += (1 << 11) - (3 << 28); /* round, and move the exponent range down */
    e->prior = bits < 0 ? 0 : (uint16_t)(bits >> 12);
}

static inline float edge_prior(const medge *e)
{
    uint32_t bits = ((uint32_t)e->prior << 12) | (3u << 28);
    float p;
    memcpy(&p, &bits, sizeof p);
    return p;
}

struct mcts {
    /* immutable after mcts_new */
    const game *g;
    mcts_params p;
    int P, A;
    int32_t cap_nodes;
    int64_t cap_edges;
    /* arena and scratch, allocated once */
    mnode *nodes;       /* [cap_nodes] */
    medge *edges;       /* [cap_edges] */
    int32_t *remap;     /* [cap_nodes] compaction scratch */
    float *noise;       /* [actions] Dirichlet scratch */
    int32_t *base;      /* [actions] root child visits at mcts_begin, by root edge index */
    float *tgt;         /* [4 * actions] policy-target scratch by root edge: visits, priors,
                         * q, and the root's network priors saved before the noise */
    float *pit;         /* [actions] the policy target */
    uint8_t *mask;      /* [actions] legal-mask scratch */
    game_state *root_state;
    game_state *scratch;
    game_state *scratch2; /* mcts_set_root_near's second state */
    mcts_batch *own;    /* for mcts_search: capacity p.batch */
    void *threat;       /* the game's threat workspace, NULL when no vcf_* is on */
    uint8_t *defend;    /* [actions] vcf_defend scratch */
    bool chance;        /* the game has chance events: chance nodes (mover -1) */
    bool scored;        /* the game keeps a score: rewards per edge, values are points to
                         * come, Q normalised min-max for PUCT */
    float *reward;      /* [cap_nodes * P] scored: points gained on the edge into a node */
    float *best;        /* [cap_nodes] track_best: highest return backed up through a node */
    float *sq;          /* [cap_nodes] lcb_stdevs (not scored): sum of the squared values
                         * backed up through a node, from its parent's mover's view */
    int *cout;          /* [max_chance] chance outcomes scratch */
    float *cprob;       /* [max_chance] their probabilities */
    /* mutated */
    rng r;
    int32_t nnodes;
    int64_t nedges_used;
    bool root_noised;
    bool full;
    int sims;           /* playouts backed up in this search */
    uint64_t step_stamp; /* last batch step this tree contributed leaves to */
    float qmin, qmax;   /* scored: the range of the Q values seen this search (MuZero) */
    int cplayer;        /* contempt: the searching player (root mover at mcts_begin), -1 */
    struct timespec t0;
    mcts_stats st;
};

struct mcts_batch {
    const game *g;
    int cap, n;
    int start;            /* rotating first tree */
    uint64_t stamp;       /* step counter */
    unsigned char *states; /* [cap][state_size] leaf states */
    const game_state **ptrs; /* [cap] */
    uint64_t *keys;       /* [cap] */
    uint8_t *legal;       /* [cap][actions] */
    float *priors;        /* [cap][actions] */
    float *values;        /* [cap][players] */
    mcts **tree;          /* [cap] owner of each leaf */
    int32_t *node;        /* [cap] leaf node in its tree */
};

void mcts_params_from_config(mcts_params *p, const cfg_mcts *c)
{
    memset(p, 0, sizeof *p);
    p->simulations = c->simulations;
    p->c_puct = (float)c->c_puct;
    p->fpu_reduction = (float)c->fpu_reduction;
    p->noise = false;
    p->dirichlet_alpha = (float)c->dirichlet_alpha;
    p->dirichlet_eps = (float)c->dirichlet_eps;
    p->temperature_moves = c->temperature_moves;
    p->batch = c->batch;
    p->virtual_loss = (float)c->virtual_loss;
    p->solver = c->solver;
    p->reuse_tree = c->reuse_tree;
    p->max_nodes = 0;
    p->max_edges = 0;
    p->fpu_absolute = false;
    p->fpu_value = 0.0f;
    p->vcf_root = c->vcf_root;
    p->vcf_leaf = c->vcf_leaf;
    p->vcf_defend = c->vcf_defend;
    p->vct_root = c->vct_root;
    p->dirichlet_total = (float)c->dirichlet_total;
    p->root_policy_temp = (float)c->root_policy_temp;
    p->forced_playouts = (float)c->forced_playouts;
    p->policy_pruning = c->policy_pruning;
    p->fresh_pi = c->fresh_pi;
    p->completed_q = !strcmp(c->policy_target, "completed_q");
    p->lcb_stdevs = (float)c->lcb_stdevs;
    p->lcb_min_fraction = (float)c->lcb_min_fraction;
    p->contempt = (float)c->contempt;
}

void mcts_contempt_value(float c, int s, const float *v, float *out)
{
    float x = v[s];
    float y = x - c * (1.0f - fabsf(x));
    out[s] = y;
    out[1 - s] = -y;
}

/* The value vector v of a node as the search reads it: v itself, or with contempt on,
 * v through mcts_contempt_value for the searching player. */
static inline const float *search_value(const mcts *t, const float *v, float *buf)
{
    if (t->cplayer < 0)
        return v;
    mcts_contempt_value(t->p.contempt, t->cplayer, v, buf);
    return buf;
}

void mcts_params_pure(mcts_params *p)
{
    p->fpu_absolute = true;
    p->fpu_value = 1.0f;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double elapsed(const mcts *t)
{
    return now_seconds() - ((double)t->t0.tv_sec + 1e-9 * (double)t->t0.tv_nsec);
}

/* ---- batch -------------------------------------------------------------------- */

mcts_batch *mcts_batch_new(const game *g, int capacity)
{
    assert(capacity >= 1);
    mcts_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    size_t cap = (size_t)capacity, A = (size_t)g->actions;
    b->g = g;
    b->cap = capacity;
    b->states = malloc(cap * g->state_size);
    b->ptrs = malloc(cap * sizeof *b->ptrs);
    b->keys = malloc(cap * sizeof *b->keys);
    b->legal = malloc(cap * A);
    b->priors = malloc(cap * A * sizeof(float));
    b->values = malloc(cap * (size_t)g->players * sizeof(float));
    b->tree = malloc(cap * sizeof *b->tree);
    b->node = malloc(cap * sizeof *b->node);
    if (!b->states || !b->ptrs || !b->keys || !b->legal || !b->priors || !b->values || !b->tree ||
        !b->node) {
        mcts_batch_free(b);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++)
        b->ptrs[i] = (const game_state *)(b->states + i * g->state_size);
    return b;
}

void mcts_batch_free(mcts_batch *b)
{
    if (!b)
        return;
    free(b->states);
    free(b->ptrs);
    free(b->keys);
    free(b->legal);
    free(b->priors);
    free(b->values);
    free(b->tree);
    free(b->node);
    free(b);
}

/* ---- nodes -------------------------------------------------------------------- */

enum { MCTS_VCF_PV = 64, MCTS_DEFEND_BUDGET = 1000, MCTS_VCT_DEPTH = 6 };

/* vcf_leaf / vcf_root: if the mover of s has a VCF within budget nodes, X becomes a
 * proven win for him (two players) with the line's first move. */
static bool vcf_prove(mcts *t, mnode *X, const game_state *s, int budget, int vct_depth)
{
    const game *g = t->g;
    int pv[MCTS_VCF_PV];
    if (g->players != 2 ||
        g->ops->threat_win(g, s, t->threat, budget, vct_depth, pv, MCTS_VCF_PV) <= 0)
        return false;
    int m = game_current_player(g, s);
    X->pz[m] = 1.0f;
    X->pz[1 - m] = -1.0f;
    X->proven = 1;
    X->best = (int16_t)pv[0];
    X->status = NODE_EXPANDED;
    return true;
}

/* vcf_defend: keeps in t->mask (nl legal moves) only the moves that answer the
 * opponent's VCF, when he has one and something answers it. Returns the new count. */
static int vcf_restrict(mcts *t, const game_state *s, int nl)
{
    const game *g = t->g;
    int budget = t->p.vcf_leaf > 0 ? t->p.vcf_leaf : MCTS_DEFEND_BUDGET;
    if (g->ops->threat_defend(g, s, t->threat, budget, t->defend) <= 0)
        return nl;
    int n = 0;
    for (int a = 0; a < t->A; a++) {
        t->mask[a] &= t->defend[a];
        n += t->mask[a];
    }
    return n > 0 ? n : game_legal(g, s, t->mask);
}

/* Initialises node x for position s (reached by `parent`): terminal and winning-move
 * proofs, or an edge range for its legal moves. Returns 0, or -1 when the edge array
 * has no room (then nothing is reserved and the node must be given back). */
static int node_setup(mcts *t, int32_t x, int32_t parent, const game_state *s)
{
    const game *g = t->g;
    mnode *X = &t->nodes[x];
    memset(X, 0, sizeof *X);
    X->parent = parent;
    X->first_edge = -1;
    X->best = -1;
    X->status = NODE_NEW;
    if (t->scored) {
        for (int p = 0; p < t->P; p++)
            t->reward[(size_t)x * t->P + p] = 0.0f; /* the caller sets the edge's points */
        if (t->best)
            t->best[x] = -FLT_MAX;
    }
    if (t->sq)
        t->sq[x] = 0.0f;
    if (game_terminal(g, s)) {
        X->mover = (int8_t)0;
        X->terminal = 1;
        X->proven = 1;
        X->status = NODE_EXPANDED;
        if (t->scored)
            memset(X->pz, 0, sizeof X->pz); /* no points to come after the end */
        else
            game_result(g, s, X->pz);
        return 0;
    }
    if (t->chance && game_is_chance(g, s)) {
        /* a chance node: one edge per outcome, its probability as the prior; nothing to
         * evaluate (its value is the mean of its children's) */
        int n = g->ops->chance_outcomes(g, s, t->cout, t->cprob);
        assert(n > 0 && n <= g->max_chance);
        if (t->nedges_used + n > t->cap_edges)
            return -1;
        assert(x == t->nnodes - 1 || (x == 0 && t->nedges_used == 0));
        medge *e = t->edges + t->nedges_used;
        X->mover = -1;
        X->first_edge = (int32_t)t->nedges_used;
        X->nedges = (int16_t)n;
        X->status = NODE_EXPANDED;
        for (int k = 0; k < n; k++) {
            e[k].child = -1;
            e[k].action = (uint16_t)t->cout[k];
            edge_set_prior(&e[k], t->cprob[k]);
        }
        t->nedges_used += n;
        return 0;
    }
    X->mover = (int8_t)game_current_player(g, s);
    if (t->p.solver && g->ops->winning_move) {
        int wm = g->ops->winning_move(g, s);
        if (wm >= 0) {
            game_copy(g, t->scratch, s);
            int rc = game_play(g, t->scratch, wm);
            assert(rc == 0);
            (void)rc;
            game_result(g, t->scratch, X->pz);
            X->proven = 1;
            X->best = (int16_t)wm;
            X->status = NODE_EXPANDED;
            return 0;
        }
    }
    if (t->threat && t->p.solver && t->p.vcf_leaf > 0 && vcf_prove(t, X, s, t->p.vcf_leaf, 0))
        return 0;
    int nl = game_legal(g, s, t->mask);
    assert(nl > 0);
    if (t->threat && t->p.vcf_defend)
        nl = vcf_restrict(t, s, nl);
    if (t->nedges_used + nl > t->cap_edges)
        return -1;
    /* invariant 2: edge ranges in node-index order */
    assert(x == t->nnodes - 1 || (x == 0 && t->nedges_used == 0));
    medge *e = t->edges + t->nedges_used;
    X->first_edge = (int32_t)t->nedges_used;
    X->nedges = (int16_t)nl;
    for (int a = 0, k = 0; a < t->A; a++)
        if (t->mask[a]) {
            e[k].child = -1;
            e[k].action = (uint16_t)a;
            e[k].prior = 0;
            k++;
        }
    t->nedges_used += nl;
    return 0;
}

static void reset_tree(mcts *t)
{
    t->nnodes = 1;
    t->nedges_used = 0;
    t->root_noised = false;
    if (node_setup(t, 0, -1, t->root_state) < 0)
        t->full = true; /* root left without edges; mcts_finish falls back to uniform */
}

/* ---- public: life cycle ----------------------------------------------------------- */

mcts *mcts_new(const game *g, const mcts_params *p, uint64_t seed, char *err, size_t errlen)
{
    if (p->simulations < 1 || p->batch < 1 || p->c_puct < 0 || p->virtual_loss < 0 ||
        (p->noise && (p->dirichlet_alpha <= 0 || p->dirichlet_eps < 0 || p->dirichlet_eps > 1)) ||
        p->max_nodes < 0 || p->max_edges < 0 || (p->max_nodes > 0 && p->max_nodes < 2) ||
        !(p->contempt >= 0.0f && p->contempt < 1.0f)) {
        snprintf(err, errlen, "mcts: bad parameters (simulations >= 1, batch >= 1, c_puct >= 0, "
                              "virtual_loss >= 0, dirichlet_alpha > 0, dirichlet_eps in [0, 1], "
                              "max_nodes 0 or >= 2, max_edges >= 0, contempt in [0, 1))");
        return NULL;
    }
    mcts *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "mcts: out of memory");
        return NULL;
    }
    t->g = g;
    t->p = *p;
    t->P = g->players;
    t->A = g->actions;
    t->chance = g->max_chance > 0;
    t->scored = game_scored(g);
    t->cplayer = -1;
    if (t->scored || t->P != 2)
        t->p.contempt = 0.0f; /* draws against one opponent only */
    if (t->scored)
        t->p.solver = false; /* proofs are about outcomes; a score game has points to come */
    int64_t nodes = p->max_nodes;
    if (nodes == 0) {
        /* a descent through a new chance node makes two nodes */
        nodes = (t->chance ? 4 : 2) * ((int64_t)p->simulations + p->batch) + 64;
        if (nodes > INT32_MAX / 2)
            nodes = INT32_MAX / 2;
    }
    int64_t edges = p->max_edges;
    if (edges == 0) {
        int per = t->A < 256 ? t->A : 256;
        edges = nodes * (g->max_chance > per ? g->max_chance : per);
    }
    if (edges > INT32_MAX)
        edges = INT32_MAX;
    t->cap_nodes = (int32_t)nodes;
    t->cap_edges = edges;
    t->nodes = malloc((size_t)nodes * sizeof *t->nodes);
    t->edges = malloc((size_t)(edges > 0 ? edges : 1) * sizeof *t->edges);
    t->remap = malloc((size_t)nodes * sizeof *t->remap);
    t->noise = malloc((size_t)t->A * sizeof *t->noise);
    t->base = calloc((size_t)t->A, sizeof *t->base);
    t->tgt = malloc(4 * (size_t)t->A * sizeof *t->tgt);
    t->pit = malloc((size_t)t->A * sizeof *t->pit);
    t->mask = malloc((size_t)t->A);
    t->root_state = malloc(g->state_size);
    t->scratch = malloc(g->state_size);
    t->scratch2 = malloc(g->state_size);
    t->own = mcts_batch_new(g, p->batch);
    bool extra_ok = true;
    if (t->scored) {
        t->reward = malloc((size_t)nodes * (size_t)t->P * sizeof *t->reward);
        extra_ok = t->reward != NULL;
        if (p->track_best) {
            t->best = malloc((size_t)nodes * sizeof *t->best);
            extra_ok = extra_ok && t->best;
        }
    }
    if (p->lcb_stdevs > 0 && !t->scored) {
        t->sq = malloc((size_t)nodes * sizeof *t->sq);
        extra_ok = extra_ok && t->sq;
    }
    if (t->chance) {
        t->cout = malloc((size_t)g->max_chance * sizeof *t->cout);
        t->cprob = malloc((size_t)g->max_chance * sizeof *t->cprob);
        extra_ok = extra_ok && t->cout && t->cprob;
    }
    if (!t->nodes || !t->edges || !t->remap || !t->noise || !t->base || !t->tgt || !t->pit ||
        !t->mask || !t->root_state || !t->scratch || !t->scratch2 || !t->own || !extra_ok) {
        mcts_free(t);
        snprintf(err, errlen, "mcts: out of memory (%lld nodes, %lld edges)", (long long)nodes,
                 (long long)edges);
        return NULL;
    }
    if ((p->vcf_root > 0 || p->vcf_leaf > 0 || p->vcf_defend || p->vct_root > 0) &&
        g->ops->threat_new) {
        /* 2^14 entries (256 KB) a tree: self-play keeps many trees */
        char terr[256];
        t->threat = g->ops->threat_new(g, 14, terr, sizeof terr);
        t->defend = malloc((size_t)t->A);
        if (!t->threat || !t->defend) {
            snprintf(err, errlen, "mcts: mcts.vcf_*/vct_root: %s", t->threat ? "out of memory" : terr);
            mcts_free(t);
            return NULL;
        }
    }
    rng_seed(&t->r, seed);
    game_init(g, t->root_state, &t->r);
    reset_tree(t);
    return t;
}

void mcts_free(mcts *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->edges);
    free(t->remap);
    free(t->noise);
    free(t->base);
    free(t->tgt);
    free(t->pit);
    free(t->mask);
    free(t->root_state);
    free(t->scratch);
    free(t->scratch2);
    mcts_batch_free(t->own);
    if (t->threat)
        t->g->ops->threat_free(t->threat);
    free(t->defend);
    free(t->reward);
    free(t->best);
    free(t->sq);
    free(t->cout);
    free(t->cprob);
    free(t);
}

void mcts_set_root(mcts *t, const game_state *s)
{
    assert(!game_is_chance(t->g, s)); /* the root is a decision: resolve chance first */
    game_copy(t->g, t->root_state, s);
    t->full = false;
    reset_tree(t);
}

const game_state *mcts_root_state(const mcts *t)
{
    return t->root_state;
}

const mcts_params *mcts_get_params(const mcts *t)
{
    return &t->p;
}

void mcts_set_simulations(mcts *t, int simulations)
{
    assert(simulations >= 1);
    t->p.simulations = simulations;
}

void mcts_set_noise(mcts *t, bool noise)
{
    assert(!noise || t->p.dirichlet_alpha > 0 || t->p.dirichlet_total > 0);
    t->p.noise = noise;
}

int mcts_root_visits(const mcts *t)
{
    return t->nodes[0].n;
}

/* Re-roots the tree at node c (see the header comment: in-place compaction). */
static void compact(mcts *t, int32_t c)
{
    for (int32_t i = 0; i < t->nnodes; i++)
        t->remap[i] = -1;
    int32_t j = 0;
    int64_t e = 0;
    for (int32_t i = c; i < t->nnodes; i++) {
        mnode X = t->nodes[i];
        bool keep = i == c || (X.parent >= 0 && t->remap[X.parent] >= 0);
        if (!keep)
            continue;
        t->remap[i] = j;
        if (X.first_edge >= 0) {
            assert(e <= X.first_edge);
            memmove(t->edges + e, t->edges + X.first_edge, (size_t)X.nedges * sizeof(medge));
            X.first_edge = (int32_t)e;
            e += X.nedges;
        }
        X.parent = i == c ? -1 : t->remap[X.parent];
        if (t->reward)
            memmove(t->reward + (size_t)j * t->P, t->reward + (size_t)i * t->P,
                    sizeof(float) * (size_t)t->P);
        if (t->best)
            t->best[j] = t->best[i];
        if (t->sq)
            t->sq[j] = t->sq[i];
        t->nodes[j++] = X;
    }
    for (int32_t k = 0; k < j; k++) {
        mnode *X = &t->nodes[k];
        for (int i = 0; X->first_edge >= 0 && i < X->nedges; i++) {
            medge *ed = &t->edges[X->first_edge + i];
            if (ed->child >= 0)
                ed->child = t->remap[ed->child];
        }
    }
    t->nnodes = j;
    t->nedges_used = e;
    if (t->reward)
        memset(t->reward, 0, sizeof(float) * (size_t)t->P); /* the root has no edge in */
}

/* Counts the nodes of the subtree under c (inclusive), using the same single sweep. */
static int32_t subtree_size(mcts *t, int32_t c, int64_t *edges)
{
    for (int32_t i = 0; i < t->nnodes; i++)
        t->remap[i] = -1;
    int32_t cnt = 0;
    *edges = 0;
    for (int32_t i = c; i < t->nnodes; i++) {
        const mnode *X = &t->nodes[i];
        if (i == c || (X->parent >= 0 && t->remap[X->parent] >= 0)) {
            t->remap[i] = 1;
            cnt++;
            if (X->first_edge >= 0)
                *edges += X->nedges;
        }
    }
    return cnt;
}

/* The child of node x along the edge with this action (or outcome), -1 when none. */
static int32_t child_by_action(const mcts *t, int32_t x, int action)
{
    const mnode *X = &t->nodes[x];
    for (int i = 0; X->first_edge >= 0 && i < X->nedges; i++)
        if (t->edges[X->first_edge + i].action == action)
            return t->edges[X->first_edge + i].child;
    return -1;
}

/* Re-roots at node c (a descendant of the root whose position is the new root state,
 * already copied) when reuse_tree is on and a full search still fits after it; else the
 * tree starts afresh. */
static void reroot(mcts *t, int32_t c)
{
    if (t->p.reuse_tree && c > 0 && t->nodes[c].status != NODE_PENDING) {
        int64_t sub_edges;
        int32_t sub = subtree_size(t, c, &sub_edges);
        int64_t room = ((int64_t)t->p.simulations + t->p.batch + 1) * (t->chance ? 2 : 1);
        int per = t->nodes[c].first_edge >= 0 ? t->nodes[c].nedges : 1;
        if (t->chance && per < t->g->max_chance)
            per = t->g->max_chance;
        if (sub + room <= t->cap_nodes && sub_edges + room * per <= t->cap_edges) {
            compact(t, c);
            t->root_noised = false;
            return;
        }
    }
    reset_tree(t);
}

void mcts_set_root_near(mcts *t, const game_state *s)
{
    const game *g = t->g;
    assert(!game_is_chance(g, s));
    const mnode *R = &t->nodes[0];
    int32_t found = -1;
    for (int i = 0; R->first_edge >= 0 && i < R->nedges && found < 0; i++) {
        const medge *e = &t->edges[R->first_edge + i];
        if (e->child < 0)
            continue;
        game_copy(g, t->scratch, t->root_state);
        if (game_play(g, t->scratch, e->action) < 0)
            continue;
        if (!memcmp(t->scratch, s, g->state_size)) {
            found = e->child;
            break;
        }
        const mnode *C = &t->nodes[e->child];
        if (C->mover >= 0 || C->first_edge < 0)
            continue;
        /* the spawn: the outcome whose position is s */
        for (int k = 0; k < C->nedges && found < 0; k++) {
            const medge *o = &t->edges[C->first_edge + k];
            if (o->child < 0)
                continue;
            game_copy(g, t->scratch2, t->scratch);
            if (g->ops->chance_play(g, t->scratch2, o->action) == 0 &&
                !memcmp(t->scratch2, s, g->state_size))
                found = o->child;
        }
    }
    game_copy(g, t->root_state, s);
    t->full = false;
    if (found > 0)
        reroot(t, found);
    else
        reset_tree(t);
}

int mcts_play(mcts *t, int action)
{
    const game *g = t->g;
    game_copy(g, t->scratch, t->root_state);
    if (game_play(g, t->scratch, action) < 0)
        return -1;
    int32_t c = child_by_action(t, 0, action);
    /* chance events after the move: drawn with the tree's rng; the subtree kept is the
     * one under the outcome drawn */
    for (int o; (o = game_chance_sample(g, t->scratch, &t->r)) >= 0;) {
        int rc = g->ops->chance_play(g, t->scratch, o);
        assert(rc == 0);
        (void)rc;
        c = c > 0 && t->nodes[c].mover < 0 ? child_by_action(t, c, o) : -1;
    }
    game_copy(g, t->root_state, t->scratch);
    t->full = false;
    reroot(t, c);
    return 0;
}

/* ---- search internals ------------------------------------------------------------ */

/* The self-play root: priors ^ (1/root_policy_temp) renormalised, then Dirichlet noise
 * (alpha = dirichlet_total / legal moves when dirichlet_total > 0). Once per root. */
static void apply_noise(mcts *t)
{
    mnode *R = &t->nodes[0];
    if (R->status != NODE_EXPANDED || R->first_edge < 0 || t->root_noised)
        return;
    medge *e = t->edges + R->first_edge;
    for (int i = 0; i < R->nedges; i++)
        t->tgt[3 * t->A + i] = edge_prior(&e[i]);
    float temp = t->p.root_policy_temp;
    if (temp > 0.0f && temp != 1.0f) {
        double ps = 0;
        for (int i = 0; i < R->nedges; i++) {
            t->noise[i] = powf(edge_prior(&e[i]), 1.0f / temp);
            ps += t->noise[i];
        }
        for (int i = 0; ps > 0 && i < R->nedges; i++)
            edge_set_prior(&e[i], (float)(t->noise[i] / ps));
    }
    double alpha = t->p.dirichlet_total > 0 ? (double)t->p.dirichlet_total / R->nedges
                                            : (double)t->p.dirichlet_alpha;
    double sum = 0;
    for (int i = 0; i < R->nedges; i++) {
        t->noise[i] = (float)rng_gamma(&t->r, alpha);
        sum += t->noise[i];
    }
    if (sum <= 0)
        sum = 1;
    float eps = t->p.dirichlet_eps;
    for (int i = 0; i < R->nedges; i++)
        edge_set_prior(&e[i], (1.0f - eps) * edge_prior(&e[i]) + eps * (float)(t->noise[i] / sum));
    t->root_noised = true;
}

/* Scored games: widens the search's Q range with q. */
static inline void q_seen(mcts *t, float q)
{
    if (q < t->qmin)
        t->qmin = q;
    if (q > t->qmax)
        t->qmax = q;
}

/* Scored games: the Q of the edge into node c from player m's view, in points: the
 * points gained on the edge plus the points to come after it (c's mean value, or 0 at
 * the end). c must have a visit or be proven. */
static inline float scored_q(const mcts *t, int32_t c, int m)
{
    const mnode *C = &t->nodes[c];
    float v = C->proven ? C->pz[m] : C->w[m] / (float)C->n;
    return t->reward[(size_t)c * t->P + m] + v;
}

/* Scored games: q mapped into [0, 1] by the range of Q seen in this search (MuZero's
 * min-max normalisation); 0.5 while the range is empty. */
static inline float q_norm(const mcts *t, float q)
{
    if (!(t->qmax > t->qmin))
        return 0.5f;
    float x = (q - t->qmin) / (t->qmax - t->qmin);
    return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}

/* Adds one visit of value vector v to x and each ancestor; pending -= dpend. In a
 * scored game v is the points to come at x, and each step up adds the points of the
 * edge just climbed, so every node accumulates the points to come from its own
 * position; the Q of every edge on the path widens the search's range. */
static void backup(mcts *t, int32_t x, const float *v, int dpend)
{
    if (!t->scored) {
        float cv[GAME_MAX_PLAYERS];
        v = search_value(t, v, cv);
        for (; x >= 0; x = t->nodes[x].parent) {
            mnode *X = &t->nodes[x];
            X->n += 1;
            X->pending -= dpend;
            for (int p = 0; p < t->P; p++)
                X->w[p] += v[p];
            if (t->sq && X->parent >= 0 && t->nodes[X->parent].mover >= 0) {
                float vm = v[t->nodes[X->parent].mover];
                t->sq[x] += vm * vm;
            }
        }
        return;
    }
    float ret[GAME_MAX_PLAYERS];
    memcpy(ret, v, sizeof(float) * (size_t)t->P);
    for (; x >= 0; x = t->nodes[x].parent) {
        mnode *X = &t->nodes[x];
        X->n += 1;
        X->pending -= dpend;
        const float *r = t->reward + (size_t)x * t->P;
        for (int p = 0; p < t->P; p++) {
            X->w[p] += ret[p];
            q_seen(t, r[p] + X->w[p] / (float)X->n);
        }
        if (t->best && ret[0] > t->best[x])
            t->best[x] = ret[0];
        for (int p = 0; p < t->P; p++)
            ret[p] += r[p];
    }
}

static void add_pending(mcts *t, int32_t x, int d)
{
    for (; x >= 0; x = t->nodes[x].parent)
        t->nodes[x].pending += d;
}

/* Solver: tries to prove x from its children. Returns whether x is now proven. */
static bool solver_check(mcts *t, int32_t x)
{
    mnode *X = &t->nodes[x];
    if (X->proven)
        return true;
    if (X->status != NODE_EXPANDED || X->first_edge < 0 || X->mover < 0)
        return false; /* a chance node is an expectation, not a choice: never proven */
    int m = X->mover;
    const medge *e = t->edges + X->first_edge;
    bool all = true;
    int best = -1;
    float bestv = -FLT_MAX;
    for (int i = 0; i < X->nedges; i++) {
        int32_t c = e[i].child;
        if (c < 0 || !t->nodes[c].proven) {
            all = false;
            continue;
        }
        float v = t->nodes[c].pz[m];
        if (v >= 1.0f) {
            best = i;
            all = true;
            break;
        }
        if (v > bestv) {
            bestv = v;
            best = i;
        }
    }
    if (!all || best < 0)
        return false;
    memcpy(X->pz, t->nodes[e[best].child].pz, sizeof X->pz);
    X->best = (int16_t)e[best].action;
    X->proven = 1;
    return true;
}

/* x just became proven: prove its ancestors where possible. */
static void solver_propagate(mcts *t, int32_t x)
{
    if (!t->p.solver)
        return;
    for (int32_t y = t->nodes[x].parent; y >= 0; y = t->nodes[y].parent)
        if (!solver_check(t, y))
            break;
}

/* PUCT with virtual loss and FPU; returns the edge index to follow, or -1 if none. */
static int select_edge(const mcts *t, const mnode *X)
{
    int m = X->mover;
    float vl = t->p.virtual_loss;
    float npar = (float)X->n + vl * (float)X->pending;
    float sq = sqrtf(npar > 1.0f ? npar : 1.0f);
    float parent_q = X->n > 0 ? X->w[m] / (float)X->n : 0.0f;
    if (t->scored) /* normalised like the children's Q (the points to come from X) */
        parent_q = X->n > 0 ? q_norm(t, parent_q) : 0.5f;
    float fpu = t->p.fpu_absolute ? t->p.fpu_value : parent_q - t->p.fpu_reduction;
    float cp = t->p.c_puct;
    const medge *e = t->edges + X->first_edge;
    int best = -1;
    float bests = -FLT_MAX;
    /* KataGo's forced playouts: at the self-play root a visited child whose visits are
     * below sqrt(k P N) is taken first (the largest shortfall), so noise-boosted moves
     * get enough playouts to be judged. Found in the same pass as the PUCT choice. */
    bool forced = X == t->nodes && t->p.noise && t->p.forced_playouts > 0.0f;
    float kn = forced ? t->p.forced_playouts * (float)X->n : 0.0f, shortfall = 0.0f;
    int forced_best = -1;
    /* Edges never followed (most of them) all score fpu + c * P * sqrt(N): the best of them
     * is the first with the highest prior, found by comparing the 16-bit priors (monotone
     * in the prior), and scored once after the loop. */
    int fresh = -1;
    uint16_t fresh_prior = 0;
    /* the edge lines' misses overlap instead of following each other down the scan */
    for (int k = 0; k < X->nedges; k += 8)
        __builtin_prefetch(e + k);
    for (int i = 0; i < X->nedges; i++) {
        int32_t c = e[i].child;
        if (c < 0) {
            if (fresh < 0 || e[i].prior > fresh_prior) {
                fresh = i;
                fresh_prior = e[i].prior;
            }
            continue;
        }
        const mnode *C = &t->nodes[c];
        float q, nv = (float)C->n + vl * (float)C->pending;
        if (t->scored) {
            /* normalised Q; a pending visit counts as the worst value seen (0) */
            if (C->proven)
                q = q_norm(t, scored_q(t, c, m));
            else if (C->n > 0)
                q = (float)C->n * q_norm(t, scored_q(t, c, m)) / nv;
            else
                q = nv > 0.0f ? 0.0f : fpu;
        } else if (C->proven) {
            if (t->p.solver && C->pz[m] <= -1.0f)
                continue;
            float cv[GAME_MAX_PLAYERS];
            q = search_value(t, C->pz, cv)[m];
        } else {
            q = nv > 0.0f ? (C->w[m] - vl * (float)C->pending) / nv : fpu;
        }
        if (forced && nv > 0.0f && !C->proven) {
            float need = sqrtf(kn * edge_prior(&e[i]));
            if (need - nv > shortfall) {
                shortfall = need - nv;
                forced_best = i;
            }
        }
        float s = q + cp * edge_prior(&e[i]) * sq / (1.0f + nv);
        if (s > bests) {
            bests = s;
            best = i;
        }
    }
    if (fresh >= 0) { /* as the loop would have scored it (nv 0), ties to the lower index */
        float s = fpu + cp * edge_prior(&e[fresh]) * sq / 1.0f;
        if (s > bests || (s == bests && fresh < best))
            best = fresh;
    }
    return forced_best >= 0 ? forced_best : best;
}

/* A chance node's outcome to follow: the one whose share of the visits (pending ones
 * included, so a batch spreads over the outcomes) lags its probability the most,
 * argmax P(o) (N + 1) - N(o), ties to the first. Deterministic stratified sampling:
 * visit counts track the probabilities closely, so the node's mean value (the plain
 * average the backup keeps) is the expectation over the outcomes with less variance
 * than drawing them at random (Stochastic MuZero samples). */
static int select_outcome(const mcts *t, const mnode *X)
{
    const medge *e = t->edges + X->first_edge;
    float total = (float)X->n + (float)X->pending + 1.0f;
    int best = 0;
    float bests = -FLT_MAX;
    for (int i = 0; i < X->nedges; i++) {
        int32_t c = e[i].child;
        float nv = c >= 0 ? (float)t->nodes[c].n + (float)t->nodes[c].pending : 0.0f;
        float s = edge_prior(&e[i]) * total - nv;
        if (s > bests) {
            bests = s;
            best = i;
        }
    }
    return best;
}

enum { LEAF_QUEUED, LEAF_PROVEN, LEAF_COLLISION, LEAF_FULL };

/* One descent of tree t; a queued leaf goes into batch slot b->n. */
static int descend(mcts *t, mcts_batch *b)
{
    const game *g = t->g;
    game_state *s = (game_state *)(b->states + (size_t)b->n * g->state_size);
    game_copy(g, s, t->root_state);
    int32_t x = 0;
    int depth = 0;
    for (;;) {
        mnode *X = &t->nodes[x];
        if (X->proven) {
            float v[GAME_MAX_PLAYERS];
            memcpy(v, X->pz, sizeof v);
            backup(t, x, v, 0);
            t->sims++;
            break;
        }
        if (X->status == NODE_PENDING)
            return LEAF_COLLISION;
        if (X->status == NODE_NEW) {
            if (X->first_edge < 0) {
                t->full = true;
                return LEAF_FULL;
            }
            X->status = NODE_PENDING;
            uint8_t *lm = b->legal + (size_t)b->n * (size_t)t->A;
            memset(lm, 0, (size_t)t->A);
            for (int i = 0; i < X->nedges; i++)
                lm[t->edges[X->first_edge + i].action] = 1;
            b->keys[b->n] = game_hash(g, s);
            b->tree[b->n] = t;
            b->node[b->n] = x;
            b->n++;
            add_pending(t, x, 1);
            if (depth > t->st.max_depth)
                t->st.max_depth = depth;
            return LEAF_QUEUED;
        }
        bool nature = X->mover < 0;
        int i = nature ? select_outcome(t, X) : select_edge(t, X);
        assert(i >= 0);
        medge *e = &t->edges[X->first_edge + i];
        float sc0[GAME_MAX_PLAYERS];
        if (e->child >= 0) /* its fields are read next, after the move */
            __builtin_prefetch(&t->nodes[e->child]);
        if (t->scored && e->child < 0)
            g->ops->score(g, s, sc0);
        int rc = nature ? g->ops->chance_play(g, s, e->action) : game_play(g, s, e->action);
        assert(rc == 0);
        (void)rc;
        depth += !nature; /* plies: a tile spawning is not a move */
        if (e->child < 0) {
            if (t->nnodes >= t->cap_nodes) {
                t->full = true;
                return LEAF_FULL;
            }
            int32_t c = t->nnodes++;
            if (node_setup(t, c, x, s) < 0) {
                t->nnodes--;
                t->full = true;
                return LEAF_FULL;
            }
            if (t->scored) {
                float sc1[GAME_MAX_PLAYERS];
                g->ops->score(g, s, sc1);
                for (int p = 0; p < t->P; p++)
                    t->reward[(size_t)c * t->P + p] = sc1[p] - sc0[p];
            }
            e->child = c;
            if (t->nodes[c].proven)
                solver_propagate(t, c);
        }
        x = e->child;
    }
    if (depth > t->st.max_depth)
        t->st.max_depth = depth;
    return LEAF_PROVEN;
}

/* The evaluated leaf i of batch b: set priors, noise at the root, back up. */
static void expand_leaf(mcts_batch *b, int i)
{
    mcts *t = b->tree[i];
    int32_t x = b->node[i];
    mnode *X = &t->nodes[x];
    const float *pr = b->priors + (size_t)i * (size_t)t->A;
    medge *e = t->edges + X->first_edge;
    float sum = 0.0f;
    for (int k = 0; k < X->nedges; k++) {
        float p = pr[e[k].action];
        sum += p > 0.0f ? p : 0.0f;
    }
    /* the evaluator promises a distribution over the legal moves; guard anyway */
    for (int k = 0; k < X->nedges; k++) {
        float p = pr[e[k].action];
        edge_set_prior(&e[k], sum > 0.0f ? p / sum : 1.0f / (float)X->nedges);
    }
    X->status = NODE_EXPANDED;
    if (x == 0 && t->p.noise)
        apply_noise(t);
    backup(t, x, b->values + (size_t)i * (size_t)t->P, 1);
    t->sims++;
}

/* ---- public: search -------------------------------------------------------------- */

void mcts_begin(mcts *t)
{
    assert(!game_terminal(t->g, t->root_state));
    if (t->p.contempt > 0.0f) {
        /* the tree's statistics are in the searching player's contempt: another player
         * to move at the root (analysis of both sides) starts a fresh tree */
        int mover = game_current_player(t->g, t->root_state);
        if (mover != t->cplayer && t->cplayer >= 0 && t->nodes[0].n > 0)
            reset_tree(t);
        t->cplayer = mover;
    }
    memset(&t->st, 0, sizeof t->st);
    t->sims = 0;
    t->full = false;
    clock_gettime(CLOCK_MONOTONIC, &t->t0);
    mnode *R = &t->nodes[0];
    if (!R->proven && R->first_edge < 0) {
        assert(t->nnodes == 1);
        t->nedges_used = 0;
        if (node_setup(t, 0, -1, t->root_state) < 0)
            t->full = true;
    }
    if (t->threat && t->p.solver && t->p.vcf_root > 0 && !R->proven)
        vcf_prove(t, R, t->root_state, t->p.vcf_root, 0);
    if (t->threat && t->p.solver && t->p.vct_root > 0 && !R->proven)
        vcf_prove(t, R, t->root_state, t->p.vct_root, MCTS_VCT_DEPTH);
    if (t->p.noise)
        apply_noise(t);
    if (t->scored) {
        /* MuZero keeps the range per search; a reused subtree's root edges seed it */
        t->qmin = FLT_MAX;
        t->qmax = -FLT_MAX;
        const mnode *Rs = &t->nodes[0];
        if (Rs->n > 0)
            for (int p = 0; p < t->P; p++)
                q_seen(t, Rs->w[p] / (float)Rs->n);
        for (int i = 0; Rs->first_edge >= 0 && i < Rs->nedges; i++) {
            int32_t c = t->edges[Rs->first_edge + i].child;
            if (c >= 0 && (t->nodes[c].n > 0 || t->nodes[c].proven))
                for (int p = 0; p < t->P; p++)
                    q_seen(t, scored_q(t, c, p));
        }
    }
    /* the visits a reused subtree brought, so that pi can count this search's only */
    const mnode *R0 = &t->nodes[0];
    for (int i = 0; R0->first_edge >= 0 && i < R0->nedges; i++) {
        int32_t c = t->edges[R0->first_edge + i].child;
        t->base[i] = c >= 0 ? t->nodes[c].n : 0;
    }
}

bool mcts_done(const mcts *t)
{
    return t->sims >= t->p.simulations || t->full || (t->p.solver && t->nodes[0].proven);
}

int mcts_step_many(mcts *const *trees, int ntrees, mcts_batch *b, evaluator *e, char *err,
                   size_t errlen)
{
    b->n = 0;
    b->stamp++;
    for (int k = 0; k < ntrees && b->n < b->cap; k++) {
        mcts *t = trees[(b->start + k) % ntrees];
        assert(t->g->state_size == b->g->state_size && t->g->actions == b->g->actions);
        if (mcts_done(t))
            continue;
        int quota = t->p.simulations - t->sims;
        if (quota > t->p.batch)
            quota = t->p.batch;
        for (int a = 0; a < quota && b->n < b->cap && !mcts_done(t); a++) {
            int r = descend(t, b);
            if (r == LEAF_COLLISION) {
                t->st.collisions++;
                break;
            }
            if (r == LEAF_FULL)
                break;
            if (r == LEAF_QUEUED)
                t->step_stamp = b->stamp;
        }
    }
    if (ntrees > 0)
        b->start = (b->start + 1) % ntrees;
    if (b->n == 0)
        return 0;
    if (evaluator_run(e, b->n, b->ptrs, b->keys, b->legal, b->priors, b->values, err, errlen) < 0) {
        for (int i = 0; i < b->n; i++) {
            mcts *t = b->tree[i];
            t->nodes[b->node[i]].status = NODE_NEW;
            add_pending(t, b->node[i], -1);
        }
        b->n = 0;
        return -1;
    }
    for (int i = 0; i < b->n; i++) {
        /* the leaves' nodes, then their edges, a few leaves ahead: the forward pass has
         * pushed them out of the cache, and each leaf's misses would otherwise wait in turn */
        if (i + 4 < b->n)
            __builtin_prefetch(&b->tree[i + 4]->nodes[b->node[i + 4]], 1);
        if (i + 2 < b->n) {
            const mcts *u = b->tree[i + 2];
            const mnode *Y = &u->nodes[b->node[i + 2]];
            for (int k = 0; k < Y->nedges; k += 8)
                __builtin_prefetch(u->edges + Y->first_edge + k, 1);
        }
        expand_leaf(b, i);
        b->tree[i]->st.evaluated++;
    }
    for (int k = 0; k < ntrees; k++)
        if (trees[k]->step_stamp == b->stamp) {
            trees[k]->st.evaluator_calls++;
            trees[k]->step_stamp = 0;
        }
    return b->n;
}

int mcts_lcb_select(int n, const float *visits, const float *q, const float *sq,
                    const uint8_t *exact, float z, float min_fraction)
{
    int most = -1;
    for (int i = 0; i < n; i++)
        if (visits[i] > 0 && (most < 0 || visits[i] > visits[most]))
            most = i;
    if (most < 0)
        return -1;
    float floor_v = min_fraction * visits[most];
    if (floor_v < 2.0f)
        floor_v = 2.0f;
    int best = -1;
    float best_b = -FLT_MAX;
    for (int i = 0; i < n; i++) {
        float nv = visits[i];
        bool ex = exact && exact[i];
        if (nv <= 0 || (i != most && !ex && nv < floor_v))
            continue;
        float b = q[i];
        if (!ex) {
            float var = (sq[i] - nv * q[i] * q[i] + 1.0f) / (nv + 1.0f);
            if (var < 0.0f)
                var = 0.0f;
            b -= z * sqrtf(var / nv);
        }
        if (best < 0 || b > best_b || (b == best_b && nv > visits[best])) {
            best = i;
            best_b = b;
        }
    }
    return best;
}

int mcts_prune_policy(int n, const float *prior, const float *q, float *visits, float c_puct,
                      float k)
{
    int best = -1;
    double total = 0;
    for (int i = 0; i < n; i++) {
        total += visits[i];
        if (visits[i] > 0 && (best < 0 || visits[i] > visits[best]))
            best = i;
    }
    if (best < 0)
        return 0;
    double sq = sqrt(total);
    double best_score = q[best] + c_puct * prior[best] * sq / (1.0 + visits[best]);
    int removed = 0;
    for (int i = 0; i < n; i++) {
        if (i == best || visits[i] <= 0)
            continue;
        double forced = sqrt(k * prior[i] * total);
        double floor_n = visits[i] - forced;
        /* the fewest visits at which PUCT still ranks i below best */
        double gap = best_score - q[i];
        double keep = visits[i];
        if (gap > 0) {
            double need = ceil(c_puct * prior[i] * sq / gap - 1.0);
            keep = need > floor_n ? need : ceil(floor_n);
            if (keep > visits[i])
                keep = visits[i];
            if (keep < 0)
                keep = 0;
        }
        if (keep <= 1)
            keep = 0;
        removed += (int)(visits[i] - keep);
        visits[i] = (float)keep;
    }
    return removed;
}

int mcts_completed_q_policy(int n, const float *prior, const float *q, const float *visits,
                            float v, float *pi)
{
    double ntot = 0, psum = 0, pq = 0, maxn = 0;
    for (int i = 0; i < n; i++) {
        ntot += visits[i];
        maxn = visits[i] > maxn ? visits[i] : maxn;
        if (visits[i] > 0) {
            psum += prior[i];
            pq += (double)prior[i] * q[i];
        }
    }
    double vmix = psum > 0 ? (v + ntot * pq / psum) / (1.0 + ntot) : v;
    double lo = 1e30, hi = -1e30;
    for (int i = 0; i < n; i++) {
        double qh = visits[i] > 0 ? q[i] : vmix;
        lo = qh < lo ? qh : lo;
        hi = qh > hi ? qh : hi;
    }
    double scale = (50.0 + maxn) * 0.1, span = hi - lo, mx = -1e300;
    for (int i = 0; i < n; i++) {
        if (!(prior[i] > 0))
            continue;
        double qh = visits[i] > 0 ? q[i] : vmix;
        double x = log(prior[i]) + scale * (span > 1e-9 ? (qh - lo) / span : 0.0);
        mx = x > mx ? x : mx;
    }
    if (mx == -1e300)
        return -1;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double qh = visits[i] > 0 ? q[i] : vmix;
        double x = prior[i] > 0 ? exp(log(prior[i]) + scale * (span > 1e-9 ? (qh - lo) / span : 0.0) - mx)
                                : 0.0;
        pi[i] = (float)x;
        sum += x;
    }
    for (int i = 0; i < n; i++)
        pi[i] = (float)(pi[i] / sum);
    return 0;
}

/* Writes the completed-Q policy target of the root (mcts_completed_q_policy, with this
 * search's visits, proven children at their proven values; scored games: each edge's Q
 * in points and the root's points to come as v) into pi[A]; returns 0, or -1
 * when it cannot be made (pi untouched). */
static int completed_q_target(mcts *t, float *pi)
{
    const mnode *R = &t->nodes[0];
    if (R->status != NODE_EXPANDED || R->first_edge < 0 || R->n <= 0)
        return -1;
    const medge *e = t->edges + R->first_edge;
    int m = R->mover, ne = R->nedges;
    float *vis = t->tgt, *prior = t->tgt + t->A, *q = t->tgt + 2 * t->A, *out = t->noise;
    for (int i = 0; i < ne; i++) {
        int32_t c = e[i].child;
        const mnode *C = c >= 0 ? &t->nodes[c] : NULL;
        float v = C ? (float)C->n - (t->p.fresh_pi ? (float)t->base[i] : 0.0f) : 0.0f;
        vis[i] = v > 0 ? v : 0;
        if (C && C->proven && vis[i] <= 0)
            vis[i] = 1; /* a proven child's value is known without playouts */
        if (t->scored) /* in points, reward included: the min-max below rescales them */
            q[i] = C && (C->proven || C->n > 0) ? scored_q(t, c, m) : 0.0f;
        else
            q[i] = !C ? 0.0f : C->proven ? C->pz[m] : C->n > 0 ? C->w[m] / (float)C->n : 0.0f;
        prior[i] = t->root_noised ? t->tgt[3 * t->A + i] : edge_prior(&e[i]);
    }
    if (mcts_completed_q_policy(ne, prior, q, vis, R->w[m] / (float)R->n, out) < 0)
        return -1;
    memset(pi, 0, sizeof(float) * (size_t)t->A);
    for (int i = 0; i < ne; i++)
        pi[e[i].action] = out[i];
    return 0;
}

/* The policy target from the root's visits: this search's playouts only (fresh_pi),
 * proven-losing moves left out when something else was visited, the forced playouts
 * pruned (self-play with policy_pruning). Writes pi[A] and returns its playouts; 0 when
 * there are none (the caller keeps the choice distribution). */
static int policy_target(mcts *t, float *pi)
{
    const mnode *R = &t->nodes[0];
    if (R->status != NODE_EXPANDED || R->first_edge < 0)
        return 0;
    const medge *e = t->edges + R->first_edge;
    int m = R->mover, ne = R->nedges;
    float *vis = t->tgt, *prior = t->tgt + t->A, *q = t->tgt + 2 * t->A;
    double total = 0, total_nl = 0;
    for (int i = 0; i < ne; i++) {
        int32_t c = e[i].child;
        float v = 0.0f;
        if (c >= 0) {
            v = (float)t->nodes[c].n - (t->p.fresh_pi ? (float)t->base[i] : 0.0f);
            if (v < 0)
                v = 0;
        }
        vis[i] = v;
        total += v;
        if (!(t->p.solver && c >= 0 && t->nodes[c].proven && t->nodes[c].pz[m] <= -1.0f))
            total_nl += v;
    }
    if (total <= 0)
        return 0;
    if (total_nl > 0)
        for (int i = 0; i < ne; i++) {
            int32_t c = e[i].child;
            if (t->p.solver && c >= 0 && t->nodes[c].proven && t->nodes[c].pz[m] <= -1.0f)
                vis[i] = 0;
        }
    if (t->p.noise && t->p.forced_playouts > 0 && t->p.policy_pruning) {
        for (int i = 0; i < ne; i++) {
            int32_t c = e[i].child;
            const mnode *C = c >= 0 ? &t->nodes[c] : NULL;
            prior[i] = edge_prior(&e[i]);
            if (t->scored)
                q[i] = C && (C->proven || C->n > 0) ? q_norm(t, scored_q(t, c, m)) : 0.0f;
            else
                q[i] = !C ? 0.0f : C->proven ? C->pz[m] : C->n > 0 ? C->w[m] / (float)C->n : 0.0f;
        }
        mcts_prune_policy(ne, prior, q, vis, t->p.c_puct, t->p.forced_playouts);
    }
    double sum = 0;
    for (int i = 0; i < ne; i++)
        sum += vis[i];
    memset(pi, 0, sizeof(float) * (size_t)t->A);
    if (sum <= 0)
        return 0;
    for (int i = 0; i < ne; i++)
        pi[e[i].action] = (float)(vis[i] / sum);
    return (int)sum;
}

/* mcts_finish's LCB choice at an expanded root that is not proven: the children with
 * mass in pi (visits; proven losers dropped) compete in mcts_lcb_select. Scratch: t->tgt
 * (4 x actions, by root edge index). */
static int lcb_choice(mcts *t, const float *pi)
{
    const mnode *R = &t->nodes[0];
    const medge *e = t->edges + R->first_edge;
    int m = R->mover, ne = R->nedges;
    float *vis = t->tgt, *q = t->tgt + t->A, *sq = t->tgt + 2 * t->A;
    uint8_t *exact = t->mask; /* [actions] >= ne */
    for (int i = 0; i < ne; i++) {
        int32_t c = e[i].child;
        vis[i] = q[i] = sq[i] = 0.0f;
        exact[i] = 0;
        if (c < 0 || pi[e[i].action] <= 0 || t->nodes[c].n <= 0)
            continue;
        const mnode *C = &t->nodes[c];
        vis[i] = (float)C->n;
        exact[i] = t->p.solver && C->proven;
        float cv[GAME_MAX_PLAYERS];
        q[i] = exact[i] ? search_value(t, C->pz, cv)[m] : C->w[m] / (float)C->n;
        sq[i] = t->sq[c];
    }
    int k = mcts_lcb_select(ne, vis, q, sq, exact, t->p.lcb_stdevs, t->p.lcb_min_fraction);
    if (k >= 0)
        return e[k].action;
    int best = -1; /* no visited child with mass: the largest pi */
    for (int a = 0; a < t->A; a++)
        if (pi[a] > 0 && (best < 0 || pi[a] > pi[best]))
            best = a;
    return best;
}

void mcts_finish(mcts *t, float *pi_out, mcts_result *res)
{
    const game *g = t->g;
    const mnode *R = &t->nodes[0];
    float *pi = t->noise; /* scratch over actions while choosing */
    int A = t->A, m = R->mover;
    memset(pi, 0, sizeof(float) * (size_t)A);
    int action = -1;
    const medge *e = R->first_edge >= 0 ? t->edges + R->first_edge : NULL;
    t->st.pi_visits = 0;
    bool root_win = t->p.solver && R->proven && R->pz[m] >= 1.0f;

    if (root_win) {
        action = R->best;
        pi[action] = 1.0f;
    } else if (e && R->status == NODE_EXPANDED) {
        /* visits, without proven-losing moves when something else has visits */
        double total = 0, total_all = 0;
        for (int i = 0; i < R->nedges; i++) {
            int32_t c = e[i].child;
            if (c < 0)
                continue;
            const mnode *C = &t->nodes[c];
            total_all += C->n;
            if (!(t->p.solver && C->proven && C->pz[m] <= -1.0f))
                total += C->n;
        }
        bool drop_losers = total > 0;
        for (int i = 0; i < R->nedges; i++) {
            int32_t c = e[i].child;
            if (c < 0)
                continue;
            const mnode *C = &t->nodes[c];
            if (drop_losers && t->p.solver && C->proven && C->pz[m] <= -1.0f)
                continue;
            pi[e[i].action] = (float)C->n;
        }
        double tot = drop_losers ? total : total_all;
        if (tot <= 0) {
            /* no child visited: the priors (proven losers dropped if possible) */
            double ps = 0;
            for (int i = 0; i < R->nedges; i++) {
                int32_t c = e[i].child;
                bool loser = t->p.solver && c >= 0 && t->nodes[c].proven && t->nodes[c].pz[m] <= -1.0f;
                pi[e[i].action] = loser ? 0.0f : edge_prior(&e[i]);
                ps += pi[e[i].action];
            }
            if (ps <= 0)
                for (int i = 0; i < R->nedges; i++)
                    pi[e[i].action] = edge_prior(&e[i]), ps += pi[e[i].action];
            if (ps <= 0)
                for (int i = 0; i < R->nedges; i++)
                    pi[e[i].action] = 1.0f, ps += 1.0;
            tot = ps;
        }
        for (int a = 0; a < A; a++)
            pi[a] = (float)(pi[a] / tot);
        /* The policy target: this search's playouts, forced playouts pruned. In self-play
         * (noise on) the move is chosen from it too, so a played move always has target
         * mass and the forced playouts do not make the play more random; other players
         * choose from every visit (reused ones are information too) and return the
         * target as pi. */
        bool target = !(t->p.solver && R->proven) && (t->st.pi_visits = policy_target(t, t->pit)) > 0;
        if (target && t->p.noise)
            memcpy(pi, t->pit, sizeof(float) * (size_t)A);
        int ply = g->ops->ply ? g->ops->ply(g, t->root_state) : 0;
        if (t->p.solver && R->proven) {
            /* proven draw or loss: the most visited of the moves that achieve it */
            int bv = -1;
            for (int i = 0; i < R->nedges; i++) {
                int32_t c = e[i].child;
                if (c >= 0 && t->nodes[c].proven && t->nodes[c].pz[m] == R->pz[m] &&
                    t->nodes[c].n > bv) {
                    bv = t->nodes[c].n;
                    action = e[i].action;
                }
            }
            if (action < 0)
                action = R->best;
        } else if (ply < t->p.temperature_moves) {
            double u = rng_uniform(&t->r), acc = 0;
            for (int a = 0; a < A; a++) {
                if (pi[a] <= 0)
                    continue;
                action = a;
                acc += pi[a];
                if (u < acc)
                    break;
            }
        } else if (t->sq && !t->p.noise) {
            action = lcb_choice(t, pi);
        } else {
            float bp = -1.0f, bq = -FLT_MAX;
            for (int i = 0; i < R->nedges; i++) {
                int a = e[i].action;
                int32_t c = e[i].child;
                float q = (c >= 0 && t->nodes[c].n > 0) ? t->nodes[c].w[m] / (float)t->nodes[c].n
                                                        : -FLT_MAX;
                if (t->scored && c >= 0 && t->nodes[c].n > 0)
                    q = scored_q(t, c, m);
                if (pi[a] > bp || (pi[a] == bp && q > bq)) {
                    bp = pi[a];
                    bq = q;
                    action = a;
                }
            }
        }
    } else {
        /* the root could not be expanded (arena too small): uniform over legal moves */
        int nl = game_legal(g, t->root_state, t->mask);
        assert(nl > 0);
        uint32_t pick = rng_below(&t->r, (uint32_t)nl);
        for (int a = 0; a < A; a++) {
            if (!t->mask[a])
                continue;
            pi[a] = 1.0f / (float)nl;
            if (pick-- == 0)
                action = a;
        }
    }
    assert(action >= 0 && action < A);

    memset(res, 0, sizeof *res);
    res->action = action;
    res->proven = t->p.solver && R->proven;
    for (int p = 0; p < t->P; p++)
        res->value[p] = res->proven ? R->pz[p] : (R->n > 0 ? R->w[p] / (float)R->n : 0.0f);
    t->st.simulations = t->sims;
    t->st.root_visits = R->n;
    t->st.nodes = t->nnodes;
    t->st.edges = t->nedges_used;
    t->st.seconds = elapsed(t);
    t->st.proven = res->proven;
    t->st.arena_full = t->full;
    res->stats = t->st;
    /* the completed-Q target replaces the visits as the target only, once the move is
     * chosen (its scratch is t->noise, pi's) */
    if (pi_out && t->st.pi_visits > 0 && t->p.completed_q)
        completed_q_target(t, t->pit);
    if (pi_out)
        memcpy(pi_out, t->st.pi_visits > 0 ? t->pit : pi, sizeof(float) * (size_t)A);
}

int mcts_search(mcts *t, evaluator *e, float *pi, mcts_result *res, char *err, size_t errlen)
{
    if (game_terminal(t->g, t->root_state)) {
        snprintf(err, errlen, "mcts: the root position is terminal (game over)");
        return -1;
    }
    mcts_begin(t);
    while (!mcts_done(t))
        if (mcts_step_many(&t, 1, t->own, e, err, errlen) < 0)
            return -1;
    mcts_finish(t, pi, res);
    return 0;
}

int mcts_children(const mcts *t, int32_t node, mcts_child_info *out, int max)
{
    if (node < 0 || node >= t->nnodes)
        return 0;
    const mnode *X = &t->nodes[node];
    if (X->first_edge < 0 || X->status != NODE_EXPANDED)
        return 0;
    int m = X->mover < 0 ? 0 : X->mover; /* a chance node: player 0's view */
    const medge *e = t->edges + X->first_edge;
    for (int i = 0; i < X->nedges && i < max; i++) {
        mcts_child_info *ci = &out[i];
        memset(ci, 0, sizeof *ci);
        ci->action = e[i].action;
        ci->node = e[i].child;
        ci->prior = edge_prior(&e[i]);
        if (e[i].child >= 0) {
            const mnode *C = &t->nodes[e[i].child];
            ci->visits = C->n;
            for (int p = 0; p < t->P; p++) {
                ci->value[p] = C->n > 0 ? C->w[p] / (float)C->n : 0.0f;
                ci->proven_value[p] = C->proven ? C->pz[p] : 0.0f;
            }
            ci->q = ci->value[m];
            if (t->scored && (C->n > 0 || C->proven))
                ci->q = scored_q(t, e[i].child, m);
            ci->proven = C->proven;
        }
    }
    return X->nedges;
}

int mcts_export(mcts *t, int min_visits, int (*fn)(void *ctx, const mcts_node_sample *ns),
                void *ctx)
{
    const game *g = t->g;
    size_t ss = g->state_size;
    int A = t->A, rc = 0;
    /* states in node order: a child's index is larger than its parent's (invariant 1) */
    unsigned char *st = malloc((size_t)t->nnodes * ss);
    int *depth = malloc((size_t)t->nnodes * sizeof *depth);
    float *pi = malloc((size_t)A * sizeof *pi), *ba = malloc((size_t)A * sizeof *ba);
    uint8_t *legal = malloc((size_t)A);
    if (!st || !depth || !pi || !ba || !legal) {
        rc = -1;
        goto out;
    }
    game_copy(g, (game_state *)st, t->root_state);
    depth[0] = 0;
    for (int32_t x = 0; x < t->nnodes; x++) {
        const mnode *X = &t->nodes[x];
        game_state *sx = (game_state *)(st + (size_t)x * ss);
        if (X->first_edge < 0 || X->status != NODE_EXPANDED)
            continue;
        const medge *e = t->edges + X->first_edge;
        for (int i = 0; i < X->nedges; i++) {
            int32_t c = e[i].child;
            if (c < 0)
                continue;
            game_state *sc = (game_state *)(st + (size_t)c * ss);
            game_copy(g, sc, sx);
            int prc = X->mover < 0 ? g->ops->chance_play(g, sc, e[i].action) : game_play(g, sc, e[i].action);
            assert(prc == 0);
            (void)prc;
            depth[c] = depth[x] + (X->mover >= 0);
        }
        if (X->mover < 0 || X->terminal || X->n < min_visits)
            continue;
        double total = 0;
        for (int i = 0; i < X->nedges; i++)
            total += e[i].child >= 0 ? t->nodes[e[i].child].n : 0;
        if (total <= 0)
            continue;
        memset(pi, 0, sizeof(float) * (size_t)A);
        memset(legal, 0, (size_t)A);
        for (int a = 0; a < A; a++)
            ba[a] = -FLT_MAX;
        for (int i = 0; i < X->nedges; i++) {
            int32_t c = e[i].child;
            int a = e[i].action;
            legal[a] = 1;
            if (c < 0)
                continue;
            pi[a] = (float)(t->nodes[c].n / total);
            if (t->best && t->best[c] > -FLT_MAX)
                ba[a] = t->reward[(size_t)c * t->P] + t->best[c];
        }
        mcts_node_sample ns = {.state = sx, .depth = depth[x], .visits = X->n, .pi = pi,
                               .legal = legal, .best = t->best ? t->best[x] : -FLT_MAX,
                               .best_after = ba};
        for (int p = 0; p < t->P; p++)
            ns.value[p] = X->w[p] / (float)X->n;
        rc = fn(ctx, &ns);
        if (rc)
            break;
    }
out:
    free(st);
    free(depth);
    free(pi);
    free(ba);
    free(legal);
    return rc;
}
