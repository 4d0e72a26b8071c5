/* A small x86-64 instruction decoder: length, opcode and the ModRM operand, enough to follow
 * stack addresses through a function (frameread.c). Not a disassembler: no mnemonics. */
#ifndef SYMCHECK_X86DEC_H
#define SYMCHECK_X86DEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X86_RSP 4
#define X86_RBP 5
#define X86_RSI 6
#define X86_RDI 7
#define X86_NOREG (-1)
#define X86_RIP (-2)

typedef struct {
    size_t len;
    int map;            /* 0: one-byte opcode, 1: 0f, 2: 0f 38, 3: 0f 3a */
    unsigned op;
    bool vex;           /* VEX or EVEX encoded */
    bool rex_w, opsize16, rep;
    bool has_modrm;
    int mod, reg, rm;   /* reg and rm with REX.R / REX.B applied; rm is a register only when mod == 3 */
    int base, index;    /* memory operand (mod != 3): register numbers, X86_NOREG, or X86_RIP */
    int32_t disp;
    int64_t imm;        /* the first immediate, sign-extended; 0 when none */
    int imm_size;
    int reg_op;         /* register encoded in the opcode's low bits (50+r, b8+r...) with REX.B */
} x86_insn_t;

/* Decode the instruction at p (n bytes available). Returns its length, or 0 when the bytes are
 * not an instruction this decoder knows (invalid in 64-bit mode, or truncated). */
size_t x86_decode(const unsigned char *p, size_t n, x86_insn_t *in);

#endif
