/* progress.c — when long commands report progress: a line rewritten in place on a
 * terminal (at most 5 times a second), plain lines at a steady pace in a pipe. */
#include <time.h>
#include <unistd.h>

#include "commands.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cli_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cli_progress_init(cli_progress *p, double every)
{
    p->tty = isatty(2);
    p->start = p->last = cli_now();
    p->every = p->tty ? 0.2 : every;
}

int cli_progress_due(cli_progress *p, int done)
{
    double t = cli_now();
    if (!done && t - p->last < p->every)
        return 0;
    p->last = t;
    if (p->tty)
        fputc('\r', stderr);
    return 1;
}
