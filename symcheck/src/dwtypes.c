#include "dwtypes.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarfinfo.h"
#include "elfread.h"

#define DEPTH_MAX 24

/* ----------------------------------------------------------------- relocation */

static int reloc_one(unsigned char *tgt, size_t tsize, const Elf64_Rela *r, const elfr_image_t *im,
                     const char *secname, err_t *e)
{
    unsigned type = ELF64_R_TYPE(r->r_info);
    size_t si = ELF64_R_SYM(r->r_info);
    if (type == R_X86_64_NONE)
        return 0;
    size_t w = type == R_X86_64_64 ? 8 : (type == R_X86_64_32 || type == R_X86_64_32S) ? 4 : 0;
    if (!w) {
        err_set(e, "%.100s: unsupported relocation type %u", secname, type);
        return -1;
    }
    if (si >= im->nsym) {
        err_set(e, "%.100s: relocation symbol %zu out of range", secname, si);
        return -1;
    }
    if (r->r_offset > tsize || tsize - r->r_offset < w) {
        err_set(e, "%.100s: relocation offset 0x%llx out of range", secname, (unsigned long long)r->r_offset);
        return -1;
    }
    uint64_t v = im->sym[si].st_value + (uint64_t)r->r_addend;
    for (size_t i = 0; i < w; i++)
        tgt[r->r_offset + i] = (unsigned char)(v >> (8 * i));
    return 0;
}

static int reloc_section(unsigned char *buf, const elfr_image_t *im, const elfr_sec_t *rs, err_t *e)
{
    const elfr_sec_t *ts = &im->sec[rs->shdr.sh_info];
    if (!ts->name || strncmp(ts->name, ".debug_", 7) != 0 || !ts->data || !rs->data)
        return 0;
    if (ts->shdr.sh_flags & SHF_COMPRESSED) {
        err_set(e, "%.100s: compressed DWARF is not supported", ts->name);
        return -1;
    }
    if (rs->shdr.sh_link != im->symidx) {
        err_set(e, "%.100s: relocations not against the symbol table", rs->name ? rs->name : "?");
        return -1;
    }
    unsigned char *tgt = buf + (ts->data - buf);   /* inside the writable image */
    size_t n = rs->size / sizeof(Elf64_Rela);
    for (size_t k = 0; k < n; k++) {
        Elf64_Rela r;
        memcpy(&r, rs->data + k * sizeof r, sizeof r);
        if (reloc_one(tgt, ts->size, &r, im, ts->name, e) != 0)
            return -1;
    }
    return 0;
}

int dwt_relocate(unsigned char *buf, size_t len, err_t *e)
{
    Elf *elf = elfr_open(buf, len, ET_REL, e);
    if (!elf)
        return -1;
    elfr_image_t im;
    int rc = elfr_image_load(elf, buf, len, &im, e);
    for (size_t i = 1; rc == 0 && i < im.shnum; i++)
        if (im.sec[i].shdr.sh_type == SHT_RELA && im.sec[i].shdr.sh_info > 0 && im.sec[i].shdr.sh_info < im.shnum)
            rc = reloc_section(buf, &im, &im.sec[i], e);
    elfr_image_free(&im);
    elf_end(elf);
    return rc;
}

int dwt_open(unsigned char *buf, size_t len, dwt_t *d, err_t *e)
{
    memset(d, 0, sizeof *d);
    Elf *elf = elfr_open(buf, len, 0, e);
    if (!elf)
        return -1;
    elfr_sec_t info;
    int r = elfr_find(elf, buf, len, ".debug_info", &info, e);
    if (r <= 0 || !info.data || info.size == 0) {
        elf_end(elf);
        return r < 0 ? -1 : 0;
    }
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!dw) {
        err_set(e, "cannot read DWARF: %s", dwarf_errmsg(-1));
        elf_end(elf);
        return -1;
    }
    d->elf = elf;
    d->dw = dw;
    return 1;
}

void dwt_close(dwt_t *d)
{
    if (d->dw)
        dwarf_end(d->dw);
    if (d->elf)
        elf_end(d->elf);
    memset(d, 0, sizeof *d);
}

/* ------------------------------------------------------------- canonical types */

static char *canon(Dwarf_Die *t, bool quals, int depth);

static char *canon_target(Dwarf_Die *die, bool quals, int depth)
{
    Dwarf_Die t;
    if (!dw_die_type(die, &t))
        return xstrdup("void");
    return canon(&t, quals, depth + 1);
}

static bool is_qualifier(int tag)
{
    return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type;
}

/* Strip typedefs and qualifiers from t in place; false when that reaches void. */
static bool strip(Dwarf_Die *t)
{
    for (int i = 0; i < DEPTH_MAX; i++) {
        int tag = dwarf_tag(t);
        if (tag != DW_TAG_typedef && !is_qualifier(tag))
            return true;
        Dwarf_Die next;
        if (!dw_die_type(t, &next))
            return false;
        *t = next;
    }
    return true;
}

static bool member_at(Dwarf_Die *holder, uint64_t delta, Dwarf_Die *out, char *path, size_t n, int depth);

static bool struct_member_at(Dwarf_Die *t, uint64_t delta, Dwarf_Die *out, char *path, size_t n, int depth)
{
    Dwarf_Die c;
    if (dwarf_child(t, &c) != 0)
        return false;
    do {
        Dwarf_Attribute a;
        Dwarf_Word off = 0, size = 0;
        Dwarf_Die mt;
        if (dwarf_tag(&c) != DW_TAG_member || !dw_die_type(&c, &mt) || dwarf_aggregate_size(&mt, &size) != 0)
            continue;
        if (dwarf_attr(&c, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &off) != 0)
            continue;   /* a location expression: not something a compiler emits for C */
        if (delta < off || delta >= off + size)
            continue;
        const char *name = dwarf_diename(&c);
        size_t l = strlen(path);
        snprintf(path + l, n - l, ".%s", name ? name : "<anon>");
        return member_at(&c, delta - off, out, path, n, depth + 1);
    } while (dwarf_siblingof(&c, &c) == 0);
    return false;
}

static bool member_at(Dwarf_Die *holder, uint64_t delta, Dwarf_Die *out, char *path, size_t n, int depth)
{
    Dwarf_Die t, et;
    if (depth > DEPTH_MAX || !dw_die_type(holder, &t) || !strip(&t))
        return false;
    int tag = dwarf_tag(&t);
    if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
        return struct_member_at(&t, delta, out, path, n, depth);
    if (tag == DW_TAG_array_type) {
        Dwarf_Word sz;
        if (!dw_die_type(&t, &et) || dwarf_aggregate_size(&et, &sz) != 0 || sz == 0)
            return false;
        size_t l = strlen(path);
        snprintf(path + l, n - l, "[%llu]", (unsigned long long)(delta / sz));
        return member_at(&t, delta % sz, out, path, n, depth + 1);
    }
    if (delta != 0)
        return false;
    *out = *holder;
    return true;
}

bool dwt_member_at(Dwarf_Die *var, uint64_t delta, Dwarf_Die *out, char *path, size_t pathlen)
{
    if (pathlen)
        path[0] = 0;
    return pathlen && member_at(var, delta, out, path, pathlen, 0);
}

/* The type of die with typedefs and qualifiers at its top removed (a parameter's own const does
 * not change the function's type). false for void. */
static bool top_type(Dwarf_Die *die, Dwarf_Die *out)
{
    return dw_die_type(die, out) && strip(out);
}

static char *canon_top(Dwarf_Die *die, bool quals, int depth)
{
    Dwarf_Die t;
    if (!top_type(die, &t))
        return xstrdup("void");
    return canon(&t, quals, depth + 1);
}

static char *append(char *acc, const char *sep, char *piece)
{
    char *n = xasprintf("%s%s%s", acc, sep, piece);
    free(acc);
    free(piece);
    return n;
}

static bool flag(Dwarf_Die *die, int name)
{
    Dwarf_Attribute a;
    bool v = false;
    if (dwarf_attr_integrate(die, name, &a))
        dwarf_formflag(&a, &v);
    return v;
}

/* "fn(RET;P1,P2,...)" for a subprogram or subroutine type. */
static char *canon_fn(Dwarf_Die *fn, bool quals, int depth)
{
    char *acc = append(xstrdup("fn("), "", canon_top(fn, quals, depth));
    acc = append(acc, ";", xstrdup(""));
    Dwarf_Die c;
    bool first = true;
    if (dwarf_child(fn, &c) == 0) {
        do {
            int tag = dwarf_tag(&c);
            if (tag == DW_TAG_formal_parameter)
                acc = append(acc, first ? "" : ",", canon_top(&c, quals, depth));
            else if (tag == DW_TAG_unspecified_parameters)
                acc = append(acc, first ? "" : ",", xstrdup("..."));
            else
                continue;
            first = false;
        } while (dwarf_siblingof(&c, &c) == 0);
    }
    return append(acc, "", xstrdup(flag(fn, DW_AT_prototyped) || !first ? ")" : "?)"));
}

static char *canon_base(Dwarf_Die *t)
{
    Dwarf_Attribute a;
    Dwarf_Word enc = 0;
    if (dwarf_attr(t, DW_AT_encoding, &a))
        dwarf_formudata(&a, &enc);
    int size = dwarf_bytesize(t);
    const char *cls = enc == DW_ATE_signed || enc == DW_ATE_signed_char ? "s"
                    : enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char ? "u"
                    : enc == DW_ATE_boolean ? "b" : enc == DW_ATE_float ? "f" : "x";
    return xasprintf("%s%d", cls, size > 0 ? size * 8 : 0);
}

static char *canon_array(Dwarf_Die *t, bool quals, int depth)
{
    char *acc = canon_target(t, quals, depth);
    Dwarf_Die c;
    if (dwarf_child(t, &c) != 0)
        return append(acc, "", xstrdup("[]"));
    do {
        if (dwarf_tag(&c) != DW_TAG_subrange_type)
            continue;
        Dwarf_Attribute a;
        Dwarf_Word v;
        if (dwarf_attr(&c, DW_AT_count, &a) && dwarf_formudata(&a, &v) == 0)
            acc = append(acc, "", xasprintf("[%llu]", (unsigned long long)v));
        else if (dwarf_attr(&c, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &v) == 0)
            acc = append(acc, "", xasprintf("[%llu]", (unsigned long long)v + 1));
        else
            acc = append(acc, "", xstrdup("[]"));
    } while (dwarf_siblingof(&c, &c) == 0);
    return acc;
}

static char *canon_tagged(Dwarf_Die *t, const char *kw)
{
    const char *name = dwarf_diename(t);
    if (name)
        return xasprintf("%s %s", kw, name);
    return xasprintf("%s <anon:%d>", kw, dwarf_bytesize(t));
}

static char *canon(Dwarf_Die *t, bool quals, int depth)
{
    if (depth > DEPTH_MAX)
        return xstrdup("?");
    int tag = dwarf_tag(t);
    switch (tag) {
    case DW_TAG_typedef:
        return canon_target(t, quals, depth);
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type: {
        char *inner = canon_target(t, quals, depth);
        if (!quals)
            return inner;
        const char *q = tag == DW_TAG_const_type ? "const" : tag == DW_TAG_volatile_type ? "volatile" : "restrict";
        char *s = xasprintf("%s(%s)", q, inner);
        free(inner);
        return s;
    }
    case DW_TAG_atomic_type:
        return append(xstrdup("_Atomic("), "", append(canon_target(t, quals, depth), "", xstrdup(")")));
    case DW_TAG_base_type:
        return canon_base(t);
    case DW_TAG_structure_type:
        return canon_tagged(t, "struct");
    case DW_TAG_union_type:
        return canon_tagged(t, "union");
    case DW_TAG_enumeration_type:
        return canon_tagged(t, "enum");
    case DW_TAG_class_type:
        return canon_tagged(t, "class");
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
        return append(canon_target(t, quals, depth), "", xstrdup("*"));
    case DW_TAG_array_type:
        return canon_array(t, quals, depth);
    case DW_TAG_subroutine_type:
        return canon_fn(t, quals, depth);
    default: {
        const char *name = dwarf_diename(t);
        return xasprintf("?%d:%s", tag, name ? name : "");
    }
    }
}

static void type_of(Dwarf_Die *t, dwt_type_t *out)
{
    out->written = dw_type_string(t);
    out->exact = t ? canon(t, true, 0) : xstrdup("void");
    out->loose = t ? canon(t, false, 0) : xstrdup("void");
}

/* The same for the type of die with top-level qualifiers and typedefs removed (parameters,
 * return types); written keeps what the source says. */
static void top_type_of(Dwarf_Die *die, dwt_type_t *out)
{
    Dwarf_Die t, top;
    out->written = dw_type_string(dw_die_type(die, &t) ? &t : NULL);
    bool has = top_type(die, &top);
    out->exact = has ? canon(&top, true, 0) : xstrdup("void");
    out->loose = has ? canon(&top, false, 0) : xstrdup("void");
}

void dwt_type_free(dwt_type_t *t)
{
    free(t->written);
    free(t->exact);
    free(t->loose);
    memset(t, 0, sizeof *t);
}

void dwt_entity_free(dwt_entity_t *e)
{
    dwt_type_free(&e->type);
    for (size_t i = 0; i < e->n_params; i++)
        dwt_type_free(&e->params[i]);
    free(e->params);
    free(e->decl);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------------- entities */

static void fill_function(Dwarf_Die *fn, dwt_entity_t *e)
{
    size_t cap = 0;
    e->is_function = true;
    e->prototyped = flag(fn, DW_AT_prototyped);
    top_type_of(fn, &e->type);
    char *decl = xasprintf("%s (", e->type.written);
    Dwarf_Die c;
    if (dwarf_child(fn, &c) == 0) {
        do {
            int tag = dwarf_tag(&c);
            if (tag == DW_TAG_unspecified_parameters)
                e->variadic = true;
            if (tag != DW_TAG_formal_parameter)
                continue;
            e->params = xgrow(e->params, e->n_params, &cap, sizeof *e->params, 8);
            top_type_of(&c, &e->params[e->n_params]);
            decl = append(decl, e->n_params ? ", " : "", xstrdup(e->params[e->n_params].written));
            e->n_params++;
        } while (dwarf_siblingof(&c, &c) == 0);
    }
    if (e->variadic)
        decl = append(decl, e->n_params ? ", " : "", xstrdup("..."));
    else if (!e->n_params && e->prototyped)
        decl = append(decl, "", xstrdup("void"));
    e->decl = append(decl, "", xstrdup(")"));
}

static void fill_object(Dwarf_Die *type, dwt_entity_t *e)
{
    e->is_function = false;
    type_of(type, &e->type);
    e->decl = xstrdup(e->type.written);
}

static int entity_rank(Dwarf_Die *die)
{
    if (flag(die, DW_AT_declaration))
        return 1;
    return flag(die, DW_AT_external) ? 3 : 2;
}

static void fill_entity(Dwarf_Die *die, dwt_entity_t *e)
{
    memset(e, 0, sizeof *e);
    if (dwarf_tag(die) == DW_TAG_subprogram) {
        fill_function(die, e);
    } else {
        Dwarf_Die t;
        fill_object(dw_die_type(die, &t) ? &t : NULL, e);
    }
}

static char *entity_sig(const dwt_entity_t *e)
{
    char *s = xasprintf("%c%s(", e->is_function ? 'F' : 'O', e->type.exact);
    for (size_t i = 0; i < e->n_params; i++)
        s = append(s, ",", xstrdup(e->params[i].exact));
    return append(s, "", xstrdup(e->variadic ? "...)" : ")"));
}

typedef struct {
    int rank;
    strvec_t defs;   /* the signatures of every definition seen */
} want_t;

static void consider(Dwarf_Die *c, dwt_entity_t *out, want_t *w)
{
    int rank = entity_rank(c);
    dwt_entity_t cand;
    fill_entity(c, &cand);
    if (rank >= 2) {
        char *sig = entity_sig(&cand);
        if (!strvec_contains(&w->defs, sig))
            strvec_push(&w->defs, sig);
        free(sig);
    }
    if (rank > w->rank) {
        dwt_entity_free(out);
        *out = cand;
        w->rank = rank;
    } else {
        dwt_entity_free(&cand);
    }
}

void dwt_find_entities(dwt_t *d, const char *const *names, size_t n, dwt_entity_t *out, size_t *differing)
{
    want_t *w = xcalloc(n ? n : 1, sizeof *w);
    memset(out, 0, n * sizeof *out);
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, c;
        if (dwarf_offdie(d->dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
            do {
                int tag = dwarf_tag(&c);
                if ((tag != DW_TAG_subprogram && tag != DW_TAG_variable) || !dwarf_hasattr(&c, DW_AT_name))
                    continue;   /* concrete instances name themselves through their origin */
                const char *name = dwarf_diename(&c);
                for (size_t i = 0; name && i < n; i++)
                    if (strcmp(names[i], name) == 0)
                        consider(&c, &out[i], &w[i]);
            } while (dwarf_siblingof(&c, &c) == 0);
        }
        off = next;
    }
    for (size_t i = 0; i < n; i++) {
        differing[i] = 0;
        if (out[i].decl) {
            char *sig = entity_sig(&out[i]);
            for (size_t k = 0; k < w[i].defs.n; k++)
                differing[i] += strcmp(w[i].defs.v[k], sig) != 0;
            free(sig);
        }
        strvec_free(&w[i].defs);
    }
    free(w);
}

/* ------------------------------------------------------------ module variables */

static bool var_addr(Dwarf_Die *v, uint64_t *addr)
{
    Dwarf_Attribute a;
    Dwarf_Op *ops;
    size_t nops;
    if (!dwarf_attr(v, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &nops) != 0 || nops < 1 ||
        ops[0].atom != DW_OP_addr)
        return false;
    *addr = ops[0].number;
    return true;
}

typedef struct {
    const char *name;
    uint64_t addr;
    Dwarf_Die at, any;
    size_t n_at, n_any;
} var_search_t;

static void search_vars(Dwarf_Die *parent, var_search_t *s, int depth)
{
    Dwarf_Die c;
    if (depth > DEPTH_MAX || dwarf_child(parent, &c) != 0)
        return;
    do {
        int tag = dwarf_tag(&c);
        if (tag == DW_TAG_variable && dwarf_hasattr(&c, DW_AT_name) && strcmp(dwarf_diename(&c), s->name) == 0 &&
            !flag(&c, DW_AT_declaration)) {
            uint64_t a;
            if (var_addr(&c, &a) && a == s->addr) {
                if (!s->n_at++)
                    s->at = c;
            }
            if (!s->n_any++)
                s->any = c;
        } else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
            search_vars(&c, s, depth + 1);
        }
    } while (dwarf_siblingof(&c, &c) == 0);
}

int dwt_find_variable(dwt_t *d, const char *name, uint64_t addr, Dwarf_Die *out)
{
    var_search_t s = {.name = name, .addr = addr};
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(d->dw, off + hsize, &cu))
            search_vars(&cu, &s, 0);
        off = next;
    }
    if (s.n_at == 1 || (s.n_at == 0 && s.n_any == 1)) {
        *out = s.n_at ? s.at : s.any;
        return 1;
    }
    return s.n_at > 1 || s.n_any > 1 ? 2 : 0;
}

int dwt_receiver(Dwarf_Die *var, dwt_entity_t *e)
{
    memset(e, 0, sizeof *e);
    Dwarf_Die t, p, ps;
    if (!dw_die_type(var, &t)) {
        e->decl = xstrdup("void");
        return 0;
    }
    Dwarf_Die ts = t;
    if (!strip(&ts) || dwarf_tag(&ts) != DW_TAG_pointer_type || !dw_die_type(&ts, &p)) {
        e->decl = dw_type_string(&t);
        return 0;
    }
    ps = p;
    if (!strip(&ps)) {   /* const void * and the like */
        e->decl = dw_type_string(&t);
        return 0;
    }
    if (dwarf_tag(&ps) == DW_TAG_subroutine_type) {
        fill_function(&ps, e);
        return 1;
    }
    fill_object(&p, e);
    return 2;
}
