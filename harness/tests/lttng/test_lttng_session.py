"""The LTTng boot drives its guest through QemuSession's own API (no guest is booted)."""

from types import SimpleNamespace

from harness.lttng.boot import session


class FakeVm:
    """Records how session.boot() uses a QemuSession; has no pexpect child to reach into."""
    made = []

    def __init__(self, tree, initrd, workdir, **kw):
        self.kw = kw
        self.console_log = kw["console_log"]
        self.data_log = kw["data_log"]
        self.calls = []
        FakeVm.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.data_log.write_text("KSYMLAB-LTTNG-END\n")

    def __setattr__(self, name, value):
        if getattr(self, "calls", None) is not None and name in ("console_log", "data_log"):
            raise AssertionError(f"{name} set after construction")
        object.__setattr__(self, name, value)

    def expect_marker(self, marker, phase):
        self.calls.append(("expect_marker", marker))

    def wait_poweroff(self, what="guest"):
        self.calls.append(("wait_poweroff", what))


def test_boot_gives_the_session_its_logs_and_waits_through_it(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "QemuSession", FakeVm)
    monkeypatch.setattr(session.gdbstop, "read_at_quiet_point",
                        lambda vm, tree, vdir, marker: {"stop": marker})
    opts = SimpleNamespace(kvm=False, boot_timeout=7, hang_timeout=3, guest_cpus=2)
    tree = SimpleNamespace(variant="exports")
    vdir = tmp_path / "lttng,1"
    vdir.mkdir()
    data, trace, truth, secs = session.boot(tree, tmp_path / "initrd", vdir, opts)
    (vm,) = FakeVm.made
    assert vm.kw["console_log"] == vdir / "console.log"
    assert vm.kw["data_log"] == vdir / "data.log"
    assert (vm.kw["boot_timeout"], vm.kw["hang_timeout"], vm.kw["cpus"]) == (7, 3, 2)
    assert vm.kw["extra_args"] == ["-serial", f"file:{vdir / 'trace-port.log'}"]
    assert vm.calls == [("expect_marker", session.DONE), ("wait_poweroff", "LTTng guest")]
    assert data == "KSYMLAB-LTTNG-END\n" and trace == "" and truth == {"stop": session.DONE}
