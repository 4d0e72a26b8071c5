"""Write the A/B report of one run: report.json, report.md and report.ktap."""

import json

from . import crossvariant, seeds


def overall_verdict(variants, seed_rows=(), across=()):
    if not variants:
        return "fail"
    if any(r["holds"] is False for r in seed_rows):
        return "fail"
    if any(r["flagged"] for r in across):
        return "fail"
    return "pass" if all(v.get("verdict") == "pass" for v in variants.values()) else "fail"


def assemble(meta, results, order):
    """The report of a run as a JSON-ready dict.

    `meta` describes the run; `results` maps variant names to their immutable
    VariantResult (a snapshot); `order` is the order the variants were asked for.
    """
    rep = dict(meta)
    rep["variants"] = {n: results[n].to_json() for n in order if n in results}
    rep["seeds"] = seeds.evaluate(results)
    rep["across"] = crossvariant.compare(results)
    rep["verdict"] = overall_verdict(rep["variants"], rep["seeds"], rep["across"])
    return rep


def write_all(rundir, report):
    """Write report.json, report.md and report.ktap of an assembled report."""
    (rundir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    (rundir / "report.md").write_text(markdown(report))
    (rundir / "report.ktap").write_text(ktap(report))


def _mark(ok):
    if ok is None:
        return "unchecked"
    return "yes" if ok else "**NO**"


def _cell(x):
    return "" if x is None else str(x).replace("|", "\\|")


def _verdict_cell(v):
    if v.get("error"):
        return f"**{v['error'].get('verdict', v['error']['step'])}**"
    return v.get("verdict", "fail")


def _summary(report, out):
    out.append("## Summary")
    out.append("")
    out.append("| variant | module mode | symbols resolved | values checked | agree "
               "| disagreements | unchecked | boot s | KASLR slide | verdict |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for name, v in report["variants"].items():
        c = v.get("counts", {})
        checked = c.get("symbols", 0) + c.get("values", 0) - c.get("unchecked", 0)
        agree = c.get("symbols_agree", 0) + c.get("values_agree", 0)
        k = v.get("kaslr") or {}
        slide = (k.get("slide") if k.get("enabled") else "off") if k else ""
        out.append(f"| {name} | {v.get('module_mode')} | {c.get('symbols_agree', 0)}/"
                   f"{c.get('symbols', 0)} | {checked} | {agree} | {checked - agree} | "
                   f"{c.get('unchecked', 0)} | {_cell((v.get('timings') or {}).get('boot'))} | {slide} | "
                   f"{_verdict_cell(v)} |")
    out.append("")


def _seeds(report, out):
    if not report.get("seeds"):
        return
    out.append("## Seed patches")
    out.append("")
    out.append("| seed | patch | status in the 6.1 port | runtime evidence | checks agree "
               "| holds |")
    out.append("|---|---|---|---|---|---|")
    for r in report["seeds"]:
        holds = "not run" if r["holds"] is None else _mark(r["holds"])
        out.append(f"| {r['seed']} | {r['title']} | {r['status']} | {r['why']} "
                   f"({', '.join(r['variants'])}) | {r['agree']}/{r['checks']} | {holds} |")
    out.append("")
    out.append("Upstream history and what each port changed: `patches/README.md`.")
    out.append("")


def _across(report, out):
    rows = report.get("across") or []
    if not rows:
        return
    names = [n for n in report["variants"] if any(n in r["values"] for r in rows)]
    out.append("## Across variants")
    out.append("")
    out.append("Same scenario, programs and machine; only the series differs. Rows that "
               "must be identical fail the run when they are not.")
    out.append("")
    out.append("| what | " + " | ".join(names) + " | identical | why a difference is expected |")
    out.append("|---|" + "---|" * len(names) + "---|---|")
    for r in rows:
        same = "yes" if r["identical"] else ("**NO, flagged**" if r["flagged"] else "no")
        out.append(f"| {r['what']} | " + " | ".join(_cell(r["values"].get(n)) for n in names)
                   + f" | {same} | {_cell(r.get('why'))} |")
    out.append("")


# Descriptive fields worth a column of their own (how a symbol was resolved).
INFO_COLUMNS = ("method",)


def _columns(x):
    return [c for c in INFO_COLUMNS if c in x["info"]] + list(x["sources"])


def _value(x, column):
    return x["sources"][column] if column in x["sources"] else x["info"].get(column)


def _kind_table(out, title, rows_by_variant, label=None):
    """One table: a row per check, for each variant a column per source and an agree mark."""

    def key_of(x):
        return x["label"]

    names = [n for n, rows in rows_by_variant.items() if rows]
    if not names:
        return
    keys, info, cols = [], {}, {}
    for n in names:
        for x in rows_by_variant[n]:
            k = key_of(x)
            if k not in info:
                keys.append(k)
                info[k] = x["info"].get("comm") or ""
            for c in _columns(x):
                cols.setdefault(n, [])
                if c not in cols[n]:
                    cols[n].append(c)
    index = {n: {key_of(x): x for x in rows_by_variant[n]} for n in names}
    out.append(f"### {title}")
    out.append("")
    head, rule = ["key"], ["---"]
    for n in names:
        head += [f"{n}: {label(c) if label else c}" for c in cols.get(n, [])] + [f"{n}: agree"]
        rule += ["---"] * (len(cols.get(n, [])) + 1)
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(rule) + "|")
    for k in keys:
        cells = [f"{k} ({info[k]})" if info[k] else str(k)]
        for n in names:
            x = index[n].get(k)
            cells += [_cell(_value(x, c)) if x else "" for c in cols.get(n, [])]
            cells.append(_mark(x["agree"]) if x else "absent")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")


SOURCE_LABELS = {"gdb": "gdb", "proc_kallsyms": "/proc/kallsyms"}


def _by_kind(report, out):
    variants = report["variants"]
    out.append("## Values by kind")
    out.append("")
    out.append("Each variant has a column per source: `module` is the probe module's text "
               "output, `memory` its results structure read by gdb, the others are oracles.")
    out.append("")
    _kind_table(out, "symbols", {n: v.get("symbols", []) for n, v in variants.items()},
                lambda c: SOURCE_LABELS.get(c, c))
    kinds = []
    for v in variants.values():
        for x in v.get("values", []):
            if x["kind"] not in kinds:
                kinds.append(x["kind"])
    for kind in kinds:
        rows = {n: [x for x in v.get("values", []) if x["kind"] == kind]
                for n, v in variants.items()}
        _kind_table(out, kind, rows)


def _details(name, v, out):
    out.append(f"### {name}")
    out.append("")
    out.append(f"{v.get('description', '')}. Tree `{v.get('tree_key')}`, guest kernel "
               f"`{v.get('guest_kernel')}`, series: {', '.join(v.get('series', [])) or 'none'}.")
    out.append("")
    if v.get("samplers"):
        out.append("| sampler | available | missing symbol |")
        out.append("|---|---|---|")
        for sname, sm in v["samplers"].items():
            out.append(f"| {sname} | {_mark(sm['available'])} | {sm['missing']} |")
        out.append("")
        out.append(f"Symbol resolution at init took {v.get('resolve_ns')} ns (guest clock).")
        out.append("")
    failures = [x for x in v.get("symbols", []) + v.get("values", []) if x["agree"] is False]
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
    for f in failures:
        out.append(f"- disagreement: `{json.dumps(f, sort_keys=True)}`")
    for n in v.get("notes", []):
        out.append(f"- note: {n}")
    if not (v.get("error") or failures or v.get("notes")):
        out.append("No failures.")
    out.append("")


def markdown(report):
    out = [f"# ksymlab A/B report: run {report['run_id']}", ""]
    out.append(f"Verdict: **{report['verdict']}**. Kernel source: `{report.get('tarball')}`; "
               f"scenario `{report.get('scenario')}`; KASLR "
               f"{'on' if report.get('kaslr') else 'off (nokaslr)'}.")
    out.append("")
    _summary(report, out)
    _seeds(report, out)
    _across(report, out)
    _by_kind(report, out)
    out.append("## Details and failures")
    out.append("")
    for name, v in report["variants"].items():
        _details(name, v, out)
    return "\n".join(out) + "\n"


def _desc(text):
    # KTAP descriptions end at a '#' (directive) and must stay on one line.
    return " ".join(str(text).replace("#", "").split())


def ktap(report):
    lines = ["KTAP version 1", f"1..{len(report['variants'])}"]
    for n, (name, v) in enumerate(report["variants"].items(), 1):
        checks = [(s["agree"], f"symbol {s['key']} {s['info'].get('method', '')}")
                  for s in v.get("symbols", [])]
        checks += [(x["agree"], f"{x['kind']} {x['label']} {x['info'].get('comm', '')}")
                   for x in v.get("values", [])]
        if v.get("error"):
            checks.append((False, f"step {v['error']['step']}: {v['error']['message']}"))
        lines.append("  KTAP version 1")
        lines.append(f"  # Subtest: {name}")
        lines.append(f"  1..{len(checks)}")
        for i, (ok, desc) in enumerate(checks, 1):
            if ok is None:
                lines.append(f"  ok {i} {_desc(desc)} # SKIP no oracle")
            else:
                lines.append(f"  {'ok' if ok else 'not ok'} {i} {_desc(desc)}")
        lines.append(f"{'ok' if v.get('verdict') == 'pass' else 'not ok'} {n} {name}")
    # A closing diagnostic line; kunit.py (6.1) also needs a line after the last result.
    lines.append(f"# ksymlab run {report['run_id']}: verdict {report['verdict']}")
    return "\n".join(lines) + "\n"
