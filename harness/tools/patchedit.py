"""Editing a file or a patch for a mutant: each (find, replace) applied exactly once,
and an edited patch's hunk headers recounted so that git apply takes it again."""

import re

from ..errors import HarnessError


def mutate(text, edits, what="file"):
    """`text` with every (find, replace) applied; each find must occur exactly once."""
    for find, repl in edits:
        count = text.count(find)
        if count != 1:
            raise HarnessError("mutant", f"{what}: {find.strip()[:60]!r} occurs {count} times, "
                               "not once")
        text = text.replace(find, repl)
    return text


HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")


def _hunk_end(lines, i):
    """Does line i end a hunk body: the next file's header, or format-patch's
    signature ("-- " then the git version)?"""
    ln = lines[i]
    if ln.startswith(("--- a/", "+++ b/", "--- /dev/null", "+++ /dev/null")):
        return True
    return ln == "-- " and (i + 1 == len(lines) or re.match(r"\d+\.\d+", lines[i + 1]))


def recount(patch):
    """A unified diff with every hunk header recounted from its body, the new-side
    start shifted by the lines earlier hunks of the file gained or lost, and hunks
    left with no change dropped: what an edited patch needs to apply again."""
    lines = patch.split("\n")
    out, i, shift = [], 0, 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("diff --git "):
            shift = 0
        m = HUNK.match(ln)
        if not m:
            out.append(ln)
            i += 1
            continue
        body = []
        i += 1
        while i < len(lines) and lines[i][:1] in (" ", "+", "-", "\\") and \
                not _hunk_end(lines, i):
            body.append(lines[i])
            i += 1
        old = sum(b[:1] in (" ", "-") for b in body)
        new = sum(b[:1] in (" ", "+") for b in body)
        if not any(b[:1] in ("+", "-") for b in body):
            continue                  # nothing left to change: git apply needs no such hunk
        start = int(m.group(1))
        out.append(f"@@ -{start},{old} +{start + shift},{new} @@{m.group(3)}")
        out += body
        shift += new - old
    return "\n".join(out)
