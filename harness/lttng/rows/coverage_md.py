"""The LTTng coverage table of a run (report.json `lttng_coverage`, report.md):
every name LTTng 2.13.9 resolves by kallsyms x variant -> how this LTTng got it
and what the run shows of the feature (each variant's LTTng release named)."""

from ...errors import HarnessError
from ... import mdtables
from ..supply import modbuild
from ..boot import session
from .coverage import NAMES

# The shipped prio-context crash (issue 13): a finding of the `shipped` series.
# `make run` does not boot it (the boot ends in the panic); the e2e test does.
PRIO_FIX = "0002-Fix-prio-context-look-up-task_prio-before-the-contex.patch"
PRIO_CRASH_TEST = ("harness/tests/e2e/test_lttng_e2e.py::"
                   "test_shipped_lttng_prio_context_is_one_classified_panic")
PRIO_CRASH_RELEASE = "2.13.9"
# Later releases look nothing up for the prio context (lttng-modules 43b9f043 and
# 7f1fa632, v2.13.11: task_prio() inlined as p->prio - MAX_RT_PRIO).
PRIO_UPSTREAM_FIX = "v2.13.11 (43b9f0431625, 7f1fa63204f0)"


def version_of(variant_report):
    """The LTTng release a variant of report.json ran (2.13.9 before releases were named)."""
    return (variant_report.get("lttng") or {}).get("version") or PRIO_CRASH_RELEASE


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
    return [{"name": n, "feature": feature.value, "variants": per.get(n, {})}
            for n, feature in NAMES.items()]


def _has_fix(series):
    try:
        return any(p.name == PRIO_FIX for p in modbuild.series(series))
    except HarnessError:
        return None


def findings(variants):
    """The shipped-LTTng findings the report cites (report.json `lttng_findings`):
    [] when no variant ran LTTng. Not re-run here: where it is tested, and which
    of this run's LTTng boots carry the fix."""
    ran = {n: v for n, v in variants.items()
           if isinstance(v.get("lttng"), dict) and v["lttng"].get("series")}
    if not ran:
        return []
    booted = {n: v["lttng"]["series"] for n, v in ran.items()
              if version_of(v) == PRIO_CRASH_RELEASE}
    return [{
        "id": "shipped-prio-context-crash",
        "series": "shipped",
        "what": "LTTng 2.13.9 as shipped never calls wrapper_task_prio_init(): "
                "`lttng add-context -k -t prio` succeeds and the first event recorded with "
                "the context calls NULL from prio_record() (lttng-tracer)",
        "classified_as": f"one oops, then `Kernel panic - not syncing: Fatal exception` "
                         f"(the LTTng boot's `{session.APPEND}`): not an oops per event, "
                         "not a hang",
        "tested_by": PRIO_CRASH_TEST,
        "rerun_in_this_run": False,
        "fix": PRIO_FIX,
        "fix_in_booted_series": {n: {"series": s, "has_fix": _has_fix(s)}
                                 for n, s in booted.items()},
        # boots of a later release, where the bug is fixed upstream
        "not_affected": {n: version_of(v) for n, v in ran.items() if n not in booted},
        "upstream_fix": PRIO_UPSTREAM_FIX,
    }]


def _findings_markdown(report, out):
    for f in report.get("lttng_findings") or []:
        booted = ", ".join(f"{n} (`{b['series']}`: {'with' if b['has_fix'] else 'WITHOUT'} "
                           "the fix)" for n, b in f["fix_in_booted_series"].items())
        out.append(f"### Finding of the `{f['series']}` LTTng series: {f['id']}")
        out.append("")
        later = ", ".join(f"{n} (LTTng {v})" for n, v in (f.get("not_affected") or {}).items())
        out.append(f"{f['what']}; classified as {f['classified_as']}. Not re-run by this "
                   f"run (that boot ends in the panic); `{f['tested_by']}` boots the "
                   f"`{f['series']}` series on `stock` and expects exactly that. Patch "
                   f"`{f['fix']}` fixes it. This run's LTTng {PRIO_CRASH_RELEASE} boots: "
                   f"{booted or 'none'}."
                   + (f" Not affected, fixed upstream in {f['upstream_fix']}: {later}."
                      if later else ""))
        out.append("")


def markdown(report, out):
    """Append the LTTng coverage section (and its findings) to `out`, a list of lines."""
    rows = report.get("lttng_coverage") or []
    if not rows:
        return
    names = [n for n in report["variants"] if any(n in r["variants"] for r in rows)]
    out.append("## LTTng coverage: how the real tracer got each name")
    out.append("")
    out.append("Every name LTTng 2.13.9 resolves through its kallsyms wrapper, per variant "
               "(and the LTTng release it ran): "
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
    heads = [f"{n} (LTTng {version_of(report['variants'][n])})" for n in names]
    mdtables.table(out, ["name", "LTTng feature"] + heads, body)
    _findings_markdown(report, out)
