/* symcheck: which exports a Linux kernel module needs, and whether a kernel build provides them.
 * This file only dispatches: --json anywhere, --help, the command lookup. The commands are
 * in cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char usage_text[] =
"usage: symcheck [--json] COMMAND ARGS...\n"
"\n"
"Report which exports a Linux kernel module needs and whether a kernel build provides them\n"
"(x86-64). Layouts, told from the input: Linux 6.1 to 6.12 export tables classified by\n"
"section (__ksymtab/__ksymtab_gpl), Linux 7.2 classified by flag table (__ksymtab +\n"
"__kflagstab); namespaces as strings, 7.2 \"module:\" namespaces checked against the\n"
"module's name as the 7.2 loader does. BUILD is a kernel build directory holding Module.symvers\n"
"and/or vmlinux; where noted a Module.symvers or vmlinux file path works too.\n"
"FILE.ko may be xz, zstd or gzip compressed (.ko.xz, .ko.zst, .ko.gz; told by content).\n"
"\n"
"commands:\n"
"  exports [--summary] BUILD\n"
"      List the exports of BUILD from Module.symvers and, independently, from vmlinux\n"
"      (__ksymtab, __ksymtab_gpl, __ksymtab_strings, __kcrctab, __kcrctab_gpl; on 7.2\n"
"      __ksymtab, __kflagstab, __kcrctab, __ksymtab_strings), and report\n"
"      every disagreement for vmlinux-owned symbols: missing on one side, GPL class,\n"
"      CRC or namespace differs. --summary omits the per-symbol listing.\n"
"  module FILE.ko\n"
"      Undefined symbols (.symtab), __versions CRCs, .modinfo (license, vermagic,\n"
"      name, depends, import_ns) and own exports (class, namespace, CRC) of a module.\n"
"  check [-q|--quiet] FILE.ko [FILE.ko...] BUILD\n"
"      For every symbol a module needs: is it exported (by BUILD, or by a module given),\n"
"      is a GPL-only export used by a non-GPL-compatible licence, does the __versions\n"
"      CRC equal the build's, is the export's namespace imported (import_ns); for a 7.2\n"
"      \"module:LIST\" namespace, is the module's name in LIST (module-not-allowed), and\n"
"      no import_ns=module:... (module-namespace-import).\n"
"      -q prints findings only.\n"
"  check [-q|--quiet] --tree DIR [BUILD]\n"
"      The same for every module under DIR (.ko, .ko.xz, .ko.zst, .ko.gz, found\n"
"      recursively, symlinks not followed, in path order), e.g. /lib/modules/REL.\n"
"      BUILD defaults to DIR/build (the kernel's /lib/modules/REL/build link).\n"
"  diff BUILD_A BUILD_B\n"
"      Exports added, removed, CRC changed, licence class changed, namespace changed\n"
"      (from Module.symvers; a Module.symvers file path is accepted too).\n"
"  seed-report [--symbols LIST] [NAME=]BUILD [[NAME=]BUILD...]\n"
"      Whether each build exports the seed symbols (LIST: comma or space separated;\n"
"      default: task_prio stack_trace_save_user get_pfnblock_flags_mask disk_name\n"
"      gendisk_device_type gendisk_block_class kallsyms_lookup_name\n"
"      kallsyms_on_each_symbol bpf_trace_run12 bpf_trace_run13),\n"
"      and the DWARF parameter lists of __traceiter_global_dirty_state and\n"
"      __traceiter_balance_dirty_pages (or trace_* / perf_trace_*) in BUILD/vmlinux.\n"
"  audit FILE.ko [FILE.ko...] | audit --tree DIR\n"
"      Which kernel symbols the modules resolve by name, audited together: calls of a\n"
"      resolver (kallsyms_lookup_name, or a function of the set that passes its argument\n"
"      to one, e.g. an exported wrapper around a kprobe-found kallsyms_lookup_name) with a\n"
"      string literal (by-name); kprobes registered, read (kp.addr) and unregistered at\n"
"      once on a name (kprobe-trick); references to kallsyms_lookup_name /\n"
"      kallsyms_on_each_symbol and the string \"kallsyms_lookup_name\" in data. Kprobes left\n"
"      registered are listed as instrumentation, kprobes registered and unregistered whose\n"
"      address is provably never read as existence checks; neither is flagged.\n"
"  calltypes FILE.ko [FILE.ko...] BUILD | calltypes --tree DIR BUILD\n"
"      For every name the modules resolve at run time (as audit finds them), the\n"
"      kernel's DWARF type of the symbol (BUILD/vmlinux, or a vmlinux path) against the\n"
"      type of the static variable the module stores the address in: a function\n"
"      pointer's return type, parameter count and types, or an object's type. Typedef\n"
"      names do not matter; qualifiers alone are reported but not a mismatch. Statuses:\n"
"      match, qualifiers, mismatch, unchecked (with the reason).\n"
"\n"
"options:\n"
"  --json      machine-readable output (one JSON document on stdout)\n"
"  -h, --help  this help\n"
"\n"
"exit status: 0 all is well; 1 findings (check: problems found; exports: sources disagree;\n"
"diff: differences; audit: something resolved by name; calltypes: a type mismatch);\n"
"2 usage error or\n"
"unreadable/corrupt input, reported as one line 'symcheck: FILE: problem' on stderr.\n";

static const struct {
    const char *name;
    cmd_fn fn;
} commands[] = {
    {"exports", cmd_exports},
    {"module", cmd_module},
    {"check", cmd_check},
    {"diff", cmd_diff},
    {"seed-report", cmd_seed_report},
    {"audit", cmd_audit},
    {"calltypes", cmd_calltypes},
};

static int dispatch(const char *cmd, int argc, char **argv, bool json)
{
    if (!cmd)
        return usage_error("missing command%s", NULL);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc, argv, json);
    return usage_error("unknown command %s", cmd);
}

int main(int argc, char **argv)
{
    char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
    int nr = 0;
    bool json = false;
    const char *cmd = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            free(rest);
            return EXIT_OKAY;
        } else if (strcmp(argv[i], "--") == 0) {
            for (i++; i < argc; i++)
                rest[nr++] = argv[i];
        } else if (!cmd) {
            cmd = argv[i];
        } else {
            rest[nr++] = argv[i];
        }
    }
    int r = dispatch(cmd, nr, rest, json);
    free(rest);
    if (fflush(stdout) != 0 && r == EXIT_OKAY)
        r = EXIT_TROUBLE;
    return r;
}
