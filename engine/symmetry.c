#include "symmetry.h"

#include <assert.h>

static const char *const names[SYM_COUNT] = {"id", "rot90", "rot180", "rot270",
                                             "flip_v", "flip_h", "transpose", "antitranspose"};

const char *sym_name(sym_id s) { return (unsigned)s < SYM_COUNT ? names[s] : "?"; }

void sym_map_point(sym_id s, int rows, int cols, int r, int c, int *r2, int *c2)
{
    int R = rows - 1, C = cols - 1;
    switch (s) {
    case SYM_ID: *r2 = r; *c2 = c; return;
    case SYM_ROT180: *r2 = R - r; *c2 = C - c; return;
    case SYM_FLIP_V: *r2 = R - r; *c2 = c; return;
    case SYM_FLIP_H: *r2 = r; *c2 = C - c; return;
    default: break;
    }
    assert(rows == cols);
    switch (s) {
    case SYM_ROT90: *r2 = c; *c2 = R - r; return;
    case SYM_ROT270: *r2 = C - c; *c2 = r; return;
    case SYM_TRANSPOSE: *r2 = c; *c2 = r; return;
    case SYM_ANTITRANSPOSE: *r2 = C - c; *c2 = R - r; return;
    default: assert(!"bad symmetry");
    }
}

/* Composition and inverse by their action on a 3x3 probe (all elements differ there). */
static sym_id identify(int rows, const int *img)
{
    for (int t = 0; t < SYM_COUNT; t++) {
        int ok = 1;
        for (int r = 0; r < rows && ok; r++)
            for (int c = 0; c < rows && ok; c++) {
                int r2, c2;
                sym_map_point((sym_id)t, rows, rows, r, c, &r2, &c2);
                ok = img[(r * rows + c)] == r2 * rows + c2;
            }
        if (ok)
            return (sym_id)t;
    }
    assert(!"not a D4 element");
    return SYM_ID;
}

sym_id sym_compose(sym_id a, sym_id b)
{
    int img[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int r1, c1, r2, c2;
            sym_map_point(b, 3, 3, r, c, &r1, &c1);
            sym_map_point(a, 3, 3, r1, c1, &r2, &c2);
            img[r * 3 + c] = r2 * 3 + c2;
        }
    return identify(3, img);
}

void sym_set_square_group(game *g)
{
    if (g->rows == g->cols) {
        g->nsym = 8;
        for (int i = 0; i < 8; i++)
            g->sym[i] = (sym_id)i;
    } else {
        g->nsym = 4;
        g->sym[0] = SYM_ID;
        g->sym[1] = SYM_ROT180;
        g->sym[2] = SYM_FLIP_V;
        g->sym[3] = SYM_FLIP_H;
    }
}

sym_id sym_inverse(sym_id s)
{
    for (int t = 0; t < SYM_COUNT; t++)
        if (sym_compose((sym_id)t, s) == SYM_ID)
            return (sym_id)t;
    assert(!"no inverse");
    return SYM_ID;
}

/* The cell index i = r * cols + c under s. */
static int map_cell(const game *g, sym_id s, int i)
{
    assert(i >= 0 && i < g->rows * g->cols);
    int r2, c2;
    sym_map_point(s, g->rows, g->cols, i / g->cols, i % g->cols, &r2, &c2);
    return r2 * g->cols + c2;
}

int sym_map_action(const game *g, sym_id s, int action)
{
    if (g->ops->sym_action) {
        assert(action >= 0 && action < g->actions);
        return g->ops->sym_action(g, (int)s, action);
    }
    return map_cell(g, s, action);
}

void sym_map_planes_f32(const game *g, sym_id s, int planes, const float *in, float *out)
{
    int hw = g->rows * g->cols;
    for (int i = 0; i < hw; i++) {
        int j = map_cell(g, s, i);
        for (int p = 0; p < planes; p++)
            out[p * hw + j] = in[p * hw + i];
    }
}

void sym_map_planes_u8(const game *g, sym_id s, int planes, const uint8_t *in, uint8_t *out)
{
    int hw = g->rows * g->cols;
    for (int i = 0; i < hw; i++) {
        int j = map_cell(g, s, i);
        for (int p = 0; p < planes; p++)
            out[p * hw + j] = in[p * hw + i];
    }
}

void sym_map_policy_f32(const game *g, sym_id s, const float *in, float *out)
{
    if (!g->ops->sym_action) {
        assert(g->actions == g->rows * g->cols);
        sym_map_planes_f32(g, s, 1, in, out);
        return;
    }
    for (int a = 0; a < g->actions; a++)
        out[sym_map_action(g, s, a)] = in[a];
}

void sym_map_policy_u8(const game *g, sym_id s, const uint8_t *in, uint8_t *out)
{
    if (!g->ops->sym_action) {
        assert(g->actions == g->rows * g->cols);
        sym_map_planes_u8(g, s, 1, in, out);
        return;
    }
    for (int a = 0; a < g->actions; a++)
        out[sym_map_action(g, s, a)] = in[a];
}
