"""End to end: lttng-tools' own kernel tests judge the LTTng variants of both lines
(issue 23 items 2-4).

Reads the session's shared runs (e2e_runs): default_run (6.1: exports, kallsyms
and stock run LTTng 2.13.9; bpf13 has no LTTng boot) and lttng_612_run
(exports-6.12 and stock-6.12 with LTTng 2.13.18), both with `--lttng-suite
--lttng-suite-only` SUITE_SCRIPTS. The points in report.json are checked against
the raw TAP streams the guests wrote (read here with a regex of this file, not
with harness/lttng/suite/tap.py), and the comparison rule is shown to fire on the
real report once one point is doctored.
"""

import copy
import re

import pytest

from harness.lttng.suite import compare
from harness.tests.e2e_runs import LTTNG_612_VARIANTS, SUITE_SCRIPTS

pytestmark = [pytest.mark.e2e]

# variant -> (LTTng release, kernel release prefix), written out here
EXPECTED = {"exports": ("2.13.9", "6.1."), "kallsyms": ("2.13.9", "6.1."),
            "stock": ("2.13.9", "6.1."),
            "exports-6.12": ("2.13.18", "6.12."), "stock-6.12": ("2.13.18", "6.12.")}
NAME = re.compile(r"^regression/\S+:\d+( .*)?$")


def _runs(default_run, lttng_612_run):
    return ((default_run, ("exports", "kallsyms", "stock")),
            (lttng_612_run, LTTNG_612_VARIANTS))


def _raw_points(run, variant):
    """{script: {number: "ok" | "not ok" | "skip"}} from the last TAP block of each
    script in the variant's suite-tap-*.log files (guest order)."""
    out = {}
    logs = sorted((run.latest / variant / "lttng-suite").glob("suite-tap-*.log"),
                  key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    for log in logs:
        script = None
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("KSYMLAB-SUITE-BEGIN "):
                script = line.split(" ", 1)[1].strip()
                out[script] = {}
            elif line.startswith("KSYMLAB-SUITE-END "):
                script = None
            elif script:
                m = re.match(r"^(not ok|ok) (\d+)\b(.*)$", line)
                if m:
                    skip = re.search(r"#\s*skip", m.group(3), re.I)
                    out[script][int(m.group(2))] = "skip" if skip and m.group(1) == "ok" \
                        else m.group(1)
    return out


@pytest.mark.prebuild("stock-6.12", "exports-6.12")
def test_the_suite_ran_the_chosen_scripts_on_every_lttng_variant(default_run, lttng_612_run):
    for run, names in _runs(default_run, lttng_612_run):
        rep = run.report()
        assert sorted(rep["lttng_suite"]) == sorted(names)
        for name in names:
            e = rep["lttng_suite"][name]
            version, kernel = EXPECTED[name]
            assert e["lttng_version"] == version and e["kernel"].startswith(kernel), e
            ran = [s["script"] for s in e["scripts"]]
            assert len(ran) == len(SUITE_SCRIPTS)
            assert all(any(s.endswith(x) for s in ran) for x in SUITE_SCRIPTS), ran
            assert e["not_selected"], "the other scripts are listed, not dropped"
            assert all(NAME.match(t["name"]) and t["result"] in ("pass", "fail", "skip")
                       for t in e["tests"]), e["tests"][:3]
            # no guest fault, and every script printed its plan
            assert e["faults"] == [] and all(s["planned"] > 0 for s in e["scripts"]), e
            # each script was timed between its own markers: within the suite's time
            secs = [s["seconds"] for s in e["scripts"]]
            assert all(0 < t <= e["timeout_s"] + 15 for t in secs), secs
            assert sum(secs) < e["seconds"], (secs, e["seconds"])
            # a chosen-scripts suite is not held to the whole-suite rate, but is counted
            c = e["coverage"]
            assert c["planned"] == len(e["tests"]) and \
                c["passed"] == sum(t["result"] == "pass" for t in e["tests"])
        others = [n for n, v in rep["variants"].items() if v.get("lttng_suite")
                  and n not in names]
        assert others == []         # bpf13 has no LTTng boot, so no suite


@pytest.mark.prebuild("stock-6.12", "exports-6.12")
def test_every_point_is_the_guests_own_tap_line(default_run, lttng_612_run):
    for run, names in _runs(default_run, lttng_612_run):
        rep = run.report()
        for name in names:
            raw = _raw_points(run, name)
            got = {}
            for t in rep["lttng_suite"][name]["tests"]:
                script, rest = t["name"].split(":", 1)
                got.setdefault(script, {})[int(rest.split(" ", 1)[0])] = t["result"]
            want = {s: {n: {"ok": "pass", "not ok": "fail", "skip": "skip"}[r]
                        for n, r in pts.items()} for s, pts in raw.items()}
            assert got == want, name
            # the tests did run: most points pass on every variant
            n_pass = sum(r == "pass" for pts in got.values() for r in pts.values())
            assert n_pass >= 40, (name, n_pass)


@pytest.mark.prebuild("stock-6.12", "exports-6.12")
def test_no_point_passing_on_stock_fails_on_the_series_and_a_doctored_one_would(
        default_run, lttng_612_run):
    for run, names in _runs(default_run, lttng_612_run):
        rep = run.report()
        assert [r for r in rep["lttng_suite_regressions"] if r["flagged"]] == []
        assert rep["verdict"] == "pass"
        exports = next(n for n in names if n.startswith("exports"))
        stock = next(n for n in names if n.startswith("stock"))
        # the callstack test passes on exports: the user callstack context through
        # the series' export of stack_trace_save_user, not by name
        cs = [t for t in rep["lttng_suite"][exports]["tests"]
              if t["name"].startswith("regression/kernel/test_callstack:")]
        assert cs and all(t["result"] == "pass" for t in cs)
        # doctor exports: one point of test_event_basic that stock passes now fails
        variants = copy.deepcopy(rep["variants"])
        passed = [t["name"] for t in variants[stock]["lttng_suite"]["tests"]
                  if t["result"] == "pass" and "test_event_basic" in t["name"]]
        for t in variants[exports]["lttng_suite"]["tests"]:
            if t["name"] == passed[0]:
                t["result"], t["reason"] = "fail", "doctored"
        rows = compare.regressions(variants)
        assert [(r["variant"], r["point"], r["flagged"]) for r in rows] == [
            (exports, passed[0], True)]
        # a regen-statedump point fails: exports lost the interrupt statedump
        # (irq_to_desc is not in the series), which explains it
        variants = copy.deepcopy(rep["variants"])
        sd = [t for t in variants[exports]["lttng_suite"]["tests"]
              if "regen-statedump" in t["name"] and t["result"] == "pass"]
        sd[0]["result"] = "fail"
        (row,) = compare.regressions(variants)
        assert row["explained_by"] == "statedump of interrupts" and not row["flagged"]


@pytest.mark.prebuild("stock-6.12", "exports-6.12")
def test_every_suite_guest_brought_up_two_cpus(default_run, lttng_612_run):
    # LTTng's CI runs its tests on 2 vCPUs, and so do the suite guests (guest.CPUS).
    # The kernel's own line says how many it brought up: without ACPI (tinyconfig)
    # it enumerates CPUs from the MP table, which lists one CPU a package, so a
    # plain `-smp 2` (two cores of one socket) brought up one; the harness asks
    # QEMU for a CPU a socket.
    for run, names in _runs(default_run, lttng_612_run):
        for name in names:
            consoles = sorted((run.latest / name / "lttng-suite").glob("suite-console-*.log"))
            assert consoles, name
            for log in consoles:
                text = log.read_text(errors="replace")
                assert re.search(r"^smp: Brought up 1 node, 2 CPUs\r?$", text, re.M), \
                    (log, re.findall(r"^smp: Brought up.*$", text, re.M))
