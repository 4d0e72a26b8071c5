"""End to end: the real A/B pipeline, and the faults it must report cleanly.

These build both kernels on first use (about 9 minutes on 2 cores) and then
reuse the cache; each run boots QEMU guests under TCG.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness import paths

pytestmark = pytest.mark.e2e


def harness(*args, env=None, timeout=3600):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=paths.REPO,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=timeout)


def tree_src(key):
    return paths.cache_root() / "trees" / key / "linux"


def nm_address(vmlinux, name):
    """Independent oracle: binutils nm on the built vmlinux."""
    out = subprocess.run(["nm", str(vmlinux)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        addr, _, sym = line.split(" ", 2)
        if sym == name:
            return int(addr, 16)
    raise AssertionError(f"{name} not in {vmlinux}")


def qemu_processes(path):
    out = subprocess.run(["pgrep", "-af", "qemu-system"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if str(path) in l]


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    p = harness("run", "--runs-dir", str(runs))
    return p, runs


def test_ab_run_passes(ab_run):
    p, runs = ab_run
    assert p.returncode == 0, p.stderr[-3000:]
    rep = json.loads((runs / "latest" / "report.json").read_text())
    assert rep["verdict"] == "pass"
    assert list(rep["variants"]) == ["exports", "kallsyms"]
    assert qemu_processes(runs) == []


@pytest.mark.parametrize("variant,method", [("exports", "export"), ("kallsyms", "kallsyms")])
def test_task_prio_address_matches_nm(ab_run, variant, method):
    _, runs = ab_run
    v = json.loads((runs / "latest" / "report.json").read_text())["variants"][variant]
    (sym,) = [s for s in v["symbols"] if s["name"] == "task_prio"]
    assert sym["method"] == method
    expected = nm_address(tree_src(v["tree_key"]) / "vmlinux", "task_prio")
    assert int(sym["module_addr"], 16) == expected
    assert int(sym["gdb_addr"], 16) == expected
    assert sym["agree"] is True


@pytest.mark.parametrize("variant", ["exports", "kallsyms"])
def test_scenario_priorities(ab_run, variant):
    _, runs = ab_run
    v = json.loads((runs / "latest" / "report.json").read_text())["variants"][variant]
    nices = [int(l.split()[1]) for l in
             (paths.SCENARIOS / "default.scenario").read_text().splitlines()
             if l.startswith("nice ")]
    scenario = [x for x in v["values"] if "scenario" in x]
    # one value per scenario task, each equal to 20 + nice for module and gdb alike
    assert sorted(x["module"] for x in scenario) == sorted(20 + n for n in nices)
    assert all(x["module"] == x["gdb"] == x["scenario"] for x in scenario)
    # init and the kernel threads are there too, all checked against gdb
    assert len(v["values"]) >= len(nices) + 10
    assert any(x["comm"] == "init" and x["module"] == 20 for x in v["values"])
    assert all(x["agree"] for x in v["values"])


def test_logs_and_reports_kept(ab_run):
    _, runs = ab_run
    latest = runs / "latest"
    for variant in ("exports", "kallsyms"):
        console = (latest / variant / "console.log").read_text()
        assert "KSYMLAB-READY" in console and "KSYMLAB-DONE" in console
        assert "ksymlab-gdb:" in (latest / variant / "gdb.log").read_text()
    md = (latest / "report.md").read_text()
    assert "## Summary" in md and "| exports | exports | 1 | 1 |" in md


def test_ktap_parses_with_kunit(ab_run):
    _, runs = ab_run
    rep = json.loads((runs / "latest" / "report.json").read_text())
    src = tree_src(rep["variants"]["exports"]["tree_key"])
    p = subprocess.run([sys.executable, "tools/testing/kunit/kunit.py", "parse",
                        str(runs / "latest" / "report.ktap")], cwd=src, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    total = sum(len(v["symbols"]) + len(v["values"]) for v in rep["variants"].values())
    assert re.search(rf"Ran {total} tests: passed: {total}\b", p.stdout), p.stdout
    assert "ERROR" not in p.stdout


def test_guest_panic_is_classified(tmp_path, ab_run):
    # Neither the initramfs init nor the requested init exists: the kernel panics.
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--append", "rdinit=/no-such-init init=/no-such-init")
    assert p.returncode == 31, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ksymlab: panic: exports: Kernel panic - not syncing")
    rep = json.loads((tmp_path / "latest" / "report.json").read_text())
    err = rep["variants"]["exports"]["error"]
    assert rep["verdict"] == "fail" and err["step"] == "panic"
    assert "Kernel panic" in err["excerpt"]
    assert (tmp_path / "latest" / "exports" / "console.log").exists()
    assert qemu_processes(tmp_path) == []


def test_silent_guest_is_a_hang(tmp_path, ab_run):
    # A shell on the console waits for input forever and prints nothing more.
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--append", "rdinit=/bin/sh", "--hang-timeout", "10")
    assert p.returncode == 33, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1].startswith("ksymlab: hang: exports: no console")
    assert qemu_processes(tmp_path) == []


def test_broken_patch_is_reported(tmp_path):
    patches = tmp_path / "patches"
    shutil.copytree(paths.REPO / "patches", patches)
    (name,) = (patches / "exports" / "series").read_text().split()
    patch = patches / "exports" / name
    patch.write_text(patch.read_text().replace("EXPORT_SYMBOL_GPL(task_prio);",
                                               "EXPORT_SYMBOL_GPL(task_prio);\n+/* extra */")
                     .replace("return p->prio - MAX_RT_PRIO;", "return p->prio - 1000;"))
    env = {"KSYMLAB_PATCHES": str(patches), "KSYMLAB_CACHE": str(tmp_path / "cache")}
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path / "runs"), env=env)
    assert p.returncode == 11, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ksymlab: patch: git apply --check") and "log:" in last
    run = tmp_path / "runs" / "latest"
    assert json.loads((run / "report.json").read_text())["variants"]["exports"]["error"][
        "step"] == "patch"
    assert (run / "exports" / "patch-patch.log").exists()
    # the half-prepared tree is 1.3 GB: do not leave it to pytest's tmp rotation
    shutil.rmtree(tmp_path / "cache")
