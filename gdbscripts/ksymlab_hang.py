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


KERNEL = 0xFFFF800000000000      # x86-64: kernel addresses are above this


def symbol(addr):
    """"func+0x12" of a kernel address (gdb's `info symbol`), else the address."""
    text = gdb.execute(f"info symbol {addr:#x}", to_string=True).strip()
    return text.split(" in section")[0].replace(" + ", "+") if "No symbol" not in text \
        else f"{addr:#x}"


def interrupted():
    """What an interrupt or exception interrupted: the ip of the `regs` argument of
    the innermost frame that has one (gdb does not unwind through the entry code)."""
    try:
        f = gdb.newest_frame()
    except gdb.error:
        return None
    while f is not None:
        try:
            regs = f.read_var("regs")
            return symbol(int(regs["ip"]) & 0xFFFFFFFFFFFFFFFF)
        except (ValueError, gdb.error):
            pass
        try:
            f = f.older()
        except gdb.error:
            return None
    return None


def current(cpu):
    """pid and comm of the task the vCPU runs ($lx_current of the kernel's scripts)."""
    try:
        t = gdb.parse_and_eval(f"$lx_current({cpu})")
        return {"pid": int(t["pid"]), "comm": t["comm"].string(errors="replace")}
    except gdb.error:
        return None


def vcpus():
    out = []
    for th in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        th.switch()
        pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF
        cpu = {"vcpu": th.num - 1, "pc": pc, "frames": call_chain()}
        if pc >= KERNEL:
            cpu.update(current=current(th.num - 1), interrupted=interrupted())
        out.append(cpu)
    return out


def kernel_thread():
    """Select a vCPU in kernel mode, else one in long mode: memory reads go through its
    page tables (a vCPU a kernel without SMP never started is in real mode, below
    1 MiB, and reads nothing)."""
    pcs = {}
    for th in gdb.selected_inferior().threads():
        th.switch()
        pcs[th] = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF
    for ok in (lambda pc: pc >= KERNEL, lambda pc: pc >= 0x100000):
        for th, pc in pcs.items():
            if ok(pc):
                th.switch()
                return True
    return False


SCAN = 96              # stack words read above a sleeping task's saved sp
SCHED = ("__schedule", "schedule", "__switch_to_asm", "__switch_to", "schedule_timeout",
         "schedule_hrtimeout_range_clock", "schedule_hrtimeout_range", "io_schedule",
         "preempt_schedule_common", "_cond_resched", "__cond_resched")


def text_ranges():
    """Kernel text and the module area: where a return address can point."""
    stext = int(gdb.parse_and_eval("(unsigned long)_stext"))
    etext = int(gdb.parse_and_eval("(unsigned long)_etext"))
    return [(stext, etext, False), (0xFFFFFFFFA0000000, 0xFFFFFFFFFF000000, True)]


def wchan(t, ranges):
    """Where a sleeping task sleeps, guessed as the kernel's UNWINDER_GUESS does: the
    first text addresses on its stack above the saved sp that are not the
    scheduler's own (modules' addresses stay hex: no module symbols here)."""
    try:
        sp = int(t["thread"]["sp"])
        raw = bytes(gdb.selected_inferior().read_memory(sp, SCAN * 8))
    except gdb.error:
        return []
    out = []
    for i in range(SCAN):
        w = int.from_bytes(raw[8 * i:8 * i + 8], "little")
        for lo, hi, module in ranges:
            if lo <= w < hi:
                name = f"module:{w:#x}" if module else symbol(w)
                if name.split("+")[0] not in SCHED and name not in out:
                    out.append(name)
        if len(out) >= 4:
            break
    return out


def tasks():
    from linux import tasks as lx_tasks     # the kernel's scripts/gdb
    fields = [f.name for f in gdb.lookup_type("struct task_struct").fields()]
    field = "__state" if "__state" in fields else "state"
    ranges = text_ranges()
    out = []
    for t in lx_tasks.task_lists():
        state = int(t[field])
        task = {"pid": int(t["pid"]), "comm": t["comm"].string(errors="replace"),
                "state": state}
        if state:
            task["wchan"] = wchan(t, ranges)
        out.append(task)
    return out


def clock():
    """jiffies and the timekeeper's seconds: do they move between readings?"""
    out = {}
    for name, expr in (("jiffies", "jiffies_64"),
                       ("xtime_sec", "tk_core.timekeeper.xtime_sec")):
        try:
            out[name] = int(gdb.parse_and_eval(expr))
        except gdb.error:
            out[name] = None
    return out


def main():
    gdb.execute(f"target remote {os.environ['KSYMLAB_GDB_SOCKET']}", to_string=True)
    result = {"vcpus": vcpus()}
    kernel_thread()
    result["clock"] = clock()
    try:
        result["tasks"] = tasks()
    except gdb.error as err:
        result["tasks_error"] = str(err)
    with open(os.environ["KSYMLAB_GDB_OUT"], "w") as f:
        json.dump(result, f, indent=1)


main()
