"""The mutation runner: catalogue, applying edits, recounting patches, the kill decision."""

import json
import re

import pytest

from harness.tools import mutants, mutants_md, patchedit
from harness import paths
from harness.errors import HarnessError

CATALOGUE = mutants.load()


def test_the_catalogue_has_at_least_20_module_mutants_of_every_kind():
    module = [m for m in CATALOGUE if m.target == "module"]
    assert len(module) >= 20
    assert {m.kind for m in module} >= {"prio", "migratetype", "blockdev", "writeback",
                                        "ustack", "symbols"}
    assert {m.what for m in module} >= {"wrong field", "wrong mask", "off-by-one index",
                                        "stale sample", "missing row", "duplicated row",
                                        "wrong flag", "degraded sampler", "wrong unit"}
    series = [m for m in CATALOGUE if m.target == "series"]
    assert len(series) >= 8 and {m.series for m in series} == {"exports", "kallsyms", "v2"}
    # a drift of a series is caught by its claims (seed); a v2 patch's behaviour by
    # the rows of the sampler it serves (v2-blk-walk-lists-hidden: blockdev, issue 43)
    assert {m.id for m in series if m.kind != "seed"} == {"v2-blk-walk-lists-hidden"}
    # one drift per patch of the v2 series, each run on exports-v2
    v2 = [m for m in series if m.series == "v2" and m.kind == "seed"]
    assert sorted(m.file[:4] for m in v2) == [f"{i:04d}" for i in range(1, 9)]
    assert {m.variant for m in v2} == {"exports-v2"}


@pytest.mark.parametrize("m", [m for m in CATALOGUE if m.target == "module"],
                         ids=lambda m: m.id)
def test_every_module_mutant_applies_once_and_changes_its_file(tmp_path, m):
    dest = mutants.module_copy(m, tmp_path / "src")
    before = (paths.PROBE_MODULE / m.file).read_text()
    after = (dest / m.file).read_text()
    assert after != before
    # only its own file differs from probe-module/
    for f in paths.PROBE_MODULE.iterdir():
        if f.is_file() and f.name != m.file:
            assert (dest / f.name).read_bytes() == f.read_bytes()


def _hunks_consistent(text):
    """Every hunk header's counts equal its body's."""
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        h = patchedit.HUNK.match(ln)
        if not h:
            continue
        m = re.match(r"@@ -\d+,(\d+) \+\d+,(\d+) @@", ln)
        old, new = int(m.group(1)), int(m.group(2))
        j, o, n = i + 1, 0, 0
        while (o < old or n < new) and j < len(lines):
            c = lines[j][:1]
            o += c in (" ", "-")
            n += c in (" ", "+")
            j += 1
        assert (o, n) == (old, new), ln
    return True


@pytest.mark.parametrize("m", [m for m in CATALOGUE if m.target in ("series", "lttng")],
                         ids=lambda m: m.id)
def test_every_series_mutant_edits_its_patch_consistently(tmp_path, m):
    root = mutants.series_copy(m, tmp_path / "patches")
    after = (root / m.series / m.file).read_text()
    before = (paths.REPO / "patches" / m.series / m.file).read_text()
    assert after != before and _hunks_consistent(after)
    assert "\n-- \n" in after                    # format-patch's signature survives
    # the seed patches themselves are never mutated
    assert (root / "seeds").is_dir()
    for f in (paths.REPO / "patches" / "seeds").iterdir():
        assert (root / "seeds" / f.name).read_bytes() == f.read_bytes()


def test_mutate_needs_exactly_one_occurrence():
    assert patchedit.mutate("a b c", [("b", "x")]) == "a x c"
    with pytest.raises(HarnessError, match="occurs 0 times"):
        patchedit.mutate("a b c", [("z", "x")])
    with pytest.raises(HarnessError, match="occurs 2 times"):
        patchedit.mutate("b b", [("b", "x")])


PATCH = """From x
Subject: [PATCH] t
---
diff --git a/f.c b/f.c
--- a/f.c
+++ b/f.c
@@ -10,3 +10,4 @@ int f(void)
 a
-b
+B
+C
 d
@@ -30,3 +31,3 @@ int g(void)
 x
-y
+Y
 z
@@ -50,3 +51,3 @@ int h(void)
 p
-q
+Q
 r
diff --git a/g.c b/g.c
--- a/g.c
+++ b/g.c
@@ -5,2 +5,3 @@
 k
+l
 m
-- 
2.39.5
"""


def test_recount_follows_an_edited_body():
    # drop the added C line: hunk 1 now +10,3; hunk 2's new side moves back by one
    assert _hunks_consistent(PATCH)
    text = patchedit.recount(patchedit.mutate(PATCH, [("+C\n", "")]))
    assert "@@ -10,3 +10,3 @@ int f(void)" in text
    assert "@@ -30,3 +30,3 @@ int g(void)" in text
    assert "@@ -5,2 +5,3 @@" in text                  # another file: no shift
    assert text.endswith("-- \n2.39.5\n") and _hunks_consistent(text)


def test_recount_drops_a_hunk_left_without_change():
    text = patchedit.recount(patchedit.mutate(PATCH, [("-y\n+Y\n", " y\n")]))
    assert "int g(void)" not in text
    assert "@@ -50,3 +51,3 @@ int h(void)" in text
    assert _hunks_consistent(text)


def test_catalogue_errors_name_the_mutant(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[[mutant]]\nid = "a"\nkind = "nonsense"\nwhat = "x"\nfile = "prio.c"\n'
                 'edits = [["a", "b"]]\n')
    with pytest.raises(HarnessError, match="mutant a: kind 'nonsense'") as e:
        mutants.load(f)
    assert e.value.exit_status == 2
    f.write_text('[[mutant]]\nid = "a"\nkind = "prio"\nwhat = "x"\nfile = "prio.c"\n'
                 'edits = [["a"]]\n')
    with pytest.raises(HarnessError, match="edits must be"):
        mutants.load(f)
    f.write_text(2 * '[[mutant]]\nid = "a"\nkind = "prio"\nwhat = "x"\nfile = "prio.c"\n'
                 'edits = [["a", "b"]]\n')
    with pytest.raises(HarnessError, match="id used twice"):
        mutants.load(f)


# ------------------------------------------------------------ kill decision

def row(kind, key, agree=True):
    return {"id": f"{kind}:{key}", "kind": kind, "key": key, "agree": agree}


def report(values=(), symbols=(), verdict=None, error=None, seeds=(), variant="exports"):
    values, symbols = list(values), list(symbols)
    if verdict is None:
        verdict = "fail" if error or any(r["agree"] is False for r in values + symbols) \
            else "pass"
    return {"verdict": verdict,
            "variants": {variant: {"verdict": verdict, "values": values, "symbols": symbols,
                                   "error": error, "tree_key": "k"}},
            "seeds": [{"seed": s, "holds": False} for s in seeds]}


PRIO = mutants.Mutant("p", "prio", "wrong field", "prio.c", (("a", "b"),))
WB = mutants.Mutant("w", "writeback", "degraded sampler", "writeback.c", (("a", "b"),))
MT = mutants.Mutant("m", "migratetype", "wrong mask", "migratetype.c", (("a", "b"),))
SEED = mutants.Mutant("s", "seed", "drifted port", "0004.patch", (("a", "b"),), "exports")


def test_a_failing_check_of_its_kind_kills():
    o = mutants.decide(PRIO, report([row("prio", "pid 1", False), row("blockdev", "ram0")]))
    assert o.status == "killed" and o.killers == ("prio:pid 1",)
    # either value kind of the migratetype sampler
    o = mutants.decide(MT, report([row("migratetype", "zone DMA mt 1", False)]))
    assert o.status == "killed"


def test_a_failure_of_another_kind_does_not_kill():
    o = mutants.decide(PRIO, report([row("prio", "pid 1"), row("blockdev", "ram0", False)],
                                    seeds=["8/9"]))
    assert o.status == "wrong-kind" and o.others == ("blockdev:ram0",) and o.seeds == ("8/9",)
    assert mutants_md.why(o) == "failed only on blockdev:ram0; seed row(s) 8/9 do not hold"
    # a degraded dirty limit: no check at all, only the seed row loses its evidence
    o = mutants.decide(WB, report([row("writeback", "gds_hits")], verdict="fail", seeds=["3/9"]))
    assert o.status == "wrong-kind" and mutants_md.why(o) == \
        "no check failed; seed row(s) 3/9 do not hold"


def test_a_passing_run_is_a_survivor():
    o = mutants.decide(PRIO, report([row("prio", "pid 1")]))
    assert o.status == "survived" and not o.killers


def test_a_check_failing_in_the_baseline_cannot_kill():
    r = report([row("prio", "pid 7", False)])
    assert mutants.decide(PRIO, r).status == "killed"
    assert mutants.decide(PRIO, r, baseline=frozenset({"prio:pid 7"})).status == "wrong-kind"


def test_the_samplers_own_row_kills_a_degraded_sampler():
    o = mutants.decide(WB, report([row("sampler", "writeback", False)]))
    assert o.status == "killed" and o.killers == ("sampler:writeback",)
    # another sampler's row does not
    o = mutants.decide(WB, report([row("sampler", "ustack", False)]))
    assert o.status == "wrong-kind"


def test_a_crash_or_a_failed_build_is_not_a_kill():
    err = {"step": "oops", "message": "guest oops", "exit_status": 32, "verdict": "oops"}
    assert mutants.decide(PRIO, report(error=err)).status == "crashed"
    build = {"step": "module", "message": "make failed", "exit_status": 20, "verdict": "error"}
    assert mutants.decide(PRIO, report(error=build)).status == "invalid"
    assert mutants.decide(PRIO, None, exit_status=2).status == "invalid"


def test_a_seed_claim_kills_a_series_mutant_even_when_its_module_cannot_build():
    build = {"step": "module", "message": "modpost: task_prio from namespace KSYMLAB",
             "exit_status": 20, "verdict": "error"}
    o = mutants.decide(SEED, report([row("seed", "5/9/export/task_prio", False)],
                                    error=build))
    assert o.status == "killed" and o.killers == ("seed:5/9/export/task_prio",)


def test_kill_rates_and_tables():
    outs = [mutants.decide(PRIO, report([row("prio", "x", False)])),
            mutants.decide(PRIO, report([row("prio", "x")])),
            mutants.decide(WB, report([row("sampler", "writeback", False)]))]
    assert mutants_md.kill_rates(outs) == {"prio": (2, 1), "writeback": (1, 1)}
    kinds, rows = mutants_md.tables(outs)
    assert kinds[-1] == ["all", "3", "2", "67 %"]
    assert [r[3] for r in rows] == ["killed", "survived", "killed"]


def test_run_mutant_builds_from_the_scratch_copy(tmp_path, monkeypatch):
    """The runner hands the harness the mutated copy and decides from its report."""
    m = next(x for x in CATALOGUE if x.id == "prio-static-prio")
    seen = {}

    def fake(variant, runs, log, module_src=None, patches=None, extra=()):
        seen.update(variant=variant, src=module_src, patches=patches, extra=extra)
        assert "t->static_prio - MAX_RT_PRIO" in (module_src / "prio.c").read_text()
        return 1, report([row("prio", "pid 1", False)])

    monkeypatch.setattr(mutants, "run_harness", fake)
    o = mutants.run_mutant(m, tmp_path, {"exports": frozenset()}, extra=("--kaslr",))
    assert o.status == "killed" and seen["variant"] == "exports" and seen["patches"] is None
    assert seen["extra"] == ("--kaslr",)

    s = next(x for x in CATALOGUE if x.id == "series-task_prio-exported-to-all")

    def fake_series(variant, runs, log, module_src=None, patches=None, extra=()):
        text = (patches / "exports" / s.file).read_text()
        assert "+EXPORT_SYMBOL(task_prio);" in text and module_src is None
        return 1, report([row("seed", "5/9/export/task_prio", False)])

    monkeypatch.setattr(mutants, "run_harness", fake_series)
    assert mutants.run_mutant(s, tmp_path, {}).status == "killed"


def test_report_files(tmp_path):
    outs = [mutants.decide(PRIO, report([row("prio", "x", False)]))]
    mutants_md.write_report(tmp_path, outs, {"catalogue": "c", "seconds": 1.0})
    data = json.loads((tmp_path / "mutants.json").read_text())
    assert data["kill_rates"] == {"prio": {"mutants": 1, "killed": 1}}
    assert data["mutants"][0]["killers"] == ["prio:x"]
    md = (tmp_path / "mutants.md").read_text()
    assert "| p | prio | wrong field | killed | prio:x |" in md


def test_command_line(capsys):
    assert mutants.main(["--list", "--kind", "seed"]) == 0
    assert "series-task_prio-exported-to-all" in capsys.readouterr().out
    assert mutants.main(["--only", "no-such-mutant"]) == 2
    assert "unknown mutant" in capsys.readouterr().err


def test_only_a_tree_the_mutant_built_is_removed(monkeypatch):
    gone = []
    monkeypatch.setattr(mutants.cache, "try_evict", lambda c, e: gone.append(e.key) or True)
    mutants._evict_tree(report(), "exports", keep={"k"})        # tree_key "k": a baseline's
    assert gone == []
    mutants._evict_tree(report(), "exports", keep=set())
    assert gone == ["k"]
    mutants._evict_tree(None, "exports", keep=set())             # no report: nothing known
    assert gone == ["k"]


def test_an_lttng_mutant_runs_the_lttng_boot_on_a_scratch_patch_root(tmp_path, monkeypatch):
    """Series "lttng": the LTTng port is edited in a copy of the patch root that the run
    reads through KSYMLAB_PATCHES (harness/lttng/supply/modbuild.py patches_root()), the run keeps
    its LTTng boot, and its lttng rows judge it against a baseline that had one too."""
    from harness.lttng.supply import modbuild
    m = next(x for x in CATALOGUE if x.id == "lttng-bdp-limit-from-thresh")
    assert m.target == "lttng" and mutants.baseline_key(m) == "exports+lttng"
    seen = {}

    def fake(variant, runs, log, module_src=None, patches=None, extra=()):
        seen.update(extra=extra)
        monkeypatch.setenv("KSYMLAB_PATCHES", str(patches))
        (f,) = [p for p in modbuild.series("exports") if p.name == m.file]
        assert f.is_relative_to(patches)
        assert "ctf_integer(unsigned long, limit, thresh)" in f.read_text()
        return 1, report([row("lttng", "writeback/balance_dirty_pages", False)])

    monkeypatch.setattr(mutants, "run_harness", fake)
    o = mutants.run_mutant(m, tmp_path, {"exports+lttng": frozenset()},
                           extra=("--no-lttng", "--kaslr"))
    assert o.status == "killed" and seen["extra"] == ("--kaslr",)
    # a failure of the LTTng rows that the LTTng baseline had too cannot kill
    base = {"exports+lttng": frozenset({"lttng:writeback/balance_dirty_pages"})}
    assert mutants.run_mutant(m, tmp_path / "again", base).status != "killed"
