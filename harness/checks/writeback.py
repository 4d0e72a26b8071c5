"""The writeback sampler's checks: both writeback tracepoints fired, the dirty
limit each event read, and both thresholds of the last global_dirty_state event.

Oracles: gdb reading global_wb_domain.dirty_limit at the snapshot, and the
thresholds derived from the dirty sysctls gdb read with the kernel's own
formula, written out here (global_dirty_thresholds).
"""

from dataclasses import asdict

from .confusions import pair
from ..model.enums import Source
from ..model.results import Check

# arch/x86/include/asm/page_types.h: PAGE_SHIFT 12 (x86_64, 6.1 and 6.12).
PAGE_SIZE = 4096
# mm/page-writeback.c domain_dirty_limits(): "if (thresh > UINT_MAX)".
UINT_MAX = (1 << 32) - 1


def _limit_confusions(truth, right, event):
    """The dirty limit the module read at `event` against the thresholds a sampler could
    take for it, derived from the sysctls gdb read (checks/confusions.py; named per
    event: the module reads each in a probe of its own); {} when a ratio is in use."""
    derived = global_dirty_thresholds(truth.dirty_sysctl)
    if derived is None or right is None:
        return {}
    return {f"thresh for the {event} limit": pair(right, derived[1]),
            f"bg_thresh for the {event} limit": pair(right, derived[0])}


def compare_writeback(data, truth):
    values = []
    for w in data.writeback:
        for key, hits in (("gds_hits", w.gds_hits), ("bdp_hits", w.bdp_hits)):
            values.append(Check("writeback", key, {Source.MODULE: hits, Source.EXPECTED: "> 0"},
                                hits > 0))
    for d in data.dirtylimit:
        g = truth.dirty_limit
        values.append(Check("writeback", f"dirty_limit/{d.source}",
                            {Source.MODULE: d.bdp, Source.GDB: g}, g is not None and g == d.bdp,
                            info={"confusions": _limit_confusions(truth, g,
                                                                  "balance_dirty_pages")},
                            label=f"dirty_limit ({d.source})"))
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
    dirty, background = sysctl.vm_dirty_bytes, sysctl.dirty_background_bytes
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
    w = data.writeback[0] if data.writeback else None
    d = data.dirtylimit[0] if data.dirtylimit else None
    mem = truth.results.wb
    derived = global_dirty_thresholds(truth.dirty_sysctl)
    vmstat = {v.name: v.value for v in data.vmstat}
    values = []
    for i, (key, field, stat) in enumerate((
            ("thresh/background", "background_thresh", "nr_dirty_background_threshold"),
            ("thresh/dirty", "dirty_thresh", "nr_dirty_threshold"))):
        # the same field of the module's line and of its struct ksymlab_wb_sample
        sources = {Source.MODULE: getattr(w, field) if w else None,
                   Source.MEMORY: getattr(mem, field),
                   Source.GDB: derived[i] if derived else None}
        if stat in vmstat:
            sources[Source.VMSTAT] = vmstat[stat]
        values.append(Check(
            "writeback", key, sources,
            sources[Source.MODULE] is not None and len(set(sources.values())) == 1,
            info={"oracles": {Source.GDB: "independent: domain_dirty_limits() from the "
                                          "sysctls gdb read", Source.VMSTAT: "same function"},
                  # by name, as gdb.json has always had them (sort_keys)
                  "sysctl": dict(sorted(asdict(truth.dirty_sysctl).items())),
                  # the other threshold and the dirty limit, as a sampler could mix them
                  "confusions": {"the other threshold": pair(derived[i], derived[1 - i]),
                                 "dirty limit for the threshold":
                                     pair(derived[i], truth.dirty_limit)} if derived else {}},
            label=f"global_dirty_state {field}"))
    g = truth.dirty_limit
    gds = d.gds if d else None
    values.append(Check("writeback", "dirty_limit/gds",
                        {Source.MODULE: gds, Source.MEMORY: mem.dirty_limit, Source.GDB: g},
                        gds is not None and g is not None and gds == g == mem.dirty_limit,
                        info={"confusions": _limit_confusions(truth, g, "global_dirty_state")},
                        label="dirty_limit (global_dirty_state)"))
    if not d:
        # compare_writeback gives the balance_dirty_pages row only when the
        # module printed one
        values.append(Check("writeback", "dirty_limit/bdp", {Source.MODULE: None, Source.GDB: g},
                            False, label="dirty_limit (balance_dirty_pages)"))
    if not w:
        values += [Check("writeback", key, {Source.MODULE: None, Source.EXPECTED: "> 0"}, False)
                   for key in ("gds_hits", "bdp_hits")]
    return values
