/* web_impl.h — what the parts of web/ share (not a public header): the server's
 * state, the sessions and their searches, and the request handlers.
 *
 *   server.c       libmicrohttpd glue: bodies, limits, routing, static files, replies
 *   api.c          the JSON API: one handler per endpoint, field validation
 *   session.c      sessions (one game each), their table, background searches
 *   run_summary.c  GET /api/run: a run directory's generations, Elo, losses, games
 *
 * Locking, outermost first: a session's req_lock (held by the request working on that
 * session, so requests on one session run one at a time), then the server's lock (the
 * session table and the count of running searches) or a session's mu (its moves, its
 * job's status and results; held briefly, also by the job's thread). The job's thread
 * takes only mu and the server's lock, never req_lock, so a request may join it while
 * holding req_lock. h5_lock serialises HDF5 (model loading): the library is not
 * thread-safe.
 */
#ifndef GZ_WEB_IMPL_H
#define GZ_WEB_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/config.h"
#include "engine/eval.h"
#include "engine/game.h"
#include "engine/player.h"
#include "engine/rng.h"
#include "nn/brain.h"
#include "web.h"

#define WEB_PATH_LEN 1024
#define WEB_ID_LEN 33   /* 32 hex digits */
#define WEB_PV_MAX 24
#define WEB_ERR_LEN 512

/* An HTTP answer: status and a malloc'd JSON body (owned by whoever holds it). */
typedef struct web_reply {
    int status;
    char *body;
} web_reply;

/* {"error": msg} with the given status. */
web_reply web_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes ownership of o (deleted); status 200. */
web_reply web_json(cJSON *o);

typedef enum { JOB_NONE = 0, JOB_GENMOVE, JOB_ANALYZE } web_job_kind;
typedef enum { JOB_RUNNING = 0, JOB_DONE, JOB_CANCELLED, JOB_FAILED } web_job_status;

/* The last search of a session (at most one runs at a time). */
typedef struct web_job {
    web_job_kind kind;      /* JOB_NONE: no search yet */
    web_job_status status;
    bool thread_live;       /* th is to be joined */
    pthread_t th;
    player_ctl ctl;         /* stop / deadline / progress */
    bool cancelled;         /* stopped by /api/cancel (genmove: the move is not played) */
    int ply;                /* the position searched: after this many moves */
    int target;             /* playouts asked for (0: not a playout count) */
    double t0, t1;          /* player_clock() at start and end */
    char who[PLAYER_NAME_LEN]; /* the player (genmove) or evaluator (analyze) */
    char err[WEB_ERR_LEN];  /* JOB_FAILED */
    char note[WEB_ERR_LEN]; /* why another player or evaluator than asked searches, or "" */
    /* genmove */
    brain *own;             /* a hint player made for this search (owned), or NULL */
    bool play;              /* play the move when found */
    bool played;
    int action;
    player_info info;
    /* analyze: the snapshot the thread publishes while it searches and at the end */
    bool graph;             /* also value every earlier position (the value graph) */
    int done;               /* playouts so far */
    float *policy;          /* (actions) the evaluator's priors at the root */
    int *visits;            /* (actions) */
    float *q;               /* (actions) mean value for the mover; NAN unvisited */
    float net_value[GAME_MAX_PLAYERS]; /* the evaluator's value of the root */
    float net_wdl[3];        /* a wdl model's win, draw, loss for the player to move */
    bool has_wdl;            /* net_wdl is set */
    float value[GAME_MAX_PLAYERS];     /* the search's value of the root */
    bool has_value;
    int pv[WEB_PV_MAX];
    int npv;
} web_job;

typedef struct web_session web_session;
struct web_session {
    /* immutable after creation */
    char id[WEB_ID_LEN];
    struct web_server *srv;  /* borrowed */
    gz_config cfg;
    game *g;                 /* owned */
    char spec[GAME_MAX_PLAYERS][PLAYER_NAME_LEN]; /* "human" or the spec asked for */
    uint64_t seed;
    /* used by the request holding req_lock, or by the running job's thread */
    brain *seat[GAME_MAX_PLAYERS]; /* owned; NULL: a person plays the seat */
    evaluator *an_eval;      /* owned, made by the first analysis; NULL before */
    char an_eval_name[16];   /* "model" or "rollout" */
    char an_eval_path[WEB_PATH_LEN]; /* the model file it was loaded from */
    char an_eval_unfit[WEB_PATH_LEN]; /* a model file that did not fit this game */
    rng r;
    pthread_mutex_t req_lock;
    /* guarded by mu */
    pthread_mutex_t mu;
    int nmoves;
    int *moves;              /* (max_game_length) */
    unsigned char *states;   /* (max_game_length + 1) states: states[k] after k moves */
    float *values;           /* (max_game_length + 1, players): the value graph */
    uint8_t *value_src;      /* (max_game_length + 1): 0 none, 1 evaluator, 2 search */
    web_job job;
    /* guarded by the server's lock */
    bool searching;          /* its job's thread counts in the server's searches */
    int refs;
    bool closed;             /* out of the table: freed when refs reaches 0 */
    double last_used;
};

struct web_server {
    /* immutable after start */
    web_opts o;              /* strings point into the buffers below */
    char bind[64];
    char model[WEB_PATH_LEN];
    char run_dir[WEB_PATH_LEN];
    char cfg_name[WEB_PATH_LEN];
    bool loopback;
    int port;
    struct MHD_Daemon *d;
    /* mutable */
    pthread_mutex_t lock;    /* sessions, searches, next_session */
    web_session **sessions;  /* (max_sessions), NULL = free slot */
    int searches;
    uint64_t next_session;
    pthread_mutex_t h5_lock;
    pthread_mutex_t run_lock; /* the /api/run cache */
    char *run_cache;
    double run_cache_time;
};

/* api.c: answers one API request (path below /api/, method, body NUL-terminated or
 * NULL). */
web_reply web_api(web_server *s, const char *method, const char *path, const char *body);

/* session.c */
/* Whether serve plays game g: 0, or -1 with a message. A session is its moves replayed
 * from the start, so games with chance events (2048) are refused: play them with
 * `gridzero play`. */
int web_game_supported(const game *g, char *err, size_t errlen);

/* A player of session ss's game (nn/brain.h: the protocols' engine, so the browser's
 * players also play a VCF at once and keep the search's clock rule) from a resolved
 * spec, with cfg's settings and sims simulations a move (0: the spec's own; a search's
 * count is always given, since its clock is the request's seconds). Model loading
 * under the server's HDF5 lock. Returns it (free with brain_free) or NULL with a
 * message. */
brain *web_brain_new(web_server *s, const game *g, const gz_config *cfg, const char *spec, int sims,
                     char *err, size_t errlen);
/* Makes a session for game config cfg with players spec[g->players] ("human" or a
 * resolved spec: model paths already made server-side) searching sims[p] simulations a
 * move (resolve_spec's playouts). Adds it to the table (dropping the least recently
 * used idle session when full). Returns it with one reference held
 * (web_session_release), or NULL with an HTTP status and message. */
web_session *web_session_new(web_server *s, const gz_config *cfg, char spec[][PLAYER_NAME_LEN],
                             const int *sims, int *status, char *err, size_t errlen);
/* Finds a session by id and takes a reference; NULL when there is none. */
web_session *web_session_get(web_server *s, const char *id);
void web_session_release(web_session *ss);
/* Takes the session out of the table (freed once released by everyone). */
void web_session_close(web_session *ss);
/* Closes every session and joins their searches (web_stop). */
void web_sessions_shutdown(web_server *s);

/* The following take a session whose req_lock the caller holds. */
/* Stops a running search and joins its thread (a cancelled genmove plays nothing). */
void web_session_stop_job(web_session *ss, bool cancel);
/* The position after k moves (borrowed: valid while the moves do not change). */
const game_state *web_session_state(web_session *ss, int k);
/* Plays action (legal, checked by the caller) and tells the players. Caller holds mu. */
void web_session_play(web_session *ss, int action);
/* Back to k moves (0 <= k <= nmoves); the players forget the old line. Caller holds mu. */
void web_session_truncate(web_session *ss, int k);
/* Starts a search in a background thread (the job's fields set by the caller: kind,
 * ply, target, who, own, play, graph; ctl.deadline). Returns 0, or an HTTP status with
 * a message (503: too many searches). */
int web_session_start_job(web_session *ss, char *err, size_t errlen);
/* The session as JSON (the state the page draws). Caller holds req_lock. */
cJSON *web_session_json(web_session *ss);

/* run_summary.c: GET /api/run (cached for half a second). */
web_reply web_run_summary(web_server *s);

#endif
