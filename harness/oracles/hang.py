"""What a guest that went silent was doing, read before QEMU is stopped.

A hang ("no console output for N s") says nothing about its cause. Before the
harness stops the guest (QemuSession's on_hang), gdb attaches to its gdbstub
three times a second apart (gdbscripts/ksymlab_hang.py) and reads each vCPU's
call chain, what an interrupt in it interrupted, the task it runs, and every
task's state word; the readings go to a JSON file of the caller's and a one-line
summary joins the hang's message:

  vcpu0 in lib_ring_buffer_switch+0x1c (under tick_periodic) as lttng-sessiond[88]
  | idle (default_idle); vcpu1 pc 0xfd09a; runnable: yes[412]; blocked (D): -

A vCPU in the idle loop while a task is runnable, every task asleep, a vCPU spinning
in one kernel function: each points at a different cause. Best effort: without a
gdbstub socket or vmlinux, or when gdb fails, the summary says why, and the hang is
reported as before."""

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .gdb import gdb_argv

GDB_TIMEOUT = 60
SAMPLES = 3         # readings a second apart: one may land in a timer tick
# task_struct state bits (include/linux/sched.h, the same on 6.1 and 6.12)
TASK_INTERRUPTIBLE, TASK_UNINTERRUPTIBLE, TASK_STOPPED, TASK_TRACED = 0x1, 0x2, 0x4, 0x8
EXIT_ZOMBIE, TASK_PARKED, TASK_DEAD, TASK_NOLOAD = 0x20, 0x40, 0x80, 0x400
IDLE_FRAMES = ("default_idle", "native_safe_halt", "arch_cpu_idle", "do_idle", "cpu_idle_poll",
               "pv_native_safe_halt", "default_idle_call")


@dataclass(frozen=True)
class Task:
    pid: int
    comm: str
    state: int
    wchan: tuple = ()       # where it sleeps (ksymlab_hang.py's stack guess)

    @property
    def letter(self):
        """ps's letter: R running or runnable, S sleeping, D uninterruptible, I idle
        kernel thread (D with NOLOAD), T stopped or traced, Z zombie, X dead, P parked."""
        s = self.state
        if s == 0:
            return "R"
        if s & TASK_UNINTERRUPTIBLE and s & TASK_NOLOAD:
            return "I"
        for bit, letter in ((TASK_UNINTERRUPTIBLE, "D"), (TASK_INTERRUPTIBLE, "S"),
                            (TASK_STOPPED | TASK_TRACED, "T"), (EXIT_ZOMBIE, "Z"),
                            (TASK_DEAD, "X"), (TASK_PARKED, "P")):
            if s & bit:
                return letter
        return "?"


@dataclass(frozen=True)
class Vcpu:
    vcpu: int
    pc: int
    frames: tuple
    interrupted: str = None     # what the interrupt in `frames` interrupted
    current: str = None         # "comm[pid]" of the task it runs

    @classmethod
    def from_json(cls, c):
        cur = c.get("current")
        return cls(c["vcpu"], c["pc"], tuple(c.get("frames", ())), c.get("interrupted"),
                   f"{cur['comm']}[{cur['pid']}]" if cur else None)

    @property
    def idle(self):
        return any(f in IDLE_FRAMES for f in self.frames[:4])

    @property
    def where(self):
        """Where it runs: idle, the code an interrupt interrupted, or its call chain."""
        if self.idle:
            return f"idle ({self.frames[0]})"
        if self.interrupted:
            return f"in {self.interrupted} (under {self.frames[0]})" if self.frames \
                else f"in {self.interrupted}"
        if not self.frames:
            return f"pc {self.pc:#x}"
        return "in " + " <- ".join(self.frames[:3])


def summary(readings):
    """One line of one or more readings (ksymlab_hang.py's JSON), taken a second apart:
    each vCPU's places and tasks in sample order, then the tasks of the last reading."""
    if isinstance(readings, dict):
        readings = [readings]
    by_cpu = {}
    for r in readings:
        for c in r.get("vcpus", []):
            v = Vcpu.from_json(c)
            seen = by_cpu.setdefault(v.vcpu, [])
            what = v.where + (f" as {v.current}" if v.current and not v.idle else "")
            if what not in seen:
                seen.append(what)
    parts = [f"vcpu{n} " + " | ".join(seen) for n, seen in sorted(by_cpu.items())]
    ticks = [r.get("clock", {}).get("jiffies") for r in readings]
    if len(ticks) > 1 and None not in ticks:
        took = readings[-1].get("host_s", 0) - readings[0].get("host_s", 0)
        parts.append(f"jiffies +{ticks[-1] - ticks[0]} in {took:.1f} s")
    last = readings[-1] if readings else {}
    if "tasks_error" in last:
        parts.append(f"tasks unread: {last['tasks_error'][:80]}")
    else:
        tasks = [Task(t["pid"], t["comm"], t["state"], tuple(t.get("wchan", ())))
                 for t in last.get("tasks", [])]
        for letter, what in (("R", "runnable"), ("D", "blocked (D)")):
            named = [f"{t.comm}[{t.pid}]" + (f" in {t.wchan[0]}" if t.wchan and letter == "D"
                                             else "")
                     for t in tasks if t.letter == letter and t.pid]
            shown = ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
            parts.append(f"{what}: {shown or '-'}")
    return "; ".join(parts)


def read(tree, gdb_socket, out, timeout=GDB_TIMEOUT, samples=SAMPLES):
    """Attach gdb to the guest behind `gdb_socket` `samples` times, a second apart,
    write the readings to `out` (a JSON list) and return the summary line; on any
    failure, a line saying why (never raises)."""
    gdb_socket, out = Path(gdb_socket), Path(out)
    if not gdb_socket.exists():
        return "post-mortem: no gdbstub socket"
    if not Path(tree.vmlinux).is_file():
        return f"post-mortem: no {tree.vmlinux}"
    log = out.with_suffix(".log")
    one = out.with_suffix(".one.json")
    env = dict(os.environ, KSYMLAB_GDB_SOCKET=str(gdb_socket), KSYMLAB_GDB_OUT=str(one))
    readings = []
    t0 = time.monotonic()
    with open(log, "w") as f:
        for k in range(samples):
            if k:
                time.sleep(1)
            try:
                subprocess.run(gdb_argv(tree, script="ksymlab_hang.py"), stdout=f,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                               timeout=timeout, cwd=paths.REPO)
                # host_s: when it was read (the host's clock), to set jiffies against
                readings.append({**json.loads(one.read_text()),
                                 "host_s": round(time.monotonic() - t0, 2)})
                one.unlink()
            except subprocess.TimeoutExpired:
                return f"post-mortem: gdb took longer than {timeout} s ({log})"
            except OSError as err:
                return f"post-mortem: gdb did not run: {err}"
            except ValueError as err:
                return f"post-mortem: no reading ({err}; {log})"
    out.write_text(json.dumps(readings, indent=1))
    try:
        return summary(readings)
    except (KeyError, TypeError) as err:
        return f"post-mortem: unreadable reading ({type(err).__name__}; {out})"
