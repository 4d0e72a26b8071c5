"""The coverage table: every name LTTng 2.13.9 resolves through its kallsyms wrapper
x variant -> how this build got it and what the run shows of the feature.

"How" comes from the built modules themselves: a name the .ko import (undefined
symbol, resolved by modpost against the kernel's exports) is an export; a name
left as a string in a .ko is looked up at run time (by the kprobe trick on
kallsyms_lookup_name on >= 5.7, or nothing when built with
CONFIG_LTTNG_KALLSYMS=n); global_wb_domain is a tracepoint argument when the
writeback probe names it nowhere. "Feature" comes from this run's lttng:* rows."""

import re
from enum import Enum
from pathlib import Path

from ...model.results import Check
from ...proc import tool_output


class Feature(Enum):
    """An LTTng feature a looked-up name serves; the value is its words in the coverage
    table (report.json's info.feature of an lttng-coverage row)."""
    PRIO = "prio context"
    CALLSTACK_USER = "callstack-user context"
    CALLSTACK_KERNEL = "callstack-kernel context"
    KMEM = "kmem probe (pageblock migratetype)"
    WRITEBACK = "writeback dirty_limit/setpoint"
    STATEDUMP_BLOCK = "statedump of block devices"
    STATEDUMP_IRQ = "statedump of interrupts"
    SPLICE = "splice of ring buffer to pipe"
    NUMA_BUFFERS = "NUMA-aware buffer allocation"
    MODULE_TRACEPOINTS_OLD = "module tracepoints on < 3.15 with signing"
    UPROBE = "userspace probes"
    KVM = "kvm probe fields"
    VMALLOC_SYNC_OLD = "vmalloc sync (< 5.8)"
    WRITEBACK_OLD = "writeback (< 4.2)"
    KMEM_UBUNTU = "kmem (Ubuntu 3.13)"
    UNKNOWN = "unknown to ksymlab: no row exercises it"

    @property
    def rows(self):
        """The id of the lttng rows that prove it (a variant file's `lost` word, a key
        of FEATURE_ROWS), None when no row exercises it."""
        return _ROWS.get(self)

    @classmethod
    def of(cls, words):
        """The Feature of report.json's words, None for words no Feature has."""
        try:
            return cls(words)
        except ValueError:
            return None


_ROWS = {Feature.PRIO: "prio", Feature.CALLSTACK_USER: "callstack_user",
         Feature.CALLSTACK_KERNEL: "callstack_kernel", Feature.KMEM: "kmem",
         Feature.WRITEBACK: "writeback", Feature.STATEDUMP_BLOCK: "statedump_block",
         Feature.STATEDUMP_IRQ: "statedump_irq", Feature.SPLICE: "splice",
         Feature.UPROBE: "uprobe", Feature.KVM: "kvm"}

# name -> the LTTng feature it serves
NAMES = {
    "task_prio": Feature.PRIO,
    "stack_trace_save_user": Feature.CALLSTACK_USER,
    # handed over through a variable (func_name), not a literal
    "stack_trace_save": Feature.CALLSTACK_KERNEL,
    "get_pfnblock_flags_mask": Feature.KMEM,
    # LTTng 2.16 on kernels without get_pfnblock_flags_mask() (v6.17 and later)
    "get_pfnblock_migratetype": Feature.KMEM,
    "global_wb_domain": Feature.WRITEBACK,
    "block_class": Feature.STATEDUMP_BLOCK,
    "disk_type": Feature.STATEDUMP_BLOCK,
    "irq_to_desc": Feature.STATEDUMP_IRQ,
    "splice_to_pipe": Feature.SPLICE,
    "__vmalloc_node_range": Feature.NUMA_BUFFERS,
    "tracepoint_module_notify": Feature.MODULE_TRACEPOINTS_OLD,
    "uprobe_register": Feature.UPROBE,
    "uprobe_unregister": Feature.UPROBE,
    "kvm_x86_ops": Feature.KVM,
    "vmalloc_sync_mappings": Feature.VMALLOC_SYNC_OLD,
    "vmalloc_sync_all": Feature.VMALLOC_SYNC_OLD,
    "global_dirty_limit": Feature.WRITEBACK_OLD,
    "get_pageblock_flags_mask": Feature.KMEM_UBUNTU,
}
# A feature's status in the coverage table when the variant lost it, as the variant
# file expects; OLD_LOST: the status an older report.json gave a lost feature.
LOST = "lost (as expected)"
OLD_LOST = re.compile(r"lost: no \w+ event")
# Names a later release, or an LTTng series of ours, no longer looks up at all
# (release or patches/lttng series -> name -> why).
NOT_LOOKED_UP = {
    "2.13.18": {"task_prio": "inlined as p->prio - MAX_RT_PRIO since v2.13.11 (7f1fa63204f0)"},
    "2.16.0": {"task_prio": "inlined as p->prio - MAX_RT_PRIO since v2.13.11 (7f1fa63204f0)"},
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
    return {**NAMES, **{n: Feature.UNKNOWN for n in sorted(set(resolved) - set(NAMES))}}


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
    for name, served in names(resolved).items():
        feature = served.rows
        if feature is None:
            status = "not exercised by the session"
        else:
            # an unchecked row (a derived value no oracle reads: writeback/derived/*)
            # says nothing either way; one that disagrees makes the feature wrong
            mine = [c for c in checks if c.key.startswith(FEATURE_ROWS[feature])]
            wrong = any(c.disagrees for c in mine)
            if feature in lost and not wrong:
                status = LOST
            elif any(c.agrees for c in mine) and not wrong:
                status = WORKS.get(feature, "works (values agree with the oracles)")
            elif not wrong:
                status = ABSENT.get(feature, "no evidence")
            else:
                status = "wrong or missing (see the lttng rows)"
        out.append(Check("lttng-coverage", name, {"how": methods[name], "feature": status},
                         None, {"feature": served.value}))
    return tuple(out)


def lost_features(values):
    """The Features the lttng-coverage rows among report.json's `values` give as lost
    (LOST, or an older report's "lost: no <event> event"). A name the build cannot
    resolve whose rows fail ("wrong or missing"), or that the session does not
    exercise, is not lost."""
    out = set()
    for c in values:
        if c.get("kind") != "lttng-coverage":
            continue
        status = str((c.get("sources") or {}).get("feature", ""))
        feature = Feature.of((c.get("info") or {}).get("feature"))
        if feature is not None and (status == LOST or OLD_LOST.fullmatch(status)):
            out.add(feature)
    return frozenset(out)
