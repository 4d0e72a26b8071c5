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
Every builder reads one Inputs (inputs.py): the TraceSummary, the GuestData,
`truth`, the GdbStop gdb read when it stopped the guest (harness/lttng/boot/
gdbstop.py), None when it read nothing: then every gdb source is missing and the
rows fail.
A feature listed in the variant's `lttng.lost` must be absent: present and
right, the expectation is wrong (fails); absent and not listed, LTTng lost it
(fails).
"""

from dataclasses import replace

from ...model.enums import Agreement
from ...checks.confusions import pair
from ...model.results import Check
from ...checks.ustack import addresses, neighbours, stack_confusions
from ...checks.prio import rt_derived_prio
from ...oracles.sched_prio import expected_prios
from .inputs import Inputs
from .derived import derived_rows
from .statedump import block_rows, irq_rows
from ..boot.trace import BDP_FIELDS, renamed

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
    # the same names in ftrace (TP_printk) and LTTng
    "writeback_balance_dirty_pages": ("balance_dirty_pages", {f: f for f in BDP_FIELDS}),
}


def _prio_confusions(gdb_task, right, mine):
    """A scenario task's prio against the fields LTTng's prio context could take instead,
    as gdb read them at its stop, and against the other task of each of its switches
    (checks/confusions.py); {} before gdb read them. normal_prio and the prio derived
    from rt_priority differ only for a boosted PI holder (the scenario's `pi` lines)."""
    if right is None or gdb_task is None or gdb_task.static_prio is None:
        return {}
    # the context is the current task's (prev at the switch); the next task is another
    nxt = [s.next_prio for s in mine]
    return {"static_prio": pair(right, gdb_task.static_prio),
            "rt_priority": pair(right, gdb_task.rt_priority),
            "normal_prio": pair(right, gdb_task.normal_prio),
            "prio derived from rt_priority": pair(right, rt_derived_prio(gdb_task)),
            "next_prio for the prio context": pair([right] * len(mine),
                                                   nxt if nxt and None not in nxt else None)}


def _one(values):
    return values[0] if len(values) == 1 else (values or None)


def _task_key(task, holders):
    """prio/<policy><value>; a PI holder's prio/pi-<policy><value>."""
    return f"prio/{'pi-' if task.pid in holders else ''}{task.policy}{task.value}"


def _task_row(ctx, task, expect, key):
    """The lttng:prio/... row of one scenario task whose task_prio() is `expect`."""
    switches = ctx.summary.sched_switch
    gdb_task = ctx.truth.task(task.pid) if ctx.truth else None
    mine = [s for s in switches if s.prev_tid == task.pid]
    ctx_prio = sorted({s.prio for s in mine if s.prio is not None})
    field = sorted({s.prev_prio for s in mine})
    sources = {"scenario": expect, "lttng prio context": _one(ctx_prio),
               "sched_switch prev_prio": _one(field),
               # a sleeping scenario task's prio does not change: gdb's read at
               # the stop is the prio of every switch recorded before it
               "gdb": gdb_task.prio if gdb_task else None}
    right = bool(mine) and ctx_prio == [expect] and field == [expect] and \
        sources["gdb"] == expect
    info = {"pid": task.pid, "switches": len(mine),
            "confusions": _prio_confusions(gdb_task, sources["gdb"], mine)}
    if not mine:
        return Check("lttng", key, sources, False, info,
                     "no sched_switch of this task in the trace")
    return ctx.expect("prio").row(key, bool(ctx_prio), right, sources, info)


def prio_rows(ctx):
    """A row per scenario task but a PI waiter (asleep in FUTEX_LOCK_PI, never woken
    while the trace records); a holder's expected prio is its boosted one
    (oracles/sched_prio.expected_prios)."""
    present = any(s.prio is not None for s in ctx.summary.sched_switch)
    tasks = ctx.guest.task
    expect = expected_prios([{"pid": t.pid, "policy": t.policy, "value": t.value,
                              "pi_owner": t.pi_owner} for t in tasks])
    holders = {t.pi_owner for t in tasks if t.pi_owner is not None}
    rows = [_task_row(ctx, t, expect.get(t.pid), _task_key(t, holders))
            for t in tasks if t.pi_owner is None]
    if not tasks:
        rows.append(Check("lttng", "prio/tasks", {"guest": None}, False, {},
                          "the guest listed no scenario task"))
    rows.append(ctx.expect("prio").row("feature/prio", present, present,
                                       {"lttng": "context recorded" if present else None}))
    return rows


def ustack_rows(ctx):
    expect = sorted(ctx.guest.ustack_expect, key=lambda e: e.depth)
    if not expect:
        return [Check("lttng", "ustack/program", {"program": None}, False, {},
                      "the ustack program printed no return addresses")]
    rule = ctx.expect("callstack_user")
    pid = expect[0].pid
    events = [e for e in ctx.summary.getppid if e.tid == pid]
    stacks = [list(e.stack) for e in events if e.stack]
    present = bool(stacks)
    stack = stacks[0] if stacks else []
    walk = [w.ip for w in sorted(ctx.guest.ustack_walk, key=lambda w: w.idx) if w.pid == pid]
    rows = []
    for e in expect:
        # stack[0] is the user ip at the syscall; stack[d] the return address of depth d
        got = stack[e.depth] if len(stack) > e.depth else None
        sources = {"program": f"{e.ret:#x}",
                   "lttng callstack_user": f"{got:#x}" if got is not None else None}
        rows.append(rule.row(f"ustack/depth{e.depth}", present, got == e.ret, sources,
                             {"pid": pid, "frames": len(stack), "events": len(events),
                              "confusions": neighbours(walk, e.ret)}))
    # The whole stack against the program's own frame-pointer walk (ustack-frames.h),
    # from a thread that is not the leader: one frame less or more, or the stack of
    # the thread group leader, is caught here (issue 25).
    tgid = expect[0].tgid
    sources = {"program_walk": addresses(walk) or None,
               "lttng callstack_user": addresses(stack) or None}
    row = rule.row("ustack/stack", present,
                   bool(walk) and stack == walk and tgid is not None and tgid != pid,
                   sources, {"pid": pid, "tgid": tgid, "frames": len(stack),
                             "walked": len(walk),
                             "confusions": stack_confusions(pid, tgid, walk)})
    if row.agreement is Agreement.DISAGREE and present and tgid == pid:
        row = replace(row, reason="the program's stack thread is its process's leader")
    rows.append(row)
    return rows


def _contiguous(needle, hay):
    """Offset at which the list `needle` sits inside `hay`, or None."""
    n = len(needle)
    for k in range(len(hay) - n + 1):
        if hay[k:k + n] == needle:
            return k
    return None


def writeback_rows(ctx):
    rows = []
    ftrace = ctx.guest.ftrace
    for event, (fevent, names) in FTRACE_FIELDS.items():
        ours = [dict(o) for o in ctx.summary.writeback[event]]
        theirs = [{mine: renamed(f.values, ft) for mine, ft in names.items()}
                  for f in ftrace if f.event == fevent]
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
        rows.append(ctx.expect("writeback").row(key, present, at is not None, sources, info))
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
        if f.event == "global_dirty_state":
            last = f.values.get("thresh")
        if f.event == event and last is not None:
            limits.append(f.values.get("limit"))
            thresholds.append(f.values.get("thresh") if event == "global_dirty_state"
                              else last)
    return pair(limits, thresholds) if limits else pair(None, None)


# The field of each writeback event that LTTng fills from global_wb_domain.dirty_limit
# (lttng-modules 2.13.9 include/instrumentation/events/writeback.h).
LIMIT_FIELD = {"writeback_global_dirty_state": "dirty_limit",
               "writeback_balance_dirty_pages": "limit"}


def _stop_row(stops, truth):
    """The trace marks gdb's stop once, in the task gdb stopped."""
    tids = [s.tid for s in stops]
    pid = truth.stop.pid if truth else None
    sources = {"lttng syscall_entry_sethostname": _one(tids), "gdb": pid}
    if len(tids) != 1:
        return Check("lttng", "gdb/stop", sources, False, {"stops": len(tids)},
                     f"the trace has {len(tids)} syscall_entry_sethostname events, not one: "
                     "where gdb stopped is not marked")
    return Check("lttng", "gdb/stop", sources, pid is not None and tids[0] == pid, {},
                 None if pid is not None else "gdb read nothing at the quiet point")


def gdb_rows(ctx):
    """The rows only gdb's stop can give: where it stopped, and the dirty limit.

    Exact, not a bound: after the sysctl writes, global_wb_domain.dirty_limit
    changes only in balance_dirty_pages() -> __wb_update_bandwidth(.., true) ->
    domain_update_dirty_limit(), and that task then records balance_dirty_pages
    (both of its trace_balance_dirty_pages() calls come after the update, 6.1
    mm/page-writeback.c); wb_update_bandwidth() passes false, and
    writeback_set_ratelimit() runs on the dirty sysctls and CPU hotplug only,
    before the writeback run. So the latest writeback event before the stop,
    and the latest balance_dirty_pages, carry the value gdb reads at the stop."""
    stops, truth = ctx.summary.stops, ctx.truth
    rows = [_stop_row(stops, truth)]
    gdb_limit = truth.global_wb_domain.dirty_limit if truth else None
    stop = stops[0] if len(stops) == 1 else None
    last = stop.last_writeback if stop else None
    picks = (("writeback/dirty_limit-at-stop", last.event if last else None,
              last.index if last else None),
             ("writeback/bdp-limit-at-stop", "writeback_balance_dirty_pages",
              stop.last_balance_dirty_pages if stop else None))
    for key, event, index in picks:
        value = ctx.summary.writeback[event][index][LIMIT_FIELD[event]] \
            if event is not None and index is not None else None
        sources = {"lttng last event before the stop": value, "gdb_wb_domain": gdb_limit}
        # A limit of 0 is what LTTng records when global_wb_domain is not found.
        rows.append(ctx.expect("writeback").row(
            key, bool(value), value is not None and value == gdb_limit, sources,
            {"event": event, "index": index}))
    return rows


def _migratetype(alloc):
    return (alloc.gfp_flags & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT


def kmem_rows(ctx):
    loaded = any(m.name == "lttng_probe_kmem" for m in ctx.guest.module)
    allocs = ctx.summary.page_alloc
    bad = [a for a in allocs if a.migratetype != _migratetype(a)]
    sources = {"lttng": {"events": len(allocs), "wrong": len(bad)},
               "gfp_migratetype(gfp_flags)": {"events": len(allocs) - len(bad)}}
    # a port that records one constant type passes unless the allocations differ in it
    types = sorted({_migratetype(a) for a in allocs})
    confusions = {"one migratetype for every allocation": pair(types, types[:1])} \
        if types else {}
    rule = ctx.expect("kmem")
    first_wrong = [{"gfp_flags": a.gfp_flags, "migratetype": a.migratetype} for a in bad[:3]]
    return [
        rule.row("kmem/probe-loaded", loaded, loaded, {"guest lsmod": loaded}),
        rule.row("kmem/migratetype", bool(allocs), not bad and bool(allocs), sources,
                 {"first_wrong": first_wrong, "confusions": confusions}),
    ]


def count_rows(ctx):
    rows = []
    for event, feature in EXPECTED_EVENTS.items():
        n = ctx.summary.counts.get(event, 0)
        if feature in ctx.lost:
            agree, reason = (n == 0), f"{feature} lost on this variant"
        else:
            agree, reason = (n > 0), None if n else "no event of this kind"
        rows.append(Check("lttng", f"count/{event}", {"lttng": n}, agree, {}, reason))
    discarded = ctx.summary.discarded
    rows.append(Check("lttng", "count/discarded", {"lttng": discarded}, discarded == 0, {},
                      None if not discarded else "events lost in the buffers"))
    return rows


def compare(ctx: Inputs):
    """Every lttng:* Check row of one variant."""
    errors = [Check("lttng", f"guest/{i}", {"guest": " ".join(e.text)}, False, {},
                    "the LTTng guest reported an error")
              for i, e in enumerate(ctx.guest.error)]
    if ctx.truth is None:
        errors.append(Check("lttng", "gdb/read", {"gdb": None}, False, {},
                            "gdb read nothing at the quiet point"))
    return tuple(errors + prio_rows(ctx) + ustack_rows(ctx) + block_rows(ctx)
                 + writeback_rows(ctx) + gdb_rows(ctx) + derived_rows(ctx) + kmem_rows(ctx)
                 + irq_rows(ctx)
                 + count_rows(ctx))
