/* mcts_impl.h — the search tree's private layout, shared by the files of the search
 * (mcts.c: the tree, selection, backup, reuse; mcts_root.c: the root's noise, targets
 * and move choice; mcts_solver.c: proofs; mcts_gumbel.c: Gumbel root and interior
 * selection). Nothing outside engine/mcts*.c includes it. */
#ifndef GZ_MCTS_IMPL_H
#define GZ_MCTS_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "mcts.h"
#include "rng.h"


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
    float *gum;         /* [actions] gumbel: g + log P of the root's considered moves by edge
                         * index, -inf for the others (mcts_gumbel.c) */
    float *gsq;         /* [actions] gumbel: a node's children's sigma(completed Q) */
    float *gcnt;        /* [actions] gumbel: their visits, pending included */
    int32_t *gidx;      /* [actions] gumbel: their edge indices */
    int32_t *sched;     /* [sched_cap] gumbel: the root's sequential-halving schedule */
    int sched_cap;
    int *cout;          /* [max_chance] chance outcomes scratch */
    float *cprob;       /* [max_chance] their probabilities */
    /* mutated */
    rng r;
    int32_t nnodes;
    int64_t nedges_used;
    bool root_noised;
    bool full;
    int sims;           /* playouts backed up in this search */
    int budget;         /* playouts this search makes (mcts_begin) */
    uint64_t step_stamp; /* last batch step this tree contributed leaves to */
    float qmin, qmax;   /* scored: the range of the Q values seen this search (MuZero) */
    bool gum_ready;     /* gumbel: the root's considered moves and schedule are set */
    int gum_m;          /* gumbel: moves considered at this root */
    int gum_sched_n;    /* gumbel: simulations the schedule covers */
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

enum { MCTS_VCF_PV = 64, MCTS_DEFEND_BUDGET = 1000, MCTS_VCT_DEPTH = 6 };

/* ---- helpers every file of the search reads ---------------------------------- */

/* The value vector v of a node as the search reads it: v itself, or with contempt on,
 * v through mcts_contempt_value for the searching player. */
static inline const float *search_value(const mcts *t, const float *v, float *buf)
{
    if (t->cplayer < 0)
        return v;
    mcts_contempt_value(t->p.contempt, t->cplayer, v, buf);
    return buf;
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

/* ---- across the files (internal; contracts at the definitions) ------------------- */

/* mcts.c */
double mcts_elapsed(const mcts *t);
/* mcts_root.c: the self-play root's temperature and Dirichlet noise, once per root */
void mcts_apply_noise(mcts *t);
/* mcts_solver.c */
bool mcts_vcf_prove(mcts *t, mnode *X, const game_state *s, int budget, int vct_depth);
int mcts_vcf_restrict(mcts *t, const game_state *s, int nl);
void mcts_solver_propagate(mcts *t, int32_t x);
/* mcts_gumbel.c: the root's considered moves and schedule (once the root is expanded);
 * the root's and an interior node's edge to follow (index into the node's edges, -1 when
 * none); the move the halving chose (mcts_finish), -1 when the root is not expanded */
void mcts_gumbel_root_init(mcts *t);
int mcts_gumbel_select_root(mcts *t, const mnode *R);
int mcts_gumbel_select_interior(mcts *t, const mnode *X);
int mcts_gumbel_choice(mcts *t);

#endif
