"""The LTTng guest's oracle lines (ttyS1): `<kind> key=value ...`, up to
KSYMLAB-LTTNG-END."""

from ...errors import HarnessError

END = "KSYMLAB-LTTNG-END"
INTS = {"pid", "tgid", "value", "deadline", "period", "depth", "ret", "idx", "ip", "major",
        "minor", "added", "available", "irq", "loaded", "addr", "size"}


def parse(text):
    """{kind: [ {field: value} ]}; HarnessError when the end marker is missing."""
    if END not in text:
        raise HarnessError("verify", f"the LTTng data port has no {END} line")
    out = {}
    for line in text.split(END, 1)[0].splitlines():
        words = line.strip().split()
        if not words:
            continue
        kind, fields = words[0], {}
        for w in words[1:]:
            if "=" not in w:
                fields.setdefault("text", []).append(w)
                continue
            k, v = w.split("=", 1)
            if k in INTS or kind == "ftrace" and k != "event":
                try:
                    v = int(v, 0)
                except ValueError:
                    raise HarnessError("verify", f"LTTng data port: {k}={v!r} is not "
                                       f"an integer in {line.strip()!r}") from None
            fields[k] = v
        out.setdefault(kind, []).append(fields)
    return out
