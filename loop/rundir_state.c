/* rundir_state.c — the run directory as the generation loop keeps it: its lock (one
 * run at a time), clock.json (the --time budget over every session), state.json and
 * best (the last finished stage), and the set-up of a new or resumed directory
 * (config.json, generation 0, metrics.jsonl, stale temporaries). rundir.c reads a run
 * directory for anyone; this file is the loop's writer. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loop_impl.h"
#include "rundata.h"
#include "engine/rng.h"
#include "nn/checkpoint.h"
#include "nn/params.h"
#include "selfplay/selfplay.h"

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char tmp[PATH_LEN];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: cannot create directory: %s", tmp, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create directory: %s", tmp, strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes stale temporary files a killed run may have left in dir. */
static void remove_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strstr(de->d_name, ".tmp")) {
            char p[PATH_LEN];
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
    }
    closedir(d);
}

/* clock.json: the seconds the run has spent, rewritten (atomically) after every stage,
 * so --time counts every session; a kill loses at most the stage in progress. */
double run_clock(const run_ctx *r)
{
    if (!r->cpu_clock)
        return run_now();
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec) / (double)sp_cores();
}

int run_write_clock(run_ctx *r, char *err, size_t errlen)
{
    char path[PATH_LEN], text[128];
    snprintf(path, sizeof path, "%s/clock.json", r->dir);
    snprintf(text, sizeof text, "{\"seconds\": %.3f, \"clock\": \"%s\"}\n", run_seconds(r),
             r->cpu_clock ? "cpu" : "wall");
    return rd_write_atomic(path, text, err, errlen);
}

double run_read_clock(const run_ctx *r)
{
    cJSON *o = rundir_read_json(r->dir, "clock.json");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "seconds");
    double v = cJSON_IsNumber(s) && s->valuedouble >= 0 ? s->valuedouble : 0;
    cJSON_Delete(o);
    return v;
}

/* Whether the --time budget is spent (then no further stage starts). */
bool run_out_of_time(const run_ctx *r)
{
    return r->budget > 0 && run_seconds(r) >= r->budget;
}

double run_budget_used(run_ctx *r, int gen)
{
    int G = r->c.loop.generations > 0 ? r->c.loop.generations : 1;
    double used = (double)(gen - 1) / G;
    if (lead(r) && r->budget > 0) {
        double t = run_seconds(r) / r->budget;
        used = t > used ? t : used;
    }
    comm_bcast(r->cm, &used, sizeof used, 0);
    return used;
}

int run_write_state(run_ctx *r, int gen, const char *stage, char *err, size_t errlen)
{
    char path[PATH_LEN], text[PATH_LEN + 128];
    snprintf(path, sizeof path, "%s/best", r->dir);
    snprintf(text, sizeof text, "%s\n", r->best);
    if (rd_write_atomic(path, text, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/state.json", r->dir);
    snprintf(text, sizeof text, "{\"generation\": %d, \"stage\": \"%s\", \"best\": \"%s\"}\n", gen, stage,
             r->best);
    /* the clock after the state: a kill in between must not make a finished stage's
     * events be logged again */
    if (rd_write_atomic(path, text, err, errlen) < 0)
        return -1;
    return run_write_clock(r, err, errlen);
}

/* Takes the run directory's lock: an advisory fcntl write lock on RUN_DIR/lock, held
 * for the whole run. The kernel releases it when the process ends, however it ends
 * (kill -9 included), so a killed run never blocks its resume. Creates RUN_DIR when
 * missing; writes nothing else. Returns the lock's descriptor (close it, or exit, to
 * release), -2 with a message naming the directory and the holder's pid when another
 * process holds the lock, or -1 with a message on an I/O error. */
int run_lock_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir_p(dir, err, errlen) < 0)
        return -1;
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open the run directory's lock file: %s", path,
                 strerror(errno));
        return -1;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &fl) == 0) {
        /* the holder's pid for people; the lock itself is what counts */
        char text[32];
        int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n)
            fprintf(stderr, "run: %s: cannot write the pid (the lock holds anyway)\n", path);
        return fd;
    }
    int e = errno;
    if (e != EACCES && e != EAGAIN) {
        snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    long pid = fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK ? (long)q.l_pid : 0;
    close(fd);
    char who[48] = "another process";
    if (pid > 0)
        snprintf(who, sizeof who, "another process (pid %ld)", pid);
    snprintf(err, errlen, "%s is in use: %s holds its lock %s; only one gridzero run may write "
             "into a run directory (wait for it to end, or stop it)", dir, who, path);
    return -2;
}

/* The config compared between runs: everything but the run length and the settings
 * that only decide how fast the same work runs on this machine. */
char *run_config_identity(const gz_config *c)
{
    gz_config x = *c;
    x.loop.generations = 0;
    x.selfplay.threads = 0;
    x.net.threads = 0;
    x.net.cache = 0;
    x.net.max_batch = 0;
    x.selfplay.part_minutes = 0;
    return cfg_to_json(&x);
}

/* Returns 0; -2 with a message when the directory holds another or an unreadable config
 * (bad input); -1 with a message on an I/O error (a full or read-only disk). */
int run_setup_dir(run_ctx *r, char *err, size_t errlen)
{
    char p[PATH_LEN];
    const char *subs[] = {"", "/models", "/data", "/arena"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", r->dir, subs[i]);
        if (mkdir_p(p, err, errlen) < 0)
            return -1;
        remove_temporaries(p);
    }
    snprintf(p, sizeof p, "%s/config.json", r->dir);
    char *mine = run_config_identity(&r->c);
    char *text = rundir_read_text(p, NULL);
    int rc = 0;
    if (text) {
        gz_config old;
        char why[512];
        if (cfg_parse(&old, text, p, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: the run's config is unreadable: %s", p, why);
            rc = -2;
        } else {
            char *theirs = run_config_identity(&old);
            if (strcmp(mine, theirs) != 0) {
                snprintf(err, errlen, "%s was made with a different config (only loop.generations, "
                         "selfplay.threads, selfplay.part_minutes, net.threads, net.cache and net.max_batch may change when continuing a run): use another -o RUN_DIR, or the same config",
                         r->dir);
                rc = -2;
            }
            free(theirs);
        }
        free(text);
    } else {
        char *full = cfg_to_json(&r->c);
        rc = rd_write_atomic(p, full, err, errlen);
        free(full);
    }
    free(mine);
    if (rc < 0)
        return rc;
    /* generation 0: the random-init network everything starts from, or --from's model
     * carried to this board */
    snprintf(p, sizeof p, "%s/models/gen_0000.h5", r->dir);
    if (r->ntuple) {
        rc = rundir_exists(p) ? 0 : run_setup_ntuple_gen0(r, p, err, errlen);
        if (rc < 0)
            return rc;
    } else if (!rundir_exists(p)) {
        nn_spec spec;
        if (nn_spec_from_config(&spec, &r->c.net, r->g, err, errlen) < 0)
            return -2; /* the config's net does not fit its game */
        nn_params *params = NULL;
        nn_ckpt_meta meta = {0};
        if (r->from) {
            char why[512], report[512];
            nn_params *src = nn_ckpt_load(r->from, NULL, NULL, why, sizeof why);
            if (!src) {
                snprintf(err, errlen, "--from: %s", why);
                return -2;
            }
            params = nn_params_adapt(src, &spec, rng_derive(r->c.seed, 0x47454e30ULL), report,
                                     sizeof report, why, sizeof why);
            nn_params_free(src);
            if (!params) {
                snprintf(err, errlen, "--from %s: %s", r->from, why);
                return -2;
            }
            fprintf(stderr, "run: generation 0 is %s on this %dx%d board: %s\n", r->from, r->g->rows,
                    r->g->cols, report);
            snprintf(meta.parent, sizeof meta.parent, "%s", r->from);
        } else {
            params = nn_params_new(&spec, err, errlen);
            if (!params)
                return -1;
            nn_params_init_he(params, rng_derive(r->c.seed, 0x47454e30ULL));
        }
        rc = nn_ckpt_save(p, params, &meta, NULL, 0, err, errlen);
        nn_params_free(params);
        if (rc < 0)
            return -1;
    } else if (r->from) {
        fprintf(stderr, "run: --from %s ignored: %s already has its generation 0\n", r->from, r->dir);
    }
    /* a generation 0 made from a model plays generation 1's games itself (no bootstrap) */
    if (!r->ntuple) {
        nn_ckpt_meta m0;
        nn_params *p0 = nn_ckpt_load(p, r->g, &m0, err, errlen);
        if (!p0)
            return -1;
        nn_params_free(p0);
        r->gen0_from_model = m0.parent[0] != 0;
    }
    snprintf(p, sizeof p, "%s/metrics.jsonl", r->dir);
    /* A torn last line (a full disk, or a file from an older version that wrote events
     * through stdio's buffer) is cut off so every line stays one JSON object. */
    char *old = rundir_read_text(p, NULL);
    if (old) {
        size_t n = strlen(old);
        if (n > 0 && old[n - 1] != '\n') {
            char *nl = strrchr(old, '\n');
            if (truncate(p, nl ? (off_t)(nl - old + 1) : 0) < 0) {
                snprintf(err, errlen, "%s: cannot cut a torn last line: %s", p, strerror(errno));
                free(old);
                return -1;
            }
        }
        free(old);
    }
    r->metrics = fopen(p, "a");
    if (!r->metrics) {
        snprintf(err, errlen, "%s: cannot append: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

/* The last generation state.json records as done (0 when none or no state.json). */
int run_generations_done(const run_ctx *r)
{
    int gen = 0, done = 0;
    char stage[32];
    if (rundir_read_state(r->dir, &gen, stage, sizeof stage) == 1)
        done = !strcmp(stage, "done") ? gen : gen - 1;
    return done > 0 ? done : 0;
}
