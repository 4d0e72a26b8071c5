"""The data port's schema: the frozen dataclass each kind of line becomes.

KINDS maps every kind the guest or the module writes to its row class; a
row's fields are the line's keys, typed by their annotation (int, float,
str). A field with a default (None) is a key only some lines of the kind
carry; every other field is required. guest/dataport.py parses lines into
these rows and says in one line what is wrong with a line that does not fit.
"""

from dataclasses import dataclass, field, fields, make_dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Tuple

__all__ = ["BadLine", "KINDS", "ROW_KINDS", "GuestData", "Rows", "attr", "row_dict"]


class BadLine(Exception):
    """A malformed line: why, in a few words (dataport.parse_line() adds where)."""


# ---- one row per kind: harness/guest/assets/init and its programs, probe-module ----

@dataclass(frozen=True)
class Guest:
    """The guest init's first line."""
    kernel: str                     # uname -r
    mode: str                       # KSYMLAB_MODE: how the module resolves symbols


@dataclass(frozen=True)
class Task:
    """A scenario task: the init (nice), ksymlab-sched (sched.c), ksymlab-threads."""
    pid: int
    policy: str                     # the scenario's policy name: nice, fifo, rr, ...
    value: int                      # nice, rt priority, or (deadline) the runtime in ns
    deadline: Optional[int] = None  # deadline tasks: their deadline and period (ns)
    period: Optional[int] = None
    tgid: Optional[int] = None      # ksymlab-threads: the thread group
    pi_owner: Optional[int] = None  # ksymlab-threads pi: the PI futex's owner it waits on


@dataclass(frozen=True)
class Symbol:
    """/proc/ksymlab/symbols: a symbol the module resolved (resolve.c)."""
    name: str
    addr: int                       # 0 when unresolved
    method: str                     # export, kprobe, kallsyms, getter, unresolved


@dataclass(frozen=True)
class Resolve:
    """/proc/ksymlab/symbols: how the module resolved them and how long it took."""
    mode: str
    ns: int


@dataclass(frozen=True)
class Sampler:
    """/proc/ksymlab/symbols: one sampler of the module (main.c)."""
    name: str
    available: int                  # 1 or 0
    missing: str                    # the symbol it lacks, "-" when available


@dataclass(frozen=True)
class Results:
    """/proc/ksymlab/symbols: &ksymlab_results and its size."""
    addr: int
    size: int


@dataclass(frozen=True)
class Prio:
    """/proc/ksymlab/prio: one task of the module's prio sample (prio.c)."""
    pid: int
    policy: int                     # task_struct.policy, SCHED_*
    prio: int                       # task_prio()
    comm: str


@dataclass(frozen=True)
class Pageblock:
    """/proc/ksymlab/migratetype: one pageblock's migratetype (migratetype.c)."""
    node: int
    zone: str
    pfn: int
    mt: int


@dataclass(frozen=True)
class Mthist:
    """/proc/ksymlab/migratetype: pageblocks per zone and migratetype."""
    node: int
    zone: str
    mt: int
    count: int


@dataclass(frozen=True)
class Ptinfo:
    """/proc/pagetypeinfo's "Number of blocks type" (the guest init's awk)."""
    node: int
    zone: str
    mt: int
    count: int


@dataclass(frozen=True)
class Bdev:
    """/proc/ksymlab/blockdev: one disk or partition (blockdev.c)."""
    name: str
    dev: str                        # MAJOR:MINOR
    sectors: int
    whole: int                      # 1 for a disk, 0 for a partition


@dataclass(frozen=True)
class Sysblock:
    """/sys/class/block/<name> as the guest init reads it."""
    name: str
    dev: str                        # MAJOR:MINOR; "-": no `dev` (no dev_t: a hidden disk)
    sectors: int
    whole: int                      # 0 when it has a `partition` attribute
    hidden: Optional[int] = None    # a disk's `hidden` attribute (GENHD_FL_HIDDEN)


@dataclass(frozen=True)
class Testdisk:
    """A disk the guest test module ksymlab_disks added (its dmesg line, issue 43)."""
    name: str
    dev: str                        # MAJOR:MINOR of disk_devt()
    hidden: int                     # GENHD_FL_HIDDEN set
    sectors: int


@dataclass(frozen=True)
class Writeback:
    """/proc/ksymlab/writeback: the tracepoint probes' counts and thresholds."""
    gds_hits: int                   # global_dirty_state
    bdp_hits: int                   # balance_dirty_pages
    background_thresh: int
    dirty_thresh: int


@dataclass(frozen=True)
class Dirtylimit:
    """/proc/ksymlab/writeback: the dirty limit each tracepoint saw."""
    source: str                     # where the module found the domain
    gds: int
    bdp: int


@dataclass(frozen=True)
class Frame:
    """/proc/ksymlab/ustack: one user stack frame of ksymlab-ustack (ustack.c)."""
    pid: int
    idx: int
    ip: int


@dataclass(frozen=True)
class UstackExpect:
    """ksymlab-ustack's own __builtin_return_address() at a depth (ustack-frames.h),
    in a thread (pid) that is not its process's leader (tgid)."""
    pid: int
    tgid: int
    depth: int
    ret: int


@dataclass(frozen=True)
class UstackWalk:
    """ksymlab-ustack's own frame-pointer walk, frame idx (0: the syscall's user ip)."""
    pid: int
    idx: int
    ip: int


@dataclass(frozen=True)
class Unavailable:
    """A sampler that reported itself unavailable."""
    sampler: str


@dataclass(frozen=True)
class Bench:
    """/proc/ksymlab/bench (resolve.c) and ksymlab-bench's load times (bench.c)."""
    kind: str                       # direct, pointer, resolve, load
    calls: int
    ns: int
    sum: Optional[int] = None       # resolve: the sum that keeps the calls
    round: Optional[int] = None     # load: which load of the module


@dataclass(frozen=True)
class Bpf:
    """ksymlab-bpf13: one raw_tp program on balance_dirty_pages (bpf13.c)."""
    arg: int
    result: str                     # ok, rejected, attach-failed, no-map
    errno: Optional[int] = None     # all but ok
    verifier: Optional[str] = None  # rejected: the verifier's reason, spaces as _
    hits: Optional[int] = None      # ok: how often it ran, what it read, ...
    value: Optional[int] = None
    arg1: Optional[int] = None
    writes: Optional[int] = None
    jiffies: Optional[int] = None   # its own bpf_jiffies64()

    def __post_init__(self):
        # what each result always carries (bpf13.c): a program that ran its
        # five values, any other result the errno
        need = ("hits", "value", "arg1", "writes", "jiffies") if self.result == "ok" \
            else ("errno",)
        for name in need:
            if getattr(self, name) is None:
                raise BadLine(f"{name}: missing (result={self.result})")


@dataclass(frozen=True)
class Vmstat:
    """/proc/vmstat's dirty thresholds (the last global_dirty_state event)."""
    name: str
    value: int


@dataclass(frozen=True)
class Procstat:
    """Field 18 (priority) of /proc/<pid>/stat."""
    pid: int
    prio: int


@dataclass(frozen=True)
class Kallsyms:
    """/proc/kallsyms for a symbol the module resolved (and kallsyms_lookup_name)."""
    name: str
    addr: int
    type: str
    next: Optional[int] = None      # the next address the file lists (none: the last line)


@dataclass(frozen=True)
class Stress:
    """The insmod/rmmod stress run."""
    cycles: int
    failed: int


@dataclass(frozen=True)
class Kmemleak:
    """kmemleak after the stress run."""
    available: int
    leaks: int
    ksymlab_frames: int


@dataclass(frozen=True)
class Dmesg:
    """Warnings in dmesg after the stress run."""
    warnings: int


@dataclass(frozen=True)
class Error:
    """`error <text>`: the guest init failed (its fail()); not key=value."""
    message: str


@dataclass(frozen=True)
class Section:
    """/sys/module/ksymlab_probe/sections/<name>."""
    name: str
    addr: int


@dataclass(frozen=True)
class Ktext:
    """_text in /proc/kallsyms: the KASLR slide."""
    addr: int


@dataclass(frozen=True)
class ArmedData:
    """The guest waits for gdb after this line."""


@dataclass(frozen=True)
class Snapshot:
    """The snapshot a module file's lines belong to (prio.c, migratetype.c)."""
    kind: str                       # prio, migratetype
    seq: int


@dataclass(frozen=True)
class Pbinfo:
    """"Page block order" of /proc/pagetypeinfo."""
    order: int


@dataclass(frozen=True)
class Fwcfg:
    """/sys/firmware/qemu_fw_cfg and its etc/vmcoreinfo, 1 when present."""
    sysfs: int
    vmcoreinfo: int


@dataclass(frozen=True)
class Phase:
    """A guest init phase and /proc/uptime's seconds when it ended."""
    name: str
    uptime: float


@dataclass(frozen=True)
class Snapshots:
    """How many snapshots the guest takes (gdb stops at each)."""
    count: int


@dataclass(frozen=True)
class Memstate:
    """What the guest changed between snapshots: a memory block taken offline."""
    action: str
    block: int                      # -1 when no block qualified
    start_pfn: int
    pages: int
    state: str                      # the block's state after: offline, online, ...


KINDS = {
    "guest": Guest,
    "task": Task,
    "symbol": Symbol,
    "resolve": Resolve,
    "sampler": Sampler,
    "results": Results,
    "prio": Prio,
    "pageblock": Pageblock,
    "mthist": Mthist,
    "ptinfo": Ptinfo,
    "bdev": Bdev,
    "sysblock": Sysblock,
    "testdisk": Testdisk,
    "writeback": Writeback,
    "dirtylimit": Dirtylimit,
    "frame": Frame,
    "ustack-expect": UstackExpect,
    "ustack-walk": UstackWalk,
    "unavailable": Unavailable,
    "bench": Bench,
    "bpf": Bpf,
    "vmstat": Vmstat,
    "procstat": Procstat,
    "kallsyms": Kallsyms,
    "stress": Stress,
    "kmemleak": Kmemleak,
    "dmesg": Dmesg,
    "error": Error,
    "section": Section,
    "ktext": Ktext,
    "armed-data": ArmedData,
    "snapshot": Snapshot,
    "pbinfo": Pbinfo,
    "fwcfg": Fwcfg,
    "phase": Phase,
    "snapshots": Snapshots,
    "memstate": Memstate,
}

# The kinds filed as rows (a tuple each); `guest` is one line, `error` lines
# are GuestData.errors.
ROW_KINDS = tuple(k for k in KINDS if k not in ("guest", "error"))


def attr(kind):
    """The attribute a kind's rows are under: `ustack-expect` -> ustack_expect."""
    return kind.replace("-", "_")


Rows = make_dataclass(
    "Rows", [(attr(k), Tuple[KINDS[k], ...], field(default=())) for k in ROW_KINDS],
    frozen=True)
Rows.__module__ = __name__
Rows.__doc__ = """One snapshot's lines: a tuple of rows per kind of ROW_KINDS, in line order."""


@dataclass(frozen=True)
class GuestData(Rows):
    """The data channel: the first snapshot's rows (Rows), the rows of every
    later snapshot under `at`, and what the guest said besides."""
    variant: Optional[str] = None   # the BEGIN line's variant=
    guest: Optional[Guest] = None
    errors: Tuple[str, ...] = ()    # the `error` lines' text
    at: Mapping[int, Rows] = field(default_factory=lambda: MappingProxyType({}))


def row_dict(row):
    """A row as JSON (report.json's bench facts): the keys its line carried, in
    schema order (the order every writer prints them in)."""
    return {f.name: getattr(row, f.name) for f in fields(row)
            if getattr(row, f.name) is not None}
