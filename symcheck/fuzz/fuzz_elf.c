/* libFuzzer target: the ELF readers (vmlinux ksymtab reader, .ko reader, the audit's code scan and
 * the .ko export reader), and the
 * decompressors in front of the .ko reader (xz/zstd/gzip input is decompressed first). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "decomp.h"
#include "modexports.h"
#include "elfread.h"
#include "ko.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* own, exactly-sized copy so ASan catches any overrun */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    err_t e = {{0}};
    komod_t m;
    filebuf_t plain = {0};
    enum comp_kind k = comp_detect(buf, size);
    if (k != COMP_NONE) {
        if (decomp_buffer(k, buf, size, &plain, &e) != 0) {
            if (!e.msg[0] || strchr(e.msg, '\n'))
                abort();   /* errors must be one non-empty line */
            free(buf);
            return 0;
        }
        free(buf);
        buf = plain.data;
        size = plain.size;
    }
    if (ko_read(buf, size, &m, &e) == 0) {
        for (size_t i = 0; i < m.n_datasecs; i++)
            if (m.datasecs[i].size && memchr(m.datasecs[i].data, 'k', m.datasecs[i].size) == (void *)1)
                abort();
        /* the audit's code scan, the set audit of one module, and the module export reader */
        cs_module_t cs;
        if (cs_scan(buf, size, &cs, &e) == 0) {
            audit_input_t in = {"fuzz.ko", &m, &cs};
            audit_result_t r;
            audit_compute(&in, 1, &r);
            audit_result_free(&r);
            cs_free(&cs);
        }
        exportset_t x = {0};
        (void)ko_exports_read(buf, size, "fuzz", &x, &e);
        exportset_free(&x);
        ko_free(&m);
    }
    exportset_t s;
    ksym_info_t info;
    if (ksymtab_read(buf, size, &s, &info, &e) == 0)
        exportset_free(&s);
    free(buf);
    return 0;
}
