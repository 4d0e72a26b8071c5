"""The Enums of a check row render as the free values they replace, so
report.json and report.md keep their bytes."""

import json

import pytest

from harness.checks.enums import Agreement, Label, Source
from harness.oracles import labels


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
