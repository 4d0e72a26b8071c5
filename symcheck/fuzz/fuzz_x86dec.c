/* libFuzzer target: the x86-64 decoder and the stack-address follower on arbitrary bytes.
 * Invariants: a decoded length is 1..15 and within the input; frameread answers one of its
 * three verdicts for every call offset, without reading outside the function. */
#include <stdint.h>
#include <stdlib.h>

#include "frameread.h"
#include "x86dec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t calls[8], n = 0;
    for (size_t o = 0; o < size;) {
        x86_insn_t in;
        size_t len = x86_decode(data + o, size - o, &in);
        if (!len)
            break;
        if (len > 15 || len > size - o)
            abort();
        if (in.map == 0 && in.op == 0xe8 && n < 8)
            calls[n++] = o;
        o += len;
    }
    for (size_t i = 0; i < n; i++) {
        fr_verdict_t v = fr_arg0_field_read(data, size, calls[i], 0x28, 8, calls, n);
        if (v != FR_NOT_READ && v != FR_READ && v != FR_UNKNOWN)
            abort();
    }
    return 0;
}
