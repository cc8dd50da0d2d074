/* selfplay.h — self-play workers: games of PUCT search against itself, written as
 * (state, π, z) samples to one sample file (samples.h).
 *
 * Each worker thread plays many games at once (parallel_games trees stepped together,
 * mcts_step_many), so every evaluator call carries the leaves of all its games. A game
 * keeps one sample per move: the encoded root position (player-to-move view), the
 * search's visit distribution π, the legal mask, and — once the game ends — the outcome
 * z in mover-first order. Root Dirichlet noise and the temperature schedule come from
 * the mcts config section.
 *
 * Scored games (2048): z is the points still to come after the sample's position, the
 * game's final score minus the score then (or the n-step return of value_steps), and q
 * the search's root value in points; the chance events after each move are drawn by
 * mcts_play with the tree's rng. With export_min_visits the samples are the search
 * trees' nodes instead (seed 003: "every (state, move) in the tree keeps the best score
 * reached after it").
 *
 * Every sample carries a policy weight (samples.h): 0 for the fast searches of playout
 * cap randomisation and, with zero_weight_proven, for roots the solver proved lost or
 * drawn (their visits say nothing: the search stops at about one visit a move).
 *
 * Resignation (AlphaGo Zero's rule, two-player games only): when the root value of the
 * player to move is below resign_threshold at two consecutive moves of that player, it
 * resigns (outcome -1 for it, +1 for the other) — except in a random
 * resign_disabled_fraction of the games, which play on; there, a player that would
 * have resigned but did not lose is a false resignation, and the rate is reported.
 *
 * Resignation calibration (AlphaGo Zero keeps false resignations under 5%): in every
 * no-resign two-player game each player's "resign_at" is recorded, the lowest over its
 * consecutive move pairs of the pair's higher root value (it would have resigned under
 * any threshold above it), with whether it then lost. The records go into the sample
 * file (samples.h, resign_checks) and sp_resign_calibrate turns the last generations'
 * records into the next threshold.
 *
 * Openings (selfplay.opening, selfplay.openings). A game starts from the empty board,
 * or from a line of an opening book (openings.h; game i of a run plays line
 * (offset + i) mod count, offset drawn from the seed, so the book is used evenly), or
 * from a swap2 opening (m,n,k): the opener places three stones (black, white, black)
 * chosen among SP_SWAP2_CANDIDATES random placements in the centre (the central 7x7
 * points) as the one whose value for white, the side to move, is nearest 0 (values from
 * the worker's evaluator: the network's value head, or random playouts in a rollout
 * bootstrap); the responder then takes the colour whose value is higher, unless the
 * two are within SP_SWAP2_PLACE2 of each other, when it places two more stones (white,
 * black; again the most balanced of the candidates, within the central 9x9) and the
 * opener takes the better colour. One network plays both colours in self-play, so the
 * colour choices decide who is who but not the moves; what they change is where the
 * game starts. Opening moves are not searched and give no samples (a sample's ply still
 * counts them).
 *
 * The evaluators come from a factory (one per worker thread, each used by its thread
 * only): the network evaluator for a model, or the rollout evaluator (pure MCTS) for a
 * bootstrap generation. This module knows search and sample files, not networks.
 */
#ifndef GZ_SELFPLAY_SELFPLAY_H
#define GZ_SELFPLAY_SELFPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"
#include "engine/mcts.h"
#include "engine/openings.h"
#include "samples.h"

enum { SP_SWAP2_CANDIDATES = 16 };
#define SP_SWAP2_PLACE2 0.05f

/* Makes worker `worker`'s evaluator (of `workers`). Returns a new evaluator (the
 * worker frees it) or NULL with a message. Called from the main thread. */
typedef evaluator *(*sp_eval_factory)(void *ctx, int worker, int workers, char *err,
                                      size_t errlen);

/* Counters of a self-play run (or so far, in progress callbacks). */
typedef struct sp_stats {
    int games;                /* finished games */
    int64_t positions;        /* samples written */
    int64_t plies;            /* moves played (= positions) */
    int seat_wins[GAME_MAX_PLAYERS]; /* games won by the player in seat i (best outcome alone) */
    int draws;                /* games without a sole winner */
    int resigned;             /* games ended by resignation */
    int adjudicated;          /* games ended at a proven root (sp_opts.adjudicate) */
    int resign_checked;       /* players in no-resign games that would have resigned */
    int resign_false;         /* ... and then did not lose */
    int64_t simulations;      /* search simulations */
    int64_t evaluated;        /* leaves sent to evaluators */
    int64_t cache_hits;       /* evaluator cache hits */
    int64_t policy_targets;   /* samples with policy weight > 0 */
    double score_sum;         /* scored games: the final points, summed over the games */
    int best_tile;            /* games with tiles: log2 of the largest tile reached, or -1 */
    double seconds;
    int parts;                /* part files closed (sp_opts.part_seconds) */
} sp_stats;

typedef struct sp_opts {
    int games;                /* games to play (>= 1) */
    int parallel_games;       /* games per worker at once */
    int threads;              /* worker threads (>= 1) */
    mcts_params search;       /* search settings: noise on, temperature as configured */
    bool pure;                /* the rollout bootstrap (pure MCTS): its no-resign games record
                               * no resignation checks, since rollout values say nothing of
                               * where a network's values should resign */
    double resign_threshold;  /* -1 = never resign */
    double resign_disabled_fraction;
    /* Playout cap randomisation (KataGo): a move gets the full search (search.simulations,
     * noise on: its pi is a policy target, weight 1) with probability full_fraction, else
     * a fast search of fast_simulations without noise whose pi gets policy weight 0 (the
     * position still gives its value target). full_fraction 1 = every move full. */
    double full_fraction;
    int fast_simulations;
    bool zero_weight_proven;  /* a root proven lost or drawn: policy weight 0 */
    bool adjudicate;          /* two-player games without a score: a search whose root is
                               * proven (solver, search.vcf_root) ends the game there, the
                               * proven outcome its z; the position is still a sample */
    bool record_fast;         /* write the fast searches' positions (weight 0); false: only
                               * the full searches' positions become samples (KataGo: the
                               * game's outcome still comes from every move) */
    int value_steps;          /* scored games: n > 0: a sample's value target is the points
                               * of its next n moves plus the search's root value n moves
                               * later (MuZero's n-step return: far less noise than the
                               * final score of a game of chance); 0 (or fewer than n moves
                               * left): the points to the end */
    int export_min_visits;    /* > 0, one-player scored games (seed 003's bootstrap): after
                               * every search, each decision node of the tree with at least
                               * this many visits becomes a sample (pi: its children's
                               * visits; z: the best points to come any playout through it
                               * reached; q: the node's mean points to come), instead of
                               * the played positions with their final points; sets
                               * search.track_best */
    const opening_book *book;     /* optional (borrowed): games start from its lines */
    bool swap2;               /* games start from swap2 openings (m,n,k; not with a book) */
    uint64_t seed;
    int64_t generation;       /* written to the file's meta */
    const char *model;        /* the model's name for the file's meta ("rollout", a path) */
    const char *game_config;  /* game section JSON for the file (may be NULL) */
    /* Optional, called from worker threads under the run's lock after every game. */
    void (*progress)(void *ctx, const sp_stats *so_far, int total_games);
    void *progress_ctx;
    /* Optional: a flag polled between moves; when it becomes nonzero the run stops,
     * removes the temporary file and returns 1 (nothing written but closed parts). */
    const volatile int *stop;
    /* Part files (the loop's self-play, so that a stopped or killed generation keeps its
     * finished games): part_seconds > 0 and part_path set: after a game ends, when the
     * file being written has been open that long and games remain, it is closed complete
     * as part_path(part_ctx, k, ...) for k = part_first, part_first + 1, ..., and the
     * next games go to a new file; out_path gets the last ones. Each file is complete on
     * its own (its games' samples and resignation records), and the parts then out_path,
     * read in that order, hold exactly what one file would. A stop (o->stop) closes the
     * games finished since the last part as one more part. 0: one file; never with
     * export_min_visits (the tree export writes a game's nodes before it ends). */
    double part_seconds;
    void (*part_path)(void *ctx, int part, char *out, size_t len);
    void *part_ctx;
    int part_first;
    int gameix_base;          /* added to every sample's game index (a resumed generation
                                 numbers its games after the ones its parts hold) */
} sp_opts;

/* Self-play options from a config: games, parallel games, threads (0 = the machine's
 * cores), search settings with noise on, resignation, seed. */
void sp_opts_from_config(sp_opts *o, const gz_config *c);

/* Self-play's search settings from a config: c->mcts without the VCF checks
 * (mcts.vcf_root, vcf_leaf, vcf_defend) unless selfplay.threat_checks; they serve the
 * model players; with selfplay.adjudicate_vcf > 0 the root's check (vcf_root) runs with
 * that budget all the same, so that a VCF ends the game (selfplay.adjudicate). No LCB move
 * choice (mcts.lcb_stdevs: a player's). Gumbel (selfplay.gumbel). Noise as the config
 * leaves it (sp_opts_from_config turns it on). */
void sp_search_from_config(mcts_params *mp, const gz_config *c);

/* Plays o->games games and writes every sample to out_path (through the .tmp file of
 * samples.h: out_path appears only when complete), or to the part files and out_path
 * (o->part_seconds). Every file gets the "games" attribute. Returns 0 (also when a stop
 * came after the last game), 1 when stopped through o->stop before it (out_path not
 * written; with parts, the finished games are in them),
 * or -1 with a message (evaluator or file failure; out_path not written, the parts
 * closed before stay). stats (may be NULL) receives the totals. */
int sp_run(const game *g, const sp_opts *o, sp_eval_factory make_eval, void *eval_ctx,
           const char *out_path, sp_stats *stats, char *err, size_t errlen);

/* The highest resignation threshold whose false-resignation rate over the records is at
 * most `target` with 95% confidence (its one-sided Wilson upper bound): among the
 * records with resign_at < t, the fraction that did not lose (a player that would have
 * resigned but drew or won). Returns -1 (never resign) when
 * there are fewer than min_records records, or no threshold above -1 meets the target;
 * the result is at most `cap` (a threshold of 0 would resign even games). Pure. */
double sp_resign_calibrate(const sp_resign_check *r, int n, double target, int min_records,
                           double cap);

/* The number of CPU cores online (>= 1). */
int sp_cores(void);

#endif
