"""The LTTng coverage table of a run (report.json `lttng_coverage`, report.md):
every name LTTng 2.13.9 resolves by kallsyms x variant -> how this LTTng got it
and what the run shows of the feature."""

from .coverage import NAMES


def coverage(variants):
    """[{name, feature, variants: {variant: {how, feature}}}] from the variants' rows
    of kind lttng-coverage (report.json form); [] when no variant ran LTTng."""
    per = {}
    for vname, v in variants.items():
        for c in v.get("values", []):
            if c["kind"] == "lttng-coverage":
                per.setdefault(c["key"], {})[vname] = dict(c["sources"])
    if not per:
        return []
    return [{"name": n, "feature": words, "variants": per.get(n, {})}
            for n, (_, words) in NAMES.items()]


def markdown(report, out, table):
    rows = report.get("lttng_coverage") or []
    if not rows:
        return
    names = [n for n in report["variants"] if any(n in r["variants"] for r in rows)]
    out.append("## LTTng coverage: how the real tracer got each name")
    out.append("")
    out.append("Every name LTTng 2.13.9 resolves through its kallsyms wrapper, per variant: "
               "how this build got it (from its .ko: an imported export, a tracepoint "
               "argument, a name looked up at run time) and what the run shows of the "
               "feature (the `lttng` rows).")
    out.append("")
    body = []
    for r in rows:
        cells = []
        for n in names:
            c = r["variants"].get(n)
            cells.append(f"{c['how']}; {c['feature']}" if c else "")
        body.append([f"`{r['name']}`", r["feature"]] + cells)
    table(out, ["name", "LTTng feature"] + names, body)
