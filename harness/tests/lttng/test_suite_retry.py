"""The suite's retry phase (harness/lttng/suite/retry.py, compare.py's judgement of
a retried point) on doctored results, with a fake runner instead of guests."""

import re
from types import SimpleNamespace

import pytest

from harness import judge
from harness.model.results import Check, VariantResult
from harness.errors import HarnessError
from harness.lttng.suite import compare, retry, runner as suiterun
from harness.report import assemble


def test_exact_selection_takes_whole_paths_only():
    found = ["regression/kernel/test_ns_contexts", "regression/kernel/test_ns_contexts_change",
             "regression/kernel/test_event_basic"]
    assert suiterun.select(found, ("regression/kernel/test_ns_contexts",)) == found[:2]
    assert suiterun.select(found, ("regression/kernel/test_ns_contexts",), exact=True) == \
        found[:1]
    assert suiterun.select(found, ("test_ns",), exact=True) == []
    assert suiterun.select(found) == found


POLL = "regression/kernel/test_select_poll_epoll"
CLOCK = "regression/kernel/test_clock_override"
BASIC = "regression/kernel/test_event_basic"
STACK = "regression/kernel/test_callstack"
# every script's points, all of which pass on stock
POINTS = {POLL: (1, 2), CLOCK: (20, 21), BASIC: (1,), STACK: (1,)}
LINES = {"exports": ("6.1", "exports"), "kallsyms": ("6.1", "kallsyms"),
         "stock": ("6.1", "stock"), "exports-6.12": ("6.12", "exports"),
         "kallsyms-6.12": ("6.12", "kallsyms"), "stock-6.12": ("6.12", "stock")}


def _tests(scripts, changed):
    """The points of `scripts`, each passing unless `changed` {(script, n): (result,
    reason)} says otherwise."""
    out = []
    for s in scripts:
        for n in POINTS[s]:
            result, reason = changed.get((s, n), ("pass", ""))
            out.append({"name": f"{s}:{n} point {n}", "result": result, "reason": reason})
    return out


def _entry(scripts, changed=None):
    """A run.py suite entry of `scripts`: every stream complete."""
    return {"lttng_version": "2.13.9", "scripts": [
        {"script": s, "planned": len(POINTS[s]), "ended": "complete"} for s in scripts],
        "tests": _tests(scripts, changed or {})}


def _results(first=None, lost=None):
    """{name: VariantResult} of the six LTTng variants; `first` {variant: changed
    points of its first run}; `lost` {variant: feature words lost there}."""
    out = {}
    for name, (line, role) in LINES.items():
        feature = "lost (as expected)" if name in (lost or {}) else "works"
        values = (Check("lttng-coverage", "stack_trace_save_user",
                        {"how": "export", "feature": feature}, None,
                        {"feature": (lost or {}).get(name, "callstack-user context")}),)
        out[name] = VariantResult(
            name=name, description=name, module_mode=role, kernel_line=line, role=role,
            symbols=(Check("symbol", "x", {"module": 1, "gdb": 1}, True),), values=values,
            facts={"lttng": {"build_dir": f"/b/{name}"},
                   "lttng_suite": _entry(list(POINTS), (first or {}).get(name))})
    return out


class FakeRunner:
    """Runs nothing: each variant's retry entry from `outcomes` {variant: changed
    points, or a HarnessError to raise, or a whole entry}; the calls are kept."""

    def __init__(self, outcomes=None):
        self.outcomes = outcomes or {}
        self.calls = []

    def __call__(self, name, scripts):
        self.calls.append((name, tuple(scripts)))
        got = self.outcomes.get(name, {})
        if isinstance(got, Exception):
            raise got
        if "tests" in got:
            return got
        return _entry(scripts, got)


def _assemble(results):
    return assemble.assemble({"run_id": "t"}, results, list(LINES),
                             judge.judge(results, list(LINES)))


def _report(results, runner):
    new = retry.phase(results, runner)
    merged = {**results, **{r.name: r for r in new}}
    return _assemble(merged)


CUT = ("fail", "TAP stream cut short: hang: the guest printed nothing for 180 s")


def test_a_point_that_passes_on_retry_is_a_flake_and_the_run_passes(tmp_path):
    results = _results({"exports": {(POLL, 2): CUT}})
    assert _assemble(results)["verdict"] == "fail"
    rep = _report(results, FakeRunner())
    assert rep["verdict"] == "pass"
    (row,) = rep["lttng_suite_regressions"]
    assert (row["variant"], row["point"], row["flagged"]) == ("exports", f"{POLL}:2 point 2",
                                                              False)
    assert row["reason"] == f"passed on retry (first: {CUT[1]})"
    assert row["first"] == {"result": "fail", "reason": CUT[1]}
    assert (row["retry"]["outcome"], row["retry"]["result"]) == ("flake", "pass")
    # the first run's point stays as it was; the retry is beside it
    suite = rep["lttng_suite"]["exports"]
    assert [t["result"] for t in suite["tests"] if t["name"] == f"{POLL}:2 point 2"] == ["fail"]
    assert suite["retry"]["asked"] == [POLL]
    assemble.write_all(tmp_path, rep)
    md = (tmp_path / "report.md").read_text()
    assert f"`{POLL}:2 point 2`: not counted (flake); passed on retry (first: " in md
    assert "1 flagged point(s) run again: flake 1" in md
    ktap = (tmp_path / "report.ktap").read_text()
    assert f"    # retry {POLL}:2 point 2: passed on retry (first: TAP" in ktap
    assert "<td>not counted (flake)</td>" in (tmp_path / "report.html").read_text()


def test_a_point_failing_again_while_stock_passes_fails_the_run_naming_it(tmp_path):
    results = _results({"kallsyms": {(BASIC, 1): ("fail", "exit 1")}})
    rep = _report(results, FakeRunner({"kallsyms": {(BASIC, 1): ("fail", "exit 2")}}))
    assert rep["verdict"] == "fail"
    (row,) = rep["lttng_suite_regressions"]
    assert (row["variant"], row["baseline"], row["point"], row["flagged"]) == (
        "kallsyms", "stock", f"{BASIC}:1 point 1", True)
    assert row["reason"] == "failed again on retry: exit 2 (first: exit 1)"
    assert row["retry"]["stock_result"] == "pass"
    assemble.write_all(tmp_path, rep)
    md = (tmp_path / "report.md").read_text()
    assert f"`{BASIC}:1 point 1`: **flagged**; failed again on retry: exit 2" in md
    ktap = (tmp_path / "report.ktap").read_text()
    block = ktap.split("  # Subtest: kallsyms\n")[1].split("  # Subtest: stock\n")[0]
    assert f"    # retry {BASIC}:1 point 1: failed again on retry: exit 2" in block
    assert re.search(r"^  not ok \d+ lttng-suite$", block, re.M)
    page = (tmp_path / "report.html").read_text()
    assert '<tr class="bad"><td>kallsyms</td><td>stock</td>' in page


def test_a_point_stock_fails_on_retry_too_does_not_count_but_is_listed():
    timing = ("fail", "Unique event timestamps without clock override: 1 expect >1")
    results = _results({"exports-6.12": {(CLOCK, 21): timing}})
    rep = _report(results, FakeRunner({"exports-6.12": {(CLOCK, 21): timing},
                                       "stock-6.12": {(CLOCK, 21): timing}}))
    assert rep["verdict"] == "pass"
    (row,) = rep["lttng_suite_regressions"]
    assert row["flagged"] is False and row["retry"]["outcome"] == "not a kernel difference"
    assert "stock-6.12 fails it on retry too: Unique event" in row["reason"]
    # the same retry with stock passing counts
    rep = _report(results, FakeRunner({"exports-6.12": {(CLOCK, 21): timing}}))
    assert rep["verdict"] == "fail"


@pytest.mark.parametrize("outcome", [
    HarnessError("boot", "QEMU could not start"),
    {"lttng_version": "2.13.9", "error": "suite",
     "tests": [{"name": "suite:0 (not run)", "result": "fail",
                "reason": "ksymlab: suite: packing failed"}]},
    {"lttng_version": "2.13.9", "tests": [
        {"name": f"{POLL}:0 (no TAP)", "result": "fail",
         "reason": "no TAP plan or point; not run: guest boot: no console"}],
     "scripts": [{"script": POLL, "planned": 0, "ended": "not run: guest boot: no console"}]}])
def test_a_retry_that_could_not_run_counts_as_failed_saying_so(outcome):
    for where in ("kallsyms-6.12", "stock-6.12"):
        results = _results({"kallsyms-6.12": {(POLL, 1): CUT}})
        # on stock: the variant fails again (had it passed, stock would not matter)
        outcomes = {"kallsyms-6.12": {(POLL, 1): CUT}, where: outcome}
        rep = _report(results, FakeRunner(outcomes))
        assert rep["verdict"] == "fail", where
        (row,) = rep["lttng_suite_regressions"]
        assert row["flagged"] and row["retry"]["outcome"] == "could not run", where
        assert f"retry could not run on {where}: " in row["reason"], where
        assert row["reason"].endswith(f"(first: {CUT[1]})")


def test_only_flagged_scripts_run_again_grouped_per_variant_beside_their_lines_stock():
    first = {"exports": {(POLL, 2): CUT},
             "kallsyms": {(POLL, 1): CUT, (BASIC, 1): ("fail", "exit 1")},
             "exports-6.12": {(CLOCK, 21): ("fail", "timing")},
             "kallsyms-6.12": {(CLOCK, 20): ("fail", "timing")}}
    runner = FakeRunner()
    new = retry.phase(_results(first), runner)
    assert runner.calls == [("exports", (POLL,)), ("kallsyms", (BASIC, POLL)),
                            ("stock", (BASIC, POLL)), ("exports-6.12", (CLOCK,)),
                            ("kallsyms-6.12", (CLOCK,)), ("stock-6.12", (CLOCK,))]
    assert sorted(r.name for r in new) == sorted(LINES)
    # nothing flagged: nothing runs
    runner = FakeRunner()
    assert retry.phase(_results(), runner) == [] and runner.calls == []


def test_a_point_a_lost_feature_explains_is_not_run_again():
    first = {"kallsyms-6.12": {(STACK, 1): ("fail", "empty stack")}}
    runner = FakeRunner()
    results = _results(first, lost={"kallsyms-6.12": "callstack-user context"})
    assert retry.phase(results, runner) == [] and runner.calls == []
    (row,) = compare.regressions({n: r.to_json() for n, r in results.items()})
    assert row["explained_by"] == "callstack-user context" and not row["flagged"]
    # beside a flagged point of another script, only that script runs again
    first["kallsyms-6.12"][(POLL, 1)] = CUT
    runner = FakeRunner()
    rep = _report(_results(first, lost={"kallsyms-6.12": "callstack-user context"}), runner)
    assert runner.calls == [("kallsyms-6.12", (POLL,)), ("stock-6.12", (POLL,))]
    # and it stays explained (its script was not run again: no "could not run" for it)
    assert [(r["point"].split(" ")[0], r["flagged"], r["explained_by"], "retry" in r)
            for r in rep["lttng_suite_regressions"]] == [
        (f"{POLL}:1", False, None, True), (f"{STACK}:1", False, "callstack-user context", False)]
    assert rep["verdict"] == "pass"


def test_a_variant_whose_suite_judged_nothing_is_not_run_again_and_still_fails():
    results = _results()
    r = results["exports"]
    results["exports"] = VariantResult(**{**r.__dict__, "facts": {**r.facts, "lttng_suite": {
        "error": "suite", "tests": [{"name": "suite:0 (not run)", "result": "fail",
                                     "reason": "build failed"}]}}})
    runner = FakeRunner()
    rep = _report(results, runner)
    assert runner.calls == [] and rep["verdict"] == "fail"


def test_this_hosts_runner_runs_the_exact_scripts_in_a_retry_directory(monkeypatch, tmp_path):
    from types import SimpleNamespace
    calls = []

    def fake(variant, tree, build, vdir, opts, timeout, only, exact):
        calls.append((variant.name, tree, str(build), vdir, timeout, only, exact))
        return _entry(only, {(POLL, 2): CUT})        # fails again
    monkeypatch.setattr(retry.suiterun, "run_or_failure", fake)
    results = _results({"exports": {(POLL, 2): CUT}})
    variants = [SimpleNamespace(name=n) for n in LINES]
    trees = {n: f"tree-{n}" for n in LINES if n != "stock"}
    opts = SimpleNamespace(lttng_suite_timeout=120)
    runner = retry.local_runner(variants, trees, results, tmp_path, opts)
    rep = _report(results, runner)
    assert calls == [("exports", "tree-exports", "/b/exports", tmp_path / "exports" / "retry",
                      120, (POLL,), True)]
    # stock had no built tree: its retry could not run, so the point failing again counts
    (row,) = rep["lttng_suite_regressions"]
    assert row["flagged"] and row["retry"]["stock_result"] == compare.NOT_RUN
    assert "no built tree or LTTng build" in row["reason"]


def test_the_run_publishes_the_retried_variants_after_all_first_runs(monkeypatch, tmp_path):
    from harness import postphases, run as harnessrun
    results = _results({"exports": {(POLL, 2): CUT}})
    board = harnessrun.Board()
    for r in results.values():
        board.publish(r)
    runner = FakeRunner()
    seen = []
    seconds = postphases.run_all(board, lambda snap: seen.append(snap) or runner,
                                 SimpleNamespace(lttng_suite=True))
    assert list(seconds) == ["suite_retry"] and isinstance(seconds["suite_retry"], float)
    assert runner.calls == [("exports", (POLL,)), ("stock", (POLL,))]
    assert dict(seen[0]) == results         # the runner is made for every first run's result
    # without --lttng-suite there is no retry phase
    assert postphases.run_all(board, None, SimpleNamespace(lttng_suite=False)) == {}
    snap = board.snapshot()
    assert snap["exports"].facts["lttng_suite"]["retry"]["asked"] == [POLL]
    assert "retry" not in results["exports"].facts["lttng_suite"]     # not mutated
    rep = _assemble(snap)
    assert rep["verdict"] == "pass"
