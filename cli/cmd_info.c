/* gridzero info FILE: any gridzero HDF5 file in words, dispatched on its format
 * attribute (a table below: other file kinds add a row). */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "nn/checkpoint.h"
#include "nn/ntuple.h"
#include "nn/params.h"
#include "selfplay/samples.h"

static int info_model(const char *path)
{
    char err[512];
    nn_ckpt_meta m;
    nn_params *p = nn_ckpt_load(path, NULL, &m, err, sizeof err);
    if (!p) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    const nn_spec *s = &p->layout.spec;
    printf("%s: gridzero model (format %s, version %d)\n", path, NN_CKPT_FORMAT, NN_CKPT_VERSION);
    printf("  input       %d planes, %dx%d board, %s lattice%s\n", s->planes, s->rows, s->cols,
           nn_lattice_name(s->lattice),
           s->lattice == GAME_LATTICE_HEX ? " (masked 3x3 kernels: 7 live taps)" : "");
    if (s->rule[0] && s->k > 0)
        printf("  rule        %s, %d in a row (refused under any other rule or k)\n", s->rule, s->k);
    else if (s->rule[0])
        printf("  rule        %s (refused under any other rule)\n", s->rule);
    printf("  trunk       3x3 stem + %d %s block%s x %d channels\n", s->blocks, nn_trunk_name(s->trunk),
           s->blocks == 1 ? "" : "s", s->channels);
    if (s->policy == NN_POLICY_CONV)
        printf("  policy head 1x1 conv to %d channels, 1x1 conv to one logit per point "
               "(fully convolutional)%s\n", s->head_channels,
               s->aux_policy ? "; a second 1x1 conv to the opponent's reply (training only)" : "");
    else if (s->policy == NN_POLICY_ACTION_VALUE)
        printf("  policy head 1x1 conv to %d channels, dense to %d action values h(points of the "
               "move + points to come after it); priors softmax(y / %g)\n", s->head_channels,
               s->actions, NN_ACTION_VALUE_TEMP);
    else
        printf("  policy head 1x1 conv to %d channels, dense to %d actions\n", s->head_channels,
               s->actions);
    const char *pool = s->value_pool == NN_POOL_MEAN_MAX ? "mean and max" : "average";
    if (s->value == NN_VALUE_WDL)
        printf("  value head  1x1 conv to %d channels, %s pool, FC %d, FC 3, softmax: win, draw, "
               "loss of the player to move (wdl; values W - L, L - W)\n", s->head_channels, pool,
               s->value_hidden);
    else
        printf("  value head  1x1 conv to %d channels, %s pool, FC %d, FC %d players, %s "
               "(mover first)\n", s->head_channels, pool, s->value_hidden, s->players,
               s->value == NN_VALUE_SCORE     ? "linear (h of the points to come)"
               : s->value == NN_VALUE_ZEROSUM ? "tanh minus the mean (zerosum)"
                                              : "tanh");
    if (s->aux_owner)
        printf("  owner head  1x1 conv from the value head's %d channels to %d classes a point "
               "(nobody, then the players mover first; training only)\n", s->head_channels,
               s->players + 1);
    printf("  parameters  %zu in %d tensors\n", p->layout.count, p->layout.ntensors);
    printf("  FLOPs       %.1f M per position (%dx%d)\n", nn_spec_flops(s, s->rows, s->cols) / 1e6,
           s->rows, s->cols);
    printf("  generation  %lld\n  step        %lld\n  parent      %s\n", (long long)m.generation,
           (long long)m.step, m.parent[0] ? m.parent : "(none)");
    const nn_calib *c = p->calib;
    if (!c)
        printf("  int8        not calibrated (gridzero quantize)\n");
    else if (!nn_params_calibrated(p))
        printf("  int8        calibration of other weights: ignored (run gridzero quantize again)\n");
    else if (c->heldout == 0)
        printf("  int8        calibrated on %d positions; gates not measured\n", c->positions);
    else
        printf("  int8        calibrated on %d positions; gates on %d held-out: top-1 %.2f%% "
               "(strict %.2f%%), mean |dvalue| %.4f%s\n", c->positions, c->heldout, 100 * c->top1,
               100 * c->top1_strict, c->mean_dvalue,
               p->layout.spec.value == NN_VALUE_SCORE ? " (of half the span of the values)" : "");
    nn_params_free(p);
    return EXIT_OK;
}

static int info_ntuple(const char *path)
{
    char err[1024];
    ntuple *n = ntuple_load(path, err, sizeof err);
    if (!n) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    printf("%s: gridzero n-tuple network (format %s, version %d)\n", path, NT_FORMAT, n->stages > 1 ? 2 : 1);
    printf("  game        2048 4x4: after-state values in points (model-expectimax:FILE[:D])\n");
    printf("  tuples      %d of %d cells under 8 symmetries: %d features, %u weights a tuple\n", NT_TUPLES,
           NT_LEN, NT_FEATURES, NT_ENTRIES);
    printf("  trained     %lld games (generation %lld)\n", (long long)n->games, (long long)n->generation);
    for (int s = 0; s < n->stages; s++) {
        size_t nonzero = 0, own = 0;
        for (int t = 0; t < NT_TUPLES; t++)
            for (uint32_t i = 0; i < NT_ENTRIES; i++) {
                nonzero += n->w[s][t][i] != 0;
                own += s > 0 && (n->used[s][t][i >> 6] >> (i & 63) & 1);
            }
        if (s == 0)
            printf("  stage 0     %s: %zu weights not zero (%.1f%%)\n",
                   n->stages > 1 ? "until the first threshold" : "the whole game", nonzero,
                   100.0 * (double)nonzero / ((double)NT_TUPLES * NT_ENTRIES));
        else
            printf("  stage %d     from the %d tile: %zu weights of its own (%.1f%%), the rest read from stage %d\n",
                   s, 1 << n->threshold[s], own, 100.0 * (double)own / ((double)NT_TUPLES * NT_ENTRIES), s - 1);
    }
    ntuple_free(n);
    return EXIT_OK;
}

typedef struct info_kind {
    const char *format;
    int (*show)(const char *path);
} info_kind;

static const info_kind kinds[] = {
    {NN_CKPT_FORMAT, info_model},
    {SP_FORMAT, info_samples},
    {NT_FORMAT, info_ntuple},
};

int cmd_info(int argc, char **argv)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc == 2 ? stdout : stderr;
        fprintf(f, "usage: gridzero info FILE\n\nDescribes a gridzero HDF5 file in words. A model: "
                   "its network, parameter count,\nFLOPs per position, generation, training step, "
                   "parent,\nint8 calibration. A sample file: its game,\nboard, generation, model, samples and games, "
                   "mean game length, outcomes per seat\nand mean pi entropy.\n");
        return argc == 2 ? EXIT_OK : EXIT_USAGE;
    }
    char fmt[64], err[512];
    if (nn_h5_format(argv[1], fmt, sizeof fmt, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(fmt, kinds[i].format))
            return kinds[i].show(argv[1]);
    cli_error("%s: format \"%s\" is not one this build describes", argv[1], fmt);
    return EXIT_USAGE;
}
