"""symcheck calltypes in a run (issue 24 item 4): its document becomes one row per probe module
(symcheck:calltypes) and per LTTng build (lttng:symcheck/calltypes) and a report.md section.
The documents are real: symcheck's own calltypes fixtures (symcheck/tests/fixtures/calltypes),
whose doctored modules must fail the row and whose clean module must pass it."""

import json
import subprocess

import pytest

from harness import paths
from harness.prepare import symcheck
from harness.checks import symbols
from harness.lttng.rows import symaudit
from harness.report import calltypes_md

FIX = paths.REPO / "symcheck" / "build" / "fixtures" / "calltypes"


@pytest.fixture(scope="module")
def docs():
    """calltypes summaries of the clean and a doctored fixture, from the built symcheck."""
    symcheck.ensure_built()
    subprocess.run(["make", "-s", "-C", str(paths.REPO / "symcheck"), "fixtures"], check=True,
                   capture_output=True)
    out = {}
    for name in ("good", "wrong_return"):
        p = subprocess.run([str(symcheck.SYMCHECK), "--json", "calltypes", str(FIX / f"{name}.ko"),
                            str(FIX / "vmlinux")], capture_output=True, text=True)
        assert p.returncode in (0, 1), p.stderr
        out[name] = symcheck.calltypes_summary(json.loads(p.stdout))
    return out


def test_the_summary_keeps_counts_and_items(docs):
    good = docs["good"]
    assert (good["match"], good["qualifiers"], good["mismatch"], good["unchecked"]) == (7, 1, 0, 1)
    prio = next(i for i in good["items"] if i["name"] == "task_prio")
    assert prio["status"] == "qualifiers" and prio["receiver"] == "task_prio_sym"
    assert symcheck.calltypes_text(good) == "7 match, 1 qualifiers, 0 mismatch, 1 unchecked"


def test_the_probe_module_row_fails_on_a_mismatch_only(docs):
    base = {"check": [], "audit": []}
    (row,) = [c for c in symbols.compare_symcheck({**base, "calltypes": docs["good"]}, "exports")
              if c.key == "calltypes"]
    assert row.agrees and row.id == "symcheck:calltypes"
    (row,) = [c for c in symbols.compare_symcheck({**base, "calltypes": docs["wrong_return"]},
                                                  "exports") if c.key == "calltypes"]
    assert row.disagrees
    assert "task_prio: return-type" in row.reason and "get_pfnblock_flags_mask: param-type" in row.reason
    # a findings dict from before calltypes (no key) has no such row
    assert [c.key for c in symbols.compare_symcheck(base, "exports")] == ["check", "audit"]


def test_the_lttng_row(docs):
    audit = {"modules": [], "flagged": []}
    check = {"findings_total": 0, "modules": []}
    keys = {c.key: c for c in symaudit.rows(audit, check, False, docs["good"], "2.13.9")}
    assert keys["symcheck/calltypes"].agrees
    bad = {c.key: c
           for c in symaudit.rows(audit, check, False, docs["wrong_return"], "2.13.9")}
    assert bad["symcheck/calltypes"].disagrees
    assert "symcheck/calltypes" not in {
        c.key for c in symaudit.rows(audit, check, False, None, "2.13.9")}
    assert symaudit.summary(audit, check, docs["good"])["calltypes"]["match"] == 7


def test_the_report_section_lists_every_item_of_every_build(docs):
    report = {"variants": {
        "kallsyms": {"symcheck": {"calltypes": docs["good"]},
                     "lttng": {"series": "lttng", "symcheck": {"calltypes": docs["wrong_return"]}}},
        "stock": {"symcheck": {"calltypes": {"match": 0, "qualifiers": 0, "mismatch": 0,
                                             "unchecked": 0, "items": []}}}}}
    out = []
    calltypes_md.markdown(report, out)
    text = "\n".join(out)
    assert "## Call types of by-name resolutions" in text
    assert "7 match, 1 qualifiers, 2 mismatch, 1 unchecked" in text
    rows = [ln for ln in out if ln.startswith("| kallsyms |")]
    assert len(rows) == len(docs["good"]["items"]) + len(docs["wrong_return"]["items"])
    assert any("LTTng (lttng)" in r and "mismatch (return-type)" in r for r in rows)


def test_no_section_without_calltypes():
    out = []
    calltypes_md.markdown({"variants": {"x": {"symcheck": {"check": []}}}}, out)
    assert out == []
