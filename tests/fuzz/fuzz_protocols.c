/* fuzz_protocols.c — a libFuzzer target for the two protocol line modules (optional;
 * the always-run check is tests/test_protocols_fuzz.c). The input is split at '\n'
 * and fed line by line to a pbrain and a GTP session (random player, so no search
 * time), both kept across inputs like a long-lived engine process. Build and run with
 * tests/fuzz/run (clang with libFuzzer, ASan and UBSan). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gtp.h"
#include "cli/pbrain.h"
#include "engine/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static pbrain *pb;
static gtp *gs;
static FILE *sink;

static void setup(void)
{
    gz_config c;
    char err[512];
    const char *json = "{\"seed\": 1, \"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5},"
                       " \"mcts\": {\"simulations\": 4, \"batch\": 2}}";
    if (cfg_parse(&c, json, "fuzz", err, sizeof err) < 0)
        abort();
    brain_opts bo = {.spec = "random"};
    pb = pbrain_new(&c, &bo, true, err, sizeof err);
    gs = gtp_new(&c, &bo, err, sizeof err);
    sink = fopen("/dev/null", "w");
    if (!pb || !gs || !sink)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!pb)
        setup();
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    /* A line ends at '\n' (and, as read by getline, never holds a NUL: cut there). */
    for (char *line = buf, *next; line && line <= buf + size; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        if (pbrain_line(pb, line, sink)) {
            /* END: a new process would start; keep the session (it stays usable). */
        }
        (void)gtp_line(gs, line, sink);
        if (!next)
            break;
    }
    free(buf);
    return 0;
}
