/* Exports of a module object (.ko): __ksymtab/__ksymtab_gpl entries with CRC and namespace. */
#ifndef SYMCHECK_MODEXPORTS_H
#define SYMCHECK_MODEXPORTS_H

#include "exports.h"
#include "util.h"

/* Add the exports of the module image to out (module field: module). Returns 0 or -1 (e set). */
int ko_exports_read(const unsigned char *buf, size_t len, const char *module, exportset_t *out, err_t *e);

#endif
