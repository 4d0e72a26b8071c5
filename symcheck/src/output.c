#include "output.h"

#include <stdarg.h>
#include <string.h>

void table_init(table_t *t, size_t ncols, ...)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    va_list ap;
    va_start(ap, ncols);
    for (size_t i = 0; i < ncols; i++) {
        const char *s = va_arg(ap, const char *);
        strvec_push(&t->cells, s ? s : "-");
    }
    va_end(ap);
}

void table_row(table_t *t, ...)
{
    va_list ap;
    va_start(ap, t);
    for (size_t i = 0; i < t->ncols; i++) {
        const char *s = va_arg(ap, const char *);
        strvec_push(&t->cells, s && *s ? s : "-");
    }
    va_end(ap);
}

size_t table_rows(const table_t *t)
{
    return t->ncols ? t->cells.n / t->ncols - 1 : 0;
}

void table_print(const table_t *t, FILE *f, const char *indent)
{
    if (!t->ncols)
        return;
    size_t w[32] = {0};
    size_t nc = t->ncols < 32 ? t->ncols : 32;
    for (size_t i = 0; i < t->cells.n; i++) {
        size_t c = i % t->ncols;
        if (c < nc) {
            size_t l = strlen(t->cells.v[i]);
            if (l > w[c])
                w[c] = l;
        }
    }
    for (size_t r = 0; r < t->cells.n / t->ncols; r++) {
        fputs(indent ? indent : "", f);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells.v[r * t->ncols + c];
            if (c + 1 == t->ncols)
                fputs(s, f);
            else
                fprintf(f, "%-*s  ", (int)(c < nc ? w[c] : 0), s);
        }
        fputc('\n', f);
    }
}

void table_free(table_t *t)
{
    strvec_free(&t->cells);
    t->ncols = 0;
}

/* ---- JSON ---- */
void json_init(json_t *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

static void json_pre(json_t *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH) {
        if (j->need_comma[j->depth - 1])
            fputc(',', j->f);
        j->need_comma[j->depth - 1] = true;
    }
}

static void json_open(json_t *j, char c)
{
    json_pre(j);
    fputc(c, j->f);
    if (j->depth < JSON_MAX_DEPTH)
        j->need_comma[j->depth] = false;
    j->depth++;
}

static void json_close(json_t *j, char c)
{
    fputc(c, j->f);
    if (j->depth > 0)
        j->depth--;
}

void json_obj_begin(json_t *j) { json_open(j, '{'); }
void json_obj_end(json_t *j) { json_close(j, '}'); }
void json_arr_begin(json_t *j) { json_open(j, '['); }
void json_arr_end(json_t *j) { json_close(j, ']'); }

void json_str_obj(json_t *j, size_t n, ...)
{
    va_list ap;
    va_start(ap, n);
    json_obj_begin(j);
    for (size_t i = 0; i < n; i++) {
        json_key(j, va_arg(ap, const char *));
        json_str(j, va_arg(ap, const char *));
    }
    json_obj_end(j);
    va_end(ap);
}

void json_key(json_t *j, const char *k)
{
    json_pre(j);
    json_write_string(j->f, k);
    fputc(':', j->f);
    j->after_key = true;
}

/* Length of a valid UTF-8 sequence at s, 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_write_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            s++;
        } else if (c == '\n') {
            fputs("\\n", f);
            s++;
        } else if (c == '\t') {
            fputs("\\t", f);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            s++;
        } else if (c < 0x80) {
            fputc(c, f);
            s++;
        } else {
            size_t n = utf8_len(s);
            if (n == 0) {
                fprintf(f, "\\u%04x", c);
                s++;
            } else {
                fwrite(s, 1, n, f);
                s += n;
            }
        }
    }
    fputc('"', f);
}

void json_str(json_t *j, const char *s)
{
    json_pre(j);
    if (s)
        json_write_string(j->f, s);
    else
        fputs("null", j->f);
}

void json_int(json_t *j, long long v)
{
    json_pre(j);
    fprintf(j->f, "%lld", v);
}

void json_bool(json_t *j, bool v)
{
    json_pre(j);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json_t *j)
{
    json_pre(j);
    fputs("null", j->f);
}

void json_crc(json_t *j, uint32_t crc, bool has)
{
    json_pre(j);
    if (has)
        fprintf(j->f, "\"0x%08x\"", crc);
    else
        fputs("null", j->f);
}

void json_raw(json_t *j, const char *text, size_t n)
{
    json_pre(j);
    fwrite(text, 1, n, j->f);
}

void json_finish(json_t *j)
{
    fputc('\n', j->f);
}
