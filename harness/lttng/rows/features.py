"""Check rows of kind lttng:* from the trace summary (trace.py) and the guest's
own oracle lines (guestlines.py), against the variant's LTTng expectation.

Features LTTng 2.13.9 resolves through its kallsyms wrapper, each checked
against oracles that do not go through LTTng:
  prio             task_prio             scenario expected_prio + sched_switch prev_prio
                                         + gdb's task->prio at the quiet point
  callstack_user   stack_trace_save_user the program's own return addresses
  callstack_kernel stack_trace_save      vmlinux's call sites: each frame a return address
                                         of the syscall's chain (rows in kstack.py)
  uprobe           uprobe_register       the program's .symtab (nm): level2's address, once
                                         (rows in uprobe.py)
  splice           splice_to_pipe        every channel splices and the trace has its events
                                         (rows in splice.py)
  statedump_block  block_class, disk_type sysfs /sys/class/block + /proc/partitions
                                         + gdb's walk of the block class
  writeback        global_wb_domain      the kernel's own ftrace events, same calls;
                                         gdb's global_wb_domain.dirty_limit at the stop
  kmem             get_pfnblock_flags_mask  the kmem probe loads; migratetype = gfp bits
  statedump_irq    irq_to_desc           gdb's walk of the irq descriptors (allocated_irqs,
                                         irq_desc_tree or sparse_irqs) + /proc/interrupts
`truth` is what gdb read when it stopped the guest (harness/lttng/boot/gdbstop.py),
None when it read nothing: then every gdb source is missing and the rows fail.
A feature listed in the variant's `lttng.lost` must be absent: present and
right, the expectation is wrong (fails); absent and not listed, LTTng lost it
(fails).
"""

from dataclasses import replace
from types import SimpleNamespace

from ...checks.blockdev import partition_disk
from ...model.enums import Agreement
from ...checks.confusions import pair
from ...model.results import Check
from ...checks.ustack import addresses, neighbours, stack_confusions
from ...oracles.sched_prio import expected_prio

FEATURES = ("prio", "callstack_user", "callstack_kernel", "statedump_block", "writeback", "kmem",
            "statedump_irq", "uprobe", "splice")
# Event kinds the session must record (each with a count row).
EXPECTED_EVENTS = {
    "sched_switch": None, "lttng_statedump_process_state": None,
    "lttng_statedump_block_device": "statedump_block",
    "lttng_statedump_interrupt": "statedump_irq",
    "writeback_global_dirty_state": "writeback",
    "writeback_balance_dirty_pages": "writeback",
    "kmem_mm_page_alloc": "kmem", "syscall_entry_getppid": None,
}
# include/linux/gfp.h (6.1): GFP_MOVABLE_MASK = __GFP_RECLAIMABLE|__GFP_MOVABLE, shift 3
GFP_MOVABLE_MASK = 0x18
GFP_MOVABLE_SHIFT = 3
# ftrace's names for the fields LTTng records (include/trace/events/writeback.h TP_printk)
FTRACE_FIELDS = {
    "writeback_global_dirty_state": ("global_dirty_state",
                                     {"dirty_limit": "limit", "background_thresh": "bg_thresh",
                                      "dirty_thresh": "thresh"}),
    "writeback_balance_dirty_pages": ("balance_dirty_pages",
                                      {"limit": "limit", "setpoint": "setpoint",
                                       "dirty": "dirty"}),
}


def lost_row(kind_key, feature, present, right, lost, why, sources, info=None):
    """The verdict of one feature row under the expectation."""
    kind, key = kind_key
    if feature in lost:
        if present:
            return Check(kind, key, sources, False, info or {},
                         f"expected lost on this variant ({why}), but LTTng recorded it")
        return Check(kind, key, sources, True, info or {}, f"lost on this variant: {why}")
    return Check(kind, key, sources, bool(present and right), info or {},
                 None if present else f"LTTng recorded no {feature}: {why}")


def _prio_confusions(task, right, mine):
    """A scenario task's prio against the fields LTTng's prio context could take instead,
    as gdb read them at its stop, and against the other task of each of its switches
    (checks/confusions.py); {} before gdb read them. normal_prio is not among them: the
    LTTng guest runs no PI chain, so a context that read it could not be told apart (the
    probe-module boot's audit covers it)."""
    if right is None or task.get("static_prio") is None:
        return {}
    # the context is the current task's (prev at the switch); the next task is another
    nxt = [s.get("next_prio") for s in mine]
    return {"static_prio": pair(right, task["static_prio"]),
            "rt_priority": pair(right, task["rt_priority"]),
            "next_prio for the prio context": pair([right] * len(mine),
                                                   nxt if nxt and None not in nxt else None)}


def prio_rows(summary, guest, lost, why, truth=None):
    switches = summary["sched_switch"]
    gdb_tasks = (truth or {}).get("tasks", {})
    present = any(s["prio"] is not None for s in switches)
    rows = []
    for task in guest.get("task", []):
        pid = task["pid"]
        expect = expected_prio(task)
        mine = [s for s in switches if s["prev_tid"] == pid]
        ctx = sorted({s["prio"] for s in mine if s["prio"] is not None})
        field = sorted({s["prev_prio"] for s in mine})
        key = f"prio/{task['policy']}{task['value']}"
        sources = {"scenario": expect,
                   "lttng prio context": ctx[0] if len(ctx) == 1 else (ctx or None),
                   "sched_switch prev_prio": field[0] if len(field) == 1 else (field or None),
                   # a sleeping scenario task's prio does not change: gdb's read at
                   # the stop is the prio of every switch recorded before it
                   "gdb": gdb_tasks.get(str(pid), {}).get("prio")}
        right = bool(mine) and ctx == [expect] and field == [expect] and \
            sources["gdb"] == expect
        info = {"pid": pid, "switches": len(mine), "confusions": _prio_confusions(
            gdb_tasks.get(str(pid), {}), sources["gdb"], mine)}
        if not mine:
            rows.append(Check("lttng", key, sources, False, info,
                              "no sched_switch of this task in the trace"))
            continue
        rows.append(lost_row(("lttng", key), "prio", bool(ctx), right, lost, why, sources,
                              info))
    if not guest.get("task"):
        rows.append(Check("lttng", "prio/tasks", {"guest": None}, False, {},
                          "the guest listed no scenario task"))
    rows.append(lost_row(("lttng", "feature/prio"), "prio", present, present, lost, why,
                          {"lttng": "context recorded" if present else None}))
    return rows


def ustack_rows(summary, guest, lost, why):
    expect = sorted(guest.get("ustack-expect", []), key=lambda e: e["depth"])
    rows = []
    if not expect:
        return [Check("lttng", "ustack/program", {"program": None}, False, {},
                      "the ustack program printed no return addresses")]
    pid = expect[0]["pid"]
    events = [e for e in summary["getppid"] if e["tid"] == pid]
    stacks = [e["stack"] for e in events if e["stack"]]
    present = bool(stacks)
    stack = stacks[0] if stacks else []
    walk = [w["ip"] for w in sorted(guest.get("ustack-walk", []), key=lambda w: w["idx"])
            if w["pid"] == pid]
    for e in expect:
        # stack[0] is the user ip at the syscall; stack[d] the return address of depth d
        got = stack[e["depth"]] if len(stack) > e["depth"] else None
        sources = {"program": f"{e['ret']:#x}",
                   "lttng callstack_user": f"{got:#x}" if got is not None else None}
        rows.append(lost_row(("lttng", f"ustack/depth{e['depth']}"), "callstack_user",
                              present, got == e["ret"], lost, why, sources,
                              {"pid": pid, "frames": len(stack), "events": len(events),
                               "confusions": neighbours(walk, e["ret"])}))
    # The whole stack against the program's own frame-pointer walk (ustack-frames.h),
    # from a thread that is not the leader: one frame less or more, or the stack of
    # the thread group leader, is caught here (issue 25).
    tgid = expect[0].get("tgid")
    sources = {"program_walk": addresses(walk) or None,
               "lttng callstack_user": addresses(stack) or None}
    row = lost_row(("lttng", "ustack/stack"), "callstack_user", present,
                    bool(walk) and stack == walk and tgid is not None and tgid != pid,
                    lost, why, sources, {"pid": pid, "tgid": tgid, "frames": len(stack),
                                         "walked": len(walk),
                                         "confusions": stack_confusions(pid, tgid, walk)})
    if row.agreement is Agreement.DISAGREE and present and tgid == pid:
        row = replace(row, reason="the program's stack thread is its process's leader")
    rows.append(row)
    return rows


def _statedump_confusions(walk, walked, name):
    """A partition's dev_t against its disk's, by gdb's walk of the block class
    (checks/confusions.py); {} for a disk or a device gdb did not walk."""
    disk = partition_disk(name, [SimpleNamespace(**d) for d in walk])
    return {"the disk's for the partition's": pair(walked[name], disk.dev)} \
        if disk else {}


def block_rows(summary, guest, lost, why, truth=None):
    traced = {b["name"]: b["dev"] for b in summary["block"]}
    walk = (truth or {}).get("block_class", [])
    walked = {b["name"]: b["dev"] for b in walk}
    sysfs = {b["name"]: b["dev"] for b in guest.get("sysblock", [])}
    parts = {p["name"]: f"{p['major']}:{p['minor']}" for p in guest.get("partitions", [])}
    present = bool(traced)
    rows = []
    if not sysfs:
        rows.append(Check("lttng", "blockdev/sysfs", {"sysfs": None}, False, {},
                          "the guest listed no block device"))
    for name in sorted(set(sysfs) | set(traced) | set(parts) | set(walked)):
        sources = {"lttng statedump": traced.get(name), "sysfs": sysfs.get(name),
                   "/proc/partitions": parts.get(name), "gdb_class": walked.get(name)}
        right = traced.get(name) == sysfs.get(name) == parts.get(name) == \
            walked.get(name) is not None
        rows.append(lost_row(("lttng", f"blockdev/{name}"), "statedump_block", present,
                              right, lost, why, sources,
                              {"confusions": _statedump_confusions(walk, walked, name)}))
    return rows


# LTTng's name for a chip without one (lttng-statedump-impl.c), for gdb's None.
UNNAMED_CHIP = "unnamed_irq_chip"


def _by_irq(items):
    """irq -> (chip, [action names in the descriptor's order])."""
    out = {}
    for i in items:
        chip, actions = out.get(i["irq"], (i["chip"] or UNNAMED_CHIP, []))
        out[i["irq"]] = (chip, actions + [i["action"]])
    return out


def _irq_text(entry):
    return f"{entry[0]}: {', '.join(entry[1])}" if entry else None


def _in_proc(line, entry):
    """/proc/interrupts' line names the chip (unless unnamed) and each action."""
    if line is None or entry is None:
        return False
    chip, actions = entry
    padded = f" {line},"
    return (chip == UNNAMED_CHIP or f" {chip} " in f" {line} ") and \
        all(f" {a}," in padded for a in actions)


def irq_rows(summary, guest, lost, why, truth=None):
    """The interrupt statedump, one row per interrupt: LTTng's chip and actions against
    gdb's walk of the descriptors (exactly, in order) and the line /proc/interrupts
    prints for it (the chip and every action named). Neither oracle calls what LTTng
    calls (irq_to_desc() or irq_walk_actions())."""
    traced = _by_irq(summary.get("irq", []))
    walked = _by_irq((truth or {}).get("irq_actions", []))
    proc = {i["irq"]: " ".join(i.get("text", [])) for i in guest.get("interrupts", [])}
    rows = []
    if not proc:
        rows.append(Check("lttng", "statedump_irq/proc", {"/proc/interrupts": None}, False,
                          {}, "the guest listed no interrupt"))
    irqs = sorted(set(traced) | set(walked))
    for k, irq in enumerate(irqs):
        t, g = traced.get(irq), walked.get(irq)
        sources = {"lttng irq statedump": _irq_text(t), "gdb irq descriptors": _irq_text(g),
                   "/proc/interrupts": proc.get(irq)}
        right = t is not None and t == g and _in_proc(proc.get(irq), g)
        other = irqs[k + 1] if k + 1 < len(irqs) else irqs[k - 1] if k else None
        confusions = {"the neighbouring interrupt's": pair(_irq_text(g),
                                                          _irq_text(walked.get(other)))} \
            if g and walked.get(other) else {}
        rows.append(lost_row(("lttng", f"statedump_irq/{irq}"), "statedump_irq", bool(traced),
                              right, lost, why, sources, {"confusions": confusions}))
    return rows


def _contiguous(needle, hay):
    """Offset at which the list `needle` sits inside `hay`, or None."""
    n = len(needle)
    for k in range(len(hay) - n + 1):
        if hay[k:k + n] == needle:
            return k
    return None


def writeback_rows(summary, guest, lost, why):
    rows = []
    ftrace = guest.get("ftrace", [])
    for event, (fevent, names) in FTRACE_FIELDS.items():
        ours = summary["writeback"][event]
        theirs = [{mine: f.get(ft) for mine, ft in names.items()}
                  for f in ftrace if f.get("event") == fevent]
        key = f"writeback/{event.split('writeback_', 1)[1]}"
        at = _contiguous(ours, theirs) if ours else None
        limits = sorted({o[next(iter(names))] for o in ours})
        sources = {"lttng": {"events": len(ours), "limits": limits[:6]},
                   "ftrace": {"events": len(theirs),
                              "limits": sorted({t[next(iter(names))] for t in theirs})[:6]}}
        confused = {f"thresh for the {fevent} limit": _limit_vs_thresh(ftrace, fevent)}
        info = {"aligned_at": at, "fields": list(names), "confusions": confused}
        if not ftrace:
            rows.append(Check("lttng", key, sources, False, info,
                              "no ftrace oracle lines from the guest"))
            continue
        # A dirty limit of 0 is what LTTng records when global_wb_domain is not found.
        present = bool(ours) and any(limits)
        rows.append(lost_row(("lttng", key), "writeback", present, at is not None, lost, why,
                              sources, info))
    return rows


def _limit_vs_thresh(ftrace, event):
    """Each ftrace `event`'s dirty limit against the threshold in force at that event,
    [limits, thresholds] in event order (checks/confusions.py): global_dirty_state
    carries both; balance_dirty_pages takes the threshold of the global_dirty_state
    just before it (domain_dirty_limits() fires that event on the global domain in
    each balance_dirty_pages() pass). Told apart once a real-time writer lifted the
    limit (lttng-init, ksymlab-rtwrite); sets of values would not do: the events
    before the sysctl write differ, the ones that matter may not. None without events."""
    limits, thresholds, last = [], [], None
    for f in ftrace:
        if f.get("event") == "global_dirty_state":
            last = f.get("thresh")
        if f.get("event") == event and last is not None:
            limits.append(f.get("limit"))
            thresholds.append(f.get("thresh") if event == "global_dirty_state" else last)
    return pair(limits, thresholds) if limits else pair(None, None)


# The field of each writeback event that LTTng fills from global_wb_domain.dirty_limit
# (lttng-modules 2.13.9 include/instrumentation/events/writeback.h).
LIMIT_FIELD = {"writeback_global_dirty_state": "dirty_limit",
               "writeback_balance_dirty_pages": "limit"}


def _stop_row(stops, truth):
    """The trace marks gdb's stop once, in the task gdb stopped."""
    tids = [s["tid"] for s in stops]
    pid = truth["stop"]["pid"] if truth else None
    sources = {"lttng syscall_entry_sethostname": tids[0] if len(tids) == 1 else (tids or None),
               "gdb": pid}
    if len(tids) != 1:
        return Check("lttng", "gdb/stop", sources, False, {"stops": len(tids)},
                     f"the trace has {len(tids)} syscall_entry_sethostname events, not one: "
                     "where gdb stopped is not marked")
    return Check("lttng", "gdb/stop", sources, pid is not None and tids[0] == pid, {},
                 None if pid is not None else "gdb read nothing at the quiet point")


def gdb_rows(summary, truth, lost, why):
    """The rows only gdb's stop can give: where it stopped, and the dirty limit.

    Exact, not a bound: after the sysctl writes, global_wb_domain.dirty_limit
    changes only in balance_dirty_pages() -> __wb_update_bandwidth(.., true) ->
    domain_update_dirty_limit(), and that task then records balance_dirty_pages
    (both of its trace_balance_dirty_pages() calls come after the update, 6.1
    mm/page-writeback.c); wb_update_bandwidth() passes false, and
    writeback_set_ratelimit() runs on the dirty sysctls and CPU hotplug only,
    before the writeback run. So the latest writeback event before the stop,
    and the latest balance_dirty_pages, carry the value gdb reads at the stop."""
    stops = summary.get("stops", [])
    rows = [_stop_row(stops, truth)]
    gdb_limit = truth["global_wb_domain"]["dirty_limit"] if truth else None
    stop = stops[0] if len(stops) == 1 else {}
    last = stop.get("last_writeback")
    picks = (("writeback/dirty_limit-at-stop", last["event"] if last else None,
              last["index"] if last else None),
             ("writeback/bdp-limit-at-stop", "writeback_balance_dirty_pages",
              stop.get("last_balance_dirty_pages")))
    for key, event, index in picks:
        value = summary["writeback"][event][index][LIMIT_FIELD[event]] \
            if event is not None and index is not None else None
        sources = {"lttng last event before the stop": value, "gdb_wb_domain": gdb_limit}
        info = {"event": event, "index": index}
        # A limit of 0 is what LTTng records when global_wb_domain is not found.
        rows.append(lost_row(("lttng", key), "writeback", bool(value),
                              value is not None and value == gdb_limit, lost, why, sources,
                              info))
    return rows


def kmem_rows(summary, guest, lost, why):
    loaded = any(m.get("name") == "lttng_probe_kmem" for m in guest.get("module", []))
    allocs = summary["page_alloc"]
    bad = [a for a in allocs
           if a["migratetype"] != (a["gfp_flags"] & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT]
    sources = {"lttng": {"events": len(allocs), "wrong": len(bad)},
               "gfp_migratetype(gfp_flags)": {"events": len(allocs) - len(bad)}}
    # a port that records one constant type passes unless the allocations differ in it
    types = sorted({(a["gfp_flags"] & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT for a in allocs})
    confusions = {"one migratetype for every allocation": pair(types, types[:1])} \
        if types else {}
    return [
        lost_row(("lttng", "kmem/probe-loaded"), "kmem", loaded, loaded, lost, why,
                  {"guest lsmod": loaded}),
        lost_row(("lttng", "kmem/migratetype"), "kmem", bool(allocs), not bad and bool(allocs),
                  lost, why, sources, {"first_wrong": bad[:3], "confusions": confusions}),
    ]


def count_rows(summary, lost):
    rows = []
    for event, feature in EXPECTED_EVENTS.items():
        n = summary["counts"].get(event, 0)
        if feature in lost:
            agree, reason = (n == 0), f"{feature} lost on this variant"
        else:
            agree, reason = (n > 0), None if n else "no event of this kind"
        rows.append(Check("lttng", f"count/{event}", {"lttng": n}, agree, {}, reason))
    rows.append(Check("lttng", "count/discarded", {"lttng": summary.get("discarded", 0)},
                      summary.get("discarded", 0) == 0, {},
                      None if not summary.get("discarded") else "events lost in the buffers"))
    return rows


def compare(summary, guest, lost=(), why=None, truth=None):
    """Every lttng:* Check row of one variant; `truth`: what gdb read at its stop."""
    why = why or {}
    lost = tuple(lost)
    w = {f: why.get(f, "the variant's expectation lists it") for f in FEATURES}
    errors = [Check("lttng", f"guest/{i}", {"guest": " ".join(e.get("text", []))}, False, {},
                    "the LTTng guest reported an error")
              for i, e in enumerate(guest.get("error", []))]
    if truth is None:
        errors.append(Check("lttng", "gdb/read", {"gdb": None}, False, {},
                            "gdb read nothing at the quiet point"))
    return tuple(errors + prio_rows(summary, guest, lost, w["prio"], truth)
                 + ustack_rows(summary, guest, lost, w["callstack_user"])
                 + block_rows(summary, guest, lost, w["statedump_block"], truth)
                 + writeback_rows(summary, guest, lost, w["writeback"])
                 + gdb_rows(summary, truth, lost, w["writeback"])
                 + kmem_rows(summary, guest, lost, w["kmem"])
                 + irq_rows(summary, guest, lost, w["statedump_irq"], truth)
                 + count_rows(summary, lost))
