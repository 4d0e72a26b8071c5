import shutil

import pytest

from harness import gdb, kernel, paths
from harness.errors import HarnessError


def built_tree():
    """Any fully built tree in the cache, so gdb has a real vmlinux to load."""
    for manifest in sorted((paths.cache_root() / "trees").glob("*/manifest.json")):
        return kernel.Tree("cached", manifest.parent.name, manifest.parent,
                           manifest.parent / "linux")
    return None


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb not installed")
def test_attach_to_missing_socket(tmp_path):
    tree = built_tree() or kernel.Tree("fake", "k", tmp_path, tmp_path)
    claims = {"symbols": ["task_prio"], "module": "/nonexistent.ko",
              "sections": {".text": 0xffffffffc0000000}, "pageblock_order": 10}
    with pytest.raises(HarnessError) as e:
        with gdb.GdbSession(tree, tmp_path / "no-such.sock", claims, tmp_path,
                            timeout=120) as session:
            session.start()
    assert e.value.step == "gdb" and e.value.exit_status == 40
    assert "No such file or directory" in e.value.message
    assert (tmp_path / "gdb.log").exists()
    assert "\n" not in e.value.one_line()
