"""The LTTng guest's PI chains (issue 43): a holder's prio row expects its boost, and
only a holder tells normal_prio and the prio derived from rt_priority apart."""

import copy

from harness.tests.lttng.test_lttng_checks import GUEST_TEXT, SUMMARY, TRUTH, failing, rows


def _pi_inputs(ctx_prio=-41):
    """A SCHED_FIFO holder at rt_priority 10 (pid 80) boosted to -41 by its SCHED_FIFO
    40 waiter (pid 81), as lttng-init's `pi fifo 10 fifo 40` gives."""
    text = GUEST_TEXT.replace("module name=lttng_probe_kmem\n", (
        "task pid=80 tgid=80 policy=fifo value=10\n"
        "task pid=81 tgid=80 policy=fifo value=40 pi_owner=80\n"
        "module name=lttng_probe_kmem\n"))
    summary = copy.deepcopy(SUMMARY)
    summary["sched_switch"].append({"prev_tid": 80, "prev_prio": -41, "prio": ctx_prio})
    truth = copy.deepcopy(TRUTH)
    for pid, static, rt in (("50", 0, 0), ("51", 20, 50), ("52", 20, 0)):
        truth["tasks"][pid].update(static_prio=static, rt_priority=rt,
                                   normal_prio=truth["tasks"][pid]["prio"], tgid=int(pid))
    truth["tasks"]["80"] = {"comm": "ksymlab-threads", "prio": -41, "policy": 1,
                            "normal_prio": -11, "static_prio": 20, "rt_priority": 10,
                            "tgid": 80}
    truth["tasks"]["81"] = {"comm": "ksymlab-threads", "prio": -41, "policy": 1,
                            "normal_prio": -41, "static_prio": 20, "rt_priority": 40,
                            "tgid": 80}
    return summary, text, truth


def test_a_pi_holder_row_expects_its_boosted_prio_and_no_waiter_row():
    """Issue 43: the LTTng guest runs the scenario's PI chains; the holder's row
    expects the boost (sched_prio.expected_prios), a waiter (asleep on the rt_mutex,
    never switched out while recording) gets no row."""
    summary, text, truth = _pi_inputs()
    got = rows(summary, text=text, truth=truth)
    assert failing(got) == []
    assert got["prio/pi-fifo10"].sources["scenario"] == -41
    assert not any(k.startswith("prio/") and "40" in k for k in got)
    # a context that read normal_prio (the unboosted -11) fails the holder's row
    summary, text, truth = _pi_inputs(ctx_prio=-11)
    assert failing(rows(summary, text=text, truth=truth)) == ["prio/pi-fifo10"]


def test_only_a_pi_holder_tells_normal_prio_and_the_rt_derived_prio_apart():
    from harness.checks import confusions

    def audit(got):
        rows_ = [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in got.values()]
        return {a.confusion: a for a in confusions.audit(rows_)}

    summary, text, truth = _pi_inputs()
    got = audit(rows(summary, text=text, truth=truth))
    for name in ("normal_prio", "prio derived from rt_priority"):
        assert (got[name].rows, got[name].telling) == (4, 1), name
    assert rows(summary, text=text, truth=truth)["prio/pi-fifo10"].info["confusions"][
        "prio derived from rt_priority"] == [-41, -11]
    # without the chain's lines nothing tells them apart
    got = audit(rows(summary, truth=truth))
    assert got["normal_prio"].weak and got["prio derived from rt_priority"].weak
