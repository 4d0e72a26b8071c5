/* calltypes: for every name a set of modules resolves at run time (what audit finds), compare the
 * kernel's DWARF type of that symbol with the type the module uses it as. A call through a
 * looked-up address has no modversions CRC: nothing else compares the two.
 *
 * The module side: the resolver call's result is stored into a static variable (the first store
 * to a static cell after the call, before any other call; for a kprobe trick, after the
 * unregister call or after a call of the trick function); that variable's DWARF type says what
 * the module takes the symbol for: a pointer to a function type (a signature), a pointer to
 * another type (an object of that type), or neither (void *, unsigned long: untyped). A result
 * used without being stored is unchecked (no-receiver), and said so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char *const kp_unregister[] = {"unregister_kprobe", "unregister_kretprobe", "unregister_kprobes",
                                            "unregister_kretprobes"};

/* ------------------------------------------------------------------ receiver */

/* The first store to a static cell after event k of f, before any other call. */
static const cs_event_t *store_after(const cs_func_t *f, size_t k)
{
    for (size_t j = k + 1; j < f->n_ev; j++) {
        const cs_event_t *e = &f->ev[j];
        if (e->kind == CS_CALL || e->kind == CS_INDIRECT)
            return NULL;
        if (e->kind == CS_STORE && e->cell_sec)
            return e;
    }
    return NULL;
}

static bool is_unregister(const cs_event_t *e)
{
    for (size_t i = 0; e->kind == CS_CALL && e->target && i < sizeof kp_unregister / sizeof *kp_unregister; i++)
        if (strcmp(e->target, kp_unregister[i]) == 0)
            return true;
    return false;
}

/* Where the address a kprobe trick in function fi read goes: stored after the unregister call in
 * fi itself, or after a call of fi elsewhere in the module. */
static const cs_event_t *trick_store(const cs_module_t *cs, size_t fi)
{
    const cs_func_t *f = &cs->fn[fi];
    for (size_t k = f->n_ev; k-- > 0;)
        if (is_unregister(&f->ev[k])) {
            const cs_event_t *s = store_after(f, k);
            if (s)
                return s;
            break;
        }
    for (size_t g = 0; g < cs->n_fn; g++)
        for (size_t k = 0; k < cs->fn[g].n_ev; k++) {
            const cs_event_t *e = &cs->fn[g].ev[k];
            if (e->kind == CS_CALL && e->local == (long)fi) {
                const cs_event_t *s = store_after(&cs->fn[g], k);
                if (s)
                    return s;
            }
        }
    return NULL;
}

static const cs_event_t *receiver_cell(const cs_module_t *cs, const audit_finding_t *f)
{
    if (f->fn < 0 || (size_t)f->fn >= cs->n_fn)
        return NULL;
    if (f->ev >= 0)
        return store_after(&cs->fn[f->fn], (size_t)f->ev);
    return trick_store(cs, (size_t)f->fn);
}

/* The data symbol that holds section offset off of section sec; *inside when off is not its start. */
static const Elf64_Sym *cell_symbol(const elfr_image_t *im, size_t sec, uint64_t off, bool *inside)
{
    const Elf64_Sym *best = NULL;
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        unsigned t = ELF64_ST_TYPE(s->st_info);
        if (s->st_shndx != sec || (t != STT_OBJECT && t != STT_NOTYPE) || !elfr_sym_name(im, s))
            continue;
        if (s->st_value == off)
            return *inside = false, s;
        if (s->st_value < off && off < s->st_value + s->st_size)
            best = s;
    }
    *inside = best != NULL;
    return best;
}

/* ------------------------------------------------------------------ compare */

static calltype_item_t *add_item(calltypes_result_t *r, const char *module, const audit_finding_t *f)
{
    r->v = xgrow(r->v, r->n, &r->cap, sizeof *r->v, 16);
    calltype_item_t *it = &r->v[r->n++];
    memset(it, 0, sizeof *it);
    it->module = module;
    it->name = xstrdup(f->what);
    it->via = f->via ? xstrdup(f->via) : NULL;
    it->where = f->where ? xstrdup(f->where) : NULL;
    return it;
}

static void set_status(calltype_item_t *it, const char *status, const char *problem, char *detail)
{
    static const char *const order[] = {"match", "qualifiers", "unchecked", "mismatch"};
    int now = -1, want = 0;
    for (int i = 0; i < 4; i++) {
        if (it->status && strcmp(it->status, order[i]) == 0)
            now = i;
        if (strcmp(status, order[i]) == 0)
            want = i;
    }
    if (detail) {   /* every problem is kept in the detail, the worst one names the status */
        char *d = it->detail ? xasprintf("%s; %s", it->detail, detail) : xstrdup(detail);
        free(it->detail);
        free(detail);
        it->detail = d;
    }
    if (want > now) {
        it->status = status;
        it->problem = problem;
    }
}

/* 0 equal, 1 equal but for qualifiers, 2 different */
static int type_cmp(const dwt_type_t *k, const dwt_type_t *m)
{
    if (strcmp(k->exact, m->exact) == 0)
        return 0;
    return strcmp(k->loose, m->loose) == 0 ? 1 : 2;
}

static void cmp_one(calltype_item_t *it, const dwt_type_t *k, const dwt_type_t *m, const char *problem,
                    const char *what)
{
    int c = type_cmp(k, m);
    if (c == 0)
        return;
    set_status(it, c == 1 ? "qualifiers" : "mismatch", problem,
               xasprintf("%s is %s in the kernel, %s in the module", what, k->written, m->written));
}

static void compare_function(calltype_item_t *it, const dwt_entity_t *k, const dwt_entity_t *m)
{
    cmp_one(it, &k->type, &m->type, "return-type", "the return type");
    if (!m->prototyped && !m->n_params)
        return;   /* an unprototyped pointer says nothing of the parameters */
    if (k->n_params != m->n_params || k->variadic != m->variadic) {
        set_status(it, "mismatch", "param-count",
                   xasprintf("the kernel takes %zu parameter(s)%s, the module passes %zu%s", k->n_params,
                             k->variadic ? " and ..." : "", m->n_params, m->variadic ? " and ..." : ""));
        return;
    }
    for (size_t i = 0; i < k->n_params; i++) {
        char what[48];
        snprintf(what, sizeof what, "parameter %zu", i + 1);
        cmp_one(it, &k->params[i], &m->params[i], "param-type", what);
    }
}

/* A module may take the address of an array object as a pointer to its element. */
static bool element_of(const char *array, const char *elem)
{
    size_t n = strlen(elem);
    return strncmp(array, elem, n) == 0 && array[n] == '[';
}

static void compare_object(calltype_item_t *it, const dwt_entity_t *k, const dwt_entity_t *m)
{
    if (element_of(k->type.exact, m->type.exact))
        return;
    if (element_of(k->type.loose, m->type.loose)) {
        set_status(it, "qualifiers", "object-type",
                   xasprintf("the element of %s is taken as %s", k->type.written, m->type.written));
        return;
    }
    cmp_one(it, &k->type, &m->type, "object-type", "the object");
}

static void compare(calltype_item_t *it, const dwt_entity_t *k, size_t variants, int kind, const dwt_entity_t *m)
{
    if (!k->decl) {
        set_status(it, "unchecked", "not-in-kernel",
                   xasprintf("%s is not a function or variable in the kernel's DWARF", it->name));
        return;
    }
    it->kernel_kind = k->is_function ? "function" : "object";
    it->kernel_type = xstrdup(k->decl);
    it->kernel_variants = variants;
    if (kind == 1 && !k->is_function)
        set_status(it, "mismatch", "data-as-function",
                   xasprintf("%s is an object (%s) and the module calls it as a function", it->name, k->decl));
    else if (kind == 2 && k->is_function)
        set_status(it, "mismatch", "function-as-data",
                   xasprintf("%s is a function and the module reads it as %s", it->name, m->decl));
    else if (kind == 1)
        compare_function(it, k, m);
    else
        compare_object(it, k, m);
    if (!it->status)
        it->status = "match";
}

/* ------------------------------------------------------------------ compute */

typedef struct {
    calltype_item_t *it;
    dwt_entity_t recv;
    int kind;             /* dwt_receiver's answer, -1 when the item is already unchecked */
} pending_t;

/* The DWARF of the receiver cell: the variable (or the member of it) the address is stored in. */
static bool receiver_die(const calltypes_module_t *mod, const Elf64_Sym *sym, uint64_t cell_off,
                         calltype_item_t *it, Dwarf_Die *out)
{
    const char *sname = elfr_sym_name(mod->im, sym);
    char *base = xstrndup(sname, strcspn(sname, "."));   /* static locals: name.N */
    it->receiver = base;
    if (!mod->dw || !mod->dw->dw) {
        set_status(it, "unchecked", "no-module-dwarf",
                   xstrdup("the module has no DWARF (build it with CONFIG_DEBUG_INFO)"));
        return false;
    }
    Dwarf_Die var;
    int found = dwt_find_variable(mod->dw, base, sym->st_value, &var);
    if (found != 1) {
        set_status(it, "unchecked", found == 2 ? "ambiguous-receiver" : "no-receiver",
                   xasprintf("%s %s in the module's DWARF", base, found == 2 ? "is ambiguous" : "is not found"));
        return false;
    }
    char path[256];
    if (!dwt_member_at(&var, cell_off - sym->st_value, out, path, sizeof path)) {
        set_status(it, "unchecked", "receiver-in-aggregate",
                   xasprintf("no member of %s starts at offset %llu", base,
                             (unsigned long long)(cell_off - sym->st_value)));
        return false;
    }
    it->receiver = xasprintf("%s%s", base, path);
    free(base);
    return true;
}

/* The receiver of one finding: its variable and type, or why there is none. */
static int describe_receiver(const calltypes_module_t *mod, const audit_finding_t *f, calltype_item_t *it,
                             dwt_entity_t *recv)
{
    memset(recv, 0, sizeof *recv);
    const cs_event_t *st = receiver_cell(mod->a->cs, f);
    if (!st) {
        set_status(it, "unchecked", "no-receiver",
                   xstrdup("the address is not stored in a static variable right after the lookup"));
        return -1;
    }
    bool inside;
    const Elf64_Sym *sym = cell_symbol(mod->im, st->cell_sec, st->cell_off, &inside);
    Dwarf_Die die;
    if (!sym) {
        set_status(it, "unchecked", "no-receiver", xstrdup("no symbol holds the cell the address is stored in"));
        return -1;
    }
    if (!receiver_die(mod, sym, st->cell_off, it, &die))
        return -1;
    int kind = dwt_receiver(&die, recv);
    it->module_type = xstrdup(recv->decl);
    if (kind == 0)
        set_status(it, "unchecked", "untyped-receiver",
                   xasprintf("%s is %s: it says nothing of the symbol's type", it->receiver, recv->decl));
    return kind == 0 ? -1 : kind;
}

static void count(calltypes_result_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const char *s = r->v[i].status;
        if (strcmp(s, "match") == 0)
            r->match++;
        else if (strcmp(s, "qualifiers") == 0)
            r->qualifiers++;
        else if (strcmp(s, "mismatch") == 0)
            r->mismatch++;
        else
            r->unchecked++;
    }
}

void calltypes_compute(const calltypes_module_t *mods, size_t n, const audit_result_t *audit, dwt_t *kernel,
                       calltypes_result_t *r)
{
    memset(r, 0, sizeof *r);
    r->modules = n;
    pending_t *p = NULL;
    size_t np = 0, pcap = 0;
    for (size_t mi = 0; mi < n && mi < audit->n; mi++) {
        const audit_module_t *am = &audit->mods[mi];
        const char *mname = am->name ? am->name : am->path;
        for (size_t i = 0; i < am->n; i++) {
            const audit_finding_t *f = &am->v[i];
            if (strcmp(f->kind, "by-name") != 0 && strcmp(f->kind, "kprobe-trick") != 0)
                continue;
            if (!cs_is_identifier(f->what))
                continue;   /* "(name not a literal)": nothing to look up */
            p = xgrow(p, np, &pcap, sizeof *p, 16);
            p[np].it = add_item(r, mname, f);
            p[np].kind = describe_receiver(&mods[mi], f, p[np].it, &p[np].recv);
            np++;
        }
    }
    /* r->v is final now: point the pending entries at it again */
    for (size_t i = 0; i < np; i++)
        p[i].it = &r->v[i];
    const char **names = xcalloc(np ? np : 1, sizeof *names);
    for (size_t i = 0; i < np; i++)
        names[i] = r->v[i].name;
    dwt_entity_t *ent = xcalloc(np ? np : 1, sizeof *ent);
    size_t *variants = xcalloc(np ? np : 1, sizeof *variants);
    if (np)
        dwt_find_entities(kernel, names, np, ent, variants);
    for (size_t i = 0; i < np; i++) {
        if (p[i].kind > 0)
            compare(p[i].it, &ent[i], variants[i], p[i].kind, &p[i].recv);
        else if (ent[i].decl) {
            p[i].it->kernel_kind = ent[i].is_function ? "function" : "object";
            p[i].it->kernel_type = xstrdup(ent[i].decl);
        }
        dwt_entity_free(&ent[i]);
        dwt_entity_free(&p[i].recv);
    }
    free(ent);
    free(variants);
    free(names);
    free(p);
    count(r);
}

void calltypes_result_free(calltypes_result_t *r)
{
    for (size_t i = 0; i < r->n; i++) {
        calltype_item_t *it = &r->v[i];
        free(it->name);
        free(it->via);
        free(it->where);
        free(it->receiver);
        free(it->module_type);
        free(it->kernel_type);
        free(it->detail);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

static void render_json(const calltypes_result_t *r)
{
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "items");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        const calltype_item_t *it = &r->v[i];
        json_obj_begin(&j);
        json_key(&j, "module"); json_str(&j, it->module);
        json_key(&j, "name"); json_str(&j, it->name);
        json_key(&j, "via"); json_str(&j, it->via);
        json_key(&j, "where"); json_str(&j, it->where);
        json_key(&j, "receiver"); json_str(&j, it->receiver);
        json_key(&j, "module_type"); json_str(&j, it->module_type);
        json_key(&j, "kernel_kind"); json_str(&j, it->kernel_kind);
        json_key(&j, "kernel_type"); json_str(&j, it->kernel_type);
        json_key(&j, "kernel_variants"); json_int(&j, (long long)it->kernel_variants);
        json_key(&j, "status"); json_str(&j, it->status);
        json_key(&j, "problem"); json_str(&j, it->problem);
        json_key(&j, "detail"); json_str(&j, it->detail);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "modules"); json_int(&j, (long long)r->modules);
    json_key(&j, "match"); json_int(&j, (long long)r->match);
    json_key(&j, "qualifiers"); json_int(&j, (long long)r->qualifiers);
    json_key(&j, "mismatch"); json_int(&j, (long long)r->mismatch);
    json_key(&j, "unchecked"); json_int(&j, (long long)r->unchecked);
    json_obj_end(&j);
    json_finish(&j);
}

static void render_text(const calltypes_result_t *r)
{
    if (r->n) {
        table_t t;
        table_init(&t, 6, "MODULE", "NAME", "STATUS", "RECEIVER", "KERNEL", "MODULE USES");
        for (size_t i = 0; i < r->n; i++) {
            const calltype_item_t *it = &r->v[i];
            table_row(&t, it->module, it->name, it->status, it->receiver, it->kernel_type, it->module_type);
        }
        table_print(&t, stdout, "");
        table_free(&t);
        for (size_t i = 0; i < r->n; i++)
            if (r->v[i].detail)
                printf("%s: %s: %s (%s): %s\n", r->v[i].module, r->v[i].name, r->v[i].status, r->v[i].problem,
                       r->v[i].detail);
    }
    printf("%zu by-name resolution(s) in %zu module(s): %zu match, %zu differ in qualifiers only, "
           "%zu mismatched, %zu unchecked\n",
           r->n, r->modules, r->match, r->qualifiers, r->mismatch, r->unchecked);
}

/* ------------------------------------------------------------------ command */

static int open_kernel(const char *build, filebuf_t *fb, dwt_t *d)
{
    enum path_kind k = path_kind(build);
    char *path = k == PATH_DIR ? xasprintf("%s/vmlinux", build) : xstrdup(build);
    err_t e;
    int rc = EXIT_OKAY;
    if (file_load(path, fb, &e) != 0) {
        rc = report_error(path, &e);
    } else {
        int o = dwt_open(fb->data, fb->size, d, &e);
        if (o <= 0) {
            if (o == 0)
                err_set(&e, "no DWARF (.debug_info): calltypes needs a kernel built with CONFIG_DEBUG_INFO");
            rc = report_error(path, &e);
            file_free(fb);
        }
    }
    free(path);
    return rc;
}

/* Relocate and open the DWARF of every module, with its section and symbol tables. */
static int open_modules(scanned_set_t *s, calltypes_module_t *mods, dwt_t *dws, elfr_image_t *ims)
{
    for (size_t i = 0; i < s->n; i++) {
        err_t e;
        filebuf_t *fb = &s->ko[i].fb;
        mods[i] = (calltypes_module_t){&s->in[i], &ims[i], &dws[i]};
        if (dwt_relocate(fb->data, fb->size, &e) != 0 || dwt_open(fb->data, fb->size, &dws[i], &e) < 0)
            return report_error(s->paths.v[i], &e);
        Elf *elf = dws[i].elf ? dws[i].elf : elfr_open(fb->data, fb->size, ET_REL, &e);
        int rc = elf ? elfr_image_load(elf, fb->data, fb->size, &ims[i], &e) : -1;
        if (!dws[i].elf && elf)
            dws[i].elf = elf;   /* kept for the image's section names; no DWARF */
        if (rc != 0)
            return report_error(s->paths.v[i], &e);
    }
    return EXIT_OKAY;
}

static int run(scanned_set_t *set, const char *build, bool json)
{
    filebuf_t kfb;
    dwt_t kernel;
    int ret = open_kernel(build, &kfb, &kernel);
    if (ret != EXIT_OKAY)
        return ret;
    calltypes_module_t *mods = xcalloc(set->n ? set->n : 1, sizeof *mods);
    dwt_t *dws = xcalloc(set->n ? set->n : 1, sizeof *dws);
    elfr_image_t *ims = xcalloc(set->n ? set->n : 1, sizeof *ims);
    audit_result_t audit;
    audit_compute(set->in, set->n, &audit);
    ret = open_modules(set, mods, dws, ims);
    if (ret == EXIT_OKAY) {
        calltypes_result_t r;
        calltypes_compute(mods, set->n, &audit, &kernel, &r);
        if (json)
            render_json(&r);
        else
            render_text(&r);
        ret = r.mismatch ? EXIT_FINDINGS : EXIT_OKAY;
        calltypes_result_free(&r);
    }
    for (size_t i = 0; i < set->n; i++) {
        elfr_image_free(&ims[i]);
        dwt_close(&dws[i]);
    }
    audit_result_free(&audit);
    free(mods);
    free(dws);
    free(ims);
    dwt_close(&kernel);
    file_free(&kfb);
    return ret;
}

int cmd_calltypes(int argc, char **argv, bool json)
{
    const char *tree = NULL;
    char **pos = xcalloc((size_t)argc + 1, sizeof *pos);
    int np = 0;
    if (parse_tree_args("calltypes", argc, argv, NULL, &tree, pos, &np)) {
        free(pos);
        return EXIT_TROUBLE;
    }
    if (np < 1 || (!tree && np < 2) || (tree && np != 1)) {
        free(pos);
        return usage_error("calltypes: expected FILE.ko [FILE.ko...] BUILD or --tree DIR BUILD%s", NULL);
    }
    const char *build = pos[np - 1];
    scanned_set_t set;
    int ret = scanned_set_load(tree, pos, np - 1, &set);
    free(pos);
    if (ret != EXIT_OKAY)
        return ret;
    ret = run(&set, build, json);
    scanned_set_free(&set);
    return ret;
}
