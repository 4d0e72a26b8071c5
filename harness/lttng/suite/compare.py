"""The suite's comparison rule: a point that passes on a line's stock variant and
fails on another variant of the same line (exports, kallsyms, ...) fails the run,
unless a feature the coverage table lists as lost on that variant serves the
script; then the row is kept, not flagged, and its reason names the feature.
A suite in which no point passed or skipped (its guest never ran a script, its
build failed) is a flagged row of its own: it judged nothing.

A point the variant lost to a cut-short TAP stream (its guest hung or oopsed)
in a script whose run on stock was cut short too is kept, not flagged: both
kernels stop in that script, and where is timing.

A flagged point whose script was run again (retry.py: lttng_suite.<variant>.retry
on the variant and on its stock) counts only when it fails again on the variant
while it passes on stock; a point that passes on the retry is kept as a flake,
one that stock fails (or skips) on the retry too as no kernel difference, and a
retry that could not run the script on either counts, saying so. A variant with
no retry entry (no retry phase ran) is judged on its first run alone.

Works on report.json's variant entries: `kernel_line`, `role`, `lttng_suite`
and the lttng-coverage rows (sources.how, sources.feature, info.feature)."""

from .tap import CUT_SHORT

# An LTTng feature (coverage.NAMES' words) -> the suite scripts (path prefixes
# under tests/) whose points depend on it.
SERVES = {
    "callstack-user context": ("regression/kernel/test_callstack",),
    "callstack-kernel context": ("regression/kernel/test_callstack",),
    "userspace probes": ("regression/kernel/test_userspace_probe",),
    "statedump of interrupts": ("regression/tools/regen-statedump/",),
    "statedump of block devices": ("regression/tools/regen-statedump/",),
    "splice of ring buffer to pipe": ("regression/tools/streaming/",
                                      "regression/tools/live/"),
}


def lost(variant):
    """The feature words the coverage rows of a report.json variant give as lost: the
    status "lost (as expected)" (the variant file's `lost`) or "lost: no <event>
    event". A name the build cannot resolve whose rows fail ("wrong or missing")
    or that the session does not exercise is no excuse: the suite judges it."""
    out = set()
    for c in variant.get("values", []):
        if c.get("kind") != "lttng-coverage":
            continue
        if str((c.get("sources") or {}).get("feature", "")).startswith("lost"):
            out.add((c.get("info") or {}).get("feature"))
    return out - {None}


def _script(point_name):
    return point_name.split(":", 1)[0]


def _key(point_name):
    """"script:N": a point's identity (its description may be missing on a variant
    whose stream was cut short)."""
    return point_name.split(" ", 1)[0]


def points(entry):
    """A suite entry's points by key ("script:N"), the first of each key: indexed once,
    as every stock point is looked up on each variant."""
    out = {}
    for t in entry.get("tests", []):
        out.setdefault(_key(t["name"]), t)
    return out


def cut_scripts(entry):
    """script -> how its stream was cut short, for each script of a suite entry whose
    TAP stream a hang or an oops cut short. Where a variant's and stock's guests both
    stopped answering in one script, where the silence fell is timing, not the kernel
    (clear/test_kernel, snapshots/test_kernel and test_notification_multi_app hang
    every variant, stock included, at a different point each run)."""
    out = {}
    for t in entry.get("tests", []):
        reason = str(t.get("reason", ""))
        if reason.startswith(CUT_SHORT):
            out.setdefault(_script(t["name"]), reason.removeprefix(CUT_SHORT + ": "))
    return out


def explained_by(variant, point_name):
    """The lost feature that serves the point's script, or None."""
    script = _script(point_name)
    for words in sorted(lost(variant)):
        if any(script.startswith(p) for p in SERVES.get(words, ())):
            return words
    return None


def _result_here(indexed, key):
    """(result, reason) of point `key` in a suite entry's points(): its own point, or
    the failure that stood for its whole script (no TAP, the suite step failed), or
    a failure for a point it does not have at all."""
    t = indexed.get(key)
    if t is not None:
        return t["result"], t.get("reason") or ""
    for whole in (f"{_script(key)}:0", "suite:0"):
        t = indexed.get(whole)
        if t is not None and t["result"] == "fail":
            return "fail", t.get("reason") or ""
    return "fail", "no such point on this variant"


NOT_RUN = "not run"     # a retry's result when it could not run the point's script


def on_retry(variant, key):
    """(result, reason) of point `key` in the retry of a report.json variant: pass,
    skip, fail, or NOT_RUN with why (the script was not asked again there, the
    retry's suite step failed, no guest came up to run it)."""
    retry = (variant.get("lttng_suite") or {}).get("retry")
    script = _script(key)
    if not retry or script not in retry.get("asked", ()):
        return NOT_RUN, "the script was not run again there"
    if retry.get("error"):
        why = next((t.get("reason") for t in retry.get("tests", []) if t.get("reason")),
                   retry["error"])
        return NOT_RUN, why
    ran = [s for s in retry.get("scripts", []) if s.get("script") == script]
    if not ran or str(ran[0].get("ended", "")).startswith(NOT_RUN):
        return NOT_RUN, ran[0]["ended"] if ran else "the retry has no result for the script"
    return _result_here(points(retry), key)


def _judge(row, variants):
    """A flagged row judged again by its retry: `flagged`, `reason` ("passed on retry
    (first: ...)", "failed again on retry: ..."), and `first` and `retry` objects."""
    variant = variants[row["variant"]]
    if (not row["flagged"] or row["point"] == "suite"
            or not (variant.get("lttng_suite") or {}).get("retry")):
        return row
    key, base, first = _key(row["point"]), row["baseline"], row["reason"]
    got, why = on_retry(variant, key)
    stock_got, stock_why = on_retry(variants[base], key)
    if got == NOT_RUN:
        outcome, flagged = "could not run", True
        text = f"retry could not run on {row['variant']}: {why}"
    elif got != "fail":
        outcome, flagged = "flake", False
        text = "passed on retry" if got == "pass" else f"skipped on retry: {why}"
    elif stock_got == NOT_RUN:
        outcome, flagged = "could not run", True
        text = f"failed again on retry: {why}; retry could not run on {base}: {stock_why}"
    elif stock_got == "pass":
        outcome, flagged = "failed again", True
        text = f"failed again on retry: {why}"
    else:
        outcome, flagged = "not a kernel difference", False
        verb = "fails" if stock_got == "fail" else "skips"
        text = f"failed again on retry: {why}; {base} {verb} it on retry too: {stock_why}"
    return {**row, "flagged": flagged, "reason": f"{text} (first: {first})",
            "first": {"result": "fail", "reason": first},
            "retry": {"outcome": outcome, "result": got, "reason": why,
                      "stock_result": stock_got, "stock_reason": stock_why}}


def regressions(variants):
    """first_pass's rows, each flagged one judged again by its retry when it has one."""
    return [_judge(r, variants) for r in first_pass(variants)]


def first_pass(variants):
    """Rows {variant, baseline, point, reason, explained_by, flagged}: every point that
    passes on the stock variant of a kernel line and fails on another variant of it,
    as the first run of each suite has it (the retry phase plans from these)."""
    rows = []
    for name, v in variants.items():
        tests = (v.get("lttng_suite") or {}).get("tests")
        if tests is not None and not any(t["result"] in ("pass", "skip") for t in tests):
            # nothing ran (no guest came up, no build): no baseline, nothing judged
            first = next((t.get("reason") for t in tests if t.get("reason")), "no point")
            rows.append({"variant": name, "baseline": None, "point": "suite",
                         "reason": f"no point passed or skipped: {first}",
                         "explained_by": None, "flagged": True})
    stock = {v.get("kernel_line"): n for n, v in variants.items()
             if v.get("role") == "stock" and v.get("lttng_suite")}
    for name, v in variants.items():
        base = stock.get(v.get("kernel_line"))
        if base is None or base == name or not v.get("lttng_suite"):
            continue
        passed = [t["name"] for t in variants[base]["lttng_suite"].get("tests", [])
                  if t["result"] == "pass"]
        here, stock_cut = points(v["lttng_suite"]), cut_scripts(variants[base]["lttng_suite"])
        for point in passed:
            result, reason = _result_here(here, _key(point))
            if result != "fail":
                continue
            feature = explained_by(v, point)
            both = stock_cut.get(_script(point)) if reason.startswith(CUT_SHORT) else None
            if feature:
                reason = f"lost feature: {feature} (coverage table); {reason}".rstrip("; ")
            elif both:
                reason = (f"not a kernel difference: {base}'s run of the script was cut "
                          f"short too ({both}); {reason}")
            rows.append({"variant": name, "baseline": base, "point": point,
                         "reason": reason, "explained_by": feature,
                         "flagged": feature is None and both is None})
    return rows
