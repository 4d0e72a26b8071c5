"""End to end: the 7.2 line (Debian forky's linux-source-7.2, fetched by its pin)
with the probe module in kprobe mode (stock-7.2), by name through 0bd476e6's
revert (kallsyms-7.2), through the seed series' exports (exports-7.2) and through
the v2 series' interfaces (exports-v2-7.2), the v2 exports restricted to LTTng's
module names (exports-v2-formods-7.2) and LTTng's v2 patch set on stock 7.2
(stock-lttngv2-7.2). One run of the six variants, shared by the tests here."""

import json
import subprocess

import pytest

from harness.tests.e2e_runs import harness, tree_src

pytestmark = pytest.mark.e2e

# the line's four, the v2 exports restricted to LTTng's names (issue 41) and LTTng's v2
# patch set on stock 7.2 (its fallback path)
VARIANTS = ("exports-7.2", "stock-7.2", "kallsyms-7.2", "exports-v2-7.2",
            "exports-v2-formods-7.2", "stock-lttngv2-7.2")


@pytest.fixture(scope="module")
def k72_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("k72-run")
    p = harness("run", "--kernel", "7.2", "--variants", ",".join(VARIANTS),
                "--runs-dir", str(runs))
    rep = json.loads((runs / "latest" / "report.json").read_text())
    return p, rep


def rows(rep, variant, kind):
    return [x for x in rep["variants"][variant]["values"] if x["kind"] == kind]


@pytest.mark.prebuild(*VARIANTS)
def test_the_72_line_runs_its_variants_and_each_passes(k72_run):
    p, rep = k72_run
    assert p.returncode == 0, p.stderr[-3000:]
    assert sorted(rep["variants"]) == sorted(VARIANTS)
    for v in VARIANTS:
        bad = [x["id"] for x in rep["variants"][v]["values"] if x["agree"] is False]
        assert bad == [] and rep["variants"][v]["verdict"] == "pass", (v, bad)


def isolate_value(rep):
    """MIGRATE_ISOLATE in the stock-7.2 tree's DWARF, read by gdb from vmlinux."""
    vmlinux = tree_src(rep["variants"]["stock-7.2"]["tree_key"]) / "vmlinux"
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", "p (int)MIGRATE_ISOLATE", vmlinux],
                         capture_output=True, text=True, timeout=300).stdout
    return int(out.strip().rsplit("=", 1)[1])


@pytest.mark.prebuild(*VARIANTS)
def test_an_isolated_block_reads_as_isolate_in_gdbs_bitmap(k72_run):
    """7.2 keeps isolation in its own pageblock bit (PB_migrate_isolate) above the
    three type bits: the scenario's isolated Movable blocks hold flags word 0x11,
    whose low bits say Movable. gdb's bitmap reader read that before the fix
    (36 rows disagreed); now module, memory and gdb say MIGRATE_ISOLATE."""
    _, rep = k72_run
    iso = isolate_value(rep)
    isolated = [x for x in rows(rep, "stock-7.2", "pageblock")
                if x["sources"].get("module") == iso]
    assert isolated, "the scenario isolated no pageblock on 7.2"
    for x in isolated:
        assert x["sources"]["gdb_bitmap"] == iso and x["agree"] is True, x
        right, word = x["info"]["confusions"]["whole flags word"]
        assert word != right and word & 7 != iso, x


@pytest.mark.prebuild(*VARIANTS)
def test_drgn_reads_the_module_sections_of_72s_struct_module_sect_attrs(k72_run):
    """7.2's module_sect_attrs has no nsections: drgn walks the group's bin_attrs."""
    _, rep = k72_run
    for v in VARIANTS:
        (row,) = [x for x in rows(rep, v, "vmcore") if x["key"] == "module-sections"]
        assert row["agree"] is True and row["sources"]["drgn"] == row["sources"]["guest"] > 10


@pytest.mark.prebuild(*VARIANTS)
def test_the_seeds_7_2_changed_hold_in_their_7_2_form_and_say_why(k72_run):
    """3/9 (balance_dirty_pages takes the dtc upstream) and 6/9 (the export moves to
    get_pfnblock_migratetype) hold on exports-7.2, each with its 7.2 reason; the
    module linked to that export and read the limit through global_dirty_state."""
    _, rep = k72_run
    seeds = {r["seed"]: r for r in rep["seeds"]}
    for seed, said in (("3/9", "f1ab2831e2a4"), ("6/9", "get_pfnblock_migratetype")):
        r = seeds[seed]
        assert r["holds"] is True and r["variants"] == ["exports-7.2"], r
        assert "on 7.2: " in r["why"] and said in r["why"], r["why"]
        assert r["claims"][-1].startswith("on 7.2 instead: "), r["claims"]
    assert seeds["2/9"]["variants"] == [] and seeds["2/9"]["holds"] is None
    v = rep["variants"]["exports-7.2"]
    (sym,) = [s for s in v["symbols"] if s["key"] == "get_pfnblock_migratetype"]
    assert sym["agree"] is True
    wb = {x["key"]: x for x in rows(rep, "exports-7.2", "writeback")}
    assert wb["dirty_limit/tracepoint-arg"]["agree"] is True
    claims = {x["key"] for x in rows(rep, "exports-7.2", "seed")}
    assert "3/9/tracepoint/balance_dirty_pages/args" in claims
    assert "6/9/export/get_pfnblock_migratetype" in claims
    assert "6/9/export/get_pfnblock_flags_mask" not in claims


@pytest.mark.prebuild(*VARIANTS)
def test_the_v2_series_holds_on_72_through_its_interfaces(k72_run):
    """exports-v2-7.2: the module links to get_pfnblock_migratetype and
    stack_trace_save_user in the TRACER_INTERNALS namespace and walks the disks with
    blk_walk_visible_disks; every v2 seed holds, v2-1/8 and v2-2/8 (upstream) on the
    unpatched 7.2 code, each with LTTng 2.16's evidence (patches/lttng/2.16.0/v2.series)."""
    _, rep = k72_run
    v = rep["variants"]["exports-v2-7.2"]
    syms = {s["key"]: s for s in v["symbols"]}
    for name in ("get_pfnblock_migratetype", "stack_trace_save_user", "blk_walk_visible_disks"):
        assert syms[name]["agree"] is True and syms[name]["info"]["method"] == "export", name
    assert "get_pfnblock_flags_mask" not in syms
    seeds = {r["seed"]: r for r in rep["seeds"] if r["seed"].startswith("v2-")}
    assert sorted(seeds) == [f"v2-{i}/8" for i in range(1, 9)]
    for seed, r in seeds.items():
        assert r["holds"] is True and r["variants"] == ["exports-v2-7.2"], r
        assert r["not_run"] == [], r
    assert "upstream since v6.15" in seeds["v2-1/8"]["why"]
    assert "LTTng's interrupt statedump through the walk" in seeds["v2-7/8"]["why"]
    claims = {x["key"]: x for x in rows(rep, "exports-v2-7.2", "seed")}
    assert claims["v2-5/8/export/get_pfnblock_migratetype"]["agree"] is True
    assert claims["v2-2/8/struct/dirty_throttle_control.limit"]["agree"] is True


@pytest.mark.prebuild(*VARIANTS)
@pytest.mark.parametrize("variant", ["stock-7.2", "kallsyms-7.2"])
def test_lttng_216_runs_on_72_and_every_row_agrees(k72_run, variant):
    """LTTng 2.16.0 with patches/lttng/2.16.0 on stock-7.2 and kallsyms-7.2: the x86
    page fault probe is built (0001), balance_dirty_pages' setpoint is the kernel's
    (0002: unpatched, 733 against 732), gdb walks 7.2's interrupt descriptors
    (total_nr_irqs) and get_pfnblock_migratetype is the name looked up."""
    _, rep = k72_run
    v = rep["variants"][variant]
    assert v["lttng"]["version"] == "2.16.0"
    lt = {x["key"]: x for x in rows(rep, variant, "lttng")}
    assert len(lt) > 50 and [k for k, x in lt.items() if x["agree"] is False] == []
    sp = lt["writeback/bdp-setpoint-at-stop"]
    right, unhalved = sp["info"]["confusions"][
        "setpoint without halving thresh + bg_thresh (LTTng 2.16.0)"]
    assert sp["agree"] is True and right != unhalved
    irqs = [x for k, x in lt.items() if k.startswith("statedump_irq/")]
    assert irqs and all(x["sources"]["gdb irq descriptors"] for x in irqs)
    assert lt["symcheck/by-name/get_pfnblock_migratetype"]["agree"] is True
    (head,) = [h for h in rep["headline"] if h["variant"] == variant]
    assert head["lost"] == [] and "get_pfnblock_migratetype" in head["by_name"]


@pytest.mark.prebuild(*VARIANTS)
@pytest.mark.parametrize("variant,lost", [("exports-7.2", ["statedump of interrupts"]),
                                          ("exports-v2-7.2", [])])
def test_lttng_216_on_the_series_resolves_nothing_by_name(k72_run, variant, lost):
    """LTTng 2.16.0 built with CONFIG_LTTNG_KALLSYMS=n against the seed series
    (2.16.0/exports) and the v2 series (2.16.0/v2): every LTTng row agrees, symcheck's
    audit of the build flags nothing (2.16's two kprobe match checks are existence
    checks, not tricks), nothing is resolved by name, and only the RFC loses the
    interrupt statedump (nothing exports irq_to_desc; v2 has irq_walk_actions)."""
    _, rep = k72_run
    lt = {x["key"]: x for x in rows(rep, variant, "lttng")}
    assert len(lt) > 50 and [k for k, x in lt.items() if x["agree"] is False] == []
    assert lt["symcheck/flagged"]["agree"] is True
    (head,) = [h for h in rep["headline"] if h["variant"] == variant]
    assert head["lost"] == lost and head["by_name"] == []
    assert ("kvm probe fields" in head["working"]) == (variant == "exports-v2-7.2")


@pytest.mark.prebuild(*VARIANTS)
def test_exports_for_lttng_only_admit_lttng_names_and_any_impostor(k72_run):
    """EXPORT_SYMBOL_FOR_MODULES(sym, "lttng*") on the v2 exports: LTTng 2.16 links and
    loses nothing; a module of another name is refused with the loader's message, one
    importing the module namespace is refused for that, one named lttng_* loads."""
    _, rep = k72_run
    v = "exports-v2-formods-7.2"
    lt = {x["key"]: x for x in rows(rep, v, "lttng")}
    rs = {k: x for k, x in lt.items() if k.startswith("restricted/")}
    assert sorted(rs) == ["restricted/import", "restricted/impostor", "restricted/lttng-links",
                          "restricted/other"]
    assert all(x["agree"] is True for x in rs.values()), rs
    assert rs["restricted/other"]["sources"]["guest"] == (
        "ksymlab_formods: module uses symbol (stack_trace_save_user) from namespace "
        "module:lttng*, but does not import it.")
    assert rs["restricted/import"]["sources"]["guest"] == (
        "ksymlab_formods_import: module tries to import module namespace: module:lttng*")
    assert rs["restricted/impostor"]["sources"]["guest lsmod"] == "lttng_impostor"
    assert "lttng_tracer" in rs["restricted/lttng-links"]["sources"]["guest lsmod"]
    assert [k for k, x in lt.items() if x["agree"] is False] == []
    (head,) = [h for h in rep["headline"] if h["variant"] == v]
    assert head["lost"] == [] and head["by_name"] == []


@pytest.mark.prebuild(*VARIANTS)
def test_lttngs_v2_patch_set_falls_back_on_a_stock_72(k72_run):
    """patches/lttng/2.16.0/v2 on stock 7.2 finds none of the v2 interfaces and does
    what 2.16 does there: the same features work, the same names are looked up, but
    stack_trace_save, which every kernel exports (0005 links to it)."""
    _, rep = k72_run
    head = {h["variant"]: h for h in rep["headline"]}
    fb, stock = head["stock-lttngv2-7.2"], head["stock-7.2"]
    assert fb["working"] == stock["working"] and fb["lost"] == stock["lost"] == []
    assert set(stock["by_name"]) - set(fb["by_name"]) == {"stack_trace_save"}
    assert set(fb["by_name"]) < set(stock["by_name"]) and "irq_to_desc" in fb["by_name"]
    lt = rows(rep, "stock-lttngv2-7.2", "lttng")
    assert len(lt) > 50 and [x["key"] for x in lt if x["agree"] is False] == []
