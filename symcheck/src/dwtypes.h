/* DWARF types for the calltypes command (libdw): the declared type of a kernel function or
 * object, the type of a module variable, and a comparison that ignores typedef names. A module
 * is a relocatable object: its .debug_* sections are relocated in memory first (dwt_relocate),
 * as the module loader would, since libdw reads them as they are. */
#ifndef SYMCHECK_DWTYPES_H
#define SYMCHECK_DWTYPES_H

#include <elfutils/libdw.h>

#include "util.h"

/* Apply the .rela.debug_* relocations of an x86-64 ET_REL image in place (buf must be writable).
 * Returns 0, or -1 with e set (unsupported relocation, compressed DWARF, out-of-range offset). */
int dwt_relocate(unsigned char *buf, size_t len, err_t *e);

/* A DWARF handle on an in-memory image. Returns 1 open, 0 no .debug_info, -1 error (e set). */
typedef struct {
    void *elf;    /* Elf *, opaque here */
    Dwarf *dw;
} dwt_t;
int dwt_open(unsigned char *buf, size_t len, dwt_t *d, err_t *e);
void dwt_close(dwt_t *d);

/* One type, three ways: as written (typedef names kept), exact (typedefs resolved, qualifiers
 * kept; base types by encoding and size) and loose (exact without const/volatile/restrict). */
typedef struct {
    char *written, *exact, *loose;
} dwt_type_t;

/* A function's signature or an object's type. */
typedef struct {
    bool is_function;
    dwt_type_t type;          /* object: its type; function: the return type */
    dwt_type_t *params;
    size_t n_params;
    bool variadic, prototyped;
    char *decl;               /* C-like text: "int (const struct task_struct *)" or "struct class" */
} dwt_entity_t;

/* Find each names[i] among the top-level functions and variables of the image: a definition
 * with external linkage first, then any definition, then a declaration. out[i].decl == NULL
 * when not found. defs[i] counts the definitions whose type differs from the one chosen
 * (same-named static functions: kallsyms would return one of them). */
void dwt_find_entities(dwt_t *d, const char *const *names, size_t n, dwt_entity_t *out, size_t *differing);

/* The variable called name (a static local too) whose DW_OP_addr is addr, or the only variable
 * of that name when none carries an address. Returns 1 found, 0 not found, 2 ambiguous. */
int dwt_find_variable(dwt_t *d, const char *name, uint64_t addr, Dwarf_Die *out);

/* The innermost scalar member of var's type (through structs, unions and arrays) at byte offset
 * delta; *out is the member's DIE (or the array's, whose type is the element's), path gets its
 * C spelling (".addr", "[2].fn"). Returns false when no member starts there. */
bool dwt_member_at(Dwarf_Die *var, uint64_t delta, Dwarf_Die *out, char *path, size_t pathlen);

/* What a variable of type `var` receives when it is assigned a looked-up address:
 * 1 a function signature (pointer to a subroutine type), 2 an object (pointer to a type,
 * e->type is the pointee), 0 untyped (void *, an integer, anything else; e->decl says what). */
int dwt_receiver(Dwarf_Die *var, dwt_entity_t *e);

void dwt_type_free(dwt_type_t *t);
void dwt_entity_free(dwt_entity_t *e);

#endif
