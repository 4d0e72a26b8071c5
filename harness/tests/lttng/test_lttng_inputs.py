"""The LTTng rows' inputs as typed records (harness/lttng/rows/inputs.py and the parse
boundaries in harness/lttng/boot/): gdb's stop, the trace summary and the guest's
lines are parsed where they enter, so a key they must have is one error naming it,
and a row reads attributes (a misspelt one is an AttributeError, not "gdb saw
nothing"); the verdict of a feature row under the variant's expectation."""

import pytest

from harness.errors import HarnessError
from harness.lttng.boot import guestlines, trace
from harness.lttng.rows import features
from harness.lttng.rows.inputs import Expectation, Inputs

GUEST = ("task pid=50 policy=nice value=-20\n"
         "ustack-expect pid=60 tgid=59 depth=1 ret=0x401656\n"
         "ftrace available=0\n"
         "kmod name=lttng-probe-kvm-x86 loaded=0 modprobe: failed\n"
         f"{guestlines.END}\n")
TRUTH = {"stop": {"function": "__x64_sys_sethostname", "pc": 1, "pid": 70, "comm": "hostname"},
         "tasks": {"50": {"comm": "sleep", "prio": 0, "policy": 0}},
         "block_class": [], "irq_actions": [{"irq": 4, "chip": None, "action": "ttyS0"}],
         "global_wb_domain": {"dirty_limit": 6, "dirty_limit_tstamp": 2, "address": None},
         "jiffies": 3}


def summary(**changes):
    return dict(trace.new_summary(), **changes)


def test_the_records_carry_what_the_json_says():
    ctx = Inputs.from_json(summary(sched_switch=[{"prev_tid": 50, "prev_prio": 0, "prio": 0}]),
                           guestlines.read(GUEST), TRUTH, ("prio",), {"prio": "unexported"})
    assert ctx.truth.task(50).prio == 0 and ctx.truth.task(99) is None
    assert ctx.truth.stop.pid == 70 and ctx.truth.irq_actions[0].chip is None
    assert ctx.summary.sched_switch[0].next_prio is None       # an older summary's switch
    assert (ctx.guest.task[0].policy, ctx.guest.task[0].value) == ("nice", -20)
    assert ctx.guest.ustack_expect[0].ret == 0x401656
    assert ctx.guest.ftrace[0].event is None and ctx.guest.ftrace[0].values == {"available": 0}
    assert ctx.guest.kmod[0].text == ("modprobe:", "failed")
    assert ctx.expect("prio") == Expectation("prio", True, "unexported")
    assert ctx.expect("kmem") == Expectation("kmem", False, "the variant's expectation lists it")
    with pytest.raises(AttributeError):
        ctx.truth.task(50).priority         # noqa: B018 - the misspelt read itself


@pytest.mark.parametrize("where,change,message", [
    ("truth", lambda t: t["tasks"]["50"].pop("prio"), 'gdb.json: tasks["50"].prio: missing'),
    ("truth", lambda t: t["stop"].update(pid="70"),
     "gdb.json: stop.pid: is a string, not an integer"),
    ("summary", lambda s: s["sched_switch"].append({"prev_pid": 50, "prev_prio": 0,
                                                    "prio": 0}),
     "summary.json: sched_switch[0].prev_tid: missing"),
    ("summary", lambda s: s.pop("getppid"), "summary.json: getppid: missing"),
])
def test_a_wrong_or_missing_key_is_one_error_naming_it(where, change, message):
    import copy
    truth, s = copy.deepcopy(TRUTH), summary(sched_switch=[])
    change(truth if where == "truth" else s)
    with pytest.raises(HarnessError) as err:
        Inputs.from_json(s, guestlines.read(GUEST), truth)
    assert err.value.message == message
    assert err.value.step == ("gdb" if where == "truth" else "verify")


def test_a_guest_line_without_a_field_it_must_have_is_a_verify_error():
    with pytest.raises(HarnessError) as err:
        guestlines.parse(GUEST.replace(" value=-20", ""))
    assert err.value.one_line() == "ksymlab: verify: the LTTng data port: task[0].value: missing"


def test_a_task_gdb_did_not_see_fails_its_row_with_gdb_none():
    """The dict rows read a missing task as None too; here None means gdb did not list
    the pid, and a misspelt field cannot produce it."""
    ctx = Inputs.from_json(summary(sched_switch=[{"prev_tid": 50, "prev_prio": 0, "prio": 0}]),
                           guestlines.read(GUEST), dict(TRUTH, tasks={}))
    (row,) = [c for c in features.prio_rows(ctx) if c.key == "prio/nice-20"]
    assert row.sources["gdb"] is None and row.disagrees
    ctx = Inputs.from_json(summary(sched_switch=[{"prev_tid": 50, "prev_prio": 0, "prio": 0}]),
                           guestlines.read(GUEST), TRUTH)
    (row,) = [c for c in features.prio_rows(ctx) if c.key == "prio/nice-20"]
    assert row.sources["gdb"] == 0 and row.agrees


@pytest.mark.parametrize("lost,present,right,agrees,reason", [
    (False, True, True, True, None),
    (False, True, False, False, None),
    (False, False, True, False, "LTTng recorded no prio: why"),
    (True, False, False, True, "lost on this variant: why"),
    (True, True, True, False, "expected lost on this variant (why), but LTTng recorded it"),
])
def test_a_feature_row_under_the_expectation(lost, present, right, agrees, reason):
    row = Expectation("prio", lost, "why").row("feature/prio", present, right, {"lttng": 1})
    assert (row.kind, row.key, row.agrees, row.reason) == ("lttng", "feature/prio", agrees,
                                                           reason)
