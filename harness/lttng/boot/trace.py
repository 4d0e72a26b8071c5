"""Read an LTTng kernel trace with babeltrace2's Python bindings (python3-bt2, only
under /usr/bin/python3) into a plain summary the checks compare; the summary is
JSON, so unit tests feed doctored summaries without a trace."""

from pathlib import Path

from ...errors import HarnessError

# The events whose values are checked; every other event is only counted.
WRITEBACK = ("writeback_global_dirty_state", "writeback_balance_dirty_pages")
# The userspace probe lttng-init puts on the ustack program's level2() (uprobe.py).
UPROBE_EVENT = "ksymlab_uprobe_level2"
# The event that marks where gdb stopped the guest (harness/lttng/boot/gdbstop.py).
STOP_EVENT = "syscall_entry_sethostname"
WB_FIELDS = {"writeback_global_dirty_state": ("dirty_limit", "background_thresh",
                                              "dirty_thresh"),
             "writeback_balance_dirty_pages": ("limit", "setpoint", "dirty")}


def _int(ev, name):
    try:
        return int(ev[name])
    except KeyError:
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


def summarize(trace_dir):
    """The summary of the CTF trace under `trace_dir`."""
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
