/* static_files.h — the page's files, compiled into the binary by web/embed.c at build
 * time (meson custom_target over web/static/). The server looks a request path up in
 * this table and never opens a file. */
#ifndef GZ_WEB_STATIC_FILES_H
#define GZ_WEB_STATIC_FILES_H

#include <stddef.h>

typedef struct web_static_file {
    const char *path;  /* "/index.html" */
    const char *mime;  /* "text/html; charset=utf-8" */
    const unsigned char *data;
    size_t size;
} web_static_file;

/* Terminated by an entry with path NULL. */
extern const web_static_file web_static_files[];

#endif
