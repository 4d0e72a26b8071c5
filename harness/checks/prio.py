"""The prio sampler's checks: every task's priority and scheduling policy, at
every snapshot the guest takes.

Priority (compare_prio): the module's text, its memory, gdb at the same
instant, /proc/<pid>/stat (read just after) and the scenario's task_prio()
model (harness/oracles/sched_prio.py).

Policy (compare_policy). A tracer's statedump records a task's policy with its
priority; a sampler that copies the wrong field (or a constant) would still
print plausible priorities, so the policy gets rows of its own (issue 12,
mutant prio-policy-normal):
  - `pid N`, one per scenario task: the module's text, its memory, gdb's
    task->policy at the same instant and the policy the scenario line asks
    for (what the guest program set, from harness/guest/assets/sched.c and
    threads.c `task` lines);
  - `every task`: module and gdb agree on the policy of every task both list;
    the sources are the histograms, the differing pids are in info.
A priority-inheritance boost changes task->prio, never task->policy
(rt_mutex_setprio() only switches the sched class), so a boosted holder
keeps its scenario policy.

Later snapshots (compare_prio_snapshots; issue 12, mutant prio-sampled-once).
Between its first and second snapshot the guest init renices itself (pid 1,
harness/guest/assets/init), so one task's task_prio() changes while the module
stays loaded. At every later snapshot gdb reads every task again; here:
  - each later snapshot's prio and policy rows, as the first snapshot's
    (keys prefixed `snap<n> `; /proc/<pid>/stat is read at the first
    snapshot only);
  - `snap<n>/prio-changed`: the pids whose priority changed since the first
    snapshot, in the module's file and in gdb's reads, are the same set and
    gdb saw at least one (else a sample taken once at load, or at the first
    snapshot only, could not be caught).
"""

from .confusions import pair
from ..model.enums import Source
from ..model.results import SAME_FUNCTION, Check
from .snapshots import at_snapshot, no_stop, snapshots
from ..oracles.sched_prio import expected_prios

# include/uapi/linux/sched.h
SCHED_POLICIES = {0: "normal", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}
# Scenario and guest-program policy names -> SCHED_* value.
SCENARIO_POLICIES = {"nice": 0, "other": 0, "fifo": 1, "rr": 2, "batch": 3, "idle": 5,
                     "deadline": 6}
RT_POLICY_NUMBERS = (1, 2)      # SCHED_FIFO, SCHED_RR: rt_policy()


def _by_pid(rows):
    return {r.pid: r for r in rows}


def _gdb_task(truth, pid):
    """gdb's task `pid` (truth.tasks is keyed by the pid as a string), or None."""
    return truth.tasks.get(str(pid))


def rt_derived_prio(g):
    """task_prio() as a sampler that computes it from rt_priority for the RT
    policies would (MAX_RT_PRIO - 1 - rt_priority - MAX_RT_PRIO), gdb's prio
    for every other policy; None before gdb read rt_priority."""
    if g.rt_priority is None:
        return None
    return -1 - g.rt_priority if g.policy in RT_POLICY_NUMBERS else g.prio


def _prio_confusions(truth, pid):
    """gdb's task `pid`: its prio against the fields a sampler could take instead
    (checks/confusions.py), each [right, confused]; {} before gdb read them."""
    g = _gdb_task(truth, pid)
    if g is None or g.tgid is None:
        return {}
    leader = _gdb_task(truth, g.tgid)
    return {"normal_prio": pair(g.prio, g.normal_prio),
            "prio derived from rt_priority": pair(g.prio, rt_derived_prio(g)),
            "static_prio": pair(g.prio, g.static_prio),
            "rt_priority": pair(g.prio, g.rt_priority),
            "leader's prio": pair(g.prio, leader.prio if leader else None),
            "tgid for pid": pair(pid, g.tgid)}


def _prio_check(pid, comm, sources, agree, confusions=None):
    info = {"comm": comm, "pid": pid}
    if Source.PROC_STAT in sources:
        info["oracles"] = {Source.PROC_STAT: SAME_FUNCTION}
    if confusions:
        info["confusions"] = confusions
    return Check("prio", f"pid {pid}", sources, agree, info=info)


def _scenario_prios(tasks):
    """The task_prio() model's {pid: prio} of the guest's `task` rows (the model
    takes scenario lines as dicts, as guest/scenario.py and the LTTng port give them)."""
    return expected_prios([{"pid": t.pid, "policy": t.policy, "value": t.value,
                            "pi_owner": t.pi_owner} for t in tasks])


def compare_prio(data, truth):
    """Every task of the snapshot: the module's text, its memory, gdb at the same
    instant, /proc/<pid>/stat (read just after) and the scenario."""
    expectations = {t.pid: t for t in data.task}
    expected = _scenario_prios(data.task)
    procstat = {x.pid: x.prio for x in data.procstat}
    text = _by_pid(data.prio)
    memory = _by_pid(truth.results.prio)
    values = []
    for pid in sorted(set(text) | set(memory)):
        t, m = text.get(pid), memory.get(pid)
        g = _gdb_task(truth, pid)
        sources = {Source.MODULE: t.prio if t else None, Source.MEMORY: m.prio if m else None,
                   Source.GDB: g.prio if g else None}
        agree = (t is not None and m is not None and g is not None
                 and t.prio == m.prio == g.prio)
        # /proc/<pid>/stat is read after the snapshot; threads other than a
        # group leader have no /proc/<pid>.
        if pid in procstat:
            sources[Source.PROC_STAT] = procstat[pid]
            agree = agree and procstat[pid] == sources[Source.MODULE]
        if expected.get(pid) is not None:
            sources[Source.SCENARIO] = expected[pid]
            agree = agree and sources[Source.SCENARIO] == sources[Source.MODULE]
        values.append(_prio_check(pid, (t or m).comm, sources, agree,
                                  _prio_confusions(truth, pid)))
    for pid in sorted(set(expectations) - set(text)):
        g = _gdb_task(truth, pid)
        values.append(_prio_check(pid, f"scenario {expectations[pid].policy}",
                                  {Source.MODULE: None, Source.MEMORY: None,
                                   Source.GDB: g.prio if g else None,
                                   Source.SCENARIO: expected.get(pid)}, False))
    # The snapshot and gdb's walk are the same instant, so a task gdb sees
    # that the module did not list is a miss. pid 0 is the idle task: gdb's
    # walk starts at init_task, for_each_process_thread() does not visit it.
    for pid in sorted(int(p) for p in truth.tasks):
        # (a scenario task the module missed has its row above: one row per pid)
        if pid != 0 and pid not in memory and pid not in text and pid not in expectations:
            g = _gdb_task(truth, pid)
            values.append(_prio_check(pid, g.comm, {Source.MODULE: None, Source.MEMORY: None,
                                                   Source.GDB: g.prio}, False))
    return values


def _policy_confusions(truth, pid):
    """gdb's policy of `pid` against its group leader's (checks/confusions.py)."""
    g = _gdb_task(truth, pid)
    if g is None or g.tgid is None:
        return {}
    leader = _gdb_task(truth, g.tgid)
    return {"leader's policy": pair(g.policy, leader.policy if leader else None)}


def policy_name(policy):
    if policy is None:
        return None
    return SCHED_POLICIES.get(policy, f"policy {policy}")


def policy_histogram(policies):
    counts = {}
    for p in policies:
        counts[policy_name(p)] = counts.get(policy_name(p), 0) + 1
    return " ".join(f"{k} {counts[k]}" for k in sorted(counts, key=str)) or None


def compare_policy(data, truth):
    """The policy rows described in the module docstring."""
    text = {r.pid: r.policy for r in data.prio}
    memory = {r.pid: r.policy for r in truth.results.prio}
    gdb = {int(pid): t.policy for pid, t in truth.tasks.items()}
    rows = []
    for t in data.task:
        pid = t.pid
        want = SCENARIO_POLICIES.get(t.policy)
        sources = {Source.MODULE: policy_name(text.get(pid)),
                   Source.MEMORY: policy_name(memory.get(pid)),
                   Source.GDB: policy_name(gdb.get(pid)), Source.SCENARIO: policy_name(want)}
        rows.append(Check("policy", f"pid {pid}", sources,
                          want is not None and text.get(pid) == memory.get(pid)
                          == gdb.get(pid) == want,
                          info={"pid": pid, "scenario_policy": t.policy,
                                "confusions": _policy_confusions(truth, pid)},
                          label=f"policy of scenario task {pid} ({t.policy})"))
    both = sorted(set(text) & set(gdb))
    differ = [pid for pid in both
              if not text[pid] == memory.get(pid) == gdb[pid]]
    rows.append(Check(
        "policy", "every task",
        {Source.MODULE: policy_histogram(text[p] for p in both),
         Source.MEMORY: policy_histogram(memory.get(p) for p in both),
         Source.GDB: policy_histogram(gdb[p] for p in both)},
        bool(both) and not differ,
        info={"tasks": len(both),
              "differ": " ".join(f"{p}:{policy_name(text[p])}/{policy_name(gdb[p])}"
                                 for p in differ)[:300]},
        label="policy of every task the module and gdb both list"))
    return rows


def _later(n, view, reading):
    """Snapshot n's rows: the first snapshot's checks on its view and gdb's
    reading there (a GdbSnapshot: its results and tasks)."""
    if reading is None:
        return [no_stop(n, "prio", "read the tasks")]
    return at_snapshot(n, compare_prio(view, reading) + compare_policy(view, reading))


def _changed(n, first, later):
    (_, fview, freading), (_, view, reading) = first, later
    key = f"snap{n}/prio-changed"
    label = f"tasks whose priority changed from snapshot 1 to {n}"
    if freading is None or reading is None:
        return Check("prio", key, {Source.MODULE: None, Source.GDB: None}, False, label=label)
    before = {int(p): t.prio for p, t in freading.tasks.items()}
    after = {int(p): t.prio for p, t in reading.tasks.items()}
    gdb = {p for p in set(before) & set(after) if before[p] != after[p]}
    mbefore = {r.pid: r.prio for r in fview.prio}
    mafter = {r.pid: r.prio for r in view.prio}
    mod = {p for p in set(mbefore) & set(mafter) if mbefore[p] != mafter[p]}
    return Check("prio", key,
                 {Source.MODULE: " ".join(map(str, sorted(mod))) or "none",
                  Source.GDB: " ".join(map(str, sorted(gdb))) or "none"},
                 bool(gdb) and mod == gdb, label=label,
                 info={"why": "a priority sampled once would show no change"})


def compare_prio_snapshots(data, truth):
    """The later-snapshot rows described in the module docstring, for every later
    snapshot the guest took (its prio file at that snapshot missing means no
    module rows)."""
    snaps = snapshots(data, truth)
    rows = []
    for snap in snaps[1:]:
        n, view, reading = snap
        rows += _later(n, view, reading)
        rows.append(_changed(n, snaps[0], snap))
    return rows
