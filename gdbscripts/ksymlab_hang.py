# ksymlab: what a silent guest is doing (harness/guest/postmortem.py).
#
# Run by `gdb -batch` with vmlinux and the kernel's gdb scripts loaded. It
# attaches to the gdbstub (KSYMLAB_GDB_SOCKET), which stops every vCPU, reads
# each vCPU's call chain and every task's pid, comm and state word, writes them
# as JSON to KSYMLAB_GDB_OUT, and detaches: the guest runs on until the harness
# stops QEMU. Nothing here interprets the values; the host does.

import json
import os

import gdb

FRAMES = 12


def call_chain():
    names = []
    try:
        f = gdb.newest_frame()
    except gdb.error:
        return names
    while f is not None and len(names) < FRAMES:
        names.append(f.name() or f"{f.pc():#x}")
        try:
            f = f.older()
        except gdb.error:
            break
    return names


def vcpus():
    out = []
    for th in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        th.switch()
        pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF
        out.append({"vcpu": th.num - 1, "pc": pc, "frames": call_chain()})
    return out


def tasks():
    from linux import tasks as lx_tasks     # the kernel's scripts/gdb
    field = "__state" if any(f.name == "__state"
                             for f in gdb.lookup_type("struct task_struct").fields()) \
        else "state"
    out = []
    for t in lx_tasks.task_lists():
        out.append({"pid": int(t["pid"]), "comm": t["comm"].string(errors="replace"),
                    "state": int(t[field]), "on_cpu": int(t["on_cpu"])
                    if any(f.name == "on_cpu" for f in t.type.target().fields()) else None})
    return out


def main():
    gdb.execute(f"target remote {os.environ['KSYMLAB_GDB_SOCKET']}", to_string=True)
    result = {"vcpus": vcpus()}
    try:
        result["tasks"] = tasks()
    except gdb.error as err:
        result["tasks_error"] = str(err)
    with open(os.environ["KSYMLAB_GDB_OUT"], "w") as f:
        json.dump(result, f, indent=1)


main()
