/* test_docs.c — the README and docs/ against the binary they describe (suite 'unit').
 *
 * - every subcommand of `gridzero --help` is named in docs/ as "gridzero NAME", and every
 *   verb of `gridzero bench --help` as "bench VERB";
 * - every key of `gridzero config keys` is named in docs/;
 * - every command line of the README's tour (the code lines of its "## A short tour"
 *   section that run gridzero, build/gridzero or scripts/run) parses: the subcommand
 *   exists, every option it uses is in that subcommand's --help (for `bench nn`, `config
 *   check`, `selfplay --follow`: the help of that form), every `-c configs/...` file exists,
 *   and every `--set KEY=VALUE` / `--pset N:KEY=VALUE` key is a config key.
 *
 * It needs GZ_BIN (the binary) and GZ_SRC (the source tree) from meson. Each failure is
 * collected with the page or README line at fault and all are reported at once. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_util.h"

/* Failures so far, one a line (malloc'd, grows). */
static char *fails;
static size_t fails_len;
static int nfails;

static void fail_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail_add(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    fails = realloc(fails, fails_len + n + 2);
    ck_assert(fails != NULL);
    memcpy(fails + fails_len, line, n);
    fails_len += n;
    fails[fails_len++] = '\n';
    fails[fails_len] = 0;
    nfails++;
}

static void fails_reset(void)
{
    free(fails);
    fails = NULL;
    fails_len = 0;
    nfails = 0;
}

static void fails_check(const char *what)
{
    ck_assert_msg(nfails == 0, "%s: %d problem(s):\n%s", what, nfails, fails ? fails : "");
    fails_reset();
}

static const char *src_dir(void)
{
    const char *s = getenv("GZ_SRC");
    ck_assert_msg(s != NULL, "GZ_SRC not set (run through meson test)");
    return s;
}

/* The whole of a text file, appended to *buf (malloc'd, NUL-terminated; *len grows).
 * Returns 0, or -1 when the file cannot be read. */
static int text_append(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        *buf = realloc(*buf, *len + got + 1);
        ck_assert(*buf != NULL);
        memcpy(*buf + *len, chunk, got);
        *len += got;
        (*buf)[*len] = 0;
    }
    fclose(f);
    return 0;
}

/* Every .md page of docs/ in the source tree, concatenated (malloc'd). */
static char *docs_text(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/docs", src_dir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: cannot open", dir);
    char *all = calloc(1, 1);
    size_t len = 0;
    int pages = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md"))
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        ck_assert_msg(text_append(p, &all, &len) == 0, "%s: cannot read", p);
        pages++;
    }
    closedir(d);
    ck_assert_msg(pages > 0, "%s: no .md pages", dir);
    return all;
}

/* Whether word occurs in text with no word character right before or after it; word
 * characters are letters, digits, '_' and those in extra. */
static int has_word(const char *text, const char *word, const char *extra)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        char before = p == text ? ' ' : p[-1], after = p[n];
        int wb = isalnum((unsigned char)before) || before == '_' || (before && strchr(extra, before));
        int wa = isalnum((unsigned char)after) || after == '_' || (after && strchr(extra, after));
        if (!wb && !wa)
            return 1;
    }
    return 0;
}

/* `gridzero ARGS` with stdout and stderr together (malloc'd). */
static char *bin_output(const char *args)
{
    char *out, *err;
    run_bin(args, NULL, &out, &err);
    size_t a = strlen(out), b = strlen(err);
    out = realloc(out, a + b + 1);
    memcpy(out + a, err, b + 1);
    free(err);
    return out;
}

/* Copies the line at p (without its newline, cut to cap - 1 bytes) into line; returns
 * the start of the next line, or NULL after the last one. */
static const char *line_next(const char *p, char *line, size_t cap)
{
    if (!p || !*p)
        return NULL;
    size_t n = strcspn(p, "\n");
    snprintf(line, cap, "%.*s", (int)n, p);
    return p[n] ? p + n + 1 : p + n;
}

/* The names of a listing: the first word of each line that starts with exactly `indent`
 * spaces and then a lowercase letter, after the line containing `after` (NULL: from the
 * first line). Returns the count; names[i] malloc'd. */
static int listing_names(const char *text, const char *after, int indent, char **names, int max)
{
    const char *p = after ? strstr(text, after) : text;
    char line[1024];
    if (after && p)
        p = line_next(p, line, sizeof line);
    int n = 0;
    while (n < max && (p = line_next(p, line, sizeof line)) != NULL) {
        int sp = (int)strspn(line, " ");
        if (sp == indent && islower((unsigned char)line[sp]))
            names[n++] = strndup(line + sp, strcspn(line + sp, " \t"));
    }
    return n;
}

#define MAX_NAMES 256

/* The subcommands of `gridzero --help`. */
static int subcommands(char **names)
{
    char *help = bin_output("--help");
    int n = listing_names(help, "commands:", 2, names, MAX_NAMES);
    free(help);
    ck_assert_msg(n >= 10, "gridzero --help lists %d commands", n);
    return n;
}

/* The keys of `gridzero config keys`. */
static int config_keys(char **keys)
{
    char *out = bin_output("config keys");
    int n = listing_names(out, NULL, 2, keys, MAX_NAMES);
    free(out);
    ck_assert_msg(n >= 50, "gridzero config keys lists %d keys", n);
    return n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
}

static int in_list(char **names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return 1;
    return 0;
}

START_TEST(subcommands_documented)
{
    char *docs = docs_text();
    char *names[MAX_NAMES];
    int n = subcommands(names);
    for (int i = 0; i < n; i++) {
        char want[128];
        snprintf(want, sizeof want, "gridzero %s", names[i]);
        if (!has_word(docs, want, ""))
            fail_add("docs/: no page names the subcommand \"%s\"", want);
    }
    /* the verbs of `gridzero bench` (nn, train, search, rules) */
    char *bench = bin_output("bench --help");
    char *verbs[MAX_NAMES];
    int nv = listing_names(bench, "usage: gridzero bench", 2, verbs, MAX_NAMES);
    ck_assert_msg(nv >= 3, "gridzero bench --help lists %d verbs:\n%s", nv, bench);
    for (int i = 0; i < nv; i++) {
        char want[128];
        snprintf(want, sizeof want, "bench %s", verbs[i]);
        if (!has_word(docs, want, ""))
            fail_add("docs/: no page names \"gridzero %s\"", want);
    }
    free_names(verbs, nv);
    free(bench);
    free_names(names, n);
    free(docs);
    fails_check("subcommands missing from docs/");
}
END_TEST

START_TEST(config_keys_documented)
{
    char *docs = docs_text();
    char *keys[MAX_NAMES];
    int n = config_keys(keys);
    for (int i = 0; i < n; i++)
        if (!has_word(docs, keys[i], "."))
            fail_add("docs/: no page names the config key %s", keys[i]);
    free_names(keys, n);
    free(docs);
    fails_check("config keys missing from docs/");
}
END_TEST

/* A command line split into words (whitespace; surrounding quotes dropped), cut at the
 * first shell operator or comment. Returns the count; words point into buf. */
static int split_words(char *buf, char **w, int max)
{
    int n = 0;
    for (char *t = strtok(buf, " \t"); t && n < max; t = strtok(NULL, " \t")) {
        if (!strcmp(t, "|") || !strcmp(t, "&&") || !strcmp(t, ";") || t[0] == '#' ||
            t[0] == '>' || t[0] == '<' || !strcmp(t, "2>&1"))
            break;
        size_t len = strlen(t);
        if (len >= 2 && (t[0] == '\'' || t[0] == '"') && t[len - 1] == t[0]) {
            t[len - 1] = 0;
            t++;
        }
        w[n++] = t;
    }
    return n;
}

/* The help of the form a tour line uses: `gridzero SUB NEXT --help` when its usage line
 * is "usage: gridzero SUB NEXT" (bench nn, config check, selfplay --follow), else
 * `gridzero SUB --help` (malloc'd). form gets the words before --help. */
static char *help_for(const char *sub, const char *next, char *form, size_t cap)
{
    char args[512];
    if (next && (islower((unsigned char)next[0]) || !strncmp(next, "--", 2))) {
        snprintf(args, sizeof args, "%s %s --help", sub, next);
        char *h = bin_output(args);
        char usage[512];
        snprintf(usage, sizeof usage, "usage: gridzero %s %s", sub, next);
        if (strstr(h, usage)) {
            snprintf(form, cap, "%s %s", sub, next);
            return h;
        }
        free(h);
    }
    snprintf(form, cap, "%s", sub);
    snprintf(args, sizeof args, "%s --help", sub);
    return bin_output(args);
}

/* Checks one tour command: w[0..n) are the words after the program (w[0] the
 * subcommand). */
static void check_command(const char *line, int lineno, char **w, int n, char **subs, int nsubs,
                          char **keys, int nkeys)
{
    if (n == 0 || !in_list(subs, nsubs, w[0])) {
        fail_add("README.md:%d: no subcommand \"%s\": %s", lineno, n ? w[0] : "", line);
        return;
    }
    char form[256];
    char *help = help_for(w[0], n > 1 ? w[1] : NULL, form, sizeof form);
    for (int i = 1; i < n; i++) {
        const char *t = w[i];
        if (t[0] != '-' || !t[1] || isdigit((unsigned char)t[1]))
            continue;
        char opt[128];
        snprintf(opt, sizeof opt, "%.*s", (int)strcspn(t, "="), t);
        if (!has_word(help, opt, "-"))
            fail_add("README.md:%d: gridzero %s --help has no option %s: %s", lineno, form, opt,
                     line);
        const char *val = i + 1 < n ? w[i + 1] : "";
        if ((!strcmp(opt, "-c") || !strcmp(opt, "--config")) && !strncmp(val, "configs/", 8)) {
            char p[2048];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s", src_dir(), val);
            if (stat(p, &st) != 0)
                fail_add("README.md:%d: no config file %s: %s", lineno, val, line);
        }
        if (!strcmp(opt, "--set") || !strcmp(opt, "--pset")) {
            const char *kv = !strcmp(opt, "--pset") && strchr(val, ':') ? strchr(val, ':') + 1 : val;
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)strcspn(kv, "="), kv);
            if (!strchr(kv, '=') || !in_list(keys, nkeys, key))
                fail_add("README.md:%d: %s %s: no config key \"%s\": %s", lineno, opt, val, key,
                         line);
        }
    }
    free(help);
}

START_TEST(readme_tour_parses)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/README.md", src_dir());
    char *readme = NULL;
    size_t len = 0;
    ck_assert_msg(text_append(path, &readme, &len) == 0, "%s: cannot read", path);
    char *subs[MAX_NAMES], *keys[MAX_NAMES];
    int nsubs = subcommands(subs), nkeys = config_keys(keys);

    int lineno = 0, in_tour = 0, fenced = 0, commands = 0, seen_tour = 0;
    char line[2048];
    for (const char *p = readme; (p = line_next(p, line, sizeof line)) != NULL;) {
        lineno++;
        if (!strncmp(line, "## ", 3)) {
            in_tour = !strcmp(line, "## A short tour");
            seen_tour |= in_tour;
            continue;
        }
        if (!in_tour)
            continue;
        if (!strncmp(line, "```", 3)) {
            fenced = !fenced;
            continue;
        }
        if (!fenced && strncmp(line, "    ", 4))
            continue;
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", line);
        char *w[128];
        int n = split_words(buf, w, 128);
        for (int i = 0; i < n; i++) {
            const char *t = w[i];
            size_t tl = strlen(t);
            if (!strcmp(t, "scripts/run")) {
                /* scripts/run ARGS is gridzero run ARGS */
                w[i] = "run";
                check_command(line, lineno, w + i, n - i, subs, nsubs, keys, nkeys);
                commands++;
                break;
            }
            if (!strcmp(t, "gridzero") || (tl > 9 && !strcmp(t + tl - 9, "/gridzero"))) {
                check_command(line, lineno, w + i + 1, n - i - 1, subs, nsubs, keys, nkeys);
                commands++;
                break;
            }
        }
    }
    ck_assert_msg(seen_tour, "README.md has no \"## A short tour\" section");
    ck_assert_msg(commands >= 8, "README.md's tour has only %d gridzero command lines", commands);
    free_names(subs, nsubs);
    free_names(keys, nkeys);
    free(readme);
    fails_check("README.md's tour");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("docs");
    TCase *t = tcase_create("docs");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, subcommands_documented);
    tcase_add_test(t, config_keys_documented);
    tcase_add_test(t, readme_tour_parses);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
