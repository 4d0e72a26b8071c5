"""Parse and check a guest scenario file on the host, before anything boots.

One task per line, `<policy> <value> [extra]`; blank lines and lines whose
first non-blank character is `#` are ignored (see
harness/scenarios/default.scenario). The guest init starts the same tasks
from the same file; every range checked here is one the guest kernel (6.1)
would otherwise refuse at run time.
"""

import re
from pathlib import Path

from ..errors import HarnessError

NICE_RANGE = (-20, 19)          # include/linux/sched/prio.h: MIN_NICE, MAX_NICE
RT_RANGE = (1, 99)              # __sched_setscheduler(): 1..MAX_RT_PRIO-1 for FIFO/RR
# __checkparam_dl() (kernel/sched/deadline.c): runtime >= 1 << DL_SCALE (1024 ns),
# runtime <= deadline <= period, period within sysctl_sched_dl_period_min/max
# (100 us and 1 << 22 us by default).
DL_MIN_RUNTIME = 1 << 10
DL_PERIOD_RANGE = (100 * 1000, (1 << 22) * 1000)
# Admission control (sched_dl_overflow()): the deadline tasks of the guest's
# one CPU may use at most sched_rt_runtime_us / sched_rt_period_us = 95 %.
DL_MAX_BANDWIDTH = 0.95

# policy -> (number of integers after the policy, range of the first one)
POLICIES = {
    "nice": (1, NICE_RANGE),        # SCHED_OTHER, set by busybox renice
    "batch": (1, NICE_RANGE),       # SCHED_BATCH, set by ksymlab-sched
    "idle": (1, NICE_RANGE),        # SCHED_IDLE
    "fifo": (1, RT_RANGE),          # SCHED_FIFO
    "rr": (1, RT_RANGE),            # SCHED_RR
    "deadline": (3, None),          # SCHED_DEADLINE runtime, deadline, period (ns)
}
USAGE = {
    "deadline": "deadline RUNTIME_NS DEADLINE_NS PERIOD_NS",
    "fifo": "fifo PRIORITY", "rr": "rr PRIORITY",
}
INT = re.compile(r"-?[0-9]+\Z")


# Lines that start one process of several threads (harness/guest/threads.c):
#   pi NICE PRIORITY...             a SCHED_OTHER holder at nice NICE of a PI
#                                   futex and one SCHED_FIFO waiter per PRIORITY
#   pi POLICY VALUE WAITER...       a holder in POLICY (as `threads`) and one
#                                   waiter per `fifo P`, `rr P` or `deadline
#                                   RUNTIME DEADLINE PERIOD`
#   threads POLICY VALUE [...]      a thread per pair, the first is the leader;
#                                   POLICY other|batch|idle (nice) or fifo|rr
THREAD_POLICIES = {"other": NICE_RANGE, "batch": NICE_RANGE, "idle": NICE_RANGE,
                   "fifo": RT_RANGE, "rr": RT_RANGE}
MAX_THREADS = 16                # threads.c MAX_THREADS


def _ints(args, usage):
    bad = [a for a in args if not INT.match(a)]
    if bad:
        return f"{bad[0]!r} is not an integer ({usage})"
    return [int(a) for a in args]


def _in(value, bounds, what):
    if not bounds[0] <= value <= bounds[1]:
        return f"{what} {value} out of range {bounds[0]}..{bounds[1]}"
    return None


def _pi_waiters(args, usage):
    """The waiters of a `pi POLICY VALUE WAITER...` line: fifo P, rr P or deadline
    RUNTIME DEADLINE PERIOD each; a list of thread dicts or a message."""
    out, k = [], 0
    while k < len(args):
        name = args[k]
        count = 3 if name == "deadline" else 1
        if name not in ("fifo", "rr", "deadline"):
            return f"pi waiter policy {name!r} is none of fifo, rr, deadline ({usage})"
        nums = _ints(args[k + 1:k + 1 + count], usage)
        if isinstance(nums, str):
            return nums
        if len(nums) != count:
            return f"pi waiter {name} takes {count} number{'s' if count > 1 else ''} ({usage})"
        if name == "deadline":
            task = _task(["deadline"] + [str(n) for n in nums])
            if isinstance(task, str):
                return task
            out.append(dict(task, pi_owner=0))
        else:
            err = _in(nums[0], RT_RANGE, f"pi waiter {name} priority")
            if err:
                return err
            out.append({"policy": name, "value": nums[0], "pi_owner": 0})
        k += 1 + count
    return out


def _pi_task(args):
    """A `pi` line: `pi NICE PRIORITY...` (a SCHED_OTHER holder, SCHED_FIFO waiters)
    or `pi POLICY VALUE WAITER...` (a holder in any thread policy; waiters fifo P,
    rr P or deadline RUNTIME DEADLINE PERIOD)."""
    if args and not INT.match(args[0]):
        usage = "pi POLICY VALUE fifo|rr PRIORITY|deadline RUNTIME DEADLINE PERIOD ..."
        if len(args) < 4 or args[0] not in THREAD_POLICIES:
            return f"pi takes a holder POLICY VALUE and waiters ({usage})"
        nums = _ints(args[1:2], usage)
        if isinstance(nums, str):
            return nums
        err = _in(nums[0], THREAD_POLICIES[args[0]], f"pi holder {args[0]} value")
        waiters = err or _pi_waiters(args[2:], usage)
        if isinstance(waiters, str):
            return waiters
        if len(waiters) + 1 > MAX_THREADS:
            return f"pi takes at most {MAX_THREADS - 1} waiters ({usage})"
        threads = [{"policy": args[0], "value": nums[0], "pi_owner": None}] + waiters
        return {"policy": "pi", "value": nums[0], "threads": threads}
    usage = "pi NICE PRIORITY [PRIORITY ...]"
    if not 2 <= len(args) <= MAX_THREADS:
        return f"pi takes a NICE and 1..{MAX_THREADS - 1} PRIORITY ({usage})"
    nums = _ints(args, usage)
    if isinstance(nums, str):
        return nums
    err = _in(nums[0], NICE_RANGE, "pi holder nice") or next(
        (e for e in (_in(p, RT_RANGE, "pi waiter fifo priority") for p in nums[1:]) if e),
        None)
    if err:
        return err
    threads = [{"policy": "other", "value": nums[0], "pi_owner": None}]
    threads += [{"policy": "fifo", "value": p, "pi_owner": 0} for p in nums[1:]]
    return {"policy": "pi", "value": nums[0], "threads": threads}


def _threads_task(policy, args):
    """A `pi` or `threads` line: {'policy', 'value', 'threads': [{policy, value,
    pi_owner (index of the holder) or None}, ...]}, or a message."""
    if policy == "pi":
        return _pi_task(args)
    usage = "threads POLICY VALUE [POLICY VALUE ...]"
    if not args or len(args) % 2 or len(args) // 2 > MAX_THREADS:
        return f"threads takes 1..{MAX_THREADS} POLICY VALUE pairs ({usage})"
    threads = []
    for name, value in zip(args[::2], args[1::2]):
        if name not in THREAD_POLICIES:
            return f"unknown thread policy {name!r} (known: {', '.join(THREAD_POLICIES)})"
        nums = _ints([value], usage)
        if isinstance(nums, str):
            return nums
        what = f"{name} priority" if name in ("fifo", "rr") else f"{name} nice"
        err = _in(nums[0], THREAD_POLICIES[name], what)
        if err:
            return err
        threads.append({"policy": name, "value": nums[0], "pi_owner": None})
    return {"policy": "threads", "value": threads[0]["value"], "threads": threads}


def task_lines(tasks):
    """The guest's `task` lines the scenario gives, in the order the guest
    starts them, with stand-in pids (1, 2, ...): a `pi` or `threads` line gives
    one per thread."""
    out = []
    for t in tasks:
        if "threads" not in t:
            out.append(dict(t, pid=len(out) + 1))
            continue
        base = len(out) + 1
        for th in t["threads"]:
            owner = th["pi_owner"]
            out.append({"pid": len(out) + 1, "policy": th["policy"], "value": th["value"],
                        "pi_owner": None if owner is None else base + owner,
                        "line": t["line"]})
    return out


def _task(words):
    """One line's task as a dict, or a message saying what is wrong with it."""
    policy, args = words[0], words[1:]
    if policy in ("pi", "threads"):
        return _threads_task(policy, args)
    if policy not in POLICIES:
        return f"unknown policy {policy!r} (known: {', '.join(POLICIES)}, pi, threads)"
    count, bounds = POLICIES[policy]
    usage = USAGE.get(policy, f"{policy} NICE")
    if len(args) != count:
        return f"{policy} takes {count} number{'s' if count > 1 else ''} ({usage})"
    bad = [a for a in args if not INT.match(a)]
    if bad:
        return f"{bad[0]!r} is not an integer ({usage})"
    nums = [int(a) for a in args]
    task = {"policy": policy, "value": nums[0]}
    if bounds and not bounds[0] <= nums[0] <= bounds[1]:
        what = {"nice": "nice", "fifo": "fifo priority", "rr": "rr priority"}.get(
            policy, f"{policy} nice")
        return f"{what} {nums[0]} out of range {bounds[0]}..{bounds[1]}"
    if policy == "deadline":
        runtime, deadline, period = nums
        if runtime < DL_MIN_RUNTIME:
            return f"deadline runtime {runtime} ns is below {DL_MIN_RUNTIME} ns"
        if not runtime <= deadline <= period:
            return (f"deadline needs runtime <= deadline <= period, got {runtime} "
                    f"{deadline} {period}")
        if not DL_PERIOD_RANGE[0] <= period <= DL_PERIOD_RANGE[1]:
            return (f"deadline period {period} ns out of range "
                    f"{DL_PERIOD_RANGE[0]}..{DL_PERIOD_RANGE[1]}")
        task.update(deadline=deadline, period=period)
    return task


def parse_text(text, name="scenario"):
    """The tasks of a scenario text; HarnessError('usage', '<name>:<line>: ...')."""
    tasks = []
    bandwidth = 0.0
    for lineno, line in enumerate(text.split("\n"), 1):
        where = f"{name}:{lineno}"
        if "\r" in line:
            raise HarnessError("usage", f"{where}: carriage return in the line "
                               "(the guest shell would keep it); use Unix line ends")
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        task = _task(words)
        if isinstance(task, str):
            raise HarnessError("usage", f"{where}: {task}: {line.strip()!r}")
        dl = [t for t in [task] + task.get("threads", []) if t["policy"] == "deadline"]
        if dl:
            bandwidth += sum(t["value"] / t["period"] for t in dl)
            if bandwidth > DL_MAX_BANDWIDTH:
                raise HarnessError("usage", f"{where}: deadline tasks would need "
                                   f"{bandwidth:.0%} of the guest's CPU, admission control "
                                   f"allows {DL_MAX_BANDWIDTH:.0%}: {line.strip()!r}")
        task["line"] = lineno
        tasks.append(task)
    return tasks


def parse(path):
    """Read and check a scenario file; return its tasks."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise HarnessError("usage", f"{path}: cannot read the scenario: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise HarnessError("usage", f"{path}: scenario is not UTF-8 text ({e.reason})") from e
    return parse_text(text, str(path))
