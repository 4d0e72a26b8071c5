"""harness/lttng/supply/modbuild.py: the staging of a cached build (strip failures,
the entry's exclusive lock) and the LTTng source digest, with stand-in trees."""

import fcntl
import threading
import time

import pytest

from harness.errors import HarnessError
from harness.lttng.supply import modbuild
from harness.prepare import cache as cachemod
from harness.prepare.tree import Tree


def fake_tree(tmp_path):
    src = tmp_path / "src"
    (src / "include" / "config").mkdir(parents=True)
    (src / "include" / "config" / "kernel.release").write_text("6.1.0-test\n")
    return Tree("fake", "treekey", tmp_path, src)


def test_a_failing_strip_is_the_steps_error_with_its_reason(tmp_path):
    out = tmp_path / "build"
    (out / "ko").mkdir(parents=True)
    (out / "ko" / "lttng-tracer.ko").write_text("not an object\n")
    with pytest.raises(HarnessError) as e:
        modbuild.stage(out, fake_tree(tmp_path))
    assert e.value.step == "lttng" and e.value.exit_status == 23
    assert e.value.message.startswith("strip --strip-debug exited 1: ")
    assert "lttng-tracer.ko" in e.value.message and "format not recognized" in e.value.message


# The cache entry protocol of a found build and of the source digest.


@pytest.fixture
def found(tmp_path, monkeypatch):
    """A complete LTTng build in a cache, its source, series and tree stand-ins; stage()
    replaced by a probe recording how the build's lock is held when it runs."""
    src = tmp_path / "debs" / "root" / "usr" / "src" / "lttng-modules-2.13.9"
    src.mkdir(parents=True)
    (src / "Makefile").write_text("all:\n")
    monkeypatch.setattr(modbuild.fetch, "modules_source", lambda cache, version: src)
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "s.series").write_text("")
    tree, c = fake_tree(tmp_path), tmp_path / "cache"
    key = modbuild.build_key(tree, modbuild.source_digest(src), [], True)
    out = c / "lttng" / "modules" / key
    (out / "stage").mkdir(parents=True)
    (out / "done").write_text(key + "\n")
    calls = []

    def probe(out_, tree_):
        with open(cachemod.lock_path(c, "lttng/modules", key), "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                calls.append("not exclusive")
            except BlockingIOError:
                calls.append("exclusive")
        (out_ / "stage" / f".staged-v{modbuild.STAGE_VERSION}").write_text("r\n")

    monkeypatch.setattr(modbuild, "stage", probe)
    return tree, c, out, calls, tmp_path / "patches"


def build(found):
    tree, c, _, _, patches = found
    return modbuild.build(tree, "s", c, patches_root=patches)


def test_a_staged_build_is_found_without_restaging(found):
    _, _, out, calls, _ = found
    (out / "stage" / f".staged-v{modbuild.STAGE_VERSION}").write_text("r\n")
    assert build(found) == out and calls == []


def test_a_stale_stage_is_redone_only_under_the_exclusive_lock(found):
    _, c, out, calls, _ = found
    assert build(found) == out
    assert calls == ["exclusive"]
    (e,) = [e for e in cachemod.entries(c) if e.kind == "lttng/modules"]
    assert e.key == out.name and e.complete and e.size > 0


def test_a_restage_waits_for_every_holder(found):
    """A run holds the build (shared) while it reads stage/: the restage waits."""
    _, c, out, calls, _ = found
    result = []
    with cachemod.hold([out]):
        t = threading.Thread(target=lambda: result.append(build(found)), daemon=True)
        t.start()
        time.sleep(1.0)
        assert calls == [] and t.is_alive()
    t.join(timeout=20)
    assert result == [out] and calls == ["exclusive"]


def test_the_source_digest_is_computed_once_under_its_lock(tmp_path, monkeypatch):
    src = tmp_path / "lttng-modules-2.13.9"
    src.mkdir()
    (src / "Makefile").write_text("all:\n")
    runs, start = [], threading.Barrier(2)

    def slow_digest(root):
        runs.append(root)
        time.sleep(0.5)
        return "d" * 64

    monkeypatch.setattr(modbuild.fetch, "digest_tree", slow_digest)
    got = []

    def reader():
        start.wait()
        got.append(modbuild.source_digest(src))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["d" * 64] * 2 and len(runs) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "lttng-modules-2.13.9", "lttng-modules-2.13.9.digest", "lttng-modules-2.13.9.digest.lock"]


def test_an_empty_digest_file_is_not_trusted(tmp_path):
    """A writer stopped between open and write (the old write_text) left an empty file:
    its "" digest must not key the builds."""
    src = tmp_path / "lttng-modules-2.13.9"
    src.mkdir()
    (src / "Makefile").write_text("all:\n")
    (tmp_path / "lttng-modules-2.13.9.digest").write_text("")
    assert modbuild.source_digest(src) == modbuild.fetch.digest_tree(src)
