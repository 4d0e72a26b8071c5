/* Helpers shared by the commands. */
#include <stdio.h>
#include <stdlib.h>
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

static int scan_one(const char *path, scanned_ko_t *l)
{
    if (load_ko(path, &l->fb, &l->m))
        return -1;
    err_t e;
    if (cs_scan(l->fb.data, l->fb.size, &l->cs, &e) != 0) {
        ko_free(&l->m);
        file_free(&l->fb);
        report_error(path, &e);
        return -1;
    }
    return 0;
}

int scanned_set_load(const char *tree, char **files, int nf, scanned_set_t *s)
{
    memset(s, 0, sizeof *s);
    err_t e;
    if (tree && find_modules(tree, &s->paths, &e) != 0) {
        strvec_free(&s->paths);
        return report_error(tree, &e);
    }
    for (int i = 0; !tree && i < nf; i++)
        strvec_push(&s->paths, files[i]);
    s->ko = xcalloc(s->paths.n ? s->paths.n : 1, sizeof *s->ko);
    s->in = xcalloc(s->paths.n ? s->paths.n : 1, sizeof *s->in);
    for (; s->n < s->paths.n; s->n++) {
        if (scan_one(s->paths.v[s->n], &s->ko[s->n]) != 0) {
            scanned_set_free(s);
            return EXIT_TROUBLE;
        }
        s->in[s->n] = (audit_input_t){s->paths.v[s->n], &s->ko[s->n].m, &s->ko[s->n].cs};
    }
    return 0;
}

void scanned_set_free(scanned_set_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        cs_free(&s->ko[i].cs);
        ko_free(&s->ko[i].m);
        file_free(&s->ko[i].fb);
    }
    free(s->ko);
    free(s->in);
    strvec_free(&s->paths);
    memset(s, 0, sizeof *s);
}
