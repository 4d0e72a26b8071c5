/* Code scan of a kernel module (x86-64 ET_REL): per function, the calls it makes, the string
 * literals it hands them in the argument registers, the static cells it loads and stores, read
 * from the relocations (.rela.text*) and the few instruction bytes before each relocated field.
 * No disassembler: only the encodings the compiler emits for these operations are recognised
 * (see codescan.c). The audit command builds on this. */
#ifndef SYMCHECK_CODESCAN_H
#define SYMCHECK_CODESCAN_H

#include "util.h"

#define CS_NARGS 3   /* rdi, rsi, rdx */

enum cs_ev_kind {
    CS_CALL,       /* direct call or tail jump to a symbol */
    CS_INDIRECT,   /* call/jmp through a register or a memory cell */
    CS_ADDR,       /* address of a function symbol taken (not called) */
    CS_LOAD,       /* load of a static cell (rip-relative mov into a register) */
    CS_STORE,      /* store of a register into a static cell */
    CS_LITERAL,    /* an identifier-like string literal materialised */
};

typedef struct {
    enum cs_ev_kind kind;
    uint64_t off;                  /* offset in the section */
    const char *target;            /* CALL/ADDR: symbol name (points into the image) */
    long local;                    /* CALL/ADDR: index of a function of this module, or -1 */
    const char *arg[CS_NARGS];     /* CALL/INDIRECT: identifier literal in rdi/rsi/rdx, or NULL */
    long arg0_obj;                 /* CALL: rdi = address of data object (index in objs), or -1 */
    size_t cell_sec;               /* LOAD/STORE: section index ... */
    uint64_t cell_off;             /* ... and offset of the cell */
    const char *literal;           /* LITERAL: the string */
    enum { CS_DEST_REG, CS_DEST_MEMORY, CS_DEST_CELL } lit_dest;   /* LITERAL: into a register,
                                      stack/heap memory, or the static cell (cell_sec, cell_off) */
    bool consumed;                 /* LITERAL: reached a call in an argument register */
} cs_event_t;

typedef struct {
    const char *name;              /* the global name when the address has one (points into the image) */
    bool global;
    size_t sec;
    uint64_t addr, size;
    const unsigned char *code;     /* the function's bytes (points into the image) */
    cs_event_t *ev;                /* in address order */
    size_t n_ev, cap;
} cs_func_t;

/* A data object referenced as a call argument, with the identifier literals its initializer
 * points to (from the data section's relocations): static struct kprobe kp = {.symbol_name = ...}. */
typedef struct {
    size_t sec;
    uint64_t off, size;
    const char **lit;
    size_t n_lit;
} cs_obj_t;

typedef struct {
    cs_func_t *fn;                 /* sorted by (section, address) */
    size_t n_fn;
    cs_obj_t *objs;
    size_t n_objs;
    strvec_t exports;              /* names with a __ksymtab_<name> entry */
} cs_module_t;

/* Scan an ELF relocatable image (already checked by ko_read). Strings point into buf, which must
 * outlive m. Returns 0 or -1 with e set. */
int cs_scan(const unsigned char *buf, size_t len, cs_module_t *m, err_t *e);
void cs_free(cs_module_t *m);
/* Index of the function called name, or -1. */
long cs_find_fn(const cs_module_t *m, const char *name);
/* Is s an identifier (what a symbol name looks like: [A-Za-z_][A-Za-z0-9_.$]*)? */
bool cs_is_identifier(const char *s);

#endif
