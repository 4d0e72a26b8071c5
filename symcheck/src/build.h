/* A kernel build as a source of exports: BUILD/Module.symvers and/or BUILD/vmlinux. */
#ifndef SYMCHECK_BUILD_H
#define SYMCHECK_BUILD_H

#include "elfread.h"
#include "exports.h"
#include "util.h"

typedef struct {
    char *label;           /* NAME of NAME=BUILD, else the path */
    char *path;            /* as given */
    char *symvers_path;    /* NULL when not present */
    char *vmlinux_path;    /* NULL when not present */
    exportset_t symvers;   /* every Module.symvers line (vmlinux and modules) */
    exportset_t ksym;      /* vmlinux __ksymtab/__ksymtab_gpl */
    ksym_info_t kinfo;
    exportset_t merged;    /* symvers, plus ksymtab entries that symvers lacks (build_merge) */
    filebuf_t vmlinux_buf; /* kept mapped for DWARF */
} build_t;

enum {
    BUILD_NEED_SYMVERS = 1,   /* error when there is no Module.symvers */
    BUILD_LOAD_VMLINUX = 2,   /* read vmlinux ksymtab when present */
};

/* Open a build dir, or a single file (ELF -> vmlinux, otherwise Module.symvers).
 * On error returns -1, *errpath names the offending file (static or owned by b). */
int build_open(const char *path, const char *label, unsigned flags, build_t *b,
               const char **errpath, err_t *e);
void build_free(build_t *b);
size_t build_count_module(const build_t *b, const char *module);
/* Fill b->merged (sorted union; Module.symvers wins). */
void build_merge(build_t *b);
/* Hash both sets (exportset_index) for many lookups; build_find works either way. */
void build_index(build_t *b);
/* Look a symbol up: Module.symvers first, then the vmlinux ksymtab. */
const export_t *build_find(const build_t *b, const char *name);
/* Does the build carry non-zero MODVERSIONS CRCs? */
bool build_has_crcs(const build_t *b);

#endif
