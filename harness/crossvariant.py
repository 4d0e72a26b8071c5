"""Across variants: what must be identical, what may differ and why.

Every variant boots the same initramfs programs and scenario on the same
QEMU machine; only the kernel series (and the module's resolution mode)
differ. So the scenario's priorities, the block devices, the user stack of
the same static program and the number of pageblocks must be identical; a
difference there is flagged and fails the run. Values that follow the
kernel image (addresses, early allocations) or the series itself (BPF
argument 13) may differ, and each row says why.
"""


def scenario_prios(result):
    """task_prio() of the scenario's tasks in scenario order (their pids may differ)."""
    rows = [c for c in result.of_kind("prio") if "scenario" in c.sources]
    return tuple(str(c.get("module")) for c in rows) if rows else None


def blockdevs(result):
    rows = result.of_kind("blockdev")
    return tuple(f"{c.key} {c.get('module')}" for c in rows) if rows else None


def _ids(result, ids):
    """The rows with these ids, in that order; None when any is missing."""
    rows = result.by_id()
    if not all(i in rows for i in ids):
        return None
    return [rows[i] for i in ids]


def ustack_names(result):
    rows = _ids(result, [f"ustack:fn/{d}" for d in range(4)])
    return tuple(f"frame {d}={c.get('eu_addr2line')}" for d, c in enumerate(rows)) \
        if rows else None


def ustack_addresses(result):
    rows = _ids(result, [f"ustack:ret/{d}" for d in range(3)])
    return tuple(str(c.get("module")) for c in rows) if rows else None


def pageblock_count(result):
    return len(result.of_kind("pageblock")) or None


def migratetype_hist(result):
    rows = result.of_kind("migratetype")
    return tuple(f"{c.key}={c.get('module')}" for c in rows) if rows else None


def symbol_addresses(result):
    rows = [c for c in result.symbols if c.agree is not None]
    return tuple(f"{c.key}={c.get('module')}" for c in rows) if rows else None


def dirty_limit(result):
    rows = _ids(result, ["writeback:dirty_limit/tracepoint-arg"]) or \
        _ids(result, ["writeback:dirty_limit/global_wb_domain"])
    return rows[0].get("module") if rows else None


def bpf_arg13(result):
    rows = _ids(result, ["bpf:arg13/readable"])
    return rows[0].get("module") if rows else None


# (id, what, extractor, must be identical, why it may differ)
CHECKS = [
    ("scenario-prio", "scenario task priorities (in scenario order)", scenario_prios, True, None),
    ("blockdevs", "block devices (name, dev, sectors)", blockdevs, True, None),
    ("ustack-names", "user stack: function of each frame (eu-addr2line)", ustack_names, True,
     None),
    ("ustack-addresses", "user stack: the program's return addresses", ustack_addresses, True,
     None),
    ("pageblock-count", "number of pageblocks", pageblock_count, True, None),
    ("migratetype-hist", "migratetype histogram", migratetype_hist, False,
     "early boot allocations differ with the kernel image size, so a few pageblocks "
     "may change type; each variant's histogram is checked against its own "
     "/proc/pagetypeinfo and gdb"),
    ("symbol-addresses", "resolved kernel addresses", symbol_addresses, False,
     "each variant is a different vmlinux (and the modes resolve different names); "
     "each address is checked against its own vmlinux and /proc/kallsyms"),
    ("dirty-limit", "global dirty limit (pages)", dirty_limit, False,
     "derived from free memory at the time of writeback, which follows the kernel's "
     "own footprint; checked per variant against gdb"),
    ("bpf-arg13", "raw tracepoint program reads argument 13", bpf_arg13, False,
     "by design: only the bpf13 series lets a program read the 13th argument"),
]


def compare(results):
    """Rows {id, what, values: {variant: value}, identical, must_match, flagged, why}.

    `results` maps variant names to VariantResult; only variants whose guest
    ran are compared. A must-match row that one compared variant has and
    another lacks is flagged too: a missing row must not pass as "identical".
    """
    ran = {n: r for n, r in results.items() if r.ran}
    rows = []
    if len(ran) < 2:
        return rows
    for cid, what, extract, must_match, why in CHECKS:
        values = {n: extract(r) for n, r in ran.items()}
        present = [x for x in values.values() if x is not None]
        absent = sorted(n for n, x in values.items() if x is None)
        if not present or (not must_match and len(present) < 2):
            continue                # nothing to compare (no variant has such rows)
        identical = not absent and all(x == present[0] for x in present)
        flagged = must_match and not identical
        if flagged and absent:
            reason = f"must be identical, and {', '.join(absent)} has no such rows"
        elif flagged:
            reason = "must be identical: same scenario, programs and machine"
        else:
            reason = why if not identical else None
        rows.append({"id": cid, "what": what,
                     "values": {n: _show(x) for n, x in values.items()},
                     "identical": identical, "must_match": must_match, "flagged": flagged,
                     "why": reason})
    return rows


def _show(x):
    if isinstance(x, tuple):
        return "; ".join(x)
    return x
