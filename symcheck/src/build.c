#include "build.h"
#include "symvers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_elf_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(m, "\177ELF", 4) == 0;
}

int build_open(const char *path, const char *label, unsigned flags, build_t *b,
               const char **errpath, err_t *e)
{
    memset(b, 0, sizeof *b);
    b->path = xstrdup(path);
    b->label = xstrdup(label ? label : path);
    *errpath = b->path;
    switch (path_kind(path)) {
    case PATH_MISSING:
        err_set(e, "no such file or directory");
        return -1;
    case PATH_OTHER:
        err_set(e, "not a regular file or directory");
        return -1;
    case PATH_FILE:
        if (is_elf_file(path))
            b->vmlinux_path = xstrdup(path);
        else
            b->symvers_path = xstrdup(path);
        break;
    case PATH_DIR: {
        char *s = xasprintf("%s/Module.symvers", path);
        char *v = xasprintf("%s/vmlinux", path);
        if (path_kind(s) != PATH_MISSING)
            b->symvers_path = s;
        else
            free(s);
        if (path_kind(v) != PATH_MISSING)
            b->vmlinux_path = v;
        else
            free(v);
        break;
    }
    }
    if (!(flags & BUILD_LOAD_VMLINUX) && b->vmlinux_path) {
        free(b->vmlinux_path);
        b->vmlinux_path = NULL;
    }
    if ((flags & BUILD_NEED_SYMVERS) && !b->symvers_path) {
        err_set(e, "no Module.symvers");
        return -1;
    }
    if (!b->symvers_path && !b->vmlinux_path) {
        err_set(e, "neither Module.symvers nor vmlinux found");
        return -1;
    }
    if (b->symvers_path) {
        filebuf_t fb;
        *errpath = b->symvers_path;
        if (file_load(b->symvers_path, &fb, e) != 0)
            return -1;
        int r = symvers_parse(fb.data, fb.size, &b->symvers, e);
        file_free(&fb);
        if (r != 0)
            return -1;
    }
    if (b->vmlinux_path) {
        *errpath = b->vmlinux_path;
        if (file_load(b->vmlinux_path, &b->vmlinux_buf, e) != 0)
            return -1;
        if (ksymtab_read(b->vmlinux_buf.data, b->vmlinux_buf.size, &b->ksym, &b->kinfo, e) != 0)
            return -1;
    }
    *errpath = NULL;
    return 0;
}

void build_merge(build_t *b)
{
    if (b->merged.sorted || b->merged.n)
        return;
    for (size_t i = 0; i < b->symvers.n; i++) {
        const export_t *x = &b->symvers.v[i];
        exportset_add(&b->merged, x->name, x->module, x->ns, x->crc, x->has_crc, x->cls);
    }
    for (size_t i = 0; i < b->ksym.n; i++) {
        const export_t *x = &b->ksym.v[i];
        if (!exportset_find(&b->symvers, x->name))
            exportset_add(&b->merged, x->name, x->module, x->ns, x->crc, x->has_crc, x->cls);
    }
    exportset_sort(&b->merged);
}

void build_index(build_t *b)
{
    exportset_index(&b->symvers);
    exportset_index(&b->ksym);
}

const export_t *build_find(const build_t *b, const char *name)
{
    const export_t *x = exportset_find(&b->symvers, name);
    return x ? x : exportset_find(&b->ksym, name);
}

bool build_has_crcs(const build_t *b)
{
    for (size_t i = 0; i < b->symvers.n; i++)
        if (b->symvers.v[i].has_crc && b->symvers.v[i].crc != 0)
            return true;
    for (size_t i = 0; i < b->ksym.n; i++)
        if (b->ksym.v[i].has_crc && b->ksym.v[i].crc != 0)
            return true;
    return false;
}

void build_free(build_t *b)
{
    free(b->label);
    free(b->path);
    free(b->symvers_path);
    free(b->vmlinux_path);
    exportset_free(&b->symvers);
    exportset_free(&b->ksym);
    exportset_free(&b->merged);
    file_free(&b->vmlinux_buf);
    memset(b, 0, sizeof *b);
}

size_t build_count_module(const build_t *b, const char *module)
{
    size_t n = 0;
    for (size_t i = 0; i < b->symvers.n; i++)
        if (strcmp(b->symvers.v[i].module, module) == 0)
            n++;
    return n;
}
