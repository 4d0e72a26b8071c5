"""The statedump rows (issue 24, walks: issue 43): LTTng's block device and interrupt
statedumps against gdb's own walks at the stop (the block class; allocated_irqs and
the irq descriptors), sysfs, /proc/partitions and /proc/interrupts. Besides each
element's row, one row per walk listing compares what the walk visited as a whole,
so a walk that stops after the first element of a level, or visits one too many,
fails there; the audit reads each walk's confusions (checks/walks.py) on them."""

from ...checks.blockdev import (disk_listing, disk_of, invisible_confusions, invisible_disks,
                                partition_disk, partitions_of)
from ...checks.confusions import pair
from ...checks.walks import NEIGHBOUR, first_and_one_more, neighbour_of, walk_neighbours
from ...model.results import Check

def _statedump_confusions(walk, walked, name):
    """A partition's dev_t against its disk's and against its neighbouring partition's,
    by gdb's walk of the block class (checks/confusions.py); {} for a disk or a device
    gdb did not walk."""
    disk = partition_disk(name, walk)
    if not disk:
        return {}
    siblings = partitions_of(disk.name, walk, lambda b: b.dev)
    out = {"the disk's for the partition's": pair(walked[name], disk.dev)}
    other = neighbour_of(name, siblings)
    if other is not None:
        out[BLOCK_WALK + NEIGHBOUR] = pair(walked[name], other)
    return out


SKIPPED = "the statedump skips a disk without capacity or hidden, as /proc/partitions does"


def invisible(ctx):
    """{disk: [reasons]} of the disks sysfs (size, `hidden`) and gdb (bd_nr_sectors,
    gendisk.flags) both call invisible: hidden, or without capacity (checks/blockdev.py)."""
    walk = ctx.truth.block_class if ctx.truth else ()
    return invisible_disks({b.name: (b.hidden, b.sectors) for b in ctx.guest.sysblock
                            if b.hidden is not None}, walk)


def block_rows(ctx):
    traced = {b.name: b.dev for b in ctx.summary.block}
    walk = ctx.truth.block_class if ctx.truth else ()
    walked = {b.name: b.dev for b in walk}
    sysfs = {b.name: b.dev for b in ctx.guest.sysblock}
    parts = {p.name: f"{p.major}:{p.minor}" for p in ctx.guest.partitions}
    rule, present = ctx.expect("statedump_block"), bool(traced)
    gone = invisible(ctx)
    rows = []
    if not sysfs:
        rows.append(Check("lttng", "blockdev/sysfs", {"sysfs": None}, False, {},
                          "the guest listed no block device"))
    for name in sorted(set(sysfs) | set(traced) | set(parts) | set(walked)):
        sources = {"lttng statedump": traced.get(name), "sysfs": sysfs.get(name),
                   "/proc/partitions": parts.get(name), "gdb_class": walked.get(name)}
        disk = name if name in gone else getattr(disk_of(name, walk), "name", None)
        if disk in gone:            # skipped, by LTTng and /proc/partitions alike
            rows.append(rule.row(f"blockdev/{name}", present,
                                 name not in traced and name not in parts, sources,
                                 {"skipped": SKIPPED, "invisible": ", ".join(gone[disk])}))
            continue
        right = traced.get(name) == sysfs.get(name) == parts.get(name) == \
            walked.get(name) is not None
        rows.append(rule.row(f"blockdev/{name}", present, right, sources,
                             {"confusions": _statedump_confusions(walk, walked, name)}))
    return rows + block_walk_rows(ctx)


# LTTng's name for a chip without one (lttng-statedump-impl.c), for gdb's None.
UNNAMED_CHIP = "unnamed_irq_chip"


def _by_irq(items):
    """irq -> (chip, [action names in the descriptor's order]) of IrqEvents or
    gdb's IrqActions."""
    out = {}
    for i in items:
        chip, actions = out.get(i.irq, (i.chip or UNNAMED_CHIP, []))
        out[i.irq] = (chip, actions + [i.action])
    return out


def _irq_text(entry):
    return f"{entry[0]}: {', '.join(entry[1])}" if entry else None


def _in_proc(line, entry):
    """/proc/interrupts' line names the chip (unless unnamed) and each action."""
    if line is None or entry is None:
        return False
    chip, actions = entry
    padded = f" {line},"
    return (chip == UNNAMED_CHIP or f" {chip} " in f" {line} ") and \
        all(f" {a}," in padded for a in actions)


def irq_rows(ctx):
    """The interrupt statedump, one row per interrupt: LTTng's chip and actions against
    gdb's walk of the descriptors (exactly, in order) and the line /proc/interrupts
    prints for it (the chip and every action named). Neither oracle calls what LTTng
    calls (irq_to_desc() or irq_walk_actions())."""
    traced = _by_irq(ctx.summary.irq)
    walked = _by_irq(ctx.truth.irq_actions if ctx.truth else ())
    proc = {i.irq: " ".join(i.text) for i in ctx.guest.interrupts}
    rule = ctx.expect("statedump_irq")
    rows = []
    if not proc:
        rows.append(Check("lttng", "statedump_irq/proc", {"/proc/interrupts": None}, False,
                          {}, "the guest listed no interrupt"))
    irqs = sorted(set(traced) | set(walked))
    for k, irq in enumerate(irqs):
        t, g = traced.get(irq), walked.get(irq)
        sources = {"lttng irq statedump": _irq_text(t), "gdb irq descriptors": _irq_text(g),
                   "/proc/interrupts": proc.get(irq)}
        right = t is not None and t == g and _in_proc(proc.get(irq), g)
        other = irqs[k + 1] if k + 1 < len(irqs) else irqs[k - 1] if k else None
        confusions = {"the neighbouring interrupt's": pair(_irq_text(g),
                                                          _irq_text(walked.get(other)))} \
            if g and walked.get(other) else {}
        if g:
            confusions.update(irq_walk_confusions(
                g, walked[other][1][0] if walked.get(other) else None))
        rows.append(rule.row(f"statedump_irq/{irq}", bool(traced), right, sources,
                             {"confusions": confusions}))
    return rows


IRQ_WALK = "irq walk: "
BLOCK_WALK = "block walk: "


def irq_walk_confusions(entry, extra):
    """gdb's (chip, actions) of one interrupt against a walk of its actions that stops
    after the first, that goes on to `extra` (the next interrupt's first action), or
    that takes each action's neighbour's (checks/walks.py), as the row's text."""
    chip, actions = entry
    found = {**first_and_one_more(actions, extra, IRQ_WALK), **walk_neighbours(actions, IRQ_WALK)}
    return {name: pair(_irq_text((chip, right)), _irq_text((chip, confused)))
            for name, (right, confused) in found.items()}


def block_walk_rows(ctx):
    """One row per disk gdb walked: the names LTTng's statedump gave for it and its
    partitions (each event counted) against gdb's walk, sysfs and /proc/partitions. A
    disk without capacity is one the statedump skips (as /proc/partitions does)."""
    walk = ctx.truth.block_class if ctx.truth else ()
    traced = [b.name for b in ctx.summary.block]
    sources_of = {"lttng statedump": traced, "gdb_class": [b.name for b in walk],
                  "sysfs": [b.name for b in ctx.guest.sysblock],
                  "/proc/partitions": [p.name for p in ctx.guest.partitions]}
    disks = [d for d in walk if d.type == "disk"]
    rule, present = ctx.expect("statedump_block"), bool(traced)
    gone = invisible(ctx)
    rows = []
    for k, d in enumerate(disks):
        sources = {s: disk_listing(names, d.name, walk) or [] for s, names in sources_of.items()}
        if d.name in gone:          # skipped, by LTTng and /proc/partitions alike
            right = not sources["lttng statedump"] and not sources["/proc/partitions"]
            rows.append(rule.row(f"blockdev/{d.name}/walk", present, right, sources, {
                "skipped": SKIPPED, "invisible": ", ".join(gone[d.name]),
                "confusions": invisible_confusions(gone[d.name], sources["gdb_class"], True,
                                                   BLOCK_WALK)}))
            continue
        listing = sources["gdb_class"]
        parts = [n for n in listing if n != d.name]
        confusions = {
            BLOCK_WALK + "only the first element": pair(listing, sorted([d.name] + parts[:1])),
            BLOCK_WALK + "one element too many": pair(listing, sorted(listing + [d.name])),
            BLOCK_WALK + "only the first disk": pair(listing, listing if k == 0 else [])}
        right = len({tuple(v) for v in sources.values()}) == 1 and bool(listing)
        rows.append(rule.row(f"blockdev/{d.name}/walk", present, right, sources,
                             {"confusions": confusions}))
    return rows
