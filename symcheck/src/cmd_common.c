/* Helpers shared by the commands. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "decomp.h"

int usage_error(const char *fmt, const char *arg)
{
    fputs("symcheck: ", stderr);
    fprintf(stderr, fmt, arg ? arg : "");
    fputs(" (see symcheck --help)\n", stderr);
    return EXIT_TROUBLE;
}

int parse_tree_args(const char *cmd, int argc, char **argv, bool *quiet, const char **tree, char **pos,
                    int *np)
{
    char fmt[64];
    for (int i = 0; i < argc; i++) {
        if (quiet && (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0)) {
            *quiet = true;
        } else if (strcmp(argv[i], "--tree") == 0 && i + 1 >= argc) {
            return usage_error("%s: --tree needs a directory", cmd);
        } else if (strcmp(argv[i], "--tree") == 0) {
            *tree = argv[++i];
        } else if (strncmp(argv[i], "--tree=", 7) == 0) {
            *tree = argv[i] + 7;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            snprintf(fmt, sizeof fmt, "%.40s: unknown option %%s", cmd);
            return usage_error(fmt, argv[i]);
        } else {
            pos[(*np)++] = argv[i];
        }
    }
    return 0;
}

int report_error(const char *file, const err_t *e)
{
    fprintf(stderr, "symcheck: %s: %s\n", file, e->msg);
    return EXIT_TROUBLE;
}

void crcstr(char *buf, size_t n, uint32_t crc, bool has)
{
    if (has)
        snprintf(buf, n, "0x%08x", crc);
    else
        snprintf(buf, n, "-");
}

int load_ko(const char *path, filebuf_t *fb, komod_t *m)
{
    err_t e;
    if (file_load(path, fb, &e) != 0)
        return report_error(path, &e);
    if (decomp_maybe(fb, &e) != 0) {
        file_free(fb);
        return report_error(path, &e);
    }
    if (ko_read(fb->data, fb->size, m, &e) != 0) {
        file_free(fb);
        return report_error(path, &e);
    }
    return 0;
}

bool ko_version_is_undef(const komod_t *m, const ko_version_t *v)
{
    return ko_find_undef(m, v->name) != NULL;
}
