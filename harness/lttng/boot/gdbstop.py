"""gdb at the LTTng guest's quiet point: the memory oracle of the LTTng rows.

The guest init prints ARM once the session has recorded the scenario tasks'
switches, the statedump and the writeback run, and waits on the console. The
host attaches gdb (gdbscripts/ksymlab_lttng.py), which arms a breakpoint on
sethostname(2)'s handler, and answers "go"; the init runs `hostname`, LTTng
records syscall_entry_sethostname, and gdb stops the guest in the handler and
reads every task's prio, the block class and global_wb_domain. That event marks
in the trace the instant gdb read (harness/lttng/boot/trace.py `stop`)."""

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from ...errors import HarnessError
from ...oracles.gdb import GDB_TIMEOUT, GdbSession
from ...oracles.readings import (INT, STR, BlockClassDevice, DirtySysctl, GdbTask, _f, _Parsed,
                                 list_of, map_of, optional, record)

ARM = "KSYMLAB-LTTNG-ARM"
BREAKPOINT = "__x64_sys_sethostname"     # arch/x86 syscall wrapper (6.1, 6.12)
STOP_EVENT = "syscall_entry_sethostname"


@dataclass(frozen=True)
class StopFrame:
    """Where gdb stopped the guest: the breakpoint's frame and the current task."""
    function: str = _f(STR)         # the frame's function: BREAKPOINT
    pc: int = _f(INT)
    pid: int = _f(INT)              # get_current_task(0)->pid: the task that called
    comm: str = _f(STR)


@dataclass(frozen=True)
class WbDomain:
    """global_wb_domain (struct wb_domain) as gdb read it."""
    dirty_limit: int = _f(INT)
    dirty_limit_tstamp: int = _f(INT)
    address: Optional[int] = _f(optional(INT))     # &global_wb_domain


@dataclass(frozen=True)
class IrqAction:
    """One action of an allocated interrupt (irq_desc.action list)."""
    irq: int = _f(INT)
    chip: Optional[str] = _f(optional(STR))        # irq_data.chip->name; None: unnamed
    action: str = _f(STR)                          # irqaction.name ("" without one)


@dataclass(frozen=True)
class GdbStop(_Parsed):
    """gdb.json of the LTTng boot (gdbscripts/ksymlab_lttng.py): guest memory at the
    stop in BREAKPOINT. The rows read its attributes, never its JSON keys."""
    STEP = "gdb"
    SOURCE = "gdb.json"
    stop: StopFrame = _f(record(StopFrame))
    tasks: Mapping[str, GdbTask] = _f(map_of(record(GdbTask)))     # by pid, as a string
    block_class: Tuple[BlockClassDevice, ...] = _f(list_of(record(BlockClassDevice)))
    global_wb_domain: WbDomain = _f(record(WbDomain))
    irq_actions: Tuple[IrqAction, ...] = _f(list_of(record(IrqAction)))
    jiffies: int = _f(INT)
    # the dirty sysctls at the stop (issue 43: the thresholds of balance_dirty_pages'
    # derived fields); None in a reading made before gdb read them
    dirty_sysctl: Optional[DirtySysctl] = _f(optional(record(DirtySysctl)), default=None)
    notes: Tuple[str, ...] = _f(list_of(STR), default=())

    def task(self, pid):
        """The GdbTask of `pid`, None when gdb did not see it."""
        return self.tasks.get(str(pid))


class LttngGdb(GdbSession):
    SCRIPT = "ksymlab_lttng.py"
    WHERE = BREAKPOINT

    def __init__(self, tree, socket_path, workdir, timeout=GDB_TIMEOUT):
        super().__init__(tree, socket_path, {"breakpoint": BREAKPOINT}, workdir,
                         timeout=timeout)
        self.reading = None

    def summary(self, result):
        """The line GdbSession.finish says; parses `result` (gdb.json) into a GdbStop
        first, so a bad reading is one gdb error naming its key."""
        try:
            self.reading = r = GdbStop.parse(result, str(self.out_file))
        except HarnessError as e:
            raise HarnessError(e.step, e.message, self.log) from None
        return (f"stopped in {r.stop.function} (pid {r.stop.pid}): {len(r.tasks)} tasks, "
                f"{len(r.block_class)} block devices, "
                f"global_wb_domain.dirty_limit {r.global_wb_domain.dirty_limit}")

    def finish(self):
        """The GdbStop gdb read."""
        super().finish()
        return self.reading


def read_at_quiet_point(vm, tree, workdir, done):
    """Wait for the guest's ARM, let gdb arm its breakpoint, say go; return the
    GdbStop gdb read. HarnessError when the guest faults (classified from
    the console, as run.py does under gdb) or gdb fails."""
    vm.expect_marker(ARM, "LTTng session recording")
    with LttngGdb(tree, vm.gdb_socket, workdir) as session:
        session.start()
        vm.send_go()
        try:
            return session.finish()
        except HarnessError:
            # a guest that panicked under gdb ends gdb's session too: report
            # what the console says happened, else gdb's own failure
            vm.expect_marker(done, "LTTng session after gdb")
            raise
