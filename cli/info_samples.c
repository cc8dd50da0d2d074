/* gridzero info on a sample file (a row of cmd_info.c's table). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "selfplay/samples.h"

int info_samples(const char *path)
{
    char err[512];
    sp_file *f = sp_file_read(path, NULL, err, sizeof err);
    if (!f) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    int64_t games = 0, last = -1, maxply = 0;
    /* Outcome split from each game's first sample (ply 0: seat 1 to move, so its z in
     * mover-first order is in seat order): a seat wins when its z is strictly best. */
    int64_t wins[GAME_MAX_PLAYERS] = {0}, draws = 0, unsplit = 0;
    double zsum = 0, ent = 0, qerr = 0;
    /* owner targets: samples with a known map, and their points by code (0 nobody, 1 the
     * mover's, 2+ another player's) */
    int64_t owned = 0, pts[3] = {0};
    size_t hw = (size_t)f->rows * f->cols;
    for (int64_t i = 0; i < f->n; i++) {
        const int8_t *ow = f->owner ? f->owner + (size_t)i * hw : NULL;
        if (ow && ow[0] >= 0) { /* a map is all -1 or has none */
            owned++;
            for (size_t p = 0; p < hw; p++)
                pts[ow[p] > 2 ? 2 : ow[p]]++;
        }
        if (f->gameix[i] != last) {
            games++;
            last = f->gameix[i];
            const float *z = f->z + i * f->players;
            int best = 0, nbest = 1;
            for (int k = 1; k < f->players; k++) {
                if (z[k] > z[best])
                    best = k, nbest = 1;
                else if (z[k] == z[best])
                    nbest++;
            }
            if (f->ply[i] != 0)
                unsplit++;
            else if (nbest == 1 && f->players > 1)
                wins[best]++;
            else
                draws++;
        }
        maxply = f->ply[i] > maxply ? f->ply[i] : maxply;
        zsum += f->z[i * f->players];
        qerr += fabs((double)f->q[i * f->players] - f->z[i * f->players]);
        for (int a = 0; a < f->actions; a++) {
            double p = f->pi[i * f->actions + a];
            if (p > 0)
                ent -= p * log(p);
        }
    }
    printf("%s: gridzero samples (format %s, version %d)\n", path, SP_FORMAT, f->version);
    printf("  game        %s %s\n", f->game, f->game_config);
    printf("  board       %dx%d %s lattice, %d planes, %d actions, %d players\n", f->rows, f->cols,
           f->lattice == GAME_LATTICE_HEX ? "hex" : "square", f->planes, f->actions, f->players);
    printf("  generation  %lld\n  model       %s\n", (long long)f->meta.generation,
           f->meta.model[0] ? f->meta.model : "(none)");
    printf("  samples     %lld from %lld games (mean length %.1f moves, longest %lld)\n",
           (long long)f->n, (long long)games, games ? (double)f->n / (double)games : 0.0,
           (long long)maxply + (f->n > 0));
    const game_ops *ops = game_find(f->game);
    bool scored = ops && ops->score;
    if (games && !scored) {
        printf("  outcomes   ");
        for (int k = 0; k < f->players && f->players > 1; k++)
            printf(" seat %d won %lld,", k + 1, (long long)wins[k]);
        printf(" %s %lld", f->players > 1 ? "no single winner" : "finished", (long long)draws);
        if (unsplit)
            printf(", %lld without a first move in the file", (long long)unsplit);
        printf("\n");
    }
    if (f->n && scored)
        printf("  mean z      %.1f points to come (a scored game: z is points, not outcomes); mean "
               "pi entropy %.3f nats\n", zsum / f->n, ent / f->n);
    else if (f->n)
        printf("  mean z      %+.3f for the player to move; mean pi entropy %.3f nats\n", zsum / f->n,
               ent / f->n);
    if (f->n && f->version >= 3)
        printf("  mean |q - z| %.3f (the search's root value against the outcome, player to move)\n",
               qerr / f->n);
    if (!f->owner) {
        printf("  owner       none (%s)\n", f->version < 4 ? "a file before version 4"
                                                           : "the game's actions are not its points");
    } else if (f->n) {
        double all = (double)(pts[0] + pts[1] + pts[2]);
        printf("  owner       final owner of each point for %lld of %lld samples (%.1f%%; the rest "
               "unknown: resigned games)", (long long)owned, (long long)f->n,
               100.0 * (double)owned / (double)f->n);
        if (owned)
            printf("\n              their points: %.1f%% the mover's, %.1f%% %s, %.1f%% nobody's",
                   100.0 * (double)pts[1] / all, 100.0 * (double)pts[2] / all,
                   f->players > 2 ? "the others'" : "the opponent's", 100.0 * (double)pts[0] / all);
        printf("\n");
    }
    if (scored && !f->qa) {
        printf("  qa          none (%s)\n", f->version < 5 ? "a file before version 5"
                                                           : "the game keeps no score");
    } else if (f->qa && f->n) {
        /* action-value targets: samples with at least one, and how many moves have one */
        int64_t with = 0, moves = 0;
        double sum = 0;
        for (int64_t i = 0; i < f->n; i++) {
            int k = 0;
            for (int a = 0; a < f->actions; a++) {
                float v = f->qa[(size_t)i * f->actions + a];
                if (!isnan(v))
                    k++, sum += v;
            }
            with += k > 0;
            moves += k;
        }
        printf("  qa          for %lld of %lld samples (%.1f%%), %.2f moves each, mean %.1f points "
               "(a move's points plus the points to come after it: the action-value head's "
               "target)\n", (long long)with, (long long)f->n, 100.0 * (double)with / (double)f->n,
               with ? (double)moves / (double)with : 0.0, moves ? sum / (double)moves : 0.0);
    }
    sp_file_free(f);
    return EXIT_OK;
}
