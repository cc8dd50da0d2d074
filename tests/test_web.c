/* gridzero serve (web/): the server is started in this process on a free port (port 0)
 * and spoken to over real sockets in HTTP/1.1: a protocol transcript of a tic-tac-toe
 * game (new, move, an illegal move, genmove, analyze with a model, undo, load), a
 * Sanling board, the limits (body size, sessions, concurrent searches, cancellation),
 * the refusals (malformed JSON, unknown fields, paths, methods, content types, Host
 * names, player specs that name files), a seat's instant VCF win, the run dashboard on a fabricated run
 * directory, and a few hundred malformed requests after which the server still
 * answers. Fixed seeds; about ten seconds. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/config.h"
#include "engine/game.h"
#include "engine/rng.h"
#include "model_util.h"
#include "web/web.h"
#include "cli_util.h"

/* ---- a small HTTP client ---- */

typedef struct http_resp {
    int status;
    char *raw;   /* the whole answer (owned) */
    char *body;  /* into raw */
    cJSON *json; /* the body parsed (owned), NULL when not JSON */
} http_resp;

static void resp_free(http_resp *r)
{
    free(r->raw);
    cJSON_Delete(r->json);
    memset(r, 0, sizeof *r);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s", strerror(errno));
    return fd;
}

static void send_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, buf, n, MSG_NOSIGNAL);
        if (k <= 0)
            return; /* the server may hang up on a bad request: reading says what it did */
        buf += k;
        n -= (size_t)k;
    }
}

/* Reads until the server closes; parses the status line and the body. */
static http_resp read_resp(int fd)
{
    http_resp r = {0};
    size_t cap = 1 << 16, len = 0;
    r.raw = malloc(cap);
    for (;;) {
        if (len + 4096 > cap)
            r.raw = realloc(r.raw, cap *= 2);
        ssize_t k = recv(fd, r.raw + len, cap - len - 1, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    r.raw[len] = 0;
    close(fd);
    if (sscanf(r.raw, "HTTP/1.%*d %d", &r.status) != 1)
        r.status = -1;
    char *b = strstr(r.raw, "\r\n\r\n");
    r.body = b ? b + 4 : r.raw + len;
    r.json = cJSON_Parse(r.body);
    return r;
}

static http_resp request(int port, const char *method, const char *path, const char *ctype,
                         const char *body, const char *extra_headers)
{
    int fd = connect_to(port);
    size_t blen = body ? strlen(body) : 0;
    char head[2048];
    char host[64] = "";
    if (!extra_headers || strncmp(extra_headers, "Host:", 5))
        snprintf(host, sizeof host, "Host: localhost:%d\r\n", port);
    int n = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\n%sConnection: close\r\n%s%s%s", method,
                     path, host, ctype ? "Content-Type: " : "", ctype ? ctype : "", ctype ? "\r\n" : "");
    if (body)
        n += snprintf(head + n, sizeof head - (size_t)n, "Content-Length: %zu\r\n", blen);
    n += snprintf(head + n, sizeof head - (size_t)n, "%s\r\n", extra_headers ? extra_headers : "");
    send_all(fd, head, (size_t)n);
    if (body)
        send_all(fd, body, blen);
    return read_resp(fd);
}

static http_resp post(int port, const char *path, const char *body)
{
    return request(port, "POST", path, "application/json", body, NULL);
}

/* POST with a printf-made body. */
static http_resp postf(int port, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static http_resp postf(int port, const char *path, const char *fmt, ...)
{
    char body[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    return post(port, path, body);
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *k)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* Expects status and, for an error, a message containing want. */
static void expect_error(http_resp *r, int status, const char *want)
{
    ck_assert_msg(r->status == status, "status %d (expected %d): %s", r->status, status, r->body);
    const char *e = str_of(r->json, "error");
    ck_assert_msg(e != NULL, "no error message: %s", r->body);
    ck_assert_msg(!want || strstr(e, want), "error \"%s\" does not say \"%s\"", e, want);
    resp_free(r);
}

/* Polls the session until its search is no longer running; returns the state. */
static http_resp wait_search(int port, const char *sid)
{
    for (int i = 0; i < 2000; i++) {
        http_resp r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid);
        ck_assert_int_eq(r.status, 200);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
        const char *st = str_of(s, "status");
        if (!st || strcmp(st, "running"))
            return r;
        resp_free(&r);
        usleep(10000);
    }
    ck_abort_msg("search did not finish");
    return (http_resp){0};
}

/* Starts a search (POST path with the session and the extra fields, e.g. ", \"playouts\":
 * 9") and waits for it; returns the state. */
static http_resp start_and_wait(int port, const char *sid, const char *path, const char *extra)
{
    http_resp r = postf(port, path, "{\"session\": \"%s\"%s}", sid, extra);
    ck_assert_msg(r.status == 200, "%s: %s", path, r.body);
    resp_free(&r);
    return wait_search(port, sid);
}

/* ---- fixtures ---- */

static char tmpdir[64];
static web_server *srv;
static int port;

static void start(web_opts *o)
{
    o->port = 0;
    o->quiet = true;
    char err[512];
    srv = web_start(o, err, sizeof err);
    ck_assert_msg(srv != NULL, "%s", err);
    port = web_port(srv);
    ck_assert_int_gt(port, 0);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gz_test_web_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    web_stop(srv);
    srv = NULL;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* ---- tests ---- */

START_TEST(transcript_tictactoe)
{
    web_opts o;
    web_opts_default(&o);
    char model[128];
    snprintf(model, sizeof model, "%s/model.h5", tmpdir);
    model_write_random(model, &o.cfg, 11); /* tic-tac-toe */
    o.model = model;
    start(&o);

    http_resp r = request(port, "GET", "/api/info", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(str_of(r.json, "model"), "model.h5");
    ck_assert_str_eq(str_of(r.json, "hint"), "model");
    resp_free(&r);

    /* a new game: the person in seat 1 against alpha-beta */
    r = post(port, "/api/new", "{\"opponent\": \"alphabeta:4\", \"seat\": 1}");
    ck_assert_msg(r.status == 200, "%s", r.body);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    ck_assert_int_eq(strlen(sid), 32);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(r.json, "game");
    ck_assert_str_eq(str_of(g, "name"), "mnk");
    ck_assert_int_eq((int)num_of(g, "rows"), 3);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "board")), 9);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "legal")), 9);
    ck_assert_int_eq((int)num_of(r.json, "to_move"), 0);
    resp_free(&r);

    /* a move in notation, then the same point again: illegal, 400 with a message */
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"b2\"}", sid);
    ck_assert_msg(r.status == 200, "%s", r.body);
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "board"), 4)->valuedouble, 0);
    ck_assert_int_eq((int)num_of(r.json, "ply"), 1);
    resp_free(&r);
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"b2\"}", sid);
    expect_error(&r, 400, "b2 is not a legal move");
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"z9\"}", sid);
    expect_error(&r, 400, "field \"move\": cannot read");
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"action\": 9}", sid);
    expect_error(&r, 400, "field \"action\"");

    /* the seat to move is alpha-beta's: genmove plays its move in the background */
    r = start_and_wait(port, sid, "/api/genmove", "");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_str_eq(str_of(s, "player"), "alphabeta:4");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "played")));
    ck_assert_int_eq((int)num_of(r.json, "ply"), 2);
    ck_assert_int_eq((int)num_of(r.json, "to_move"), 0);
    resp_free(&r);

    /* a hint for the person (the model, not played), then an analysis with the model */
    r = start_and_wait(port, sid, "/api/genmove", ", \"player\": \"model:32\"");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_str_eq(str_of(s, "player"), "model:32");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "played")));
    ck_assert_ptr_nonnull(str_of(s, "move"));
    ck_assert_int_eq((int)num_of(r.json, "ply"), 2);
    resp_free(&r);

    r = start_and_wait(port, sid, "/api/analyze", ", \"playouts\": 100, \"graph\": true");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_str_eq(str_of(s, "evaluator"), "model");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(s, "net_wdl"))); /* a zerosum head */
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(s, "policy");
    const cJSON *vis = cJSON_GetObjectItemCaseSensitive(s, "visits");
    const cJSON *board = cJSON_GetObjectItemCaseSensitive(r.json, "board");
    ck_assert_int_eq(cJSON_GetArraySize(pol), 9);
    double psum = 0;
    int vsum = 0;
    for (int a = 0; a < 9; a++) {
        double p = cJSON_GetArrayItem(pol, a)->valuedouble;
        int v = cJSON_GetArrayItem(vis, a)->valueint;
        bool empty = cJSON_GetArrayItem(board, a)->valueint == -1;
        ck_assert_msg(empty || (p == 0 && v == 0), "an occupied point has policy or visits");
        psum += p;
        vsum += v;
    }
    ck_assert_msg(fabs(psum - 1) < 1e-3, "policy sums to %g", psum);
    ck_assert_int_ge(vsum, 95);
    ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "pv")), 1);
    ck_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(s, "value")));
    /* the value graph: every position so far has a value */
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(r.json, "values");
    ck_assert_int_eq(cJSON_GetArraySize(vals), 3);
    for (int k = 0; k < 3; k++)
        ck_assert(cJSON_IsArray(cJSON_GetArrayItem(vals, k)));
    resp_free(&r);

    /* undo goes back to the person's previous turn (before b2 and the reply) */
    r = postf(port, "/api/undo", "{\"session\": \"%s\"}", sid);
    ck_assert_msg(r.status == 200, "%s", r.body);
    ck_assert_int_eq((int)num_of(r.json, "ply"), 0);
    resp_free(&r);
    r = postf(port, "/api/undo", "{\"session\": \"%s\"}", sid);
    expect_error(&r, 400, "nothing to take back");

    /* load a move list to the end of the game; a move after it is refused */
    r = postf(port, "/api/load", "{\"session\": \"%s\", \"moves\": \"a1 a2 b1 b2 c1\"}", sid);
    ck_assert_msg(r.status == 200, "%s", r.body);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.json, "over")));
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "result"), 0)->valuedouble, 1);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "moves")), 5);
    resp_free(&r);
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"c3\"}", sid);
    expect_error(&r, 400, "the game is over");
    r = postf(port, "/api/genmove", "{\"session\": \"%s\"}", sid);
    expect_error(&r, 400, "the game is over");
    r = postf(port, "/api/load", "{\"session\": \"%s\", \"moves\": [\"a1\", \"a1\"]}", sid);
    expect_error(&r, 400, "move 2 (a1) is not legal");
    r = postf(port, "/api/undo", "{\"session\": \"%s\", \"plies\": 2}", sid);
    ck_assert_msg(r.status == 200 && (int)num_of(r.json, "ply") == 3, "%s", r.body);
    resp_free(&r);

    /* another game: the model does not fit Sanling; named, it is refused; by default
     * analysis and hints give way to pure MCTS and say why */
    r = post(port, "/api/new", "{\"game\": {\"name\": \"sanling\", \"size\": 7, \"players\": 2, "
                               "\"moves\": 10}, \"players\": [\"human\", \"model\"]}");
    expect_error(&r, 400, "field \"players\"");
    r = post(port, "/api/new", "{\"game\": {\"name\": \"sanling\", \"size\": 7, \"players\": 2, "
                               "\"moves\": 10}, \"players\": [\"human\", \"random\"]}");
    ck_assert_msg(r.status == 200, "%s", r.body);
    char sid2[64];
    snprintf(sid2, sizeof sid2, "%s", str_of(r.json, "session"));
    resp_free(&r);
    r = postf(port, "/api/analyze", "{\"session\": \"%s\", \"evaluator\": \"model\"}", sid2);
    expect_error(&r, 400, "planes");
    r = start_and_wait(port, sid2, "/api/analyze", ", \"playouts\": 50");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "evaluator"), "rollout");
    ck_assert_msg(str_of(s, "note") && strstr(str_of(s, "note"), "pure MCTS"), "%s", r.body);
    resp_free(&r);
    r = start_and_wait(port, sid2, "/api/genmove", "");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "player"), "mcts");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "played")));
    resp_free(&r);

    /* a closed session is gone */
    r = postf(port, "/api/close", "{\"session\": \"%s\"}", sid);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
    r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid);
    expect_error(&r, 404, "no session");
}
END_TEST

START_TEST(refusals)
{
    web_opts o;
    web_opts_default(&o);
    o.max_body = 4096;
    start(&o);
    http_resp r;
    /* the page: files from the table, nothing else */
    r = request(port, "GET", "/", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.raw, "text/html"));
    ck_assert_ptr_nonnull(strstr(r.body, "<html"));
    resp_free(&r);
    r = request(port, "GET", "/app.js", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
    const char *bad_paths[] = {"/nope", "/../web/static/app.js", "/%2e%2e/%2e%2e/etc/passwd",
                               "/static/app.js", "//etc/passwd", "/index.html/", "/app.js%00.html"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        r = request(port, "GET", bad_paths[i], NULL, NULL, NULL);
        ck_assert_msg(r.status == 404 || r.status == 400, "%s: %d", bad_paths[i], r.status);
        ck_assert_ptr_null(strstr(r.body, "root:"));
        resp_free(&r);
    }
    r = request(port, "GET", "/api/nope", NULL, NULL, NULL);
    expect_error(&r, 404, "no such API endpoint");
    r = request(port, "GET", "/api/move", NULL, NULL, NULL);
    expect_error(&r, 405, "POST");
    r = request(port, "DELETE", "/", NULL, NULL, NULL);
    expect_error(&r, 405, NULL);
    r = request(port, "POST", "/api/info", "application/json", "{}", NULL);
    expect_error(&r, 405, "GET");
    /* bodies: JSON objects only, of bounded size, with the right content type */
    r = request(port, "POST", "/api/new", "text/plain", "{}", NULL);
    expect_error(&r, 415, "Content-Type: application/json");
    r = post(port, "/api/new", "{\"opponent\": ");
    expect_error(&r, 400, "not JSON");
    r = post(port, "/api/new", "[1, 2]");
    expect_error(&r, 400, "expected a JSON object");
    r = post(port, "/api/new", "{} trailing");
    expect_error(&r, 400, "not JSON");
    /* a game with random events cannot be replayed from its moves */
    r = post(port, "/api/new", "{\"game\": {\"name\": \"2048\", \"rows\": 3, \"cols\": 3}}");
    expect_error(&r, 400, "random events");
    r = post(port, "/api/new", "{\"opponnent\": \"random\"}");
    expect_error(&r, 400, "unknown field \"opponnent\"");
    char *big = malloc(8192);
    memset(big, ' ', 8191);
    big[0] = '{';
    big[8189] = '}';
    big[8190] = 0;
    r = post(port, "/api/new", big);
    expect_error(&r, 413, "limit is 4096 bytes");
    free(big);
    /* a huge body announced: refused before it is sent */
    int fd = connect_to(port);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "POST /api/new HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000000000\r\n\r\n");
    send_all(fd, head, (size_t)n);
    r = read_resp(fd);
    expect_error(&r, 413, "limit");
    /* DNS rebinding: another host name for our loopback address */
    r = request(port, "GET", "/api/info", NULL, NULL, "Host: evil.example:80\r\n");
    ck_assert_int_eq(r.status, 403);
    resp_free(&r);
    /* fields: types, ranges, game configs, player specs */
    r = post(port, "/api/new", "{\"seat\": 3}");
    expect_error(&r, 400, "field \"seat\": expected a whole number from 1 to 2");
    r = post(port, "/api/new", "{\"seat\": 1.5}");
    expect_error(&r, 400, "field \"seat\"");
    r = post(port, "/api/new", "{\"opponent\": 7}");
    expect_error(&r, 400, "field \"opponent\": expected a string");
    r = post(port, "/api/new", "{\"opponent\": \"grandmaster\"}");
    expect_error(&r, 400, "grandmaster");
    r = post(port, "/api/new", "{\"opponent\": \"model:/etc/passwd\"}");
    expect_error(&r, 400, "reads no file a request names");
    r = post(port, "/api/new", "{\"opponent\": \"model\"}");
    expect_error(&r, 400, "this server has no model");
    r = post(port, "/api/new", "{\"opponent\": \"mcts:99999999\"}");
    expect_error(&r, 400, "at most 10000");
    r = post(port, "/api/new", "{\"players\": [\"human\"]}");
    expect_error(&r, 400, "a list of 2 player specs");
    r = post(port, "/api/new", "{\"players\": [\"human\", \"random\"], \"seat\": 1}");
    expect_error(&r, 400, "not both");
    r = post(port, "/api/new", "{\"game\": {\"name\": \"mnk\", \"rows\": 99}}");
    expect_error(&r, 400, "game.rows");
    r = post(port, "/api/new", "{\"game\": {\"name\": \"chess\"}}");
    expect_error(&r, 400, "chess");
    r = post(port, "/api/new", "{\"game\": \"sanling\"}");
    expect_error(&r, 400, "field \"game\": expected an object");
    r = post(port, "/api/new", "{\"moves\": \"b2 b2\"}");
    expect_error(&r, 400, "move 2 (b2) is not legal");
    r = post(port, "/api/state", "{}");
    expect_error(&r, 400, "field \"session\" is missing");
    r = post(port, "/api/state", "{\"session\": \"0123\"}");
    expect_error(&r, 404, "no session");
    r = post(port, "/api/new", "{}");
    ck_assert_int_eq(r.status, 200);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    resp_free(&r);
    r = postf(port, "/api/analyze", "{\"session\": \"%s\", \"playouts\": 0}", sid);
    expect_error(&r, 400, "field \"playouts\"");
    r = postf(port, "/api/analyze", "{\"session\": \"%s\", \"seconds\": 1e9}", sid);
    expect_error(&r, 400, "field \"seconds\"");
    r = postf(port, "/api/analyze", "{\"session\": \"%s\", \"evaluator\": \"model\"}", sid);
    expect_error(&r, 400, "no model");
    r = postf(port, "/api/genmove", "{\"session\": \"%s\", \"player\": \"human\"}", sid);
    expect_error(&r, 400, "cannot search");
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"b2\", \"action\": 4}", sid);
    expect_error(&r, 400, "one of the two");
    r = request(port, "GET", "/api/run", NULL, NULL, NULL);
    expect_error(&r, 404, "--run");
}
END_TEST

/* A server whose own config is a game with random events is refused at the start. */
START_TEST(refuses_chance_config)
{
    web_opts o;
    web_opts_default(&o);
    cfg_defaults(&o.cfg, "2048");
    o.port = 0;
    o.quiet = true;
    char err[512] = "";
    web_server *w = web_start(&o, err, sizeof err);
    ck_assert_ptr_null(w);
    ck_assert_msg(strstr(err, "game 2048 has random events"), "%s", err);
}
END_TEST

START_TEST(sanling_board)
{
    web_opts o;
    web_opts_default(&o);
    start(&o);
    http_resp r = post(port, "/api/new", "{\"game\": {\"name\": \"sanling\", \"size\": 9, \"players\": 3, "
                                         "\"moves\": 12}, \"players\": [\"human\", \"random\", \"mcts:50\"]}");
    ck_assert_msg(r.status == 200, "%s", r.body);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(r.json, "game");
    ck_assert_str_eq(str_of(g, "lattice"), "hex");
    ck_assert_int_eq((int)num_of(g, "players"), 3);
    const cJSON *board = cJSON_GetObjectItemCaseSensitive(r.json, "board");
    ck_assert_int_eq(cJSON_GetArraySize(board), 81);
    ck_assert_int_eq(cJSON_GetArrayItem(board, 4 * 9 + 4)->valueint, -2); /* the neutral stone */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "legal")), 6);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(g, "col_labels"), 0)->valuestring, "a");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(g, "row_labels"), 0)->valuestring, "1");
    resp_free(&r);
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"a1\"}", sid);
    expect_error(&r, 400, "not a legal move"); /* not on the frontier */
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"f5\"}", sid);
    ck_assert_msg(r.status == 200, "%s", r.body);
    resp_free(&r);
    for (int k = 0; k < 2; k++) {
        r = postf(port, "/api/genmove", "{\"session\": \"%s\"}", sid);
        ck_assert_msg(r.status == 200, "%s", r.body);
        resp_free(&r);
        r = wait_search(port, sid);
        ck_assert_int_eq((int)num_of(r.json, "ply"), 2 + k);
        resp_free(&r);
    }
    r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(r.json, "score");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sc, "triangles")), 3);
    int stones = 0;
    board = cJSON_GetObjectItemCaseSensitive(r.json, "board");
    for (int a = 0; a < 81; a++)
        stones += cJSON_GetArrayItem(board, a)->valueint >= 0;
    ck_assert_int_eq(stones, 3);
    resp_free(&r);
}
END_TEST

START_TEST(limits_and_cancel)
{
    web_opts o;
    web_opts_default(&o);
    o.max_sessions = 2;
    o.max_searches = 1;
    start(&o);
    /* slow or abandoned clients (half a header, half a body) do not block the others */
    int idle[20];
    for (int i = 0; i < 20; i++) {
        idle[i] = connect_to(port);
        const char *part = i % 2 ? "POST /api/new HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                   "Content-Length: 100\r\n\r\n{\"seat\""
                                 : "GET /api/in";
        send_all(idle[i], part, strlen(part));
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    http_resp r0 = request(port, "GET", "/api/info", NULL, NULL, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_int_eq(r0.status, 200);
    ck_assert_msg(t1.tv_sec - t0.tv_sec < 2, "a request waited behind idle clients");
    resp_free(&r0);
    for (int i = 0; i < 20; i++)
        close(idle[i]);
    char sid[3][64];
    const char *big = "{\"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5}, "
                      "\"players\": [\"mcts:10000\", \"human\"]}";
    for (int i = 0; i < 2; i++) {
        http_resp r = post(port, "/api/new", big);
        ck_assert_msg(r.status == 200, "%s", r.body);
        snprintf(sid[i], sizeof sid[i], "%s", str_of(r.json, "session"));
        resp_free(&r);
    }
    /* a long search in session 0; session 1 may not start one while it runs */
    http_resp r = postf(port, "/api/genmove", "{\"session\": \"%s\", \"seconds\": 30}", sid[0]);
    ck_assert_msg(r.status == 200, "%s", r.body);
    resp_free(&r);
    r = postf(port, "/api/analyze", "{\"session\": \"%s\", \"playouts\": 10}", sid[1]);
    expect_error(&r, 503, "searches are running");
    /* a third session: the least recently used idle one (1) makes room; 0 is searching */
    r = post(port, "/api/new", "{}");
    ck_assert_msg(r.status == 200, "%s", r.body);
    snprintf(sid[2], sizeof sid[2], "%s", str_of(r.json, "session"));
    resp_free(&r);
    r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid[1]);
    expect_error(&r, 404, "no session");
    /* progress is visible while it runs; cancel stops it and plays nothing */
    usleep(100000);
    r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid[0]);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "running");
    ck_assert_int_eq((int)num_of(s, "target"), 10000);
    resp_free(&r);
    r = postf(port, "/api/cancel", "{\"session\": \"%s\"}", sid[0]);
    ck_assert_int_eq(r.status, 200);
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "cancelled");
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "played")));
    ck_assert_int_eq((int)num_of(r.json, "ply"), 0);
    resp_free(&r);
    /* the slot is free again; a time limit stops a search and plays its best move */
    r = start_and_wait(port, sid[0], "/api/genmove", ", \"seconds\": 0.2");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_int_lt((int)num_of(s, "progress"), 10000);
    ck_assert_int_eq((int)num_of(r.json, "ply"), 1);
    resp_free(&r);
    /* the same session again while a search runs: a move cancels it first */
    r = postf(port, "/api/genmove", "{\"session\": \"%s\", \"player\": \"mcts:10000\"}", sid[0]);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"a1\"}", sid[0]);
    ck_assert_msg(r.status == 200, "%s", r.body);
    ck_assert_str_eq(str_of(cJSON_GetObjectItemCaseSensitive(r.json, "search"), "status"), "cancelled");
    ck_assert_int_eq((int)num_of(r.json, "ply"), 2);
    resp_free(&r);
}
END_TEST

/* The browser's players are brains (nn/brain.h): a seat, even a random one, and a hint
 * play a forced win by fours at once. Black (to move) has h8 i8 j8 (g8 is White's) and
 * k6 k7: k8 is a four and an open three (test_brain's position). */
START_TEST(seat_plays_vcf_at_once)
{
    web_opts o;
    web_opts_default(&o);
    start(&o);
    http_resp r = post(port, "/api/new", "{\"game\": {\"name\": \"mnk\", \"rows\": 15, \"cols\": 15, \"k\": 5}, "
                                         "\"players\": [\"random\", \"human\"], "
                                         "\"moves\": \"h8 g8 i8 a1 j8 a15 k6 o1 k7 o15\"}");
    ck_assert_msg(r.status == 200, "%s", r.body);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    resp_free(&r);
    /* a hint from a search of 10,000 playouts: the proof answers at once */
    r = start_and_wait(port, sid, "/api/genmove", ", \"player\": \"mcts:10000\"");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_str_eq(str_of(s, "move"), "k8");
    ck_assert_msg(num_of(s, "seconds") < 2 && num_of(s, "progress") == 0, "%s", r.body);
    resp_free(&r);
    /* the random seat plays it, with the proven value: Black wins */
    r = start_and_wait(port, sid, "/api/genmove", "");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_str_eq(str_of(s, "status"), "done");
    ck_assert_str_eq(str_of(s, "player"), "random");
    ck_assert_str_eq(str_of(s, "move"), "k8");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "played")));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "value");
    ck_assert_msg(cJSON_GetArraySize(v) == 2 && cJSON_GetArrayItem(v, 0)->valuedouble == 1 &&
                      cJSON_GetArrayItem(v, 1)->valuedouble == -1, "%s", r.body);
    ck_assert_int_eq((int)num_of(r.json, "ply"), 11);
    resp_free(&r);
    /* White blocks the five's end at l8; the seat goes on with the win */
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"l8\"}", sid);
    ck_assert_msg(r.status == 200, "%s", r.body);
    resp_free(&r);
    r = start_and_wait(port, sid, "/api/genmove", "");
    s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    ck_assert_msg(!strcmp(str_of(s, "move"), "k9") || !strcmp(str_of(s, "move"), "k5"), "%s", r.body);
    resp_free(&r);
}
END_TEST

/* A run directory as `gridzero run` leaves it after two generations, with a third
 * generation's arena file still being written (.tmp). */
static void fabricate_run(void)
{
    char p[256];
    const char *subs[] = {"models", "data", "arena"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, subs[i]);
        ck_assert_int_eq(mkdir(p, 0777), 0);
    }
    gz_config c;
    char err[256];
    ck_assert(cfg_load(&c, NULL, err, sizeof err) == 0);
    char *cj = cfg_to_json(&c);
    write_file("config.json", cj);
    free(cj);
    write_file("state.json", "{\"generation\": 3, \"stage\": \"train\", \"best\": \"models/gen_0002.h5\"}\n");
    write_file("clock.json", "{\"seconds\": 95.5}\n");
    write_file("best", "models/gen_0002.h5\n");
    for (int k = 0; k <= 3; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "models/gen_%04d.h5", k);
        write_file(rel, "");
        if (k) {
            snprintf(rel, sizeof rel, "data/gen_%04d.h5", k);
            write_file(rel, "");
        }
    }
    /* gen 1 beats gen 0 3-1, random 4-0; gen 2 beats gen 1 2-2 (draws), random 4-0 */
    char *a1 = NULL, *a2 = NULL;
    size_t l1, l2;
    FILE *f1 = open_memstream(&a1, &l1), *f2 = open_memstream(&a2, &l2);
    for (int i = 0; i < 4; i++) {
        fprintf(f1, "{\"game\":\"mnk\",\"players\":[\"gen_0001\",\"gen_0000\"],\"result\":[%d,%d],"
                    "\"moves\":[\"b2\",\"a1\"],\"opening\":0,\"seed\":1,\"index\":%d}\n",
                i < 3 ? 1 : -1, i < 3 ? -1 : 1, i);
        fprintf(f1, "{\"game\":\"mnk\",\"players\":[\"random\",\"gen_0001\"],\"result\":[-1,1],"
                    "\"moves\":[\"a1\",\"b2\"],\"opening\":0,\"seed\":1,\"index\":%d}\n", i + 4);
        fprintf(f2, "{\"game\":\"mnk\",\"players\":[\"gen_0002\",\"gen_0001\"],\"result\":[%d,%d],"
                    "\"moves\":[\"a1\",\"b2\",\"c3\"],\"opening\":0,\"seed\":1,\"index\":%d}\n",
                i < 2 ? 1 : 0, i < 2 ? -1 : 0, i);
        fprintf(f2, "{\"game\":\"mnk\",\"players\":[\"gen_0002\",\"random\"],\"result\":[1,-1],"
                    "\"moves\":[\"b2\",\"a1\"],\"opening\":0,\"seed\":1,\"index\":%d}\n", i + 4);
    }
    fclose(f1);
    fclose(f2);
    write_file("arena/gen_0001.jsonl", a1);
    write_file("arena/gen_0002.jsonl", a2);
    free(a1);
    free(a2);
    write_file("arena/gen_0003.jsonl.tmp",
               "{\"game\":\"mnk\",\"players\":[\"gen_0003\",\"random\"],\"result\":[1,-1],\"moves\":[]}\n");
    /* events, the last line cut short as if being appended */
    write_file("metrics.jsonl",
               "{\"event\":\"selfplay\",\"generation\":1,\"games\":16,\"positions_per_s\":100,\"draws\":3,\"run_seconds\":10}\n"
               "{\"event\":\"train\",\"generation\":1,\"step\":10,\"policy\":2.1,\"value\":0.9,\"total\":3,\"run_seconds\":20}\n"
               "{\"event\":\"train\",\"generation\":1,\"step\":20,\"policy\":1.9,\"value\":0.8,\"total\":2.7,\"run_seconds\":25}\n"
               "{\"event\":\"arena\",\"generation\":1,\"gen_0000\":{\"wins\":3,\"draws\":0,\"losses\":1},\"run_seconds\":40}\n"
               "{\"event\":\"selfplay\",\"generation\":2,\"games\":16,\"positions_per_s\":120,\"draws\":5,\"run_seconds\":50}\n"
               "{\"event\":\"train\",\"generation\":2,\"step\":20,\"policy\":1.7,\"value\":0.7,\"total\":2.4,\"run_seconds\":60}\n"
               "{\"event\":\"arena\",\"generation\":2,\"run_seconds\":80}\n"
               "{\"event\":\"selfplay\",\"generation\":3,\"games\":16,\"positions_per_s\":130,\"draws\":6,\"run_seconds\":90}\n"
               "{\"event\":\"train\",\"generation\":3,\"step\":5,\"pol");
}

START_TEST(run_dashboard)
{
    fabricate_run();
    web_opts o;
    web_opts_default(&o);
    o.run_dir = tmpdir;
    start(&o);
    http_resp r = request(port, "GET", "/api/run", NULL, NULL, NULL);
    ck_assert_msg(r.status == 200, "%s", r.body);
    const cJSON *gens = cJSON_GetObjectItemCaseSensitive(r.json, "generations");
    ck_assert_int_eq(cJSON_GetArraySize(gens), 4); /* 0..3: gen 3 has a model, no arena yet */
    ck_assert_int_eq((int)num_of(r.json, "seconds"), 95);
    ck_assert_int_eq((int)num_of(r.json, "best"), 2);
    const cJSON *g1 = cJSON_GetArrayItem(gens, 1), *g2 = cJSON_GetArrayItem(gens, 2),
                *g3 = cJSON_GetArrayItem(gens, 3);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g1, "promoted")));
    ck_assert_double_eq_tol(num_of(g1, "score_vs_best"), 0.75, 1e-9);
    ck_assert_double_eq_tol(num_of(g2, "score_vs_best"), 0.75, 1e-9);
    ck_assert_int_eq((int)num_of(g2, "vs_best"), 1);
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g3, "arena_done")));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(g3, "elo")); /* the .tmp is not read */
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(g2, "elo")));
    ck_assert_double_le(num_of(g2, "lo"), num_of(g2, "elo"));
    ck_assert_double_ge(num_of(g2, "hi"), num_of(g2, "elo"));
    ck_assert_int_eq((int)num_of(g2, "seconds"), 80);
    ck_assert_int_eq((int)num_of(cJSON_GetObjectItemCaseSensitive(g1, "train"), "steps"), 20);
    ck_assert_int_eq((int)num_of(cJSON_GetObjectItemCaseSensitive(g1, "selfplay"), "games"), 16);
    ck_assert_int_eq((int)num_of(cJSON_GetObjectItemCaseSensitive(g3, "selfplay"), "positions_per_s"), 130);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "losses")), 3);
    const cJSON *ratings = cJSON_GetObjectItemCaseSensitive(r.json, "ratings");
    ck_assert_int_eq(cJSON_GetArraySize(ratings), 4); /* gen 0, 1, 2 and random */
    const cJSON *games = cJSON_GetObjectItemCaseSensitive(r.json, "games");
    ck_assert_int_eq(cJSON_GetArraySize(games), 8);
    ck_assert_int_eq((int)num_of(r.json, "games_generation"), 2);
    ck_assert_str_eq(str_of(cJSON_GetObjectItemCaseSensitive(r.json, "state"), "stage"), "train");
    resp_free(&r);
    /* models are named, never given by path: the best, a generation, a missing one */
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_0009\"}");
    expect_error(&r, 400, "no finished model gen_0009");
    r = post(port, "/api/new", "{\"opponent\": \"model:../gen_0001\"}");
    expect_error(&r, 400, "reads no file");
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_0001:8\"}");
    expect_error(&r, 400, "gen_0001.h5"); /* an empty file here: the loader's message */
    /* with train.swa generation 1 played as its average: gen_0001 names that file */
    write_file("models/swa_0001.h5", "");
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_0001:8\"}");
    expect_error(&r, 400, "swa_0001.h5");
    char swa[256];
    snprintf(swa, sizeof swa, "%s/models/swa_0001.h5", tmpdir);
    ck_assert_int_eq(unlink(swa), 0);
    /* numbers that would wrap: 2^32 + 8 simulations are not 8, gen_2^32+1 is not gen 1 */
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_0001:4294967304\"}");
    expect_error(&r, 400, "expected model[:SIMS]");
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_4294967297\"}");
    expect_error(&r, 400, "expected model[:SIMS]");
    r = post(port, "/api/new", "{\"opponent\": \"model:gen_0001:999999999\"}");
    expect_error(&r, 400, "simulations a move");
    r = request(port, "GET", "/api/info", NULL, NULL, NULL);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.json, "run")));
    resp_free(&r);
    /* forged arena files count for nothing: not a generation, not the best, no games;
     * the warnings name them */
    write_file("arena/gen_0099.jsonl", "{}\n");
    write_file("arena/gen_0003.jsonl",
               "{\"players\":[\"gen_0003\",\"gen_0002\"],\"result\":[1,-1]}\ngarbage\n");
    write_file("arena/gen_99999999999.jsonl", "{}\n");
    usleep(600 * 1000); /* past the summary's cache */
    r = request(port, "GET", "/api/run", NULL, NULL, NULL);
    ck_assert_msg(r.status == 200, "%s", r.body);
    gens = cJSON_GetObjectItemCaseSensitive(r.json, "generations");
    ck_assert_int_eq(cJSON_GetArraySize(gens), 4);
    ck_assert_int_eq((int)num_of(r.json, "best"), 2);
    g3 = cJSON_GetArrayItem(gens, 3);
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g3, "arena_done")));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(g3, "elo"));
    ck_assert_int_eq((int)num_of(r.json, "games_generation"), 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "ratings")), 4);
    char *w = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(r.json, "warnings"));
    ck_assert_msg(strstr(w, "gen_0099.jsonl:1") && strstr(w, "gen_0003.jsonl:2"), "%s", w);
    free(w);
    resp_free(&r);
}
END_TEST

/* A model with a win/draw/loss head: the analysis shows its win, draw and loss chances
 * for the player to move (net_wdl, summing to 1, W - L the network's value); a model
 * without one shows none (transcript_tictactoe: null). */
START_TEST(analysis_shows_wdl)
{
    web_opts o;
    web_opts_default(&o);
    snprintf(o.cfg.net.value_head, sizeof o.cfg.net.value_head, "wdl");
    char model[128];
    snprintf(model, sizeof model, "%s/wdl.h5", tmpdir);
    model_write_random(model, &o.cfg, 5);
    o.model = model;
    start(&o);
    http_resp r = post(port, "/api/new", "{\"players\": [\"human\", \"human\"], \"moves\": \"b2\"}");
    ck_assert_int_eq(r.status, 200);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    resp_free(&r);
    r = start_and_wait(port, sid, "/api/analyze", ", \"playouts\": 20");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r.json, "search");
    const cJSON *wdl = cJSON_GetObjectItemCaseSensitive(s, "net_wdl");
    ck_assert_msg(cJSON_GetArraySize(wdl) == 3, "%s", r.body);
    double w = cJSON_GetArrayItem(wdl, 0)->valuedouble, d = cJSON_GetArrayItem(wdl, 1)->valuedouble,
           l = cJSON_GetArrayItem(wdl, 2)->valuedouble;
    ck_assert(w > 0 && d > 0 && l > 0);
    ck_assert_double_eq_tol(w + d + l, 1.0, 1e-3);
    /* the mover is White (seat 2) after b2 */
    double v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(s, "net_value"), 1)->valuedouble;
    ck_assert_double_eq_tol(w - l, v, 2e-3);
    resp_free(&r);
}
END_TEST

/* serve with a bad --bind address: refused (exit 2) with no "not loopback" warning first
 * (it came before the address was checked). */
START_TEST(serve_bad_bind)
{
    char *out, *err;
    int rc = run_bin("serve --bind 999.1.1.1 --port 0", NULL, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "999.1.1.1") && !strstr(err, "not loopback"), "%s", err);
    free(out);
    free(err);
}
END_TEST

/* Seconds of one request to path with body a and with body b, taken in turns (the same
 * conditions for both), the fastest of seven each: what each costs, not the noise. */
static void request_pair_seconds(const char *path, const char *a, const char *b, int want_status,
                                 double *ta, double *tb)
{
    *ta = *tb = 1e9;
    for (int k = 0; k < 14; k++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        http_resp r = post(port, path, k % 2 ? b : a);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ck_assert_msg(r.status == want_status, "status %d: %.200s", r.status, r.body);
        resp_free(&r);
        double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        double *slot = k % 2 ? tb : ta;
        *slot = t < *slot ? t : *slot;
    }
}

/* What an adversarial round found (issue 45): numbers that wrap into moves, move lists
 * that cost quadratic time, NULs inside strings, duplicate keys, a Content-Type matched
 * by its prefix. Each is refused with a message naming it, and changes nothing. */
START_TEST(hostile_bodies)
{
    web_opts o;
    web_opts_default(&o);
    o.max_body = 65536;
    start(&o);
    http_resp r;
    const char *game9 = "\"game\": {\"name\": \"mnk\", \"rows\": 9, \"cols\": 9, \"k\": 5}";
    /* 2^32 + 1 is not 1: no stone lands on a1 or b3 */
    r = postf(port, "/api/new", "{%s, \"moves\": [\"a4294967297\"]}", game9);
    expect_error(&r, 400, "a4294967297");
    r = postf(port, "/api/new", "{%s, \"moves\": \"h8\"}", game9);
    ck_assert_int_eq(r.status, 200);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    resp_free(&r);
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"4294967297,0\"}", sid);
    expect_error(&r, 400, "4294967297,0");
    /* an embedded NUL (\u0000) does not cut a string short */
    r = postf(port, "/api/new", "{%s, \"moves\": \"a1\\u0000 zz99\"}", game9);
    expect_error(&r, 400, "\\u0000");
    r = post(port, "/api/new", "{\"players\": [\"random\\u0000junk\", \"human\"]}");
    expect_error(&r, 400, "\\u0000");
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"a\\u00001\"}", sid);
    expect_error(&r, 400, "\\u0000");
    /* but an escaped backslash before u0000 is six plain characters, and fine */
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"\\\\u0000\"}", sid);
    expect_error(&r, 400, "cannot read");
    /* duplicate keys: the second would never be checked */
    r = postf(port, "/api/move", "{\"session\": \"%s\", \"move\": \"a1\", \"move\": \"zz99\"}", sid);
    expect_error(&r, 400, "\"move\" appears twice");
    r = postf(port, "/api/new", "{\"game\": {\"name\": \"mnk\", \"name\": \"2048\"}}");
    expect_error(&r, 400, "\"name\" appears twice");
    /* the media type matched exactly, parameters allowed */
    r = request(port, "POST", "/api/new", "application/jsonx", "{}", NULL);
    expect_error(&r, 415, "Content-Type");
    r = request(port, "POST", "/api/new", "application/json-patch+json", "{}", NULL);
    expect_error(&r, 415, "Content-Type");
    r = request(port, "POST", "/api/new", "Application/JSON; charset=utf-8", "{}", NULL);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
    r = request(port, "POST", "/api/new", "application/json ;charset=utf-8", "{}", NULL);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
    /* a 64 KiB list of empty moves: refused at once (more moves than a game can have),
     * in time linear in the body, not quadratic (it cost 4.5 s a request) */
    char *big = malloc(65536);
    size_t n = (size_t)snprintf(big, 65536, "{%s, \"moves\": [", game9);
    while (n + 8 < 65535) {
        memcpy(big + n, "\"\",", 3);
        n += 3;
    }
    memcpy(big + n - 1, "]}", 3);
    r = post(port, "/api/new", big);
    expect_error(&r, 400, "at most 81 moves");
    /* linear: the list costs about what parsing the body into nodes costs, measured with
     * the same 64 KiB list given as "players" (refused by its length at once). Both run
     * the same allocations; the quadratic walk made the moves 100 times dearer. */
    char *same = malloc(65536);
    n = (size_t)snprintf(same, 65536, "{%s, \"players\": [", game9);
    while (n + 8 < 65535) {
        memcpy(same + n, "\"\",", 3);
        n += 3;
    }
    memcpy(same + n - 1, "]}", 3);
    double t_moves, t_nodes;
    request_pair_seconds("/api/new", big, same, 400, &t_moves, &t_nodes);
    printf("hostile_bodies: a 64 KiB move list took %.4f s, the same list as players %.4f s (%.2fx)\n",
           t_moves, t_nodes, t_moves / t_nodes);
    ck_assert_msg(t_moves < 4 * t_nodes + 0.002, "64 KiB of moves: %.4f s, as players: %.4f s", t_moves,
                  t_nodes);
    free(same);
    free(big);
    /* and /api/load the same way */
    r = postf(port, "/api/load", "{\"session\": \"%s\", \"moves\": [\"a4294967297\"]}", sid);
    expect_error(&r, 400, "a4294967297");
    r = postf(port, "/api/state", "{\"session\": \"%s\"}", sid);
    ck_assert_int_eq(r.status, 200);
    const cJSON *mv = cJSON_GetObjectItemCaseSensitive(r.json, "moves");
    ck_assert_int_eq(cJSON_GetArraySize(mv), 1); /* h8 only: nothing changed */
    resp_free(&r);
}
END_TEST

/* Random and broken requests; the server answers each (or hangs up) and still works. */
START_TEST(malformed_requests)
{
    web_opts o;
    web_opts_default(&o);
    o.max_body = 2048;
    start(&o);
    rng rg;
    rng_seed(&rg, 2024);
    const char *paths[] = {"/api/new", "/api/move", "/api/state", "/api/genmove", "/api/analyze",
                           "/api/undo", "/api/load", "/api/cancel", "/api/close", "/api/run", "/",
                           "/../etc/passwd", "/%00", "/api/%2e%2e/new"};
    const char *methods[] = {"GET", "POST", "PUT", "HEAD", "OPTIONS", "PATCH", "BREW"};
    const char *bodies[] = {"{", "}", "null", "[]", "\"x\"", "{\"session\": 1}", "{\"session\": null}",
                            "{\"session\": \"\", \"move\": []}", "{\"game\": {\"name\": \"mnk\", \"rows\": -1}}",
                            "{\"players\": [1, 2]}", "{\"moves\": {}}", "{\"a\":{\"b\":{\"c\":[[[[[]]]]]}}}"};
    http_resp r = post(port, "/api/new", "{}");
    char sid[64];
    snprintf(sid, sizeof sid, "%s", str_of(r.json, "session"));
    resp_free(&r);
    /* GZ_WEB_FUZZ: how many (the slow suite tries 20,000) */
    const char *env = getenv("GZ_WEB_FUZZ");
    int count = env && atoi(env) > 0 ? atoi(env) : 400;
    int tried = 0, answered = 0;
    double slowest = 0;
    for (int i = 0; i < count; i++, tried++) {
        int kind = (int)rng_below(&rg, 3);
        struct timespec q0, q1;
        clock_gettime(CLOCK_MONOTONIC, &q0);
        char dbg[700] = "";
        if (kind == 0) {
            /* raw random bytes */
            int fd = connect_to(port);
            char buf[512];
            int n = 1 + (int)rng_below(&rg, sizeof buf - 1);
            for (int k = 0; k < n; k++)
                buf[k] = (char)rng_below(&rg, 256);
            if (rng_below(&rg, 2))
                memcpy(buf, "POST /api/new HTTP/1.1\r\n", n > 24 ? 24 : (size_t)n);
            send_all(fd, buf, (size_t)n);
            snprintf(dbg, sizeof dbg, "raw %d: %.*s", n, n > 200 ? 200 : n, buf);
            if (rng_below(&rg, 2)) {
                /* a client that vanishes mid-request */
                close(fd);
                continue;
            }
            /* the end of a header block: a complete (if senseless) request */
            send_all(fd, "\r\n\r\n", 4);
            shutdown(fd, SHUT_WR);
            r = read_resp(fd);
        } else {
            const char *m = methods[rng_below(&rg, sizeof methods / sizeof methods[0])];
            const char *p = paths[rng_below(&rg, sizeof paths / sizeof paths[0])];
            char body[1024];
            if (kind == 1) {
                snprintf(body, sizeof body, "%s", bodies[rng_below(&rg, sizeof bodies / sizeof bodies[0])]);
            } else {
                /* a valid request with one byte changed */
                snprintf(body, sizeof body, "{\"session\": \"%s\", \"move\": \"b2\", \"plies\": 1}", sid);
                body[rng_below(&rg, (uint32_t)strlen(body))] = (char)(1 + rng_below(&rg, 255));
            }
            snprintf(dbg, sizeof dbg, "%s %s %s", m, p, body);
            r = request(port, m, p, rng_below(&rg, 4) ? "application/json" : "text/plain", body, NULL);
        }
        clock_gettime(CLOCK_MONOTONIC, &q1);
        double took = (double)(q1.tv_sec - q0.tv_sec) + 1e-9 * (double)(q1.tv_nsec - q0.tv_nsec);
        slowest = took > slowest ? took : slowest;
        /* no hang: every request is answered (or hung up on) at once */
        ck_assert_msg(took < 5, "request %d took %.1f s: %.200s", i, took, dbg);
        if (r.status >= 200)
            answered++;

        ck_assert_msg(r.status < 500 || r.status == 503, "status %d: %s", r.status, r.body);
        resp_free(&r);
    }
    printf("malformed_requests: %d tried, %d answered with a status (the rest: clients that hung "
           "up, or requests the server hung up on); the slowest took %.3f s\n", tried, answered, slowest);
    ck_assert_int_ge(answered, tried / 2);
    r = request(port, "GET", "/api/info", NULL, NULL, NULL);
    ck_assert_int_eq(r.status, 200);
    resp_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("web");
    TCase *tc = tcase_create("api");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, transcript_tictactoe);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, refuses_chance_config);
    tcase_add_test(tc, sanling_board);
    tcase_add_test(tc, limits_and_cancel);
    tcase_add_test(tc, seat_plays_vcf_at_once);
    tcase_add_test(tc, run_dashboard);
    tcase_add_test(tc, hostile_bodies);
    tcase_add_test(tc, serve_bad_bind);
    tcase_add_test(tc, analysis_shows_wdl);
    suite_add_tcase(s, tc);
    TCase *fz = tcase_create("fuzz");
    tcase_add_checked_fixture(fz, setup, teardown);
    tcase_set_timeout(fz, 3000);
    tcase_add_test(fz, malformed_requests);
    suite_add_tcase(s, fz);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
