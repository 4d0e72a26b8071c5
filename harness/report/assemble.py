"""Write the A/B report of one run: report.json, report.md, report.ktap and report.html."""

import json
from dataclasses import asdict

from ..checks import confusions
from . import (calltypes_md, confusions_md, headline, histograms, html, oracles_md, tally,
               timings)
from .tally import Tally
from .. import mdtables
from .jsonrows import fmt, kinds, label, of_variant, source_names, sources_text
from ..checks import labels
from ..lttng.rows import coverage_md
from ..lttng.suite import suite_md


def assemble(meta, results, order, decided):
    """The report of a run as a JSON-ready dict.

    `meta` describes the run; `results` maps variant names to their immutable
    VariantResult (a snapshot); `order` is the order the variants were asked for;
    `decided` is judge.judge's RunVerdict of those results: the verdicts and the
    rows of the cross-variant rules shown here are the judge's, none is made here.
    """
    rep = dict(meta)
    results = {n: results[n] for n in order if n in results}       # in the order asked for
    rep["variants"] = {n: r.to_json() for n, r in results.items()}
    for n, v in rep["variants"].items():    # what the run's state let each kind tell apart
        v["verdict"] = decided.variants[n].value
        v["confusions"] = [a.to_json() for a in
                           confusions.audit(v["values"] + v.get("symbols", []))]
    rep["seeds"] = list(decided.seeds)
    rep["across"] = list(decided.across)
    rep["matrix"] = matrix(results, order, decided.variants)
    rep["oracles"] = labels.table()
    rep["lttng_coverage"] = coverage_md.coverage(rep["variants"])
    rep["lttng_findings"] = coverage_md.findings(rep["variants"])
    rep["lttng_suite"] = suite_md.collect(rep["variants"])
    rep["lttng_suite_regressions"] = list(decided.suite_regressions)
    rep["headline"] = [asdict(h) for h in headline.rows(rep)]
    rep["verdict"] = decided.verdict.value
    rep["verdict_reasons"] = list(decided.reasons)     # why it fails, a line each
    return rep


def matrix(results, order, verdicts):
    """Kernel line x variant: {"lines": [...], "rows": [{"role", "cells": {line: cell}}]};
    `verdicts`: the judge's verdict of each variant."""
    lines = sorted({r.kernel_line for r in results.values()}, key=headline.line_key)
    rows = {}
    for name in order:
        r = results.get(name)
        if r is None:
            continue
        c = r.counts
        rows.setdefault(r.role or name, {})[r.kernel_line] = {
            "variant": name, "verdict": verdicts[name].value,
            "error": r.error.verdict if r.error else None,
            "agree": c["symbols_agree"] + c["values_agree"],
            "checked": c["symbols"] + c["values"] - c["unchecked"],
            "unchecked": c["unchecked"]}
    return {"lines": lines, "rows": [{"role": k, "cells": v} for k, v in rows.items()]}


def _matrix(report, out):
    m = report.get("matrix")
    if not m or not m["rows"] or len(m["lines"]) > mdtables.MAX_COLUMNS - 1:
        return
    out.append("## Kernel line × variant")
    out.append("")
    out.append("Verdict and checks agreeing per variant on each kernel line; rows that must "
               "match within a kernel line only are marked so in \"Across variants\".")
    out.append("")

    def cell(c):
        if c is None:
            return "not run"
        what = f"**{c['error']}**" if c["error"] else c["verdict"]
        t = Tally(c["agree"], c["checked"] - c["agree"], c.get("unchecked", 0))
        return f"{what} ({t}, `{c['variant']}`)"
    mdtables.table(out, ["variant"] + m["lines"],
           [[r["role"]] + [cell(r["cells"].get(line)) for line in m["lines"]]
            for r in m["rows"]])


def write_all(rundir, report):
    """Write report.json, report.md, report.ktap and report.html of an assembled report."""
    (rundir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    (rundir / "report.md").write_text(markdown(report))
    (rundir / "report.ktap").write_text(ktap(report))
    (rundir / "report.html").write_text(html.render(report))


def _mark(ok):
    if ok is None:
        return "unchecked"
    return "yes" if ok else "**NO**"


def _verdict_cell(v):
    if v.get("error"):
        return f"**{v['error'].get('verdict', v['error']['step'])}**"
    return v.get("verdict", "fail")


def _slide(v):
    k = v.get("kaslr") or {}
    return (k.get("slide") if k.get("enabled") else "off") if k else ""


def _summary(report, out):
    out.append("## Summary")
    out.append("")
    rows = []
    for name, v in report["variants"].items():
        c = v.get("counts", {})
        t = tally.of_counts(c)
        rows.append([name, v.get("module_mode"),
                     f"{c.get('symbols_agree', 0)}/{c.get('symbols', 0)}",
                     t.agree, t.disagree, t.unchecked, _slide(v), _verdict_cell(v)])
    mdtables.table(out, ["variant", "module mode", "symbols resolved", "agree",
                 "disagree", "unchecked", "KASLR slide", "verdict"], rows)


def _timings(report, out):
    # a row per step of harness/steps.py, a column per variant (report/timings.py)
    timings.markdown(report, out)


def _seeds(report, out):
    if not report.get("seeds"):
        return
    out.append("## Seed patches")
    out.append("")
    rows = []
    for r in report["seeds"]:
        holds = "not run" if r["holds"] is None else _mark(r["holds"])
        claims = "; ".join(r.get("claims") or ()) or "-"
        if r.get("claims") and not r.get("claims_checked", True):
            claims += " (superseded, not checked)"
        rows.append([r["seed"], r["title"], r["status"],
                     f"{r['why']} ({', '.join(r['variants'])})", claims,
                     tally.seed_text(r), holds])
    mdtables.table(out, ["seed", "patch", "status in the port", "runtime evidence",
                 "claims of the seed patch", "checks", "holds"], rows)
    out.append("Upstream history and what each port changed: `patches/README.md`.")
    out.append("")


def _across(report, out):
    rows = report.get("across") or []
    if not rows:
        return
    out.append("## Across variants")
    out.append("")
    out.append("Same scenario, programs and machine; only the series differs. Rows that "
               "must be identical fail the run when they are not. One row per check and "
               "variant.")
    out.append("")
    table = []
    for r in rows:
        same = "yes" if r["identical"] else ("**NO, flagged**" if r["flagged"] else "no")
        for i, (name, value) in enumerate(r["values"].items()):
            table.append([r["what"], name, value, same, r.get("why") if i == 0 else ""])
    mdtables.table(out, ["what", "variant", "value", "identical", "why a difference is expected"],
           table)


# A disagreement table gives each source its own column up to this many
# sources (variant, key, the sources and agree: at most 7 columns), else
# one column "sources" with `name=value` pairs.
MAX_SOURCE_COLUMNS = 4


def _kind_section(out, kind, rows_by_variant):
    """Per variant how many checks of the kind agree, then every row that does not."""
    out.append(f"### {kind}")
    out.append("")
    counts = []
    for name, rows in rows_by_variant.items():
        if rows:
            counts.append([name, len(rows), sum(c["agree"] is True for c in rows),
                           sum(c["agree"] is False for c in rows),
                           sum(c["agree"] is None for c in rows),
                           ", ".join(source_names(rows))])
    mdtables.table(out, ["variant", "checks", "agree", "disagree", "unchecked", "sources"], counts)
    bad = [(n, c) for n, rows in rows_by_variant.items() for c in rows if c["agree"] is False]
    if not bad:
        return
    names = source_names([c for _, c in bad])
    wide = len(names) > MAX_SOURCE_COLUMNS
    head = ["variant", "key"] + (["sources"] if wide else names) + ["agree"]
    table = []
    for n, c in bad:
        cells = [sources_text(c)] if wide else \
            [fmt(c["sources"].get(s)) if s in c["sources"] else "" for s in names]
        agree = _mark(c["agree"]) + (f": {c['reason']}" if c.get("reason") else "")
        table.append([n, label(c)] + cells + [agree])
    out.append(f"Disagreements ({len(bad)}):")
    out.append("")
    mdtables.table(out, head, table)


def _migratetypes(report, out):
    """Pageblocks per migratetype and snapshot, per variant (report/histograms.py)."""
    names = list(report["variants"])
    width = mdtables.MAX_COLUMNS - 2
    for i in range(0, len(names), width):
        table = histograms.histogram_table(report["variants"], names[i:i + width])
        if table is None:
            return
        if i == 0:
            out.append("## Pageblocks per migratetype")
            out.append("")
            out.append("The module's count of pageblocks of each migratetype (all zones) at "
                       "each snapshot, with gdb's count of blocks whose skip bit is set and "
                       "of blocks that changed type since the snapshot before; every count "
                       "is checked against gdb's read of the bitmaps (kinds pageblock, "
                       "migratetype).")
            out.append("")
        mdtables.table(out, *table)


def _by_kind(report, out):
    variants = report["variants"]
    out.append("## Values by kind")
    out.append("")
    out.append("Per kind, how many checks agree in each variant, then every row some source "
               "disagrees on. `module` is the probe module's text output, `memory` its "
               "results structure read by gdb, the others are oracles. Every row with every "
               "source: `report.json`; drawn: `report.html`.")
    out.append("")
    per_variant = {n: of_variant(v) for n, v in variants.items()}
    for kind in kinds(variants):
        _kind_section(out, kind, {n: [c for c in rows if c["kind"] == kind]
                                  for n, rows in per_variant.items()})


def _details(name, v, out):
    out.append(f"### {name}")
    out.append("")
    out.append(f"{v.get('description', '')}. Tree `{v.get('tree_key')}`, guest kernel "
               f"`{v.get('guest_kernel')}`, series: {', '.join(v.get('series', [])) or 'none'}, "
               f"ran on {v.get('worker', 'local')}.")
    out.append("")
    if v.get("samplers"):
        mdtables.table(out, ["sampler", "available", "missing symbol"],
               [[s, _mark(sm["available"]), sm.get("missing")]
                for s, sm in v["samplers"].items()])
        if v.get("resolve_ns") is not None:
            out.append(f"Symbol resolution at init took {v.get('resolve_ns')} ns (guest clock).")
            out.append("")
    failures = [c for c in of_variant(v) if c["agree"] is False]
    if v.get("error"):
        e = v["error"]
        out.append(f"- **{e.get('verdict', e['step'])}**: step `{e['step']}` failed "
                   f"(exit {e['exit_status']}): {e['message']}")
        if e.get("log"):
            out.append(f"  log: `{e['log']}`")
        if e.get("excerpt"):
            out.append("")
            out.append("```")
            out.append(e["excerpt"])
            out.append("```")
    for c in failures:
        why = f" ({c['reason']})" if c.get("reason") else ""
        out.append(f"- disagreement: {c['kind']} `{label(c)}`: "
                   f"{sources_text(c)}{why}")
    for n in v.get("notes", []):
        out.append(f"- note: {n}")
    if not (v.get("error") or failures or v.get("notes")):
        out.append("No failures.")
    out.append("")


def markdown(report):
    out = [f"# ksymlab A/B report: run {report['run_id']}", ""]
    out.append(f"Verdict: **{report['verdict']}**. Kernel source: `{report.get('tarball')}`; "
               f"scenario `{report.get('scenario')}`; KASLR "
               f"{'on' if report.get('kaslr') else 'off (nokaslr)'}. The same report drawn: "
               "`report.html` (pageblock maps, A/B view, charts).")
    if report.get("verdict_reasons"):
        out += ["", "Why it fails:", ""] + [f"- {r}" for r in report["verdict_reasons"]]
    if report.get("cluster"):       # how the client reached the Dask scheduler (cluster/)
        out += ["", f"Cluster: {report['cluster']['note']}."]
    out.append("")
    headline.markdown(report, out)
    _summary(report, out)
    _matrix(report, out)
    _seeds(report, out)
    _across(report, out)
    _migratetypes(report, out)
    coverage_md.markdown(report, out)
    suite_md.markdown(report, out)
    calltypes_md.markdown(report, out)
    out += confusions_md.markdown(report)
    _by_kind(report, out)
    out += oracles_md.markdown(report)
    _timings(report, out)
    out.append("## Details and failures")
    out.append("")
    for name, v in report["variants"].items():
        _details(name, v, out)
    return "\n".join(out) + "\n"


def _desc(text):
    # KTAP descriptions end at a '#' (directive) and must stay on one line.
    return " ".join(str(text).replace("#", "").split())


def _ktap_suite(variant, tests, number, regressions):
    """lttng-tools' points as a subtest of a variant's, one level deeper. Its own
    result is not ok when a point lost against stock is flagged (compare.py); a
    diagnostic line gives each point's retry outcome."""
    lines = ["    KTAP version 1", "    # Subtest: lttng-suite", f"    1..{len(tests)}"]
    for i, t in enumerate(tests, 1):
        if t["result"] == "skip":
            lines.append(f"    ok {i} {_desc(t['name'])} # SKIP {_desc(t['reason'])}")
        else:
            lines.append(f"    {'ok' if t['result'] == 'pass' else 'not ok'} {i} "
                         f"{_desc(t['name'])}")
    mine = [r for r in regressions if r["variant"] == variant]
    for r in mine:          # each point run again: its outcome (compare.py)
        if r.get("retry"):
            lines.append(f"    # retry {_desc(r['point'])}: {_desc(r['reason'])}")
    flagged = any(r["flagged"] for r in mine)
    lines.append(f"  {'not ok' if flagged else 'ok'} {number} lttng-suite")
    return lines


def ktap(report):
    lines = ["KTAP version 1", f"1..{len(report['variants'])}"]
    for n, (name, v) in enumerate(report["variants"].items(), 1):
        results = []
        for c in of_variant(v):
            info = c.get("info") or {}
            extra = info.get("method") if c["kind"] == "symbol" else info.get("comm", "")
            results.append((c["agree"], f"{c['kind']} {c['key']} {extra or ''}"))
        if v.get("error"):
            results.append((False, f"step {v['error']['step']}: {v['error']['message']}"))
        suite = (v.get("lttng_suite") or {}).get("tests")
        lines.append("  KTAP version 1")
        lines.append(f"  # Subtest: {name}")
        lines.append(f"  1..{len(results) + bool(suite)}")
        for i, (ok, desc) in enumerate(results, 1):
            if ok is None:
                lines.append(f"  ok {i} {_desc(desc)} # SKIP no oracle")
            else:
                lines.append(f"  {'ok' if ok else 'not ok'} {i} {_desc(desc)}")
        if suite:
            lines += _ktap_suite(name, suite, len(results) + 1,
                                 report.get("lttng_suite_regressions") or ())
        lines.append(f"{'ok' if v.get('verdict') == 'pass' else 'not ok'} {n} {name}")
    # A closing diagnostic line; kunit.py (6.1) also needs a line after the last result.
    lines.append(f"# ksymlab run {report['run_id']}: verdict {report['verdict']}")
    return "\n".join(lines) + "\n"
