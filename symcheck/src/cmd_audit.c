/* audit: which kernel symbols a set of modules resolves by name.
 *
 * Resolvers are derived from the code (codescan.c), across every module audited together:
 *   - kallsyms_lookup_name is a resolver (its argument 0 is a symbol name);
 *   - a "kprobe trick" function registers a kprobe/kretprobe, reads the address it found
 *     (kp.addr) and unregisters it in the same function: it resolves the probed name (a string
 *     literal, or a name known at run time). A kprobe left registered is instrumentation; one
 *     registered and unregistered whose address is provably never read (frameread.c: a struct
 *     kprobe on the stack) is an existence check (LTTng 2.16's lttng_kprobes_match_check).
 *     Neither is a finding;
 *   - a function that stores what a trick on "kallsyms_lookup_name" (or the address of a resolver)
 *     produced into a static cell holds a resolver in that cell;
 *   - a function is a resolver when it passes a non-literal argument 0 to a resolver: a direct
 *     call, or an indirect call in a function that loads a resolver cell. Exported resolvers are
 *     resolvers in every module of the set that calls them (by undefined symbol name).
 * Every call of a resolver with a string literal in argument 0 is a by-name resolution. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "frameread.h"

static const char *const base_resolvers[] = {"kallsyms_lookup_name"};
static const char *const audit_refs[] = {"kallsyms_lookup_name", "kallsyms_on_each_symbol"};
static const char *const audit_strings[] = {"kallsyms_lookup_name"};
static const char *const kp_register[] = {"register_kprobe", "register_kretprobe", "register_kprobes",
                                          "register_kretprobes"};
static const char *const kp_unregister[] = {"unregister_kprobe", "unregister_kretprobe", "unregister_kprobes",
                                            "unregister_kretprobes"};

#define NELEM(a) (sizeof(a) / sizeof *(a))

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------ compute */

static audit_finding_t *add_finding(audit_module_t *r, const char *kind, const char *what)
{
    r->v = xgrow(r->v, r->n, &r->cap, sizeof *r->v, 8);
    audit_finding_t *f = &r->v[r->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->what = xstrdup(what);
    f->fn = f->ev = -1;
    return f;
}

static void add_note(audit_module_t *r, const char *use, const char *function, const char *symbol_name,
                     const char *where)
{
    r->notes = xrealloc(r->notes, (r->n_notes + 1) * sizeof *r->notes);
    r->notes[r->n_notes++] = (audit_note_t){use, xstrdup(function), xstrdup(symbol_name), xstrdup(where)};
}

static void scan_section(const ko_datasec_t *d, const char *needle, audit_module_t *r)
{
    size_t nl = strlen(needle), pos = 0;
    while (pos + nl <= d->size) {
        const unsigned char *hit = memmem(d->data + pos, d->size - pos, needle, nl);
        if (!hit)
            break;
        size_t off = (size_t)(hit - d->data);
        audit_finding_t *f = add_finding(r, "string", needle);
        f->where = xasprintf("%.200s+0x%zx", d->name, off);
        pos = off + nl;
    }
}

/* The name-level findings of the former audit: references to the kallsyms API, its name in data. */
static void legacy_findings(const komod_t *m, audit_module_t *r)
{
    for (size_t k = 0; k < NELEM(audit_refs); k++)
        for (size_t i = 0; i < m->n_undef; i++)
            if (strcmp(m->undef[i].name, audit_refs[k]) == 0)
                add_finding(r, "undefined-reference", audit_refs[k])->where = xstrdup(".symtab");
    for (size_t k = 0; k < NELEM(audit_strings); k++)
        for (size_t s = 0; s < m->n_datasecs; s++)
            scan_section(&m->datasecs[s], audit_strings[k], r);
}

typedef struct {
    const audit_input_t *in;
    size_t n;
    bool **resolver;      /* [module][function] */
    bool **trick;         /* [module][function]: a kprobe trick (is_trick(), decided once) */
    bool **trick_kln;     /* [module][function]: kprobe trick on a base resolver's name */
    /* resolver cells, per module: (section, offset) pairs */
    struct cell { size_t sec; uint64_t off; } **cells;
    size_t *n_cells;
} ctx_t;

static bool fn_calls(const cs_func_t *f, const char *const *names, size_t n, uint64_t *where)
{
    for (size_t k = 0; k < f->n_ev; k++)
        if (f->ev[k].kind == CS_CALL && in_list(f->ev[k].target, names, n)) {
            if (where)
                *where = f->ev[k].off;
            return true;
        }
    return false;
}

/* The names a kprobe trick in f resolves: literals f does not pass to a call, and the literals of a
 * static object handed to the register call. */
static bool in_obj(const cs_obj_t *o, const cs_event_t *ev)
{
    return ev->cell_sec == o->sec && ev->cell_off >= o->off && ev->cell_off < o->off + o->size;
}

/* A literal stored to a static cell counts only when the cell is inside the struct kprobe
 * registered in f (kp.symbol_name = "..." on a static kp); elsewhere it is some other field. */
static bool stored_to_probe(const cs_module_t *cs, const cs_func_t *f, const cs_event_t *lit)
{
    if (lit->lit_dest != CS_DEST_CELL)
        return true;
    for (size_t k = 0; k < f->n_ev; k++) {
        const cs_event_t *ev = &f->ev[k];
        if (ev->kind == CS_CALL && in_list(ev->target, kp_register, NELEM(kp_register)) && ev->arg0_obj >= 0 &&
            in_obj(&cs->objs[ev->arg0_obj], lit))
            return true;
    }
    return false;
}

static void trick_names(const cs_module_t *cs, const cs_func_t *f, strvec_t *out)
{
    for (size_t k = 0; k < f->n_ev; k++) {
        const cs_event_t *ev = &f->ev[k];
        if (ev->kind == CS_LITERAL && !ev->consumed && stored_to_probe(cs, f, ev) &&
            !strvec_contains(out, ev->literal))
            strvec_push(out, ev->literal);
        if (ev->kind == CS_CALL && in_list(ev->target, kp_register, NELEM(kp_register)) && ev->arg0_obj >= 0) {
            const cs_obj_t *o = &cs->objs[ev->arg0_obj];
            for (size_t i = 0; i < o->n_lit; i++)
                if (!strvec_contains(out, o->lit[i]))
                    strvec_push(out, o->lit[i]);
        }
    }
}

/* offsetof(struct kprobe, addr) on x86-64, Linux 6.1 to 7.2; struct kretprobe begins with its kprobe */
#define KPROBE_ADDR_OFF 0x28
static const char *const kp_register_one[] = {"register_kprobe", "register_kretprobe"};

/* May f read the address a kprobe it registers found? Yes unless provably not: a static probe or
 * an array of probes (register_kprobes) is not followed. */
static bool reads_probe_addr(const cs_func_t *f)
{
    size_t ok[16], n_ok = 0;
    for (size_t k = 0; k < f->n_ev && n_ok < NELEM(ok); k++)
        if (f->ev[k].kind == CS_CALL && in_list(f->ev[k].target, kp_unregister, NELEM(kp_unregister)))
            ok[n_ok++] = f->ev[k].off - f->addr;
    for (size_t k = 0; k < f->n_ev; k++) {
        const cs_event_t *ev = &f->ev[k];
        if (ev->kind != CS_CALL || !in_list(ev->target, kp_register, NELEM(kp_register)))
            continue;
        if (!in_list(ev->target, kp_register_one, NELEM(kp_register_one)) || ev->arg0_obj >= 0 ||
            fr_arg0_field_read(f->code, f->size, ev->off - f->addr, KPROBE_ADDR_OFF, 8, ok, n_ok) != FR_NOT_READ)
            return true;
    }
    return false;
}

/* A kprobe registered and unregistered in the same function: a trick when it reads the address. */
static bool registers_and_unregisters(const cs_func_t *f)
{
    return fn_calls(f, kp_register, NELEM(kp_register), NULL) &&
           fn_calls(f, kp_unregister, NELEM(kp_unregister), NULL);
}

static bool is_trick(const cs_func_t *f)
{
    return registers_and_unregisters(f) && reads_probe_addr(f);
}

/* Is the call target of ev (in module mi) a resolver? */
static bool target_is_resolver(const ctx_t *c, size_t mi, const cs_event_t *ev, const char **via_mod)
{
    *via_mod = NULL;
    if (ev->local >= 0)
        return c->resolver[mi][ev->local];
    if (!ev->target)
        return false;
    if (in_list(ev->target, base_resolvers, NELEM(base_resolvers)))
        return true;
    for (size_t j = 0; j < c->n; j++) {
        if (j == mi || !strvec_contains(&c->in[j].cs->exports, ev->target))
            continue;
        long fi = cs_find_fn(c->in[j].cs, ev->target);
        if (fi >= 0 && c->resolver[j][fi]) {
            *via_mod = c->in[j].m->modname ? c->in[j].m->modname : c->in[j].path;
            return true;
        }
    }
    return false;
}

static bool is_cell(const ctx_t *c, size_t mi, const cs_event_t *ev)
{
    for (size_t i = 0; i < c->n_cells[mi]; i++)
        if (c->cells[mi][i].sec == ev->cell_sec && c->cells[mi][i].off == ev->cell_off)
            return true;
    return false;
}

static bool loads_cell(const ctx_t *c, size_t mi, const cs_func_t *f)
{
    for (size_t k = 0; k < f->n_ev; k++)
        if (f->ev[k].kind == CS_LOAD && is_cell(c, mi, &f->ev[k]))
            return true;
    return false;
}

/* Cells: stores in functions that perform a trick on a base resolver's name, call such a function,
 * or take the address of a resolver. */
static void find_cells(ctx_t *c, size_t mi)
{
    const cs_module_t *cs = c->in[mi].cs;
    for (size_t fi = 0; fi < cs->n_fn; fi++) {
        const cs_func_t *f = &cs->fn[fi];
        bool source = c->trick_kln[mi][fi];
        for (size_t k = 0; k < f->n_ev && !source; k++) {
            const cs_event_t *ev = &f->ev[k];
            const char *vm;
            if (ev->kind == CS_CALL && ev->local >= 0 && c->trick_kln[mi][ev->local])
                source = true;
            if (ev->kind == CS_ADDR && target_is_resolver(c, mi, ev, &vm))
                source = true;
        }
        if (!source)
            continue;
        for (size_t k = 0; k < f->n_ev; k++) {
            const cs_event_t *ev = &f->ev[k];
            if (ev->kind != CS_STORE || ev->cell_sec == 0 || is_cell(c, mi, ev))
                continue;
            c->cells[mi] = xrealloc(c->cells[mi], (c->n_cells[mi] + 1) * sizeof **c->cells);
            c->cells[mi][c->n_cells[mi]++] = (struct cell){ev->cell_sec, ev->cell_off};
        }
    }
}

/* One pass of the resolver derivation; returns whether anything changed. */
static bool derive_pass(ctx_t *c)
{
    bool changed = false;
    for (size_t mi = 0; mi < c->n; mi++) {
        const cs_module_t *cs = c->in[mi].cs;
        find_cells(c, mi);
        for (size_t fi = 0; fi < cs->n_fn; fi++) {
            if (c->resolver[mi][fi])
                continue;
            const cs_func_t *f = &cs->fn[fi];
            bool cell = loads_cell(c, mi, f);
            for (size_t k = 0; k < f->n_ev; k++) {
                const cs_event_t *ev = &f->ev[k];
                const char *vm;
                if (ev->arg[0])
                    continue;
                if ((ev->kind == CS_CALL && !(ev->local >= 0 && (size_t)ev->local == fi) &&
                     target_is_resolver(c, mi, ev, &vm)) ||
                    (ev->kind == CS_INDIRECT && cell)) {
                    c->resolver[mi][fi] = changed = true;
                    break;
                }
            }
        }
    }
    return changed;
}

static char *where_str(const cs_func_t *f, uint64_t off)
{
    return xasprintf("%s+0x%llx", f->name, (unsigned long long)(off - f->addr));
}

static void kprobe_findings(const ctx_t *c, size_t mi, audit_module_t *r)
{
    const cs_module_t *cs = c->in[mi].cs;
    for (size_t fi = 0; fi < cs->n_fn; fi++) {
        const cs_func_t *f = &cs->fn[fi];
        uint64_t at;
        if (!fn_calls(f, kp_register, NELEM(kp_register), &at))
            continue;
        strvec_t names = {0};
        trick_names(cs, f, &names);
        char *w = where_str(f, at);
        if (c->trick[mi][fi]) {
            /* the probe only reads an address: of the literal(s), or of a name known at run time */
            if (!names.n)
                strvec_push(&names, "(name not a literal)");
            for (size_t i = 0; i < names.n; i++) {
                audit_finding_t *x = add_finding(r, "kprobe-trick", names.v[i]);
                x->via = xstrdup("register_kprobe");
                x->fn = (long)fi;
                x->where = xstrdup(w);
            }
        } else {
            add_note(r, registers_and_unregisters(f) ? "existence-check" : "instrumentation", f->name,
                     names.n ? names.v[0] : "(not a literal)", w);
        }
        free(w);
        strvec_free(&names);
    }
}

static void byname_findings(const ctx_t *c, size_t mi, audit_module_t *r)
{
    const cs_module_t *cs = c->in[mi].cs;
    for (size_t fi = 0; fi < cs->n_fn; fi++) {
        const cs_func_t *f = &cs->fn[fi];
        if (c->resolver[mi][fi])
            strvec_push(&r->resolvers, f->name);
        bool cell = loads_cell(c, mi, f);
        for (size_t k = 0; k < f->n_ev; k++) {
            const cs_event_t *ev = &f->ev[k];
            const char *vm = NULL;
            if (!ev->arg[0])
                continue;
            char *via = NULL;
            if (ev->kind == CS_CALL && target_is_resolver(c, mi, ev, &vm))
                via = vm ? xasprintf("%s (%s)", ev->target, vm) : xstrdup(ev->target);
            else if (ev->kind == CS_INDIRECT && cell)
                via = xstrdup("(pointer to a resolver)");
            if (!via)
                continue;
            audit_finding_t *x = add_finding(r, "by-name", ev->arg[0]);
            x->via = via;
            x->where = where_str(f, ev->off);
            x->fn = (long)fi;
            x->ev = (long)k;
        }
    }
}

void audit_compute(const audit_input_t *in, size_t n, audit_result_t *r)
{
    memset(r, 0, sizeof *r);
    ctx_t c = {in, n, NULL, NULL, NULL, NULL, NULL};
    c.resolver = xcalloc(n ? n : 1, sizeof *c.resolver);
    c.trick = xcalloc(n ? n : 1, sizeof *c.trick);
    c.trick_kln = xcalloc(n ? n : 1, sizeof *c.trick_kln);
    c.cells = xcalloc(n ? n : 1, sizeof *c.cells);
    c.n_cells = xcalloc(n ? n : 1, sizeof *c.n_cells);
    for (size_t mi = 0; mi < n; mi++) {
        const cs_module_t *cs = in[mi].cs;
        c.resolver[mi] = xcalloc(cs->n_fn ? cs->n_fn : 1, sizeof **c.resolver);
        c.trick[mi] = xcalloc(cs->n_fn ? cs->n_fn : 1, sizeof **c.trick);
        c.trick_kln[mi] = xcalloc(cs->n_fn ? cs->n_fn : 1, sizeof **c.trick_kln);
        for (size_t fi = 0; fi < cs->n_fn; fi++) {
            c.trick[mi][fi] = is_trick(&cs->fn[fi]);
            if (!c.trick[mi][fi])
                continue;
            strvec_t names = {0};
            trick_names(cs, &cs->fn[fi], &names);
            for (size_t i = 0; i < names.n; i++)
                if (in_list(names.v[i], base_resolvers, NELEM(base_resolvers)))
                    c.trick_kln[mi][fi] = true;
            strvec_free(&names);
        }
    }
    while (derive_pass(&c))
        ;
    r->n = n;
    r->mods = xcalloc(n ? n : 1, sizeof *r->mods);
    for (size_t mi = 0; mi < n; mi++) {
        audit_module_t *am = &r->mods[mi];
        am->path = in[mi].path;
        am->name = in[mi].m->modname;
        legacy_findings(in[mi].m, am);
        kprobe_findings(&c, mi, am);
        byname_findings(&c, mi, am);
        r->findings_total += am->n;
        if (am->n)
            r->flagged++;
    }
    for (size_t mi = 0; mi < n; mi++) {
        free(c.resolver[mi]);
        free(c.trick[mi]);
        free(c.trick_kln[mi]);
        free(c.cells[mi]);
    }
    free(c.resolver);
    free(c.trick);
    free(c.trick_kln);
    free(c.cells);
    free(c.n_cells);
}

void audit_result_free(audit_result_t *r)
{
    for (size_t mi = 0; mi < r->n; mi++) {
        audit_module_t *am = &r->mods[mi];
        for (size_t i = 0; i < am->n; i++) {
            free(am->v[i].what);
            free(am->v[i].via);
            free(am->v[i].where);
        }
        free(am->v);
        for (size_t i = 0; i < am->n_notes; i++) {
            free(am->notes[i].function);
            free(am->notes[i].symbol_name);
            free(am->notes[i].where);
        }
        free(am->notes);
        strvec_free(&am->resolvers);
    }
    free(r->mods);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

static void json_module(json_t *j, const audit_module_t *am)
{
    json_obj_begin(j);
    json_key(j, "file"); json_str(j, am->path);
    json_key(j, "name"); json_str(j, am->name);
    json_key(j, "flagged"); json_bool(j, am->n > 0);
    json_key(j, "findings");
    json_arr_begin(j);
    for (size_t i = 0; i < am->n; i++)
        json_str_obj(j, 4, "kind", am->v[i].kind, "what", am->v[i].what, "via", am->v[i].via,
                     "where", am->v[i].where);
    json_arr_end(j);
    json_key(j, "resolvers");
    json_arr_begin(j);
    for (size_t i = 0; i < am->resolvers.n; i++)
        json_str(j, am->resolvers.v[i]);
    json_arr_end(j);
    static const char *const uses[][2] = {{"instrumentation", "instrumentation"},
                                           {"existence_checks", "existence-check"}};
    for (size_t u = 0; u < NELEM(uses); u++) {
        json_key(j, uses[u][0]);
        json_arr_begin(j);
        for (size_t i = 0; i < am->n_notes; i++)
            if (strcmp(am->notes[i].use, uses[u][1]) == 0)
                json_str_obj(j, 3, "function", am->notes[i].function, "symbol_name", am->notes[i].symbol_name,
                             "where", am->notes[i].where);
        json_arr_end(j);
    }
    json_obj_end(j);
}

static void render_json(const audit_result_t *r, bool set)
{
    json_t j;
    json_init(&j, stdout);
    if (!set) {
        json_module(&j, &r->mods[0]);
        json_finish(&j);
        return;
    }
    json_obj_begin(&j);
    json_key(&j, "modules");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++)
        json_module(&j, &r->mods[i]);
    json_arr_end(&j);
    json_key(&j, "flagged");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++)
        if (r->mods[i].n)
            json_str(&j, r->mods[i].name ? r->mods[i].name : r->mods[i].path);
    json_arr_end(&j);
    json_key(&j, "findings_total"); json_int(&j, (long long)r->findings_total);
    json_obj_end(&j);
    json_finish(&j);
}

static void text_module(const audit_module_t *am)
{
    printf("Module: %s\n", am->path);
    if (!am->n) {
        printf("no kallsyms-style symbol resolution found\n");
    } else {
        printf("kallsyms-style symbol resolution suspected (%zu finding(s)):\n", am->n);
        table_t t;
        table_init(&t, 4, "KIND", "WHAT", "VIA", "WHERE");
        for (size_t i = 0; i < am->n; i++)
            table_row(&t, am->v[i].kind, am->v[i].what, am->v[i].via, am->v[i].where);
        table_print(&t, stdout, "  ");
        table_free(&t);
    }
    if (am->resolvers.n) {
        printf("resolves names for others:");
        for (size_t i = 0; i < am->resolvers.n; i++)
            printf(" %s", am->resolvers.v[i]);
        putchar('\n');
    }
    for (size_t i = 0; i < am->n_notes; i++)
        printf("kprobe %s (not a finding): %s on %s at %s\n",
               strcmp(am->notes[i].use, "instrumentation") ? "existence check" : "instrumentation",
               am->notes[i].function, am->notes[i].symbol_name, am->notes[i].where);
}

static void render_text(const audit_result_t *r, bool set)
{
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            putchar('\n');
        text_module(&r->mods[i]);
    }
    if (!set)
        return;
    printf("\n%zu module(s) audited, %zu flagged", r->n, r->flagged);
    for (size_t i = 0, k = 0; i < r->n; i++)
        if (r->mods[i].n)
            printf("%s%s", k++ ? ", " : ": ", r->mods[i].name ? r->mods[i].name : r->mods[i].path);
    putchar('\n');
}

/* ------------------------------------------------------------------ command */

int cmd_audit(int argc, char **argv, bool json)
{
    const char *tree = NULL;
    char **files = xcalloc((size_t)argc + 1, sizeof *files);
    int nf = 0;
    if (parse_tree_args("audit", argc, argv, NULL, &tree, files, &nf)) {
        free(files);
        return EXIT_TROUBLE;
    }
    if ((tree && nf) || (!tree && !nf)) {
        free(files);
        return usage_error("audit: expected FILE.ko [FILE.ko...] or --tree DIR%s", NULL);
    }
    scanned_set_t set;
    int ret = scanned_set_load(tree, files, nf, &set);
    free(files);
    if (ret != 0)
        return ret;
    audit_result_t r;
    audit_compute(set.in, set.n, &r);
    bool many = tree || set.n > 1;
    if (json)
        render_json(&r, many);
    else
        render_text(&r, many);
    ret = r.findings_total ? EXIT_FINDINGS : EXIT_OKAY;
    audit_result_free(&r);
    scanned_set_free(&set);
    return ret;
}
