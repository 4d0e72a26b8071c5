"""The guest's later snapshots, as the per-sampler checks see them.

The guest takes more than one snapshot (harness/guest/assets/init); gdb stops
at each and reads again. The later-snapshot checks of the prio and pageblock
samplers (prio.py, pageblock.py) run the first snapshot's checks once more on
a view of each later one; the views and the key prefix `snap<n> ` are made here.
"""

from dataclasses import fields, replace

from ..model.enums import Source
from ..model.results import Check

# The first snapshot's rows of these kinds never stand in for a later one's.
PER_SNAPSHOT = ("pageblock", "mthist", "ptinfo", "snapshot", "memstate", "prio", "procstat")


def snapshots(data, truth):
    """[(n, data view, gdb reading or None)] for every snapshot the guest reported:
    the view of snapshot n is `data` (a GuestData) with the rows the guest wrote
    at n (`<kind>@n` lines), a GdbSnapshot its reading (truth: the GdbReading)."""
    readings = truth.snapshots or (truth,)
    out = [(1, data, readings[0])]
    for n in sorted(data.at):
        at = data.at[n]
        later = {f.name: getattr(at, f.name) for f in fields(at)}
        view = replace(data, **{k: rows for k, rows in later.items()
                                if rows or k in PER_SNAPSHOT})
        out.append((n, view, readings[n - 1] if n - 1 < len(readings) else None))
    return out


def no_stop(n, kind, what):
    """The row that fails when gdb gave no reading of `what` at snapshot n."""
    return Check(kind, f"snap{n}/gdb", {Source.MODULE: f"snapshot {n}", Source.GDB: None},
                 False, label=f"gdb {what} at snapshot {n}")


def at_snapshot(n, rows):
    """Rows of the first snapshot's checks, made snapshot n's (keys `snap<n> ...`)."""
    return [replace(c, key=f"snap{n} {c.key}", info={**c.info, "snapshot": n},
                    label=f"snapshot {n}: {c.label or c.key}") for c in rows]
