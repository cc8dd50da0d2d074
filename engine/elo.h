/* elo.h — Elo ratings by maximum likelihood (Bradley–Terry) over arena games.
 *
 * Model: P(i scores against j) = 1 / (1 + 10^((r_j - r_i) / 400)); a draw counts as
 * half a win for each side. A three-player game counts as its three pairwise results:
 * between any two of its players, the better outcome (final rank) wins and equal
 * outcomes draw (two seats held by the same name, e.g. "random" twice, give no pair
 * between themselves). The ratings maximise the log-likelihood of all pairwise results plus
 * two documented priors:
 *   - `prior_draws` virtual draws (default 1) between every two players that met, so a
 *     player with only wins or only losses gets a large but finite rating (BayesElo's
 *     idea; with thousands of games the effect is negligible);
 *   - a very wide Gaussian N(0, prior_sigma^2) (default 2000 Elo) on every rating, so
 *     that a player with no chain of games to the anchor still has a finite (and very
 *     uncertain) rating instead of a singular system.
 * Solved by Newton's method; the 95% interval of each rating is ±1.96 standard errors
 * from the inverse of the negative Hessian (the observed Fisher information) with the
 * anchor held fixed. Anchor: the player named "random" when present (rating 0 exactly,
 * interval 0), otherwise the first player seen; elo_opts.anchor overrides.
 *
 * This module knows results files and names, not players, games or networks.
 */
#ifndef GZ_ELO_H
#define GZ_ELO_H

#include <stddef.h>

typedef struct elo_table elo_table;

typedef struct elo_opts {
    double prior_draws;  /* virtual draws between every two players that met */
    double prior_sigma;  /* Elo standard deviation of the wide prior on every rating */
    const char *anchor;  /* name held at 0; NULL = "random" if present, else the first */
} elo_opts;

/* The defaults described at the top. */
elo_opts elo_default_opts(void);

typedef struct elo_rating {
    const char *name;  /* borrowed from the table: valid until elo_table_free */
    double elo;        /* rating, anchor = 0 */
    double se;         /* standard error (Elo) */
    double lo, hi;     /* 95% interval: elo -/+ 1.96 se */
    int games;         /* games played (a 3-player game counts once) */
    double score;      /* pairwise score fraction in [0, 1] (without the prior) */
    int anchor;        /* 1 for the anchor */
} elo_rating;

/* An empty table. Free with elo_table_free. NULL when out of memory. */
elo_table *elo_table_new(void);
void elo_table_free(elo_table *t); /* accepts NULL */

/* Adds one game: names[n] in seat order and their outcomes z[n] (n = 2 or 3; higher is
 * better). Returns 0, or -1 with a message (bad n, out of memory). */
int elo_add_game(elo_table *t, int n, const char *const *names, const float *z, char *err,
                 size_t errlen);

/* Adds every game of an arena results file (one JSON object per line with "players"
 * and "result"; blank lines skipped). Returns the number of games added, or -1 with a
 * message naming the file and line. */
int elo_load_file(elo_table *t, const char *path, char *err, size_t errlen);

int elo_players(const elo_table *t);
int elo_games(const elo_table *t);

/* Computes every player's rating into out[elo_players(t)] in the order players were
 * first seen. opts NULL = defaults. Returns 0, or -1 with a message (no games, unknown
 * anchor, out of memory, no convergence). */
int elo_compute(const elo_table *t, const elo_opts *opts, elo_rating *out, char *err,
                size_t errlen);

/* Sequential probability ratio test of a two-player match (Fishtest's generalised SPRT
 * on the trinomial win/draw/loss results, normal approximation): H0 = the first
 * player's Elo advantage is elo0, H1 = it is elo1 (elo1 > elo0). The log-likelihood
 * ratio of results w-d-l (of the first player) is
 *   LLR = N (s1 - s0) (2 m - s0 - s1) / (2 v),
 * s_e = 1 / (1 + 10^(-e/400)) the expected score at Elo e, m the mean score and v its
 * variance per game. The test accepts H1 when LLR >= log((1 - beta) / alpha) and H0
 * when LLR <= log(beta / (1 - alpha)), so a true elo0 is taken for elo1 with
 * probability about alpha and a true elo1 for elo0 about beta. */
typedef struct elo_sprt {
    double elo0, elo1;   /* elo0 < elo1 */
    double alpha, beta;  /* error rates, each in (0, 0.5) */
} elo_sprt;

/* The LLR after w-d-l (0 while the results cannot estimate a variance yet). */
double elo_sprt_llr(const elo_sprt *s, int wins, int draws, int losses);
/* +1: H1 accepted; -1: H0 accepted; 0: continue. *llr (may be NULL) gets the LLR. */
int elo_sprt_decide(const elo_sprt *s, int wins, int draws, int losses, double *llr);
/* Parses "ELO0,ELO1" (elo0 < elo1). Returns 0, or -1 with a message. */
int elo_sprt_parse(elo_sprt *s, const char *text, char *err, size_t errlen);

#endif
