"""Parse what the guest wrote on its data channel (ttyS1) into a GuestData.

Each line is `<kind> key=value ...`; values never contain spaces because the
module escapes them as \\ooo octal (seq_escape), which unescape() reverses.

KINDS (guest/schema.py) is the schema: every kind the guest or the module
writes, with the frozen dataclass one of its lines becomes. A row's fields are the line's
keys, typed by their annotation and converted here, once: int (base 0 when
the value starts with 0x), float, str. A field with a default (None) is a
key only some lines of the kind carry; every other field is required. A
missing required key, a key no field names, a value of the wrong type or an
unknown kind is a HarnessError("verify") in one line naming the data line,
the kind and the key.
"""

import re
import typing
from dataclasses import MISSING, fields
from types import MappingProxyType

from ..errors import HarnessError
from .schema import (KINDS, ROW_KINDS, BadLine, Error, GuestData, Rows, attr, row_dict)  # the schema: re-exported for callers of the parse

BEGIN = "KSYMLAB-DATA-BEGIN"
END = "KSYMLAB-DATA-END"
# The magic of the module's ksymlab_results: probe-module/ksymlab.h KSYMLAB_MAGIC,
# "ksym" (the value must stay that one); gdb and drgn find the right structure by it.
RESULTS_MAGIC = 0x6b73796d

__all__ = ["BEGIN", "END", "RESULTS_MAGIC", "KINDS", "GuestData", "Rows", "parse",
           "parse_line", "row_dict", "unescape"]


# ---- reading one value ----

# A later snapshot's line is `<kind>@<n> key=value ...`: parse() files it
# under GuestData.at[n], so the plain rows stay the first snapshot's.
AT = re.compile(r"^([a-z-]+)@([0-9]+)$")


def unescape(value):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def _int(value):
    return int(value, 0) if value.lower().startswith(("0x", "-0x")) else int(value)


# annotation -> (conversion, what a value that fails it is not)
CONVERT = {int: (_int, "an integer"), float: (float, "a number"), str: (str, "")}


def _schema(cls):
    """{key: (conversion, its name, required)} of a row class, from its annotations."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in fields(cls):
        t = hints[f.name]
        if typing.get_origin(t) is typing.Union:        # Optional[X]
            t = next(a for a in typing.get_args(t) if a is not type(None))
        conv, what = CONVERT[t]
        out[f.name] = (conv, what, f.default is MISSING)
    return out


SCHEMA = {kind: _schema(cls) for kind, cls in KINDS.items() if kind != "error"}


def _row(kind, rest):
    """The row of kind `kind` from the text after it; BadLine(why) when malformed."""
    schema = SCHEMA[kind]
    kw = {}
    for item in rest.split():
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise BadLine(f"field {item!r} is not key=value")
        if key not in schema:
            raise BadLine(f"unknown field {key!r}")
        if key in kw:
            raise BadLine(f"{key} given twice")
        conv, what, _ = schema[key]
        value = unescape(value)
        try:
            kw[key] = conv(value)
        except ValueError:
            raise BadLine(f"{key}={value!r} is not {what}") from None
    for key, (_, _, required) in schema.items():
        if required and key not in kw:
            raise BadLine(f"{key}: missing")
    return KINDS[kind](**kw)


def parse_line(line, lineno=0):
    """(kind, snapshot number or None, row) of one line inside the channel."""
    kind, _, rest = line.partition(" ")
    at = AT.match(kind)
    snap = None
    if at and at.group(1) in KINDS:
        kind, snap = at.group(1), int(at.group(2))
        if kind not in ROW_KINDS:
            raise HarnessError("verify", f"data line {lineno}: {kind}@{snap}: a later "
                               f"snapshot has no {kind} lines")
    if kind not in KINDS:
        raise HarnessError("verify", f"data line {lineno}: unknown kind {kind!r}: {line[:80]!r}")
    if kind == "error":
        return kind, snap, Error(rest)
    try:
        return kind, snap, _row(kind, rest)
    except BadLine as e:
        name = kind if snap is None else f"{kind}@{snap}"
        raise HarnessError("verify", f"data line {lineno}: {name}: {e}") from None


def parse(text, partial=False):
    """The GuestData of the channel `text`.

    partial: the guest is still writing (gdb arms before the end marker).
    """
    rows = {k: [] for k in ROW_KINDS}
    at = {}
    head = {"variant": None, "guest": None, "errors": []}
    started = ended = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.replace("\r", "").strip()
        if not line:
            continue
        if line.startswith(BEGIN):
            started = True
            m = re.search(r"variant=(\S+)", line)
            head["variant"] = m.group(1) if m else None
            continue
        if line == END:
            ended = True
            break
        if not started:
            continue
        kind, snap, row = parse_line(line, lineno)
        if snap is not None:
            at.setdefault(snap, {k: [] for k in ROW_KINDS})[kind].append(row)
        elif kind == "guest":
            if head["guest"] is not None:
                raise HarnessError("verify", f"data line {lineno}: guest: a second guest line")
            head["guest"] = row
        elif kind == "error":
            head["errors"].append(row.message)
        else:
            rows[kind].append(row)
    if not started:
        raise HarnessError("verify", f"data channel has no {BEGIN} line")
    if not ended and not partial:
        raise HarnessError("verify", f"data channel ends without {END}")
    return GuestData(variant=head["variant"], guest=head["guest"],
                     errors=tuple(head["errors"]),
                     at=MappingProxyType({n: _rows(Rows, s) for n, s in sorted(at.items())}),
                     **_kinds(rows))


def _kinds(rows):
    return {attr(k): tuple(v) for k, v in rows.items()}


def _rows(cls, rows):
    return cls(**_kinds(rows))
