"""What a guest that went silent was doing, read before QEMU is stopped.

A hang ("no console output for N s") says nothing about its cause. Before the
harness stops the guest (QemuSession's on_hang), gdb attaches to its gdbstub (gdbscripts/ksymlab_hang.py)
and reads each vCPU's call chain and every task's state word; the reading goes to
<workdir>/hang-<n>.json and a one-line summary joins the hang's message:

  vcpu0 idle (default_idle); runnable: select_poll_epo[412]; blocked (D): -

A vCPU in the idle loop while a task is runnable, every task asleep, a vCPU spinning
in one kernel function: each points at a different cause. Best effort: without a
gdbstub socket or vmlinux, or when gdb fails, the summary says why, and the hang is
reported as before."""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .gdb import gdb_argv

GDB_TIMEOUT = 60
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

    @property
    def idle(self):
        return any(f in IDLE_FRAMES for f in self.frames[:4])

    @property
    def where(self):
        if not self.frames:
            return f"pc {self.pc:#x}"
        return " <- ".join(self.frames[:3])


def summary(reading):
    """One line of the reading (ksymlab_hang.py's JSON)."""
    cpus = [Vcpu(c["vcpu"], c["pc"], tuple(c.get("frames", ()))) for c in reading.get("vcpus", [])]
    tasks = [Task(t["pid"], t["comm"], t["state"]) for t in reading.get("tasks", [])]
    parts = [f"vcpu{c.vcpu} " + (f"idle ({c.frames[0]})" if c.idle else f"in {c.where}")
             for c in cpus]
    if "tasks_error" in reading:
        parts.append(f"tasks unread: {reading['tasks_error'][:80]}")
    else:
        for letter, what in (("R", "runnable"), ("D", "blocked (D)")):
            named = [f"{t.comm}[{t.pid}]" for t in tasks if t.letter == letter and t.pid]
            shown = ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
            parts.append(f"{what}: {shown or '-'}")
    return "; ".join(parts)


def read(tree, gdb_socket, out, timeout=GDB_TIMEOUT):
    """Attach gdb to the guest behind `gdb_socket`, write its reading to `out` and
    return the summary line; on any failure, a line saying why (never raises)."""
    gdb_socket, out = Path(gdb_socket), Path(out)
    if not gdb_socket.exists():
        return "post-mortem: no gdbstub socket"
    if not Path(tree.vmlinux).is_file():
        return f"post-mortem: no {tree.vmlinux}"
    log = out.with_suffix(".log")
    env = dict(os.environ, KSYMLAB_GDB_SOCKET=str(gdb_socket), KSYMLAB_GDB_OUT=str(out))
    try:
        with open(log, "w") as f:
            subprocess.run(gdb_argv(tree, script="ksymlab_hang.py"), stdout=f,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                           timeout=timeout, cwd=paths.REPO)
    except subprocess.TimeoutExpired:
        return f"post-mortem: gdb took longer than {timeout} s ({log})"
    except OSError as err:
        return f"post-mortem: gdb did not run: {err}"
    try:
        return summary(json.loads(out.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as err:
        return f"post-mortem: no reading ({type(err).__name__}; {log})"
