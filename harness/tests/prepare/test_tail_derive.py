"""Tail derivation: which recorded tree a changed series starts from, and the copy."""

import json
import os
import shutil
import subprocess


from harness.prepare import derive, kernel, treecopy, variants
from harness.prepare.tree import build_inputs, tarball_sha256, tree_key
from harness import paths


def known(patches):
    return {v.name: v for v in variants.select(list(variants.VARIANTS), patches)}


def recorded_tree(cache, variant, tarball, record=True):
    """A complete cached tree for `variant` that records its series as prepare() does."""
    key = tree_key(variant, tarball)
    root = cache / "trees" / key
    (root / "linux").mkdir(parents=True)
    m = {"key": key, "variant": variant.name}
    if record:
        m["series"] = derive.record_series(variant.patches(), root)
        m["build_inputs"] = build_inputs(tarball_sha256(tarball), variant.fragments)
    (root / "manifest.json").write_text(json.dumps(m))
    return key


def edit(patches, name, old, new):
    p = patches / "exports" / name
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


TASK_PRIO = "0004-sched-export-GPL-task_prio.patch"


def test_edited_patch_derives_from_the_recorded_tree_by_its_tail(patches, cache, tarball):
    V = known(patches)
    stock = recorded_tree(cache, V["stock"], tarball)
    exports = recorded_tree(cache, V["exports"], tarball)
    edit(patches, TASK_PRIO, "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);")
    V = known(patches)
    assert tree_key(V["exports"], tarball) not in (stock, exports)
    base = derive.find_base(V["exports"], tarball, cache)
    assert (base.key, base.variant, base.n_patches) == (exports, "exports", 3)
    # the base's own recorded files 0007..0004, last first
    assert [f.name for f in base.reverse] == [
        "07-0007-block-genhd-export-GPL-generic-disk-block-class.patch",
        "06-0006-block-genhd-export-GPL-generic-disk-device-type.patch",
        "05-0005-mm-export-GPL-get_pageblock_migratetype.patch",
        "04-0004-sched-export-GPL-task_prio.patch"]
    assert all(f.parent == cache / "trees" / exports / "series" for f in base.reverse)
    assert "EXPORT_SYMBOL_GPL(task_prio)" in base.reverse[-1].read_text()
    # 0004-0007 touch 10 files, reversed and applied; the stock prefix would touch 17
    assert base.touched == 10
    # bpf13's series names the same (edited) 0004: the same tail, plus its 0008
    base = derive.find_base(V["bpf13"], tarball, cache)
    assert (base.key, base.n_patches, len(base.reverse), base.touched) == (exports, 3, 4, 11)


def test_a_tree_being_deleted_is_no_base(patches, cache, tarball):
    # eviction renames a tree to .trash-<key>-... before removing it (proc.py): with
    # its manifest still there, it must not be chosen (pathlib's glob sees dot names)
    V = known(patches)
    exports = recorded_tree(cache, V["exports"], tarball)
    trees = cache / "trees"
    (trees / exports).rename(trees / f".trash-{exports}-1-2")
    edit(patches, TASK_PRIO, "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);")
    assert derive.find_base(known(patches)["exports"], tarball, cache) is None


def test_fewest_touched_files_wins_and_a_plain_prefix_on_a_tie(patches, cache, tarball):
    V = known(patches)
    recorded_tree(cache, V["stock"], tarball)
    exports = recorded_tree(cache, V["exports"], tarball)
    # an edit of the first patch: from the exports tree all 7 are reversed and applied,
    # 17 files, as many as stock applying 7: the plain prefix wins the tie
    edit(patches, "0001-bpf-allow-up-to-13-arguments-for-tracepoints.patch", "\n+", "\n+ ")
    V = known(patches)
    base = derive.find_base(V["exports"], tarball, cache)
    assert base.reverse == () and base.n_patches == 0 and base.touched == 17
    # a tree with the same content under other patch names: nothing to reverse or apply
    shutil.rmtree(patches / "exports")
    shutil.copytree(paths.REPO / "patches" / "exports", patches / "exports")
    series = patches / "exports" / "series"
    for f in sorted((patches / "exports").glob("0*.patch")):
        f.rename(f.with_name("x" + f.name))
    series.write_text("".join("x" + l + "\n" for l in series.read_text().split()))
    V = known(patches)
    base = derive.find_base(V["exports"], tarball, cache)
    assert (base.key, base.reverse, base.touched, base.n_patches) == (exports, (), 0, 7)


def test_tie_prefers_a_plain_prefix(patches, cache, tarball):
    """Equal file counts: the prefix derivation (nothing reversed) is chosen."""
    d = patches / "tie"
    d.mkdir()
    hunk = "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n@@ -1 +1 @@\n-x\n+y\n"
    for name, f in (("A", "f1"), ("B", "f2"), ("C", "f3")):
        (d / f"{name}.patch").write_text(hunk.format(f))

    def var(names):
        (d / "series").write_text("".join(f"{n}.patch\n" for n in names))
        return variants.Variant("tie", "exports", "", series_name="tie", patches_root=patches)
    empty = recorded_tree(cache, var([]), tarball)          # apply A, B: 2 files
    tail = recorded_tree(cache, var(["A", "C"]), tarball)   # reverse C, apply B: 2 files
    base = derive.find_base(var(["A", "B"]), tarball, cache)
    assert (base.key, base.reverse, base.touched) == (empty, (), 2)
    shutil.rmtree(cache / "trees" / empty)
    base = derive.find_base(var(["A", "B"]), tarball, cache)
    assert (base.key, base.n_patches, base.touched) == (tail, 1, 2)
    assert [f.name for f in base.reverse] == ["02-C.patch"]


def test_trees_without_a_record_are_only_prefix_candidates(patches, cache, tarball):
    V = known(patches)
    recorded_tree(cache, V["exports"], tarball, record=False)
    edit(patches, TASK_PRIO, "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);")
    assert derive.find_base(known(patches)["exports"], tarball, cache) is None


def test_adopted_record_beside_an_old_tree(patches, cache, tarball):
    V = known(patches)
    key = recorded_tree(cache, V["exports"], tarball, record=False)
    root = cache / "trees" / key
    before = (root / "manifest.json").read_text()
    assert derive._adopt(V["exports"], tarball_sha256(tarball), V["exports"].patches(), root)
    assert (root / "manifest.json").read_text() == before and not (root / "series").exists()
    assert (cache / "trees" / f"{key}.record" / "record.json").is_file()
    edit(patches, TASK_PRIO, "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);")
    base = derive.find_base(known(patches)["exports"], tarball, cache)
    assert base.key == key and len(base.reverse) == 4
    assert base.reverse[0].parent == cache / "trees" / f"{key}.record" / "series"


def test_other_build_inputs_or_a_changed_record_are_no_candidates(patches, cache, tarball):
    V = known(patches)
    key = recorded_tree(cache, V["exports"], tarball)
    edit(patches, TASK_PRIO, "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);")
    V = known(patches)
    m = cache / "trees" / key / "manifest.json"
    good = m.read_text()
    for field, value in (("recipe", "other-recipe"), ("make_targets", ["bzImage"]),
                         ("tarball_sha256", "0" * 64)):
        d = json.loads(good)
        d["build_inputs"][field] = value
        m.write_text(json.dumps(d))
        assert derive.find_base(V["exports"], tarball, cache) is None, field
    d = json.loads(good)
    d["build_inputs"]["fragments"][0]["sha256"] = "0" * 64
    m.write_text(json.dumps(d))
    assert derive.find_base(V["exports"], tarball, cache) is None
    m.write_text(good)
    assert derive.find_base(V["exports"], tarball, cache).key == key
    # a recorded patch file that no longer has its recorded content is never reversed
    f = cache / "trees" / key / "series" / "05-0005-mm-export-GPL-get_pageblock_migratetype.patch"
    f.write_text(f.read_text() + "\n")
    assert derive.find_base(V["exports"], tarball, cache) is None


def test_reversed_patch_touching_kconfig_is_no_candidate(patches, cache, tarball):
    extra = patches / "exports" / "0008-kconfig.patch"
    extra.write_text("diff --git a/init/Kconfig b/init/Kconfig\n--- a/init/Kconfig\n"
                     "+++ b/init/Kconfig\n")
    series = patches / "exports" / "series"
    series.write_text(series.read_text() + "0008-kconfig.patch\n")
    recorded_tree(cache, known(patches)["exports"], tarball)
    series.write_text(series.read_text().replace("0008-kconfig.patch\n", ""))
    extra.unlink()
    # exports without 0008 would reverse the Kconfig patch: no derivation from that tree
    assert derive.find_base(known(patches)["exports"], tarball, cache) is None


def test_linked_copy_never_writes_the_base(tmp_path):
    base = tmp_path / "base"
    (base / "kernel").mkdir(parents=True)
    (base / "kernel" / "core.c").write_text("int x;\n")
    (base / "kernel" / "core.o").write_text("object\n")
    (base / "link").symlink_to("kernel/core.c")
    os.utime(base / "kernel" / "core.o", ns=(1, 1_000_000_000_123))
    dest = tmp_path / "dest"
    p = treecopy.linked_copy(base, dest, frozenset({"kernel/core.c", "link"}))
    assert p.returncode == 0
    src_ino = (base / "kernel" / "core.c").stat().st_ino
    assert (dest / "kernel" / "core.c").stat().st_ino == src_ino       # linked
    obj = dest / "kernel" / "core.o"
    assert obj.stat().st_ino != (base / "kernel" / "core.o").stat().st_ino   # copied
    assert obj.stat().st_mtime_ns == 1_000_000_000_123
    with open(obj, "w") as f:           # what gcc -o does: truncate and write in place
        f.write("rebuilt\n")
    assert (base / "kernel" / "core.o").read_text() == "object\n"
    # git apply, forward and reverse, replaces the linked file instead of writing it
    patch = tmp_path / "p.patch"
    patch.write_text("diff --git a/kernel/core.c b/kernel/core.c\n--- a/kernel/core.c\n"
                     "+++ b/kernel/core.c\n@@ -1 +1 @@\n-int x;\n+int y;\n")
    subprocess.run(["git", "apply", str(patch)], cwd=dest, check=True)
    assert (base / "kernel" / "core.c").read_text() == "int x;\n"
    assert (dest / "kernel" / "core.c").read_text() == "int y;\n"


def test_unchanged_files_keep_the_base_mtime(tmp_path):
    src = tmp_path / "linux"
    (src / "kernel").mkdir(parents=True)
    same, changed = src / "kernel" / "same.c", src / "kernel" / "changed.c"
    same.write_text("a\n")
    changed.write_text("b\n")
    for f in (same, changed):
        os.utime(f, ns=(1, 5_000_000_000))
    patch = tmp_path / "p.patch"
    patch.write_text("diff --git a/kernel/same.c b/kernel/same.c\n"
                     "diff --git a/kernel/changed.c b/kernel/changed.c\n")
    before = derive._snapshot(src, [patch])
    same.write_text("x\n")
    same.write_text("a\n")              # reversed and applied again: the same bytes
    changed.write_text("c\n")
    assert derive._keep_unchanged_mtimes(src, before) == ["kernel/changed.c"]
    assert same.stat().st_mtime_ns == 5_000_000_000
    assert changed.stat().st_mtime_ns > 5_000_000_000


def test_prepare_of_a_cached_tree_records_holds_and_stamps_it(patches, cache, tarball):
    from harness.prepare import cache as cachemod
    V = known(patches)
    key = recorded_tree(cache, V["exports"], tarball, record=False)
    with cachemod.session() as held:
        tree = kernel.prepare(V["exports"], cache, tarball)
        assert tree.key == key and len(held) == 1
        assert [e.held for e in cachemod.entries(cache)] == [True]
        assert cachemod.clear(cache)[0] == []
    assert (cache / "trees" / f"{key}.used").exists()
    assert (cache / "trees" / f"{key}.record" / "record.json").exists()
    assert derive._record_of(cache / "trees" / key / "manifest.json")[1] == \
        cache / "trees" / f"{key}.record"
