"""One test script's TAP stream -> its points, each pass, fail or skip.

lttng-tools' scripts print TAP through tests/utils/tap/tap.sh: a plan `1..N`,
`ok N - description`, `not ok N - description`, `ok N # skip reason`, diagnostics
`# ...`, and `Bail out! reason`. A stream cut short (the script timed out, the
guest panicked, the script died) still gives every planned point: those that
did not run are failed points whose reason says how the stream ended."""

import re
from dataclasses import dataclass

CUT_SHORT = "TAP stream cut short"      # the reason of a point its stream never reached

PLAN = re.compile(r"^1\.\.(\d+)")
POINT = re.compile(r"^(not ok|ok)\s+(\d+)\s*(?:-\s*)?(.*)$")
SKIP = re.compile(r"#\s*skip\b\s*(.*)$", re.IGNORECASE)
TODO = re.compile(r"#\s*todo\b", re.IGNORECASE)

PASS, FAIL, SKIPPED = "pass", "fail", "skip"
BAIL = "bail out: "         # how a stream that bailed out ended, then its reason


@dataclass(frozen=True)
class Point:
    name: str           # "script:number description"
    result: str         # pass, fail or skip
    reason: str = ""


@dataclass(frozen=True)
class Script:
    script: str
    planned: int        # 0: no plan seen
    points: tuple       # of Point, in number order
    ended: str          # "complete", or how the stream was cut short

    def count(self, result):
        return sum(p.result == result for p in self.points)


def parse(script, text, ended="exit 0"):
    """The points of `script` from its TAP `text`. `ended`: how it finished as the
    guest saw it ("exit N", "timeout after N s", "guest panic", ...)."""
    planned, seen, diag, bail = 0, {}, [], None
    last = None
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
                seen[n] = Point(_name(script, n, desc), SKIPPED, skip.group(1).strip())
            elif ok or TODO.search(rest):
                seen[n] = Point(_name(script, n, desc), PASS)
            else:
                seen[n] = Point(_name(script, n, desc), FAIL, "")
            last = n
            continue
        if line.startswith("Bail out!"):
            bail = line[len("Bail out!"):].strip() or "bail out"
            continue
        if line.startswith("#") and last is not None and seen[last].result == FAIL:
            diag.append((last, line.lstrip("# ").strip()))
    # a failed point's reason: the diagnostics right after it
    for n, text_ in diag:
        p = seen[n]
        if len(p.reason) < 300:
            seen[n] = Point(p.name, p.result, (p.reason + "; " if p.reason else "") + text_)
    for n, p in seen.items():
        if p.result == FAIL and not p.reason:
            seen[n] = Point(p.name, FAIL, "the test reported failure")
    complete = bool(planned) and all(n in seen for n in range(1, planned + 1)) \
        and not bail and ended == "exit 0"
    how = "complete" if complete else (BAIL + bail if bail else ended)
    if not planned and not seen:
        return Script(script, 0, (Point(f"{script}:0 (no TAP)", FAIL,
                                        f"no TAP plan or point; {how}"),), how)
    for n in range(1, planned + 1):
        if n not in seen:
            seen[n] = Point(f"{script}:{n} (not run)", FAIL, f"{CUT_SHORT}: {how}")
    extra = [n for n in seen if planned and n > planned]
    for n in extra:
        p = seen[n]
        seen[n] = Point(p.name, FAIL, f"point {n} beyond the plan 1..{planned}")
    if planned and not complete and how != "complete" and all(
            p.result != FAIL for p in seen.values()):
        # every planned point ran, but the script did not end cleanly
        seen[planned + 1] = Point(f"{script}:{planned + 1} (script end)", FAIL,
                                  f"all {planned} points ran, then: {how}")
    return Script(script, planned, tuple(seen[n] for n in sorted(seen)), how)


def cannot_run(result):
    """Why a script could not run in this guest, or None: it bailed out (the script's
    own word that something it needs is missing), or it skipped every point it
    planned (the skip reasons)."""
    if result.ended.startswith(BAIL):
        return result.ended[len(BAIL):]
    if result.planned and result.count(SKIPPED) == len(result.points):
        why = []
        for p in result.points:
            if p.reason and p.reason not in why:
                why.append(p.reason)
        return "every point skipped: " + ("; ".join(why[:3]) or "no reason given")
    return None


def _name(script, n, desc):
    return f"{script}:{n} {desc}".rstrip()
