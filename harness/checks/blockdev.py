"""The blockdev sampler's checks: every block device the module lists (name,
dev_t and size), and whether each is a whole disk or a partition.

Oracles: sysfs (/sys/class/block) and gdb's own walk of the block class at the
snapshot.

In the v2 mode the module lists what blk_walk_visible_disks() visits: like
/proc/partitions it skips a disk without capacity (get_capacity() == 0); such
a disk, by both oracles' sizes, is expected absent from its list.
"""

from .confusions import pair
from .walks import FIRST, FIRST_DISK, NEIGHBOUR, ONE_MORE, neighbour_of
from ..model.enums import Source
from ..model.results import Check


def disk_of(name, devices):
    """The disk a partition `name` belongs to, by the kernel's naming rule (disk_name():
    a `p` between a disk name that ends in a digit and the partition number)."""
    for d in devices:
        if d.type != "disk" or not name.startswith(d.name):
            continue
        rest = name[len(d.name):]
        if d.name[-1:].isdigit() and rest[:1] == "p":
            rest = rest[1:]
        if rest.isdigit():
            return d
    return None


def partition_disk(name, devices):
    """The disk of the partition `name` among `devices` (gdb's walk of the block class),
    or None for a disk or a device the walk lacks."""
    mine = next((d for d in devices if d.name == name), None)
    return disk_of(name, devices) if mine is not None and mine.type == "part" else None


def _part_confusions(truth, name, right, field, sibling=False):
    """A partition's value against its disk's (checks/confusions.py), and with
    `sibling` against the neighbouring partition's of the same disk (a walk that
    takes the neighbour's element); {} for a disk or a device gdb did not walk."""
    disk = partition_disk(name, truth.block_class)
    if not disk:
        return {}
    out = {"the disk's for the partition's": pair(right, field(disk))}
    if sibling:
        other = neighbour_of(name, partitions_of(disk.name, truth.block_class))
        if other is not None:
            out[NEIGHBOUR] = pair(right, other)
    return out


SKIPPED = "not visited: blk_walk_visible_disks() skips a disk without capacity, as " \
    "/proc/partitions does"


def _empty_disks(data, truth):
    """The disks both oracles say have no capacity (their partitions go with them)."""
    sysfs = {b.name for b in data.sysblock if b.whole and b.sectors == 0}
    gdb = {b.name for b in truth.block_class if b.type == "disk" and b.sectors == 0}
    empty = sysfs & gdb
    return empty | {b.name for b in truth.block_class
                    if b.type == "part" and getattr(disk_of(b.name, truth.block_class), "name",
                                                    None) in empty}


def _skipped(name, row, empty):
    """A v2 row of a disk without capacity: right when no module source has it."""
    return name in empty and all(row.get(s) is None for s in (Source.MODULE, Source.MEMORY))


def compare_blockdev(data, truth, walk_skips_empty=False):
    """The module's list (text and memory) against sysfs and gdb's walk of the block class.
    `walk_skips_empty`: the module lists what blk_walk_visible_disks() visits (v2)."""
    def by_name(rows):
        return {b.name: f"{b.dev} {b.sectors}" for b in rows}
    empty = _empty_disks(data, truth) if walk_skips_empty else set()

    sources = {Source.MODULE: by_name(data.bdev), Source.SYSFS: by_name(data.sysblock),
               Source.MEMORY: by_name(truth.results.bdevs),
               Source.GDB_CLASS: by_name(truth.block_class)}
    values = []
    for name in sorted(set().union(*sources.values())):
        row = {src: rows.get(name) for src, rows in sources.items()}
        if _skipped(name, row, empty):
            values.append(Check("blockdev", name, row, True, info={"skipped": SKIPPED}))
            continue
        values.append(Check("blockdev", name, row,
                            row[Source.MODULE] is not None and len(set(row.values())) == 1,
                            info={"confusions": _part_confusions(
                                truth, name, row[Source.GDB_CLASS],
                                lambda d: f"{d.dev} {d.sectors}", sibling=True)}))
    return values


def compare_blockdev_whole(data, truth, walk_skips_empty=False):
    """Disk or partition: the module's `whole` flag against sysfs (a partition
    has /sys/class/block/X/partition, block/partitions/core.c part_attrs) and
    gdb's walk of the block class (bdev_is_partition(): bd_partno != 0; 6.10+
    keeps the number in the low byte of __bd_flags, read by gdb either way)."""
    module = {b.name: b.whole for b in data.bdev}
    sysfs = {b.name: b.whole for b in data.sysblock}
    gdb = {b.name: int(b.partno == 0) for b in truth.block_class}
    empty = _empty_disks(data, truth) if walk_skips_empty else set()
    values = []
    for name in sorted(set(module) | set(sysfs) | set(gdb)):
        row = {Source.MODULE: module.get(name), Source.SYSFS: sysfs.get(name),
               Source.GDB_CLASS: gdb.get(name)}
        if _skipped(name, row, empty):
            values.append(Check("blockdev", f"{name}/whole", row, True,
                                info={"skipped": SKIPPED}, label=f"{name} is a whole disk"))
            continue
        values.append(Check("blockdev", f"{name}/whole", row,
                            row[Source.MODULE] is not None and len(set(row.values())) == 1,
                            info={"confusions": _part_confusions(
                                truth, name, gdb.get(name), lambda d: int(d.partno == 0))},
                            label=f"{name} is a whole disk"))
    return values


def partitions_of(disk, devices, value=lambda d: f"{d.dev} {d.sectors}"):
    """[(name, value(device))] of `disk`'s partitions among `devices` (gdb's walk of the
    block class), in partition-number order."""
    parts = [d for d in devices
             if d.type == "part" and getattr(disk_of(d.name, devices), "name", None) == disk]
    return [(d.name, value(d)) for d in sorted(parts, key=lambda d: d.partno)]


def disk_listing(names, disk, devices):
    """The names of `names` that are `disk` or one of its partitions, sorted: a walk's
    listing of one disk, duplicates kept; None when it has none."""
    return sorted(n for n in names if n == disk or getattr(disk_of(n, devices), "name",
                                                              None) == disk) or None


def compare_walks(data, truth, walk_skips_empty=False):
    """One row per disk: the names the module lists for it (the disk and each of its
    partitions, a name listed twice kept twice) against sysfs' and gdb's walk of the
    block class. The per-device rows (blockdev.compare_blockdev) compare by name and
    merge a device listed twice; these do not."""
    devices = truth.block_class
    empty = _empty_disks(data, truth) if walk_skips_empty else set()
    disks = [d.name for d in devices if d.type == "disk"]
    module = [b.name for b in data.bdev]
    memory = [b.name for b in truth.results.bdevs]
    sysfs = [b.name for b in data.sysblock]
    gdb = [d.name for d in devices]
    values = []
    for k, disk in enumerate(disks):
        row = {Source.MODULE: disk_listing(module, disk, devices),
               Source.MEMORY: disk_listing(memory, disk, devices),
               Source.SYSFS: disk_listing(sysfs, disk, devices),
               Source.GDB_CLASS: disk_listing(gdb, disk, devices)}
        if disk in empty:
            ok = not row[Source.MODULE] and not row[Source.MEMORY]
            values.append(Check("blockdev", f"{disk}/walk", row, ok, info={"skipped": SKIPPED}))
            continue
        right = row[Source.GDB_CLASS] or []
        parts = [n for n, _ in partitions_of(disk, devices)]
        confusions = {
            # the disk's partition walk cut after its first partition
            FIRST: pair(right, sorted([disk] + parts[:1])),
            # the partition walk from part_tbl's index 0: the whole disk once more
            ONE_MORE: pair(right, sorted(right + [disk])),
            # a walk of the block class that stops after its first disk lists
            # nothing for every later one
            FIRST_DISK: pair(right, right if k == 0 else [])}
        values.append(Check("blockdev", f"{disk}/walk", row,
                            len({tuple(v or ()) for v in row.values()}) == 1 and bool(right),
                            info={"confusions": confusions}))
    return values
