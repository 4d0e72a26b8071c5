"""The table report.md opens with (harness/report/headline.py), from report.json parts
written out here: each cell read from its own source, and the confusions a wrong
reading would make (a lost feature counted as working, a name the build could not
look up counted as looked up, the suite's points counted from the wrong entry)."""

from harness.report import assemble, headline
from harness.tests.report_fixture import make_report


def cov(name, feature, how, status):
    return {"kind": "lttng-coverage", "key": name, "info": {"feature": feature},
            "sources": {"how": how, "feature": status}}


WORKS = "works (values agree with the oracles)"
TRICK = "kprobe trick (kallsyms_lookup_name)"
NOT_AVAILABLE = "not available (wrapper built without lookups)"


def variant(line, values, lttng=None, suite=None):
    v = {"kernel_line": line, "values": values, "symbols": [], "counts": {}}
    if lttng:
        v["lttng"] = lttng
    if suite:
        v["lttng_suite"] = {"coverage": suite, "tests": [{"result": "pass"}]}
    return v


def report():
    exports = [cov("task_prio", "prio context", "export", WORKS),
               cov("irq_to_desc", "statedump of interrupts", NOT_AVAILABLE,
                   "lost (as expected)"),
               cov("global_wb_domain", "writeback dirty_limit/setpoint", "tracepoint argument",
                   "wrong or missing (see the lttng rows)"),
               cov("kvm_x86_ops", "kvm probe fields", "not used on this kernel (version-gated)",
                   "not exercised: the tree does not build KVM")]
    stock = [cov("task_prio", "prio context", TRICK, WORKS),
             cov("irq_to_desc", "statedump of interrupts", TRICK, WORKS),
             cov("stack_trace_save_user", "callstack-user context", TRICK, WORKS)]
    return {"variants": {
        "stock-6.12": variant("6.12", stock, {"version": "2.13.18", "series": "stock"},
                              {"planned": 900, "passed": 893}),
        "exports": variant("6.1", exports, {"version": "2.13.9", "series": "exports"},
                           {"planned": 85, "passed": 84}),
        "bpf13": variant("6.1", [])}}


def by_variant():
    return {h.variant: h for h in headline.rows(report())}


def test_each_cell_comes_from_its_own_source():
    h = by_variant()
    assert [x.variant for x in headline.rows(report())] == ["exports", "bpf13", "stock-6.12"]
    e = h["exports"]
    assert e.lttng == "2.13.9 (series exports)" and e.suite == "84/85"
    assert e.working == ("prio context",)
    assert e.lost == ("statedump of interrupts",
                      "writeback dirty_limit/setpoint (wrong or missing)")
    assert e.by_name == ()          # NOT_AVAILABLE is not a look-up
    s = h["stock-6.12"]
    assert s.by_name == ("irq_to_desc", "stack_trace_save_user", "task_prio")
    assert s.lost == () and len(s.working) == 3 and s.suite == "893/900"
    b = h["bpf13"]
    assert (b.lttng, b.suite, b.working, b.by_name) == ("not run", "not run", (), ())


def test_report_md_opens_with_it():
    """The fixture's variants ran no LTTng: a row each, "not run", before the summary."""
    rep = make_report()
    md = assemble.markdown(rep)
    head = md.index("| kernel | variant | LTTng |")
    assert head < md.index("## Summary") and md.index("Verdict:") < head
    for name in rep["variants"]:
        assert f"| {name} | not run | - | - | - | not run |" in md
