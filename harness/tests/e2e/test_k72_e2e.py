"""End to end: the 7.2 line (Debian forky's linux-source-7.2, fetched by its pin)
with the probe module in kprobe mode (stock-7.2), by name through 0bd476e6's
revert (kallsyms-7.2) and through the seed series' exports (exports-7.2). One run
of `--kernel 7.2`, shared by the tests here."""

import json
import subprocess

import pytest

from harness.tests.e2e_runs import harness, tree_src

pytestmark = pytest.mark.e2e

VARIANTS = ("exports-7.2", "stock-7.2", "kallsyms-7.2")


@pytest.fixture(scope="module")
def k72_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("k72-run")
    p = harness("run", "--kernel", "7.2", "--runs-dir", str(runs))
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
