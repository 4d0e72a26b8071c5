/* A set of exported symbols (from Module.symvers or a vmlinux ksymtab). */
#ifndef SYMCHECK_EXPORTS_H
#define SYMCHECK_EXPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum exp_class { EXP_PLAIN = 0, EXP_GPL = 1 };

typedef struct {
    char *name;
    char *module;   /* "vmlinux" or the module path from Module.symvers */
    char *ns;       /* namespace, "" when none */
    uint32_t crc;
    bool has_crc;   /* false: no CRC known (no MODVERSIONS / no __kcrctab) */
    enum exp_class cls;
} export_t;

typedef struct {
    export_t *v;
    size_t n, cap;
    bool sorted;
    /* Optional hash index over names (exportset_index): hcap slots (a power of two), each 0
     * (empty) or 1 + the position in v of the first entry with its name. */
    uint32_t *hidx;
    size_t hcap;
} exportset_t;

void exportset_add(exportset_t *s, const char *name, const char *module, const char *ns,
                   uint32_t crc, bool has_crc, enum exp_class cls);
/* Sort by name; returns the name of the first duplicate found (or NULL). */
const char *exportset_sort(exportset_t *s);
/* Lookup by name: through the hash index when the set has one, else binary search (the set must
 * then be sorted). A name given twice finds, through the index, the entry that binary search
 * finds when the set is sorted, and the first one when it is not. */
const export_t *exportset_find(const exportset_t *s, const char *name);
/* Build the hash index (one pass; the set need not be sorted). exportset_add and exportset_sort
 * drop it, since they move or add entries. */
void exportset_index(exportset_t *s);
/* FNV-1a over the bytes of name (exposed for tests). */
uint64_t exportset_hash(const char *name);
void exportset_free(exportset_t *s);

const char *exp_class_str(enum exp_class c);   /* EXPORT_SYMBOL / EXPORT_SYMBOL_GPL */

/* "module:" namespaces (Linux 7.2, EXPORT_SYMBOL_FOR_MODULES, include/linux/export.h:94). */
#define MODULE_NS_PREFIX "module:"
bool is_module_ns(const char *ns);
/* verify_module_namespace() of the 7.2 loader (kernel/module/main.c:1179-1207 in 7.2.12): ns is
 * "module:" then comma-separated patterns; one matches modname when it equals modname, '-' and
 * '_' being the same (mod_strncmp, main.c:204-220), or, ending in '*', when it is a prefix of
 * modname (tail glob). False when ns is not a module: namespace or modname is NULL. */
bool module_ns_allows(const char *ns, const char *modname);

/* license_is_gpl_compatible() of the kernel (kernel/module/main.c). */
bool license_is_gpl_compatible(const char *license);

#endif
