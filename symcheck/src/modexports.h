/* Exports of a module object (.ko): __ksymtab/__ksymtab_gpl entries with CRC and namespace. */
#ifndef SYMCHECK_MODEXPORTS_H
#define SYMCHECK_MODEXPORTS_H

#include "exports.h"
#include "util.h"

/* ko_exports_read's return for a 7.2-layout module whose tables do not match (a __kflagstab or
 * __kcrctab of another length than __ksymtab, a __ksymtab_<name> between entries): the loader
 * would read another entry's flag or past the table, so the module counts as corrupt. */
#define KOX_CORRUPT (-2)

/* Add the exports of the module image to out (module field: module). The layout is told by the
 * image: a __kflagstab section means 7.2 (GPL-only from the flag table), else 6.1 to 6.12
 * (GPL-only from the section). Returns 0, -1 (e set: the exports cannot be read) or KOX_CORRUPT. */
int ko_exports_read(const unsigned char *buf, size_t len, const char *module, exportset_t *out, err_t *e);

#endif
