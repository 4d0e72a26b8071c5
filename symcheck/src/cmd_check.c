/* check: does a build provide what modules need? */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "decomp.h"
#include "modexports.h"

/* ------------------------------------------------------------------ compute */

static void add_finding(check_result_t *r, const char *kind, const char *sym, char *message)
{
    r->findings = xgrow(r->findings, r->n_findings, &r->cap, sizeof *r->findings, 16);
    finding_t *f = &r->findings[r->n_findings++];
    f->kind = kind;
    f->symbol = sym ? xstrdup(sym) : NULL;
    f->message = message;
}

static void add_crc_mismatch(check_result_t *r, const char *name, uint32_t mod_crc, uint32_t build_crc)
{
    add_finding(r, "crc-mismatch", name,
                xasprintf("disagrees about version of symbol %s (module 0x%08x, build 0x%08x)",
                          name, mod_crc, build_crc));
}

static void module_wide_findings(const komod_t *m, const build_t *b, check_result_t *r)
{
    if (!m->license)
        add_finding(r, "missing-license", NULL, xstrdup("no license= in .modinfo (treated as proprietary)"));
    if (build_has_crcs(b) && !m->has_versions && m->n_undef > 0)
        add_finding(r, "no-versions-section", NULL,
                    xstrdup("module has no __versions but the build uses MODVERSIONS CRCs"));
}

/* The findings of an exported symbol s->x that the module uses. */
static void exported_symbol_findings(const komod_t *m, const check_sym_t *s, check_result_t *r)
{
    const char *name = s->u->name;
    if (s->x->cls == EXP_GPL && !r->gpl_ok)
        add_finding(r, "gpl-only", name,
                    xasprintf("GPL-only symbol %s used by module with license \"%s\"", name,
                              m->license ? m->license : "(none)"));
    if (m->has_versions && s->x->has_crc) {
        if (!s->v)
            add_finding(r, "no-version", name, xasprintf("no symbol version for %s in __versions", name));
        else if (s->v->crc != s->x->crc)
            add_crc_mismatch(r, name, s->v->crc, s->x->crc);
    }
    if (s->x->ns[0] && !strvec_contains(&m->import_ns, s->x->ns))
        add_finding(r, "namespace-not-imported", name,
                    xasprintf("symbol %s is in namespace %s, not imported (MODULE_IMPORT_NS)",
                              name, s->x->ns));
}

static void check_symbol(const komod_t *m, const build_t *b, check_sym_t *s, check_result_t *r)
{
    size_t before = r->n_findings;
    s->x = build_find(b, s->u->name);
    s->v = ko_find_version(m, s->u->name);
    s->status = "ok";
    if (!s->x && s->u->weak) {
        s->status = "weak-missing";
    } else if (!s->x) {
        s->status = "unknown";
        add_finding(r, "unknown-symbol", s->u->name, xasprintf("needs unknown symbol %s", s->u->name));
    } else {
        exported_symbol_findings(m, s, r);
        if (r->n_findings - before == 1)
            s->status = r->findings[before].kind;
        else if (r->n_findings - before > 1)
            s->status = "several";
    }
}

/* __versions entries that are not undefined symbols (module_layout) must match too. */
static void check_extra_versions(const komod_t *m, const build_t *b, check_result_t *r)
{
    if (!m->has_versions)
        return;
    for (size_t i = 0; i < m->n_vers; i++) {
        const ko_version_t *v = &m->vers[i];
        if (ko_version_is_undef(m, v))
            continue;
        const export_t *x = build_find(b, v->name);
        if (x && x->has_crc && x->crc != v->crc)
            add_crc_mismatch(r, v->name, v->crc, x->crc);
    }
}

void check_compute(const komod_t *m, const build_t *b, check_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->gpl_ok = license_is_gpl_compatible(m->license);
    module_wide_findings(m, b, r);
    r->n_syms = m->n_undef;
    r->syms = xcalloc(m->n_undef, sizeof *r->syms);
    for (size_t i = 0; i < m->n_undef; i++) {
        r->syms[i].u = &m->undef[i];
        check_symbol(m, b, &r->syms[i], r);
    }
    check_extra_versions(m, b, r);
}

void check_result_free(check_result_t *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        free(r->findings[i].symbol);
        free(r->findings[i].message);
    }
    free(r->findings);
    free(r->syms);
    memset(r, 0, sizeof *r);
}

/* --------------------------------------------------------------- tree walk */

static strvec_t *walk_out;
static const char *walk_error;

static bool is_module_name(const char *name)
{
    static const char *const ends[] = {".ko", ".ko.xz", ".ko.zst", ".ko.gz"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t l = strlen(ends[i]);
        if (n > l && strcmp(name + n - l, ends[i]) == 0)
            return true;
    }
    return false;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type == FTW_DNR) {
        walk_error = "cannot read a directory in the tree";
        return 1;
    }
    if (type == FTW_F && S_ISREG(st->st_mode) && is_module_name(path + ftw->base))
        strvec_push(walk_out, path);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int find_modules(const char *dir, strvec_t *out, err_t *e)
{
    memset(out, 0, sizeof *out);
    if (path_kind(dir) != PATH_DIR) {
        err_set(e, path_kind(dir) == PATH_MISSING ? "no such file or directory" : "not a directory");
        return -1;
    }
    walk_out = out;
    walk_error = NULL;
    int r = nftw(dir, walk_one, 16, FTW_PHYS);
    walk_out = NULL;
    if (r != 0 || out->n == 0) {
        err_set(e, "%s", r != 0 ? (walk_error ? walk_error : "cannot walk the tree")
                                : "no modules (.ko, .ko.xz, .ko.zst, .ko.gz) found");
        strvec_free(out);
        return -1;
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return 0;
}

/* ------------------------------------------------------------------- render */

static void json_symbol(json_t *j, const check_sym_t *s)
{
    const export_t *x = s->x;
    json_obj_begin(j);
    json_key(j, "name"); json_str(j, s->u->name);
    json_key(j, "weak"); json_bool(j, s->u->weak);
    json_key(j, "status"); json_str(j, s->status);
    json_key(j, "exported"); json_bool(j, x != NULL);
    json_key(j, "class"); json_str(j, x ? exp_class_str(x->cls) : NULL);
    json_key(j, "namespace"); json_str(j, x ? x->ns : NULL);
    json_key(j, "module_crc"); json_crc(j, s->v ? s->v->crc : 0, s->v != NULL);
    json_key(j, "build_crc"); json_crc(j, x ? x->crc : 0, x && x->has_crc);
    json_key(j, "provider"); json_str(j, x ? x->module : NULL);
    json_obj_end(j);
}

static void json_module(json_t *j, const char *path, const komod_t *m, const check_result_t *r)
{
    json_obj_begin(j);
    json_key(j, "file"); json_str(j, path);
    json_key(j, "name"); json_str(j, m->modname);
    json_key(j, "license"); json_str(j, m->license);
    json_key(j, "gpl_compatible"); json_bool(j, r->gpl_ok);
    json_key(j, "symbols");
    json_arr_begin(j);
    for (size_t i = 0; i < r->n_syms; i++)
        json_symbol(j, &r->syms[i]);
    json_arr_end(j);
    json_key(j, "findings");
    json_arr_begin(j);
    for (size_t i = 0; i < r->n_findings; i++)
        json_str_obj(j, 3, "kind", r->findings[i].kind, "symbol", r->findings[i].symbol, "message",
                     r->findings[i].message);
    json_arr_end(j);
    json_obj_end(j);
}

static void text_symbols(const char *path, const komod_t *m, const check_result_t *r)
{
    printf("Module: %s (name %s, license %s%s, %zu undefined symbols, __versions %s)\n", path,
           m->modname ? m->modname : "-", m->license ? m->license : "(none)",
           r->gpl_ok ? " [GPL-compatible]" : " [not GPL-compatible]", m->n_undef,
           m->has_versions ? "present" : "absent");
    table_t t;
    table_init(&t, 7, "SYMBOL", "STATUS", "CLASS", "NAMESPACE", "MODULE CRC", "BUILD CRC", "PROVIDER");
    for (size_t i = 0; i < r->n_syms; i++) {
        const check_sym_t *s = &r->syms[i];
        char mc[16], bc[16];
        crcstr(mc, sizeof mc, s->v ? s->v->crc : 0, s->v != NULL);
        crcstr(bc, sizeof bc, s->x ? s->x->crc : 0, s->x && s->x->has_crc);
        table_row(&t, s->u->name, s->status, s->x ? (s->x->cls == EXP_GPL ? "GPL" : "plain") : "-",
                  s->x ? s->x->ns : "-", mc, bc, s->x ? s->x->module : "-");
    }
    table_print(&t, stdout, "  ");
    table_free(&t);
    if (r->n_findings == 0)
        printf("  no findings\n\n");
}

static void text_module(const char *path, const komod_t *m, const check_result_t *r, bool quiet)
{
    if (!quiet)
        text_symbols(path, m, r);
    for (size_t i = 0; i < r->n_findings; i++)
        printf("%s: %s: %s\n", path, r->findings[i].kind, r->findings[i].message);
    if (!quiet && r->n_findings)
        putchar('\n');
}

/* ------------------------------------------------------------------ command */

typedef struct {
    bool quiet;
    const char *tree;   /* --tree DIR */
    char **pos;         /* FILE.ko... BUILD, or [BUILD] with --tree */
    int np;
} check_args_t;

static int parse_args(int argc, char **argv, check_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->pos = xcalloc((size_t)argc + 1, sizeof *a->pos);
    if (parse_tree_args("check", argc, argv, &a->quiet, &a->tree, a->pos, &a->np))
        return EXIT_TROUBLE;
    if (a->tree && a->np > 1)
        return usage_error("check: expected --tree DIR [BUILD]%s", NULL);
    if (!a->tree && a->np < 2)
        return usage_error("check: expected FILE.ko [FILE.ko...] BUILD%s", NULL);
    return 0;
}

/* Load, check and render one module; adds its findings to *total. */
static int check_file(const char *path, const build_t *b, const check_args_t *a, json_t *j, size_t *total)
{
    filebuf_t fb;
    komod_t m;
    if (load_ko(path, &fb, &m))
        return -1;
    check_result_t r;
    check_compute(&m, b, &r);
    if (j)
        json_module(j, path, &m, &r);
    else
        text_module(path, &m, &r, a->quiet);
    *total += r.n_findings;
    check_result_free(&r);
    ko_free(&m);
    file_free(&fb);
    return 0;
}

static int check_files(char **files, int n, const build_t *b, const check_args_t *a, bool json)
{
    json_t j;
    if (json) {
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "build"); json_str(&j, b->path);
        json_key(&j, "modules");
        json_arr_begin(&j);
    }
    size_t total = 0;
    bool trouble = false;
    for (int i = 0; i < n; i++)
        if (check_file(files[i], b, a, json ? &j : NULL, &total) != 0)
            trouble = true;
    if (json) {
        json_arr_end(&j);
        json_key(&j, "findings_total"); json_int(&j, (long long)total);
        json_obj_end(&j);
        json_finish(&j);
    } else if (n > 1 || a->quiet) {
        printf("%d module(s) checked, %zu finding(s)\n", n, total);
    }
    if (trouble)
        return EXIT_TROUBLE;
    return total ? EXIT_FINDINGS : EXIT_OKAY;
}

/* Symbols the modules of the set export to each other (LTTng's probes need lttng-tracer's):
 * each module's __ksymtab entries join the build's exports unless the build has the name already.
 * A module that cannot be read is skipped here; check_file reports it. */
static void add_set_exports(char **files, int n, build_t *b)
{
    size_t before = b->symvers.n;
    for (int i = 0; i < n; i++) {
        filebuf_t fb;
        err_t e;
        if (file_load(files[i], &fb, &e) != 0)
            continue;
        exportset_t x = {0};
        if (decomp_maybe(&fb, &e) == 0) {
            char *label = xstrdup(files[i]);
            char *dot = strstr(label, ".ko");
            if (dot)
                *dot = 0;
            if (ko_exports_read(fb.data, fb.size, label, &x, &e) == 0)
                for (size_t k = 0; k < x.n; k++)
                    if (!build_find(b, x.v[k].name))
                        exportset_add(&b->symvers, x.v[k].name, x.v[k].module, x.v[k].ns, x.v[k].crc,
                                      x.v[k].has_crc, x.v[k].cls);
            free(label);
        }
        exportset_free(&x);
        file_free(&fb);
    }
    if (b->symvers.n != before)
        exportset_sort(&b->symvers);
}

/* BUILD, or with --tree and no BUILD, TREE/build (the /lib/modules/REL/build link). */
static char *build_path(const check_args_t *a)
{
    if (a->np > 0)
        return xstrdup(a->pos[a->np - 1]);
    return xasprintf("%s/build", a->tree);
}

int cmd_check(int argc, char **argv, bool json)
{
    check_args_t a;
    int ret = parse_args(argc, argv, &a);
    strvec_t mods = {0};
    err_t e;
    if (!ret && a.tree && find_modules(a.tree, &mods, &e) != 0)
        ret = report_error(a.tree, &e);
    if (ret) {
        free(a.pos);
        return ret;
    }
    char *bp = build_path(&a);
    build_t b;
    const char *ep;
    if (build_open(bp, NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) != 0)
        ret = report_error(ep, &e);
    else if (a.tree)
        add_set_exports(mods.v, (int)mods.n, &b), ret = check_files(mods.v, (int)mods.n, &b, &a, json);
    else
        add_set_exports(a.pos, a.np - 1, &b), ret = check_files(a.pos, a.np - 1, &b, &a, json);
    build_free(&b);
    strvec_free(&mods);
    free(bp);
    free(a.pos);
    return ret;
}
