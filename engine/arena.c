#include "arena.h"

#include "elo.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int arena_play_game(const game *g, player *const *seated, const int *book, int nbook,
                    int opening_moves, rng *opening_rng, rng *game_rng, arena_record *rec,
                    char *err, size_t errlen)
{
    int np = g->players;
    game_state *s = game_state_new(g, game_rng);
    game_state *before = malloc(g->state_size);
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
            a = player_choose(seated[seat], s, game_rng, NULL, msg, sizeof msg);
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
    }
    if (rc == 0)
        game_result(g, s, rec->z);
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
    char buf[32];
    for (int i = 0; i < rec->nmoves; i++)
        cJSON_AddItemToArray(mv, cJSON_CreateString(g->ops->format_move(g, rec->moves[i], buf, sizeof buf)));
    cJSON_AddNumberToObject(o, "opening", rec->opening);
    /* Seeds go up to 2^53 in the config, so a double holds them exactly. */
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

int arena_run(const game *g, player *const *players, int nplayers, const arena_opts *o,
              arena_tally *tallies, char *err, size_t errlen)
{
    if (nplayers != g->players) {
        snprintf(err, errlen, "the game has %d players; %d were named", g->players, nplayers);
        return -1;
    }
    memset(tallies, 0, sizeof *tallies * (size_t)nplayers);
    FILE *out = NULL;
    if (o->results_path) {
        out = fopen(o->results_path, "a");
        if (!out) {
            snprintf(err, errlen, "results file %s: %s", o->results_path, strerror(errno));
            return -1;
        }
    }
    int *moves = malloc(sizeof(int) * (size_t)g->max_game_length);
    if (!moves) {
        if (out)
            fclose(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, nrot = rotations(nplayers), stop_after = 0, done = 0, mine = o->games;
    int shards = o->shards > 1 ? o->shards : 1;
    assert(shards == 1 || (!o->sprt && o->shard >= 0 && o->shard < shards));
    if (shards > 1)
        mine = o->games / shards + (o->shard < o->games % shards);
    for (int i = 0; i < o->games && rc == 0 && !stop_after; i++) {
        if (i % shards != o->shard % shards)
            continue;
        arena_record rec = {.moves = moves, .seed = o->seed, .index = i};
        arena_seat_order(nplayers, i, rec.seat_player);
        player *seated[GAME_MAX_PLAYERS];
        for (int s = 0; s < nplayers; s++)
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
        for (int s = 0; s < nplayers; s++) {
            arena_tally *t = &tallies[rec.seat_player[s]];
            int cls = arena_outcome_class(nplayers, rec.z, s);
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
        }
        if (o->sprt && nplayers == 2 && i % 2 == 1 &&
            elo_sprt_decide(o->sprt, tallies[0].wins, tallies[0].draws, tallies[0].losses, NULL) != 0)
            stop_after = 1;
        if (out) {
            char *line = arena_record_json(g, &rec, players);
            if (!line || fprintf(out, "%s\n", line) < 0 || fflush(out) != 0) {
                snprintf(err, errlen, "results file %s: %s", o->results_path,
                         line ? strerror(errno) : "out of memory");
                rc = -1;
            }
            free(line);
        }
        done++;
        if (o->progress)
            o->progress(o->progress_ctx, done, mine, tallies, nplayers);
    }
    free(moves);
    if (out && fclose(out) != 0 && rc == 0) {
        snprintf(err, errlen, "results file %s: %s", o->results_path, strerror(errno));
        rc = -1;
    }
    return rc;
}
