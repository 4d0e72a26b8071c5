"""The blockdev sampler's checks: every block device the module lists (name,
dev_t and size), and whether each is a whole disk or a partition.

Oracles: sysfs (/sys/class/block) and gdb's own walk of the block class at the
snapshot.
"""

from .model import Check


def compare_blockdev(data, truth):
    """The module's list (text and memory) against sysfs and gdb's walk of the block class."""
    def by_name(rows):
        return {b["name"]: f"{b['dev']} {b['sectors']}" for b in rows}

    sources = {"module": by_name(data["bdev"]), "sysfs": by_name(data["sysblock"]),
               "memory": by_name(truth["results"]["bdevs"]),
               "gdb_class": by_name(truth["block_class"])}
    values = []
    for name in sorted(set().union(*sources.values())):
        row = {src: rows.get(name) for src, rows in sources.items()}
        values.append(Check("blockdev", name, row,
                            row["module"] is not None and len(set(row.values())) == 1))
    return values


def _whole_by_name(rows, field):
    return {r["name"]: r.get(field) for r in rows}


def compare_blockdev_whole(data, truth):
    """Disk or partition: the module's `whole` flag against sysfs (a partition
    has /sys/class/block/X/partition, block/partitions/core.c part_attrs) and
    gdb's walk of the block class (bdev_is_partition(): bd_partno != 0; 6.10+
    keeps the number in the low byte of __bd_flags, read by gdb either way)."""
    module = _whole_by_name(data["bdev"], "whole")
    sysfs = _whole_by_name(data["sysblock"], "whole")
    gdb = {b["name"]: (int(b["partno"] == 0) if b.get("partno") is not None else None)
           for b in truth.get("block_class", ())}
    values = []
    for name in sorted(set(module) | set(sysfs) | set(gdb)):
        row = {"module": module.get(name), "sysfs": sysfs.get(name), "gdb_class": gdb.get(name)}
        values.append(Check("blockdev", f"{name}/whole", row,
                            row["module"] is not None and len(set(row.values())) == 1,
                            label=f"{name} is a whole disk"))
    return values
