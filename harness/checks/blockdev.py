"""The blockdev sampler's checks: every block device the module lists (name,
dev_t and size), and whether each is a whole disk or a partition.

Oracles: sysfs (/sys/class/block) and gdb's own walk of the block class at the
snapshot.
"""

from .enums import Source
from .model import Check


def compare_blockdev(data, truth):
    """The module's list (text and memory) against sysfs and gdb's walk of the block class."""
    def by_name(rows):
        return {b.name: f"{b.dev} {b.sectors}" for b in rows}

    sources = {Source.MODULE: by_name(data.bdev), Source.SYSFS: by_name(data.sysblock),
               Source.MEMORY: by_name(truth.results.bdevs),
               Source.GDB_CLASS: by_name(truth.block_class)}
    values = []
    for name in sorted(set().union(*sources.values())):
        row = {src: rows.get(name) for src, rows in sources.items()}
        values.append(Check("blockdev", name, row,
                            row[Source.MODULE] is not None and len(set(row.values())) == 1))
    return values


def compare_blockdev_whole(data, truth):
    """Disk or partition: the module's `whole` flag against sysfs (a partition
    has /sys/class/block/X/partition, block/partitions/core.c part_attrs) and
    gdb's walk of the block class (bdev_is_partition(): bd_partno != 0; 6.10+
    keeps the number in the low byte of __bd_flags, read by gdb either way)."""
    module = {b.name: b.whole for b in data.bdev}
    sysfs = {b.name: b.whole for b in data.sysblock}
    gdb = {b.name: int(b.partno == 0) for b in truth.block_class}
    values = []
    for name in sorted(set(module) | set(sysfs) | set(gdb)):
        row = {Source.MODULE: module.get(name), Source.SYSFS: sysfs.get(name),
               Source.GDB_CLASS: gdb.get(name)}
        values.append(Check("blockdev", f"{name}/whole", row,
                            row[Source.MODULE] is not None and len(set(row.values())) == 1,
                            label=f"{name} is a whole disk"))
    return values
