/* Unit tests for symcheck's parsers and readers. Run from the build dir:
 *   ./unit_test ../tests/fixtures ../build/fixtures
 * Prints "N passed, M failed" as its last line; exit 0 only when nothing failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include <zlib.h>

#include "build.h"
#include "cmd.h"
#include "decomp.h"
#include "dwarfinfo.h"
#include "elfread.h"
#include "exports.h"
#include "frameread.h"
#include "ko.h"
#include "modexports.h"
#include "output.h"
#include "pool.h"
#include "symvers.h"
#include "util.h"
#include "x86dec.h"

static int passed, failed;
static const char *cur_test;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (cond) {                                                                 \
            passed++;                                                               \
        } else {                                                                    \
            failed++;                                                               \
            fprintf(stderr, "FAIL %s: %s:%d: %s\n", cur_test, __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

#define TEST(name) static void name(void)
#define RUN(name)            \
    do {                     \
        cur_test = #name;    \
        name();              \
    } while (0)

static const char *fixdir = "../tests/fixtures", *builtdir = "fixtures";

static int parse_str(const char *s, exportset_t *out, err_t *e)
{
    return symvers_parse((const unsigned char *)s, strlen(s), out, e);
}

TEST(symvers_valid)
{
    exportset_t s;
    err_t e;
    const char *txt = "0x4c9d28b0\tphys_base\tvmlinux\tEXPORT_SYMBOL\t\n"
                      "\n"
                      "0x039823de\tinit_uts_ns\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
                      "0xDEADbeef\tcxl_foo\tdrivers/cxl/core/cxl_core\tEXPORT_SYMBOL_GPL\tCXL\n"
                      "0x1\told_style\tvmlinux\tEXPORT_SYMBOL";   /* 4 fields, no final newline */
    CHECK(parse_str(txt, &s, &e) == 0);
    CHECK(s.n == 4);
    const export_t *x = exportset_find(&s, "cxl_foo");
    CHECK(x && x->crc == 0xdeadbeef && x->cls == EXP_GPL && strcmp(x->ns, "CXL") == 0 &&
          strcmp(x->module, "drivers/cxl/core/cxl_core") == 0);
    x = exportset_find(&s, "phys_base");
    CHECK(x && x->crc == 0x4c9d28b0 && x->cls == EXP_PLAIN && x->ns[0] == 0 && x->has_crc);
    x = exportset_find(&s, "old_style");
    CHECK(x && x->crc == 1 && x->ns[0] == 0);
    CHECK(exportset_find(&s, "nope") == NULL);
    CHECK(exportset_find(&s, "") == NULL);
    exportset_free(&s);
}

TEST(symvers_errors)
{
    static const struct { const char *txt; const char *msg; } cases[] = {
        {"", "empty file"},
        {"\n\n", "no entries"},
        {"0x1\tfoo\tvmlinux\n", "line 1: expected 4 or 5"},
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tNS\textra\n", "line 1: too many fields"},
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tNS\ta\tb\tc\n", "line 1: too many fields"},
        {"1234\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n", "bad CRC"},
        {"0x\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n", "bad CRC"},
        {"0x123456789\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n", "bad CRC"},
        {"0xzz\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n", "bad CRC"},
        {"0x1\t\tvmlinux\tEXPORT_SYMBOL\t\n", "bad symbol name"},
        {"0x1\tfo o\tvmlinux\tEXPORT_SYMBOL\t\n", "bad symbol name"},
        {"0x1\tfoo\t\tEXPORT_SYMBOL\t\n", "bad module"},
        {"0x1\tfoo\tvmlinux\tEXPORT_UNUSED_SYMBOL\t\n", "unknown export type"},
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tN S\n", "bad namespace"},
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tN\rS\n", "bad namespace"},   /* CR only at the end is a CRLF line end */
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n0x2\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n", "duplicate symbol foo"},
        {"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\ngarbage\n", "line 2:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        exportset_t s;
        err_t e = {{0}};
        int r = parse_str(cases[i].txt, &s, &e);
        CHECK(r == -1);
        CHECK(strstr(e.msg, cases[i].msg) != NULL);
        if (!strstr(e.msg, cases[i].msg))
            fprintf(stderr, "  case %zu: got '%s'\n", i, e.msg);
    }
    /* NUL byte inside a line */
    {
        const unsigned char b[] = "0x1\tfo\0o\tvmlinux\tEXPORT_SYMBOL\t\n";
        exportset_t s;
        err_t e;
        CHECK(symvers_parse(b, sizeof b - 1, &s, &e) == -1 && strstr(e.msg, "NUL"));
    }
    /* over-long line */
    {
        size_t n = SYMVERS_MAX_LINE + 100;
        char *b = xmalloc(n + 64);
        strcpy(b, "0x1\t");
        memset(b + 4, 'a', n);
        strcpy(b + 4 + n, "\tvmlinux\tEXPORT_SYMBOL\t\n");
        exportset_t s;
        err_t e;
        CHECK(parse_str(b, &s, &e) == -1 && strstr(e.msg, "too long"));
        free(b);
    }
    /* long but acceptable line */
    {
        size_t n = 1000;
        char *b = xmalloc(n + 64);
        strcpy(b, "0x1\t");
        memset(b + 4, 'a', n);
        strcpy(b + 4 + n, "\tvmlinux\tEXPORT_SYMBOL\t\n");
        exportset_t s;
        err_t e;
        CHECK(parse_str(b, &s, &e) == 0 && s.n == 1 && strlen(s.v[0].name) == n);
        if (s.n)
            exportset_free(&s);
        free(b);
    }
}

TEST(licences)
{
    const char *yes[] = {"GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL"};
    const char *no[] = {"Proprietary", "GPLv2", "gpl", "BSD", "", "Dual BSD/GPL ", "MIT"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        CHECK(license_is_gpl_compatible(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECK(!license_is_gpl_compatible(no[i]));
    CHECK(!license_is_gpl_compatible(NULL));
}

TEST(modinfo_parse)
{
    const unsigned char mi[] = "license=GPL\0\0\0author=x\0import_ns=A\0import_ns=B\0import_ns=A\0"
                               "license=Proprietary\0noequals\0depends=a,b\0name=mod\0vermagic=6.1.0 SMP \0tail=unterminated";
    komod_t m;
    memset(&m, 0, sizeof m);
    ko_parse_modinfo(mi, sizeof mi - 1, &m);
    CHECK(m.license && strcmp(m.license, "GPL") == 0);
    CHECK(m.import_ns.n == 2 && strcmp(m.import_ns.v[0], "A") == 0 && strcmp(m.import_ns.v[1], "B") == 0);
    CHECK(m.depends && strcmp(m.depends, "a,b") == 0);
    CHECK(m.modname && strcmp(m.modname, "mod") == 0);
    CHECK(m.vermagic && strcmp(m.vermagic, "6.1.0 SMP ") == 0);
    CHECK(m.modinfo.n == 11);
    CHECK(strcmp(m.modinfo.v[m.modinfo.n - 1], "tail=unterminated") == 0);
    ko_free(&m);
}

static int load(const char *dir, const char *name, filebuf_t *fb)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    err_t e;
    if (file_load(path, fb, &e) != 0) {
        fprintf(stderr, "cannot load %s: %s\n", path, e.msg);
        return -1;
    }
    return 0;
}

TEST(ko_fake)
{
    filebuf_t fb;
    if (load(builtdir, "fake_mod.ko", &fb) != 0) {
        CHECK(!"fixture fake_mod.ko");
        return;
    }
    komod_t m;
    err_t e;
    CHECK(ko_read(fb.data, fb.size, &m, &e) == 0);
    CHECK(m.n_undef == 6);
    bool saw_weak = false, saw_printk = false;
    for (size_t i = 0; i < m.n_undef; i++) {
        if (strcmp(m.undef[i].name, "weak_missing") == 0)
            saw_weak = m.undef[i].weak;
        if (strcmp(m.undef[i].name, "printk") == 0)
            saw_printk = !m.undef[i].weak;
    }
    CHECK(saw_weak && saw_printk);
    for (size_t i = 1; i < m.n_undef; i++)
        CHECK(strcmp(m.undef[i - 1].name, m.undef[i].name) < 0);
    CHECK(m.has_versions && m.n_vers == 6);
    const ko_version_t *v = ko_find_version(&m, "module_layout");
    CHECK(v && v->crc == 0x22222222);
    v = ko_find_version(&m, "kallsyms_lookup_name");
    CHECK(v && v->crc == 0x0badc0de);
    CHECK(m.license && strcmp(m.license, "GPL") == 0);
    CHECK(m.import_ns.n == 1 && strcmp(m.import_ns.v[0], "FAKE_NS") == 0);
    CHECK(m.modname && strcmp(m.modname, "fake_mod") == 0);
    bool rodata = false;
    for (size_t i = 0; i < m.n_datasecs; i++)
        if (memmem(m.datasecs[i].data, m.datasecs[i].size, "kallsyms_lookup_name", 20))
            rodata = true;
    CHECK(rodata);
    ko_free(&m);

    /* every truncation must fail cleanly (no crash, one-line message) */
    int ok_fail = 1;
    for (size_t n = 1; n < fb.size; n++) {
        unsigned char *b = xmalloc(n);
        memcpy(b, fb.data, n);
        err_t e2 = {{0}};
        komod_t m2;
        int r = ko_read(b, n, &m2, &e2);
        if (r == 0)
            ko_free(&m2);
        else if (!e2.msg[0] || strchr(e2.msg, '\n'))
            ok_fail = 0;
        free(b);
    }
    CHECK(ok_fail);
    /* truncation that cuts the section header table is always an error */
    {
        err_t e3;
        komod_t m3;
        unsigned char *b = xmalloc(fb.size - 1);
        memcpy(b, fb.data, fb.size - 1);
        CHECK(ko_read(b, fb.size - 1, &m3, &e3) == -1);
        free(b);
    }
    /* wrong class / machine / byte order */
    {
        unsigned char *b = xmalloc(fb.size);
        err_t e4;
        komod_t m4;
        memcpy(b, fb.data, fb.size);
        b[EI_CLASS] = ELFCLASS32;
        CHECK(ko_read(b, fb.size, &m4, &e4) == -1 && strstr(e4.msg, "32-bit"));
        memcpy(b, fb.data, fb.size);
        b[18] = EM_AARCH64 & 0xff;
        b[19] = EM_AARCH64 >> 8;
        CHECK(ko_read(b, fb.size, &m4, &e4) == -1 && strstr(e4.msg, "aarch64"));
        memcpy(b, fb.data, fb.size);
        b[EI_DATA] = ELFDATA2MSB;
        CHECK(ko_read(b, fb.size, &m4, &e4) == -1 && strstr(e4.msg, "byte order"));
        memcpy(b, fb.data, fb.size);
        b[0] = 'X';
        CHECK(ko_read(b, fb.size, &m4, &e4) == -1 && strstr(e4.msg, "not an ELF"));
        /* section header offset beyond the end */
        memcpy(b, fb.data, fb.size);
        uint64_t big = fb.size + 1000;
        memcpy(b + 0x28, &big, 8);
        CHECK(ko_read(b, fb.size, &m4, &e4) == -1);
        free(b);
    }
    /* a .ko is not a vmlinux */
    exportset_t s;
    ksym_info_t ki;
    CHECK(ksymtab_read(fb.data, fb.size, &s, &ki, &e) == -1 && strstr(e.msg, "vmlinux"));
    file_free(&fb);
}

TEST(ko_corrupt_sections)
{
    filebuf_t fb;
    if (load(builtdir, "fake_mod.ko", &fb) != 0) {
        CHECK(!"fixture");
        return;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, fb.data, sizeof eh);
    /* For every section header, corrupt offset/size/link/name in turn: must never crash. */
    int clean = 1;
    for (size_t i = 0; i < eh.e_shnum; i++) {
        for (int field = 0; field < 4; field++) {
            static const uint64_t vals[] = {0xffffffffffffff00ull, 0x7fffffff, 0x10000, 3};
            for (size_t vi = 0; vi < 4; vi++) {
                unsigned char *b = xmalloc(fb.size);
                memcpy(b, fb.data, fb.size);
                unsigned char *sh = b + eh.e_shoff + i * sizeof(Elf64_Shdr);
                uint64_t v = vals[vi];
                uint32_t v32 = (uint32_t)v;
                switch (field) {
                case 0: memcpy(sh + 24, &v, 8); break;   /* sh_offset */
                case 1: memcpy(sh + 32, &v, 8); break;   /* sh_size */
                case 2: memcpy(sh + 40, &v32, 4); break; /* sh_link */
                case 3: memcpy(sh + 0, &v32, 4); break;  /* sh_name */
                }
                komod_t m;
                err_t e = {{0}};
                if (ko_read(b, fb.size, &m, &e) == 0)
                    ko_free(&m);
                else if (!e.msg[0])
                    clean = 0;
                free(b);
            }
        }
    }
    CHECK(clean);
    file_free(&fb);
}

TEST(ksymtab_fake)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fake_build", builtdir);
    filebuf_t fb;
    if (load(dir, "vmlinux", &fb) != 0) {
        CHECK(!"fixture vmlinux");
        return;
    }
    exportset_t s;
    ksym_info_t ki;
    err_t e;
    CHECK(ksymtab_read(fb.data, fb.size, &s, &ki, &e) == 0);
    CHECK(s.n == 6 && ki.n_plain == 3 && ki.n_gpl == 3 && ki.has_crc);
    const export_t *x = exportset_find(&s, "ns_sym");
    CHECK(x && x->cls == EXP_GPL && x->crc == 0x44444444 && strcmp(x->ns, "FAKE_NS") == 0 &&
          strcmp(x->module, "vmlinux") == 0);
    x = exportset_find(&s, "printk");
    CHECK(x && x->cls == EXP_PLAIN && x->crc == 0x11111111 && x->ns[0] == 0);
    exportset_free(&s);
    /* a vmlinux is not a module */
    komod_t m;
    CHECK(ko_read(fb.data, fb.size, &m, &e) == -1 && strstr(e.msg, "relocatable"));
    /* DWARF */
    dw_func_t f[3] = {{.want = "__traceiter_balance_dirty_pages"},
                      {.want = "perf_trace_global_dirty_state"},
                      {.want = "__traceiter_global_dirty_state"}};
    CHECK(dw_find_functions(fb.data, fb.size, f, 3, &e) == DW_OK);
    CHECK(f[0].found && f[0].n_params == 13);
    if (f[0].n_params == 13) {
        CHECK(strcmp(f[0].params[0].name, "__data") == 0 && strcmp(f[0].params[0].type, "void *") == 0);
        CHECK(strcmp(f[0].params[1].type, "struct bdi_writeback *") == 0);
        CHECK(strcmp(f[0].params[11].name, "pause") == 0 && strcmp(f[0].params[11].type, "long int") == 0);
    }
    CHECK(f[1].found && f[1].n_params == 4);
    if (f[1].n_params == 4)
        CHECK(strcmp(f[1].params[3].type, "const char * const *") == 0);
    CHECK(!f[2].found);
    for (int i = 0; i < 3; i++)
        dw_func_clear(&f[i]);
    dw_func_t ft = {.want = "fake_types"};
    CHECK(dw_find_functions(fb.data, fb.size, &ft, 1, &e) == DW_OK);
    CHECK(ft.found && ft.n_params == 6 && ft.variadic);
    if (ft.n_params == 6) {
        static const char *const want[6] = {
            "int (*)(void *, long int)", "volatile const unsigned int *", "fake_ulong",
            "enum fake_e", "union fake_u *", "char[3][5] *",
        };
        for (int i = 0; i < 6; i++) {
            CHECK(strcmp(ft.params[i].type, want[i]) == 0);
            if (strcmp(ft.params[i].type, want[i]) != 0)
                fprintf(stderr, "  param %d: got '%s'\n", i, ft.params[i].type);
        }
    }
    dw_func_clear(&ft);
    /* truncations of the vmlinux must never crash */
    int clean = 1;
    for (size_t n = 1; n < fb.size; n += 7) {
        unsigned char *b = xmalloc(n);
        memcpy(b, fb.data, n);
        err_t e2 = {{0}};
        exportset_t s2;
        if (ksymtab_read(b, n, &s2, &ki, &e2) == 0)
            exportset_free(&s2);
        else if (!e2.msg[0])
            clean = 0;
        free(b);
    }
    CHECK(clean);
    file_free(&fb);
}

TEST(no_dwarf)
{
    filebuf_t fb;
    if (load(builtdir, "fake_mod.ko", &fb) != 0) {
        CHECK(!"fixture");
        return;
    }
    dw_func_t f = {.want = "init_module"};
    err_t e;
    CHECK(dw_find_functions(fb.data, fb.size, &f, 1, &e) == DW_NO_DWARF);
    dw_func_clear(&f);
    file_free(&fb);
}

TEST(build_open_fake)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fake_build", builtdir);
    build_t b;
    err_t e;
    const char *ep;
    CHECK(build_open(dir, "X", BUILD_LOAD_VMLINUX, &b, &ep, &e) == 0);
    build_merge(&b);
    CHECK(b.symvers.n == 7 && b.ksym.n == 6 && b.merged.n == 7);
    CHECK(build_find(&b, "mod_helper") && build_find(&b, "printk") && !build_find(&b, "nope"));
    CHECK(build_has_crcs(&b));
    CHECK(build_count_module(&b, "vmlinux") == 6);
    CHECK(strcmp(b.label, "X") == 0);
    build_free(&b);
    CHECK(build_open("/nonexistent/dir", NULL, 0, &b, &ep, &e) == -1 && strstr(e.msg, "no such"));
    build_free(&b);
    CHECK(build_open(fixdir, NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) == -1 && strstr(e.msg, "neither"));
    build_free(&b);
    CHECK(build_open(dir, NULL, BUILD_NEED_SYMVERS, &b, &ep, &e) == 0 && b.vmlinux_path == NULL);
    build_free(&b);
}

static char *capture_json(const char *s)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    json_write_string(f, s);
    fclose(f);
    return buf;
}

TEST(json_strings)
{
    char *o = capture_json("a\"b\\c\n\t\x01");
    CHECK(strcmp(o, "\"a\\\"b\\\\c\\n\\t\\u0001\"") == 0);
    free(o);
    o = capture_json("J\xc3\xa9r\xc3\xb4me");   /* valid UTF-8 passes */
    CHECK(strcmp(o, "\"J\xc3\xa9r\xc3\xb4me\"") == 0);
    free(o);
    o = capture_json("\xff\xc3");                /* invalid bytes escaped */
    CHECK(strcmp(o, "\"\\u00ff\\u00c3\"") == 0);
    free(o);
    o = capture_json("\xed\xa0\x80");            /* surrogate is invalid */
    CHECK(strcmp(o, "\"\\u00ed\\u00a0\\u0080\"") == 0);
    free(o);

    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    json_t j;
    json_init(&j, f);
    json_obj_begin(&j);
    json_key(&j, "a"); json_int(&j, 1);
    json_key(&j, "b"); json_arr_begin(&j); json_str(&j, "x"); json_null(&j); json_bool(&j, true);
    json_crc(&j, 0xab, true); json_arr_end(&j);
    json_key(&j, "c"); json_obj_begin(&j); json_obj_end(&j);
    /* json_str_obj: string members in order, NULL as null, escaped, none */
    json_key(&j, "d"); json_arr_begin(&j);
    json_str_obj(&j, 2, "kind", "k", "via", NULL); json_str_obj(&j, 0); json_str_obj(&j, 1, "q\"", "v\n");
    json_arr_end(&j);
    json_obj_end(&j);
    fclose(f);
    CHECK(strcmp(buf, "{\"a\":1,\"b\":[\"x\",null,true,\"0x000000ab\"],\"c\":{},"
                      "\"d\":[{\"kind\":\"k\",\"via\":null},{},{\"q\\\"\":\"v\\n\"}]}") == 0);
    free(buf);
}

/* xgrow: capacity first, then doubling; the elements kept. */
TEST(grow_arrays)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (; n < 11; n++) {
        v = xgrow(v, n, &cap, sizeof *v, 4);
        v[n] = (int)n * 3;
        CHECK(cap == (n < 4 ? 4 : n < 8 ? 8 : 16));
    }
    for (size_t i = 0; i < n; i++)
        CHECK(v[i] == (int)i * 3);
    free(v);
}

/* parse_tree_args: the options check and audit share, and their usage errors (stderr not checked). */
TEST(tree_args)
{
    char *argv[] = {"-q", "a.ko", "--tree", "DIR", "b", "--tree=T2", NULL};
    char *pos[8] = {0};
    const char *tree = NULL;
    bool quiet = false;
    int np = 0;
    CHECK(parse_tree_args("check", 6, argv, &quiet, &tree, pos, &np) == 0);
    CHECK(quiet && tree && strcmp(tree, "T2") == 0 && np == 2 && strcmp(pos[0], "a.ko") == 0 &&
          strcmp(pos[1], "b") == 0);
    np = 0;
    tree = NULL;
    /* without quiet, -q is an unknown option */
    CHECK(parse_tree_args("audit", 6, argv, NULL, &tree, pos, &np) == EXIT_TROUBLE && np == 0);
    char *last[] = {"x.ko", "--tree", NULL};
    np = 0;
    CHECK(parse_tree_args("audit", 2, last, NULL, &tree, pos, &np) == EXIT_TROUBLE && tree == NULL);
    char *dash[] = {"-", "--tree", "D", NULL};
    np = 0;
    CHECK(parse_tree_args("audit", 3, dash, NULL, &tree, pos, &np) == 0 && np == 1 &&
          strcmp(pos[0], "-") == 0 && strcmp(tree, "D") == 0);
}

TEST(tables)
{
    table_t t;
    table_init(&t, 3, "A", "BB", "C");
    table_row(&t, "xxxx", "", "z");
    table_row(&t, "y", "long-cell", NULL);
    CHECK(table_rows(&t) == 2);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    table_print(&t, f, "");
    fclose(f);
    CHECK(strcmp(buf, "A     BB         C\nxxxx  -          z\ny     long-cell  -\n") == 0);
    free(buf);
    table_free(&t);
}

TEST(file_load_errors)
{
    filebuf_t fb;
    err_t e;
    CHECK(file_load("/nonexistent/x", &fb, &e) == -1 && strstr(e.msg, "No such file"));
    CHECK(file_load("/", &fb, &e) == -1 && strstr(e.msg, "directory"));
    char tmpl[] = "/tmp/symcheck-unit-XXXXXX";
    int fd = mkstemp(tmpl);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(file_load(tmpl, &fb, &e) == -1 && strstr(e.msg, "empty"));
        unlink(tmpl);
        close(fd);
    }
}

/* ---- compute functions of the commands (cmd_*.c), on hand-made inputs */

/* A module with undefined symbols ("!name" is weak), __versions entries and .modinfo. */
static void mk_mod(komod_t *m, const char *const *undef, size_t nu, const char *const *vers,
                   const uint32_t *crcs, size_t nv, const char *modinfo, size_t mlen)
{
    memset(m, 0, sizeof *m);
    m->undef = xcalloc(nu, sizeof *m->undef);
    for (size_t i = 0; i < nu; i++) {
        m->undef[i].weak = undef[i][0] == '!';
        m->undef[i].name = xstrdup(undef[i] + (undef[i][0] == '!'));
    }
    m->n_undef = nu;
    m->has_versions = nv > 0;
    m->vers = xcalloc(nv, sizeof *m->vers);
    for (size_t i = 0; i < nv; i++) {
        m->vers[i].name = xstrdup(vers[i]);
        m->vers[i].crc = crcs[i];
    }
    m->n_vers = nv;
    ko_parse_modinfo((const unsigned char *)modinfo, mlen, m);
}

static void mk_build(build_t *b, const char *symvers, bool with_ksym)
{
    err_t e;
    memset(b, 0, sizeof *b);
    b->path = xstrdup("B");
    b->label = xstrdup("B");
    if (symvers) {
        b->symvers_path = xstrdup("B/Module.symvers");
        CHECK(parse_str(symvers, &b->symvers, &e) == 0);
    }
    if (with_ksym) {
        b->vmlinux_path = xstrdup("B/vmlinux");
        exportset_add(&b->ksym, "a", "vmlinux", "", 1, true, EXP_PLAIN);
        exportset_add(&b->ksym, "b", "vmlinux", "", 2, true, EXP_PLAIN);
        exportset_add(&b->ksym, "c", "vmlinux", "", 3, true, EXP_GPL);
        exportset_add(&b->ksym, "d", "vmlinux", "NS", 4, true, EXP_PLAIN);
        exportset_add(&b->ksym, "e", "vmlinux", "", 5, true, EXP_PLAIN);
        exportset_add(&b->ksym, "f", "vmlinux", "", 6, true, EXP_PLAIN);
        exportset_sort(&b->ksym);
    }
}

static const disagreement_t *find_dis(const exports_result_t *r, const char *kind, const char *sym)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].kind, kind) == 0 && strcmp(r->v[i].symbol, sym) == 0)
            return &r->v[i];
    return NULL;
}

TEST(exports_compute_kinds)
{
    build_t b;
    mk_build(&b, "0x1\ta\tvmlinux\tEXPORT_SYMBOL\t\n"       /* agrees */
                 "0x2\tb\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"   /* class */
                 "0x9\tc\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"   /* crc */
                 "0x4\td\tvmlinux\tEXPORT_SYMBOL\tOTHER\n"  /* namespace */
                 "0x5\te\tdrivers/x\tEXPORT_SYMBOL\t\n"     /* owner */
                 "0x7\tg\tvmlinux\tEXPORT_SYMBOL\t\n"       /* missing in vmlinux */
                 "0x8\th\tdrivers/y\tEXPORT_SYMBOL\t\n",    /* a module's: not compared */
             true);                                          /* f: missing in symvers */
    exports_result_t r;
    exports_compute(&b, &r);
    CHECK(r.compared && r.symvers_vmlinux == 5 && b.merged.n == 8);
    CHECK(r.n == 6);
    const disagreement_t *d = find_dis(&r, "class", "b");
    CHECK(d && strcmp(d->symvers, "EXPORT_SYMBOL_GPL") == 0 && strcmp(d->vmlinux, "EXPORT_SYMBOL") == 0);
    d = find_dis(&r, "crc", "c");
    CHECK(d && strcmp(d->symvers, "0x00000009") == 0 && strcmp(d->vmlinux, "0x00000003") == 0);
    d = find_dis(&r, "namespace", "d");
    CHECK(d && strcmp(d->symvers, "OTHER") == 0 && strcmp(d->vmlinux, "NS") == 0);
    d = find_dis(&r, "owner", "e");
    CHECK(d && strcmp(d->symvers, "drivers/x") == 0 && strcmp(d->vmlinux, "vmlinux") == 0);
    d = find_dis(&r, "missing-in-vmlinux", "g");
    CHECK(d && strcmp(d->vmlinux, "-") == 0);
    d = find_dis(&r, "missing-in-symvers", "f");
    CHECK(d && strcmp(d->symvers, "-") == 0 && strcmp(d->vmlinux, "EXPORT_SYMBOL") == 0);
    exports_result_free(&r);
    build_free(&b);
    /* one source only: nothing compared */
    mk_build(&b, NULL, true);
    exports_compute(&b, &r);
    CHECK(!r.compared && r.n == 0 && r.symvers_vmlinux == 0 && b.merged.n == 6);
    exports_result_free(&r);
    build_free(&b);
}

TEST(module_compute_fields)
{
    static const char *const und[] = {"a", "!w"};
    static const char *const ver[] = {"module_layout", "a"};
    static const uint32_t crc[] = {0x10, 0x20};
    static const char mi[] = "license=Proprietary\0depends=x,,y\0name=m";
    komod_t m;
    mk_mod(&m, und, 2, ver, crc, 2, mi, sizeof mi);
    module_result_t r;
    module_compute(&m, NULL, 0, &r);
    CHECK(m.undef == NULL);   /* ownership moved */
    CHECK(r.exports.n == 0 && strcmp(r.exports_error, "no module image") == 0);
    CHECK(!r.gpl_compatible);
    CHECK(r.depends.n == 2 && strcmp(r.depends.v[0], "x") == 0 && strcmp(r.depends.v[1], "y") == 0);
    CHECK(r.undef_ver[0] && r.undef_ver[0]->crc == 0x20 && r.undef_ver[1] == NULL);
    CHECK(r.n_extra == 1 && strcmp(r.extra_ver[0]->name, "module_layout") == 0);
    module_result_free(&r);
}

static const finding_t *find_finding(const check_result_t *r, const char *kind, const char *sym)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (strcmp(r->findings[i].kind, kind) == 0 &&
            (sym ? r->findings[i].symbol && strcmp(r->findings[i].symbol, sym) == 0 : !r->findings[i].symbol))
            return &r->findings[i];
    return NULL;
}

TEST(check_compute_findings)
{
    build_t b;
    mk_build(&b, "0x1\tok_sym\tvmlinux\tEXPORT_SYMBOL\t\n"
                 "0x2\tgpl_sym\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
                 "0x3\tcrc_sym\tvmlinux\tEXPORT_SYMBOL\t\n"
                 "0x4\tns_sym\tvmlinux\tEXPORT_SYMBOL_GPL\tNS\n"
                 "0x5\tnover_sym\tvmlinux\tEXPORT_SYMBOL\t\n"
                 "0x6\tmodule_layout\tvmlinux\tEXPORT_SYMBOL\t\n", false);
    static const char *const und[] = {"crc_sym", "gone", "gpl_sym", "!gone_weak", "nover_sym", "ns_sym", "ok_sym"};
    static const char *const ver[] = {"module_layout", "ok_sym", "gpl_sym", "crc_sym", "ns_sym"};
    static const uint32_t crc[] = {0x66, 0x1, 0x2, 0x33, 0x4};
    static const char mi[] = "license=BSD\0name=m";   /* not GPL-compatible */
    komod_t m;
    mk_mod(&m, und, 7, ver, crc, 5, mi, sizeof mi);
    check_result_t r;
    check_compute(&m, &b, &r);
    CHECK(!r.gpl_ok && r.n_syms == 7);
    CHECK(find_finding(&r, "unknown-symbol", "gone"));
    CHECK(!find_finding(&r, "unknown-symbol", "gone_weak"));
    CHECK(find_finding(&r, "gpl-only", "gpl_sym"));
    const finding_t *f = find_finding(&r, "crc-mismatch", "crc_sym");
    CHECK(f && strstr(f->message, "module 0x00000033, build 0x00000003"));
    CHECK(find_finding(&r, "crc-mismatch", "module_layout"));
    CHECK(find_finding(&r, "no-version", "nover_sym"));
    CHECK(find_finding(&r, "namespace-not-imported", "ns_sym") && find_finding(&r, "gpl-only", "ns_sym"));
    CHECK(r.n_findings == 7);
    static const char *const status[] = {"crc-mismatch", "unknown", "gpl-only", "weak-missing",
                                         "no-version", "several", "ok"};
    for (size_t i = 0; i < 7 && i < r.n_syms; i++)
        CHECK(strcmp(r.syms[i].status, status[i]) == 0);
    CHECK(r.syms[6].x && r.syms[6].v && r.syms[6].v->crc == 1 && !r.syms[1].x);
    check_result_free(&r);
    ko_free(&m);
    /* no licence, no __versions against a build with CRCs */
    static const char mi2[] = "name=m";
    mk_mod(&m, und + 6, 1, NULL, NULL, 0, mi2, sizeof mi2);
    check_compute(&m, &b, &r);
    CHECK(find_finding(&r, "missing-license", NULL) && find_finding(&r, "no-versions-section", NULL));
    CHECK(r.n_findings == 2 && r.findings[0].symbol == NULL);
    check_result_free(&r);
    ko_free(&m);
    build_free(&b);
}

TEST(diff_compute_changes)
{
    exportset_t a, b;
    err_t e;
    CHECK(parse_str("0x1\tgone\tvmlinux\tEXPORT_SYMBOL\t\n"
                    "0x2\tsame\tvmlinux\tEXPORT_SYMBOL\t\n"
                    "0x3\tall\tvmlinux\tEXPORT_SYMBOL\t\n", &a, &e) == 0);
    CHECK(parse_str("0x2\tsame\tvmlinux\tEXPORT_SYMBOL\t\n"
                    "0x4\tall\tdrivers/x\tEXPORT_SYMBOL_GPL\tNS\n"
                    "0x5\tnew\tvmlinux\tEXPORT_SYMBOL\t\n", &b, &e) == 0);
    diff_result_t r;
    diff_compute(&a, &b, &r);
    CHECK(r.n == 6);
    CHECK(r.counts[DIFF_ADDED] == 1 && r.counts[DIFF_REMOVED] == 1 && r.counts[DIFF_CRC] == 1 &&
          r.counts[DIFF_CLASS] == 1 && r.counts[DIFF_NAMESPACE] == 1 && r.counts[DIFF_OWNER] == 1);
    /* name order, then crc, class, namespace, owner for one symbol */
    static const enum diff_kind order[] = {DIFF_CRC, DIFF_CLASS, DIFF_NAMESPACE, DIFF_OWNER, DIFF_REMOVED, DIFF_ADDED};
    for (size_t i = 0; i < 6 && i < r.n; i++)
        CHECK(r.v[i].kind == order[i]);
    CHECK(r.n == 6 && r.v[4].new == NULL && strcmp(r.v[4].old->name, "gone") == 0 &&
          r.v[5].old == NULL && strcmp(r.v[5].new->name, "new") == 0);
    diff_result_free(&r);
    diff_compute(&a, &a, &r);
    CHECK(r.n == 0);
    diff_result_free(&r);
    exportset_free(&a);
    exportset_free(&b);
}

TEST(audit_compute_flags)
{
    /* name-level findings: kallsyms API references and its name in data; a bare register_kprobe
     * reference is no longer one (it is classified from the code: see test_audit.py) */
    static const char *const und[] = {"kallsyms_lookup_name", "printk", "register_kprobe"};
    static const char mi[] = "name=m";
    komod_t m;
    mk_mod(&m, und, 3, NULL, NULL, 0, mi, sizeof mi);
    static const unsigned char data[] = "xxkallsyms_lookup_name\0kallsyms_lookup_name";
    m.datasecs = xcalloc(1, sizeof *m.datasecs);
    m.datasecs[0] = (ko_datasec_t){xstrdup(".rodata"), 0, data, sizeof data};
    m.n_datasecs = 1;
    cs_module_t cs = {0};
    audit_input_t in = {"m.ko", &m, &cs};
    audit_result_t r;
    audit_compute(&in, 1, &r);
    CHECK(r.n == 1 && r.flagged == 1 && r.findings_total == 3);
    const audit_module_t *am = &r.mods[0];
    CHECK(am->n == 3);
    if (am->n == 3) {
        CHECK(strcmp(am->v[0].kind, "undefined-reference") == 0 && strcmp(am->v[0].what, "kallsyms_lookup_name") == 0);
        CHECK(strcmp(am->v[1].kind, "string") == 0 && strcmp(am->v[1].where, ".rodata+0x2") == 0);
        CHECK(strcmp(am->v[2].where, ".rodata+0x17") == 0);
    }
    audit_result_free(&r);
    ko_free(&m);
}

/* x86dec: instruction lengths and operands, written from the Intel SDM's encoding tables. */
TEST(x86dec_lengths)
{
    static const struct {
        const char *what;
        unsigned char b[16];
        size_t n, len;
    } cases[] = {
        {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, 4},
        {"push %rbp", {0x55}, 1, 1},
        {"push %r12", {0x41, 0x54}, 2, 2},
        {"sub $0xa8,%rsp", {0x48, 0x81, 0xec, 0xa8, 0, 0, 0}, 7, 7},
        {"add $-128,%rsp", {0x48, 0x83, 0xc4, 0x80}, 4, 4},
        {"lea 0x8(%rsp),%rbp", {0x48, 0x8d, 0x6c, 0x24, 0x08}, 5, 5},
        {"movq $0,0x30(%rsp)", {0x48, 0xc7, 0x44, 0x24, 0x30, 0, 0, 0, 0}, 9, 9},
        {"mov 0x88(%rsp),%rax", {0x48, 0x8b, 0x84, 0x24, 0x88, 0, 0, 0}, 8, 8},
        {"mov 0(%rip),%rax", {0x48, 0x8b, 0x05, 0, 0, 0, 0}, 7, 7},
        {"movabs $imm64,%rax", {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 10},
        {"mov $imm32,%eax", {0xb8, 1, 2, 3, 4}, 5, 5},
        {"mov $imm16,%ax", {0x66, 0xb8, 1, 2}, 4, 4},
        {"testb $1,(%rdi)", {0xf6, 0x07, 0x01}, 3, 3},
        {"notl (%rdi)", {0xf7, 0x17}, 2, 2},
        {"testl $1,(%rdi)", {0xf7, 0x07, 1, 0, 0, 0}, 6, 6},
        {"rep stos", {0xf3, 0x48, 0xab}, 3, 3},
        {"call rel32", {0xe8, 0, 0, 0, 0}, 5, 5},
        {"jne rel32", {0x0f, 0x85, 0, 0, 0, 0}, 6, 6},
        {"nopw 0(%rax,%rax,1)", {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, 6, 6},
        {"mov %gs:0(%rip),%rax", {0x65, 0x48, 0x8b, 0x05, 0, 0, 0, 0}, 8, 8},
        {"movzbl 0x10(%rdi),%eax", {0x0f, 0xb6, 0x47, 0x10}, 4, 4},
        {"pshufd $0,%xmm1,%xmm0", {0x66, 0x0f, 0x70, 0xc1, 0x00}, 5, 5},
        {"pinsrd (3-byte map, imm8)", {0x66, 0x0f, 0x3a, 0x22, 0xc0, 0x01}, 6, 6},
        {"vmovdqu (VEX c5)", {0xc5, 0xfe, 0x6f, 0x07}, 4, 4},
        {"vpxor (VEX c4)", {0xc4, 0xe1, 0x7d, 0xef, 0xc0}, 5, 5},
        {"vzeroupper", {0xc5, 0xf8, 0x77}, 3, 3},
        {"mov moffs64,%al", {0xa0, 1, 2, 3, 4, 5, 6, 7, 8}, 9, 9},
        {"enter $8,$0", {0xc8, 0x08, 0x00, 0x00}, 4, 4},
        {"ret $8", {0xc2, 0x08, 0x00}, 3, 3},
        {"push es (invalid in 64-bit)", {0x06}, 1, 0},
        {"aaa (invalid in 64-bit)", {0x37}, 1, 0},
        {"truncated disp32", {0x48, 0x8b, 0x84, 0x24, 0x88}, 5, 0},
        {"sixteen prefixes", {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                              0x66, 0x66, 0x90}, 16, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        x86_insn_t in;
        size_t len = x86_decode(cases[i].b, cases[i].n, &in);
        if (len != cases[i].len)
            fprintf(stderr, "  %s: %zu, want %zu\n", cases[i].what, len, cases[i].len);
        CHECK(len == cases[i].len);
    }
    x86_insn_t in;
    CHECK(x86_decode((const unsigned char *)"\x48\x8b\x84\x24\x88\x00\x00\x00", 8, &in) == 8 &&
          in.base == X86_RSP && in.index == X86_NOREG && in.disp == 0x88 && in.reg == 0);
    CHECK(x86_decode((const unsigned char *)"\x4c\x8b\x04\xcb", 4, &in) == 4 && in.base == 3 && in.index == 1 &&
          in.reg == 8);   /* mov (%rbx,%rcx,8),%r8 */
    CHECK(x86_decode((const unsigned char *)"\x41\x8b\x45\x00", 4, &in) == 4 && in.base == 13 && in.disp == 0);
    CHECK(x86_decode((const unsigned char *)"\x8b\x05\x10\x00\x00\x00", 6, &in) == 6 && in.base == X86_RIP);
}

/* frameread on the hand-written functions of kp_frame.S: each says how .addr is reached. */
TEST(frameread_fixture)
{
    static const struct {
        const char *fn;
        fr_verdict_t want;
    } cases[] = {
        {"t_neighbours", FR_NOT_READ}, {"t_leave", FR_NOT_READ}, {"t_copy", FR_READ},
        {"t_add", FR_READ}, {"t_xchg", FR_READ}, {"t_epoch", FR_UNKNOWN},
        {"t_spill", FR_UNKNOWN}, {"t_pass", FR_READ}, {"t_index", FR_UNKNOWN},
        {"t_undecodable", FR_UNKNOWN}, {"t_static", FR_UNKNOWN}, {"t_kretprobe", FR_READ},
        {"t_join", FR_UNKNOWN},
    };
    filebuf_t fb;
    if (load(builtdir, "audit/kp_frame.ko", &fb) != 0) {
        CHECK(!"fixture audit/kp_frame.ko");
        return;
    }
    cs_module_t cs;
    err_t e;
    CHECK(cs_scan(fb.data, fb.size, &cs, &e) == 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        long fi = cs_find_fn(&cs, cases[i].fn);
        CHECK(fi >= 0);
        if (fi < 0)
            continue;
        const cs_func_t *f = &cs.fn[fi];
        size_t reg = (size_t)-1, unreg[4], n_unreg = 0;
        for (size_t k = 0; k < f->n_ev; k++) {
            const char *t = f->ev[k].kind == CS_CALL ? f->ev[k].target : NULL;
            if (t && strncmp(t, "register_k", 10) == 0)
                reg = f->ev[k].off - f->addr;
            if (t && strncmp(t, "unregister_k", 12) == 0 && n_unreg < 4)
                unreg[n_unreg++] = f->ev[k].off - f->addr;
        }
        fr_verdict_t v = fr_arg0_field_read(f->code, f->size, reg, 0x28, 8, unreg, n_unreg);
        if (v != cases[i].want)
            fprintf(stderr, "  %s: verdict %d, want %d\n", cases[i].fn, (int)v, (int)cases[i].want);
        CHECK(reg != (size_t)-1 && v == cases[i].want);
    }
    /* the neighbouring fields of .addr are read in t_neighbours: asking about them says so */
    long fi = cs_find_fn(&cs, "t_neighbours");
    if (fi >= 0) {
        const cs_func_t *f = &cs.fn[fi];
        size_t reg = 0;
        for (size_t k = 0; k < f->n_ev; k++)
            if (f->ev[k].kind == CS_CALL && strcmp(f->ev[k].target, "register_kprobe") == 0)
                reg = f->ev[k].off - f->addr;
        CHECK(fr_arg0_field_read(f->code, f->size, reg, 0x20, 8, NULL, 0) == FR_READ);
        CHECK(fr_arg0_field_read(f->code, f->size, reg, 0x30, 8, NULL, 0) == FR_READ);
        CHECK(fr_arg0_field_read(f->code, f->size, reg + 1, 0x28, 8, NULL, 0) == FR_UNKNOWN);
        CHECK(fr_arg0_field_read(NULL, 0, 0, 0x28, 8, NULL, 0) == FR_UNKNOWN);
    }
    cs_free(&cs);
    file_free(&fb);
}

/* calltypes: the compute function on the built fixtures (wrong_return.ko against the stand-in
 * kernel), and the canonical types it compares (typedefs resolved, base types by encoding). */
static int load_kernel_dwarf(filebuf_t *fb, dwt_t *d)
{
    char path[512];
    err_t e;
    snprintf(path, sizeof path, "%s/calltypes/vmlinux", builtdir);
    if (file_load(path, fb, &e) != 0)
        return -1;
    return dwt_open(fb->data, fb->size, d, &e) == 1 ? 0 : -1;
}

TEST(dwt_types)
{
    filebuf_t fb;
    dwt_t d;
    CHECK(load_kernel_dwarf(&fb, &d) == 0);
    if (!d.dw)
        return;
    static const char *const names[] = {"alloc_thing", "block_class", "irq_descs", "no_such_symbol"};
    dwt_entity_t ent[4];
    size_t variants[4];
    dwt_find_entities(&d, names, 4, ent, variants);
    CHECK(ent[0].is_function && ent[0].n_params == 1 && ent[0].prototyped);
    if (ent[0].n_params == 1)
        CHECK(strcmp(ent[0].params[0].written, "gfp_t") == 0 && strcmp(ent[0].params[0].exact, "u32") == 0);
    CHECK(strcmp(ent[0].type.exact, "void*") == 0 && strcmp(ent[0].decl, "void * (gfp_t)") == 0);
    CHECK(!ent[1].is_function && strcmp(ent[1].type.exact, "struct class") == 0);
    CHECK(strcmp(ent[2].type.exact, "struct irq_desc[16]") == 0);
    CHECK(ent[3].decl == NULL && variants[0] == 0);
    for (int i = 0; i < 4; i++)
        dwt_entity_free(&ent[i]);
    dwt_close(&d);
    file_free(&fb);
}

TEST(calltypes_compute_fixture)
{
    filebuf_t kfb;
    dwt_t kernel;
    CHECK(load_kernel_dwarf(&kfb, &kernel) == 0);
    if (!kernel.dw)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/calltypes/wrong_return.ko", builtdir);
    char *files[] = {path};
    scanned_set_t set;
    CHECK(scanned_set_load(NULL, files, 1, &set) == 0);
    audit_result_t audit;
    audit_compute(set.in, set.n, &audit);
    err_t e;
    dwt_t dw;
    elfr_image_t im;
    CHECK(dwt_relocate(set.ko[0].fb.data, set.ko[0].fb.size, &e) == 0);
    CHECK(dwt_open(set.ko[0].fb.data, set.ko[0].fb.size, &dw, &e) == 1);
    CHECK(elfr_image_load(dw.elf, set.ko[0].fb.data, set.ko[0].fb.size, &im, &e) == 0);
    calltypes_module_t mod = {&set.in[0], &im, &dw};
    calltypes_result_t r;
    calltypes_compute(&mod, 1, &audit, &kernel, &r);
    CHECK(r.n == 2 && r.mismatch == 2 && r.match == 0 && r.modules == 1);
    for (size_t i = 0; i < r.n; i++) {
        const calltype_item_t *it = &r.v[i];
        bool prio = strcmp(it->name, "task_prio") == 0;
        CHECK(strcmp(it->status, "mismatch") == 0);
        CHECK(strcmp(it->problem, prio ? "return-type" : "param-type") == 0);
        CHECK(strcmp(it->receiver, prio ? "task_prio_sym" : "pfnblock_sym") == 0);
        CHECK(strcmp(it->module, "wrong_return") == 0 && strcmp(it->kernel_kind, "function") == 0);
    }
    calltypes_result_free(&r);
    elfr_image_free(&im);
    dwt_close(&dw);
    audit_result_free(&audit);
    scanned_set_free(&set);
    dwt_close(&kernel);
    file_free(&kfb);
}

TEST(audit_identifier)
{
    CHECK(cs_is_identifier("task_prio") && cs_is_identifier("_x.isra.0") && cs_is_identifier("a1"));
    CHECK(!cs_is_identifier("") && !cs_is_identifier("1abc") && !cs_is_identifier("LTTng: %s\n") &&
          !cs_is_identifier("a b") && !cs_is_identifier(NULL));
}

TEST(seed_compute)
{
    strvec_t s = {0};
    seed_parse_list("a, b\tc,,a", &s);
    CHECK(s.n == 3 && strcmp(s.v[2], "c") == 0);
    strvec_free(&s);
    seed_default_symbols(&s);
    CHECK(s.n == 10 && strcmp(s.v[0], "task_prio") == 0);
    strvec_free(&s);
    build_t b;
    mk_build(&b, "0x1\ta\tvmlinux\tEXPORT_SYMBOL\t\n", false);
    seed_dwarf_t d;
    seed_dwarf_compute(&b, &d);
    CHECK(d.status == DW_NO_DWARF && strcmp(d.error, "no vmlinux") == 0 && !d.hit[0] && !d.hit[1]);
    seed_dwarf_free(&d);
    build_free(&b);
    char dir[4096];
    err_t e;
    const char *ep;
    snprintf(dir, sizeof dir, "%s/fake_build", builtdir);
    if (build_open(dir, NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) != 0) {
        CHECK(!"fixture fake_build");
        return;
    }
    seed_dwarf_compute(&b, &d);
    CHECK(d.status == DW_OK);
    CHECK(d.hit[0] && strcmp(d.hit[0]->want, "perf_trace_global_dirty_state") == 0);
    CHECK(d.hit[1] && strcmp(d.hit[1]->want, "__traceiter_balance_dirty_pages") == 0 && d.hit[1]->n_params == 13);
    seed_dwarf_free(&d);
    build_free(&b);
}

TEST(decompress_fixtures)
{
    filebuf_t plain;
    if (load(builtdir, "fake_mod.ko", &plain) != 0) {
        CHECK(!"fixture fake_mod.ko");
        return;
    }
    CHECK(comp_detect(plain.data, plain.size) == COMP_NONE);
    static const struct { const char *file; enum comp_kind kind; } cases[] = {
        {"fake_mod.ko.xz", COMP_XZ}, {"fake_mod.ko.zst", COMP_ZSTD}, {"fake_mod.ko.gz", COMP_GZIP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        filebuf_t fb;
        err_t e;
        if (load(builtdir, cases[i].file, &fb) != 0) {
            CHECK(!"compressed fixture");
            continue;
        }
        CHECK(comp_detect(fb.data, fb.size) == cases[i].kind);
        /* every truncation fails with a one-line message naming the format */
        bool clean = true;
        for (size_t n = 0; n < fb.size; n += 1 + n / 8) {
            filebuf_t out;
            if (decomp_buffer(cases[i].kind, fb.data, n, &out, &e) == 0) {
                clean = false;
                file_free(&out);
            } else if (strncmp(e.msg, comp_name(cases[i].kind), strlen(comp_name(cases[i].kind))) != 0) {
                clean = false;
            }
        }
        CHECK(clean);
        /* one flipped byte in the middle: an error, or (xz/zstd/gzip checksums) never a silent success */
        unsigned char *bad = xmalloc(fb.size);
        memcpy(bad, fb.data, fb.size);
        bad[fb.size / 2] ^= 0x55;
        filebuf_t out;
        CHECK(decomp_buffer(cases[i].kind, bad, fb.size, &out, &e) == -1);
        free(bad);
        CHECK(decomp_maybe(&fb, &e) == 0);
        CHECK(fb.size == plain.size && memcmp(fb.data, plain.data, plain.size) == 0);
        komod_t m;
        CHECK(ko_read(fb.data, fb.size, &m, &e) == 0 && m.n_undef == 6);
        ko_free(&m);
        file_free(&fb);
    }
    file_free(&plain);
}

TEST(symvers_crlf)
{
    exportset_t s;
    err_t e;
    CHECK(parse_str("0x1\ta\tvmlinux\tEXPORT_SYMBOL\t\r\n\r\n"
                    "0x2\tb\tvmlinux\tEXPORT_SYMBOL_GPL\tNS\r\n"
                    "0x3\tc\tvmlinux\tEXPORT_SYMBOL\r\n", &s, &e) == 0);
    CHECK(s.n == 3);
    const export_t *x = exportset_find(&s, "b");
    CHECK(x && strcmp(x->ns, "NS") == 0 && x->cls == EXP_GPL);
    x = exportset_find(&s, "c");
    CHECK(x && x->cls == EXP_PLAIN && x->ns[0] == 0);
    exportset_free(&s);
    /* a CR anywhere else is still an error */
    CHECK(parse_str("0x1\ta\r\tvmlinux\tEXPORT_SYMBOL\t\n", &s, &e) == -1 && strstr(e.msg, "line 1"));
}

static void touch(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
    free(p);
}

TEST(find_modules_walk)
{
    char tmpl[] = "/tmp/symcheck-tree-XXXXXX";
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d)
        return;
    char *sub = xasprintf("%s/sub", d), *link = xasprintf("%s/link.ko", d);
    mkdir(sub, 0700);
    touch(d, "b.ko.xz");
    touch(d, "a.ko");
    touch(d, "notes.txt");
    touch(d, "x.ko.bz2");
    touch(sub, "c.ko.gz");
    touch(sub, "d.ko.zst");
    CHECK(symlink("a.ko", link) == 0);
    strvec_t v;
    err_t e;
    CHECK(find_modules(d, &v, &e) == 0 && v.n == 4);
    static const char *const want[] = {"/a.ko", "/b.ko.xz", "/sub/c.ko.gz", "/sub/d.ko.zst"};
    for (size_t i = 0; i < 4 && i < v.n; i++)
        CHECK(strncmp(v.v[i], d, strlen(d)) == 0 && strcmp(v.v[i] + strlen(d), want[i]) == 0);
    strvec_free(&v);
    CHECK(find_modules(sub, &v, &e) == 0 && v.n == 2);
    strvec_free(&v);
    char *none = xasprintf("%s/none", d);
    CHECK(find_modules(none, &v, &e) == -1 && strstr(e.msg, "no such"));
    mkdir(none, 0700);
    CHECK(find_modules(none, &v, &e) == -1 && strstr(e.msg, "no modules"));
    char *cmd = xasprintf("rm -rf '%s'", d);
    CHECK(system(cmd) == 0);
    free(cmd);
    free(none);
    free(sub);
    free(link);
}

/* ---- the worker pool, the export hash index, the decoder context (issue 24, distribution scale) */

typedef struct {
    size_t n;
    unsigned *hits;       /* per job: times run (only that job's worker writes it) */
    size_t *result;       /* per job */
    size_t *seq;          /* with one thread: the jobs in the order they ran */
    size_t nseq;
    unsigned *worker_of;  /* per job */
} pool_probe_t;

static void pool_probe_job(void *arg, size_t job, unsigned worker)
{
    pool_probe_t *p = arg;
    p->hits[job]++;
    p->result[job] = job * 2654435761u % 1000003;
    p->worker_of[job] = worker;
    if (p->seq)
        p->seq[p->nseq++] = job;
}

static void pool_probe(pool_probe_t *p, size_t n, bool record)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->hits = xcalloc(n, sizeof *p->hits);
    p->result = xcalloc(n, sizeof *p->result);
    p->worker_of = xcalloc(n, sizeof *p->worker_of);
    p->seq = record ? xcalloc(n, sizeof *p->seq) : NULL;
}

static void pool_probe_free(pool_probe_t *p)
{
    free(p->hits);
    free(p->result);
    free(p->worker_of);
    free(p->seq);
}

TEST(pool_every_job_once)
{
    const size_t n = 2000;
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        pool_probe_t p;
        pool_probe(&p, n, false);
        pool_run(n, NULL, threads[t], pool_probe_job, &p);
        bool once = true, same = true, workers_ok = true;
        for (size_t i = 0; i < n; i++) {
            once = once && p.hits[i] == 1;
            same = same && p.result[i] == i * 2654435761u % 1000003;
            workers_ok = workers_ok && p.worker_of[i] < threads[t];
        }
        CHECK(once && same && workers_ok);
        pool_probe_free(&p);
    }
    pool_probe_t p;   /* no jobs: returns at once */
    pool_probe(&p, 1, false);
    pool_run(0, NULL, 4, pool_probe_job, &p);
    CHECK(p.hits[0] == 0);
    pool_probe_free(&p);
}

TEST(pool_order)
{
    static const size_t weight[] = {5, 1, 5, 9, 0, 7};
    size_t *order = pool_order_by_weight(weight, 6);
    static const size_t want[] = {3, 5, 0, 2, 1, 4};   /* heaviest first, ties by index */
    CHECK(memcmp(order, want, sizeof want) == 0);
    pool_probe_t p;   /* one thread runs the jobs in exactly that order */
    pool_probe(&p, 6, true);
    pool_run(6, order, 1, pool_probe_job, &p);
    CHECK(p.nseq == 6 && memcmp(p.seq, want, sizeof want) == 0);
    pool_probe_free(&p);
    pool_probe(&p, 6, false);   /* several threads: each job once, whatever the order */
    pool_run(6, order, 3, pool_probe_job, &p);
    CHECK(p.hits[0] == 1 && p.hits[1] == 1 && p.hits[2] == 1 && p.hits[3] == 1 && p.hits[4] == 1 &&
          p.hits[5] == 1);
    pool_probe_free(&p);
    free(order);
}

TEST(pool_thread_count)
{
    char *old = getenv("SYMCHECK_JOBS") ? xstrdup(getenv("SYMCHECK_JOBS")) : NULL;
    setenv("SYMCHECK_JOBS", "3", 1);
    CHECK(pool_threads(100) == 3 && pool_threads(2) == 2 && pool_threads(1) == 1 && pool_threads(0) == 1);
    setenv("SYMCHECK_JOBS", "1", 1);
    CHECK(pool_threads(100) == 1);
    static const char *const bad[] = {"0", "-2", "abc", "3x", "65", ""};
    unsigned dflt;
    unsetenv("SYMCHECK_JOBS");
    dflt = pool_threads(1000);
    CHECK(dflt >= 1 && dflt <= POOL_MAX_THREADS);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("SYMCHECK_JOBS", bad[i], 1);
        CHECK(pool_threads(1000) == dflt);   /* ignored: the online CPUs */
    }
    if (old)
        setenv("SYMCHECK_JOBS", old, 1);
    else
        unsetenv("SYMCHECK_JOBS");
    free(old);
}

TEST(exportset_hash_index)
{
    exportset_t s = {0};
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "sym_%d", i * 7919 % 5000);
        exportset_add(&s, name, "vmlinux", "", (uint32_t)i, true, EXP_PLAIN);
    }
    CHECK(exportset_sort(&s) == NULL);
    const export_t **by_search = xcalloc(5000, sizeof *by_search);
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "sym_%d", i);
        by_search[i] = exportset_find(&s, name);
    }
    exportset_index(&s);
    CHECK(s.hcap >= 2 * s.n && s.hidx != NULL);
    bool same = true;
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "sym_%d", i);
        same = same && by_search[i] && exportset_find(&s, name) == by_search[i];
    }
    CHECK(same);
    CHECK(exportset_find(&s, "sym_5000") == NULL && exportset_find(&s, "") == NULL &&
          exportset_find(&s, "sym_") == NULL);
    exportset_add(&s, "late", "m", "", 1, true, EXP_PLAIN);   /* drops the index */
    CHECK(s.hcap == 0 && s.hidx == NULL);
    exportset_sort(&s);
    CHECK(exportset_find(&s, "late") && exportset_find(&s, "sym_42"));
    free(by_search);
    exportset_free(&s);
    /* an unsorted set with a name twice: the index finds the first */
    exportset_add(&s, "b", "first", "", 1, true, EXP_PLAIN);
    exportset_add(&s, "a", "m", "", 2, true, EXP_PLAIN);
    exportset_add(&s, "b", "second", "", 3, true, EXP_PLAIN);
    exportset_index(&s);
    const export_t *x = exportset_find(&s, "b");
    CHECK(x && strcmp(x->module, "first") == 0 && exportset_find(&s, "a") && !exportset_find(&s, "c"));
    exportset_free(&s);
    /* sorted with a name three times: the index finds what binary search finds */
    static const char *const mods[] = {"m1", "m2", "m3", "m4", "m5"};
    static const char *const names[] = {"b", "a", "b", "c", "b"};
    for (int i = 0; i < 5; i++)
        exportset_add(&s, names[i], mods[i], "", 1, true, EXP_PLAIN);
    CHECK(exportset_sort(&s) != NULL);
    const export_t *bs = exportset_find(&s, "b");
    exportset_index(&s);
    CHECK(bs && exportset_find(&s, "b") == bs && exportset_find(&s, "a") && exportset_find(&s, "c"));
    exportset_free(&s);
    CHECK(s.hidx == NULL);
    exportset_index(&s);   /* empty: no index, finds nothing */
    CHECK(s.hcap == 0 && exportset_find(&s, "a") == NULL);
    CHECK(exportset_hash("") == 0xcbf29ce484222325ull && exportset_hash("a") == 0xaf63dc4c8601ec8cull);
}

TEST(ko_version_lookup)
{
    static const char *const und[] = {"a", "b", "c"};
    static const char *const ver[] = {"b", "module_layout", "a", "b"};
    static const uint32_t crc[] = {1, 2, 3, 4};
    static const unsigned char mi[] = "license=GPL";
    komod_t m;
    mk_mod(&m, und, 3, ver, crc, 4, (const char *)mi, sizeof mi);
    for (int pass = 0; pass < 2; pass++) {   /* linear (made by hand), then indexed */
        const ko_version_t *v = ko_find_version(&m, "b");
        CHECK(v && v->crc == 1);   /* the first in file order */
        v = ko_find_version(&m, "a");
        CHECK(v && v->crc == 3);
        CHECK(ko_find_version(&m, "c") == NULL && ko_find_version(&m, "") == NULL &&
              ko_find_version(&m, "zz") == NULL);
        ko_index_versions(&m);
    }
    CHECK(ko_find_undef(&m, "a") == &m.undef[0] && ko_find_undef(&m, "c") == &m.undef[2] &&
          ko_find_undef(&m, "module_layout") == NULL);
    CHECK(!ko_version_is_undef(&m, &m.vers[1]) && ko_version_is_undef(&m, &m.vers[3]));
    ko_free(&m);
}

/* decomp_into on one context, again and again, gives what decomp_buffer gives. */
static void ctx_matches_buffer(decomp_ctx_t *c, enum comp_kind k, const unsigned char *in, size_t len, bool *ok)
{
    filebuf_t ref;
    err_t e1, e2;
    unsigned char *out;
    size_t n;
    int r1 = decomp_buffer(k, in, len, &ref, &e1);
    int r2 = decomp_into(c, k, in, len, &out, &n, &e2);
    if (r1 != r2 || (r1 == 0 && (n != ref.size || memcmp(out, ref.data, n) != 0)) ||
        (r1 != 0 && strcmp(e1.msg, e2.msg) != 0))
        *ok = false;
    if (r1 == 0)
        file_free(&ref);
}

/* decomp_into on d (of kind k) against decomp_buffer: reused, truncated, doubled, corrupted. */
static void ctx_battery(decomp_ctx_t *c, enum comp_kind k, const unsigned char *d, size_t n)
{
    bool ok = true;
    for (int rep = 0; rep < 3; rep++)   /* the same context, reused */
        ctx_matches_buffer(c, k, d, n, &ok);
    CHECK(ok);
    for (size_t m = 0; m < n; m += 1 + m / 8)   /* every truncation: the same error */
        ctx_matches_buffer(c, k, d, m, &ok);
    CHECK(ok);
    unsigned char *two = xmalloc(2 * n);   /* two streams: the hint covers only the last */
    memcpy(two, d, n);
    memcpy(two + n, d, n);
    free(c->buf);   /* a small buffer, so that it must grow */
    c->buf = xmalloc(16);
    c->cap = 16;
    ctx_matches_buffer(c, k, two, 2 * n, &ok);
    two[n + n / 2] ^= 0x55;   /* corrupt second stream */
    ctx_matches_buffer(c, k, two, 2 * n, &ok);
    CHECK(ok);
    memcpy(two, d, n);   /* one bit flipped: in the last 64 bytes (stored check, index, footer) each */
    for (size_t at = 0; at < n; at += at + 64 >= n ? 1 : 1 + n / 97) {
        two[at] ^= 0x01;
        ctx_matches_buffer(c, k, two, n, &ok);
        two[at] ^= 0x01;
    }
    CHECK(ok);
    free(two);
}

TEST(decomp_context)
{
    static const struct { const char *file; enum comp_kind kind; } cases[] = {
        {"fake_mod.ko.xz", COMP_XZ}, {"fake_mod.ko.zst", COMP_ZSTD}, {"fake_mod.ko.gz", COMP_GZIP},
    };
    decomp_ctx_t c;
    decomp_ctx_init(&c);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        filebuf_t fb;
        if (load(builtdir, cases[i].file, &fb) != 0) {
            CHECK(!"compressed fixture");
            continue;
        }
        ctx_battery(&c, cases[i].kind, fb.data, fb.size);
        file_free(&fb);
    }
    /* xz -c writes CRC64; the kernel's modules are --check=crc32, which decomp_into checks itself */
    filebuf_t plain;
    if (load(builtdir, "fake_mod.ko", &plain) == 0) {
        size_t cap = plain.size + 4096, n = 0;
        unsigned char *xz = xmalloc(cap);
        CHECK(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, plain.data, plain.size, xz, &n, cap) == LZMA_OK);
        ctx_battery(&c, COMP_XZ, xz, n);
        unsigned char *out;
        size_t m;
        err_t e;
        CHECK(decomp_into(&c, COMP_XZ, xz, n, &out, &m, &e) == 0 && m == plain.size &&
              memcmp(out, plain.data, m) == 0);
        size_t index_size = ((size_t)rd32(xz + n - 8) + 1) * 4;   /* the footer's Backward Size */
        xz[n - 12 - index_size - 1] ^= 0x80;   /* inside the block's stored CRC32, just before the index */
        CHECK(decomp_into(&c, COMP_XZ, xz, n, &out, &m, &e) == -1 &&
              strcmp(e.msg, "xz: corrupt data (lzma error 9)") == 0);
        free(xz);
        file_free(&plain);
    } else {
        CHECK(!"fixture fake_mod.ko");
    }
    unsigned char *out;
    size_t n;
    err_t e;
    CHECK(decomp_into(&c, COMP_NONE, (const unsigned char *)"x", 1, &out, &n, &e) == -1 &&
          strcmp(e.msg, "not compressed") == 0);
    decomp_ctx_free(&c);
    decomp_ctx_free(&c);   /* twice is harmless */
}

TEST(crc32_clmul_matches_zlib)
{
    size_t n = 70000;
    unsigned char *b = xmalloc(n);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 16);
    }
    bool ok = true;
    for (size_t len = 0; len < 300; len++)
        for (size_t off = 0; off < 17; off += 5)
            ok = ok && decomp_crc32(0, b + off, len) == (uint32_t)crc32(0, b + off, (uInt)len);
    CHECK(ok);
    CHECK(decomp_crc32(0, b, n) == (uint32_t)crc32(0, b, (uInt)n));
    uint32_t part = decomp_crc32(decomp_crc32(0, b, 1000), b + 1000, n - 1000);   /* continued */
    CHECK(part == (uint32_t)crc32(0, b, (uInt)n));
    CHECK(decomp_crc32(0, (const unsigned char *)"123456789", 9) == 0xcbf43926u);   /* the check value */
    free(b);
}

TEST(file_read_into_errors)
{
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    err_t e;
    CHECK(file_read_into("/nonexistent/x", &buf, &cap, &n, &e) == -1 && strstr(e.msg, "No such file"));
    CHECK(file_read_into("/", &buf, &cap, &n, &e) == -1 && strstr(e.msg, "directory"));
    char tmpl[] = "/tmp/symcheck-unit-XXXXXX";
    int fd = mkstemp(tmpl);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(file_read_into(tmpl, &buf, &cap, &n, &e) == -1 && strstr(e.msg, "empty"));
    CHECK(write(fd, "hello", 5) == 5);
    CHECK(file_read_into(tmpl, &buf, &cap, &n, &e) == 0 && n == 5 && cap >= 5 && memcmp(buf, "hello", 5) == 0);
    unsigned char *kept = buf;
    CHECK(ftruncate(fd, 3) == 0);
    CHECK(file_read_into(tmpl, &buf, &cap, &n, &e) == 0 && n == 3 && buf == kept);   /* reused */
    close(fd);
    unlink(tmpl);
    free(buf);
}

/* ---- Linux 7.2 layout (tests/fixtures/k72) */

TEST(module_ns_rules)
{
    /* verify_module_namespace() of 7.2.12 kernel/module/main.c:1179-1207 */
    CHECK(is_module_ns("module:kvm") && !is_module_ns("KVM") && !is_module_ns("") && !is_module_ns(NULL));
    CHECK(module_ns_allows("module:kvm-amd,kvm_intel", "kvm_amd"));     /* '-' == '_' */
    CHECK(module_ns_allows("module:kvm-amd,kvm_intel", "kvm-intel"));
    CHECK(!module_ns_allows("module:kvm-amd,kvm_intel", "kvm_amd2"));   /* no prefix match */
    CHECK(!module_ns_allows("module:kvm-amd,kvm_intel", "kvm"));
    CHECK(!module_ns_allows("module:kvm-amd,kvm_intel", "kvm_amd,kvm_intel"));
    CHECK(module_ns_allows("module:k72-glob*,other", "k72_glob_x"));   /* tail glob */
    CHECK(module_ns_allows("module:k72-glob*,other", "k72-glob"));
    CHECK(!module_ns_allows("module:k72-glob*,other", "k72_glo"));
    CHECK(module_ns_allows("module:k72-glob*,other", "other"));
    CHECK(!module_ns_allows("module:k72-glob*,other", "othe"));
    CHECK(!module_ns_allows("module:k72-glob*,other", "others"));
    CHECK(!module_ns_allows("module:a*b", "axb") && module_ns_allows("module:a*b", "a*b"));
    CHECK(module_ns_allows("module:*", "anything"));
    CHECK(!module_ns_allows("module:", "x") && !module_ns_allows("module:,", "x"));
    CHECK(!module_ns_allows("KVM", "KVM") && !module_ns_allows("module:kvm", NULL));
}

TEST(this_module_name)
{
    unsigned char b[KO_THIS_MODULE_NAME_OFF + KO_MODULE_NAME_LEN] = {0};
    memcpy(b + KO_THIS_MODULE_NAME_OFF, "kvm_amd", 7);
    komod_t m;
    memset(&m, 0, sizeof m);
    ko_parse_this_module(b, sizeof b, &m);
    CHECK(m.this_module_name && strcmp(m.this_module_name, "kvm_amd") == 0);
    CHECK(strcmp(ko_loader_name(&m), "kvm_amd") == 0);
    ko_free(&m);
    ko_parse_this_module(b, sizeof b - 1, &m);   /* section too short */
    CHECK(!m.this_module_name);
    memset(b + KO_THIS_MODULE_NAME_OFF, 'x', KO_MODULE_NAME_LEN);   /* not NUL-terminated */
    ko_parse_this_module(b, sizeof b, &m);
    CHECK(!m.this_module_name);
    memset(b, 0, sizeof b);   /* empty name */
    ko_parse_this_module(b, sizeof b, &m);
    CHECK(!m.this_module_name && ko_loader_name(&m) == NULL);
    m.modname = xstrdup("from_modinfo");
    CHECK(strcmp(ko_loader_name(&m), "from_modinfo") == 0);
    ko_free(&m);
}

TEST(ksymtab_k72)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/k72/build", builtdir);
    filebuf_t fb;
    if (load(dir, "vmlinux", &fb) != 0) {
        CHECK(!"fixture k72 vmlinux");
        return;
    }
    exportset_t s;
    ksym_info_t ki;
    err_t e;
    CHECK(ksymtab_read(fb.data, fb.size, &s, &ki, &e) == 0);
    CHECK(s.n == 10 && ki.flag_layout && ki.n_gpl == 5 && ki.n_plain == 5 && ki.has_crc && !ki.n_ignored);
    static const char *const gpl[] = {"k72_b_gpl", "k72_d_gpl_ns", "k72_e_kvm_only", "k72_g_glob_only", "k72_z_last"};
    for (size_t i = 0; i < 5; i++) {
        const export_t *x = exportset_find(&s, gpl[i]);
        CHECK(x && x->cls == EXP_GPL);
    }
    const export_t *x = exportset_find(&s, "k72_e_kvm_only");
    CHECK(x && x->crc == 0xe005 && strcmp(x->ns, "module:kvm-amd,kvm_intel") == 0);
    x = exportset_find(&s, "k72_f_plain_ns");
    CHECK(x && x->cls == EXP_PLAIN && strcmp(x->ns, "K72_NS") == 0 && x->crc == 0xf006);
    exportset_free(&s);
    file_free(&fb);
    snprintf(dir, sizeof dir, "%s/k72/build_short", builtdir);
    if (load(dir, "vmlinux", &fb) != 0) {
        CHECK(!"fixture k72 build_short");
        return;
    }
    CHECK(ksymtab_read(fb.data, fb.size, &s, &ki, &e) == -1 &&
          strcmp(e.msg, "__kflagstab has 9 entries but __ksymtab has 10") == 0);
    file_free(&fb);
}

TEST(ko_exports_k72)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/k72", builtdir);
    filebuf_t fb;
    if (load(dir, "allowed.ko", &fb) != 0) {
        CHECK(!"fixture k72 allowed.ko");
        return;
    }
    exportset_t s = {0};
    err_t e;
    CHECK(ko_exports_read(fb.data, fb.size, "m", &s, &e) == 0 && s.n == 3);
    exportset_sort(&s);
    const export_t *x = exportset_find(&s, "m72_two");
    CHECK(x && x->cls == EXP_PLAIN && x->crc == 0x5002 && strcmp(x->ns, "M72_NS") == 0);
    x = exportset_find(&s, "m72_three");
    CHECK(x && x->cls == EXP_GPL && x->crc == 0x5003 && strcmp(x->ns, "module:kvm-amd") == 0);
    x = exportset_find(&s, "m72_one");
    CHECK(x && x->cls == EXP_GPL && x->crc == 0x5001 && x->ns[0] == 0);
    exportset_free(&s);
    komod_t m;
    CHECK(ko_read(fb.data, fb.size, &m, &e) == 0 && m.this_module_name &&
          strcmp(m.this_module_name, "kvm_amd") == 0);
    ko_free(&m);
    file_free(&fb);
    if (load(dir, "short.ko", &fb) != 0) {
        CHECK(!"fixture k72 short.ko");
        return;
    }
    CHECK(ko_exports_read(fb.data, fb.size, "m", &s, &e) == KOX_CORRUPT &&
          strcmp(e.msg, "__kflagstab has 2 entries but __ksymtab has 3") == 0);
    exportset_free(&s);
    file_free(&fb);
}

/* check against the k72 build: the loader's name decides, not the .modinfo name= */
static size_t k72_findings(const char *ko, const char *kind)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/k72/build", builtdir);
    build_t b;
    const char *ep;
    err_t e;
    filebuf_t fb;
    size_t n = (size_t)-1;
    if (build_open(path, NULL, BUILD_LOAD_VMLINUX, &b, &ep, &e) != 0)
        return n;
    snprintf(path, sizeof path, "%s/k72", builtdir);
    komod_t m;
    if (load(path, ko, &fb) == 0 && ko_read(fb.data, fb.size, &m, &e) == 0) {
        check_result_t r;
        check_compute(&m, &b, &r);
        n = 0;
        for (size_t i = 0; i < r.n_findings; i++)
            n += strcmp(r.findings[i].kind, kind) == 0;
        n = r.n_findings == n ? n : (size_t)-2;   /* no other finding */
        check_result_free(&r);
        ko_free(&m);
        file_free(&fb);
    }
    build_free(&b);
    return n;
}

TEST(check_k72_module_ns)
{
    CHECK(k72_findings("allowed.ko", "module-not-allowed") == 0);
    CHECK(k72_findings("denied.ko", "module-not-allowed") == 1);
    CHECK(k72_findings("thisname.ko", "module-not-allowed") == 1);
    CHECK(k72_findings("modinfo_only.ko", "module-not-allowed") == 0);
    CHECK(k72_findings("glob_ok.ko", "module-not-allowed") == 0);
    CHECK(k72_findings("glob_bad.ko", "module-not-allowed") == 1);
    CHECK(k72_findings("prefix_bad.ko", "module-not-allowed") == 1);
    CHECK(k72_findings("import.ko", "module-namespace-import") == 1);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        fixdir = argv[1];
    if (argc > 2)
        builtdir = argv[2];
    RUN(symvers_valid);
    RUN(symvers_errors);
    RUN(symvers_crlf);
    RUN(licences);
    RUN(modinfo_parse);
    RUN(ko_fake);
    RUN(ko_corrupt_sections);
    RUN(ksymtab_fake);
    RUN(no_dwarf);
    RUN(build_open_fake);
    RUN(json_strings);
    RUN(grow_arrays);
    RUN(tree_args);
    RUN(tables);
    RUN(file_load_errors);
    RUN(exports_compute_kinds);
    RUN(module_compute_fields);
    RUN(check_compute_findings);
    RUN(diff_compute_changes);
    RUN(audit_compute_flags);
    RUN(audit_identifier);
    RUN(x86dec_lengths);
    RUN(frameread_fixture);
    RUN(dwt_types);
    RUN(calltypes_compute_fixture);
    RUN(seed_compute);
    RUN(decompress_fixtures);
    RUN(find_modules_walk);
    RUN(pool_every_job_once);
    RUN(pool_order);
    RUN(pool_thread_count);
    RUN(exportset_hash_index);
    RUN(ko_version_lookup);
    RUN(decomp_context);
    RUN(crc32_clmul_matches_zlib);
    RUN(file_read_into_errors);
    RUN(module_ns_rules);
    RUN(this_module_name);
    RUN(ksymtab_k72);
    RUN(ko_exports_k72);
    RUN(check_k72_module_ns);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
