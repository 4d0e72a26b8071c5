/* Module.symvers parser. */
#ifndef SYMCHECK_SYMVERS_H
#define SYMCHECK_SYMVERS_H

#include "exports.h"
#include "util.h"

#define SYMVERS_MAX_LINE 4096

/* Parse a Module.symvers image (LF or CRLF line ends): `0xCRC\tsym\tmodule\tEXPORT_SYMBOL[_GPL]\tnamespace`.
 * Blank lines are skipped; anything else malformed is an error ("line N: ...").
 * On success the set is sorted by name. Returns 0 or -1. */
int symvers_parse(const unsigned char *buf, size_t len, exportset_t *out, err_t *e);

#endif
