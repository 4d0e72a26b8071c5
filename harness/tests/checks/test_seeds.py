from dataclasses import replace

from harness.checks import seedparse, seeds
from harness.model.results import Check, StepError, VariantResult


ALL = tuple(f"{i}/9" for i in range(1, 10))


def result(values, symbols=(), name="exports", error=None, seeds=ALL, lttng=True):
    """A variant's result; `lttng`: its LTTng step ran (the "lttng" lap, harness/steps.py)."""
    return VariantResult(name, "test", "exports", symbols=tuple(symbols), values=tuple(values),
                         error=error, seeds=seeds, timings={"lttng": 9.5} if lttng else {})


def check(kind, key, agree=True):
    return Check(kind, key, {"module": 1}, agree)


# every claim the seed patches make, as the claim checks of a port that holds them
# (written out: a parse of patches/seeds/ that found nothing must not pass)
CLAIM_KEYS = [
    "2/9/export/bpf_trace_run13",
    "3/9/tracepoint/global_dirty_state/args", "3/9/tracepoint/global_dirty_state/param1",
    "3/9/tracepoint/balance_dirty_pages/args", "3/9/tracepoint/balance_dirty_pages/param1",
    "4/9/export/stack_trace_save_user", "5/9/export/task_prio",
    "6/9/export/get_pfnblock_flags_mask", "8/9/export/gendisk_device_type",
    "9/9/export/gendisk_block_class",
    "0bd476e6/export/kallsyms_lookup_name", "0bd476e6/export/kallsyms_on_each_symbol",
]
CLAIMS = [check("seed", key) for key in CLAIM_KEYS]
GOOD = [check("writeback", "gds_hits"), check("writeback", "bdp_hits"),
        check("writeback", "dirty_limit/tracepoint-arg"), check("bpf", "arg12/readable"),
        check("bpf", "arg13/readable"), check("bpf", "arg12/arg1-domain"),
        check("prio", "pid 1")] + CLAIMS


def row(rows, seed):
    (r,) = [r for r in rows if r["seed"] == seed]
    return r


V2 = tuple(f"v2-{i}/8" for i in range(1, 9))
# every claim the v2 series makes (patches/v2), written out
V2_CLAIM_KEYS = [
    "v2-1/8/tracepoint/balance_dirty_pages/args", "v2-1/8/tracepoint/balance_dirty_pages/param2",
    "v2-2/8/struct/dirty_throttle_control.limit",
    "v2-3/8/tracepoint/global_dirty_state/args", "v2-3/8/tracepoint/global_dirty_state/param1",
    "v2-4/8/export/stack_trace_save_user", "v2-5/8/export/get_pfnblock_flags_mask",
    "v2-6/8/export/blk_walk_visible_disks", "v2-7/8/export/irq_walk_actions",
    "v2-8/8/export/__SCK__kvm_x86_get_exit_info", "v2-8/8/export/__SCK__kvm_x86_get_segment_base",
    "v2-8/8/export/__SCT__kvm_x86_get_exit_info", "v2-8/8/export/__SCT__kvm_x86_get_segment_base",
]


def test_every_seed_listed_once():
    assert [s["seed"] for s in seeds.SEEDS] == \
        [f"{i}/9" for i in range(1, 10)] + ["0bd476e6"] + list(V2)
    assert {s["status"] for s in seeds.SEEDS} == {"ported", "superseded", "reverted", "new"}
    assert seeds.superseded() == {"1/9", "7/9"}


def test_the_seed_patches_make_exactly_the_written_claims():
    """The claims read from patches/seeds/ and patches/v2/ are the ones this file writes
    out, and a superseded seed's (7/9 gendisk_name) are not among those checked."""
    parsed = [c.key for s in seeds.SEEDS if s["status"] != "superseded"
              for c in seedparse.claims(s["seed"])]
    assert parsed == CLAIM_KEYS + V2_CLAIM_KEYS
    assert [c.key for c in seedparse.claims("7/9")] == ["7/9/export/gendisk_name"]
    assert seedparse.claims("1/9") == ()


def test_a_seed_names_the_claims_of_its_patch():
    r = row(seeds.evaluate({"exports": result(GOOD)}), "5/9")
    assert r["claims"] == ["task_prio exported GPL-only"] and r["claims_checked"]
    assert "seed:5/9/export/task_prio" in seeds.claim_ids(seeds.SEEDS[4])
    # superseded: the claim is shown, not checked
    r7 = row(seeds.evaluate({"exports": result(GOOD)}), "7/9")
    assert r7["claims"] == ["gendisk_name exported GPL-only"] and not r7["claims_checked"]
    assert seeds.claim_ids(seeds.SEEDS[6]) == []


def test_a_failed_claim_fails_its_seed():
    # patch 0004 edited to EXPORT_SYMBOL(task_prio): the claim check disagrees
    bad = [replace(v, agreement=False) if v.key == "5/9/export/task_prio" else v for v in GOOD]
    rows = seeds.evaluate({"exports": result(bad, [check("symbol", "task_prio")])})
    assert row(rows, "5/9")["holds"] is False
    assert row(rows, "2/9")["holds"] is True
    # a claim check that was never made is missing evidence
    gone = [v for v in GOOD if v.key != "3/9/tracepoint/balance_dirty_pages/param1"]
    r = row(seeds.evaluate({"exports": result(gone)}), "3/9")
    assert r["holds"] is False
    assert r["missing"] == ["exports: seed:3/9/tracepoint/balance_dirty_pages/param1"]


def test_the_revert_row_holds_on_the_kallsyms_variant():
    kall = result([check("prio", "pid 1")] + CLAIMS,
                  [check("symbol", "kallsyms_lookup_name"), check("symbol", "task_prio")],
                  name="kallsyms", seeds=("0bd476e6",))
    r = row(seeds.evaluate({"kallsyms": kall}), "0bd476e6")
    assert r["variants"] == ["kallsyms"] and r["holds"] is True
    assert r["claims"] == ["kallsyms_lookup_name exported GPL-only",
                           "kallsyms_on_each_symbol exported GPL-only"]


def test_holds_when_its_checks_agree():
    rows = seeds.evaluate({"exports": result(GOOD, [check("symbol", "task_prio")])})
    assert row(rows, "1/9")["holds"] is True and row(rows, "1/9")["checks"] == 2
    assert row(rows, "3/9")["holds"] is True
    assert row(rows, "5/9")["checks"] == 3          # the symbol, the prio value, the claim


def test_fails_on_disagreement_or_missing_evidence():
    bad = [replace(v, agreement=False) if v.key == "bdp_hits" else v for v in GOOD]
    rows = seeds.evaluate({"exports": result(bad)})
    assert row(rows, "1/9")["holds"] is False
    assert row(rows, "6/9")["holds"] is False        # no migratetype evidence at all
    assert "exports: migratetype:*" in row(rows, "6/9")["missing"]


def test_a_renamed_check_is_missing_evidence_not_less_evidence():
    # The dirty-limit check under another key: seed 3 must not hold on what is left.
    renamed = [replace(v, key="dirty_limit/other") if v.key.startswith("dirty_limit") else v
               for v in GOOD]
    r = row(seeds.evaluate({"exports": result(renamed)}), "3/9")
    assert r["holds"] is False and r["missing"] == ["exports: writeback:dirty_limit/tracepoint-arg"]
    # a new display label changes nothing: selection is by id
    relabelled = [replace(v, label="something else") for v in GOOD]
    assert row(seeds.evaluate({"exports": result(relabelled)}), "3/9")["holds"] is True


def test_not_run_without_a_variant_that_carries_it():
    rows = seeds.evaluate({"kallsyms": result(GOOD, name="kallsyms", seeds=())})
    assert all(r["holds"] is None and r["variants"] == [] for r in rows)
    # every variant that carries a seed is checked for it
    two = {"exports": result(GOOD), "bpf13": result(GOOD, name="bpf13")}
    assert row(seeds.evaluate(two), "1/9")["variants"] == ["exports", "bpf13"]
    assert row(seeds.evaluate(two), "1/9")["checks"] == 4
    err = StepError("panic", "boom", 31, "panic")
    rows = seeds.evaluate({"exports": result(GOOD, error=err)})
    assert all(r["holds"] is None for r in rows)


def test_a_failed_claim_fails_its_seed_when_the_module_never_built():
    # EXPORT_SYMBOL_NS_GPL(task_prio, KSYMLAB): modpost refuses the module, the claim
    # check (made on the tree before) has failed: 5/9 does not hold, the rest not run
    err = StepError("module", "modpost: task_prio from namespace KSYMLAB", 20, "error")
    bad = [replace(v, agreement=False) if v.key == "5/9/export/task_prio" else v for v in CLAIMS]
    rows = seeds.evaluate({"exports": result(bad, error=err)})
    assert row(rows, "5/9")["holds"] is False and row(rows, "5/9")["checks"] == 1
    assert row(rows, "4/9")["holds"] is None


# the runtime evidence of an exports-v2 run that holds every v2 seed
V2_GOOD = [check("writeback", "bdp_hits"), check("lttng", "writeback/balance_dirty_pages"),
           check("lttng", "writeback/bdp-limit-at-stop"),
           check("writeback", "dirty_limit/tracepoint-arg"),
           check("lttng", "writeback/dirty_limit-at-stop"), check("lttng", "ustack/stack"),
           check("ustack", "stack"), check("migratetype", "hist"), check("pageblock", "b0"),
           check("blockdev", "ram0"), check("lttng", "statedump_irq/0"),
           check("lttng", "statedump_irq/4"), check("lttng", "symcheck/check")] + \
    [check("seed", k) for k in V2_CLAIM_KEYS]
V2_SYMBOLS = [check("symbol", s) for s in ("stack_trace_save_user", "get_pfnblock_flags_mask",
                                           "blk_walk_visible_disks")]


def test_every_v2_seed_holds_on_its_evidence():
    rows = seeds.evaluate({"exports-v2": result(V2_GOOD, V2_SYMBOLS, "exports-v2", seeds=V2)})
    assert {r["seed"]: r["holds"] for r in rows if r["seed"] in V2} == dict.fromkeys(V2, True)
    assert row(rows, "v2-7/8")["checks"] == 3       # two interrupts and the claim
    assert row(rows, "4/9")["holds"] is None        # the RFC's seeds are not on v2


def test_a_v2_seed_without_its_interrupt_rows_does_not_hold():
    """The interrupt statedump's rows are named by prefix: none at all is missing evidence,
    and one that disagrees fails the seed."""
    none = [v for v in V2_GOOD if not v.key.startswith("statedump_irq/")]
    r = row(seeds.evaluate({"exports-v2": result(none, V2_SYMBOLS, "exports-v2", seeds=V2)}),
            "v2-7/8")
    assert r["holds"] is False and r["missing"] == ["exports-v2: lttng:statedump_irq/*"]
    bad = [replace(v, agreement=False) if v.key == "statedump_irq/4" else v for v in V2_GOOD]
    r = row(seeds.evaluate({"exports-v2": result(bad, V2_SYMBOLS, "exports-v2", seeds=V2)}),
            "v2-7/8")
    assert r["holds"] is False


def test_a_v2_claim_that_failed_fails_its_seed():
    bad = [replace(v, agreement=False) if v.key == "v2-8/8/export/__SCK__kvm_x86_get_exit_info"
           else v for v in V2_GOOD]
    rows = seeds.evaluate({"exports-v2": result(bad, V2_SYMBOLS, "exports-v2", seeds=V2)})
    assert row(rows, "v2-8/8")["holds"] is False and row(rows, "v2-1/8")["holds"] is True


def test_lttng_evidence_is_not_run_on_a_variant_without_lttng_and_says_so():
    """exports-v2-7.2 has no LTTng yet: its v2 seeds stand on the probe module's rows and
    their claims, and the row names the LTTng evidence not run."""
    probe_only = [v for v in V2_GOOD if v.kind != "lttng"]
    rows = seeds.evaluate({"exports-v2-7.2": result(probe_only, V2_SYMBOLS, "exports-v2-7.2",
                                                    seeds=V2, lttng=False)})
    r = row(rows, "v2-7/8")
    assert r["holds"] is True and r["checks"] == 1 and r["missing"] == []
    assert r["not_run"] == ["exports-v2-7.2: lttng:statedump_irq/"]
    assert "not run: exports-v2-7.2: lttng:statedump_irq/" in r["why"]
    assert row(rows, "v2-4/8")["not_run"] == ["exports-v2-7.2: lttng:ustack/stack"]
    # the probe module's own evidence is still required
    no_ustack = [v for v in probe_only if v.kind != "ustack"]
    r = row(seeds.evaluate({"x": result(no_ustack, V2_SYMBOLS, "x", seeds=V2, lttng=False)}),
            "v2-4/8")
    assert r["holds"] is False and r["missing"] == ["x: ustack:*"]


def test_lttng_evidence_that_ran_and_is_absent_is_missing():
    """With the LTTng lap recorded, LTTng rows that are absent fail their seeds (the mutant
    that treats every LTTng id as not run passes them)."""
    probe_only = [v for v in V2_GOOD if v.kind != "lttng"]
    rows = seeds.evaluate({"exports-v2": result(probe_only, V2_SYMBOLS, "exports-v2", seeds=V2)})
    assert {r["seed"] for r in rows if r["holds"] is False} == {
        "v2-1/8", "v2-2/8", "v2-3/8", "v2-4/8", "v2-7/8", "v2-8/8"}
    assert all(r["not_run"] == [] for r in rows)
