"""report.html: the run drawn in one self-contained page.

Sections: the summary, seed and across-variant tables; per variant a
pageblock map (a cell per pageblock, coloured by migratetype, outlined where
the module and gdb's bitmap read disagree); the A/B view (the first variant's
map beside each other variant's, every pageblock whose type differs marked);
a chart of the scenario tasks' priorities (module, gdb, expected); the
seconds of each step per variant (a bar each, and a table with a row per
step, harness/steps.py); per kind the disagreeing rows and every
row; the details (errors, notes, samplers) of each variant.

Why hand-written SVG and not python3-matplotlib: the page must open from
disk with nothing else, and SVG inline in HTML does that with no extra
Debian package and no image encoding; it is a few kilobytes per chart
rather than a PNG per chart, stays sharp at any zoom, and every pageblock
cell is a DOM element (`rect.pb` with data-key, data-mt and a `disagree`
or `ab-diff` class) that a test, or a reader's browser search, can find.
There is no script: a Content-Security-Policy forbids scripts and any
network fetch, so the page cannot load anything.
"""

import html

from .. import steps as stepnames
from . import confusions_md, tally, timings
from .jsonrows import (fmt, kinds, label, mt_name, of_variant, pageblock_disagrees, pageblock_mt,
                            pageblock_pfn, pageblock_zone, source_names, sources_text)
from ..checks.pageblock import MIGRATETYPES
from ..lttng.suite import suite_md

ESC = html.escape

# Okabe-Ito derived, distinguishable with the common colour-vision deficiencies.
MT_COLOURS = {0: "#d55e00", 1: "#9ecae1", 2: "#009e73", 3: "#e69f00", 4: "#0072b2",
              5: "#555555"}
UNKNOWN_COLOUR = "#cccccc"      # a migratetype number not in MIGRATETYPES
ABSENT_COLOUR = "#ffffff"
# Outline of a pageblock the module and gdb disagree on. No other element of
# the page uses this colour, so a screenshot can be searched for it.
DISAGREE_COLOUR = "#e6007e"
AB_COLOUR = "#111111"

CELL, PITCH, COLUMNS, LABEL_W = 14, 16, 32, 64

STEP_COLOURS = {"kernel": "#8c8c8c", "module": "#0072b2", "initramfs": "#56b4e9",
                "boot": "#009e73", "gdb": "#e69f00", "guest_rest": "#cc79a7",
                "drgn": "#f0e442", "compare": "#d55e00", "lttng": "#5d3a9b",
                "suite": "#999933"}

CSS = f"""
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1300px; }}
h1 {{ font-size: 1.5em; margin-bottom: .2em; }}
h2 {{ border-bottom: 1px solid #ccc; margin-top: 1.6em; }}
table {{ border-collapse: collapse; margin: .5em 0 1em; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }}
th {{ background: #f0f0f0; }}
td.long {{ max-width: 40em; word-break: break-all; }}
.pass {{ color: #1a7f37; font-weight: bold; }}
.fail {{ color: #b35900; font-weight: bold; }}
.figs {{ display: flex; flex-wrap: wrap; gap: 1.5em; }}
figure {{ margin: 0 0 1em; }}
figcaption {{ font-weight: bold; margin-bottom: .3em; }}
svg text {{ font: 11px system-ui, sans-serif; fill: #222; }}
rect.pb {{ stroke: #ffffff; stroke-width: 0.5; }}
rect.pb.absent {{ stroke: #999; stroke-dasharray: 2 2; }}
rect.pb.disagree {{ stroke: {DISAGREE_COLOUR}; stroke-width: 3; }}
rect.pb.ab-diff {{ stroke: {AB_COLOUR}; stroke-width: 2.5; }}
circle.ab-mark {{ fill: #ffffff; stroke: {AB_COLOUR}; stroke-width: 1; }}
.legend span.sw {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px;
  vertical-align: middle; border: 1px solid #888; }}
tr.bad td {{ background: #fde8e8; }}
pre {{ background: #f6f6f6; padding: .5em; overflow-x: auto; }}
details {{ margin: .3em 0; }}
"""


def mt_colour(mt):
    if mt is None:
        return ABSENT_COLOUR
    return MT_COLOURS.get(mt, UNKNOWN_COLOUR)


def _attrs(**kw):
    return "".join(f' {k.replace("_", "-")}="{ESC(str(v))}"' for k, v in kw.items()
                   if v is not None)


def _table(head, rows, row_class=None):
    out = ["<table><tr>" + "".join(f"<th>{ESC(str(h))}</th>" for h in head) + "</tr>"]
    for i, r in enumerate(rows):
        cls = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        cells = []
        for x in r:
            text = "" if x is None else str(x)
            cells.append(f'<td{" class=long" if len(text) > 60 else ""}>{ESC(text)}</td>')
        out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _verdict(v):
    if v.get("error"):
        return v["error"].get("verdict", v["error"]["step"])
    return v.get("verdict", "fail")


# --- pageblock maps ------------------------------------------------------

def pageblocks(v):
    """A cell per pageblock row; rows about pageblock states (harness/checks/pageblock.py:
    skip bits, changes, types) have no pfn and no cell."""
    return [c for c in of_variant(v)
            if c["kind"] == "pageblock" and pageblock_pfn(c) is not None]


def _layout(rows, columns):
    """Cell positions: zones in order of appearance, each starting a new line."""
    zones, pos, y = [], {}, 0
    by_zone = {}
    for c in rows:
        z = pageblock_zone(c)
        if z not in by_zone:
            by_zone[z] = []
            zones.append(z)
        by_zone[z].append(c)
    labels = []
    for z in zones:
        labels.append((z, y))
        for i, c in enumerate(by_zone[z]):
            pos[c["key"]] = (LABEL_W + (i % columns) * PITCH, y + (i // columns) * PITCH)
        y += ((len(by_zone[z]) + columns - 1) // columns) * PITCH + 4
    return pos, labels, y


def _cell(c, x, y, variant, extra_class="", title_extra=""):
    mt = pageblock_mt(c) if c is not None else None
    s = c["sources"] if c is not None else {}
    cls = ["pb", f"mt-{mt}" if mt is not None else "absent"]
    disagree = c is not None and pageblock_disagrees(c)
    if disagree:
        cls.append("disagree")
    if extra_class:
        cls.append(extra_class)
    if c is None:
        title = "absent"
    else:
        title = f"{c['key']}: " + ", ".join(
            f"{k} {mt_name(s[k])}" for k in s) + \
            (f" - DISAGREE{': ' + c['reason'] if c.get('reason') else ''}" if disagree else "")
    title += title_extra
    out = [f'<rect class="{" ".join(cls)}"' + _attrs(
        x=x, y=y, width=CELL, height=CELL, fill=mt_colour(mt), data_variant=variant,
        data_key=c["key"] if c else None, data_mt=mt,
        data_gdb=s.get("gdb_bitmap") if c else None,
        data_disagree="1" if disagree else None) + f"><title>{ESC(title)}</title></rect>"]
    if disagree and s.get("gdb_bitmap") is not None:
        # the lower right half in gdb's colour: both types are visible
        out.append(f'<polygon class="pb-gdb" points="{x + CELL},{y} {x + CELL},{y + CELL} '
                   f'{x},{y + CELL}" fill="{mt_colour(s["gdb_bitmap"])}" '
                   f'pointer-events="none"/>')
    if mt is not None and mt not in MIGRATETYPES:
        out.append(f'<text x="{x + CELL / 2}" y="{y + CELL - 3}" text-anchor="middle" '
                   f'style="font-size:9px">{mt}</text>')
    return out


def pageblock_map(name, v, columns=COLUMNS):
    rows = pageblocks(v)
    if not rows:
        return f'<p class="nomap" data-variant="{ESC(name)}">{ESC(name)}: no pageblocks.</p>'
    pos, labels, height = _layout(rows, columns)
    width = LABEL_W + columns * PITCH
    bad = sum(pageblock_disagrees(c) for c in rows)
    out = [f'<figure class="pbmap" data-variant="{ESC(name)}" data-cells="{len(rows)}">',
           f"<figcaption>{ESC(name)}: {len(rows)} pageblocks, "
           f"{bad} where module and gdb disagree</figcaption>",
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="pageblock map of {ESC(name)}">']
    for z, y in labels:
        out.append(f'<text x="0" y="{y + 11}">{ESC(z)}</text>')
    for c in rows:
        out += _cell(c, *pos[c["key"]], name)
    out.append("</svg></figure>")
    return "\n".join(out)


def _legend(rows_all):
    seen = sorted({pageblock_mt(c) for c in rows_all} - {None})
    items = []
    for mt in sorted(set(MIGRATETYPES) & set(range(4)) | set(seen)):
        items.append(f'<span class="sw" style="background:{mt_colour(mt)}"></span>'
                     f"{ESC(mt_name(mt))}"
                     f"{f' ({mt})' if mt in MIGRATETYPES else ''}")
    items.append(f'<span class="sw" style="background:#fff;border:3px solid '
                 f'{DISAGREE_COLOUR}"></span>module and gdb disagree (lower right half: '
                 f"gdb's type)")
    return '<p class="legend">' + "".join(items) + "</p>"


def ab_view(a, va, b, vb, columns=COLUMNS):
    ra, rb = {c["key"]: c for c in pageblocks(va)}, {c["key"]: c for c in pageblocks(vb)}
    keys = list(ra) + [k for k in rb if k not in ra]
    rows = [ra.get(k) or rb[k] for k in keys]
    pos, labels, height = _layout(rows, columns)
    differ = [k for k in keys if (pageblock_mt(ra[k]) if k in ra else None)
              != (pageblock_mt(rb[k]) if k in rb else None)]
    width = LABEL_W + columns * PITCH
    out = [f'<figure class="ab" data-a="{ESC(a)}" data-b="{ESC(b)}" '
           f'data-differ="{len(differ)}">',
           f"<figcaption>{ESC(a)} (left) and {ESC(b)} (right): {len(differ)} of {len(keys)} "
           f"pageblocks differ in type</figcaption>", '<div class="figs">']
    for name, side in ((a, ra), (b, rb)):
        out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
                   f'height="{height + 16}" class="ab-side" data-variant="{ESC(name)}">')
        out.append(f'<text x="{LABEL_W}" y="11" style="font-weight:bold">{ESC(name)}</text>')
        for z, y in labels:
            out.append(f'<text x="0" y="{y + 27}">{ESC(z)}</text>')
        for k in keys:
            x, y = pos[k]
            diff = k in differ
            c = side.get(k)
            cell = _cell(c, x, y + 16, name, "ab-diff" if diff else "",
                         " - differs between the two variants" if diff else "")
            if c is None:      # keep the key on an absent cell so both sides line up
                cell[0] = cell[0].replace("<rect ", f'<rect data-key="{ESC(k)}" ', 1)
            out += cell
            if diff:
                out.append(f'<circle class="ab-mark" cx="{x + CELL / 2}" '
                           f'cy="{y + 16 + CELL / 2}" r="3" pointer-events="none"/>')
        out.append("</svg>")
    out.append("</div>")
    if differ:
        out.append(_table(["pageblock", a, b],
                          [[k, mt_name(pageblock_mt(ra[k]) if k in ra else None),
                            mt_name(pageblock_mt(rb[k]) if k in rb else None)]
                           for k in differ]))
    out.append("</figure>")
    return "\n".join(out)


# --- charts --------------------------------------------------------------

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


# --- tables --------------------------------------------------------------

def _summary(report):
    rows, cls = [], []
    for name, v in report["variants"].items():
        c = v.get("counts", {})
        checked = c.get("symbols", 0) + c.get("values", 0) - c.get("unchecked", 0)
        agree = c.get("symbols_agree", 0) + c.get("values_agree", 0)
        k = v.get("kaslr") or {}
        slide = (k.get("slide") if k.get("enabled") else "off") if k else ""
        rows.append([name, v.get("module_mode"), f"{c.get('symbols_agree', 0)}/"
                     f"{c.get('symbols', 0)}", checked, agree, checked - agree,
                     c.get("unchecked", 0), (v.get("timings") or {}).get("boot"), slide,
                     _verdict(v)])
        cls.append("bad" if _verdict(v) != "pass" else "")
    return _table(["variant", "module mode", "symbols resolved", "values checked", "agree",
                   "disagreements", "unchecked", "boot s", "KASLR slide", "verdict"], rows, cls)


def _seeds(report):
    rows = report.get("seeds") or []
    if not rows:
        return "<p>No seed evaluation.</p>"
    return _table(["seed", "patch", "status in the port", "runtime evidence", "variants",
                   "claims of the seed patch", "checks", "holds"],
                  [[r["seed"], r["title"], r["status"], r["why"], ", ".join(r["variants"]),
                    "; ".join(r.get("claims") or ()) + (
                        " (superseded, not checked)" if r.get("claims") and
                        not r.get("claims_checked", True) else "") or "-",
                    tally.seed_text(r),
                    "not run" if r["holds"] is None else ("yes" if r["holds"] else "NO")]
                   for r in rows],
                  ["bad" if r["holds"] is False else "" for r in rows])


def _across(report):
    rows = report.get("across") or []
    if not rows:
        return "<p>Fewer than two variants ran: nothing to compare.</p>"
    names = list(report["variants"])
    return _table(["what"] + names + ["identical", "why a difference is expected"],
                  [[r["what"]] + [r["values"].get(n) for n in names] +
                   ["yes" if r["identical"] else ("NO, flagged" if r["flagged"] else "no"),
                    r.get("why")] for r in rows],
                  ["bad" if r["flagged"] else "" for r in rows])


def _kinds(report):
    variants = report["variants"]
    per = {n: of_variant(v) for n, v in variants.items()}
    out = []
    for kind in kinds(variants):
        rows = {n: [c for c in cs if c["kind"] == kind] for n, cs in per.items()}
        out.append(f'<h3 id="kind-{ESC(kind)}">{ESC(kind)}</h3>')
        bad = [(n, c) for n, cs in rows.items() for c in cs if c["agree"] is False]
        if bad:
            names = source_names([c for _, c in bad])
            out.append(f"<p>{len(bad)} disagreement(s):</p>")
            out.append(_table(["variant", "key"] + names + ["reason"],
                              [[n, label(c)] + [fmt(c["sources"].get(s))
                                                       for s in names] + [c.get("reason")]
                               for n, c in bad], ["bad"] * len(bad)))
        else:
            out.append("<p>No disagreement.</p>")
        for n, cs in rows.items():
            if not cs:
                continue
            names = source_names(cs)
            ok = sum(c["agree"] is True for c in cs)
            out.append(f"<details><summary>{ESC(n)}: {len(cs)} rows, {ok} agree</summary>")
            out.append(_table(["key"] + names + ["agree", "reason"],
                              [[label(c)] + [fmt(c["sources"].get(s))
                                                    for s in names] +
                               [fmt(c["agree"]) if c["agree"] is not None
                                else "unchecked", c.get("reason")] for c in cs],
                              ["bad" if c["agree"] is False else "" for c in cs]))
            out.append("</details>")
    return "\n".join(out)


def _details(report):
    out = []
    for name, v in report["variants"].items():
        out.append(f"<h3>{ESC(name)}</h3>")
        out.append(f"<p>{ESC(str(v.get('description', '')))}. Tree <code>"
                   f"{ESC(str(v.get('tree_key')))}</code>, guest kernel <code>"
                   f"{ESC(str(v.get('guest_kernel')))}</code>, series: "
                   f"{ESC(', '.join(v.get('series') or []) or 'none')}, ran on "
                   f"<code>{ESC(str(v.get('worker', 'local')))}</code>.</p>")
        e = v.get("error")
        if e:
            out.append(f'<p class="fail">{ESC(str(e.get("verdict", e["step"])))}: step '
                       f'<code>{ESC(str(e["step"]))}</code> failed (exit '
                       f'{ESC(str(e.get("exit_status")))}): {ESC(str(e["message"]))}</p>')
            if e.get("log"):
                out.append(f"<p>log: <code>{ESC(str(e['log']))}</code></p>")
            if e.get("excerpt"):
                out.append(f"<pre>{ESC(e['excerpt'])}</pre>")
        if v.get("notes"):
            out.append("<ul>" + "".join(f"<li>{ESC(str(n))}</li>" for n in v["notes"]) +
                       "</ul>")
        if v.get("samplers"):
            out.append(_table(["sampler", "available", "missing symbol"],
                              [[s, "yes" if m.get("available") else "NO", m.get("missing")]
                               for s, m in v["samplers"].items()]))
    return "\n".join(out)


def render(report):
    """The whole page as one string."""
    variants = report["variants"]
    names = list(variants)
    verdict = report.get("verdict", "fail")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
             'style-src \'unsafe-inline\'; img-src data:">',
             f"<title>ksymlab run {ESC(str(report['run_id']))}: {ESC(verdict)}</title>",
             f"<style>{CSS}</style></head><body>",
             f"<h1>ksymlab A/B report: run {ESC(str(report['run_id']))}</h1>",
             f'<p>Verdict: <span class="{ESC(verdict)}" id="verdict">{ESC(verdict)}</span>. '
             f"Kernel source <code>{ESC(str(report.get('tarball')))}</code>; scenario "
             f"<code>{ESC(str(report.get('scenario')))}</code>; KASLR "
             f"{'on' if report.get('kaslr') else 'off'}; started "
             f"{ESC(str(report.get('started')))}, finished "
             f"{ESC(str(report.get('finished')))}.</p>",
             '<p><a href="#summary">summary</a> · <a href="#seeds">seeds</a> · '
             '<a href="#across">across variants</a> · <a href="#pageblocks">pageblocks</a> · '
             '<a href="#ab">A/B</a> · <a href="#prio">priorities</a> · '
             '<a href="#timings">timings</a> · <a href="#suite">LTTng suite</a> · '
             '<a href="#confusions">confusion audit</a> · <a href="#kinds">by kind</a> · '
             '<a href="#details">details</a></p>',
             '<h2 id="summary">Summary</h2>', _summary(report),
             '<h2 id="seeds">Seed patches</h2>', _seeds(report),
             '<h2 id="across">Across variants</h2>', _across(report),
             '<h2 id="pageblocks">Pageblocks by migratetype</h2>',
             "<p>One cell per pageblock, in pfn order per zone; the colour is the module's "
             "migratetype. Hover a cell for every source.</p>",
             _legend([c for v in variants.values() for c in pageblocks(v)]),
             '<div class="figs">'] + [pageblock_map(n, v) for n, v in variants.items()] + \
        ["</div>", '<h2 id="ab">A/B: pageblock types between variants</h2>']
    if len(names) < 2:
        parts.append("<p>Only one variant ran.</p>")
    else:
        parts.append(f"<p>{ESC(names[0])} beside each other variant; a pageblock whose type "
                     "differs is outlined in black with a white dot, on both sides.</p>")
        parts += [ab_view(names[0], variants[names[0]], n, variants[n]) for n in names[1:]]
    parts += ['<h2 id="prio">Scenario task priorities</h2>', '<div class="figs">'] + \
        [prio_chart(n, v) for n, v in variants.items()] + \
        ["</div>", '<h2 id="timings">Timings</h2>', timing_chart(report),
         '<h2 id="suite">LTTng\'s own test suite</h2>', suite_md.html(report, _table),
         confusions_md.html(report, _table), '<h2 id="kinds">Values by kind</h2>', _kinds(report),
         '<h2 id="details">Details and failures</h2>', _details(report),
         '<footer id="end"><p>Written by harness/report/html.py from report.json.</p>'
         "</footer></body></html>"]
    return "\n".join(parts) + "\n"
