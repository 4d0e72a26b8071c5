"""The cache's kinds beyond the probe path (harness/prepare/cachelayout.py): LTTng's
builds, images, packages and lttng-tools, the private apt configurations and the
cluster's job directories are listed, capped and evicted like trees, and never
while in use."""

import fcntl
import os
import subprocess

import pytest

from harness.prepare import cache


@pytest.fixture
def c(tmp_path):
    return tmp_path / "cache"


def keys(es):
    return [e.key for e in es]


def fake_any(c, kind, key, size, used_at):
    """An entry of any kind of cachelayout.KIND_TABLE, laid out as its builder does."""
    k = cache.KIND[kind]
    p = cache.entry_path(c, kind, key)
    p.parent.mkdir(parents=True, exist_ok=True)
    if k.marker is None:
        p.write_bytes(b"x" * size)
    else:
        p.mkdir()
        (p / "blob").write_bytes(b"x" * size)
        if k.marker:
            (p / k.marker).write_text(key)
    if not k.remeasured:
        cache.completed(kind, c, key, "v")
    for f in (c / kind / f"{key}.used", p):
        if f.exists():
            os.utime(f, (used_at, used_at))
    return p


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_the_cap_covers_lttng_apt_and_cluster_jobs(c):
    """Every kind is listed with its size and evicted least recently used first; what
    a kind's directory holds besides entries (reuse's inputs/, lock files) never is."""
    made = [("lttng/modules", "lb"), ("lttng/initramfs", "li"), ("lttng/debs", "userspace-k"),
            ("lttng/tools", "tk"), ("apt", "trixie"), ("cluster-jobs", f"{dead_pid()}-r-v-1")]
    for i, (kind, key) in enumerate(made):
        fake_any(c, kind, key, 100_000, 1000 + i)
    (c / "lttng" / "modules" / "inputs" / "base").mkdir(parents=True)
    (c / "lttng" / "modules" / "inputs" / "base" / "lb").touch()
    es = cache.entries(c)
    assert [(e.kind, e.key) for e in es] == made
    assert all(100_000 <= e.size < 120_000 and e.complete and not e.held for e in es)
    ev, skipped, total = cache.prune(c, 250_000, report=lambda m: None)
    assert [(e.kind, e.key) for e in ev] == made[:4] and skipped == []
    assert not (c / "lttng" / "modules" / "lb").exists()
    assert (c / "lttng" / "modules" / "inputs" / "base" / "lb").exists()
    assert [(e.kind, e.key) for e in cache.entries(c)] == made[4:]


def test_held_lttng_apt_and_live_cluster_jobs_are_never_evicted(c):
    fake_any(c, "lttng/modules", "lb", 1000, 1000)
    fake_any(c, "apt", "trixie", 1000, 1001)
    fake_any(c, "cluster-jobs", f"{os.getpid()}-r-v-1", 1000, 1002)
    fake_any(c, "lttng/initramfs", "li", 1000, 1003)
    with cache.hold([c / "lttng" / "modules" / "lb"]), \
            open(cache.lock_path(c, "apt", "trixie"), "a") as apt_lock:
        fcntl.flock(apt_lock, fcntl.LOCK_EX)     # archive._acquire's, while apt-get runs
        assert {e.key: e.held for e in cache.entries(c)} == {
            "lb": True, "trixie": True, f"{os.getpid()}-r-v-1": True, "li": False}
        ev, skipped = cache.clear(c)
        assert keys(ev) == ["li"] and len(skipped) == 3
    assert (c / "cluster-jobs" / f"{os.getpid()}-r-v-1").is_dir()
    assert sorted(keys(cache.clear(c)[0])) == ["lb", "trixie"]


def test_holding_an_lttng_build_by_its_path(c):
    fake_any(c, "lttng/modules", "lb", 1000, 1000)
    fake_any(c, "modules", "pm", 1000, 1000)
    assert cache.entry_of(c / "lttng" / "modules" / "lb") == (c, "lttng/modules", "lb")
    assert cache.entry_of(c / "modules" / "pm" / "probe.ko") == (c, "modules", "pm")
    assert cache.entry_of(c / "lttng" / "initramfs" / "x.cpio") == (c, "lttng/initramfs", "x")


def test_a_job_directory_swept_meanwhile_is_evicted_without_error(c, monkeypatch):
    """cluster/job.py's sweep removes a dead worker's directory too: when it wins the
    race between eviction's exists() and its rename, the eviction still succeeds."""
    fake_any(c, "cluster-jobs", f"{dead_pid()}-r-v-1", 1000, 1000)
    (e,) = cache.entries(c)

    def swept(p):
        raise FileNotFoundError(2, "No such file or directory", str(p))

    monkeypatch.setattr(cache, "delete_aside", swept)
    assert cache.try_evict(c, e)
