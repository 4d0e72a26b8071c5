"""LTTng's own suite in the report: report.json `lttng_suite` and report.md's table
(script x variant: passed/failed/skipped), the points lost against the line's
stock variant (compare.py) and every failing point."""

from html import escape as ESC

from ... import mdtables
from .tap import SuitePoint


def _script(t):
    """The script of report.json's point `t`."""
    return SuitePoint.from_json(t).script


def collect(variants):
    """{variant: its lttng_suite entry} of the variants that ran the suite."""
    return {n: v["lttng_suite"] for n, v in variants.items() if v.get("lttng_suite")}


def _counts(entry, script):
    tests = [t for t in entry.get("tests", []) if _script(t) == script]
    if not tests:
        return ""
    n = {k: sum(t["result"] == k for t in tests) for k in ("pass", "fail", "skip")}
    return f"{n['pass']}/{n['fail']}/{n['skip']}"


def table(report):
    """(head, rows) of the script x variant table; ([], []) when no variant ran it."""
    suite = report.get("lttng_suite") or {}
    if not suite:
        return [], []
    names = list(suite)
    scripts = []
    for e in suite.values():
        for t in e.get("tests", []):
            s = _script(t)
            if s not in scripts:
                scripts.append(s)
    return ["script"] + names, [[s] + [_counts(suite[n], s) for n in names] for s in scripts]


def failing(report):
    """[(variant, point)] of every failing point."""
    return [(n, t) for n, e in (report.get("lttng_suite") or {}).items()
            for t in e.get("tests", []) if t["result"] == "fail"]


def cannot_run(report):
    """[(script, reason, [variants])] of the scripts that could not run in the guest
    (run.py's `cannot_run`: a bail-out, every point skipped), one entry per reason."""
    out = {}
    for n, e in (report.get("lttng_suite") or {}).items():
        for s in e.get("scripts", []):
            if s.get("cannot_run"):
                out.setdefault((s["script"], s["cannot_run"]), []).append(n)
    return [(script, why, names) for (script, why), names in out.items()]


def by_cause(report):
    """[(variant, coverage, [(cause id or None, kind, text, ref, points, scripts)])] of
    the variants whose entry has a coverage (causes.py), the no-cause group last."""
    out = []
    for n, e in (report.get("lttng_suite") or {}).items():
        if "coverage" not in e:
            continue
        groups = {}
        for t in e.get("tests", []):
            if t["result"] != "pass":
                groups.setdefault(t.get("cause"), []).append(_script(t))
        causes = e.get("causes") or {}
        rows = [(cid, causes.get(cid, {}).get("kind", "none"),
                 causes.get(cid, {}).get("text", "no cause known"),
                 causes.get(cid, {}).get("ref", ""), len(pts), sorted(set(pts)))
                for cid, pts in sorted(groups.items(), key=lambda kv: kv[0] is None)]
        out.append((n, e["coverage"], rows))
    return out


def slowest(report, k=10):
    """[(seconds, variant, script)] of the k slowest script runs (runner.py's seconds,
    from the script's start marker to its end marker), slowest first."""
    runs = [(sc["seconds"], n, sc["script"]) for n, e in (report.get("lttng_suite") or {}).items()
            for sc in e.get("scripts", []) if sc.get("seconds") is not None]
    return sorted(runs, key=lambda r: (-r[0], r[1], r[2]))[:k]


def _coverage_line(n, c):
    return (f"{n}: {c['passed']}/{c['planned']} points pass ({c['rate']:.1%}); "
            f"{c['no_cause']} of the others have no cause")


def _fold(bad, unrun):
    """The failing points one by one, except those of a script that cannot run on that
    variant (`unrun`: cannot_run's list): ({(variant, script): how many}) instead of
    thousands of identical lines."""
    keys = {(n, script) for script, _, names in unrun for n in names}
    shown, folded = [], {}
    for n, t in bad:
        key = (n, _script(t))
        if key in keys:
            folded[key] = folded.get(key, 0) + 1
        else:
            shown.append((n, t))
    return shown, folded


def verdict(row):
    """What a row of compare.regressions is: flagged, explained by a lost feature, or
    not counted after its retry (flake, not a kernel difference)."""
    if row["flagged"]:
        return "flagged"
    if row.get("explained_by"):
        return f"explained: {row['explained_by']}"
    return f"not counted ({(row.get('retry') or {}).get('outcome', 'not flagged')})"


def retried(regress):
    """"N flagged point(s) run again: <outcome> <count>, ..." of the rows that have a
    retry, or "" when none has."""
    n = {}
    for r in regress:
        if r.get("retry"):
            n[r["retry"]["outcome"]] = n.get(r["retry"]["outcome"], 0) + 1
    if not n:
        return ""
    return (f"{sum(n.values())} flagged point(s) run again: "
            + ", ".join(f"{k} {v}" for k, v in sorted(n.items())))


def clocks(entry):
    """" (clock: tsc)" of a variant's suite guests, each clocksource once, in boot
    order ("?" for a guest that never named one); "" for an older report."""
    seen = list(dict.fromkeys(c or "?" for c in entry.get("clocks") or ()))
    return f" (clock: {', '.join(seen)})" if seen else ""


def columns(report):
    """Which LTTng release and kernel each column ran, and its guests' clock."""
    return ", ".join(f"{n} LTTng {e.get('lttng_version')} on {e.get('kernel')}{clocks(e)}"
                     for n, e in (report.get("lttng_suite") or {}).items())


def markdown(report, out):
    head, rows = table(report)
    if not head:
        return
    out.append("## LTTng's own test suite (lttng-tools' kernel tests)")
    out.append("")
    out.append("Per script and variant: points passed/failed/skipped (TAP). The LTTng "
               "release and kernel of each column: " + columns(report) + ".")
    out.append("")
    mdtables.table(out, head, [[f"`{r[0]}`"] + r[1:] for r in rows])
    unrun = cannot_run(report)
    if unrun:
        out.append("Scripts that cannot run in this guest (their points are counted above):")
        out.append("")
        for script, why, names in unrun:
            out.append(f"- `{script}` on {', '.join(names)}: {why}")
        out.append("")
    slow = slowest(report)
    if slow:
        total = {n: e.get("seconds") for n, e in (report.get("lttng_suite") or {}).items()}
        out.append("Suite time per variant: " + ", ".join(f"{n} {t} s" for n, t in total.items())
                   + f". The {len(slow)} slowest scripts:")
        out.append("")
        mdtables.table(out, ["seconds", "variant", "script"],
                       [[str(t), n, f"`{scr}`"] for t, n, scr in slow])
    for n, c, rows in by_cause(report):
        out.append(f"Points that do not pass, by cause: {_coverage_line(n, c)}.")
        out.append("")
        mdtables.table(out, ["cause", "kind", "points", "scripts", "what", "reference"],
                       [[f"`{cid}`" if cid else "**no cause**", kind, str(k),
                         ", ".join(f"`{x}`" for x in scr), text, ref]
                        for cid, kind, text, ref, k, scr in rows])
    regress = report.get("lttng_suite_regressions") or []
    if regress:
        out.append(f"{len(regress)} point(s) pass on the line's stock variant and fail here "
                   "(flagged ones fail the run; a lost feature of the coverage table "
                   "explains others; a flagged point's script runs once more on the "
                   "variant and on stock, and the point counts only if it fails again "
                   "while stock passes):")
        out.append("")
        if retried(regress):
            out.append(retried(regress) + ".")
            out.append("")
        for r in regress:
            mark = "**flagged**" if r["flagged"] else verdict(r)
            out.append(f"- {r['variant']} (vs {r['baseline']}): `{r['point']}`: {mark}; "
                       f"{r['reason']}")
        out.append("")
    bad = failing(report)
    if bad:
        shown, folded = _fold(bad, unrun)
        out.append(f"{len(bad)} failing point(s):")
        out.append("")
        for n, t in shown:
            out.append(f"- {n}: `{t['name']}`: {t['reason']}")
        for (n, script), k in folded.items():
            out.append(f"- {n}: {k} point(s) of `{script}`, which cannot run here (above)")
        out.append("")


def html(report, table_html):
    """report.html's section: the same table, the points lost against stock and the
    failing points; `table_html(head, rows, row_classes)` is html.py's table."""
    head, rows = table(report)
    if not head:
        return "<p>lttng-tools' tests did not run (<code>--lttng-suite</code>).</p>"
    out = [f"<p>Points passed/failed/skipped per script: {ESC(columns(report))}."
           "</p>", table_html(head, rows)]
    unrun = cannot_run(report)
    if unrun:
        out.append("<p>Scripts that cannot run in this guest:</p>")
        out.append(table_html(["script", "variants", "reason"],
                              [[script, ", ".join(names), why] for script, why, names in unrun]))
    for n, c, rows in by_cause(report):
        out.append(f"<p>Points that do not pass, by cause: {ESC(_coverage_line(n, c))}.</p>")
        out.append(table_html(["cause", "kind", "points", "scripts", "what", "reference"],
                              [[cid or "no cause", kind, str(k), ", ".join(scr), text, ref]
                               for cid, kind, text, ref, k, scr in rows],
                              ["" if cid else "bad" for cid, *_ in rows]))
    regress = report.get("lttng_suite_regressions") or []
    if regress:
        again = retried(regress)
        out.append(f"<p>{len(regress)} point(s) pass on the line's stock variant and fail "
                   "here" + (f"; {ESC(again)}" if again else "") + ":</p>")
        rows = [[r["variant"], r["baseline"], r["point"], verdict(r), r["reason"]]
                for r in regress]
        out.append(table_html(["variant", "stock", "point", "verdict", "reason"], rows,
                              ["bad" if r["flagged"] else "" for r in regress]))
    bad = failing(report)
    if bad:
        out.append(f"<details><summary>{len(bad)} failing point(s)</summary>")
        shown, folded = _fold(bad, unrun)
        rows = [[n, t["name"], t["reason"]] for n, t in shown]
        rows += [[n, f"{k} point(s) of {script}", "cannot run here (above)"]
                 for (n, script), k in folded.items()]
        out.append(table_html(["variant", "point", "reason"], rows))
        out.append("</details>")
    return "\n".join(out)
