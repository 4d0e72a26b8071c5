"""The confusion audit on the session's shared default run (e2e_runs.default_run,
the one test_e2e reads) and on the 6.12 line's (e2e_runs.lttng_612_run): the
default scenario must leave no kind weak (issue 25)."""

import json

import pytest

from harness.checks.confusions import unaudited
from harness.tests.e2e_runs import LTTNG_612_VARIANTS

pytestmark = pytest.mark.e2e

DEFAULT_VARIANTS = ("exports", "kallsyms", "stock", "bpf13")


def test_the_default_scenario_leaves_no_confusion_weak(default_run):
    """Issue 25: in the default scenario's state every audited kind tells its right
    value from each plausible confusion (a PI-boosted holder, threads of other
    policies than their leader, the user stack from a non-leader thread), on
    every variant; report.md lists the audit."""
    rep = json.loads((default_run.runs / "latest" / "report.json").read_text())
    for variant in DEFAULT_VARIANTS:
        audits = rep["variants"][variant]["confusions"]
        assert {a["kind"] for a in audits} >= {"prio", "ustack", "pageblock", "blockdev",
                                               "writeback", "symbol", "snapshot"}, variant
        weak = [(a["kind"], a["confusion"], a["blind"]) for a in audits if a["weak"]]
        assert weak == [], (variant, weak)
        assert all(a["rows"] > 0 for a in audits), variant
        v = rep["variants"][variant]
        assert unaudited(v["values"] + v["symbols"]) == [], variant
    md = (default_run.runs / "latest" / "report.md").read_text()
    assert "## Confusion audit" in md and "weak on" not in md
    assert "Kinds not audited, and why:" in md


@pytest.mark.prebuild("stock-6.12", "exports-6.12")
def test_the_612_line_leaves_no_confusion_weak(lttng_612_run):
    """The same audit on the 6.12 line's shared run (exports-6.12 and stock-6.12,
    each with its probe-module boot and LTTng 2.13.18's boot): every kind the
    6.1 line audits, LTTng's rows included, told apart."""
    rep = lttng_612_run.report()
    for variant in LTTNG_612_VARIANTS:
        audits = rep["variants"][variant]["confusions"]
        assert {a["kind"] for a in audits} >= {"prio", "ustack", "pageblock", "blockdev",
                                               "writeback", "lttng", "symbol",
                                               "snapshot"}, variant
        weak = [(a["kind"], a["confusion"], a["blind"]) for a in audits if a["weak"]]
        assert weak == [], (variant, weak)
        v = rep["variants"][variant]
        assert unaudited(v["values"] + v["symbols"]) == [], variant
