"""The LTTng guest's oracle lines (ttyS1): `<kind> key=value ...`, up to
KSYMLAB-LTTNG-END. read() gives them as JSON (guest.json: {kind: [{field: value}]});
parse() as a GuestData record, one typed tuple per kind the checks read."""

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Tuple

from ...errors import HarnessError
from ...oracles.readings import INT, STR, _Bad, _f, _Parsed, list_of, optional, record

END = "KSYMLAB-LTTNG-END"
INTS = {"pid", "tgid", "pi_owner", "value", "deadline", "period", "depth", "ret", "idx", "ip",
        "major", "minor", "added", "available", "irq", "loaded", "addr", "size", "sectors",
        "hidden"}


def read(text):
    """{kind: [ {field: value} ]}; HarnessError when the end marker is missing."""
    if END not in text:
        raise HarnessError("verify", f"the LTTng data port has no {END} line")
    out = {}
    for line in text.split(END, 1)[0].splitlines():
        words = line.strip().split()
        if not words:
            continue
        kind, fields = words[0], {}
        for w in words[1:]:
            if "=" not in w:
                fields.setdefault("text", []).append(w)
                continue
            k, v = w.split("=", 1)
            if k in INTS or kind == "ftrace" and k != "event":
                try:
                    v = int(v, 0)
                except ValueError:
                    raise HarnessError("verify", f"LTTng data port: {k}={v!r} is not "
                                       f"an integer in {line.strip()!r}") from None
            fields[k] = v
        out.setdefault(kind, []).append(fields)
    return out


def parse(text):
    """The GuestData of the data port's `text`."""
    return GuestData.parse(read(text))


OPT_INT = optional(INT)
WORDS = list_of(STR)        # the words of a line that are not key=value


@dataclass(frozen=True)
class Task:
    """A scenario task (lttng-init, ksymlab-sched): its pid and the policy it set; a
    thread of a PI chain (ksymlab-threads pi) has its tgid, and a waiter the pid of
    the holder it blocks on (pi_owner)."""
    pid: int = _f(INT)
    policy: str = _f(STR)
    value: int = _f(INT)
    deadline: Optional[int] = _f(OPT_INT, default=None)
    period: Optional[int] = _f(OPT_INT, default=None)
    tgid: Optional[int] = _f(OPT_INT, default=None)
    pi_owner: Optional[int] = _f(OPT_INT, default=None)


@dataclass(frozen=True)
class UstackExpect:
    """A return address the ustack program read from its own frames (depth 1..3)."""
    pid: int = _f(INT)
    depth: int = _f(INT)
    ret: int = _f(INT)
    tgid: Optional[int] = _f(OPT_INT, default=None)


@dataclass(frozen=True)
class UstackWalk:
    """One frame of the program's own frame-pointer walk, idx 0 innermost."""
    pid: int = _f(INT)
    idx: int = _f(INT)
    ip: int = _f(INT)


@dataclass(frozen=True)
class SysBlock:
    """/sys/class/block/<name>: dev, size and (a disk's) hidden."""
    name: str = _f(STR)
    dev: str = _f(STR)          # MAJOR:MINOR; "-": no `dev` (no dev_t: a hidden disk)
    sectors: Optional[int] = _f(OPT_INT, default=None)
    hidden: Optional[int] = _f(OPT_INT, default=None)     # GENHD_FL_HIDDEN; None: a partition


@dataclass(frozen=True)
class TestDisk:
    """A disk the guest test module ksymlab_disks added (its dmesg line, issue 43)."""
    name: str = _f(STR)
    dev: str = _f(STR)          # MAJOR:MINOR of disk_devt()
    hidden: int = _f(INT)
    sectors: int = _f(INT)


@dataclass(frozen=True)
class Partition:
    """A line of /proc/partitions."""
    name: str = _f(STR)
    major: int = _f(INT)
    minor: int = _f(INT)


@dataclass(frozen=True)
class Interrupt:
    """A numbered line of /proc/interrupts: its words after the number."""
    irq: int = _f(INT)
    text: Tuple[str, ...] = _f(WORDS, default=())


@dataclass(frozen=True)
class SharedIrq:
    """The line the guest test module ksymlab_shirq put two handlers on (0: none took
    them), harness/guest/assets/shirq."""
    irq: int = _f(INT)


def _ftrace(v, path):
    if not isinstance(v, dict):
        raise _Bad(path, "is not an object")
    event = optional(STR)(v.get("event"), f"{path}.event")
    return Ftrace(event, MappingProxyType({k: OPT_INT(x, f"{path}.{k}")
                                           for k, x in v.items() if k != "event"}))


@dataclass(frozen=True)
class Ftrace:
    """A writeback event of the kernel's own ftrace (event None: the `available=0`
    line of a kernel without them); `values`: its numeric fields by ftrace's names."""
    event: Optional[str]
    values: Mapping[str, Optional[int]]


@dataclass(frozen=True)
class Module:
    """A line of /proc/modules."""
    name: str = _f(STR)
    size: Optional[int] = _f(OPT_INT, default=None)
    addr: Optional[int] = _f(OPT_INT, default=None)


@dataclass(frozen=True)
class KText:
    addr: Optional[int] = _f(OPT_INT)     # _text in /proc/kallsyms


@dataclass(frozen=True)
class Kmod:
    """modprobe of a probe: loaded 1 or 0, then its message."""
    name: str = _f(STR)
    loaded: int = _f(INT)
    text: Tuple[str, ...] = _f(WORDS, default=())


@dataclass(frozen=True)
class KmodLine:
    """A dmesg line about one module, its words after the module's name."""
    name: str = _f(STR)
    text: Tuple[str, ...] = _f(WORDS, default=())


@dataclass(frozen=True)
class Named:
    name: str = _f(STR)


@dataclass(frozen=True)
class Context:
    """`lttng add-context` that failed: added=0."""
    name: str = _f(STR)
    added: int = _f(INT)


@dataclass(frozen=True)
class ChannelOut:
    """A channel's output mode (`lttng --mi xml list`): SPLICE or MMAP."""
    output: Optional[str] = _f(optional(STR), default=None)


@dataclass(frozen=True)
class Words:
    """A line of free text (an error, a dmesg line)."""
    text: Tuple[str, ...] = _f(WORDS, default=())


def _kind(cls):
    """A kind's lines: a tuple of cls, none when the guest printed no such line."""
    return _f(list_of(record(cls) if cls is not Ftrace else _ftrace), default=())


@dataclass(frozen=True)
class GuestData(_Parsed):
    """The data port's lines by kind; a field a line must have is checked here."""
    STEP = "verify"
    SOURCE = "the LTTng data port"
    task: Tuple[Task, ...] = _kind(Task)
    ustack_expect: Tuple[UstackExpect, ...] = _f(list_of(record(UstackExpect)), "ustack-expect",
                                                 default=())
    ustack_walk: Tuple[UstackWalk, ...] = _f(list_of(record(UstackWalk)), "ustack-walk",
                                             default=())
    sysblock: Tuple[SysBlock, ...] = _kind(SysBlock)
    partitions: Tuple[Partition, ...] = _kind(Partition)
    interrupts: Tuple[Interrupt, ...] = _kind(Interrupt)
    shirq: Tuple[SharedIrq, ...] = _kind(SharedIrq)
    testdisk: Tuple[TestDisk, ...] = _kind(TestDisk)
    ftrace: Tuple[Ftrace, ...] = _kind(Ftrace)
    module: Tuple[Module, ...] = _kind(Module)
    ktext: Tuple[KText, ...] = _kind(KText)
    kmod: Tuple[Kmod, ...] = _kind(Kmod)
    kmodlist: Tuple[Named, ...] = _kind(Named)
    kmoddmesg: Tuple[Words, ...] = _kind(Words)
    formods: Tuple[Kmod, ...] = _kind(Kmod)
    formodsmsg: Tuple[KmodLine, ...] = _kind(KmodLine)
    context: Tuple[Context, ...] = _kind(Context)
    channelout: Tuple[ChannelOut, ...] = _kind(ChannelOut)
    error: Tuple[Words, ...] = _kind(Words)
