/* Common ELF access (libelf) with explicit bounds checks, and the vmlinux ksymtab reader. */
#ifndef SYMCHECK_ELFREAD_H
#define SYMCHECK_ELFREAD_H

#include <gelf.h>
#include <libelf.h>

#include "exports.h"
#include "util.h"

/* Open an in-memory ELF image. Requires 64-bit little-endian x86-64.
 * want_type: ET_REL for modules, ET_EXEC (ET_DYN accepted too) for vmlinux, 0 for any. */
Elf *elfr_open(unsigned char *buf, size_t len, int want_type, err_t *e);

typedef struct {
    const char *name;         /* points into libelf's section name table */
    GElf_Shdr shdr;
    size_t index;
    const unsigned char *data; /* raw bytes inside the image; NULL for SHT_NOBITS */
    size_t size;
} elfr_sec_t;

/* Find a section by name. Returns 1 found, 0 not found, -1 error (e set).
 * On success the section's raw bytes are bounds-checked against the image. */
int elfr_find(Elf *elf, const unsigned char *buf, size_t len, const char *name, elfr_sec_t *out, err_t *e);
/* Same for a section index. */
int elfr_get(Elf *elf, const unsigned char *buf, size_t len, size_t index, elfr_sec_t *out, err_t *e);

static inline uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Every section of a relocatable image and its symbol table (copied: the section data need not
 * be aligned for Elf64_Sym). */
typedef struct {
    elfr_sec_t *sec;          /* shnum entries, [0] unused */
    size_t shnum;
    size_t symidx;            /* the SHT_SYMTAB section */
    Elf64_Sym *sym;
    size_t nsym;
    elfr_sec_t strtab;
} elfr_image_t;

/* Returns 0 or -1 (e set); free with elfr_image_free either way. */
int elfr_image_load(Elf *elf, const unsigned char *buf, size_t len, elfr_image_t *im, err_t *e);
void elfr_image_free(elfr_image_t *im);
/* The name of a symbol, NULL when empty or out of range. */
const char *elfr_sym_name(const elfr_image_t *im, const Elf64_Sym *s);

/* include/linux/module_symbol.h:7 (7.2.12): bit 0 of a __kflagstab byte. */
#define KSYM_FLAG_GPL_ONLY 0x01u

typedef struct {
    size_t n_plain, n_gpl;
    bool has_crc;
    bool flag_layout;   /* 7.2: __kflagstab present, GPL-only is a flag byte per __ksymtab entry */
    size_t n_ignored;   /* flag layout: __ksymtab_gpl entries, ignored as the loader ignores them */
} ksym_info_t;

/* Read the export tables of a linked vmlinux. Without __kflagstab (Linux 6.1 to 6.12):
 * __ksymtab (plain), __ksymtab_gpl (GPL-only), __kcrctab, __kcrctab_gpl. With __kflagstab
 * (Linux 7.2): __ksymtab, the parallel __kflagstab (one byte per entry, KSYM_FLAG_GPL_ONLY) and
 * __kcrctab. Names and namespaces come from __ksymtab_strings either way.
 * Entries get module "vmlinux". The set is sorted. Returns 0 or -1 (e set). */
int ksymtab_read(unsigned char *buf, size_t len, exportset_t *out, ksym_info_t *info, err_t *e);

#endif
