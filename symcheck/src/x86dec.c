/* x86-64 instruction decoder (64-bit mode): prefixes, REX, VEX/EVEX, the one-, two- and
 * three-byte opcode maps, ModRM/SIB/displacement and immediates. Opcodes that are invalid in
 * 64-bit mode (push es, aaa, bound...) are refused, so that a scan of data is noticed. */
#include "x86dec.h"

#include <string.h>

enum { F_MODRM = 1, F_I8 = 2, F_IZ = 4, F_BAD = 8, F_I16 = 16, F_SPECIAL = 32 };

static unsigned map0_flags(unsigned op)
{
    if (op < 0x40) {
        unsigned lo = op & 7;
        if (lo < 4)
            return F_MODRM;
        return lo == 4 ? F_I8 : lo == 5 ? F_IZ : F_BAD;   /* 06 07 0e 16 17 1e 1f 27 2f 37 3f */
    }
    if (op < 0x60)
        return 0;                                          /* REX (handled before), push, pop */
    if (op >= 0x70 && op <= 0x7f)
        return F_I8;                                       /* jcc rel8 */
    if (op >= 0x84 && op <= 0x8f)
        return F_MODRM;
    if (op >= 0xb0 && op <= 0xb7)
        return F_I8;
    if (op >= 0xd8 && op <= 0xdf)
        return F_MODRM;                                    /* x87 */
    if ((op >= 0xe0 && op <= 0xe7) || op == 0xeb || op == 0xcd || op == 0xa8)
        return F_I8;
    switch (op) {
    case 0x63: case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xfe: case 0xff:
        return F_MODRM;
    case 0x69: case 0x81: case 0xc7:
        return F_MODRM | F_IZ;
    case 0x6b: case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
        return F_MODRM | F_I8;
    case 0x68: case 0xa9:
        return F_IZ;
    case 0x6a:
        return F_I8;
    case 0xc2: case 0xca:
        return F_I16;
    case 0xe8: case 0xe9:
    case 0xa0: case 0xa1: case 0xa2: case 0xa3:           /* moffs */
    case 0xb8: case 0xb9: case 0xba: case 0xbb: case 0xbc: case 0xbd: case 0xbe: case 0xbf:
    case 0xc8:
        return F_SPECIAL;
    case 0xf6: case 0xf7:
        return F_MODRM | F_SPECIAL;
    case 0x60: case 0x61: case 0x62: case 0x82: case 0x9a: case 0xc4: case 0xc5: case 0xce:
    case 0xd4: case 0xd5: case 0xd6: case 0xea:
        return F_BAD;
    default:
        return 0;
    }
}

static unsigned map1_flags(unsigned op)
{
    switch (op) {
    case 0x04: case 0x0a: case 0x0c: case 0x24: case 0x25: case 0x26: case 0x27: case 0x36:
    case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f:
        return F_BAD;
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e: case 0x77:
    case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
        return 0;
    case 0x0f: case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac: case 0xba:
    case 0xc2: case 0xc4: case 0xc5: case 0xc6:
        return F_MODRM | F_I8;
    default:
        break;
    }
    if ((op >= 0x30 && op <= 0x37) || (op >= 0xc8 && op <= 0xcf))
        return 0;                                          /* wrmsr..getsec, bswap */
    if (op >= 0x80 && op <= 0x8f)
        return F_SPECIAL;                                  /* jcc rel32 */
    return F_MODRM;
}

static unsigned map_flags(int map, unsigned op)
{
    return map == 0 ? map0_flags(op) : map == 1 ? map1_flags(op) : map == 2 ? F_MODRM : F_MODRM | F_I8;
}

typedef struct {
    const unsigned char *p;
    size_t n, i;
    bool addr32, rex_r, rex_x, rex_b;
} cur_t;

static bool take(cur_t *c, size_t k)
{
    if (c->i + k > c->n || c->i + k > 15)
        return false;
    c->i += k;
    return true;
}

static int64_t sread(const unsigned char *p, int size)
{
    switch (size) {
    case 1: return (int8_t)p[0];
    case 2: { int16_t v; memcpy(&v, p, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p, 4); return v; }
    case 8: { int64_t v; memcpy(&v, p, 8); return v; }
    default: return 0;
    }
}

/* ModRM, SIB and displacement. */
static bool modrm(cur_t *c, x86_insn_t *in)
{
    if (!take(c, 1))
        return false;
    unsigned b = c->p[c->i - 1];
    in->has_modrm = true;
    in->mod = (int)(b >> 6);
    in->reg = (int)((b >> 3) & 7) | (c->rex_r ? 8 : 0);
    int rm = (int)(b & 7);
    in->base = in->index = X86_NOREG;
    if (in->mod == 3) {
        in->rm = rm | (c->rex_b ? 8 : 0);
        return true;
    }
    in->rm = X86_NOREG;
    int dsize = in->mod == 1 ? 1 : in->mod == 2 ? 4 : 0;
    if (rm == 4) {
        if (!take(c, 1))
            return false;
        unsigned sib = c->p[c->i - 1];
        int idx = (int)((sib >> 3) & 7) | (c->rex_x ? 8 : 0);
        in->index = idx == X86_RSP ? X86_NOREG : idx;
        if ((sib & 7) == 5 && in->mod == 0)
            dsize = 4;
        else
            in->base = (int)(sib & 7) | (c->rex_b ? 8 : 0);
    } else if (rm == 5 && in->mod == 0) {
        in->base = X86_RIP;
        dsize = 4;
    } else {
        in->base = rm | (c->rex_b ? 8 : 0);
    }
    if (dsize && !take(c, (size_t)dsize))
        return false;
    in->disp = (int32_t)sread(c->p + c->i - dsize, dsize);
    return true;
}

/* Size of the immediate(s) of an F_SPECIAL opcode. */
static int special_imm(const cur_t *c, const x86_insn_t *in)
{
    if (in->map == 1)
        return 4;                                          /* jcc rel32 */
    unsigned op = in->op;
    if (op == 0xe8 || op == 0xe9)
        return 4;
    if (op >= 0xa0 && op <= 0xa3)
        return c->addr32 ? 4 : 8;
    if (op >= 0xb8 && op <= 0xbf)
        return in->rex_w ? 8 : in->opsize16 ? 2 : 4;
    if (op == 0xc8)
        return 3;                                          /* enter imm16, imm8 */
    if ((in->reg & 7) >= 2)                                /* f6/f7: only test takes an immediate */
        return 0;
    return op == 0xf6 ? 1 : in->opsize16 ? 2 : 4;
}

/* VEX (c4/c5) or EVEX (62) prefix: sets the map and REX bits; the opcode follows. */
static bool vex_prefix(cur_t *c, x86_insn_t *in, unsigned first)
{
    size_t k = first == 0xc5 ? 1 : first == 0xc4 ? 2 : 3;
    if (!take(c, k))
        return false;
    const unsigned char *v = c->p + c->i - k;
    in->vex = true;
    c->rex_r = !(v[0] & 0x80);
    if (first == 0xc5) {
        in->map = 1;
        return true;
    }
    c->rex_x = !(v[0] & 0x40);
    c->rex_b = !(v[0] & 0x20);
    in->map = (int)(v[0] & (first == 0xc4 ? 0x1f : 0x07));
    in->rex_w = (v[1] & 0x80) != 0;
    return in->map >= 1 && in->map <= 3;
}

static bool prefixes(cur_t *c, x86_insn_t *in)
{
    for (;;) {
        if (c->i >= c->n)
            return false;
        unsigned b = c->p[c->i];
        if (b == 0x66)
            in->opsize16 = true;
        else if (b == 0x67)
            c->addr32 = true;
        else if (b == 0xf3)
            in->rep = true;
        else if (!(b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0xf0 ||
                   b == 0xf2))
            break;
        if (!take(c, 1))
            return false;
    }
    unsigned b = c->p[c->i];
    if (b >= 0x40 && b <= 0x4f) {
        in->rex_w = b & 8;
        c->rex_r = b & 4;
        c->rex_x = b & 2;
        c->rex_b = b & 1;
        if (!take(c, 1))
            return false;
    }
    return true;
}

size_t x86_decode(const unsigned char *p, size_t n, x86_insn_t *in)
{
    memset(in, 0, sizeof *in);
    in->base = in->index = in->rm = in->reg = in->reg_op = X86_NOREG;
    cur_t c = {p, n, 0, false, false, false, false};
    if (!prefixes(&c, in) || !take(&c, 1))
        return 0;
    unsigned b = p[c.i - 1];
    if (b == 0xc4 || b == 0xc5 || b == 0x62) {
        if (!vex_prefix(&c, in, b) || !take(&c, 1))
            return 0;
        b = p[c.i - 1];
    } else if (b == 0x0f) {
        if (!take(&c, 1))
            return 0;
        b = p[c.i - 1];
        in->map = 1;
        if (b == 0x38 || b == 0x3a) {
            in->map = b == 0x38 ? 2 : 3;
            if (!take(&c, 1))
                return 0;
            b = p[c.i - 1];
        }
    }
    in->op = b;
    in->reg_op = (int)(b & 7) | (c.rex_b ? 8 : 0);
    unsigned fl = in->vex ? (map_flags(in->map, b) & ~(unsigned)F_SPECIAL) | F_MODRM : map_flags(in->map, b);
    if (in->vex && in->map == 1 && b == 0x77)
        fl = 0;                                            /* vzeroupper / vzeroall */
    if (fl & F_BAD)
        return 0;
    if ((fl & F_MODRM) && !modrm(&c, in))
        return 0;
    int isz = fl & F_I8 ? 1 : fl & F_I16 ? 2 : fl & F_IZ ? (in->opsize16 ? 2 : 4) : 0;
    if (fl & F_SPECIAL)
        isz = special_imm(&c, in);
    if (isz && !take(&c, (size_t)isz))
        return 0;
    in->imm_size = isz;
    in->imm = sread(p + c.i - isz, isz == 3 ? 2 : isz);
    in->len = c.i;
    return c.i;
}
