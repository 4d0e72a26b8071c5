"""The blockdev sampler's checks: every block device the module lists (name,
dev_t and size), and whether each is a whole disk or a partition.

Oracles: sysfs (/sys/class/block) and gdb's own walk of the block class at the
snapshot.

In the v2 mode the module lists what blk_walk_visible_disks() visits: like
/proc/partitions it skips an invisible disk, one without capacity
(get_capacity() == 0) or hidden (GENHD_FL_HIDDEN); such a disk, by both
oracles (sysfs' size and `hidden`, gdb's bd_nr_sectors and gendisk.flags), is
expected absent from its list. The other modes walk the whole block class and
list it. The guest has one of each (harness/guest/assets/disks, issue 43).

A hidden disk's device has no dev_t (block/genhd.c device_add_disk()), so sysfs
has no `dev` for it ("-") and gdb reads its devt as 0:0, while its part0's
bd_dev, which the module reports, has one: gdb's bd_dev is the module's oracle,
its devt sysfs'.
"""

from .confusions import pair
from .walks import (FIRST, FIRST_DISK, INVISIBLE_EMPTY, INVISIBLE_HIDDEN, NEIGHBOUR, ONE_MORE,
                    neighbour_of)
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


SKIPPED = "not visited: blk_walk_visible_disks() skips a disk without capacity or hidden, " \
    "as /proc/partitions does"
HIDDEN, EMPTY = "hidden", "without capacity"


def invisible_disks(sysfs, gdb):
    """{disk: [reasons]} of the disks both oracles call invisible, each reason (HIDDEN,
    EMPTY) by both: `sysfs` {disk: (hidden, sectors)} of the guest's sysblock lines, `gdb`
    its walk of the block class."""
    def reasons(hidden, sectors):
        return [r for r, yes in ((HIDDEN, hidden == 1), (EMPTY, sectors == 0)) if yes]
    by_sysfs = {name: reasons(*v) for name, v in sysfs.items()}
    out = {}
    for d in gdb:
        if d.type == "disk" and d.name in by_sysfs:
            both = [r for r in reasons(d.hidden, d.sectors) if r in by_sysfs[d.name]]
            if both:
                out[d.name] = both
    return out


def _invisible(data, truth):
    """{name: [reasons]} of the invisible disks and their partitions (which go with them)."""
    disks = invisible_disks({b.name: (b.hidden, b.sectors) for b in data.sysblock if b.whole},
                            truth.block_class)
    return {**disks, **{b.name: disks[owner.name] for b in truth.block_class
                        for owner in [disk_of(b.name, truth.block_class)]
                        if b.type == "part" and owner is not None and owner.name in disks}}


def _skipped(name, row, invisible):
    """A v2 row of an invisible disk: right when no module source has it (the whole
    flag's row has no memory source)."""
    return name in invisible and all(row.get(s) is None for s in (Source.MODULE, Source.MEMORY))


def _marks(name, invisible, skips):
    """The info of an invisible disk's row: why it is invisible, and (v2) skipped."""
    if name not in invisible:
        return {}
    out = {"invisible": ", ".join(invisible[name])}
    return {**out, "skipped": SKIPPED} if skips else out


def _sysfs_view(d):
    """gdb's device as sysfs shows it: no `dev` without a devt (a hidden disk's)."""
    return f"{'-' if d.dev.split(':')[0] == '0' else d.dev} {d.sectors}"


def compare_blockdev(data, truth, walk_skips_empty=False):
    """The module's list (text and memory) against sysfs and gdb's walk of the block class.
    `walk_skips_empty`: the module lists what blk_walk_visible_disks() visits (v2): no
    invisible disk. gdb's value is bd_dev's, sysfs' is held to gdb's devt."""
    def by_name(rows):
        return {b.name: f"{b.dev} {b.sectors}" for b in rows}
    invisible = _invisible(data, truth)
    gdb = {b.name: f"{b.bd_dev or b.dev} {b.sectors}" for b in truth.block_class}
    sysfs_view = {b.name: _sysfs_view(b) for b in truth.block_class}
    sources = {Source.MODULE: by_name(data.bdev), Source.SYSFS: by_name(data.sysblock),
               Source.MEMORY: by_name(truth.results.bdevs), Source.GDB_CLASS: gdb}
    values = []
    for name in sorted(set().union(*sources.values())):
        row = {src: rows.get(name) for src, rows in sources.items()}
        info = _marks(name, invisible, walk_skips_empty)
        if walk_skips_empty and name in invisible:
            values.append(Check("blockdev", name, row, _skipped(name, row, invisible), info=info))
            continue
        ok = row[Source.MODULE] is not None and row[Source.SYSFS] == sysfs_view.get(name) and \
            row[Source.MODULE] == row[Source.MEMORY] == row[Source.GDB_CLASS]
        values.append(Check("blockdev", name, row, ok, info={**info, "confusions": _part_confusions(
            truth, name, row[Source.GDB_CLASS], lambda d: f"{d.dev} {d.sectors}", sibling=True)}))
    return values


def compare_blockdev_whole(data, truth, walk_skips_empty=False):
    """Disk or partition: the module's `whole` flag against sysfs (a partition
    has /sys/class/block/X/partition, block/partitions/core.c part_attrs) and
    gdb's walk of the block class (bdev_is_partition(): bd_partno != 0; 6.10+
    keeps the number in the low byte of __bd_flags, read by gdb either way)."""
    module = {b.name: b.whole for b in data.bdev}
    sysfs = {b.name: b.whole for b in data.sysblock}
    gdb = {b.name: int(b.partno == 0) for b in truth.block_class}
    invisible = _invisible(data, truth)
    values = []
    for name in sorted(set(module) | set(sysfs) | set(gdb)):
        row = {Source.MODULE: module.get(name), Source.SYSFS: sysfs.get(name),
               Source.GDB_CLASS: gdb.get(name)}
        info = _marks(name, invisible, walk_skips_empty)
        if walk_skips_empty and name in invisible:
            values.append(Check("blockdev", f"{name}/whole", row, _skipped(name, row, invisible),
                                info=info, label=f"{name} is a whole disk"))
            continue
        values.append(Check("blockdev", f"{name}/whole", row,
                            row[Source.MODULE] is not None and len(set(row.values())) == 1,
                            info={**info, "confusions": _part_confusions(
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
    invisible = _invisible(data, truth)
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
        right = row[Source.GDB_CLASS] or []
        info = _marks(disk, invisible, walk_skips_empty)
        if disk in invisible:
            # a walk of the visible disks that lists it, or of the class that skips it
            info["confusions"] = invisible_confusions(invisible[disk], right, walk_skips_empty)
        if walk_skips_empty and disk in invisible:
            ok = not row[Source.MODULE] and not row[Source.MEMORY]
            values.append(Check("blockdev", f"{disk}/walk", row, ok, info=info))
            continue
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
                            info={**info, "confusions": {**info.get("confusions", {}),
                                                         **confusions}}))
    return values


def invisible_confusions(reasons, listing, skips, prefix=""):
    """{confusion: [right, confused]} of an invisible disk's walk row, one per reason:
    `skips` (a walk of the visible disks) right [], confused the disk's `listing` (gdb's);
    else (a walk of the whole class) the reverse."""
    names = {HIDDEN: INVISIBLE_HIDDEN, EMPTY: INVISIBLE_EMPTY}
    return {prefix + names[r]: pair([], listing) if skips else pair(listing, []) for r in reasons}
