# ksymlab: read the ground truth from guest memory while QEMU has the VM halted.
#
# Runs inside gdb after vmlinux and the tree's vmlinux-gdb.py are loaded; it
# attaches to the gdbstub (KSYMLAB_GDB_SOCKET) itself so that a failed attach
# can never fall back to reading the static vmlinux file. Input (KSYMLAB_GDB_IN, JSON): the symbol names
# the module reported. Output (KSYMLAB_GDB_OUT, JSON): what gdb read. The
# comparison is the harness's job; this script only reads.

import json
import os

import gdb
import linux.tasks

# include/linux/sched/prio.h: MAX_RT_PRIO is MAX_USER_RT_PRIO (100) in 6.1.
# It is a macro, absent from DWARF, so it is stated here as the oracle's own
# constant rather than taken from the kernel code under test.
MAX_RT_PRIO = 100


def symbol_address(name):
    """Address of a vmlinux symbol from the ELF/DWARF symbol table, or None."""
    try:
        return int(gdb.parse_and_eval(f"(unsigned long)&{name}"))
    except gdb.error:
        return None


def read_tasks():
    """Every thread of every process: pid, comm and task->prio - MAX_RT_PRIO."""
    tasks = {}
    for t in linux.tasks.task_lists():
        pid = int(t["pid"])
        tasks[str(pid)] = {
            "comm": t["comm"].string(errors="replace"),
            "prio": int(t["prio"]) - MAX_RT_PRIO,
            "policy": int(t["policy"]),
        }
    return tasks


def attach(socket):
    try:
        gdb.execute(f"target remote {socket}", to_string=True)
    except gdb.error as e:
        raise SystemExit(f"ksymlab-gdb: cannot attach to {socket}: {e}")
    if not gdb.selected_inferior().threads():
        raise SystemExit(f"ksymlab-gdb: {socket}: attached, but the target has no threads")


def main():
    attach(os.environ["KSYMLAB_GDB_SOCKET"])
    with open(os.environ["KSYMLAB_GDB_IN"]) as f:
        claims = json.load(f)
    result = {
        "symbols": {name: symbol_address(name) for name in claims["symbols"]},
        "tasks": read_tasks(),
        "dirty_limit": int(gdb.parse_and_eval("global_wb_domain.dirty_limit")),
        "global_wb_domain": symbol_address("global_wb_domain"),
    }
    with open(os.environ["KSYMLAB_GDB_OUT"], "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    print(f"ksymlab-gdb: {len(result['symbols'])} symbols, {len(result['tasks'])} tasks read")


main()
