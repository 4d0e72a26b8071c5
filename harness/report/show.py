"""`python3 -m harness show [RUN] [--open]`: a run's summary and every disagreement.

RUN is a run directory or the id of one under the runs directory (default:
the latest run). The output names the report files and each variant's logs;
--open prints only the path of report.html. A RUN that does not exist, has
no report.json or a report.json that does not parse prints one line
`ksymlab: show: ...` and exits 2.
"""

import json
import sys
from pathlib import Path

from .. import paths
from . import tally
from .jsonrows import label, of_variant, sources_text

REPORT_FILES = ("report.md", "report.html", "report.json", "report.ktap")


class ShowError(Exception):
    pass


def resolve(run):
    """The run directory named by RUN (a path, or an id under the runs directory)."""
    root = paths.runs_root()
    if run is None:
        d = root / "latest"
        if not d.exists():
            raise ShowError(f"no runs yet: {d} does not exist")
        return d
    p = Path(run)
    for d in (p, root / run):
        if d.is_dir():
            return d
    raise ShowError(f"no run {run!r} (neither a directory nor a run id under {root})")


def load(rundir):
    path = rundir / "report.json"
    if not path.is_file():
        raise ShowError(f"{rundir}: no report.json")
    try:
        report = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ShowError(f"{path}: not a readable report: {e}") from None
    if not isinstance(report, dict) or not isinstance(report.get("variants"), dict):
        raise ShowError(f"{path}: not a ksymlab report (no variants)")
    return report


def _verdict(v):
    e = v.get("error")
    return (e.get("verdict") or e.get("step")) if e else v.get("verdict", "fail")


def lines(report, rundir):
    """What `show` prints for a loaded report."""
    out = [f"run {report.get('run_id')}: verdict {report.get('verdict')}  "
           f"({report.get('started')} .. {report.get('finished')}, "
           f"KASLR {'on' if report.get('kaslr') else 'off'})", ""]
    out.append(f"{'variant':<12} {'mode':<10} {'symbols':>8} {'agree':>7} "
               f"{'disagree':>8} {'unchecked':>9}  verdict")
    for name, v in report["variants"].items():
        c = v.get("counts") or {}
        t = tally.of_counts(c)
        out.append(f"{name:<12} {str(v.get('module_mode')):<10} "
                   f"{c.get('symbols_agree', 0):>4}/{c.get('symbols', 0):<3} "
                   f"{t.agree:>7} {t.disagree:>8} {t.unchecked:>9}  {_verdict(v)}")
    out.append("")
    problems = []
    for name, v in report["variants"].items():
        e = v.get("error")
        if e:
            problems.append(f"{name}: step {e.get('step')} failed (exit "
                            f"{e.get('exit_status')}): {e.get('message')}"
                            + (f"  [log: {e['log']}]" if e.get("log") else ""))
        for c in of_variant(v):
            if c["agree"] is False:
                why = f"  ({c['reason']})" if c.get("reason") else ""
                problems.append(f"{name}: {c['kind']} {label(c)}: "
                                f"{sources_text(c)}{why}")
    for r in report.get("seeds") or []:
        if r.get("holds") is False:
            problems.append(f"seed {r['seed']} does not hold: {r['title']} "
                            f"(checks: {tally.seed_text(r)})")
    for r in report.get("across") or []:
        if r.get("flagged"):
            vals = "; ".join(f"{n}: {x}" for n, x in r["values"].items())
            problems.append(f"across variants: {r['what']} differ, must be identical: {vals}")
    if problems:
        out.append(f"{len(problems)} disagreement(s):")
        out += [f"  {p}" for p in problems]
    else:
        out.append("No disagreement.")
    out.append("")
    out.append("files:")
    for name in REPORT_FILES:
        p = rundir / name
        out.append(f"  {p}" + ("" if p.exists() else "  (missing)"))
    for name in report["variants"]:
        d = rundir / name
        logs = sorted(x.name for x in d.iterdir() if x.is_file()) if d.is_dir() else []
        out.append(f"  {d}/: {', '.join(logs) if logs else '(no logs)'}")
    return out


def main(run=None, open_html=False, stdout=None):
    stdout = stdout or sys.stdout
    try:
        rundir = resolve(run)
        report = load(rundir)
        if open_html:
            page = rundir / "report.html"
            if not page.is_file():
                raise ShowError(f"{rundir}: no report.html")
            print(page.resolve(), file=stdout)
            return 0
        print("\n".join(lines(report, rundir)), file=stdout)
        return 0
    except ShowError as e:
        print(f"ksymlab: show: {e}", file=sys.stderr)
        return 2
