"""The run's verdict, decided on the typed results before any report is written.

judge(results, order) -> RunVerdict: per variant its verdict (its own rows and
its failed step, VariantResult.verdict), then the rules across variants: every
seed's claim holds where it is carried (checks/seeds.py), what must be identical
across variants is (checks/crossvariant.py), and no point of lttng-tools' suite
that passes on the line's stock is lost on another variant (lttng/suite/compare.py,
with its retries), and a stock variant that ran the whole suite sees enough of it
(98 % pass, every other point with a cause: lttng/suite/causes.py). The run passes when every rule does; its exit status is the
first failed step's (in the order asked for), else 0 or 1 (errors.EXIT). The
report writers (report/assemble.py) render the RunVerdict; they decide nothing.
"""

import enum
from dataclasses import dataclass
from typing import Mapping, Optional

from .checks import crossvariant, seeds
from .model.results import StepError
from .errors import EXIT, HarnessError
from .lttng.suite import compare as suitecompare


class Verdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class RunVerdict:
    verdict: Verdict
    variants: Mapping[str, Verdict]     # each variant's own, in the order asked for
    reasons: tuple                      # why the run fails, a line each; () when it passes
    exit_status: int
    first_error: Optional[StepError]    # the first failed step, in the order asked for
    seeds: tuple                        # the rows the rules judged, for the report to show
    across: tuple
    suite_regressions: tuple

    def error(self) -> Optional[HarnessError]:
        """The first failed step as a HarnessError (its one line for the terminal)."""
        e = self.first_error
        return None if e is None else HarnessError(e.step, e.message, e.log)


def decide(variants, seed_rows=(), across=(), suite_rows=(), suite_coverage=()):
    """(Verdict, reasons) from each variant's verdict ({name: Verdict or "pass"/"fail"}),
    the rows of the three cross-variant rules and the suite coverage rule's lines."""
    reasons = [] if variants else ["no variant ran"]
    reasons += [f"seed {r['seed']}: its claim does not hold" for r in seed_rows
                if r["holds"] is False]
    reasons += [f"across variants: {r['what']} differs where it must not" for r in across
                if r["flagged"]]
    reasons += [f"lttng-suite: {r['variant']}: {r['point']} lost against {r['baseline']}"
                for r in suite_rows if r["flagged"]]
    reasons += list(suite_coverage)
    reasons += [f"variant {n}: {Verdict(v).value}" for n, v in variants.items()
                if Verdict(v) is not Verdict.PASS]
    return (Verdict.FAIL if reasons else Verdict.PASS), tuple(reasons)


def judge(results, order) -> RunVerdict:
    """The RunVerdict of `results` ({variant: VariantResult}, a snapshot) for the
    variants asked for in `order`."""
    results = {n: results[n] for n in order if n in results}
    seed_rows = tuple(seeds.evaluate(results))
    across = tuple(crossvariant.compare(results))
    as_json = {n: r.to_json() for n, r in results.items()}
    suite_rows = tuple(suitecompare.regressions(as_json))
    coverage = tuple(suitecompare.coverage_reasons(as_json))
    variants = {n: Verdict(r.verdict) for n, r in results.items()}
    verdict, reasons = decide(variants, seed_rows, across, suite_rows, coverage)
    first_error = next((r.error for r in results.values() if r.error is not None), None)
    if first_error is not None:
        status = first_error.exit_status
    else:
        status = 0 if verdict is Verdict.PASS else EXIT["verdict"]
    return RunVerdict(verdict, variants, reasons, status, first_error, seed_rows, across,
                      suite_rows)
