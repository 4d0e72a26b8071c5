"""The task_prio() model: what task_prio() must return for a scenario task,
from its policy and value alone (priority inheritance included).

The scenario file is an oracle independent of both the module and gdb; the
prio checks (harness/checks/prio.py), the scenario parser's own listing
(scenario_prios() below) and the LTTng prio rows (harness/lttng/rows/features.py)
all ask this model.
"""

from ..guest.scenario import task_lines

# Linux 6.1, kernel/sched/core.c: task_prio(p) = p->prio - MAX_RT_PRIO, and for
# a task no priority-inheritance lock boosts, p->prio is what
# __sched_setscheduler() passes to __setscheduler_prio():
# __normal_prio(policy, sched_priority, sched_nice), which gives
#   deadline:        MAX_DL_PRIO - 1                 (include/linux/sched/deadline.h)
#   fifo, rr:        MAX_RT_PRIO - 1 - rt_priority   (include/linux/sched/prio.h)
#   everything else: NICE_TO_PRIO(nice) = nice + DEFAULT_PRIO (prio.h)
# with MAX_RT_PRIO = 100, DEFAULT_PRIO = MAX_RT_PRIO + NICE_WIDTH / 2 = 120,
# MAX_DL_PRIO = 0. renice (nice) and setpriority() go through set_user_nice(),
# which sets p->prio = effective_prio(p) = normal_prio(p), the same formula.
# SCHED_IDLE falls in "everything else": its prio follows the nice value too.
# (6.1's __setscheduler_params() copies sched_nice into static_prio only for
# fair_policy(), NORMAL and BATCH; ksymlab-sched therefore sets an idle task's
# nice with setpriority() first, so static_prio agrees with prio.)
# SCHED_OTHER (scenario `nice`), SCHED_BATCH, SCHED_IDLE at nice n: 120 + n - 100
NICE_BASE = 20
NICE_POLICIES = ("nice", "other", "batch", "idle")
# SCHED_FIFO, SCHED_RR at rt_priority p: 100 - 1 - p - 100 = -1 - p
RT_BASE = -1
RT_POLICIES = ("fifo", "rr")
# SCHED_DEADLINE: 0 - 1 - 100, whatever runtime, deadline and period
DEADLINE_PRIO = -101


def expected_prio(task):
    """task_prio() of a scenario task ({'policy', 'value'}), None if no oracle."""
    policy = task.get("policy")
    if policy in NICE_POLICIES:
        return NICE_BASE + task["value"]
    if policy in RT_POLICIES:
        return RT_BASE - task["value"]
    if policy == "deadline":
        return DEADLINE_PRIO
    return None


# A task that holds a PI futex waited on by others runs boosted (Linux 6.1):
# kernel/locking/rtmutex.c rt_mutex_adjust_prio(owner) takes the owner's top
# PI waiter, task_top_pi_waiter(p)->task, and calls rt_mutex_setprio(p,
# pi_task), kernel/sched/core.c, which sets
#   p->prio = __rt_effective_prio(pi_task, p->normal_prio)
#           = min(p->normal_prio, pi_task->prio)
# The top waiter is the first of the lock's waiters in rt_waiter_node_less()
# order of their sort key __waiter_prio(task): task->prio when rt_prio(), else
# DEFAULT_PRIO (120); equal keys keep the order they blocked in (deadline ties,
# broken by dl.deadline, are not modelled: ksymlab-threads makes FIFO waiters).
# A boosted waiter passes its own boost on (the chain walk,
# rt_mutex_adjust_prio_chain()). In task_prio() units (prio - 100):
WAITER_DEFAULT_PRIO = 20        # DEFAULT_PRIO - MAX_RT_PRIO


def expected_prios(tasks):
    """task_prio() of each scenario task line ({'pid', 'policy', 'value'[,
    'pi_owner']}), PI boosts included: {pid: prio}; a task without an oracle
    is left out."""
    normal = {t["pid"]: expected_prio(t) for t in tasks}
    waiters = {}
    for t in tasks:
        if t.get("pi_owner") is not None:
            waiters.setdefault(t["pi_owner"], []).append(t["pid"])
    done = {}

    def prio(pid, seen=()):
        if pid in done:
            return done[pid]
        p = normal.get(pid)
        if p is None or pid in seen:          # no oracle, or a deadlock cycle
            return p
        boosts = [(prio(w, seen + (pid,)), w) for w in waiters.get(pid, ())]
        boosts = [(b, w) for b, w in boosts if b is not None]
        if boosts:
            # top waiter: lowest sort key, the earliest on ties (min is stable)
            top = min(boosts, key=lambda bw: bw[0] if bw[0] < 0 else WAITER_DEFAULT_PRIO)
            p = min(p, top[0])
        done[pid] = p
        return p

    return {pid: prio(pid) for pid in normal if prio(pid) is not None}


def scenario_prios(tasks):
    """task_prio() of every task line of a parsed scenario (guest/scenario.py), in
    guest order, with priority inheritance."""
    lines = task_lines(tasks)
    got = expected_prios(lines)
    return [got.get(t["pid"]) for t in lines]
