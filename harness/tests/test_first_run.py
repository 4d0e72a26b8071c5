"""The first run of a fresh clone: nothing of symcheck is built yet, and the
variants start at once. Two workers used to race in symcheck/build there."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from harness import paths

pytestmark = pytest.mark.e2e


def fresh_copy(dest):
    """The repository's files as a clone has them (tracked and new, not ignored)."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=paths.REPO, capture_output=True,
                           check=True).stdout.split(b"\0")
    for raw in filter(None, names):
        name = raw.decode()
        src = paths.REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def test_fresh_clone_runs_every_variant_concurrently(tmp_path):
    clone = fresh_copy(tmp_path / "clone")
    assert not (clone / "symcheck" / "build").exists()
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--jobs", "4",
                        "--runs-dir", str(tmp_path / "runs")], cwd=clone,
                       capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL,
                       env={k: v for k, v in os.environ.items() if k != "KSYMLAB_RUNS"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert (clone / "symcheck" / "symcheck").is_file()
    # four guests ran at once, and each checked its module with the one symcheck
    rep = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    assert rep["timings"]["guest_workers"] == 4 and rep["verdict"] == "pass"
    assert p.stderr.count("symcheck: ") == 4
