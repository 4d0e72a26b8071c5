/* exports: the exports of a build from Module.symvers and from vmlinux, and where they disagree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/* ------------------------------------------------------------------ compute */

static disagreement_t *add_disagreement(exports_result_t *r, const char *kind, const char *symbol)
{
    r->v = xgrow(r->v, r->n, &r->cap, sizeof *r->v, 64);
    disagreement_t *d = &r->v[r->n++];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->symbol = symbol;
    return d;
}

/* A vmlinux line of Module.symvers against the vmlinux ksymtab entry k (NULL: none). */
static void compare_symvers_line(exports_result_t *r, const export_t *s, const export_t *k)
{
    disagreement_t *d;
    if (!k) {
        d = add_disagreement(r, "missing-in-vmlinux", s->name);
        snprintf(d->symvers, sizeof d->symvers, "%s", exp_class_str(s->cls));
        snprintf(d->vmlinux, sizeof d->vmlinux, "-");
        return;
    }
    if (s->cls != k->cls) {
        d = add_disagreement(r, "class", s->name);
        snprintf(d->symvers, sizeof d->symvers, "%s", exp_class_str(s->cls));
        snprintf(d->vmlinux, sizeof d->vmlinux, "%s", exp_class_str(k->cls));
    }
    uint32_t kc = k->has_crc ? k->crc : 0;
    if (s->crc != kc || (!k->has_crc && s->crc != 0)) {
        d = add_disagreement(r, "crc", s->name);
        crcstr(d->symvers, sizeof d->symvers, s->crc, true);
        crcstr(d->vmlinux, sizeof d->vmlinux, k->crc, k->has_crc);
    }
    if (strcmp(s->ns, k->ns) != 0) {
        d = add_disagreement(r, "namespace", s->name);
        snprintf(d->symvers, sizeof d->symvers, "%.150s", s->ns[0] ? s->ns : "-");
        snprintf(d->vmlinux, sizeof d->vmlinux, "%.150s", k->ns[0] ? k->ns : "-");
    }
}

/* A vmlinux ksymtab entry against Module.symvers (s: its line, NULL when none). */
static void compare_ksymtab_entry(exports_result_t *r, const export_t *k, const export_t *s)
{
    disagreement_t *d;
    if (!s) {
        d = add_disagreement(r, "missing-in-symvers", k->name);
        snprintf(d->symvers, sizeof d->symvers, "-");
        snprintf(d->vmlinux, sizeof d->vmlinux, "%s", exp_class_str(k->cls));
    } else if (strcmp(s->module, "vmlinux") != 0) {
        d = add_disagreement(r, "owner", k->name);
        snprintf(d->symvers, sizeof d->symvers, "%.150s", s->module);
        snprintf(d->vmlinux, sizeof d->vmlinux, "vmlinux");
    }
}

void exports_compute(build_t *b, exports_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->compared = b->symvers_path && b->vmlinux_path;
    r->symvers_vmlinux = b->symvers_path ? build_count_module(b, "vmlinux") : 0;
    build_merge(b);
    if (!r->compared)
        return;
    for (size_t i = 0; i < b->symvers.n; i++) {
        const export_t *s = &b->symvers.v[i];
        if (strcmp(s->module, "vmlinux") == 0)
            compare_symvers_line(r, s, exportset_find(&b->ksym, s->name));
    }
    for (size_t i = 0; i < b->ksym.n; i++)
        compare_ksymtab_entry(r, &b->ksym.v[i], exportset_find(&b->symvers, b->ksym.v[i].name));
}

void exports_result_free(exports_result_t *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

static void json_sources(json_t *j, const build_t *b, const exports_result_t *r)
{
    json_key(j, "module_symvers");
    if (b->symvers_path) {
        json_obj_begin(j);
        json_key(j, "path"); json_str(j, b->symvers_path);
        json_key(j, "count"); json_int(j, (long long)b->symvers.n);
        json_key(j, "vmlinux_count"); json_int(j, (long long)r->symvers_vmlinux);
        json_key(j, "module_count"); json_int(j, (long long)(b->symvers.n - r->symvers_vmlinux));
        json_obj_end(j);
    } else {
        json_null(j);
    }
    json_key(j, "vmlinux");
    if (b->vmlinux_path) {
        json_obj_begin(j);
        json_key(j, "path"); json_str(j, b->vmlinux_path);
        json_key(j, "count"); json_int(j, (long long)b->ksym.n);
        json_key(j, "plain"); json_int(j, (long long)b->kinfo.n_plain);
        json_key(j, "gpl"); json_int(j, (long long)b->kinfo.n_gpl);
        json_key(j, "has_crc"); json_bool(j, b->kinfo.has_crc);
        if (b->kinfo.flag_layout) {   /* 7.2 only, so 6.x documents stay as they were */
            json_key(j, "layout"); json_str(j, "flagstab");
            json_key(j, "ignored_ksymtab_gpl"); json_int(j, (long long)b->kinfo.n_ignored);
        }
        json_obj_end(j);
    } else {
        json_null(j);
    }
}

static bool in_symvers(const build_t *b, const char *name)
{
    return b->symvers_path && exportset_find(&b->symvers, name);
}

static bool in_vmlinux(const build_t *b, const char *name)
{
    return b->vmlinux_path && exportset_find(&b->ksym, name);
}

static void json_exports(json_t *j, const build_t *b)
{
    json_key(j, "exports");
    json_arr_begin(j);
    for (size_t i = 0; i < b->merged.n; i++) {
        const export_t *x = &b->merged.v[i];
        json_obj_begin(j);
        json_key(j, "symbol"); json_str(j, x->name);
        json_key(j, "class"); json_str(j, exp_class_str(x->cls));
        json_key(j, "gpl_only"); json_bool(j, x->cls == EXP_GPL);
        json_key(j, "crc"); json_crc(j, x->crc, x->has_crc);
        json_key(j, "namespace"); json_str(j, x->ns);
        json_key(j, "module"); json_str(j, x->module);
        json_key(j, "in_symvers"); json_bool(j, in_symvers(b, x->name));
        json_key(j, "in_vmlinux"); json_bool(j, in_vmlinux(b, x->name));
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void render_json(const build_t *b, const exports_result_t *r, bool summary)
{
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "build");
    json_str(&j, b->path);
    json_sources(&j, b, r);
    if (!summary)
        json_exports(&j, b);
    json_key(&j, "compared"); json_bool(&j, r->compared);
    json_key(&j, "disagreements");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        json_obj_begin(&j);
        json_key(&j, "kind"); json_str(&j, r->v[i].kind);
        json_key(&j, "symbol"); json_str(&j, r->v[i].symbol);
        json_key(&j, "symvers"); json_str(&j, r->v[i].symvers);
        json_key(&j, "vmlinux"); json_str(&j, r->v[i].vmlinux);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_finish(&j);
}

static void text_sources(const build_t *b, const exports_result_t *r)
{
    printf("Build: %s\n", b->path);
    if (b->symvers_path)
        printf("  Module.symvers: %s: %zu exports (%zu vmlinux, %zu in modules)\n", b->symvers_path,
               b->symvers.n, r->symvers_vmlinux, b->symvers.n - r->symvers_vmlinux);
    else
        printf("  Module.symvers: not present\n");
    if (b->vmlinux_path && b->kinfo.flag_layout)
        printf("  vmlinux:        %s: %zu exports (%zu EXPORT_SYMBOL, %zu EXPORT_SYMBOL_GPL by __kflagstab), "
               "CRCs: %s%s\n", b->vmlinux_path, b->ksym.n, b->kinfo.n_plain, b->kinfo.n_gpl,
               b->kinfo.has_crc ? "yes" : "no (__kcrctab absent)",
               b->kinfo.n_ignored ? ", obsolete __ksymtab_gpl ignored" : "");
    else if (b->vmlinux_path)
        printf("  vmlinux:        %s: %zu exports (%zu EXPORT_SYMBOL, %zu EXPORT_SYMBOL_GPL), CRCs: %s\n",
               b->vmlinux_path, b->ksym.n, b->kinfo.n_plain, b->kinfo.n_gpl,
               b->kinfo.has_crc ? "yes" : "no (__kcrctab absent)");
    else
        printf("  vmlinux:        not present\n");
}

static void text_exports(const build_t *b)
{
    table_t t;
    table_init(&t, 6, "SYMBOL", "CLASS", "CRC", "NAMESPACE", "MODULE", "SOURCES");
    for (size_t i = 0; i < b->merged.n; i++) {
        const export_t *x = &b->merged.v[i];
        bool s = in_symvers(b, x->name), k = in_vmlinux(b, x->name);
        char c[16];
        crcstr(c, sizeof c, x->crc, x->has_crc);
        table_row(&t, x->name, x->cls == EXP_GPL ? "GPL" : "plain", c, x->ns, x->module,
                  s && k ? "symvers,vmlinux" : s ? "symvers" : "vmlinux");
    }
    putchar('\n');
    table_print(&t, stdout, "");
    table_free(&t);
}

static void text_disagreements(const build_t *b, const exports_result_t *r)
{
    if (!r->compared) {
        printf("No comparison: only one source present.\n");
        return;
    }
    if (r->n == 0) {
        printf("Module.symvers and vmlinux agree on all %zu vmlinux exports.\n", b->ksym.n);
        return;
    }
    printf("Disagreements between Module.symvers and vmlinux (%zu):\n", r->n);
    table_t t;
    table_init(&t, 4, "KIND", "SYMBOL", "MODULE.SYMVERS", "VMLINUX");
    for (size_t i = 0; i < r->n; i++)
        table_row(&t, r->v[i].kind, r->v[i].symbol, r->v[i].symvers, r->v[i].vmlinux);
    table_print(&t, stdout, "  ");
    table_free(&t);
}

static void render_text(const build_t *b, const exports_result_t *r, bool summary)
{
    text_sources(b, r);
    if (!summary)
        text_exports(b);
    putchar('\n');
    text_disagreements(b, r);
}

/* ------------------------------------------------------------------ command */

int cmd_exports(int argc, char **argv, bool json)
{
    bool summary = false;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--summary") == 0)
            summary = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return usage_error("exports: unknown option %s", argv[i]);
        else if (!path)
            path = argv[i];
        else
            return usage_error("exports: too many arguments%s", NULL);
    }
    if (!path)
        return usage_error("exports: expected BUILD%s", NULL);
    build_t b;
    err_t e;
    const char *ep;
    if (build_open(path, NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) != 0) {
        int ret = report_error(ep, &e);
        build_free(&b);
        return ret;
    }
    exports_result_t r;
    exports_compute(&b, &r);
    if (json)
        render_json(&b, &r, summary);
    else
        render_text(&b, &r, summary);
    int ret = r.n ? EXIT_FINDINGS : EXIT_OKAY;
    exports_result_free(&r);
    build_free(&b);
    return ret;
}
