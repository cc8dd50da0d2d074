/* cli_players.c — the player kinds the command line adds to engine/'s: the network
 * player "model:FILE[:sims]" (nn/net_player.h), through a player_ext, so engine/ never
 * learns about networks. */
#include "commands.h"
#include "engine/parse.h"
#include "nn/net_player.h"

const player_ext *cli_player_ext(void) { return net_player_ext(); }

int cli_check_baselines(const gz_config *c, const game *g, const char *cfg_path)
{
    char err[1024];
    if (net_player_check_baselines(c, g, cfg_path, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_duration(const char *s, double *seconds)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double unit = 1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        unit = 60, end++;
    else if (*end == 'h')
        unit = 3600, end++;
    if (errno || *end || end == s || !(v > 0) || v * unit > 1e9)
        return -1;
    *seconds = v * unit;
    return 0;
}

int cli_parse_int(const char *s, int lo, int hi, int *out)
{
    return parse_int(s, lo, hi, out);
}
