/* libFuzzer target: the Module.symvers parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symvers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exportset_t s;
    err_t e;
    if (symvers_parse(data, size, &s, &e) == 0) {
        /* exercise lookups on the result */
        for (size_t i = 0; i < s.n; i++)
            if (exportset_find(&s, s.v[i].name) != &s.v[i])
                abort();
        exportset_free(&s);
    } else if (strlen(e.msg) == 0 || strchr(e.msg, '\n')) {
        abort(); /* errors must be one non-empty line */
    }
    return 0;
}
