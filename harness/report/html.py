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

from . import confusions_md, tally
from .html_charts import prio_chart, timing_chart
from .html_maps import _legend, ab_view, pageblock_map, pageblocks
from .html_parts import AB_COLOUR, DISAGREE_COLOUR, _table
from .jsonrows import fmt, kinds, label, of_variant, source_names
from ..lttng.suite import suite_md

ESC = html.escape

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


def _verdict(v):
    if v.get("error"):
        return v["error"].get("verdict", v["error"]["step"])
    return v.get("verdict", "fail")


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
