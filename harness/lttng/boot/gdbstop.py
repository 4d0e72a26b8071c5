"""gdb at the LTTng guest's quiet point: the memory oracle of the LTTng rows.

The guest init prints ARM once the session has recorded the scenario tasks'
switches, the statedump and the writeback run, and waits on the console. The
host attaches gdb (gdbscripts/ksymlab_lttng.py), which arms a breakpoint on
sethostname(2)'s handler, and answers "go"; the init runs `hostname`, LTTng
records syscall_entry_sethostname, and gdb stops the guest in the handler and
reads every task's prio, the block class and global_wb_domain. That event marks
in the trace the instant gdb read (harness/lttng/boot/trace.py `stop`)."""

from ...errors import HarnessError
from ...oracles.gdb import GDB_TIMEOUT, GdbSession

ARM = "KSYMLAB-LTTNG-ARM"
BREAKPOINT = "__x64_sys_sethostname"     # arch/x86 syscall wrapper (6.1, 6.12)
STOP_EVENT = "syscall_entry_sethostname"


class LttngGdb(GdbSession):
    SCRIPT = "ksymlab_lttng.py"
    WHERE = BREAKPOINT

    def __init__(self, tree, socket_path, workdir, timeout=GDB_TIMEOUT):
        super().__init__(tree, socket_path, {"breakpoint": BREAKPOINT}, workdir,
                         timeout=timeout)

    def summary(self, result):
        wb = result["global_wb_domain"]
        return (f"stopped in {result['stop']['function']} (pid {result['stop']['pid']}): "
                f"{len(result['tasks'])} tasks, {len(result['block_class'])} block devices, "
                f"global_wb_domain.dirty_limit {wb['dirty_limit']}")


def read_at_quiet_point(vm, tree, workdir, done):
    """Wait for the guest's ARM, let gdb arm its breakpoint, say go; return what
    gdb read at the stop. HarnessError when the guest faults (classified from
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
