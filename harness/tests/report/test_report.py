import json
import threading
from dataclasses import FrozenInstanceError, replace

import pytest

from harness import judge
from harness.report import assemble, show, tally
from harness.model.results import Check, StepError, VariantResult
from harness.run import Board

SYMBOL = Check("symbol", "task_prio", {"module": "0x1", "gdb": "0x1"}, True,
               info={"method": "export"})


def prio(i, agree=True, module=20, scenario=None):
    sources = {"module": module, "gdb": 20}
    if scenario is not None:
        sources["scenario"] = scenario
    return Check("prio", f"pid {i}", sources, agree, info={"comm": "x", "pid": i})


def result(name="exports", values=None, symbols=(SYMBOL,), **kw):
    values = values if values is not None else [prio(1), prio(2, agree=None)]
    return VariantResult(name, "d", "exports" if name != "kallsyms" else "kallsyms",
                         symbols=tuple(symbols), values=tuple(values), **kw)


def write(tmp_path, *results):
    snap, order = {r.name: r for r in results}, [r.name for r in results]
    rep = assemble.assemble({"run_id": "r1", "tarball": "t"}, snap, order,
                            judge.judge(snap, order))
    assemble.write_all(tmp_path, rep)
    return rep


def test_ktap_marks_unchecked_as_skip_and_failures_as_not_ok(tmp_path):
    write(tmp_path, result())
    ktap = (tmp_path / "report.ktap").read_text().splitlines()
    assert ktap[:5] == ["KTAP version 1", "1..1", "  KTAP version 1", "  # Subtest: exports",
                        "  1..3"]
    assert ktap[5] == "  ok 1 symbol task_prio export"
    assert ktap[7] == "  ok 3 prio pid 2 x # SKIP no oracle"
    assert ktap[8] == "ok 1 exports"
    write(tmp_path, result(values=[prio(1), prio(2, agree=False)]))
    ktap = (tmp_path / "report.ktap").read_text().splitlines()
    assert "  not ok 3 prio pid 2 x" in ktap and "not ok 1 exports" in ktap
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] == "fail"
    md = (tmp_path / "report.md").read_text()
    assert "disagreement" in md and "| exports | pid 2 (x) | 20 | 20 | **NO** |" in md


def test_error_step_is_reported(tmp_path):
    err = StepError("panic", "Kernel panic - not syncing: x", 31, "panic", "/x/console.log",
                    "line before\nKernel panic - not syncing: x")
    write(tmp_path, result(error=err))
    md = (tmp_path / "report.md").read_text()
    assert "step `panic` failed (exit 31)" in md and "line before" in md
    assert "not ok 4 step panic: Kernel panic - not syncing: x" in \
        (tmp_path / "report.ktap").read_text().replace("  not ok", "not ok")


def _verdict(rep, seed_rows, across):
    """The judge's rule on the variants' verdicts of report.json and the given rows."""
    return judge.decide({n: v["verdict"] for n, v in rep["variants"].items()},
                        seed_rows, across)[0]


def two_variants(kallsyms_prio=20, kallsyms_dev="1:0 100"):
    dev = Check("blockdev", "ram0", {"module": "1:0 100", "sysfs": "1:0 100"}, True)
    a = result(values=[prio(1, scenario=20), prio(2), dev])
    b = result("kallsyms", values=[prio(1, module=kallsyms_prio, scenario=kallsyms_prio),
                                   prio(2), replace(dev, sources={"module": kallsyms_dev,
                                                                  "sysfs": kallsyms_dev})],
               symbols=[replace(SYMBOL, sources={"module": "0x2", "gdb": "0x2"},
                                info={"method": "kallsyms"})],
               facts={"kaslr": {"enabled": True, "slide": "0x2a00000"}})
    return a, b


def test_a_table_per_kind_with_counts_per_variant_and_the_disagreeing_rows(tmp_path):
    a, b = two_variants()
    r = write(tmp_path, a, b)
    md = (tmp_path / "report.md").read_text()
    assert not any(x["flagged"] for x in r["across"])
    # (the seed rows fail: this fake run has none of their evidence)
    assert _verdict(r, [], r["across"]) is judge.Verdict.PASS
    assert "| variant | checks | agree | disagree | unchecked | sources |" in md
    assert "| kallsyms | 2 | 2 | 0 | 0 | module, gdb, scenario |" in md
    assert "Disagreements" not in md
    # the summary states the slide of the KASLR variant
    assert "| variant | module mode | symbols resolved | agree | disagree | unchecked |" in md
    assert "| kallsyms | kallsyms | 1/1 | 4 | 0 | 0 | 0x2a00000 | pass |" in md
    assert "| block devices (name, dev, sectors) | exports | ram0 1:0 100 | yes |  |" in md
    assert "| block devices (name, dev, sectors) | kallsyms | ram0 1:0 100 | yes |  |" in md
    b = replace(b, values=(b.values[0], replace(b.values[1], sources={"module": 21, "gdb": 20},
                                                agreement=False)) + b.values[2:])
    write(tmp_path, a, b)
    md = (tmp_path / "report.md").read_text()
    assert "| variant | key | module | gdb | agree |" in md
    assert "| kallsyms | pid 2 (x) | 21 | 20 | **NO** |" in md


def test_a_difference_that_must_not_exist_is_flagged_and_fails(tmp_path):
    r = write(tmp_path, *two_variants(kallsyms_dev="1:0 200"))
    assert _verdict(r, [], r["across"]) is judge.Verdict.FAIL
    flagged = [x["what"] for x in r["across"] if x["flagged"]]
    assert flagged == ["block devices (name, dev, sectors)"]
    assert "**NO, flagged**" in (tmp_path / "report.md").read_text()
    # a difference that is expected is explained, not flagged
    r = write(tmp_path, *two_variants())
    addr = [x for x in r["across"] if x["id"] == "symbol-addresses"][0]
    assert addr["identical"] is False and not addr["flagged"] and "vmlinux" in addr["why"]


def test_a_must_match_row_missing_from_one_variant_is_flagged(tmp_path):
    a, b = two_variants()
    b = replace(b, values=tuple(v for v in b.values if v.kind != "blockdev"))
    r = write(tmp_path, a, b)
    row = [x for x in r["across"] if x["id"] == "blockdevs"][0]
    assert row["flagged"] and "kallsyms has no such rows" in row["why"]
    assert _verdict(r, [], r["across"]) is judge.Verdict.FAIL


def test_fault_verdict_in_summary(tmp_path):
    err = StepError("reboot", "unexpected reboot", 37, "reboot", None,
                    "reboot: Restarting system")
    write(tmp_path, result(error=err))
    md = (tmp_path / "report.md").read_text()
    assert "| **reboot** |" in md and "reboot: Restarting system" in md


def test_results_cannot_change_once_published():
    r = result()
    with pytest.raises(FrozenInstanceError):
        r.verdict = "pass"
    with pytest.raises(TypeError):
        r.values[0].sources["module"] = 21          # a read-only mapping
    with pytest.raises(TypeError):
        r.timings["boot"] = 1.0


def test_report_writer_never_sees_a_result_being_filled(tmp_path):
    """Workers publish while a writer assembles and writes again and again: every
    assembled report is one of the published states, and nothing raises
    "dictionary changed size during iteration"."""
    board = Board()
    names = [f"v{i}" for i in range(8)]
    errors = []
    stop = threading.Event()

    def worker(name):
        for n in range(40):
            board.publish(result(name, values=[prio(i) for i in range(1, 30 + n % 3)]))

    def writer():
        try:
            while not stop.is_set():
                snap = board.snapshot()
                rep = assemble.assemble({"run_id": "r", "tarball": "t"}, snap, names,
                                        judge.judge(snap, names))
                # every variant in a snapshot is complete: its counts match its rows
                for v in rep["variants"].values():
                    assert v["counts"]["values"] == len(v["values"])
                assemble.write_all(tmp_path, rep)
        except Exception as e:          # noqa: BLE001 - the test reports any failure
            errors.append(e)

    w = threading.Thread(target=writer)
    w.start()
    threads = [threading.Thread(target=worker, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    assert errors == []
    assert sorted(board.snapshot()) == names


def test_write_all_writes_report_html_beside_the_others(tmp_path):
    write(tmp_path, *two_variants())
    for name in ("report.json", "report.md", "report.ktap", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    page = (tmp_path / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<figure class="pbmap"') == 0
    assert "task_prio() of the scenario tasks" in page


def test_kernel_line_matrix_and_rows_that_must_match_only_within_a_line(tmp_path):
    def blocks(name, line, n, role=None):
        rows = [Check("pageblock", f"DMA32 pfn {i:#x}", {"module": 1, "gdb_bitmap": 1}, True,
                      info={"zone": "DMA32", "node": 0, "pfn": i}) for i in range(n)]
        return result(name, values=[prio(1, scenario=20)] + rows, kernel_line=line,
                      role=role or name)
    a, b = blocks("exports", "6.1", 4), blocks("exports-6.12", "6.12", 5, role="exports")
    c = blocks("stock-6.12", "6.12", 5, role="stock")
    r = write(tmp_path, a, b, c)
    row = [x for x in r["across"] if x["id"] == "pageblock-count"][0]
    assert not row["identical"] and not row["flagged"] and "kernel line" in row["why"]
    assert r["matrix"]["lines"] == ["6.1", "6.12"]
    cells = {x["role"]: x["cells"] for x in r["matrix"]["rows"]}
    assert cells["exports"]["6.12"]["variant"] == "exports-6.12" and "6.1" not in cells["stock"]
    md = (tmp_path / "report.md").read_text()
    assert "| variant | 6.1 | 6.12 |" in md
    assert "| stock | not run | pass (7 agree, 0 disagree, 0 unchecked, `stock-6.12`) |" in md
    # within one line the same difference is flagged
    d = blocks("kallsyms-6.12", "6.12", 6, role="kallsyms")
    r = write(tmp_path, a, b, d)
    row = [x for x in r["across"] if x["id"] == "pageblock-count"][0]
    assert row["flagged"] and r["verdict"] == "fail"
    # a row that must match on every line is flagged across lines
    e = replace(b, values=(prio(1, scenario=21, module=21),) + b.values[1:])
    r = write(tmp_path, a, e)
    assert [x["id"] for x in r["across"] if x["flagged"]] == ["scenario-prio"]


def test_a_renamed_check_flags_its_must_match_rule_in_every_variant(tmp_path):
    def frames(name, key):
        rows = [Check("ustack", f"{key}/{d}", {"eu_addr2line": f, "program": f}, True)
                for d, f in enumerate(("level3", "level2", "level1", "ustack_thread",
                                                "start_thread"))]
        return result(name, values=[prio(1, scenario=20)] + rows)
    r = write(tmp_path, frames("exports", "fn"), frames("kallsyms", "fn"))
    assert [x["identical"] for x in r["across"] if x["id"] == "ustack-names"] == [True]
    # the same rows under another key in both variants: the rule reads nothing
    r = write(tmp_path, frames("exports", "function"), frames("kallsyms", "function"))
    row = [x for x in r["across"] if x["id"] == "ustack-names"][0]
    assert row["flagged"] and "exports, kallsyms has no such rows" in row["why"]


def test_a_seed_with_an_unchecked_row_shows_agree_disagree_and_unchecked_apart(tmp_path):
    """Seed 5/9's evidence (checks/seeds.py): the task_prio symbol, the prio rows and
    its claim. One prio row unchecked is not a failure: "2/3" read as one; the tally
    names the three counts (issue 38 item 8)."""
    claim = Check("seed", "5/9/export/task_prio", {"module": "GPL", "expected": "GPL"}, True)
    r = write(tmp_path, result(values=[prio(1, agree=None), claim], seeds=("5/9",)))
    (row,) = [s for s in r["seeds"] if s["seed"] == "5/9"]
    assert (row["agree"], row["disagree"], row["unchecked"], row["checks"]) == (2, 0, 1, 3)
    assert row["holds"] is True
    md = (tmp_path / "report.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("| 5/9 |"))
    assert line.endswith("| 2 agree, 0 disagree, 1 unchecked | yes |")
    page = (tmp_path / "report.html").read_text()
    assert "<td>2 agree, 0 disagree, 1 unchecked</td>" in page and "<td>2/3</td>" not in page
    # a claim that disagrees beside the unchecked row: show names both apart
    bad = Check("seed", "5/9/export/task_prio", {"module": "GPL", "expected": "none"}, False)
    r = write(tmp_path, result(values=[prio(1, agree=None), bad], seeds=("5/9",)))
    out = show.lines(r, tmp_path)
    assert any(x.startswith("  seed 5/9 does not hold: ") and
               x.endswith("(checks: 1 agree, 1 disagree, 1 unchecked)") for x in out), out


def test_a_report_json_without_the_seed_tally_still_reads():
    assert tally.seed_text({"agree": 582, "checks": 584}) == "582 agree of 584"
    assert tally.seed_text({"agree": 582, "checks": 584, "disagree": 0, "unchecked": 2}) == \
        "582 agree, 0 disagree, 2 unchecked"
