/* Small shared helpers: errors, file mapping, growable arrays, strings. */
#ifndef SYMCHECK_UTIL_H
#define SYMCHECK_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* An error message buffer filled by the parsers (one line, no "symcheck:" prefix). */
#define ERRBUF_SIZE 512
typedef struct { char msg[ERRBUF_SIZE]; } err_t;

void err_set(err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A file loaded into memory (mmap'ed read-only/private, or heap copy). */
typedef struct {
    unsigned char *data;
    size_t size;
    bool mapped;
} filebuf_t;

/* Load a regular, non-empty file. Returns 0 or -1 with e set to the problem. */
int file_load(const char *path, filebuf_t *fb, err_t *e);
void file_free(filebuf_t *fb);
/* The same checks and errors as file_load, but read() into *buf (of capacity *cap, grown as
 * needed and kept for the next file: no mapping to undo, which in a threaded process costs
 * every core a TLB flush). *size gets the byte count. */
int file_read_into(const char *path, unsigned char **buf, size_t *cap, size_t *size, err_t *e);

enum path_kind { PATH_MISSING, PATH_FILE, PATH_DIR, PATH_OTHER };
enum path_kind path_kind(const char *path);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Room for element n of the growable array v of capacity *cap: when n == *cap the capacity
 * becomes first, then doubles, and v is reallocated. Returns v (perhaps moved). */
void *xgrow(void *v, size_t n, size_t *cap, size_t elem, size_t first);

/* Growable array of char* (owned). */
typedef struct { char **v; size_t n, cap; } strvec_t;
void strvec_push(strvec_t *sv, const char *s);
bool strvec_contains(const strvec_t *sv, const char *s);
void strvec_free(strvec_t *sv);

/* Bounded string length: returns n if no NUL in the first n bytes. */
size_t bounded_strlen(const unsigned char *s, size_t n);

#endif
