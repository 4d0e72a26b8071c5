"""Parse what the guest wrote on its data channel (ttyS1).

Each line is `<kind> key=value ...`; values never contain spaces because the
module escapes them as \\ooo octal (seq_escape), which unescape() reverses.
"""

import re

from .errors import HarnessError

BEGIN = "KSYMLAB-DATA-BEGIN"
END = "KSYMLAB-DATA-END"
KINDS = {"guest", "task", "symbol", "prio", "error"}
# Integer fields per kind; everything else stays a string.
INT_FIELDS = {"task": {"pid", "value"}, "prio": {"pid", "prio", "policy"}}


def unescape(value):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def parse_line(line, lineno=0):
    kind, _, rest = line.partition(" ")
    if kind not in KINDS:
        raise HarnessError("verify", f"data line {lineno}: unknown kind {kind!r}: {line[:80]!r}")
    if kind == "error":
        return kind, {"message": rest}
    fields = {}
    for item in rest.split():
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise HarnessError("verify", f"data line {lineno}: field {item!r} is not key=value")
        value = unescape(value)
        if key in INT_FIELDS.get(kind, ()):
            try:
                value = int(value)
            except ValueError:
                raise HarnessError("verify", f"data line {lineno}: {key}={value!r} is not an "
                                   "integer") from None
        elif key == "addr":
            try:
                value = int(value, 16)
            except ValueError:
                raise HarnessError("verify", f"data line {lineno}: addr={value!r} is not hex") \
                    from None
        fields[key] = value
    return kind, fields


def parse(text):
    """Return {'variant', 'guest', 'tasks', 'symbols', 'prio', 'errors'} from the channel text."""
    out = {"variant": None, "guest": {}, "tasks": [], "symbols": [], "prio": [], "errors": []}
    started = ended = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.replace("\r", "").strip()
        if not line:
            continue
        if line.startswith(BEGIN):
            started = True
            m = re.search(r"variant=(\S+)", line)
            out["variant"] = m.group(1) if m else None
            continue
        if line == END:
            ended = True
            break
        if not started:
            continue
        kind, fields = parse_line(line, lineno)
        if kind == "guest":
            out["guest"].update(fields)
        elif kind == "task":
            out["tasks"].append(fields)
        elif kind == "symbol":
            out["symbols"].append(fields)
        elif kind == "prio":
            out["prio"].append(fields)
        else:
            out["errors"].append(fields["message"])
    if not started:
        raise HarnessError("verify", f"data channel has no {BEGIN} line")
    if not ended:
        raise HarnessError("verify", f"data channel ends without {END}")
    return out
