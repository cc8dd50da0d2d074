/* mcts_gumbel.c — Gumbel AlphaZero's search (Danihelka et al., ICLR 2022, "Policy
 * improvement by planning with Gumbel"; constants as in DeepMind's mctx).
 *
 * With params.gumbel the search replaces PUCT in two places:
 * - The root. Once the root is expanded, every legal move a gets a score g(a) + log P(a),
 *   g(a) a Gumbel(0, 1) sample (self-play, params.noise, in the first temperature_moves
 *   plies of the game) or 0 (later, and in play); the m = min(gumbel_m,
 *   legal moves) best are the considered moves. The simulations are shared among them by
 *   sequential halving: mcts_gumbel_schedule writes, for each simulation k, how many
 *   visits the move it goes to must already have (mctx's "considered visits"); simulation
 *   k takes, among the considered moves with exactly that many visits, the one with the
 *   highest g + log P + sigma(completed Q). So every phase gives each remaining move the
 *   same visits, and the bottom half by that score drops out. The played move is the
 *   winner: among the considered moves with the most visits, the highest score.
 * - Below the root, the move is deterministic: argmax_a pi'(a) - N(a) / (1 + sum N), with
 *   pi' = softmax(log P + sigma(completed Q)) the node's improved policy, so the visits
 *   follow pi' (mctx's interior selection).
 * completed Q: a visited child's mean value from the mover's view (a proven child's exact
 * outcome), an unvisited child's the mixed value v_mix (mcts_completed_q_policy); the
 * completed values are rescaled to [0, 1] by their min and max over the children, and
 * sigma(q) = (50 + the children's most visits) * 0.1 * q.
 *
 * Batches: a leaf waiting in the batch counts as a visit for the schedule and for the
 * N(a) of the interior rule (pending visits), so the leaves gathered in one step spread
 * over the moves as successive simulations would; the values are the completed visits'.
 * Tree reuse: the root's schedule counts this search's visits only (those above the
 * visits a move had at mcts_begin). Proven-losing moves are never chosen while another
 * move is left. Games with a score (2048) keep PUCT: values there are points, not
 * outcomes in [-1, 1].
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "mcts_impl.h"

/* mctx's constants of the sigma transform */
#define GUMBEL_C_VISIT 50.0
#define GUMBEL_C_SCALE 0.1

int mcts_gumbel_schedule(int m, int n, int32_t *visits)
{
    if (m < 1 || n < 1)
        return -1;
    if (m == 1) {
        for (int k = 0; k < n; k++)
            visits[k] = k;
        return 0;
    }
    int log2m = 0;
    while ((1 << log2m) < m)
        log2m++;
    /* every move still considered has the same visits at the start of a round, so one
     * counter stands for all of them */
    int considered = m, k = 0;
    int32_t base = 0;
    while (k < n) {
        int extra = (int)((double)n / ((double)log2m * considered));
        if (extra < 1)
            extra = 1;
        for (int r = 0; r < extra && k < n; r++, base++)
            for (int i = 0; i < considered && k < n; i++)
                visits[k++] = base;
        considered = considered / 2 > 2 ? considered / 2 : 2;
    }
    return 0;
}

int mcts_gumbel_interior_pick(int n, const float *prior, const float *q, const float *visits,
                              float v, float *pi)
{
    if (mcts_completed_q_policy(n, prior, q, visits, v, pi) < 0)
        return -1;
    double total = 0;
    for (int i = 0; i < n; i++)
        total += visits[i];
    int best = -1;
    double bests = -DBL_MAX;
    for (int i = 0; i < n; i++) {
        double s = pi[i] - visits[i] / (1.0 + total);
        if (prior[i] > 0 && s > bests) {
            bests = s;
            best = i;
        }
    }
    return best;
}

/* The completed Q of a node's children, transformed: what both Gumbel rules read. */
typedef struct cq_view {
    int nc;             /* children with a node: t->gidx/gsq/gcnt[0..nc) */
    double sig_mix;     /* sigma(rescaled v_mix): the value of every unvisited child */
    double scale;       /* sigma's factor: (50 + most visits) * 0.1 */
    double p_fresh;     /* prior sum of the edges without a node */
    int fresh_best;     /* the edge without a node with the highest prior (first), -1 */
    double ntot;        /* sum of the counts: completed + pending visits (less base) */
} cq_view;

/* Fills t->gidx[j] (edge index), t->gsq[j] (sigma of the completed, rescaled Q; -inf for
 * a proven-lost move) and t->gcnt[j] (completed + pending visits, less base[edge] when
 * base is given) for the children of X that have a node, and the rest in *v. Edges with
 * no node are unvisited: their value is v_mix, their count 0. v_mix = (v + N sum_visited
 * P q / sum_visited P) / (1 + N), v the node's own evaluation (its value sum less its
 * children's), N the children's visits. */
static void cq_view_make(mcts *t, const mnode *X, const int32_t *base, cq_view *v)
{
    int m = X->mover, ne = X->nedges;
    const medge *e = t->edges + X->first_edge;
    double psum = 0, pq = 0, wsum = 0, nvis = 0, maxn = 0, lo = DBL_MAX, hi = -DBL_MAX;
    bool any_mix = false;
    uint16_t fp = 0;
    float cv[GAME_MAX_PLAYERS];
    v->nc = 0;
    v->p_fresh = 0;
    v->fresh_best = -1;
    v->ntot = 0;
    for (int i = 0; i < ne; i++) {
        int32_t c = e[i].child;
        if (c < 0) {
            v->p_fresh += edge_prior(&e[i]);
            if (v->fresh_best < 0 || e[i].prior > fp) {
                v->fresh_best = i;
                fp = e[i].prior;
            }
            any_mix = true;
            continue;
        }
        const mnode *C = &t->nodes[c];
        int j = v->nc++;
        float cnt = (float)C->n + (float)C->pending - (base ? (float)base[i] : 0.0f);
        t->gidx[j] = i;
        t->gcnt[j] = cnt > 0.0f ? cnt : 0.0f;
        v->ntot += t->gcnt[j];
        if (C->n > 0) {
            wsum += C->w[m];
            nvis += C->n;
        }
        if (C->proven && t->p.solver && C->pz[m] <= -1.0f) {
            t->gsq[j] = -INFINITY;
        } else if (C->n > 0 || C->proven) {
            float q = C->proven ? search_value(t, C->pz, cv)[m] : C->w[m] / (float)C->n;
            t->gsq[j] = q;
            double p = edge_prior(&e[i]);
            psum += p;
            pq += p * q;
            maxn = C->n > maxn ? C->n : maxn;
            lo = q < lo ? q : lo;
            hi = q > hi ? q : hi;
        } else {
            t->gsq[j] = NAN; /* only pending visits: unvisited */
            any_mix = true;
        }
    }
    double own = X->n > 0 ? X->w[m] / (double)X->n : 0.0;
    if (X->n > 0 && (double)X->n - nvis >= 0.5) {
        double raw = (X->w[m] - wsum) / ((double)X->n - nvis);
        if (raw >= -1.0 && raw <= 1.0)
            own = raw;
    }
    double vmix = psum > 0 ? (own + nvis * pq / psum) / (1.0 + nvis) : own;
    if (any_mix) {
        lo = vmix < lo ? vmix : lo;
        hi = vmix > hi ? vmix : hi;
    }
    double span = hi - lo;
    v->scale = (GUMBEL_C_VISIT + maxn) * GUMBEL_C_SCALE;
    /* v_mix counts only where a child has no value of its own (any_mix); otherwise it
     * can lie far outside [lo, hi], and exp(sigma(v_mix)) would overflow */
    v->sig_mix = any_mix && span > 1e-9 ? v->scale * (vmix - lo) / span : 0.0;
    for (int j = 0; j < v->nc; j++) {
        float q = t->gsq[j];
        if (q == -INFINITY)
            continue;
        t->gsq[j] = isnan(q) ? (float)v->sig_mix
                             : (float)(span > 1e-9 ? v->scale * (q - lo) / span : 0.0);
    }
}

/* The root's view by edge: sq[i] sigma (or -inf for a lost move), cnt[i] this search's
 * visits with the pending ones. Scratch: t->tgt (sq: [0, A), cnt: [A, 2A)). */
static void root_view(mcts *t, const mnode *R, float **sq_out, float **cnt_out)
{
    cq_view v;
    cq_view_make(t, R, t->base, &v);
    float *sq = t->tgt, *cnt = t->tgt + t->A;
    for (int i = 0; i < R->nedges; i++) {
        sq[i] = (float)v.sig_mix;
        cnt[i] = 0.0f;
    }
    for (int j = 0; j < v.nc; j++) {
        sq[t->gidx[j]] = t->gsq[j];
        cnt[t->gidx[j]] = t->gcnt[j];
    }
    *sq_out = sq;
    *cnt_out = cnt;
}

void mcts_gumbel_root_init(mcts *t)
{
    const mnode *R = &t->nodes[0];
    assert(R->status == NODE_EXPANDED && R->first_edge >= 0 && R->mover >= 0);
    const medge *e = t->edges + R->first_edge;
    int ne = R->nedges;
    /* scores g + log P; the m best are considered, the rest get -inf. The Gumbel draw is
     * self-play's exploration: during the first temperature_moves plies of the game, as
     * PUCT's temperature; later g = 0, the halving picks the best move by its values and
     * a late blunder no longer decides the game's outcome (the target is unchanged) */
    int ply = t->g->ops->ply ? t->g->ops->ply(t->g, t->root_state) : 0;
    bool draw = t->p.noise && ply < t->p.temperature_moves;
    for (int i = 0; i < ne; i++) {
        double g = 0.0;
        if (draw) {
            double u = rng_uniform(&t->r);
            g = -log(-log(u > 1e-300 ? u : 1e-300));
        }
        double p = edge_prior(&e[i]);
        t->gum[i] = p > 0 ? (float)(g + log(p)) : -INFINITY;
    }
    int m = t->p.gumbel_m < ne ? t->p.gumbel_m : ne;
    if (m < 1)
        m = 1;
    /* the m-th best score: a partial selection sort of a copy (m is small) */
    float *tmp = t->gsq;
    for (int i = 0; i < ne; i++)
        tmp[i] = t->gum[i];
    for (int j = 0; j < m; j++) {
        int best = j;
        for (int i = j + 1; i < ne; i++)
            if (tmp[i] > tmp[best])
                best = i;
        float x = tmp[j];
        tmp[j] = tmp[best];
        tmp[best] = x;
    }
    float cut = tmp[m - 1];
    int taken = 0;
    for (int i = 0; i < ne; i++) {
        if (t->gum[i] > -INFINITY && t->gum[i] >= cut && taken < m)
            taken++;
        else
            t->gum[i] = -INFINITY;
    }
    if (taken == 0) { /* every prior 0: the first move */
        t->gum[0] = 0.0f;
        taken = 1;
    }
    t->gum_m = taken;
    int n = t->p.simulations < t->sched_cap ? t->p.simulations : t->sched_cap;
    mcts_gumbel_schedule(taken, n, t->sched);
    t->gum_sched_n = n;
    t->gum_ready = true;
}

int mcts_gumbel_select_root(mcts *t, const mnode *R)
{
    if (!t->gum_ready)
        mcts_gumbel_root_init(t);
    float *sq, *cnt;
    root_view(t, R, &sq, &cnt);
    int ne = R->nedges;
    double k = 0;
    for (int i = 0; i < ne; i++)
        k += cnt[i];
    /* the visits the move of simulation k must have (the halving's schedule) */
    int32_t want = k < t->gum_sched_n ? t->sched[(int)k] : -1;
    int best = -1, fallback = -1;
    double bests = -DBL_MAX, fbs = -DBL_MAX;
    float fbn = FLT_MAX;
    for (int i = 0; i < ne; i++) {
        if (t->gum[i] == -INFINITY || sq[i] == -INFINITY)
            continue;
        double s = (double)t->gum[i] + sq[i];
        if (want >= 0 && cnt[i] == (float)want && s > bests) {
            bests = s;
            best = i;
        }
        /* past the schedule, or no move with the count (a considered move was proven
         * lost, or reused visits): the least visited move, best score first */
        if (cnt[i] < fbn || (cnt[i] == fbn && s > fbs)) {
            fbn = cnt[i];
            fbs = s;
            fallback = i;
        }
    }
    if (best >= 0)
        return best;
    if (fallback >= 0)
        return fallback;
    /* every considered move is lost: the best of the rest by prior and value */
    int alt = -1;
    for (int i = 0; i < ne; i++)
        if (sq[i] != -INFINITY && (alt < 0 || sq[i] > sq[alt]))
            alt = i;
    return alt;
}

int mcts_gumbel_select_interior(mcts *t, const mnode *X)
{
    const medge *e = t->edges + X->first_edge;
    cq_view v;
    cq_view_make(t, X, NULL, &v);
    /* pi'(a) = P(a) exp(sigma_a - scale) / z (sigma <= scale, so no overflow) */
    double z = v.p_fresh > 0 ? v.p_fresh * exp(v.sig_mix - v.scale) : 0.0;
    for (int j = 0; j < v.nc; j++)
        if (t->gsq[j] != -INFINITY)
            z += edge_prior(&e[t->gidx[j]]) * exp((double)t->gsq[j] - v.scale);
    if (!(z > 0))
        return v.fresh_best;
    int best = -1;
    double bests = -DBL_MAX, share = 1.0 / (1.0 + v.ntot);
    if (v.fresh_best >= 0) {
        best = v.fresh_best;
        bests = edge_prior(&e[best]) * exp(v.sig_mix - v.scale) / z;
    }
    for (int j = 0; j < v.nc; j++) {
        if (t->gsq[j] == -INFINITY)
            continue;
        int i = t->gidx[j];
        double s = edge_prior(&e[i]) * exp((double)t->gsq[j] - v.scale) / z - t->gcnt[j] * share;
        if (s > bests || (s == bests && i < best)) {
            bests = s;
            best = i;
        }
    }
    return best;
}

int mcts_gumbel_choice(mcts *t)
{
    const mnode *R = &t->nodes[0];
    if (R->status != NODE_EXPANDED || R->first_edge < 0)
        return -1;
    if (!t->gum_ready)
        mcts_gumbel_root_init(t);
    float *sq, *cnt;
    root_view(t, R, &sq, &cnt);
    int ne = R->nedges;
    float most = -1.0f;
    for (int i = 0; i < ne; i++)
        if (t->gum[i] != -INFINITY && sq[i] != -INFINITY && cnt[i] > most)
            most = cnt[i];
    int best = -1;
    double bests = -DBL_MAX;
    for (int i = 0; i < ne; i++) {
        if (t->gum[i] == -INFINITY || sq[i] == -INFINITY || cnt[i] != most)
            continue;
        double s = (double)t->gum[i] + sq[i];
        if (s > bests) {
            bests = s;
            best = i;
        }
    }
    return best >= 0 ? t->edges[R->first_edge + best].action : -1;
}
