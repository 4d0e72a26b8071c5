"""The user-stack oracle itself (harness/guest/assets/ustack-frames.h): the
frame-pointer walk the guest program makes of its own stack must be the stack
gdb unwinds, with DWARF CFI, at the same system call. Run on the host: the
program is plain user space (lttng-ustack.c calls getppid(2), nothing of the
module), built by the harness with the guest programs' flags."""

import re
import shutil
import subprocess

import pytest

from harness.prepare import initramfs
from harness.checks.ustack import USTACK_CALLERS

pytestmark = pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb not installed")

FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\w+) \(")


def unwind(tmp_path):
    """(the program's walk, gdb's frames as (pc, function)) at its getppid(2)."""
    prog = initramfs.build_guest_program("lttng-ustack.c", tmp_path)
    p = subprocess.run(["gdb", "-q", "-batch", "-ex", "set startup-with-shell off",
                        "-ex", "catch syscall getppid", "-ex", "run", "-ex", "bt",
                        "-ex", "p/x $pc", "-ex", "delete", "-ex", "continue", str(prog)],
                       capture_output=True, text=True, timeout=120)
    walk = [int(m, 16) for m in re.findall(r"^ustack-walk pid=\d+ idx=\d+ ip=(0x[0-9a-f]+)$",
                                          p.stdout, re.M)]
    frames = []
    for line in p.stdout.splitlines():
        m = FRAME.match(line)
        if m:
            frames.append((int(m.group(2), 16) if m.group(2) else None, m.group(3)))
    pc = re.search(r"^\$1 = (0x[0-9a-f]+)$", p.stdout, re.M)
    if frames and frames[0][0] is None and pc:
        frames[0] = (int(pc.group(1), 16), frames[0][1])
    return walk, frames, p


def test_the_programs_walk_is_the_stack_gdb_unwinds(tmp_path):
    walk, frames, p = unwind(tmp_path)
    assert walk and frames, p.stdout[-2000:] + p.stderr[-2000:]
    # gdb's CFI unwind goes one frame further (glibc's clone3, which keeps no frame
    # pointer); every frame the walk has is gdb's, in order, named as the checks name them
    assert len(frames) > len(walk) == len(USTACK_CALLERS)
    assert [pc for pc, _ in frames[:len(walk)]] == walk
    assert [fn for _, fn in frames[:len(walk)]] == [USTACK_CALLERS[i] for i in range(len(walk))]
    # the program ran the stack in a thread that is not the leader
    expect = re.findall(r"^ustack-expect pid=(\d+) tgid=(\d+)", p.stdout, re.M)
    assert expect and all(pid != tgid for pid, tgid in expect)
