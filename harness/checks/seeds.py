"""The nine seed patches: their status in the 6.1 port and the runtime evidence for each.

A seed is checked on every variant whose file says it carries it
(variants/*.toml, `seeds`). Each seed names the checks that back its status
by id: "symbol:<name>" and "<kind>:<key>" rows that must exist, or a whole kind ("prio") that must have
at least one row. A named check that is missing fails the seed instead of
vanishing from the evidence, so a renamed label or key cannot weaken it. The
seed holds when everything it names was made and agrees. patches/README.md
has the full story of each port.

Besides the runtime evidence, a seed that is not superseded names the
checks of its own claims (harness/checks/seedclaims.py): read from the seed patch
as posted (an EXPORT_SYMBOL_GPL line, a tracepoint parameter) and checked
on the variant's built tree, so a port that drifts from its seed fails its
row. The kallsyms variant's revert of 0bd476e6 is a row of its own.
"""

from . import seedclaims

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
    {"seed": seedclaims.REVERT,
     "title": "revert of kallsyms: unexport kallsyms_lookup_name() and "
              "kallsyms_on_each_symbol()",
     "status": "reverted", "why": "the pre-5.7 stand-in: both exports back as before 0bd476e6; "
                                  "the module resolves every internal by name",
     "ids": ["symbol:kallsyms_lookup_name", "symbol:task_prio"]},
]


def superseded():
    """The seeds superseded upstream, whose claims are waived (seedclaims.variant_checks)."""
    return {s["seed"] for s in SEEDS if s["status"] == "superseded"}


def claim_ids(seed):
    """The seed-claim check ids a seed names: none for a superseded seed."""
    if seed["status"] == "superseded":
        return []
    return [c.id for c in seedclaims.claims(seed["seed"])]


def claim_texts(seed):
    return [c.short for c in seedclaims.claims(seed["seed"])]


def _evidence(seed, result):
    """The checks `seed` names in `result`, and the ids and kinds it names that are missing."""
    rows = result.by_id()
    ids = list(seed.get("ids", ())) + claim_ids(seed)
    checks = [rows[i] for i in ids if i in rows]
    missing = [i for i in ids if i not in rows]
    for kind in seed.get("kinds", ()):
        of_kind = result.of_kind(kind)
        checks += of_kind
        if not of_kind:
            missing.append(f"{kind}:*")
    return checks, missing


def evaluate(results):
    """One row per seed for the report; `holds` is None when no variant that carries it ran,
    unless one of its claim checks (made before the module is built) failed: then False.

    `results` maps variant names to VariantResult; a seed is checked on every
    variant whose series carries it (the `seeds` of its variant file).
    """
    rows = []
    for seed in SEEDS:
        names = [n for n, r in results.items() if seed["seed"] in r.seeds]
        checks, missing = [], []
        ran = [n for n in names if results[n].ran]
        for name in ran:
            found, absent = _evidence(seed, results[name])
            checks += found
            missing += [f"{name}: {m}" for m in absent]
        holds = None if not ran or len(ran) < len(names) else \
            (not missing and bool(checks) and not any(c.disagrees for c in checks))
        # a claim is checked on the built tree: one that failed fails the seed even
        # when the variant's module or guest never ran
        ids = set(claim_ids(seed))
        broken = [c for n in names if n not in ran for c in results[n].values
                  if c.id in ids and c.disagrees]
        if broken:
            checks += broken
            holds = False
        rows.append({"seed": seed["seed"], "title": seed["title"], "status": seed["status"],
                     "why": seed["why"], "variants": names, "checks": len(checks),
                     "agree": sum(c.agrees for c in checks), "missing": missing,
                     "claims": claim_texts(seed),
                     "claims_checked": seed["status"] != "superseded",
                     "holds": holds})
    return rows
