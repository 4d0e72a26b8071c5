/* seed-report: the seed symbols and tracepoint parameter lists across builds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char *const default_seed_symbols[] = {
    "task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask", "disk_name",
    "gendisk_device_type", "gendisk_block_class", "kallsyms_lookup_name",
    "kallsyms_on_each_symbol", "bpf_trace_run12", "bpf_trace_run13",
};
const char *const seed_events[SEED_EVENTS] = {"global_dirty_state", "balance_dirty_pages"};
static const char *const seed_prefixes[SEED_PREFIXES] = {"__traceiter_", "trace_", "perf_trace_"};

/* ------------------------------------------------------------------ compute */

void seed_parse_list(const char *list, strvec_t *syms)
{
    char *dup = xstrdup(list), *save = NULL;
    for (char *tk = strtok_r(dup, ", \t\n", &save); tk; tk = strtok_r(NULL, ", \t\n", &save))
        if (!strvec_contains(syms, tk))
            strvec_push(syms, tk);
    free(dup);
}

void seed_default_symbols(strvec_t *syms)
{
    for (size_t i = 0; i < sizeof default_seed_symbols / sizeof *default_seed_symbols; i++)
        strvec_push(syms, default_seed_symbols[i]);
}

void seed_dwarf_compute(const build_t *b, seed_dwarf_t *d)
{
    memset(d, 0, sizeof *d);
    for (int ev = 0; ev < SEED_EVENTS; ev++)
        for (int p = 0; p < SEED_PREFIXES; p++) {
            int k = ev * SEED_PREFIXES + p;
            snprintf(d->names[k], sizeof d->names[k], "%s%s", seed_prefixes[p], seed_events[ev]);
            d->fn[k].want = d->names[k];
        }
    if (!b->vmlinux_path) {
        d->status = DW_NO_DWARF;
        snprintf(d->error, sizeof d->error, "no vmlinux");
        return;
    }
    err_t e;
    d->status = dw_find_functions(b->vmlinux_buf.data, b->vmlinux_buf.size, d->fn,
                                  SEED_EVENTS * SEED_PREFIXES, &e);
    if (d->status == DW_NO_DWARF)
        snprintf(d->error, sizeof d->error, "vmlinux has no DWARF debug info");
    else if (d->status == DW_ERROR)
        snprintf(d->error, sizeof d->error, "%s", e.msg);
    for (int ev = 0; ev < SEED_EVENTS; ev++)
        for (int p = 0; p < SEED_PREFIXES && !d->hit[ev]; p++)
            if (d->fn[ev * SEED_PREFIXES + p].found)
                d->hit[ev] = &d->fn[ev * SEED_PREFIXES + p];
}

void seed_dwarf_free(seed_dwarf_t *d)
{
    for (int k = 0; k < SEED_EVENTS * SEED_PREFIXES; k++)
        dw_func_clear(&d->fn[k]);
}

/* ------------------------------------------------------------------- render */

typedef struct {
    strvec_t syms;
    build_t *bs;
    seed_dwarf_t *dw;
    int n;
} seed_result_t;

static void json_exports(json_t *j, const build_t *b, const strvec_t *syms)
{
    json_key(j, "exports");
    json_obj_begin(j);
    for (size_t s = 0; s < syms->n; s++) {
        const export_t *x = build_find(b, syms->v[s]);
        json_key(j, syms->v[s]);
        json_obj_begin(j);
        json_key(j, "exported"); json_bool(j, x != NULL);
        json_key(j, "class"); json_str(j, x ? exp_class_str(x->cls) : NULL);
        json_key(j, "module"); json_str(j, x ? x->module : NULL);
        json_key(j, "namespace"); json_str(j, x ? x->ns : NULL);
        json_obj_end(j);
    }
    json_obj_end(j);
}

static void json_function(json_t *j, const dw_func_t *hit)
{
    json_obj_begin(j);
    json_key(j, "function"); json_str(j, hit->want);
    json_key(j, "params");
    json_arr_begin(j);
    for (size_t p = 0; p < hit->n_params; p++)
        json_str_obj(j, 2, "name", hit->params[p].name, "type", hit->params[p].type);
    json_arr_end(j);
    json_key(j, "variadic"); json_bool(j, hit->variadic);
    json_obj_end(j);
}

static void json_dwarf(json_t *j, const seed_dwarf_t *d)
{
    json_key(j, "dwarf");
    json_obj_begin(j);
    json_key(j, "available"); json_bool(j, d->status == DW_OK);
    json_key(j, "error"); json_str(j, d->status == DW_OK ? NULL : d->error);
    json_key(j, "tracepoints");
    json_obj_begin(j);
    for (int ev = 0; ev < SEED_EVENTS; ev++) {
        json_key(j, seed_events[ev]);
        if (d->hit[ev])
            json_function(j, d->hit[ev]);
        else
            json_null(j);
    }
    json_obj_end(j);
    json_obj_end(j);
}

static void render_json(const seed_result_t *r)
{
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "symbols");
    json_arr_begin(&j);
    for (size_t s = 0; s < r->syms.n; s++)
        json_str(&j, r->syms.v[s]);
    json_arr_end(&j);
    json_key(&j, "builds");
    json_arr_begin(&j);
    for (int i = 0; i < r->n; i++) {
        const build_t *b = &r->bs[i];
        json_obj_begin(&j);
        json_key(&j, "name"); json_str(&j, b->label);
        json_key(&j, "path"); json_str(&j, b->path);
        json_key(&j, "module_symvers"); json_str(&j, b->symvers_path);
        json_key(&j, "vmlinux"); json_str(&j, b->vmlinux_path);
        json_exports(&j, b, &r->syms);
        json_dwarf(&j, &r->dw[i]);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_finish(&j);
}

static void export_cell(const export_t *x, char *buf, size_t n)
{
    if (!x)
        snprintf(buf, n, "not exported");
    else
        snprintf(buf, n, "%s%s%.100s%s%.80s", x->cls == EXP_GPL ? "GPL" : "plain",
                 strcmp(x->module, "vmlinux") ? " in " : "",
                 strcmp(x->module, "vmlinux") ? x->module : "",
                 x->ns[0] ? " ns " : "", x->ns);
}

/* A table with one column per build (at most 64 columns are aligned). */
static void print_columns(const strvec_t *cells, size_t ncol)
{
    size_t w[64] = {0};
    for (size_t c = 0; c < cells->n; c++) {
        size_t l = strlen(cells->v[c]);
        if (c % ncol < 64 && l > w[c % ncol])
            w[c % ncol] = l;
    }
    for (size_t c = 0; c < cells->n; c++) {
        size_t col = c % ncol;
        if (col + 1 == ncol)
            printf("%s\n", cells->v[c]);
        else
            printf("%s%-*s  ", col == 0 ? "  " : "", (int)(col < 64 ? w[col] : 0), cells->v[c]);
    }
}

static void text_exports(const seed_result_t *r)
{
    strvec_t cells = {0};
    strvec_push(&cells, "SYMBOL");
    for (int i = 0; i < r->n; i++)
        strvec_push(&cells, r->bs[i].label);
    for (size_t s = 0; s < r->syms.n; s++) {
        strvec_push(&cells, r->syms.v[s]);
        for (int i = 0; i < r->n; i++) {
            char buf[300];
            export_cell(build_find(&r->bs[i], r->syms.v[s]), buf, sizeof buf);
            strvec_push(&cells, buf);
        }
    }
    print_columns(&cells, (size_t)r->n + 1);
    strvec_free(&cells);
}

static void text_function(const dw_func_t *hit)
{
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

static void text_dwarf(const build_t *b, const seed_dwarf_t *d)
{
    printf("  %s:\n", b->label);
    if (d->status != DW_OK) {
        printf("    DWARF not available: %s\n", d->error);
        return;
    }
    for (int ev = 0; ev < SEED_EVENTS; ev++) {
        if (d->hit[ev])
            text_function(d->hit[ev]);
        else
            printf("    %s: not found (no __traceiter_/trace_/perf_trace_ function)\n", seed_events[ev]);
    }
}

static void render_text(const seed_result_t *r)
{
    printf("Builds:\n");
    for (int i = 0; i < r->n; i++)
        printf("  %s: %s (Module.symvers: %s, vmlinux: %s)\n", r->bs[i].label, r->bs[i].path,
               r->bs[i].symvers_path ? "yes" : "no", r->bs[i].vmlinux_path ? "yes" : "no");
    printf("\nExports:\n");
    text_exports(r);
    printf("\nTracepoint parameters (DWARF):\n");
    for (int i = 0; i < r->n; i++)
        text_dwarf(&r->bs[i], &r->dw[i]);
}

/* ------------------------------------------------------------------ command */

/* Options into r->syms, builds into pos/np. Returns 0 or a usage error. */
static int parse_args(int argc, char **argv, seed_result_t *r, char **pos, int *np)
{
    bool have_list = false;
    for (int i = 0; i < argc; i++) {
        const char *list = NULL;
        if (strcmp(argv[i], "--symbols") == 0) {
            if (i + 1 >= argc)
                return usage_error("seed-report: --symbols needs a list%s", NULL);
            list = argv[++i];
        } else if (strncmp(argv[i], "--symbols=", 10) == 0) {
            list = argv[i] + 10;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error("seed-report: unknown option %s", argv[i]);
        } else {
            pos[(*np)++] = argv[i];
            continue;
        }
        have_list = true;
        seed_parse_list(list, &r->syms);
    }
    if (!have_list)
        seed_default_symbols(&r->syms);
    if (*np < 1)
        return usage_error("seed-report: expected [NAME=]BUILD...%s", NULL);
    return 0;
}

/* NAME=BUILD, unless a file or directory of that whole name exists. */
static int open_build(const char *arg, build_t *b)
{
    const char *eq = strchr(arg, '=');
    char *label = NULL;
    if (eq && eq != arg && path_kind(arg) == PATH_MISSING) {
        label = xstrndup(arg, (size_t)(eq - arg));
        arg = eq + 1;
    }
    err_t e;
    const char *ep;
    int r = build_open(arg, label, BUILD_LOAD_VMLINUX, b, &ep, &e);
    free(label);
    return r != 0 ? report_error(ep, &e) : 0;
}

static void seed_result_free(seed_result_t *r)
{
    for (int i = 0; i < r->n; i++) {
        if (r->dw)
            seed_dwarf_free(&r->dw[i]);
        build_free(&r->bs[i]);
    }
    free(r->dw);
    free(r->bs);
    strvec_free(&r->syms);
}

int cmd_seed_report(int argc, char **argv, bool json)
{
    seed_result_t r = {0};
    char **pos = xcalloc((size_t)argc + 1, sizeof *pos);
    int np = 0;
    int ret = parse_args(argc, argv, &r, pos, &np);
    if (!ret)
        r.bs = xcalloc((size_t)np, sizeof *r.bs);
    for (int i = 0; i < np && !ret; i++, r.n++)
        ret = open_build(pos[i], &r.bs[i]);
    if (!ret) {
        r.dw = xcalloc((size_t)np, sizeof *r.dw);
        for (int i = 0; i < np; i++)
            seed_dwarf_compute(&r.bs[i], &r.dw[i]);
        if (json)
            render_json(&r);
        else
            render_text(&r);
    }
    seed_result_free(&r);
    free(pos);
    return ret;
}
