"""Seconds per step and variant, as report.md and report.html show them.

A row per step (harness/steps.py, in the order they run) and a column per
variant: the steps are many (9) and the variants few, and report.md keeps
every table within mdtables.MAX_COLUMNS, so more variants than fit make a
second table below the first rather than a wider one.
"""

from .. import steps
from .. import mdtables


def per_variant(report):
    """{variant: {step: seconds}} of each variant with any timing, kernel included."""
    kernel = (report.get("timings") or {}).get("kernel") or {}
    out = {}
    for name, v in report["variants"].items():
        t = {s: x for s, x in (v.get("timings") or {}).items() if s in steps.GUEST}
        if name in kernel:
            t[steps.KERNEL] = kernel[name]
        if t or name in kernel:
            out[name] = t
    return out


def table(report, names=None):
    """(head, rows): `step` and the variants `names` (default: all timed ones), then a
    row per step that some of them recorded."""
    timed = per_variant(report)
    names = list(timed) if names is None else names
    rows = [[steps.label(s)] + [timed[n].get(s) for n in names]
            for s in steps.TIMED if any(timed[n].get(s) is not None for n in names)]
    return ["step"] + names, rows


def markdown(report, out):
    """Append the "Timings (seconds)" section to `out`, a list of lines."""
    names = list(per_variant(report))
    if not names:
        return
    out.append("## Timings (seconds)")
    out.append("")
    width = mdtables.MAX_COLUMNS - 1
    for i in range(0, len(names), width):
        mdtables.table(out, *table(report, names[i:i + width]))
    run = report.get("timings") or {}
    if run.get("guests") is not None or run.get("report") is not None:
        out.append(run_line(report))
        out.append("")


def run_line(report):
    """The run's own seconds: all guests, the suite's retry phase when it ran, the report."""
    run = report.get("timings") or {}
    retry = (f"; the suite's retry phase after them: {run['suite_retry']} s"
             if run.get("suite_retry") is not None else "")
    return f"All guests together: {run.get('guests')} s{retry}; the report: {run.get('report')} s."
