"""The inner loop's edit (issue 23 item 6): an export's type changed in the exports series
rebuilds the kernel, and LTTng's modules are reused from the build of the unedited tree
(harness/lttng/supply/reuse.py). Proof that reuse is sound: the reused modules equal a fresh
build against the edited tree, byte for byte once debug info, the build id and the
build directory's name are set aside."""

import shutil
import subprocess

import pytest

from harness import paths
from harness.prepare import kernel, variants
from harness.lttng.supply import modbuild
from harness.lttng.supply import reuse

pytestmark = pytest.mark.e2e

EDIT = ("EXPORT_SYMBOL_GPL(task_prio);", "EXPORT_SYMBOL(task_prio);")


def _comparable(ko, build_dir, scratch):
    """The module without debug info and build id, its build directory's key (in
    __FILE__ strings) replaced by a constant of the same length."""
    out = scratch / f"{build_dir.name}-{ko.name}"
    subprocess.run(["objcopy", "--strip-debug", "--remove-section=.note.gnu.build-id",
                    str(ko), str(out)], check=True)
    return out.read_bytes().replace(build_dir.name.encode(), b"K" * len(build_dir.name))


@pytest.mark.prebuild("exports")
def test_a_reused_lttng_build_equals_a_fresh_build_of_the_edited_tree(tmp_path):
    patches = tmp_path / "patches"
    shutil.copytree(paths.patches_root(), patches)
    p = patches / "exports" / "0004-sched-export-GPL-task_prio.patch"
    assert EDIT[0] in p.read_text()
    p.write_text(p.read_text().replace(*EDIT))
    cache = paths.cache_root()
    (stock,) = variants.select(["exports"])
    (edited,) = variants.select(["exports"], patches_root=patches)
    base = kernel.prepare(stock, cache)
    tree = kernel.prepare(edited, cache)
    assert tree.key != base.key
    symvers = (tree.src / "Module.symvers").read_text()
    assert "\ttask_prio\tvmlinux\tEXPORT_SYMBOL\t" in symvers      # the edit is built
    args = dict(kallsyms=stock.lttng_kallsyms, version=stock.lttng_version)
    donor = modbuild.build(base, stock.lttng_series, cache, **args)
    assert (donor / reuse.MANIFEST).is_file()
    assert reuse.changed(donor, tree.src) == []
    reused = modbuild.build(tree, stock.lttng_series, cache, **args)
    source = modbuild.reused_from(reused)
    assert source is not None, "the edited tree's LTTng build was not reused"
    assert f"tree={tree.key}" not in (reused.parent / source / "facts").read_text()
    fresh = modbuild.build(tree, stock.lttng_series, cache, fresh=True, **args)
    assert modbuild.reused_from(fresh) is None and fresh != reused
    names = sorted(k.name for k in (reused / "ko").glob("*.ko"))
    assert names == sorted(k.name for k in (fresh / "ko").glob("*.ko")) and len(names) > 30
    differ = [n for n in names
              if _comparable(reused / "ko" / n, reused.parent / source, tmp_path)
              != _comparable(fresh / "ko" / n, fresh, tmp_path)]
    assert differ == []
    # the fresh build read the same from the edited tree as the donor from its own
    assert reuse.changed(fresh, base.src) == []
