"""A variant's suite as typed records, read once from report.json's variant entry
(compare.py and retry.py judge these, never report.json's text): its `lttng_suite`
entry (runner.py's: every point, every script's end, a failed step, the retry
phase's entry as `retry` with the scripts `asked`) and the LTTng features its
coverage rows give as lost."""

from dataclasses import dataclass
from typing import Optional

from ..rows.coverage import lost_features
from .tap import PointStatus, SuitePoint

NOT_RUN = "not run"     # how guest.results ends a script no guest began


@dataclass(frozen=True)
class ScriptEnd:
    """One script of a suite entry's `scripts`: how its stream ended."""
    script: str
    ended: str

    @property
    def ran(self):
        """A guest began the script (guest.results ends one it never began "not run")."""
        return not self.ended.startswith(NOT_RUN)


@dataclass(frozen=True)
class SuiteEntry:
    points: tuple               # of SuitePoint, in report order
    scripts: tuple = ()         # of ScriptEnd
    error: Optional[str] = None     # the step that failed (no source, a failed build)
    retry: Optional["SuiteEntry"] = None
    asked: tuple = ()           # a retry's scripts
    has_tests: bool = True      # False: the entry lists no points at all (judges nothing)

    @classmethod
    def from_json(cls, d):
        retry = d.get("retry")
        return cls(tuple(SuitePoint.from_json(t) for t in d.get("tests", [])),
                   tuple(ScriptEnd(s["script"], str(s.get("ended", "")))
                         for s in d.get("scripts", [])),
                   d.get("error"), cls.from_json(retry) if retry else None,
                   tuple(d.get("asked", ())), "tests" in d)

    def by_key(self):
        """{(script, number): the first point of that key}."""
        out = {}
        for p in self.points:
            out.setdefault(p.key, p)
        return out

    def judged_nothing(self):
        """No point passed or skipped: no guest came up, the build failed."""
        return self.has_tests and not any(p.status in (PointStatus.PASSED, PointStatus.SKIPPED)
                       for p in self.points)

    def cut_scripts(self):
        """script -> how its stream ended, for each script a hang or an oops cut short."""
        out = {}
        for p in self.points:
            if p.status is PointStatus.CUT_SHORT:
                out.setdefault(p.script, p.detail)
        return out

    def end_of(self, script):
        """The ScriptEnd of `script`, or None."""
        return next((s for s in self.scripts if s.script == script), None)


@dataclass(frozen=True)
class SuiteVariant:
    """What the comparison needs of one report.json variant."""
    name: str
    kernel_line: Optional[str]
    role: Optional[str]
    suite: Optional[SuiteEntry]     # None: the variant did not run the suite
    lost: frozenset = frozenset()   # of Feature

    @classmethod
    def from_json(cls, name, v):
        suite = v.get("lttng_suite")
        return cls(name, v.get("kernel_line"), v.get("role"),
                   SuiteEntry.from_json(suite) if suite else None,
                   lost_features(v.get("values", [])))


def read(variants):
    """{name: SuiteVariant} of report.json's `variants`, in their order."""
    return {n: SuiteVariant.from_json(n, v) for n, v in variants.items()}
