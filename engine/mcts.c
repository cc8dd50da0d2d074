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
 * Proofs (MCTS-solver, the threat checks) are in mcts_solver.c; the root's noise,
 * policy targets and move choice (mcts_finish) in mcts_root.c.
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
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "mcts_impl.h"

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


void mcts_params_pure(mcts_params *p)
{
    p->fpu_absolute = true;
    p->fpu_value = 1.0f;
    p->gumbel = false; /* uniform priors: UCT's every-move-once, not a halving of priors */
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double mcts_elapsed(const mcts *t)
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
    if (t->threat && t->p.solver && t->p.vcf_leaf > 0 && mcts_vcf_prove(t, X, s, t->p.vcf_leaf, 0))
        return 0;
    int nl = game_legal(g, s, t->mask);
    assert(nl > 0);
    if (t->threat && t->p.vcf_defend)
        nl = mcts_vcf_restrict(t, s, nl);
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
        !(p->contempt >= 0.0f && p->contempt < 1.0f) || (p->gumbel && p->gumbel_m < 1)) {
        snprintf(err, errlen, "mcts: bad parameters (simulations >= 1, batch >= 1, c_puct >= 0, "
                              "virtual_loss >= 0, dirichlet_alpha > 0, dirichlet_eps in [0, 1], "
                              "max_nodes 0 or >= 2, max_edges >= 0, contempt in [0, 1), gumbel_m >= 1)");
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
    if (t->scored) {
        t->p.solver = false; /* proofs are about outcomes; a score game has points to come */
        t->p.gumbel = false; /* its rules read values in [-1, 1]: points keep PUCT */
    }
    int64_t nodes = p->max_nodes;
    if (nodes == 0) {
        /* a descent through a new chance node makes two nodes */
        nodes = (t->chance ? 4 : 2) * ((int64_t)p->simulations + p->batch) + 64;
        if (nodes > INT32_MAX / 2)
            nodes = INT32_MAX / 2;
    }
    int64_t edges = p->max_edges;
    if (edges == 0) {
        /* a node can have every action as an edge (an early node on a big board: 625 on
         * 25x25); the memory is only reserved, pages are touched as edges are used */
        int per = t->A;
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
    if (t->p.gumbel) {
        t->gum = malloc((size_t)t->A * sizeof *t->gum);
        t->gsq = malloc((size_t)t->A * sizeof *t->gsq);
        t->gcnt = malloc((size_t)t->A * sizeof *t->gcnt);
        t->gidx = malloc((size_t)t->A * sizeof *t->gidx);
        t->sched_cap = p->simulations;
        t->sched = malloc((size_t)p->simulations * sizeof *t->sched);
        extra_ok = extra_ok && t->gum && t->gsq && t->gcnt && t->gidx && t->sched;
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
    free(t->gum);
    free(t->gsq);
    free(t->gcnt);
    free(t->gidx);
    free(t->sched);
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
    if (t->p.gumbel && simulations > t->sched_cap) {
        /* the halving's schedule covers the budget: grown here, never while searching
         * (out of memory: the schedule covers the old budget, the least visited
         * considered move takes the simulations past it) */
        int32_t *s = realloc(t->sched, (size_t)simulations * sizeof *s);
        if (s) {
            t->sched = s;
            t->sched_cap = simulations;
        }
    }
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
        int i = nature ? select_outcome(t, X)
                : !t->p.gumbel ? select_edge(t, X)
                : x == 0 ? mcts_gumbel_select_root(t, X)
                : mcts_gumbel_select_interior(t, X);
        if (i < 0 && !nature && t->p.gumbel) {
            /* the Gumbel rules found no move: not expected (the one cause seen, a NaN
             * from an unused v_mix, is fixed; test gumbel_interior_all_children), but
             * PUCT's choice is better than a crash, and the count shows it */
            t->st.gumbel_fallbacks++;
            i = select_edge(t, X);
        }
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
                mcts_solver_propagate(t, c);
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
    if (x == 0 && t->p.noise && !t->p.gumbel)
        mcts_apply_noise(t);
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
        mcts_vcf_prove(t, R, t->root_state, t->p.vcf_root, 0);
    if (t->threat && t->p.solver && t->p.vct_root > 0 && !R->proven)
        mcts_vcf_prove(t, R, t->root_state, t->p.vct_root, MCTS_VCT_DEPTH);
    if (t->p.noise && !t->p.gumbel)
        mcts_apply_noise(t);
    t->gum_ready = false; /* the root's Gumbel draw: at its first selection */
    /* Gumbel: the simulations are the root's children's (mctx evaluates the root
     * first), so a root still to be evaluated is one playout more */
    t->budget = t->p.simulations + (t->p.gumbel && t->nodes[0].status != NODE_EXPANDED &&
                                    !t->nodes[0].proven);
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
    return t->sims >= t->budget || t->full || (t->p.solver && t->nodes[0].proven);
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
        int quota = t->budget - t->sims;
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
