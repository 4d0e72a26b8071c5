"""report.html's charts: the scenario's priorities per variant and the step times."""

from .. import steps as stepnames
from . import timings
from .html_parts import ESC, STEP_COLOURS, _attrs, _table
from .jsonrows import fmt, label, of_variant, sources_text


def scenario_tasks(v):
    return [c for c in of_variant(v) if c["kind"] == "prio" and "scenario" in c["sources"]]


def prio_chart(name, v):
    rows = scenario_tasks(v)
    if not rows:
        return f"<p>{ESC(name)}: no scenario tasks.</p>"
    values = [x for c in rows for x in (c["sources"].get("module"), c["sources"].get("gdb"),
                                        c["sources"].get("scenario")) if isinstance(x, int)]
    lo, hi = min([-105] + values), max([40] + values)
    top, plot_h, left, step = 14, 220, 40, 40
    width, height = left + step * len(rows) + 10, top + plot_h + 50

    def ypos(p):
        return top + (hi - p) * plot_h / (hi - lo)

    out = [f'<figure class="prio" data-variant="{ESC(name)}">',
           f"<figcaption>{ESC(name)}: task_prio() of the scenario tasks</figcaption>",
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for tick in range(-100, hi + 1, 20):
        if tick < lo:
            continue
        y = ypos(tick)
        out.append(f'<line x1="{left - 4}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="#e4e4e4"/><text x="{left - 6}" y="{y + 4:.1f}" '
                   f'text-anchor="end">{tick}</text>')
    for i, c in enumerate(rows):
        s = c["sources"]
        cx = left + step * i + step / 2
        bad = c.get("agree") is False
        out.append(f'<g class="task{" prio-mismatch" if bad else ""}"'
                   + _attrs(data_key=c["key"], data_module=s.get("module"),
                            data_gdb=s.get("gdb"), data_expected=s.get("scenario")) + ">")
        out.append(f"<title>{ESC(label(c))}: {ESC(sources_text(c))}"
                   f"{ESC(' - ' + c['reason']) if c.get('reason') else ''}</title>")
        if bad:
            out.append(f'<rect x="{cx - step / 2 + 1}" y="{top}" width="{step - 2}" '
                       f'height="{plot_h}" fill="#fde8e8"/>')
        if isinstance(s.get("scenario"), int):
            y = ypos(s["scenario"])
            out.append(f'<line x1="{cx - 14}" x2="{cx + 14}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'stroke="#555" stroke-width="3"/>')
        if isinstance(s.get("module"), int):
            out.append(f'<circle cx="{cx - 5}" cy="{ypos(s["module"]):.1f}" r="4.5" '
                       f'fill="#0072b2"/>')
        if isinstance(s.get("gdb"), int):
            y = ypos(s["gdb"])
            out.append(f'<rect x="{cx + 1}" y="{y - 4:.1f}" width="8" height="8" fill="none" '
                       f'stroke="#e69f00" stroke-width="2"/>')
        out.append(f'<text x="{cx}" y="{top + plot_h + 14}" text-anchor="middle">'
                   f'{ESC(c["key"].replace("pid ", ""))}</text>')
        out.append(f'<text x="{cx}" y="{top + plot_h + 27}" text-anchor="middle" '
                   f'style="font-size:9px">{ESC(fmt(s.get("scenario")))}</text>')
        out.append("</g>")
    out.append(f'<text x="{left}" y="{height - 6}">pid (expected below it); blue dot: module, '
               f"orange square: gdb, grey bar: scenario</text>")
    out.append("</svg></figure>")
    return "\n".join(out)


STEPS = stepnames.TIMED


def timing_chart(report):
    timed = timings.per_variant(report)
    bars = []
    for name in report["variants"]:
        t = timed.get(name, {})
        bars.append((name, [(s, t.get(s)) for s in STEPS if isinstance(t.get(s), (int, float))]))
    total = max([sum(x for _, x in b) for _, b in bars] + [0])
    if not total:
        return "<p>No timings recorded.</p>"
    left, span, bar_h = 90, 700, 20
    height = len(bars) * (bar_h + 8) + 10
    out = ['<figure class="timings">', "<figcaption>seconds per step</figcaption>",
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + span + 70}" '
           f'height="{height}">']
    for i, (name, steps) in enumerate(bars):
        y = 4 + i * (bar_h + 8)
        out.append(f'<text x="0" y="{y + 14}">{ESC(name)}</text>')
        x = left
        for s, secs in steps:
            w = secs * span / total
            out.append(f'<rect class="step" x="{x:.1f}" y="{y}" width="{w:.1f}" '
                       f'height="{bar_h}" fill="{STEP_COLOURS[s]}"' +
                       _attrs(data_variant=name, data_step=s, data_seconds=secs) +
                       f"><title>{ESC(name)} {s}: {secs} s</title></rect>")
            x += w
        out.append(f'<text x="{x + 4:.1f}" y="{y + 14}">'
                   f'{sum(x for _, x in steps):.1f} s</text>')
    out.append("</svg>")
    out.append('<p class="legend">' + "".join(
        f'<span class="sw" style="background:{STEP_COLOURS[s]}"></span>{stepnames.label(s)}'
        for s in STEPS) + "</p>")
    out.append(_table(*timings.table(report)))
    out.append(f"<p>{ESC(timings.run_line(report))}</p></figure>")
    return "\n".join(out)
