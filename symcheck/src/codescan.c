/* Code scan of a module from its relocations. What is recognised (x86-64, gcc/clang -mcmodel=kernel):
 *   call/jmp rel32 with R_X86_64_PLT32/PC32 (e8/e9 before the field)     -> CS_CALL
 *   call/jmp rel32 / jmp rel8 without relocation to a function start of the same section -> CS_CALL
 *   call/jmp *%reg (ff d0-d7 / ff e0-e7), call/jmp *cell(%rip) (ff 15/25)  -> CS_INDIRECT
 *   mov $imm32,%reg (c7 c0+r / b8+r), movabs, lea x(%rip),%reg               -> literal / object in reg
 *   movq $imm32,disp(%reg) / x(%rip) (c7 with a memory ModRM)                -> literal stored to memory
 *   mov x(%rip),%reg (8b) / mov %reg,x(%rip) (89)                            -> CS_LOAD / CS_STORE
 * Registers are followed only through these relocated instructions: a literal loaded into rdi
 * reaches the next call (compilers materialise an argument right before the call); every call
 * clobbers the argument registers. */
#include "codescan.h"

#include <stdlib.h>
#include <string.h>

#include "elfread.h"

#define REG_RDX 2
#define REG_RSI 6
#define REG_RDI 7
static const int arg_regs[CS_NARGS] = {REG_RDI, REG_RSI, REG_RDX};

typedef elfr_image_t img_t;

typedef struct {
    size_t sec;
    uint64_t off;
    cs_event_t ev;
    int reg;        /* LITERAL/ADDR/object into register reg, -1 memory / none */
    long obj;       /* object index put into reg, -1 */
    bool clobber;   /* LOAD: reg gets something unknown */
    bool imm_store; /* STORE of an immediate (movq $imm32,x(%rip)): not an event of its own */
} raw_ev_t;

typedef struct {
    raw_ev_t *v;
    size_t n, cap;
} raw_list_t;

typedef struct {
    size_t sec;
    uint64_t off;
    const char *lit;
} data_lit_t;

bool cs_is_identifier(const char *s)
{
    if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    size_t n = 0;
    for (; *s; s++, n++) {
        char c = *s;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '$'))
            return false;
    }
    return n <= 128;
}

static bool sec_ok(const img_t *im, size_t i)
{
    return i > 0 && i < im->shnum && im->sec[i].data;
}

static bool is_exec(const img_t *im, size_t i)
{
    return sec_ok(im, i) && im->sec[i].shdr.sh_type == SHT_PROGBITS && (im->sec[i].shdr.sh_flags & SHF_EXECINSTR) && (im->sec[i].shdr.sh_flags & SHF_ALLOC);
}

/* An identifier-like NUL-terminated string at (sec, off) of a string or read-only data section. */
static const char *literal_at(const img_t *im, size_t sec, int64_t off)
{
    if (!sec_ok(im, sec) || off < 0 || (uint64_t)off >= im->sec[sec].size)
        return NULL;
    const elfr_sec_t *s = &im->sec[sec];
    if ((s->shdr.sh_flags & SHF_EXECINSTR) || !(s->shdr.sh_flags & SHF_ALLOC))
        return NULL;
    if (!(s->shdr.sh_flags & SHF_STRINGS) && strncmp(s->name, ".rodata", 7) != 0)
        return NULL;
    const unsigned char *p = s->data + off;
    size_t l = bounded_strlen(p, s->size - (size_t)off);
    if (l == s->size - (size_t)off)
        return NULL;
    return cs_is_identifier((const char *)p) ? (const char *)p : NULL;
}

/* ------------------------------------------------------------------ functions */

static int cmp_fn(const void *a, const void *b)
{
    const cs_func_t *x = a, *y = b;
    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* globals first, so that the dedup below keeps the global name */
    return (int)y->global - (int)x->global;
}

static void collect_functions(const img_t *im, cs_module_t *m)
{
    size_t cap = 0;
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        const char *name = elfr_sym_name(im, s);
        if (!name)
            continue;
        if (s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE && strncmp(name, "__ksymtab_", 10) == 0 &&
            name[10] && !strvec_contains(&m->exports, name + 10))
            strvec_push(&m->exports, name + 10);
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx >= SHN_LORESERVE || !is_exec(im, s->st_shndx))
            continue;
        if (s->st_value >= im->sec[s->st_shndx].size)
            continue;
        m->fn = xgrow(m->fn, m->n_fn, &cap, sizeof *m->fn, 64);
        cs_func_t *f = &m->fn[m->n_fn++];
        memset(f, 0, sizeof *f);
        f->name = name;
        f->global = ELF64_ST_BIND(s->st_info) != STB_LOCAL;
        f->sec = s->st_shndx;
        f->addr = s->st_value;
        f->size = s->st_size;
    }
    if (m->n_fn > 1)
        qsort(m->fn, m->n_fn, sizeof *m->fn, cmp_fn);
    size_t w = 0;
    for (size_t i = 0; i < m->n_fn; i++) {
        if (w && m->fn[w - 1].sec == m->fn[i].sec && m->fn[w - 1].addr == m->fn[i].addr) {
            if (m->fn[i].size > m->fn[w - 1].size)
                m->fn[w - 1].size = m->fn[i].size;
            continue;
        }
        m->fn[w++] = m->fn[i];
    }
    m->n_fn = w;
    /* size 0 or overlapping: up to the next function or the section end */
    for (size_t i = 0; i < m->n_fn; i++) {
        cs_func_t *f = &m->fn[i];
        uint64_t end = im->sec[f->sec].size;
        if (i + 1 < m->n_fn && m->fn[i + 1].sec == f->sec)
            end = m->fn[i + 1].addr;
        if (f->size == 0 || f->size > end - f->addr)
            f->size = end - f->addr;
        f->code = im->sec[f->sec].data ? im->sec[f->sec].data + f->addr : NULL;
    }
}

static long fn_at(const cs_module_t *m, size_t sec, uint64_t addr, bool start_only)
{
    size_t lo = 0, hi = m->n_fn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cs_func_t *f = &m->fn[mid];
        if (f->sec < sec || (f->sec == sec && f->addr + f->size <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n_fn && m->fn[lo].sec == sec && m->fn[lo].addr <= addr && addr < m->fn[lo].addr + m->fn[lo].size &&
        (!start_only || m->fn[lo].addr == addr))
        return (long)lo;
    return -1;
}

long cs_find_fn(const cs_module_t *m, const char *name)
{
    for (size_t i = 0; i < m->n_fn; i++)
        if (strcmp(m->fn[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* ------------------------------------------------------------------- objects */

static long add_obj(const img_t *im, cs_module_t *m, size_t sec, uint64_t off)
{
    for (size_t i = 0; i < m->n_objs; i++)
        if (m->objs[i].sec == sec && m->objs[i].off == off)
            return (long)i;
    uint64_t size = 256;
    for (size_t i = 1; i < im->nsym; i++) {
        const Elf64_Sym *s = &im->sym[i];
        if (ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_shndx == sec && s->st_value == off && s->st_size) {
            size = s->st_size;
            break;
        }
    }
    m->objs = xrealloc(m->objs, (m->n_objs + 1) * sizeof *m->objs);
    m->objs[m->n_objs] = (cs_obj_t){sec, off, size, NULL, 0};
    return (long)m->n_objs++;
}

/* ----------------------------------------------------------------- relocations */

static size_t cur_sec;   /* section of the events pushed (set by the driver) */

static raw_ev_t *push_raw(raw_list_t *l, uint64_t off)
{
    l->v = xgrow(l->v, l->n, &l->cap, sizeof *l->v, 64);
    raw_ev_t *r = &l->v[l->n++];
    memset(r, 0, sizeof *r);
    r->sec = cur_sec;
    r->off = off;
    r->reg = -1;
    r->obj = -1;
    r->ev.local = -1;
    r->ev.arg0_obj = -1;
    return r;
}

/* Where the immediate of an absolute relocation at o goes: a register (>= 0), memory (-1), or
 * -2 unknown. */
static int abs_dest(const unsigned char *d, uint64_t o)
{
    if (o >= 3 && d[o - 2] == 0xc7 && (d[o - 1] & 0xc0) == 0xc0)      /* [REX.W] c7 /0 mov $imm,%reg */
        return (d[o - 1] & 7) | (((d[o - 3] & 0xf1) == 0x41) ? 8 : 0);
    if ((o >= 4 && d[o - 4] == 0xc7 && (d[o - 3] & 0xc7) == 0x44) ||   /* c7 44 sib disp8 */
        (o >= 3 && d[o - 3] == 0xc7 && (d[o - 2] & 0xc0) == 0x40) ||   /* c7 /0 disp8(%reg) */
        (o >= 7 && d[o - 7] == 0xc7 && (d[o - 6] & 0xc7) == 0x84) ||   /* c7 84 sib disp32 */
        (o >= 6 && d[o - 6] == 0xc7 && (d[o - 5] & 0xc0) == 0x80) ||   /* c7 /0 disp32(%reg) */
        (o >= 2 && d[o - 2] == 0xc7 && (d[o - 1] & 0xc7) == 0x04) ||   /* c7 04 sib (no disp) */
        (o >= 6 && d[o - 6] == 0xc7 && d[o - 5] == 0x05))              /* c7 05 rel32: x(%rip) */
        return -1;
    if (o >= 1 && d[o - 1] >= 0xb8 && d[o - 1] <= 0xbf)               /* [REX] b8+r mov $imm,%reg */
        return (d[o - 1] - 0xb8) | ((o >= 2 && (d[o - 2] & 0xf1) == 0x41) ? 8 : 0);
    return -2;
}

typedef struct {
    bool def;          /* defined in this image */
    size_t sec;
    int64_t off;       /* value + addend (+ adjustment), when def */
    const char *name;  /* undefined or named defined symbol, else NULL */
    bool is_func;
} target_t;

static bool rel_target(const img_t *im, const Elf64_Rela *r, int64_t adj, target_t *t)
{
    size_t si = ELF64_R_SYM(r->r_info);
    if (si == 0 || si >= im->nsym)
        return false;
    const Elf64_Sym *s = &im->sym[si];
    memset(t, 0, sizeof *t);
    unsigned type = ELF64_ST_TYPE(s->st_info);
    if (type != STT_SECTION)
        t->name = elfr_sym_name(im, s);
    if (s->st_shndx == SHN_UNDEF) {
        if (!t->name)
            return false;
        t->is_func = true;   /* unknown: treated as code when called */
        return true;
    }
    if (s->st_shndx >= SHN_LORESERVE || s->st_shndx >= im->shnum)   /* .bss has no data: still a cell */
        return false;
    t->def = true;
    t->sec = s->st_shndx;
    t->off = (int64_t)((uint64_t)s->st_value + (uint64_t)r->r_addend + (uint64_t)adj);   /* no signed overflow */
    t->is_func = is_exec(im, t->sec);
    return true;
}

/* What the value of target t materialised into reg (or memory when reg < 0) is: a literal, a
 * function address, or (into a register) a data object. Returns false when it is none of these. */
static bool value_event(const img_t *im, cs_module_t *m, const target_t *t, int reg, raw_ev_t *e)
{
    const char *lit = t->def ? literal_at(im, t->sec, t->off) : NULL;
    if (lit) {
        e->ev.kind = CS_LITERAL;
        e->ev.literal = lit;
    } else if (t->is_func) {
        e->ev.kind = CS_ADDR;
        e->ev.target = t->name;
        e->ev.local = t->def && t->off >= 0 ? fn_at(m, t->sec, (uint64_t)t->off, true) : -1;
        if (e->ev.local >= 0)
            e->ev.target = m->fn[e->ev.local].name;
    } else if (reg >= 0 && t->def && t->off >= 0) {
        e->ev.kind = CS_LOAD;   /* placeholder event: only the register matters */
        e->ev.cell_sec = 0;
        e->obj = add_obj(im, m, t->sec, (uint64_t)t->off);
    } else {
        return false;
    }
    return true;
}

/* A direct call/jmp rel32 at o-1: the local function or the undefined symbol it reaches. */
static void reloc_call(const img_t *im, cs_module_t *m, const Elf64_Rela *r, uint64_t o, raw_list_t *out)
{
    target_t t;
    if (!rel_target(im, r, 4, &t))
        return;
    long local = -1;
    if (t.def) {
        local = t.off >= 0 ? fn_at(m, t.sec, (uint64_t)t.off, true) : -1;
        if (local < 0)
            return;
    }
    raw_ev_t *e = push_raw(out, o - 1);
    e->ev.kind = CS_CALL;
    e->ev.local = local;
    e->ev.target = local >= 0 ? m->fn[local].name : t.name;
}

/* A rip-relative operand at o: call/jmp *x(%rip), movq $imm32,x(%rip), mov load/store, lea. */
static void reloc_riprel(const img_t *im, cs_module_t *m, const unsigned char *d, const Elf64_Rela *r, uint64_t o,
                         raw_list_t *out)
{
    target_t t;
    if (d[o - 2] == 0xff && (d[o - 1] == 0x15 || d[o - 1] == 0x25)) {
        if (!rel_target(im, r, 4, &t))
            return;
        raw_ev_t *e = push_raw(out, o - 2);
        e->ev.kind = CS_LOAD;
        e->ev.cell_sec = t.def ? t.sec : 0;
        e->ev.cell_off = t.def && t.off >= 0 ? (uint64_t)t.off : 0;
        push_raw(out, o - 1)->ev.kind = CS_INDIRECT;
        return;
    }
    if ((d[o - 1] & 0xc7) != 0x05)
        return;
    unsigned char op = d[o - 2];
    unsigned char rex = (o >= 3 && (d[o - 3] & 0xf0) == 0x40) ? d[o - 3] : 0;
    int reg = ((d[o - 1] >> 3) & 7) | ((rex & 4) ? 8 : 0);
    if (op == 0xc7 && rel_target(im, r, 8, &t) && t.def && t.off >= 0) {
        /* movq $imm32,x(%rip): remember the cell for the immediate's own relocation */
        raw_ev_t *e = push_raw(out, o - 2);
        e->ev.kind = CS_STORE;
        e->imm_store = true;
        e->ev.cell_sec = t.sec;
        e->ev.cell_off = (uint64_t)t.off;
        return;
    }
    if ((op != 0x8b && op != 0x89 && op != 0x8d) || !rel_target(im, r, 4, &t))
        return;
    raw_ev_t *e = push_raw(out, o - 2);
    e->reg = reg;
    if (op == 0x8b || op == 0x89) {
        e->ev.kind = op == 0x8b ? CS_LOAD : CS_STORE;
        e->clobber = op == 0x8b;
        e->ev.cell_sec = t.def ? t.sec : 0;
        e->ev.cell_off = t.def && t.off >= 0 ? (uint64_t)t.off : 0;
    } else if (!value_event(im, m, &t, reg, e)) {   /* lea of something else: reg unknown */
        e->ev.kind = CS_LOAD;
        e->clobber = true;
    }
}

static void text_reloc(const img_t *im, cs_module_t *m, size_t tsec, const Elf64_Rela *r, raw_list_t *out)
{
    const unsigned char *d = im->sec[tsec].data;
    uint64_t o = r->r_offset, n = im->sec[tsec].size;
    unsigned type = ELF64_R_TYPE(r->r_info);
    if (o > n || n - o < 4)
        return;
    if (type == R_X86_64_PLT32 || type == R_X86_64_PC32) {
        if (o >= 1 && (d[o - 1] == 0xe8 || d[o - 1] == 0xe9) && !(o >= 2 && d[o - 2] == 0x0f))
            reloc_call(im, m, r, o, out);
        else if (o >= 2)
            reloc_riprel(im, m, d, r, o, out);
        return;
    }
    target_t t;
    if ((type != R_X86_64_32S && type != R_X86_64_32 && type != R_X86_64_64) || !rel_target(im, r, 0, &t))
        return;
    int dest = abs_dest(d, o);
    if (dest == -2)
        return;
    raw_ev_t *e = push_raw(out, o);
    e->reg = dest;
    if (!value_event(im, m, &t, dest, e))
        out->n--;
}

/* Calls without relocation (same-section static functions) and indirect calls through a register. */
static void byte_scan(const img_t *im, const cs_module_t *m, size_t fi, raw_list_t *out)
{
    const cs_func_t *f = &m->fn[fi];
    const unsigned char *d = im->sec[f->sec].data;
    uint64_t end = f->addr + f->size;
    for (uint64_t i = f->addr; i + 2 <= end; i++) {
        if ((d[i] == 0xe8 || d[i] == 0xe9) && i + 5 <= end) {
            int32_t rel = (int32_t)rd32(d + i + 1);
            int64_t tgt = (int64_t)i + 5 + rel;
            if (rel == 0 || tgt < 0)
                continue;
            long li = fn_at(m, f->sec, (uint64_t)tgt, true);
            if (li < 0 || (d[i] == 0xe9 && (size_t)li == fi))
                continue;
            raw_ev_t *e = push_raw(out, i);
            e->ev.kind = CS_CALL;
            e->ev.local = li;
            e->ev.target = m->fn[li].name;
        } else if (d[i] == 0xeb) {   /* jmp rel8: a tail jump to a neighbouring function */
            int64_t tgt = (int64_t)i + 2 + (int8_t)d[i + 1];
            long li = tgt >= 0 ? fn_at(m, f->sec, (uint64_t)tgt, true) : -1;
            if (li < 0 || (size_t)li == fi)
                continue;
            raw_ev_t *e = push_raw(out, i);
            e->ev.kind = CS_CALL;
            e->ev.local = li;
            e->ev.target = m->fn[li].name;
        } else if (d[i] == 0xff && ((d[i + 1] >= 0xd0 && d[i + 1] <= 0xd7) || (d[i + 1] >= 0xe0 && d[i + 1] <= 0xe7))) {
            raw_ev_t *e = push_raw(out, i);
            e->ev.kind = CS_INDIRECT;
        }
    }
}

static int cmp_raw(const void *a, const void *b)
{
    const raw_ev_t *x = a, *y = b;
    if (x->sec != y->sec)
        return x->sec < y->sec ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static void push_event(cs_func_t *f, const cs_event_t *ev)
{
    f->ev = xgrow(f->ev, f->n_ev, &f->cap, sizeof *f->ev, 16);
    f->ev[f->n_ev++] = *ev;
}

typedef struct {
    long lit_ev;    /* index of the LITERAL event in the function, or -1 */
    long obj;
} regstate_t;

/* Replay the raw events of one function in address order, following the argument registers. */
static void simulate(cs_func_t *f, raw_ev_t *v, size_t n)
{
    regstate_t regs[16];
    for (int i = 0; i < 16; i++)
        regs[i] = (regstate_t){-1, -1};
    for (size_t k = 0; k < n; k++) {
        raw_ev_t *r = &v[k];
        cs_event_t ev = r->ev;
        ev.off = r->off;
        if (ev.kind == CS_CALL || ev.kind == CS_INDIRECT) {
            for (int a = 0; a < CS_NARGS; a++) {
                regstate_t *s = &regs[arg_regs[a]];
                if (s->lit_ev >= 0) {
                    ev.arg[a] = f->ev[s->lit_ev].literal;
                    f->ev[s->lit_ev].consumed = true;
                }
            }
            ev.arg0_obj = regs[REG_RDI].obj;
            for (int i = 0; i < 16; i++)
                regs[i] = (regstate_t){-1, -1};
            push_event(f, &ev);
            continue;
        }
        if (ev.kind == CS_STORE && r->imm_store)
            continue;
        if (ev.kind == CS_LITERAL && r->reg < 0) {
            ev.lit_dest = CS_DEST_MEMORY;
            /* c7 05 rel32 imm32: the rel32 relocation (4 bytes before) names the cell */
            if (k > 0 && v[k - 1].imm_store && v[k - 1].off + 6 == r->off) {
                ev.lit_dest = CS_DEST_CELL;
                ev.cell_sec = v[k - 1].ev.cell_sec;
                ev.cell_off = v[k - 1].ev.cell_off;
            }
        }
        if (ev.kind == CS_LOAD && ev.cell_sec == 0 && !r->clobber) {
            if (r->reg >= 0 && r->reg < 16)
                regs[r->reg] = (regstate_t){-1, r->obj};
            continue;
        }
        if (r->reg >= 0 && r->reg < 16 && ev.kind != CS_STORE)
            regs[r->reg] = (regstate_t){ev.kind == CS_LITERAL ? (long)f->n_ev : -1, -1};
        if (ev.kind == CS_LOAD && ev.cell_sec == 0)
            continue;
        push_event(f, &ev);
    }
}

/* -------------------------------------------------------------------- driver */

static void data_reloc(const img_t *im, size_t tsec, const Elf64_Rela *r, data_lit_t **v, size_t *n)
{
    unsigned type = ELF64_R_TYPE(r->r_info);
    target_t t;
    if (type != R_X86_64_64 || r->r_offset > im->sec[tsec].size || im->sec[tsec].size - r->r_offset < 8 || !rel_target(im, r, 0, &t) || !t.def)
        return;
    const char *lit = literal_at(im, t.sec, t.off);
    if (!lit)
        return;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (data_lit_t){tsec, r->r_offset, lit};
}

static void attach_obj_literals(cs_module_t *m, const data_lit_t *dl, size_t n)
{
    for (size_t i = 0; i < m->n_objs; i++) {
        cs_obj_t *o = &m->objs[i];
        for (size_t k = 0; k < n; k++) {
            if (dl[k].sec != o->sec || dl[k].off < o->off || dl[k].off >= o->off + o->size)
                continue;
            o->lit = xrealloc(o->lit, (o->n_lit + 1) * sizeof *o->lit);
            o->lit[o->n_lit++] = dl[k].lit;
        }
    }
}

int cs_scan(const unsigned char *buf, size_t len, cs_module_t *m, err_t *e)
{
    memset(m, 0, sizeof *m);
    Elf *elf = elfr_open((unsigned char *)buf, len, ET_REL, e);
    if (!elf)
        return -1;
    img_t im = {0};
    raw_list_t raw = {0};
    data_lit_t *dl = NULL;
    size_t ndl = 0;
    int ret = -1;
    if (elfr_image_load(elf, buf, len, &im, e) != 0)
        goto out;
    collect_functions(&im, m);
    for (size_t i = 1; i < im.shnum; i++) {
        const elfr_sec_t *rs = &im.sec[i];
        if (rs->shdr.sh_type != SHT_RELA || rs->shdr.sh_link != im.symidx || !rs->data)
            continue;
        size_t tsec = rs->shdr.sh_info;
        if (!sec_ok(&im, tsec))
            continue;
        size_t nr = rs->size / sizeof(Elf64_Rela);
        for (size_t k = 0; k < nr; k++) {
            Elf64_Rela r;
            memcpy(&r, rs->data + k * sizeof r, sizeof r);
            cur_sec = tsec;
            if (is_exec(&im, tsec))
                text_reloc(&im, m, tsec, &r, &raw);
            else if (im.sec[tsec].shdr.sh_flags & SHF_ALLOC)
                data_reloc(&im, tsec, &r, &dl, &ndl);
        }
    }
    /* byte scan of every function, then all events in (section, offset) order */
    for (size_t fi = 0; fi < m->n_fn; fi++) {
        cur_sec = m->fn[fi].sec;
        byte_scan(&im, m, fi, &raw);
    }
    if (raw.n > 1)
        qsort(raw.v, raw.n, sizeof *raw.v, cmp_raw);
    size_t k = 0;
    for (size_t fi = 0; fi < m->n_fn; fi++) {
        cs_func_t *f = &m->fn[fi];
        while (k < raw.n && (raw.v[k].sec < f->sec || (raw.v[k].sec == f->sec && raw.v[k].off < f->addr)))
            k++;
        size_t k0 = k;
        while (k < raw.n && raw.v[k].sec == f->sec && raw.v[k].off < f->addr + f->size)
            k++;
        if (k > k0)
            simulate(f, raw.v + k0, k - k0);
    }
    attach_obj_literals(m, dl, ndl);
    ret = 0;
out:
    free(dl);
    free(raw.v);
    elfr_image_free(&im);
    elf_end(elf);
    if (ret)
        cs_free(m);
    return ret;
}

void cs_free(cs_module_t *m)
{
    for (size_t i = 0; i < m->n_fn; i++)
        free(m->fn[i].ev);
    free(m->fn);
    for (size_t i = 0; i < m->n_objs; i++)
        free(m->objs[i].lit);
    free(m->objs);
    strvec_free(&m->exports);
    memset(m, 0, sizeof *m);
}
