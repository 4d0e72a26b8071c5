# ksymlab: gdb's reading of the LTTng guest (issue 13), the oracle of the LTTng
# rows that need guest memory: every task's prio, the block class's devices and
# global_wb_domain.
#
# Runs inside gdb after vmlinux and the tree's vmlinux-gdb.py are loaded; the
# readers are ksymlab_verify.py's (imported, not run). The LTTng guest init
# announces a quiet point while its session records and waits; the host starts
# this script, which attaches, arms a breakpoint on the kernel function the init
# calls next (sethostname(2), which nothing else in the guest calls), and
# creates KSYMLAB_GDB_ARMED. The init then calls it: LTTng has recorded its
# syscall_entry_sethostname event (the syscall tracepoint fires before the
# handler), and gdb stops the guest in the handler. gdb reads, writes
# KSYMLAB_GDB_OUT and detaches (gdb_argv's `detach`); the guest goes on.
#
# Input (KSYMLAB_GDB_IN, JSON): {"breakpoint": function name}.

import json
import os
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ksymlab_verify as kv     # noqa: E402  (gdb's module path set just above)
import linux.cpus               # noqa: E402  (from the tree's vmlinux-gdb.py)


def read_wb_domain():
    """global_wb_domain's dirty limit as the writeback tracepoints record it."""
    dom = gdb.parse_and_eval("global_wb_domain")
    return {"dirty_limit": int(dom["dirty_limit"]),
            "dirty_limit_tstamp": int(dom["dirty_limit_tstamp"]),
            "address": kv.symbol_address("global_wb_domain")}


def main():
    kv.attach(os.environ["KSYMLAB_GDB_SOCKET"])
    with open(os.environ["KSYMLAB_GDB_IN"]) as f:
        claims = json.load(f)
    where = claims["breakpoint"]
    bp = gdb.Breakpoint(where, internal=True)
    with open(os.environ["KSYMLAB_GDB_ARMED"], "w") as f:
        f.write(f"{where}\n")
    gdb.execute("continue", to_string=True)
    frame = gdb.selected_frame()
    if frame.name() != where:
        raise SystemExit(f"ksymlab-gdb: the guest stopped in {frame.name()} at "
                         f"{frame.pc():#x}, not at {where}")
    current = linux.cpus.get_current_task(0)
    result = {
        "stop": {"function": frame.name(), "pc": frame.pc(),
                 "pid": int(current["pid"]),
                 "comm": current["comm"].string(errors="replace")},
        "tasks": kv.read_tasks(),
        "block_class": kv.read_block_class(),
        "global_wb_domain": read_wb_domain(),
        "jiffies": int(gdb.parse_and_eval("jiffies_64")),
    }
    bp.delete()
    with open(os.environ["KSYMLAB_GDB_OUT"], "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    print(f"ksymlab-gdb: stopped in {where} (pid {result['stop']['pid']}): "
          f"{len(result['tasks'])} tasks, {len(result['block_class'])} block devices, "
          f"dirty_limit {result['global_wb_domain']['dirty_limit']}")


main()
