#include "config.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "errmsg.h"

/* T_INTS: an array of integers (min and max bound each entry), stored as int[CFG_LIST_MAX]
 * just after its int count (ints_count).
 * T_EXACT: game.exact, the old boolean spelling of game.rule (true = "exact"): it sets
 * game.rule and is neither stored nor written out itself. */
typedef enum { T_INT, T_FLOAT, T_BOOL, T_STR, T_LIST, T_U64, T_EXACT, T_INTS } cfg_type;

/* One config key. `game` restricts a key of the game section to one game's rules. */
typedef struct cfg_field {
    const char *path;    /* "mcts.c_puct" */
    cfg_type type;
    size_t offset;       /* into gz_config */
    double min, max;     /* numbers: inclusive bounds */
    double def;          /* numbers and bools */
    const char *def_str; /* strings; lists: comma-separated */
    const char *choices; /* strings: "a|b|c", NULL = free text */
    const char *game;    /* only for this game.name; NULL = always */
    const char *help;
} cfg_field;

#define OFF(f) offsetof(gz_config, f)

static const cfg_field fields[] = {
    {"seed", T_U64, OFF(seed), 0, 9007199254740991.0, 1, NULL, NULL, NULL,
     "seed of every random source (deterministic given a seed)"},

    {"game.name", T_STR, OFF(game.name), 0, 0, 0, "mnk", "mnk|sanling|2048", NULL, "which game"},
    {"game.rows", T_INT, OFF(game.rows), 3, 25, 15, NULL, NULL, "mnk", "board rows"},
    {"game.cols", T_INT, OFF(game.cols), 3, 25, 15, NULL, NULL, "mnk", "board columns"},
    {"game.k", T_INT, OFF(game.k), 3, 25, 5, NULL, NULL, "mnk", "stones in a row to win"},
    {"game.rule", T_STR, OFF(game.rule), 0, 0, 0, "freestyle", "freestyle|exact|renju|caro", "mnk",
     "freestyle: k or more in a row wins; exact: only exactly k (standard Gomoku); renju "
     "(k = 5): black may not play double threes, double fours or overlines (they are illegal) "
     "and wins only with exactly five, white wins with five or more; caro (k = 5): exactly "
     "five, not blocked at both ends by the opponent's stones"},
    {"game.exact", T_EXACT, OFF(game.rule), 0, 1, 0, NULL, NULL, "mnk",
     "old spelling of game.rule: true = \"exact\", false = \"freestyle\" (not written out)"},
    {"game.size", T_INT, OFF(game.size), 5, 64, 13, NULL, NULL, "sanling", "rhombus side N"},
    {"game.players", T_INT, OFF(game.players), 2, 3, 3, NULL, NULL, "sanling", "2 or 3 players"},
    {"game.moves", T_INT, OFF(game.moves), 1, 4095, 36, NULL, NULL, "sanling",
     "placements in the whole game"},
    /* 2048: the same keys as other games', with 2048's bounds and defaults (a path may
     * appear once per game; find_field picks the game's own) */
    {"game.rows", T_INT, OFF(game.rows), 2, 8, 4, NULL, NULL, "2048", "board rows"},
    {"game.cols", T_INT, OFF(game.cols), 2, 8, 4, NULL, NULL, "2048", "board columns"},
    {"game.players", T_INT, OFF(game.players), 1, 1, 1, NULL, NULL, "2048",
     "1: 2048 is a one-player game"},

    {"mcts.simulations", T_INT, OFF(mcts.simulations), 1, CFG_SIMULATIONS_MAX, 200, NULL, NULL,
     NULL, "simulations per move"},
    {"mcts.c_puct", T_FLOAT, OFF(mcts.c_puct), 0, 100, 1.5, NULL, NULL, NULL, "PUCT exploration constant"},
    {"mcts.fpu_reduction", T_FLOAT, OFF(mcts.fpu_reduction), 0, 2, 0.2, NULL, NULL, NULL,
     "an unvisited child's Q is the parent's Q minus this"},
    {"mcts.dirichlet_alpha", T_FLOAT, OFF(mcts.dirichlet_alpha), 0.001, 10, 0.3, NULL, NULL, NULL,
     "root Dirichlet noise concentration (self-play)"},
    {"mcts.dirichlet_eps", T_FLOAT, OFF(mcts.dirichlet_eps), 0, 1, 0.25, NULL, NULL, NULL,
     "weight of the root noise (self-play)"},
    {"mcts.temperature_moves", T_INT, OFF(mcts.temperature_moves), 0, 10000, 8, NULL, NULL, NULL,
     "moves sampled in proportion to visits; later moves take the most visited"},
    {"mcts.batch", T_INT, OFF(mcts.batch), 1, 1024, 16, NULL, NULL, NULL,
     "leaves gathered (with virtual loss) per evaluator call"},
    {"mcts.virtual_loss", T_FLOAT, OFF(mcts.virtual_loss), 0, 10, 1, NULL, NULL, NULL,
     "virtual loss per pending visit"},
    {"mcts.rollouts", T_INT, OFF(mcts.rollouts), 1, 1000, 1, NULL, NULL, NULL,
     "random playouts per leaf for the rollout evaluator"},
    {"mcts.solver", T_BOOL, OFF(mcts.solver), 0, 1, 1, NULL, NULL, NULL, "propagate proven wins and losses"},
    {"mcts.reuse_tree", T_BOOL, OFF(mcts.reuse_tree), 0, 1, 1, NULL, NULL, NULL,
     "keep the chosen move's subtree for the next move"},
    {"mcts.vcf_root", T_INT, OFF(mcts.vcf_root), 0, 100000000, 0, NULL, NULL, NULL,
     "node budget of a VCF search at the root before each search (0 = off; games with a "
     "threat solver: m,n,k with k >= 4; needs mcts.solver): a proven win is played at once"},
    {"mcts.vcf_leaf", T_INT, OFF(mcts.vcf_leaf), 0, 1000000, 0, NULL, NULL, NULL,
     "node budget of a VCF search at every new node (0 = off; needs mcts.solver): a node "
     "whose mover has a VCF is a proven win"},
    {"mcts.vcf_defend", T_BOOL, OFF(mcts.vcf_defend), 0, 1, 0, NULL, NULL, NULL,
     "when the opponent of a new node's mover has a VCF (budget mcts.vcf_leaf, 1000 if 0), "
     "only the moves that defend it become children"},
    {"mcts.vct_root", T_INT, OFF(mcts.vct_root), 0, 100000000, 0, NULL, NULL, NULL,
     "node budget of a VCT search (fours and threes, 6 attacker moves deep) at the root "
     "before each search, after vcf_root (0 = off; games with a threat solver; needs "
     "mcts.solver): a proven win is played at once"},
    {"mcts.dirichlet_total", T_FLOAT, OFF(mcts.dirichlet_total), 0, 1000, 0, NULL, NULL, NULL,
     "> 0: root noise alpha = this / legal moves (KataGo); 0: use dirichlet_alpha"},
    {"mcts.root_policy_temp", T_FLOAT, OFF(mcts.root_policy_temp), 0.1, 10, 1, NULL, NULL, NULL,
     "self-play root priors raised to 1/T and renormalised; 1 = off"},
    {"mcts.forced_playouts", T_FLOAT, OFF(mcts.forced_playouts), 0, 100, 2, NULL, NULL, NULL,
     "self-play: root child c gets at least sqrt(k P(c) N) playouts (KataGo k = 2); 0 = off"},
    {"mcts.policy_pruning", T_BOOL, OFF(mcts.policy_pruning), 0, 1, 1, NULL, NULL, NULL,
     "self-play: remove the forced playouts PUCT would not have made from the policy target"},
    {"mcts.policy_target", T_STR, OFF(mcts.policy_target), 0, 0, 0, "visits", "visits|completed_q", NULL,
     "visits: pi = the root's visit distribution (pruned, fresh); completed_q: pi = softmax(log prior + "
     "sigma(completed Q)) (Gumbel MuZero's improved policy; the move is still chosen from the visits)"},
    {"mcts.lcb_stdevs", T_FLOAT, OFF(mcts.lcb_stdevs), 0, 100, 0, NULL, NULL, NULL,
     "players (not self-play): play the root child with the highest lower confidence bound "
     "Q - this x standard error among the well-visited ones (KataGo); 0 = the most visited"},
    {"mcts.lcb_min_fraction", T_FLOAT, OFF(mcts.lcb_min_fraction), 0, 1, 0.1, NULL, NULL, NULL,
     "LCB: a child competes with at least this share of the most visited child's visits"},
    {"mcts.contempt", T_FLOAT, OFF(mcts.contempt), 0, 0.99, 0, NULL, NULL, NULL,
     "players (not self-play), two-player games: a draw is worth -this to the searching "
     "player, and a value v becomes v - this x (1 - |v|) (draw contempt); 0 = off"},
    {"mcts.fresh_pi", T_BOOL, OFF(mcts.fresh_pi), 0, 1, 1, NULL, NULL, NULL,
     "the policy target counts this search's playouts only, not visits kept by tree reuse"},

    {"net.blocks", T_INT, OFF(net.blocks), 0, 40, 6, NULL, NULL, NULL, "residual blocks"},
    {"net.channels", T_INT, OFF(net.channels), 1, 512, 64, NULL, NULL, NULL, "trunk width"},
    {"net.head_channels", T_INT, OFF(net.head_channels), 1, 256, 32, NULL, NULL, NULL,
     "channels of the heads' 1x1 convs"},
    {"net.value_hidden", T_INT, OFF(net.value_hidden), 1, 1024, 64, NULL, NULL, NULL,
     "hidden units of the value head"},
    {"net.policy_head", T_STR, OFF(net.policy_head), 0, 0, 0, "conv", "conv|dense|action_value", NULL,
     "conv: one logit per point (fully convolutional); dense: FC to the actions; action_value "
     "(games with a score, seed 003): the dense layers learn each move's value in points by MSE, "
     "the priors are their softmax"},
    {"net.precision", T_STR, OFF(net.precision), 0, 0, 0, "auto", "auto|fp32|bf16|int8", NULL,
     "inference precision; auto = int8 for a calibrated model on a CPU with VNNI (gridzero "
     "quantize), else bf16 where the CPU has it, else fp32"},
    {"net.int8_kernel", T_STR, OFF(net.int8_kernel), 0, 0, 0, "auto", "auto|onednn|direct|winograd", NULL,
     "the convolutions of int8 inference: direct = gridzero's AVX512-VNNI kernels (net.channels "
     "a multiple of 16), winograd = the same with the trunk's 3x3 convs by Winograd F(4x4, 3x3), "
     "onednn = oneDNN's; auto = winograd on boards its tiles fit, else direct, where they run "
     "(not on AMX CPUs), else onednn"},
    {"net.kind", T_STR, OFF(net.kind), 0, 0, 0, "cnn", "cnn|ntuple", NULL,
     "cnn: the residual network of the other net keys; ntuple: (2048 4x4) an n-tuple network of "
     "after-state values (4 tuples of 6 cells under the 8 symmetries), learned by TD from its own "
     "greedy games: a run's generation is selfplay.games learning games (no samples), its arena "
     "plays model-expectimax:FILE:arena.depth"},
    {"net.ntuple_stages", T_INTS, OFF(net.ntuple_stages), 4, 32768, 0, "", NULL, NULL,
     "net.kind ntuple: multi-stage TD (Yeh et al. 2016): the tiles (increasing powers of two, at "
     "most 3) at which the game enters a new stage with tables of its own, read from the stage "
     "below until written (e.g. [8192, 16384]); a run from --from MODEL may add stages above "
     "the model's; [] = one stage"},
    {"net.trunk", T_STR, OFF(net.trunk), 0, 0, 0, "residual", "residual|plain", NULL,
     "residual: blocks with the skip; plain: the same convs without it (seed 002: blocks 1)"},
    {"net.value_head", T_STR, OFF(net.value_head), 0, 0, 0, "zerosum", "zerosum|independent|score|wdl",
     NULL, "zerosum: tanh outputs minus their mean (2 players: v and -v); independent: one tanh "
     "each; score: h(points to come), linear (scored games such as 2048 always use it); wdl "
     "(two-player games): softmax over win, draw, loss of the mover, trained by cross-entropy, "
     "values W - L and L - W"},
    {"net.value_pool", T_STR, OFF(net.value_pool), 0, 0, 0, "mean", "mean|mean_max", NULL,
     "the value head's global pooling: each channel's mean, or its mean and its max (KataGo)"},
    {"net.aux_policy", T_BOOL, OFF(net.aux_policy), 0, 1, 0, NULL, NULL, NULL,
     "an auxiliary policy head (training only) learns the opponent's reply: the next "
     "position's search policy (KataGo); games of 2 or more players with a conv policy head"},
    {"net.aux_owner", T_BOOL, OFF(net.aux_owner), 0, 1, 0, NULL, NULL, NULL,
     "an auxiliary ownership head (training only) learns who holds each point at the game's "
     "end, from the value head's hidden layer (KataGo); games whose actions are points"},
    {"net.threads", T_INT, OFF(net.threads), 0, 256, 0, NULL, NULL, NULL,
     "inference threads; 0 = the machine's cores"},
    {"net.cache", T_INT, OFF(net.cache), 0, 1 << 24, 65536, NULL, NULL, NULL,
     "position-cache entries of the network evaluator; 0 = off"},
    {"net.max_batch", T_INT, OFF(net.max_batch), 0, 512, 0, NULL, NULL, NULL,
     "largest batch of one forward pass (a worker's gather is cut into chunks of it); 0 = the "
     "whole gather (parallel_games * mcts.batch, at most 512)"},

    {"selfplay.games", T_INT, OFF(selfplay.games), 1, 10000000, 200, NULL, NULL, NULL,
     "games per generation"},
    {"selfplay.parallel_games", T_INT, OFF(selfplay.parallel_games), 1, 4096, 32, NULL, NULL, NULL,
     "games one worker plays at once (fills the network batch)"},
    {"selfplay.threads", T_INT, OFF(selfplay.threads), 0, 256, 0, NULL, NULL, NULL,
     "workers; 0 = the machine's cores"},
    {"selfplay.resign_threshold", T_FLOAT, OFF(selfplay.resign_threshold), -1, 1, -0.95, NULL, NULL,
     NULL, "resign when the root value stays below this for two moves; -1 = never"},
    {"selfplay.resign_disabled_fraction", T_FLOAT, OFF(selfplay.resign_disabled_fraction), 0, 1, 0.2,
     NULL, NULL, NULL, "games that never resign (to measure false resignations)"},
    {"selfplay.bootstrap", T_STR, OFF(selfplay.bootstrap), 0, 0, 0, "rollout", "rollout|random_net",
     NULL, "generation 0's player: pure MCTS with rollouts, or a random-init network"},
    {"selfplay.bootstrap_simulations", T_INT, OFF(selfplay.bootstrap_simulations), 1,
     CFG_SIMULATIONS_MAX, 400, NULL, NULL, NULL, "simulations per move of the rollout bootstrap"},
    {"selfplay.td_lambda", T_FLOAT, OFF(selfplay.td_lambda), 0, 1, 0, NULL, NULL, NULL,
     "net.kind ntuple: 0 = online TD(0) after every move; (0, 1]: each game's lambda-returns "
     "at its end (1 = the points still to come)"},
    {"selfplay.value_steps", T_INT, OFF(selfplay.value_steps), 0, 1000000, 0, NULL, NULL, NULL,
     "scored games (2048): a position's value target is the points of its next N moves plus the "
     "search's root value N moves later (MuZero's N-step return); 0 = the points to the game's end"},
    {"selfplay.bootstrap_export", T_INT, OFF(selfplay.bootstrap_export), 0, 10000000, 8, NULL, NULL,
     NULL, "one-player scored games (2048), seed 003: the rollout bootstrap writes every search-tree "
     "node with at least this many visits as a sample valued by the best score reached after it; "
     "0 = the played positions"},
    {"selfplay.full_fraction", T_FLOAT, OFF(selfplay.full_fraction), 0.01, 1, 1, NULL, NULL, NULL,
     "playout cap randomisation: moves searched in full, with mcts.simulations or "
     "simulations_end's budget (policy targets); 1 = all"},
    {"selfplay.fast_simulations", T_INT, OFF(selfplay.fast_simulations), 1, CFG_SIMULATIONS_MAX,
     32, NULL, NULL, NULL, "the other moves' simulations (no noise; value targets only)"},
    {"selfplay.simulations_end", T_INT, OFF(selfplay.simulations_end), 0, CFG_SIMULATIONS_MAX, 0,
     NULL, NULL, NULL, "run: self-play's simulations a move (the full searches' with full_fraction) "
     "growing linearly from mcts.simulations at the run's start towards this at the end of "
     "its budget (--time, else the generations), by the share spent when a generation's "
     "self-play starts (kept in data/gen_NNNN.simulations.json: a resumed session and "
     "`selfplay --follow` play the same); the rollout bootstrap keeps bootstrap_simulations; "
     "0 = mcts.simulations throughout"},
    {"selfplay.resign_target", T_FLOAT, OFF(selfplay.resign_target), 0, 0.5, 0.05, NULL, NULL, NULL,
     "run: > 0: the threshold is calibrated each generation so that at most this fraction of "
     "resignations would be false (measured in the no-resign games); 0: resign_threshold fixed"},
    {"selfplay.resign_min_checks", T_INT, OFF(selfplay.resign_min_checks), 1, 10000000, 200, NULL,
     NULL, NULL, "calibration: no resignation before this many player-games were measured"},
    {"selfplay.record_fast", T_BOOL, OFF(selfplay.record_fast), 0, 1, 0, NULL, NULL, NULL,
     "playout cap randomisation: write the fast-search positions too (value target only, policy "
     "weight 0); false: only full searches become samples (KataGo)"},
    {"selfplay.opening", T_STR, OFF(selfplay.opening), 0, 0, 0, "none", "none|swap2", NULL,
     "none: games start from the empty board; swap2 (m,n,k): each game starts from a swap2 "
     "opening balanced by the evaluator's values (3 stones, sometimes 2 more)"},
    {"selfplay.openings", T_STR, OFF(selfplay.openings), 0, 0, 0, "", NULL, NULL,
     "an opening book: a file of move lists, one a line (\"h8 i9 h10\"); each game starts "
     "from one of them, in turn; \"\" = none"},
    {"selfplay.zero_weight_proven", T_BOOL, OFF(selfplay.zero_weight_proven), 0, 1, 1, NULL, NULL,
     NULL, "positions whose root is proven lost or drawn get policy weight 0"},
    {"selfplay.part_minutes", T_FLOAT, OFF(selfplay.part_minutes), 0, 1e6, 10, NULL, NULL, NULL,
     "run, one process: every this many minutes of a generation's self-play the finished games "
     "are closed into a part file (data/gen_NNNN.pKKK.h5), so a stopped or killed run keeps them "
     "and plays only the rest; 0 = one file a generation"},
    {"selfplay.adjudicate", T_BOOL, OFF(selfplay.adjudicate), 0, 1, 0, NULL, NULL, NULL,
     "two-player games: a self-play game ends when its search proves the root (the solver, "
     "or the VCF check of selfplay.adjudicate_vcf / mcts.vcf_root); the proven outcome is "
     "every sample's value target and the proven position is the game's last sample"},
    {"selfplay.adjudicate_vcf", T_INT, OFF(selfplay.adjudicate_vcf), 0, 100000000, 0, NULL, NULL,
     NULL, "node budget of a VCF check at every self-play root (m,n,k with k >= 4), used even "
     "when selfplay.threat_checks is off: with selfplay.adjudicate a VCF for the side to move "
     "ends the game as its win; 0 = none"},
    {"selfplay.gumbel", T_BOOL, OFF(selfplay.gumbel), 0, 1, 0, NULL, NULL, NULL,
     "self-play searches with Gumbel AlphaZero (Danihelka et al. 2022) instead of PUCT: "
     "Gumbel-top-k of selfplay.gumbel_m moves at the root, sequential halving over the "
     "simulations, the improved policy's deterministic rule below the root, the completed-Q "
     "policy as the target and the halving's winner as the move (no Dirichlet noise, "
     "temperature or forced playouts); players keep PUCT. Not for scored games (2048)"},
    {"selfplay.gumbel_m", T_INT, OFF(selfplay.gumbel_m), 1, 4096, 16, NULL, NULL, NULL,
     "selfplay.gumbel: the moves considered at the root (mctx's max_num_considered_actions)"},
    {"selfplay.sizes", T_INTS, OFF(selfplay.sizes), 3, 24, 0, "", NULL, NULL,
     "mixed board sizes (m,n,k with game.rows = game.cols = N): smaller square boards, each "
     "in [game.k, N), on which a share of every generation's games is played with the same "
     "network (data/gen_NNNN.sSS.h5); the trainer pads them to N x N and masks the padding "
     "(KataGo); [] = off"},
    {"selfplay.sizes_fraction", T_FLOAT, OFF(selfplay.sizes_fraction), 0, 0.95, 0.5, NULL, NULL,
     NULL, "selfplay.sizes: the share of a generation's games played on the smaller boards at "
     "the run's start (shared equally between them; the rest on N x N)"},
    {"selfplay.sizes_fraction_end", T_FLOAT, OFF(selfplay.sizes_fraction_end), 0, 0.95, 0.1, NULL,
     NULL, NULL, "selfplay.sizes: that share at the end of the run's budget (--time, else the "
     "generations), linear in between"},
    {"selfplay.threat_checks", T_BOOL, OFF(selfplay.threat_checks), 0, 1, 0, NULL, NULL, NULL,
     "self-play's search runs the mcts.vcf_root/vcf_leaf/vcf_defend checks too; false: they "
     "serve the arena, play and the protocols only (measured: in self-play they cost "
     "generations and give no better model)"},

    {"train.batch_size", T_INT, OFF(train.batch_size), 1, 8192, 256, NULL, NULL, NULL, "mini-batch size"},
    {"train.steps", T_INT, OFF(train.steps), 1, 100000000, 500, NULL, NULL, NULL,
     "training steps per generation"},
    {"train.lr", T_FLOAT, OFF(train.lr), 0, 10, 0.02, NULL, NULL, NULL, "peak learning rate"},
    {"train.momentum", T_FLOAT, OFF(train.momentum), 0, 0.9999, 0.9, NULL, NULL, NULL,
     "SGD momentum (Adam: beta1)"},
    {"train.weight_decay", T_FLOAT, OFF(train.weight_decay), 0, 1, 1e-4, NULL, NULL, NULL,
     "L2 on conv and dense weights (not BN, not biases)"},
    {"train.optimizer", T_STR, OFF(train.optimizer), 0, 0, 0, "sgd", "sgd|adam", NULL, "optimizer"},
    {"train.schedule", T_STR, OFF(train.schedule), 0, 0, 0, "constant", "constant|step|cosine", NULL,
     "learning-rate schedule"},
    {"train.warmup_steps", T_INT, OFF(train.warmup_steps), 0, 100000000, 0, NULL, NULL, NULL,
     "linear warm-up steps"},
    {"train.window", T_INT, OFF(train.window), 1, 1000, 4, NULL, NULL, NULL,
     "train on the samples of the last this many generations"},
    {"train.log_every", T_INT, OFF(train.log_every), 1, 1000000, 50, NULL, NULL, NULL,
     "log losses every this many steps"},
    {"train.validation_fraction", T_FLOAT, OFF(train.validation_fraction), 0, 0.5, 0.05, NULL, NULL,
     NULL, "samples held out for validation"},
    {"train.value_weight", T_FLOAT, OFF(train.value_weight), 0, 100, 1, NULL, NULL, NULL,
     "weight of the value loss"},
    {"train.aux_policy_weight", T_FLOAT, OFF(train.aux_policy_weight), 0, 100, 0.15, NULL, NULL,
     NULL, "weight of the opponent-reply head's cross-entropy (net.aux_policy; KataGo 0.15)"},
    {"train.owner_weight", T_FLOAT, OFF(train.owner_weight), 0, 100, 1.5, NULL, NULL, NULL,
     "weight of the ownership head's cross-entropy, a mean over the points (net.aux_owner; "
     "KataGo 1.5)"},
    {"train.action_value_weight", T_FLOAT, OFF(train.action_value_weight), 0, 100, 1, NULL, NULL,
     NULL, "weight of the action-value head's MSE in the h scale, a mean over each sample's moves "
     "with a target (net.policy_head action_value; the value MSE's scale)"},
    {"train.q_ratio", T_FLOAT, OFF(train.q_ratio), 0, 1, 0, NULL, NULL, NULL,
     "value target = (1 - q_ratio) x game outcome + q_ratio x the search's root value (files "
     "before format 3 have only the outcome)"},
    {"train.reuse", T_FLOAT, OFF(train.reuse), 0, 1000, 4, NULL, NULL, NULL,
     "run: steps per generation = reuse x new positions / batch_size; 0 = train.steps"},
    {"train.schedule_scope", T_STR, OFF(train.schedule_scope), 0, 0, 0, "run", "run|generation", NULL,
     "run: one optimizer over the run (momentum kept, schedule on the global step); generation: restart"},
    {"train.run_steps", T_INT, OFF(train.run_steps), 0, 1000000000, 0, NULL, NULL, NULL,
     "scope run: length of the step/cosine schedule in global steps; 0 = constant"},
    {"train.schedule_span", T_STR, OFF(train.schedule_span), 0, 0, 0, "steps", "steps|budget", NULL,
     "scope run: steps: the schedule spans train.run_steps global steps; budget: it spans the "
     "run's budget (--time, else --generations / loop.generations), its length in steps "
     "extrapolated each generation from the steps taken and the budget used"},
    {"train.lr_floor", T_FLOAT, OFF(train.lr_floor), 0, 1, 0, NULL, NULL, NULL,
     "the schedule never goes below lr x this"},
    {"train.calibrate", T_STR, OFF(train.calibrate), 0, 0, 0, "auto", "auto|always|never", NULL,
     "run: calibrate each new model for int8 on its training window and keep the calibration "
     "when the accuracy gates pass; auto: where net.precision auto would run it in int8 "
     "(VNNI; with AMX, trunks of 64 channels or more)"},
    {"train.swa", T_INT, OFF(train.swa), 0, 64, 0, NULL, NULL, NULL,
     "run: N >= 2: each generation's played model (self-play, the arena, best) is models/swa_i.h5, "
     "the mean of the weights of generations i-N+1 .. i (from 1; stochastic weight averaging, "
     "gridzero average), calibrated in gen_i's place; training goes on from gen_i's own weights; "
     "0 or 1: gen_i itself"},
    {"train.conv", T_STR, OFF(train.conv), 0, 0, 0, "auto", "auto|im2col", NULL,
     "the trainer's 3x3 convs: auto = Winograd F(2x2,3x3) where both sides have 16 channels or "
     "more (the trunk), else im2col (the stem); im2col = im2col and one GEMM per chunk everywhere"},

    {"arena.games", T_INT, OFF(arena.games), 0, 1000000, 40, NULL, NULL, NULL,
     "games per arena match"},
    {"arena.simulations", T_INT, OFF(arena.simulations), 1, 10000000, 100, NULL, NULL, NULL,
     "simulations per move of model players in the arena"},
    {"arena.opening_moves", T_INT, OFF(arena.opening_moves), 0, 1000, 2, NULL, NULL, NULL,
     "random moves at the start so that games differ"},
    {"arena.depth", T_INT, OFF(arena.depth), 1, 8, 1, NULL, NULL, NULL,
     "net.kind ntuple: the moves the candidate's expectimax searches in the arena (1 = greedy "
     "over the after-state values)"},
    {"arena.every", T_INT, OFF(arena.every), 1, 1000000, 1, NULL, NULL, NULL,
     "run: the arena plays in the generations whose number is a multiple of this; the others "
     "play no games and are promoted only when arena.gate is 0 (small generations: the "
     "ladder at a fraction of the cost)"},
    {"arena.gate", T_FLOAT, OFF(arena.gate), 0, 1, 0, NULL, NULL, NULL,
     "promote the candidate at this head-to-head score against the best or above (three players: per pair of seats); 0 = always promote"},
    {"arena.lookback", T_INT, OFF(arena.lookback), 0, 1000000, 0, NULL, NULL, NULL,
     "run, games of 2 or 3 players: each candidate also plays the model this many generations older (not when that is the best model or does not exist); 0 = no. A step the ratings resolve when each generation gains little on its parent"},
    {"arena.baselines", T_LIST, OFF(arena.baselines), 0, 0, 0, "random", NULL, NULL,
     "players every generation also meets (e.g. random, mcts:200, perfect)"},

    {"loop.generations", T_INT, OFF(loop.generations), 1, 1000000, 10, NULL, NULL, NULL,
     "generations of the run"},
};

#define NFIELDS (sizeof fields / sizeof fields[0])

const char cfg_default_json[] =
    "{\n"
    "  \"game\": {\"name\": \"mnk\", \"rows\": 3, \"cols\": 3, \"k\": 3},\n"
    "  \"mcts\": {\"simulations\": 64, \"batch\": 8, \"temperature_moves\": 4,\n"
    "           \"dirichlet_alpha\": 1.0},\n"
    "  \"net\": {\"blocks\": 2, \"channels\": 32, \"head_channels\": 16, \"value_hidden\": 32},\n"
    "  \"selfplay\": {\"games\": 200, \"parallel_games\": 32, \"bootstrap_simulations\": 200},\n"
    "  \"train\": {\"batch_size\": 128, \"steps\": 400, \"lr\": 0.05, \"window\": 3},\n"
    "  \"arena\": {\"games\": 40, \"simulations\": 50, \"opening_moves\": 1,\n"
    "            \"baselines\": [\"random\", \"perfect\"]},\n"
    "  \"loop\": {\"generations\": 8}\n"
    "}\n";

static bool field_applies(const cfg_field *f, const char *game)
{
    return !f->game || strcmp(f->game, game) == 0;
}

static void *field_ptr(gz_config *c, const cfg_field *f) { return (char *)c + f->offset; }
static const void *field_cptr(const gz_config *c, const cfg_field *f)
{
    return (const char *)c + f->offset;
}

static void set_list(gz_config *c, const cfg_field *f, const char *csv)
{
    /* Only arena.baselines is a list; its count lives beside it. */
    assert(f->offset == OFF(arena.baselines));
    c->arena.nbaselines = 0;
    const char *p = csv;
    while (p && *p && c->arena.nbaselines < CFG_LIST_MAX) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n >= CFG_STR_LEN)
            n = CFG_STR_LEN - 1;
        memcpy(c->arena.baselines[c->arena.nbaselines], p, n);
        c->arena.baselines[c->arena.nbaselines][n] = 0;
        c->arena.nbaselines++;
        p = e ? e + 1 : NULL;
    }
}

_Static_assert(OFF(selfplay.nsizes) + sizeof(int) == OFF(selfplay.sizes), "T_INTS: count before array");
_Static_assert(OFF(net.nntuple_stages) + sizeof(int) == OFF(net.ntuple_stages), "T_INTS: count before array");

/* A T_INTS field's array and its count (the int just before it). */
static int *ints_count(gz_config *c, const cfg_field *f) { return (int *)((char *)c + f->offset) - 1; }
static int *ints_array(gz_config *c, const cfg_field *f) { return (int *)((char *)c + f->offset); }

static void set_int_list(gz_config *c, const cfg_field *f, const char *csv)
{
    int *n = ints_count(c, f), *a = ints_array(c, f);
    *n = 0;
    for (const char *p = csv; p && *p && *n < CFG_LIST_MAX;) {
        a[(*n)++] = atoi(p);
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
}

/* Whether fields[i] is the first field with its path (later ones are per-game copies). */
static bool first_of_path(size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(fields[j].path, fields[i].path))
            return false;
    return true;
}

void cfg_defaults(gz_config *c, const char *game_name)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NFIELDS; i++) {
        const cfg_field *f = &fields[i];
        if (!first_of_path(i))
            continue; /* a per-game duplicate: set below when its game is the one */
        void *p = field_ptr(c, f);
        switch (f->type) {
        case T_INT: *(int *)p = (int)f->def; break;
        case T_U64: *(uint64_t *)p = (uint64_t)f->def; break;
        case T_FLOAT: *(double *)p = f->def; break;
        case T_BOOL: *(bool *)p = f->def != 0; break;
        case T_STR: snprintf((char *)p, CFG_STR_LEN, "%s", f->def_str); break;
        case T_LIST: set_list(c, f, f->def_str); break;
        case T_INTS: set_int_list(c, f, f->def_str); break;
        case T_EXACT: break;
        }
    }
    if (game_name)
        snprintf(c->game.name, sizeof c->game.name, "%s", game_name);
    /* a key listed once per game (game.rows of mnk and of 2048): the game's own default */
    for (size_t i = 0; i < NFIELDS; i++) {
        const cfg_field *f = &fields[i];
        if (!first_of_path(i) && field_applies(f, c->game.name)) {
            assert(f->type == T_INT);
            *(int *)field_ptr(c, f) = (int)f->def;
        }
    }
}

/* The field of path for game `game`: the one that applies to it when the path is listed
 * per game, else the first with that path (so a key of another game is still found and
 * refused by name). NULL when no field has the path. */
static const cfg_field *find_field(const char *path, const char *game)
{
    const cfg_field *any = NULL;
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(fields[i].path, path) == 0) {
            if (game && field_applies(&fields[i], game))
                return &fields[i];
            if (!any)
                any = &fields[i];
        }
    return any;
}

static bool is_section(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < NFIELDS; i++)
        if (strncmp(fields[i].path, name, n) == 0 && fields[i].path[n] == '.')
            return true;
    return false;
}

static const char *type_words(const cfg_field *f)
{
    switch (f->type) {
    case T_INT: return "an integer";
    case T_U64: return "a non-negative integer";
    case T_FLOAT: return "a number";
    case T_BOOL: return "true or false";
    case T_STR: return "a string";
    case T_LIST: return "an array of strings";
    case T_INTS: return "an array of integers";
    case T_EXACT: return "true or false";
    }
    return "?";
}

static bool choice_ok(const char *choices, const char *s)
{
    size_t n = strlen(s);
    const char *p = choices;
    while (p) {
        const char *e = strchr(p, '|');
        size_t m = e ? (size_t)(e - p) : strlen(p);
        if (m == n && strncmp(p, s, n) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* A list key's value: a JSON array of at most CFG_LIST_MAX entries. */
static int check_array(const cfg_field *f, const cJSON *v, const char *src, char *err, size_t errlen)
{
    if (!cJSON_IsArray(v))
        return gz_fail(err, errlen, "%s: key %s: expected %s", src, f->path, type_words(f));
    int n = cJSON_GetArraySize(v);
    if (n > CFG_LIST_MAX)
        return gz_fail(err, errlen, "%s: key %s: at most %d entries, got %d", src, f->path,
                       CFG_LIST_MAX, n);
    return 0;
}

/* Stores one JSON value into the field, checking type and range. */
static int set_value(gz_config *c, const cfg_field *f, const cJSON *v, const char *src, char *err,
                     size_t errlen)
{
    void *p = field_ptr(c, f);
    switch (f->type) {
    case T_INT:
    case T_U64:
    case T_FLOAT: {
        if (!cJSON_IsNumber(v))
            return gz_fail(err, errlen, "%s: key %s: expected %s, got %s", src, f->path, type_words(f),
                        cJSON_IsString(v) ? "a string" : "another type");
        double d = v->valuedouble;
        if (!isfinite(d))
            return gz_fail(err, errlen, "%s: key %s: expected a finite number", src, f->path);
        if (f->type != T_FLOAT && d != floor(d))
            return gz_fail(err, errlen, "%s: key %s: expected %s, got %g", src, f->path, type_words(f), d);
        if (d < f->min || d > f->max) {
            if (f->type == T_FLOAT)
                return gz_fail(err, errlen, "%s: key %s: expected a number in [%g, %g], got %g", src,
                            f->path, f->min, f->max, d);
            return gz_fail(err, errlen, "%s: key %s: expected an integer in [%.0f, %.0f], got %.0f", src,
                        f->path, f->min, f->max, d);
        }
        if (f->type == T_INT)
            *(int *)p = (int)d;
        else if (f->type == T_U64)
            *(uint64_t *)p = (uint64_t)d;
        else
            *(double *)p = d;
        return 0;
    }
    case T_BOOL:
        if (!cJSON_IsBool(v))
            return gz_fail(err, errlen, "%s: key %s: expected true or false", src, f->path);
        *(bool *)p = cJSON_IsTrue(v);
        return 0;
    case T_EXACT: {
        if (!cJSON_IsBool(v))
            return gz_fail(err, errlen, "%s: key %s: expected true or false", src, f->path);
        char *rule = (char *)p;
        bool is_other = strcmp(rule, "freestyle") && strcmp(rule, "exact");
        if (cJSON_IsTrue(v) && is_other)
            return gz_fail(err, errlen, "%s: key %s: true means game.rule \"exact\", but game.rule is "
                           "\"%s\" (give game.rule alone)", src, f->path, rule);
        if (!is_other)
            snprintf(rule, CFG_STR_LEN, "%s", cJSON_IsTrue(v) ? "exact" : "freestyle");
        return 0;
    }
    case T_STR:
        if (!cJSON_IsString(v))
            return gz_fail(err, errlen, "%s: key %s: expected a string%s%s", src, f->path,
                        f->choices ? ": one of " : "", f->choices ? f->choices : "");
        if (strlen(v->valuestring) >= CFG_STR_LEN)
            return gz_fail(err, errlen, "%s: key %s: string longer than %d characters", src, f->path,
                        CFG_STR_LEN - 1);
        if (f->choices && !choice_ok(f->choices, v->valuestring))
            return gz_fail(err, errlen, "%s: key %s: expected one of %s, got \"%s\"", src, f->path,
                        f->choices, v->valuestring);
        snprintf((char *)p, CFG_STR_LEN, "%s", v->valuestring);
        return 0;
    case T_LIST: {
        if (check_array(f, v, src, err, errlen) < 0)
            return -1;
        c->arena.nbaselines = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, v)
        {
            if (!cJSON_IsString(it) || !it->valuestring[0] ||
                strlen(it->valuestring) >= CFG_STR_LEN)
                return gz_fail(err, errlen, "%s: key %s[%d]: expected a non-empty string of at most %d "
                            "characters", src, f->path, c->arena.nbaselines, CFG_STR_LEN - 1);
            snprintf(c->arena.baselines[c->arena.nbaselines++], CFG_STR_LEN, "%s", it->valuestring);
        }
        return 0;
    }
    case T_INTS: {
        if (check_array(f, v, src, err, errlen) < 0)
            return -1;
        int *n = ints_count(c, f), *a = ints_array(c, f);
        *n = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, v)
        {
            double d = cJSON_IsNumber(it) ? it->valuedouble : NAN;
            if (!(d == floor(d) && d >= f->min && d <= f->max))
                return gz_fail(err, errlen, "%s: key %s[%d]: expected an integer in [%.0f, %.0f]", src,
                               f->path, *n, f->min, f->max);
            a[(*n)++] = (int)d;
        }
        return 0;
    }
    }
    return gz_fail(err, errlen, "%s: key %s: internal error", src, f->path);
}

/* selfplay.sizes: m,n,k on a square board N x N, each size in [game.k, N), increasing. */
static int check_sizes(const gz_config *c, const char *src, char *err, size_t errlen)
{
    const cfg_selfplay *sp = &c->selfplay;
    const cfg_game *g = &c->game;
    if (sp->nsizes == 0)
        return 0;
    if (strcmp(g->name, "mnk"))
        return gz_fail(err, errlen, "%s: key selfplay.sizes: mixed board sizes are for m,n,k games "
                       "(Gomoku), not for %s: use []", src, g->name);
    if (g->rows != g->cols)
        return gz_fail(err, errlen, "%s: key selfplay.sizes: mixed board sizes need a square board "
                       "(game.rows = game.cols), got %dx%d", src, g->rows, g->cols);
    if (strcmp(c->net.policy_head, "conv"))
        return gz_fail(err, errlen, "%s: key selfplay.sizes: mixed board sizes need the fully "
                       "convolutional policy head (net.policy_head conv), got %s", src,
                       c->net.policy_head);
    for (int i = 0; i < sp->nsizes; i++) {
        int s = sp->sizes[i];
        if (s < g->k || s >= g->rows)
            return gz_fail(err, errlen, "%s: key selfplay.sizes[%d]: expected a board side in "
                           "[game.k, game.rows) = [%d, %d), got %d", src, i, g->k, g->rows, s);
        if (i > 0 && s <= sp->sizes[i - 1])
            return gz_fail(err, errlen, "%s: key selfplay.sizes[%d]: expected the sizes in increasing "
                           "order, each once, got %d after %d", src, i, s, sp->sizes[i - 1]);
        if (!strcmp(sp->opening, "swap2") && s * s < 25)
            return gz_fail(err, errlen, "%s: key selfplay.sizes[%d]: selfplay.opening swap2 needs a "
                           "board of at least 25 points, got %dx%d", src, i, s, s);
    }
    return 0;
}

/* Rules between keys, checked after every key is read. */
static int check_cross(const gz_config *c, const char *src, char *err, size_t errlen)
{
    const cfg_game *g = &c->game;
    if (strcmp(g->name, "mnk") == 0) {
        int longest = g->rows > g->cols ? g->rows : g->cols;
        if (g->k > longest)
            return gz_fail(err, errlen, "%s: key game.k: expected at most max(rows, cols) = %d, got %d",
                        src, longest, g->k);
        cfg_rule rule = cfg_game_rule(g);
        if ((rule == CFG_RULE_RENJU || rule == CFG_RULE_CARO) && g->k != 5)
            return gz_fail(err, errlen, "%s: key game.rule: %s is a rule of five in a row (game.k = 5), "
                           "but game.k is %d", src, g->rule, g->k);
    } else if (strcmp(g->name, "sanling") == 0) {
        int cells = g->size * g->size - 1;
        if (g->moves > cells)
            return gz_fail(err, errlen,
                        "%s: key game.moves: expected at most size*size-1 = %d (the free points), got %d",
                        src, cells, g->moves);
    }
    if (!strcmp(c->net.value_head, "wdl") &&
        !(!strcmp(g->name, "mnk") || (!strcmp(g->name, "sanling") && g->players == 2))) {
        /* the mover's win, draw, loss: the other seat's is the same read backwards, which
         * holds for two players with outcomes only (not for 2048's score) */
        bool scored = !strcmp(g->name, "2048");
        return gz_fail(err, errlen, "%s: key net.value_head: wdl (win, draw and loss "
                       "probabilities) needs a two-player game with outcomes; game %s has %d "
                       "player%s%s: use zerosum or independent%s", src, g->name, g->players,
                       g->players == 1 ? "" : "s", scored ? " and a score" : "",
                       scored ? " (a scored game always gets score)" : "");
    }
    if (!strcmp(c->net.kind, "ntuple") && (strcmp(g->name, "2048") || g->rows != 4 || g->cols != 4))
        return gz_fail(err, errlen, "%s: key net.kind: ntuple networks play 2048 on the 4x4 board, "
                       "not %s %dx%d", src, g->name, g->rows, g->cols);
    if (!strcmp(c->net.kind, "ntuple") && c->train.swa >= 2)
        return gz_fail(err, errlen, "%s: key train.swa: weight averaging is for net.kind cnn "
                       "(an n-tuple network learns online by TD)", src);
    if (c->net.nntuple_stages > 0) {
        if (strcmp(c->net.kind, "ntuple"))
            return gz_fail(err, errlen, "%s: key net.ntuple_stages: stages are for net.kind ntuple", src);
        if (c->net.nntuple_stages > 3)
            return gz_fail(err, errlen, "%s: key net.ntuple_stages: at most 3 thresholds (4 stages), got %d",
                           src, c->net.nntuple_stages);
        for (int i = 0; i < c->net.nntuple_stages; i++) {
            int t = c->net.ntuple_stages[i];
            if (t & (t - 1) || (i > 0 && t <= c->net.ntuple_stages[i - 1]))
                return gz_fail(err, errlen, "%s: key net.ntuple_stages[%d]: %d: the thresholds are tiles, "
                               "increasing powers of two", src, i, t);
        }
    }
    if (!strcmp(c->selfplay.opening, "swap2")) {
        if (strcmp(g->name, "mnk"))
            return gz_fail(err, errlen, "%s: key selfplay.opening: swap2 is an opening of m,n,k games "
                           "(Gomoku), not of %s", src, g->name);
        if (g->rows * g->cols < 25)
            return gz_fail(err, errlen, "%s: key selfplay.opening: swap2 needs a board of at least 25 "
                           "points", src);
        if (c->selfplay.openings[0])
            return gz_fail(err, errlen, "%s: key selfplay.openings: a book and selfplay.opening swap2 "
                           "are two ways to start a game: choose one", src);
    }
    if (check_sizes(c, src, err, errlen) < 0)
        return -1;
    const cfg_train *t = &c->train;
    if (!strcmp(t->schedule_scope, "run") && strcmp(t->schedule, "constant") && t->run_steps == 0 &&
        strcmp(t->schedule_span, "budget"))
        return gz_fail(err, errlen,
                       "%s: key train.run_steps: a %s schedule over the run (train.schedule_scope run) "
                       "needs its length in global steps (> 0), or train.schedule_span budget",
                       src, t->schedule);
    return 0;
}

/* Whether an earlier member of obj has item's name: JSON allows repeated keys and cJSON
 * keeps them all, so {"mcts": {...}, "mcts": {...}} would apply both, silently. */
static bool repeated_key(const cJSON *obj, const cJSON *item)
{
    for (const cJSON *o = obj->child; o && o != item; o = o->next)
        if (o->string && item->string && !strcmp(o->string, item->string))
            return true;
    return false;
}

/* The 1-based line of json that at points into. */
static int line_of(const char *json, const char *at)
{
    int line = 1;
    for (const char *q = json; at && q < at && *q; q++)
        line += *q == '\n';
    return line;
}

/* Parses json as one JSON value followed by nothing but whitespace: cJSON_Parse stops
 * after the first value and ignores what follows, so "{...} junk" would be accepted.
 * Returns the value (free with cJSON_Delete), or NULL with *trailing set to the first
 * character after the value when that is what is wrong (NULL when the JSON itself is
 * invalid). */
static cJSON *parse_whole(const char *json, const char **trailing)
{
    const char *end = NULL;
    *trailing = NULL;
    cJSON *v = cJSON_ParseWithOpts(json, &end, 0);
    if (!v)
        return NULL;
    while (end && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
        end++;
    if (end && *end) {
        cJSON_Delete(v);
        *trailing = end;
        return NULL;
    }
    return v;
}

int cfg_parse(gz_config *c, const char *json, const char *source, char *err, size_t errlen)
{
    const char *src = source ? source : "config";
    const char *trailing;
    cJSON *root = parse_whole(json, &trailing);
    if (!root) {
        if (trailing)
            return gz_fail(err, errlen, "%s: unexpected text after the JSON object (line %d: \"%.20s\")",
                           src, line_of(json, trailing), trailing);
        return gz_fail(err, errlen, "%s: not valid JSON (near line %d)", src,
                       line_of(json, cJSON_GetErrorPtr()));
    }
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        gz_fail(err, errlen, "%s: expected a JSON object at the top", src);
        goto out;
    }
    /* The game decides which keys exist and their defaults, so read its name first. */
    const char *gname = "mnk";
    const cJSON *gsec = cJSON_GetObjectItemCaseSensitive(root, "game");
    if (gsec) {
        if (!cJSON_IsObject(gsec)) {
            gz_fail(err, errlen, "%s: key game: expected an object", src);
            goto out;
        }
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(gsec, "name");
        if (!n) {
            gz_fail(err, errlen, "%s: key game.name: missing (expected one of mnk|sanling|2048)", src);
            goto out;
        }
        if (set_value(c, find_field("game.name", NULL), n, src, err, errlen) < 0)
            goto out;
        gname = n->valuestring;
    }
    char game_name[16];
    snprintf(game_name, sizeof game_name, "%s", gname);
    cfg_defaults(c, game_name);

    const cJSON *sec;
    cJSON_ArrayForEach(sec, root)
    {
        const char *sname = sec->string;
        if (repeated_key(root, sec)) {
            gz_fail(err, errlen, "%s: key %s appears twice", src, sname);
            goto out;
        }
        const cfg_field *top = find_field(sname, game_name);
        if (top) {
            if (set_value(c, top, sec, src, err, errlen) < 0)
                goto out;
            continue;
        }
        if (!is_section(sname)) {
            gz_fail(err, errlen, "%s: unknown key %s (sections: seed, game, mcts, net, selfplay, train, "
                 "arena, loop)", src, sname);
            goto out;
        }
        if (!cJSON_IsObject(sec)) {
            gz_fail(err, errlen, "%s: key %s: expected an object", src, sname);
            goto out;
        }
        const cJSON *kv;
        cJSON_ArrayForEach(kv, sec)
        {
            char path[160];
            snprintf(path, sizeof path, "%s.%s", sname, kv->string);
            if (repeated_key(sec, kv)) {
                gz_fail(err, errlen, "%s: key %s appears twice", src, path);
                goto out;
            }
            const cfg_field *f = find_field(path, game_name);
            if (!f) {
                gz_fail(err, errlen, "%s: unknown key %s", src, path);
                goto out;
            }
            if (!field_applies(f, game_name)) {
                gz_fail(err, errlen, "%s: key %s: not a key of game %s", src, path, game_name);
                goto out;
            }
            if (f->type == T_EXACT && cJSON_GetObjectItemCaseSensitive(sec, "rule")) {
                gz_fail(err, errlen, "%s: key %s: the old spelling of game.rule; give one of them, not "
                        "both", src, path);
                goto out;
            }
            if (set_value(c, f, kv, src, err, errlen) < 0)
                goto out;
        }
    }
    rc = check_cross(c, src, err, errlen);
out:
    cJSON_Delete(root);
    return rc;
}

int cfg_load(gz_config *c, const char *path, char *err, size_t errlen)
{
    if (!path)
        return cfg_parse(c, cfg_default_json, "built-in default config", err, errlen);
    FILE *f = fopen(path, "rb");
    if (!f)
        return gz_fail(err, errlen, "%s: cannot open config: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (16u << 20)) {
                free(buf);
                fclose(f);
                return gz_fail(err, errlen, "%s: config larger than 16 MiB", path);
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return gz_fail(err, errlen, "%s: out of memory", path);
            }
            buf = nb;
        }
        size_t n = fread(buf + len, 1, 4096, f);
        len += n;
        if (n < 4096)
            break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (rerr) {
        free(buf);
        return gz_fail(err, errlen, "%s: read error", path);
    }
    buf[len] = 0;
    if (strlen(buf) != len) {
        free(buf);
        return gz_fail(err, errlen, "%s: not a text file (NUL byte)", path);
    }
    int rc = cfg_parse(c, buf, path, err, errlen);
    free(buf);
    return rc;
}

int cfg_check(const gz_config *c, const char *source, char *err, size_t errlen)
{
    return check_cross(c, source ? source : "config", err, errlen);
}

/* Applies one "key.path=value" override without the rules between keys. */
static int set_one(gz_config *c, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return gz_fail(err, errlen, "--set %s: expected key.path=value", assignment);
    char path[160];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof path)
        return gz_fail(err, errlen, "--set: key too long");
    memcpy(path, assignment, n);
    path[n] = 0;
    const cfg_field *f = find_field(path, c->game.name);
    if (!f)
        return gz_fail(err, errlen, "--set: unknown key %s", path);
    if (strcmp(path, "game.name") == 0)
        return gz_fail(err, errlen, "--set: game.name cannot be overridden (use another config file)");
    if (!field_applies(f, c->game.name))
        return gz_fail(err, errlen, "--set: key %s: not a key of game %s", path, c->game.name);
    const char *val = eq + 1;
    const char *trailing;
    cJSON *v = parse_whole(val, &trailing);
    if (!v) /* a bare word is a string (and so is "5x": not the number 5) */
        v = cJSON_CreateString(val);
    if (!v)
        return gz_fail(err, errlen, "--set: out of memory");
    int rc = set_value(c, f, v, "--set", err, errlen);
    cJSON_Delete(v);
    return rc;
}

int cfg_set(gz_config *c, const char *assignment, char *err, size_t errlen)
{
    int rc = set_one(c, assignment, err, errlen);
    if (rc == 0)
        rc = check_cross(c, "--set", err, errlen);
    return rc;
}

int cfg_set_all(gz_config *c, char *const *assignments, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (set_one(c, assignments[i], err, errlen) < 0)
            return -1;
    return n > 0 ? check_cross(c, "--set", err, errlen) : 0;
}

char *cfg_to_json(const gz_config *c)
{
    cJSON *root = cJSON_CreateObject();
    for (size_t i = 0; i < NFIELDS; i++) {
        const cfg_field *f = &fields[i];
        if (!field_applies(f, c->game.name) || f->type == T_EXACT)
            continue;
        cJSON *parent = root;
        const char *dot = strchr(f->path, '.');
        const char *key = f->path;
        if (dot) {
            char sname[32];
            snprintf(sname, sizeof sname, "%.*s", (int)(dot - f->path), f->path);
            parent = cJSON_GetObjectItemCaseSensitive(root, sname);
            if (!parent)
                parent = cJSON_AddObjectToObject(root, sname);
            key = dot + 1;
        }
        const void *p = field_cptr(c, f);
        switch (f->type) {
        case T_INT: cJSON_AddNumberToObject(parent, key, *(const int *)p); break;
        case T_U64: { /* as digits: cJSON's own printing rounds integers above ~1e15 */
            char num[32];
            snprintf(num, sizeof num, "%llu", (unsigned long long)*(const uint64_t *)p);
            cJSON_AddRawToObject(parent, key, num);
            break;
        }
        case T_FLOAT: cJSON_AddNumberToObject(parent, key, *(const double *)p); break;
        case T_BOOL: cJSON_AddBoolToObject(parent, key, *(const bool *)p); break;
        case T_STR: cJSON_AddStringToObject(parent, key, (const char *)p); break;
        case T_LIST: {
            cJSON *a = cJSON_AddArrayToObject(parent, key);
            for (int j = 0; j < c->arena.nbaselines; j++)
                cJSON_AddItemToArray(a, cJSON_CreateString(c->arena.baselines[j]));
            break;
        }
        case T_INTS: {
            cJSON *a = cJSON_AddArrayToObject(parent, key);
            const int *arr = p, n = arr[-1]; /* the count just before the array (ints_count) */
            for (int j = 0; j < n; j++)
                cJSON_AddItemToArray(a, cJSON_CreateNumber(arr[j]));
            break;
        }
        case T_EXACT: break;
        }
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

void cfg_print_keys(FILE *out)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const cfg_field *f = &fields[i];
        char def[96];
        switch (f->type) {
        case T_STR:
        case T_LIST: snprintf(def, sizeof def, "%s", f->def_str); break;
        case T_INTS: snprintf(def, sizeof def, "[%s]", f->def_str); break;
        case T_BOOL:
        case T_EXACT: snprintf(def, sizeof def, "%s", f->def ? "true" : "false"); break;
        default: snprintf(def, sizeof def, "%g", f->def); break;
        }
        fprintf(out, "  %-34s %-8s default %-10s %s%s%s%s\n", f->path,
                f->type == T_INT || f->type == T_U64 ? "int" : f->type == T_FLOAT ? "number"
                : f->type == T_BOOL || f->type == T_EXACT ? "bool" : f->type == T_STR ? "string"
                : f->type == T_INTS ? "ints" : "list",
                def, f->game ? "[" : "", f->game ? f->game : "", f->game ? " only] " : "", f->help);
    }
}

static const char *const rule_names[] = {"freestyle", "exact", "renju", "caro"};

int cfg_rule_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, rule_names[i]))
            return i;
    return -1;
}

cfg_rule cfg_game_rule(const cfg_game *g)
{
    int r = cfg_rule_parse(g->rule);
    return r < 0 ? CFG_RULE_FREESTYLE : (cfg_rule)r;
}

const char *cfg_rule_name(cfg_rule r)
{
    return (unsigned)r < 4 ? rule_names[r] : "?";
}

void cfg_game_set_rule(cfg_game *g, cfg_rule r)
{
    snprintf(g->rule, sizeof g->rule, "%s", cfg_rule_name(r));
}
