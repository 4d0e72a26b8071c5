/* check: does a build provide what modules need? */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "decomp.h"
#include "modexports.h"
#include "pool.h"

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
    for (size_t i = 0; i < m->import_ns.n; i++)   /* 7.2 setup_modinfo(), kernel/module/main.c:1823-1832 */
        if (is_module_ns(m->import_ns.v[i]))
            add_finding(r, "module-namespace-import", NULL,
                        xasprintf("import_ns=%s: a module: namespace cannot be imported "
                                  "(the loader refuses the module)", m->import_ns.v[i]));
    if (!m->has_versions && m->n_undef > 0 && build_has_crcs(b))   /* the scan last: it is O(build) */
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
    if (is_module_ns(s->x->ns)) {
        /* 7.2: the loader's verify_namespace_is_imported() (kernel/module/main.c:1209-1238) lets
         * the module use it only when mod->name matches; an import cannot (module-wide finding) */
        const char *mn = ko_loader_name(m);
        if (!module_ns_allows(s->x->ns, mn))
            add_finding(r, "module-not-allowed", name,
                        xasprintf("symbol %s is exported only to %s, not to module %s", name,
                                  s->x->ns + strlen(MODULE_NS_PREFIX), mn ? mn : "(no name)"));
    } else if (s->x->ns[0] && !strvec_contains(&m->import_ns, s->x->ns))
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

static void text_symbols(FILE *f, const char *path, const komod_t *m, const check_result_t *r)
{
    fprintf(f, "Module: %s (name %s, license %s%s, %zu undefined symbols, __versions %s)\n", path,
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
    table_print(&t, f, "  ");
    table_free(&t);
    if (r->n_findings == 0)
        fprintf(f, "  no findings\n\n");
}

static void text_module(FILE *f, const char *path, const komod_t *m, const check_result_t *r, bool quiet)
{
    if (!quiet)
        text_symbols(f, path, m, r);
    for (size_t i = 0; i < r->n_findings; i++)
        fprintf(f, "%s: %s: %s\n", path, r->findings[i].kind, r->findings[i].message);
    if (!quiet && r->n_findings)
        fputc('\n', f);
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

/* ------------------------------------------------------------------ the run */

/* From how many modules on the build's sets get a hash index: building it costs about as much as
 * the binary searches of some 70 modules, so one module alone is checked with binary search. */
#define INDEX_MIN_MODULES 64

/* One module of the run. Loading, checking and rendering run on the worker pool, each job
 * writing only its own slot; the output is then written in the order of the files, so it is the
 * same for any number of threads. */
typedef struct {
    const char *path;
    bool loaded;          /* ko_read succeeded */
    bool recheck;         /* m kept: its result may change with the set's exports */
    err_t err;            /* why not, reported when the module's turn comes */
    komod_t m;            /* valid while recheck */
    bool has_exports;     /* ko_exports_read succeeded: x holds the module's exports */
    exportset_t x;
    char *out;            /* the module's text, or its JSON object */
    size_t out_n;
    size_t n_findings;
} check_job_t;

typedef struct {          /* a worker's buffers, kept from one file to the next */
    unsigned char *in;    /* the file as read */
    size_t in_cap;
    decomp_ctx_t dc;      /* decoders and the decompressed image */
} check_worker_t;

typedef struct {
    check_job_t *jobs;
    size_t n;
    const build_t *b;
    const check_args_t *a;
    bool json;
    check_worker_t *w;    /* one per worker */
    size_t *recheck;      /* the jobs to check again after add_set_exports */
} check_run_t;

/* Could the module's result change once the set's exports join the build? Those only add names
 * the build lacks, so a result changes only for a module that looked up a name the build does not
 * have, or whose no-versions-section finding depends on the build's CRCs. */
static bool depends_on_set(const komod_t *m, const build_t *b, const check_result_t *r)
{
    if (!m->has_versions && m->n_undef > 0)
        return true;
    for (size_t i = 0; i < r->n_syms; i++)
        if (!r->syms[i].x)
            return true;
    for (size_t i = 0; m->has_versions && i < m->n_vers; i++)
        if (!ko_version_is_undef(m, &m->vers[i]) && !build_find(b, m->vers[i].name))
            return true;
    return false;
}

/* Check one loaded module against the build as it is and render it into job->out; keep the
 * module (job->recheck) when depends_on_set, else free it. */
static void check_render(const check_run_t *run, check_job_t *job)
{
    check_result_t r;
    check_compute(&job->m, run->b, &r);
    free(job->out);
    job->out = NULL;
    FILE *f = open_memstream(&job->out, &job->out_n);
    if (!f) {
        fputs("symcheck: out of memory\n", stderr);
        exit(EXIT_TROUBLE);
    }
    if (run->json) {
        json_t j;
        json_init(&j, f);
        json_module(&j, job->path, &job->m, &r);
    } else {
        text_module(f, job->path, &job->m, &r, run->a->quiet);
    }
    fclose(f);
    job->n_findings = r.n_findings;
    job->recheck = depends_on_set(&job->m, run->b, &r);
    check_result_free(&r);
    if (!job->recheck)
        ko_free(&job->m);
}

/* Read the file once, decompress it once (into the worker's buffer), take from the image both
 * what check needs (ko_read) and the module's exports (ko_exports_read), and check and render the
 * module against the build right away. Nothing kept points into the image. A module whose exports
 * cannot be read still gets checked, and one that cannot be checked may still lend its exports to
 * the set, as before. */
static void load_job(void *arg, size_t i, unsigned worker)
{
    check_run_t *run = arg;
    check_job_t *job = &run->jobs[i];
    check_worker_t *w = &run->w[worker];
    size_t len;
    if (file_read_into(job->path, &w->in, &w->in_cap, &len, &job->err) != 0)
        return;
    unsigned char *img = w->in;
    size_t n = len;
    enum comp_kind k = comp_detect(w->in, len);
    if (k != COMP_NONE && decomp_into(&w->dc, k, w->in, len, &img, &n, &job->err) != 0)
        return;
    job->loaded = ko_read_opts(img, n, &job->m, KO_NO_DATASECS, &job->err) == 0;
    char *label = xstrdup(job->path);
    char *dot = strstr(label, ".ko");
    if (dot)
        *dot = 0;
    err_t e;
    int xr = ko_exports_read(img, n, label, &job->x, &e);
    job->has_exports = xr == 0;
    if (!job->has_exports)
        exportset_free(&job->x);
    free(label);
    if (xr == KOX_CORRUPT && job->loaded) {   /* 7.2 tables the loader would misread */
        ko_free(&job->m);
        job->loaded = false;
        job->err = e;
    }
    if (job->loaded)
        check_render(run, job);
}

/* After the set's exports joined the build: check again a module kept for that. */
static void recheck_job(void *arg, size_t i, unsigned worker)
{
    (void)worker;
    check_run_t *run = arg;
    check_job_t *job = &run->jobs[run->recheck[i]];
    check_render(run, job);
    ko_free(&job->m);
    job->recheck = false;
}

/* Symbols the modules of the set export to each other (LTTng's probes need lttng-tracer's):
 * each module's __ksymtab entries join the build's exports unless the build has the name already,
 * in file order, as before the worker pool (a name that two modules of the set export and the
 * build lacks is then looked up as the binary search of the sorted set finds it, which
 * exportset_index keeps). Returns the number of entries added. */
static size_t add_set_exports(const check_job_t *jobs, size_t n, build_t *b)
{
    size_t before = b->symvers.n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; jobs[i].has_exports && k < jobs[i].x.n; k++) {
            const export_t *x = &jobs[i].x.v[k];
            if (!build_find(b, x->name))
                exportset_add(&b->symvers, x->name, x->module, x->ns, x->crc, x->has_crc, x->cls);
        }
    if (b->symvers.n != before) {
        exportset_sort(&b->symvers);
        if (n >= INDEX_MIN_MODULES)
            exportset_index(&b->symvers);
    }
    return b->symvers.n - before;
}

/* The file sizes, as the weights that put the biggest modules first on the pool. */
static size_t *file_weights(char **files, size_t n)
{
    size_t *w = xcalloc(n ? n : 1, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        w[i] = stat(files[i], &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
    }
    return w;
}

/* Write the modules in file order: each one's output, or its error on stderr. */
static int write_jobs(const check_run_t *run, const build_t *b)
{
    json_t j;
    if (run->json) {
        json_init(&j, stdout);
        json_obj_begin(&j);
        json_key(&j, "build"); json_str(&j, b->path);
        json_key(&j, "modules");
        json_arr_begin(&j);
    }
    size_t total = 0;
    bool trouble = false;
    for (size_t i = 0; i < run->n; i++) {
        const check_job_t *job = &run->jobs[i];
        if (!job->loaded) {
            report_error(job->path, &job->err);
            trouble = true;
        } else if (run->json) {
            json_raw(&j, job->out, job->out_n);
        } else {
            fwrite(job->out, 1, job->out_n, stdout);
        }
        total += job->n_findings;
    }
    if (run->json) {
        json_arr_end(&j);
        json_key(&j, "findings_total"); json_int(&j, (long long)total);
        json_obj_end(&j);
        json_finish(&j);
    } else if (run->n > 1 || run->a->quiet) {
        printf("%zu module(s) checked, %zu finding(s)\n", run->n, total);
    }
    if (trouble)
        return EXIT_TROUBLE;
    return total ? EXIT_FINDINGS : EXIT_OKAY;
}

/* Load, check and render every module (both cores), add the set's exports to the build, check
 * again the modules whose result may depend on them (both cores), write the results in file order. */
static int check_files(char **files, size_t n, build_t *b, const check_args_t *a, bool json)
{
    check_run_t run = {xcalloc(n ? n : 1, sizeof *run.jobs), n, b, a, json, NULL, NULL};
    if (n >= INDEX_MIN_MODULES)
        build_index(b);
    for (size_t i = 0; i < n; i++)
        run.jobs[i].path = files[i];
    unsigned nt = pool_threads(n);
    run.w = xcalloc(nt, sizeof *run.w);
    for (unsigned w = 0; w < nt; w++)
        decomp_ctx_init(&run.w[w].dc);
    size_t *weight = file_weights(files, n);
    size_t *order = pool_order_by_weight(weight, n);
    pool_run(n, order, nt, load_job, &run);
    for (unsigned w = 0; w < nt; w++) {
        decomp_ctx_free(&run.w[w].dc);
        free(run.w[w].in);
    }
    size_t nr = 0;
    run.recheck = xcalloc(n ? n : 1, sizeof *run.recheck);
    for (size_t i = 0; i < n; i++)
        if (run.jobs[i].recheck)
            run.recheck[nr++] = i;
    if (add_set_exports(run.jobs, n, b) > 0)
        pool_run(nr, NULL, pool_threads(nr), recheck_job, &run);
    for (size_t i = 0; i < nr; i++)   /* the set added nothing: the results stand */
        if (run.jobs[run.recheck[i]].recheck)
            ko_free(&run.jobs[run.recheck[i]].m);
    int ret = write_jobs(&run, b);
    for (size_t i = 0; i < n; i++) {
        exportset_free(&run.jobs[i].x);
        free(run.jobs[i].out);
    }
    free(order);
    free(weight);
    free(run.recheck);
    free(run.w);
    free(run.jobs);
    return ret;
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
        ret = check_files(mods.v, mods.n, &b, &a, json);
    else
        ret = check_files(a.pos, (size_t)a.np - 1, &b, &a, json);
    build_free(&b);
    strvec_free(&mods);
    free(bp);
    free(a.pos);
    return ret;
}
