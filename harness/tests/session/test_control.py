"""The host's half of a session (harness/session/control.py) against a stand-in
guest: the file protocol with gdb (armed -> "go" once, hold -> vmcore -> release,
rows-request -> rows.json) and the console FIFO."""

import json
import os
import time
from types import SimpleNamespace

import pexpect
import pytest

from harness.session import control, rows


class FakeChild:
    """QEMU's stdio under pexpect: nothing to read, what was sent kept."""

    def __init__(self):
        self.sent = []
        self.logfile_read = None

    def read_nonblocking(self, size, timeout):
        time.sleep(timeout)
        raise pexpect.TIMEOUT("nothing")

    def send(self, text):
        self.sent.append(text)


class FakeVm:
    def __init__(self, tmp):
        self.child = FakeChild()
        self.qmp_socket = tmp / "qmp.sock"
        self.gos = 0

    def send_go(self):
        self.gos += 1


def wait_for(pred, seconds=10):
    end = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < end, "the controller did not answer"
        time.sleep(0.02)


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A controller serving a stand-in guest; the vmcore and the rows stand-ins
    record what they were given."""
    taken, asked = [], []
    monkeypatch.setattr(control.vmcore, "take",
                        lambda sock, vdir, name: taken.append((sock, vdir, name)) or
                        {"path": str(vdir / "vmcore")})
    monkeypatch.setattr(rows, "rows_answer", lambda live: asked.append(live) or
                        {"rows": [{"id": "prio:pid 1", "agree": "agree"}]})
    live = rows.Live(SimpleNamespace(name="exports"), None, None, tmp_path, {}, 0, None)
    vm = FakeVm(tmp_path)
    ctl = control.Controller(vm, live)
    ctl.start()
    yield SimpleNamespace(ctl=ctl, vm=vm, dir=tmp_path, taken=taken, asked=asked)
    ctl.stop.set()
    ctl.join(5)
    assert not ctl.is_alive()


def test_go_is_said_once_when_gdb_has_armed(served):
    time.sleep(0.3)
    assert served.vm.gos == 0               # not before gdb set its breakpoint
    (served.dir / "gdb-armed").write_text("ksymlab_snapshot_taken\n")
    wait_for(lambda: served.vm.gos == 1)
    time.sleep(0.3)
    assert served.vm.gos == 1


def test_the_vmcore_is_taken_while_gdb_holds_then_gdb_is_released(served):
    (served.dir / "gdb-hold").write_text("0xffffffffc0000000\n")
    wait_for(lambda: (served.dir / "gdb-release").exists())
    assert served.taken == [(served.vm.qmp_socket, served.dir, "exports")]
    # the rows computed later see that vmcore
    (served.dir / "rows-request").write_text("rows\n")
    wait_for(lambda: (served.dir / "rows.json").exists())
    assert served.asked[0].dumped == {"path": str(served.dir / "vmcore")}
    assert json.loads((served.dir / "rows.json").read_text()) == \
        {"rows": [{"id": "prio:pid 1", "agree": "agree"}]}


def test_no_rows_before_gdb_asks(served):
    time.sleep(0.3)
    assert served.asked == [] and not (served.dir / "rows.json").exists()


def test_lines_written_to_console_in_reach_the_guest_console(served):
    fifo = served.dir / "console-in"
    wait_for(fifo.exists)
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, b"cat /proc/uptime\n")
    os.close(fd)
    wait_for(lambda: "".join(served.vm.child.sent) == "cat /proc/uptime\n")


def test_lttng_is_answered_once_its_boot_ended_and_the_console_is_read_meanwhile(
        tmp_path, monkeypatch):
    from concurrent.futures import Future
    from harness.model.results import Check
    boot = Future()
    live = rows.Live(SimpleNamespace(name="exports"), None, None, tmp_path, {}, 0, None,
                     lttng=boot)
    vm = FakeVm(tmp_path)
    reads = []
    vm.child.read_nonblocking = lambda size, timeout: reads.append(1) or \
        time.sleep(timeout) or ""
    ctl = control.Controller(vm, live)
    ctl.start()
    try:
        (tmp_path / "lttng-request").write_text("lttng\n")
        time.sleep(0.5)
        assert not (tmp_path / "lttng.json").exists() and len(reads) > 3
        boot.set_result(((Check("lttng", "boot", {"guest": 1}, True),),
                         {"version": "2.13.9", "series": "exports", "build_dir": "/b",
                          "symcheck": {"big": "left out"}}, None, 0.0))
        wait_for(lambda: (tmp_path / "lttng.json").exists())
        assert json.loads((tmp_path / "lttng.json").read_text()) == {
            "facts": {"version": "2.13.9", "series": "exports", "build_dir": "/b"},
            "rows": [{"id": "lttng:boot", "agree": "agree"}]}
    finally:
        ctl.stop.set()
        ctl.join(5)


def test_without_lttng_the_command_says_how_to_have_it(tmp_path):
    live = rows.Live(SimpleNamespace(name="exports"), None, None, tmp_path, {}, 0, None)
    assert rows.ready(live)
    assert "--lttng" in rows.lttng_answer(live)["error"]
