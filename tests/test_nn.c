/* The network's spec, parameter layout, kernel masks and HDF5 checkpoints. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/game.h"
#include "nn/infer.h"
#include <hdf5.h>

#include "enospc_util.h"
#include "nn/checkpoint.h"
#include "nn/params.h"
#include "nn/spec.h"

static nn_spec spec_make(game_lattice lat, int blocks, nn_policy_kind pol)
{
    nn_spec s = {
        .planes = 5, .rows = 7, .cols = 7, .lattice = lat, .players = 3, .actions = 49,
        .blocks = blocks, .channels = 8, .head_channels = 4, .value_hidden = 6,
        .policy = pol, .trunk = NN_TRUNK_RESIDUAL,
    };
    return s;
}

START_TEST(spec_from_config_and_json_round_trip)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    char err[256];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_msg(g != NULL, "%s", err);
    nn_spec s;
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.planes, g->planes);
    ck_assert_int_eq(s.rows, 15);
    ck_assert_int_eq(s.actions, 225);
    ck_assert_int_eq(s.blocks, 6);
    ck_assert_int_eq(s.channels, 64);
    ck_assert_int_eq(s.players, 2);
    char *j = nn_spec_to_json(&s);
    nn_spec t;
    ck_assert_msg(nn_spec_from_json(&t, j, err, sizeof err) == 0, "%s", err);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&s, g, err, sizeof err), 0);
    s.players = 3;
    ck_assert_int_eq(nn_spec_check_game(&s, g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "players") != NULL, "%s", err);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\": 2}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rows") != NULL, "%s", err);
    game_free(g);
}
END_TEST

START_TEST(spec_rule_checked)
{
    /* The rule is part of the spec: written, read back, and a model made under one rule
     * is refused under another (with both named); a spec without one (older files) is
     * taken for freestyle or exact only. */
    gz_config c;
    cfg_defaults(&c, "mnk");
    char err[512];
    game *free_g = game_new(&c.game, err, sizeof err);
    cfg_game_set_rule(&c.game, CFG_RULE_EXACT);
    game *exact_g = game_new(&c.game, err, sizeof err);
    cfg_game_set_rule(&c.game, CFG_RULE_RENJU);
    game *renju_g = game_new(&c.game, err, sizeof err);
    ck_assert(free_g && exact_g && renju_g);
    nn_spec s, t;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, renju_g, err, sizeof err), 0);
    ck_assert_str_eq(s.rule, "renju");
    ck_assert_int_eq(s.planes, 6);
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"rule\":\"renju\""));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_str_eq(t.rule, "renju");
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&s, renju_g, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_check_game(&s, free_g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "trained under rule renju") && strstr(err, "rule freestyle"), "%s", err);
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, free_g, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_check_game(&s, exact_g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "freestyle") && strstr(err, "exact"), "%s", err);
    ck_assert_int_eq(nn_spec_check_game(&s, renju_g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rule renju"), "%s", err);
    /* no rule recorded: freestyle and exact take it, renju does not */
    s.rule[0] = 0;
    j = nn_spec_to_json(&s);
    ck_assert_ptr_null(strstr(j, "rule"));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_str_eq(t.rule, "");
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&t, free_g, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_check_game(&t, exact_g, err, sizeof err), 0);
    t.planes = 6;
    ck_assert_int_eq(nn_spec_check_game(&t, renju_g, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "records no rule"), "%s", err);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\":5,\"rows\":9,\"cols\":9,\"lattice\":\"square\","
                                           "\"players\":2,\"actions\":81,\"blocks\":1,\"channels\":8,"
                                           "\"head_channels\":4,\"value_hidden\":8,\"policy_head\":"
                                           "\"conv\",\"rule\":7}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "rule"), "%s", err);
    game_free(free_g);
    game_free(exact_g);
    game_free(renju_g);
}
END_TEST

/* The win length is part of the identity of an m,n,k model: a five-in-a-row model is
 * refused for tic-tac-toe (k = 3), with both named; a spec from before k was recorded
 * (no "k") is taken for any; a model on another board size (conv policy: it runs) is
 * accepted, with a note that says so. */
START_TEST(spec_k_checked)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.game.rows = c.game.cols = 9;
    char err[512];
    game *g9 = game_new(&c.game, err, sizeof err);
    c.game.rows = c.game.cols = 3;
    c.game.k = 3;
    game *ttt = game_new(&c.game, err, sizeof err);
    c.game.rows = c.game.cols = 15;
    c.game.k = 5;
    game *g15 = game_new(&c.game, err, sizeof err);
    ck_assert(g9 && ttt && g15);
    nn_spec s, t;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g9, err, sizeof err), 0);
    ck_assert_int_eq(s.k, 5);
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"k\":5"));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_int_eq(t.k, 5);
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&s, ttt, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "5 in a row") && strstr(err, "3"), "%s", err);
    ck_assert_int_eq(nn_spec_check_game(&s, g9, err, sizeof err), 0);
    char note[256] = "";
    ck_assert_int_eq(nn_spec_game_note(&s, g9, note, sizeof note), 0);
    ck_assert_int_eq(nn_spec_check_game(&s, g15, err, sizeof err), 0);
    ck_assert_int_eq(nn_spec_game_note(&s, g15, note, sizeof note), 1);
    ck_assert_msg(strstr(note, "9x9") && strstr(note, "15x15"), "%s", note);
    /* no k recorded: any k */
    s.k = 0;
    j = nn_spec_to_json(&s);
    ck_assert_ptr_null(strstr(j, "\"k\""));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_int_eq(t.k, 0);
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&t, ttt, err, sizeof err), 0);
    game_free(g9);
    game_free(ttt);
    game_free(g15);
}
END_TEST

/* net.value_pool: mean (the default, and what a spec without the key means) or
 * mean_max, whose value FC takes 2H inputs; round trips through JSON and a checkpoint,
 * and a model with the other pooling is refused by name. */
static const char *tmp_path(const char *name);
static nn_params *random_params(nn_spec s, uint64_t seed);

/* Saves p to a temporary checkpoint and loads it back: the same spec and weights. */
static nn_params *ckpt_round_trip(const nn_params *p, const char *name)
{
    char err[512];
    const char *path = tmp_path(name);
    nn_ckpt_meta m = {.generation = 1};
    ck_assert_msg(nn_ckpt_save(path, p, &m, NULL, 0, err, sizeof err) == 0, "%s", err);
    nn_params *q = nn_ckpt_load(path, NULL, NULL, err, sizeof err);
    ck_assert_msg(q != NULL, "%s", err);
    ck_assert_mem_eq(&q->layout.spec, &p->layout.spec, sizeof p->layout.spec);
    ck_assert_mem_eq(q->data, p->data, p->layout.count * sizeof(float));
    return q;
}

START_TEST(spec_value_pool)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    nn_spec s, t;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    ck_assert_int_eq(s.value_pool, NN_POOL_MEAN);
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_null(strstr(j, "value_pool")); /* files without the key stay as they were */
    free(j);
    snprintf(c.net.value_pool, sizeof c.net.value_pool, "mean_max");
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    ck_assert_int_eq(s.value_pool, NN_POOL_MEAN_MAX);
    ck_assert_int_eq(nn_value_pool_width(&s), 2 * s.head_channels);
    j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"value_pool\":\"mean_max\""));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    nn_layout L;
    nn_layout_init(&L, &s);
    const nn_tensor *fc1 = &L.t[L.val_fc1_w];
    ck_assert_int_eq(fc1->shape[0], s.value_hidden);
    ck_assert_int_eq(fc1->shape[1], 2 * s.head_channels);
    nn_params *p = random_params(s, 9);
    nn_params *q = ckpt_round_trip(p, "pool.h5");
    nn_spec mean = s;
    mean.value_pool = NN_POOL_MEAN;
    char report[256];
    nn_params *a = nn_params_adapt(q, &mean, 1, report, sizeof report, err, sizeof err);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(err, "value_pool") != NULL, "%s", err);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\":5,\"rows\":9,\"cols\":9,\"lattice\":\"square\","
                                           "\"players\":2,\"actions\":81,\"blocks\":1,\"channels\":8,"
                                           "\"head_channels\":4,\"value_hidden\":8,\"policy_head\":"
                                           "\"conv\",\"value_pool\":\"max\"}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "value_pool"), "%s", err);
    nn_params_free(p);
    nn_params_free(q);
    game_free(g);
}
END_TEST

/* net.aux_policy: the opponent-reply head's two tensors come last, after the value head
 * (older layouts are a prefix); the spec key is written only when on and absent means
 * off; JSON and checkpoint round trips; a 1-player game or a dense head is refused by
 * name, as is a bad JSON value; a net without the head adapts into one with it (the
 * head starts afresh). */
START_TEST(spec_aux_policy)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    nn_spec s, t, plain;
    ck_assert_int_eq(nn_spec_from_config(&plain, &c.net, g, err, sizeof err), 0);
    ck_assert(!plain.aux_policy);
    char *j = nn_spec_to_json(&plain);
    ck_assert_ptr_null(strstr(j, "aux_policy"));
    free(j);
    c.net.aux_policy = true;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    ck_assert(s.aux_policy);
    j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"aux_policy\":true"));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    nn_layout L, L0;
    nn_layout_init(&L, &s);
    nn_layout_init(&L0, &plain);
    ck_assert_int_eq(L.ntensors, L0.ntensors + 2);
    ck_assert_int_eq(L.pol_aux_w, L0.ntensors);
    ck_assert_int_eq(L0.pol_aux_w, -1);
    ck_assert_str_eq(L.t[L.pol_aux_w].name, "policy.aux.weight");
    ck_assert_str_eq(L.t[L.pol_aux_b].name, "policy.aux.bias");
    ck_assert_int_eq(L.t[L.pol_aux_w].shape[1], s.head_channels);
    ck_assert_uint_eq(L.count, L0.count + (size_t)s.head_channels + 1);
    for (int i = 0; i < L0.ntensors; i++) /* the same tensors before it, at the same offsets */
        ck_assert(!strcmp(L.t[i].name, L0.t[i].name) && L.t[i].offset == L0.t[i].offset);
    nn_params *p = random_params(s, 21);
    nn_params *q = ckpt_round_trip(p, "aux.h5");
    nn_params *z = random_params(plain, 22);
    char report[256];
    nn_params *a = nn_params_adapt(z, &s, 1, report, sizeof report, err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_mem_eq(a->data, z->data, z->layout.count * sizeof(float));
    ck_assert_msg(strstr(report, "policy.aux.weight, policy.aux.bias initialised afresh") != NULL, "%s", report);
    nn_params_free(a);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\":5,\"rows\":9,\"cols\":9,\"lattice\":\"square\","
                                           "\"players\":2,\"actions\":81,\"blocks\":1,\"channels\":8,"
                                           "\"head_channels\":4,\"value_hidden\":8,\"policy_head\":"
                                           "\"conv\",\"aux_policy\":1}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "aux_policy"), "%s", err);
    game_free(g);
    /* one player: refused by name */
    gz_config c1;
    cfg_defaults(&c1, "2048");
    c1.net.aux_policy = true;
    game *g1 = game_new(&c1.game, err, sizeof err);
    ck_assert_msg(g1 != NULL, "%s", err);
    ck_assert_int_eq(nn_spec_from_config(&t, &c1.net, g1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.aux_policy") != NULL, "%s", err);
    game_free(g1);
    nn_params_free(p);
    nn_params_free(q);
    nn_params_free(z);
}
END_TEST

/* net.aux_owner: the ownership head's two tensors come last, after the aux policy's
 * (players + 1 classes from the value head's H channels); the spec key is written only
 * when on and absent means off; JSON and checkpoint round trips; adapt starts it afresh;
 * a game without point cells (2048) is refused by name, as is a bad JSON value. */
START_TEST(spec_aux_owner)
{
    gz_config c;
    cfg_defaults(&c, "sanling");
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    nn_spec s, t, plain;
    c.net.aux_policy = true;
    ck_assert_int_eq(nn_spec_from_config(&plain, &c.net, g, err, sizeof err), 0);
    ck_assert(!plain.aux_owner);
    char *j = nn_spec_to_json(&plain);
    ck_assert_ptr_null(strstr(j, "aux_owner"));
    free(j);
    c.net.aux_owner = true;
    ck_assert_int_eq(nn_spec_from_config(&s, &c.net, g, err, sizeof err), 0);
    ck_assert(s.aux_owner);
    j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"aux_owner\":true"));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    nn_layout L, L0;
    nn_layout_init(&L, &s);
    nn_layout_init(&L0, &plain);
    ck_assert_int_eq(L.ntensors, L0.ntensors + 2);
    ck_assert_int_eq(L.own_w, L0.ntensors);
    ck_assert_int_eq(L0.own_w, -1);
    ck_assert_str_eq(L.t[L.own_w].name, "owner.weight");
    ck_assert_str_eq(L.t[L.own_b].name, "owner.bias");
    ck_assert_int_eq(L.t[L.own_w].shape[0], s.players + 1);
    ck_assert_int_eq(L.t[L.own_w].shape[1], s.head_channels);
    ck_assert_uint_eq(L.count, L0.count + (size_t)(s.players + 1) * (s.head_channels + 1));
    for (int i = 0; i < L0.ntensors; i++)
        ck_assert(!strcmp(L.t[i].name, L0.t[i].name) && L.t[i].offset == L0.t[i].offset);
    nn_params *p = random_params(s, 25);
    nn_params *q = ckpt_round_trip(p, "owner.h5");
    nn_params *z = random_params(plain, 26);
    char report[256];
    nn_params *a = nn_params_adapt(z, &s, 1, report, sizeof report, err, sizeof err);
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert_mem_eq(a->data, z->data, z->layout.count * sizeof(float));
    ck_assert_msg(strstr(report, "owner.weight, owner.bias initialised afresh") != NULL, "%s", report);
    nn_params_free(a);
    ck_assert_int_eq(nn_spec_from_json(&t, "{\"planes\":5,\"rows\":9,\"cols\":9,\"lattice\":\"square\","
                                           "\"players\":2,\"actions\":81,\"blocks\":1,\"channels\":8,"
                                           "\"head_channels\":4,\"value_hidden\":8,\"policy_head\":"
                                           "\"conv\",\"aux_owner\":\"yes\"}", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "aux_owner"), "%s", err);
    game_free(g);
    gz_config c1;
    cfg_defaults(&c1, "2048");
    c1.net.aux_owner = true;
    game *g1 = game_new(&c1.game, err, sizeof err);
    ck_assert_msg(g1 != NULL, "%s", err);
    ck_assert_int_eq(nn_spec_from_config(&t, &c1.net, g1, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "net.aux_owner") != NULL, "%s", err);
    game_free(g1);
    nn_params_free(p);
    nn_params_free(q);
    nn_params_free(z);
}
END_TEST

/* net.value_head wdl: two-player games with outcomes only (sanling with 3 players and
 * 2048 refused naming the key); the value FC has 3 outputs (win, draw, loss of the
 * mover); the spec says "wdl" and round trips through JSON and a checkpoint; a spec
 * without value_head still reads as independent; the values from three logits by hand;
 * a zerosum model does not adapt into a wdl net (the head differs) and is named. */
START_TEST(spec_value_head_wdl)
{
    gz_config c;
    cfg_defaults(&c, "mnk");
    c.game.rows = c.game.cols = 9;
    char err[512];
    game *g = game_new(&c.game, err, sizeof err);
    ck_assert_ptr_nonnull(g);
    nn_spec zs, s, t;
    ck_assert_int_eq(nn_spec_from_config(&zs, &c.net, g, err, sizeof err), 0);
    ck_assert_int_eq(zs.value, NN_VALUE_ZEROSUM);
    ck_assert_int_eq(nn_value_outputs(&zs), 2);
    snprintf(c.net.value_head, sizeof c.net.value_head, "wdl");
    ck_assert_msg(nn_spec_from_config(&s, &c.net, g, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(s.value, NN_VALUE_WDL);
    ck_assert_int_eq(nn_value_outputs(&s), 3);
    ck_assert_str_eq(nn_value_name(s.value), "wdl");
    char *j = nn_spec_to_json(&s);
    ck_assert_ptr_nonnull(strstr(j, "\"value_head\":\"wdl\""));
    ck_assert_int_eq(nn_spec_from_json(&t, j, err, sizeof err), 0);
    ck_assert_mem_eq(&s, &t, sizeof s);
    free(j);
    ck_assert_int_eq(nn_spec_check_game(&s, g, err, sizeof err), 0);
    nn_layout L, L0;
    nn_layout_init(&L, &s);
    nn_layout_init(&L0, &zs);
    ck_assert_int_eq(L.ntensors, L0.ntensors);
    ck_assert_int_eq(L.t[L.val_fc2_w].shape[0], 3);
    ck_assert_int_eq(L.t[L.val_fc2_w].shape[1], s.value_hidden);
    ck_assert_int_eq(L.t[L.val_fc2_b].shape[0], 3);
    ck_assert_uint_eq(L.count, L0.count + (size_t)s.value_hidden + 1);
    nn_params *p = random_params(s, 27);
    nn_params *q = ckpt_round_trip(p, "wdl.h5");
    ck_assert_int_eq(q->layout.spec.value, NN_VALUE_WDL);
    nn_params *z = random_params(zs, 28);
    char report[256];
    ck_assert_ptr_null(nn_params_adapt(z, &s, 1, report, sizeof report, err, sizeof err));
    ck_assert_msg(strstr(err, "value_head") != NULL, "%s", err);
    /* a spec from before value_head: independent tanh outputs, one per player */
    const char *old = "{\"planes\":5,\"rows\":9,\"cols\":9,\"lattice\":\"square\",\"players\":2,"
                      "\"actions\":81,\"blocks\":1,\"channels\":8,\"head_channels\":4,"
                      "\"value_hidden\":8,\"policy_head\":\"conv\"}";
    ck_assert_int_eq(nn_spec_from_json(&t, old, err, sizeof err), 0);
    ck_assert_int_eq(t.value, NN_VALUE_INDEPENDENT);
    ck_assert_int_eq(nn_value_outputs(&t), 2);
    /* a wdl spec of three players is not a spec */
    t = s;
    t.players = 3;
    ck_assert_int_eq(nn_spec_validate(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "value_head") != NULL, "%s", err);
    /* values by hand: logits (1, 0, -1) give p = e^(1,0,-1) / sum, v = W - L and L - W */
    float out[NN_VALUE_MAX_OUTPUTS] = {1, 0, -1}, v[2], pr[3];
    nn_value_finish(&s, out, v);
    double e = exp(1) + 1 + exp(-1);
    ck_assert_double_eq_tol(v[0], (exp(1) - exp(-1)) / e, 1e-6);
    ck_assert_double_eq_tol(v[1], -(exp(1) - exp(-1)) / e, 1e-6);
    nn_value_wdl(out, pr);
    ck_assert_double_eq_tol(pr[NN_WDL_DRAW], 1 / e, 1e-6);
    nn_value_finish(&s, out, out); /* in place */
    ck_assert_float_eq(out[0], v[0]);
    ck_assert_float_eq(out[1], v[1]);
    game_free(g);
    /* three players (sanling) and a score (2048): refused naming the key */
    const char *games[2] = {"sanling", "2048"};
    for (int k = 0; k < 2; k++) {
        gz_config c1;
        cfg_defaults(&c1, games[k]);
        snprintf(c1.net.value_head, sizeof c1.net.value_head, "wdl");
        if (k == 1)
            snprintf(c1.net.policy_head, sizeof c1.net.policy_head, "dense");
        game *g1 = game_new(&c1.game, err, sizeof err);
        ck_assert_msg(g1 != NULL, "%s", err);
        ck_assert_int_eq(nn_spec_from_config(&t, &c1.net, g1, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "net.value_head") && strstr(err, "wdl") && strstr(err, games[k]),
                      "%s", err);
        game_free(g1);
    }
    nn_params_free(p);
    nn_params_free(q);
    nn_params_free(z);
}
END_TEST

START_TEST(layout_order_offsets_and_count)
{
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, NN_POLICY_CONV);
    nn_layout L;
    nn_layout_init(&L, &s);
    ck_assert_str_eq(L.t[0].name, "stem.conv.weight");
    ck_assert_int_eq(L.t[0].shape[0], 8);
    ck_assert_int_eq(L.t[0].shape[1], 5);
    ck_assert_str_eq(L.t[L.block[1].conv2].name, "block01.conv2.weight");
    ck_assert_str_eq(L.t[L.block[0].bn1.var].name, "block00.bn1.var");
    ck_assert_int_eq(L.t[L.block[0].bn1.var].kind, NN_T_BN_VAR);
    ck_assert_str_eq(L.t[L.ntensors - 1].name, "value.fc2.bias");
    size_t off = 0;
    for (int i = 0; i < L.ntensors; i++) {
        ck_assert_uint_eq(L.t[i].offset, off);
        off += L.t[i].size;
    }
    ck_assert_uint_eq(off, L.count);
    size_t expect = 8 * 5 * 9 + 4 * 8 + 2 * 2 * (8 * 8 * 9 + 4 * 8) + (4 * 8 + 16 + 4 + 1) +
                    (4 * 8 + 16 + 6 * 4 + 6 + 3 * 6 + 3);
    ck_assert_uint_eq(L.count, expect);
    ck_assert_int_eq(nn_layout_find(&L, "policy.out.bias"), L.pol_out_b);
    ck_assert_int_eq(nn_layout_find(&L, "nope"), -1);
    s.policy = NN_POLICY_DENSE;
    nn_layout_init(&L, &s);
    ck_assert_str_eq(L.t[L.pol_out_w].name, "policy.fc.weight");
    ck_assert_int_eq(L.t[L.pol_out_w].shape[0], 49);
    ck_assert_int_eq(L.t[L.pol_out_w].shape[1], 4 * 49);
}
END_TEST

START_TEST(he_init_deterministic_and_masked)
{
    char err[128];
    nn_spec s = spec_make(GAME_LATTICE_HEX, 2, NN_POLICY_CONV);
    nn_params *a = nn_params_new(&s, err, sizeof err);
    nn_params *b = nn_params_new(&s, err, sizeof err);
    ck_assert_ptr_nonnull(a);
    nn_params_init_he(a, 42);
    nn_params_init_he(b, 42);
    ck_assert_mem_eq(a->data, b->data, a->layout.count * sizeof(float));
    nn_params_init_he(b, 43);
    ck_assert(memcmp(a->data, b->data, a->layout.count * sizeof(float)) != 0);
    ck_assert_int_eq(nn_layout_check_mask(&a->layout, a->data), -1);
    const nn_layout *L = &a->layout;
    float *w = nn_tensor_ptr(L, a->data, L->block[1].conv1);
    ck_assert(w[0] == 0.0f && w[8] == 0.0f && w[4] != 0.0f);
    /* the weight spread follows He: var ~ 2 / fan_in with fan_in = 7 * C */
    double ss = 0;
    size_t n = L->t[L->block[1].conv1].size;
    for (size_t i = 0; i < n; i++)
        ss += (double)w[i] * w[i];
    double var = ss / (n * 7.0 / 9.0);
    ck_assert_msg(fabs(var - 2.0 / 56.0) < 0.3 * 2.0 / 56.0, "var %g", var);
    /* BN neutral */
    ck_assert_float_eq(nn_tensor_ptr(L, a->data, L->stem_bn.var)[3], 1.0f);
    ck_assert_float_eq(nn_tensor_ptr(L, a->data, L->stem_bn.mean)[3], 0.0f);
    /* garbage in a masked tap is found by name and removed by the mask */
    nn_tensor_ptr(L, a->data, L->block[0].conv2)[9 * 5 + 8] = 3.0f;
    int bad = nn_layout_check_mask(L, a->data);
    ck_assert_str_eq(L->t[bad].name, "block00.conv2.weight");
    net_apply_kernel_mask(L, a->data);
    ck_assert_int_eq(nn_layout_check_mask(L, a->data), -1);
    /* square: no mask */
    nn_spec sq = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    nn_params *c = nn_params_new(&sq, err, sizeof err);
    nn_params_init_he(c, 1);
    ck_assert(nn_tensor_ptr(&c->layout, c->data, c->layout.stem_conv)[0] != 0.0f);
    nn_params_free(a);
    nn_params_free(b);
    nn_params_free(c);
    nn_params_free(NULL);
}
END_TEST

/* nn_params_average: every parameter the mean of the models' (three He nets: BN
 * statistics included), into one of them; the calibration dropped; another spec
 * refused by its index, leaving dst as it was. */
START_TEST(average_is_the_elementwise_mean)
{
    char err[128];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 2, NN_POLICY_CONV);
    nn_params *m[3];
    for (int k = 0; k < 3; k++) {
        m[k] = nn_params_new(&s, err, sizeof err);
        ck_assert_ptr_nonnull(m[k]);
        nn_params_init_he(m[k], 10 + (uint64_t)k);
        nn_tensor_ptr(&m[k]->layout, m[k]->data, m[k]->layout.stem_bn.var)[0] = 1.0f + (float)k;
    }
    nn_params *copy[3];
    for (int k = 0; k < 3; k++)
        copy[k] = nn_params_clone(m[k]);
    m[0]->calib = calloc(1, sizeof *m[0]->calib);
    ck_assert_int_eq(nn_params_average(m[0], (const nn_params *const *)m, 3, err, sizeof err), 0);
    for (size_t i = 0; i < m[0]->layout.count; i++) {
        double want = ((double)copy[0]->data[i] + copy[1]->data[i] + copy[2]->data[i]) / 3.0;
        ck_assert_msg(m[0]->data[i] == (float)want, "parameter %zu: %g, want %g", i,
                      (double)m[0]->data[i], want);
    }
    ck_assert_float_eq(nn_tensor_ptr(&m[0]->layout, m[0]->data, m[0]->layout.stem_bn.var)[0], 2.0f);
    ck_assert_ptr_null(m[0]->calib);
    /* one model: itself */
    ck_assert_int_eq(nn_params_average(m[1], (const nn_params *const *)&copy[1], 1, err, sizeof err), 0);
    ck_assert_mem_eq(m[1]->data, copy[1]->data, m[1]->layout.count * sizeof(float));
    /* another network: refused by its index, dst untouched */
    nn_spec s3 = spec_make(GAME_LATTICE_SQUARE, 3, NN_POLICY_CONV);
    nn_params *other = nn_params_new(&s3, err, sizeof err);
    const nn_params *mix[2] = {copy[2], other};
    ck_assert_int_eq(nn_params_average(m[2], mix, 2, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "another network"), "%s", err);
    ck_assert_mem_eq(m[2]->data, copy[2]->data, m[2]->layout.count * sizeof(float));
    ck_assert_int_eq(nn_params_average(m[2], mix, 0, err, sizeof err), -1);
    nn_params_free(other);
    for (int k = 0; k < 3; k++) {
        nn_params_free(m[k]);
        nn_params_free(copy[k]);
    }
}
END_TEST

START_TEST(bad_spec_rejected_by_name)
{
    char err[256];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    s.actions = 4;
    ck_assert_ptr_null(nn_params_new(&s, err, sizeof err));
    ck_assert_msg(strstr(err, "policy_head") != NULL, "%s", err);
    s = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV);
    s.blocks = 41;
    ck_assert_ptr_null(nn_params_new(&s, err, sizeof err));
    ck_assert_msg(strstr(err, "blocks") != NULL, "%s", err);
}
END_TEST


static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static nn_params *random_params(nn_spec s, uint64_t seed)
{
    char err[128];
    nn_params *p = nn_params_new(&s, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    nn_params_init_he(p, seed);
    /* non-trivial BN statistics */
    const nn_layout *L = &p->layout;
    for (int i = 0; i < L->ntensors; i++)
        if (L->t[i].kind == NN_T_BN_VAR)
            for (size_t j = 0; j < L->t[i].size; j++)
                nn_tensor_ptr(L, p->data, i)[j] = 0.5f + (float)j / 16;
    return p;
}

START_TEST(checkpoint_round_trip_with_optim)
{
    nn_spec s = spec_make(GAME_LATTICE_HEX, 2, NN_POLICY_CONV);
    nn_params *p = random_params(s, 7);
    char err[512];
    nn_ckpt_meta m = {.generation = 3, .step = 1234};
    snprintf(m.parent, sizeof m.parent, "models/gen0002.h5");
    float mom[100], ctr[1] = {17};
    for (int i = 0; i < 100; i++)
        mom[i] = (float)i * 0.5f;
    nn_ckpt_extra ex[2] = {{"momentum", mom, 100}, {"counter", ctr, 1}};
    const char *path = tmp_path("a.h5");
    ck_assert_msg(nn_ckpt_save(path, p, &m, ex, 2, err, sizeof err) == 0, "%s", err);
    nn_ckpt_meta m2;
    nn_params *q = nn_ckpt_load(path, NULL, &m2, err, sizeof err);
    ck_assert_msg(q != NULL, "%s", err);
    ck_assert_mem_eq(&q->layout.spec, &p->layout.spec, sizeof(nn_spec));
    ck_assert_uint_eq(q->layout.count, p->layout.count);
    ck_assert_mem_eq(q->data, p->data, p->layout.count * sizeof(float));
    ck_assert_int_eq(m2.generation, 3);
    ck_assert_int_eq(m2.step, 1234);
    ck_assert_str_eq(m2.parent, "models/gen0002.h5");
    float back[100] = {0}, c2[1] = {0};
    nn_ckpt_extra r1 = {"momentum", back, 100}, r2 = {"counter", c2, 1}, r3 = {"absent", c2, 1};
    ck_assert_int_eq(nn_ckpt_read_extra(path, &r1, err, sizeof err), 0);
    ck_assert_mem_eq(back, mom, sizeof mom);
    ck_assert_int_eq(nn_ckpt_read_extra(path, &r2, err, sizeof err), 0);
    ck_assert_float_eq(c2[0], 17.0f);
    ck_assert_int_eq(nn_ckpt_read_extra(path, &r3, err, sizeof err), 1);
    nn_ckpt_extra r4 = {"momentum", back, 99};
    ck_assert_int_eq(nn_ckpt_read_extra(path, &r4, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/optim/momentum") != NULL, "%s", err);
    char fmt[64];
    ck_assert_int_eq(nn_h5_format(path, fmt, sizeof fmt, err, sizeof err), 0);
    ck_assert_str_eq(fmt, "gridzero-model");
    /* no temporary file left behind */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ck_assert_int_ne(access(tmp, F_OK), 0);
    nn_params_free(p);
    nn_params_free(q);
}
END_TEST

/* Overwrites dataset dp of file path with data (same shape). */
static void poke(const char *path, const char *dp, const float *data)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(f >= 0);
    hid_t d = H5Dopen2(f, dp, H5P_DEFAULT);
    ck_assert(d >= 0);
    ck_assert(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    H5Fclose(f);
}

static void expect_load_error(const char *path, const game *g, const char *needle)
{
    char err[512] = "";
    nn_params *q = nn_ckpt_load(path, g, NULL, err, sizeof err);
    ck_assert_msg(q == NULL, "loaded %s, expected an error with \"%s\"", path, needle);
    ck_assert_msg(strstr(err, needle) != NULL, "error \"%s\" lacks \"%s\"", err, needle);
}

static void copy_file(const char *from, const char *to, long keep)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    ck_assert(a && b);
    char buf[4096];
    size_t n;
    long total = 0;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) {
        if (keep >= 0 && total + (long)n > keep)
            n = (size_t)(keep - total);
        fwrite(buf, 1, n, b);
        total += (long)n;
        if (keep >= 0 && total >= keep)
            break;
    }
    fclose(a);
    fclose(b);
}

START_TEST(checkpoint_errors_by_name)
{
    nn_spec s = spec_make(GAME_LATTICE_HEX, 1, NN_POLICY_CONV);
    nn_params *p = random_params(s, 9);
    char err[512];
    const char *good = strdup(tmp_path("good.h5"));
    ck_assert_msg(nn_ckpt_save(good, p, NULL, NULL, 0, err, sizeof err) == 0, "%s", err);

    /* not HDF5, missing, truncated */
    const char *txt = strdup(tmp_path("text.h5"));
    FILE *t = fopen(txt, "w");
    fputs("hello\n", t);
    fclose(t);
    expect_load_error(txt, NULL, "not an HDF5 file");
    expect_load_error(tmp_path("missing.h5"), NULL, "cannot open");
    FILE *gf = fopen(good, "rb");
    fseek(gf, 0, SEEK_END);
    long size = ftell(gf);
    fclose(gf);
    const char *trunc = strdup(tmp_path("trunc.h5"));
    copy_file(good, trunc, size / 2);
    char e2[512] = "";
    ck_assert_ptr_null(nn_ckpt_load(trunc, NULL, NULL, e2, sizeof e2));
    ck_assert_msg(strstr(e2, trunc) != NULL, "%s", e2);

    /* a non-zero masked tap, by name */
    const char *masked = strdup(tmp_path("masked.h5"));
    copy_file(good, masked, -1);
    const nn_layout *L = &p->layout;
    int bi = L->block[0].conv2;
    float *w = malloc(L->t[bi].size * sizeof(float));
    memcpy(w, nn_tensor_ptr(L, p->data, bi), L->t[bi].size * sizeof(float));
    w[9 * 3] = 0.25f;
    poke(masked, "/block00/conv2/weight", w);
    expect_load_error(masked, NULL, "/block00/conv2/weight: non-zero masked hex tap");
    /* a NaN */
    const char *nan = strdup(tmp_path("nan.h5"));
    copy_file(good, nan, -1);
    float g4[4];
    memcpy(g4, nn_tensor_ptr(L, p->data, L->pol_bn.gamma), sizeof g4);
    g4[2] = NAN;
    poke(nan, "/policy/bn/gamma", g4);
    expect_load_error(nan, NULL, "/policy/bn/gamma: non-finite value at index 2");
    /* a changed finite value: only the checksum sees it */
    const char *flip = strdup(tmp_path("flip.h5"));
    copy_file(good, flip, -1);
    g4[2] = 0.123f;
    poke(flip, "/policy/bn/gamma", g4);
    expect_load_error(flip, NULL, "checksum");
    free((void *)flip);
    /* a finite but absurd weight (3e38: a forward pass overflows), by name */
    const char *huge = strdup(tmp_path("huge.h5"));
    copy_file(good, huge, -1);
    g4[2] = 3e38f;
    poke(huge, "/policy/bn/gamma", g4);
    expect_load_error(huge, NULL, "/policy/bn/gamma: 3e+38 at index 2 is beyond the bound");
    free((void *)huge);
    /* and a net holding one is not saved */
    float keep = nn_tensor_ptr(L, p->data, L->pol_bn.gamma)[1];
    nn_tensor_ptr(L, p->data, L->pol_bn.gamma)[1] = -2e7f;
    ck_assert_int_eq(nn_ckpt_save(tmp_path("huge2.h5"), p, NULL, NULL, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "policy.bn.gamma") && strstr(err, "not saved"), "%s", err);
    ck_assert(access(tmp_path("huge2.h5"), F_OK) != 0);
    nn_tensor_ptr(L, p->data, L->pol_bn.gamma)[1] = keep;
    /* a 100,000-character spec (dense attribute storage, in a file made with the latest
     * format): named as what it is, not "missing" */
    const char *longspec = strdup(tmp_path("longspec.h5"));
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t lf = H5Fcreate(longspec, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    ck_assert_int_ge(lf, 0);
    hid_t lg = H5Gcreate2(lf, "/meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(lg, 0);
    hid_t lt0 = H5Tcopy(H5T_C_S1);
    H5Tset_size(lt0, strlen(NN_CKPT_FORMAT));
    hid_t ls0 = H5Screate(H5S_SCALAR);
    hid_t la0 = H5Acreate2(lg, "format", lt0, ls0, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(H5Awrite(la0, lt0, NN_CKPT_FORMAT), 0);
    H5Aclose(la0), H5Tclose(lt0);
    long long one = 1;
    la0 = H5Acreate2(lg, "version", H5T_STD_I64LE, ls0, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(H5Awrite(la0, H5T_NATIVE_LLONG, &one), 0);
    H5Aclose(la0), H5Sclose(ls0);
    char *junk = malloc(100001);
    memset(junk, 'x', 100000);
    junk[100000] = 0;
    hid_t lt = H5Tcopy(H5T_C_S1);
    H5Tset_size(lt, 100000);
    hid_t ls = H5Screate(H5S_SCALAR);
    hid_t la = H5Acreate2(lg, "spec", lt, ls, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(la, 0);
    ck_assert_int_ge(H5Awrite(la, lt, junk), 0);
    H5Aclose(la), H5Sclose(ls), H5Tclose(lt), H5Gclose(lg), H5Pclose(fapl);
    ck_assert_int_ge(H5Fclose(lf), 0);
    free(junk);
    char e3[512] = "";
    ck_assert_ptr_null(nn_ckpt_load(longspec, NULL, NULL, e3, sizeof e3));
    ck_assert_msg(strstr(e3, "attribute /meta spec") && !strstr(e3, "missing"), "%s", e3);
    free((void *)longspec);
    /* saving a net with a garbage tap is refused */
    nn_tensor_ptr(L, p->data, L->stem_conv)[8] = 1.0f;
    ck_assert_int_eq(nn_ckpt_save(tmp_path("refused.h5"), p, NULL, NULL, 0, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "stem.conv.weight") != NULL, "%s", err);
    net_apply_kernel_mask(L, p->data);

    /* a wrong shape and a missing dataset: write a file by hand from a smaller net */
    nn_spec s2 = s;
    s2.channels = 6;
    nn_params *p2 = random_params(s2, 1);
    const char *shape = strdup(tmp_path("shape.h5"));
    ck_assert(nn_ckpt_save(shape, p2, NULL, NULL, 0, err, sizeof err) == 0);
    hid_t f = H5Fopen(shape, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t mg = H5Gopen2(f, "/meta", H5P_DEFAULT);
    H5Adelete(mg, "spec");
    char *js = nn_spec_to_json(&s);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, strlen(js));
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(mg, "spec", st, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, st, js);
    H5Aclose(a), H5Sclose(sp), H5Tclose(st), H5Gclose(mg);
    H5Fclose(f);
    free(js);
    expect_load_error(shape, NULL, "/stem/conv/weight: expected shape (8,5,3,3), got (6,5,3,3)");
    f = H5Fopen(shape, H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/stem/conv/weight", H5P_DEFAULT);
    H5Fclose(f);
    expect_load_error(shape, NULL, "/stem/conv/weight missing");

    /* wrong format, a spec that does not fit the game */
    f = H5Fopen(masked, H5F_ACC_RDWR, H5P_DEFAULT);
    mg = H5Gopen2(f, "/meta", H5P_DEFAULT);
    H5Adelete(mg, "format");
    H5Gclose(mg);
    H5Fclose(f);
    expect_load_error(masked, NULL, "attribute /meta format");
    gz_config c;
    cfg_defaults(&c, "mnk");
    game *g = game_new(&c.game, err, sizeof err);
    expect_load_error(good, g, "does not fit the config's game");
    game_free(g);
    nn_params_free(p);
    nn_params_free(p2);
    free((void *)good), free((void *)txt), free((void *)trunc), free((void *)masked);
    free((void *)nan), free((void *)shape), free(w);
}
END_TEST

/* Runs a shell command, returns its exit status and up to len bytes of its stdout. */
static int run_cmd(const char *cmd, char *out, size_t len)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, len - 1, f);
    out[n] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* gridzero average through the binary: two saved models' mean, loaded back; bad input
 * (one model, a file that is no model, two networks) exits 2 and an unwritable output
 * 1, each with a message and no output file. */
START_TEST(cli_average)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    char err[256], cmd[2048], out[4096];
    nn_spec s = spec_make(GAME_LATTICE_SQUARE, 1, NN_POLICY_CONV), s2 = spec_make(GAME_LATTICE_SQUARE, 2, NN_POLICY_CONV);
    nn_params *a = nn_params_new(&s, err, sizeof err), *b = nn_params_new(&s, err, sizeof err);
    nn_params *c = nn_params_new(&s2, err, sizeof err);
    nn_params_init_he(a, 1);
    nn_params_init_he(b, 2);
    nn_params_init_he(c, 3);
    char *pa = strdup(tmp_path("avg_a.h5")), *pb = strdup(tmp_path("avg_b.h5"));
    char *pc = strdup(tmp_path("avg_c.h5")), *po = strdup(tmp_path("avg_out.h5"));
    ck_assert_int_eq(nn_ckpt_save(pa, a, NULL, NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(nn_ckpt_save(pb, b, NULL, NULL, 0, err, sizeof err), 0);
    ck_assert_int_eq(nn_ckpt_save(pc, c, NULL, NULL, 0, err, sizeof err), 0);
    snprintf(cmd, sizeof cmd, "%s average -o %s %s %s 2>&1", bin, po, pa, pb);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    nn_params *m = nn_ckpt_load(po, NULL, NULL, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    for (size_t i = 0; i < m->layout.count; i++)
        ck_assert(m->data[i] == (float)(((double)a->data[i] + b->data[i]) / 2));
    nn_params_free(m);
    unlink(po);
    const struct { const char *args; int rc; const char *msg; } bad[] = {
        {"-o %s %s", 2, "at least two models"},
        {"-o %s %s %s.txt", 2, "not an HDF5 file"},
        {"-o %s %s " "%s", 2, "avg_c.h5 has another network (spec) than"},
    };
    char txt[1024];
    snprintf(txt, sizeof txt, "%s.txt", pc);
    FILE *f = fopen(txt, "w");
    fputs("not a model\n", f);
    fclose(f);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char args[1024];
        snprintf(args, sizeof args, bad[k].args, po, pa, pc);
        snprintf(cmd, sizeof cmd, "%s average %s 2>&1", bin, args);
        ck_assert_int_eq(run_cmd(cmd, out, sizeof out), bad[k].rc);
        ck_assert_msg(strstr(out, bad[k].msg), "%s: %s", args, out);
        ck_assert_int_ne(access(po, F_OK), 0);
    }
    snprintf(cmd, sizeof cmd, "%s average -o /nonexistent-dir/x.h5 %s %s 2>&1", bin, pa, pb);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "cannot create"), "%s", out);
    unlink(pa), unlink(pb), unlink(pc), unlink(txt);
    free(pa), free(pb), free(pc), free(po);
    nn_params_free(a), nn_params_free(b), nn_params_free(c);
}
END_TEST

START_TEST(cli_bench_save_and_info)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    char cmd[1024], out[8192];
    const char *model = strdup(tmp_path("cli.h5"));
    snprintf(cmd, sizeof cmd,
             "%s bench nn --set net.blocks=1 --set net.channels=8 --batches 1,3 --repeats 1 "
             "--precision fp32 --json --save %s",
             bin, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"batches\":[{\"batch\":1,") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"positions_per_s\"") && strstr(out, "\"reference\""), "%s", out);
#if defined(__x86_64__)
    { /* the share of the measured fp32 peak: a plausible peak (x86-64 has FMA or AVX-512
       * wherever oneDNN's fp32 JIT runs well), and a share of it in (0, 1.5) */
        const char *pk = strstr(out, "\"core_peak_gops\":"), *sh = strstr(out, "\"peak_share\":");
        __builtin_cpu_init();
        if (__builtin_cpu_supports("fma") || __builtin_cpu_supports("avx512f")) {
            ck_assert_msg(pk && sh, "%s", out);
            double peak = strtod(pk + strlen("\"core_peak_gops\":"), NULL);
            double share = strtod(sh + strlen("\"peak_share\":"), NULL);
            ck_assert_msg(peak > 5 && peak < 10000, "%s", out);
            ck_assert_msg(share > 0 && share < 1.5, "%s", out);
        }
    }
#endif
    snprintf(cmd, sizeof cmd, "%s info %s", bin, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "gridzero model") && strstr(out, "parameters") &&
                      strstr(out, "1 residual block x 8 channels") &&
                      strstr(out, "tanh minus the mean (zerosum)"),
                  "%s", out);
    ck_assert_msg(strstr(out, "freestyle, 3 in a row"), "%s", out);
    /* a five-in-a-row model (15x15) is refused for tic-tac-toe (exit 2), and plays 9x9
     * with a note that it was trained on 15x15 */
    const char *src = getenv("GZ_SRC");
    ck_assert_ptr_nonnull(src);
    const char *model15 = strdup(tmp_path("cli15.h5"));
    snprintf(cmd, sizeof cmd,
             "%s bench nn -c %s/configs/gomoku15.json --set net.blocks=1 --set net.channels=8 "
             "--batches 1 --repeats 1 --precision fp32 --save %s",
             bin, src, model15);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s arena -c %s/configs/tictactoe.json model:%s:2 random --games 2 2>&1",
             bin, src, model15);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "5 in a row") && strstr(out, "game.k"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s arena -c %s/configs/gomoku9.json model:%s:2 random --games 2 2>&1",
             bin, src, model15);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "note") && strstr(out, "trained on 15x15") && strstr(out, "9x9"), "%s", out);
    /* a wdl net through bench (oneDNN against the reference) and info */
    const char *wmodel = strdup(tmp_path("cli_wdl.h5"));
    snprintf(cmd, sizeof cmd,
             "%s bench nn --set net.blocks=1 --set net.channels=8 --set net.value_head=wdl "
             "--batches 1,3 --repeats 1 --precision fp32 --save %s",
             bin, wmodel);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s info %s", bin, wmodel);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "FC 3, softmax: win, draw, loss of the player to move"), "%s", out);
    free((void *)wmodel);
    snprintf(cmd, sizeof cmd, "%s info %s 2>&1", bin, tmp_path("nothing.h5"));
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "nothing.h5") != NULL, "%s", out);
    /* bench search reports where the time went */
    snprintf(cmd, sizeof cmd, "%s bench search --set net.blocks=1 --set net.channels=8 --set "
             "net.threads=1 --trees 4 --moves 2 --sims 16 --json", bin);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"forward_share\":") && strstr(out, "\"evaluator_glue_share\":") &&
                      strstr(out, "\"search_share\":") && strstr(out, "\"precision\":"),
                  "%s", out);
    if (nn_cpu_has_vnni()) { /* int8 random weights: calibrated on random positions */
        snprintf(cmd, sizeof cmd, "%s bench search --set net.blocks=1 --set net.channels=8 --set "
                 "net.threads=1 --set net.precision=int8 --trees 4 --moves 2 --sims 16 --json", bin);
        ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
        ck_assert_msg(strstr(out, "\"precision\":\"int8\""), "%s", out);
        /* 8 channels: the direct kernels cannot run them, auto runs oneDNN's */
        ck_assert_msg(strstr(out, "\"int8_kernel\":\"onednn\""), "%s", out);
    }
    snprintf(cmd, sizeof cmd, "%s bench nn --batches 0 2>&1", bin);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--batches") != NULL, "%s", out);
    free((void *)model);
    free((void *)model15);
}
END_TEST

/* int8 from the command line: quantize a model on self-play samples, info and bench on
 * the result; int8 named for a model without calibration or on a CPU without VNNI
 * (DNNL_MAX_CPU_ISA=AVX512_CORE hides it) exits 2 with a message, and auto falls back. */
START_TEST(cli_quantize_and_int8)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    char cmd[2048], out[8192];
    /* 64 channels: where auto picks int8 on AMX too */
    const char *set = "--set game.rows=7 --set game.cols=7 --set net.blocks=1 --set net.channels=64 "
                      "--set net.threads=1 --set selfplay.threads=1";
    char *model = strdup(tmp_path("q.h5")), *data = strdup(tmp_path("q_data.h5"));
    char *qm = strdup(tmp_path("q_int8.h5"));
    snprintf(cmd, sizeof cmd, "%s bench nn %s --batches 1 --repeats 1 --no-ref --precision fp32 "
             "--save %s >/dev/null", bin, set, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "%s selfplay %s -m %s "
             "--set mcts.simulations=8 --set selfplay.games=40 -o %s 2>&1", bin, set, model, data);
    ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
    /* int8 named for a model without calibration: exit 2, naming what to do */
    snprintf(cmd, sizeof cmd, "%s bench nn %s -m %s --batches 1 --repeats 1 --no-ref "
             "--precision int8 2>&1", bin, set, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, nn_cpu_has_vnni() ? "gridzero quantize" : "VNNI"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s selfplay %s -m %s --set net.precision=int8 --set selfplay.games=2 "
             "-o %s 2>&1", bin, set, model, tmp_path("never.h5"));
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "int8") && strstr(out, "q.h5"), "%s", out);
    ck_assert(access(tmp_path("never.h5"), F_OK) != 0);
    snprintf(cmd, sizeof cmd, "%s run %s --set net.precision=int8 -o %s 2>&1", bin, set,
             tmp_path("never_run"));
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "net.precision"), "%s", out);
    /* quantize: bad input */
    snprintf(cmd, sizeof cmd, "%s quantize %s -m %s -o %s 2>&1", bin, set, model, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--data"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s quantize -m %s --data %s -o %s 2>&1", bin, model, data, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2); /* the built-in 3x3 game */
    ck_assert_msg(strstr(out, "q_data.h5"), "%s", out);
    if (!nn_cpu_has_vnni()) {
        snprintf(cmd, sizeof cmd, "%s quantize %s -m %s --data %s -o %s 2>&1", bin, set, model, data, qm);
        ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "VNNI"), "%s", out);
        goto done;
    }
    /* quantize (--force: a random net's gates are not the point here) */
    snprintf(cmd, sizeof cmd, "%s quantize %s -m %s --data %s -o %s --positions 100 --force --json",
             bin, set, model, data, qm);
    ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "\"calibration_positions\":100") && strstr(out, "\"written\":true") &&
                      strstr(out, "\"top1_agreement\"") && strstr(out, "\"mean_abs_dvalue\""),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "%s info %s", bin, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "int8        calibrated on 100 positions; gates on"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s info %s", bin, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "not calibrated"), "%s", out);
    /* auto picks int8 for the calibrated model, bf16/fp32 for the other */
    snprintf(cmd, sizeof cmd, "%s bench nn %s -m %s --batches 2 --repeats 1 --no-ref --json", bin,
             set, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"precision\":\"int8\""), "%s", out);
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni")) { /* the int8 share: against the VNNI peak */
        const char *pk = strstr(out, "\"core_peak_gops\":");
        ck_assert_msg(pk && strstr(out, "\"peak_share\":"), "%s", out);
        double peak = strtod(pk + strlen("\"core_peak_gops\":"), NULL);
        ck_assert_msg(peak > 50 && peak < 20000, "%s", out);
    }
#endif
    /* both int8 kernels, timed interleaved: direct where the CPU has AVX512-VNNI, else
     * refused with the reason; an unknown kernel word exits 2 */
    snprintf(cmd, sizeof cmd, "%s bench nn %s -m %s --batches 2 --repeats 1 --no-ref --json "
             "--precision int8:direct,int8:onednn 2>&1", bin, set, qm);
    if (nn_cpu_has_avx512_vnni()) {
        ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
        ck_assert_msg(strstr(out, "\"int8_kernel\":\"direct\"") &&
                          strstr(out, "\"int8_kernel\":\"onednn\""), "%s", out);
    } else {
        ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
        ck_assert_msg(strstr(out, "AVX512-VNNI"), "%s", out);
    }
    snprintf(cmd, sizeof cmd, "%s bench nn %s -m %s --batches 2 --repeats 1 --no-ref "
             "--precision int8:fast 2>&1", bin, set, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "int8:direct"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s bench nn %s -m %s --batches 2 --repeats 1 --no-ref --json", bin,
             set, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(!strstr(out, "\"precision\":\"int8\""), "%s", out);
    /* no VNNI: int8 named exits 2, auto falls back */
    snprintf(cmd, sizeof cmd, "DNNL_MAX_CPU_ISA=AVX512_CORE %s bench nn %s -m %s --batches 1 "
             "--repeats 1 --no-ref --precision int8 2>&1", bin, set, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "VNNI"), "%s", out);
    snprintf(cmd, sizeof cmd, "DNNL_MAX_CPU_ISA=AVX512_CORE %s bench nn %s -m %s --batches 1 "
             "--repeats 1 --no-ref --json", bin, set, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"precision\":\"fp32\""), "%s", out);
    /* an arena matches a model's int8 against its fp32 (a precision per player) */
    snprintf(cmd, sizeof cmd, "%s arena %s model:%s:4:int8 model:%s:4:fp32 --games 2 2>&1", bin, set,
             qm, qm);
    ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, ":4:int8") && strstr(out, ":4:fp32"), "%s", out);
    /* a time per move: sims as the cap, the precision after it */
    snprintf(cmd, sizeof cmd, "%s arena %s model:%s:50:0.01s:int8 model:%s:0.01s --games 2 2>&1",
             bin, set, qm, qm);
    ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, ":50:0.01s:int8") && strstr(out, ":0.01s "), "%s", out);
    snprintf(cmd, sizeof cmd, "%s arena %s model:%s:0s random --games 2 2>&1", bin, set, qm);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "T seconds > 0"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s arena %s model:%s:4:int8 random --games 2 2>&1", bin, set, model);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "calibration"), "%s", out);
    /* the quantized model plays: a short int8 self-play */
    snprintf(cmd, sizeof cmd, "%s selfplay %s -m %s --set net.precision=int8 --set selfplay.games=2 "
             "--set selfplay.threads=1 --set mcts.simulations=8 -o %s 2>&1", bin, set, qm,
             tmp_path("q_sp.h5"));
    ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
done:
    free(model), free(data), free(qm);
}
END_TEST

static void fresh_dir(const char *d)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", d, d);
    ck_assert_int_eq(system(cmd), 0);
}

/* A full disk at every write of a checkpoint (`gridzero train -o`, with its optimizer
 * state): exit 1 with a message, no crash in HDF5's exit handler, no .tmp left. */
START_TEST(checkpoint_disk_full)
{
    const char *bin = getenv("GZ_BIN");
    ck_assert_msg(bin != NULL, "GZ_BIN not set (run the tests through meson test)");
    char cmd[1200], out[4096];
    char *data = strdup(tmp_path("enospc_data.h5")), *outdir = strdup(tmp_path("enospc_out"));
    snprintf(cmd, sizeof cmd, "%s selfplay --set selfplay.games=20 --set selfplay.threads=1 "
             "--set mcts.simulations=16 -o %s 2>&1", bin, data);
    ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
    char model[700];
    snprintf(model, sizeof model, "%s/m.h5", outdir);
    const char *args[] = {"train", "--data", data, "-o", model, "--steps", "2", NULL};
    int tried = enospc_sweep("train -o MODEL", args, outdir, tmpdir, 1, fresh_dir, NULL);
    ck_assert_int_ge(tried, 20);
    free(data);
    free(outdir);
}
END_TEST

static Suite *nn_suite(void)
{
    Suite *s = suite_create("nn");
    /* generous timeouts: the machine may be shared and the build sanitized */
    TCase *t = tcase_create("spec_params");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, spec_from_config_and_json_round_trip);
    tcase_add_test(t, spec_rule_checked);
    tcase_add_test(t, spec_k_checked);
    tcase_add_test(t, spec_value_pool);
    tcase_add_test(t, spec_aux_policy);
    tcase_add_test(t, spec_aux_owner);
    tcase_add_test(t, spec_value_head_wdl);
    tcase_add_test(t, layout_order_offsets_and_count);
    tcase_add_test(t, he_init_deterministic_and_masked);
    tcase_add_test(t, average_is_the_elementwise_mean);
    tcase_add_test(t, bad_spec_rejected_by_name);
    suite_add_tcase(s, t);
    TCase *ck = tcase_create("checkpoint");
    tcase_set_timeout(ck, 60);
    tcase_add_test(ck, checkpoint_round_trip_with_optim);
    tcase_add_test(ck, checkpoint_errors_by_name);
    suite_add_tcase(s, ck);
    TCase *cl = tcase_create("cli");
    tcase_set_timeout(cl, 120);
    tcase_add_test(cl, cli_bench_save_and_info);
    tcase_add_test(cl, cli_average);
    tcase_add_test(cl, checkpoint_disk_full);
    TCase *q8 = tcase_create("int8");
    tcase_set_timeout(q8, 900);
    tcase_add_test(q8, cli_quantize_and_int8);
    suite_add_tcase(s, q8);
    suite_add_tcase(s, cl);
    return s;
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gz_test_nn_XXXXXX");
    if (!mkdtemp(tmpdir))
        return EXIT_FAILURE;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    SRunner *r = srunner_create(nn_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        failed++;
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
