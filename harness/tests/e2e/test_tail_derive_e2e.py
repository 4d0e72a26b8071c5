"""A tail-derived tree equals a fresh build of the same series.

Edits exports' 0004 (EXPORT_SYMBOL_GPL(task_prio) -> EXPORT_SYMBOL) and builds
that series twice: derived from the cached exports tree (reverse 0007..0004,
apply the edited 0004..0007) and fresh (prepare(..., derive=False)). The base
is the real exports tree, reached through a symlink in a temporary cache, so
nothing is written to the shared cache's trees; ccache is shared.
The derived tree is made again by every session, in its temporary cache: it is
what the current derive code gives. The fresh build goes to a cache root of
its own, <cache>/tail-derive-fresh, kept between sessions (one tree: the
others are removed), so only the first session after the exports series or
the build recipe changed pays for it (about 2 minutes with a warm ccache: it
preprocesses every object); its key names the same inputs as any cached tree's.
Needs the exports tree built (python3 -m harness build --variants exports).
"""

import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness.prepare import kernel, variants
from harness.prepare.tree import tree_key
from harness import paths

pytestmark = pytest.mark.e2e

OLD, NEW = "+EXPORT_SYMBOL_GPL(task_prio);", "+EXPORT_SYMBOL(task_prio);"


def digest_tree(src, rel):
    return hashlib.sha256((src / rel).read_bytes()).hexdigest()


def temp_cache(work, real, links):
    c = work / "cache"
    (c / "trees").mkdir(parents=True)
    (c / "ccache").symlink_to(real / "ccache")
    for key in links:
        (c / "trees" / key).symlink_to(real / "trees" / key)
    return c


def fresh_cache(real, keep):
    """<real>/tail-derive-fresh, a cache root for the fresh build that outlives the
    session, holding at most the tree `keep` (its ccache is the shared one)."""
    c = real / "tail-derive-fresh"
    (c / "trees").mkdir(parents=True, exist_ok=True)
    if not (c / "ccache").is_symlink():
        (c / "ccache").symlink_to(real / "ccache")
    for entry in (c / "trees").iterdir():
        # <key>, <key>.lock, <key>.used, <key>.info, <key>.record, temporary files
        if entry.name.split(".")[0] != keep:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    return c


def nm(vmlinux):
    return subprocess.run(["nm", str(vmlinux)], capture_output=True, text=True,
                          check=True).stdout


def build_ids(path):
    out = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True).stdout
    return [bytes.fromhex(m) for m in re.findall(r"Build ID: ([0-9a-f]+)", out)]


def without_build_ids(data, ids):
    for i in ids:
        data = data.replace(i, b"\0" * len(i))
    return data


def stripped(vmlinux, out):
    subprocess.run(["objcopy", "--strip-all", str(vmlinux), str(out)], check=True)
    return without_build_ids(out.read_bytes(), build_ids(vmlinux))


@pytest.fixture(scope="module")
def built():
    real = paths.cache_root()
    exports = variants.select(["exports"])[0]
    key = tree_key(exports)
    if not (real / "trees" / key / "manifest.json").is_file():
        pytest.skip(f"the exports tree {key} is not built in {real}")
    work = Path(tempfile.mkdtemp(prefix="ksymlab-tail-", dir="/var/tmp"))
    try:
        patches = work / "patches"
        shutil.copytree(paths.REPO / "patches", patches)
        p = patches / "exports" / "0004-sched-export-GPL-task_prio.patch"
        p.write_text(p.read_text().replace(OLD, NEW))
        base_src = real / "trees" / key / "linux"
        before = {f: digest_tree(base_src, f) for f in ("kernel/sched/core.c", "Module.symvers",
                                                        "vmlinux")}
        derived_cache = temp_cache(work / "d", real, [key])
        orig = variants.select(["exports"], paths.REPO / "patches")[0]
        assert kernel.prepare(orig, derived_cache).key == key     # records its series beside
        edited = variants.select(["exports"], patches)[0]
        derived = kernel.prepare(edited, derived_cache)
        fresh = kernel.prepare(edited, fresh_cache(real, tree_key(edited)), derive=False)
        after = {f: digest_tree(base_src, f) for f in before}
        yield {"key": key, "derived": derived, "fresh": fresh, "base_src": base_src,
               "work": work, "base_before": before, "base_after": after}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_derived_from_the_exports_tree_by_its_tail(built):
    d, f = built["derived"], built["fresh"]
    assert d.key == f.key and d.key != built["key"]        # content addressing is kept
    m = kernel.manifest(d)
    assert m["derived_from"] == built["key"] and m["derived_from_variant"] == "exports"
    assert m["reversed"] == ["07-0007-block-genhd-export-GPL-generic-disk-block-class.patch",
                             "06-0006-block-genhd-export-GPL-generic-disk-device-type.patch",
                             "05-0005-mm-export-GPL-get_pageblock_migratetype.patch",
                             "04-0004-sched-export-GPL-task_prio.patch"]
    assert m["changed_files"] == ["kernel/sched/core.c"]
    assert kernel.manifest(f)["derived_from"] is None
    # the base was only read
    assert built["base_before"] == built["base_after"]


def test_symbols_system_map_and_symvers_equal_a_fresh_build(built):
    d, f = built["derived"].src, built["fresh"].src
    assert nm(d / "vmlinux") == nm(f / "vmlinux")
    assert (d / "System.map").read_bytes() == (f / "System.map").read_bytes()
    assert (d / "Module.symvers").read_bytes() == (f / "Module.symvers").read_bytes()
    assert (d / ".config").read_bytes() == (f / ".config").read_bytes()
    assert re.search(r"\ttask_prio\tvmlinux\tEXPORT_SYMBOL\t",
                     (d / "Module.symvers").read_text())


def test_sources_equal_a_fresh_build(built):
    d, f = built["derived"].src, built["fresh"].src
    for rel in ("kernel/sched/core.c", "mm/page_alloc.c", "block/genhd.c",
                "include/linux/blkdev.h", "include/linux/kernel.h"):
        assert (d / rel).read_bytes() == (f / rel).read_bytes(), rel


def test_images_differ_only_in_build_ids(built):
    d, f, work = built["derived"].src, built["fresh"].src, built["work"]
    ids_d, ids_f = build_ids(d / "vmlinux"), build_ids(f / "vmlinux")
    assert ids_d and ids_f
    assert stripped(d / "vmlinux", work / "d.strip") == stripped(f / "vmlinux", work / "f.strip")
    # what bzImage compresses: vmlinux as a binary, with the notes
    bins = [without_build_ids((t / "arch/x86/boot/compressed/vmlinux.bin").read_bytes(), ids)
            for t, ids in ((d, ids_d), (f, ids_f))]
    assert bins[0] == bins[1]
    assert (d / "arch/x86/boot/bzImage").stat().st_size == (f / "arch/x86/boot/bzImage").stat().st_size


def test_unchanged_objects_were_not_rebuilt(built):
    log = (built["derived"].root / "build.log").read_text()
    compiled = [l.split()[-1] for l in log.splitlines() if l.startswith("  CC ")]
    assert "kernel/sched/core.o" in compiled
    assert len(compiled) < 20, compiled
