#include "dwarfinfo.h"
#include "elfread.h"

#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TYPE_DEPTH_MAX 24

static char *type_string(Dwarf_Die *type, int depth);

/* The type DIE referenced by DW_AT_type of die; returns false for void. */
static bool die_type(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, DW_AT_type, &a))
        return false;
    return dwarf_formref_die(&a, out) != NULL;
}

static char *target_string(Dwarf_Die *die, int depth)
{
    Dwarf_Die t;
    if (!die_type(die, &t))
        return xstrdup("void");
    return type_string(&t, depth + 1);
}

static char *params_string(Dwarf_Die *fn, int depth)
{
    char *acc = xstrdup("");
    Dwarf_Die c;
    bool first = true;
    if (dwarf_child(fn, &c) == 0) {
        do {
            int tag = dwarf_tag(&c);
            char *piece = NULL;
            if (tag == DW_TAG_formal_parameter)
                piece = target_string(&c, depth);
            else if (tag == DW_TAG_unspecified_parameters)
                piece = xstrdup("...");
            if (piece) {
                char *n = xasprintf("%s%s%s", acc, first ? "" : ", ", piece);
                free(acc);
                free(piece);
                acc = n;
                first = false;
            }
        } while (dwarf_siblingof(&c, &c) == 0);
    }
    if (first) {
        bool proto = false;
        Dwarf_Attribute a;
        if (dwarf_attr(fn, DW_AT_prototyped, &a))
            dwarf_formflag(&a, &proto);
        if (proto) {
            free(acc);
            acc = xstrdup("void");
        }
    }
    return acc;
}

static char *type_string(Dwarf_Die *type, int depth)
{
    if (depth > TYPE_DEPTH_MAX)
        return xstrdup("?");
    const char *name = dwarf_diename(type);
    int tag = dwarf_tag(type);
    switch (tag) {
    case DW_TAG_base_type:
    case DW_TAG_typedef:
    case DW_TAG_unspecified_type:
        return xstrdup(name ? name : "?");
    case DW_TAG_structure_type:
        return xasprintf("struct %s", name ? name : "<anon>");
    case DW_TAG_union_type:
        return xasprintf("union %s", name ? name : "<anon>");
    case DW_TAG_enumeration_type:
        return xasprintf("enum %s", name ? name : "<anon>");
    case DW_TAG_class_type:
        return xasprintf("class %s", name ? name : "<anon>");
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type: {
        Dwarf_Die t;
        const char *star = tag == DW_TAG_pointer_type ? "*" : "&";
        if (die_type(type, &t) && dwarf_tag(&t) == DW_TAG_subroutine_type) {
            char *ret = target_string(&t, depth);
            char *args = params_string(&t, depth);
            char *s = xasprintf("%s (%s)(%s)", ret, star, args);
            free(ret);
            free(args);
            return s;
        }
        char *inner = target_string(type, depth);
        size_t l = strlen(inner);
        char *s = xasprintf("%s%s%s", inner, l && inner[l - 1] == '*' ? "" : " ", star);
        free(inner);
        return s;
    }
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type: {
        const char *q = tag == DW_TAG_const_type ? "const" : tag == DW_TAG_volatile_type ? "volatile"
                      : tag == DW_TAG_restrict_type ? "restrict" : "_Atomic";
        Dwarf_Die t;
        char *inner = target_string(type, depth);
        char *s;
        if (die_type(type, &t) && dwarf_tag(&t) == DW_TAG_pointer_type)
            s = xasprintf("%s %s", inner, q);
        else
            s = xasprintf("%s %s", q, inner);
        free(inner);
        return s;
    }
    case DW_TAG_array_type: {
        char *inner = target_string(type, depth);
        char dims[128] = "";
        size_t dl = 0;
        Dwarf_Die c;
        if (dwarf_child(type, &c) == 0) {
            do {
                if (dwarf_tag(&c) != DW_TAG_subrange_type)
                    continue;
                Dwarf_Attribute a;
                Dwarf_Word v;
                int w;
                if (dwarf_attr(&c, DW_AT_count, &a) && dwarf_formudata(&a, &v) == 0)
                    w = snprintf(dims + dl, sizeof dims - dl, "[%llu]", (unsigned long long)v);
                else if (dwarf_attr(&c, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &v) == 0)
                    w = snprintf(dims + dl, sizeof dims - dl, "[%llu]", (unsigned long long)v + 1);
                else
                    w = snprintf(dims + dl, sizeof dims - dl, "[]");
                if (w < 0 || (size_t)w >= sizeof dims - dl)
                    break;
                dl += (size_t)w;
            } while (dwarf_siblingof(&c, &c) == 0);
        }
        char *s = xasprintf("%s%s", inner, dims[0] ? dims : "[]");
        free(inner);
        return s;
    }
    case DW_TAG_subroutine_type: {
        char *ret = target_string(type, depth);
        char *args = params_string(type, depth);
        char *s = xasprintf("%s (%s)", ret, args);
        free(ret);
        free(args);
        return s;
    }
    default:
        return xstrdup(name ? name : "?");
    }
}

static void record(dw_func_t *f, Dwarf_Die *fn)
{
    Dwarf_Die c;
    size_t cap = 0;
    f->found = true;
    if (dwarf_child(fn, &c) != 0)
        return;
    do {
        int tag = dwarf_tag(&c);
        if (tag == DW_TAG_unspecified_parameters) {
            f->variadic = true;
            continue;
        }
        if (tag != DW_TAG_formal_parameter)
            continue;
        f->params = xgrow(f->params, f->n_params, &cap, sizeof *f->params, 8);
        Dwarf_Attribute a;
        const char *pn = NULL;
        if (dwarf_attr_integrate(&c, DW_AT_name, &a))
            pn = dwarf_formstring(&a);
        f->params[f->n_params].name = xstrdup(pn ? pn : "");
        f->params[f->n_params].type = target_string(&c, 0);
        f->n_params++;
    } while (dwarf_siblingof(&c, &c) == 0);
}

enum dw_status dw_find_functions(unsigned char *buf, size_t len, dw_func_t *funcs, size_t n, err_t *e)
{
    Elf *elf = elfr_open(buf, len, 0, e);
    if (!elf)
        return DW_ERROR;
    elfr_sec_t info;
    int r = elfr_find(elf, buf, len, ".debug_info", &info, e);
    if (r < 0) {
        elf_end(elf);
        return DW_ERROR;
    }
    if (r == 0 || !info.data || info.size == 0) {
        elf_end(elf);
        return DW_NO_DWARF;
    }
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!dw) {
        err_set(e, "cannot read DWARF: %s", dwarf_errmsg(-1));
        elf_end(elf);
        return DW_ERROR;
    }
    size_t remaining = n;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (remaining > 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, c;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &c) == 0) {
            do {
                if (dwarf_tag(&c) != DW_TAG_subprogram)
                    continue;
                const char *name = dwarf_diename(&c);
                if (!name)
                    continue;
                for (size_t i = 0; i < n; i++) {
                    if (funcs[i].found || strcmp(funcs[i].want, name) != 0)
                        continue;
                    Dwarf_Attribute a;
                    bool decl = false;
                    if (dwarf_attr(&c, DW_AT_declaration, &a))
                        dwarf_formflag(&a, &decl);
                    if (decl)
                        continue;
                    record(&funcs[i], &c);
                    remaining--;
                }
            } while (remaining > 0 && dwarf_siblingof(&c, &c) == 0);
        }
        off = next;
    }
    dwarf_end(dw);
    elf_end(elf);
    return DW_OK;
}

char *dw_type_string(Dwarf_Die *type)
{
    return type ? type_string(type, 0) : xstrdup("void");
}

bool dw_die_type(Dwarf_Die *die, Dwarf_Die *out)
{
    return die_type(die, out);
}

void dw_func_clear(dw_func_t *f)
{
    for (size_t i = 0; i < f->n_params; i++) {
        free(f->params[i].name);
        free(f->params[i].type);
    }
    free(f->params);
    f->params = NULL;
    f->n_params = 0;
    f->found = false;
    f->variadic = false;
}
