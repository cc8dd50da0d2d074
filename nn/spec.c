#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include "engine/errmsg.h"

const char *nn_policy_name(nn_policy_kind k)
{
    return k == NN_POLICY_DENSE ? "dense" : k == NN_POLICY_ACTION_VALUE ? "action_value" : "conv";
}
const char *nn_trunk_name(nn_trunk_kind k) { return k == NN_TRUNK_PLAIN ? "plain" : "residual"; }
const char *nn_pool_name(nn_pool_kind k) { return k == NN_POOL_MEAN_MAX ? "mean_max" : "mean"; }
const char *nn_value_name(nn_value_kind k)
{
    return k == NN_VALUE_ZEROSUM ? "zerosum"
           : k == NN_VALUE_SCORE ? "score"
           : k == NN_VALUE_WDL   ? "wdl"
                                 : "independent";
}

double nn_score_to_value(double x)
{
    double a = fabs(x);
    return (x < 0 ? -1.0 : 1.0) * (sqrt(a + 1.0) - 1.0) + NN_SCORE_EPS * x;
}

double nn_value_to_score(double y)
{
    const double e = NN_SCORE_EPS;
    double r = (sqrt(1.0 + 4.0 * e * (fabs(y) + 1.0 + e)) - 1.0) / (2.0 * e);
    return (y < 0 ? -1.0 : 1.0) * (r * r - 1.0);
}

void nn_value_wdl(const float *out, float *p)
{
    float m = out[0];
    for (int k = 1; k < NN_WDL_OUTPUTS; k++)
        m = out[k] > m ? out[k] : m;
    double e[NN_WDL_OUTPUTS], sum = 0;
    for (int k = 0; k < NN_WDL_OUTPUTS; k++)
        sum += e[k] = exp((double)out[k] - m);
    for (int k = 0; k < NN_WDL_OUTPUTS; k++)
        p[k] = (float)(e[k] / sum);
}

void nn_value_finish(const nn_spec *s, const float *out, float *v)
{
    if (s->value == NN_VALUE_WDL) {
        float p[NN_WDL_OUTPUTS];
        nn_value_wdl(out, p);
        v[0] = p[NN_WDL_WIN] - p[NN_WDL_LOSS]; /* the mover's */
        v[1] = -v[0];
        return;
    }
    if (v != out)
        memcpy(v, out, sizeof(float) * (size_t)s->players);
    if (s->value == NN_VALUE_SCORE)
        return; /* h(points): unbounded, no squashing */
    double mean = 0;
    for (int i = 0; i < s->players; i++) {
        v[i] = tanhf(v[i]);
        mean += v[i];
    }
    if (s->value != NN_VALUE_ZEROSUM)
        return;
    mean /= s->players;
    for (int i = 0; i < s->players; i++)
        v[i] = (float)(v[i] - mean);
}
const char *nn_lattice_name(game_lattice l) { return l == GAME_LATTICE_HEX ? "hex" : "square"; }

int nn_spec_validate(const nn_spec *s, char *err, size_t errlen)
{
    if (s->planes < 1 || s->planes > 256)
        return gz_fail(err, errlen, "spec: planes: expected 1..256, got %d", s->planes);
    if (s->rows < 1 || s->rows > GAME_MAX_SIDE || s->cols < 1 || s->cols > GAME_MAX_SIDE)
        return gz_fail(err, errlen, "spec: rows x cols: expected 1..%d each, got %d x %d", GAME_MAX_SIDE,
                    s->rows, s->cols);
    if (s->lattice != GAME_LATTICE_SQUARE && s->lattice != GAME_LATTICE_HEX)
        return gz_fail(err, errlen, "spec: lattice: expected square or hex");
    if (s->players < 1 || s->players > GAME_MAX_PLAYERS)
        return gz_fail(err, errlen, "spec: players: expected 1..%d, got %d", GAME_MAX_PLAYERS, s->players);
    if (s->actions < 1 || s->actions > GAME_MAX_ACTIONS)
        return gz_fail(err, errlen, "spec: actions: expected 1..%d, got %d", GAME_MAX_ACTIONS, s->actions);
    if (s->blocks < 0 || s->blocks > NN_MAX_BLOCKS)
        return gz_fail(err, errlen, "spec: blocks: expected 0..%d, got %d", NN_MAX_BLOCKS, s->blocks);
    if (s->channels < 1 || s->channels > 1024)
        return gz_fail(err, errlen, "spec: channels: expected 1..1024, got %d", s->channels);
    if (s->head_channels < 1 || s->head_channels > 1024)
        return gz_fail(err, errlen, "spec: head_channels: expected 1..1024, got %d", s->head_channels);
    if (s->value_hidden < 1 || s->value_hidden > 4096)
        return gz_fail(err, errlen, "spec: value_hidden: expected 1..4096, got %d", s->value_hidden);
    if (s->policy != NN_POLICY_CONV && s->policy != NN_POLICY_DENSE &&
        s->policy != NN_POLICY_ACTION_VALUE)
        return gz_fail(err, errlen, "spec: policy_head: expected conv, dense or action_value");
    if (s->policy == NN_POLICY_ACTION_VALUE && s->value != NN_VALUE_SCORE)
        return gz_fail(err, errlen, "spec: policy_head action_value needs the score value head (a "
                                    "game with a score)");
    if (s->trunk != NN_TRUNK_RESIDUAL && s->trunk != NN_TRUNK_PLAIN)
        return gz_fail(err, errlen, "spec: trunk: expected residual or plain");
    if (s->value != NN_VALUE_INDEPENDENT && s->value != NN_VALUE_SCORE &&
        (s->value != NN_VALUE_ZEROSUM || s->players < 2) &&
        (s->value != NN_VALUE_WDL || s->players != 2))
        return gz_fail(err, errlen, "spec: value_head: expected independent, score, zerosum with 2 or "
                                    "more players, or wdl with 2 players");
    if (s->value_pool != NN_POOL_MEAN && s->value_pool != NN_POOL_MEAN_MAX)
        return gz_fail(err, errlen, "spec: value_pool: expected mean or mean_max");
    if (s->aux_policy && (s->policy != NN_POLICY_CONV || s->players < 2))
        return gz_fail(err, errlen, "spec: aux_policy needs a conv policy head and 2 or more players");
    if (s->aux_owner && s->policy != NN_POLICY_CONV)
        return gz_fail(err, errlen, "spec: aux_owner needs point actions (a conv policy head)");
    if (s->policy == NN_POLICY_CONV && s->actions != s->rows * s->cols)
        return gz_fail(err, errlen,
                    "spec: policy_head conv needs one action per point (actions = rows*cols = %d), "
                    "got actions = %d: use policy_head dense",
                    s->rows * s->cols, s->actions);
    return 0;
}

int nn_spec_from_config(nn_spec *s, const cfg_net *net, const game *g, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->planes = g->planes;
    s->rows = g->rows;
    s->cols = g->cols;
    s->lattice = g->lattice;
    s->players = g->players;
    s->actions = g->actions;
    snprintf(s->rule, sizeof s->rule, "%s", g->rule);
    s->k = g->k;
    s->blocks = net->blocks;
    s->channels = net->channels;
    s->head_channels = net->head_channels;
    s->value_hidden = net->value_hidden;
    s->policy = !strcmp(net->policy_head, "dense")          ? NN_POLICY_DENSE
                : !strcmp(net->policy_head, "action_value") ? NN_POLICY_ACTION_VALUE
                                                            : NN_POLICY_CONV;
    s->trunk = strcmp(net->trunk, "plain") == 0 ? NN_TRUNK_PLAIN : NN_TRUNK_RESIDUAL;
    s->value_pool = strcmp(net->value_pool, "mean_max") == 0 ? NN_POOL_MEAN_MAX : NN_POOL_MEAN;
    /* one player has nothing to sum to zero against: its value is its own */
    s->value = strcmp(net->value_head, "zerosum") == 0 && g->players >= 2 ? NN_VALUE_ZEROSUM
                                                                           : NN_VALUE_INDEPENDENT;
    /* win/draw/loss of the mover: the other seat's is the same three read backwards, which
     * holds for two players only; a score has no three outcomes */
    if (!strcmp(net->value_head, "wdl")) {
        if (game_scored(g) || g->players != 2)
            return gz_fail(err, errlen, "key net.value_head: \"wdl\" (win, draw and loss "
                                        "probabilities) needs a two-player game with outcomes; game "
                                        "%s has %d player%s%s: use zerosum or independent%s",
                           g->name, g->players, g->players == 1 ? "" : "s",
                           game_scored(g) ? " and a score" : "",
                           game_scored(g) ? " (a scored game always gets score)" : "");
        s->value = NN_VALUE_WDL;
    }
    if (game_scored(g))
        s->value = NN_VALUE_SCORE; /* points to come, not outcomes */
    else if (!strcmp(net->value_head, "score"))
        return gz_fail(err, errlen, "key net.value_head: \"score\" needs a game with a score (2048); "
                                    "game %s has outcomes: use zerosum, wdl (two players) or "
                                    "independent", g->name);
    if (s->policy == NN_POLICY_ACTION_VALUE && !game_scored(g))
        return gz_fail(err, errlen, "key net.policy_head: \"action_value\" (each move's value in "
                                    "points, seed 003) needs a game with a score (2048); game %s has "
                                    "outcomes: use conv or dense",
                       g->name);
    s->aux_policy = net->aux_policy;
    if (s->aux_policy && (g->players < 2 || s->policy != NN_POLICY_CONV))
        return gz_fail(err, errlen, "key net.aux_policy: the opponent-reply head needs a game of 2 or "
                                    "more players and net.policy_head conv; game %s has %d player%s "
                                    "and a %s head",
                    g->name, g->players, g->players == 1 ? "" : "s",
                    net->policy_head);
    s->aux_owner = net->aux_owner;
    if (s->aux_owner && (!g->ops->cells || g->actions != g->rows * g->cols ||
                         s->policy != NN_POLICY_CONV))
        return gz_fail(err, errlen, "key net.aux_owner: the ownership head needs a game whose "
                                    "actions are the board's points (with stones to own) and "
                                    "net.policy_head conv; game %s has none",
                    g->name);
    if (s->policy == NN_POLICY_CONV && g->actions != g->rows * g->cols)
        return gz_fail(err, errlen,
                    "key net.policy_head: \"conv\" needs point actions, but game %s has %d actions on "
                    "a %dx%d board: use \"dense\"",
                    g->name, g->actions, g->rows, g->cols);
    return nn_spec_validate(s, err, errlen);
}

char *nn_spec_to_json(const nn_spec *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "planes", s->planes);
    cJSON_AddNumberToObject(o, "rows", s->rows);
    cJSON_AddNumberToObject(o, "cols", s->cols);
    cJSON_AddStringToObject(o, "lattice", nn_lattice_name(s->lattice));
    cJSON_AddNumberToObject(o, "players", s->players);
    cJSON_AddNumberToObject(o, "actions", s->actions);
    cJSON_AddNumberToObject(o, "blocks", s->blocks);
    cJSON_AddNumberToObject(o, "channels", s->channels);
    cJSON_AddNumberToObject(o, "head_channels", s->head_channels);
    cJSON_AddNumberToObject(o, "value_hidden", s->value_hidden);
    cJSON_AddStringToObject(o, "policy_head", nn_policy_name(s->policy));
    cJSON_AddStringToObject(o, "trunk", nn_trunk_name(s->trunk));
    cJSON_AddStringToObject(o, "value_head", nn_value_name(s->value));
    if (s->value_pool != NN_POOL_MEAN) /* absent: mean, as in every file before the key */
        cJSON_AddStringToObject(o, "value_pool", nn_pool_name(s->value_pool));
    if (s->aux_policy) /* absent: no such head, as in every file before the key */
        cJSON_AddBoolToObject(o, "aux_policy", 1);
    if (s->aux_owner) /* absent: no such head, as in every file before the key */
        cJSON_AddBoolToObject(o, "aux_owner", 1);
    if (s->rule[0])
        cJSON_AddStringToObject(o, "rule", s->rule);
    if (s->k > 0) /* absent: not an m,n,k model, or one from before the key */
        cJSON_AddNumberToObject(o, "k", s->k);
    char *txt = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return txt;
}

static int get_int(const cJSON *o, const char *key, int *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble)
        return gz_fail(err, errlen, "spec JSON: key %s: expected an integer", key);
    *out = (int)v->valuedouble;
    return 0;
}

static int get_choice(const cJSON *o, const char *key, const char *a, const char *b, int *out,
                      char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        return gz_fail(err, errlen, "spec JSON: key %s: expected \"%s\" or \"%s\"", key, a, b);
    if (!strcmp(v->valuestring, a))
        *out = 0;
    else if (!strcmp(v->valuestring, b))
        *out = 1;
    else
        return gz_fail(err, errlen, "spec JSON: key %s: expected \"%s\" or \"%s\", got \"%s\"", key, a,
                    b, v->valuestring);
    return 0;
}

int nn_spec_from_json(nn_spec *s, const char *json, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    cJSON *o = cJSON_Parse(json);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return gz_fail(err, errlen, "spec JSON: not a JSON object");
    }
    int lat = 0, pol = 0, trunk = 0, value = 0, vpool = 0, rc = -1;
    if (get_int(o, "planes", &s->planes, err, errlen) || get_int(o, "rows", &s->rows, err, errlen) ||
        get_int(o, "cols", &s->cols, err, errlen) ||
        get_choice(o, "lattice", "square", "hex", &lat, err, errlen) ||
        get_int(o, "players", &s->players, err, errlen) ||
        get_int(o, "actions", &s->actions, err, errlen) ||
        get_int(o, "blocks", &s->blocks, err, errlen) ||
        get_int(o, "channels", &s->channels, err, errlen) ||
        get_int(o, "head_channels", &s->head_channels, err, errlen) ||
        get_int(o, "value_hidden", &s->value_hidden, err, errlen))
        goto out;
    /* "action_value" came with seed 003's head; older files say conv or dense */
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(o, "policy_head");
    if (cJSON_IsString(ph) && !strcmp(ph->valuestring, "action_value"))
        pol = NN_POLICY_ACTION_VALUE;
    else if (get_choice(o, "policy_head", "conv", "dense", &pol, err, errlen))
        goto out;
    /* "trunk" came after version 1's first files: absent means residual. */
    if (cJSON_GetObjectItemCaseSensitive(o, "trunk") &&
        get_choice(o, "trunk", "residual", "plain", &trunk, err, errlen))
        goto out;
    /* "value_head" came with the zero-sum head: absent means independent tanh outputs;
     * "score" came with 2048, "wdl" after it */
    const cJSON *vh = cJSON_GetObjectItemCaseSensitive(o, "value_head");
    if (cJSON_IsString(vh) && !strcmp(vh->valuestring, "score"))
        value = NN_VALUE_SCORE;
    else if (cJSON_IsString(vh) && !strcmp(vh->valuestring, "wdl"))
        value = NN_VALUE_WDL;
    else if (vh && get_choice(o, "value_head", "independent", "zerosum", &value, err, errlen))
        goto out;
    /* "value_pool" came with global max pooling: absent means mean */
    if (cJSON_GetObjectItemCaseSensitive(o, "value_pool") &&
        get_choice(o, "value_pool", "mean", "mean_max", &vpool, err, errlen))
        goto out;
    /* "aux_policy" came with the opponent-reply head: absent means none */
    const cJSON *aux = cJSON_GetObjectItemCaseSensitive(o, "aux_policy");
    if (aux && !cJSON_IsBool(aux)) {
        gz_fail(err, errlen, "spec JSON: key aux_policy: expected true or false");
        goto out;
    }
    s->aux_policy = cJSON_IsTrue(aux);
    /* "aux_owner" came with the ownership head: absent means none */
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(o, "aux_owner");
    if (own && !cJSON_IsBool(own)) {
        gz_fail(err, errlen, "spec JSON: key aux_owner: expected true or false");
        goto out;
    }
    s->aux_owner = cJSON_IsTrue(own);
    /* "rule" came with the renju and caro rules: absent means made before (freestyle or
     * exact five, or a game without rules). */
    const cJSON *rule = cJSON_GetObjectItemCaseSensitive(o, "rule");
    if (rule) {
        if (!cJSON_IsString(rule) || !rule->valuestring[0] ||
            strlen(rule->valuestring) >= sizeof s->rule) {
            gz_fail(err, errlen, "spec JSON: key rule: expected a rule name (e.g. \"renju\")");
            goto out;
        }
        snprintf(s->rule, sizeof s->rule, "%s", rule->valuestring);
    }
    /* "k" came after the rules: absent means another game, or a model made before */
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "k");
    if (k) {
        double kv = cJSON_GetNumberValue(k);
        if (!cJSON_IsNumber(k) || kv != floor(kv) || kv < 3 || kv > 64) {
            gz_fail(err, errlen, "spec JSON: key k: expected the win length, an integer in [3, 64]");
            goto out;
        }
        s->k = (int)kv;
    }
    s->value = value == NN_VALUE_SCORE ? NN_VALUE_SCORE
               : value == NN_VALUE_WDL ? NN_VALUE_WDL
               : value                 ? NN_VALUE_ZEROSUM
                                       : NN_VALUE_INDEPENDENT;
    s->lattice = lat ? GAME_LATTICE_HEX : GAME_LATTICE_SQUARE;
    s->policy = pol == NN_POLICY_ACTION_VALUE ? NN_POLICY_ACTION_VALUE
                : pol                         ? NN_POLICY_DENSE
                                              : NN_POLICY_CONV;
    s->trunk = trunk ? NN_TRUNK_PLAIN : NN_TRUNK_RESIDUAL;
    s->value_pool = vpool ? NN_POOL_MEAN_MAX : NN_POOL_MEAN;
    rc = nn_spec_validate(s, err, errlen);
out:
    cJSON_Delete(o);
    return rc;
}

/* The model's rule against the game's: 0, or -1 with a message. */
static int check_rule(const nn_spec *m, const game *g, char *err, size_t errlen)
{
    if (strcmp(m->rule, g->rule)) {
        bool old_rules = !g->rule[0] || !strcmp(g->rule, "freestyle") || !strcmp(g->rule, "exact");
        if (m->rule[0])
            return gz_fail(err, errlen, "the model was trained under rule %s, but the game is played "
                           "under %s%s%s (a model is refused under another rule: train one for "
                           "it)", m->rule, g->rule[0] ? "rule " : "no rule", g->rule,
                           g->rule[0] ? " (game.rule)" : "");
        if (!old_rules)
            return gz_fail(err, errlen, "the model records no rule (made before rules were "
                           "recorded: freestyle or exact five), but the game is played under rule "
                           "%s (game.rule): train a model for it", g->rule);
    }
    return 0;
}

int nn_spec_check_game(const nn_spec *m, const game *g, char *err, size_t errlen)
{
    /* a game with rules: the rule first (a renju model has one plane more than a
     * freestyle one, and the rule is what the user must hear about); a game without
     * rules (sanling, tic-tac-toe): the shape first, since a model with a rule is then
     * another game's; the value head before the shape (a 2048 model is refused for
     * its score head, the first thing that differs in kind) */
    if (g->rule[0] && check_rule(m, g, err, errlen) < 0)
        return -1;
    if (m->k > 0 && g->k > 0 && m->k != g->k)
        return gz_fail(err, errlen, "the model was trained for %d in a row, but the game is won with "
                       "%d (game.k): train a model for it", m->k, g->k);
    if (m->value == NN_VALUE_SCORE && !game_scored(g))
        return gz_fail(err, errlen, "spec value_head = score (a model of a game with a score, e.g. "
                                    "2048), but game %s has outcomes", g->name);
    if (m->value != NN_VALUE_SCORE && game_scored(g))
        return gz_fail(err, errlen, "spec value_head = %s (outcomes), but game %s keeps a score",
                       nn_value_name(m->value), g->name);
    if (m->planes != g->planes)
        return gz_fail(err, errlen, "spec planes = %d, but game %s encodes %d planes", m->planes, g->name,
                    g->planes);
    if (m->lattice != g->lattice)
        return gz_fail(err, errlen, "spec lattice = %s, but game %s is on the %s lattice",
                    nn_lattice_name(m->lattice), g->name, nn_lattice_name(g->lattice));
    if (m->players != g->players)
        return gz_fail(err, errlen, "spec players = %d, but game %s has %d players", m->players, g->name,
                    g->players);
    if (nn_policy_is_fc(m)) {
        if (m->rows != g->rows || m->cols != g->cols || m->actions != g->actions)
            return gz_fail(err, errlen,
                        "spec board %dx%d with %d actions (%s policy head: fixed size), but game %s "
                        "is %dx%d with %d actions",
                        m->rows, m->cols, m->actions, nn_policy_name(m->policy), g->name, g->rows,
                        g->cols, g->actions);
    } else if (g->actions != g->rows * g->cols) {
        return gz_fail(err, errlen, "spec policy head conv needs point actions; game %s has %d actions",
                    g->name, g->actions);
    }
    if (!g->rule[0] && check_rule(m, g, err, errlen) < 0)
        return -1;
    return 0;
}

int nn_spec_game_note(const nn_spec *m, const game *g, char *note, size_t len)
{
    if (nn_policy_is_fc(m) || (m->rows == g->rows && m->cols == g->cols))
        return 0;
    snprintf(note, len, "the model was trained on %dx%d; the game is %dx%d (its convolutions run "
             "on any board size, but it has not learnt this one)", m->rows, m->cols, g->rows, g->cols);
    return 1;
}

double nn_spec_flops(const nn_spec *s, int rows, int cols)
{
    double hw = (double)rows * cols;
    double taps = s->lattice == GAME_LATTICE_HEX ? 7.0 : 9.0;
    double C = s->channels, H = s->head_channels;
    double mac = hw * taps * s->planes * C;             /* stem */
    mac += hw * taps * C * C * 2.0 * s->blocks;         /* trunk */
    mac += hw * C * H * 2.0;                            /* two head 1x1 convs */
    if (s->policy == NN_POLICY_CONV)
        mac += hw * H;
    else
        mac += hw * H * s->actions;
    mac += H * s->value_hidden + (double)s->value_hidden * nn_value_outputs(s);
    return 2.0 * mac;
}
