"""A hand-written report.json in the new shape (sources under "sources", descriptions
under "info"), for the report renderers and `harness show`.

Four variants, 128 pageblocks each (8 in DMA, 120 in DMA32, order 9), the 13
scenario tasks of harness/scenarios/default.scenario plus a few kernel threads,
and these deliberate differences:

- kallsyms: pageblock "DMA32 pfn 0x3000" module says Movable, gdb's bitmap Unmovable
  (a disagreement); pageblocks DMA32 pfn 0x5000 and 0x5200 are Reclaimable where
  exports has Movable (an A/B difference, not a disagreement).
- stock: scenario task pid 103 (nice 5) reads 21 everywhere but the scenario says 25.
- bpf13: pageblock DMA32 pfn 0xd800 of an unknown migratetype (7) all sources agree on.
- every variant: a check of a kind no renderer knows ("frobnicate").
"""

import copy

VARIANTS = ("exports", "kallsyms", "stock", "bpf13")
MODES = {"exports": "exports", "kallsyms": "kallsyms", "stock": "kprobe", "bpf13": "exports"}
SCENARIO = [("nice", -20), ("nice", -10), ("nice", 0), ("nice", 5), ("nice", 19),
            ("fifo", 1), ("fifo", 50), ("fifo", 99), ("rr", 10), ("rr", 90),
            ("batch", 5), ("idle", 0), ("deadline", None)]
PAGEBLOCK_ORDER = 9


def expected(policy, value):
    if policy in ("nice", "batch", "idle"):
        return 20 + value
    if policy in ("fifo", "rr"):
        return -1 - value
    return -101


def check(kind, key, info, sources, agree=True, reason=None):
    return {"id": f"{kind}:{key}", "kind": kind, "key": key, "info": info,
            "sources": sources, "agree": agree, "reason": reason}


def pageblocks():
    """(zone, pfn) of the 128 pageblocks: DMA pfn 0..0xe00, DMA32 from 0x1000."""
    step = 1 << PAGEBLOCK_ORDER
    return [("DMA", i * step) for i in range(8)] + \
           [("DMA32", 0x1000 + i * step) for i in range(120)]


def base_mt(zone, pfn):
    if zone == "DMA":
        return 0
    i = (pfn - 0x1000) >> PAGEBLOCK_ORDER
    if i < 6:
        return 0            # early kernel allocations
    if i in (40, 41):
        return 2
    if i == 77:
        return 3
    return 1


def symbols(name, n):
    mode = MODES.get(name, "exports")
    method = {"exports": "export", "kallsyms": "kallsyms", "kprobe": "kprobe+kallsyms"}[mode]
    out = []
    for i, sym in enumerate(("task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask",
                             "block_class", "disk_type", "global_wb_domain")):
        addr = f"0xffffffff81{n:01x}{i:02x}000"
        out.append(check("symbol", sym, {"method": method},
                         {"module": addr, "gdb": addr, "proc_kallsyms": addr}))
    return out


def prio_rows(name):
    rows = []
    for pid, comm, prio in ((1, "init", 20), (2, "kthreadd", 20), (3, "rcu_gp", 0),
                            (9, "ksoftirqd/0", 20), (11, "migration/0", -100)):
        rows.append(check("prio", f"pid {pid}", {"comm": comm, "pid": pid},
                          {"module": prio, "memory": prio, "gdb": prio, "proc_stat": prio}))
    for i, (policy, value) in enumerate(SCENARIO):
        pid = 100 + i
        want = expected(policy, value)
        got = want
        agree, reason = True, None
        if name == "stock" and pid == 103:    # the fourth task, nice 5
            got, agree, reason = 21, False, "module 21 != scenario 25"
        sources = {"module": got, "memory": got, "gdb": got, "scenario": want}
        if policy == "nice":
            sources["proc_stat"] = got
        comm = "sleep" if policy == "nice" else "ksymlab-sched"
        rows.append(check("prio", f"pid {pid}", {"comm": comm, "pid": pid}, sources,
                          agree, reason))
    # a thread with no /proc/<pid> and no memory copy: a null source
    rows.append(check("prio", "pid 120", {"comm": "kworker/0:1", "pid": 120},
                      {"module": 20, "memory": None, "gdb": 20}, None, "no memory copy"))
    return rows


def pageblock_rows(name):
    rows = []
    for zone, pfn in pageblocks():
        mt = base_mt(zone, pfn)
        gdb = mt
        if name == "kallsyms" and zone == "DMA32" and pfn in (0x5000, 0x5200):
            mt = gdb = 2
        if name == "bpf13" and zone == "DMA32" and pfn == 0xd800:
            mt = gdb = 7
        agree, reason = True, None
        if name == "kallsyms" and zone == "DMA32" and pfn == 0x3000:
            mt, gdb = 1, 0
            agree, reason = False, "module 1 != gdb_bitmap 0"
        key = f"{zone} pfn {pfn:#x}"
        rows.append(check("pageblock", key, {"zone": zone, "node": 0, "pfn": pfn},
                          {"module": mt, "memory": mt, "gdb_bitmap": gdb}, agree, reason))
    return rows


def histogram(rows):
    hist = {}
    for r in rows:
        k = (r["info"]["zone"], r["sources"]["module"])
        hist[k] = hist.get(k, 0) + 1
    out = []
    for (zone, mt), count in sorted(hist.items()):
        out.append(check("migratetype", f"zone {zone} mt {mt}", {"zone": zone, "mt": mt},
                         {"module": count, "pagetypeinfo": count, "gdb": count}))
    return out


def other_rows(name):
    arg13 = name == "bpf13"
    return [
        check("blockdev", "ram0", {}, {"module": "1:0 8192", "sysfs": "1:0 8192",
                                       "gdb_class": "1:0 8192"}),
        check("blockdev", "ram1", {}, {"module": "1:1 8192", "sysfs": "1:1 8192",
                                       "gdb_class": "1:1 8192"}),
        check("ustack", "return address 0", {"frame": 0},
              {"module": "0x401136", "program": "0x401136"}),
        check("ustack", "frame 0 function", {"frame": 0},
              {"module": "0x401136", "eu_addr2line": "level3", "expected": "level3"}),
        check("writeback", "gds_hits", {}, {"module": 12}, None, "no oracle"),
        check("writeback", "dirty_limit (tracepoint-arg)", {},
              {"module": 2, "gdb": 2}),
        check("bpf", "raw_tp reads argument 13", {"verifier": "ok" if arg13 else "rejected"},
              {"module": arg13, "program": arg13}),
        check("snapshot", "ksymlab_results magic", {}, {"module": "0x6b73796d",
                                                        "gdb": "0x6b73796d"}),
        check("frobnicate", "widgets", {"detail": "a kind no renderer knows"},
              {"module": 3, "gizmo": 3}),
    ]


def variant(name, n):
    pbs = pageblock_rows(name)
    values = prio_rows(name) + pbs + histogram(pbs) + other_rows(name)
    syms = symbols(name, n)
    counts = {"symbols": len(syms), "symbols_agree": sum(s["agree"] is True for s in syms),
              "values": len(values), "values_agree": sum(v["agree"] is True for v in values),
              "unchecked": sum(v["agree"] is None for v in syms + values)}
    ok = all(x["agree"] is not False for x in syms + values)
    return {
        "description": f"the {name} variant", "module_mode": MODES.get(name, "exports"),
        "series": [] if name == "stock" else [f"0001-{name}.patch"],
        "tree_key": f"{n:x}" * 20, "guest_kernel": "6.1.192",
        "verdict": "pass" if ok else "fail", "error": None,
        "symbols": syms, "values": values,
        "samplers": {s: {"available": True, "missing": None}
                     for s in ("prio", "pageblock", "blockdev", "ustack", "writeback", "bpf")},
        "notes": ["bpf13 reads argument 13"] if name == "bpf13" else [],
        "counts": counts,
        "timings": {"module": 3.1 + n, "initramfs": 0.4, "boot": 9.5 + n, "gdb": 6.2,
                    "guest_rest": 1.1, "compare": 0.05},
        "kaslr": {"enabled": False, "slide": None, "guest_text": None},
    }


def make_report(variants=VARIANTS):
    vs = {name: variant(name, n) for n, name in enumerate(variants, 1)}
    rep = {
        "run_id": "20240101-120000", "started": "2024-01-01T12:00:00",
        "finished": "2024-01-01T12:03:20", "tarball": "/usr/src/linux-source-6.1.tar.xz",
        "scenario": "harness/scenarios/default.scenario", "kaslr": False,
        "timings": {"kernel": {n: 0.6 for n in variants}, "guests": 41.0, "report": 0.3},
        "variants": vs,
        "seeds": [
            {"seed": "5/9", "title": "sched: export-GPL task_prio", "status": "ported",
             "why": "every task's priority read through the export", "variants": ["exports"],
             "checks": 20, "agree": 19, "holds": True},
            {"seed": "6/9", "title": "mm: export-GPL get_pageblock_migratetype",
             "status": "ported", "why": "every pageblock's migratetype",
             "variants": ["exports"], "checks": 133, "agree": 133, "holds": True},
        ],
        "across": [
            {"id": "scenario_prios", "what": "scenario task priorities (in scenario order)",
             "values": {n: "; ".join(str(r["sources"]["module"]) for r in v["values"]
                                     if r["kind"] == "prio" and "scenario" in r["sources"])
                        for n, v in vs.items()},
             "identical": False, "must_match": True, "flagged": "stock" in vs,
             "why": "must be identical: same scenario, programs and machine"},
            {"id": "pageblock_count", "what": "number of pageblocks",
             "values": {n: "128" for n in vs}, "identical": True, "must_match": True,
             "flagged": False, "why": None},
            {"id": "symbol_addresses", "what": "resolved kernel addresses",
             "values": {n: "; ".join(f"{s['key']}={s['sources']['module']}"
                                     for s in v["symbols"]) for n, v in vs.items()},
             "identical": False, "must_match": False, "flagged": False,
             "why": "each variant is a different vmlinux"},
        ],
    }
    if "stock" not in vs:
        rep["across"][0]["identical"] = True
        rep["across"][0]["why"] = None
    failing = any(v["verdict"] == "fail" for v in vs.values()) or \
        any(a["flagged"] for a in rep["across"])
    rep["verdict"] = "fail" if failing else "pass"
    return rep


def clean_report(variants=("exports", "kallsyms")):
    """The same run with every disagreement removed (and no flagged difference)."""
    rep = make_report(variants)
    for v in rep["variants"].values():
        for x in v["symbols"] + v["values"]:
            if x["agree"] is False:
                s = x["sources"]
                ref = s.get("gdb_bitmap", s.get("scenario"))
                for k in s:
                    if s[k] is not None:
                        s[k] = ref
                x["agree"], x["reason"] = True, None
        v["verdict"] = "pass"
    for a in rep["across"]:
        a["flagged"] = False
    rep["verdict"] = "pass"
    return copy.deepcopy(rep)


def pageblock(rep, variant_name, key):
    for x in rep["variants"][variant_name]["values"]:
        if x["kind"] == "pageblock" and x["key"] == key:
            return x
    raise KeyError(key)


def same_pageblocks(rep):
    """Every variant's pageblocks made those of the first variant (no A/B difference)."""
    names = list(rep["variants"])
    first = {x["key"]: x for x in rep["variants"][names[0]]["values"] if x["kind"] == "pageblock"}
    for n in names[1:]:
        for x in rep["variants"][n]["values"]:
            if x["kind"] == "pageblock":
                x.update(copy.deepcopy({k: first[x["key"]][k]
                                        for k in ("sources", "agree", "reason")}))
    return rep
