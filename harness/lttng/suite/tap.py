"""One test script's TAP stream -> its typed points (SuitePoint, PointStatus).

lttng-tools' scripts print TAP through tests/utils/tap/tap.sh: a plan `1..N`,
`ok N - description`, `not ok N - description`, `ok N # skip reason`, diagnostics
`# ...`, and `Bail out! reason`. A stream cut short (the script timed out, the
guest panicked, the script died) still gives every planned point: those that
did not run are CUT_SHORT points (in report.json: failed, their reason
"TAP stream cut short: <how it ended>")."""

import re
from dataclasses import dataclass, replace
from enum import Enum

from ...errors import HarnessError

CUT_SHORT = "TAP stream cut short"      # report.json's reason prefix of a CUT_SHORT point
NOT_RUN_DESC = "(not run)"              # the description of a point its stream never reached

PLAN = re.compile(r"^1\.\.(\d+)")
POINT = re.compile(r"^(not ok|ok)\s+(\d+)\s*(?:-\s*)?(.*)$")
SKIP = re.compile(r"#\s*skip\b\s*(.*)$", re.IGNORECASE)
TODO = re.compile(r"#\s*todo\b", re.IGNORECASE)

BAIL = "bail out: "         # how a stream that bailed out ended, then its reason


class PointStatus(Enum):
    """What became of one planned point. A TODO point counts as PASSED (TAP: its
    failure is expected); a bail-out is how a Script ended (Script.bail), its
    unreached points CUT_SHORT."""
    PASSED = "pass"
    FAILED = "fail"
    SKIPPED = "skip"
    CUT_SHORT = "cut short"     # planned, but its stream ended before it (hang, panic, ...)

    @property
    def result(self):
        """report.json's word: pass, fail or skip (a point cut short failed)."""
        return "fail" if self is PointStatus.CUT_SHORT else self.value

    @property
    def failed(self):
        return self in (PointStatus.FAILED, PointStatus.CUT_SHORT)


@dataclass(frozen=True)
class SuitePoint:
    """One point of a script's TAP stream. `number` 0 stands for the whole script (no
    TAP at all) or, with script "suite", the whole suite (its step failed)."""
    script: str
    number: int
    status: PointStatus
    description: str = ""   # TAP's, or "(not run)", "(no TAP)", "(script end)"
    detail: str = ""        # skip reason, failure diagnostics; CUT_SHORT: how it ended

    @property
    def key(self):
        """The point's identity across variants: (script, number); a variant whose
        stream was cut short has no description for it."""
        return (self.script, self.number)

    @property
    def name(self):
        return f"{self.script}:{self.number} {self.description}".rstrip()

    @property
    def result(self):
        return self.status.result

    @property
    def reason(self):
        """report.json's reason."""
        if self.status is PointStatus.CUT_SHORT:
            return f"{CUT_SHORT}: {self.detail}"
        return self.detail

    def to_json(self):
        return {"name": self.name, "result": self.result, "reason": self.reason}

    @classmethod
    def from_json(cls, d):
        """The point of report.json's {name, result, reason}. CUT_SHORT is read from the
        two marks only parse() writes together: the description "(not run)" and the
        CUT_SHORT reason (report.json has no status key of its own)."""
        ident, _, desc = d["name"].partition(" ")
        script, _, number = ident.rpartition(":")
        if not script or not number.isdigit():
            raise HarnessError("verify", f"report.json: suite point {d['name']!r} is not "
                                         "named script:number")
        reason = d.get("reason") or ""
        status = PointStatus(d["result"])
        if status is PointStatus.FAILED and desc == NOT_RUN_DESC \
                and reason.startswith(CUT_SHORT + ": "):
            status, reason = PointStatus.CUT_SHORT, reason[len(CUT_SHORT) + 2:]
        return cls(script, int(number), status, desc, reason)


@dataclass(frozen=True)
class Script:
    script: str
    planned: int        # 0: no plan seen
    points: tuple       # of SuitePoint, in number order
    ended: str          # "complete", or how the stream was cut short
    bail: str = ""      # the script's Bail out! reason, if it bailed out

    def count(self, result):
        """How many points report.json gives `result` (pass, fail or skip)."""
        return sum(p.result == result for p in self.points)


def _read(script, text):
    """(planned, {n: SuitePoint}, [(n, diagnostic)], bail reason or None) of a stream."""
    planned, seen, diag, bail, last = 0, {}, [], None, None
    for raw in text.splitlines():
        line = raw.rstrip()
        m = PLAN.match(line)
        if m and not planned:
            planned = int(m.group(1))
            continue
        m = POINT.match(line)
        if m:
            ok, n, rest = m.group(1) == "ok", int(m.group(2)), m.group(3).strip()
            skip = SKIP.search(rest)
            desc = SKIP.sub("", rest).strip() if skip else rest
            if skip and ok:
                seen[n] = SuitePoint(script, n, SKIPPED, desc, skip.group(1).strip())
            else:
                status = PASSED if ok or TODO.search(rest) else FAILED
                seen[n] = SuitePoint(script, n, status, desc)
            last = n
            continue
        if line.startswith("Bail out!"):
            bail = line[len("Bail out!"):].strip() or "bail out"
            continue
        if line.startswith("#") and last is not None and seen[last].status is FAILED:
            diag.append((last, line.lstrip("# ").strip()))
    return planned, seen, diag, bail


def _with_reasons(seen, diag):
    """A failed point's reason: the diagnostics right after it, else a default."""
    for n, text in diag:
        p = seen[n]
        if len(p.detail) < 300:
            seen[n] = replace(p, detail=(p.detail + "; " if p.detail else "") + text)
    for n, p in seen.items():
        if p.status is FAILED and not p.detail:
            seen[n] = replace(p, detail="the test reported failure")


def parse(script, text, ended="exit 0"):
    """The Script of `script` from its TAP `text`. `ended`: how it finished as the
    guest saw it ("exit N", "timeout after N s", "guest panic", ...)."""
    planned, seen, diag, bail = _read(script, text)
    _with_reasons(seen, diag)
    complete = bool(planned) and all(n in seen for n in range(1, planned + 1)) \
        and not bail and ended == "exit 0"
    how = "complete" if complete else (BAIL + bail if bail else ended)
    if not planned and not seen:
        return Script(script, 0, (SuitePoint(script, 0, FAILED, "(no TAP)",
                                             f"no TAP plan or point; {how}"),), how, bail or "")
    for n in range(1, planned + 1):
        if n not in seen:
            seen[n] = SuitePoint(script, n, PointStatus.CUT_SHORT, NOT_RUN_DESC, how)
    for n in [n for n in seen if planned and n > planned]:
        seen[n] = replace(seen[n], status=FAILED,
                          detail=f"point {n} beyond the plan 1..{planned}")
    if planned and not complete and not any(p.status.failed for p in seen.values()):
        # every planned point ran, but the script did not end cleanly
        seen[planned + 1] = SuitePoint(script, planned + 1, FAILED, "(script end)",
                                       f"all {planned} points ran, then: {how}")
    return Script(script, planned, tuple(seen[n] for n in sorted(seen)), how, bail or "")


def cannot_run(result):
    """Why a script could not run in this guest, or None: it bailed out (the script's
    own word that something it needs is missing), or it skipped every point it
    planned (the skip reasons)."""
    if result.bail:
        return result.bail
    if result.planned and all(p.status is SKIPPED for p in result.points):
        why = []
        for p in result.points:
            if p.detail and p.detail not in why:
                why.append(p.detail)
        return "every point skipped: " + ("; ".join(why[:3]) or "no reason given")
    return None


PASSED, FAILED, SKIPPED = PointStatus.PASSED, PointStatus.FAILED, PointStatus.SKIPPED
