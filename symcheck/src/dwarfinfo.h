/* DWARF reader (libdw): parameter lists of named functions. */
#ifndef SYMCHECK_DWARFINFO_H
#define SYMCHECK_DWARFINFO_H

#include <elfutils/libdw.h>

#include "util.h"

typedef struct {
    char *name;   /* parameter name, "" when unnamed */
    char *type;   /* C-like type string */
} dw_param_t;

typedef struct {
    const char *want;      /* function name looked for (caller-owned) */
    bool found;
    dw_param_t *params;
    size_t n_params;
    bool variadic;
} dw_func_t;

enum dw_status { DW_OK = 0, DW_NO_DWARF = 1, DW_ERROR = -1 };

/* Look up every funcs[i].want among the subprograms of an ELF image's DWARF.
 * Returns DW_NO_DWARF when the image has no debug info (not an error). */
enum dw_status dw_find_functions(unsigned char *buf, size_t len, dw_func_t *funcs, size_t n, err_t *e);
void dw_func_clear(dw_func_t *f);
/* The C-like text of a type DIE (typedef names kept); "void" when type is NULL. */
char *dw_type_string(Dwarf_Die *type);
/* The type DIE of die's DW_AT_type (integrated); false for void. */
bool dw_die_type(Dwarf_Die *die, Dwarf_Die *out);

#endif
