"""The writeback sampler's checks: both writeback tracepoints fired, the dirty
limit each event read, and both thresholds of the last global_dirty_state event.

Oracles: gdb reading global_wb_domain.dirty_limit at the snapshot, and the
thresholds derived from the dirty sysctls gdb read with the kernel's own
formula, written out here (global_dirty_thresholds).
"""

from .model import Check

# arch/x86/include/asm/page_types.h: PAGE_SHIFT 12 (x86_64, 6.1 and 6.12).
PAGE_SIZE = 4096
# mm/page-writeback.c domain_dirty_limits(): "if (thresh > UINT_MAX)".
UINT_MAX = (1 << 32) - 1


def compare_writeback(data, truth):
    values = []
    for w in data["writeback"]:
        for key in ("gds_hits", "bdp_hits"):
            values.append(Check("writeback", key, {"module": w[key], "expected": "> 0"},
                                w[key] > 0))
    for d in data["dirtylimit"]:
        g = truth.get("dirty_limit")
        values.append(Check("writeback", f"dirty_limit/{d['source']}",
                            {"module": d["bdp"], "gdb": g}, g is not None and g == d["bdp"],
                            label=f"dirty_limit ({d['source']})"))
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
        # compare_writeback gives the balance_dirty_pages row only when the
        # module printed one
        values.append(Check("writeback", "dirty_limit/bdp", {"module": None, "gdb": g}, False,
                            label="dirty_limit (balance_dirty_pages)"))
    if not w:
        values += [Check("writeback", key, {"module": None, "expected": "> 0"}, False)
                   for key in ("gds_hits", "bdp_hits")]
    return values
