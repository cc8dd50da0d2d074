/* server.c — the HTTP side of gridzero serve (libmicrohttpd): request bodies and their
 * limit, the Host and Content-Type checks, routing to the API or the embedded files,
 * and the replies' headers. See web.h for the safety rules this file enforces. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <microhttpd.h>

#include "nn/net_eval.h"
#include "static_files.h"
#include "web_impl.h"

void web_opts_default(web_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bind = "127.0.0.1";
    o->port = 8080;
    char err[256];
    int rc = cfg_load(&o->cfg, NULL, err, sizeof err);
    (void)rc; /* the built-in config always parses (tested in test_config) */
    o->max_sessions = 16;
    o->max_searches = 2;
    o->max_body = 64 * 1024;
    o->max_playouts = 10000;
    o->max_seconds = 60;
    o->threads = 4;
}

web_reply web_error(int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    web_reply r = web_json(o);
    r.status = status;
    return r;
}

web_reply web_json(cJSON *o)
{
    web_reply r = {200, cJSON_PrintUnformatted(o)};
    cJSON_Delete(o);
    if (!r.body) {
        r.status = 500;
        r.body = strdup("{\"error\": \"out of memory\"}");
    }
    return r;
}

bool web_is_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

/* One request's body as it arrives. */
typedef struct web_req {
    char *buf;
    size_t len, cap;
    size_t seen;     /* bytes received, kept or not */
    bool too_big;
    bool answered;   /* a reply went out before the body (413, 415, 403) */
} web_req;

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    web_req *rq = *con_cls;
    if (rq) {
        free(rq->buf);
        free(rq);
    }
    *con_cls = NULL;
}

/* Queues body (owned: freed by MHD when static_body is false) with our headers. */
static enum MHD_Result send_reply(web_server *s, struct MHD_Connection *c, const char *method,
                                  const char *url, int status, const void *body, size_t size,
                                  const char *mime, bool static_body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        size, (void *)body, static_body ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!r) {
        if (!static_body)
            free((void *)body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", mime);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", strncmp(url, "/api/", 5) ? "GET, HEAD" : "GET, POST");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    if (!s->o.quiet)
        fprintf(stderr, "serve: %s %.200s %d\n", method, url, status);
    return ret;
}

static enum MHD_Result send_json(web_server *s, struct MHD_Connection *c, const char *method,
                                 const char *url, web_reply rep)
{
    const char *body = rep.body ? rep.body : strdup("{}");
    return send_reply(s, c, method, url, rep.status, body, strlen(body),
                      "application/json; charset=utf-8", false);
}

/* DNS rebinding: a page of another site whose name resolves to 127.0.0.1 would be "same
 * origin" with us; on loopback only Host names that mean this machine are answered. */
/* Whether a Content-Type header names the media type application/json exactly (any
 * case), alone or with parameters ("application/json; charset=utf-8"); not a longer
 * type that starts the same ("application/jsonx"). */
static bool is_json_type(const char *ct)
{
    if (!ct)
        return false;
    ct += strspn(ct, " \t");
    if (strncasecmp(ct, "application/json", 16))
        return false;
    ct += 16;
    ct += strspn(ct, " \t");
    return *ct == '\0' || *ct == ';';
}

static bool host_ok(const web_server *s, struct MHD_Connection *c)
{
    if (!s->loopback)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!h)
        return true; /* HTTP/1.0 without Host: no name to rebind */
    char name[256];
    size_t n = strlen(h);
    if (n >= sizeof name)
        return false;
    memcpy(name, h, n + 1);
    /* strip the port: "[::1]:8080", "localhost:8080" */
    char *colon = name[0] == '[' ? strchr(name, ']') : strchr(name, ':');
    if (name[0] == '[') {
        if (!colon)
            return false;
        *colon = 0;
        memmove(name, name + 1, strlen(name + 1) + 1);
    } else if (colon) {
        *colon = 0;
    }
    return !strcasecmp(name, "localhost") || web_is_loopback(name) || !strcmp(name, s->bind);
}

/* The request path's %-escapes decoded in place (MHD's decoder), except that a decoded
 * NUL becomes 0x7f: "/app.js%00.html" must not be read as "/app.js". */
static size_t unescape(void *cls, struct MHD_Connection *c, char *uri)
{
    (void)cls, (void)c;
    size_t n = MHD_http_unescape(uri);
    for (size_t i = 0; i < n; i++)
        if (!uri[i])
            uri[i] = 0x7f;
    return n;
}

static const web_static_file *find_static(const char *url)
{
    if (!strcmp(url, "/"))
        url = "/index.html";
    for (const web_static_file *f = web_static_files; f->path; f++)
        if (!strcmp(f->path, url))
            return f;
    return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    web_server *s = cls;
    web_req *rq = *con_cls;
    bool post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        /* Refusals that need no body go out before any of it is read. */
        web_reply early = {0, NULL};
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (!host_ok(s, c)) {
            early = web_error(403, "the Host header does not name this machine (the server is on "
                                   "loopback; use http://localhost:%d/)", s->port);
        } else if (post && cl && strtoull(cl, NULL, 10) > s->o.max_body) {
            early = web_error(413, "request body of %s bytes: the limit is %zu bytes", cl, s->o.max_body);
        } else if (post && !strncmp(url, "/api/", 5) &&
                   !is_json_type(ct)) {
            /* also what keeps other sites' pages out: a cross-site JSON POST needs a CORS
             * preflight, which this server never grants */
            early = web_error(415, "POST bodies must be JSON: send the header "
                                   "Content-Type: application/json");
        }
        if (early.body) {
            rq->answered = true;
            return send_json(s, c, method, url, early);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        rq->seen += n;
        if (rq->answered)
            return MHD_YES;
        if (rq->len + n > s->o.max_body) {
            rq->too_big = true;
            /* a chunked body without a length that goes on and on: hang up */
            return rq->seen > 16 * s->o.max_body ? MHD_NO : MHD_YES;
        }
        if (rq->len + n + 1 > rq->cap) {
            size_t cap = rq->cap ? rq->cap : 1024;
            while (cap < rq->len + n + 1)
                cap *= 2;
            char *nb = realloc(rq->buf, cap);
            if (!nb)
                return MHD_NO;
            rq->buf = nb;
            rq->cap = cap;
        }
        memcpy(rq->buf + rq->len, upload, n);
        rq->len += n;
        rq->buf[rq->len] = 0;
        return MHD_YES;
    }
    if (rq->answered)
        return MHD_YES;
    if (rq->too_big)
        return send_json(s, c, method, url,
                         web_error(413, "request body over the limit of %zu bytes", s->o.max_body));
    if (!strncmp(url, "/api/", 5)) {
        if (rq->len && memchr(rq->buf, 0, rq->len))
            return send_json(s, c, method, url, web_error(400, "request body: a NUL byte is not JSON"));
        return send_json(s, c, method, url, web_api(s, method, url + 5, rq->len ? rq->buf : NULL));
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return send_json(s, c, method, url,
                         web_error(405, "%s: the page's files answer GET and HEAD only", method));
    const web_static_file *f = find_static(url);
    if (!f)
        return send_json(s, c, method, url, web_error(404, "no such page: %.200s", url));
    return send_reply(s, c, method, url, 200, f->data, f->size, f->mime, true);
}

web_server *web_start(const web_opts *o, char *err, size_t errlen)
{
    web_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    snprintf(s->bind, sizeof s->bind, "%s", o->bind ? o->bind : "127.0.0.1");
    s->o.bind = s->bind;
    if (o->model) {
        snprintf(s->model, sizeof s->model, "%s", o->model);
        s->o.model = s->model;
    }
    if (o->run_dir) {
        snprintf(s->run_dir, sizeof s->run_dir, "%s", o->run_dir);
        s->o.run_dir = s->run_dir;
    }
    snprintf(s->cfg_name, sizeof s->cfg_name, "%s", o->cfg_name ? o->cfg_name : "built-in config");
    s->o.cfg_name = s->cfg_name;
    s->o.max_sessions = o->max_sessions > 0 ? o->max_sessions : 1;
    s->o.max_searches = o->max_searches > 0 ? o->max_searches : 1;
    s->o.threads = o->threads > 0 ? o->threads : 1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->h5_lock, NULL);
    pthread_mutex_init(&s->run_lock, NULL);
    s->sessions = calloc((size_t)s->o.max_sessions, sizeof *s->sessions);
    if (!s->sessions) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    {
        /* the config's game must be one serve plays, said now, not at the first request */
        game *g = game_new(&s->o.cfg.game, err, errlen);
        int ok = g && web_game_supported(g, err, errlen) == 0;
        game_free(g);
        if (!ok)
            goto fail;
    }
    if (s->o.model) {
        /* the model must load for the config's game now, not at the first request */
        game *g = game_new(&s->o.cfg.game, err, errlen);
        if (!g)
            goto fail;
        evaluator *e = net_eval_load(g, &s->o.cfg, s->model, err, errlen);
        evaluator_free(e);
        game_free(g);
        if (!e)
            goto fail;
    }
    if (s->o.run_dir) {
        struct stat st;
        if (stat(s->run_dir, &st) < 0) {
            snprintf(err, errlen, "%s: cannot read the run directory: %s", s->run_dir, strerror(errno));
            goto fail;
        }
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: not a directory (expected a run directory)", s->run_dir);
            goto fail;
        }
    }
    union {
        struct sockaddr sa;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } addr;
    memset(&addr, 0, sizeof addr);
    /* poll(), not epoll: with libmicrohttpd 0.9.75's epoll a client that sends a partial
     * request and hangs up (data and FIN together) left its connection in CLOSE-WAIT
     * until the connection timeout, and 64 such clients blocked everyone (found by the
     * fuzz test); poll() sees the hang-up at once. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    if (o->port < 0 || o->port > 65535) {
        snprintf(err, errlen, "port %d: expected 0..65535", o->port);
        goto fail;
    }
    if (inet_pton(AF_INET, s->bind, &addr.v4.sin_addr) == 1) {
        addr.v4.sin_family = AF_INET;
        addr.v4.sin_port = htons((uint16_t)o->port);
    } else if (inet_pton(AF_INET6, s->bind, &addr.v6.sin6_addr) == 1) {
        addr.v6.sin6_family = AF_INET6;
        addr.v6.sin6_port = htons((uint16_t)o->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "bind address \"%s\": expected an IP address such as 127.0.0.1 or ::1",
                 s->bind);
        goto fail;
    }
    s->loopback = web_is_loopback(s->bind);
    s->d = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, on_request, s,
                            MHD_OPTION_SOCK_ADDR, &addr.sa,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->o.threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, 30u,
                            MHD_OPTION_CONNECTION_LIMIT, 64u,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                            MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, errlen, "cannot listen on %s port %d (in use, or not an address of this machine)",
                 s->bind, o->port);
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    return s;
fail:
    web_stop(s);
    return NULL;
}

int web_port(const web_server *s) { return s->port; }

void web_stop(web_server *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d); /* no handler runs after this */
    if (s->sessions)
        web_sessions_shutdown(s);
    free(s->sessions);
    free(s->run_cache);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->h5_lock);
    pthread_mutex_destroy(&s->run_lock);
    free(s);
}
