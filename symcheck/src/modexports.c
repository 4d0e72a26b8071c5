/* The exports of a module object (.ko), for resolving symbols between the modules of a set.
 * 6.1 layout: a __ksymtab_<name> symbol in __ksymtab (plain) or __ksymtab_gpl (GPL) labels a
 * struct kernel_symbol {int value_offset, name_offset, namespace_offset;}; the namespace is a
 * relocation of the third field into __ksymtab_strings (none: no namespace); the CRC is the u32
 * that the __crc_<name> symbol labels in __kcrctab/__kcrctab_gpl. */
#include "modexports.h"

#include <stdlib.h>
#include <string.h>

#include "elfread.h"

typedef elfr_image_t mimg_t;

static bool sec_named(const mimg_t *im, size_t i, const char *name)
{
    return i > 0 && i < im->shnum && im->sec[i].name && strcmp(im->sec[i].name, name) == 0;
}

/* The namespace string of the kernel_symbol at (tab, off), "" when its field is not relocated. */
static const char *namespace_of(const mimg_t *im, size_t tab, uint64_t off)
{
    for (size_t i = 1; i < im->shnum; i++) {
        const elfr_sec_t *rs = &im->sec[i];
        if (rs->shdr.sh_type != SHT_RELA || rs->shdr.sh_info != tab || !rs->data)
            continue;
        for (size_t k = 0; k < rs->size / sizeof(Elf64_Rela); k++) {
            Elf64_Rela r;
            memcpy(&r, rs->data + k * sizeof r, sizeof r);
            size_t si = ELF64_R_SYM(r.r_info);
            if (r.r_offset != off + 8 || si == 0 || si >= im->nsym)
                continue;
            const Elf64_Sym *s = &im->sym[si];
            size_t ss = s->st_shndx;
            if (ss == 0 || ss >= im->shnum || !im->sec[ss].data)
                return "";
            int64_t at = (int64_t)((uint64_t)s->st_value + (uint64_t)r.r_addend);
            if (at < 0 || (uint64_t)at >= im->sec[ss].size)
                return "";
            const unsigned char *p = im->sec[ss].data + at;
            size_t l = bounded_strlen(p, im->sec[ss].size - (size_t)at);
            return l < im->sec[ss].size - (size_t)at ? (const char *)p : "";
        }
    }
    return "";
}

static bool crc_of(const mimg_t *im, const char *name, uint32_t *crc)
{
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        const char *n = elfr_sym_name(im, s);
        if (!n || strncmp(n, "__crc_", 6) != 0 || strcmp(n + 6, name) != 0)
            continue;
        size_t ss = s->st_shndx;
        if ((sec_named(im, ss, "__kcrctab") || sec_named(im, ss, "__kcrctab_gpl")) && im->sec[ss].data &&
            s->st_value <= im->sec[ss].size && im->sec[ss].size - s->st_value >= 4) {
            *crc = rd32(im->sec[ss].data + s->st_value);
            return true;
        }
    }
    return false;
}

int ko_exports_read(const unsigned char *buf, size_t len, const char *module, exportset_t *out, err_t *e)
{
    Elf *elf = elfr_open((unsigned char *)buf, len, ET_REL, e);
    if (!elf)
        return -1;
    mimg_t im;
    int ret = -1;
    if (elfr_image_load(elf, buf, len, &im, e) != 0)
        goto out;
    for (size_t i = 1; i < im.nsym; i++) {
        const Elf64_Sym *s = &im.sym[i];
        const char *n = elfr_sym_name(&im, s);
        if (!n || strncmp(n, "__ksymtab_", 10) != 0 || !n[10])
            continue;
        size_t ss = s->st_shndx;
        bool gpl = sec_named(&im, ss, "__ksymtab_gpl");
        if (!gpl && !sec_named(&im, ss, "__ksymtab"))
            continue;   /* __ksymtab_strings and the like */
        uint32_t crc = 0;
        bool has = crc_of(&im, n + 10, &crc);
        exportset_add(out, n + 10, module, namespace_of(&im, ss, s->st_value), crc, has, gpl ? EXP_GPL : EXP_PLAIN);
    }
    ret = 0;
out:
    elfr_image_free(&im);
    elf_end(elf);
    return ret;
}
