/* net_train_impl.h — the body of net_train.c, included twice with R (float/double),
 * F(name) (name / name##_f64) and TN (the context type) defined. */

struct TN {
    /* immutable after new */
    nn_layout L;
    int maxN;
    int planes, rows, cols, HW, A, C, Hc, V, P, hex, blocks, residual, dense_policy, zerosum;
    int Wp, gmax;       /* the value pool's width (Hc or 2 Hc) and whether it has the maxima */
    int linear_value;   /* score head: the value FC's outputs as they are (no tanh) */
    int wdl;            /* wdl head: the FC's 3 outputs are the mover's win/draw/loss logits */
    int VO;             /* the value FC's outputs (nn_value_outputs: P, or 3 for wdl) */
    int aux;            /* the opponent-reply head (spec aux_policy) */
    uint8_t *ones;      /* (maxN, A) all 1: the aux head's softmax runs over every point */
    int own;            /* the ownership head (spec aux_owner) */
    int action_value;   /* the policy outputs are move values y_a (spec action_value) */
    R logit_scale;      /* nn_policy_logit_scale: the priors are softmax(logits x this) */
    int K;              /* its classes: nobody, then the players mover-first (P + 1) */
    size_t conv_scratch_n;
    int conv_algo;      /* the trunk's 3x3 convs: CONV_AUTO or CONV_IM2COL (layers.h) */
    /* mutated by forward/backward; M = n * HW */
    int n;
    const R *pi, *z; /* targets of the last forward (borrowed) */
    const R *opp;    /* the aux head's targets (train_net_set_aux; borrowed), or NULL */
    double aux_weight;
    int aux_on;      /* the last forward had aux targets and a weight > 0 */
    R *aux_logits, *aux_probs; /* (N, A) */
    const int8_t *own_lab; /* the ownership targets (train_net_set_owner; borrowed), or NULL */
    double own_weight;
    int own_on;         /* the last forward had ownership targets and a weight > 0 */
    R *own_logits, *own_probs, *down; /* (K, M): channel-major like the convs' outputs */
    const R *qa;        /* the action values' targets (train_net_set_action_values; borrowed),
                         * (n, A) in the h scale, NaN = none, or NULL */
    double qa_weight;
    R *scaled;          /* (A) scratch: logits x logit_scale */
    const uint8_t *legal;
    R *x0;              /* (planes, M) input, channel-major */
    R *stem_c, *stem_a; /* (C, M) conv output; BN+ReLU output */
    R *blk;             /* blocks x 4 x (C, M): c1, a1, c2, out */
    R *bn_mean, *bn_invstd; /* per BN layer (stem, blocks' bn1/bn2, policy, value) x maxc */
    R *p_c, *p_a;       /* (Hc, M) */
    R *p_flat;          /* (N, Hc*HW) dense policy head only */
    R *logits, *probs;  /* (N, A) */
    R *v_c, *v_a;       /* (Hc, M) */
    R *pooled;          /* (N, Wp): Wp = Hc, or 2 Hc with mean_max (means, then maxima) */
    R *h1;              /* (N, V) after ReLU */
    R *vt;              /* (N, VO) tanh outputs (the FC outputs for a score head, the
                         * logits for wdl) */
    R *wp;              /* (N, 3) wdl: softmax(vt), win/draw/loss of the mover */
    R *v;               /* (N, P) values: vt, or vt minus its mean per sample (zerosum) */
    /* gradient buffers */
    R *g, *t1, *t2;     /* (C, M) */
    R *gh1, *gh2;       /* (Hc, M) */
    R *dlogits;         /* (N, A) */
    R *dpflat;          /* (N, Hc*HW) */
    R *dv, *dh1, *dpooled; /* (N, P), (N, V), (N, Wp) */
    R *scratch;         /* conv3x3 scratch: nth x conv_scratch_n, one per thread */
    int maxc;
    train_pool *pool;   /* nth threads share every trunk layer (see net_train.h) */
    int nth;
    /* arguments of the running trunk job (set by the caller before train_pool_run) */
    R *j_params;
    const R *j_input;
    train_mode j_mode;
    R *j_grads;
    /* data-parallel (train_net_set_reducer): the reducer, whether the running forward /
     * backward sums over the ranks, the whole batch's samples, and the BN sums the
     * threads fill and the reducer adds up (2 x maxc doubles) */
    train_reducer red;
    int sync;
    double nglobal;
    double *red_buf;
    /* mixed board sizes (train_net_set_boards): each sample's board, padded at the top
     * left into rows x cols; masked = the last forward had a smaller one, and then mask
     * and onb say which columns are points of their sample's board, bcnt how many each
     * sample has, mon how many the batch has (mon_global: over every rank) */
    const uint8_t *brows, *bcols; /* (n) borrowed, or NULL: every board full size */
    int masked;
    R *mask;            /* (maxN * HW) 1 on a board, 0 on its padding */
    uint8_t *onb;       /* (maxN, A) the same as bytes: the aux head's softmax support */
    double *bcnt;       /* (maxN) */
    double mon, mon_global;
};

static R *F(blk_buf)(const TN *t, int k, int which)
{
    size_t cm = (size_t)t->C * t->maxN * t->HW;
    return t->blk + ((size_t)k * 4 + which) * cm;
}

void F(train_net_free)(TN *t)
{
    if (!t)
        return;
    R **bufs[] = {&t->x0, &t->stem_c, &t->stem_a, &t->blk, &t->bn_mean, &t->bn_invstd, &t->p_c,
                      &t->p_a, &t->p_flat, &t->logits, &t->probs, &t->v_c, &t->v_a, &t->pooled,
                      &t->h1, &t->vt, &t->wp, &t->v, &t->g, &t->t1, &t->t2, &t->gh1, &t->gh2, &t->dlogits,
                      &t->dpflat, &t->dv, &t->dh1, &t->dpooled, &t->scratch, &t->aux_logits,
                      &t->aux_probs, &t->own_logits, &t->own_probs, &t->down, &t->scaled};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(*bufs[i]);
    free(t->red_buf);
    free(t->ones);
    free(t->mask), free(t->onb), free(t->bcnt);
    train_pool_free(t->pool);
    free(t);
}

static R *F(alloc_f)(size_t n, int *ok)
{
    R *p = NULL;
    size_t bytes = ((sizeof(R) * (n ? n : 1)) + 63) / 64 * 64;
    if (posix_memalign((void **)&p, 64, bytes) != 0) {
        *ok = 0;
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

TN *F(train_net_new)(const nn_layout *L, int max_batch, char *err, size_t errlen)
{
    return F(train_net_new_threads)(L, max_batch, 0, err, errlen);
}

TN *F(train_net_new_threads)(const nn_layout *L, int max_batch, int threads, char *err,
                             size_t errlen)
{
    TN *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    const nn_spec *s = &L->spec;
    t->L = *L;
    t->maxN = max_batch;
    t->planes = s->planes;
    t->rows = s->rows;
    t->cols = s->cols;
    t->HW = s->rows * s->cols;
    t->dense_policy = nn_policy_is_fc(s);
    t->action_value = s->policy == NN_POLICY_ACTION_VALUE;
    t->logit_scale = (R)nn_policy_logit_scale(s);
    t->A = t->dense_policy ? s->actions : t->HW;
    t->C = s->channels;
    t->Hc = s->head_channels;
    t->V = s->value_hidden;
    t->Wp = nn_value_pool_width(s);
    t->gmax = s->value_pool == NN_POOL_MEAN_MAX;
    t->P = s->players;
    t->hex = s->lattice == GAME_LATTICE_HEX;
    t->blocks = s->blocks;
    t->residual = s->trunk == NN_TRUNK_RESIDUAL;
    t->zerosum = s->value == NN_VALUE_ZEROSUM;
    t->linear_value = s->value == NN_VALUE_SCORE;
    t->wdl = s->value == NN_VALUE_WDL;
    t->VO = nn_value_outputs(s);
    t->aux = s->aux_policy && !t->dense_policy;
    t->own = s->aux_owner && !t->dense_policy;
    t->K = s->players + 1;
    t->maxc = t->C > t->Hc ? t->C : t->Hc;
    size_t N = (size_t)max_batch, M = N * t->HW, C = (size_t)t->C, Hc = (size_t)t->Hc;
    conv_dims ds = {max_batch, t->planes, t->C, t->rows, t->cols, t->hex, CONV_AUTO};
    conv_dims db = {max_batch, t->C, t->C, t->rows, t->cols, t->hex, CONV_AUTO};
    size_t s1 = F(conv3x3_scratch)(ds), s2 = F(conv3x3_scratch)(db);
    t->conv_scratch_n = (s1 > s2 ? s1 : s2) + 16; /* + 16: each thread's part 64-byte aligned */
    t->conv_scratch_n = t->conv_scratch_n / 16 * 16;
    t->nth = net_train_threads(); /* (also sets OpenBLAS to one thread per call) */
    if (threads > 0)
        t->nth = threads > 64 ? 64 : threads;
    int nbn = 3 + 2 * t->blocks;
    int ok = 1;
    t->x0 = F(alloc_f)((size_t)t->planes * M, &ok);
    t->stem_c = F(alloc_f)(C * M, &ok);
    t->stem_a = F(alloc_f)(C * M, &ok);
    t->blk = F(alloc_f)((size_t)t->blocks * 4 * C * M, &ok);
    t->bn_mean = F(alloc_f)((size_t)nbn * t->maxc, &ok);
    t->bn_invstd = F(alloc_f)((size_t)nbn * t->maxc, &ok);
    t->p_c = F(alloc_f)(Hc * M, &ok);
    t->p_a = F(alloc_f)(Hc * M, &ok);
    t->p_flat = F(alloc_f)(t->dense_policy ? Hc * M : 1, &ok);
    t->logits = F(alloc_f)(N * t->A, &ok);
    t->probs = F(alloc_f)(N * t->A, &ok);
    t->v_c = F(alloc_f)(Hc * M, &ok);
    t->v_a = F(alloc_f)(Hc * M, &ok);
    t->pooled = F(alloc_f)(N * (size_t)t->Wp, &ok);
    t->h1 = F(alloc_f)(N * t->V, &ok);
    t->vt = F(alloc_f)(N * t->VO, &ok);
    t->wp = F(alloc_f)(N * NN_WDL_OUTPUTS, &ok);
    t->v = F(alloc_f)(N * t->P, &ok);
    t->g = F(alloc_f)(C * M, &ok);
    t->t1 = F(alloc_f)(C * M, &ok);
    t->t2 = F(alloc_f)(C * M, &ok);
    t->gh1 = F(alloc_f)(Hc * M, &ok);
    t->gh2 = F(alloc_f)(Hc * M, &ok);
    t->dlogits = F(alloc_f)(N * t->A, &ok);
    t->dpflat = F(alloc_f)(t->dense_policy ? Hc * M : 1, &ok);
    t->dv = F(alloc_f)(N * t->P, &ok);
    t->dh1 = F(alloc_f)(N * t->V, &ok);
    t->dpooled = F(alloc_f)(N * (size_t)t->Wp, &ok);
    t->scratch = F(alloc_f)(t->conv_scratch_n * (size_t)t->nth, &ok);
    t->aux_logits = F(alloc_f)(t->aux ? N * t->A : 1, &ok);
    t->aux_probs = F(alloc_f)(t->aux ? N * t->A : 1, &ok);
    size_t km = t->own ? (size_t)t->K * M : 1;
    t->own_logits = F(alloc_f)(km, &ok);
    t->own_probs = F(alloc_f)(km, &ok);
    t->down = F(alloc_f)(km, &ok);
    t->scaled = F(alloc_f)((size_t)t->A, &ok);
    t->ones = malloc(t->aux ? N * t->A : 1);
    if (t->ones)
        memset(t->ones, 1, t->aux ? N * t->A : 1);
    t->red_buf = calloc(2 * (size_t)t->maxc, sizeof(double));
    ok &= t->red_buf != NULL && t->ones != NULL;
    if (!t->dense_policy) { /* mixed board sizes need one logit per point */
        t->mask = F(alloc_f)(M, &ok);
        t->onb = malloc(M);
        t->bcnt = malloc(sizeof(double) * N);
        ok &= t->onb && t->bcnt;
    }
    if (ok) {
        t->pool = train_pool_new(t->nth);
        ok = t->pool != NULL;
    }
    if (!ok) {
        F(train_net_free)(t);
        snprintf(err, errlen, "out of memory for a training context of batch %d", max_batch);
        return NULL;
    }
    return t;
}

void F(train_net_set_boards)(TN *t, const uint8_t *rows, const uint8_t *cols)
{
    assert(!rows == !cols);
    t->brows = rows;
    t->bcols = cols;
}

/* The masks of a batch of n samples (train_net_set_boards): t->masked = whether any board
 * is smaller than the layout's, and then mask, onb, bcnt and mon. */
static void F(build_masks)(TN *t, int n)
{
    t->masked = 0;
    t->mon = (double)n * t->HW;
    if (!t->brows)
        return;
    for (int b = 0; b < n; b++) {
        assert(t->brows[b] >= 1 && t->brows[b] <= t->rows && t->bcols[b] >= 1 &&
               t->bcols[b] <= t->cols);
        t->masked |= t->brows[b] < t->rows || t->bcols[b] < t->cols;
    }
    if (!t->masked)
        return;
    assert(!t->dense_policy);
    t->mon = 0;
    for (int b = 0; b < n; b++) {
        size_t o = (size_t)b * t->HW;
        for (int y = 0; y < t->rows; y++)
            for (int x = 0; x < t->cols; x++) {
                int on = y < t->brows[b] && x < t->bcols[b];
                t->mask[o + (size_t)y * t->cols + x] = (R)on;
                t->onb[o + (size_t)y * t->cols + x] = (uint8_t)on;
            }
        t->bcnt[b] = (double)t->brows[b] * t->bcols[b];
        t->mon += t->bcnt[b];
    }
}

/* The column mask of the last forward, or NULL when every board is full size. */
static const R *F(col_mask)(const TN *t) { return t->masked ? t->mask : NULL; }

/* The aux head's softmax support from sample b on, (n - b, A): every point of each
 * sample's board (all ones when they are all full size). */
static const uint8_t *F(aux_support)(const TN *t, int b)
{
    return (t->masked ? t->onb : t->ones) + (size_t)b * t->A;
}

void F(train_net_set_aux)(TN *t, const R *opp, double weight)
{
    t->opp = opp;
    t->aux_weight = weight;
}

const R *F(train_net_aux_probs)(const TN *t) { return t->aux ? t->aux_probs : NULL; }

void F(train_net_set_conv)(TN *t, int algo)
{
    /* the scratch was sized for CONV_AUTO, which covers both algorithms' needs */
    t->conv_algo = algo == CONV_IM2COL ? CONV_IM2COL : CONV_AUTO;
}

void F(train_net_set_owner)(TN *t, const int8_t *own, double weight)
{
    t->own_lab = own;
    t->own_weight = weight;
}

const R *F(train_net_owner_probs)(const TN *t) { return t->own ? t->own_probs : NULL; }

void F(train_net_set_action_values)(TN *t, const R *qa, double weight)
{
    t->qa = qa;
    t->qa_weight = weight;
}

/* The action-value head's loss over the batch: per sample the mean over its moves with
 * a target of (y_a - t_a)^2 (a sample without any adds 0), then the mean over the n
 * samples. NULL targets: 0. */
static double F(action_value_mse)(const TN *t, int n)
{
    if (!t->qa)
        return 0;
    double loss = 0;
    for (int b = 0; b < n; b++) {
        const R *y = t->logits + (size_t)b * t->A, *q = t->qa + (size_t)b * t->A;
        double s = 0;
        int k = 0;
        for (int a = 0; a < t->A; a++)
            if (!isnan(q[a])) {
                double e = (double)y[a] - q[a];
                s += e * e;
                k++;
            }
        loss += k ? s / k : 0;
    }
    return loss / n;
}

/* Its gradient into dlogits (n, A), the mean over the whole batch (every rank's
 * samples): weight x 2 (y_a - t_a) / (k_b x samples) on the moves with a target. */
static void F(action_value_backward)(TN *t, int n)
{
    for (int b = 0; b < n; b++) {
        const R *y = t->logits + (size_t)b * t->A, *q = t->qa + (size_t)b * t->A;
        R *d = t->dlogits + (size_t)b * t->A;
        int k = 0;
        for (int a = 0; a < t->A; a++)
            k += !isnan(q[a]);
        for (int a = 0; a < t->A; a++)
            d[a] = k && !isnan(q[a]) ? (R)(t->qa_weight * 2.0 * ((double)y[a] - q[a]) / (k * t->nglobal))
                                     : 0;
    }
}

static void F(masked_softmax)(int A, const R *logits, const uint8_t *legal, R *out);

/* The priors of sample b: the masked softmax of its logits x logit_scale (an action-value
 * head's temperature); adds their entropy to *entropy when given. */
static void F(scaled_probs)(TN *t, int b, const uint8_t *legal, double *entropy)
{
    const R *lg = t->logits + (size_t)b * t->A;
    R *p = t->probs + (size_t)b * t->A;
    for (int a = 0; a < t->A; a++)
        t->scaled[a] = lg[a] * t->logit_scale;
    if (!legal && t->masked) /* no legal moves given: every point of the sample's board */
        legal = t->onb;
    F(masked_softmax)(t->A, t->scaled, legal ? legal + (size_t)b * t->A : NULL, p);
    if (entropy)
        for (int a = 0; a < t->A; a++)
            *entropy -= p[a] > 0 ? (double)p[a] * log((double)p[a]) : 0;
}

/* The ownership head's forward on the value head's hidden layer: logits (K, M), then a
 * softmax over the K classes of every point. With targets, returns the loss: the mean
 * over the batch of the mean over the points of -log p(owner), points with an unknown
 * owner (-1) adding nothing; else 0. */
static double F(owner_forward)(TN *t, R *params, int n)
{
    int HW = t->HW, K = t->K;
    size_t M = (size_t)n * HW;
    conv_dims d = {n, t->Hc, K, t->rows, t->cols, 0, CONV_AUTO};
    F(conv1x1_forward)(t->own_logits, t->v_a, params + t->L.t[t->L.own_w].offset,
                       params + t->L.t[t->L.own_b].offset, d);
    double loss = 0;
    for (size_t m = 0; m < M; m++) {
        double mx = -INFINITY, sum = 0;
        for (int k = 0; k < K; k++)
            mx = fmax(mx, t->own_logits[(size_t)k * M + m]);
        for (int k = 0; k < K; k++) {
            double e = exp(t->own_logits[(size_t)k * M + m] - mx);
            t->own_probs[(size_t)k * M + m] = (R)e;
            sum += e;
        }
        for (int k = 0; k < K; k++)
            t->own_probs[(size_t)k * M + m] = (R)(t->own_probs[(size_t)k * M + m] / sum);
        int lab = t->own_lab ? t->own_lab[m] : -1;
        if (t->masked && t->mask[m] == 0)
            lab = -1; /* the padding of a smaller board: no target */
        if (lab < 0 || lab >= K)
            continue;
        double l = t->own_logits[(size_t)lab * M + m] - mx - log(sum); /* log p, exact for tiny p */
        /* each sample's mean over its own board's points */
        loss -= t->masked ? l / t->bcnt[m / (size_t)HW] : l;
    }
    return t->masked ? loss / n : loss / ((double)HW * n);
}

/* The ownership head's backward: its logits' gradient, then the conv's, accumulated
 * into gh1 (the value head's hidden layer, before its ReLU and BN). */
static void F(owner_backward)(TN *t, const R *params, R *grads, int n)
{
    int HW = t->HW, K = t->K;
    size_t M = (size_t)n * HW;
    R scale = (R)(t->own_weight / ((double)HW * t->nglobal));
    for (size_t m = 0; m < M; m++) {
        int lab = t->own_lab[m];
        if (t->masked) { /* a smaller board: its own points' mean, no target on its padding */
            lab = t->mask[m] != 0 ? lab : -1;
            scale = (R)(t->own_weight / (t->bcnt[m / (size_t)HW] * t->nglobal));
        }
        for (int k = 0; k < K; k++)
            t->down[(size_t)k * M + m] =
                lab >= 0 && lab < K ? scale * (t->own_probs[(size_t)k * M + m] - (R)(k == lab)) : 0;
    }
    conv_dims d = {n, t->Hc, K, t->rows, t->cols, 0, CONV_AUTO};
    F(conv1x1_backward)(t->gh1, grads + t->L.t[t->L.own_w].offset, grads + t->L.t[t->L.own_b].offset,
                        t->down, t->v_a, params + t->L.t[t->L.own_w].offset, d);
}

void F(train_net_set_reducer)(TN *t, const train_reducer *r)
{
    memset(&t->red, 0, sizeof t->red);
    if (r && r->ranks > 1)
        t->red = *r;
}

/* Inside a trunk job (pooled) or on the caller's thread: every thread has written its
 * channels' partial sums into red_buf (n doubles in use); thread 0 sums them over the
 * ranks while the others wait. */
static void F(sync_sums)(TN *t, int tid, int pooled, size_t n)
{
    if (pooled)
        train_pool_barrier(t->pool);
    if (tid == 0)
        t->red.sum_f64(t->red.ctx, t->red_buf, n);
    if (pooled)
        train_pool_barrier(t->pool);
}

const R *F(train_net_probs)(const TN *t) { return t->probs; }
const R *F(train_net_logits)(const TN *t) { return t->logits; }
const R *F(train_net_values)(const TN *t) { return t->v; }
const nn_layout *F(train_net_layout)(const TN *t) { return &t->L; }

static R *F(W)(const TN *t, R *params, int i) { return params + t->L.t[i].offset; }

/* Softmax of logits (A) over legal entries (legal NULL: all), 0 elsewhere. */
static void F(masked_softmax)(int A, const R *logits, const uint8_t *legal, R *out)
{
    double mx = -INFINITY, s = 0;
    for (int a = 0; a < A; a++)
        if ((!legal || legal[a]) && logits[a] > mx)
            mx = logits[a];
    for (int a = 0; a < A; a++) {
        double e = (!legal || legal[a]) && mx > -INFINITY ? exp(logits[a] - mx) : 0;
        out[a] = (R)e;
        s += e;
    }
    for (int a = 0; a < A; a++)
        out[a] = s > 0 ? (R)(out[a] / s) : 0;
}

/* Zeroes the masked taps of every 3x3 conv weight in a flat array (nn_tap_masked says
 * which). */
static void F(mask_taps)(const nn_layout *L, R *flat)
{
    for (int i = 0; i < L->ntensors; i++) {
        const nn_tensor *T = &L->t[i];
        if (T->kind != NN_T_CONV_WEIGHT || T->ndim != 4 || T->shape[2] != 3 || T->shape[3] != 3)
            continue;
        R *x = flat + T->offset;
        for (size_t k = 0; k < T->size; k += 9)
            for (int tap = 0; tap < 9; tap++)
                if (nn_tap_masked(L->spec.lattice, tap / 3, tap % 3))
                    x[k + (size_t)tap] = 0;
    }
}

/* BN layer `slot`, channels [c0, c1) of (C, M) arrays: training or eval mode; out may
 * alias in. Channels are independent, so threads may run disjoint ranges at once. */
static void F(bn_fwd)(TN *t, R *params, nn_bn_ix b, int slot, R *out, const R *in,
                   const R *skip, int relu, int c0, int c1, int M, train_mode mode, int tid,
                   int pooled, int C)
{
    size_t o = (size_t)c0 * M;
    R *gam = F(W)(t, params, b.gamma) + c0, *bet = F(W)(t, params, b.beta) + c0;
    R *rm = F(W)(t, params, b.mean) + c0, *rv = F(W)(t, params, b.var) + c0;
    const R *sk = skip ? skip + o : NULL;
    const R *mk = F(col_mask)(t);
    if (mode == TRAIN_MODE_TRAIN && (t->sync || mk)) {
        /* the whole batch's statistics: this rank's sums around the running mean (the
         * same shift on every rank), summed over the ranks, then the normalisation;
         * every thread reaches the sum even with no channels of its own. With smaller
         * boards: over the points of the boards alone (mon_global of them), and the
         * padding's outputs 0 */
        double *s = t->red_buf, *s2 = t->red_buf + C;
        if (c1 > c0)
            F(bn_partial_sums_masked)(s + c0, s2 + c0, in + o, rm, mk, c1 - c0, M);
        if (t->sync)
            F(sync_sums)(t, tid, pooled, 2 * (size_t)C);
        if (c1 > c0)
            F(bn_act_forward_sums_masked)(out + o, t->bn_mean + (size_t)slot * t->maxc + c0,
                                          t->bn_invstd + (size_t)slot * t->maxc + c0, in + o, rm,
                                          s + c0, s2 + c0, t->mon_global, gam, bet, rm, rv, sk,
                                          relu, mk, c1 - c0, M, NN_BN_EPS);
        return;
    }
    if (c1 <= c0)
        return;
    if (mk)
        F(bn_act_forward_eval_masked)(out + o, in + o, gam, bet, rm, rv, sk, relu, mk, c1 - c0, M,
                                      NN_BN_EPS);
    else if (mode == TRAIN_MODE_TRAIN)
        F(bn_act_forward_train)(out + o, t->bn_mean + (size_t)slot * t->maxc + c0,
                                t->bn_invstd + (size_t)slot * t->maxc + c0, in + o, gam, bet, rm,
                                rv, sk, relu, c1 - c0, M, NN_BN_EPS);
    else
        F(bn_act_forward_eval)(out + o, in + o, gam, bet, rm, rv, sk, relu, c1 - c0, M, NN_BN_EPS);
}

/* BN backward of channels [c0, c1); relu_out (the ReLU's output after this BN, or NULL)
 * masks dout; dinp is overwritten. */
static void F(bn_bwd)(TN *t, const R *params, R *grads, nn_bn_ix b, int slot,
                   R *dinp, const R *dout, const R *relu_out, const R *in, int c0, int c1, int M,
                   int tid, int pooled, int C)
{
    size_t o = (size_t)c0 * M;
    const R *mk = F(col_mask)(t);
    if (t->sync || mk) {
        /* dgamma, dbeta from this rank's part (the gradients are summed later); the
         * input gradient from the sums over the whole batch (smaller boards: over their
         * points alone, and none to the padding) */
        double *sdy = t->red_buf, *sdyx = t->red_buf + C;
        const R *mean = t->bn_mean + (size_t)slot * t->maxc + c0;
        const R *invstd = t->bn_invstd + (size_t)slot * t->maxc + c0;
        if (c1 > c0)
            F(bn_backward_partial_sums_masked)(sdy + c0, sdyx + c0,
                                               grads + t->L.t[b.gamma].offset + c0,
                                               grads + t->L.t[b.beta].offset + c0, dout + o,
                                               relu_out ? relu_out + o : NULL, in + o, mean, invstd,
                                               mk, c1 - c0, M);
        if (t->sync)
            F(sync_sums)(t, tid, pooled, 2 * (size_t)C);
        if (c1 > c0)
            F(bn_act_backward_sums_masked)(dinp + o, dout + o, relu_out ? relu_out + o : NULL,
                                           in + o, params + t->L.t[b.gamma].offset + c0, mean,
                                           invstd, sdy + c0, sdyx + c0, t->mon_global, mk, c1 - c0,
                                           M, 0);
        return;
    }
    if (c1 <= c0)
        return;
    F(bn_act_backward)(dinp + o, grads + t->L.t[b.gamma].offset + c0,
                       grads + t->L.t[b.beta].offset + c0, dout + o, relu_out ? relu_out + o : NULL,
                       in + o, params + t->L.t[b.gamma].offset + c0,
                       t->bn_mean + (size_t)slot * t->maxc + c0,
                       t->bn_invstd + (size_t)slot * t->maxc + c0, c1 - c0, M, 0);
}

/* The trunk's output: the last block's, or the stem's. */
static R *F(trunk_out)(const TN *t)
{
    return t->blocks ? F(blk_buf)(t, t->blocks - 1, 3) : t->stem_a;
}

/* The trunk's forward on thread tid of nth: convs split by samples, batch norms by
 * channels, a barrier between dependent layers. */
static void F(trunk_forward_job)(void *arg, int tid, int nth)
{
    TN *t = arg;
    const nn_layout *L = &t->L;
    R *params = t->j_params;
    train_mode mode = t->j_mode;
    int n = t->n, HW = t->HW, M = n * HW, C = t->C, b0, b1, c0, c1;
    R *scr = t->scratch + (size_t)tid * t->conv_scratch_n;
    train_pool_share(n, tid, nth, &b0, &b1);
    train_pool_share(C, tid, nth, &c0, &c1);
    /* NCHW -> channel-major */
    const R *mk = F(col_mask)(t);
    for (int b = b0; b < b1; b++)
        for (int p = 0; p < t->planes; p++) {
            R *dst = t->x0 + (size_t)p * M + (size_t)b * HW;
            memcpy(dst, t->j_input + ((size_t)b * t->planes + p) * HW, sizeof(R) * (size_t)HW);
            for (int i = 0; mk && i < HW; i++) /* a smaller board's padding: 0 */
                dst[i] *= mk[(size_t)b * HW + i];
        }
    train_pool_barrier(t->pool);
    conv_dims ds = {n, t->planes, C, t->rows, t->cols, t->hex, t->conv_algo};
    conv_dims db = {n, C, C, t->rows, t->cols, t->hex, t->conv_algo};
    F(conv3x3_forward_part)(t->stem_c, t->x0, F(W)(t, params, L->stem_conv), ds, scr, tid, nth);
    train_pool_barrier(t->pool);
    F(bn_fwd)(t, params, L->stem_bn, 0, t->stem_a, t->stem_c, NULL, 1, c0, c1, M, mode, tid, 1, C);
    train_pool_barrier(t->pool);
    const R *x = t->stem_a;
    for (int k = 0; k < t->blocks; k++) {
        const nn_block_ix *B = &L->block[k];
        R *c1b = F(blk_buf)(t, k, 0), *a1 = F(blk_buf)(t, k, 1), *c2 = F(blk_buf)(t, k, 2);
        R *out = F(blk_buf)(t, k, 3);
        F(conv3x3_forward_part)(c1b, x, F(W)(t, params, B->conv1), db, scr, tid, nth);
        train_pool_barrier(t->pool);
        F(bn_fwd)(t, params, B->bn1, 1 + 2 * k, a1, c1b, NULL, 1, c0, c1, M, mode, tid, 1, C);
        train_pool_barrier(t->pool);
        F(conv3x3_forward_part)(c2, a1, F(W)(t, params, B->conv2), db, scr, tid, nth);
        train_pool_barrier(t->pool);
        F(bn_fwd)(t, params, B->bn2, 2 + 2 * k, out, c2, t->residual ? x : NULL, 1, c0, c1, M, mode,
                 tid, 1, C);
        train_pool_barrier(t->pool);
        x = out;
    }
}

/* The wdl head's forward: t->wp = softmax of the logits t->vt, the values W - L (mover)
 * and L - W (nn_value_finish). */
static void F(wdl_forward)(TN *t, int n)
{
    for (int b = 0; b < n; b++) {
        const R *o = t->vt + (size_t)b * NN_WDL_OUTPUTS;
        R *p = t->wp + (size_t)b * NN_WDL_OUTPUTS, m = o[0], sum = 0;
        for (int k = 1; k < NN_WDL_OUTPUTS; k++)
            m = o[k] > m ? o[k] : m;
        for (int k = 0; k < NN_WDL_OUTPUTS; k++)
            sum += p[k] = (R)exp((double)(o[k] - m));
        for (int k = 0; k < NN_WDL_OUTPUTS; k++)
            p[k] /= sum;
        t->v[(size_t)b * t->P] = p[NN_WDL_WIN] - p[NN_WDL_LOSS];
        t->v[(size_t)b * t->P + 1] = p[NN_WDL_LOSS] - p[NN_WDL_WIN];
    }
}

/* The wdl head's target from the mover's outcome z in [-1, 1]: win max(z, 0), loss
 * max(-z, 0), draw 1 - |z| (one-hot for z = 1, 0, -1; a fractional z, from q_ratio or
 * adjudication, is the mixture whose expected value W - L is z). */
static void F(wdl_target)(R z, R *y)
{
    y[NN_WDL_WIN] = z > 0 ? z : 0;
    y[NN_WDL_LOSS] = z < 0 ? -z : 0;
    y[NN_WDL_DRAW] = 1 - (z < 0 ? -z : z);
}

/* The wdl head's loss: the mean over the samples of the cross-entropy of softmax(logits)
 * against wdl_target(z[mover]), in nats, from the log-softmax of the logits (finite
 * even where a probability rounds to 0). */
static double F(wdl_loss)(const TN *t, int n, const R *z)
{
    double s = 0;
    for (int b = 0; b < n; b++) {
        const R *o = t->vt + (size_t)b * NN_WDL_OUTPUTS;
        R y[NN_WDL_OUTPUTS];
        F(wdl_target)(z[(size_t)b * t->P], y);
        double m = o[0], sum = 0;
        for (int k = 1; k < NN_WDL_OUTPUTS; k++)
            m = o[k] > m ? o[k] : m;
        for (int k = 0; k < NN_WDL_OUTPUTS; k++)
            sum += exp((double)o[k] - m);
        double lse = m + log(sum);
        for (int k = 0; k < NN_WDL_OUTPUTS; k++)
            s -= (double)y[k] * ((double)o[k] - lse);
    }
    return s / n;
}

/* d(value_weight x wdl_loss of the whole batch)/d(logits) into d (n, 3): softmax minus
 * target, over the samples of every rank. */
static void F(wdl_backward)(const TN *t, int n, R *d, double value_weight)
{
    R k = (R)(value_weight / t->nglobal);
    for (int b = 0; b < n; b++) {
        const R *p = t->wp + (size_t)b * NN_WDL_OUTPUTS;
        R y[NN_WDL_OUTPUTS];
        F(wdl_target)(t->z[(size_t)b * t->P], y);
        for (int j = 0; j < NN_WDL_OUTPUTS; j++)
            d[(size_t)b * NN_WDL_OUTPUTS + j] = k * (p[j] - y[j]);
    }
}

/* The value head's last step (nn_value_finish): zerosum subtracts each sample's mean of
 * the tanh outputs; independent copies them; wdl: wdl_forward. */
static void F(value_finish_forward)(TN *t, int n)
{
    if (t->wdl) {
        F(wdl_forward)(t, n);
        return;
    }
    size_t np = (size_t)n * t->P;
    memcpy(t->v, t->vt, sizeof(R) * np);
    if (!t->zerosum)
        return;
    for (int b = 0; b < n; b++) {
        R *v = t->v + (size_t)b * t->P, m = 0;
        for (int i = 0; i < t->P; i++)
            m += v[i];
        m /= (R)t->P;
        for (int i = 0; i < t->P; i++)
            v[i] -= m;
    }
}

/* In place on t->dv: d/d(vt) from d/d(v). The centring's Jacobian is I - 1/P. */
static void F(value_finish_backward)(TN *t, int n)
{
    if (!t->zerosum)
        return;
    for (int b = 0; b < n; b++) {
        R *d = t->dv + (size_t)b * t->P, m = 0;
        for (int i = 0; i < t->P; i++)
            m += d[i];
        m /= (R)t->P;
        for (int i = 0; i < t->P; i++)
            d[i] -= m;
    }
}

/* The value loss per sample is sum_p (v_p - z_p)^2 / 2 with the zero-sum head (two
 * players: exactly the mover's squared error, the outputs no longer halve each
 * other's gradient) and the mean over players with independent outputs. */
static double F(value_loss_scale)(const TN *t)
{
    return t->zerosum ? (double)t->P / 2.0 : 1.0;
}

void F(train_net_forward)(TN *t, R *params, int n, const R *input, const R *pi,
                       const uint8_t *legal, const R *z, train_mode mode, double value_weight,
                       double weight_decay, train_losses *losses)
{
    assert(n >= 1 && n <= t->maxN);
    const nn_layout *L = &t->L;
    int HW = t->HW, M = n * HW, C = t->C, Hc = t->Hc;
    t->n = n;
    t->pi = pi;
    t->z = z;
    t->legal = legal;
    t->j_params = params;
    t->j_input = input;
    t->j_mode = mode;
    t->sync = t->red.ranks > 1 && mode == TRAIN_MODE_TRAIN;
    F(build_masks)(t, n);
    /* the samples, and the board points the batch norms count, over every rank */
    double cnt[2] = {n, t->mon};
    if (t->sync)
        t->red.sum_f64(t->red.ctx, cnt, 2);
    t->nglobal = cnt[0];
    t->mon_global = cnt[1];
    train_pool_run(t->pool, F(trunk_forward_job), t);
    const R *x = F(trunk_out)(t);
    int slot_p = 1 + 2 * t->blocks, slot_v = slot_p + 1;
    /* policy head */
    conv_dims dh = {n, C, Hc, t->rows, t->cols, 0, CONV_AUTO};
    F(conv1x1_forward)(t->p_c, x, F(W)(t, params, L->pol_conv), NULL, dh);
    F(bn_fwd)(t, params, L->pol_bn, slot_p, t->p_a, t->p_c, NULL, 1, 0, Hc, M, mode, 0, 0, Hc);
    if (!t->dense_policy) {
        conv_dims d1 = {n, Hc, 1, t->rows, t->cols, 0, CONV_AUTO};
        F(conv1x1_forward)(t->logits, t->p_a, F(W)(t, params, L->pol_out_w), F(W)(t, params, L->pol_out_b), d1);
        if (t->aux)
            F(conv1x1_forward)(t->aux_logits, t->p_a, F(W)(t, params, L->pol_aux_w),
                               F(W)(t, params, L->pol_aux_b), d1);
    } else {
        F(cnhw_to_nchw_forward)(t->p_flat, t->p_a, n, Hc, HW);
        F(dense_forward)(t->logits, t->p_flat, F(W)(t, params, L->pol_out_w), F(W)(t, params, L->pol_out_b), n,
                      Hc * HW, t->A);
    }
    /* value head */
    F(conv1x1_forward)(t->v_c, x, F(W)(t, params, L->val_conv), NULL, dh);
    F(bn_fwd)(t, params, L->val_bn, slot_v, t->v_a, t->v_c, NULL, 1, 0, Hc, M, mode, 0, 0, Hc);
    if (t->masked)
        F(gpool_forward_masked)(t->pooled, t->v_a, n, Hc, HW, t->gmax, t->mask);
    else
        F(gpool_forward)(t->pooled, t->v_a, n, Hc, HW, t->gmax);
    F(dense_forward)(t->h1, t->pooled, F(W)(t, params, L->val_fc1_w), F(W)(t, params, L->val_fc1_b), n, t->Wp,
                     t->V);
    F(relu_forward)(t->h1, t->h1, (size_t)n * t->V);
    F(dense_forward)(t->vt, t->h1, F(W)(t, params, L->val_fc2_w), F(W)(t, params, L->val_fc2_b), n, t->V,
                     t->VO);
    if (!t->linear_value && !t->wdl)
        F(tanh_forward)(t->vt, t->vt, (size_t)n * t->P);
    F(value_finish_forward)(t, n);
    t->own_on = 0;
    double own_loss = t->own ? F(owner_forward)(t, params, n) : 0;

    t->aux_on = 0;
    if (!(pi && legal && z)) {
        for (int b = 0; b < n; b++) {
            F(scaled_probs)(t, b, legal, NULL);
            if (t->aux)
                F(masked_softmax)(t->A, t->aux_logits + (size_t)b * t->A, F(aux_support)(t, b),
                                  t->aux_probs + (size_t)b * t->A);
        }
        return;
    }
    train_losses l = {0};
    if (t->action_value) {
        /* the outputs are move values: no cross-entropy on the visits; the priors the
         * search would get, and their entropy, are reported */
        for (int b = 0; b < n; b++)
            F(scaled_probs)(t, b, legal, &l.entropy);
        l.entropy /= n;
        l.action_value = F(action_value_mse)(t, n);
    } else {
        l.policy = F(policy_ce_forward)(t->probs, t->logits, pi, legal, n, t->A, &l.entropy);
    }
    if (t->aux) {
        /* the opponent's reply: a softmax over every point (the reply's legal moves are
         * the next position's, which the planes show) */
        if (t->opp)
            l.aux = F(policy_ce_forward)(t->aux_probs, t->aux_logits, t->opp, F(aux_support)(t, 0),
                                         n, t->A, NULL);
        else
            for (int b = 0; b < n; b++)
                F(masked_softmax)(t->A, t->aux_logits + (size_t)b * t->A, F(aux_support)(t, b),
                                  t->aux_probs + (size_t)b * t->A);
        t->aux_on = t->opp && t->aux_weight > 0;
    }
    l.value = t->wdl ? F(wdl_loss)(t, n, z) : F(value_mse_forward)(t->v, z, n, t->P) * F(value_loss_scale)(t);
    t->own_on = t->own && t->own_lab && t->own_weight > 0;
    l.owner = t->own && t->own_lab ? own_loss : 0;
    double ss = 0;
    for (int i = 0; i < L->ntensors; i++) {
        if (!nn_tensor_decays(L->t[i].kind))
            continue;
        const R *w = params + L->t[i].offset;
        for (size_t j = 0; j < L->t[i].size; j++)
            ss += (double)w[j] * w[j];
    }
    l.l2 = 0.5 * weight_decay * ss;
    l.total = l.policy + value_weight * l.value + l.l2 + (t->aux_on ? t->aux_weight * l.aux : 0) +
              (t->own_on ? t->own_weight * l.owner : 0) +
              (t->action_value && t->qa ? t->qa_weight * l.action_value : 0);
    int agree = 0, count = 0;
    for (int i = 0; i < n * t->P; i++)
        if (z[i] != 0) {
            count++;
            agree += (t->v[i] > 0) == (z[i] > 0) && t->v[i] != 0;
        }
    l.value_acc = count ? (double)agree / count : 0.5;
    if (losses)
        *losses = l;
}

static void F(zero)(R *p, size_t n) { memset(p, 0, sizeof(R) * n); }

/* The trunk's backward on thread tid of nth (t->g holds d(trunk output)): batch norms
 * (and the in-place ReLU masks) split by channels, convs' input gradients by samples,
 * weight gradients by input channels (im2col: disjoint writes) or by samples and then
 * summed by output channels (Winograd: conv3x3_backward_reduce), a barrier between
 * dependent layers. */
static void F(trunk_backward_job)(void *arg, int tid, int nth)
{
    TN *t = arg;
    const nn_layout *L = &t->L;
    R *P = t->j_params, *grads = t->j_grads;
    int n = t->n, M = n * t->HW, C = t->C, c0, c1;
    R *scr = t->scratch + (size_t)tid * t->conv_scratch_n;
    train_pool_share(C, tid, nth, &c0, &c1);
    size_t co = (size_t)c0 * M, cn = (size_t)(c1 - c0) * M;
#define G(i) (grads + L->t[i].offset)
    conv_dims db = {n, C, C, t->rows, t->cols, t->hex, t->conv_algo};
    for (int k = t->blocks - 1; k >= 0; k--) {
        const nn_block_ix *B = &L->block[k];
        const R *xin = k > 0 ? F(blk_buf)(t, k - 1, 3) : t->stem_a;
        R *c1b = F(blk_buf)(t, k, 0), *a1 = F(blk_buf)(t, k, 1), *c2 = F(blk_buf)(t, k, 2);
        R *out = F(blk_buf)(t, k, 3);
        /* in place: the skip needs it too */
        F(relu_backward)(t->g + co, t->g + co, out + co, cn);
        F(bn_bwd)(t, P, grads, B->bn2, 2 + 2 * k, t->t1, t->g, NULL, c2, c0, c1, M, tid, 1, C);
        train_pool_barrier(t->pool);
        F(conv3x3_backward_part)(t->t2, G(B->conv2), t->t1, a1, F(W)(t, P, B->conv2), db, scr, 0,
                                 tid, nth);
        train_pool_barrier(t->pool);
        F(conv3x3_backward_reduce)(G(B->conv2), t->scratch, t->conv_scratch_n, db, tid, nth);
        F(bn_bwd)(t, P, grads, B->bn1, 1 + 2 * k, t->t1, t->t2, a1, c1b, c0, c1, M, tid, 1, C);
        train_pool_barrier(t->pool);
        /* the block input's gradient: the skip's (already in g) + conv1's; no skip: conv1's */
        F(conv3x3_backward_part)(t->g, G(B->conv1), t->t1, xin, F(W)(t, P, B->conv1), db, scr,
                                 t->residual, tid, nth);
        train_pool_barrier(t->pool);
        /* (the next block's conv2 reuses the scratch after a barrier) */
        F(conv3x3_backward_reduce)(G(B->conv1), t->scratch, t->conv_scratch_n, db, tid, nth);
    }
    /* stem */
    F(bn_bwd)(t, P, grads, L->stem_bn, 0, t->t1, t->g, t->stem_a, t->stem_c, c0, c1, M, tid, 1, C);
    train_pool_barrier(t->pool);
    conv_dims ds = {n, t->planes, C, t->rows, t->cols, t->hex, t->conv_algo};
    F(conv3x3_backward_part)(NULL, G(L->stem_conv), t->t1, t->x0, F(W)(t, P, L->stem_conv), ds, scr,
                             1, tid, nth);
    train_pool_barrier(t->pool);
    F(conv3x3_backward_reduce)(G(L->stem_conv), t->scratch, t->conv_scratch_n, ds, tid, nth);
#undef G
}

void F(train_net_backward)(TN *t, const R *params, R *grads, double value_weight,
                        double weight_decay)
{
    const nn_layout *L = &t->L;
    assert(t->pi && t->legal && t->z);
    int n = t->n, HW = t->HW, M = n * HW, C = t->C, Hc = t->Hc;
    size_t cm = (size_t)C * M, hm = (size_t)Hc * M;
    R *P = (R *)params; /* read-only here; F(W)() takes a mutable pointer */
#define G(i) (grads + L->t[i].offset)
    F(zero)(grads, L->count);
    F(zero)(t->g, cm);
    const R *x = F(trunk_out)(t);
    int slot_p = 1 + 2 * t->blocks, slot_v = slot_p + 1;
    conv_dims dh = {n, C, Hc, t->rows, t->cols, 0, CONV_AUTO};

    /* policy head */
    F(zero)(t->dlogits, (size_t)n * t->A);
    /* the mean over the whole batch (every rank's samples when data-parallel) */
    if (t->action_value) {
        if (t->qa && t->qa_weight > 0)
            F(action_value_backward)(t, n);
    } else {
        F(policy_ce_backward)(t->dlogits, t->probs, t->pi, t->legal, n, t->A, (R)(1.0 / t->nglobal));
    }
    F(zero)(t->gh1, hm);
    if (!t->dense_policy) {
        conv_dims d1 = {n, Hc, 1, t->rows, t->cols, 0, CONV_AUTO};
        F(conv1x1_backward)(t->gh1, G(L->pol_out_w), G(L->pol_out_b), t->dlogits, t->p_a,
                         F(W)(t, P, L->pol_out_w), d1);
        if (t->aux_on) {
            /* the aux head's gradient joins the policy head's in gh1; its logits' gradient
             * reuses dlogits, whose contents conv1x1_backward has consumed */
            F(zero)(t->dlogits, (size_t)n * t->A);
            F(policy_ce_backward)(t->dlogits, t->aux_probs, t->opp, F(aux_support)(t, 0), n, t->A,
                                  (R)(t->aux_weight / t->nglobal));
            F(conv1x1_backward)(t->gh1, G(L->pol_aux_w), G(L->pol_aux_b), t->dlogits, t->p_a,
                                F(W)(t, P, L->pol_aux_w), d1);
        }
    } else {
        F(zero)(t->dpflat, hm);
        F(dense_backward)(t->dpflat, G(L->pol_out_w), G(L->pol_out_b), t->dlogits, t->p_flat,
                       F(W)(t, P, L->pol_out_w), n, Hc * HW, t->A);
        F(cnhw_to_nchw_backward)(t->gh1, t->dpflat, n, Hc, HW);
    }
    F(bn_bwd)(t, P, grads, L->pol_bn, slot_p, t->gh2, t->gh1, t->p_a, t->p_c, 0, Hc, M, 0, 0, Hc);
    F(conv1x1_backward)(t->g, G(L->pol_conv), NULL, t->gh2, x, F(W)(t, P, L->pol_conv), dh);

    /* value head */
    size_t np = (size_t)n * t->P;
    R *dpre = t->dlogits; /* free again: reuse for d(pre-tanh) (n, VO) <= (n, A) */
    assert(t->VO <= t->A);
    if (t->wdl) {
        F(wdl_backward)(t, n, dpre, value_weight);
    } else {
        F(zero)(t->dv, np);
        F(value_mse_backward)(t->dv, t->v, t->z, n, t->P,
                              (R)(value_weight * F(value_loss_scale)(t) * n / t->nglobal));
        F(value_finish_backward)(t, n);
        F(zero)(dpre, np);
        if (t->linear_value)
            memcpy(dpre, t->dv, sizeof(R) * np);
        else
            F(tanh_backward)(dpre, t->dv, t->vt, np);
    }
    F(zero)(t->dh1, (size_t)n * t->V);
    F(dense_backward)(t->dh1, G(L->val_fc2_w), G(L->val_fc2_b), dpre, t->h1, F(W)(t, P, L->val_fc2_w), n,
                   t->V, t->VO);
    F(relu_backward)(t->dh1, t->dh1, t->h1, (size_t)n * t->V);
    F(zero)(t->dpooled, (size_t)n * t->Wp);
    F(dense_backward)(t->dpooled, G(L->val_fc1_w), G(L->val_fc1_b), t->dh1, t->pooled,
                   F(W)(t, P, L->val_fc1_w), n, t->Wp, t->V);
    F(zero)(t->gh1, hm);
    if (t->masked)
        F(gpool_backward_masked)(t->gh1, t->dpooled, t->v_a, n, Hc, HW, t->gmax, t->mask);
    else
        F(gpool_backward)(t->gh1, t->dpooled, t->v_a, n, Hc, HW, t->gmax);
    if (t->own_on)
        F(owner_backward)(t, P, grads, n);
    F(bn_bwd)(t, P, grads, L->val_bn, slot_v, t->gh2, t->gh1, t->v_a, t->v_c, 0, Hc, M, 0, 0, Hc);
    F(conv1x1_backward)(t->g, G(L->val_conv), NULL, t->gh2, x, F(W)(t, P, L->val_conv), dh);

    /* trunk, last block first; t->g holds d(block output) */
    t->j_params = P;
    t->j_grads = grads;
    train_pool_run(t->pool, F(trunk_backward_job), t);

    /* L2: once over the ranks (their weights are the same) */
    if (weight_decay > 0 && (!t->sync || t->red.rank == 0))
        for (int i = 0; i < L->ntensors; i++) {
            if (!nn_tensor_decays(L->t[i].kind))
                continue;
            R *gi = grads + L->t[i].offset;
            const R *w = params + L->t[i].offset;
            R wd = (R)weight_decay;
            for (size_t j = 0; j < L->t[i].size; j++)
                gi[j] += wd * w[j];
        }
    F(mask_taps)(L, grads);
#undef G
}
