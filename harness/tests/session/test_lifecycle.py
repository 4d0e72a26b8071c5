"""A session's gdb (gdbchild.GdbChild once handed over) and the signals: SIGTERM and SIGHUP to the
session end its gdb too; Ctrl-C (SIGINT) is gdb's, not the session's. A `sleep`
stands in for gdb; the process table is the oracle."""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import paths

HOST = """
import signal, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from harness import proc
from harness.session import gdbchild
signal.signal(signal.SIGTERM, proc.stop_on_signal)
signal.signal(signal.SIGHUP, proc.stop_on_signal)
try:
    with gdbchild.GdbChild(["sleep", "300"], Path("."), "/none") as g:
        g.hand_over()
        status = g.wait()
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(status)
"""


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def alive(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return "State:\tZ" not in f.read()
    except FileNotFoundError:
        return False


def ignored_signals(pid):
    with open(f"/proc/{pid}/status") as f:
        line = next(r for r in f if r.startswith("SigIgn:"))
    return int(line.split()[1], 16)


@pytest.fixture
def session(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", HOST.format(repo=str(paths.REPO))],
                         cwd=tmp_path, start_new_session=True)
    end = time.monotonic() + 20
    while not children(p.pid):
        assert time.monotonic() < end and p.poll() is None, "no gdb stand-in started"
        time.sleep(0.05)
    yield p, children(p.pid)[0]
    try:                    # whatever is left of the group, also when a test failed
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_terminating_the_session_ends_its_gdb(session, sig):
    host, gdb = session
    os.kill(host.pid, sig)
    assert host.wait(20) == 130
    end = time.monotonic() + 10
    while alive(gdb):
        assert time.monotonic() < end, f"gdb stand-in {gdb} outlived the session"
        time.sleep(0.05)


def test_ctrl_c_is_gdbs_not_the_sessions(session):
    host, gdb = session
    # gdb starts with SIGINT at its default, so it can install its own handler
    assert not ignored_signals(gdb) & (1 << (signal.SIGINT - 1))
    os.kill(host.pid, signal.SIGINT)
    time.sleep(1)
    assert host.poll() is None and alive(gdb)
    os.kill(gdb, signal.SIGTERM)            # the person quits gdb: the session ends
    assert host.wait(20) == 128 + signal.SIGTERM


def test_gdb_gets_sigint_even_when_the_session_was_started_ignoring_it(tmp_path):
    """A background job of a non-interactive shell (make check's unit tests, a script's
    `harness session ... &`) starts with SIGINT ignored; gdb must not inherit that."""
    p = subprocess.Popen([sys.executable, "-c", HOST.format(repo=str(paths.REPO))],
                         cwd=tmp_path, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        end = time.monotonic() + 20
        while not children(p.pid):
            assert time.monotonic() < end and p.poll() is None, "no gdb stand-in started"
            time.sleep(0.05)
        assert not ignored_signals(children(p.pid)[0]) & (1 << (signal.SIGINT - 1))
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
