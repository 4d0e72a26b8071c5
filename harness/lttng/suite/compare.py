"""The suite's comparison rule: a point that passes on a line's stock variant and
fails on another variant of the same line (exports, kallsyms, ...) fails the run,
unless a feature the coverage table lists as lost on that variant serves the
script; then the row is kept, not flagged, and its reason names the feature.
A suite in which no point passed or skipped (its guest never ran a script, its
build failed) is a flagged row of its own: it judged nothing.

Works on report.json's variant entries: `kernel_line`, `role`, `lttng_suite`
and the lttng-coverage rows (sources.how, sources.feature, info.feature)."""

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


def explained_by(variant, point_name):
    """The lost feature that serves the point's script, or None."""
    script = _script(point_name)
    for words in sorted(lost(variant)):
        if any(script.startswith(p) for p in SERVES.get(words, ())):
            return words
    return None


def _failed_here(entry, key):
    """(failed, reason) of point `key` on a variant's suite entry: its own failed
    point, or the failure that stood for its whole script (no TAP, the suite step
    failed), or a point it does not have at all."""
    tests = entry.get("tests", [])
    mine = [t for t in tests if _key(t["name"]) == key]
    if mine:
        t = mine[0]
        return t["result"] == "fail", t.get("reason") or ""
    script = _script(key)
    whole = [t for t in tests if t["result"] == "fail"
             and (_key(t["name"]) in (f"{script}:0", "suite:0"))]
    if whole:
        return True, whole[0].get("reason") or ""
    return True, "no such point on this variant"


def regressions(variants):
    """Rows {variant, baseline, point, reason, explained_by, flagged}: every point that
    passes on the stock variant of a kernel line and fails on another variant of it."""
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
        for point in passed:
            failed, reason = _failed_here(v["lttng_suite"], _key(point))
            if not failed:
                continue
            feature = explained_by(v, point)
            if feature:
                reason = f"lost feature: {feature} (coverage table); {reason}".rstrip("; ")
            rows.append({"variant": name, "baseline": base, "point": point,
                         "reason": reason, "explained_by": feature,
                         "flagged": feature is None})
    return rows
