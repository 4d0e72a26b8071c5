/* audit: kallsyms-style symbol resolution in a module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char *const audit_refs[] = {"kallsyms_lookup_name", "kallsyms_on_each_symbol", "register_kprobe"};
static const char *const audit_strings[] = {"kallsyms_lookup_name"};

/* ------------------------------------------------------------------ compute */

static audit_finding_t *add_finding(audit_result_t *r, const char *kind, const char *what)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->v = xrealloc(r->v, r->cap * sizeof *r->v);
    }
    audit_finding_t *f = &r->v[r->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->what = what;
    return f;
}

static void scan_section(const ko_datasec_t *d, const char *needle, audit_result_t *r)
{
    size_t nl = strlen(needle), pos = 0;
    while (pos + nl <= d->size) {
        const unsigned char *hit = memmem(d->data + pos, d->size - pos, needle, nl);
        if (!hit)
            break;
        size_t off = (size_t)(hit - d->data);
        audit_finding_t *f = add_finding(r, "string", needle);
        snprintf(f->where, sizeof f->where, "%.200s+0x%zx", d->name, off);
        pos = off + nl;
    }
}

void audit_compute(const komod_t *m, audit_result_t *r)
{
    memset(r, 0, sizeof *r);
    for (size_t k = 0; k < sizeof audit_refs / sizeof *audit_refs; k++) {
        for (size_t i = 0; i < m->n_undef; i++) {
            if (strcmp(m->undef[i].name, audit_refs[k]) == 0) {
                audit_finding_t *f = add_finding(r, "undefined-reference", audit_refs[k]);
                snprintf(f->where, sizeof f->where, ".symtab");
            }
        }
    }
    for (size_t k = 0; k < sizeof audit_strings / sizeof *audit_strings; k++)
        for (size_t s = 0; s < m->n_datasecs; s++)
            scan_section(&m->datasecs[s], audit_strings[k], r);
}

void audit_result_free(audit_result_t *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------- render */

static void render_json(const char *path, const komod_t *m, const audit_result_t *r)
{
    json_t j;
    json_init(&j, stdout);
    json_obj_begin(&j);
    json_key(&j, "file"); json_str(&j, path);
    json_key(&j, "name"); json_str(&j, m->modname);
    json_key(&j, "flagged"); json_bool(&j, r->n > 0);
    json_key(&j, "findings");
    json_arr_begin(&j);
    for (size_t i = 0; i < r->n; i++) {
        json_obj_begin(&j);
        json_key(&j, "kind"); json_str(&j, r->v[i].kind);
        json_key(&j, "what"); json_str(&j, r->v[i].what);
        json_key(&j, "where"); json_str(&j, r->v[i].where);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    json_finish(&j);
}

static void render_text(const char *path, const audit_result_t *r)
{
    printf("Module: %s\n", path);
    if (!r->n) {
        printf("no kallsyms-style symbol resolution found\n");
        return;
    }
    printf("kallsyms-style symbol resolution suspected (%zu finding(s)):\n", r->n);
    table_t t;
    table_init(&t, 3, "KIND", "WHAT", "WHERE");
    for (size_t i = 0; i < r->n; i++)
        table_row(&t, r->v[i].kind, r->v[i].what, r->v[i].where);
    table_print(&t, stdout, "  ");
    table_free(&t);
}

/* ------------------------------------------------------------------ command */

int cmd_audit(int argc, char **argv, bool json)
{
    if (argc != 1 || (argv[0][0] == '-' && argv[0][1]))
        return usage_error("audit: expected FILE.ko%s", NULL);
    const char *path = argv[0];
    filebuf_t fb;
    komod_t m;
    if (load_ko(path, &fb, &m))
        return EXIT_TROUBLE;
    audit_result_t r;
    audit_compute(&m, &r);
    if (json)
        render_json(path, &m, &r);
    else
        render_text(path, &r);
    int ret = r.n ? EXIT_FINDINGS : EXIT_OKAY;
    audit_result_free(&r);
    ko_free(&m);
    file_free(&fb);
    return ret;
}
