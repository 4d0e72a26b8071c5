/* symcheck: which exports a Linux kernel module needs, and whether a kernel build provides them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "dwarfinfo.h"
#include "exports.h"
#include "ko.h"
#include "output.h"
#include "symvers.h"

#define EXIT_OKAY 0
#define EXIT_FINDINGS 1
#define EXIT_TROUBLE 2

static const char usage_text[] =
"usage: symcheck [--json] COMMAND ARGS...\n"
"\n"
"Report which exports a Linux kernel module needs and whether a kernel build provides them\n"
"(x86-64, Linux 6.1 layouts). BUILD is a kernel build directory holding Module.symvers\n"
"and/or vmlinux; where noted a Module.symvers or vmlinux file path works too.\n"
"\n"
"commands:\n"
"  exports [--summary] BUILD\n"
"      List the exports of BUILD from Module.symvers and, independently, from vmlinux\n"
"      (__ksymtab, __ksymtab_gpl, __ksymtab_strings, __kcrctab, __kcrctab_gpl), and report\n"
"      every disagreement for vmlinux-owned symbols: missing on one side, GPL class,\n"
"      CRC or namespace differs. --summary omits the per-symbol listing.\n"
"  module FILE.ko\n"
"      Undefined symbols (.symtab), __versions CRCs and .modinfo (license, vermagic,\n"
"      name, depends, import_ns) of a module.\n"
"  check [-q|--quiet] FILE.ko [FILE.ko...] BUILD\n"
"      For every symbol a module needs: is it exported, is a GPL-only export used by a\n"
"      non-GPL-compatible licence, does the __versions CRC equal the build's, is the\n"
"      export's namespace imported (import_ns). -q prints findings only.\n"
"  diff BUILD_A BUILD_B\n"
"      Exports added, removed, CRC changed, licence class changed, namespace changed\n"
"      (from Module.symvers; a Module.symvers file path is accepted too).\n"
"  seed-report [--symbols LIST] [NAME=]BUILD [[NAME=]BUILD...]\n"
"      Whether each build exports the seed symbols (LIST: comma or space separated;\n"
"      default: task_prio stack_trace_save_user get_pfnblock_flags_mask disk_name\n"
"      gendisk_device_type gendisk_block_class kallsyms_lookup_name\n"
"      kallsyms_on_each_symbol bpf_trace_run12 bpf_trace_run13),\n"
"      and the DWARF parameter lists of __traceiter_global_dirty_state and\n"
"      __traceiter_balance_dirty_pages (or trace_* / perf_trace_*) in BUILD/vmlinux.\n"
"  audit FILE.ko\n"
"      Flag kallsyms-style symbol resolution: undefined references to kallsyms_lookup_name,\n"
"      kallsyms_on_each_symbol, register_kprobe, and the string \"kallsyms_lookup_name\" in\n"
"      the module's data/rodata sections.\n"
"\n"
"options:\n"
"  --json      machine-readable output (one JSON document on stdout)\n"
"  -h, --help  this help\n"
"\n"
"exit status: 0 all is well; 1 findings (check: problems found; exports: sources disagree;\n"
"diff: differences; audit: flagged); 2 usage error or unreadable/corrupt input, reported\n"
"as one line 'symcheck: FILE: problem' on stderr.\n";

static bool opt_json;

static int usage_error(const char *fmt, const char *arg)
{
    fputs("symcheck: ", stderr);
    fprintf(stderr, fmt, arg ? arg : "");
    fputs(" (see symcheck --help)\n", stderr);
    return EXIT_TROUBLE;
}

static int report_error(const char *file, const err_t *e)
{
    fprintf(stderr, "symcheck: %s: %s\n", file, e->msg);
    return EXIT_TROUBLE;
}

static void crcstr(char *buf, size_t n, uint32_t crc, bool has)
{
    if (has)
        snprintf(buf, n, "0x%08x", crc);
    else
        snprintf(buf, n, "-");
}

/* ------------------------------------------------------------------ exports */

typedef struct {
    const char *kind, *symbol;
    char a[160], b[160];
} disagreement_t;

static int cmd_exports(int argc, char **argv)
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
        int r = report_error(ep, &e);
        build_free(&b);
        return r;
    }
    bool both = b.symvers_path && b.vmlinux_path;
    build_merge(&b);
    size_t cap = 64, nd = 0;
    disagreement_t *d = xcalloc(cap, sizeof *d);
#define ADD_D(K, S)                                                   \
    do {                                                              \
        if (nd == cap) {                                              \
            cap *= 2;                                                 \
            d = xrealloc(d, cap * sizeof *d);                         \
        }                                                             \
        memset(&d[nd], 0, sizeof d[nd]);                              \
        d[nd].kind = (K);                                             \
        d[nd].symbol = (S);                                           \
        nd++;                                                         \
    } while (0)
    if (both) {
        for (size_t i = 0; i < b.symvers.n; i++) {
            const export_t *s = &b.symvers.v[i];
            if (strcmp(s->module, "vmlinux") != 0)
                continue;
            const export_t *k = exportset_find(&b.ksym, s->name);
            if (!k) {
                ADD_D("missing-in-vmlinux", s->name);
                snprintf(d[nd - 1].a, sizeof d[nd - 1].a, "%s", exp_class_str(s->cls));
                snprintf(d[nd - 1].b, sizeof d[nd - 1].b, "-");
                continue;
            }
            if (s->cls != k->cls) {
                ADD_D("class", s->name);
                snprintf(d[nd - 1].a, sizeof d[nd - 1].a, "%s", exp_class_str(s->cls));
                snprintf(d[nd - 1].b, sizeof d[nd - 1].b, "%s", exp_class_str(k->cls));
            }
            uint32_t kc = k->has_crc ? k->crc : 0;
            if (s->crc != kc || (!k->has_crc && s->crc != 0)) {
                ADD_D("crc", s->name);
                crcstr(d[nd - 1].a, sizeof d[nd - 1].a, s->crc, true);
                crcstr(d[nd - 1].b, sizeof d[nd - 1].b, k->crc, k->has_crc);
            }
            if (strcmp(s->ns, k->ns) != 0) {
                ADD_D("namespace", s->name);
                snprintf(d[nd - 1].a, sizeof d[nd - 1].a, "%.150s", s->ns[0] ? s->ns : "-");
                snprintf(d[nd - 1].b, sizeof d[nd - 1].b, "%.150s", k->ns[0] ? k->ns : "-");
            }
        }
        for (size_t i = 0; i < b.ksym.n; i++) {
            const export_t *k = &b.ksym.v[i];
            const export_t *s = exportset_find(&b.symvers, k->name);
            if (!s) {
                ADD_D("missing-in-symvers", k->name);
                snprintf(d[nd - 1].a, sizeof d[nd - 1].a, "-");
                snprintf(d[nd - 1].b, sizeof d[nd - 1].b, "%s", exp_class_str(k->cls));
            } else if (strcmp(s->module, "vmlinux") != 0) {
                ADD_D("owner", k->name);
                snprintf(d[nd - 1].a, sizeof d[nd - 1].a, "%.150s", s->module);
                snprintf(d[nd - 1].b, sizeof d[nd - 1].b, "vmlinux");
            }
        }
    }
    size_t sv_vmlinux = b.symvers_path ? build_count_module(&b, "vmlinux") : 0;
    if (opt_json) {
        json_t j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "build");
        json_str(&j, b.path);
        json_key(&j, "module_symvers");
        if (b.symvers_path) {
            json_obj_begin(&j);
            json_key(&j, "path"); json_str(&j, b.symvers_path);
            json_key(&j, "count"); json_int(&j, (long long)b.symvers.n);
            json_key(&j, "vmlinux_count"); json_int(&j, (long long)sv_vmlinux);
            json_key(&j, "module_count"); json_int(&j, (long long)(b.symvers.n - sv_vmlinux));
            json_obj_end(&j);
        } else {
            json_null(&j);
        }
        json_key(&j, "vmlinux");
        if (b.vmlinux_path) {
            json_obj_begin(&j);
            json_key(&j, "path"); json_str(&j, b.vmlinux_path);
            json_key(&j, "count"); json_int(&j, (long long)b.ksym.n);
            json_key(&j, "plain"); json_int(&j, (long long)b.kinfo.n_plain);
            json_key(&j, "gpl"); json_int(&j, (long long)b.kinfo.n_gpl);
            json_key(&j, "has_crc"); json_bool(&j, b.kinfo.has_crc);
            json_obj_end(&j);
        } else {
            json_null(&j);
        }
        if (!summary) {
            json_key(&j, "exports");
            json_arr_begin(&j);
            for (size_t i = 0; i < b.merged.n; i++) {
                const export_t *x = &b.merged.v[i];
                const export_t *s = b.symvers_path ? exportset_find(&b.symvers, x->name) : NULL;
                const export_t *k = b.vmlinux_path ? exportset_find(&b.ksym, x->name) : NULL;
                json_obj_begin(&j);
                json_key(&j, "symbol"); json_str(&j, x->name);
                json_key(&j, "class"); json_str(&j, exp_class_str(x->cls));
                json_key(&j, "gpl_only"); json_bool(&j, x->cls == EXP_GPL);
                json_key(&j, "crc"); json_crc(&j, x->crc, x->has_crc);
                json_key(&j, "namespace"); json_str(&j, x->ns);
                json_key(&j, "module"); json_str(&j, x->module);
                json_key(&j, "in_symvers"); json_bool(&j, s != NULL);
                json_key(&j, "in_vmlinux"); json_bool(&j, k != NULL);
                json_obj_end(&j);
            }
            json_arr_end(&j);
        }
        json_key(&j, "compared"); json_bool(&j, both);
        json_key(&j, "disagreements");
        json_arr_begin(&j);
        for (size_t i = 0; i < nd; i++) {
            json_obj_begin(&j);
            json_key(&j, "kind"); json_str(&j, d[i].kind);
            json_key(&j, "symbol"); json_str(&j, d[i].symbol);
            json_key(&j, "symvers"); json_str(&j, d[i].a);
            json_key(&j, "vmlinux"); json_str(&j, d[i].b);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
        json_finish(&j);
    } else {
        printf("Build: %s\n", b.path);
        if (b.symvers_path)
            printf("  Module.symvers: %s: %zu exports (%zu vmlinux, %zu in modules)\n", b.symvers_path,
                   b.symvers.n, sv_vmlinux, b.symvers.n - sv_vmlinux);
        else
            printf("  Module.symvers: not present\n");
        if (b.vmlinux_path)
            printf("  vmlinux:        %s: %zu exports (%zu EXPORT_SYMBOL, %zu EXPORT_SYMBOL_GPL), CRCs: %s\n",
                   b.vmlinux_path, b.ksym.n, b.kinfo.n_plain, b.kinfo.n_gpl,
                   b.kinfo.has_crc ? "yes" : "no (__kcrctab absent)");
        else
            printf("  vmlinux:        not present\n");
        if (!summary) {
            table_t t;
            table_init(&t, 6, "SYMBOL", "CLASS", "CRC", "NAMESPACE", "MODULE", "SOURCES");
            for (size_t i = 0; i < b.merged.n; i++) {
                const export_t *x = &b.merged.v[i];
                bool s = b.symvers_path && exportset_find(&b.symvers, x->name);
                bool k = b.vmlinux_path && exportset_find(&b.ksym, x->name);
                char c[16];
                crcstr(c, sizeof c, x->crc, x->has_crc);
                table_row(&t, x->name, x->cls == EXP_GPL ? "GPL" : "plain", c, x->ns, x->module,
                          s && k ? "symvers,vmlinux" : s ? "symvers" : "vmlinux");
            }
            putchar('\n');
            table_print(&t, stdout, "");
            table_free(&t);
        }
        putchar('\n');
        if (!both) {
            printf("No comparison: only one source present.\n");
        } else if (nd == 0) {
            printf("Module.symvers and vmlinux agree on all %zu vmlinux exports.\n", b.ksym.n);
        } else {
            printf("Disagreements between Module.symvers and vmlinux (%zu):\n", nd);
            table_t t;
            table_init(&t, 4, "KIND", "SYMBOL", "MODULE.SYMVERS", "VMLINUX");
            for (size_t i = 0; i < nd; i++)
                table_row(&t, d[i].kind, d[i].symbol, d[i].a, d[i].b);
            table_print(&t, stdout, "  ");
            table_free(&t);
        }
    }
#undef ADD_D
    free(d);
    build_free(&b);
    return nd ? EXIT_FINDINGS : EXIT_OKAY;
}

/* ------------------------------------------------------------------- module */

static int load_ko(const char *path, filebuf_t *fb, komod_t *m)
{
    err_t e;
    if (file_load(path, fb, &e) != 0)
        return report_error(path, &e);
    if (ko_read(fb->data, fb->size, m, &e) != 0) {
        file_free(fb);
        return report_error(path, &e);
    }
    return 0;
}

static int cmd_module(int argc, char **argv)
{
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1]))
        return usage_error("module: expected FILE.ko%s", NULL);
    const char *path = argv[0];
    filebuf_t fb;
    komod_t m;
    if (load_ko(path, &fb, &m))
        return EXIT_TROUBLE;
    if (opt_json) {
        json_t j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "file"); json_str(&j, path);
        json_key(&j, "modinfo");
        json_obj_begin(&j);
        json_key(&j, "name"); json_str(&j, m.modname);
        json_key(&j, "license"); json_str(&j, m.license);
        json_key(&j, "gpl_compatible"); json_bool(&j, license_is_gpl_compatible(m.license));
        json_key(&j, "vermagic"); json_str(&j, m.vermagic);
        json_key(&j, "depends");
        json_arr_begin(&j);
        if (m.depends) {
            char *dup = xstrdup(m.depends), *save = NULL;
            for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
                json_str(&j, t);
            free(dup);
        }
        json_arr_end(&j);
        json_key(&j, "import_ns");
        json_arr_begin(&j);
        for (size_t i = 0; i < m.import_ns.n; i++)
            json_str(&j, m.import_ns.v[i]);
        json_arr_end(&j);
        json_key(&j, "all");
        json_arr_begin(&j);
        for (size_t i = 0; i < m.modinfo.n; i++)
            json_str(&j, m.modinfo.v[i]);
        json_arr_end(&j);
        json_obj_end(&j);
        json_key(&j, "undefined");
        json_arr_begin(&j);
        for (size_t i = 0; i < m.n_undef; i++) {
            const ko_version_t *v = ko_find_version(&m, m.undef[i].name);
            json_obj_begin(&j);
            json_key(&j, "name"); json_str(&j, m.undef[i].name);
            json_key(&j, "weak"); json_bool(&j, m.undef[i].weak);
            json_key(&j, "crc"); json_crc(&j, v ? v->crc : 0, v != NULL);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_key(&j, "has_versions"); json_bool(&j, m.has_versions);
        json_key(&j, "versions");
        json_arr_begin(&j);
        for (size_t i = 0; i < m.n_vers; i++) {
            json_obj_begin(&j);
            json_key(&j, "name"); json_str(&j, m.vers[i].name);
            json_key(&j, "crc"); json_crc(&j, m.vers[i].crc, true);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
        json_finish(&j);
    } else {
        printf("Module:   %s\n", path);
        printf("name:     %s\n", m.modname ? m.modname : "-");
        printf("license:  %s%s\n", m.license ? m.license : "(none)",
               license_is_gpl_compatible(m.license) ? " (GPL-compatible)" : " (not GPL-compatible)");
        printf("vermagic: %s\n", m.vermagic ? m.vermagic : "-");
        printf("depends:  %s\n", m.depends && *m.depends ? m.depends : "-");
        printf("import_ns:");
        for (size_t i = 0; i < m.import_ns.n; i++)
            printf(" %s", m.import_ns.v[i]);
        printf("%s\n", m.import_ns.n ? "" : " -");
        printf("__versions: %s\n\n", m.has_versions ? "present" : "absent");
        table_t t;
        table_init(&t, 3, "UNDEFINED SYMBOL", "BIND", "CRC (__versions)");
        for (size_t i = 0; i < m.n_undef; i++) {
            const ko_version_t *v = ko_find_version(&m, m.undef[i].name);
            char c[16];
            crcstr(c, sizeof c, v ? v->crc : 0, v != NULL);
            table_row(&t, m.undef[i].name, m.undef[i].weak ? "weak" : "global", c);
        }
        table_print(&t, stdout, "");
        printf("(%zu undefined symbols)\n", m.n_undef);
        table_free(&t);
        /* __versions entries that are not undefined symbols (e.g. module_layout) */
        bool hdr = false;
        for (size_t i = 0; i < m.n_vers; i++) {
            bool undef = false;
            for (size_t k = 0; k < m.n_undef && !undef; k++)
                undef = strcmp(m.undef[k].name, m.vers[i].name) == 0;
            if (undef)
                continue;
            if (!hdr) {
                printf("\n__versions entries without an undefined symbol:\n");
                hdr = true;
            }
            printf("  0x%08x  %s\n", m.vers[i].crc, m.vers[i].name);
        }
    }
    ko_free(&m);
    file_free(&fb);
    return EXIT_OKAY;
}

/* -------------------------------------------------------------------- check */

typedef struct {
    const char *kind;
    char *symbol;   /* owned, may be NULL */
    char *detail;   /* owned */
} finding_t;

typedef struct {
    finding_t *v;
    size_t n, cap;
} findings_t;

static void add_finding(findings_t *f, const char *kind, const char *sym, char *detail)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->v = xrealloc(f->v, f->cap * sizeof *f->v);
    }
    f->v[f->n].kind = kind;
    f->v[f->n].symbol = sym ? xstrdup(sym) : NULL;
    f->v[f->n].detail = detail;
    f->n++;
}

static void findings_free(findings_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].symbol);
        free(f->v[i].detail);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

static void check_one(const char *path, const komod_t *m, const build_t *b, bool quiet, json_t *j,
                      size_t *total_findings)
{
    findings_t f = {0};
    bool gpl_ok = license_is_gpl_compatible(m->license);
    bool versioned_build = build_has_crcs(b);
    table_t t;
    if (!opt_json && !quiet)
        table_init(&t, 7, "SYMBOL", "STATUS", "CLASS", "NAMESPACE", "MODULE CRC", "BUILD CRC", "PROVIDER");
    if (!m->license)
        add_finding(&f, "missing-license", NULL, xstrdup("no license= in .modinfo (treated as proprietary)"));
    if (versioned_build && !m->has_versions && m->n_undef > 0)
        add_finding(&f, "no-versions-section", NULL,
                    xstrdup("module has no __versions but the build uses MODVERSIONS CRCs"));
    if (j) {
        json_obj_begin(j);
        json_key(j, "file"); json_str(j, path);
        json_key(j, "name"); json_str(j, m->modname);
        json_key(j, "license"); json_str(j, m->license);
        json_key(j, "gpl_compatible"); json_bool(j, gpl_ok);
        json_key(j, "symbols");
        json_arr_begin(j);
    }
    for (size_t i = 0; i < m->n_undef; i++) {
        const ko_undef_t *u = &m->undef[i];
        const export_t *x = build_find(b, u->name);
        const ko_version_t *v = ko_find_version(m, u->name);
        const char *status = "ok";
        size_t before = f.n;
        if (!x) {
            if (u->weak) {
                status = "weak-missing";
            } else {
                status = "unknown";
                add_finding(&f, "unknown-symbol", u->name, xasprintf("needs unknown symbol %s", u->name));
            }
        } else {
            if (x->cls == EXP_GPL && !gpl_ok) {
                add_finding(&f, "gpl-only", u->name,
                            xasprintf("GPL-only symbol %s used by module with license \"%s\"", u->name,
                                      m->license ? m->license : "(none)"));
            }
            if (m->has_versions && x->has_crc) {
                if (!v)
                    add_finding(&f, "no-version", u->name,
                                xasprintf("no symbol version for %s in __versions", u->name));
                else if (v->crc != x->crc)
                    add_finding(&f, "crc-mismatch", u->name,
                                xasprintf("disagrees about version of symbol %s (module 0x%08x, build 0x%08x)",
                                          u->name, v->crc, x->crc));
            }
            if (x->ns[0] && !strvec_contains(&m->import_ns, x->ns))
                add_finding(&f, "namespace-not-imported", u->name,
                            xasprintf("symbol %s is in namespace %s, not imported (MODULE_IMPORT_NS)",
                                      u->name, x->ns));
            if (f.n > before)
                status = f.v[f.n - 1].kind;
        }
        if (f.n - before > 1)
            status = "several";
        char mc[16], bc[16];
        crcstr(mc, sizeof mc, v ? v->crc : 0, v != NULL);
        crcstr(bc, sizeof bc, x ? x->crc : 0, x && x->has_crc);
        if (j) {
            json_obj_begin(j);
            json_key(j, "name"); json_str(j, u->name);
            json_key(j, "weak"); json_bool(j, u->weak);
            json_key(j, "status"); json_str(j, status);
            json_key(j, "exported"); json_bool(j, x != NULL);
            json_key(j, "class"); json_str(j, x ? exp_class_str(x->cls) : NULL);
            json_key(j, "namespace"); json_str(j, x ? x->ns : NULL);
            json_key(j, "module_crc"); json_crc(j, v ? v->crc : 0, v != NULL);
            json_key(j, "build_crc"); json_crc(j, x ? x->crc : 0, x && x->has_crc);
            json_key(j, "provider"); json_str(j, x ? x->module : NULL);
            json_obj_end(j);
        } else if (!quiet) {
            table_row(&t, u->name, status, x ? (x->cls == EXP_GPL ? "GPL" : "plain") : "-",
                      x ? x->ns : "-", mc, bc, x ? x->module : "-");
        }
    }
    /* __versions entries that are not undefined symbols (module_layout) must match too */
    if (m->has_versions) {
        for (size_t i = 0; i < m->n_vers; i++) {
            const ko_version_t *v = &m->vers[i];
            bool undef = false;
            for (size_t k = 0; k < m->n_undef && !undef; k++)
                undef = strcmp(m->undef[k].name, v->name) == 0;
            if (undef)
                continue;
            const export_t *x = build_find(b, v->name);
            if (x && x->has_crc && x->crc != v->crc)
                add_finding(&f, "crc-mismatch", v->name,
                            xasprintf("disagrees about version of symbol %s (module 0x%08x, build 0x%08x)",
                                      v->name, v->crc, x->crc));
        }
    }
    if (j) {
        json_arr_end(j);
        json_key(j, "findings");
        json_arr_begin(j);
        for (size_t i = 0; i < f.n; i++) {
            json_obj_begin(j);
            json_key(j, "kind"); json_str(j, f.v[i].kind);
            json_key(j, "symbol"); json_str(j, f.v[i].symbol);
            json_key(j, "message"); json_str(j, f.v[i].detail);
            json_obj_end(j);
        }
        json_arr_end(j);
        json_obj_end(j);
    } else {
        if (!quiet) {
            printf("Module: %s (name %s, license %s%s, %zu undefined symbols, __versions %s)\n", path,
                   m->modname ? m->modname : "-", m->license ? m->license : "(none)",
                   gpl_ok ? " [GPL-compatible]" : " [not GPL-compatible]", m->n_undef,
                   m->has_versions ? "present" : "absent");
            table_print(&t, stdout, "  ");
            table_free(&t);
            if (f.n == 0)
                printf("  no findings\n\n");
        }
        for (size_t i = 0; i < f.n; i++)
            printf("%s: %s: %s\n", path, f.v[i].kind, f.v[i].detail);
        if (!quiet && f.n)
            putchar('\n');
    }
    *total_findings += f.n;
    findings_free(&f);
}

static int cmd_check(int argc, char **argv)
{
    bool quiet = false;
    char **pos = xcalloc((size_t)argc + 1, sizeof *pos);
    int np = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)
            quiet = true;
        else if (argv[i][0] == '-' && argv[i][1]) {
            free(pos);
            return usage_error("check: unknown option %s", argv[i]);
        } else
            pos[np++] = argv[i];
    }
    if (np < 2) {
        free(pos);
        return usage_error("check: expected FILE.ko [FILE.ko...] BUILD%s", NULL);
    }
    build_t b;
    err_t e;
    const char *ep;
    if (build_open(pos[np - 1], NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) != 0) {
        int r = report_error(ep, &e);
        build_free(&b);
        free(pos);
        return r;
    }
    json_t j;
    if (opt_json) {
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "build"); json_str(&j, b.path);
        json_key(&j, "modules");
        json_arr_begin(&j);
    }
    size_t total = 0;
    bool trouble = false;
    for (int i = 0; i < np - 1; i++) {
        filebuf_t fb;
        komod_t m;
        if (load_ko(pos[i], &fb, &m)) {
            trouble = true;
            continue;
        }
        check_one(pos[i], &m, &b, quiet, opt_json ? &j : NULL, &total);
        ko_free(&m);
        file_free(&fb);
    }
    if (opt_json) {
        json_arr_end(&j);
        json_key(&j, "findings_total"); json_int(&j, (long long)total);
        json_obj_end(&j);
        json_finish(&j);
    } else if (np > 2 || quiet) {
        printf("%d module(s) checked, %zu finding(s)\n", np - 1, total);
    }
    build_free(&b);
    free(pos);
    if (trouble)
        return EXIT_TROUBLE;
    return total ? EXIT_FINDINGS : EXIT_OKAY;
}

/* --------------------------------------------------------------------- diff */

static int cmd_diff(int argc, char **argv)
{
    if (argc != 2 || (argv[0][0] == '-' && argv[0][1]) || (argv[1][0] == '-' && argv[1][1]))
        return usage_error("diff: expected BUILD_A BUILD_B%s", NULL);
    build_t a, b;
    err_t e;
    const char *ep;
    if (build_open(argv[0], NULL, BUILD_NEED_SYMVERS, &a, &ep, &e) != 0) {
        int r = report_error(ep, &e);
        build_free(&a);
        return r;
    }
    if (build_open(argv[1], NULL, BUILD_NEED_SYMVERS, &b, &ep, &e) != 0) {
        int r = report_error(ep, &e);
        build_free(&a);
        build_free(&b);
        return r;
    }
    table_t t;
    table_init(&t, 4, "CHANGE", "SYMBOL", "OLD", "NEW");
    size_t counts[6] = {0}; /* added removed crc class namespace owner */
    static const char *const kinds[6] = {"added", "removed", "crc", "class", "namespace", "owner"};
    /* merge walk over two sorted sets */
    size_t i = 0, k = 0;
    while (i < a.symvers.n || k < b.symvers.n) {
        const export_t *x = i < a.symvers.n ? &a.symvers.v[i] : NULL;
        const export_t *y = k < b.symvers.n ? &b.symvers.v[k] : NULL;
        int c = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);
        char o[200], n[200];
        if (c < 0) {
            snprintf(o, sizeof o, "%s %s", exp_class_str(x->cls), x->module);
            table_row(&t, "removed", x->name, o, "-");
            counts[1]++;
            i++;
            continue;
        }
        if (c > 0) {
            snprintf(n, sizeof n, "%s %s", exp_class_str(y->cls), y->module);
            table_row(&t, "added", y->name, "-", n);
            counts[0]++;
            k++;
            continue;
        }
        if (x->crc != y->crc) {
            crcstr(o, sizeof o, x->crc, true);
            crcstr(n, sizeof n, y->crc, true);
            table_row(&t, "crc", x->name, o, n);
            counts[2]++;
        }
        if (x->cls != y->cls) {
            table_row(&t, "class", x->name, exp_class_str(x->cls), exp_class_str(y->cls));
            counts[3]++;
        }
        if (strcmp(x->ns, y->ns) != 0) {
            table_row(&t, "namespace", x->name, x->ns, y->ns);
            counts[4]++;
        }
        if (strcmp(x->module, y->module) != 0) {
            table_row(&t, "owner", x->name, x->module, y->module);
            counts[5]++;
        }
        i++;
        k++;
    }
    size_t total = table_rows(&t);
    if (opt_json) {
        json_t j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "old"); json_str(&j, a.symvers_path);
        json_key(&j, "new"); json_str(&j, b.symvers_path);
        json_key(&j, "counts");
        json_obj_begin(&j);
        for (int c = 0; c < 6; c++) {
            json_key(&j, kinds[c]);
            json_int(&j, (long long)counts[c]);
        }
        json_obj_end(&j);
        json_key(&j, "changes");
        json_arr_begin(&j);
        for (size_t r = 1; r <= total; r++) {
            char **row = &t.cells.v[r * 4];
            json_obj_begin(&j);
            json_key(&j, "change"); json_str(&j, row[0]);
            json_key(&j, "symbol"); json_str(&j, row[1]);
            json_key(&j, "old"); json_str(&j, strcmp(row[2], "-") ? row[2] : NULL);
            json_key(&j, "new"); json_str(&j, strcmp(row[3], "-") ? row[3] : NULL);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
        json_finish(&j);
    } else {
        printf("old: %s (%zu exports)\nnew: %s (%zu exports)\n", a.symvers_path, a.symvers.n,
               b.symvers_path, b.symvers.n);
        printf("added %zu, removed %zu, crc changed %zu, class changed %zu, namespace changed %zu, "
               "owner changed %zu\n", counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);
        if (total) {
            putchar('\n');
            table_print(&t, stdout, "");
        }
    }
    table_free(&t);
    build_free(&a);
    build_free(&b);
    return total ? EXIT_FINDINGS : EXIT_OKAY;
}

/* -------------------------------------------------------------- seed-report */

static const char *const default_seed_symbols[] = {
    "task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask", "disk_name",
    "gendisk_device_type", "gendisk_block_class", "kallsyms_lookup_name",
    "kallsyms_on_each_symbol", "bpf_trace_run12", "bpf_trace_run13",
};
static const char *const seed_events[] = {"global_dirty_state", "balance_dirty_pages"};
static const char *const seed_prefixes[] = {"__traceiter_", "trace_", "perf_trace_"};
#define N_EVENTS 2
#define N_PREFIX 3

static int cmd_seed_report(int argc, char **argv)
{
    strvec_t syms = {0};
    bool have_list = false;
    char **pos = xcalloc((size_t)argc + 1, sizeof *pos);
    int np = 0;
    for (int i = 0; i < argc; i++) {
        const char *list = NULL;
        if (strcmp(argv[i], "--symbols") == 0) {
            if (i + 1 >= argc) {
                free(pos);
                strvec_free(&syms);
                return usage_error("seed-report: --symbols needs a list%s", NULL);
            }
            list = argv[++i];
        } else if (strncmp(argv[i], "--symbols=", 10) == 0) {
            list = argv[i] + 10;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(pos);
            strvec_free(&syms);
            return usage_error("seed-report: unknown option %s", argv[i]);
        } else {
            pos[np++] = argv[i];
            continue;
        }
        have_list = true;
        char *dup = xstrdup(list), *save = NULL;
        for (char *tk = strtok_r(dup, ", \t\n", &save); tk; tk = strtok_r(NULL, ", \t\n", &save))
            if (!strvec_contains(&syms, tk))
                strvec_push(&syms, tk);
        free(dup);
    }
    if (!have_list)
        for (size_t i = 0; i < sizeof default_seed_symbols / sizeof *default_seed_symbols; i++)
            strvec_push(&syms, default_seed_symbols[i]);
    if (np < 1) {
        free(pos);
        strvec_free(&syms);
        return usage_error("seed-report: expected [NAME=]BUILD...%s", NULL);
    }
    build_t *bs = xcalloc((size_t)np, sizeof *bs);
    int ret = EXIT_OKAY;
    for (int i = 0; i < np; i++) {
        const char *arg = pos[i], *label = NULL;
        char *lab = NULL;
        const char *eq = strchr(arg, '=');
        if (eq && eq != arg && path_kind(arg) == PATH_MISSING) {
            lab = xstrndup(arg, (size_t)(eq - arg));
            label = lab;
            arg = eq + 1;
        }
        err_t e;
        const char *ep;
        int r = build_open(arg, label, BUILD_LOAD_VMLINUX, &bs[i], &ep, &e);
        free(lab);
        if (r != 0) {
            ret = report_error(ep, &e);
            for (int k = 0; k <= i; k++)
                build_free(&bs[k]);
            free(bs);
            free(pos);
            strvec_free(&syms);
            return ret;
        }
    }
    /* DWARF per build */
    dw_func_t (*fn)[N_EVENTS * N_PREFIX] = xcalloc((size_t)np, sizeof *fn);
    enum dw_status *dws = xcalloc((size_t)np, sizeof *dws);
    char (*dwerr)[ERRBUF_SIZE] = xcalloc((size_t)np, sizeof *dwerr);
    char (*names)[N_EVENTS * N_PREFIX][64] = xcalloc((size_t)np, sizeof *names);
    for (int i = 0; i < np; i++) {
        for (int ev = 0; ev < N_EVENTS; ev++)
            for (int p = 0; p < N_PREFIX; p++) {
                snprintf(names[i][ev * N_PREFIX + p], 64, "%s%s", seed_prefixes[p], seed_events[ev]);
                fn[i][ev * N_PREFIX + p].want = names[i][ev * N_PREFIX + p];
            }
        if (!bs[i].vmlinux_path) {
            dws[i] = DW_NO_DWARF;
            snprintf(dwerr[i], ERRBUF_SIZE, "no vmlinux");
            continue;
        }
        err_t e;
        dws[i] = dw_find_functions(bs[i].vmlinux_buf.data, bs[i].vmlinux_buf.size, fn[i], N_EVENTS * N_PREFIX, &e);
        if (dws[i] == DW_NO_DWARF)
            snprintf(dwerr[i], ERRBUF_SIZE, "vmlinux has no DWARF debug info");
        else if (dws[i] == DW_ERROR)
            snprintf(dwerr[i], ERRBUF_SIZE, "%s", e.msg);
    }
    if (opt_json) {
        json_t j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "symbols");
        json_arr_begin(&j);
        for (size_t s = 0; s < syms.n; s++)
            json_str(&j, syms.v[s]);
        json_arr_end(&j);
        json_key(&j, "builds");
        json_arr_begin(&j);
        for (int i = 0; i < np; i++) {
            build_t *b = &bs[i];
            json_obj_begin(&j);
            json_key(&j, "name"); json_str(&j, b->label);
            json_key(&j, "path"); json_str(&j, b->path);
            json_key(&j, "module_symvers"); json_str(&j, b->symvers_path);
            json_key(&j, "vmlinux"); json_str(&j, b->vmlinux_path);
            json_key(&j, "exports");
            json_obj_begin(&j);
            for (size_t s = 0; s < syms.n; s++) {
                const export_t *x = build_find(b, syms.v[s]);
                json_key(&j, syms.v[s]);
                json_obj_begin(&j);
                json_key(&j, "exported"); json_bool(&j, x != NULL);
                json_key(&j, "class"); json_str(&j, x ? exp_class_str(x->cls) : NULL);
                json_key(&j, "module"); json_str(&j, x ? x->module : NULL);
                json_key(&j, "namespace"); json_str(&j, x ? x->ns : NULL);
                json_obj_end(&j);
            }
            json_obj_end(&j);
            json_key(&j, "dwarf");
            json_obj_begin(&j);
            json_key(&j, "available"); json_bool(&j, dws[i] == DW_OK);
            json_key(&j, "error"); json_str(&j, dws[i] == DW_OK ? NULL : dwerr[i]);
            json_key(&j, "tracepoints");
            json_obj_begin(&j);
            for (int ev = 0; ev < N_EVENTS; ev++) {
                json_key(&j, seed_events[ev]);
                dw_func_t *hit = NULL;
                for (int p = 0; p < N_PREFIX && !hit; p++)
                    if (fn[i][ev * N_PREFIX + p].found)
                        hit = &fn[i][ev * N_PREFIX + p];
                if (!hit) {
                    json_null(&j);
                    continue;
                }
                json_obj_begin(&j);
                json_key(&j, "function"); json_str(&j, hit->want);
                json_key(&j, "params");
                json_arr_begin(&j);
                for (size_t p = 0; p < hit->n_params; p++) {
                    json_obj_begin(&j);
                    json_key(&j, "name"); json_str(&j, hit->params[p].name);
                    json_key(&j, "type"); json_str(&j, hit->params[p].type);
                    json_obj_end(&j);
                }
                json_arr_end(&j);
                json_key(&j, "variadic"); json_bool(&j, hit->variadic);
                json_obj_end(&j);
            }
            json_obj_end(&j);
            json_obj_end(&j);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
        json_finish(&j);
    } else {
        printf("Builds:\n");
        for (int i = 0; i < np; i++)
            printf("  %s: %s (Module.symvers: %s, vmlinux: %s)\n", bs[i].label, bs[i].path,
                   bs[i].symvers_path ? "yes" : "no", bs[i].vmlinux_path ? "yes" : "no");
        printf("\nExports:\n");
        /* one column per build */
        strvec_t cells = {0};
        size_t ncol = (size_t)np + 1;
        strvec_push(&cells, "SYMBOL");
        for (int i = 0; i < np; i++)
            strvec_push(&cells, bs[i].label);
        for (size_t s = 0; s < syms.n; s++) {
            strvec_push(&cells, syms.v[s]);
            for (int i = 0; i < np; i++) {
                const export_t *x = build_find(&bs[i], syms.v[s]);
                char buf[300];
                if (!x)
                    snprintf(buf, sizeof buf, "not exported");
                else
                    snprintf(buf, sizeof buf, "%s%s%.100s%s%.80s", x->cls == EXP_GPL ? "GPL" : "plain",
                             strcmp(x->module, "vmlinux") ? " in " : "",
                             strcmp(x->module, "vmlinux") ? x->module : "",
                             x->ns[0] ? " ns " : "", x->ns);
                strvec_push(&cells, buf);
            }
        }
        size_t w[64] = {0};
        for (size_t c = 0; c < cells.n; c++) {
            size_t l = strlen(cells.v[c]);
            if (c % ncol < 64 && l > w[c % ncol])
                w[c % ncol] = l;
        }
        for (size_t c = 0; c < cells.n; c++) {
            size_t col = c % ncol;
            if (col + 1 == ncol)
                printf("%s\n", cells.v[c]);
            else
                printf("%s%-*s  ", col == 0 ? "  " : "", (int)(col < 64 ? w[col] : 0), cells.v[c]);
        }
        strvec_free(&cells);
        printf("\nTracepoint parameters (DWARF):\n");
        for (int i = 0; i < np; i++) {
            printf("  %s:\n", bs[i].label);
            if (dws[i] != DW_OK) {
                printf("    DWARF not available: %s\n", dwerr[i]);
                continue;
            }
            for (int ev = 0; ev < N_EVENTS; ev++) {
                dw_func_t *hit = NULL;
                for (int p = 0; p < N_PREFIX && !hit; p++)
                    if (fn[i][ev * N_PREFIX + p].found)
                        hit = &fn[i][ev * N_PREFIX + p];
                if (!hit) {
                    printf("    %s: not found (no __traceiter_/trace_/perf_trace_ function)\n", seed_events[ev]);
                    continue;
                }
                printf("    %s (%zu params):\n", hit->want, hit->n_params);
                table_t t;
                table_init(&t, 3, "#", "NAME", "TYPE");
                for (size_t p = 0; p < hit->n_params; p++) {
                    char num[24];
                    snprintf(num, sizeof num, "%zu", p + 1);
                    table_row(&t, num, hit->params[p].name, hit->params[p].type);
                }
                table_print(&t, stdout, "      ");
                table_free(&t);
            }
        }
    }
    for (int i = 0; i < np; i++) {
        for (int k = 0; k < N_EVENTS * N_PREFIX; k++)
            dw_func_clear(&fn[i][k]);
        build_free(&bs[i]);
    }
    free(fn);
    free(dws);
    free(dwerr);
    free(names);
    free(bs);
    free(pos);
    strvec_free(&syms);
    return ret;
}

/* -------------------------------------------------------------------- audit */

static int cmd_audit(int argc, char **argv)
{
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1]))
        return usage_error("audit: expected FILE.ko%s", NULL);
    const char *path = argv[0];
    filebuf_t fb;
    komod_t m;
    if (load_ko(path, &fb, &m))
        return EXIT_TROUBLE;
    static const char *const refs[] = {"kallsyms_lookup_name", "kallsyms_on_each_symbol", "register_kprobe"};
    static const char *const needles[] = {"kallsyms_lookup_name"};
    table_t t;
    table_init(&t, 3, "KIND", "WHAT", "WHERE");
    for (size_t r = 0; r < sizeof refs / sizeof *refs; r++)
        for (size_t i = 0; i < m.n_undef; i++)
            if (strcmp(m.undef[i].name, refs[r]) == 0)
                table_row(&t, "undefined-reference", refs[r], ".symtab");
    for (size_t nd = 0; nd < sizeof needles / sizeof *needles; nd++) {
        size_t nl = strlen(needles[nd]);
        for (size_t s = 0; s < m.n_datasecs; s++) {
            const ko_datasec_t *d = &m.datasecs[s];
            size_t pos = 0;
            while (pos + nl <= d->size) {
                const unsigned char *hit = memmem(d->data + pos, d->size - pos, needles[nd], nl);
                if (!hit)
                    break;
                size_t off = (size_t)(hit - d->data);
                char where[300];
                snprintf(where, sizeof where, "%.200s+0x%zx", d->name, off);
                table_row(&t, "string", needles[nd], where);
                pos = off + nl;
            }
        }
    }
    size_t n = table_rows(&t);
    if (opt_json) {
        json_t j;
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "file"); json_str(&j, path);
        json_key(&j, "name"); json_str(&j, m.modname);
        json_key(&j, "flagged"); json_bool(&j, n > 0);
        json_key(&j, "findings");
        json_arr_begin(&j);
        for (size_t r = 1; r <= n; r++) {
            json_obj_begin(&j);
            json_key(&j, "kind"); json_str(&j, t.cells.v[r * 3]);
            json_key(&j, "what"); json_str(&j, t.cells.v[r * 3 + 1]);
            json_key(&j, "where"); json_str(&j, t.cells.v[r * 3 + 2]);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_obj_end(&j);
        json_finish(&j);
    } else {
        printf("Module: %s\n", path);
        if (n) {
            printf("kallsyms-style symbol resolution suspected (%zu finding(s)):\n", n);
            table_print(&t, stdout, "  ");
        } else {
            printf("no kallsyms-style symbol resolution found\n");
        }
    }
    table_free(&t);
    ko_free(&m);
    file_free(&fb);
    return n ? EXIT_FINDINGS : EXIT_OKAY;
}

/* --------------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
    int nr = 0;
    const char *cmd = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            opt_json = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            free(rest);
            return EXIT_OKAY;
        } else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++)
                rest[nr++] = argv[i];
        } else if (!cmd) {
            cmd = argv[i];
        } else {
            rest[nr++] = argv[i];
        }
    }
    int r;
    if (!cmd)
        r = usage_error("missing command%s", NULL);
    else if (strcmp(cmd, "exports") == 0)
        r = cmd_exports(nr, rest);
    else if (strcmp(cmd, "module") == 0)
        r = cmd_module(nr, rest);
    else if (strcmp(cmd, "check") == 0)
        r = cmd_check(nr, rest);
    else if (strcmp(cmd, "diff") == 0)
        r = cmd_diff(nr, rest);
    else if (strcmp(cmd, "seed-report") == 0)
        r = cmd_seed_report(nr, rest);
    else if (strcmp(cmd, "audit") == 0)
        r = cmd_audit(nr, rest);
    else
        r = usage_error("unknown command %s", cmd);
    free(rest);
    if (fflush(stdout) != 0 && r == EXIT_OKAY)
        r = EXIT_TROUBLE;
    return r;
}
