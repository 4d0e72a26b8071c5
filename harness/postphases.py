"""The phases after every variant job of a run has come home: one list for every way
a run is carried out, so a local run and a --cluster run run the same ones.

A phase reads the published results (a snapshot: every variant's job over) and
returns the VariantResults to publish again. What runs a phase's work is the
orchestrator's business: `runner_for(results)` gives the suite runner of this
run (run.py's on this host, cluster/pool.py's as cluster jobs), the phase
decides what to run with it.
"""

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .model.results import VariantResult
from .lttng.suite import retry as suiteretry

# runner(variant name, scripts) -> that variant's retry entry (lttng/suite/retry.py)
SuiteRunner = Callable[[str, tuple], dict]


@dataclass(frozen=True)
class PostPhase:
    name: str                           # its key in report.json's timings (seconds)
    wanted: Callable[[Any], bool]       # RunOptions -> does this run have the phase
    run: Callable[[Mapping[str, VariantResult], SuiteRunner], list]


POST_PHASES = (
    # each flagged point of lttng-tools' suite once more, after every first run
    PostPhase("suite_retry", lambda opts: bool(opts.lttng_suite), suiteretry.phase),
)


def run_all(board, runner_for, opts) -> dict:
    """Run the wanted POST_PHASES in order over `board` (run.Board), publishing what
    each returns; {phase name: seconds}."""
    seconds = {}
    for phase in POST_PHASES:
        if not phase.wanted(opts):
            continue
        t0 = time.monotonic()
        results = board.snapshot()
        for result in phase.run(results, runner_for(results)):
            board.publish(result)
        seconds[phase.name] = round(time.monotonic() - t0, 1)
    return seconds
