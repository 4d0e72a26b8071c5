"""symcheck's view of an LTTng build as lttng rows (harness/lttng/rows/symaudit.py):
each doctored symcheck document must fail its row."""

import copy

import pytest

from harness.checks import labels
from harness.lttng.rows import symaudit

VIA = "wrapper_kallsyms_lookup_name (lttng_wrapper)"

# The names LTTng 2.13.9 resolves by name that the seed series gives it another way
# (/work/shared/reference.md, "LTTng-modules 2.13.9 on linux-source-6.1"; patches/exports):
# task_prio (0004 export), stack_trace_save_user (0003 export), get_pfnblock_flags_mask
# (0005, the migratetype export LTTng's 0003 calls instead), disk_type and block_class
# (0006, 0007 exports), global_wb_domain (0002, a tracepoint argument). Written out here,
# not read from symaudit.COVERED, so that a name dropped from the code fails a test.
# irq_to_desc, splice_to_pipe, kvm_x86_ops, ...: not in the series, so no row.
EXPECTED_COVERED = ["block_class", "disk_type", "get_pfnblock_flags_mask", "global_wb_domain",
                    "stack_trace_save_user", "task_prio"]


def _audit(by_name):
    """An audit --tree document (symcheck --json) with these by-name findings."""
    mods = {}
    for what, module in by_name:
        mods.setdefault(module, []).append({"kind": "by-name", "what": what, "via": VIA,
                                            "where": "f+0x1"})
    modules = [{"file": f"/x/{m}.ko", "name": m, "flagged": True, "findings": f,
                "resolvers": [], "instrumentation": []} for m, f in mods.items()]
    modules.append({"file": "/x/lttng_ring_buffer.ko", "name": "lttng_ring_buffer",
                    "flagged": False, "findings": [], "resolvers": [], "instrumentation": []})
    return {"modules": modules, "flagged": sorted(mods),
            "findings_total": sum(len(f) for f in mods.values())}


# as measured on the stock build (0001+0002): symcheck audit --tree
WRAPPED = _audit([("task_prio", "lttng_tracer"), ("stack_trace_save_user", "lttng_tracer"),
                  ("get_pfnblock_flags_mask", "lttng_wrapper"),
                  ("irq_to_desc", "lttng_wrapper"),
                  ("block_class", "lttng_statedump"), ("disk_type", "lttng_statedump"),
                  ("global_wb_domain", "lttng_probe_writeback")])
# the exports build (CONFIG_LTTNG_KALLSYMS=n): nothing flagged
UNWRAPPED = _audit([])
CHECK = {"build": "/tree", "findings_total": 0,
         "modules": [{"file": "/x/lttng_tracer.ko", "name": "lttng_tracer", "license": "GPL",
                      "gpl_compatible": True, "symbols": [], "findings": []}]}


def failing(audit, check=CHECK, kallsyms=False):
    return sorted(c.key for c in symaudit.rows(audit, check, kallsyms, None, "2.13.9")
                  if c.disagrees)


def test_the_measured_documents_pass():
    assert failing(UNWRAPPED, kallsyms=False) == []
    assert failing(WRAPPED, kallsyms=True) == []
    for kallsyms in (False, True):
        keys = [c.key for c in symaudit.rows(UNWRAPPED, CHECK, kallsyms, None, "2.13.9")]
        assert sorted(k for k in keys if k.startswith("symcheck/by-name/")) == \
            [f"symcheck/by-name/{n}" for n in EXPECTED_COVERED]
        assert len(keys) == len(set(keys)) == len(EXPECTED_COVERED) + 2


def test_covered_is_the_series_list():
    assert sorted(symaudit.COVERED) == EXPECTED_COVERED
    assert len(symaudit.COVERED) == len(EXPECTED_COVERED)


def test_the_wrapped_build_resolves_every_covered_name():
    """The measured stock document holds a finding for each expected name."""
    assert set(EXPECTED_COVERED) <= set(symaudit.by_name(WRAPPED))


@pytest.mark.parametrize("name", EXPECTED_COVERED)
def test_a_covered_name_resolved_by_name_without_the_wrapper_fails(name):
    """On exports (wrapper compiled to "not found") an audit listing a covered
    name, e.g. task_prio handed to a resolver, fails that name's row."""
    doctored = _audit([(name, "lttng_tracer")])
    got = failing(doctored, kallsyms=False)
    assert f"symcheck/by-name/{name}" in got
    assert "symcheck/flagged" in got


def test_a_name_the_wrapper_resolves_must_be_found():
    """With the wrapper, symcheck missing a lookup (a false negative) fails."""
    doctored = copy.deepcopy(WRAPPED)
    for m in doctored["modules"]:
        m["findings"] = [f for f in m["findings"] if f["what"] != "task_prio"]
    assert failing(doctored, kallsyms=True) == ["symcheck/by-name/task_prio"]


def test_a_name_outside_the_series_does_not_fail_exports():
    """irq_to_desc is not in the seed series: its lookup is the coverage table's
    business ("not available"), not a symcheck row; but any flag fails flagged."""
    doctored = _audit([("irq_to_desc", "lttng_wrapper")])
    assert failing(doctored, kallsyms=False) == ["symcheck/flagged"]


def test_a_check_finding_fails():
    doctored = copy.deepcopy(CHECK)
    doctored["modules"][0]["findings"] = [{"kind": "crc-mismatch", "symbol": "task_prio",
                                           "message": "CRC differs"}]
    doctored["findings_total"] = 1
    assert failing(UNWRAPPED, doctored) == ["symcheck/check"]
    row = [c for c in symaudit.rows(UNWRAPPED, doctored, False, None, "2.13.9")
           if c.key == "symcheck/check"][0]
    assert row.info["findings"] == ["lttng_tracer: crc-mismatch task_prio"]


def test_the_symcheck_sources_are_labelled():
    """Every row, each with the same two sources: what symcheck read from the .ko files
    and what the build's switch expects, both labelled independent (labels.py's table,
    written out here). An empty row list or a row that lost a source fails."""
    file, expected = "independent (file)", "independent (expected)"
    got = {c.key: {str(s): str(labels.label(s)[0]) for s in c.sources}
           for c in symaudit.rows(WRAPPED, CHECK, True, None, "2.13.9")}
    want = {f"symcheck/by-name/{n}": {"symcheck audit": file, "expected": expected}
            for n in EXPECTED_COVERED}
    want["symcheck/flagged"] = {"symcheck audit": file, "expected": expected}
    want["symcheck/check"] = {"symcheck check": file, "expected": expected}
    assert got == want


def test_a_release_that_no_longer_looks_a_name_up_expects_no_lookup():
    """LTTng 2.13.18 computes the prio itself (v2.13.11 inlined task_prio()): its stock
    build looks task_prio up nowhere, as measured on stock-6.12; the same audit is a
    failure for 2.13.9, and a 2.13.18 build that still looked it up fails too."""
    measured_2_13_18 = _audit([(n, m) for n, m in [
        ("stack_trace_save_user", "lttng_tracer"), ("get_pfnblock_flags_mask", "lttng_wrapper"),
        ("irq_to_desc", "lttng_wrapper"), ("block_class", "lttng_statedump"),
        ("disk_type", "lttng_statedump"), ("global_wb_domain", "lttng_probe_writeback")]])
    rows = {c.key: c for c in symaudit.rows(measured_2_13_18, CHECK, True, None, "2.13.18")}
    assert not any(c.disagrees for c in rows.values())
    assert rows["symcheck/by-name/task_prio"].sources["expected"] == "not by name"
    assert failing(measured_2_13_18, kallsyms=True) == ["symcheck/by-name/task_prio"]
    bad = [c for c in symaudit.rows(WRAPPED, CHECK, True, None, "2.13.18") if c.disagrees]
    assert [c.key for c in bad] == ["symcheck/by-name/task_prio"]
    assert "LTTng 2.13.18 has it inlined" in bad[0].reason


def test_a_forgotten_version_is_an_error_not_2_13_9():
    with pytest.raises(TypeError):
        symaudit.rows(WRAPPED, CHECK, True, None)


# LTTng 2.16.0 on 7.2.12 (stock-7.2's build, symcheck audit --tree): task_prio inlined,
# get_pfnblock_migratetype looked up where the kernel has no get_pfnblock_flags_mask
WRAPPED_216 = _audit([("stack_trace_save_user", "lttng_tracer"),
                      ("get_pfnblock_migratetype", "lttng_wrapper"),
                      ("irq_to_desc", "lttng_wrapper"),
                      ("block_class", "lttng_statedump"), ("disk_type", "lttng_statedump"),
                      ("global_wb_domain", "lttng_probe_writeback")])


def tree(tmp_path, declares):
    """A kernel tree whose pageblock-flags.h declares get_pfnblock_migratetype() or not."""
    header = tmp_path / symaudit.PAGEBLOCK_HEADER
    header.parent.mkdir(parents=True)
    header.write_text("unsigned long get_pfnblock_flags_mask(const struct page *page);\n"
                      if not declares else
                      "enum migratetype get_pfnblock_migratetype(const struct page *page,\n"
                      "\t\t\t\t\t unsigned long pfn);\n")
    return tmp_path


def test_on_a_kernel_with_get_pfnblock_migratetype_lttng_216_looks_that_up(tmp_path):
    t72 = tree(tmp_path, True)
    rows = {c.key: c for c in symaudit.rows(WRAPPED_216, CHECK, True, None, "2.16.0", t72)}
    assert [k for k, c in rows.items() if c.disagrees] == []
    assert rows["symcheck/by-name/get_pfnblock_migratetype"].agrees
    assert "symcheck/by-name/get_pfnblock_flags_mask" not in rows
    assert rows["symcheck/by-name/task_prio"].agrees       # inlined since 2.13.11
    # the old name looked up on that kernel finds nothing there: its row fails
    old = _audit([(n if n != "get_pfnblock_migratetype" else "get_pfnblock_flags_mask", m)
                  for n, m in [("get_pfnblock_migratetype", "lttng_wrapper"),
                               ("stack_trace_save_user", "lttng_tracer"),
                               ("block_class", "lttng_statedump"),
                               ("disk_type", "lttng_statedump"),
                               ("global_wb_domain", "lttng_probe_writeback")]])
    bad = [c.key for c in symaudit.rows(old, CHECK, True, None, "2.16.0", t72) if c.disagrees]
    assert bad == ["symcheck/by-name/get_pfnblock_migratetype"]


def test_on_an_older_kernel_the_name_is_get_pfnblock_flags_mask(tmp_path):
    assert symaudit.covered(tree(tmp_path, False)) == symaudit.COVERED
    assert symaudit.covered(None) == symaudit.COVERED
