"""The nine seed patches: their status in the 6.1 port and the runtime evidence for each.

Each seed names the checks of a variant (symbols by name, values by kind and
key prefix) that back its status; the seed holds when all of them were made
and agree. patches/README.md has the full story of each port.
"""

SEEDS = [
    {"seed": "1/9", "title": "tracepoint: call vmalloc_sync_mappings() on registration",
     "status": "superseded",
     "why": "vmalloc_sync_mappings() is gone since v5.8 (73f693c3a705); the module's "
            "tracepoint probes, in vmalloc'd module memory, run without it",
     "variant": "exports", "values": [("writeback", "gds_hits"), ("writeback", "bdp_hits")]},
    {"seed": "2/9", "title": "bpf: allow up to 13 arguments for tracepoints",
     "status": "ported",
     "why": "literal port: argument 13 still rejected by the verifier (exports); completed "
            "by patches/bpf13: argument 13 readable",
     "variant": "exports", "also": "bpf13", "values": [("bpf", "raw_tp reads argument")]},
    {"seed": "3/9", "title": "writeback: tracing: pass global_wb_domain as tracepoint parameter",
     "status": "ported", "why": "dirty_limit read through the tracepoint argument",
     "variant": "exports",
     "values": [("writeback", "dirty_limit (tracepoint-arg)"),
                ("bpf", "argument 1 is &global_wb_domain")]},
    {"seed": "4/9", "title": "stacktrace: export-GPL stack_trace_save_user",
     "status": "ported", "why": "user stack captured through the export",
     "variant": "exports", "symbols": ["stack_trace_save_user"], "values": [("ustack", "")]},
    {"seed": "5/9", "title": "sched: export-GPL task_prio", "status": "ported",
     "why": "every task's priority read through the export", "variant": "exports",
     "symbols": ["task_prio"], "values": [("prio", "")]},
    {"seed": "6/9", "title": "mm: export-GPL get_pageblock_migratetype", "status": "ported",
     "why": "every pageblock's migratetype read through get_pfnblock_flags_mask()",
     "variant": "exports", "symbols": ["get_pfnblock_flags_mask"],
     "values": [("migratetype", ""), ("pageblock", "")]},
    {"seed": "7/9", "title": "block: genhd: export-GPL gendisk_name", "status": "superseded",
     "why": "disk_name() is gone since v5.15 (abd2864a3e46); names come from "
            "disk->disk_name and dev_name() and match sysfs",
     "variant": "exports", "values": [("blockdev", "")]},
    {"seed": "8/9", "title": "block: genhd: export-GPL generic disk device type",
     "status": "ported", "why": "disks enumerated with the disk type from the getter",
     "variant": "exports", "symbols": ["gendisk_device_type", "disk_type"],
     "values": [("blockdev", "")]},
    {"seed": "9/9", "title": "block: genhd: export-GPL generic disk block class",
     "status": "ported", "why": "the block class walked through the getter",
     "variant": "exports", "symbols": ["gendisk_block_class", "block_class"],
     "values": [("blockdev", "")]},
]


def _evidence(seed, entry):
    checks = [s for s in entry.get("symbols", []) if s["name"] in seed.get("symbols", [])]
    checks += [v for v in entry.get("values", [])
               if any(v["kind"] == k and v["key"].startswith(p) for k, p in seed["values"])]
    return checks


def evaluate(variants):
    """One row per seed for the report; `holds` is None when its variant did not run."""
    rows = []
    for seed in SEEDS:
        names = [seed["variant"]] + ([seed["also"]] if "also" in seed else [])
        checks, ran = [], True
        for name in names:
            entry = variants.get(name)
            if entry is None or entry.get("error"):
                ran = False
                continue
            checks += _evidence(seed, entry)
        holds = None if not ran else (bool(checks) and all(c["agree"] is not False
                                                           for c in checks))
        rows.append({"seed": seed["seed"], "title": seed["title"], "status": seed["status"],
                     "why": seed["why"], "variants": names, "checks": len(checks),
                     "agree": sum(c["agree"] is True for c in checks), "holds": holds})
    return rows
