"""The guest init's dmesg count after a stress run (harness/guest/assets/init),
run as shipped: its own `echo "dmesg warnings=..."` line, under sh, with a
`dmesg` on PATH that prints a doctored kernel log."""

import re
import subprocess

import pytest

from harness import paths

INIT = paths.REPO / "harness" / "guest" / "assets" / "init"

# Lines of a real 6.1 SMP debug boot (stop 50's CI console) and the headers of
# the reports the count exists for (lockdep, might_sleep, WARN(), UBSAN, oops).
BOOT = """\
[    0.000000] Linux version 6.1.192 (root@host) #1 SMP
[    0.104000] rcu: Hierarchical RCU implementation.
[    0.105000] rcu: 	RCU lockdep checking is enabled.
[    0.300000] ... MAX_LOCKDEP_SUBCLASSES:  8
[    0.310000] ... MAX_LOCKDEP_KEYS:        8192
[    1.200000] kprobes: kprobe jump-optimization is enabled. All kprobes are optimized if possible.
[    2.000000] ksymlab_probe: loaded, mode export
"""
REPORTS = [
    "WARNING: possible circular locking dependency detected",
    "WARNING: CPU: 0 PID: 104 at main.c:107 ksymlab_init+0x2f/0x1000 [ksymlab_probe]",
    "BUG: sleeping function called from invalid context at mm/slab.h:712",
    "INFO: trying to register non-static key.",
    "UBSAN: shift-out-of-bounds in probe-module/prio.c:40:12",
    "general protection fault, probably for non-canonical address 0xdead000000000100",
    "general protection fault: 0000 [#1] PREEMPT SMP",
    "Oops: 0000 [#1] SMP",
]


def count_line():
    """The init's own command line that prints the count."""
    lines = [ln.strip() for ln in INIT.read_text().splitlines() if "dmesg warnings=" in ln]
    assert len(lines) == 1, lines
    return lines[0].replace('> "$DATA"', "")


def run_count(tmp_path, log):
    (tmp_path / "log").write_text(log)
    fake = tmp_path / "dmesg"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'log'}\n")
    fake.chmod(0o755)
    p = subprocess.run(["sh", "-c", count_line()], capture_output=True, text=True,
                       env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, timeout=30)
    m = re.fullmatch(r"dmesg warnings=(\d+)\n", p.stdout)
    assert m, (p.stdout, p.stderr)
    return int(m.group(1))


def test_a_clean_debug_boot_counts_nothing(tmp_path):
    # "lockdep" in the RCU banner and the lockdep limits is no report
    assert run_count(tmp_path, BOOT) == 0


@pytest.mark.parametrize("report", REPORTS)
def test_each_report_header_counts_once(tmp_path, report):
    assert run_count(tmp_path, BOOT + f"[    9.000000] {report}\n") == 1


def test_a_user_programs_trap_is_no_kernel_report(tmp_path):
    # as the console watcher (qemu.py FAULTS): the kernel's own fault, not a program's
    line = "[    9.0] traps: busybox[80] general protection fault ip:4011 sp:7ffd error:0"
    assert run_count(tmp_path, BOOT + line + "\n") == 0
