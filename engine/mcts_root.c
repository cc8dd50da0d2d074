/* mcts_root.c — the root of a search: the self-play root's noise, the policy targets
 * (visits with forced playouts pruned, KataGo; the completed-Q improved policy, Gumbel
 * MuZero), the move choice (temperature, most visited, LCB) and mcts_finish.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "mcts_impl.h"

/* The self-play root: priors ^ (1/root_policy_temp) renormalised, then Dirichlet noise
 * (alpha = dirichlet_total / legal moves when dirichlet_total > 0). Once per root. */
void mcts_apply_noise(mcts *t)
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
 * search's visits, proven children at their proven values, then the proven-lost moves'
 * mass given to the others; scored games: each edge's Q in points and the root's points
 * to come as v) into pi[A]; returns 0, or -1 when it cannot be made (pi untouched). */
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
    /* a proven-lost move gets no mass (as in the visit target) once another move has
     * some: it stays at q = -1 in the rescaling above, which keeps the others' spread
     * (left out of it, a lone defence and the unvisited moves' v_mix would span [0, 1]
     * between them), but at sigma = 0 each lost move would still keep about its prior:
     * 24% of the target in test_mcts's gumbel_target_keeps_a_lone_defence */
    if (t->p.solver && !t->scored) {
        double kept = 0;
        for (int i = 0; i < ne; i++) {
            int32_t c = e[i].child;
            if (c >= 0 && t->nodes[c].proven && t->nodes[c].pz[m] <= -1.0f)
                vis[i] = -1.0f; /* marks the lost moves (vis is not read again) */
            else
                kept += out[i];
        }
        if (kept > 0)
            for (int i = 0; i < ne; i++)
                out[i] = vis[i] < 0 ? 0.0f : (float)(out[i] / kept);
    }
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
        } else if (t->p.gumbel && (action = mcts_gumbel_choice(t)) >= 0) {
            /* the sequential halving's winner (mcts_gumbel.c) */
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
    t->st.seconds = mcts_elapsed(t);
    t->st.proven = res->proven;
    t->st.arena_full = t->full;
    res->stats = t->st;
    /* the completed-Q target replaces the visits as the target only, once the move is
     * chosen (its scratch is t->noise, pi's) */
    if (pi_out && t->st.pi_visits > 0 && (t->p.completed_q || t->p.gumbel))
        completed_q_target(t, t->pit);
    if (pi_out)
        memcpy(pi_out, t->st.pi_visits > 0 ? t->pit : pi, sizeof(float) * (size_t)A);
}
