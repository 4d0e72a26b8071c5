"""The TAP reader of lttng-tools' test scripts (harness/lttng/suite/tap.py), on streams
written the way tests/utils/tap/tap.sh prints them, whole and cut short."""

from harness.lttng.suite import tap

WHOLE = """\
1..4
# Kernel event basic
ok 1 - Start session daemon
ok 2 - Create session ev
not ok 3 - Enable kernel event sched_switch
# Failed test 'Enable kernel event sched_switch'
# Error: Event sched_switch: not found
ok 4 # skip Userspace probes not supported
"""


def by_result(s):
    return {r: [p.name for p in s.points if p.result == r] for r in ("pass", "fail", "skip")}


def test_a_whole_stream():
    s = tap.parse("kernel/test_event_basic", WHOLE)
    assert s.planned == 4 and s.ended == "complete"
    assert by_result(s) == {
        "pass": ["kernel/test_event_basic:1 Start session daemon",
                 "kernel/test_event_basic:2 Create session ev"],
        "fail": ["kernel/test_event_basic:3 Enable kernel event sched_switch"],
        "skip": ["kernel/test_event_basic:4"]}
    (fail,) = [p for p in s.points if p.result == "fail"]
    assert "Event sched_switch: not found" in fail.reason
    (skip,) = [p for p in s.points if p.result == "skip"]
    assert skip.reason == "Userspace probes not supported"


def test_a_stream_cut_short_counts_the_missing_points_as_failed():
    text = "\n".join(WHOLE.splitlines()[:4])          # plan, diag, points 1 and 2
    s = tap.parse("kernel/test_event_basic", text, ended="timeout after 300 s")
    assert s.ended == "timeout after 300 s"
    assert [p.result for p in s.points] == ["pass", "pass", "fail", "fail"]
    assert s.points[2].name == "kernel/test_event_basic:3 (not run)"
    assert s.points[3].reason == "TAP stream cut short: timeout after 300 s"


def test_no_tap_at_all_is_one_failed_point():
    s = tap.parse("tools/snapshots/test_kernel", "bash: lttng: not found\n", ended="exit 127")
    assert [(p.name, p.result) for p in s.points] == [
        ("tools/snapshots/test_kernel:0 (no TAP)", "fail")]
    assert "exit 127" in s.points[0].reason


def test_bail_out_and_a_bad_exit_after_every_point():
    s = tap.parse("x", "1..2\nok 1 - a\nBail out! sessiond died\n")
    assert s.ended == "bail out: sessiond died"
    assert [p.result for p in s.points] == ["pass", "fail"]
    s = tap.parse("x", "1..1\nok 1 - a\n", ended="exit 1")
    assert [p.result for p in s.points] == ["pass", "fail"]
    assert s.points[1].reason == "all 1 points ran, then: exit 1"
    # and a clean one has no extra point
    assert [p.result for p in tap.parse("x", "1..1\nok 1 - a\n").points] == ["pass"]


def test_a_point_beyond_the_plan_fails():
    s = tap.parse("x", "1..1\nok 1 - a\nok 2 - b\n")
    assert [p.result for p in s.points] == ["pass", "fail"]


def test_a_script_that_cannot_run_here_says_why():
    # test_valid_filter without lttng-ust: one point, then its bail-out
    s = tap.parse("f", "1..3\nok 1 - Start session daemon\n"
                       "Bail out! No UST nevents binary detected.\n", ended="exit 255")
    assert tap.cannot_run(s) == "No UST nevents binary detected."
    # a kernel without a namespace type: every point skipped, the reasons kept once
    s = tap.parse("n", "1..3\nok 1 # skip System has no time namespace support\n"
                       "ok 2 # skip System has no time namespace support\n"
                       "ok 3 # skip System has no user namespace support\n")
    assert tap.cannot_run(s) == ("every point skipped: System has no time namespace "
                                 "support; System has no user namespace support")
    # some skipped, one passed; or failures: it ran
    assert tap.cannot_run(tap.parse("n", "1..2\nok 1 # skip no ns\nok 2 - a\n")) is None
    assert tap.cannot_run(tap.parse("n", "1..2\nnot ok 1 - a\nok 2 # skip b\n")) is None
    # a timeout is a failure of the script, not a reason it cannot run
    assert tap.cannot_run(tap.parse("t", "1..2\nok 1 - a\n", ended="timeout after 9 s")) \
        is None


# Golden streams -> typed points (syzkaller's testdata idea): every field written
# out by hand from the stream.
P, S = tap.PointStatus, tap.SuitePoint
EVENT = "kernel/test_event_basic"


def test_a_whole_stream_gives_typed_points():
    assert tap.parse(EVENT, WHOLE).points == (
        S(EVENT, 1, P.PASSED, "Start session daemon"),
        S(EVENT, 2, P.PASSED, "Create session ev"),
        S(EVENT, 3, P.FAILED, "Enable kernel event sched_switch",
          "Failed test 'Enable kernel event sched_switch'; "
          "Error: Event sched_switch: not found"),
        S(EVENT, 4, P.SKIPPED, "", "Userspace probes not supported"))


def test_a_cut_stream_gives_cut_short_points_not_a_reason_string():
    text = "\n".join(WHOLE.splitlines()[:4])
    s = tap.parse(EVENT, text, ended="guest panic: Kernel panic - not syncing")
    assert s.points[2:] == (
        S(EVENT, 3, P.CUT_SHORT, "(not run)", "guest panic: Kernel panic - not syncing"),
        S(EVENT, 4, P.CUT_SHORT, "(not run)", "guest panic: Kernel panic - not syncing"))
    # report.json keeps today's form: a failed point with the CUT_SHORT reason
    assert s.points[3].to_json() == {
        "name": "kernel/test_event_basic:4 (not run)", "result": "fail",
        "reason": "TAP stream cut short: guest panic: Kernel panic - not syncing"}


def test_a_todo_point_passes_and_a_bail_out_cuts_the_rest_short():
    s = tap.parse("x", "1..3\nnot ok 1 - flaky # TODO known\nBail out! no sessiond\n",
                  ended="exit 255")
    assert s.points == (S("x", 1, P.PASSED, "flaky # TODO known"),
                        S("x", 2, P.CUT_SHORT, "(not run)", "bail out: no sessiond"),
                        S("x", 3, P.CUT_SHORT, "(not run)", "bail out: no sessiond"))
    assert s.bail == "no sessiond"


# report.json points as runs before the typed points wrote them, and what they are
OLD_POINTS = [
    ({"name": "regression/kernel/test_clock_override:21 Unique event timestamps: 1 expect >1",
      "result": "fail", "reason": "exit 1"},
     S("regression/kernel/test_clock_override", 21, P.FAILED,
       "Unique event timestamps: 1 expect >1", "exit 1")),
    ({"name": "regression/tools/clear/test_kernel:3 (not run)", "result": "fail",
      "reason": "TAP stream cut short: guest hang: stock: no console output for 180 s"},
     S("regression/tools/clear/test_kernel", 3, P.CUT_SHORT, "(not run)",
       "guest hang: stock: no console output for 180 s")),
    # a real failure whose diagnostic happens to read like a cut: not CUT_SHORT
    ({"name": "regression/tools/clear/test_kernel:3 Clear", "result": "fail",
      "reason": "TAP stream cut short: by the relay daemon"},
     S("regression/tools/clear/test_kernel", 3, P.FAILED, "Clear",
       "TAP stream cut short: by the relay daemon")),
    ({"name": "suite:0 (not run)", "result": "fail", "reason": "ksymlab: suite: no source"},
     S("suite", 0, P.FAILED, "(not run)", "ksymlab: suite: no source")),
    ({"name": "x/test_a:0 (no TAP)", "result": "fail", "reason": "no TAP plan or point; exit 127"},
     S("x/test_a", 0, P.FAILED, "(no TAP)", "no TAP plan or point; exit 127")),
    ({"name": "x/test_a:4", "result": "skip", "reason": "no uprobes"},
     S("x/test_a", 4, P.SKIPPED, "", "no uprobes")),
]


def test_old_report_points_read_back_and_serialise_unchanged():
    for old, typed in OLD_POINTS:
        assert tap.SuitePoint.from_json(old) == typed, old["name"]
        assert typed.to_json() == old, old["name"]


def test_a_point_name_without_a_number_is_one_verify_error():
    import pytest
    from harness.errors import HarnessError
    with pytest.raises(HarnessError) as err:
        tap.SuitePoint.from_json({"name": "suite (not run)", "result": "fail"})
    assert err.value.one_line() == ("ksymlab: verify: report.json: suite point "
                                    "'suite (not run)' is not named script:number")
