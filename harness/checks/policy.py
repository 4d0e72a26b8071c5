"""The scheduling policy the prio sampler records beside each priority.

A tracer's statedump records a task's policy with its priority; a sampler
that copies the wrong field (or a constant) would still print plausible
priorities, so the policy gets rows of its own (issue 12, mutant
prio-policy-normal):
  - `pid N`, one per scenario task: the module's text, its memory, gdb's
    task->policy at the same instant and the policy the scenario line asks
    for (what the guest program set, from harness/guest/sched.c and
    threads.c `task` lines);
  - `every task`: module and gdb agree on the policy of every task both list;
    the sources are the histograms, the differing pids are in info.
A priority-inheritance boost changes task->prio, never task->policy
(rt_mutex_setprio() only switches the sched class), so a boosted holder
keeps its scenario policy.
"""

from .model import Check

# include/uapi/linux/sched.h
SCHED = {0: "normal", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}
# Scenario and guest-program policy names -> SCHED_* value.
SCENARIO = {"nice": 0, "other": 0, "fifo": 1, "rr": 2, "batch": 3, "idle": 5, "deadline": 6}


def name(policy):
    if policy is None:
        return None
    return SCHED.get(policy, f"policy {policy}")


def histogram(policies):
    counts = {}
    for p in policies:
        counts[name(p)] = counts.get(name(p), 0) + 1
    return " ".join(f"{k} {counts[k]}" for k in sorted(counts, key=str)) or None


def compare_policy(data, truth):
    """The rows described in the module docstring."""
    text = {r["pid"]: r.get("policy") for r in data["prio"]}
    memory = {r["pid"]: r.get("policy") for r in truth["results"]["prio"]}
    gdb = {int(pid): t.get("policy") for pid, t in truth["tasks"].items()}
    rows = []
    for t in data["task"]:
        pid = t["pid"]
        want = SCENARIO.get(t.get("policy"))
        sources = {"module": name(text.get(pid)), "memory": name(memory.get(pid)),
                   "gdb": name(gdb.get(pid)), "scenario": name(want)}
        rows.append(Check("policy", f"pid {pid}", sources,
                          want is not None and text.get(pid) == memory.get(pid)
                          == gdb.get(pid) == want,
                          info={"pid": pid, "scenario_policy": t.get("policy")},
                          label=f"policy of scenario task {pid} ({t.get('policy')})"))
    both = sorted(set(text) & set(gdb))
    differ = [pid for pid in both
              if not text[pid] == memory.get(pid) == gdb[pid]]
    rows.append(Check(
        "policy", "every task",
        {"module": histogram(text[p] for p in both),
         "memory": histogram(memory.get(p) for p in both),
         "gdb": histogram(gdb[p] for p in both)},
        bool(both) and not differ,
        info={"tasks": len(both),
              "differ": " ".join(f"{p}:{name(text[p])}/{name(gdb[p])}" for p in differ)[:300]},
        label="policy of every task the module and gdb both list"))
    return rows
