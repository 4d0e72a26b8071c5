#include "exports.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void drop_index(exportset_t *s)
{
    free(s->hidx);
    s->hidx = NULL;
    s->hcap = 0;
}

void exportset_add(exportset_t *s, const char *name, const char *module, const char *ns,
                   uint32_t crc, bool has_crc, enum exp_class cls)
{
    drop_index(s);
    s->v = xgrow(s->v, s->n, &s->cap, sizeof *s->v, 256);
    export_t *e = &s->v[s->n++];
    /* one allocation holds name, module and namespace; name owns it */
    if (!module)
        module = "";
    if (!ns)
        ns = "";
    size_t ln = strlen(name) + 1, lm = strlen(module) + 1, ls = strlen(ns) + 1;
    char *blk = xmalloc(ln + lm + ls);
    memcpy(blk, name, ln);
    memcpy(blk + ln, module, lm);
    memcpy(blk + ln + lm, ns, ls);
    e->name = blk;
    e->module = blk + ln;
    e->ns = blk + ln + lm;
    e->crc = crc;
    e->has_crc = has_crc;
    e->cls = cls;
    s->sorted = false;
}

static int cmp_export(const void *a, const void *b)
{
    const export_t *x = a, *y = b;
    return strcmp(x->name, y->name);
}

const char *exportset_sort(exportset_t *s)
{
    drop_index(s);
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_export);
    s->sorted = true;
    for (size_t i = 1; i < s->n; i++)
        if (strcmp(s->v[i - 1].name, s->v[i].name) == 0)
            return s->v[i].name;
    return NULL;
}

uint64_t exportset_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

static const export_t *find_sorted(const exportset_t *s, const char *name);

void exportset_index(exportset_t *s)
{
    drop_index(s);
    if (s->n == 0 || s->n > UINT32_MAX / 2)
        return;   /* empty, or too big for 32-bit slots: binary search */
    size_t cap = 16;
    while (cap < s->n * 2)
        cap *= 2;
    s->hidx = xcalloc(cap, sizeof *s->hidx);
    s->hcap = cap;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = (size_t)exportset_hash(s->v[i].name) & (cap - 1);
        while (s->hidx[k] && strcmp(s->v[s->hidx[k] - 1].name, s->v[i].name) != 0)
            k = (k + 1) & (cap - 1);
        if (!s->hidx[k])
            s->hidx[k] = (uint32_t)i + 1;
        else if (s->sorted)   /* a name twice in a sorted set: the entry binary search finds */
            s->hidx[k] = (uint32_t)(find_sorted(s, s->v[i].name) - s->v) + 1;
    }
}

static const export_t *find_hashed(const exportset_t *s, const char *name)
{
    size_t k = (size_t)exportset_hash(name) & (s->hcap - 1);
    while (s->hidx[k]) {
        const export_t *x = &s->v[s->hidx[k] - 1];
        if (strcmp(x->name, name) == 0)
            return x;
        k = (k + 1) & (s->hcap - 1);
    }
    return NULL;
}

const export_t *exportset_find(const exportset_t *s, const char *name)
{
    return s->hcap ? find_hashed(s, name) : find_sorted(s, name);
}

static const export_t *find_sorted(const exportset_t *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, s->v[mid].name);
        if (c == 0)
            return &s->v[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

void exportset_free(exportset_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);   /* module and ns live in the same block */
    free(s->v);
    free(s->hidx);
    memset(s, 0, sizeof *s);
}

const char *exp_class_str(enum exp_class c)
{
    return c == EXP_GPL ? "EXPORT_SYMBOL_GPL" : "EXPORT_SYMBOL";
}

bool license_is_gpl_compatible(const char *license)
{
    static const char *const ok[] = {
        "GPL", "GPL v2", "GPL and additional rights",
        "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL",
    };
    if (!license)
        return false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(license, ok[i]) == 0)
            return true;
    return false;
}

bool is_module_ns(const char *ns)
{
    return ns && strncmp(ns, MODULE_NS_PREFIX, strlen(MODULE_NS_PREFIX)) == 0;
}

/* The first n bytes of a and b are equal, '-' and '_' being the same; b may end (NUL) early. */
static bool modname_prefix_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
        if (x != y)
            return false;
        if (!y)
            return true;
    }
    return true;
}

bool module_ns_allows(const char *ns, const char *modname)
{
    if (!is_module_ns(ns) || !modname)
        return false;
    size_t modlen = strlen(modname);
    for (const char *p = ns + strlen(MODULE_NS_PREFIX); *p;) {
        const char *sep = strchrnul(p, ',');
        size_t len = (size_t)(sep - p);
        bool glob = len > 0 && sep[-1] == '*';
        if (glob)
            len--;
        if (modname_prefix_eq(p, modname, len) && (glob || len == modlen))
            return true;
        p = *sep ? sep + 1 : sep;
    }
    return false;
}
