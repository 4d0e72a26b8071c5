"""Why a point of LTTng's suite does not pass where the kernel is not to blame.

causes.toml lists each cause found so far: an upstream bug (with its id), a TCG
limit that was measured, a configuration the guest cannot be given. A cause names
the scripts it covers, optionally the point numbers, the kernel lines and a regex
the point's reason must match. Every
point of a suite entry that fails or is skipped gets the id of the first cause that
covers it, or none: report.json's `cause` of each point, the entry's `causes` (what
each id means) and `coverage` (planned, passed, the rate, how many have no cause).
On a stock variant that ran the whole suite, the run fails below MIN_RATE passed
or with a point that has no cause (compare.coverage_reasons)."""

import enum
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ...errors import HarnessError
from .tap import SuitePoint

CAUSES = Path(__file__).with_name("causes.toml")
MIN_RATE = 0.98         # issue 39: the judge sees at least 98 % of its suite
KEYS = {"kind", "text", "ref", "scripts", "points", "lines", "reason"}


class Kind(enum.Enum):
    UPSTREAM = "upstream bug"
    TCG = "TCG limit"
    CONFIG = "guest configuration"


@dataclass(frozen=True)
class Cause:
    id: str
    kind: Kind
    text: str
    ref: str
    scripts: tuple          # script paths as report.json names them
    points: tuple = ()      # point numbers; () = every point of the scripts
    lines: tuple = ()       # kernel lines; () = every line
    reason: str = ""        # a regex the point's report.json reason must match; "" = any

    def covers(self, point, line):
        return (point.script in self.scripts and (not self.points or point.number in self.points)
                and (not self.lines or line in self.lines)
                and (not self.reason or re.search(self.reason, point.reason) is not None))

    def to_json(self):
        return {"kind": self.kind.value, "text": self.text, "ref": self.ref}


def load(path=CAUSES):
    """The causes of `path`, in file order; a bad file is one HarnessError line."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise HarnessError("usage", f"{path}: {err}") from err
    out = []
    for cid, c in data.items():
        bad = set(c) - KEYS if isinstance(c, dict) else {"(not a table)"}
        if bad or not {"kind", "text", "ref", "scripts"} <= set(c):
            raise HarnessError("usage", f"{path}: [{cid}]: keys must be {sorted(KEYS)} "
                                        f"(kind, text, ref, scripts required)")
        try:
            kind = Kind(c["kind"])
        except ValueError:
            raise HarnessError("usage", f"{path}: [{cid}]: kind {c['kind']!r} is not one of "
                                        f"{[k.value for k in Kind]}") from None
        try:
            re.compile(c.get("reason", ""))
        except re.error as err:
            raise HarnessError("usage", f"{path}: [{cid}]: reason: {err}") from None
        out.append(Cause(cid, kind, c["text"], c["ref"], tuple(c["scripts"]),
                         tuple(c.get("points", ())), tuple(c.get("lines", ())),
                         c.get("reason", "")))
    return tuple(out)


def annotate(entry, line, causes):
    """A copy of suite entry `entry` (runner.py's JSON) with each non-passing point's
    `cause`, the `causes` it names and its `coverage`."""
    tests, used, uncaused, passed = [], {}, 0, 0
    for t in entry.get("tests", []):
        t = dict(t)
        if t["result"] == "pass":
            passed += 1
        else:
            p = SuitePoint.from_json(t)
            c = next((c for c in causes if c.covers(p, line)), None)
            t["cause"] = c.id if c else None
            if c:
                used[c.id] = c.to_json()
            else:
                uncaused += 1
        tests.append(t)
    planned = len(tests)
    return {**entry, "tests": tests, "causes": used,
            "coverage": {"planned": planned, "passed": passed, "no_cause": uncaused,
                         "rate": round(passed / planned, 4) if planned else 0.0}}
