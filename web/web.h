/* web.h — `gridzero serve`: an HTTP server (libmicrohttpd) that serves the browser page
 * (HTML/CSS/JS embedded in the binary at build time) and a JSON API to play and analyse
 * games and to watch a run directory (docs/serve.md documents the API).
 *
 * Safety, by construction: it binds to loopback unless told otherwise; every request
 * body is size-limited, parsed strictly and validated field by field (a bad request
 * gets a 4xx with a JSON message naming the field; the server keeps running); the
 * number of sessions, of concurrent searches, their playouts and their time are
 * bounded; static files come from a table compiled into the binary (no request path is
 * ever opened), and the only files read are the configured model and run directory.
 * Searches run in background threads; the HTTP threads only parse, start, poll and
 * answer, so a slow or abandoned client cannot block another.
 *
 * This module knows the game interface, players, the search, the network evaluator and
 * the run directory; it must not know the command line (cli/ parses the options).
 */
#ifndef GZ_WEB_H
#define GZ_WEB_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/config.h"

typedef struct web_opts {
    const char *bind;      /* address to listen on (IPv4 or IPv6 literal); default 127.0.0.1 */
    int port;              /* 0: any free port (web_port says which); default 8080 */
    gz_config cfg;         /* the config: the default game, search and network settings */
    const char *cfg_name;  /* names the config in messages (a file name, or NULL) */
    const char *model;     /* the model file players "model" and analysis use; NULL = none */
    const char *run_dir;   /* the run directory of the dashboard (GET /api/run); NULL = none */
    int max_sessions;      /* games kept at once (least recently used idle one dropped) */
    int max_searches;      /* searches running at once (more: 503) */
    size_t max_body;       /* request body bytes (more: 413) */
    int max_playouts;      /* simulations a search may ask for (more: 400) */
    double max_seconds;    /* wall-clock seconds a search may run (then it stops) */
    int threads;           /* HTTP worker threads */
    bool quiet;            /* no request log on stderr */
} web_opts;

/* Fills o with the defaults above (cfg: the built-in default config). */
void web_opts_default(web_opts *o);

typedef struct web_server web_server;

/* Starts serving in background threads and returns at once. o is copied (strings too).
 * Reads the model (checking that it loads for the config's game) and checks the run
 * directory before it listens. Returns the server (stop with web_stop) or NULL with a
 * message in err (bad address, port in use, unreadable model or run directory). */
web_server *web_start(const web_opts *o, char *err, size_t errlen);

/* The port it listens on (useful after port 0). */
int web_port(const web_server *s);

/* Stops listening, cancels and joins every search, frees everything. Accepts NULL. */
void web_stop(web_server *s);

/* Whether addr (an IP literal) is a loopback address (127.0.0.0/8, ::1). */
bool web_is_loopback(const char *addr);

#endif
