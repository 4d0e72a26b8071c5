"""Parse what the guest wrote on its data channel (ttyS1).

Each line is `<kind> key=value ...`; values never contain spaces because the
module escapes them as \\ooo octal (seq_escape), which unescape() reverses.
"""

import re

from ..errors import HarnessError

BEGIN = "KSYMLAB-DATA-BEGIN"
END = "KSYMLAB-DATA-END"
# The magic of the module's ksymlab_results: probe-module/ksymlab.h KSYMLAB_MAGIC,
# "ksym" (the value must stay that one); gdb and drgn find the right structure by it.
RESULTS_MAGIC = 0x6b73796d

# Every kind the guest or the module writes, with its integer fields
# (base 0: decimal or 0x-hex); every other field stays a string.
KINDS = {
    "guest": set(),
    "task": {"pid", "value", "deadline", "period",    # deadline: value is the runtime (ns)
             "tgid", "pi_owner"},                     # ksymlab-threads: thread group, PI
    "symbol": {"addr"},
    "resolve": {"ns"},
    "sampler": {"available"},
    "results": {"addr", "size"},
    "prio": {"pid", "prio", "policy"},
    "pageblock": {"node", "pfn", "mt"},
    "mthist": {"node", "mt", "count"},
    "ptinfo": {"node", "mt", "count"},
    "bdev": {"sectors", "whole"},
    "sysblock": {"sectors", "whole"},
    "writeback": {"gds_hits", "bdp_hits", "background_thresh", "dirty_thresh"},
    "dirtylimit": {"gds", "bdp"},
    "frame": {"pid", "idx", "ip"},
    "ustack-expect": {"pid", "depth", "ret"},
    "unavailable": set(),
    "bench": {"calls", "ns", "sum", "round"},
    "bpf": {"arg", "errno", "hits", "value", "arg1", "writes", "jiffies"},
    "vmstat": {"value"},           # /proc/vmstat dirty thresholds (the last gds event)
    "procstat": {"pid", "prio"},
    "kallsyms": {"addr"},
    "stress": {"cycles", "failed"},
    "kmemleak": {"available", "leaks", "ksymlab_frames"},
    "dmesg": {"warnings"},
    "error": set(),
    "section": {"addr"},           # /sys/module/ksymlab_probe/sections/<name>
    "ktext": {"addr"},             # _text in /proc/kallsyms: the KASLR slide
    "armed-data": set(),           # the guest waits for gdb after this line
    "snapshot": {"seq"},
    "pbinfo": {"order"},           # "Page block order" of /proc/pagetypeinfo
    "fwcfg": {"sysfs", "vmcoreinfo"},   # /sys/firmware/qemu_fw_cfg, its etc/vmcoreinfo
    "phase": set(),                # guest init phases with /proc/uptime seconds
    "snapshots": {"count"},        # how many snapshots the guest takes (gdb stops at each)
    "memstate": {"block", "start_pfn", "pages"},   # what the guest changed between snapshots
}

# A line of a later snapshot is `<kind>@<n> key=value ...`: parse() files it
# under out["at"][n][kind], so the plain lists stay the first snapshot's.
AT = re.compile(r"^([a-z-]+)@([0-9]+)$")


def unescape(value):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), value)


def parse_line(line, lineno=0):
    kind, _, rest = line.partition(" ")
    at = AT.match(kind)
    if at and at.group(1) in KINDS:
        kind, fields = parse_line(f"{at.group(1)} {rest}", lineno)
        return f"{kind}@{int(at.group(2))}", fields
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
        if key in KINDS[kind]:
            try:
                value = int(value, 0) if value.lower().startswith(("0x", "-0x")) \
                    else int(value)
            except ValueError:
                raise HarnessError("verify", f"data line {lineno}: {key}={value!r} is not an "
                                   "integer") from None
        fields[key] = value
    return kind, fields


def parse(text, partial=False):
    """Return {'variant', 'guest', <kind>: [fields, ...] for every kind} from the channel.

    partial: the guest is still writing (gdb arms before the end marker).
    """
    out = {"variant": None, "guest": {}, "at": {}}
    for kind in KINDS:
        if kind != "guest":
            out[kind] = []
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
        if "@" in kind:
            kind, n = kind.split("@")
            snap = out.setdefault("at", {}).setdefault(int(n), {k: [] for k in KINDS
                                                                if k not in ("guest", "error")})
            snap[kind].append(fields)
        elif kind == "guest":
            out["guest"].update(fields)
        elif kind == "error":
            out["error"].append(fields["message"])
        else:
            out[kind].append(fields)
    if not started:
        raise HarnessError("verify", f"data channel has no {BEGIN} line")
    if not ended and not partial:
        raise HarnessError("verify", f"data channel ends without {END}")
    out["errors"] = out.pop("error")
    return out
