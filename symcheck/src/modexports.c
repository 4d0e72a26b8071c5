/* The exports of a module object (.ko), for resolving symbols between the modules of a set.
 * 6.1 layout: a __ksymtab_<name> symbol in __ksymtab (plain) or __ksymtab_gpl (GPL) labels a
 * struct kernel_symbol {int value_offset, name_offset, namespace_offset;}; the namespace is a
 * relocation of the third field into __ksymtab_strings (none: no namespace); the CRC is the u32
 * that the __crc_<name> symbol labels in __kcrctab/__kcrctab_gpl.
 * 7.2 layout (a __kflagstab section): every export is in __ksymtab; the __ksymtab_<name> entry at
 * index i is GPL-only when byte i of __kflagstab has KSYM_FLAG_GPL_ONLY, and its CRC is u32 i of
 * __kcrctab, as the loader indexes them (find_exported_symbol_in_section(),
 * kernel/module/main.c:364-385 in 7.2.12); __ksymtab_gpl and __kcrctab_gpl are ignored, as the
 * loader ignores them (main.c:2680-2685). */
#include "modexports.h"

#include <stdlib.h>
#include <string.h>

#include "elfread.h"

typedef elfr_image_t mimg_t;

static bool sec_named(const mimg_t *im, size_t i, const char *name)
{
    return i > 0 && i < im->shnum && im->sec[i].name && strcmp(im->sec[i].name, name) == 0;
}

/* The lookups of one image, built in one pass each (a module with many exports would otherwise
 * rescan every relocation and symbol per export). */
typedef struct {
    size_t tab;          /* the relocated section (sh_info) */
    uint64_t off;        /* r_offset */
    size_t seq;          /* position in section then entry order: the first one wins */
    size_t sym;          /* ELF64_R_SYM */
    int64_t addend;
} mrel_t;

typedef struct {
    const char *name;    /* after "__crc_" */
    size_t seq;          /* symbol index: the first one wins */
    uint32_t crc;
} mcrc_t;

typedef struct {
    mrel_t *rel;
    size_t nrel;
    mcrc_t *crc;
    size_t ncrc;
} mlookup_t;

static int cmp_rel(const void *a, const void *b)
{
    const mrel_t *x = a, *y = b;
    if (x->tab != y->tab)
        return x->tab < y->tab ? -1 : 1;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_crc(const void *a, const void *b)
{
    const mcrc_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* Every RELA entry with a symbol index in range (the ones namespace_of may use). */
static void collect_rels(const mimg_t *im, mlookup_t *lk)
{
    size_t cap = 0, seq = 0;
    for (size_t i = 1; i < im->shnum; i++) {
        const elfr_sec_t *rs = &im->sec[i];
        if (rs->shdr.sh_type != SHT_RELA || !rs->data)
            continue;
        if (!sec_named(im, rs->shdr.sh_info, "__ksymtab") && !sec_named(im, rs->shdr.sh_info, "__ksymtab_gpl"))
            continue;
        for (size_t k = 0; k < rs->size / sizeof(Elf64_Rela); k++, seq++) {
            Elf64_Rela r;
            memcpy(&r, rs->data + k * sizeof r, sizeof r);
            size_t si = ELF64_R_SYM(r.r_info);
            if (si == 0 || si >= im->nsym)
                continue;
            lk->rel = xgrow(lk->rel, lk->nrel, &cap, sizeof *lk->rel, 64);
            lk->rel[lk->nrel++] = (mrel_t){rs->shdr.sh_info, r.r_offset, seq, si, r.r_addend};
        }
    }
    if (lk->nrel > 1)
        qsort(lk->rel, lk->nrel, sizeof *lk->rel, cmp_rel);
}

/* Every __crc_<name> symbol in __kcrctab/__kcrctab_gpl with its 4 bytes inside the section. */
static void collect_crcs(const mimg_t *im, mlookup_t *lk)
{
    size_t cap = 0;
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        const char *n = elfr_sym_name(im, s);
        if (!n || strncmp(n, "__crc_", 6) != 0)
            continue;
        size_t ss = s->st_shndx;
        if ((sec_named(im, ss, "__kcrctab") || sec_named(im, ss, "__kcrctab_gpl")) && im->sec[ss].data &&
            s->st_value <= im->sec[ss].size && im->sec[ss].size - s->st_value >= 4) {
            lk->crc = xgrow(lk->crc, lk->ncrc, &cap, sizeof *lk->crc, 64);
            lk->crc[lk->ncrc++] = (mcrc_t){n + 6, i, rd32(im->sec[ss].data + s->st_value)};
        }
    }
    if (lk->ncrc > 1)
        qsort(lk->crc, lk->ncrc, sizeof *lk->crc, cmp_crc);
}

/* The namespace string of the kernel_symbol at (tab, off), "" when its field is not relocated:
 * the first relocation (section, then entry order) of offset off + 8 in tab decides. */
static const char *namespace_of(const mimg_t *im, const mlookup_t *lk, size_t tab, uint64_t off)
{
    size_t lo = 0, hi = lk->nrel;   /* leftmost entry >= (tab, off + 8) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const mrel_t *r = &lk->rel[mid];
        if (r->tab < tab || (r->tab == tab && r->off < off + 8))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == lk->nrel || lk->rel[lo].tab != tab || lk->rel[lo].off != off + 8)
        return "";
    const Elf64_Sym *s = &im->sym[lk->rel[lo].sym];
    size_t ss = s->st_shndx;
    if (ss == 0 || ss >= im->shnum || !im->sec[ss].data)
        return "";
    int64_t at = (int64_t)((uint64_t)s->st_value + (uint64_t)lk->rel[lo].addend);
    if (at < 0 || (uint64_t)at >= im->sec[ss].size)
        return "";
    const unsigned char *p = im->sec[ss].data + at;
    size_t l = bounded_strlen(p, im->sec[ss].size - (size_t)at);
    return l < im->sec[ss].size - (size_t)at ? (const char *)p : "";
}

/* The CRC of the first __crc_<name> symbol (symbol order) in a __kcrctab section. */
static bool crc_of(const mlookup_t *lk, const char *name, uint32_t *crc)
{
    size_t lo = 0, hi = lk->ncrc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(lk->crc[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == lk->ncrc || strcmp(lk->crc[lo].name, name) != 0)
        return false;
    *crc = lk->crc[lo].crc;
    return true;
}

/* The section named name, 0 when there is none. */
static size_t sec_index(const mimg_t *im, const char *name)
{
    for (size_t i = 1; i < im->shnum; i++)
        if (sec_named(im, i, name))
            return i;
    return 0;
}

/* The 7.2 tables of a module: __ksymtab (12-byte entries), the parallel __kflagstab (1 byte per
 * entry) and, when present, __kcrctab (4 bytes per entry). Returns 0 or KOX_CORRUPT (e set). */
static int flag_tables(const mimg_t *im, size_t tab, size_t flags, size_t crc, err_t *e)
{
    const elfr_sec_t *t = &im->sec[tab], *f = &im->sec[flags], *c = crc ? &im->sec[crc] : NULL;
    if (!t->data || !f->data || (c && !c->data)) {
        err_set(e, "export table section has no file data (SHT_NOBITS)");
        return KOX_CORRUPT;
    }
    if (t->size % 12 != 0) {
        err_set(e, "__ksymtab size %zu is not a multiple of 12", t->size);
        return KOX_CORRUPT;
    }
    if (f->size != t->size / 12) {
        err_set(e, "__kflagstab has %zu entries but __ksymtab has %zu", f->size, t->size / 12);
        return KOX_CORRUPT;
    }
    if (c && c->size != t->size / 12 * 4) {
        err_set(e, "__kcrctab has %zu entries but __ksymtab has %zu", c->size / 4, t->size / 12);
        return KOX_CORRUPT;
    }
    return 0;
}

/* The exports of a 7.2-layout module (flags: the __kflagstab section). */
static int read_flag_exports(const mimg_t *im, const mlookup_t *lk, size_t flags, const char *module,
                             exportset_t *out, err_t *e)
{
    size_t tab = sec_index(im, "__ksymtab"), crc = sec_index(im, "__kcrctab");
    if (!tab) {
        if (im->sec[flags].size == 0)
            return 0;
        err_set(e, "__kflagstab without a __ksymtab section");
        return KOX_CORRUPT;
    }
    if (flag_tables(im, tab, flags, crc, e) != 0)
        return KOX_CORRUPT;
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        const char *n = elfr_sym_name(im, s);
        if (!n || strncmp(n, "__ksymtab_", 10) != 0 || !n[10] || s->st_shndx != tab)
            continue;   /* __ksymtab_gpl (ignored, as the loader does), __ksymtab_strings... */
        if (s->st_value % 12 != 0 || s->st_value >= im->sec[tab].size) {
            err_set(e, "symbol %s is not at an entry of __ksymtab", n);
            return KOX_CORRUPT;
        }
        size_t k = (size_t)(s->st_value / 12);
        bool gpl = im->sec[flags].data[k] & KSYM_FLAG_GPL_ONLY;
        uint32_t c = crc ? rd32(im->sec[crc].data + k * 4) : 0;
        exportset_add(out, n + 10, module, namespace_of(im, lk, tab, s->st_value), c, crc != 0,
                      gpl ? EXP_GPL : EXP_PLAIN);
    }
    return 0;
}

int ko_exports_read(const unsigned char *buf, size_t len, const char *module, exportset_t *out, err_t *e)
{
    Elf *elf = elfr_open((unsigned char *)buf, len, ET_REL, e);
    if (!elf)
        return -1;
    mimg_t im;
    mlookup_t lk = {0};
    int ret = -1;
    if (elfr_image_load(elf, buf, len, &im, e) != 0)
        goto out;
    collect_rels(&im, &lk);
    size_t flags = sec_index(&im, "__kflagstab");
    if (flags) {
        ret = read_flag_exports(&im, &lk, flags, module, out, e);
        goto out;
    }
    collect_crcs(&im, &lk);
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
        bool has = crc_of(&lk, n + 10, &crc);
        exportset_add(out, n + 10, module, namespace_of(&im, &lk, ss, s->st_value), crc, has,
                      gpl ? EXP_GPL : EXP_PLAIN);
    }
    ret = 0;
out:
    free(lk.rel);
    free(lk.crc);
    elfr_image_free(&im);
    elf_end(elf);
    return ret;
}
