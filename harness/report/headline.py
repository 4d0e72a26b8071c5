"""The table report.md opens with: kernel line x variant -> the LTTng release it ran,
the LTTng features that work and those lost, the names LTTng still resolved by name,
and lttng-tools' suite points passed/planned.

Everything is read from the variant's part of report.json (its lttng-coverage rows,
its `lttng` facts and its `lttng_suite` entry); nothing is judged again here.
"""

from dataclasses import dataclass

from .. import mdtables
from ..lttng.rows.coverage import LOST, WORKS, lost_features

BY_NAME = "kprobe trick"        # coverage.how(): a name looked up at run time
WRONG = "wrong or missing"


@dataclass(frozen=True)
class Headline:
    line: str
    variant: str
    lttng: str                  # "2.13.9 (series stock)", or "not run"
    working: tuple              # Feature words whose checked rows agree
    lost: tuple                 # lost as the variant file expects, or wrong (marked)
    by_name: tuple              # names this LTTng build looked up at run time
    suite: str                  # "passed/planned", or "not run"


def _coverage(v):
    return [c for c in v.get("values", []) if c.get("kind") == "lttng-coverage"]


def _features(rows, want):
    return sorted({(c.get("info") or {}).get("feature") for c in rows if want(c["sources"])}
                  - {None})


def _works(status):
    return status.startswith("works") or status in WORKS.values()


def headline(name, v):
    """The Headline of variant `name` from its part of report.json `v`."""
    lt = v.get("lttng") if isinstance(v.get("lttng"), dict) else {}
    cov = _coverage(v)
    lost = {f.value for f in lost_features(v.get("values", []))}
    wrong = _features(cov, lambda s: str(s.get("feature", "")).startswith(WRONG))
    working = [f for f in _features(cov, lambda s: _works(str(s.get("feature", ""))))
               if f not in lost and f not in wrong]
    suite = (v.get("lttng_suite") or {}).get("coverage")
    return Headline(
        line=v.get("kernel_line") or "", variant=name,
        lttng=f"{lt['version']} (series {lt.get('series')})" if lt.get("version") else "not run",
        working=tuple(working),
        lost=tuple(sorted(lost)) + tuple(f"{f} ({WRONG})" for f in wrong),
        by_name=tuple(sorted(c["key"] for c in cov
                             if str(c["sources"].get("how", "")).startswith(BY_NAME))),
        suite=f"{suite['passed']}/{suite['planned']}" if suite else "not run")


def rows(report):
    """[Headline] of every variant of `report`, by kernel line, in the order asked for."""
    out = [headline(n, v) for n, v in report.get("variants", {}).items()]
    return sorted(out, key=lambda h: line_key(h.line))      # stable: asked order kept


def line_key(line):
    """A kernel line ("6.12") as a sort key: 6.1 < 6.12 < 7.2."""
    return tuple(int(x) if x.isdigit() else 0 for x in line.split("."))


def _cell(items, ran):
    if not ran:
        return "-"
    return f"{len(items)}: " + ", ".join(items) if items else "none"


def markdown(report, out):
    """Append the headline table to `out`, a list of lines."""
    hs = rows(report)
    if not hs:
        return
    mdtables.table(out, ["kernel", "variant", "LTTng", "features working", "features lost",
                         "names resolved by name", "suite points passed/planned"],
                   [[h.line, h.variant, h.lttng,
                     *(_cell(x, h.lttng != "not run") for x in (h.working, h.lost, h.by_name)),
                     h.suite] for h in hs])
    out.append(f"Features: LTTng's, as its coverage table below shows them (\"{LOST}\" "
               "where the variant file expects the loss; \"(wrong or missing)\" where its rows "
               "disagree). Names resolved by name: those this LTTng build looked up through "
               "kallsyms_lookup_name at run time. A variant without LTTng says \"not run\".")
    out.append("")

