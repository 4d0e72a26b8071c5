#include "symvers.h"

#include <string.h>

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A field must be printable ASCII without blanks. */
static bool field_ok(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] >= 0x7f)
            return false;
    return true;
}

static int parse_line(const unsigned char *p, size_t n, size_t lineno, exportset_t *out, err_t *e)
{
    const unsigned char *f[6];
    size_t fl[6];
    size_t nf = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '\t') {
            if (nf == 6) {
                err_set(e, "line %zu: too many fields", lineno);
                return -1;
            }
            f[nf] = p + start;
            fl[nf] = i - start;
            nf++;
            start = i + 1;
        }
    }
    if (nf < 4) {
        err_set(e, "line %zu: expected 4 or 5 tab-separated fields, got %zu", lineno, nf);
        return -1;
    }
    if (nf > 5) {
        err_set(e, "line %zu: too many fields", lineno);
        return -1;
    }
    /* CRC */
    if (fl[0] < 3 || fl[0] > 10 || f[0][0] != '0' || (f[0][1] != 'x' && f[0][1] != 'X')) {
        err_set(e, "line %zu: bad CRC field", lineno);
        return -1;
    }
    uint32_t crc = 0;
    for (size_t i = 2; i < fl[0]; i++) {
        int v = hexval(f[0][i]);
        if (v < 0) {
            err_set(e, "line %zu: bad CRC field", lineno);
            return -1;
        }
        crc = (crc << 4) | (uint32_t)v;
    }
    if (fl[1] == 0 || !field_ok(f[1], fl[1])) {
        err_set(e, "line %zu: bad symbol name", lineno);
        return -1;
    }
    if (fl[2] == 0 || !field_ok(f[2], fl[2])) {
        err_set(e, "line %zu: bad module field", lineno);
        return -1;
    }
    enum exp_class cls;
    if (fl[3] == 13 && memcmp(f[3], "EXPORT_SYMBOL", 13) == 0)
        cls = EXP_PLAIN;
    else if (fl[3] == 17 && memcmp(f[3], "EXPORT_SYMBOL_GPL", 17) == 0)
        cls = EXP_GPL;
    else {
        err_set(e, "line %zu: unknown export type", lineno);
        return -1;
    }
    if (nf == 5 && fl[4] > 0 && !field_ok(f[4], fl[4])) {
        err_set(e, "line %zu: bad namespace field", lineno);
        return -1;
    }
    char name[SYMVERS_MAX_LINE + 1], mod[SYMVERS_MAX_LINE + 1], ns[SYMVERS_MAX_LINE + 1];
    memcpy(name, f[1], fl[1]);
    name[fl[1]] = 0;
    memcpy(mod, f[2], fl[2]);
    mod[fl[2]] = 0;
    if (nf == 5) {
        memcpy(ns, f[4], fl[4]);
        ns[fl[4]] = 0;
    } else {
        ns[0] = 0;
    }
    exportset_add(out, name, mod, ns, crc, true, cls);
    return 0;
}

int symvers_parse(const unsigned char *buf, size_t len, exportset_t *out, err_t *e)
{
    memset(out, 0, sizeof *out);
    if (len == 0) {
        err_set(e, "empty file");
        return -1;
    }
    size_t lineno = 0, pos = 0;
    while (pos < len) {
        lineno++;
        const unsigned char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t n = end - pos;
        if (n > 0 && buf[end - 1] == '\r')
            n--;   /* CRLF line end, as depmod accepts */
        if (n > SYMVERS_MAX_LINE) {
            err_set(e, "line %zu: line too long (over %d bytes)", lineno, SYMVERS_MAX_LINE);
            goto fail;
        }
        if (memchr(buf + pos, 0, n)) {
            err_set(e, "line %zu: NUL byte in line", lineno);
            goto fail;
        }
        if (n > 0 && parse_line(buf + pos, n, lineno, out, e) != 0)
            goto fail;
        pos = end + 1;
    }
    if (out->n == 0) {
        err_set(e, "no entries");
        goto fail;
    }
    const char *dup = exportset_sort(out);
    if (dup) {
        err_set(e, "duplicate symbol %s", dup);
        goto fail;
    }
    return 0;
fail:
    exportset_free(out);
    return -1;
}
