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

Reads report.json's variant entries once into typed records (entry.py: points
with a PointStatus, the lost Features of the coverage rows) and judges those; its
rows (Regression) serialise to report.json's `lttng_suite_regressions`."""

from dataclasses import dataclass
from enum import Enum
from typing import Optional

from ..rows.coverage import Feature
from . import entry
from .causes import MIN_RATE
from .entry import NOT_RUN
from .tap import PointStatus, SuitePoint

# An LTTng feature -> the suite scripts (path prefixes under tests/) whose points
# depend on it.
SERVES = {
    Feature.CALLSTACK_USER: ("regression/kernel/test_callstack",),
    Feature.CALLSTACK_KERNEL: ("regression/kernel/test_callstack",),
    Feature.UPROBE: ("regression/kernel/test_userspace_probe",),
    Feature.STATEDUMP_IRQ: ("regression/tools/regen-statedump/",),
    Feature.STATEDUMP_BLOCK: ("regression/tools/regen-statedump/",),
    Feature.SPLICE: ("regression/tools/streaming/", "regression/tools/live/"),
}


class Outcome(Enum):
    """What a flagged point's retry showed."""
    FLAKE = "flake"                         # it passed (or skipped) on the retry
    FAILED_AGAIN = "failed again"           # it failed again while stock passed
    NOT_KERNEL = "not a kernel difference"  # stock failed or skipped it on the retry too
    COULD_NOT_RUN = "could not run"         # the retry could not run its script


@dataclass(frozen=True)
class Got:
    """A point's status on one run of a variant (None: that run could not run its
    script) and why."""
    status: Optional[PointStatus]
    reason: str

    @property
    def result(self):
        """report.json's word: pass, skip, fail, or NOT_RUN."""
        return NOT_RUN if self.status is None else self.status.result


@dataclass(frozen=True)
class Retry:
    outcome: Outcome
    got: Got            # on the variant
    stock: Got          # on its line's stock

    def to_json(self):
        return {"outcome": self.outcome.value, "result": self.got.result,
                "reason": self.got.reason, "stock_result": self.stock.result,
                "stock_reason": self.stock.reason}


@dataclass(frozen=True)
class Regression:
    """A point that passes on its line's stock variant and fails on `variant`, or
    (point None) a suite that judged nothing."""
    variant: str
    baseline: Optional[str]
    point: Optional[SuitePoint]     # stock's passing point
    reason: str
    explained_by: Optional[Feature]
    flagged: bool
    first: Optional[str] = None     # a retried row's first reason
    retry: Optional[Retry] = None

    def to_json(self):
        out = {"variant": self.variant, "baseline": self.baseline,
               "point": self.point.name if self.point else "suite", "reason": self.reason,
               "explained_by": self.explained_by.value if self.explained_by else None,
               "flagged": self.flagged}
        if self.retry is not None:
            out["first"] = {"result": "fail", "reason": self.first}
            out["retry"] = self.retry.to_json()
        return out


def explained_by(variant, script):
    """The lost Feature of a SuiteVariant that serves `script`, or None."""
    for feature in sorted(variant.lost, key=lambda f: f.value):
        if any(script.startswith(p) for p in SERVES.get(feature, ())):
            return feature
    return None


def result_here(indexed, key):
    """Got of point `key` in a SuiteEntry's by_key(): its own point, or the failure
    that stood for its whole script (no TAP) or suite (the suite step failed), or
    a failure for a point it does not have at all."""
    p = indexed.get(key)
    if p is not None:
        return Got(p.status, p.reason)
    for whole in ((key[0], 0), ("suite", 0)):
        p = indexed.get(whole)
        if p is not None and p.status.failed:
            return Got(PointStatus.FAILED, p.reason)
    return Got(PointStatus.FAILED, "no such point on this variant")


def on_retry(variant, key):
    """Got of point `key` in the retry of a SuiteVariant: None with why when it could
    not run the point's script (not asked again there, the retry's suite step failed,
    no guest came up to run it)."""
    retry = variant.suite.retry if variant.suite else None
    script = key[0]
    if retry is None or script not in retry.asked:
        return Got(None, "the script was not run again there")
    if retry.error:
        return Got(None, next((p.reason for p in retry.points if p.reason), retry.error))
    end = retry.end_of(script)
    if end is None:
        return Got(None, "the retry has no result for the script")
    if not end.ran:
        return Got(None, end.ended)
    return result_here(retry.by_key(), key)


def _outcome(row, got, stock):
    """(Outcome, flagged, text) of a flagged row's retry."""
    base = row.baseline
    if got.status is None:
        return Outcome.COULD_NOT_RUN, True, f"retry could not run on {row.variant}: {got.reason}"
    if not got.status.failed:
        return Outcome.FLAKE, False, ("passed on retry" if got.status is PointStatus.PASSED
                                      else f"skipped on retry: {got.reason}")
    again = f"failed again on retry: {got.reason}"
    if stock.status is None:
        return (Outcome.COULD_NOT_RUN, True,
                f"{again}; retry could not run on {base}: {stock.reason}")
    if stock.status is PointStatus.PASSED:
        return Outcome.FAILED_AGAIN, True, again
    verb = "fails" if stock.status.failed else "skips"
    return (Outcome.NOT_KERNEL, False,
            f"{again}; {base} {verb} it on retry too: {stock.reason}")


def judge(row, suites):
    """A flagged Regression judged again by its retry, when its variant has one."""
    variant = suites[row.variant]
    if not row.flagged or row.point is None or variant.suite.retry is None:
        return row
    got = on_retry(variant, row.point.key)
    stock = on_retry(suites[row.baseline], row.point.key)
    outcome, flagged, text = _outcome(row, got, stock)
    return Regression(row.variant, row.baseline, row.point, f"{text} (first: {row.reason})",
                      row.explained_by, flagged, row.reason, Retry(outcome, got, stock))


def judged(suites):
    """Every Regression of {name: SuiteVariant}, each flagged one judged by its retry."""
    return [judge(r, suites) for r in first_rows(suites)]


def regressions(variants):
    """report.json's lttng_suite_regressions of its `variants`: judged(), as JSON."""
    return [r.to_json() for r in judged(entry.read(variants))]


def _nothing(suites):
    """The Regression of each suite in which no point passed or skipped."""
    rows = []
    for name, v in suites.items():
        if v.suite is not None and v.suite.judged_nothing():
            first = next((p.reason for p in v.suite.points if p.reason), "no point")
            rows.append(Regression(name, None, None, f"no point passed or skipped: {first}",
                                   None, True))
    return rows


def _lost_here(v, base, point):
    """The Regression of stock `base`'s passing `point` on SuiteVariant `v`, or None."""
    got = result_here(v.suite.by_key(), point.key)
    if not got.status.failed:
        return None
    feature = explained_by(v, point.script)
    both = base.suite.cut_scripts().get(point.script) \
        if got.status is PointStatus.CUT_SHORT else None
    reason = got.reason
    if feature:
        reason = f"lost feature: {feature.value} (coverage table); {reason}".rstrip("; ")
    elif both:
        reason = (f"not a kernel difference: {base.name}'s run of the script was cut "
                  f"short too ({both}); {reason}")
    return Regression(v.name, base.name, point, reason, feature,
                      feature is None and both is None)


def first_rows(suites):
    """The Regressions of {name: SuiteVariant} as the first run of each suite has them
    (the retry phase plans from these): a suite that judged nothing, then every point
    that passes on the stock variant of a kernel line and fails on another of it."""
    rows = _nothing(suites)
    stock = {v.kernel_line: v for v in suites.values()
             if v.role == "stock" and v.suite is not None}
    for v in suites.values():
        base = stock.get(v.kernel_line)
        if base is None or base.name == v.name or v.suite is None:
            continue
        for point in base.suite.points:
            if point.status is PointStatus.PASSED:
                row = _lost_here(v, base, point)
                if row is not None:
                    rows.append(row)
    return rows


def first_pass(variants):
    """report.json's variants' first_rows, as JSON."""
    return [r.to_json() for r in first_rows(entry.read(variants))]


def coverage_reasons(variants):
    """Why the run fails on how much of the suite a stock variant's judge sees: each
    stock variant (role) that ran the whole suite (nothing left unselected, no failed
    step) must pass at least causes.MIN_RATE of its planned points, and every point
    it does not pass must have a cause (causes.toml). One line per failure."""
    out = []
    for name, v in variants.items():
        s = v.get("lttng_suite") or {}
        c = s.get("coverage")
        if v.get("role") != "stock" or not c or s.get("error") or s.get("not_selected"):
            continue
        if c["rate"] < MIN_RATE:
            out.append(f"lttng-suite: {name}: {c['passed']}/{c['planned']} points pass "
                       f"({c['rate']:.1%}), under {MIN_RATE:.0%}")
        if c["no_cause"]:
            out.append(f"lttng-suite: {name}: {c['no_cause']} point(s) that do not pass "
                       "have no cause (harness/lttng/suite/causes.toml)")
    return out
