"""`make mutants`' results as tables: the kill rate per kind and every mutant with
what killed it or why it lives, on stdout and in runs/mutants-<time>/mutants.{md,json}."""

import json

def kill_rates(outcomes):
    """{kind: (mutants, killed)} in catalogue order of kinds."""
    rates = {}
    for o in outcomes:
        n, k = rates.get(o.kind, (0, 0))
        rates[o.kind] = (n + 1, k + (o.status == "killed"))
    return rates


# ---------------------------------------------------------------- running

def why(o):
    if o.status == "killed":
        return ", ".join(o.killers[:2]) + (f" (+{len(o.killers) - 2})" if len(o.killers) > 2
                                           else "")
    if o.status == "wrong-kind":
        seeds = f"seed row(s) {', '.join(o.seeds)} do not hold" if o.seeds else ""
        if not o.others:
            return f"no check failed; {seeds}" if seeds else "no check failed"
        return "failed only on " + ", ".join(o.others[:2]) + (f"; {seeds}" if seeds else "")
    if o.status in ("crashed", "invalid"):
        return (o.error or "")[:90]
    return "needs: " + o.needs if o.needs else "no check of its kind failed"


def tables(outcomes):
    """(kind rows, mutant rows) for the text and Markdown tables."""
    kinds = [[k, str(n), str(killed), f"{100 * killed / n:.0f} %"]
             for k, (n, killed) in kill_rates(outcomes).items()]
    total = len(outcomes)
    killed = sum(o.status == "killed" for o in outcomes)
    kinds.append(["all", str(total), str(killed), f"{100 * killed / total:.0f} %" if total
                  else "-"])
    rows = [[o.id, o.kind, o.what, o.status, why(o), f"{o.seconds:.0f}"] for o in outcomes]
    return kinds, rows


KIND_HEAD = ["kind", "mutants", "killed", "kill rate"]
MUTANT_HEAD = ["mutant", "kind", "bug", "result", "killed by / why it lives", "s"]


def text_table(head, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] +
                     [fmt.format(*r) for r in rows])


def write_report(out, outcomes, meta):
    kinds, rows = tables(outcomes)
    (out / "mutants.json").write_text(json.dumps(
        {**meta, "kill_rates": {k: {"mutants": n, "killed": killed}
                                for k, (n, killed) in kill_rates(outcomes).items()},
         "mutants": [o.to_json() for o in outcomes]}, indent=1) + "\n")
    md = ["# Mutants", "", f"Catalogue `{meta['catalogue']}`, variant runs under `{out}`; "
          f"{meta['seconds']:.0f} s in all.", "", "## Kill rate per kind", ""]
    md += _md(KIND_HEAD, kinds)
    md += ["", "## Every mutant", ""]
    md += _md(MUTANT_HEAD, rows)
    (out / "mutants.md").write_text("\n".join(md) + "\n")


def _md(head, rows):
    esc = [[str(x).replace("|", "\\|") for x in r] for r in rows]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(r) + " |" for r in esc]
