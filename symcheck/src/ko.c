#include "ko.h"

#include <stdlib.h>
#include <string.h>

void ko_parse_modinfo(const unsigned char *p, size_t n, komod_t *m)
{
    size_t pos = 0;
    while (pos < n) {
        size_t l = bounded_strlen(p + pos, n - pos);
        if (l > 0) {
            char *s = xstrndup((const char *)p + pos, l);
            strvec_push(&m->modinfo, s);
            char *eq = strchr(s, '=');
            if (eq) {
                *eq = 0;
                const char *k = s, *v = eq + 1;
                char **slot = NULL;
                if (strcmp(k, "license") == 0)
                    slot = &m->license;
                else if (strcmp(k, "vermagic") == 0)
                    slot = &m->vermagic;
                else if (strcmp(k, "name") == 0)
                    slot = &m->modname;
                else if (strcmp(k, "depends") == 0)
                    slot = &m->depends;
                else if (strcmp(k, "import_ns") == 0 && !strvec_contains(&m->import_ns, v))
                    strvec_push(&m->import_ns, v);
                /* the kernel uses the first license= (get_modinfo) */
                if (slot && !*slot)
                    *slot = xstrdup(v);
            }
            free(s);
        }
        pos += l + 1;
    }
}

static int cmp_undef(const void *a, const void *b)
{
    return strcmp(((const ko_undef_t *)a)->name, ((const ko_undef_t *)b)->name);
}

static int read_symtab(Elf *elf, unsigned char *buf, size_t len, komod_t *m, err_t *e)
{
    elfr_sec_t st, strtab;
    int r = elfr_find(elf, buf, len, ".symtab", &st, e);
    if (r < 0)
        return -1;
    if (r == 0 || !st.data) {
        err_set(e, "no .symtab section");
        return -1;
    }
    if (st.shdr.sh_type != SHT_SYMTAB) {
        err_set(e, ".symtab has wrong section type");
        return -1;
    }
    if (st.size % sizeof(Elf64_Sym) != 0) {
        err_set(e, ".symtab size is not a multiple of the symbol size");
        return -1;
    }
    if (elfr_get(elf, buf, len, st.shdr.sh_link, &strtab, e) < 0)
        return -1;
    if (!strtab.data || strtab.shdr.sh_type != SHT_STRTAB) {
        err_set(e, ".symtab string table is missing or not a string table");
        return -1;
    }
    size_t nsym = st.size / sizeof(Elf64_Sym);
    size_t cap = 0;
    for (size_t i = 1; i < nsym; i++) {
        Elf64_Sym s;
        memcpy(&s, st.data + i * sizeof s, sizeof s);
        if (s.st_shndx != SHN_UNDEF)
            continue;
        unsigned bind = ELF64_ST_BIND(s.st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK)
            continue;
        if (s.st_name >= strtab.size) {
            err_set(e, "symbol %zu: name offset out of range", i);
            return -1;
        }
        size_t l = bounded_strlen(strtab.data + s.st_name, strtab.size - s.st_name);
        if (l == strtab.size - s.st_name) {
            err_set(e, "symbol %zu: unterminated name", i);
            return -1;
        }
        if (l == 0)
            continue;
        const char *name = (const char *)strtab.data + s.st_name;
        /* modpost ignores this one (ignore_undef_symbol) */
        if (strcmp(name, "_GLOBAL_OFFSET_TABLE_") == 0)
            continue;
        m->undef = xgrow(m->undef, m->n_undef, &cap, sizeof *m->undef, 64);
        m->undef[m->n_undef].name = xstrdup(name);
        m->undef[m->n_undef].weak = bind == STB_WEAK;
        m->n_undef++;
    }
    if (m->n_undef > 1)
        qsort(m->undef, m->n_undef, sizeof *m->undef, cmp_undef);
    /* drop duplicates (a name can appear twice, e.g. weak and global) */
    size_t w = 0;
    for (size_t i = 0; i < m->n_undef; i++) {
        if (w > 0 && strcmp(m->undef[w - 1].name, m->undef[i].name) == 0) {
            m->undef[w - 1].weak = m->undef[w - 1].weak && m->undef[i].weak;
            free(m->undef[i].name);
            continue;
        }
        m->undef[w++] = m->undef[i];
    }
    m->n_undef = w;
    return 0;
}

static int cmp_vers_pos(const void *a, const void *b, void *ctx)
{
    const komod_t *m = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(m->vers[x].name, m->vers[y].name);
    return c ? c : (x < y ? -1 : x > y);
}

void ko_index_versions(komod_t *m)
{
    free(m->vers_by_name);
    m->vers_by_name = xcalloc(m->n_vers ? m->n_vers : 1, sizeof *m->vers_by_name);
    for (size_t i = 0; i < m->n_vers; i++)
        m->vers_by_name[i] = i;
    qsort_r(m->vers_by_name, m->n_vers, sizeof *m->vers_by_name, cmp_vers_pos, m);
}

static int read_versions(Elf *elf, unsigned char *buf, size_t len, komod_t *m, err_t *e)
{
    elfr_sec_t v;
    int r = elfr_find(elf, buf, len, "__versions", &v, e);
    if (r < 0)
        return -1;
    if (r == 0)
        return 0;
    if (!v.data) {
        err_set(e, "__versions has no file data");
        return -1;
    }
    if (v.size % 64 != 0) {
        err_set(e, "__versions size %zu is not a multiple of 64", v.size);
        return -1;
    }
    m->has_versions = true;
    m->n_vers = v.size / 64;
    m->vers = xcalloc(m->n_vers ? m->n_vers : 1, sizeof *m->vers);
    for (size_t i = 0; i < m->n_vers; i++) {
        const unsigned char *p = v.data + i * 64;
        size_t l = bounded_strlen(p + 8, 56);
        if (l == 56) {
            m->n_vers = i;
            err_set(e, "__versions entry %zu: name not NUL-terminated", i);
            return -1;
        }
        m->vers[i].crc = (uint32_t)rd64(p);
        m->vers[i].name = xstrndup((const char *)p + 8, l);
    }
    ko_index_versions(m);
    return 0;
}

static int collect_datasecs(Elf *elf, unsigned char *buf, size_t len, komod_t *m, err_t *e)
{
    size_t shnum;
    if (elf_getshdrnum(elf, &shnum) != 0) {
        err_set(e, "corrupt section headers");
        return -1;
    }
    m->datasecs = xcalloc(shnum ? shnum : 1, sizeof *m->datasecs);
    for (size_t i = 1; i < shnum; i++) {
        elfr_sec_t s;
        if (elfr_get(elf, buf, len, i, &s, e) < 0)
            return -1;
        if (!s.data || s.shdr.sh_type != SHT_PROGBITS)
            continue;
        if (!(s.shdr.sh_flags & SHF_ALLOC) || (s.shdr.sh_flags & SHF_EXECINSTR))
            continue;
        /* metadata written by modpost / the export macros, not the module's own data */
        if (strcmp(s.name, "__versions") == 0 || strcmp(s.name, ".modinfo") == 0 ||
            strcmp(s.name, "__ksymtab_strings") == 0)
            continue;
        ko_datasec_t *d = &m->datasecs[m->n_datasecs++];
        d->name = xstrdup(s.name);
        d->offset = (size_t)s.shdr.sh_offset;
        d->data = s.data;
        d->size = s.size;
    }
    return 0;
}

int ko_read(unsigned char *buf, size_t len, komod_t *m, err_t *e)
{
    return ko_read_opts(buf, len, m, 0, e);
}

void ko_parse_this_module(const unsigned char *p, size_t n, komod_t *m)
{
    if (!p || n < KO_THIS_MODULE_NAME_OFF + KO_MODULE_NAME_LEN)
        return;
    const unsigned char *name = p + KO_THIS_MODULE_NAME_OFF;
    size_t l = bounded_strlen(name, KO_MODULE_NAME_LEN);
    if (l > 0 && l < KO_MODULE_NAME_LEN)
        m->this_module_name = xstrndup((const char *)name, l);
}

const char *ko_loader_name(const komod_t *m)
{
    return m->this_module_name ? m->this_module_name : m->modname;
}

int ko_read_opts(unsigned char *buf, size_t len, komod_t *m, unsigned flags, err_t *e)
{
    memset(m, 0, sizeof *m);
    Elf *elf = elfr_open(buf, len, ET_REL, e);
    if (!elf)
        return -1;
    elfr_sec_t mi;
    int r;
    if (read_symtab(elf, buf, len, m, e) != 0 || read_versions(elf, buf, len, m, e) != 0)
        goto fail;
    r = elfr_find(elf, buf, len, ".modinfo", &mi, e);
    if (r < 0)
        goto fail;
    if (r == 0 || !mi.data) {
        err_set(e, "no .modinfo section");
        goto fail;
    }
    ko_parse_modinfo(mi.data, mi.size, m);
    r = elfr_find(elf, buf, len, ".gnu.linkonce.this_module", &mi, e);
    if (r < 0)
        goto fail;
    if (r > 0)
        ko_parse_this_module(mi.data, mi.size, m);
    if (!(flags & KO_NO_DATASECS) && collect_datasecs(elf, buf, len, m, e) != 0)
        goto fail;
    elf_end(elf);
    return 0;
fail:
    elf_end(elf);
    ko_free(m);
    return -1;
}

void ko_free(komod_t *m)
{
    for (size_t i = 0; i < m->n_undef; i++)
        free(m->undef[i].name);
    free(m->undef);
    for (size_t i = 0; i < m->n_vers; i++)
        free(m->vers[i].name);
    free(m->vers);
    free(m->vers_by_name);
    free(m->license);
    free(m->vermagic);
    free(m->modname);
    free(m->this_module_name);
    free(m->depends);
    strvec_free(&m->import_ns);
    strvec_free(&m->modinfo);
    for (size_t i = 0; i < m->n_datasecs; i++)
        free(m->datasecs[i].name);
    free(m->datasecs);
    memset(m, 0, sizeof *m);
}

const ko_version_t *ko_find_version(const komod_t *m, const char *name)
{
    if (!m->vers_by_name) {   /* a komod_t made by hand, without ko_index_versions */
        for (size_t i = 0; i < m->n_vers; i++)
            if (strcmp(m->vers[i].name, name) == 0)
                return &m->vers[i];
        return NULL;
    }
    size_t lo = 0, hi = m->n_vers;   /* leftmost entry >= name */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->vers[m->vers_by_name[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n_vers && strcmp(m->vers[m->vers_by_name[lo]].name, name) == 0)
        return &m->vers[m->vers_by_name[lo]];
    return NULL;
}

const ko_undef_t *ko_find_undef(const komod_t *m, const char *name)
{
    size_t lo = 0, hi = m->n_undef;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, m->undef[mid].name);
        if (c == 0)
            return &m->undef[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
