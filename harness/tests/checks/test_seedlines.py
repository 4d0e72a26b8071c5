"""What the 7.2 line changed in seeds 3/9 and 6/9 (harness/checks/seedlines.py),
checked on small real builds (test_seedclaims' fake vmlinux and Module.symvers,
read by the real symcheck) and in the seed table (seeds.evaluate)."""

from harness import paths
from harness.checks import seedclaims, seedlines, seedparse, seeds
from harness.model.results import Check, VariantResult
from harness.tests.checks.test_seedclaims import GDS, V2, Build, build, v2_good

SEEDS_72 = ("3/9", "4/9", "5/9", "6/9", "8/9", "9/9")
BDP_72 = ["struct bdi_writeback *wb", "struct dirty_throttle_control *dtc",
          "unsigned long dirty_ratelimit", "unsigned long task_ratelimit",
          "unsigned long dirtied", "unsigned long period", "long pause",
          "unsigned long start_time"]


def port_72(mt_export="get_pfnblock_migratetype"):
    """The exports series as ported to 7.2.12: the 8-argument balance_dirty_pages it
    does not touch, global_dirty_state with the domain, the migratetype export."""
    syms = ("stack_trace_save_user", "task_prio", mt_export, "gendisk_device_type",
            "gendisk_block_class")
    return Build({s: "_gpl" for s in syms}, {s: "EXPORT_SYMBOL_GPL" for s in syms},
                 list(BDP_72), list(GDS))


def bad_keys(rows):
    return sorted(r.key for r in rows if r.disagrees)


def test_the_72_port_holds_its_72_claims_and_fails_the_posted_ones(tmp_path):
    d = build(tmp_path, port_72())
    rows = seedclaims.checks(d, SEEDS_72, line="7.2")
    assert bad_keys(rows) == [] and len(rows) == 8
    # read as a 6.1 tree, the same build misses exactly what 7.2 changed
    assert bad_keys(seedclaims.checks(d, SEEDS_72, line="6.1")) == [
        "3/9/tracepoint/balance_dirty_pages/args", "3/9/tracepoint/balance_dirty_pages/param1",
        "6/9/export/get_pfnblock_flags_mask"]


def test_a_72_port_exporting_the_old_name_fails_6_of_9(tmp_path):
    """The 6.12 hunk's symbol where 7.2 has another accessor: the claim read in the
    7.2 tree is not met."""
    rows = seedclaims.checks(build(tmp_path, port_72("get_pfnblock_flags_mask")), SEEDS_72,
                             line="7.2")
    assert bad_keys(rows) == ["6/9/export/get_pfnblock_migratetype"]


def test_a_72_port_that_adds_the_domain_to_balance_dirty_pages_fails_3_of_9(tmp_path):
    b = port_72()
    b.bdp = ["struct wb_domain *domain"] + b.bdp
    rows = seedclaims.checks(build(tmp_path, b), SEEDS_72, line="7.2")
    assert bad_keys(rows) == ["3/9/tracepoint/balance_dirty_pages/args"]


def ok(kind, key):
    return Check(kind, key, {"module": 1}, True)


def result_72(extra=()):
    claims = [ok("seed", c.key) for s in SEEDS_72 for c in seedlines.line_claims(s, "7.2")]
    rows = [ok("writeback", "dirty_limit/tracepoint-arg"), ok("prio", "pid 1"),
            ok("migratetype", "zone Movable mt 1"), ok("pageblock", "pfn 0x8000"),
            ok("ustack", "pid 1"), ok("blockdev", "ram0"), *claims, *extra]
    syms = [ok("symbol", s) for s in ("stack_trace_save_user", "task_prio",
                                        "get_pfnblock_migratetype", "disk_type", "block_class",
                                        "gendisk_device_type", "gendisk_block_class")]
    return VariantResult("exports-7.2", "t", "exports", symbols=tuple(syms), values=tuple(rows),
                         seeds=SEEDS_72, kernel_line="7.2")


def row(rows, seed):
    (r,) = [r for r in rows if r["seed"] == seed]
    return r


def test_the_seed_table_holds_3_and_6_on_72_and_says_what_changed():
    rows = seeds.evaluate({"exports-7.2": result_72()})
    for seed, said in (("3/9", "f1ab2831e2a4"), ("6/9", "get_pfnblock_migratetype")):
        r = row(rows, seed)
        assert r["holds"] is True and r["missing"] == [], r
        assert "on 7.2: " in r["why"] and said in r["why"]
    assert row(rows, "3/9")["claims"][-1] == "on 7.2 instead: balance_dirty_pages: 8 parameters"
    assert row(rows, "6/9")["claims"][-1] == \
        "on 7.2 instead: get_pfnblock_migratetype exported GPL-only"
    assert "on 7.2" not in row(rows, "5/9")["why"]


def test_on_72_the_evidence_is_the_72_symbol_not_the_posted_one():
    """A run whose module resolved get_pfnblock_flags_mask on 7.2 has no
    get_pfnblock_migratetype row: seed 6/9 misses it instead of holding."""
    r = result_72()
    syms = tuple(s for s in r.symbols if s.key != "get_pfnblock_migratetype")
    r = VariantResult(r.name, "t", "exports", symbols=syms + (ok("symbol",
                      "get_pfnblock_flags_mask"),), values=r.values, seeds=r.seeds,
                      kernel_line="7.2")
    got = row(seeds.evaluate({"exports-7.2": r}), "6/9")
    assert got["holds"] is False and got["missing"] == [
        "exports-7.2: symbol:get_pfnblock_migratetype"]


# ---- the v2 series on 7.2 (patches/7.2/v2)

V2_72_PORT = paths.REPO / "patches" / "7.2" / "v2"


def test_the_72_v2_series_makes_exactly_the_claims_checked_on_72():
    """Read from the 7.2 patch files themselves (numbered 1/6..6/6), the claims are
    those seedlines checks for v2-3/8..v2-8/8 on 7.2; v2-1/8 and v2-2/8 (upstream)
    add none of their own there."""
    made = set()
    for p in sorted(V2_72_PORT.glob("*.patch")):
        made |= {(c.what, c.subject, c.expected)
                 for c in seedparse.claims_of(p.read_text(), "v2-")[1]}
    checked = {(c.what, c.subject, c.expected) for s in V2[2:]
               for c in seedlines.line_claims(s, "7.2")}
    assert made == checked
    assert ("export", "get_pfnblock_migratetype", "EXPORT_SYMBOL_NS_GPL(TRACER_INTERNALS)") \
        in made
    for s in V2[:2]:
        assert seedlines.line_claims(s, "7.2") == seedparse.claims(s)


def v2_72():
    b = v2_good()
    for d in (b.exports, b.symvers):
        d["get_pfnblock_migratetype"] = d.pop("get_pfnblock_flags_mask")
    b.namespaces["get_pfnblock_migratetype"] = b.namespaces.pop("get_pfnblock_flags_mask")
    return b


def test_the_72_v2_port_holds_every_72_claim_and_not_the_posted_export(tmp_path):
    d = build(tmp_path, v2_72())
    rows = seedclaims.checks(d, V2, line="7.2")
    assert len(rows) == 13 and bad_keys(rows) == []
    assert bad_keys(seedclaims.checks(d, V2, line="6.12")) == [
        "v2-5/8/export/get_pfnblock_flags_mask"]


def test_a_72_v2_export_outside_the_namespace_fails_v2_5(tmp_path):
    b = v2_72()
    del b.namespaces["get_pfnblock_migratetype"]
    rows = seedclaims.checks(build(tmp_path, b), V2, line="7.2")
    assert bad_keys(rows) == ["v2-5/8/export/get_pfnblock_migratetype"]
