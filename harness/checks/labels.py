"""What each source shares with the module, and the rule that every value kind
has at least two independent oracles that agree.

A source that calls the very kernel function the module calls (or reads the
very table) cannot catch a bug in that function: /proc/<pid>/stat and the
module both call task_prio(). Such a source is labelled "same function" or
"same data" and does not count. gdb and drgn read guest memory with their
own arithmetic ("independent (memory)"); the scenario file, the variant's
expectations and the guest program's own return addresses say what the
value must be without asking the kernel ("independent (expected)");
eu-addr2line reads the guest program's ELF on the host ("independent (file)").

require_independent() adds one row of kind "oracles" per value kind: it
fails when fewer than two independent sources gave a value on a row of that
kind that agrees (a row that disagrees already fails by itself). A value kind that has only one oracle by
nature says so (EXEMPT) and is reported unchecked, with the reason.
"""

from dataclasses import replace

from ..model.enums import Label, Source
from ..model.results import Check

CLAIM = Label.CLAIM
SAME_FUNCTION = Label.SAME_FUNCTION
SAME_DATA = Label.SAME_DATA
MEMORY = Label.MEMORY
EXPECTED = Label.EXPECTED
FILE = Label.FILE
INDEPENDENT = tuple(lab for lab in Label if lab.independent)

# source -> (label, what it shares with the module). This text and EXEMPT's are
# report.json content: a module renamed since (compare.expected_prio, now
# oracles/sched_prio.py; compare_states, now checks/writeback.py and bpf.py) keeps
# its old name there, so that a report stays comparable with earlier runs.
LABELS = {
    Source.MODULE: (CLAIM, "is the module: its text output on the data port"),
    Source.MEMORY: (CLAIM, "is the module: its ksymlab_results, as gdb reads them"),
    Source.DRGN_MEMORY: (CLAIM, "is the module: its ksymlab_results, as drgn reads them from the "
                                "vmcore"),
    Source.GDB: (MEMORY, "nothing at run time: gdb reads guest memory through QEMU's gdbstub with "
                         "vmlinux's symbols and DWARF and its own arithmetic"),
    Source.GDB_BITMAP: (MEMORY, "nothing at run time: gdb reads "
                                "mem_section[]->usage->pageblock_flags itself"),
    Source.GDB_CLASS: (MEMORY, "nothing at run time: gdb walks the block class's klist itself"),
    Source.DRGN: (MEMORY, "nothing at run time: drgn reads the vmcore QEMU wrote at the same "
                          "instant, with its own helpers (for_each_task, pfn_to_page, block "
                          "part_name/part_devt) and vmlinux's DWARF"),
    Source.PROC_STAT: (SAME_FUNCTION, "task_prio(): fs/proc/array.c do_task_stat() calls it for "
                                      "field 18, as the module's prio sampler does"),
    Source.PAGETYPEINFO: (SAME_FUNCTION, "get_pfnblock_flags_mask(): mm/vmstat.c counts blocks by "
                                         "get_pageblock_migratetype(), which calls it, as the "
                                         "module's migratetype sampler does"),
    Source.PROC_KALLSYMS: (SAME_DATA, "the kallsyms tables that kallsyms_lookup_name() reads in "
                                      "the kallsyms and stock modes"),
    Source.SYSFS: (SAME_DATA, "the block class's devices and the same block_device fields (dev_t, "
                              "bd_nr_sectors via bdev_nr_sectors()) the module reads; and, for "
                              "the whole flag, the partition attribute a partition has; only the "
                              "walk (sysfs directories) and formatting are sysfs's own"),
    Source.SCENARIO: (EXPECTED, "nothing: the priority the scenario asks for, computed from the "
                                "policy and value (compare.expected_prio), and that policy"),
    Source.EXPECTED: (EXPECTED, "nothing: what the variant, the series or the design says the "
                                "value must be"),
    Source.PROGRAM: (EXPECTED, "nothing: the guest program's own __builtin_return_address()es"),
    Source.PROGRAM_WALK: (EXPECTED, "nothing: the guest program's own walk of its frame-pointer "
                                    "chain, user-space code reading its own stack before the "
                                    "system call; it follows the kernel's stopping rules "
                                    "(arch_stack_walk_user()), not its code"),
    Source.EU_ADDR2LINE: (FILE, "nothing: elfutils names frames from the guest program's ELF on "
                                "the host"),
    Source.GUEST: (SAME_DATA, "the guest's own view (sysfs) of what the oracle needs"),
    Source.VMSTAT: (SAME_FUNCTION, "global_dirty_limits() -> domain_dirty_limits(): "
                                   "/proc/vmstat's nr_dirty(_background)_threshold and the "
                                   "global_dirty_state event compute the thresholds there"),
    Source.PROGRAM_JIFFIES: (EXPECTED, "nothing: the BPF program's own bpf_jiffies64() in the "
                                       "same run, a bound"),
    Source.GDB_INITIAL_JIFFIES: (MEMORY, "nothing at run time: INITIAL_JIFFIES from HZ in the "
                                         "tree's .config, a bound"),
    Source.GDB_JIFFIES: (MEMORY, "nothing at run time: jiffies_64 as gdb reads it at the "
                                 "snapshot, a bound"),
}

# The sources of the LTTng rows (kind "lttng", harness/lttng/rows/features.py): there
# LTTng is the claim, and "gdb", "gdb_class", "scenario", "program" and "sysfs"
# above keep their meaning (gdb reads at its stop in the LTTng guest,
# harness/lttng/boot/gdbstop.py).
LABELS.update({
    Source.LTTNG: (CLAIM, "is LTTng: what its trace recorded"),
    Source.LTTNG_PRIO_CONTEXT: (CLAIM, "is LTTng: its prio context, task_prio() as LTTng found it"),
    Source.LTTNG_CALLSTACK_USER: (CLAIM, "is LTTng: its callstack-user context, "
                                         "stack_trace_save_user() as LTTng found it"),
    Source.LTTNG_CALLSTACK_KERNEL: (CLAIM, "is LTTng: its callstack-kernel context, "
                                           "stack_trace_save() as LTTng called it (its export "
                                           "or found by name)"),
    Source.VMLINUX_CALL_SITES: (FILE, "nothing at run time: the host reads the built vmlinux "
                                      "(symbol table, the instruction before each return "
                                      "address and where that call goes); it does not run "
                                      "the kernel's unwinder"),
    Source.LTTNG_STATEDUMP: (CLAIM, "is LTTng: its block device statedump, a walk of block_class "
                                    "and disk_type as LTTng found them"),
    Source.LTTNG_LAST_EVENT: (CLAIM, "is LTTng: the dirty limit its last writeback event before "
                                     "gdb's stop recorded"),
    Source.LTTNG_SETHOSTNAME: (CLAIM, "is LTTng: the tid of the event that marks gdb's stop in "
                                      "the trace"),
    Source.SCHED_SWITCH_PREV_PRIO: (SAME_DATA, "task->prio, which task_prio() reads too; LTTng's "
                                               "own sched_switch probe records prev->prio - "
                                               "MAX_RT_PRIO without task_prio()"),
    Source.PROC_PARTITIONS: (SAME_DATA, "the block class's disks and partitions: block/genhd.c "
                                        "walks block_class by disk_type, as the statedump does"),
    Source.LTTNG_IRQ_STATEDUMP: (CLAIM, "is LTTng: its interrupt statedump, a walk of the irq "
                                        "descriptors (irq_to_desc() as LTTng found it, or the "
                                        "v2 series' irq_walk_actions())"),
    Source.PROC_INTERRUPTS: (SAME_DATA, "the descriptors' chip and actions: show_interrupts() "
                                        "(kernel/irq/proc.c) reads them under the lock the "
                                        "statedump takes, not through LTTng"),
    Source.GDB_IRQ: (MEMORY, "nothing at run time: gdb walks allocated_irqs and irq_desc_tree "
                             "(6.1) or sparse_irqs (6.12) itself"),
    Source.FTRACE: (SAME_DATA, "global_wb_domain and the same tracepoint call: the kernel's own "
                               "ftrace event beside LTTng's probe, not through LTTng's lookup"),
    Source.GUEST_LSMOD: (SAME_DATA, "the guest's /proc/modules: whether LTTng's kmem probe "
                                    "loaded (and its kvm-x86 probe), and which module a kernel "
                                    "frame lies in"),
    Source.LTTNG_UPROBE: (CLAIM, "is LTTng: its userspace probe's events (uprobe_register() as "
                                 "LTTng found it) and their ip"),
    Source.PROGRAM_SYMBOLS: (SAME_DATA, "the program's .symtab, which sessiond reads too in the "
                                        "guest with its own ELF reader; here binutils' nm on "
                                        "the host"),
    Source.LTTNG_LIST: (CLAIM, "is LTTng: the output mode sessiond gives each channel"),
    Source.LTTNG_BUILD: (FILE, "nothing at run time: whether LTTng's build made the module "
                               "(its ko/ directory on the host)"),
    Source.GUEST_MODPROBE: (CLAIM, "is the loading of the LTTng module itself: the module "
                                   "loader's answer to modprobe in the guest"),
    Source.GFP_MIGRATETYPE: (EXPECTED, "nothing: the migratetype the allocation's gfp flags ask "
                                       "for, computed on the host from the event's own gfp_flags"),
    Source.GDB_WB_DOMAIN: (MEMORY, "nothing at run time: gdb reads global_wb_domain.dirty_limit "
                                   "at its stop with vmlinux's DWARF"),
    Source.GDB_FORMULA: (MEMORY, "nothing at run time: the derived field's formula, computed "
                                 "on the host from what gdb reads at its stop (dirty_limit, "
                                 "the dirty sysctls)"),
    Source.SYMCHECK_AUDIT: (FILE, "nothing at run time: symcheck reads the code and relocations "
                                  "of the LTTng .ko files on the host"),
    Source.SYMCHECK_CHECK: (FILE, "nothing at run time: symcheck compares the LTTng .ko imports "
                                  "with the tree's Module.symvers and vmlinux on the host"),
    Source.SYMCHECK_CALLTYPES: (FILE, "nothing at run time: symcheck compares, on the host, the "
                                      "DWARF type of each symbol in the tree's vmlinux with the "
                                      "DWARF type of the variable the .ko stores its looked-up "
                                      "address in"),
})

# (value kind, row kind, which rows of that kind)
VALUE_KINDS = (
    ("symbol addresses", "symbol", lambda key: True),
    ("results header", "snapshot", lambda key: True),
    ("task priority", "prio", lambda key: True),
    ("task policy", "policy", lambda key: True),
    ("pageblock migratetype", "pageblock", lambda key: True),
    ("migratetype histogram", "migratetype", lambda key: True),
    ("block devices", "blockdev", lambda key: not key.endswith("/whole")),
    ("whole flag", "blockdev", lambda key: key.endswith("/whole")),
    ("user stack", "ustack", lambda key: True),
    ("dirty limit", "writeback", lambda key: key.startswith("dirty_limit/")),
    ("dirty thresholds", "writeback", lambda key: key.startswith("thresh/")),
    ("writeback hits", "writeback", lambda key: key.endswith("_hits")),
    ("bpf readable", "bpf", lambda key: key.endswith("/readable") or key.endswith("/ran")),
    ("bpf argument 1", "bpf", lambda key: key.endswith("/arg1-domain")),
    ("bpf argument 13 value", "bpf", lambda key: key.endswith("/value")),
)

# Value kinds with one oracle by nature, and why.
EXEMPT = {
    "writeback hits": "a count of tracepoint hits has no second witness; the rows only ask "
                      "that both tracepoints fired",
    "bpf readable": "whether the verifier accepts a program is the series' design "
                    "(expected); no memory holds the answer",
    "dirty thresholds": "the thresholds of the last global_dirty_state event exist only "
                        "in that event; gdb derives them from the sysctls "
                        "(compare_states), no memory holds them at the snapshot",
    "bpf argument 13 value": "start_time is bounded, not equal: the program's own "
                             "jiffies and gdb's jiffies_64 order it (compare_states)",
}

REQUIRED = 2


def label(source):
    """(Label, what it shares) of a source name."""
    return LABELS.get(source, (Label.UNLABELLED, "not described in harness/checks/labels.py"))


def table():
    """The label table for the report: [{source, label, shares, counts}]."""
    return [{"source": str(s), "label": str(lab), "shares": shares, "counts": lab.independent}
            for s, (lab, shares) in LABELS.items()]


def coverage(rows):
    """(agreeing independent sources, other sources) of the rows of one value kind."""
    names = []
    for c in rows:
        names += [s for s in c.sources if s not in names]
    good, other = [], []
    for s in names:
        if not label(s)[0].independent:
            other.append(s)
            continue
        # A row that disagrees fails on its own; here a source counts when it
        # gave a value on a row that agrees.
        if any(c.agrees and c.sources.get(s) is not None for c in rows):
            good.append(s)
        else:
            other.append(s)
    return good, other


def coverage_rows(symbols, values):
    out = []
    for name, kind, pick in VALUE_KINDS:
        pool = symbols if kind == "symbol" else values
        rows = [c for c in pool if c.kind == kind and pick(c.key)]
        if not rows or all(c.unchecked for c in rows):
            continue            # no such rows (a sampler degraded as expected, no BPF rows)
        good, other = coverage(rows)
        exempt = EXEMPT.get(name)
        out.append(Check(
            "oracles", name,
            {Source.INDEPENDENT: ", ".join(good) or "none",
             Source.OTHER: ", ".join(other) or "none", Source.REQUIRED: REQUIRED},
            None if exempt else len(good) >= REQUIRED,
            reason=exempt or (None if len(good) >= REQUIRED else
                              f"fewer than {REQUIRED} independent oracles agree"),
            label=f"{name}: independent oracles that agree"))
    return out


def require_independent(found):
    """`found` (a checks.variant.Comparison) with one "oracles" row per value kind."""
    return replace(found, values=found.values + tuple(coverage_rows(found.symbols,
                                                                    found.values)))

