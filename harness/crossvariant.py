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


# Across kernel lines (6.1 and 6.12 in one run), some rows that must match
# within a line may differ: the kernels lay out memory and zones themselves.
PER_LINE = ("must be identical within a kernel line; another kernel line lays out its "
            "memory map and zones itself (pageblock_order is MAX_ORDER - 1 on 6.1 and "
            "MAX_PAGE_ORDER on 6.12, the boot allocations differ)")

# (id, what, extractor, must be identical, why it may differ,
#  why it may differ across kernel lines: None = must match on every line)
CHECKS = [
    ("scenario-prio", "scenario task priorities (in scenario order)", scenario_prios, True, None,
     None),
    ("blockdevs", "block devices (name, dev, sectors)", blockdevs, True, None, None),
    ("ustack-names", "user stack: function of each frame (eu-addr2line)", ustack_names, True,
     None, None),
    ("ustack-addresses", "user stack: the program's return addresses", ustack_addresses, True,
     None, None),
    ("pageblock-count", "number of pageblocks", pageblock_count, True, None, PER_LINE),
    ("migratetype-hist", "migratetype histogram", migratetype_hist, False,
     "early boot allocations differ with the kernel image size, so a few pageblocks "
     "may change type; each variant's histogram is checked against its own "
     "/proc/pagetypeinfo and gdb", None),
    ("symbol-addresses", "resolved kernel addresses", symbol_addresses, False,
     "each variant is a different vmlinux (and the modes resolve different names); "
     "each address is checked against its own vmlinux and /proc/kallsyms", None),
    ("dirty-limit", "global dirty limit (pages)", dirty_limit, False,
     "derived from free memory at the time of writeback, which follows the kernel's "
     "own footprint; checked per variant against gdb", None),
    ("bpf-arg13", "raw tracepoint program reads argument 13", bpf_arg13, False,
     "by design: only the bpf13 series lets a program read the 13th argument", None),
]


def _differs(values):
    """(identical, names without rows) of one group of extracted values."""
    present = [x for x in values.values() if x is not None]
    absent = sorted(n for n, x in values.items() if x is None)
    return (not absent and all(x == present[0] for x in present)), absent


def compare(results):
    """Rows {id, what, values: {variant: value}, identical, must_match, flagged, why}.

    `results` maps variant names to VariantResult; only variants whose guest
    ran are compared. A must-match row that one compared variant has and
    another lacks is flagged too: a missing row must not pass as "identical".
    A row that must match only within a kernel line is compared per line.
    """
    ran = {n: r for n, r in results.items() if r.ran}
    rows = []
    if len(ran) < 2:
        return rows
    lines = {}
    for n, r in ran.items():
        lines.setdefault(r.kernel_line, []).append(n)
    for cid, what, extract, must_match, why, across_lines in CHECKS:
        values = {n: extract(r) for n, r in ran.items()}
        if all(x is None for x in values.values()) or \
                (not must_match and sum(x is not None for x in values.values()) < 2):
            continue                # nothing to compare (no variant has such rows)
        identical, absent = _differs(values)
        groups = [{n: values[n] for n in names} for names in lines.values()] \
            if across_lines else [values]
        bad = [_differs(g) for g in groups if any(x is not None for x in g.values())]
        flagged = must_match and not all(same for same, _ in bad)
        missing = sorted({n for _, gone in bad for n in gone})
        if flagged and missing:
            reason = f"must be identical, and {', '.join(missing)} has no such rows"
        elif flagged:
            reason = "must be identical: same scenario, programs and machine"
        elif not identical:
            reason = across_lines if must_match else why
        else:
            reason = None
        rows.append({"id": cid, "what": what,
                     "values": {n: _show(x) for n, x in values.items()},
                     "identical": identical, "must_match": must_match, "flagged": flagged,
                     "scope": "kernel line" if across_lines else "all",
                     "why": reason})
    return rows


def _show(x):
    if isinstance(x, tuple):
        return "; ".join(x)
    return x
