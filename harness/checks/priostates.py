"""Task priorities at the guest's later snapshots (issue 12, mutant prio-sampled-once).

Between its first and second snapshot the guest init renices itself (pid 1,
harness/guest/init), so one task's task_prio() changes while the module stays
loaded. At every later snapshot gdb reads every task again; here:
  - each later snapshot's prio and policy rows, as compare.py and policy.py
    check the first (keys prefixed `snap<n> `; /proc/<pid>/stat is read at the
    first snapshot only);
  - `snap<n>/prio-changed`: the pids whose priority changed since the first
    snapshot, in the module's file and in gdb's reads, are the same set and
    gdb saw at least one (else a sample taken once at load, or at the first
    snapshot only, could not be caught).
"""

from . import variant as compare, pbstates, policy
from .model import Check


def _later(n, view, reading):
    if reading is None or "tasks" not in reading:
        return [pbstates.no_stop(n, "prio", "read the tasks")]
    truth = {"results": reading["results"], "tasks": reading["tasks"]}
    return pbstates.at_snapshot(n, compare.compare_prio(view, truth)
                                + policy.compare_policy(view, truth))


def _changed(n, first, later):
    (_, fview, freading), (_, view, reading) = first, later
    key = f"snap{n}/prio-changed"
    label = f"tasks whose priority changed from snapshot 1 to {n}"
    if freading is None or reading is None or "tasks" not in reading:
        return Check("prio", key, {"module": None, "gdb": None}, False, label=label)
    before = {int(p): t["prio"] for p, t in freading["tasks"].items()}
    after = {int(p): t["prio"] for p, t in reading["tasks"].items()}
    gdb = {p for p in set(before) & set(after) if before[p] != after[p]}
    mbefore = {r["pid"]: r["prio"] for r in fview["prio"]}
    mafter = {r["pid"]: r["prio"] for r in view["prio"]}
    mod = {p for p in set(mbefore) & set(mafter) if mbefore[p] != mafter[p]}
    return Check("prio", key,
                 {"module": " ".join(map(str, sorted(mod))) or "none",
                  "gdb": " ".join(map(str, sorted(gdb))) or "none"},
                 bool(gdb) and mod == gdb, label=label,
                 info={"why": "a priority sampled once would show no change"})


def compare_states(data, truth):
    """The rows described in the module docstring, for every later snapshot the
    guest took (its prio file at that snapshot missing means no module rows)."""
    snaps = pbstates.snapshots(data, truth)
    rows = []
    for snap in snaps[1:]:
        n, view, reading = snap
        rows += _later(n, view, reading)
        rows.append(_changed(n, snaps[0], snap))
    return rows
