"""Checks for the guest states of issue 12 that compare.py did not cover:
the blockdev `whole` flag, both global_dirty_state thresholds, the dirty
limit of both writeback events, and the value of BPF argument 13.

Every row has a stable key and at least one oracle that does not share code
with the module: gdb reading guest memory at the snapshot, or a value
derived from what gdb read with the kernel's own formula, written out here.
"""

from .model import Check

# arch/x86/include/asm/page_types.h: PAGE_SHIFT 12 (x86_64, 6.1 and 6.12).
PAGE_SIZE = 4096
# mm/page-writeback.c domain_dirty_limits(): "if (thresh > UINT_MAX)".
UINT_MAX = (1 << 32) - 1


def _hex(v):
    return f"0x{v:x}" if v is not None else None


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


def global_dirty_thresholds(sysctl):
    """(background, dirty) thresholds in pages that domain_dirty_limits()
    (mm/page-writeback.c, 6.1 and 6.12) computes for the global domain and
    passes to trace_global_dirty_state(), for a caller that is not a
    real-time task, from the sysctls gdb read. None when a ratio is in use:
    then they depend on the dirtyable memory at the instant of the event.

        thresh    = DIV_ROUND_UP(vm_dirty_bytes, PAGE_SIZE), at most UINT_MAX
        bg_thresh = DIV_ROUND_UP(dirty_background_bytes, PAGE_SIZE)
        if (bg_thresh >= thresh) bg_thresh = thresh / 2
    """
    if not sysctl:
        return None
    dirty, background = sysctl.get("vm_dirty_bytes"), sysctl.get("dirty_background_bytes")
    if not dirty or not background:
        return None
    thresh = min(-(-dirty // PAGE_SIZE), UINT_MAX)
    bg_thresh = -(-background // PAGE_SIZE)
    if bg_thresh >= thresh:
        bg_thresh = thresh // 2
    return bg_thresh, thresh


def compare_writeback_states(data, truth):
    """Both thresholds of the last global_dirty_state event and the dirty limit
    each event read, against gdb; a missing line is a failing row, so that a
    sampler that degrades without saying so cannot pass."""
    w = data["writeback"][0] if data["writeback"] else {}
    d = data["dirtylimit"][0] if data["dirtylimit"] else {}
    mem = truth.get("results", {}).get("wb", {})
    derived = global_dirty_thresholds(truth.get("dirty_sysctl"))
    vmstat = {v["name"]: v["value"] for v in data.get("vmstat", ())}
    values = []
    for i, (key, field, stat) in enumerate((
            ("thresh/background", "background_thresh", "nr_dirty_background_threshold"),
            ("thresh/dirty", "dirty_thresh", "nr_dirty_threshold"))):
        sources = {"module": w.get(field), "memory": mem.get(field),
                   "gdb": derived[i] if derived else None}
        if stat in vmstat:
            sources["vmstat"] = vmstat[stat]
        values.append(Check(
            "writeback", key, sources,
            sources["module"] is not None and len(set(sources.values())) == 1,
            info={"oracles": {"gdb": "independent: domain_dirty_limits() from the sysctls "
                                     "gdb read", "vmstat": "same function"},
                  "sysctl": dict(truth.get("dirty_sysctl") or {})},
            label=f"global_dirty_state {field}"))
    g = truth.get("dirty_limit")
    gds = d.get("gds")
    values.append(Check("writeback", "dirty_limit/gds",
                        {"module": gds, "memory": mem.get("dirty_limit"), "gdb": g},
                        gds is not None and g is not None and gds == g == mem.get("dirty_limit"),
                        label="dirty_limit (global_dirty_state)"))
    if not d:
        # compare.compare_writeback gives the balance_dirty_pages row only
        # when the module printed one
        values.append(Check("writeback", "dirty_limit/bdp", {"module": None, "gdb": g}, False,
                            label="dirty_limit (balance_dirty_pages)"))
    if not w:
        values += [Check("writeback", key, {"module": None, "expected": "> 0"}, False)
                   for key in ("gds_hits", "bdp_hits")]
    return values


# include/linux/jiffies.h: INITIAL_JIFFIES ((unsigned long)(unsigned int)(-300*HZ))
def initial_jiffies(hz):
    return (-300 * hz) & UINT_MAX


def compare_bpf_arg13(data, truth):
    """Argument 13 of balance_dirty_pages is start_time, the jiffies at which
    balance_dirty_pages() began (include/trace/events/writeback.h; the seed
    series puts &global_wb_domain first, so 13 arguments in all). Read by the
    program in the same run as bpf_jiffies64(), it must lie between boot
    (INITIAL_JIFFIES, HZ from the tree's .config) and that instant, which lies
    before gdb's jiffies_64 at the snapshot: no timing bound, only order."""
    values = []
    hz = truth.get("config_hz")
    low = initial_jiffies(hz) if hz else None
    top = truth.get("jiffies")
    for b in data["bpf"]:
        if b["arg"] != 13 or b["result"] != "ok":
            continue
        v, now = b.get("value"), b.get("jiffies")
        ok = None not in (v, now, low, top) and low <= v <= now <= top
        values.append(Check("bpf", "arg13/value",
                            {"program": v, "program_jiffies": now, "gdb_initial_jiffies": low,
                             "gdb_jiffies": top}, ok,
                            info={"meaning": "balance_dirty_pages start_time (jiffies)",
                                  "hz": hz},
                            label="argument 13 is start_time: boot <= it <= the program's "
                                  "jiffies <= gdb's"))
    return values


def compare_states(data, truth):
    return (compare_blockdev_whole(data, truth) + compare_writeback_states(data, truth)
            + compare_bpf_arg13(data, truth))
