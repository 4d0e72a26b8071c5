"""harness/lttng/supply/image.py pack(): the LTTng guest's initramfs is an entry of
the build cache (cache.entry()): packed once under its exclusive lock however many
runs ask at once, its size recorded, held while used; a stand-in gen_init_cpio
counts its runs."""

import os
import threading

import pytest

from harness.errors import HarnessError
from harness.lttng.supply import image
from harness.prepare import cache as cachemod
from harness.prepare.tree import Tree

SPEC = "dir /dev 0755 0 0\nnod /dev/console 0600 0 0 c 5 1\n"


@pytest.fixture
def tree(tmp_path):
    gen = tmp_path / "src" / "usr" / "gen_init_cpio"
    gen.parent.mkdir(parents=True)
    gen.write_text(f"#!/bin/sh\necho run >> {tmp_path}/runs\nsleep 0.5\ncat \"$1\"\n")
    gen.chmod(0o755)
    return Tree("fake", "k", tmp_path, tmp_path / "src")


def runs(tmp_path):
    f = tmp_path / "runs"
    return len(f.read_text().splitlines()) if f.exists() else 0


def test_concurrent_packers_of_one_image_pack_it_once(tmp_path, tree):
    c, start, got = tmp_path / "cache", threading.Barrier(2), []

    def packer(i):
        out = tmp_path / f"run{i}" / "lttng-initramfs"
        out.parent.mkdir()
        start.wait()
        got.append(image.pack(SPEC, tree, c, out, f"v{i}").read_text())

    threads = [threading.Thread(target=packer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [SPEC, SPEC] and runs(tmp_path) == 1
    (e,) = cachemod.entries(c)
    assert e.kind == "lttng/initramfs" and e.complete and e.variant in ("v0", "v1")
    assert cachemod.read_info(c, e.kind, e.key)["size"] > 0      # recorded at completion


def test_a_held_image_is_not_evicted_and_a_free_one_is(tmp_path, tree):
    c = tmp_path / "cache"
    (tmp_path / "a").mkdir()
    cpio = image.pack(SPEC, tree, c, tmp_path / "a" / "img", "v")
    (e,) = cachemod.entries(c)
    with cachemod.session():
        image.pack(SPEC, tree, c, tmp_path / "a" / "img", "v")      # found: used, held
        assert cachemod.clear(c)[0] == [] and e.path.exists()
    assert [x.key for x in cachemod.clear(c)[0]] == [e.key] and not e.path.exists()
    assert cpio.read_text() == SPEC and runs(tmp_path) == 1


def test_without_a_cache_the_image_is_packed_in_place(tmp_path, tree):
    (tmp_path / "a").mkdir()
    assert image.pack(SPEC, tree, None, tmp_path / "a" / "img", "v").read_text() == SPEC
    assert not (tmp_path / "cache").exists() and runs(tmp_path) == 1


def test_a_failing_gen_init_cpio_leaves_no_entry(tmp_path, tree):
    tree.gen_init_cpio.write_text("#!/bin/sh\necho 'bad line 3' >&2\nexit 1\n")
    (tmp_path / "a").mkdir()
    with pytest.raises(HarnessError) as e:
        image.pack(SPEC, tree, tmp_path / "cache", tmp_path / "a" / "img", "v", step="suite")
    assert e.value.step == "suite" and "bad line 3" in e.value.message
    assert cachemod.entries(tmp_path / "cache") == []
    assert [p.name for p in (tmp_path / "cache" / "lttng" / "initramfs").iterdir()
            if not p.name.endswith(".lock")] == []
    os.chmod(tree.gen_init_cpio, 0o644)
    with pytest.raises(HarnessError) as e:
        image.pack(SPEC, tree, tmp_path / "cache", tmp_path / "a" / "img", "v")
    assert e.value.step == "lttng" and "cannot run" in e.value.message
