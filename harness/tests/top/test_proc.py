"""Stopping a step stops everything it started, and a stopped step's directory is reusable."""

import os
import subprocess
import threading
import time

import pytest

from harness import proc
from harness.errors import HarnessError


def group_members(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return out.split()


@pytest.fixture(autouse=True)
def clear_stop():
    proc.STOP.clear()
    yield
    proc.STOP.clear()


def test_stop_kills_the_whole_group_not_only_the_leader(tmp_path):
    # The leader starts two grandchildren, as make starts sub-makes and compilers.
    marker = f"ksymlab-test-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "fake-make"
    script.write_text(f"#!/bin/bash\n(exec -a {marker}-a sleep 300) &\n"
                      f"bash -c '(exec -a {marker}-b sleep 300) & wait' &\nwait\n")
    script.chmod(0o755)
    timer = threading.Timer(1.5, proc.STOP.set)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(HarnessError) as e:
        proc.run_logged("build", [str(script)], tmp_path / "log")
    assert e.value.step == "build" and e.value.message == "interrupted"
    assert time.monotonic() - t0 < 20
    assert group_members(marker) == []


def test_timeout_kills_the_whole_group(tmp_path):
    marker = f"ksymlab-test-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "slow"
    script.write_text(f"#!/bin/bash\n(exec -a {marker}-child sleep 300) &\nwait\n")
    script.chmod(0o755)
    with pytest.raises(HarnessError) as e:
        proc.run_logged("build", [str(script)], tmp_path / "log", beat_every=0.2, timeout=1)
    assert "took longer than 1 s" in e.value.message
    assert group_members(marker) == []


def test_no_step_starts_after_a_stop(tmp_path):
    proc.STOP.set()
    with pytest.raises(HarnessError):
        proc.run_logged("extract", ["true"], tmp_path / "log")


def test_discard_frees_the_name_even_while_a_writer_holds_it(tmp_path):
    d = tmp_path / "trees" / "k"
    (d / "linux").mkdir(parents=True)
    held = open(d / "linux" / "elf.h", "w")      # a killed build's leftover
    proc.discard(d)
    assert not d.exists()
    d.mkdir()                                    # the next attempt starts at once
    held.close()
    proc.discard(tmp_path / "trees" / "other")   # nothing there: a no-op that sweeps
    assert [p.name for p in (tmp_path / "trees").iterdir()] == ["k"]
