"""The suite's comparison rule (harness/lttng/suite/compare.py) on doctored reports:
a point that passes on a line's stock variant and fails on exports fails the run;
a lost feature of the coverage table explains it; another line's stock is no
baseline; a cut-short stream on exports still counts against stock's points,
unless stock's run of that script was cut short too."""

from harness.lttng.suite import compare
from harness import judge


def _t(name, result, reason=""):
    return {"name": name, "result": result, "reason": reason}


STOCK_TESTS = [_t("regression/kernel/test_event_basic:1 Create session", "pass"),
               _t("regression/kernel/test_event_basic:2 Enable event", "pass"),
               _t("regression/kernel/test_callstack:1 Callstack user", "pass"),
               _t("regression/kernel/test_userspace_probe:1 uprobe", "skip", "no uprobes")]


def _variant(role, line, tests, lost_words=(), status="lost (as expected)"):
    lost = "callstack-user context" in lost_words
    values = [{"kind": "lttng-coverage", "key": "stack_trace_save_user",
               "sources": {"how": "not available (wrapper built without lookups)"
                           if lost else "export",
                           "feature": status if lost else "works"},
               "info": {"feature": "callstack-user context"}}]
    return {"role": role, "kernel_line": line, "verdict": "pass", "values": values,
            "lttng_suite": {"lttng_version": "2.13.9", "kernel": "6.1.0", "tests": tests}}



def _verdict(variants, suite_rows):
    """The judge's rule on report.json-like variants' verdicts and the suite's rows."""
    return judge.decide({n: v["verdict"] for n, v in variants.items()}, (), (), suite_rows)[0]

def _run(exports_tests, lost_words=(), line="6.1", status="lost (as expected)"):
    return {"stock": _variant("stock", "6.1", STOCK_TESTS),
            "exports": _variant("exports", line, exports_tests, lost_words, status)}


def test_identical_results_flag_nothing_and_the_run_passes():
    v = _run(STOCK_TESTS)
    rows = compare.regressions(v)
    assert rows == []
    assert _verdict(v, rows) is judge.Verdict.PASS


def test_a_point_failing_on_exports_only_fails_the_run():
    doctored = list(STOCK_TESTS)
    doctored[1] = _t("regression/kernel/test_event_basic:2 Enable event", "fail", "exit 1")
    v = _run(doctored)
    rows = compare.regressions(v)
    assert [(r["variant"], r["baseline"], r["point"], r["flagged"]) for r in rows] == [
        ("exports", "stock", "regression/kernel/test_event_basic:2 Enable event", True)]
    assert _verdict(v, rows) is judge.Verdict.FAIL


def test_a_lost_feature_of_the_coverage_table_explains_its_scripts_points_only():
    doctored = list(STOCK_TESTS)
    doctored[2] = _t("regression/kernel/test_callstack:1 Callstack user", "fail", "empty stack")
    rows = compare.regressions(_run(doctored, lost_words=("callstack-user context",)))
    assert len(rows) == 1 and rows[0]["flagged"] is False
    assert rows[0]["explained_by"] == "callstack-user context"
    assert rows[0]["reason"].startswith("lost feature: callstack-user context")
    # the same loss does not excuse a point of another script
    doctored[0] = _t("regression/kernel/test_event_basic:1 Create session", "fail")
    rows = compare.regressions(_run(doctored, lost_words=("callstack-user context",)))
    assert [r["flagged"] for r in rows] == [True, False]


def test_a_stream_cut_short_on_exports_counts_against_stocks_passing_points():
    cut = [_t("regression/kernel/test_event_basic:1 Create session", "pass"),
           _t("regression/kernel/test_event_basic:2 (not run)", "fail",
              "TAP stream cut short: guest panic"),
           _t("regression/kernel/test_callstack:0 (no TAP)", "fail", "not run: guest panic")]
    rows = compare.regressions(_run(cut))
    assert [(r["point"].split(" ")[0], r["flagged"]) for r in rows] == [
        ("regression/kernel/test_event_basic:2", True),
        ("regression/kernel/test_callstack:1", True)]
    assert rows[1]["reason"] == "not run: guest panic"


def test_a_cut_on_exports_where_stock_is_cut_short_too_is_kept_not_flagged():
    """The state of the six-variant run: every guest hangs in clear/test_kernel, stock's
    at point 3 and exports' at point 2, so stock's point 2 passed and exports' did not."""
    hang = "TAP stream cut short: guest hang: {}: no console output for 180 s"
    clear = "regression/tools/clear/test_kernel"
    stock = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"), _t(f"{clear}:2 Rotate", "pass"),
                           _t(f"{clear}:3 (not run)", "fail", hang.format("stock"))]
    exports = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"),
                             _t(f"{clear}:2 (not run)", "fail", hang.format("exports")),
                             _t(f"{clear}:3 (not run)", "fail", hang.format("exports"))]
    v = {"stock": _variant("stock", "6.1", stock), "exports": _variant("exports", "6.1", exports)}
    rows = compare.regressions(v)
    assert [(r["point"], r["flagged"]) for r in rows] == [(f"{clear}:2 Rotate", False)]
    assert rows[0]["reason"].startswith(
        "not a kernel difference: stock's run of the script was cut short too "
        "(guest hang: stock: no console output for 180 s); TAP stream cut short: guest hang: "
        "exports")
    assert _verdict(v, rows) is judge.Verdict.PASS
    # stock cut short in another script is no excuse; nor is a plain failure here
    other = stock[:-1] + [_t(f"{clear}:3 Clear", "pass"),
                          _t("regression/tools/snapshots/test_kernel:1 (not run)", "fail",
                             hang.format("stock"))]
    rows = compare.regressions({"stock": _variant("stock", "6.1", other),
                                "exports": _variant("exports", "6.1", exports)})
    assert [(r["point"], r["flagged"]) for r in rows] == [(f"{clear}:2 Rotate", True),
                                                          (f"{clear}:3 Clear", True)]
    failed = exports[:-2] + [_t(f"{clear}:2 Rotate", "fail", "exit 1")]
    rows = compare.regressions({"stock": _variant("stock", "6.1", stock),
                                "exports": _variant("exports", "6.1", failed)})
    assert [(r["point"], r["flagged"]) for r in rows] == [(f"{clear}:2 Rotate", True)]


def test_a_failed_suite_step_loses_every_point_and_a_skip_is_not_a_loss():
    failed = [_t("suite:0 (not run)", "fail", "suite: lttng-tools build failed")]
    rows = compare.regressions(_run(failed))
    assert len(rows) == 4 and all(r["flagged"] for r in rows)
    assert rows[0]["point"] == "suite" and "lttng-tools build failed" in rows[0]["reason"]


def test_a_stock_suite_that_ran_nothing_fails_the_run_itself():
    v = _run(STOCK_TESTS)
    v["stock"]["lttng_suite"]["tests"] = [_t("regression/kernel/test_a:0 (no TAP)", "fail",
                                             "not run: guest panic")]
    rows = compare.regressions(v)
    assert [(r["variant"], r["point"], r["flagged"]) for r in rows] == [
        ("stock", "suite", True)]
    assert _verdict(v, rows) is judge.Verdict.FAIL
    skipped = [dict(t, result="skip") if t["result"] == "pass" else t for t in STOCK_TESTS]
    assert compare.regressions(_run(skipped)) == []


def test_only_the_stock_variant_of_the_same_kernel_line_is_a_baseline():
    doctored = [dict(t, result="fail") if t["name"].endswith("session") else t
                for t in STOCK_TESTS]
    assert len(compare.regressions(_run(doctored, line="6.1"))) == 1
    assert compare.regressions(_run(doctored, line="6.12")) == []


def test_report_html_and_md_show_the_table_and_the_flagged_point():
    from harness.report import html_parts
    from harness.lttng.suite import suite_md
    doctored = list(STOCK_TESTS)
    doctored[1] = _t("regression/kernel/test_event_basic:2 Enable event", "fail", "exit 1")
    v = _run(doctored)
    rep = {"variants": v, "lttng_suite": {n: x["lttng_suite"] for n, x in v.items()},
           "lttng_suite_regressions": compare.regressions(v), "run_id": "t"}
    page = suite_md.html(rep, html_parts._table)
    assert "<td>regression/kernel/test_event_basic</td><td>2/0/0</td><td>1/1/0</td>" in page
    assert '<tr class="bad"><td>exports</td><td>stock</td>' in page
    out = []
    from harness.lttng.suite import suite_md
    suite_md.markdown(rep, out)
    assert any("**flagged**" in x and "test_event_basic:2" in x for x in out)


def test_a_name_the_build_cannot_resolve_is_no_excuse_when_its_rows_fail():
    # a port whose export detection is broken (patches/lttng doctored: the user
    # stack export looked for under a wrong name): the coverage row says "not
    # available" and "wrong or missing", not lost as the variant file expects
    doctored = list(STOCK_TESTS)
    doctored[2] = _t("regression/kernel/test_callstack:1 Callstack user", "fail")
    for status in ("wrong or missing (see the lttng rows)", "not exercised by the session"):
        rows = compare.regressions(_run(doctored, ("callstack-user context",), status=status))
        assert [(r["flagged"], r["explained_by"]) for r in rows] == [(True, None)], status
    rows = compare.regressions(_run(doctored, ("callstack-user context",),
                                    status="lost: no lttng_statedump_interrupt event"))
    assert [r["flagged"] for r in rows] == [False]


def test_a_point_whose_description_has_colons_is_one_point():
    # lttng-tools' descriptions carry colons ("Validate: 2 sessions"); the point is
    # (script, number), whatever its description says on either variant
    live = "regression/tools/live/test_kernel"
    stock = STOCK_TESTS + [_t(f"{live}:3 Validate: 2 sessions: ok", "pass"),
                           _t(f"{live}:4 Destroy: all", "pass")]
    exports = STOCK_TESTS + [_t(f"{live}:3 Validate: 2 sessions: ok", "fail", "exit 1"),
                             _t(f"{live}:4 (not run)", "fail",
                                "TAP stream cut short: timeout after 300 s")]
    rows = compare.regressions({"stock": _variant("stock", "6.1", stock),
                                "exports": _variant("exports", "6.1", exports)})
    assert [(r["point"], r["flagged"], r["reason"]) for r in rows] == [
        (f"{live}:3 Validate: 2 sessions: ok", True, "exit 1"),
        (f"{live}:4 Destroy: all", True, "TAP stream cut short: timeout after 300 s")]
    first = compare.first_rows(compare.entry.read(
        {"stock": _variant("stock", "6.1", stock),
         "exports": _variant("exports", "6.1", exports)}))
    assert [(r.point.script, r.point.number) for r in first] == [(live, 3), (live, 4)]


def test_a_real_failure_whose_reason_reads_like_a_cut_is_flagged():
    """Doctored: stock's run of clear/test_kernel was cut short (a hang), and on exports
    point 2 really failed, its diagnostic beginning with the cut-short words. Only a
    point its stream never reached is cut short; this one ran and failed (the old
    rule, a reason prefix, took it for a cut and kept it)."""
    clear = "regression/tools/clear/test_kernel"
    hang = "TAP stream cut short: guest hang: stock: no console output for 180 s"
    stock = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"), _t(f"{clear}:2 Rotate", "pass"),
                           _t(f"{clear}:3 (not run)", "fail", hang)]
    exports = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"),
                             _t(f"{clear}:2 Rotate", "fail",
                                "TAP stream cut short: relayd closed the stream"),
                             _t(f"{clear}:3 Clear", "pass")]
    v = {"stock": _variant("stock", "6.1", stock), "exports": _variant("exports", "6.1", exports)}
    rows = compare.regressions(v)
    assert [(r["point"], r["flagged"]) for r in rows] == [(f"{clear}:2 Rotate", True)]
    assert _verdict(v, rows) is judge.Verdict.FAIL


def test_serves_names_features_and_the_lost_ones_come_from_the_coverage_rows():
    from harness.lttng.rows.coverage import Feature, NAMES
    assert set(compare.SERVES) <= set(NAMES.values())
    v = compare.entry.SuiteVariant.from_json(
        "exports", _variant("exports", "6.1", STOCK_TESTS, ("callstack-user context",)))
    assert v.lost == {Feature.CALLSTACK_USER}
    assert compare.explained_by(v, "regression/kernel/test_callstack") is Feature.CALLSTACK_USER
    assert compare.explained_by(v, "regression/kernel/test_userspace_probe") is None


def test_a_plain_failure_on_stock_is_not_a_cut_that_excuses_one_here():
    """Stock ran clear/test_kernel to its end and failed its point 3; exports' stream
    was cut short at point 2, which stock passed: a kernel difference, flagged."""
    clear = "regression/tools/clear/test_kernel"
    stock = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"), _t(f"{clear}:2 Rotate", "pass"),
                           _t(f"{clear}:3 Clear", "fail", "exit 1")]
    exports = STOCK_TESTS + [_t(f"{clear}:1 Create", "pass"),
                             _t(f"{clear}:2 (not run)", "fail",
                                "TAP stream cut short: guest hang: no console output")]
    rows = compare.regressions({"stock": _variant("stock", "6.1", stock),
                                "exports": _variant("exports", "6.1", exports)})
    assert [(r["point"], r["flagged"], r["reason"]) for r in rows] == [
        (f"{clear}:2 Rotate", True, "TAP stream cut short: guest hang: no console output")]
