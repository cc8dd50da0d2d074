/* config.h — gridzero's configuration: JSON files parsed into typed structs.
 *
 * Every key lives in one table (config.c) with its type, bounds, default and help
 * text; parsing is strict: an unknown key, a wrong type or a value out of range is an
 * error that names the file, the key path ("mcts.c_puct") and what was expected.
 * The struct holds every section even where a module does not use it; it is plain
 * data, so reading a section is knowing nothing about the module that uses it.
 * This module must not know about networks, search or files beyond the config's own.
 */
#ifndef GZ_CONFIG_H
#define GZ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CFG_STR_LEN 256 /* string keys, file paths included */
#define CFG_LIST_MAX 8
#define CFG_SIMULATIONS_MAX 10000000 /* mcts.simulations and the other budgets a move */

/* The m,n,k rule layers (engine/games/renju.h says what each one is). */
typedef enum {
    CFG_RULE_FREESTYLE = 0, /* k or more in a row wins */
    CFG_RULE_EXACT = 1,     /* only exactly k wins */
    CFG_RULE_RENJU = 2,     /* black: forbidden points, exactly five; white: five or more */
    CFG_RULE_CARO = 3,      /* exactly five, not blocked at both ends by the opponent */
} cfg_rule;

typedef struct cfg_game {
    char name[16]; /* "mnk" | "sanling" */
    /* mnk */
    int rows, cols, k;
    char rule[CFG_STR_LEN]; /* "freestyle" | "exact" | "renju" | "caro" (game.exact: an alias) */
    /* sanling */
    int size, players, moves;
} cfg_game;

typedef struct cfg_mcts {
    int simulations;        /* playouts per move */
    double c_puct;
    double fpu_reduction;   /* unvisited child's Q = parent Q - fpu_reduction */
    double dirichlet_alpha; /* root noise, self-play only */
    double dirichlet_eps;
    int temperature_moves;  /* sample proportional to visits for the first moves */
    int batch;              /* leaves gathered per evaluator call */
    double virtual_loss;
    int rollouts;           /* random playouts per leaf for the rollout evaluator */
    bool solver;            /* MCTS-solver: propagate proven results */
    bool reuse_tree;
    int vcf_root;           /* node budget of the root VCF check; 0 = off */
    int vcf_leaf;           /* node budget of the VCF check at each new node; 0 = off */
    bool vcf_defend;        /* keep only the moves that answer the opponent's VCF */
    int vct_root;           /* node budget of the root VCT check; 0 = off */
    /* the learning recipe (issue 10); self-play searches only unless said otherwise */
    double dirichlet_total; /* > 0: alpha = this / legal moves (KataGo: 10.83); 0: alpha */
    double root_policy_temp; /* root priors ^ (1 / T), renormalised; 1 = off */
    double forced_playouts; /* KataGo's k: root children get sqrt(k P N) playouts; 0 = off */
    bool policy_pruning;    /* remove forced playouts from pi (with forced_playouts) */
    bool fresh_pi;          /* pi counts this search's playouts, not reused visits */
    char policy_target[CFG_STR_LEN]; /* "visits" | "completed_q" */
    double lcb_stdevs;      /* players: LCB move choice, stdevs; 0 = the most visited */
    double lcb_min_fraction; /* LCB candidates: at least this share of the most visits */
    double contempt;        /* players: a draw is worth -contempt to the searcher; 0 = off */
} cfg_mcts;

typedef struct cfg_net {
    int blocks;        /* residual blocks */
    int channels;
    int head_channels;
    int value_hidden;
    char policy_head[CFG_STR_LEN]; /* "conv" | "dense" | "action_value" */
    char precision[CFG_STR_LEN];   /* "auto" | "fp32" | "bf16" | "int8" */
    char int8_kernel[CFG_STR_LEN]; /* "auto" | "onednn" | "direct" */
    char trunk[CFG_STR_LEN];       /* "residual" | "plain" (blocks without the skip) */
    char kind[CFG_STR_LEN];        /* "cnn" | "ntuple" (2048 4x4: nn/ntuple.h, learned by TD) */
    /* net.kind ntuple: the tiles that begin its stages (nn/ntuple.h), increasing; 0 = one stage */
    int nntuple_stages;
    int ntuple_stages[CFG_LIST_MAX];
    char value_head[CFG_STR_LEN];  /* "zerosum" | "independent" | "score" | "wdl" */
    char value_pool[CFG_STR_LEN];  /* "mean" | "mean_max" */
    bool aux_policy;   /* an auxiliary head predicts the opponent's reply (training only) */
    bool aux_owner;    /* an auxiliary head predicts each point's final owner (training only) */
    int threads;       /* inference threads; 0 = the machine's cores */
    int cache;         /* position-cache entries; 0 = no cache */
    int max_batch;     /* largest batch one forward pass gets; 0 = all a worker gathers */
} cfg_net;

typedef struct cfg_selfplay {
    int games;            /* games per generation */
    int parallel_games;   /* games played concurrently by one worker */
    int threads;          /* workers; 0 = the machine's cores */
    double resign_threshold;
    double resign_disabled_fraction;
    char bootstrap[CFG_STR_LEN]; /* generation 0: "rollout" | "random_net" */
    int bootstrap_simulations;
    double td_lambda;      /* net.kind ntuple: TD(lambda)'s lambda (train/td.h); 0 = online TD(0) */
    int value_steps;       /* scored games: n-step value targets (n moves' points + the search's
                            * value then); 0 = the points to the end of the game */
    int bootstrap_export;  /* one-player scored games: the rollout bootstrap's tree nodes with
                            * at least this many visits become samples; 0 = played positions */
    double full_fraction;  /* playout cap randomisation: moves with the full search */
    int fast_simulations;  /* the other moves' search (value targets only) */
    int simulations_end;   /* run: the search's simulations at the end of the budget, linear
                            * from mcts.simulations at its start; 0 = mcts.simulations */
    bool zero_weight_proven; /* proven lost/drawn roots: policy weight 0 */
    bool threat_checks;    /* self-play's search keeps mcts.vcf_* (else: play only) */
    bool record_fast;      /* fast-search positions written (policy weight 0) or dropped */
    double resign_target;  /* > 0: calibrate the threshold to this false-resign rate */
    int resign_min_checks; /* records needed before calibrated resignation starts */
    char opening[CFG_STR_LEN];  /* "none" | "swap2": how games start */
    char openings[CFG_STR_LEN]; /* an opening book file (openings.h); "" = none */
    double part_minutes;   /* run: a part file of the finished games this often; 0 = off */
    bool adjudicate;       /* a proven self-play root ends the game (its outcome is z) */
    int adjudicate_vcf;    /* VCF budget of that root check when threat_checks is off */
    bool gumbel;           /* self-play searches with Gumbel AlphaZero (mcts_gumbel.c) */
    int gumbel_m;          /* its moves considered at the root */
    /* mixed board sizes (m,n,k with rows == cols = N): smaller square boards played beside
     * the config's own, increasing, each in [game.k, N); nsizes 0 = off */
    int nsizes;
    int sizes[CFG_LIST_MAX];
    double sizes_fraction;     /* the share of a generation's games on them at the run's start */
    double sizes_fraction_end; /* the share at the end of the run's budget (linear between) */
} cfg_selfplay;

typedef struct cfg_train {
    int batch_size;
    int steps;            /* steps per generation */
    double lr;
    double momentum;
    double weight_decay;
    char optimizer[CFG_STR_LEN]; /* "sgd" | "adam" */
    char schedule[CFG_STR_LEN];  /* "constant" | "step" | "cosine" */
    int warmup_steps;
    int window;           /* generations of samples trained on */
    int log_every;
    double validation_fraction;
    double value_weight;
    double aux_policy_weight; /* weight of the opponent-reply head's loss (net.aux_policy) */
    double owner_weight;  /* weight of the ownership head's loss (net.aux_owner) */
    double action_value_weight; /* weight of the action-value head's MSE (net.policy_head
                                   action_value) */
    double q_ratio;       /* value target: (1 - q_ratio) z + q_ratio q */
    double reuse;         /* > 0: steps = reuse * new positions / batch_size; 0: steps */
    char schedule_scope[CFG_STR_LEN]; /* "run" | "generation" (gridzero run) */
    int run_steps;        /* scope run: the schedule's length in global steps; 0 = open */
    char schedule_span[CFG_STR_LEN]; /* "steps" (run_steps) | "budget" (the run's budget) */
    double lr_floor;      /* lr never falls below lr * lr_floor */
    char calibrate[CFG_STR_LEN]; /* "auto" | "always" | "never": int8 calibration (run) */
    int swa;              /* run: >= 2: the played model is the mean of the last swa
                           * generations' weights (models/swa_i.h5); 0, 1: off */
    char conv[CFG_STR_LEN]; /* "auto" | "im2col": how the trainer computes 3x3 convs */
} cfg_train;

typedef struct cfg_arena {
    int games;
    int simulations;      /* simulations of model players in the arena */
    int opening_moves;    /* random moves at the start so that games differ */
    double gate;          /* promote when the win rate is at least this; 0 = always */
    int lookback;         /* also meet the model this many generations older; 0 = no */
    int every;            /* play in generations that are multiples of this (1 = all) */
    int depth;            /* net.kind ntuple: the candidate's expectimax depth (model-expectimax) */
    int nbaselines;
    char baselines[CFG_LIST_MAX][CFG_STR_LEN];
} cfg_arena;

typedef struct cfg_loop {
    int generations;
} cfg_loop;

typedef struct gz_config {
    uint64_t seed;
    cfg_game game;
    cfg_mcts mcts;
    cfg_net net;
    cfg_selfplay selfplay;
    cfg_train train;
    cfg_arena arena;
    cfg_loop loop;
} gz_config;

/* The rule of an m,n,k config section (CFG_RULE_FREESTYLE for a name it does not know,
 * which the parser never lets through). */
cfg_rule cfg_game_rule(const cfg_game *g);
/* The rule named name ("freestyle", ...), or -1 when there is none of that name. */
int cfg_rule_parse(const char *name);
/* "freestyle", "exact", "renju", "caro". */
const char *cfg_rule_name(cfg_rule r);
/* Sets g's rule (e.g. from a protocol command). */
void cfg_game_set_rule(cfg_game *g, cfg_rule r);

/* The built-in default config (tic-tac-toe), as JSON text. Borrowed, static. */
extern const char cfg_default_json[];

/* Fills c with every default (for game.name as given: defaults depend on the game). */
void cfg_defaults(gz_config *c, const char *game_name);

/* Parses JSON text: one JSON object, nothing but whitespace after it. `source` names it
 * in messages (a file name or "built-in default"). Returns 0, or -1 with a message in
 * err ("FILE: key mcts.c_puct: expected ..."). c is fully written on success; undefined
 * on error. */
int cfg_parse(gz_config *c, const char *json, const char *source, char *err, size_t errlen);

/* Reads and parses a file. NULL path means the built-in default. Same errors, plus
 * unreadable files. */
int cfg_load(gz_config *c, const char *path, char *err, size_t errlen);

/* Applies one "key.path=value" override (e.g. from --set), with the same checks as
 * the file. Returns 0 or -1 with a message. */
int cfg_set(gz_config *c, const char *assignment, char *err, size_t errlen);

/* Checks the rules between keys (game.k at most the longer side, game.moves at most
 * size*size-1) of a config changed after parsing. source names the change in the
 * message. Returns 0 or -1 with a message naming the key. */
int cfg_check(const gz_config *c, const char *source, char *err, size_t errlen);

/* Applies n overrides in order, each checked alone (key, type, range), then checks the
 * rules between keys once on the result, so the order of the overrides does not matter
 * (--set game.size=5 --set game.moves=10 works either way). On error c may hold some of
 * the overrides. Returns 0 or -1 with a message naming the key. */
int cfg_set_all(gz_config *c, char *const *assignments, int n, char *err, size_t errlen);

/* The effective config as JSON text, every key present (defaults filled in), keys of
 * other games left out. Returns a malloc'd string (free with free()). */
char *cfg_to_json(const gz_config *c);

/* Writes a short listing of every key: path, type, default, help. */
void cfg_print_keys(FILE *f);

#endif
