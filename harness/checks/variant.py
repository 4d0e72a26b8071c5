"""Every check of one variant, sampler by sampler: the orchestrator of harness/checks.

Each sampler of probe-module has its checks in a module of its own (prio,
pageblock, blockdev, ustack, writeback, bpf, symbols), each comparing the
module's claims with oracles independent of it: gdb reading guest memory, the
scenario file (expected priorities), sysfs, /proc and the guest programs' own
values. A value no oracle covers yet is reported UNCHECKED (agree null) and does not
count towards the verdict. This module only calls them, in report order, and
adds the rows of the run itself (results header, stress, degraded samplers);
the sampler modules never import it. drgn's columns (drgn_columns.merge) and
the two-oracle rule (checks/labels.py) are added by harness/run.py.
"""

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from . import blockdev, bpf, pageblock, prio, symbols, ustack, writeback
from ..model.enums import Source
from ..model.results import Check, frozen, hex_text
from ..guest.dataport import RESULTS_MAGIC


def compare_results_header(truth, data=None):
    """gdb found the module's results and stopped inside the snapshot they belong to."""
    r = truth.results
    stop = truth.stop
    rows = []
    for line in data.results if data is not None else ():
        # the module's own &ksymlab_results against gdb's, found through the
        # module's DWARF at the section addresses /sys/module reported
        rows.append(Check("snapshot", "results-address",
                          {Source.MODULE: hex_text(line.addr), Source.GDB: hex_text(r.addr)},
                          line.addr == r.addr, label="ksymlab_results address"))
    return rows + [
        Check("snapshot", "magic",
              {Source.MODULE: f"{r.magic:#x}", Source.EXPECTED: f"{RESULTS_MAGIC:#x}"},
              r.magic == RESULTS_MAGIC, label="ksymlab_results magic"),
        Check("snapshot", "stop-function",
              {Source.MODULE: stop.function, Source.EXPECTED: "ksymlab_snapshot_taken"},
              stop.function == "ksymlab_snapshot_taken", label="gdb stopped in"),
        Check("snapshot", "sequence", {Source.MODULE: r.snapshot_seq, Source.GDB: stop.seq},
              stop.seq is None or stop.seq == r.snapshot_seq,
              label="snapshot sequence at the stop"),
    ]


def compare_stress(data, expected_cycles):
    """The insmod/rmmod stress run: every cycle worked, no leak, no warning."""
    if not expected_cycles:
        return []
    st = data.stress[0] if data.stress else None
    cycles, failed = (st.cycles, st.failed) if st else (None, None)
    values = [Check("stress", "cycles", {Source.MODULE: cycles, Source.EXPECTED: expected_cycles},
                    cycles == expected_cycles),
              Check("stress", "failed", {Source.MODULE: failed, Source.EXPECTED: 0},
                    failed == 0, label="failed insmod/rmmod")]
    for k in data.kmemleak:
        values.append(Check("stress", "kmemleak",
                            {Source.MODULE: k.ksymlab_frames, Source.EXPECTED: 0},
                            bool(k.available) and k.ksymlab_frames == 0,
                            info={"kmemleak_total": k.leaks},
                            label="kmemleak objects with ksymlab frames"))
    for d in data.dmesg:
        values.append(Check("stress", "dmesg-warnings",
                            {Source.MODULE: d.warnings, Source.EXPECTED: 0},
                            d.warnings == 0, label="dmesg warnings"))
    return values


@dataclass(frozen=True)
class Comparison:
    """What compare_variant() found for one variant."""
    symbols: tuple
    values: tuple
    samplers: Mapping
    notes: tuple
    guest_errors: tuple
    resolve_ns: Optional[int]


def compare_variant(data, truth, stress_cycles=0, variant=None, ustack_names=None):
    """Every symbol and value of one variant against its oracles."""
    values = compare_results_header(truth, data)
    values += prio.compare_prio(data, truth)
    values += prio.compare_policy(data, truth)
    values += pageblock.compare_pageblocks(data, truth)
    values += pageblock.compare_migratetype(data, truth)
    values += pageblock.compare_pageblock_snapshots(data, truth)
    values += prio.compare_prio_snapshots(data, truth)
    # v2: the module lists what blk_walk_visible_disks() visits
    v2 = getattr(variant, "module_mode", None) == "v2"
    values += blockdev.compare_blockdev(data, truth, v2)
    values += ustack.compare_ustack(data, truth, ustack_names)
    values += writeback.compare_writeback(data, truth)
    values += bpf.compare_bpf(data, truth, variant)
    values += blockdev.compare_blockdev_whole(data, truth, v2)
    values += blockdev.compare_walks(data, truth, v2)
    values += writeback.compare_writeback_states(data, truth)
    values += bpf.compare_bpf_arg13(data, truth)
    values += compare_stress(data, stress_cycles)
    notes = [f"sampler {u.sampler} reported itself unavailable" for u in data.unavailable]
    notes += [f"guest error: {e}" for e in data.errors]
    return Comparison(
        symbols=tuple(symbols.compare_symbols(data, truth)), values=tuple(values),
        # report.json's samplers: {name: {available, missing}}
        samplers=frozen({s.name: {"available": bool(s.available), "missing": s.missing}
                         for s in data.sampler}),
        notes=tuple(notes), guest_errors=data.errors,
        resolve_ns=next((r.ns for r in data.resolve), None))


# The value kinds each sampler of probe-module produces.
SAMPLER_KINDS = {"prio": ("prio", "policy"), "migratetype": ("pageblock", "migratetype"),
                 "ustack": ("ustack",), "blockdev": ("blockdev",),
                 "writeback": ("writeback",), "symbols": ()}
DEGRADED_REASON = "the variant's expectation says this sampler degrades"


def expect_degraded(found, degraded=()):
    """A check per sampler: available, unless the variant says it must degrade.

    An unexpected degradation fails (its own row besides the values it could
    not give); an expected one passes when the sampler did report itself
    unavailable, and the values it could not give are unchecked with the
    reason, not failures.
    """
    rows = []
    for name, sm in found.samplers.items():
        must_degrade = name in degraded
        rows.append(Check("sampler", name,
                          {Source.MODULE: "available" if sm["available"] else
                           f"unavailable ({sm['missing']})",
                           Source.EXPECTED: "unavailable" if must_degrade else "available"},
                          sm["available"] != must_degrade,
                          reason=DEGRADED_REASON if must_degrade else None))
    for name in degraded:
        if name not in found.samplers:
            rows.append(Check("sampler", name, {Source.MODULE: None,
                                                Source.EXPECTED: "unavailable"},
                              False, reason=DEGRADED_REASON))
    gone = {k for name in degraded if not found.samplers.get(name, {}).get("available", True)
            for k in SAMPLER_KINDS.get(name, ())}
    values = tuple(replace(c, agreement=None, reason=DEGRADED_REASON)
                   if c.kind in gone and c.get(Source.MODULE) is None and c.disagrees else c
                   for c in found.values)
    return replace(found, values=tuple(rows) + values)
