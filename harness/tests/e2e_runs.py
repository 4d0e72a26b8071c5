"""The harness runs the e2e tests share, and the helpers they use to read them.

A run of the default variants builds (or finds) four kernel trees and three LTTng
builds and boots seven TCG guests (four with the probe module, three with LTTng):
one or two minutes warm, most of a cold check. Tests that check different things
of one configuration (the same variants and options) read one run made once per
pytest session, instead of each making its own:

  default_run   `run --jobs 4 --keep-vmcore` of the 6.1 line's default variants
                (exports, kallsyms, stock, bpf13), from a fresh copy of the
                repository. Read by test_e2e (the A/B checks), test_drgn_e2e (the
                kept vmcores), test_lttng_e2e (the three LTTng boots of the run)
                and test_first_run (a fresh clone's first run, every variant at
                once).
  lttng_612_run `run --variants exports-6.12,stock-6.12`: LTTng 2.13.18 on the
                6.12 line, with and without the seed series (the probe-module
                boots come with it). Read by test_lttng_612_e2e.

Both run lttng-tools' own tests after each LTTng boot (`--lttng-suite`), the
scripts of SUITE_SCRIPTS only (test_lttng_suite_e2e).

Why one run can serve them all: --keep-vmcore only keeps the file drgn read (the
comparison is the same), --jobs 4 only runs the four guests at once, and the
fresh copy holds the same files as the repository (only symcheck/build, which is
ignored by git, is missing, and the run builds it). The cache is the shared one
($KSYMLAB_CACHE), so the run builds nothing the tests would not build anyway.

The run directory is read-only to the tests: a test that doctors a file (a
vmcore, a trace summary) copies it to its own tmp_path first. The fixture checks
this at the end of the session: every file of the run directory must have the
size and modification time it had when the run ended.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import paths
from harness.model.results import Check

# A cold default run builds the four 6.1 trees and three LTTng builds first:
# 1,990 s on the slower machine (docs/costs.md); about twice that as a bound.
COLD_RUN_TIMEOUT = 4000


def harness(*args, env=None, timeout=3600, cwd=None):
    """python3 -m harness ARGS from the repository (or `cwd`), output captured."""
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd or paths.REPO,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=timeout, stdin=subprocess.DEVNULL)


def variant_report(runs, variant):
    """One variant's part of the latest run's report.json under `runs`."""
    return json.loads((runs / "latest" / "report.json").read_text())["variants"][variant]


def src(row, source):
    """The value `source` gave for a report row (None when it gave none)."""
    return row["sources"].get(source)


def tree_src(key):
    """The source and build directory of the cached tree `key`."""
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
    """QEMU processes whose command line names something under `path`."""
    out = subprocess.run(["pgrep", "-af", "qemu-system"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(path) in line]


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


def report_rows(variant_report, kinds):
    """The rows of one variant of report.json whose kind is in `kinds`, as Checks."""
    return [Check(r["kind"], r["key"], r["sources"], r["agree"], r["info"], r["reason"],
                  r["label"])
            for r in variant_report["values"] if r["kind"] in kinds]


@dataclass(frozen=True)
class Run:
    """A finished `python3 -m harness run` and where it wrote."""
    proc: subprocess.CompletedProcess
    runs: Path                          # its --runs-dir
    clone: Path = None                  # the repository copy it ran from, if any
    symcheck_built_before: bool = None  # did the copy hold symcheck/build before the run

    @property
    def latest(self):
        return self.runs / "latest"

    def report(self):
        return json.loads((self.latest / "report.json").read_text())

    def variant(self, name):
        return self.report()["variants"][name]


def listing(root):
    """(path, size, mtime) of every file under `root`: what the end-of-session check
    compares."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            f = os.path.join(dirpath, name)
            st = os.lstat(f)
            out[os.path.relpath(f, root)] = (st.st_size, st.st_mtime_ns)
    return out


def unchanged(run):
    """Yield `run` to the tests, then fail if any of them changed its run directory."""
    before = listing(run.latest.resolve())
    yield run
    after = listing(run.latest.resolve())
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"a test changed the shared run directory {run.latest}: {changed[:10]}"


# lttng-tools' kernel test scripts the shared runs give --lttng-suite-only: the
# ones that exercise what LTTng resolves by name (the callstack context:
# stack_trace_save_user; every kernel event, the kmem and writeback probes among
# them: get_pfnblock_flags_mask, global_wb_domain; the statedump's block devices
# and interrupts: block_class, disk_type, irq_to_desc), the basic session test,
# and the syscall event notifier test that oopses a kernel without CONFIG_COMPAT
# unless LTTng carries the backported guard (every series does: docs/lttng.md).
# About 75 s of guest time a variant; the whole suite is `make run
# RUN_ARGS=--lttng-suite` (docs/lttng.md).
SUITE_SCRIPTS = ("kernel/test_all_events", "kernel/test_callstack", "kernel/test_event_basic",
                 "tools/regen-statedump/test_kernel",
                 "notification/test_notification_kernel_syscall")
# 300 s a script, not the default 1,800: these scripts take 10 to 40 s, and a
# hung one keeps its guest's alive lines coming until its timeout ends it
SUITE_ARGS = ("--lttng-suite", "--lttng-suite-only", ",".join(SUITE_SCRIPTS),
              "--lttng-suite-timeout", "300")


@pytest.fixture(scope="session")
def default_run(tmp_path_factory):
    """The default variants of the 6.1 line, run once for the session from a fresh copy
    of the repository, four guests at once, the vmcores kept."""
    work = tmp_path_factory.mktemp("default-run")
    clone = fresh_copy(work / "clone")
    built_before = (clone / "symcheck" / "build").exists()
    runs = work / "runs"
    env = {k: v for k, v in os.environ.items() if k != "KSYMLAB_RUNS"}
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--jobs", "4",
                        "--keep-vmcore", *SUITE_ARGS, "--runs-dir", str(runs)], cwd=clone,
                       capture_output=True, text=True, timeout=COLD_RUN_TIMEOUT,
                       stdin=subprocess.DEVNULL, env=env)
    (work / "stderr.txt").write_text(p.stderr)
    if not (runs / "latest" / "report.json").is_file():
        pytest.fail(f"the shared default run wrote no report (exit {p.returncode}):\n"
                    f"{p.stderr[-3000:]}")
    yield from unchanged(Run(p, runs, clone, built_before))


# The 6.12 variants with an LTTng boot of each kind: kallsyms-free on the series,
# the kprobe trick on stock (kallsyms-6.12 is the same LTTng build on another tree).
LTTNG_612_VARIANTS = ("exports-6.12", "stock-6.12")


@pytest.fixture(scope="session")
def lttng_612_run(tmp_path_factory):
    """LTTng 2.13.18 on the 6.12 line, run once for the session from the repository;
    its tests carry prebuild("stock-6.12", "exports-6.12")."""
    runs = tmp_path_factory.mktemp("lttng-612-run") / "runs"
    p = harness("run", "--variants", ",".join(LTTNG_612_VARIANTS), *SUITE_ARGS,
                "--runs-dir", str(runs), timeout=COLD_RUN_TIMEOUT)
    if not (runs / "latest" / "report.json").is_file():
        pytest.fail(f"the 6.12 LTTng run wrote no report (exit {p.returncode}):\n"
                    f"{p.stderr[-3000:]}")
    yield from unchanged(Run(p, runs))


# ---------------------------------------------------------------- background builds
#
# A cold check spends most of its hour building kernel trees with both cores,
# but much of the rest on one: the unit tests, the fault tests' single guests,
# the debug kernel's stress guest, checkpatch. The trees that only later tests
# need (a test's `prebuild` marker names them) are built meanwhile, by
# `nice -n 19 python3 -m harness build` in the background from the start of the
# session, in the order the selected tests need them, and those tests run last
# (conftest.py), so the builds have every idle moment before. nice 19 leaves the tests
# the CPU whenever they use it; the cache's entry locks make a test that needs a
# tree still being built wait for it (and build it itself if that build failed),
# so the result is the same cache as without. A marker names trees whose base,
# if they derive from one, is named before them in the same marker (the debug
# kernel has none: its config fragments differ; the 6.12 line's is stock-6.12):
# a tree whose base some test is still building would be built from scratch.
# KSYMLAB_PREBUILD=0 turns the builds off (the marked tests still run last).

class Prebuild:
    """The background builds of one session."""

    def __init__(self, groups, log):
        self.groups = groups            # [(variant, ...), ...] in the order needed
        self.log = log
        self.done = []                  # (group, exit status, seconds)
        self._proc = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ksymlab-prebuild",
                                        daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        with open(self.log, "a") as out:
            for group in self.groups:
                with self._lock:
                    if self._stop.is_set():
                        return
                    t0 = time.monotonic()
                    out.write(f"$ harness build --variants {','.join(group)}\n")
                    out.flush()
                    self._proc = subprocess.Popen(
                        ["nice", "-n", "19", sys.executable, "-m", "harness", "build",
                         "--variants", ",".join(group)], cwd=paths.REPO, stdout=out,
                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                        start_new_session=True)
                status = self._proc.wait()
                self.done.append((group, status, round(time.monotonic() - t0, 1)))

    def stop(self, grace=120):
        """Interrupt a build still running (the harness removes nothing complete; an
        incomplete tree is rebuilt by its next user) and wait for the thread."""
        with self._lock:
            self._stop.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGINT)
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass
        self._thread.join(timeout=grace)

    def summary(self):
        lines = [f"{','.join(g)}: exit {s} after {t} s" for g, s, t in self.done]
        left = [g for g in self.groups if g not in [d[0] for d in self.done]]
        lines += [f"{','.join(g)}: not finished" for g in left]
        return lines


def prebuild_groups(items):
    """The variant groups the `prebuild` markers of `items` name, first need first."""
    groups = []
    for item in items:
        for mark in item.iter_markers("prebuild"):
            group = tuple(mark.args)
            if group and group not in groups:
                groups.append(group)
    return groups


def prebuilt_last(items):
    """`items` with those that have a `prebuild` marker moved to the end, each part in
    its own order."""
    marked = [i for i in items if i.get_closest_marker("prebuild")]
    return [i for i in items if not i.get_closest_marker("prebuild")] + marked


def start_prebuild(items):
    """Start the background builds the selected `items` need; None when there are none
    or KSYMLAB_PREBUILD=0."""
    if os.environ.get("KSYMLAB_PREBUILD", "1") == "0":
        return None
    groups = prebuild_groups(items)
    if not groups:
        return None
    fd, log = tempfile.mkstemp(prefix="ksymlab-prebuild-", suffix=".log")
    os.close(fd)
    return Prebuild(groups, log).start()
