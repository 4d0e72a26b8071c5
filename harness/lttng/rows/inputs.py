"""What one variant's lttng rows are built from (Inputs: the trace summary, the
guest's lines, gdb's stop, the variant's expectation) and the verdict of a feature
row under that expectation (Expectation.row)."""

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Optional

from ...model.results import Check
from ..boot.gdbstop import GdbStop
from ..boot.guestlines import GuestData
from ..boot.trace import TraceSummary

DEFAULT_WHY = "the variant's expectation lists it"


@dataclass(frozen=True)
class Expectation:
    """One LTTng feature on one variant: whether the variant file lists it as lost,
    and why LTTng needs a name for it (step.WHY)."""
    feature: str            # a variant file's `lost` word: prio, callstack_user, ...
    lost: bool
    why: str = DEFAULT_WHY

    def row(self, key, present, right, sources, info=None):
        """The lttng:<key> row: a lost feature must be absent (present, the expectation
        is wrong); one not lost must be present and `right`."""
        info = info or {}
        if self.lost:
            if present:
                return Check("lttng", key, sources, False, info,
                             f"expected lost on this variant ({self.why}), but LTTng "
                             "recorded it")
            return Check("lttng", key, sources, True, info,
                         f"lost on this variant: {self.why}")
        return Check("lttng", key, sources, bool(present and right), info,
                     None if present else f"LTTng recorded no {self.feature}: {self.why}")


@dataclass(frozen=True)
class Inputs:
    """The parsed inputs of one variant's lttng rows."""
    summary: TraceSummary
    guest: GuestData
    truth: Optional[GdbStop] = None     # None: gdb read nothing at the quiet point
    lost: frozenset = frozenset()       # the variant file's lttng.lost words
    why: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self):
        object.__setattr__(self, "lost", frozenset(self.lost))
        object.__setattr__(self, "why", MappingProxyType(dict(self.why or {})))

    @classmethod
    def from_json(cls, summary, guest, truth=None, lost=(), why=None):
        """The Inputs of the JSON a run keeps beside its trace (summary.json, guest.json,
        gdb.json); each parsed as the boot parses it."""
        return cls(TraceSummary.parse(summary), GuestData.parse(guest),
                   None if truth is None else GdbStop.parse(truth), lost, why or {})

    def expect(self, feature):
        return Expectation(feature, feature in self.lost, self.why.get(feature, DEFAULT_WHY))
