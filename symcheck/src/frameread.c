/* Stack addresses followed through one function's control flow.
 *
 * A register holds either no stack address, a stack address at a known offset in a stack
 * "epoch", or a stack address at an unknown offset. An epoch is the stack pointer's value at
 * function entry (epoch 0), after an instruction that moves it by an unknown amount (and
 * $-16,%rsp; alloca), or where paths with different stack pointers join: offsets compare only
 * within one epoch. The states at jump targets are merged over every edge until they no longer
 * change, then every reachable instruction is judged. Every doubt answers FR_UNKNOWN (code not
 * reached, a jump out while the frame is live, too many rounds), so that the audit keeps calling
 * a kprobe a trick unless the address is provably not read. */
#include "frameread.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "x86dec.h"

typedef struct {
    bool frame, known;
    int epoch;
    int64_t off;
} val_t;

typedef struct {
    val_t r[16];
    int here;       /* index of the instruction being applied: names the epochs it starts */
} state_t;

static const val_t CLEAN = {false, false, 0, 0};
static const val_t TAINT = {true, false, 0, 0};

static bool gpr(int r)
{
    return r >= 0 && r < 16;
}

static void new_epoch(state_t *s)
{
    s->r[X86_RSP] = (val_t){true, true, 1 + s->here, 0};
}

static void set(state_t *s, int r, val_t v)
{
    if (!gpr(r))
        return;
    if (r == X86_RSP && !(v.frame && v.known))
        new_epoch(s);
    else
        s->r[r] = v;
}

static void taint_if_frame(state_t *s, int r)
{
    if (gpr(r) && s->r[r].frame)
        set(s, r, TAINT);
}

static void move_sp(state_t *s, int64_t by)
{
    s->r[X86_RSP].off += by;
}

/* The effective address of the memory operand, as a value. */
static val_t ea(const state_t *s, const x86_insn_t *in)
{
    bool idx_frame = gpr(in->index) && s->r[in->index].frame;
    if (!gpr(in->base))
        return idx_frame ? TAINT : CLEAN;
    val_t b = s->r[in->base];
    if (in->index != X86_NOREG && (b.frame || idx_frame))
        return TAINT;
    if (b.frame && b.known)
        b.off += in->disp;
    return b;
}

static bool is_call(const x86_insn_t *in)
{
    return in->map == 0 && (in->op == 0xe8 || (in->op == 0xff && in->has_modrm && (in->reg & 7) == 2));
}

static bool is_hint_nop(const x86_insn_t *in)
{
    return in->map == 1 && in->op >= 0x18 && in->op <= 0x1f;
}

/* Instructions with a ModRM operand that write no register. */
static bool writes_nothing(const x86_insn_t *in)
{
    unsigned op = in->op;
    if (in->map == 1)
        return op == 0xa3 || is_hint_nop(in);   /* bt */
    if (in->map != 0)
        return false;
    return (op >= 0x38 && op <= 0x3b) || op == 0x84 || op == 0x85 ||
           ((op >= 0x80 && op <= 0x83) && (in->reg & 7) == 7) || ((op == 0xf6 || op == 0xf7) && (in->reg & 7) < 2);
}

static bool is_store(const x86_insn_t *in)
{
    static const unsigned char map1_stores[] = {0x11, 0x13, 0x17, 0x29, 0x2b, 0x7f, 0xc3, 0xd6, 0xe7};
    if (in->map == 0)
        return in->op == 0x88 || in->op == 0x89 || in->op == 0xc6 || in->op == 0xc7;
    return in->map == 1 && memchr(map1_stores, (int)in->op, sizeof map1_stores) != NULL;
}

static void clobber_call(state_t *s)
{
    static const int caller_saved[] = {0, 1, 2, 6, 7, 8, 9, 10, 11};
    for (size_t i = 0; i < sizeof caller_saved / sizeof *caller_saved; i++)
        s->r[caller_saved[i]] = CLEAN;
}

/* Register effects of the one-byte opcodes followed exactly; false when not one of them. */
static bool map0_effects(state_t *s, const x86_insn_t *in)
{
    unsigned op = in->op;
    int sub = in->reg & 7;
    if ((op >= 0x50 && op <= 0x57) || op == 0x68 || op == 0x6a || (op == 0xff && sub == 6)) {
        move_sp(s, -8);
    } else if ((op >= 0x58 && op <= 0x5f) || (op == 0x8f && sub == 0)) {
        move_sp(s, 8);
        set(s, op == 0x8f ? (in->mod == 3 ? in->rm : X86_NOREG) : in->reg_op, CLEAN);
    } else if (op == 0xc9) {   /* leave */
        val_t bp = s->r[X86_RBP];
        bp.off += 8;
        set(s, X86_RSP, bp);
        s->r[X86_RBP] = CLEAN;
    } else if ((op == 0x89 || op == 0x8b) && in->mod == 3) {
        int dst = op == 0x89 ? in->rm : in->reg, src = op == 0x89 ? in->reg : in->rm;
        set(s, dst, in->rex_w ? s->r[src] : CLEAN);   /* a 32-bit move is no pointer */
    } else if (op == 0x8d) {
        val_t a = ea(s, in);
        set(s, in->reg, in->rex_w ? a : a.frame ? TAINT : CLEAN);
    } else if ((op == 0x81 || op == 0x83) && in->mod == 3 && sub != 7) {
        val_t v = s->r[in->rm];
        if (!v.frame)
            return true;
        if ((sub == 0 || sub == 5) && v.known && in->rex_w)
            v.off += sub == 0 ? in->imm : -in->imm;
        else
            v = TAINT;
        set(s, in->rm, v);
    } else if ((op >= 0xb8 && op <= 0xbf) || (op == 0xc7 && in->mod == 3) || op == 0x8b) {
        set(s, op == 0x8b ? in->reg : op == 0xc7 ? in->rm : in->reg_op, CLEAN);
    } else if (is_call(in)) {
        clobber_call(s);
    } else if ((op == 0x31 || op == 0x33 || op == 0x29 || op == 0x2b) && in->mod == 3 && in->reg == in->rm) {
        set(s, in->reg, CLEAN);   /* xor/sub of a register with itself */
    } else if ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf)) {
        taint_if_frame(s, X86_RSI);
        taint_if_frame(s, X86_RDI);
        taint_if_frame(s, 1);
    } else {
        return false;
    }
    return true;
}

/* Registers written without being named: cqo, mul/div, cpuid, rdtsc, rdmsr, cmpxchg... */
static void implicit_effects(state_t *s, const x86_insn_t *in)
{
    unsigned op = in->op;
    bool ax_dx = in->map == 0 ? op == 0x98 || op == 0x99 || ((op == 0xf6 || op == 0xf7) && (in->reg & 7) >= 4)
                              : in->map == 1 && (op == 0x01 || op == 0xa2 || (op >= 0x30 && op <= 0x33) ||
                                                 op == 0xb0 || op == 0xb1 || op == 0xc7);
    if (!ax_dx)
        return;
    for (int r = 0; r < 4; r++)   /* rax, rcx, rdx, rbx: the widest (cpuid) */
        taint_if_frame(s, r);
}

/* Everything else: whatever a register that held a stack address now holds is unknown. */
static void generic_effects(state_t *s, const x86_insn_t *in)
{
    implicit_effects(s, in);
    if (in->map == 0 && (in->op == 0x87 || (in->op >= 0x91 && in->op <= 0x97))) {
        int a = in->op == 0x87 ? in->reg : 0, b = in->op == 0x87 ? in->rm : in->reg_op;
        if (gpr(a) && gpr(b)) {
            val_t t = s->r[a];
            set(s, a, s->r[b]);
            set(s, b, t);
        }
        return;
    }
    if (!in->has_modrm || writes_nothing(in))
        return;
    bool any = (gpr(in->reg) && s->r[in->reg].frame) || (gpr(in->rm) && s->r[in->rm].frame);
    if (in->mod == 3 && (in->rm == X86_RSP || in->reg == X86_RSP))
        new_epoch(s);
    if (any) {
        taint_if_frame(s, in->reg);
        taint_if_frame(s, in->rm);
    }
}

typedef struct {
    val_t obj;
    int64_t lo, hi;          /* the field: [obj + lo, obj + hi) */
    size_t call_off;
    const size_t *pass_ok;
    size_t n_pass_ok;
    bool read, unknown;
} judge_t;

static int access_width(const x86_insn_t *in)
{
    return in->vex ? 64 : in->map ? 16 : 8;
}

/* A stack value v used as an address of w bytes (or, w == 0, handed to a callee). */
static void judge_addr(judge_t *j, val_t v, int w, bool store)
{
    if (!v.frame)
        return;
    if (!v.known || v.epoch != j->obj.epoch) {
        j->unknown = true;
        return;
    }
    int64_t a = v.off - j->obj.off;
    bool hit = w ? a < j->hi && a + w > j->lo : a >= 0 && a < j->hi;
    if (hit && !store)
        j->read = true;
}

static void judge(judge_t *j, const state_t *s, const x86_insn_t *in, size_t off)
{
    bool mem = in->has_modrm && in->mod != 3 && !(in->map == 0 && in->op == 0x8d) && !is_hint_nop(in);
    if (mem)
        judge_addr(j, ea(s, in), access_width(in), is_store(in));
    /* a stack address stored to memory or pushed may come back in any register */
    if ((mem && in->map == 0 && (in->op == 0x89 || in->op == 0x87) && gpr(in->reg) && s->r[in->reg].frame) ||
        (in->map == 0 && in->op >= 0x50 && in->op <= 0x57 && s->r[in->reg_op].frame))
        j->unknown = true;
    if (is_call(in) && off > j->call_off) {
        for (size_t i = 0; i < j->n_pass_ok; i++)
            if (j->pass_ok[i] == off)
                return;
        static const int args[] = {7, 6, 2, 1, 8, 9};
        for (size_t i = 0; i < sizeof args / sizeof *args; i++)
            judge_addr(j, s->r[args[i]], 0, false);
    }
}

typedef struct {
    const unsigned char *code;
    size_t size, n;
    x86_insn_t *in;     /* the instructions, in address order */
    size_t *off;
    long *target;       /* index of the instruction a jump goes to inside the function, -1 */
    bool *out;          /* a jump out of the function (relocated: tail call or a .cold part) */
    state_t *at;        /* merged state at each jump target */
    bool *reached;
} cfg_t;

static long insn_at(const cfg_t *g, size_t off)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->off[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->n && g->off[lo] == off ? (long)lo : -1;
}

static bool is_jump(const x86_insn_t *in)
{
    return in->map == 0 ? (in->op >= 0x70 && in->op <= 0x7f) || (in->op >= 0xe0 && in->op <= 0xe3) ||
                              in->op == 0xe9 || in->op == 0xeb
                        : in->map == 1 && !in->vex && in->op >= 0x80 && in->op <= 0x8f;
}

static bool ends_flow(const x86_insn_t *in)
{
    return in->map == 0 ? in->op == 0xc3 || in->op == 0xc2 || in->op == 0xe9 || in->op == 0xeb ||
                              (in->op == 0xff && in->has_modrm && ((in->reg & 7) == 4 || (in->reg & 7) == 5))
                        : in->map == 1 && in->op == 0x0b;   /* ud2 */
}

static bool is_padding(const x86_insn_t *in)
{
    return in->map == 0 ? in->op == 0x90 || in->op == 0xcc : in->map == 1 && in->op == 0x1f;
}

/* Decode the function and resolve its jumps; false when it cannot be followed. */
static bool cfg_build(cfg_t *g)
{
    g->in = xmalloc((g->size + 1) * sizeof *g->in);
    g->off = xmalloc((g->size + 1) * sizeof *g->off);
    for (size_t o = 0; o < g->size; g->n++) {
        size_t len = x86_decode(g->code + o, g->size - o, &g->in[g->n]);
        if (!len)
            return false;
        g->off[g->n] = o;
        o += len;
    }
    g->target = xmalloc((g->n + 1) * sizeof *g->target);
    g->out = xcalloc(g->n + 1, sizeof *g->out);
    g->at = xcalloc(g->n + 1, sizeof *g->at);
    g->reached = xcalloc(g->n + 1, sizeof *g->reached);
    for (size_t i = 0; i < g->n; i++) {
        const x86_insn_t *in = &g->in[i];
        g->target[i] = -1;
        if (!is_jump(in))
            continue;
        int64_t to = (int64_t)(g->off[i] + in->len) + in->imm;
        if (in->imm == 0 && in->imm_size == 4)
            g->out[i] = true;   /* rel32 left 0 for the relocation: the target is elsewhere */
        else if (to < 0 || (uint64_t)to >= g->size)
            g->out[i] = true;
        else if ((g->target[i] = insn_at(g, (size_t)to)) < 0)
            return false;       /* into the middle of an instruction */
    }
    return true;
}

static void cfg_free(cfg_t *g)
{
    free(g->in);
    free(g->off);
    free(g->target);
    free(g->out);
    free(g->at);
    free(g->reached);
}

static bool val_eq(val_t a, val_t b)
{
    return a.frame == b.frame && a.known == b.known && a.epoch == b.epoch && a.off == b.off;
}

/* Join the state of one more edge into target t's. Returns whether t's state changed. */
static bool merge(cfg_t *g, size_t t, const state_t *from)
{
    state_t *into = &g->at[t];
    if (!g->reached[t]) {
        *into = *from;
        g->reached[t] = true;
        return true;
    }
    bool changed = false;
    for (int r = 0; r < 16; r++) {
        val_t a = into->r[r], b = from->r[r];
        if (val_eq(a, b))
            continue;
        val_t m = r == X86_RSP ? (val_t){true, true, 1 + (int)(g->n + t), 0} : TAINT;
        if (!val_eq(a, m)) {
            into->r[r] = m;
            changed = true;
        }
    }
    return changed;
}

static bool frame_live(const state_t *s)
{
    val_t sp = s->r[X86_RSP];
    return !(sp.known && sp.epoch == 0 && sp.off == 0);
}

/* One pass over the function in address order, following the merged states at jump targets.
 * With j, judge every reachable instruction; with stop, copy the state before instruction
 * index *stop_at into it. Returns whether a target's state changed. */
static bool pass(cfg_t *g, judge_t *j, size_t stop_at, state_t *stop)
{
    state_t cur;
    memset(&cur, 0, sizeof cur);
    cur.r[X86_RSP] = (val_t){true, true, 0, 0};
    bool live = true, changed = false;
    for (size_t i = 0; i < g->n; i++) {
        const x86_insn_t *in = &g->in[i];
        if (live)
            changed |= merge(g, i, &cur);   /* every instruction may be a target: its own join */
        live = g->reached[i];
        if (!live) {
            if (j && !is_padding(in))
                j->unknown = true;          /* code this walk cannot reach: not judged */
            continue;
        }
        cur = g->at[i];
        if (stop && i == stop_at)
            *stop = cur;
        if (j)
            judge(j, &cur, in, g->off[i]);
        cur.here = (int)i;
        if (in->map != 0 || !map0_effects(&cur, in))
            generic_effects(&cur, in);
        if (g->target[i] >= 0)
            changed |= merge(g, (size_t)g->target[i], &cur);
        bool indirect_jmp = in->map == 0 && in->op == 0xff && (in->reg & 7) >= 4;
        if (j && (g->out[i] || indirect_jmp) && frame_live(&cur))
            j->unknown = true;              /* the frame goes on elsewhere: a .cold part, a switch */
        if (ends_flow(in))
            live = false;
    }
    return changed;
}

fr_verdict_t fr_arg0_field_read(const unsigned char *code, size_t size, size_t call_off, int64_t field,
                                int64_t width, const size_t *pass_ok, size_t n_pass_ok)
{
    if (!code || call_off >= size)
        return FR_UNKNOWN;
    cfg_t g = {code, size, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    fr_verdict_t v = FR_UNKNOWN;
    long ci;
    int rounds = 0;
    if (!cfg_build(&g) || (ci = insn_at(&g, call_off)) < 0)
        goto out;
    while (pass(&g, NULL, 0, NULL))
        if (++rounds > 64)
            goto out;
    state_t s;
    memset(&s, 0, sizeof s);
    pass(&g, NULL, (size_t)ci, &s);
    val_t obj = s.r[X86_RDI];
    if (!g.reached[ci] || !obj.frame || !obj.known)
        goto out;
    judge_t j = {obj, field, field + width, call_off, pass_ok, n_pass_ok, false, false};
    pass(&g, &j, 0, NULL);
    v = j.read ? FR_READ : j.unknown ? FR_UNKNOWN : FR_NOT_READ;
out:
    cfg_free(&g);
    return v;
}
