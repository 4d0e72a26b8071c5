"""The Enums of a check row render as the free values they replace, so
report.json and report.md keep their bytes."""

import ast
import json
from dataclasses import replace

import pytest

from harness import paths
from harness.model.enums import Agreement, Label, Source
from harness.model.results import Check
from harness.checks import labels


def test_agreement_is_true_false_null_in_json():
    assert [a.to_json() for a in Agreement] == [True, False, None]
    assert json.dumps([a.to_json() for a in Agreement]) == "[true, false, null]"
    assert [Agreement.of(v) for v in (True, False, None)] == list(Agreement)
    assert Agreement.of(Agreement.UNCHECKED) is Agreement.UNCHECKED


@pytest.mark.parametrize("value", [1, 0, "", "yes", [], 1.0])
def test_only_a_bool_or_none_is_a_verdict(value):
    with pytest.raises(TypeError, match="True, False or None"):
        Agreement.of(value)


def test_an_agreement_is_not_a_bool():
    """`if row.agree:` would hide the third value; it fails instead."""
    with pytest.raises(TypeError, match="compare it with Agreement.AGREE"):
        bool(Agreement.UNCHECKED)


def test_a_source_is_its_text_everywhere_the_report_writes_it():
    row = {Source.MODULE: 5, Source.GDB: None, Source.LTTNG_PRIO_CONTEXT: Source.PROGRAM}
    plain = {"module": 5, "gdb": None, "lttng prio context": "program"}
    assert json.dumps(row, indent=2) == json.dumps(plain, indent=2)
    assert json.dumps(row) == json.dumps(plain)
    assert f"`{Source.GDB_BITMAP}`" == "`gdb_bitmap`" and str(Source.DRGN) == "drgn"
    assert "| %s |" % Source.PROC_PARTITIONS == "| /proc/partitions |"
    # a str key finds a Source key and the other way round
    assert row["gdb"] is None and plain[Source.MODULE] == 5
    with pytest.raises(ValueError):
        Source("gdb_bitmpa")


def test_every_labelled_source_is_a_source_and_every_label_a_label():
    assert {Source(s) for s in labels.LABELS} <= set(Source)
    assert {Label(lab) for lab, _ in labels.LABELS.values()} <= set(Label)
    assert json.dumps(Label.MEMORY) == '"independent (memory)"'
    assert [lab for lab in Label if lab.independent] == [Label.MEMORY, Label.EXPECTED,
                                                         Label.FILE]
    assert set(labels.INDEPENDENT) == {lab for lab in Label if lab.independent}


# ---- a Check is built from them ----

def test_a_check_holds_an_agreement_and_source_keys():
    c = Check("prio", "pid 1", {"module": 20, Source.GDB: 20}, True)
    assert c.agreement is Agreement.AGREE and c.agrees and not c.disagrees
    assert list(c.sources) == [Source.MODULE, Source.GDB] and c.get("gdb") == 20
    assert Check("prio", "pid 1", {}, None).unchecked
    assert replace(c, agreement=False).disagrees
    # the old attribute is gone: a forgotten `row.agree is False` fails, never reads False
    with pytest.raises(AttributeError):
        c.agree


def test_a_check_refuses_a_name_or_verdict_outside_the_sets():
    with pytest.raises(ValueError):
        Check("prio", "pid 1", {"gbd": 20}, True)
    with pytest.raises(TypeError):
        Check("prio", "pid 1", {"gdb": 20}, 1)


def test_a_checks_json_is_plain():
    c = Check("writeback", "thresh/dirty", {Source.MODULE: 512, Source.VMSTAT: None}, False,
              info={"oracles": {Source.VMSTAT: "same function"}})
    j = c.to_json()
    assert j["agree"] is False and j["sources"] == {"module": 512, "vmstat": None}
    assert [type(k) for k in j["sources"]] == [str, str]
    assert [type(k) for k in j["info"]["oracles"]] == [str]
    assert json.dumps(j) == json.dumps({**j, "sources": {"module": 512, "vmstat": None},
                                        "info": {"oracles": {"vmstat": "same function"}}})


def test_no_code_compares_an_agreement_with_a_bool_or_none():
    """`row.agreement is False` would be silently false for every row."""
    bad = []
    for path in (paths.REPO / "harness").rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Compare) and any(
                    isinstance(x, ast.Attribute) and x.attr == "agreement"
                    for x in [n.left, *n.comparators]) and any(
                    isinstance(x, ast.Constant) and x.value in (True, False, None)
                    and type(x.value) in (bool, type(None))
                    for x in [n.left, *n.comparators]):
                bad.append(f"{path.relative_to(paths.REPO)}:{n.lineno}")
    assert bad == []
