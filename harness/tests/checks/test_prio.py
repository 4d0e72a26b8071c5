"""The policy rows and the priorities of later snapshots (harness/checks/prio.py)
on doctored guest data. Each mutant test feeds what the
catalogue's mutant (mutants/catalogue.toml) makes the module report and names
the rows that reject it."""

from dataclasses import replace

from harness.checks import prio, snapshots
from harness.guest import dataport
from harness.oracles.readings import GdbReading
from harness.tests.readings_fixture import gdb_json, results, snapshot

# Scenario tasks as the guest reports them, with their task->policy and task_prio().
TASKS = [("nice", 5, 0, 25), ("fifo", 20, 1, -21), ("rr", 10, 2, -11),
         ("batch", -3, 3, 17), ("idle", 7, 5, 27)]
INIT = (1, 0, 20)                 # pid 1 at nice 0, reniced to 5 before snapshot 2
KTHREAD = (2, 1, -100)            # a FIFO kernel thread no scenario line names


def tasks_at(snap, stale=False):
    """{pid: (policy, prio)} the kernel has at `snap`; `stale` gives the first's."""
    init_prio = 25 if snap == 2 and not stale else 20
    out = {INIT[0]: (INIT[1], init_prio), KTHREAD[0]: (KTHREAD[1], KTHREAD[2])}
    out.update({10 + i: (pol, prio) for i, (_, _, pol, prio) in enumerate(TASKS)})
    return out


def guest(module_policy=None, stale=False):
    """The guest's lines; `module_policy` is a constant a broken sampler writes."""
    text = ["KSYMLAB-DATA-BEGIN variant=t", "snapshots count=2"]
    text += [f"task pid={10 + i} policy={name} value={v}"
             for i, (name, v, _, _) in enumerate(TASKS)]
    for snap in (1, 2):
        at = "" if snap == 1 else f"@{snap}"
        text.append(f"snapshot{at} kind=prio seq={snap}")
        for pid, (pol, prio) in sorted(tasks_at(snap, stale and snap == 2).items()):
            pol = pol if module_policy is None else module_policy
            text.append(f"prio{at} pid={pid} policy={pol} prio={prio} comm=t{pid}")
    text.append("KSYMLAB-DATA-END")
    return dataport.parse("\n".join(text))


def reading(d, snap):
    """gdb's reading at `snap` (gdb.json's snapshots[]); the module's memory is what
    its text says."""
    rows = d.prio if snap == 1 else d.at[snap].prio
    prios = [{"pid": p.pid, "prio": p.prio, "policy": p.policy, "comm": p.comm} for p in rows]
    return snapshot(snap, results=results(snapshot_seq=snap, prio=prios),
                    tasks={str(pid): {"prio": prio, "policy": pol, "comm": f"t{pid}"}
                           for pid, (pol, prio) in tasks_at(snap).items()})


def truth(d, snaps=2):
    """gdb.json: the first stop at the top level, every stop in snapshots."""
    first, *later = [reading(d, snap) for snap in range(1, snaps + 1)]
    return gdb_json(**first, snapshots=[first, *later])


def rows(d, t):
    t = GdbReading.parse(t)
    checks = prio.compare_prio(d, t) + prio.compare_policy(d, t)
    return {c.id: c for c in checks + prio.compare_prio_snapshots(d, t)}


def failing(d, t):
    """Ids of the rows that disagree, sorted."""
    return sorted(i for i, c in rows(d, t).items() if c.disagrees)


def test_all_agree_and_the_rows_say_what_was_compared():
    d = guest()
    r = rows(d, truth(d))
    assert [i for i, c in r.items() if c.disagrees] == []
    assert r["policy:pid 11"].sources == {"module": "fifo", "memory": "fifo", "gdb": "fifo",
                                          "scenario": "fifo"}
    assert r["policy:pid 14"].sources["scenario"] == "idle"
    assert r["policy:every task"].sources["gdb"] == "batch 1 fifo 2 idle 1 normal 2 rr 1"
    assert r["prio:snap2 pid 1"].sources == {"module": 25, "memory": 25, "gdb": 25}
    assert r["prio:snap2/prio-changed"].sources == {"module": "1", "gdb": "1"}
    assert r["policy:snap2 every task"].agrees


def test_policy_written_as_normal_is_rejected():
    """Mutant prio-policy-normal: s->policy = SCHED_NORMAL for every task."""
    d = guest(module_policy=0)
    bad = failing(d, truth(d))
    assert {"policy:pid 11", "policy:pid 12", "policy:pid 13", "policy:pid 14",
            "policy:every task"} <= set(bad)
    assert "policy:pid 10" not in bad              # a nice task is SCHED_NORMAL anyway
    assert not [i for i in bad if i.startswith("prio:")]     # priorities stay right


def test_policy_of_a_task_no_scenario_names_is_checked_against_gdb():
    d = guest()
    t = truth(d)
    t["tasks"]["2"] = dict(t["tasks"]["2"], policy=2)        # the kthread is RR in memory
    assert failing(d, t) == ["policy:every task"]
    assert "2:fifo/rr" in rows(d, t)["policy:every task"].info["differ"]


def test_scenario_disagreeing_with_module_and_gdb_fails():
    """Module and gdb agree, but the guest program set another policy than asked."""
    d = guest()
    d = replace(d, task=d.task[:1] + (replace(d.task[1], policy="rr"),) + d.task[2:])
    # rr 20 and fifo 20 share task_prio() -21: only the policy rows notice
    assert failing(d, truth(d)) == ["policy:pid 11", "policy:snap2 pid 11"]


def test_priority_sampled_once_is_rejected():
    """Mutant prio-sampled-once: snapshot 2 repeats snapshot 1's priorities."""
    d = guest(stale=True)
    assert failing(d, truth(d)) == ["prio:snap2 pid 1", "prio:snap2/prio-changed"]


def test_no_priority_change_between_snapshots_fails():
    """Without the guest's renice the sampled-once mutant could not be caught."""
    d = guest(stale=True)
    t = truth(d)
    t["snapshots"][1]["tasks"]["1"]["prio"] = 20
    assert failing(d, t) == ["prio:snap2/prio-changed"]


def test_missing_later_prio_file_and_missing_gdb_stop_fail():
    d = guest()
    d = replace(d, at={**d.at, 2: replace(d.at[2], prio=())})
    bad = failing(d, truth(d))
    assert "prio:snap2 pid 1" in bad and "policy:snap2 every task" in bad
    d = guest()
    assert "prio:snap2/gdb" in failing(d, truth(d, snaps=1))
    # a stale first-snapshot copy never stands in for the missing later file
    view = snapshots.snapshots(d, GdbReading.parse(truth(d)))[1][1]
    assert view.prio == d.at[2].prio and view.procstat == ()
