#include "elfread.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void elf_init(void)
{
    elf_version(EV_CURRENT);
}

/* libelf wants elf_version() once before any other call; check's workers open modules from
 * several threads, each with its own Elf handle. */
static void elf_init_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, elf_init);
}

Elf *elfr_open(unsigned char *buf, size_t len, int want_type, err_t *e)
{
    elf_init_once();
    if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG) != 0) {
        err_set(e, "not an ELF file");
        return NULL;
    }
    if (buf[EI_CLASS] != ELFCLASS64) {
        err_set(e, "wrong ELF class (%s), expected 64-bit",
                buf[EI_CLASS] == ELFCLASS32 ? "32-bit" : "invalid");
        return NULL;
    }
    if (buf[EI_DATA] != ELFDATA2LSB) {
        err_set(e, "wrong ELF byte order, expected little-endian");
        return NULL;
    }
    if (len < sizeof(Elf64_Ehdr)) {
        err_set(e, "truncated ELF header");
        return NULL;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, buf, sizeof eh);
    if (eh.e_machine != EM_X86_64) {
        err_set(e, "wrong ELF machine %u%s, expected x86-64", (unsigned)eh.e_machine,
                eh.e_machine == EM_AARCH64 ? " (aarch64)" : eh.e_machine == EM_386 ? " (i386)" : "");
        return NULL;
    }
    if (want_type == ET_REL && eh.e_type != ET_REL) {
        err_set(e, "not a relocatable object (kernel module)");
        return NULL;
    }
    if (want_type == ET_EXEC && eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
        err_set(e, "not a linked executable (vmlinux)");
        return NULL;
    }
    if (eh.e_shoff == 0 || eh.e_shoff > len) {
        err_set(e, "no section headers or section header offset out of range");
        return NULL;
    }
    if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
        err_set(e, "bad section header entry size");
        return NULL;
    }
    Elf *elf = elf_memory((char *)buf, len);
    if (!elf) {
        err_set(e, "libelf: %s", elf_errmsg(-1));
        return NULL;
    }
    if (elf_kind(elf) != ELF_K_ELF) {
        err_set(e, "not an ELF file");
        elf_end(elf);
        return NULL;
    }
    size_t shnum, shstrndx;
    if (elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0) {
        err_set(e, "corrupt section headers: %s", elf_errmsg(-1));
        elf_end(elf);
        return NULL;
    }
    /* Section header table must lie inside the image. */
    if (shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr)) {
        err_set(e, "truncated section header table");
        elf_end(elf);
        return NULL;
    }
    if (shnum == 0 || shstrndx >= shnum) {
        err_set(e, "missing section name table");
        elf_end(elf);
        return NULL;
    }
    return elf;
}

static int fill_sec(Elf_Scn *scn, Elf *elf, const unsigned char *buf, size_t len, size_t shstrndx,
                    elfr_sec_t *out, err_t *e)
{
    memset(out, 0, sizeof *out);
    if (!gelf_getshdr(scn, &out->shdr)) {
        err_set(e, "corrupt section header: %s", elf_errmsg(-1));
        return -1;
    }
    out->index = elf_ndxscn(scn);
    out->name = elf_strptr(elf, shstrndx, out->shdr.sh_name);
    if (!out->name)
        out->name = "";
    if (out->shdr.sh_type == SHT_NOBITS) {
        out->data = NULL;
        out->size = 0;
        return 0;
    }
    if (out->shdr.sh_offset > len || out->shdr.sh_size > len - out->shdr.sh_offset) {
        err_set(e, "section %s extends past end of file", out->name[0] ? out->name : "?");
        return -1;
    }
    out->data = buf + out->shdr.sh_offset;
    out->size = (size_t)out->shdr.sh_size;
    return 0;
}

int elfr_find(Elf *elf, const unsigned char *buf, size_t len, const char *name, elfr_sec_t *out, err_t *e)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
        err_set(e, "corrupt section headers: %s", elf_errmsg(-1));
        return -1;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            err_set(e, "corrupt section header: %s", elf_errmsg(-1));
            return -1;
        }
        const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
        if (n && strcmp(n, name) == 0)
            return fill_sec(scn, elf, buf, len, shstrndx, out, e) == 0 ? 1 : -1;
    }
    return 0;
}

int elfr_get(Elf *elf, const unsigned char *buf, size_t len, size_t index, elfr_sec_t *out, err_t *e)
{
    size_t shstrndx, shnum;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getshdrnum(elf, &shnum) != 0) {
        err_set(e, "corrupt section headers: %s", elf_errmsg(-1));
        return -1;
    }
    if (index == 0 || index >= shnum) {
        err_set(e, "section index %zu out of range", index);
        return -1;
    }
    Elf_Scn *scn = elf_getscn(elf, index);
    if (!scn) {
        err_set(e, "section index %zu: %s", index, elf_errmsg(-1));
        return -1;
    }
    return fill_sec(scn, elf, buf, len, shstrndx, out, e) == 0 ? 1 : -1;
}

/* Map a virtual address into the strings section; returns NULL when out of range
 * or not NUL-terminated inside the section. */
static const char *str_at(const elfr_sec_t *strs, uint64_t addr)
{
    uint64_t base = strs->shdr.sh_addr;
    if (addr < base || addr - base >= strs->size)
        return NULL;
    size_t off = (size_t)(addr - base);
    size_t l = bounded_strlen(strs->data + off, strs->size - off);
    if (l == strs->size - off)
        return NULL;
    return (const char *)strs->data + off;
}

/* One export table. flags NULL: every entry is of class cls (6.1 to 6.12, the section decides);
 * else entry i is GPL-only when flags->data[i] has KSYM_FLAG_GPL_ONLY (7.2: the loader's
 * find_exported_symbol_in_section() reads flagstab[sym - start], kernel/module/main.c:375). */
static int read_table(const elfr_sec_t *tab, const elfr_sec_t *crc, const elfr_sec_t *flags,
                      const elfr_sec_t *strs, enum exp_class cls, exportset_t *out, err_t *e)
{
    if (tab->size % 12 != 0) {
        err_set(e, "%s size %zu is not a multiple of 12", tab->name, tab->size);
        return -1;
    }
    size_t n = tab->size / 12;
    if (crc && crc->size != n * 4) {
        err_set(e, "%s has %zu entries but %s has %zu", crc->name, crc->size / 4, tab->name, n);
        return -1;
    }
    if (flags && flags->size != n) {
        err_set(e, "%s has %zu entries but %s has %zu", flags->name, flags->size, tab->name, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = tab->data + i * 12;
        uint64_t addr = tab->shdr.sh_addr + (uint64_t)i * 12;
        int32_t name_off = (int32_t)rd32(p + 4);
        int32_t ns_off = (int32_t)rd32(p + 8);
        const char *name = str_at(strs, addr + 4 + (uint64_t)(int64_t)name_off);
        if (!name || !*name) {
            err_set(e, "%s entry %zu: name offset out of range", tab->name, i);
            return -1;
        }
        const char *ns = "";
        if (ns_off != 0) {
            ns = str_at(strs, addr + 8 + (uint64_t)(int64_t)ns_off);
            if (!ns) {
                err_set(e, "%s entry %zu: namespace offset out of range", tab->name, i);
                return -1;
            }
        }
        uint32_t c = crc ? rd32(crc->data + i * 4) : 0;
        if (flags)
            cls = (flags->data[i] & KSYM_FLAG_GPL_ONLY) ? EXP_GPL : EXP_PLAIN;
        exportset_add(out, name, "vmlinux", ns, c, crc != NULL, cls);
    }
    return 0;
}

/* 7.2 layout (a __kflagstab section): only __ksymtab counts, GPL-only is its parallel flag byte,
 * CRCs are the parallel __kcrctab; __ksymtab_gpl/__kcrctab_gpl are ignored, as the loader ignores
 * them (kernel/module/main.c:2680-2685; vmlinux.lds.h:511-530 has no such sections). */
static int read_flag_layout(Elf *elf, unsigned char *buf, size_t len, const elfr_sec_t *flags,
                            const elfr_sec_t *strs, exportset_t *out, ksym_info_t *info, err_t *e)
{
    elfr_sec_t tab, crc, tabg;
    int r_tab, r_crc, r_tabg;
    if ((r_tab = elfr_find(elf, buf, len, "__ksymtab", &tab, e)) < 0 ||
        (r_crc = elfr_find(elf, buf, len, "__kcrctab", &crc, e)) < 0 ||
        (r_tabg = elfr_find(elf, buf, len, "__ksymtab_gpl", &tabg, e)) < 0)
        return -1;
    if (!r_tab) {
        err_set(e, "__kflagstab without a __ksymtab section");
        return -1;
    }
    if (!strs || !strs->data) {
        err_set(e, "no __ksymtab_strings section");
        return -1;
    }
    if (!tab.data || !flags->data || (r_crc && !crc.data)) {
        err_set(e, "export table section has no file data (SHT_NOBITS)");
        return -1;
    }
    if (read_table(&tab, r_crc ? &crc : NULL, flags, strs, EXP_PLAIN, out, e) != 0)
        return -1;
    info->flag_layout = true;
    for (size_t i = 0; i < out->n; i++) {
        if (out->v[i].cls == EXP_GPL)
            info->n_gpl++;
        else
            info->n_plain++;
    }
    info->n_ignored = r_tabg ? tabg.size / 12 : 0;
    info->has_crc = r_crc;
    return 0;
}

/* 6.1 to 6.12 layout: the section decides the class. */
static int read_section_layout(Elf *elf, unsigned char *buf, size_t len, const elfr_sec_t *strs,
                               exportset_t *out, ksym_info_t *info, err_t *e)
{
    elfr_sec_t tab, tabg, crc, crcg;
    int r_tab, r_tabg, r_crc, r_crcg;
    if ((r_tab = elfr_find(elf, buf, len, "__ksymtab", &tab, e)) < 0 ||
        (r_tabg = elfr_find(elf, buf, len, "__ksymtab_gpl", &tabg, e)) < 0 ||
        (r_crc = elfr_find(elf, buf, len, "__kcrctab", &crc, e)) < 0 ||
        (r_crcg = elfr_find(elf, buf, len, "__kcrctab_gpl", &crcg, e)) < 0)
        return -1;
    if (!r_tab && !r_tabg) {
        err_set(e, "no __ksymtab or __ksymtab_gpl section");
        return -1;
    }
    if (!strs || !strs->data) {
        err_set(e, "no __ksymtab_strings section");
        return -1;
    }
    if ((r_tab && !tab.data) || (r_tabg && !tabg.data) || (r_crc && !crc.data) || (r_crcg && !crcg.data)) {
        err_set(e, "export table section has no file data (SHT_NOBITS)");
        return -1;
    }
    bool have_crc = r_crc || r_crcg;
    if (have_crc && ((r_tab && tab.size && !r_crc) || (r_tabg && tabg.size && !r_crcg))) {
        err_set(e, "__kcrctab present for only one of __ksymtab/__ksymtab_gpl");
        return -1;
    }
    if (r_tab && read_table(&tab, r_crc ? &crc : NULL, NULL, strs, EXP_PLAIN, out, e) != 0)
        return -1;
    info->n_plain = out->n;
    if (r_tabg && read_table(&tabg, r_crcg ? &crcg : NULL, NULL, strs, EXP_GPL, out, e) != 0)
        return -1;
    info->n_gpl = out->n - info->n_plain;
    info->has_crc = have_crc;
    return 0;
}

int ksymtab_read(unsigned char *buf, size_t len, exportset_t *out, ksym_info_t *info, err_t *e)
{
    memset(out, 0, sizeof *out);
    memset(info, 0, sizeof *info);
    Elf *elf = elfr_open(buf, len, ET_EXEC, e);
    if (!elf)
        return -1;
    elfr_sec_t flags, strs;
    int r_flags, r_strs;
    if ((r_flags = elfr_find(elf, buf, len, "__kflagstab", &flags, e)) < 0 ||
        (r_strs = elfr_find(elf, buf, len, "__ksymtab_strings", &strs, e)) < 0)
        goto fail;
    const elfr_sec_t *sp = r_strs ? &strs : NULL;
    if (r_flags ? read_flag_layout(elf, buf, len, &flags, sp, out, info, e) != 0
                : read_section_layout(elf, buf, len, sp, out, info, e) != 0)
        goto fail;
    const char *dup = exportset_sort(out);
    if (dup) {
        err_set(e, "symbol %s exported twice in ksymtab", dup);
        goto fail;
    }
    elf_end(elf);
    return 0;
fail:
    elf_end(elf);
    exportset_free(out);
    return -1;
}

int elfr_image_load(Elf *elf, const unsigned char *buf, size_t len, elfr_image_t *im, err_t *e)
{
    memset(im, 0, sizeof *im);
    if (elf_getshdrnum(elf, &im->shnum) != 0) {
        err_set(e, "corrupt section headers");
        return -1;
    }
    im->sec = xcalloc(im->shnum ? im->shnum : 1, sizeof *im->sec);
    for (size_t i = 1; i < im->shnum; i++) {
        if (elfr_get(elf, (unsigned char *)buf, len, i, &im->sec[i], e) < 0)
            return -1;
        if (im->sec[i].shdr.sh_type == SHT_SYMTAB && !im->symidx)
            im->symidx = i;
    }
    const elfr_sec_t *st = &im->sec[im->symidx];
    if (!im->symidx || !st->data || st->size % sizeof(Elf64_Sym)) {
        err_set(e, "no usable .symtab section");
        return -1;
    }
    size_t sl = st->shdr.sh_link;
    if (sl == 0 || sl >= im->shnum || !im->sec[sl].data || im->sec[sl].shdr.sh_type != SHT_STRTAB) {
        err_set(e, ".symtab string table is missing or not a string table");
        return -1;
    }
    im->strtab = im->sec[sl];
    im->nsym = st->size / sizeof(Elf64_Sym);
    im->sym = xmalloc(im->nsym * sizeof *im->sym + 1);
    memcpy(im->sym, st->data, im->nsym * sizeof *im->sym);
    return 0;
}

void elfr_image_free(elfr_image_t *im)
{
    free(im->sym);
    free(im->sec);
    memset(im, 0, sizeof *im);
}

const char *elfr_sym_name(const elfr_image_t *im, const Elf64_Sym *s)
{
    if (s->st_name >= im->strtab.size)
        return NULL;
    size_t l = bounded_strlen(im->strtab.data + s->st_name, im->strtab.size - s->st_name);
    return l && l < im->strtab.size - s->st_name ? (const char *)im->strtab.data + s->st_name : NULL;
}
