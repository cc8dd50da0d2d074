#include "arena.h"

#include "elo.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

int arena_outcome_class(int nplayers, const float *z, int seat)
{
    bool best = true, worst = true;
    for (int i = 0; i < nplayers; i++) {
        if (i == seat)
            continue;
        if (z[i] >= z[seat])
            best = false;
        if (z[i] <= z[seat])
            worst = false;
    }
    if (nplayers == 1)
        return z[0] > 0 ? 1 : z[0] < 0 ? -1 : 0;
    return best ? 1 : worst ? -1 : 0;
}

void arena_seat_order(int nplayers, int index, int *order)
{
    static const int rot3[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                   {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    if (nplayers == 3) {
        for (int s = 0; s < 3; s++)
            order[s] = rot3[index % 6][s];
    } else {
        for (int s = 0; s < nplayers; s++)
            order[s] = (s + index) % nplayers;
    }
}

static int rotations(int nplayers) { return nplayers == 3 ? 6 : nplayers; }

static int random_legal(const game *g, const game_state *s, rng *r)
{
    uint8_t mask[GAME_MAX_ACTIONS];
    int n = game_legal(g, s, mask);
    assert(n > 0);
    uint32_t pick = rng_below(r, (uint32_t)n);
    for (int a = 0; a < g->actions; a++)
        if (mask[a] && pick-- == 0)
            return a;
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int arena_play_game(const game *g, player *const *seated, const int *book, int nbook,
                    int opening_moves, rng *opening_rng, rng *game_rng, arena_record *rec,
                    char *err, size_t errlen)
{
    int np = g->players;
    game_state *s = game_state_new(g, game_rng);
    game_state *before = malloc(g->state_size);
    /* chance events draw from their own stream, seeded from the game's, so players that
     * use game_rng (random) do not shift the spawns; deterministic games draw nothing */
    rng chance_rng;
    if (g->max_chance > 0)
        rng_seed(&chance_rng, rng_next(game_rng));
    if (!s || !before) {
        free(s);
        free(before);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < np; i++)
        player_reset(seated[i]);
    rec->nplayers = np;
    rec->nmoves = 0;
    rec->opening = 0;
    rec->best_tile = -1;
    for (int i = 0; i < GAME_MAX_PLAYERS; i++) {
        rec->score[i] = 0.0f;
        rec->think[i] = 0.0;
        rec->choices[i] = 0;
    }
    char msg[384];
    int rc = 0;
    while (!game_terminal(g, s)) {
        int seat = game_current_player(g, s);
        int a;
        if (rec->nmoves < nbook) {
            a = book[rec->nmoves];
            rec->opening++;
        } else if (rec->nmoves < nbook + opening_moves) {
            a = random_legal(g, s, opening_rng);
            rec->opening++;
        } else {
            double t0 = now_s();
            a = player_choose(seated[seat], s, game_rng, NULL, msg, sizeof msg);
            rec->think[seat] += now_s() - t0;
            rec->choices[seat]++;
            if (a < 0) {
                snprintf(err, errlen, "player \"%s\": %s", seated[seat]->name, msg);
                rc = -1;
                break;
            }
        }
        game_copy(g, before, s);
        if (game_play(g, s, a) < 0) {
            char mv[32];
            snprintf(err, errlen, "player \"%s\" chose an illegal move %s (action %d)",
                     seated[seat]->name, g->ops->format_move(g, a, mv, sizeof mv), a);
            rc = -1;
            break;
        }
        assert(rec->nmoves < g->max_game_length);
        rec->moves[rec->nmoves++] = a;
        for (int i = 0; i < np; i++)
            player_notify_move(seated[i], before, a);
        if (g->max_chance > 0)
            game_resolve_chance(g, s, &chance_rng);
    }
    if (rc == 0) {
        game_result(g, s, rec->z);
        if (game_scored(g))
            g->ops->score(g, s, rec->score);
        if (g->ops->best_tile)
            rec->best_tile = g->ops->best_tile(g, s);
    }
    free(before);
    free(s);
    return rc;
}

char *arena_record_json(const game *g, const arena_record *rec, player *const *players)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *names = cJSON_CreateArray(), *res = cJSON_CreateArray(), *mv = cJSON_CreateArray();
    if (!o || !names || !res || !mv) {
        cJSON_Delete(o);
        cJSON_Delete(names);
        cJSON_Delete(res);
        cJSON_Delete(mv);
        return NULL;
    }
    cJSON_AddItemToObject(o, "game", cJSON_CreateString(g->name));
    cJSON_AddItemToObject(o, "players", names);
    cJSON_AddItemToObject(o, "result", res);
    cJSON_AddItemToObject(o, "moves", mv);
    for (int s = 0; s < rec->nplayers; s++) {
        cJSON_AddItemToArray(names, cJSON_CreateString(players[rec->seat_player[s]]->name));
        cJSON_AddItemToArray(res, cJSON_CreateNumber((double)rec->z[s]));
    }
    if (game_scored(g)) {
        cJSON *sc = cJSON_AddArrayToObject(o, "score");
        for (int s = 0; s < rec->nplayers; s++)
            cJSON_AddItemToArray(sc, cJSON_CreateNumber((double)rec->score[s]));
    }
    if (rec->best_tile >= 0 && rec->best_tile < 53)
        cJSON_AddNumberToObject(o, "tile", (double)((uint64_t)1 << rec->best_tile));
    char buf[32];
    for (int i = 0; i < rec->nmoves; i++)
        cJSON_AddItemToArray(mv, cJSON_CreateString(g->ops->format_move(g, rec->moves[i], buf, sizeof buf)));
    cJSON_AddNumberToObject(o, "opening", rec->opening);
    /* Seeds go up to 2^53 - 1 in the config, so a double holds them exactly. */
    char seed[24]; /* a 64-bit seed does not fit a JSON double exactly: raw digits */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)rec->seed);
    cJSON_AddRawToObject(o, "seed", seed);
    cJSON_AddNumberToObject(o, "index", rec->index);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

double arena_score(const arena_tally *t, int nplayers)
{
    if (nplayers == 2)
        return t->wins + 0.5 * t->draws;
    return t->games ? t->outcome_sum / t->games : 0.0;
}

/* Appends line and a newline to fd as one record: all of it or, when a write fails (a
 * full disk may take part of it first), none of it (the file is cut back to where it
 * was), so the results file only ever holds whole games. 0, or -1 with errno set. */
static int append_line(int fd, const char *line)
{
    size_t n = strlen(line);
    char *buf = malloc(n + 1);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(buf, line, n);
    buf[n++] = '\n';
    off_t before = lseek(fd, 0, SEEK_END);
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : ENOSPC;
            if (before >= 0 && ftruncate(fd, before) != 0) {
                /* the cut failed too: the reason of the first failure still stands */
            }
            free(buf);
            errno = e;
            return -1;
        }
        done += (size_t)k;
    }
    free(buf);
    return 0;
}

int arena_run(const game *g, player *const *players, int nplayers, const arena_opts *o,
              arena_tally *tallies, char *err, size_t errlen)
{
    bool solo = g->players == 1;
    if (solo ? nplayers < 1 || nplayers > ARENA_MAX_SOLO : nplayers != g->players) {
        if (solo)
            snprintf(err, errlen, "a one-player game takes 1 to %d players; %d were named",
                     ARENA_MAX_SOLO, nplayers);
        else
            snprintf(err, errlen, "the game has %d players; %d were named", g->players, nplayers);
        return -1;
    }
    memset(tallies, 0, sizeof *tallies * (size_t)nplayers);
    int out = -1;
    if (o->results_path) {
        out = open(o->results_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (out < 0) {
            snprintf(err, errlen, "results file %s: %s", o->results_path, strerror(errno));
            return -1;
        }
    }
    int *moves = malloc(sizeof(int) * (size_t)g->max_game_length);
    if (!moves) {
        if (out >= 0)
            close(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, nrot = solo ? 1 : rotations(nplayers), stop_after = 0, done = 0, mine = o->games;
    int shards = o->shards > 1 ? o->shards : 1;
    assert(shards == 1 || (!o->sprt && o->shard >= 0 && o->shard < shards));
    if (shards > 1)
        mine = o->games / shards + (o->shard < o->games % shards);
    /* one-player: game i is played by each player in turn (k), from the same seeds */
    int per_game = solo ? nplayers : 1;
    for (int j = 0; j < o->games * per_game && rc == 0 && !stop_after; j++) {
        int i = j / per_game, k = j % per_game;
        if (i % shards != o->shard % shards)
            continue;
        arena_record rec = {.moves = moves, .seed = o->seed, .index = i};
        arena_seat_order(g->players, i, rec.seat_player);
        if (solo)
            rec.seat_player[0] = k;
        player *seated[GAME_MAX_PLAYERS];
        for (int s = 0; s < g->players; s++)
            seated[s] = players[rec.seat_player[s]];
        rng opening_rng, game_rng;
        rng_seed(&opening_rng, rng_derive(o->seed, 0x6f70656eULL * 1000003ULL + (uint64_t)(i / nrot)));
        rng_seed(&game_rng, rng_derive(o->seed, (uint64_t)i));
        int nbook = 0;
        const int *book = o->book ? openings_moves(o->book, (i / nrot) % openings_count(o->book),
                                                   &nbook) : NULL;
        rc = arena_play_game(g, seated, book, nbook, o->opening_moves, &opening_rng, &game_rng,
                             &rec, err, errlen);
        if (rc)
            break;
        for (int s = 0; s < g->players; s++) {
            arena_tally *t = &tallies[rec.seat_player[s]];
            t->score_sum += rec.score[s];
            t->score_sq += (double)rec.score[s] * rec.score[s];
        }
        float zbest = rec.z[0];
        int nbest = 0;
        for (int s = 1; s < g->players; s++)
            zbest = rec.z[s] > zbest ? rec.z[s] : zbest;
        for (int s = 0; s < g->players; s++)
            nbest += rec.z[s] == zbest;
        for (int s = 0; s < g->players; s++) {
            arena_tally *t = &tallies[rec.seat_player[s]];
            int cls = arena_outcome_class(g->players, rec.z, s);
            t->first_share += rec.z[s] == zbest ? 1.0 / nbest : 0.0;
            t->games++;
            t->seat_games[s]++;
            t->outcome_sum += rec.z[s];
            if (cls > 0) {
                t->wins++;
                t->seat_wins[s]++;
            } else if (cls < 0) {
                t->losses++;
                t->seat_losses[s]++;
            } else {
                t->draws++;
                t->seat_draws[s]++;
            }
            for (int s2 = 0; s2 < g->players && !solo; s2++) {
                int other = rec.seat_player[s2];
                if (s2 != s && rec.z[s] > rec.z[s2])
                    t->above[other]++;
                else if (s2 != s && rec.z[s] == rec.z[s2])
                    t->level[other]++;
            }
        }
        if (o->sprt && nplayers == 2 && i % 2 == 1 &&
            elo_sprt_decide(o->sprt, tallies[0].wins, tallies[0].draws, tallies[0].losses, NULL) != 0)
            stop_after = 1;
        if (out >= 0) {
            char *line = arena_record_json(g, &rec, players);
            if (!line) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            } else if (append_line(out, line) < 0) {
                snprintf(err, errlen, "results file %s: %s (the games before this one are kept)",
                         o->results_path, strerror(errno));
                rc = -1;
            }
            free(line);
        }
        if (o->on_game)
            o->on_game(o->on_game_ctx, &rec);
        if (k == per_game - 1) {
            done++;
            if (o->progress)
                o->progress(o->progress_ctx, done, mine, tallies, nplayers);
        }
    }
    free(moves);
    if (out >= 0 && close(out) != 0 && rc == 0) {
        snprintf(err, errlen, "results file %s: %s", o->results_path, strerror(errno));
        rc = -1;
    }
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void arena_solo_summarise(const double *scores, const int *tiles, int n, double think,
                          long choices, arena_solo_summary *out)
{
    memset(out, 0, sizeof *out);
    out->games = n;
    out->best_tile = -1;
    out->seconds_per_move = choices > 0 ? think / (double)choices : 0.0;
    if (n <= 0)
        return;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += scores[i];
    out->mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (scores[i] - out->mean) * (scores[i] - out->mean);
    out->sd = n > 1 ? sqrt(sq / (n - 1)) : 0.0;
    double half = n > 1 ? 1.96 * out->sd / sqrt((double)n) : 0.0;
    out->lo = out->mean - half;
    out->hi = out->mean + half;
    double *sorted = malloc(sizeof(double) * (size_t)n);
    if (sorted) {
        memcpy(sorted, scores, sizeof(double) * (size_t)n);
        qsort(sorted, (size_t)n, sizeof(double), cmp_double);
        out->median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        out->min = sorted[0];
        out->max = sorted[n - 1];
        free(sorted);
    }
    for (int i = 0; tiles && i < n; i++) {
        int t = tiles[i] > ARENA_MAX_TILE ? ARENA_MAX_TILE : tiles[i];
        if (t > out->best_tile)
            out->best_tile = t;
        for (int k = 0; k <= t; k++)
            out->reached[k] += 1.0 / n;
    }
}
