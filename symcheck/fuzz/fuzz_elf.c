/* libFuzzer target: the ELF readers (vmlinux ksymtab reader and .ko reader). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfread.h"
#include "ko.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* own, exactly-sized copy so ASan catches any overrun */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    err_t e;
    komod_t m;
    if (ko_read(buf, size, &m, &e) == 0) {
        for (size_t i = 0; i < m.n_datasecs; i++)
            if (m.datasecs[i].size && memchr(m.datasecs[i].data, 'k', m.datasecs[i].size) == (void *)1)
                abort();
        ko_free(&m);
    }
    exportset_t s;
    ksym_info_t info;
    if (ksymtab_read(buf, size, &s, &info, &e) == 0)
        exportset_free(&s);
    free(buf);
    return 0;
}
