/* mcts_solver.c — proofs in the search tree: MCTS-solver and the threat checks.
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
 */
#include <float.h>

#include "mcts_impl.h"

/* vcf_leaf / vcf_root: if the mover of s has a VCF within budget nodes, X becomes a
 * proven win for him (two players) with the line's first move. */
bool mcts_vcf_prove(mcts *t, mnode *X, const game_state *s, int budget, int vct_depth)
{
    const game *g = t->g;
    int pv[MCTS_VCF_PV];
    if (g->players != 2)
        return false;
    int m = game_current_player(g, s);
    if (g->ops->threat_win(g, s, t->threat, m, budget, vct_depth, pv, MCTS_VCF_PV) <= 0)
        return false;
    X->pz[m] = 1.0f;
    X->pz[1 - m] = -1.0f;
    X->proven = 1;
    X->best = (int16_t)pv[0];
    X->status = NODE_EXPANDED;
    return true;
}

/* vcf_defend: keeps in t->mask (nl legal moves) only the moves that answer the
 * opponent's VCF, when he has one and something answers it. Returns the new count. */
int mcts_vcf_restrict(mcts *t, const game_state *s, int nl)
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
void mcts_solver_propagate(mcts *t, int32_t x)
{
    if (!t->p.solver)
        return;
    for (int32_t y = t->nodes[x].parent; y >= 0; y = t->nodes[y].parent)
        if (!solver_check(t, y))
            break;
}
