"""Write the A/B report of one run: report.json, report.md and report.ktap."""

import json

from . import seeds


def overall_verdict(variants, seed_rows=()):
    if not variants:
        return "fail"
    if any(r["holds"] is False for r in seed_rows):
        return "fail"
    return "pass" if all(v.get("verdict") == "pass" for v in variants.values()) else "fail"


def write_all(rundir, report):
    report["seeds"] = seeds.evaluate(report["variants"])
    report["verdict"] = overall_verdict(report["variants"], report["seeds"])
    (rundir / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n")
    (rundir / "report.md").write_text(markdown(report))
    (rundir / "report.ktap").write_text(ktap(report))


def _mark(ok):
    if ok is None:
        return "unchecked"
    return "yes" if ok else "**NO**"


def markdown(report):
    out = [f"# ksymlab A/B report: run {report['run_id']}", ""]
    out.append(f"Verdict: **{report['verdict']}**. Kernel source: `{report.get('tarball')}`.")
    out.append("")
    out.append("## Summary")
    out.append("")
    out.append("| variant | module mode | symbols resolved | symbols agree | values checked "
               "| values agree | verdict |")
    out.append("|---|---|---|---|---|---|---|")
    for name, v in report["variants"].items():
        c = v.get("counts", {})
        verdict = v["verdict"] if not v.get("error") else f"{v['verdict']} ({v['error']['step']})"
        out.append(f"| {name} | {v.get('module_mode')} | {c.get('symbols', 0)} | "
                   f"{c.get('symbols_agree', 0)} | {c.get('values', 0)} | "
                   f"{c.get('values_agree', 0)} | {verdict} |")
    out.append("")
    if report.get("seeds"):
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
    for name, v in report["variants"].items():
        out.append(f"## {name}")
        out.append("")
        out.append(f"{v.get('description', '')}. Tree `{v.get('tree_key')}`, guest kernel "
                   f"`{v.get('guest_kernel')}`.")
        out.append("")
        if v.get("symbols"):
            out.append("### Symbols")
            out.append("")
            out.append("| symbol | method | module address | gdb (vmlinux) | /proc/kallsyms "
                       "| agree |")
            out.append("|---|---|---|---|---|---|")
            for s in v["symbols"]:
                out.append(f"| {s['name']} | {s['method']} | `{s['module_addr']}` | "
                           f"`{s['gdb_addr']}` | `{s.get('proc_kallsyms')}` | "
                           f"{_mark(s['agree'])} |")
            out.append("")
        if v.get("samplers"):
            out.append("### Samplers")
            out.append("")
            out.append("| sampler | available | missing symbol |")
            out.append("|---|---|---|")
            for sname, sm in v["samplers"].items():
                out.append(f"| {sname} | {_mark(sm['available'])} | {sm['missing']} |")
            out.append("")
            out.append(f"Symbol resolution at init took {v.get('resolve_ns')} ns (guest clock).")
            out.append("")
        kinds = []
        for x in v.get("values", []):
            if x["kind"] not in kinds:
                kinds.append(x["kind"])
        for kind in kinds:
            rows = [x for x in v["values"] if x["kind"] == kind]
            cols = []
            for x in rows:
                cols += [c for c in x if c not in ("kind", "key", "agree") and c not in cols]
            out.append(f"### {kind}")
            out.append("")
            out.append("| key | " + " | ".join(cols) + " | agree |")
            out.append("|---|" + "---|" * len(cols) + "---|")
            for x in rows:
                cells = ["" if x.get(c) is None else str(x[c]) for c in cols]
                out.append(f"| {x['key']} | " + " | ".join(cells) + f" | {_mark(x['agree'])} |")
            out.append("")
        failures = [x for x in v.get("symbols", []) + v.get("values", [])
                    if x["agree"] is False]
        if v.get("error") or failures or v.get("notes"):
            out.append("### Failures and notes")
            out.append("")
            if v.get("error"):
                e = v["error"]
                out.append(f"- step `{e['step']}` failed (exit {e['exit_status']}): {e['message']}")
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
            out.append("")
    return "\n".join(out) + "\n"


def _desc(text):
    # KTAP descriptions end at a '#' (directive) and must stay on one line.
    return " ".join(str(text).replace("#", "").split())


def ktap(report):
    lines = ["KTAP version 1", f"1..{len(report['variants'])}"]
    for n, (name, v) in enumerate(report["variants"].items(), 1):
        checks = [(s["agree"], f"symbol {s['name']} {s['method']}") for s in v.get("symbols", [])]
        checks += [(x["agree"], f"{x['kind']} {x['key']} {x.get('comm', '')}")
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
