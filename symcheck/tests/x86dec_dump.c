/* Test helper: the instruction boundaries x86_decode finds in every function of a module, for
 * tests/test_x86dec.py to hold against objdump's. Prints "FUNCTION<TAB>OFFSET" per instruction
 * and "FUNCTION<TAB>FAIL<TAB>OFFSET" where decoding stops; exit 2 on an unreadable module. */
#include <stdio.h>

#include "codescan.h"
#include "util.h"
#include "x86dec.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: x86dec_dump FILE.ko\n");
        return 2;
    }
    filebuf_t fb;
    err_t e;
    cs_module_t cs;
    if (file_load(argv[1], &fb, &e) != 0 || cs_scan(fb.data, fb.size, &cs, &e) != 0) {
        fprintf(stderr, "x86dec_dump: %s: %s\n", argv[1], e.msg);
        return 2;
    }
    for (size_t i = 0; i < cs.n_fn; i++) {
        const cs_func_t *f = &cs.fn[i];
        for (size_t o = 0; f->code && o < f->size;) {
            x86_insn_t in;
            size_t len = x86_decode(f->code + o, f->size - o, &in);
            if (!len) {
                printf("%s\tFAIL\t%zu\n", f->name, o);
                break;
            }
            printf("%s\t%zu\n", f->name, o);
            o += len;
        }
    }
    cs_free(&cs);
    file_free(&fb);
    return 0;
}
