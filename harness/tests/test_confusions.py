"""The confusion audit (harness/checks/confusions.py, issue 25): each (kind,
confusion) is weak exactly when no row of the run's state tells the right value
from the confused one; the report lists the weak ones."""

import copy

from harness.checks import confusions
from harness.report import confusions as confusions_report
from harness.report.html import _table
from harness.tests.test_compare import TRUTH, cmp, data

# gdb's tasks as ksymlab_verify.read_tasks() reads them now: init (pid 1) and a
# nice-5 sleep (pid 7), each leading its own group, neither boosted.
TASKS = {"1": {"prio": 20, "comm": "init", "policy": 0, "normal_prio": 20, "static_prio": 20,
               "rt_priority": 0, "tgid": 1},
         "7": {"prio": 25, "comm": "sleep", "policy": 0, "normal_prio": 25, "static_prio": 25,
               "rt_priority": 0, "tgid": 7}}


def audit_of(tasks=TASKS, extra=(), kinds=None):
    r = cmp(data(extra=extra), dict(TRUTH, tasks=copy.deepcopy(tasks)))
    return {(a.kind, a.confusion): a for a in confusions.audit(r["values"], kinds)}


def test_a_state_without_boost_or_threads_cannot_tell_prio_from_its_neighbours():
    got = audit_of()
    for name in ("normal_prio", "static_prio", "leader's prio", "tgid for pid"):
        a = got[("prio", name)]
        assert a.weak and a.rows == 2 and a.blind == ("prio:pid 1", "prio:pid 7"), name
    # rt_priority (0) is never a normal task's prio: told apart by both rows
    assert not got[("prio", "rt_priority")].weak and got[("prio", "rt_priority")].telling == 2


def test_one_boosted_task_and_one_thread_make_the_prio_kind_strong():
    tasks = copy.deepcopy(TASKS)
    # pid 7 is PI-boosted above its nice level and a thread of init's group
    tasks["7"].update(normal_prio=30, static_prio=30, tgid=1)
    got = audit_of(tasks)
    for name in ("normal_prio", "static_prio", "leader's prio", "tgid for pid"):
        a = got[("prio", name)]
        assert not a.weak and a.telling == 1 and a.blind == ("prio:pid 1",), name


def test_a_reading_without_the_neighbouring_fields_is_not_read_and_weak():
    old = {pid: {k: t[k] for k in ("prio", "comm", "policy")} for pid, t in TASKS.items()}
    a = audit_of(old)[("prio", "normal_prio")]
    assert a.rows == 0 and a.weak


def test_the_user_stack_from_a_thread_tells_pid_from_tgid_and_a_shorter_stack():
    got = audit_of()
    assert not got[("ustack", "tgid for pid")].weak          # the fixture: pid 70, tgid 69
    assert not got[("ustack", "one frame less")].weak
    # each return address differs from the frames beside it in the walk
    assert not got[("ustack", "next frame")].weak and not got[("ustack", "previous frame")].weak
    # the thread as its own leader: nothing tells them apart
    leader = cmp(data(), dict(TRUTH, tasks=TASKS))
    for v in leader["values"]:
        if v["id"] == "ustack:stack":
            v["info"]["confusions"]["tgid for pid"] = [70, 70]
    a = {(x.kind, x.confusion): x for x in confusions.audit(leader["values"])}
    assert a[("ustack", "tgid for pid")].weak
    assert a[("ustack", "tgid for pid")].blind == ("ustack:stack",)


def test_only_the_kinds_present_are_audited():
    r = cmp(data(), dict(TRUTH, tasks=TASKS))
    prio_only = [v for v in r["values"] if v["kind"] == "prio"]
    assert {a.kind for a in confusions.audit(prio_only)} == {"prio"}


def report_of(tasks):
    r = cmp(data(), dict(TRUTH, tasks=tasks))
    r["confusions"] = [a.to_json() for a in confusions.audit(r["values"])]
    return {"variants": {"exports": r}}


def test_the_report_lists_each_weak_confusion_with_the_rows_that_could_not_tell():
    rep = report_of(TASKS)
    md = "\n".join(confusions_report.markdown(rep))
    assert "## Confusion audit" in md
    assert "| prio | normal_prio | 0/2 **weak** |" in md
    assert "| prio | rt_priority | 2/2 |" in md
    assert "- weak on exports: prio / normal_prio" in md and "`prio:pid 7`" in md
    html = confusions_report.html(rep, _table)
    assert "weak on exports: prio / leader&#x27;s prio" in html
    strong = copy.deepcopy(TASKS)
    strong["7"].update(normal_prio=30, static_prio=30, tgid=1)
    md = "\n".join(confusions_report.markdown(report_of(strong)))
    assert "weak on" not in md and "| prio | normal_prio | 1/2 |" in md
    assert confusions.weak(report_of(strong)) == []
    assert confusions_report.markdown({"variants": {}}) == []
