"""The cache cap: sizes, last use, LRU eviction, holds, commands."""

import fcntl
import json
import os
import subprocess
import sys
import time

import pytest

from harness.prepare import cache
from harness import paths, proc
from harness.errors import HarnessError


def fake(c, kind, key, size, used_at, variant="v", complete=True):
    """An entry of `size` bytes, last used at `used_at` (epoch seconds)."""
    p = cache.entry_path(c, kind, key)
    p.parent.mkdir(parents=True, exist_ok=True)
    if kind == "initramfs":
        p.write_bytes(b"x" * size)
    else:
        p.mkdir()
        (p / "blob").write_bytes(b"x" * size)
        if complete:
            (p / ("manifest.json" if kind == "trees" else "done")).write_text(
                json.dumps({"key": key, "variant": variant}))
    if complete:
        cache.completed(kind, c, key, variant)
    stamp = c / kind / f"{key}.used"
    stamp.touch()
    os.utime(stamp, (used_at, used_at))
    return p


@pytest.fixture
def c(tmp_path):
    return tmp_path / "cache"


def keys(es):
    return [e.key for e in es]


def test_cap_from_env_and_sizes():
    assert cache.cap_from_env({}) == 40 << 30
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "5G"}) == 5 << 30
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "512M"}) == 512 << 20
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "1.5GiB"}) == 3 << 29
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "123456"}) == 123456
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "off"}) is None
    assert cache.cap_from_env({"KSYMLAB_CACHE_MAX": "0"}) is None
    with pytest.raises(HarnessError) as e:
        cache.parse_size("lots")
    assert e.value.exit_status == 2


def test_size_is_measured_once_on_completion(c):
    fake(c, "trees", "t1", 300_000, 1000)
    info = json.loads((c / "trees" / "t1.info").read_text())
    assert 300_000 <= info["size"] < 400_000 and info["variant"] == "v"
    # later growth is not re-measured: the recorded size stands
    (c / "trees" / "t1" / "more").write_bytes(b"y" * 500_000)
    [e] = cache.entries(c)
    assert e.size == info["size"]
    # an entry from before sizes were recorded is measured once and the size kept beside it
    (c / "trees" / "t1.info").unlink()
    [e] = cache.entries(c)
    assert e.size >= 800_000
    assert json.loads((c / "trees" / "t1.info").read_text())["size"] == e.size


def test_lru_order_across_kinds(c):
    fake(c, "trees", "t-old", 100_000, 1000)
    fake(c, "modules", "m-mid", 100_000, 2000)
    fake(c, "initramfs", "i-new", 100_000, 3000)
    fake(c, "trees", "t-newest", 100_000, 4000)
    assert keys(cache.entries(c)) == ["t-old", "m-mid", "i-new", "t-newest"]
    total = sum(e.size for e in cache.entries(c))
    ev, held, after = cache.prune(c, total - 150_000, report=lambda m: None)
    assert keys(ev) == ["t-old", "m-mid"] and held == []
    assert not (c / "trees" / "t-old").exists() and not (c / "trees" / "t-old.info").exists()
    assert not (c / "modules" / "m-mid").exists()
    assert keys(cache.entries(c)) == ["i-new", "t-newest"]
    assert (c / "trees" / "t-old.lock").exists()       # lock files stay
    # under the cap: nothing happens
    assert cache.prune(c, 10 << 30, report=lambda m: None)[0] == []
    assert cache.prune(c, None, report=lambda m: None)[0] == []


def test_a_use_makes_an_entry_recent(c):
    fake(c, "trees", "a", 100_000, 1000)
    fake(c, "trees", "b", 100_000, 2000)
    cache.used("trees", c, "a")
    assert keys(cache.entries(c)) == ["b", "a"]


def test_held_entries_are_never_evicted(c):
    fake(c, "trees", "held", 100_000, 1000)
    fake(c, "modules", "free", 100_000, 2000)
    fake(c, "initramfs", "img", 100_000, 3000)
    with cache.hold([c / "trees" / "held" / "linux", c / "initramfs" / "img.cpio"]):
        assert {e.key: e.held for e in cache.entries(c)} == {
            "held": True, "free": False, "img": True}
        ev, skipped, _ = cache.prune(c, 1, report=lambda m: None)
        assert keys(ev) == ["free"] and keys(skipped) == ["held", "img"]
        assert (c / "trees" / "held" / "manifest.json").exists()
        assert (c / "initramfs" / "img.cpio").exists()
        ev, skipped = cache.clear(c)
        assert ev == [] and keys(skipped) == ["held", "img"]
    ev, skipped = cache.clear(c)
    assert keys(ev) == ["held", "img"] and skipped == []
    assert cache.entries(c) == []


def test_an_entry_being_built_is_not_evicted(c):
    fake(c, "modules", "building", 100_000, 1000, complete=False)
    with open(cache.lock_path(c, "modules", "building"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert cache.clear(c) == ([], cache.entries(c, probe=False))
    assert keys(cache.clear(c)[0]) == ["building"]       # a stopped build's leftovers go


def test_session_holds_what_the_process_uses(c):
    fake(c, "trees", "t", 100_000, 1000)
    fake(c, "modules", "m", 100_000, 2000)
    with cache.session() as s:
        cache.used("trees", c, "t")
        cache.used("trees", c, "t")                     # held once
        assert len(s) == 1
        assert keys(cache.prune(c, 1, report=lambda m: None)[0]) == ["m"]
    assert keys(cache.clear(c)[0]) == ["t"]


def test_holding_an_evicted_entry_fails(c):
    fake(c, "trees", "gone", 100_000, 1000)
    cache.clear(c)
    with pytest.raises(HarnessError) as e:
        with cache.hold([c / "trees" / "gone"]):
            pass
    assert "evicted" in e.value.message


def test_symlinked_entry_loses_only_its_link(c, tmp_path):
    real = tmp_path / "real" / "k"
    (real / "linux").mkdir(parents=True)
    (real / "manifest.json").write_text("{}")
    (c / "trees").mkdir(parents=True)
    (c / "trees" / "k").symlink_to(real)
    assert keys(cache.clear(c)[0]) == ["k"]
    assert (real / "manifest.json").exists() and not (c / "trees" / "k").is_symlink()


HOLDER = """
import sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from harness.prepare import cache
c = Path({c!r})
with cache.session():
    cache.used("trees", c, "mine")
    print("holding", flush=True)
    sys.stdin.readline()
    cache.prune(c, 1, report=lambda m: print(m, flush=True))
    print("pruned", flush=True)
"""


def test_two_processes_cannot_evict_what_the_other_holds(c):
    fake(c, "trees", "mine", 100_000, 1000)
    fake(c, "trees", "theirs", 100_000, 2000)
    p = subprocess.Popen([sys.executable, "-c", HOLDER.format(repo=str(paths.REPO), c=str(c))],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "holding"
        with cache.hold([c / "trees" / "theirs"]):
            # this process cannot evict the other's entry ...
            ev, skipped, _ = cache.prune(c, 1, report=lambda m: None)
            assert ev == [] and sorted(keys(skipped)) == ["mine", "theirs"]
            # ... nor the other this one's
            p.stdin.write("\n")
            p.stdin.flush()
            out = p.stdout.read()
            assert p.wait(timeout=30) == 0
        assert "evicted" not in out and "pruned" in out
        assert (c / "trees" / "mine").exists() and (c / "trees" / "theirs").exists()
        # once neither holds anything, both go
        assert sorted(keys(cache.clear(c)[0])) == ["mine", "theirs"]
    finally:
        p.kill()
        p.wait()


def test_cache_command_lists_and_clears(c, capsys, monkeypatch):
    from harness.__main__ import main
    monkeypatch.setenv("KSYMLAB_CACHE", str(c))
    monkeypatch.setenv("KSYMLAB_CACHE_MAX", "1G")
    fake(c, "trees", "t0", 100_000, time.time() - 60, variant="exports")
    fake(c, "initramfs", "i0", 50_000, time.time(), variant="exports")
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert "trees" in out and "t0" in out and "exports" in out and "i0" in out
    assert "cap 1.0 GiB" in out
    with cache.hold([c / "trees" / "t0"]):
        assert main(["cache", "clear"]) == 0
        out = capsys.readouterr().out
    assert "cleared 1 entry" in out and "kept trees t0 (exports): held" in out
    assert main(["cache", "prune", "--max", "off"]) == 0
    assert main(["cache", "prune", "--max", "nonsense"]) == 2


def test_hard_linked_files_count_their_share(c, tmp_path):
    a = fake(c, "trees", "a", 0, 1000)
    (a / "big").write_bytes(b"z" * 1_000_000)
    b = c / "trees" / "b"
    b.mkdir()
    os.link(a / "big", b / "big")
    sa, sb = cache.measure(a), cache.measure(b)
    assert 500_000 <= sb < 520_000 and 500_000 <= sa < 530_000


# entry(): the lock protocol of finding or building one entry.

def lock_state(lock):
    """What another open file could take on `lock` right now: "free", "shared" or "held"."""
    with open(lock, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return "free"
        except BlockingIOError:
            pass
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return "shared"
        except BlockingIOError:
            return "held"


BUILDER = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from harness.prepare import cache
d = Path({d!r})
with cache.entry(d / "k.lock", (d / "k" / "done").exists) as e:
    if e.missing:
        print("building", flush=True)
        (d / "k").mkdir()
        with open(d / "builds", "a") as f:
            f.write("1")
        sys.stdin.readline()
        (d / "k" / "done").write_text("k")
        e.built()
        print("built", flush=True)
    else:
        print("found", flush=True)
"""


def test_entry_only_one_process_builds_the_other_waits_and_finds_it(tmp_path):
    start = lambda: subprocess.Popen(   # noqa: E731
        [sys.executable, "-c", BUILDER.format(repo=str(paths.REPO), d=str(tmp_path))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = start()
    second = None
    try:
        assert first.stdout.readline().strip() == "building"
        assert lock_state(tmp_path / "k.lock") == "held"
        second = start()
        time.sleep(1.0)
        assert second.poll() is None                    # waiting for the builder
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.stdout.read().split() == ["built"] and first.wait(timeout=30) == 0
        assert second.stdout.read().split() == ["found"] and second.wait(timeout=30) == 0
        assert (tmp_path / "builds").read_text() == "1"
        assert lock_state(tmp_path / "k.lock") == "free"
    finally:
        for p in (first, second):
            if p is not None:
                p.kill()
                p.wait()


def test_entry_many_threads_build_once(tmp_path):
    import threading
    marker = tmp_path / "k" / "done"
    builds, seen, go = [], [], threading.Barrier(8)

    def use():
        go.wait()
        with cache.entry(tmp_path / "k.lock", marker.exists) as e:
            if e.missing:
                builds.append(1)
                time.sleep(0.2)
                marker.parent.mkdir()
                marker.write_text("k")
                e.built()
            seen.append(marker.read_text())
    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert builds == [1] and seen == ["k"] * 8


def test_entry_failed_build_leaves_nothing_complete_and_the_waiter_builds(tmp_path):
    import threading
    marker = tmp_path / "k" / "done"
    building, results = threading.Event(), []

    def fail():
        with cache.entry(tmp_path / "k.lock", marker.exists) as e:
            assert e.missing
            marker.parent.mkdir()
            (marker.parent / "half.o").write_text("half")
            building.set()
            time.sleep(0.5)
            raise RuntimeError("make failed")

    def wait_then_build():
        building.wait()
        with cache.entry(tmp_path / "k.lock", marker.exists) as e:
            results.append(e.missing)
            if e.missing:
                assert (marker.parent / "half.o").exists()   # the leftovers, for it to remove
                marker.write_text("k")
                e.built()
    t1 = threading.Thread(target=lambda: pytest.raises(RuntimeError, fail))
    t2 = threading.Thread(target=wait_then_build)
    t1.start()
    t2.start()
    t1.join(timeout=30)
    t2.join(timeout=30)
    assert results == [True] and marker.read_text() == "k"


def test_entry_exception_releases_the_lock_and_the_entry_stays_incomplete(c):
    lock = cache.lock_path(c, "modules", "m")
    with pytest.raises(RuntimeError):
        with cache.entry(lock, lambda: cache.is_complete(c, "modules", "m")) as e:
            assert e.missing and lock_state(lock) == "held"
            cache.entry_path(c, "modules", "m").mkdir()
            (cache.entry_path(c, "modules", "m") / "x.o").write_text("half")
            raise RuntimeError("make failed")
    assert lock_state(lock) == "free"
    assert [(x.key, x.complete) for x in cache.entries(c)] == [("m", False)]
    with cache.entry(lock, lambda: cache.is_complete(c, "modules", "m")) as e:
        assert e.missing


def test_entry_built_records_downgrades_and_holds_in_the_session(c):
    import threading
    lock = cache.lock_path(c, "modules", "m")
    with cache.session() as s:
        with cache.entry(lock, lambda: cache.is_complete(c, "modules", "m")) as e:
            assert e.missing
            cache.entry_path(c, "modules", "m").mkdir()
            (cache.entry_path(c, "modules", "m") / "done").write_text("m")
            # used() (the session's hold) after the downgrade: it would wait on this very lock
            t = threading.Thread(target=e.built, args=("modules", c, "m", "v"), daemon=True)
            t.start()
            t.join(timeout=10)
            assert not t.is_alive(), "built() waits for its own lock"
            assert lock_state(lock) == "shared" and len(s) == 1
        assert json.loads((c / "modules" / "m.info").read_text())["variant"] == "v"
        assert (c / "modules" / "m.used").exists()
        assert lock_state(lock) == "shared"              # the session still holds it
        with cache.entry(lock, lambda: cache.is_complete(c, "modules", "m")) as e:
            assert not e.missing and lock_state(lock) == "shared"
    assert lock_state(lock) == "free"


def test_entry_built_without_a_kind_only_downgrades(tmp_path):
    lock = tmp_path / "lttng" / "modules" / "k.lock"
    marker = tmp_path / "lttng" / "modules" / "k" / "done"
    with cache.entry(lock, marker.exists) as e:
        marker.parent.mkdir()
        marker.write_text("k")
        e.built()
        assert lock_state(lock) == "shared"
    assert sorted(p.name for p in lock.parent.iterdir()) == ["k", "k.lock"]


def test_entry_checks_again_once_exclusive(tmp_path):
    """A waiter that saw the entry incomplete and waited for the exclusive lock finds
    it complete when the builder (which held it shared once complete) lets go."""
    import threading
    lock, marker = tmp_path / "k.lock", tmp_path / "k" / "done"
    results = []

    def waiter():
        with cache.entry(lock, marker.exists) as e:
            results.append(e.missing)
    with open(lock, "a") as builder:
        fcntl.flock(builder, fcntl.LOCK_SH)
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.5)
        assert results == [] and t.is_alive()         # incomplete: waiting to build it
        marker.parent.mkdir()
        marker.write_text("k")
    t.join(timeout=30)
    assert results == [False]


def test_entry_a_waiter_that_finds_it_built_can_hold_it_in_its_session(c):
    """The waiter's recheck finds the entry another process built: it is shared again,
    so used() (the session's hold, a second open of the lock file) does not wait on
    the waiter's own exclusive lock (it did, for good, before the downgrade)."""
    import threading
    lock = cache.lock_path(c, "modules", "m")
    lock.parent.mkdir(parents=True)
    done = []

    def waiter():
        with cache.session() as s:
            with cache.entry(lock, lambda: cache.is_complete(c, "modules", "m")) as e:
                assert not e.missing
                cache.used("modules", c, "m")
                done.append(len(s))
    with open(lock, "a") as builder:
        fcntl.flock(builder, fcntl.LOCK_SH)
        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        time.sleep(0.5)
        cache.entry_path(c, "modules", "m").mkdir()
        (cache.entry_path(c, "modules", "m") / "done").write_text("m")
    t.join(timeout=20)
    assert not t.is_alive(), "the waiter waits on its own exclusive lock"
    assert done == [1]


def test_an_evicted_tree_is_gone_at_once_and_deleted_in_the_background(c, monkeypatch):
    """The run does not wait for a tree's deletion (seconds for 1.6 GiB): the entry is
    renamed aside at once and a detached rm deletes it; without rm, it is deleted here."""
    p = fake(c, "trees", "t1", 1000, 1000)
    (e,) = cache.entries(c)
    assert cache.try_evict(c, e) and not p.exists()
    for _ in range(100):
        if not list((c / "trees").glob(".trash-*")):
            break
        time.sleep(0.05)
    assert list((c / "trees").glob(".trash-*")) == []
    q = fake(c, "trees", "t2", 1000, 1000)
    monkeypatch.setattr(proc.subprocess, "Popen",
                        lambda *a, **k: (_ for _ in ()).throw(OSError("no rm")))
    (e,) = cache.entries(c)
    assert cache.try_evict(c, e) and not q.exists()
    assert list((c / "trees").glob(".trash-*")) == []
