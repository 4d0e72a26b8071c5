/* module: undefined symbols, __versions, .modinfo and the exports of one module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "modexports.h"

/* ------------------------------------------------------------------ compute */

/* The module's own exports, sorted by name; a module that exports nothing has none. */
static void module_exports(const unsigned char *img, size_t len, const char *name,
                           module_result_t *r)
{
    err_t e;
    if (!img) {
        snprintf(r->exports_error, sizeof r->exports_error, "no module image");
        return;
    }
    int xr = ko_exports_read(img, len, name, &r->exports, &e);
    if (xr != 0) {
        r->exports_corrupt = xr == KOX_CORRUPT;
        exportset_free(&r->exports);
        snprintf(r->exports_error, sizeof r->exports_error, "%s", e.msg);
        return;
    }
    exportset_sort(&r->exports);
}

void module_compute(komod_t *m, const unsigned char *img, size_t len, module_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->m = *m;
    memset(m, 0, sizeof *m);
    m = &r->m;
    module_exports(img, len, m->modname ? m->modname : "-", r);
    r->gpl_compatible = license_is_gpl_compatible(m->license);
    if (m->depends) {
        char *dup = xstrdup(m->depends), *save = NULL;
        for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
            strvec_push(&r->depends, t);
        free(dup);
    }
    r->undef_ver = xcalloc(m->n_undef, sizeof *r->undef_ver);
    for (size_t i = 0; i < m->n_undef; i++)
        r->undef_ver[i] = ko_find_version(m, m->undef[i].name);
    r->extra_ver = xcalloc(m->n_vers, sizeof *r->extra_ver);
    for (size_t i = 0; i < m->n_vers; i++)
        if (!ko_version_is_undef(m, &m->vers[i]))
            r->extra_ver[r->n_extra++] = &m->vers[i];
}

void module_result_free(module_result_t *r)
{
    ko_free(&r->m);
    strvec_free(&r->depends);
    free(r->undef_ver);
    free(r->extra_ver);
    exportset_free(&r->exports);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

static void json_strings(json_t *j, const char *key, const strvec_t *sv)
{
    json_key(j, key);
    json_arr_begin(j);
    for (size_t i = 0; i < sv->n; i++)
        json_str(j, sv->v[i]);
    json_arr_end(j);
}

static void json_modinfo(json_t *j, const module_result_t *r)
{
    json_key(j, "modinfo");
    json_obj_begin(j);
    json_key(j, "name"); json_str(j, r->m.modname);
    json_key(j, "license"); json_str(j, r->m.license);
    json_key(j, "gpl_compatible"); json_bool(j, r->gpl_compatible);
    json_key(j, "vermagic"); json_str(j, r->m.vermagic);
    json_strings(j, "depends", &r->depends);
    json_strings(j, "import_ns", &r->m.import_ns);
    json_strings(j, "all", &r->m.modinfo);
    json_obj_end(j);
}

static void json_exports(json_t *j, const module_result_t *r)
{
    json_key(j, "exports");
    if (r->exports_error[0]) {
        json_null(j);
        json_key(j, "exports_error"); json_str(j, r->exports_error);
        return;
    }
    json_arr_begin(j);
    for (size_t i = 0; i < r->exports.n; i++) {
        const export_t *x = &r->exports.v[i];
        json_obj_begin(j);
        json_key(j, "symbol"); json_str(j, x->name);
        json_key(j, "class"); json_str(j, exp_class_str(x->cls));
        json_key(j, "namespace"); json_str(j, x->ns);
        json_key(j, "crc"); json_crc(j, x->crc, x->has_crc);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void render_json(const char *path, const module_result_t *r)
{
    const komod_t *m = &r->m;
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "file"); json_str(&j, path);
    json_modinfo(&j, r);
    json_key(&j, "undefined");
    json_arr_begin(&j);
    for (size_t i = 0; i < m->n_undef; i++) {
        const ko_version_t *v = r->undef_ver[i];
        json_obj_begin(&j);
        json_key(&j, "name"); json_str(&j, m->undef[i].name);
        json_key(&j, "weak"); json_bool(&j, m->undef[i].weak);
        json_key(&j, "crc"); json_crc(&j, v ? v->crc : 0, v != NULL);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "has_versions"); json_bool(&j, m->has_versions);
    json_key(&j, "versions");
    json_arr_begin(&j);
    for (size_t i = 0; i < m->n_vers; i++) {
        json_obj_begin(&j);
        json_key(&j, "name"); json_str(&j, m->vers[i].name);
        json_key(&j, "crc"); json_crc(&j, m->vers[i].crc, true);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_exports(&j, r);
    json_obj_end(&j);
    json_finish(&j);
}

static void text_modinfo(const char *path, const module_result_t *r)
{
    const komod_t *m = &r->m;
    printf("Module:   %s\n", path);
    printf("name:     %s\n", m->modname ? m->modname : "-");
    printf("license:  %s%s\n", m->license ? m->license : "(none)",
           r->gpl_compatible ? " (GPL-compatible)" : " (not GPL-compatible)");
    printf("vermagic: %s\n", m->vermagic ? m->vermagic : "-");
    printf("depends:  %s\n", m->depends && *m->depends ? m->depends : "-");
    printf("import_ns:");
    for (size_t i = 0; i < m->import_ns.n; i++)
        printf(" %s", m->import_ns.v[i]);
    printf("%s\n", m->import_ns.n ? "" : " -");
    printf("__versions: %s\n\n", m->has_versions ? "present" : "absent");
}

static void text_exports(const module_result_t *r)
{
    if (r->exports_error[0]) {
        printf("\nexports: not read: %s\n", r->exports_error);
        return;
    }
    if (!r->exports.n) {
        printf("\n(no exports)\n");
        return;
    }
    table_t t;
    table_init(&t, 4, "EXPORTED SYMBOL", "CLASS", "NAMESPACE", "CRC (__kcrctab)");
    for (size_t i = 0; i < r->exports.n; i++) {
        const export_t *x = &r->exports.v[i];
        char c[16];
        crcstr(c, sizeof c, x->crc, x->has_crc);
        table_row(&t, x->name, exp_class_str(x->cls), x->ns[0] ? x->ns : "-", c);
    }
    printf("\n");
    table_print(&t, stdout, "");
    printf("(%zu exports)\n", r->exports.n);
    table_free(&t);
}

static void render_text(const char *path, const module_result_t *r)
{
    const komod_t *m = &r->m;
    text_modinfo(path, r);
    table_t t;
    table_init(&t, 3, "UNDEFINED SYMBOL", "BIND", "CRC (__versions)");
    for (size_t i = 0; i < m->n_undef; i++) {
        const ko_version_t *v = r->undef_ver[i];
        char c[16];
        crcstr(c, sizeof c, v ? v->crc : 0, v != NULL);
        table_row(&t, m->undef[i].name, m->undef[i].weak ? "weak" : "global", c);
    }
    table_print(&t, stdout, "");
    printf("(%zu undefined symbols)\n", m->n_undef);
    table_free(&t);
    if (r->n_extra)
        printf("\n__versions entries without an undefined symbol:\n");
    for (size_t i = 0; i < r->n_extra; i++)
        printf("  0x%08x  %s\n", r->extra_ver[i]->crc, r->extra_ver[i]->name);
    text_exports(r);
}

/* ------------------------------------------------------------------ command */

int cmd_module(int argc, char **argv, bool json)
{
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1]))
        return usage_error("module: expected FILE.ko%s", NULL);
    const char *path = argv[0];
    filebuf_t fb;
    komod_t m;
    if (load_ko(path, &fb, &m))
        return EXIT_TROUBLE;
    module_result_t r;
    module_compute(&m, fb.data, fb.size, &r);
    if (r.exports_corrupt) {   /* 7.2 export tables that do not match: corrupt input */
        err_t e;
        snprintf(e.msg, sizeof e.msg, "%s", r.exports_error);
        module_result_free(&r);
        file_free(&fb);
        return report_error(path, &e);
    }
    if (json)
        render_json(path, &r);
    else
        render_text(path, &r);
    module_result_free(&r);
    file_free(&fb);
    return EXIT_OKAY;
}
