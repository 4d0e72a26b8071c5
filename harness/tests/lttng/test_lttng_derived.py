"""balance_dirty_pages' derived fields (issue 43): setpoint against its formula on
gdb's reading at the stop, the swapped-inputs confusion, every derived field
against the kernel's ftrace event, and the fields left unchecked with a reason."""

import copy

from harness.checks import confusions
from harness.lttng.rows import derived
from harness.tests.lttng.test_lttng_checks import GUEST_TEXT, SUMMARY, TRUTH, failing, rows

SETPOINT = "writeback/bdp-setpoint-at-stop"


def test_setpoint_is_its_formula_on_gdbs_limit_and_the_sysctls_thresholds():
    got = rows()
    row = got[SETPOINT]
    # limit 6, thresh 2, bg_thresh 1: (6 + 3 // 2) // 2 = 3; swapped: (2 + 7 // 2) // 2 = 2
    assert row.agrees and row.sources["formula on gdb's reading"] == 3
    assert row.info["confusions"][derived.SWAPPED] == [3, 2]
    for name in derived.UNCHECKED:
        assert got[f"writeback/derived/{name}"].unchecked
    found = [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in got.values()]
    (a,) = [a for a in confusions.audit(found) if a.confusion == derived.SWAPPED]
    assert not a.weak


def test_a_setpoint_from_the_wrong_inputs_fails_both_its_rows():
    doctored = copy.deepcopy(SUMMARY)
    doctored["writeback"]["writeback_balance_dirty_pages"][0]["setpoint"] = 2
    assert failing(rows(doctored)) == ["writeback/balance_dirty_pages", SETPOINT]
    # without gdb's sysctls the formula has no inputs: the row fails
    bare = dict(TRUTH)
    bare.pop("dirty_sysctl")
    assert failing(rows(truth=bare)) == [SETPOINT]


def test_bdi_setpoint_from_the_wrong_threshold_fails_against_ftrace():
    """The mutant lttng-bdi-setpoint-from-bg-thresh: bdi_setpoint = setpoint *
    bdi_thresh / (bg_thresh + 1); the kernel's ftrace event divides by thresh + 1."""
    doctored = copy.deepcopy(SUMMARY)
    doctored["writeback"]["writeback_balance_dirty_pages"][0]["bdi_setpoint"] = 2
    assert failing(rows(doctored)) == ["writeback/balance_dirty_pages"]
    # paused and think are not compared: a tick between the probes is no failure
    text = GUEST_TEXT.replace("paused=0", "paused=4").replace("think=0", "think=4")
    assert failing(rows(text=text)) == []


def test_lttng_216s_unhalved_setpoint_fails_both_rows_and_is_told_apart():
    """LTTng 2.16.0 as shipped, on 6.14.2 and later: (limit + thresh + bg_thresh) / 2.
    With limit 6, thresh 2, bg_thresh 1 that is 4 where the kernel gives 3 (on
    7.2.12 in the guest: 733 against 732, docs/lttng.md)."""
    doctored = copy.deepcopy(SUMMARY)
    doctored["writeback"]["writeback_balance_dirty_pages"][0]["setpoint"] = (6 + 2 + 1) // 2
    assert failing(rows(doctored)) == ["writeback/balance_dirty_pages", SETPOINT]
    assert rows()[SETPOINT].info["confusions"][derived.UNHALVED] == [3, 4]
