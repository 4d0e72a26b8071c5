"""Across variants: what must be identical, what may differ and why.

Every variant boots the same initramfs programs and scenario on the same
QEMU machine; only the kernel series (and the module's resolution mode)
differ. So the scenario's priorities, the block devices, the user stack of
the same static program and the number of pageblocks must be identical; a
difference there is flagged and fails the run. Values that follow the
kernel image (addresses, early allocations) or the series itself (BPF
argument 13) may differ, and each row says why.
"""


def _values(entry, kind):
    return [v for v in entry.get("values", []) if v["kind"] == kind]


def scenario_prios(entry):
    """task_prio() of the scenario's tasks in scenario order (their pids may differ)."""
    rows = [v for v in _values(entry, "prio") if "scenario" in v]
    return tuple(str(v["module"]) for v in rows) if rows else None


def blockdevs(entry):
    rows = _values(entry, "blockdev")
    return tuple(f"{v['key']} {v['module']}" for v in rows) if rows else None


def ustack_names(entry):
    rows = [v for v in _values(entry, "ustack") if v["key"].endswith("function")]
    return tuple(f"{v['key']}={v.get('eu_addr2line')}" for v in rows) if rows else None


def ustack_addresses(entry):
    rows = [v for v in _values(entry, "ustack") if v["key"].startswith("return address")]
    return tuple(str(v["module"]) for v in rows) if rows else None


def pageblock_count(entry):
    rows = _values(entry, "pageblock")
    return len(rows) if rows else None


def migratetype_hist(entry):
    rows = _values(entry, "migratetype")
    return tuple(f"{v['key']}={v['module']}" for v in rows) if rows else None


def symbol_addresses(entry):
    rows = [s for s in entry.get("symbols", []) if s["agree"] is not None]
    return tuple(f"{s['name']}={s['module_addr']}" for s in rows) if rows else None


def dirty_limit(entry):
    rows = [v for v in _values(entry, "writeback") if v["key"].startswith("dirty_limit")]
    return rows[0]["module"] if rows else None


def bpf_arg13(entry):
    rows = [v for v in _values(entry, "bpf") if v["key"] == "raw_tp reads argument 13"]
    return rows[0]["module"] if rows else None


# (what, extractor, must be identical, why it may differ)
CHECKS = [
    ("scenario task priorities (in scenario order)", scenario_prios, True, None),
    ("block devices (name, dev, sectors)", blockdevs, True, None),
    ("user stack: function of each frame (eu-addr2line)", ustack_names, True, None),
    ("user stack: the program's return addresses", ustack_addresses, True, None),
    ("number of pageblocks", pageblock_count, True, None),
    ("migratetype histogram", migratetype_hist, False,
     "early boot allocations differ with the kernel image size, so a few pageblocks "
     "may change type; each variant's histogram is checked against its own "
     "/proc/pagetypeinfo and gdb"),
    ("resolved kernel addresses", symbol_addresses, False,
     "each variant is a different vmlinux (and the modes resolve different names); "
     "each address is checked against its own vmlinux and /proc/kallsyms"),
    ("global dirty limit (pages)", dirty_limit, False,
     "derived from free memory at the time of writeback, which follows the kernel's "
     "own footprint; checked per variant against gdb"),
    ("raw tracepoint program reads argument 13", bpf_arg13, False,
     "by design: only the bpf13 series lets a program read the 13th argument"),
]


def compare(variants):
    """Rows {what, values: {variant: value}, identical, must_match, flagged, why}."""
    ran = {n: v for n, v in variants.items() if v.get("values")}
    rows = []
    if len(ran) < 2:
        return rows
    for what, extract, must_match, why in CHECKS:
        values = {n: extract(v) for n, v in ran.items()}
        present = [x for x in values.values() if x is not None]
        if len(present) < 2:
            continue
        identical = all(x == present[0] for x in present)
        flagged = must_match and not identical
        rows.append({"what": what, "values": {n: _show(x) for n, x in values.items()},
                     "identical": identical, "must_match": must_match, "flagged": flagged,
                     "why": why if not identical and not must_match else
                     ("must be identical: same scenario, programs and machine" if flagged
                      else None)})
    return rows


def _show(x):
    if isinstance(x, tuple):
        return "; ".join(x)
    return x
