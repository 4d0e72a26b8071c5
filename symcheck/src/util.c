#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void err_set(err_t *e, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* keep it on one line */
    for (char *p = e->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

static void oom(void)
{
    fputs("symcheck: out of memory\n", stderr);
    exit(2);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        oom();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        oom();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        oom();
    return s;
}

enum path_kind path_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return PATH_MISSING;
    if (S_ISREG(st.st_mode))
        return PATH_FILE;
    if (S_ISDIR(st.st_mode))
        return PATH_DIR;
    return PATH_OTHER;
}

/* Open path for reading and check that it is a regular, non-empty file of a sane size.
 * Returns the descriptor, or -1 with e set (nothing left open). */
static int open_regular(const char *path, size_t *size, err_t *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err_set(e, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "is a directory";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size == 0)
        why = "empty file";
    else if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2)
        why = "file too large";
    if (why) {
        err_set(e, "%s", why);
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

/* Read up to size bytes of fd into buf; returns the count, or -1 with e set. */
static ssize_t read_all(int fd, unsigned char *buf, size_t size, err_t *e)
{
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            err_set(e, "%s", strerror(errno));
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got == 0) {
        err_set(e, "empty file");
        return -1;
    }
    return (ssize_t)got;
}

int file_load(const char *path, filebuf_t *fb, err_t *e)
{
    memset(fb, 0, sizeof *fb);
    size_t size;
    int fd = open_regular(path, &size, e);
    if (fd < 0)
        return -1;
    /* Private writable mapping: libelf never writes to native-endian input,
     * but copy-on-write keeps the file safe if it ever did. */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
        fb->data = p;
        fb->size = size;
        fb->mapped = true;
        close(fd);
        return 0;
    }
    /* Fallback: read into memory. */
    unsigned char *buf = xmalloc(size);
    ssize_t got = read_all(fd, buf, size, e);
    close(fd);
    if (got < 0) {
        free(buf);
        return -1;
    }
    fb->data = buf;
    fb->size = (size_t)got;
    fb->mapped = false;
    return 0;
}

int file_read_into(const char *path, unsigned char **buf, size_t *cap, size_t *size, err_t *e)
{
    size_t want;
    int fd = open_regular(path, &want, e);
    if (fd < 0)
        return -1;
    if (want > *cap) {
        free(*buf);
        *buf = xmalloc(want);
        *cap = want;
    }
    ssize_t got = read_all(fd, *buf, want, e);
    close(fd);
    if (got < 0)
        return -1;
    *size = (size_t)got;
    return 0;
}

void file_free(filebuf_t *fb)
{
    if (!fb->data)
        return;
    if (fb->mapped)
        munmap(fb->data, fb->size);
    else
        free(fb->data);
    memset(fb, 0, sizeof *fb);
}

void *xgrow(void *v, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n == *cap) {
        *cap = *cap ? *cap * 2 : first;
        v = xrealloc(v, *cap * elem);
    }
    return v;
}

void strvec_push(strvec_t *sv, const char *s)
{
    sv->v = xgrow(sv->v, sv->n, &sv->cap, sizeof *sv->v, 8);
    sv->v[sv->n++] = xstrdup(s);
}

bool strvec_contains(const strvec_t *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return true;
    return false;
}

void strvec_free(strvec_t *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}

size_t bounded_strlen(const unsigned char *s, size_t n)
{
    const unsigned char *z = memchr(s, 0, n);
    return z ? (size_t)(z - s) : n;
}
