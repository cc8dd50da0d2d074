#include "player.h"
#include "parse.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const player_kind player_kind_random;
extern const player_kind player_kind_alphabeta;
extern const player_kind player_kind_mcts;
extern const player_kind player_kind_perfect;
extern const player_kind player_kind_threat;
extern const player_kind player_kind_expectimax;

const player_kind *const player_kinds[] = {
    &player_kind_random,
    &player_kind_mcts,
    &player_kind_alphabeta,
    &player_kind_perfect,
    &player_kind_threat,
    &player_kind_expectimax,
    NULL,
};

double player_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool player_ctl_expired(player_ctl *ctl)
{
    if (!ctl)
        return false;
    if (atomic_load_explicit(&ctl->stop, memory_order_relaxed))
        return true;
    return ctl->deadline > 0 && player_clock() > ctl->deadline;
}

void player_info_clear(player_info *info)
{
    memset(info, 0, sizeof *info);
    info->action = -1;
}

player *player_alloc(const char *name, const char *kind, const game *g)
{
    player *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->kind = kind;
    p->g = g;
    return p;
}

void player_free(player *p)
{
    if (!p)
        return;
    if (p->destroy)
        p->destroy(p);
    free(p);
}

int player_parse_count(const char *arg, int *out)
{
    if (!arg || !isdigit((unsigned char)*arg))
        return -1;
    return parse_int(arg, 1, INT_MAX, out);
}

int player_parse_seconds(const char *arg, double *out)
{
    size_t len = arg ? strlen(arg) : 0;
    if (len < 2 || arg[len - 1] != 's' || !(isdigit((unsigned char)arg[0]) || arg[0] == '.'))
        return -1;
    char *end;
    double v = strtod(arg, &end);
    if (end != arg + len - 1 || !(v > 0) || v > 86400)
        return -1;
    *out = v;
    return 0;
}

player *player_new(const char *spec, const game *g, const gz_config *cfg, const player_ext *ext,
                   char *err, size_t errlen)
{
    char kind[PLAYER_NAME_LEN];
    if (!spec || !*spec) {
        snprintf(err, errlen, "player \"\": empty player spec");
        return NULL;
    }
    if (strlen(spec) >= PLAYER_NAME_LEN) {
        snprintf(err, errlen, "player \"%.40s...\": spec longer than %d characters", spec,
                 PLAYER_NAME_LEN - 1);
        return NULL;
    }
    char msg[384] = "";
    if (ext && ext->try) {
        player *out = NULL;
        int rc = ext->try(ext->ctx, spec, g, cfg, &out, msg, sizeof msg);
        if (rc < 0) {
            snprintf(err, errlen, "player \"%s\": %s", spec, msg);
            return NULL;
        }
        if (rc > 0) {
            assert(out);
            return out;
        }
    }
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    memcpy(kind, spec, klen);
    kind[klen] = 0;
    for (int i = 0; player_kinds[i]; i++) {
        const player_kind *k = player_kinds[i];
        if (strcmp(k->name, kind) != 0)
            continue;
        player *p = player_alloc(spec, k->name, g);
        if (!p) {
            snprintf(err, errlen, "player \"%s\": out of memory", spec);
            return NULL;
        }
        if (k->create(p, colon ? colon + 1 : NULL, g, cfg, msg, sizeof msg) < 0) {
            snprintf(err, errlen, "player \"%s\": %s", spec, msg);
            free(p); /* create cleans up after itself on failure */
            return NULL;
        }
        assert(p->choose);
        return p;
    }
    int n = snprintf(err, errlen, "player \"%s\": unknown kind \"%s\" (known:", spec, kind);
    for (int i = 0; player_kinds[i] && n >= 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, " %s", player_kinds[i]->syntax);
    if (ext && ext->syntax && n >= 0 && (size_t)n < errlen)
        n += snprintf(err + n, errlen - (size_t)n, " %s", ext->syntax);
    if (ext && ext->syntax2 && n >= 0 && (size_t)n < errlen)
        n += snprintf(err + n, errlen - (size_t)n, " %s", ext->syntax2);
    if (n >= 0 && (size_t)n < errlen)
        snprintf(err + n, errlen - (size_t)n, ")");
    return NULL;
}

int player_choose(player *p, const game_state *s, rng *r, player_info *info, char *err,
                  size_t errlen)
{
    if (info)
        player_info_clear(info);
    int a = p->choose(p, s, r, info, err, errlen);
    if (a >= 0 && info)
        info->action = a;
    return a;
}

void player_notify_move(player *p, const game_state *s_before, int action)
{
    if (p->notify_move)
        p->notify_move(p, s_before, action);
}

void player_reset(player *p)
{
    if (p->reset)
        p->reset(p);
}

void player_print_kinds(FILE *f, const player_ext *ext)
{
    for (int i = 0; player_kinds[i]; i++)
        fprintf(f, "  %-20s %s\n", player_kinds[i]->syntax, player_kinds[i]->help);
    if (ext && ext->syntax)
        fprintf(f, "  %-20s %s\n", ext->syntax, ext->help ? ext->help : "");
    if (ext && ext->syntax2)
        fprintf(f, "  %-20s %s\n", ext->syntax2, ext->help2 ? ext->help2 : "");
}
