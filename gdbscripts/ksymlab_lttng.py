# ksymlab: gdb's reading of the LTTng guest (issue 13), the oracle of the LTTng
# rows that need guest memory: every task's prio, the block class's devices,
# global_wb_domain and every interrupt's actions (issue 24).
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


# include/linux/xarray.h (6.1: irq_desc_tree is a radix tree, which is an xarray):
# an internal entry has bits 1:0 == 2; a node pointer is the entry minus 2.
XA_CHUNK_SHIFT = 6


def _xa_is_node(entry):
    return entry & 3 == 2 and entry > 4096


def _xa_load(root, index):
    """xa_load() on an xarray read by gdb (no lock: the guest is stopped)."""
    node_type = gdb.lookup_type("struct xa_node").pointer()
    entry = int(root["xa_head"])
    if not _xa_is_node(entry):
        return entry if index == 0 else 0      # a lone entry sits at index 0
    while _xa_is_node(entry):
        node = gdb.Value(entry - 2).cast(node_type)
        offset = (index >> int(node["shift"])) & ((1 << XA_CHUNK_SHIFT) - 1)
        entry = int(node["slots"][offset])
    return entry


def _irq_desc(irq):
    """irq_to_desc(): the maple tree sparse_irqs (6.12, with the tree's own helper) or
    the radix tree irq_desc_tree (6.1); 0 when the number has no descriptor."""
    try:
        tree = gdb.parse_and_eval("&sparse_irqs")
    except gdb.error:
        return _xa_load(gdb.parse_and_eval("irq_desc_tree"), irq)
    import linux.mapletree
    return int(linux.mapletree.mtree_load(tree, irq))


def _nr_irqs():
    """The number of interrupt numbers: nr_irqs, or total_nr_irqs where it was renamed (7.2:
    kernel/irq/irqdesc.c, which the rest of the kernel reads through irq_get_nr_irqs())."""
    try:
        return int(gdb.parse_and_eval("nr_irqs"))
    except gdb.error:
        return int(gdb.parse_and_eval("total_nr_irqs"))


def read_irq_actions():
    """Every action of every allocated interrupt, as /proc/interrupts lists them:
    [{irq, chip, action}], by the allocated_irqs bitmap and irq_to_desc() written out
    here, not by a call into the guest (the module's irq_walk_actions() or LTTng's)."""
    nr = _nr_irqs()
    try:
        # 6.1: the bitmap of allocated numbers; 6.12 keeps them in sparse_irqs only,
        # where a number without a descriptor loads as 0
        bits = gdb.parse_and_eval("allocated_irqs")
        word = bits.type.target().sizeof * 8
    except gdb.error:
        bits = None
    desc_type = gdb.lookup_type("struct irq_desc").pointer()
    out = []
    for irq in range(nr):
        if bits is not None and not int(bits[irq // word]) >> (irq % word) & 1:
            continue
        addr = _irq_desc(irq)
        if not addr:
            continue
        desc = gdb.Value(addr).cast(desc_type)
        chip = desc["irq_data"]["chip"]
        chip_name = chip["name"].string() if int(chip) and int(chip["name"]) else None
        action = desc["action"]
        while int(action):
            name = action["name"].string() if int(action["name"]) else ""
            out.append({"irq": irq, "chip": chip_name, "action": name})
            action = action["next"]
    return out


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
    try:
        irq_actions = read_irq_actions()
    except gdb.error as e:
        # the other readings stand; every interrupt row then lacks gdb's side
        print(f"ksymlab-gdb: cannot walk the irq descriptors: {e}")
        irq_actions = []
    result = {
        "stop": {"function": frame.name(), "pc": frame.pc(),
                 "pid": int(current["pid"]),
                 "comm": current["comm"].string(errors="replace")},
        "tasks": kv.read_tasks(),
        "block_class": kv.read_block_class(),
        "global_wb_domain": read_wb_domain(),
        "irq_actions": irq_actions,
        "jiffies": int(gdb.parse_and_eval("jiffies_64")),
        "dirty_sysctl": kv.read_dirty_sysctls(),
    }
    bp.delete()
    with open(os.environ["KSYMLAB_GDB_OUT"], "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    print(f"ksymlab-gdb: stopped in {where} (pid {result['stop']['pid']}): "
          f"{len(result['tasks'])} tasks, {len(result['block_class'])} block devices, "
          f"dirty_limit {result['global_wb_domain']['dirty_limit']}")


main()
