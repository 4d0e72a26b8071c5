import contextlib
import shutil

import pytest

from harness.oracles import gdb
from harness.prepare import cache
from harness.prepare.tree import Tree
from harness import paths
from harness.errors import HarnessError


@contextlib.contextmanager
def built_tree():
    """A fully built tree in the cache, so gdb loads a real vmlinux and fails at the
    attach; held while the block runs, so that no eviction (another run's) removes it."""
    for manifest in sorted((paths.cache_root() / "trees").glob("*/manifest.json")):
        if manifest.parent.name.startswith("."):
            continue        # pathlib's * matches .trash-*, a tree being deleted
        with cache.hold([manifest.parent]):
            if manifest.is_file():          # not evicted before the hold
                yield Tree("cached", manifest.parent.name, manifest.parent,
                           manifest.parent / "linux")
                return
    yield None


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb not installed")
def test_attach_to_missing_socket(tmp_path):
    with built_tree() as tree:
        _attach_to_missing_socket(tmp_path, tree)


def _attach_to_missing_socket(tmp_path, tree):
    assert tree is not None, "no built kernel tree in the cache: run `make build` first"
    sock = tmp_path / "no-such.sock"
    claims = {"symbols": ["task_prio"], "module": "/nonexistent.ko",
              "sections": {".text": 0xffffffffc0000000}, "pageblock_order": 10}
    with pytest.raises(HarnessError) as e:
        with gdb.GdbSession(tree, sock, claims, tmp_path, timeout=120) as session:
            session.start()
    assert e.value.step == "gdb" and e.value.exit_status == 40
    # the failure is the attach to this socket, not a vmlinux gdb could not load
    assert e.value.message.startswith(f"ksymlab-gdb: cannot attach to {sock}:"), e.value.message
    assert "No such file or directory" in e.value.message
    # gdb loaded the tree's vmlinux: only the socket is missing
    assert str(tree.vmlinux) not in (tmp_path / "gdb.log").read_text()
    assert "\n" not in e.value.one_line()
