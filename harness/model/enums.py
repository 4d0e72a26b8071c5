"""The closed sets a check row is made of: its verdict (Agreement), the names
of its sources (Source) and what a source shares with the module (Label).

Each renders exactly as the free value it replaces, so report.json and
report.md keep their bytes: Agreement.to_json() is true/false/null, and a
Source or Label is a str (StrEnum): a dict key, an f-string and json.dumps
give its text ("gdb", "independent (memory)"). A name outside the set is a
ValueError where the row is built, not a column the report shows unlabelled.
"""

from enum import Enum, StrEnum

__all__ = ["Agreement", "Source", "Label"]


class Agreement(Enum):
    """A row's verdict: its sources agree, disagree, or no oracle covers the value."""
    AGREE = True
    DISAGREE = False
    UNCHECKED = None            # counts neither for nor against the variant

    @classmethod
    def of(cls, value):
        """The member for `value`: a member, True, False or None (nothing else:
        1 or "" are not verdicts)."""
        if isinstance(value, cls):
            return value
        if value is None or isinstance(value, bool):
            return cls(value)
        raise TypeError(f"a verdict is True, False or None, not {value!r}")

    def to_json(self):
        """true, false or null, as report.json has always written it."""
        return self.value

    def __bool__(self):
        # three values do not fit if/and/or: name the member you mean
        raise TypeError(f"{self} is not a bool; compare it with Agreement.AGREE, "
                        "DISAGREE or UNCHECKED")


class Source(StrEnum):
    """Every name a row's `sources` uses, as the report prints it.
    harness/checks/labels.py says what each shares with the module."""
    # the module's claims
    MODULE = "module"                   # its text on the data port
    MEMORY = "memory"                   # its ksymlab_results, as gdb reads them
    DRGN_MEMORY = "drgn_memory"         # its ksymlab_results, as drgn reads them
    # oracles that read guest memory
    GDB = "gdb"
    GDB_BITMAP = "gdb_bitmap"
    GDB_BITMAP_ONLINE = "gdb_bitmap_online"     # gdb_bitmap's online sections only
    GDB_CLASS = "gdb_class"
    GDB_INITIAL_JIFFIES = "gdb_initial_jiffies"
    GDB_JIFFIES = "gdb_jiffies"
    GDB_WB_DOMAIN = "gdb_wb_domain"
    GDB_FORMULA = "formula on gdb's reading"      # a derived field's formula on gdb's inputs
    DRGN = "drgn"
    # the guest kernel's own files
    PROC_STAT = "proc_stat"
    PAGETYPEINFO = "pagetypeinfo"
    PROC_KALLSYMS = "proc_kallsyms"
    SYSFS = "sysfs"
    GUEST = "guest"
    VMSTAT = "vmstat"
    # what the value must be, without asking the kernel
    SCENARIO = "scenario"
    EXPECTED = "expected"
    PROGRAM = "program"
    PROGRAM_WALK = "program_walk"
    PROGRAM_JIFFIES = "program_jiffies"
    # tools reading files on the host
    EU_ADDR2LINE = "eu_addr2line"
    # the LTTng rows (harness/lttng/rows/features.py): LTTng is the claim there
    LTTNG = "lttng"
    LTTNG_PRIO_CONTEXT = "lttng prio context"
    LTTNG_CALLSTACK_USER = "lttng callstack_user"
    LTTNG_CALLSTACK_KERNEL = "lttng callstack_kernel"
    VMLINUX_CALL_SITES = "vmlinux call sites"
    LTTNG_STATEDUMP = "lttng statedump"
    LTTNG_LAST_EVENT = "lttng last event before the stop"
    LTTNG_SETHOSTNAME = "lttng syscall_entry_sethostname"
    SCHED_SWITCH_PREV_PRIO = "sched_switch prev_prio"
    PROC_PARTITIONS = "/proc/partitions"
    LTTNG_IRQ_STATEDUMP = "lttng irq statedump"
    PROC_INTERRUPTS = "/proc/interrupts"
    GDB_IRQ = "gdb irq descriptors"
    FTRACE = "ftrace"
    GUEST_LSMOD = "guest lsmod"
    LTTNG_BUILD = "lttng build"
    LTTNG_UPROBE = "lttng uprobe"
    PROGRAM_SYMBOLS = "program symbols"
    LTTNG_LIST = "lttng list"
    GUEST_MODPROBE = "guest modprobe"
    GFP_MIGRATETYPE = "gfp_migratetype(gfp_flags)"
    SYMCHECK_AUDIT = "symcheck audit"
    SYMCHECK_CHECK = "symcheck check"
    SYMCHECK_CALLTYPES = "symcheck calltypes"
    # the seed claims' rows (harness/checks/seedclaims.py): where a claim is answered
    SEED_PATCH = "seed_patch"
    SYMVERS = "symvers"
    KSYMTAB = "ksymtab"
    DWARF = "dwarf"
    PAHOLE = "pahole"           # a struct's members, pahole's own reading of vmlinux's DWARF
    # columns that are not sources: the two-oracle rule's rows (kind "oracles"),
    # the vmcore's module sections row, the LTTng coverage rows
    INDEPENDENT = "independent"
    OTHER = "other"
    REQUIRED = "required"
    DIFFER = "differ"
    FEATURE = "feature"
    HOW = "how"


class Label(StrEnum):
    """What a source shares with the module (harness/checks/labels.py LABELS)."""
    CLAIM = "the claim"                     # it is the module (or LTTng) itself
    SAME_FUNCTION = "same function"         # it calls the function the module calls
    SAME_DATA = "same data"                 # it reads the table the module reads
    MEMORY = "independent (memory)"         # gdb, drgn: their own reads of guest memory
    EXPECTED = "independent (expected)"     # what the value must be
    FILE = "independent (file)"             # a tool on the host reading a file
    UNLABELLED = "unlabelled"               # a source LABELS does not describe

    @property
    def independent(self):
        """Whether a source with this label counts for the two-oracle rule."""
        return self in (Label.MEMORY, Label.EXPECTED, Label.FILE)
