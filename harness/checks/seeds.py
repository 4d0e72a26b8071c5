"""The nine seed patches: their status in the 6.1 port and the runtime evidence for each.

A seed is checked on every variant whose file says it carries it
(variants/*.toml, `seeds`). Each seed names the checks that back its status
by id: "symbol:<name>" and "<kind>:<key>" rows that must exist, or a whole kind ("prio") that must have
at least one row. A named check that is missing fails the seed instead of
vanishing from the evidence, so a renamed label or key cannot weaken it. The
seed holds when everything it names was made and agrees; "prefixes" names
rows by the start of their id ("lttng:statedump_irq/": one per interrupt the
guest has), at least one of which must exist. patches/README.md has the full
story of each port.

The v2 series (patches/v2, ours) is listed the same way, seed ids "v2-N/8",
each with the runtime evidence of the exports-v2 variants.

Besides the runtime evidence, a seed that is not superseded names the
checks of its own claims (harness/checks/seedclaims.py): read from the seed patch
as posted (an EXPORT_SYMBOL_GPL line, a tracepoint parameter) and checked
on the variant's built tree, so a port that drifts from its seed fails its
row. The kallsyms variant's revert of 0bd476e6 is a row of its own.
"""

from . import seedlines, seedparse

SEEDS = [
    {"seed": "1/9", "title": "tracepoint: call vmalloc_sync_mappings() on registration",
     "status": "superseded",
     "why": "vmalloc_sync_mappings() is gone since v5.8 (73f693c3a705); the module's "
            "tracepoint probes, in vmalloc'd module memory, run without it",
     "ids": ["writeback:gds_hits", "writeback:bdp_hits"]},
    {"seed": "2/9", "title": "bpf: allow up to 13 arguments for tracepoints",
     "status": "ported",
     "why": "literal port: argument 13 still rejected by the verifier (exports); completed "
            "by patches/bpf13: argument 13 readable",
     "ids": ["bpf:arg12/readable", "bpf:arg13/readable"]},
    {"seed": "3/9", "title": "writeback: tracing: pass global_wb_domain as tracepoint parameter",
     "status": "ported", "why": "dirty_limit read through the tracepoint argument",
     "ids": ["writeback:dirty_limit/tracepoint-arg", "bpf:arg12/arg1-domain"]},
    {"seed": "4/9", "title": "stacktrace: export-GPL stack_trace_save_user",
     "status": "ported", "why": "user stack captured through the export",
     "ids": ["symbol:stack_trace_save_user"], "kinds": ["ustack"]},
    {"seed": "5/9", "title": "sched: export-GPL task_prio", "status": "ported",
     "why": "every task's priority read through the export", "ids": ["symbol:task_prio"],
     "kinds": ["prio"]},
    {"seed": "6/9", "title": "mm: export-GPL get_pageblock_migratetype", "status": "ported",
     "why": "every pageblock's migratetype read through get_pfnblock_flags_mask()",
     "ids": ["symbol:get_pfnblock_flags_mask"],
     "kinds": ["migratetype", "pageblock"]},
    {"seed": "7/9", "title": "block: genhd: export-GPL gendisk_name", "status": "superseded",
     "why": "disk_name() is gone since v5.15 (abd2864a3e46); names come from "
            "disk->disk_name and dev_name() and match sysfs",
     "kinds": ["blockdev"]},
    {"seed": "8/9", "title": "block: genhd: export-GPL generic disk device type",
     "status": "ported", "why": "disks enumerated with the disk type from the getter",
     "ids": ["symbol:gendisk_device_type", "symbol:disk_type"],
     "kinds": ["blockdev"]},
    {"seed": "9/9", "title": "block: genhd: export-GPL generic disk block class",
     "status": "ported", "why": "the block class walked through the getter",
     "ids": ["symbol:gendisk_block_class", "symbol:block_class"],
     "kinds": ["blockdev"]},
    {"seed": seedparse.REVERT,
     "title": "revert of kallsyms: unexport kallsyms_lookup_name() and "
              "kallsyms_on_each_symbol()",
     "status": "reverted", "why": "the pre-5.7 stand-in: both exports back as before 0bd476e6; "
                                  "the module resolves every internal by name",
     "ids": ["symbol:kallsyms_lookup_name", "symbol:task_prio"]},
    # ---- v2 (patches/v2, patches/6.12/v2): the claims read from patches/v2
    {"seed": "v2-1/8", "title": "writeback: let trace_balance_dirty_pages() take the dirty "
                                "throttle control", "status": "new",
     "why": "the probe's and LTTng's balance_dirty_pages probes take the dtc (8 arguments)",
     "ids": ["writeback:bdp_hits", "lttng:writeback/balance_dirty_pages"]},
    {"seed": "v2-2/8", "title": "writeback: record the hard dirty limit in the dirty throttle "
                                "control", "status": "new",
     "why": "LTTng's balance_dirty_pages limit is dtc->limit, equal to gdb's wb_domain read "
            "at the stop",
     "ids": ["lttng:writeback/bdp-limit-at-stop"]},
    {"seed": "v2-3/8", "title": "writeback: report the wb_domain in the global_dirty_state "
                                "event", "status": "new",
     "why": "dirty_limit read through the tracepoint argument",
     "ids": ["writeback:dirty_limit/tracepoint-arg", "lttng:writeback/dirty_limit-at-stop"]},
    {"seed": "v2-4/8", "title": "stacktrace: export stack_trace_save_user() to tracers, in a "
                                "namespace", "status": "new",
     "why": "user stack captured through the namespaced export",
     "ids": ["symbol:stack_trace_save_user", "lttng:ustack/stack"], "kinds": ["ustack"]},
    {"seed": "v2-5/8", "title": "mm: export get_pfnblock_flags_mask() to tracers, in a "
                                "namespace", "status": "new",
     "why": "every pageblock's migratetype read through the namespaced export",
     "ids": ["symbol:get_pfnblock_flags_mask"], "kinds": ["migratetype", "pageblock"]},
    {"seed": "v2-6/8", "title": "block: add blk_walk_visible_disks() for statedumps of the "
                                "block devices", "status": "new",
     "why": "disks and partitions enumerated through the walk (probe module and LTTng's "
            "statedump)",
     "ids": ["symbol:blk_walk_visible_disks"], "kinds": ["blockdev"]},
    {"seed": "v2-7/8", "title": "genirq: add irq_walk_actions() for statedumps of the "
                                "handlers", "status": "new",
     "why": "LTTng's interrupt statedump through the walk, against gdb's walk of the "
            "descriptors and /proc/interrupts",
     "prefixes": ["lttng:statedump_irq/"]},
    {"seed": "v2-8/8", "title": "KVM: x86: export the get_exit_info and get_segment_base "
                                "static calls", "status": "new",
     "why": "LTTng's kvm-x86 probe builds and links against the keys (symcheck check of the "
            "LTTng modules); no KVM guest runs in a TCG guest, so kvm_exit never fires",
     "ids": ["lttng:symcheck/check"]},
]


def superseded():
    """The seeds superseded upstream, whose claims are waived (seedclaims.variant_checks)."""
    return {s["seed"] for s in SEEDS if s["status"] == "superseded"}


def claim_ids(seed, line=None):
    """The seed-claim check ids a seed names (on kernel line `line`, seedlines.py):
    none for a superseded seed."""
    if seed["status"] == "superseded":
        return []
    return [c.id for c in seedlines.line_claims(seed["seed"], line)]


def claim_texts(seed):
    return [c.short for c in seedparse.claims(seed["seed"])]


def _not_run(result, ids):
    """Of the evidence ids and prefixes `ids`, those of a step `result` did not run:
    LTTng's rows ("lttng:...") on a variant whose LTTng step did not run (no [lttng]
    table, or --no-lttng: harness/steps.py records no "lttng" lap then)."""
    if "lttng" in result.timings:
        return []
    return [i for i in ids if i.startswith("lttng:")]


def _evidence(seed, result):
    """The checks `seed` names in `result`, the ids and kinds it names that are missing,
    and those of a step that did not run on this variant (_not_run)."""
    rows = result.by_id()
    line = result.kernel_line
    ids = seedlines.evidence_ids(seed["seed"], line, seed.get("ids", ())) + claim_ids(seed, line)
    not_run = _not_run(result, ids + list(seed.get("prefixes", ())))
    ids = [i for i in ids if i not in not_run]
    checks = [rows[i] for i in ids if i in rows]
    missing = [i for i in ids if i not in rows]
    for kind in seed.get("kinds", ()):
        of_kind = result.of_kind(kind)
        checks += of_kind
        if not of_kind:
            missing.append(f"{kind}:*")
    for prefix in seed.get("prefixes", ()):
        if prefix in not_run:
            continue
        named = [c for i, c in rows.items() if i.startswith(prefix)]
        checks += named
        if not named:
            missing.append(f"{prefix}*")
    return checks, missing, not_run


def evaluate(results):
    """One row per seed for the report; `holds` is None when no variant that carries it ran,
    unless one of its claim checks (made before the module is built) failed: then False.

    `results` maps variant names to VariantResult; a seed is checked on every
    variant whose series carries it (the `seeds` of its variant file).
    """
    rows = []
    for seed in SEEDS:
        names = [n for n, r in results.items() if seed["seed"] in r.seeds]
        checks, missing, not_run = [], [], []
        ran = [n for n in names if results[n].ran]
        for name in ran:
            found, absent, skipped = _evidence(seed, results[name])
            checks += found
            missing += [f"{name}: {m}" for m in absent]
            not_run += [f"{name}: {m}" for m in skipped]
        holds = None if not ran or len(ran) < len(names) else \
            (not missing and bool(checks) and not any(c.disagrees for c in checks))
        # a claim is checked on the built tree: one that failed fails the seed even
        # when the variant's module or guest never ran
        broken = [c for n in names if n not in ran for c in results[n].values
                  if c.id in claim_ids(seed, results[n].kernel_line) and c.disagrees]
        changed = sorted({(results[n].kernel_line, ch) for n in names
                          for ch in [seedlines.change(seed["seed"], results[n].kernel_line)]
                          if ch}, key=lambda lc: lc[0])
        if broken:
            checks += broken
            holds = False
        rows.append({"seed": seed["seed"], "title": seed["title"], "status": seed["status"],
                     "why": "; ".join([seed["why"]] + [f"on {ln}: {c.why}" for ln, c in changed]
                                      + ([f"not run: {', '.join(not_run)}"] if not_run else [])),
                     "variants": names, "checks": len(checks),
                     "agree": sum(c.agrees for c in checks),
                     "disagree": sum(c.disagrees for c in checks),
                     "unchecked": sum(c.unchecked for c in checks), "missing": missing,
                     "not_run": not_run,
                     "claims": claim_texts(seed) + [
                         f"on {ln} instead: " + "; ".join(a.short for a in c.added)
                         for ln, c in changed],
                     "claims_checked": seed["status"] != "superseded",
                     "holds": holds})
    return rows
