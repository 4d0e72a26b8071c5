"""The report's confusion audit (harness/checks/confusions.py), in report.md and
report.html: per kind and confusion, how many rows of each variant could tell
the right value from the confused one; the weak ones with the rows that could not."""

from html import escape

from .. import mdtables
from ..checks.confusions import not_audited, weak


def _cell(a):
    if a["rows"] == 0:
        return "not read"
    return f"{a['telling']}/{a['rows']}" + (" **weak**" if a["weak"] else "")


def _audited(report):
    """{variant: its audit list} of the variants that have one."""
    variants = {n: v.get("confusions") or [] for n, v in report.get("variants", {}).items()}
    return {n: a for n, a in variants.items() if a}


def _grid(variants, names):
    """[kind, confusion, cell per variant of `names`] for every audited pair."""
    keys = []
    for audits in variants.values():
        for a in audits:
            if (a["kind"], a["confusion"]) not in keys:
                keys.append((a["kind"], a["confusion"]))
    rows = []
    for kind, confusion in keys:
        cells = []
        for n in names:
            a = next((x for x in variants[n]
                      if (x["kind"], x["confusion"]) == (kind, confusion)), None)
            cells.append(_cell(a) if a else "")
        rows.append([kind, confusion, *cells])
    return rows


def _weak_lines(report, quote=""):
    """One line per weak (variant, kind, confusion), with the row ids (each in `quote`)."""
    return [f"weak on {name}: {a['kind']} / {a['confusion']} ({a['what']}): "
            + (", ".join(f"{quote}{i}{quote}" for i in a["blind"]) or "no row carried it")
            for name, a in weak(report)]


def html(report, table):
    """The section's HTML, its heading first (`table` is report/html_parts.py's table writer)."""
    head = '<h2 id="confusions">Confusion audit</h2>'
    variants = _audited(report)
    if not variants:
        return head + "<p>No kind was audited.</p>"
    names = list(variants)
    lines = _weak_lines(report)
    return "\n".join([head, "<p>Rows whose right value differs from the confused one in this "
                      "run's state / rows that carry the confusion; <b>weak</b>: none could "
                      "tell.</p>",
                      table(["kind", "confusion", *names], _grid(variants, names)),
                      "<ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>"
                      if lines else "<p>No weak confusion.</p>",
                      "<p>Kinds not audited:</p><ul>" + "".join(
                          f"<li>{escape(k)}: {escape(why)}</li>"
                          for k, why in not_audited(report)) + "</ul>"])


def markdown(report):
    """The section's lines; none when no variant was audited."""
    variants = _audited(report)
    if not variants:
        return []
    out = ["## Confusion audit", "",
           "Could each kind's checks have caught a sampler that reads a neighbouring field? "
           "Per variant: rows whose right value differs from the confused one in this run's "
           "state / rows that carry the confusion (`harness/checks/confusions.py`). One "
           "telling row is enough (a sampler reads every row of a kind the same way); "
           "**weak**: no row could tell, so a check of that kind would pass the mix-up.", ""]
    names = list(variants)
    for start in range(0, len(names), mdtables.MAX_COLUMNS - 2):
        part = names[start:start + mdtables.MAX_COLUMNS - 2]
        mdtables.table(out, ["kind", "confusion", *part], _grid(variants, part))
    lines = _weak_lines(report, "`")
    out += [f"- {x}" for x in lines] + ([""] if lines else [])
    skipped = not_audited(report)
    if skipped:
        out += ["Kinds not audited, and why:", ""] + \
            [f"- {k}: {why}" for k, why in skipped] + [""]
    return out
