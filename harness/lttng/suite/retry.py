"""The suite's retry phase: a flagged point is run once more before it counts.

On a loaded host a single run of lttng-tools' scripts is not deterministic (a
guest silent for 180 s cuts a TAP stream short; test_clock_override:21 is a
timing test), so after every variant's suite has run, each script with a point
the comparison rule flags (compare.first_pass) runs again: on its variant and
on the stock variant of the same kernel line, one guest per variant with all
its scripts, one variant after the other. Each retry is that variant's
`lttng_suite.retry` in report.json (run.py's entry of those scripts, and
`asked`: the scripts); compare.regressions then judges the flagged points by it.

Not run again: a point a lost feature explains (it is not flagged), and the
points of a variant whose suite judged nothing (its own flagged row stands, so
the run fails anyway)."""

from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import HarnessError
from ...progress import say
from . import compare, entry, runner as suiterun
from .tap import NOT_RUN_DESC, PointStatus, SuitePoint


@dataclass(frozen=True)
class Ask:
    """The scripts to run again on one variant."""
    variant: str
    scripts: tuple


def plan(variants):
    """The Asks of report.json's `variants` (first runs only), in their order: each
    variant's scripts with a flagged point, and its line's stock with the scripts of
    every variant of the line."""
    rows = [r for r in compare.first_rows(entry.read(variants)) if r.flagged]
    judged_nothing = {r.variant for r in rows if r.point is None}
    want = {}
    for r in rows:
        if r.point is None or r.variant in judged_nothing:
            continue
        for name in (r.variant, r.baseline):
            want.setdefault(name, set()).add(r.point.script)
    return tuple(Ask(n, tuple(sorted(want[n]))) for n in variants if n in want)


def _failed(err):
    """A retry whose runner raised, as runner.run_or_failure records a failed step."""
    point = SuitePoint("suite", 0, PointStatus.FAILED, NOT_RUN_DESC, err.one_line())
    return {"error": err.step, "tests": [point.to_json()]}


def run(asks, runner):
    """{variant: its retry entry}. `runner(variant, scripts)` runs the suite of those
    scripts on that variant and returns its run.run_or_failure entry; the asks run
    one after the other, since load is what made their points fail."""
    out = {}
    for i, ask in enumerate(asks, 1):
        say("suite-retry", f"{i}/{len(asks)} {ask.variant}: {len(ask.scripts)} script(s) "
                           f"again: {', '.join(ask.scripts)}")
        try:
            entry = runner(ask.variant, ask.scripts)
        except HarnessError as err:
            if err.step == "interrupted":
                raise
            say("error", f"suite-retry: {err.one_line()}")
            entry = _failed(err)
        out[ask.variant] = {**entry, "asked": list(ask.scripts)}
    return out


def attach(results, retried):
    """New VariantResults of the variants in `retried`, each with its retry entry as
    lttng_suite.retry; the published ones are not changed."""
    out = []
    for name, entry in retried.items():
        r = results[name]
        suite = {**(r.facts.get("lttng_suite") or {}), "retry": entry}
        out.append(replace(r, facts={**r.facts, "lttng_suite": suite}))
    return out


def phase(results, runner):
    """The retry phase over `results` ({variant: VariantResult}, every variant's run
    over): the VariantResults to publish again (none when nothing was flagged)."""
    variants = {n: r.to_json() for n, r in results.items()}
    asks = plan(variants)
    if not asks:
        say("suite-retry", "no flagged point: nothing to run again")
        return []
    new = attach(results, run(asks, runner))
    variants.update({r.name: r.to_json() for r in new})
    outcomes = {}
    for row in compare.judged(entry.read(variants)):
        if row.retry is not None:
            outcomes[row.retry.outcome.value] = outcomes.get(row.retry.outcome.value, 0) + 1
    say("suite-retry", "flagged points run again: " + (", ".join(
        f"{k} {n}" for k, n in sorted(outcomes.items())) or "none judged"))
    return new


def local_runner(variants, trees, results, rundir, opts):
    """The runner of this host's run: the suite of the scripts in a guest of the
    variant's built tree with its first run's LTTng build, in
    <rundir>/<variant>/retry/lttng-suite/. `variants`: the Variant objects."""
    by_name = {v.name: v for v in variants}

    def runner(name, scripts):
        build = (results[name].facts.get("lttng") or {}).get("build_dir")
        if name not in trees or not build:
            raise HarnessError("suite", f"{name}: no built tree or LTTng build to run "
                                        "the suite again with")
        return suiterun.run_or_failure(by_name[name], trees[name], Path(build),
                                       Path(rundir) / name / "retry", opts,
                                       opts.lttng_suite_timeout, tuple(scripts), exact=True)
    return runner
