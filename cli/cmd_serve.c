/* gridzero serve [-c CONFIG] [-m MODEL] [--run RUN_DIR] [--port 8080] [--bind ADDR] —
 * the browser front end (web/): play and analyse games, watch a run. This file only
 * parses the options and waits for Ctrl-C. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "nn/brain.h"
#include "web/web.h"

static void serve_usage(FILE *f)
{
    fprintf(f,
            "usage: gridzero serve [-c CONFIG] [--set KEY=VALUE]... [-m MODEL] [--run RUN_DIR]\n"
            "                      [--port N] [--bind ADDR] [limits]\n\n"
            "Serves a page to play against any player, analyse positions with the model and\n"
            "watch a run's ratings and losses live, and the JSON API behind it (docs/serve.md).\n"
            "Open http://localhost:PORT/ in a browser. Ctrl-C stops it.\n\n"
            "  -c, --config FILE   the config: the default game and the search settings (default:\n"
            "                      RUN_DIR/config.json with --run, else the built-in tic-tac-toe)\n"
            "  --set KEY=VALUE     override a config key\n"
            "  -m, --model FILE    the model of player \"model\" and of the analysis (default with\n"
            "                      --run: the run's best model at each request; without either,\n"
            "                      Gomoku (freestyle, five) gets the shipped models/gomoku15.h5)\n"
            "  --run RUN_DIR       the run directory of the dashboard (read only, never locked)\n"
            "  --port N            the port (default 8080; 0: any free port, printed)\n"
            "  --bind ADDR         the address to listen on (default 127.0.0.1: this machine only;\n"
            "                      anything else lets other machines play with your CPU)\n"
            "  --max-sessions N    games kept at once (default 16; the least recently used idle\n"
            "                      one is dropped for a new one)\n"
            "  --max-searches N    searches running at once (default 2)\n"
            "  --max-playouts N    simulations a search may ask for (default 10000)\n"
            "  --max-seconds T     seconds a search may run (default 60)\n"
            "  --max-body BYTES    request body size (default 65536)\n"
            "  --threads N         HTTP threads (default 4)\n"
            "  --quiet             no request log on stderr\n");
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int cmd_serve(int argc, char **argv)
{
    web_opts o;
    web_opts_default(&o);
    const char *cfg_path = NULL;
    char **sets = malloc(sizeof(char *) * (size_t)argc);
    if (!sets)
        return EXIT_FAIL;
    int nsets = 0, rc = EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        int n;
        double t;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            serve_usage(stdout);
            free(sets);
            return EXIT_OK;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && more) {
            cfg_path = argv[++i];
        } else if (!strcmp(a, "--set") && more) {
            sets[nsets++] = argv[++i];
        } else if ((!strcmp(a, "-m") || !strcmp(a, "--model")) && more) {
            o.model = argv[++i];
        } else if (!strcmp(a, "--run") && more) {
            o.run_dir = argv[++i];
        } else if (!strcmp(a, "--bind") && more) {
            o.bind = argv[++i];
        } else if (!strcmp(a, "--port") && more) {
            if (cli_parse_int(argv[++i], 0, 65535, &o.port) < 0) {
                cli_error("serve: --port \"%s\": expected 0..65535", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--max-sessions") && more) {
            if (cli_parse_int(argv[++i], 1, 4096, &o.max_sessions) < 0) {
                cli_error("serve: --max-sessions \"%s\": expected 1..4096", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--max-searches") && more) {
            if (cli_parse_int(argv[++i], 1, 256, &o.max_searches) < 0) {
                cli_error("serve: --max-searches \"%s\": expected 1..256", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--max-playouts") && more) {
            if (cli_parse_int(argv[++i], 1, 10000000, &o.max_playouts) < 0) {
                cli_error("serve: --max-playouts \"%s\": expected 1..10000000", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--max-seconds") && more) {
            if (cli_parse_duration(argv[++i], &t) < 0) {
                cli_error("serve: --max-seconds \"%s\": expected a duration (30, 90s, 5m)", argv[i]);
                goto out;
            }
            o.max_seconds = t;
        } else if (!strcmp(a, "--max-body") && more) {
            if (cli_parse_int(argv[++i], 256, 64 << 20, &n) < 0) {
                cli_error("serve: --max-body \"%s\": expected 256..%d bytes", argv[i], 64 << 20);
                goto out;
            }
            o.max_body = (size_t)n;
        } else if (!strcmp(a, "--threads") && more) {
            if (cli_parse_int(argv[++i], 1, 64, &o.threads) < 0) {
                cli_error("serve: --threads \"%s\": expected 1..64", argv[i]);
                goto out;
            }
        } else if (!strcmp(a, "--quiet")) {
            o.quiet = true;
        } else {
            cli_error("serve: unknown or incomplete option \"%s\" (see gridzero serve --help)", a);
            goto out;
        }
    }
    char run_cfg[1100];
    if (!cfg_path && o.run_dir) {
        snprintf(run_cfg, sizeof run_cfg, "%s/config.json", o.run_dir);
        if (access(run_cfg, R_OK) == 0)
            cfg_path = run_cfg;
    }
    if (cli_load_config(&o.cfg, cfg_path, sets, nsets))
        goto out;
    o.cfg_name = cfg_path;
    char shipped[1024];
    if (!o.model && !o.run_dir && brain_shipped_model(&o.cfg, shipped, sizeof shipped) == 0)
        o.model = shipped;
    char err[1024];
    web_server *s = web_start(&o, err, sizeof err);
    if (!s) {
        cli_error("serve: %s", err);
        goto out;
    }
    /* only once the address is known to be good and bound */
    if (!web_is_loopback(o.bind))
        fprintf(stderr, "serve: warning: listening on %s, not loopback: anyone who can reach this "
                        "machine can use the page and its searches\n", o.bind);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    const char *host = strchr(o.bind, ':') ? "[::1]" : "localhost";
    if (!web_is_loopback(o.bind))
        host = o.bind;
    printf("gridzero serve: http://%s:%d/ (%s%s%s%s%s); Ctrl-C stops\n", host, web_port(s),
           cfg_path ? cfg_path : "built-in config", o.model ? ", model " : "", o.model ? o.model : "",
           o.run_dir ? ", run " : "", o.run_dir ? o.run_dir : "");
    fflush(stdout);
    while (!stop_requested)
        pause();
    web_stop(s);
    printf("gridzero serve: stopped\n");
    rc = EXIT_OK;
out:
    free(sets);
    return rc;
}
