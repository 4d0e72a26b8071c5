/* Does a function read a field of a stack object it passes to a call? (kprobe trick or
 * existence check: is kp.addr read after register_kprobe(&kp)?) */
#ifndef SYMCHECK_FRAMEREAD_H
#define SYMCHECK_FRAMEREAD_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FR_NOT_READ,    /* the field is provably not read: no access to it, no pointer to the object escapes */
    FR_READ,        /* read, or a pointer to the object passed to another call after the given one */
    FR_UNKNOWN,     /* undecidable here: the object is not on the stack, an instruction is not
                       decoded, a stack pointer escapes to memory or is lost in arithmetic */
} fr_verdict_t;

/* code[0..size): one function's bytes. The object is the one whose address is in %rdi at the
 * call at offset call_off; field/width: its bytes asked about. pass_ok[0..n_pass_ok): offsets of
 * the calls that may receive a pointer to the object after call_off (unregister_kprobe). Reads
 * anywhere in the function count, in address order, with registers followed linearly (no
 * control flow): an under-approximation of escapes is avoided by answering FR_UNKNOWN. */
fr_verdict_t fr_arg0_field_read(const unsigned char *code, size_t size, size_t call_off, int64_t field,
                                int64_t width, const size_t *pass_ok, size_t n_pass_ok);

#endif
