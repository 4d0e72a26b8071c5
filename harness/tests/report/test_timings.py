"""One list of step names (harness/steps.py): run.py's laps, the timing tables, bench."""

import ast
from dataclasses import replace
from html.parser import HTMLParser

from harness import paths, steps
from harness.report import assemble, html_charts, html_parts
from harness import mdtables
from harness.tools import bench
from report_fixture import make_report


def with_drgn_and_lttng(rep):
    rep["variants"]["exports"]["timings"].update(drgn=2.5, lttng=66.0)
    rep["variants"]["stock"]["timings"]["drgn"] = 2.0
    return rep


def test_the_step_names():
    assert steps.GUEST == ("module", "initramfs", "boot", "gdb", "guest_rest", "drgn",
                           "compare", "lttng", "suite")
    assert steps.TIMED == ("kernel",) + steps.GUEST
    assert steps.KERNEL_BUILD == ("extract", "copy", "patch", "configure", "build")


def _laps(fn, functions):
    """The step names of fn's lap() calls in the order they run: a call of another
    function of the module counts its laps where it is called."""
    calls = sorted((n.lineno, n.col_offset, n) for n in ast.walk(fn) if isinstance(n, ast.Call))
    out = []
    for _, _, n in calls:
        if getattr(n.func, "attr", None) == "lap":
            # a lap's step, then the steps timed inside it (lap(step, {inner: seconds}))
            out += [c.value for a in n.args for c in ast.walk(a)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        elif isinstance(n.func, ast.Name) and n.func.id in functions:
            out += _laps(functions[n.func.id], functions)
    return out


def test_run_laps_are_the_listed_steps_in_order():
    tree = ast.parse((paths.REPO / "harness" / "variantjob.py").read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert _laps(functions["run_variant"], functions) == list(steps.GUEST)


def test_report_md_has_a_row_per_step_and_a_column_per_variant():
    md = assemble.markdown(with_drgn_and_lttng(make_report()))
    section = md.split("## Timings (seconds)\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "| step | exports | kallsyms | stock | bpf13 |",
        "|---|---|---|---|---|",
        "| kernel | 0.6 | 0.6 | 0.6 | 0.6 |",
        "| module | 4.1 | 5.1 | 6.1 | 7.1 |",
        "| initramfs | 0.4 | 0.4 | 0.4 | 0.4 |",
        "| boot | 10.5 | 11.5 | 12.5 | 13.5 |",
        "| gdb | 6.2 | 6.2 | 6.2 | 6.2 |",
        "| guest rest | 1.1 | 1.1 | 1.1 | 1.1 |",
        "| drgn | 2.5 |  | 2.0 |  |",
        "| compare | 0.05 | 0.05 | 0.05 | 0.05 |",
        "| lttng | 66.0 |  |  |  |",
    ]
    assert "All guests together: 41.0 s; the report: 0.3 s." in md
    rep = make_report()
    rep["timings"]["suite_retry"] = 95.2
    assert ("All guests together: 41.0 s; the suite's retry phase after them: 95.2 s; the "
            "report: 0.3 s.") in assemble.markdown(rep)
    # a step no variant recorded has no row
    assert "| lttng |" not in assemble.markdown(make_report())


def test_many_variants_make_more_tables_not_wider_ones():
    names = tuple(f"v{i}" for i in range(9))
    md = assemble.markdown(make_report(names))
    section = md.split("## Timings (seconds)\n\n", 1)[1].split("## ", 1)[0]
    heads = [line for line in section.splitlines() if line.startswith("| step |")]
    assert heads == ["| step | v0 | v1 | v2 | v3 | v4 | v5 | v6 |", "| step | v7 | v8 |"]
    assert mdtables.widest(section) == mdtables.MAX_COLUMNS


class Steps(HTMLParser):
    """The timing chart's bars (variant, step) and its table's rows of cells."""

    def __init__(self, text):
        super().__init__()
        self.bars, self.rows, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "rect" and a.get("class") == "step":
            self.bars.append((a["data-variant"], a["data-step"]))
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_report_html_draws_and_tabulates_every_recorded_step():
    page = Steps(html_charts.timing_chart(with_drgn_and_lttng(make_report())))
    assert [s for v, s in page.bars if v == "exports"] == [
        "kernel", "module", "initramfs", "boot", "gdb", "guest_rest", "drgn", "compare",
        "lttng"]
    assert [s for v, s in page.bars if v == "kallsyms"] == [
        "kernel", "module", "initramfs", "boot", "gdb", "guest_rest", "compare"]
    # the table: a row per step, a column per variant
    assert page.rows == [
        ["step", "exports", "kallsyms", "stock", "bpf13"],
        ["kernel", "0.6", "0.6", "0.6", "0.6"],
        ["module", "4.1", "5.1", "6.1", "7.1"],
        ["initramfs", "0.4", "0.4", "0.4", "0.4"],
        ["boot", "10.5", "11.5", "12.5", "13.5"],
        ["gdb", "6.2", "6.2", "6.2", "6.2"],
        ["guest rest", "1.1", "1.1", "1.1", "1.1"],
        ["drgn", "2.5", "", "2.0", ""],
        ["compare", "0.05", "0.05", "0.05", "0.05"],
        ["lttng", "66.0", "", "", ""]]
    # every step has its own colour
    assert set(html_parts.STEP_COLOURS) == set(steps.TIMED)
    assert len(set(html_parts.STEP_COLOURS.values())) == len(steps.TIMED)


def test_bench_shows_drgn_and_lttng_when_recorded():
    rep = {"timings": {"kernel": {"exports": 0.1}},
           "variants": {"exports": {"timings": {"boot": 7.0, "drgn": 2.5, "lttng": 66.0}}}}
    rows = bench.warm_rows(rep, 90.0, 0)
    assert [(r["step"], r["seconds"]) for r in rows if r["variant"] == "exports"] == [
        ("kernel", 0.1), ("module", None), ("initramfs", None), ("boot", 7.0),
        ("gdb verification", None), ("drgn", 2.5), ("lttng", 66.0)]


def test_a_lap_records_the_steps_timed_inside_it_apart(monkeypatch):
    from harness import variantjob
    clock = iter([100.0, 130.0, 131.0])
    monkeypatch.setattr(variantjob.time, "monotonic", lambda: next(clock))
    s = variantjob.Laps()
    s.lap("lttng", {"suite": 20.0})     # 30 s waited, of which the suite took 20
    s.lap("compare")
    assert s.seconds == {"lttng": 10.0, "suite": 20.0, "compare": 1.0}


def test_the_lttng_boot_runs_beside_only_on_a_spare_cpu():
    from harness import run
    from harness.options import RunOptions
    opts = RunOptions.from_env()
    assert run.lttng_beside(1, opts, cpus=2)                 # the edit loop: one variant
    assert not run.lttng_beside(2, opts, cpus=2)             # every CPU has a guest
    assert not run.lttng_beside(4, opts, cpus=2)             # the default run
    assert not run.lttng_beside(1, opts, cpus=1)
    assert not run.lttng_beside(1, replace(opts, bench=3), cpus=2)
    assert not run.lttng_beside(1, replace(opts, jobs=1), cpus=2)
