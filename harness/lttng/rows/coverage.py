"""The coverage table: every name LTTng 2.13.9 resolves through its kallsyms wrapper
x variant -> how this build got it and what the run shows of the feature.

"How" comes from the built modules themselves: a name the .ko import (undefined
symbol, resolved by modpost against the kernel's exports) is an export; a name
left as a string in a .ko is looked up at run time (by the kprobe trick on
kallsyms_lookup_name on >= 5.7, or nothing when built with
CONFIG_LTTNG_KALLSYMS=n); global_wb_domain is a tracepoint argument when the
writeback probe names it nowhere. "Feature" comes from this run's lttng:* rows."""

from pathlib import Path

from ...checks.model import Check
from ...proc import tool_output

# name -> (the feature whose rows prove it, the LTTng feature in words)
NAMES = {
    "task_prio": ("prio", "prio context"),
    "stack_trace_save_user": ("callstack_user", "callstack-user context"),
    # handed over through a variable (func_name), not a literal
    "stack_trace_save": ("callstack_kernel", "callstack-kernel context"),
    "get_pfnblock_flags_mask": ("kmem", "kmem probe (pageblock migratetype)"),
    "global_wb_domain": ("writeback", "writeback dirty_limit/setpoint"),
    "block_class": ("statedump_block", "statedump of block devices"),
    "disk_type": ("statedump_block", "statedump of block devices"),
    "irq_to_desc": ("statedump_irq", "statedump of interrupts"),
    "splice_to_pipe": ("splice", "splice of ring buffer to pipe"),
    "__vmalloc_node_range": (None, "NUMA-aware buffer allocation"),
    "tracepoint_module_notify": (None, "module tracepoints on < 3.15 with signing"),
    "uprobe_register": ("uprobe", "userspace probes"),
    "uprobe_unregister": ("uprobe", "userspace probes"),
    "kvm_x86_ops": ("kvm", "kvm probe fields"),
    "vmalloc_sync_mappings": (None, "vmalloc sync (< 5.8)"),
    "vmalloc_sync_all": (None, "vmalloc sync (< 5.8)"),
    "global_dirty_limit": (None, "writeback (< 4.2)"),
    "get_pageblock_flags_mask": (None, "kmem (Ubuntu 3.13)"),
}
# Names a later release, or an LTTng series of ours, no longer looks up at all
# (release or patches/lttng series -> name -> why).
NOT_LOOKED_UP = {
    "2.13.18": {"task_prio": "inlined as p->prio - MAX_RT_PRIO since v2.13.11 (7f1fa63204f0)"},
    "v2": {"task_prio": "computed in LTTng as p->prio - MAX_RT_PRIO (patches/lttng/0007)"},
}
# An interface of a kernel series that replaces a name: the symbol the modules
# import when they use it, and how the table says so (name -> [(import, how)]).
INTERFACES = {
    "block_class": [("gendisk_block_class", "export (gendisk_block_class())"),
                    ("blk_walk_visible_disks", "export (blk_walk_visible_disks())")],
    "disk_type": [("gendisk_device_type", "export (gendisk_device_type())"),
                  ("blk_walk_visible_disks", "export (blk_walk_visible_disks())")],
    "irq_to_desc": [("irq_walk_actions", "export (irq_walk_actions())")],
    "kvm_x86_ops": [("__SCT__kvm_x86_get_exit_info",
                     "export (static calls kvm_x86_get_exit_info, kvm_x86_get_segment_base)")],
}
# A name the modules hand to a resolver that NAMES does not know.
UNKNOWN = (None, "unknown to ksymlab: no row exercises it")
# A feature row's key prefix in checks.py (kstack.py for callstack_kernel).
FEATURE_ROWS = {"prio": "prio/", "callstack_user": "ustack/", "callstack_kernel": "kstack/",
                "kmem": "kmem/", "writeback": "writeback/", "statedump_block": "blockdev/",
                "statedump_irq": "statedump_irq/", "kvm": "kvm/", "uprobe": "uprobe/",
                "splice": "splice/"}
# A feature whose rows say less than "values agree", in words; and why a feature
# has no rows at all on some builds.
WORKS = {"kvm": "the probe loads (no kvm_exit fires in a TCG guest: no VMX)"}
ABSENT = {"kvm": "not exercised: the tree does not build KVM"}


def _rodata(ko):
    """The bytes of the .rodata* sections of an ELF64 little-endian object (where a
    name handed to the kallsyms wrapper lives; debug info and the symbol table,
    which name imports too, are left out)."""
    data = Path(ko).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return b""
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3a:0x3c], "little")
    shnum = int.from_bytes(data[0x3c:0x3e], "little")
    shstrndx = int.from_bytes(data[0x3e:0x40], "little")

    def section(i):
        h = data[shoff + i * shentsize: shoff + (i + 1) * shentsize]
        return (int.from_bytes(h[0:4], "little"), int.from_bytes(h[4:8], "little"),
                int.from_bytes(h[0x18:0x20], "little"), int.from_bytes(h[0x20:0x28], "little"))
    _, _, stroff, _ = section(shstrndx)
    out = []
    for i in range(shnum):
        name_off, kind, off, size = section(i)
        name = data[stroff + name_off: data.index(b"\0", stroff + name_off)]
        if name.startswith(b".rodata") and kind != 8:       # 8: SHT_NOBITS
            out.append(data[off:off + size])
    return b"\0" + b"\0".join(out)


def _strings(ko):
    return set(_rodata(ko).split(b"\0"))


def _undefined(kos):
    """The symbols any of `kos` imports: one nm for all (an nm per module took 4 s of
    the edit loop's LTTng step for 43 modules, 0.2 s together)."""
    if not kos:
        return set()
    out = tool_output("lttng", ["nm", "-u", "-A", *kos])
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def names(resolved=()):
    """The table's names: NAMES, then every other name the modules were found to hand
    to a resolver (symcheck audit's by-name findings, `resolved`), sorted."""
    return {**NAMES, **{n: UNKNOWN for n in sorted(set(resolved) - set(NAMES))}}


def how(build_dir, kallsyms, version, series=None, resolved=()):
    """name -> how this build of LTTng `version` (with patches/lttng `series`) gets
    it, from its .ko files; `resolved`: names symcheck found handed to a resolver."""
    table = names(resolved)
    kos = sorted(Path(build_dir, "ko").glob("*.ko"))
    imported, named = _undefined(kos), set(resolved)
    for ko in kos:
        strings = _strings(ko)
        named |= {n for n in table if n.encode() in strings}
    out = {}
    gone = {**NOT_LOOKED_UP.get(version, {}), **NOT_LOOKED_UP.get(series, {})}
    for name in table:
        via = [label for sym, label in INTERFACES.get(name, ()) if sym in imported]
        if name in imported:
            out[name] = "export"
        elif via:
            out[name] = via[0]
        elif name == "global_wb_domain" and name not in named:
            out[name] = "tracepoint argument"
        elif name in gone and name not in named:
            out[name] = f"not looked up: {gone[name]}"
        elif name in named:
            out[name] = "kprobe trick (kallsyms_lookup_name)" if kallsyms else \
                "not available (wrapper built without lookups)"
        else:
            out[name] = "not used on this kernel (version-gated)"
    return out


def rows(build_dir, kallsyms, checks, lost, version, series=None, resolved=()):
    """One lttng-coverage row per name: how, and the feature's runtime status."""
    methods = how(build_dir, kallsyms, version, series, resolved)
    out = []
    for name, (feature, words) in names(resolved).items():
        if feature is None:
            status = "not exercised by the session"
        else:
            mine = [c for c in checks if c.key.startswith(FEATURE_ROWS[feature])]
            if feature in lost and all(c.agrees for c in mine):
                status = "lost (as expected)"
            elif mine and all(c.agrees for c in mine):
                status = WORKS.get(feature, "works (values agree with the oracles)")
            elif not mine:
                status = ABSENT.get(feature, "no evidence")
            else:
                status = "wrong or missing (see the lttng rows)"
        out.append(Check("lttng-coverage", name, {"how": methods[name], "feature": status},
                         None, {"feature": words}))
    return tuple(out)
