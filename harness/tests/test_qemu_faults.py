"""Console classification, with a shell script standing in for QEMU."""

import time

import pytest

from harness.build import kernel
from harness.errors import HarnessError
from harness.guest.qemu import QemuSession


class FakeGuest(QemuSession):
    def __init__(self, script, workdir, **kw):
        tree = kernel.Tree("fake", "k", workdir, workdir)
        super().__init__(tree, workdir / "initrd", workdir, **kw)
        self.script = script

    def argv(self):
        return ["sh", "-c", self.script]


def run_fake(tmp_path, script, **kw):
    with FakeGuest(script, tmp_path, **kw) as g:
        return g.wait_ready(), g


def classify(tmp_path, script, **kw):
    with pytest.raises(HarnessError) as e:
        run_fake(tmp_path, script, **kw)
    return e.value


def test_ready_and_data_channel(tmp_path):
    script = ("echo booting; printf 'KSYMLAB-DATA-BEGIN variant=fake\\nKSYMLAB-DATA-END\\n' "
              f"> {tmp_path}/data.log; echo KSYMLAB-READY; sleep 5")
    text, g = run_fake(tmp_path, script)
    assert "KSYMLAB-DATA-END" in text
    assert "booting" in (tmp_path / "console.log").read_text()


def test_panic(tmp_path):
    e = classify(tmp_path, "echo 'Kernel panic - not syncing: Attempted to kill init!'; sleep 30")
    assert e.step == "panic" and e.exit_status == 31
    assert "Attempted to kill init" in e.message
    assert e.one_line().startswith("ksymlab: panic: fake: Kernel panic")


def test_oops(tmp_path):
    e = classify(tmp_path, "echo 'BUG: kernel NULL pointer dereference, address: 0'; sleep 30")
    assert e.step == "oops" and "NULL pointer" in e.message


def test_guest_error(tmp_path):
    e = classify(tmp_path, "echo 'KSYMLAB-ERROR insmod exited 1'; sleep 30")
    assert e.step == "guest" and "insmod exited 1" in e.message


def test_hang_is_silence(tmp_path):
    e = classify(tmp_path, "echo starting; sleep 30", hang_timeout=1, boot_timeout=20)
    assert e.step == "hang" and e.exit_status == 33


def test_timeout_despite_output(tmp_path):
    e = classify(tmp_path, "while :; do echo tick; sleep 0.2; done", hang_timeout=5,
                 boot_timeout=2)
    assert e.step == "timeout" and e.exit_status == 34


def test_reboot_message_is_an_unexpected_reboot(tmp_path):
    e = classify(tmp_path, "echo 'Linux version 6.1'; echo 'reboot: Restarting system'; exit 0")
    assert e.step == "reboot" and e.exit_status == 37
    assert "unexpected reboot" in e.message and "Restarting system" in e.message
    assert "Linux version 6.1" in e.excerpt


def test_silent_reset_after_boot_is_a_reboot(tmp_path):
    # -no-reboot: a triple fault makes QEMU exit 0 without a kernel message
    e = classify(tmp_path, "echo 'Linux version 6.1'; echo 'Run /init as init process'; exit 0")
    assert e.step == "reboot"


def test_qemu_failure_is_not_a_reboot(tmp_path):
    e = classify(tmp_path, "echo 'qemu: could not load kernel'; exit 1")
    assert e.step == "boot" and e.exit_status == 30 and "could not load kernel" in e.message
    e = classify(tmp_path, "exit 0")            # exit 0, but no kernel ever ran
    assert e.step == "boot"


def test_ready_without_data_end(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.guest.qemu.DATA_WAIT_SECONDS", 1)
    e = classify(tmp_path, "echo KSYMLAB-READY; sleep 30")
    assert e.step == "guest" and "KSYMLAB-DATA-END" in e.message


def test_no_process_left_behind(tmp_path):
    pidfile = tmp_path / "child.pid"
    classify(tmp_path, f"sleep 300 & echo $! > {pidfile}; "
                       "echo 'Kernel panic - not syncing: x'; wait")
    pid = int(pidfile.read_text())

    def alive():
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split()[2] != "Z"
        except FileNotFoundError:
            return False
    # the whole session, grandchildren included, is gone once the session
    # closes (SIGKILL is delivered asynchronously: allow the kernel 5 s)
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive()
