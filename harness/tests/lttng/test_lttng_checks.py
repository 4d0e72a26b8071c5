"""Unit tests of the LTTng comparison (harness/lttng/): each doctored input must
turn a passing row into a failing one."""

import copy

import pytest

from harness.errors import HarnessError
from harness.lttng.rows import features
from harness.lttng.rows.inputs import Inputs
from harness.lttng.boot import guestlines, session

GUEST_TEXT = """guest kernel=6.1.192 lttng_series=stock
task pid=50 policy=nice value=-20
task pid=51 policy=fifo value=50
task pid=52 policy=deadline value=1000000 deadline=10000000 period=100000000
module name=lttng_probe_kmem
module name=lttng_tracer
ftrace event=global_dirty_state dirty=3 writeback=0 bg_thresh=1 thresh=2 limit=7 dirtied=9 written=1
ftrace event=global_dirty_state dirty=3 writeback=0 bg_thresh=1 thresh=2 limit=6 dirtied=9 written=1
ftrace event=balance_dirty_pages limit=6 setpoint=3 dirty=4 bdi_setpoint=1 bdi_dirty=2 dirty_ratelimit=100 task_ratelimit=50 dirtied=32 dirtied_pause=32 paused=0 pause=4 period=8 think=0
ustack-expect pid=60 tgid=59 depth=1 ret=0x401656
ustack-expect pid=60 tgid=59 depth=2 ret=0x40166c
ustack-expect pid=60 tgid=59 depth=3 ret=0x401684
ustack-walk pid=60 idx=0 ip=0x401650
ustack-walk pid=60 idx=1 ip=0x401656
ustack-walk pid=60 idx=2 ip=0x40166c
ustack-walk pid=60 idx=3 ip=0x401684
ustack-walk pid=60 idx=4 ip=0x4017aa
sysblock name=ram0 dev=1:0
sysblock name=ram0p1 dev=259:0
partitions name=ram0 major=1 minor=0
partitions name=ram0p1 major=259 minor=0
interrupts irq=0 35 IO-APIC 2-edge timer
interrupts irq=4 12 IO-APIC 4-edge ttyS0, ttyS2
interrupts irq=9 0 IO-APIC 9-fasteoi acpi
KSYMLAB-LTTNG-END
"""

SUMMARY = {
    "counts": {"sched_switch": 6, "lttng_statedump_process_state": 20,
               "lttng_statedump_block_device": 2, "writeback_global_dirty_state": 1,
               "writeback_balance_dirty_pages": 1, "kmem_mm_page_alloc": 2,
               "syscall_entry_getppid": 1, "lttng_statedump_interrupt": 4},
    "sched_switch": [{"prev_tid": 50, "prev_prio": 0, "prio": 0},
                     {"prev_tid": 51, "prev_prio": -51, "prio": -51},
                     {"prev_tid": 52, "prev_prio": -101, "prio": -101},
                     {"prev_tid": 1, "prev_prio": 20, "prio": 20}],
    "block": [{"name": "ram0", "dev": "1:0"}, {"name": "ram0p1", "dev": "259:0"}],
    "irq": [{"irq": 0, "chip": "IO-APIC", "action": "timer"},
            {"irq": 4, "chip": "IO-APIC", "action": "ttyS0"},
            {"irq": 4, "chip": "IO-APIC", "action": "ttyS2"},
            {"irq": 9, "chip": "IO-APIC", "action": "acpi"}],
    "process_state": 20,
    "writeback": {"writeback_global_dirty_state": [{"dirty_limit": 6, "background_thresh": 1,
                                                    "dirty_thresh": 2}],
                  "writeback_balance_dirty_pages": [
                      {"limit": 6, "setpoint": 3, "dirty": 4, "bdi_setpoint": 1, "bdi_dirty": 2,
                       "dirty_ratelimit": 100, "task_ratelimit": 50, "dirtied": 32,
                       "dirtied_pause": 32, "pause": 4, "period": 8}]},
    "page_alloc": [{"gfp_flags": 0x100cca, "migratetype": 1},
                   {"gfp_flags": 0xcc0, "migratetype": 0}],
    "getppid": [{"tid": 60, "stack": [0x401650, 0x401656, 0x40166c, 0x401684, 0x4017aa]}],
    "discarded": 0,
    # syscall_entry_sethostname, recorded where gdb stopped the guest
    "stops": [{"tid": 70, "last_writeback": {"event": "writeback_balance_dirty_pages",
                                             "index": 0},
               "last_balance_dirty_pages": 0}],
}

# What gdb read at its stop (gdbscripts/ksymlab_lttng.py), the same shape.
TRUTH = {
    "stop": {"function": "__x64_sys_sethostname", "pc": 0xffffffff8103d96b, "pid": 70,
             "comm": "hostname"},
    "tasks": {"1": {"comm": "init", "prio": 20, "policy": 0},
              "50": {"comm": "sleep", "prio": 0, "policy": 0},
              "51": {"comm": "ksymlab-sched", "prio": -51, "policy": 1},
              "52": {"comm": "ksymlab-sched", "prio": -101, "policy": 6}},
    "block_class": [{"name": "ram0", "type": "disk", "dev": "1:0", "sectors": 32768,
                     "partno": 0},
                    {"name": "ram0p1", "type": "part", "dev": "259:0", "sectors": 8192,
                     "partno": 1}],
    "global_wb_domain": {"dirty_limit": 6, "dirty_limit_tstamp": 4294892000,
                         "address": 0xffffffff81be3e80},
    "jiffies": 4294893000,
    "dirty_sysctl": {"vm_dirty_bytes": 8192, "dirty_background_bytes": 4096,
                     "vm_dirty_ratio": 20, "dirty_background_ratio": 10},
    "irq_actions": [{"irq": 0, "chip": "IO-APIC", "action": "timer"},
                    {"irq": 4, "chip": "IO-APIC", "action": "ttyS0"},
                    {"irq": 4, "chip": "IO-APIC", "action": "ttyS2"},
                    {"irq": 9, "chip": "IO-APIC", "action": "acpi"}],
}

_NO_TRUTH = object()


def rows(summary=None, text=GUEST_TEXT, lost=(), truth=_NO_TRUTH):
    truth = TRUTH if truth is _NO_TRUTH else truth
    return {c.key: c for c in features.compare(Inputs.from_json(
        summary or SUMMARY, guestlines.read(text), truth, lost))}


def failing(result):
    return sorted(k for k, c in result.items() if c.disagrees)


def test_the_undoctored_inputs_pass():
    assert failing(rows()) == []


@pytest.mark.parametrize("path,value,killed", [
    (("sched_switch", 1, "prio"), -50, "prio/fifo50"),             # context off by one
    (("sched_switch", 2, "prev_prio"), -100, "prio/deadline1000000"),
    (("block", 1, "dev"), "259:1", "blockdev/ram0p1"),             # wrong dev_t decoding
    (("writeback", "writeback_global_dirty_state", 0, "dirty_limit"), 0,
     "writeback/global_dirty_state"),                             # lookup failed: limit 0
    (("writeback", "writeback_balance_dirty_pages", 0, "setpoint"), 4,
     "writeback/balance_dirty_pages"),
    (("getppid", 0, "stack", 2), 0x401670, "ustack/depth2"),       # a frame off
    (("page_alloc", 0, "migratetype"), 0, "kmem/migratetype"),
])
def test_a_doctored_trace_field_fails_its_row(path, value, killed):
    doctored = copy.deepcopy(SUMMARY)
    target = doctored
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    assert killed in failing(rows(doctored))


def test_the_whole_callstack_is_compared_with_the_programs_walk():
    """Issue 25: LTTng's callstack_user one frame short (its outermost, start_thread),
    or the program's stack taken on the leader, passes every depth row but not this one."""
    assert not failing(rows())
    short = copy.deepcopy(SUMMARY)
    short["getppid"][0]["stack"].pop()
    assert failing(rows(short)) == ["ustack/stack"]
    longer = copy.deepcopy(SUMMARY)
    longer["getppid"][0]["stack"].append(0x4017cc)
    assert failing(rows(longer)) == ["ustack/stack"]
    leader = rows(text=GUEST_TEXT.replace("tgid=59", "tgid=60"))
    assert failing(leader) == ["ustack/stack"] and "leader" in leader["ustack/stack"].reason
    # lost on this variant: an empty stack is right, whatever the walk says
    nostack = copy.deepcopy(SUMMARY)
    nostack["getppid"][0]["stack"] = []
    assert "ustack/stack" not in failing(rows(nostack, lost=("callstack_user",)))


def test_a_missing_feature_fails_unless_expected_lost():
    doctored = copy.deepcopy(SUMMARY)
    for s in doctored["sched_switch"]:
        s["prio"] = None
    assert "feature/prio" in failing(rows(doctored))
    assert "prio/nice-20" in failing(rows(doctored))
    assert failing(rows(doctored, lost=("prio",))) == []


def test_a_wrong_expectation_fails():
    """Listing a feature as lost while LTTng records it right is a failure."""
    got = rows(lost=("prio",))
    assert "feature/prio" in failing(got)
    assert "expected lost" in got["feature/prio"].reason


def test_a_lost_block_statedump_must_be_empty():
    doctored = copy.deepcopy(SUMMARY)
    doctored["block"] = []
    doctored["counts"]["lttng_statedump_block_device"] = 0
    assert "blockdev/ram0" in failing(rows(doctored))
    assert failing(rows(doctored, lost=("statedump_block",))) == []


def test_the_kmem_probe_must_load():
    text = GUEST_TEXT.replace("module name=lttng_probe_kmem\n", "")
    assert "kmem/probe-loaded" in failing(rows(text=text))


def test_an_event_kind_missing_fails_its_count():
    doctored = copy.deepcopy(SUMMARY)
    doctored["counts"].pop("lttng_statedump_process_state")
    assert "count/lttng_statedump_process_state" in failing(rows(doctored))


def test_discarded_events_fail():
    doctored = dict(SUMMARY, discarded=3)
    assert "count/discarded" in failing(rows(doctored))


def test_a_guest_error_line_fails():
    text = GUEST_TEXT.replace("KSYMLAB-LTTNG-END", "error lttng start exited 1\nKSYMLAB-LTTNG-END")
    assert "guest/0" in failing(rows(text=text))


def test_guest_lines_need_the_end_marker():
    with pytest.raises(HarnessError) as e:
        guestlines.parse(GUEST_TEXT.replace("KSYMLAB-LTTNG-END\n", ""))
    assert e.value.step == "verify"


def test_guest_lines_reject_a_non_integer():
    with pytest.raises(HarnessError):
        guestlines.parse("task pid=x1 policy=nice value=0\nKSYMLAB-LTTNG-END\n")


def test_ftrace_limit_must_line_up_in_order():
    """LTTng's events must be a contiguous, in-order run of the kernel's own."""
    text = GUEST_TEXT.replace("limit=6 dirtied", "limit=8 dirtied")
    assert "writeback/global_dirty_state" in failing(rows(text=text))


def test_trace_port_roundtrip(tmp_path):
    import base64
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"ctf"
        info = tarfile.TarInfo("trace/kernel/metadata")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    b64 = base64.encodebytes(buf.getvalue()).decode()
    text = f"noise\n{session.TRACE_BEGIN}\n{b64}{session.TRACE_END}\n"
    assert session.decode_trace(text, tmp_path) == len(buf.getvalue())
    assert (tmp_path / "trace/kernel/metadata").read_bytes() == b"ctf"
    with pytest.raises(HarnessError):
        session.decode_trace(text.replace(session.TRACE_END, ""), tmp_path / "x")
    damaged = text.replace(b64[:8], "!!!!!!!!")
    with pytest.raises(HarnessError):
        session.decode_trace(damaged, tmp_path / "y")


# gdb at the LTTng guest's quiet point (harness/lttng/boot/gdbstop.py): each row that
# has a gdb source fails when gdb's value or the trace's is doctored.

def _doctored_truth(path, value):
    truth = copy.deepcopy(TRUTH)
    target = truth
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return truth


@pytest.mark.parametrize("path,value,killed", [
    # gdb reads task->prio - 100: a scenario task whose prio is not the scenario's
    (("tasks", "51", "prio"), -50, "prio/fifo50"),
    # the class walk decodes dev_t differently from the statedump
    (("block_class", 1, "dev"), "259:1", "blockdev/ram0p1"),
    # global_wb_domain.dirty_limit at the stop is not what the last events carried
    (("global_wb_domain", "dirty_limit"), 7, "writeback/dirty_limit-at-stop"),
    (("global_wb_domain", "dirty_limit"), 7, "writeback/bdp-limit-at-stop"),
    # gdb stopped in another task than the one the trace marks
    (("stop", "pid"), 71, "gdb/stop"),
])
def test_a_doctored_gdb_value_fails_its_row(path, value, killed):
    assert killed in failing(rows(truth=_doctored_truth(path, value)))


def test_gdb_missing_a_task_or_device_fails():
    truth = copy.deepcopy(TRUTH)
    del truth["tasks"]["52"]
    assert "prio/deadline1000000" in failing(rows(truth=truth))
    truth = copy.deepcopy(TRUTH)
    truth["block_class"] = truth["block_class"][:1]
    assert "blockdev/ram0p1" in failing(rows(truth=truth))
    truth = copy.deepcopy(TRUTH)
    truth["block_class"].append({"name": "ram1", "type": "disk", "dev": "1:4",
                                 "sectors": 8192, "partno": 0})
    assert "blockdev/ram1" in failing(rows(truth=truth))


def test_no_gdb_reading_fails():
    got = failing(rows(truth=None))
    assert "gdb/read" in got and "gdb/stop" in got
    assert "prio/nice-20" in got and "blockdev/ram0" in got
    assert "writeback/dirty_limit-at-stop" in got


@pytest.mark.parametrize("doctor,killed", [
    # LTTng's last writeback event before the stop carries another dirty limit
    (lambda s: s["writeback"]["writeback_balance_dirty_pages"][0].update(limit=5),
     "writeback/dirty_limit-at-stop"),
    (lambda s: s["writeback"]["writeback_balance_dirty_pages"][0].update(limit=5),
     "writeback/bdp-limit-at-stop"),
    # the last event is global_dirty_state, whose dirty_limit LTTng got wrong
    (lambda s: (s["stops"][0].update(last_writeback={"event": "writeback_global_dirty_state",
                                                     "index": 0}),
                s["writeback"]["writeback_global_dirty_state"][0].update(dirty_limit=0)),
     "writeback/dirty_limit-at-stop"),
    # the stop is not marked in the trace, or twice
    (lambda s: s.update(stops=[]), "gdb/stop"),
    (lambda s: s.update(stops=[]), "writeback/dirty_limit-at-stop"),
    (lambda s: s["stops"].append(dict(s["stops"][0])), "gdb/stop"),
    # no balance_dirty_pages before the stop
    (lambda s: s["stops"][0].update(last_balance_dirty_pages=None),
     "writeback/bdp-limit-at-stop"),
])
def test_a_doctored_trace_at_the_stop_fails(doctor, killed):
    doctored = copy.deepcopy(SUMMARY)
    doctor(doctored)
    assert killed in failing(rows(doctored))


def test_writeback_at_the_stop_is_lost_when_expected():
    """Where LTTng cannot find global_wb_domain it records 0: the rows at the
    stop pass only when the variant says writeback is lost."""
    doctored = copy.deepcopy(SUMMARY)
    for evs in doctored["writeback"].values():
        for e in evs:
            e.update({k: 0 for k in ("dirty_limit", "limit")})
    assert "writeback/dirty_limit-at-stop" in failing(rows(doctored))
    assert "writeback/bdp-limit-at-stop" not in failing(rows(doctored, lost=("writeback",)))
    assert "writeback/dirty_limit-at-stop" not in failing(rows(doctored,
                                                               lost=("writeback",)))


def test_every_lttng_source_is_labelled():
    """The report's label table says what each LTTng row's source shares with
    LTTng; a source without a label would count as 'unlabelled'."""
    from harness.checks import labels
    sources = {s for c in rows().values() for s in c.sources}
    sources |= {s for c in rows(truth=None).values() for s in c.sources}
    assert {s for s in sources if labels.label(s)[0] == "unlabelled"} == set()
    assert labels.label("gdb")[0] == labels.MEMORY
    assert labels.label("gdb_class")[0] == labels.MEMORY
    assert labels.label("gdb_wb_domain")[0] == labels.MEMORY


def test_trace_order_marks_the_last_writeback_event_before_the_stop():
    """trace.add_event, fed events as the muxer yields them: the stop records the
    writeback event that came last before it, not the last of the trace."""
    from harness.lttng.boot import trace
    out = trace.new_summary()
    gds = {"dirty_limit": 9, "background_thresh": 1, "dirty_thresh": 2}
    bdp = {"limit": 9, "setpoint": 3, "dirty": 4}
    for name, ev in [("writeback_global_dirty_state", gds),
                     ("writeback_balance_dirty_pages", bdp),
                     ("writeback_global_dirty_state", gds),
                     ("syscall_entry_sethostname", {"tid": 70}),
                     ("writeback_balance_dirty_pages", dict(bdp, limit=8))]:
        trace.add_event(out, name, ev)
    assert out["stops"] == [{"tid": 70, "last_writeback": {
        "event": "writeback_global_dirty_state", "index": 1}, "last_balance_dirty_pages": 0}]
    assert out["last_writeback"] == {"event": "writeback_balance_dirty_pages", "index": 1}


def test_the_lttng_rows_carry_their_confusions_for_the_audit():
    """Issue 25 item 3: the writeback rows tell the dirty limit from the threshold
    only when the two differ in the guest (lttng-init lifts the limit with a
    real-time writer); the prio rows carry static_prio and rt_priority once gdb
    read them."""
    from harness.checks import confusions

    def audit(got):
        rows = [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in got.values()]
        return {a.confusion: a for a in confusions.audit(rows)}

    gds, bdp = "thresh for the global_dirty_state limit", "thresh for the balance_dirty_pages limit"
    got = audit(rows())
    assert not got[gds].weak and not got[bdp].weak       # limits 6, 7 against thresh 2
    assert got[gds].rows == got[bdp].rows == 1
    assert got["static_prio"].rows == 0                  # TRUTH predates those reads
    flat = GUEST_TEXT.replace("limit=7", "limit=2").replace("limit=6", "limit=2")
    assert audit(rows(text=flat))[gds].weak and audit(rows(text=flat))[bdp].weak
    # an early global_dirty_state (before the sysctl write: limit and thresh both
    # from the ratios, and different) tells that event apart, not balance_dirty_pages:
    # each event is paired with the threshold in force then, not with every threshold
    early = ("ftrace event=global_dirty_state dirty=3 writeback=0 bg_thresh=23000 "
             "thresh=46894 limit=47197 dirtied=9 written=1\n")
    first = flat.index("ftrace event=global_dirty_state")
    text = flat[:first] + early + flat[first:]
    got = audit(rows(text=text))
    assert not got[gds].weak and got[bdp].weak           # the mutant that survived there
    per_row = {r.key: r for r in rows(text=text).values()}
    assert per_row["writeback/global_dirty_state"].info["confusions"][gds] == \
        [[47197, 2, 2], [46894, 2, 2]]
    assert per_row["writeback/balance_dirty_pages"].info["confusions"][bdp] == [[2], [2]]
    truth = copy.deepcopy(TRUTH)
    for pid, static, rt in (("50", 0, 0), ("51", 20, 50), ("52", 20, 0)):
        truth["tasks"][pid].update(static_prio=static, rt_priority=rt, normal_prio=0, tgid=0)
    got = audit(rows(truth=truth))
    # the nice -20 task's static_prio is its prio; the fifo and deadline ones differ
    assert (got["static_prio"].rows, got["static_prio"].telling) == (3, 2)
    assert not got["rt_priority"].weak


def test_the_lttng_rows_tell_partitions_frames_the_next_task_and_gfp_types():
    """Issue 25 item 3, the rest of LTTng's rows: the statedump's partition against its
    disk, each callstack frame against its neighbours in the program's walk, the prio
    context against the task switched to, the migratetype against one constant type;
    each weak in a state that cannot tell."""
    from harness.checks import confusions

    def audit(got):
        rows = [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in got.values()]
        return {a.confusion: a for a in confusions.audit(rows)}

    truth = copy.deepcopy(TRUTH)
    for pid, static, rt in (("50", 0, 0), ("51", 20, 50), ("52", 20, 0)):
        truth["tasks"][pid].update(static_prio=static, rt_priority=rt, normal_prio=0, tgid=0)
    summary = copy.deepcopy(SUMMARY)
    for s, nxt in zip(summary["sched_switch"], (20, 0, -51, 0)):
        s["next_prio"] = nxt            # each switch to another task, of another prio
    got = audit(rows(summary, truth=truth))
    part, nprio = "the disk's for the partition's", "next_prio for the prio context"
    one = "one migratetype for every allocation"
    assert (got[part].rows, got[part].telling) == (1, 1)          # ram0p1 259:0 vs 1:0
    assert (got[nprio].rows, got[nprio].telling) == (3, 3)
    assert (got["next frame"].rows, got["previous frame"].telling) == (3, 3)
    assert (got[one].rows, got[one].telling) == (1, 1)            # movable and unmovable
    r = rows(summary, truth=truth)
    assert r["blockdev/ram0p1"].info["confusions"][part] == ["259:0", "1:0"]
    assert r["ustack/depth1"].info["confusions"]["previous frame"] == [0x401656, 0x401650]
    # switches only to tasks of the same prio; only unmovable allocations; no partition
    flat = copy.deepcopy(summary)
    for s in flat["sched_switch"]:
        s["next_prio"] = s["prio"]
    flat["page_alloc"] = [{"gfp_flags": 0xcc0, "migratetype": 0}] * 2
    bare = dict(truth, block_class=truth["block_class"][:1])
    got = audit(rows(flat, truth=bare))
    assert got[nprio].weak and got[one].weak and got[part].weak and got[part].rows == 0
    # the rows themselves catch the mix-ups the audit says they can tell
    swapped = copy.deepcopy(summary)
    for s in swapped["sched_switch"]:
        s["prio"] = s["next_prio"]
    assert {"prio/nice-20", "prio/fifo50"} <= set(failing(rows(swapped, truth=truth)))
    const = copy.deepcopy(summary)
    for a in const["page_alloc"]:
        a["migratetype"] = 0
    assert "kmem/migratetype" in failing(rows(const, truth=truth))


@pytest.mark.parametrize("doctor,killed", [
    # an action of the next interrupt, or the actions in another order
    (lambda s: s["irq"][0].update(action="ttyS0"), "statedump_irq/0"),
    (lambda s: s["irq"].__setitem__(slice(1, 3), s["irq"][2:0:-1]), "statedump_irq/4"),
    # one action dropped (a walk that stops after the first), a chip misread
    (lambda s: s["irq"].pop(2), "statedump_irq/4"),
    (lambda s: s["irq"][3].update(chip="unnamed_irq_chip"), "statedump_irq/9"),
    # an interrupt gdb does not know, and one the statedump missed
    (lambda s: s["irq"].append({"irq": 11, "chip": "IO-APIC", "action": "x"}),
     "statedump_irq/11"),
    (lambda s: s["irq"].pop(0), "statedump_irq/0"),
])
def test_a_doctored_interrupt_statedump_fails_its_row(doctor, killed):
    """Each interrupt's LTTng chip and actions must equal gdb's walk, in order, and be
    named on its /proc/interrupts line; the state has an interrupt with two actions
    and three chips' worth of neighbours, so a neighbour's action or one frame of the
    action list more or less differs."""
    summary = copy.deepcopy(SUMMARY)
    doctor(summary)
    assert killed in failing(rows(summary))


def test_the_interrupt_statedump_needs_both_oracles():
    """/proc/interrupts without an action gdb and LTTng agree on, or without the
    interrupt's line at all, fails the row; so does gdb reading no interrupt."""
    text = GUEST_TEXT.replace(" ttyS0, ttyS2", " ttyS0")
    assert failing(rows(text=text)) == ["statedump_irq/4"]
    text = GUEST_TEXT.replace("interrupts irq=9 0 IO-APIC 9-fasteoi acpi\n", "")
    assert failing(rows(text=text)) == ["statedump_irq/9"]
    truth = dict(TRUTH, irq_actions=[])
    assert {"statedump_irq/0", "statedump_irq/4", "statedump_irq/9"} <= \
        set(failing(rows(truth=truth)))


def test_the_interrupt_statedump_lost_as_expected():
    """On a variant that lists statedump_irq lost (exports: nothing for irq_to_desc),
    no interrupt event passes and one fails."""
    summary = copy.deepcopy(SUMMARY)
    summary["irq"] = []
    summary["counts"].pop("lttng_statedump_interrupt")
    assert failing(rows(summary, lost=("statedump_irq",))) == []
    assert "statedump_irq/0" in failing(rows(lost=("statedump_irq",)))


def test_every_confusion_an_lttng_row_carries_is_audited():
    """A confusion a row carries but confusions.CONFUSIONS does not name is never audited
    (the interrupt rows' was not, until this test): every name the undoctored rows
    carry is in the lttng table, and the interrupt one tells in this state."""
    from harness.checks.confusions import CONFUSIONS, audit
    carried = {n for c in rows().values() for n in (c.info.get("confusions") or {})}
    assert carried <= set(CONFUSIONS["lttng"]), carried - set(CONFUSIONS["lttng"])
    as_json = [{"id": c.key, "kind": c.kind, "info": c.info} for c in rows().values()]
    irq = [a for a in audit(as_json, ["lttng"]) if a.confusion == "the neighbouring interrupt's"]
    assert irq and irq[0].rows == 3 and irq[0].telling == 3

