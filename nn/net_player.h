/* net_player.h — the network player "model:FILE[:sims][:Ts][:precision]" for engine/'s
 * player table.
 *
 * A model player is engine/'s PUCT player (player_mcts_new) valuing positions with the
 * network evaluator of the checkpoint FILE: `sims` simulations per move (default: the
 * config's arena.simulations), at precision fp32, bf16, int8 or auto (default: the
 * config's net.precision; so one arena can match a model's int8 against its fp32).
 * With ":Ts" each search also stops after T seconds of wall clock (matches at equal
 * time: "model:a.h5:0.5s"); sims is then the cap, NET_PLAYER_TIMED_SIMS when absent.
 * engine/ never learns about networks: the command line hands net_player_ext() to
 * player_new as its extension hook.
 */
#ifndef GZ_NN_NET_PLAYER_H
#define GZ_NN_NET_PLAYER_H

#include "engine/player.h"

/* The simulation cap of a timed model player that names none. */
#define NET_PLAYER_TIMED_SIMS 20000

/* The extension that makes "model:..." players. Borrowed, static. */
const player_ext *net_player_ext(void);

/* Makes and frees each arena.baselines player of c for game g (with the model players
 * of net_player_ext), so that a bad spec is found before any work. Returns 0, or -1
 * with a message naming the config file (cfg_path; NULL: the built-in one) and the key:
 * "FILE: key arena.baselines[B]: why". */
int net_player_check_baselines(const gz_config *c, const game *g, const char *cfg_path,
                               char *err, size_t errlen);

/* Splits "FILE[:sims]" into the path (written into path[len]) and the simulation count
 * (*sims, 0 when absent). A trailing ":digits" is the count; anything else belongs to
 * the path. Returns 0, or -1 with a message (empty path, sims 0 or too long a path). */
int net_player_parse(const char *arg, char *path, size_t len, int *sims, char *err, size_t errlen);

/* The seed of the search tree of the model player spec ("model:...", whole) made with
 * cfg: one seed per spec, so two model players of one game search apart; another front
 * end's search with the model (nn/brain.h) uses it to search as that player does. */
uint64_t net_player_seed(const gz_config *cfg, const char *spec);

#endif
