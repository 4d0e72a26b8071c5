"""Interrupt and resume: Ctrl-C during extract, patch, build and boot stops every
process the step started, and the next run recovers and passes.

The stages share one fresh cache and run in order. The extract is interrupted
on the empty cache; then the stock tree of the shared cache is linked in, and
the patch and make steps are interrupted in kallsyms's derivation from it,
which compiles one file and relinks instead of the 1,500 objects of a whole
tree (the same run_make and the same incomplete-tree removal; a whole build
cost most of this file's 5 to 15 minutes). Slow steps are made slow on purpose with a `tar` or
`git` on PATH that sleeps beside the real one, so the interrupt lands inside
the step.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import paths
from harness.prepare import variants
from harness.prepare.tree import tree_key

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    root = tmp_path_factory.mktemp("interrupt")
    cache = root / "cache"
    cache.mkdir()
    shared = paths.cache_root() / "ccache"
    shared.mkdir(parents=True, exist_ok=True)
    (cache / "ccache").symlink_to(shared)
    yield root
    shutil.rmtree(cache, ignore_errors=True)        # a tree is 1.5 GiB


def shim(root, name, body):
    """A directory to put first on PATH, holding an executable `name`."""
    d = root / f"shim-{name}"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_text("#!/bin/bash\n" + body)
    f.chmod(0o755)
    return d


def env_for(root, path_first=None):
    env = {**os.environ, "KSYMLAB_CACHE": str(root / "cache"),
           "KSYMLAB_RUNS": str(root / "runs"), "KSYMLAB_CACHE_MAX": "off"}
    if path_first:
        env["PATH"] = f"{path_first}:{env['PATH']}"
    return env


def processes_under(root):
    """Processes whose working directory or command line is inside `root`."""
    found = []
    me = os.getpid()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == me:
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd.startswith(str(root)) or str(root) in cmd:
            found.append(f"{pid} {cmd[:120]}")
    return found


def harness(root, args, env, timeout=1800):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=paths.REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def interrupt_when(root, args, env, ready, timeout=1800, settle=2.0):
    """Start the harness, send SIGINT once `ready()` is true, return (status, stderr)."""
    err = root / f"stderr-{time.monotonic_ns()}"
    with open(err, "w") as f:
        p = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=paths.REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=f, stdin=subprocess.DEVNULL)
    end = time.monotonic() + timeout
    try:
        while not ready(err.read_text()):
            assert p.poll() is None, f"exited {p.returncode} before the step: {err.read_text()}"
            assert time.monotonic() < end, "the step never started"
            time.sleep(0.2)
        time.sleep(settle)
        p.send_signal(signal.SIGINT)
        status = p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    return status, err.read_text()


def assert_stopped_cleanly(root, status, stderr):
    assert status == 130, stderr[-2000:]
    assert stderr.strip().splitlines()[-1].startswith("ksymlab: interrupted"), stderr[-2000:]
    assert "Traceback" not in stderr
    assert processes_under(root) == []


def shared_stock():
    """The stock tree of the shared cache (built now if it is not there yet)."""
    p = harness(None, ["build", "--variants", "stock"], dict(os.environ))
    assert p.returncode == 0, p.stderr[-2000:]
    (stock,) = variants.select(["stock"])
    return paths.cache_root() / "trees" / tree_key(stock)


def seed_stock(root):
    """Put the shared cache's complete stock tree into the box's cache, as a symlink
    (the box's cap is off, so nothing evicts it; a tree derived from it copies what it
    builds and hard-links the tarball's files, as in the shared cache), with the
    tarball's member list. Replaces the incomplete stock tree the extract test left.
    A link, not a copy: the tree's tools/ build records name its real path, which a
    derivation rewrites (treecopy.rewrite_tool_paths); a copy elsewhere would rebuild
    objtool and with it every object."""
    src = shared_stock()
    dest = root / "cache" / "trees" / src.name
    shutil.rmtree(dest, ignore_errors=True)
    dest.symlink_to(src)
    shutil.copytree(paths.cache_root() / "tarballs", root / "cache" / "tarballs",
                    dirs_exist_ok=True)
    return dest


def test_interrupt_during_extract(box):
    tar = shutil.which("tar")
    slow = shim(box, "tar", f'{tar} "$@" &\nsleep 600 &\nwait\n')
    status, err = interrupt_when(box, ["build", "--variants", "stock"], env_for(box, slow),
                                 lambda t: "extract:" in t)
    assert_stopped_cleanly(box, status, err)
    (tree,) = (box / "cache" / "trees").glob("*/linux")
    assert not (tree.parent / "manifest.json").exists()        # left incomplete


def test_interrupt_during_patch_then_resume(box):
    seed_stock(box)
    stuck = shim(box, "git", "sleep 600 &\nwait\n")
    status, err = interrupt_when(box, ["build", "--variants", "kallsyms"], env_for(box, stuck),
                                 lambda t: "patch: kallsyms 1/1" in t)
    assert "deriving from stock" in err
    assert_stopped_cleanly(box, status, err)


def test_interrupt_during_build_then_resume(box):
    status, err = interrupt_when(box, ["build", "--variants", "kallsyms"], env_for(box),
                                 lambda t: "build: kallsyms (1/1): make -j" in t, settle=1.0)
    assert "removing incomplete tree" in err and "deriving from stock" in err
    assert "build: kallsyms (1/1): done" not in err
    assert_stopped_cleanly(box, status, err)
    p = harness(box, ["build", "--variants", "kallsyms"], env_for(box))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "removing incomplete tree" in p.stderr and "deriving from stock" in p.stderr
    assert len(list((box / "cache" / "trees").glob("*/manifest.json"))) == 2


def test_interrupt_during_boot_then_rerun_passes(box):
    # --no-lttng: the LTTng build (its own, in this private cache) and boot come
    # after the probe module's boot and prove nothing about resuming it
    args = ["run", "--variants", "kallsyms", "--no-lttng"]
    status, err = interrupt_when(box, args, env_for(box), lambda t: "boot: kallsyms: qemu" in t)
    assert_stopped_cleanly(box, status, err)
    # what was known is kept: the run directory has its report
    assert (box / "runs" / "latest" / "report.json").exists()
    p = harness(box, args, env_for(box))
    assert p.returncode == 0, p.stderr[-2000:]
