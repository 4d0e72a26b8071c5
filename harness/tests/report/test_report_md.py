"""report.md stays narrow: no table wider than 8 columns, whatever the variants."""

import re
import subprocess
import sys

import pytest

from harness.report import assemble
from harness import mdtables
from harness.report.jsonrows import of_variant
from harness import paths
from report_fixture import make_report


def test_mdtables_counts_columns_of_the_widest_table():
    md = "\n".join([
        "# t", "",
        "| a | b |", "|---|---|", "| x \\| y | z |", "",
        "```", "| in | a | code | block | ignored | here | really | nine | cols |", "```", "",
        "| 1 | 2 | 3 |", "|---|---|---|",
    ])
    assert mdtables.tables(md) == [(3, 2), (11, 3)]
    assert mdtables.widest(md) == 3
    # the per-kind table of the old report: key + 4 variants x (5 sources + agree) columns
    head = "| key | " + " | ".join(f"v{i}: {s}" for i in range(4) for s in
                                    ("module", "memory", "gdb", "proc_stat", "scenario",
                                     "agree")) + " |"
    assert mdtables.widest(head) == 25
    assert mdtables.widest("no tables") == 0


def test_table_writes_one_line_per_row_with_cells_escaped():
    out = []
    mdtables.table(out, ["a", "b"], [["x|y", None], [1, "two\nlines"]])
    assert out == ["| a | b |", "|---|---|", "| x\\|y |  |", "| 1 | two lines |", ""]
    assert mdtables.widest("\n".join(out)) == 2
    with pytest.raises(AssertionError):
        mdtables.table([], list("abcdefghi"), [])


@pytest.mark.parametrize("variants", [("exports",), ("exports", "kallsyms", "stock", "bpf13"),
                                      tuple(f"v{i}" for i in range(9))])
def test_no_table_in_report_md_is_wider_than_8_columns(variants):
    md = assemble.markdown(make_report(variants))
    assert mdtables.widest(md) <= mdtables.MAX_COLUMNS == 8
    assert len(mdtables.tables(md)) > 5


def test_report_md_keeps_every_section_and_shows_each_disagreement(tmp_path):
    md = assemble.markdown(make_report())
    for section in ("## Summary", "## Seed patches", "## Across variants", "## Values by kind",
                    "## Timings (seconds)", "## Details and failures", "### frobnicate"):
        assert section in md
    assert "| kallsyms | DMA32 pfn 0x3000 | 1 | 1 | 0 | **NO**: module 1 != gdb_bitmap 0 |" in md
    assert ("| stock | pid 103 (sleep) | module=21 memory=21 gdb=21 scenario=25 proc_stat=21 "
            "| **NO**: module 21 != scenario 25 |") in md
    assert "| stock | 19 | 17 | 1 | 1 | module, memory, gdb, proc_stat, scenario |" in md
    assert "| stock | kprobe | 6/6 | 164 | 1 | 2 | off | fail |" in md
    assert "| scenario task priorities (in scenario order) | stock | 0; 10; 20; 21;" in md
    # a row that agrees is only counted, not listed
    assert "DMA32 pfn 0x5000" not in md


def test_mdtables_command_line_fails_on_a_wide_table(tmp_path):
    ok, wide = tmp_path / "ok.md", tmp_path / "wide.md"
    ok.write_text(assemble.markdown(make_report()))
    wide.write_text("| " + " | ".join("abcdefghi") + " |\n")
    p = subprocess.run([sys.executable, "-m", "harness.mdtables", str(ok)], cwd=paths.REPO,
                       capture_output=True, text=True)
    assert p.returncode == 0 and "widest 8 columns" in p.stdout
    p = subprocess.run([sys.executable, "-m", "harness.mdtables", str(wide)], cwd=paths.REPO,
                       capture_output=True, text=True)
    assert p.returncode == 1 and "widest 9 columns" in p.stdout


def kunit_py():
    trees = paths.cache_root() / "trees"
    found = sorted(trees.glob("*/linux/tools/testing/kunit/kunit.py")) if trees.is_dir() else []
    return found[0] if found else None


def test_ktap_of_the_new_shape(tmp_path):
    rep = make_report()
    text = assemble.ktap(rep)
    lines = text.splitlines()
    assert lines[:4] == ["KTAP version 1", "1..4", "  KTAP version 1", "  # Subtest: exports"]
    assert "  ok 1 symbol task_prio export" in lines
    assert any(re.fullmatch(r"  not ok \d+ pageblock DMA32 pfn 0x3000", x) for x in lines)
    assert any(re.fullmatch(r"  ok \d+ prio pid 120 kworker/0:1 # SKIP no oracle", x)
               for x in lines)
    kunit = kunit_py()
    if kunit is None:
        pytest.skip("no kernel tree with tools/testing/kunit in the cache")
    (tmp_path / "report.ktap").write_text(text)
    p = subprocess.run([sys.executable, str(kunit.name), "parse", str(tmp_path / "report.ktap")],
                       cwd=kunit.parent, capture_output=True, text=True, timeout=120)
    total = sum(len(v["symbols"]) + len(v["values"]) for v in rep["variants"].values())
    failed = sum(c["agree"] is False for v in rep["variants"].values()
                 for c in v["symbols"] + v["values"])
    skipped = sum(v["counts"]["unchecked"] for v in rep["variants"].values())
    assert (failed, skipped) == (2, 8)
    assert re.search(rf"Ran {total} tests: passed: {total - 10}, failed: 2, skipped: 8\b",
                     p.stdout), p.stdout[-2000:]


def test_ktap_nests_lttng_suite_points_under_their_variant(tmp_path):
    rep = make_report()
    tests = [{"name": "regression/kernel/test_event_basic:1 Create session", "result": "pass",
              "reason": ""},
             {"name": "regression/kernel/test_event_basic:2 Enable # event", "result": "fail",
              "reason": "exit 1"},
             {"name": "regression/kernel/test_userspace_probe:1", "result": "skip",
              "reason": "no uprobes"}]
    rep["variants"]["exports"]["lttng_suite"] = {"tests": tests}
    rep["lttng_suite_regressions"] = [{"variant": "exports", "flagged": True}]
    lines = assemble.ktap(rep).splitlines()
    i = lines.index("    # Subtest: lttng-suite")
    assert lines[i + 1:i + 5] == [
        "    1..3", "    ok 1 regression/kernel/test_event_basic:1 Create session",
        "    not ok 2 regression/kernel/test_event_basic:2 Enable event",
        "    ok 3 regression/kernel/test_userspace_probe:1 # SKIP no uprobes"]
    n = len(of_variant(rep["variants"]["exports"]))
    assert lines[i + 5] == f"  not ok {n + 1} lttng-suite"
    assert f"  1..{n + 1}" in lines
    kunit = kunit_py()
    if kunit is None:
        pytest.skip("no kernel tree with tools/testing/kunit in the cache")
    (tmp_path / "report.ktap").write_text("\n".join(lines) + "\n")
    p = subprocess.run([sys.executable, str(kunit.name), "parse", str(tmp_path / "report.ktap")],
                       cwd=kunit.parent, capture_output=True, text=True, timeout=120)
    total = sum(len(v["symbols"]) + len(v["values"]) for v in rep["variants"].values())
    # the three points count as tests of their own: one more failure, one more skip
    assert re.search(rf"Ran {total + 3} tests: passed: {total - 10 + 1}, failed: 3, "
                     rf"skipped: 9\b", p.stdout), p.stdout[-2000:]
