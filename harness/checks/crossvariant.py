"""Across variants: what must be identical, what may differ and why.

Every variant boots the same initramfs programs and scenario on the same
QEMU machine; only the kernel series (and the module's resolution mode)
differ. So the scenario's priorities, the block devices, the user stack of
the same static program and the number of pageblocks must be identical; a
difference there is flagged and fails the run. Values that follow the
kernel image (addresses, early allocations) or the series itself (BPF
argument 13) may differ, and each row says why.
"""

from dataclasses import dataclass
from typing import Callable, Optional

from ..model.enums import Source
from .ustack import USTACK_CALLERS



def scenario_prios(result):
    """task_prio() of the scenario's tasks in scenario order (their pids may differ)."""
    rows = [c for c in result.of_kind("prio") if Source.SCENARIO in c.sources]
    return tuple(str(c.get(Source.MODULE)) for c in rows) if rows else None


def blockdevs(result):
    """The visible disks' rows: an invisible disk (hidden, or without capacity) is listed
    by the class walk only, not by v2's blk_walk_visible_disks() (checks/blockdev.py)."""
    rows = [c for c in result.of_kind("blockdev") if "invisible" not in c.info]
    return tuple(f"{c.key} {c.get(Source.MODULE)}" for c in rows) if rows else None


def _ids(result, ids):
    """The rows with these ids, in that order; None when any is missing."""
    rows = result.by_id()
    if not all(i in rows for i in ids):
        return None
    return [rows[i] for i in ids]


def ustack_names(result):
    rows = _ids(result, [f"ustack:fn/{d}" for d in sorted(USTACK_CALLERS)])
    return tuple(f"frame {d}={c.get(Source.EU_ADDR2LINE)}" for d, c in enumerate(rows)) \
        if rows else None


def ustack_addresses(result):
    """The return addresses the program recorded (keys ret/<depth>), deepest call last."""
    rows = sorted((c for c in result.of_kind("ustack") if c.key.startswith("ret/")),
                  key=lambda c: int(c.key.split("/")[1]))
    return tuple(str(c.get(Source.MODULE)) for c in rows) if rows else None


def pageblock_count(result):
    return len(result.of_kind("pageblock")) or None


def migratetype_hist(result):
    rows = result.of_kind("migratetype")
    return tuple(f"{c.key}={c.get(Source.MODULE)}" for c in rows) if rows else None


def symbol_addresses(result):
    rows = [c for c in result.symbols if not c.unchecked]
    return tuple(f"{c.key}={c.get(Source.MODULE)}" for c in rows) if rows else None


def dirty_limit(result):
    rows = _ids(result, ["writeback:dirty_limit/tracepoint-arg"]) or \
        _ids(result, ["writeback:dirty_limit/global_wb_domain"])
    return rows[0].get(Source.MODULE) if rows else None


def bpf_arg13(result):
    rows = _ids(result, ["bpf:arg13/readable"])
    return rows[0].get(Source.MODULE) if rows else None


# Across kernel lines (6.1 and 6.12 in one run), some rows that must match
# within a line may differ: the kernels lay out memory and zones themselves.
PER_LINE = ("must be identical within a kernel line; another kernel line lays out its "
            "memory map and zones itself (pageblock_order is MAX_ORDER - 1 on 6.1 and "
            "MAX_PAGE_ORDER on 6.12, the boot allocations differ)")

@dataclass(frozen=True)
class Rule:
    id: str
    what: str
    kind: str               # the kind of check rows it reads
    extract: Callable       # VariantResult -> comparable value, None when its rows are missing
    must_match: bool
    why: Optional[str] = None           # why a difference is expected (must_match False)
    across_lines: Optional[str] = None  # why it may differ across kernel lines (None: it may not)


RULES = [
    Rule("scenario-prio", "scenario task priorities (in scenario order)", "prio",
         scenario_prios, True),
    Rule("blockdevs", "block devices (name, dev, sectors)", "blockdev", blockdevs, True),
    Rule("ustack-names", "user stack: function of each frame (eu-addr2line)", "ustack",
         ustack_names, True),
    Rule("ustack-addresses", "user stack: the program's return addresses", "ustack",
         ustack_addresses, True),
    Rule("pageblock-count", "number of pageblocks", "pageblock", pageblock_count, True,
         across_lines=PER_LINE),
    Rule("migratetype-hist", "migratetype histogram", "migratetype", migratetype_hist, False,
         "early boot allocations differ with the kernel image size, so a few pageblocks "
         "may change type; each variant's histogram is checked against its own "
         "/proc/pagetypeinfo and gdb"),
    Rule("symbol-addresses", "resolved kernel addresses", "symbol", symbol_addresses, False,
         "each variant is a different vmlinux (and the modes resolve different names); "
         "each address is checked against its own vmlinux and /proc/kallsyms"),
    Rule("dirty-limit", "global dirty limit (pages)", "writeback", dirty_limit, False,
         "derived from free memory at the time of writeback, which follows the kernel's "
         "own footprint; checked per variant against gdb"),
    Rule("bpf-arg13", "raw tracepoint program reads argument 13", "bpf", bpf_arg13, False,
         "by design: only the bpf13 series lets a program read the 13th argument"),
]


def _has_kind(result, kind):
    return bool(result.symbols) if kind == "symbol" else bool(result.of_kind(kind))


def _differs(values):
    """(identical, names without rows) of one group of extracted values."""
    present = [x for x in values.values() if x is not None]
    absent = sorted(n for n, x in values.items() if x is None)
    return (not absent and all(x == present[0] for x in present)), absent


def compare(results):
    """Rows {id, what, values: {variant: value}, identical, must_match, flagged, why}.

    `results` maps variant names to VariantResult; only variants whose guest
    ran are compared. A must-match row that a compared variant lacks, while
    some variant has checks of the rule's kind, is flagged too: a missing or
    renamed check must not pass as "identical". A row that must match only within a kernel line is compared per line.
    """
    ran = {n: r for n, r in results.items() if r.ran}
    rows = []
    if len(ran) < 2:
        return rows
    lines = {}
    for n, r in ran.items():
        lines.setdefault(r.kernel_line, []).append(n)
    for rule in RULES:
        cid, what, must_match, why, across_lines = (rule.id, rule.what, rule.must_match,
                                                    rule.why, rule.across_lines)
        values = {n: rule.extract(r) for n, r in ran.items()}
        # Rows of the rule's kind but none of the ids it reads: a renamed check,
        # which must not make a must-match row vanish.
        if not any(_has_kind(r, rule.kind) for r in ran.values()) or \
                (not must_match and sum(x is not None for x in values.values()) < 2):
            continue                # nothing to compare (no variant has such rows)
        identical, absent = _differs(values)
        groups = [{n: values[n] for n in names} for names in lines.values()] \
            if across_lines else [values]
        bad = [_differs(g) for g in groups]
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
