/* Kernel module (.ko) reader: undefined symbols, __versions, .modinfo. */
#ifndef SYMCHECK_KO_H
#define SYMCHECK_KO_H

#include "elfread.h"

typedef struct {
    char *name;
    bool weak;
} ko_undef_t;

typedef struct {
    char *name;
    uint32_t crc;
} ko_version_t;

typedef struct {
    char *name;        /* section name */
    size_t offset;     /* file offset of the section */
    const unsigned char *data;
    size_t size;
} ko_datasec_t;

typedef struct {
    ko_undef_t *undef;     /* sorted by name */
    size_t n_undef;
    ko_version_t *vers;    /* in file order */
    size_t n_vers;
    size_t *vers_by_name;  /* positions in vers, sorted by name (ties: file order) */
    bool has_versions;
    /* .modinfo */
    char *license, *vermagic, *modname, *depends;  /* NULL when absent */
    /* the name field of the struct module in .gnu.linkonce.this_module (mod->name, the name the
     * loader checks module: namespaces against); NULL when the section is absent or too short */
    char *this_module_name;
    strvec_t import_ns;
    strvec_t modinfo;      /* every "key=value" entry, in order */
    /* allocated, non-executable data sections (for the audit string scan);
     * data points into the caller's buffer */
    ko_datasec_t *datasecs;
    size_t n_datasecs;
} komod_t;

/* Parse a .ko image. Requires .symtab and .modinfo. Returns 0 or -1 (e set). */
int ko_read(unsigned char *buf, size_t len, komod_t *m, err_t *e);
/* The same; with KO_NO_DATASECS, datasecs stays empty and nothing in m points into buf, so the
 * caller may reuse or free buf after the call (check does; audit needs the data sections). */
#define KO_NO_DATASECS 1u
int ko_read_opts(unsigned char *buf, size_t len, komod_t *m, unsigned flags, err_t *e);
void ko_free(komod_t *m);

/* Fill vers_by_name (ko_read does; a komod_t made by hand may). */
void ko_index_versions(komod_t *m);
/* The first __versions entry (in file order) named name, or NULL (binary search over
 * vers_by_name; a linear search when there is none). */
const ko_version_t *ko_find_version(const komod_t *m, const char *name);
/* The undefined symbol named name, or NULL (binary search: undef is sorted and unique). */
const ko_undef_t *ko_find_undef(const komod_t *m, const char *name);

/* struct module { enum module_state state; struct list_head list; char name[MODULE_NAME_LEN]; ...}
 * (include/linux/module.h:397-404, the same from 6.1 to 7.2): on x86-64 name is at byte 24 and
 * MODULE_NAME_LEN is 64 - sizeof(unsigned long) = 56. */
#define KO_THIS_MODULE_NAME_OFF 24
#define KO_MODULE_NAME_LEN 56
/* The name the 7.2 loader compares with a module: namespace (mod->name): this_module_name, else
 * the .modinfo name=, else NULL. */
const char *ko_loader_name(const komod_t *m);
/* Parse a .gnu.linkonce.this_module section image into m->this_module_name (exposed for tests):
 * left NULL when the section is too short or the name is empty or not NUL-terminated. */
void ko_parse_this_module(const unsigned char *p, size_t n, komod_t *m);

/* Parse a .modinfo section image into m (exposed for unit tests). */
void ko_parse_modinfo(const unsigned char *p, size_t n, komod_t *m);

#endif
