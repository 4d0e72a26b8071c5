/* Output helpers: aligned text tables and a small streaming JSON writer. */
#ifndef SYMCHECK_OUTPUT_H
#define SYMCHECK_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* ---- text tables ---- */
typedef struct {
    size_t ncols;
    strvec_t cells;   /* row-major, header first */
} table_t;

void table_init(table_t *t, size_t ncols, ...);       /* ncols header strings */
void table_row(table_t *t, ...);                      /* ncols cell strings (NULL prints "-") */
void table_print(const table_t *t, FILE *f, const char *indent);
void table_free(table_t *t);
size_t table_rows(const table_t *t);                   /* data rows */

/* ---- JSON ---- */
#define JSON_MAX_DEPTH 32
typedef struct {
    FILE *f;
    int depth;
    bool need_comma[JSON_MAX_DEPTH];
    bool after_key;
} json_t;

void json_init(json_t *j, FILE *f);
void json_obj_begin(json_t *j);
void json_obj_end(json_t *j);
void json_arr_begin(json_t *j);
void json_arr_end(json_t *j);
void json_key(json_t *j, const char *k);
void json_str(json_t *j, const char *s);       /* NULL -> null */
void json_int(json_t *j, long long v);
void json_bool(json_t *j, bool v);
void json_null(json_t *j);
void json_crc(json_t *j, uint32_t crc, bool has); /* "0x%08x" or null */
/* An object of n string members: n pairs of key, value (NULL value -> null). */
void json_str_obj(json_t *j, size_t n, ...);
void json_finish(json_t *j);                     /* newline */
/* One value already written as JSON text (e.g. by another json_t at depth 0 into a memory
 * stream): the separator this position needs, then the text as is. */
void json_raw(json_t *j, const char *text, size_t n);

/* Write s as a JSON string literal (valid UTF-8 passes through; invalid bytes become \u00XX). */
void json_write_string(FILE *f, const char *s);

#endif
