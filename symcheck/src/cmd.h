/* The commands: each computes a result struct, then renders it as text or JSON.
 * The compute functions do no output and are unit-tested (tests/unit_test.c). */
#ifndef SYMCHECK_CMD_H
#define SYMCHECK_CMD_H

#include "build.h"
#include "codescan.h"
#include "dwarfinfo.h"
#include "dwtypes.h"
#include "elfread.h"
#include "ko.h"
#include "modexports.h"
#include "output.h"

#define EXIT_OKAY 0
#define EXIT_FINDINGS 1
#define EXIT_TROUBLE 2

/* Every command: argv holds the arguments after the command name. */
typedef int (*cmd_fn)(int argc, char **argv, bool json);
int cmd_exports(int argc, char **argv, bool json);
int cmd_module(int argc, char **argv, bool json);
int cmd_check(int argc, char **argv, bool json);
int cmd_diff(int argc, char **argv, bool json);
int cmd_seed_report(int argc, char **argv, bool json);
int cmd_audit(int argc, char **argv, bool json);
int cmd_calltypes(int argc, char **argv, bool json);

/* ---- shared helpers (cmd_common.c) */
/* "symcheck: <fmt with arg> (see symcheck --help)" on stderr; returns EXIT_TROUBLE. */
int usage_error(const char *fmt, const char *arg);
/* The arguments of check and audit (CMD): -q/--quiet when quiet is not NULL, --tree DIR or
 * --tree=DIR into *tree, the others into pos[*np++] (argc slots). Returns 0, or the usage error
 * "CMD: --tree needs a directory" / "CMD: unknown option OPT" (EXIT_TROUBLE). */
int parse_tree_args(const char *cmd, int argc, char **argv, bool *quiet, const char **tree, char **pos,
                    int *np);
/* "symcheck: FILE: problem" on stderr; returns EXIT_TROUBLE. */
int report_error(const char *file, const err_t *e);
/* "0x%08x" or "-" */
void crcstr(char *buf, size_t n, uint32_t crc, bool has);
/* Load and parse a module file (plain, or xz/zstd/gzip-compressed: detected by magic bytes); reports the error itself and
 * returns EXIT_TROUBLE, or 0 with fb and m to be freed by the caller. */
int load_ko(const char *path, filebuf_t *fb, komod_t *m);
/* Is the __versions entry v also an undefined symbol of m? */
bool ko_version_is_undef(const komod_t *m, const ko_version_t *v);

/* ---- exports */
typedef struct {
    const char *kind;     /* missing-in-vmlinux, missing-in-symvers, class, crc, namespace, owner */
    const char *symbol;   /* points into the build */
    char symvers[160];    /* the Module.symvers side, "-" when absent */
    char vmlinux[160];    /* the vmlinux side, "-" when absent */
} disagreement_t;

typedef struct {
    bool compared;        /* both Module.symvers and vmlinux present */
    size_t symvers_vmlinux;   /* Module.symvers lines owned by vmlinux */
    disagreement_t *v;
    size_t n, cap;
} exports_result_t;

/* Compare the two export sources of b (fills b->merged too). */
void exports_compute(build_t *b, exports_result_t *r);
void exports_result_free(exports_result_t *r);

/* ---- module */
typedef struct {
    komod_t m;
    bool gpl_compatible;
    strvec_t depends;               /* depends= split at commas, empty items dropped */
    const ko_version_t **undef_ver; /* per m.undef[i]: its __versions entry or NULL */
    const ko_version_t **extra_ver; /* __versions entries without an undefined symbol */
    size_t n_extra;
    exportset_t exports;            /* the module's own __ksymtab/__ksymtab_gpl, sorted */
    char exports_error[512];        /* why they could not be read, "" when they were */
    bool exports_corrupt;           /* 7.2 tables that do not match (KOX_CORRUPT): exit 2 */
} module_result_t;

/* Takes ownership of *m; img/len is the (decompressed) image m was read from. */
void module_compute(komod_t *m, const unsigned char *img, size_t len, module_result_t *r);
void module_result_free(module_result_t *r);

/* ---- check */
typedef struct {
    const char *kind;   /* unknown-symbol, gpl-only, crc-mismatch, ... */
    char *symbol;       /* owned, NULL for module-wide findings */
    char *message;      /* owned */
} finding_t;

typedef struct {
    const ko_undef_t *u;
    const export_t *x;       /* provider in the build, NULL when not exported */
    const ko_version_t *v;   /* __versions entry, NULL when none */
    const char *status;      /* ok, unknown, weak-missing, several, or a finding kind */
} check_sym_t;

typedef struct {
    bool gpl_ok;
    check_sym_t *syms;       /* one per m->undef */
    size_t n_syms;
    finding_t *findings;
    size_t n_findings, cap;
} check_result_t;

/* Check one module against a build. */
void check_compute(const komod_t *m, const build_t *b, check_result_t *r);
void check_result_free(check_result_t *r);

/* Every module file under dir (.ko, .ko.xz, .ko.zst, .ko.gz; symlinks not followed),
 * sorted by path. Returns 0, or -1 with e set. */
int find_modules(const char *dir, strvec_t *out, err_t *e);

/* ---- diff */
enum diff_kind { DIFF_ADDED, DIFF_REMOVED, DIFF_CRC, DIFF_CLASS, DIFF_NAMESPACE, DIFF_OWNER, N_DIFF_KINDS };

typedef struct {
    enum diff_kind kind;
    const export_t *old, *new;   /* NULL for added / removed */
} change_t;

typedef struct {
    change_t *v;
    size_t n, cap;
    size_t counts[N_DIFF_KINDS];
} diff_result_t;

extern const char *const diff_kind_names[N_DIFF_KINDS];
/* Compare two sorted export sets (a: old, b: new). */
void diff_compute(const exportset_t *a, const exportset_t *b, diff_result_t *r);
void diff_result_free(diff_result_t *r);

/* ---- seed-report */
#define SEED_EVENTS 2
#define SEED_PREFIXES 3
extern const char *const seed_events[SEED_EVENTS];

typedef struct {
    enum dw_status status;
    char error[ERRBUF_SIZE];                       /* when status != DW_OK */
    dw_func_t fn[SEED_EVENTS * SEED_PREFIXES];
    char names[SEED_EVENTS * SEED_PREFIXES][64];
    const dw_func_t *hit[SEED_EVENTS];             /* first prefix found per event, or NULL */
} seed_dwarf_t;

/* Look the seed tracepoints up in the DWARF of b's vmlinux. */
void seed_dwarf_compute(const build_t *b, seed_dwarf_t *d);
void seed_dwarf_free(seed_dwarf_t *d);
/* Add the symbols of a comma/blank separated list, without duplicates. */
void seed_parse_list(const char *list, strvec_t *syms);
void seed_default_symbols(strvec_t *syms);

/* ---- audit */
typedef struct {
    const char *kind;   /* by-name, kprobe-trick, undefined-reference, string */
    char *what;         /* the name resolved (owned) */
    char *via;          /* the resolver used, NULL for the name-level kinds (owned) */
    char *where;        /* function+0xOFF, .symtab or SECTION+0xOFF (owned) */
    long fn, ev;        /* by-name: the calling function (index in the code scan) and the call's
                           event; kprobe-trick: the function, ev -1; otherwise both -1 */
} audit_finding_t;

typedef struct {        /* a kprobe that resolves nothing: not a finding */
    const char *use;    /* "instrumentation" (left registered) or "existence-check" (registered and
                           unregistered at once, the address it found never read) */
    char *function, *symbol_name, *where;
} audit_note_t;

typedef struct {
    const char *path, *name;   /* borrowed from the input */
    audit_finding_t *v;
    size_t n, cap;
    audit_note_t *notes;
    size_t n_notes;
    strvec_t resolvers;        /* functions of this module that resolve a name they are given */
} audit_module_t;

typedef struct {
    audit_module_t *mods;      /* one per input, same order */
    size_t n, flagged, findings_total;
} audit_result_t;

typedef struct {
    const char *path;
    const komod_t *m;
    const cs_module_t *cs;
} audit_input_t;

/* The modules of an audit-like command, loaded and code-scanned: those under tree, or files[0..nf).
 * Reports a problem itself and returns EXIT_TROUBLE (nothing to free), else 0. */
typedef struct {
    filebuf_t fb;
    komod_t m;
    cs_module_t cs;
} scanned_ko_t;
typedef struct {
    strvec_t paths;
    scanned_ko_t *ko;
    audit_input_t *in;
    size_t n;
} scanned_set_t;
int scanned_set_load(const char *tree, char **files, int nf, scanned_set_t *s);
void scanned_set_free(scanned_set_t *s);

/* Audit a set of modules together (resolvers exported by one are followed from the others). */
void audit_compute(const audit_input_t *in, size_t n, audit_result_t *r);
void audit_result_free(audit_result_t *r);

/* ---- calltypes */
typedef struct {
    const char *module;       /* borrowed: the module's name, else its path */
    char *name;               /* the symbol resolved by name */
    char *via, *where;        /* from the audit */
    char *receiver;           /* the variable the address is stored in, NULL when none was found */
    char *module_type;        /* how the module uses the symbol, C-like; NULL when unknown */
    char *kernel_type;        /* how the kernel declares it; NULL when not found */
    const char *kernel_kind;  /* "function", "object" or NULL */
    size_t kernel_variants;   /* other definitions of the name with another type (static functions) */
    const char *status;       /* match, qualifiers, mismatch, unchecked */
    const char *problem;      /* mismatch: return-type, param-count, param-type, object-type,
                                 data-as-function, function-as-data; unchecked: no-receiver,
                                 receiver-in-aggregate, ambiguous-receiver, untyped-receiver,
                                 no-module-dwarf, not-in-kernel; qualifiers: param-type or
                                 return-type or object-type; match: NULL */
    char *detail;             /* one line for a person, NULL for a match */
} calltype_item_t;

typedef struct {
    calltype_item_t *v;
    size_t n, cap;
    size_t modules, match, qualifiers, mismatch, unchecked;
} calltypes_result_t;

/* One module of the set: its audit input, its sections and symbols, and its relocated DWARF
 * (dw.dw NULL when it has none). */
typedef struct {
    const audit_input_t *a;
    const elfr_image_t *im;
    dwt_t *dw;
} calltypes_module_t;

/* The by-name resolutions of the audit, each compared with the kernel's DWARF. */
void calltypes_compute(const calltypes_module_t *mods, size_t n, const audit_result_t *audit, dwt_t *kernel,
                       calltypes_result_t *r);
void calltypes_result_free(calltypes_result_t *r);

#endif
