import json

from harness import report


def rep(agree_values=(True, None)):
    values = [{"kind": "prio", "key": f"pid {i}", "comm": "x", "module": 20, "gdb": 20,
               "agree": a} for i, a in enumerate(agree_values, 1)]
    ok = all(a is not False for a in agree_values)
    return {"run_id": "r1", "tarball": "t", "variants": {
        "exports": {"description": "d", "module_mode": "exports", "verdict": "pass" if ok
                    else "fail", "error": None, "notes": [],
                    "symbols": [{"name": "task_prio", "method": "export", "module_addr": "0x1",
                                 "gdb_addr": "0x1", "agree": True}],
                    "values": values,
                    "counts": {"symbols": 1, "symbols_agree": 1, "values": len(values),
                               "values_agree": sum(a is True for a in agree_values)}}}}


def test_ktap_marks_unchecked_as_skip_and_failures_as_not_ok(tmp_path):
    r = rep()
    report.write_all(tmp_path, r)
    ktap = (tmp_path / "report.ktap").read_text().splitlines()
    assert ktap[:5] == ["KTAP version 1", "1..1", "  KTAP version 1", "  # Subtest: exports",
                        "  1..3"]
    assert ktap[5] == "  ok 1 symbol task_prio export"
    assert ktap[7] == "  ok 3 prio pid 2 x # SKIP no oracle"
    assert ktap[8] == "ok 1 exports"
    bad = rep((True, False))
    report.write_all(tmp_path, bad)
    ktap = (tmp_path / "report.ktap").read_text().splitlines()
    assert "  not ok 3 prio pid 2 x" in ktap and "not ok 1 exports" in ktap
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] == "fail"
    md = (tmp_path / "report.md").read_text()
    assert "disagreement" in md and "| pid 2 | x | 20 | 20 | **NO** |" in md


def test_error_step_is_reported(tmp_path):
    r = rep()
    r["variants"]["exports"].update(verdict="fail", error={
        "step": "panic", "message": "Kernel panic - not syncing: x", "exit_status": 31,
        "log": "/x/console.log", "excerpt": "line before\nKernel panic - not syncing: x"})
    report.write_all(tmp_path, r)
    md = (tmp_path / "report.md").read_text()
    assert "step `panic` failed (exit 31)" in md and "line before" in md
    assert "not ok 4 step panic: Kernel panic - not syncing: x" in \
        (tmp_path / "report.ktap").read_text().replace("  not ok", "not ok")
