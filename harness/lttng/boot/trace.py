"""Read an LTTng kernel trace with babeltrace2's Python bindings (python3-bt2, only
under /usr/bin/python3) into a summary: read() gives its JSON (summary.json), and
TraceSummary.parse() the typed record the checks read; unit tests feed doctored
JSON summaries through the same parse, without a trace."""

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Tuple

from ...errors import HarnessError
from ...oracles.readings import (INT, STR, _f, _Parsed, list_of, map_of, optional,
                                 record)

# The events whose values are checked; every other event is only counted.
WRITEBACK = ("writeback_global_dirty_state", "writeback_balance_dirty_pages")
# The userspace probe lttng-init puts on the ustack program's level2() (uprobe.py).
UPROBE_EVENT = "ksymlab_uprobe_level2"
# The event that marks where gdb stopped the guest (harness/lttng/boot/gdbstop.py).
STOP_EVENT = "syscall_entry_sethostname"
# balance_dirty_pages' fields that LTTng and the kernel's ftrace event both compute
# from the tracepoint's arguments (issue 43: the derived ones, setpoint and
# bdi_setpoint from several values, compared too). paused and think are left out:
# each probe reads jiffies itself, so a tick between the two differs.
BDP_FIELDS = ("limit", "setpoint", "dirty", "bdi_setpoint", "bdi_dirty", "dirty_ratelimit",
              "task_ratelimit", "dirtied", "dirtied_pause", "pause", "period")
WB_FIELDS = {"writeback_global_dirty_state": ("dirty_limit", "background_thresh",
                                              "dirty_thresh"),
             "writeback_balance_dirty_pages": BDP_FIELDS}


# balance_dirty_pages' per-writeback fields, named after the wb since the event takes
# the dtc (v6.15; LTTng 2.16 names them so too): the same values under both names.
RENAMED = {"bdi_setpoint": "wb_setpoint", "bdi_dirty": "wb_dirty"}


def renamed(values, name):
    """values[name] of a mapping, or under the field's later name (RENAMED); None
    when neither is there."""
    got = values.get(name)
    return values.get(RENAMED[name]) if got is None and name in RENAMED else got


def _int(ev, name):
    for n in (name, RENAMED.get(name)):
        try:
            return int(ev[n]) if n else None
        except KeyError:
            continue
    return None


def _addresses(ev, name):
    """A callstack context's addresses, None when the event has no such field."""
    try:
        return [int(x) for x in ev[name]]
    except KeyError:
        return None


def new_summary():
    return {"counts": {}, "sched_switch": [], "block": [], "irq": [], "process_state": 0,
            "writeback": {k: [] for k in WRITEBACK}, "page_alloc": [], "getppid": [],
            "uprobe": [],
            "discarded": 0, "stops": [], "last_writeback": None}


def add_event(out, name, ev):
    """Add one event (`ev[field]` gives its fields) to the summary `out`; events
    come in trace order (bt2's muxer, by timestamp; the guest has one CPU)."""
    out["counts"][name] = out["counts"].get(name, 0) + 1
    if name == "sched_switch":
        out["sched_switch"].append({"prev_tid": _int(ev, "prev_tid"),
                                    "prev_prio": _int(ev, "prev_prio"),
                                    "next_prio": _int(ev, "next_prio"),
                                    "prio": _int(ev, "prio")})
    elif name == "lttng_statedump_block_device":
        dev = int(ev["dev"])
        out["block"].append({"name": str(ev["diskname"]),
                             "dev": f"{dev >> 20}:{dev & 0xfffff}"})
    elif name == "lttng_statedump_interrupt":
        out["irq"].append({"irq": _int(ev, "irq"), "chip": str(ev["name"]),
                           "action": str(ev["action"])})
    elif name == "lttng_statedump_process_state":
        out["process_state"] += 1
    elif name in WRITEBACK:
        out["writeback"][name].append({f: _int(ev, f) for f in WB_FIELDS[name]})
        out["last_writeback"] = {"event": name, "index": len(out["writeback"][name]) - 1}
    elif name == STOP_EVENT:
        # what LTTng recorded before gdb's stop is what came before this event
        bdp = len(out["writeback"]["writeback_balance_dirty_pages"])
        out["stops"].append({"tid": _int(ev, "tid"),
                             "last_writeback": out["last_writeback"],
                             "last_balance_dirty_pages": bdp - 1 if bdp else None})
    elif name == "kmem_mm_page_alloc":
        out["page_alloc"].append({"gfp_flags": _int(ev, "gfp_flags"),
                                  "migratetype": _int(ev, "migratetype")})
    elif name == UPROBE_EVENT:
        out.setdefault("uprobe", []).append({"tid": _int(ev, "tid"), "ip": _int(ev, "ip")})
    elif name == "syscall_entry_getppid":
        # stack: callstack-user; kstack: callstack-kernel, innermost frame first (a
        # summary written before the kernel context has no kstack: read it with .get)
        out["getppid"].append({"tid": _int(ev, "tid"),
                               "stack": _addresses(ev, "callstack_user"),
                               "kstack": _addresses(ev, "callstack_kernel")})


def read(trace_dir):
    """The JSON summary (summary.json) of the CTF trace under `trace_dir`."""
    try:
        import bt2
    except ImportError as e:
        raise HarnessError("deps", "python3-bt2 missing: apt-get install python3-bt2 "
                           "(and run the harness with /usr/bin/python3)") from e
    kernel = [p.parent for p in Path(trace_dir).rglob("metadata")]
    if not kernel:
        raise HarnessError("verify", f"{trace_dir}: no CTF metadata in the trace")
    out = new_summary()
    try:
        it = bt2.TraceCollectionMessageIterator([str(p) for p in kernel])
        for msg in it:
            if type(msg) is bt2._DiscardedEventsMessageConst:
                out["discarded"] += msg.count or 0
                continue
            if type(msg) is not bt2._EventMessageConst:
                continue
            add_event(out, msg.event.name, msg.event)
    except bt2._Error as e:     # noqa: SLF001 - bt2's one error type
        raise HarnessError("verify", f"babeltrace2 cannot read {trace_dir}: "
                           f"{str(e).splitlines()[0] if str(e) else e!r}") from e
    return out


def summarize(trace_dir):
    """The TraceSummary of the CTF trace under `trace_dir`."""
    return TraceSummary.parse(read(trace_dir))


# ---- the summary as typed records (each a dict add_event() writes) ----

OPT_INT = optional(INT)


@dataclass(frozen=True)
class Switch:
    """One sched_switch: the prev task's tid and prio field, the next task's prio
    field, and the prio context (None when the session has none)."""
    prev_tid: Optional[int] = _f(OPT_INT)
    prev_prio: Optional[int] = _f(OPT_INT)
    prio: Optional[int] = _f(OPT_INT)
    next_prio: Optional[int] = _f(OPT_INT, default=None)    # not in older summaries


@dataclass(frozen=True)
class BlockDevice:
    """One lttng_statedump_block_device: its disk name and dev as MAJOR:MINOR."""
    name: str = _f(STR)
    dev: str = _f(STR)


@dataclass(frozen=True)
class IrqEvent:
    """One lttng_statedump_interrupt: an action of an interrupt."""
    irq: Optional[int] = _f(OPT_INT)
    chip: Optional[str] = _f(optional(STR))
    action: str = _f(STR)


@dataclass(frozen=True)
class PageAlloc:
    gfp_flags: Optional[int] = _f(OPT_INT)
    migratetype: Optional[int] = _f(OPT_INT)


@dataclass(frozen=True)
class Getppid:
    """One syscall_entry_getppid and its callstack contexts, innermost frame first
    (None: the event has no such context)."""
    tid: Optional[int] = _f(OPT_INT)
    stack: Optional[Tuple[int, ...]] = _f(optional(list_of(INT)))     # callstack-user
    kstack: Optional[Tuple[int, ...]] = _f(optional(list_of(INT)), default=None)


@dataclass(frozen=True)
class UprobeHit:
    tid: Optional[int] = _f(OPT_INT)
    ip: Optional[int] = _f(OPT_INT)


@dataclass(frozen=True)
class WritebackRef:
    """Which writeback event came last: its name and index in TraceSummary.writeback."""
    event: str = _f(STR)
    index: int = _f(INT)


@dataclass(frozen=True)
class Stop:
    """One STOP_EVENT (where gdb stopped the guest) and the writeback events before it."""
    tid: Optional[int] = _f(OPT_INT)
    last_writeback: Optional[WritebackRef] = _f(optional(record(WritebackRef)))
    last_balance_dirty_pages: Optional[int] = _f(OPT_INT)


@dataclass(frozen=True)
class TraceSummary(_Parsed):
    """summary.json as a record; keys an older summary lacks default to empty."""
    STEP = "verify"
    SOURCE = "summary.json"
    counts: Mapping[str, int] = _f(map_of(INT))
    sched_switch: Tuple[Switch, ...] = _f(list_of(record(Switch)))
    block: Tuple[BlockDevice, ...] = _f(list_of(record(BlockDevice)))
    process_state: int = _f(INT)
    # event -> its fields (WB_FIELDS) per event
    writeback: Mapping[str, Tuple[Mapping[str, Optional[int]], ...]] = _f(
        map_of(list_of(map_of(OPT_INT))))
    page_alloc: Tuple[PageAlloc, ...] = _f(list_of(record(PageAlloc)))
    getppid: Tuple[Getppid, ...] = _f(list_of(record(Getppid)))
    irq: Tuple[IrqEvent, ...] = _f(list_of(record(IrqEvent)), default=())
    uprobe: Tuple[UprobeHit, ...] = _f(list_of(record(UprobeHit)), default=())
    discarded: int = _f(INT, default=0)
    stops: Tuple[Stop, ...] = _f(list_of(record(Stop)), default=())
