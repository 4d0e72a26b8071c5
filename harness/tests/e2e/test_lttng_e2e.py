"""End to end: Debian's LTTng in a guest of each variant (issue 13).

The LTTng boots checked here are the three of the session's shared run of the
default variants (e2e_runs.default_run: exports, kallsyms and stock have an
[lttng] table): their rows and facts from its report.json, their recordings
from its variant directories, read and never changed (a doctored copy is made
in memory). One test builds LTTng as shipped against the stock tree (a few
minutes on 2 cores on first use, then cached) and boots it on its own.
"""

import copy
import json

import pytest

from harness.prepare import kernel
from harness.errors import HarnessError
from harness.lttng.rows import features
from harness.lttng.rows.inputs import Inputs
from harness.lttng import step
from harness.options import RunOptions
from harness.tests.e2e_runs import report_rows

pytestmark = pytest.mark.e2e

LTTNG_VARIANTS = ["exports", "kallsyms", "stock"]


def _variant_and_tree(name):
    opts = RunOptions.from_env()
    (v,) = opts.select([name])
    return opts, v, kernel.prepare(v, opts.cache)


@pytest.fixture(params=LTTNG_VARIANTS)
def lttng_run(request, default_run):
    """(variant, its LTTng rows, the facts of its LTTng boot, its run directory)."""
    (v,) = RunOptions.from_env().select([request.param])
    rep = default_run.variant(v.name)
    return (v, report_rows(rep, ("lttng", "lttng-coverage")), rep["lttng"],
            default_run.latest / v.name)


def test_lttng_comparison_passes(lttng_run):
    v, rows, facts, _ = lttng_run
    bad = [(c.id, dict(c.sources), c.reason) for c in rows if c.disagrees]
    assert bad == [], bad
    # every wrapped feature the session covers left evidence
    keys = {c.key for c in rows}
    for prefix in ("prio/", "ustack/depth", "ustack/stack", "kstack/chain", "uprobe/level2",
                   "splice/output", "blockdev/", "writeback/", "kmem/", "gdb/stop",
                   "symcheck/by-name/", "symcheck/check"):
        assert any(k.startswith(prefix) for k in keys), prefix
    assert facts["events"]["sched_switch"] > 0


def test_coverage_names_how_lttng_got_each_name(lttng_run):
    v, rows, _, _ = lttng_run
    cov = {c.key: c.get("how") for c in rows if c.kind == "lttng-coverage"}
    if v.name == "exports":
        assert cov["task_prio"] == "export"
        assert cov["stack_trace_save_user"] == "export"
        # patches/lttng 0006: called through the export, no longer by name
        assert cov["stack_trace_save"] == "export"
        assert cov["get_pfnblock_flags_mask"] == "export"
        assert cov["global_wb_domain"] == "tracepoint argument"
        assert cov["block_class"].startswith("export")
        assert cov["irq_to_desc"].startswith("not available")
    else:
        assert cov["task_prio"].startswith("kprobe trick")
        assert cov["stack_trace_save"].startswith("kprobe trick")
    # symcheck audit of the same build: the covered names by name only with the wrapper
    audit = {c.key: c.sources["symcheck audit"] for c in rows
             if c.key.startswith("symcheck/by-name/")}
    assert len(audit) == 6
    if v.name == "exports":
        assert set(audit.values()) == {"not by name"}
    else:
        assert all("wrapper_kallsyms_lookup_name" in w for w in audit.values()), audit


def _recorded(vdir):
    """The run's trace summary, guest lines and gdb's reading at its stop."""
    return tuple(json.loads((vdir / "lttng" / f).read_text())
                 for f in ("summary.json", "guest.json", "gdb.json"))


def test_a_doctored_trace_field_fails(lttng_run):
    """The recorded trace, one prio context value changed: the run must fail."""
    v, _, _, vdir = lttng_run
    summary, guest, truth = _recorded(vdir)
    assert all(not c.disagrees
               for c in features.compare(Inputs.from_json(summary, guest, truth, v.lttng_lost)))
    doctored = copy.deepcopy(summary)
    pid = guest["task"][0]["pid"]
    for s in doctored["sched_switch"]:
        if s["prev_tid"] == pid:
            s["prio"] += 1
    bad = [c.key for c in features.compare(Inputs.from_json(doctored, guest, truth, v.lttng_lost))
           if c.disagrees]
    assert any(k.startswith("prio/") for k in bad), bad


def test_a_wrong_expectation_fails(lttng_run):
    """Saying the prio context is lost where it works fails the run."""
    v, _, _, vdir = lttng_run
    summary, guest, truth = _recorded(vdir)
    bad = [c.key for c in features.compare(Inputs.from_json(summary, guest, truth, ("prio",)))
           if c.disagrees]
    assert "feature/prio" in bad


def test_gdb_read_the_quiet_point(lttng_run):
    """gdb stopped the guest where the trace marks it, and its prio, block class
    and dirty limit are columns of agreeing rows; one doctored gdb value (the
    dirty limit off by one page, a scenario task's prio) fails the run."""
    v, rows, facts, vdir = lttng_run
    summary, guest, truth = _recorded(vdir)
    by_key = {c.key: c for c in rows if c.kind == "lttng"}
    assert by_key["gdb/stop"].agrees
    assert by_key["writeback/dirty_limit-at-stop"].agrees
    assert by_key["writeback/dirty_limit-at-stop"].sources["gdb_wb_domain"] == \
        truth["global_wb_domain"]["dirty_limit"] > 0
    assert all(c.sources.get("gdb") is not None for k, c in by_key.items()
               if k.startswith("prio/") and k != "prio/tasks")
    assert all(c.sources.get("gdb_class") for k, c in by_key.items()
               if k.startswith("blockdev/"))
    doctored = copy.deepcopy(truth)
    doctored["global_wb_domain"]["dirty_limit"] += 1
    doctored["tasks"][str(guest["task"][0]["pid"])]["prio"] += 1
    bad = {c.key for c in features.compare(Inputs.from_json(summary, guest, doctored, v.lttng_lost))
           if c.disagrees}
    assert {"writeback/dirty_limit-at-stop", "writeback/bdp-limit-at-stop"} <= bad, bad
    assert any(k.startswith("prio/") for k in bad), bad


def test_shipped_lttng_prio_context_is_one_classified_panic(tmp_path):
    """LTTng as shipped (plus the build fix only) with the prio context: the
    first event recorded with it calls a NULL pointer (measured: a
    kmem_mm_page_alloc, RIP 0x0 from prio_record+0x1d); with oops=panic the run stops
    at once with a classified fault, not a hang or thousands of oopses."""
    opts, v, tree = _variant_and_tree("stock")
    with pytest.raises(HarnessError) as e:
        step.run_lttng(v, tree, tmp_path, opts, series="shipped")
    assert e.value.step in ("oops", "panic"), e.value.one_line()
    console = (tmp_path / "lttng" / "console.log").read_text(errors="replace")
    assert "prio_record" in console
    assert console.count("Oops:") == 1
    assert "Kernel panic - not syncing" in console
    # symcheck ran on the build before the boot: the shipped wrapper still calls
    # get_pfnblock_flags_mask through a 4-parameter pointer (patch 0005 fixes it)
    ct = json.loads((tmp_path / "lttng" / "symcheck.json").read_text())["calltypes"]
    bad = {(i["module"], i["name"], i["problem"]) for i in ct["items"] if i["status"] == "mismatch"}
    assert bad == {("lttng_wrapper", "get_pfnblock_flags_mask", "param-count")}, ct


UNCHECKED_DERIVED = {"writeback/derived/bdi_setpoint", "writeback/derived/paused",
                     "writeback/derived/think"}


def test_make_run_includes_the_lttng_comparison(default_run):
    """`run` wires the LTTng boot in for a variant with an [lttng] table: its rows,
    its facts and the coverage table are in report.json, and the run passes."""
    assert default_run.proc.returncode == 0, default_run.proc.stderr[-3000:]
    rep = default_run.report()
    for name in LTTNG_VARIANTS:
        v = rep["variants"][name]
        rows = [c for c in v["values"] if c["kind"] == "lttng"]
        assert rows and all(c["agree"] is True for c in rows if c["agree"] is not None), name
        # unchecked, each with its reason: the derived writeback fields no oracle
        # reads at the stop (issue 43; docs/guest-states.md), and nothing else
        unchecked = {c["key"]: c["reason"] for c in rows if c["agree"] is None}
        assert set(unchecked) == UNCHECKED_DERIVED, (name, unchecked)
        assert all(r.startswith("unchecked: ") for r in unchecked.values()), unchecked
        assert v["lttng"]["trace_bytes"] > 0
        assert {c["key"] for c in rows} >= {"gdb/stop", "writeback/dirty_limit-at-stop",
                                            "symcheck/check", "symcheck/flagged"}
    assert "lttng" not in rep["variants"]["bpf13"]
    assert {r["name"] for r in rep["lttng_coverage"]} >= {"task_prio", "global_wb_domain"}
    (finding,) = rep["lttng_findings"]
    assert set(finding["fix_in_booted_series"]) == set(LTTNG_VARIANTS)
    assert all(b["has_fix"] is True for b in finding["fix_in_booted_series"].values())
    md = (default_run.latest / "report.md").read_text()
    assert "prio_record" in md and finding["tested_by"] in md
