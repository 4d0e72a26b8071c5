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
    assert "disagreement" in md and "| pid 2 (x) | 20 | 20 | **NO** |" in md


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


def two_variants(kallsyms_prio=20, kallsyms_dev="1:0 100"):
    r = rep((True, True))
    a = r["variants"]["exports"]
    a["values"].append({"kind": "blockdev", "key": "ram0", "module": "1:0 100",
                        "sysfs": "1:0 100", "agree": True})
    b = json.loads(json.dumps(a))
    b["module_mode"] = "kallsyms"
    b["values"][0]["module"] = kallsyms_prio
    b["values"][0]["scenario"] = kallsyms_prio
    a["values"][0]["scenario"] = 20
    b["values"][2]["module"] = kallsyms_dev
    b["symbols"][0].update(method="kallsyms", module_addr="0x2", gdb_addr="0x2")
    b["kaslr"] = {"enabled": True, "slide": "0x2a00000"}
    r["variants"]["kallsyms"] = b
    return r


def test_a_table_per_kind_with_counts_per_variant_and_the_disagreeing_rows(tmp_path):
    r = two_variants()
    report.write_all(tmp_path, r)
    md = (tmp_path / "report.md").read_text()
    assert not any(x["flagged"] for x in r["across"])
    assert report.overall_verdict(r["variants"], [], r["across"]) == "pass"
    assert "| variant | checks | agree | disagree | unchecked | sources |" in md
    assert "| kallsyms | 2 | 2 | 0 | 0 | module, gdb, scenario |" in md
    assert "Disagreements" not in md
    # the summary states the slide of the KASLR variant
    assert "| kallsyms | kallsyms | 1/1 | 3/3 | 0 | 0 | 0x2a00000 | pass |" in md
    assert "| block devices (name, dev, sectors) | exports | ram0 1:0 100 | yes |  |" in md
    assert "| block devices (name, dev, sectors) | kallsyms | ram0 1:0 100 | yes |  |" in md
    r["variants"]["kallsyms"]["values"][1].update(module=21, agree=False)
    report.write_all(tmp_path, r)
    md = (tmp_path / "report.md").read_text()
    assert "| variant | key | module | gdb | agree |" in md
    assert "| kallsyms | pid 2 (x) | 21 | 20 | **NO** |" in md


def test_a_difference_that_must_not_exist_is_flagged_and_fails(tmp_path):
    r = two_variants(kallsyms_dev="1:0 200")
    report.write_all(tmp_path, r)
    assert report.overall_verdict(r["variants"], [], r["across"]) == "fail"
    flagged = [x["what"] for x in r["across"] if x["flagged"]]
    assert flagged == ["block devices (name, dev, sectors)"]
    assert "**NO, flagged**" in (tmp_path / "report.md").read_text()
    # a difference that is expected is explained, not flagged
    r = two_variants()
    report.write_all(tmp_path, r)
    addr = [x for x in r["across"] if x["what"] == "resolved kernel addresses"][0]
    assert addr["identical"] is False and not addr["flagged"] and "vmlinux" in addr["why"]


def test_fault_verdict_in_summary(tmp_path):
    r = rep()
    r["variants"]["exports"].update(verdict="fail", error={
        "step": "reboot", "verdict": "reboot", "message": "unexpected reboot",
        "exit_status": 37, "log": None, "excerpt": "reboot: Restarting system"})
    report.write_all(tmp_path, r)
    md = (tmp_path / "report.md").read_text()
    assert "| **reboot** |" in md and "reboot: Restarting system" in md


def test_write_all_writes_report_html_beside_the_others(tmp_path):
    report.write_all(tmp_path, two_variants())
    for name in ("report.json", "report.md", "report.ktap", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<figure class="pbmap"') == 0
    assert "task_prio() of the scenario tasks" in page
