"""symcheck calltypes on the real builds of the session's shared run (e2e_runs.default_run):
every variant's probe module and LTTng build, read from its report.json (no build or boot of
its own). The expected items are what the sources declare, written here by hand:
probe-module/resolve.c keeps the kprobe-found kallsyms_lookup_name in `unsigned long addr` of a
struct ksymlab_sym (an untyped receiver) and resolves the rest from a table of names (no literal
at a call: nothing by name); LTTng 2.13.9 with patches/lttng stores most looked-up addresses in
typed static pointers (src/wrapper/*.c, src/lttng-context-*.c, the writeback probe), returns
block_class/disk_type/stack_trace_save_user at once (no receiver), and declares task_prio's
parameter without the kernel's const."""

import pytest

pytestmark = pytest.mark.e2e

PROBE_KPROBE = {("kallsyms_lookup_name", "unchecked", "untyped-receiver", "ksymlab_lookup_sym.addr")}

LTTNG_WRAPPED = {
    ("lttng_wrapper", "kallsyms_lookup_name", "match"),
    ("lttng_wrapper", "get_pfnblock_flags_mask", "match"),        # patch 0005
    ("lttng_wrapper", "irq_to_desc", "match"),
    ("lttng_tracer", "task_prio", "qualifiers"),
    ("lttng_tracer", "stack_trace_save", "match"),
    ("lttng_tracer", "stack_trace_save_user", "unchecked"),
    ("lttng_statedump", "block_class", "unchecked"),
    ("lttng_statedump", "disk_type", "unchecked"),
    ("lttng_probe_writeback", "global_wb_domain", "match"),
}


def _row(v, kind, key):
    (row,) = [c for c in v["values"] if c["kind"] == kind and c["key"] == key]
    return row


def test_every_probe_module_build_is_checked_and_none_mismatches(default_run):
    rep = default_run.report()
    assert rep["variants"]
    for name, v in rep["variants"].items():
        ct = v["symcheck"]["calltypes"]
        assert ct["mismatch"] == 0, (name, ct)
        assert _row(v, "symcheck", "calltypes")["agree"] is True, name
        got = {(i["name"], i["status"], i["problem"], i["receiver"]) for i in ct["items"]}
        assert got == (PROBE_KPROBE if v["module_mode"] == "kprobe" else set()), (name, got)


def test_every_lttng_build_is_checked_and_none_mismatches(default_run):
    rep = default_run.report()
    lttng = {n: v for n, v in rep["variants"].items() if isinstance(v.get("lttng"), dict)}
    assert set(lttng) == {"exports", "kallsyms", "stock"}
    for name, v in lttng.items():
        ct = v["lttng"]["symcheck"]["calltypes"]
        assert ct["mismatch"] == 0, (name, ct)
        assert _row(v, "lttng", "symcheck/calltypes")["agree"] is True, name
        got = {(i["module"], i["name"], i["status"]) for i in ct["items"]}
        # exports is built with CONFIG_LTTNG_KALLSYMS=n: nothing is looked up
        assert got == (set() if name == "exports" else LTTNG_WRAPPED), (name, got)


def test_the_report_lists_the_items(default_run):
    md = (default_run.latest / "report.md").read_text()
    assert "## Call types of by-name resolutions" in md
    assert "| stock | LTTng (stock) | lttng_wrapper | `get_pfnblock_flags_mask` | match |" in md
