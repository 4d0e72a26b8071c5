"""The confusion audit on the session's shared default run (e2e_runs.default_run,
the one test_e2e reads): the default scenario must leave no kind weak (issue 25)."""

import json

import pytest

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
        assert {a["kind"] for a in audits} >= {"prio", "ustack"}, variant
        weak = [(a["kind"], a["confusion"], a["blind"]) for a in audits if a["weak"]]
        assert weak == [], (variant, weak)
        assert all(a["rows"] > 0 for a in audits), variant
    md = (default_run.runs / "latest" / "report.md").read_text()
    assert "## Confusion audit" in md and "weak on" not in md
