"""Console classification, with a shell script standing in for QEMU; QEMU's command line."""

import inspect
import shlex
import tempfile
import time

import pytest

from harness.prepare.tree import Tree
from harness.errors import HarnessError
from harness.guest import qemu
from harness.guest.qemu import QemuSession
from harness.options import RunOptions

TIMEOUTS = {"boot_timeout": RunOptions.boot_timeout, "hang_timeout": RunOptions.hang_timeout}


class FakeGuest(QemuSession):
    def __init__(self, script, workdir, **kw):
        tree = Tree("fake", "k", workdir, workdir)
        super().__init__(tree, workdir / "initrd", workdir, **{**TIMEOUTS, **kw})
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


def test_an_oops_line_written_in_two_parts_is_reported_whole(tmp_path):
    # the console gives "BUG: kernel NULL poi" first (seen in a suite retry's fault)
    e = classify(tmp_path, "printf 'BUG: kernel NULL poi'; sleep 0.5; "
                           "echo 'nter dereference, address: 0000000000000938'; sleep 30")
    assert e.step == "oops"
    assert "BUG: kernel NULL pointer dereference, address: 0000000000000938" in e.message


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


def test_poweroff_after_the_last_marker(tmp_path, monkeypatch):
    with FakeGuest("echo KSYMLAB-DONE; exit 0", tmp_path) as g:
        g.expect_marker(qemu.DONE, "unload")
        g.wait_poweroff()
    monkeypatch.setattr(qemu, "POWEROFF_SECONDS", 1)
    with pytest.raises(HarnessError) as e:
        with FakeGuest("echo KSYMLAB-DONE; sleep 30", tmp_path) as g:
            g.expect_marker(qemu.DONE, "unload")
            g.wait_poweroff("LTTng guest")
    assert e.value.step == "hang" and e.value.message == "fake: LTTng guest did not power off"


def test_timeouts_have_one_default():
    """RunOptions alone sets them; a session is always given its run's."""
    params = inspect.signature(QemuSession).parameters
    for name in ("boot_timeout", "hang_timeout"):
        assert params[name].default is inspect.Parameter.empty
    assert (RunOptions.boot_timeout, RunOptions.hang_timeout) == (600, 180)


def qemu_opts(value):
    """QEMU's option string `a=b,c=d` as a dict, ",," read as a comma (get_opt_value)."""
    out, key, cur, i = {}, None, "", 0
    while i <= len(value):
        ch = value[i] if i < len(value) else ","
        if ch == "," and value[i + 1:i + 2] == ",":
            cur += ","
            i += 2
            continue
        if ch == ",":
            k, _, v = cur.partition("=")
            out[k] = v
            cur = ""
        else:
            cur += ch
        i += 1
    return out


def real_session(tmp_path, monkeypatch, **kw):
    """A QemuSession whose run directory and $TMPDIR hold a comma; argv() is not run."""
    tmpdir = tmp_path / "tmp,dir"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    run = tmp_path / "runs,1" / "exports"
    tree = Tree("exports", "k", tmp_path / "src", tmp_path / "build,x")
    vm = QemuSession(tree, run / "initramfs.cpio.gz", run, **{**TIMEOUTS, **kw})
    vm.accel = "tcg"
    vm.sockdir = tempfile.mkdtemp(prefix="ksymlab-gdb-")
    return vm, run


def test_option_values_with_a_comma_are_escaped(tmp_path, monkeypatch):
    vm, run = real_session(tmp_path, monkeypatch)
    argv = vm.argv()
    chardevs = [qemu_opts(argv[i + 1]) for i, a in enumerate(argv) if a == "-chardev"]
    assert [(c["id"], c["path"], c["server"], c["wait"]) for c in chardevs] == [
        ("gdb0", str(vm.gdb_socket), "on", "off"), ("qmp0", str(vm.qmp_socket), "on", "off")]
    assert ",," in argv[argv.index("-chardev") + 1] and "," in str(vm.gdb_socket)
    # -serial file: takes the rest of the value as the path, commas included
    serials = [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"]
    assert serials == ["stdio", f"file:{run / 'data.log'}"]
    assert qemu.quote_optarg("/a,b,,c") == "/a,,b,,,,c"


def test_each_vcpu_is_a_socket_of_its_own(tmp_path, monkeypatch):
    # the MP table (no ACPI in our kernels) lists one CPU a package: cores would be lost
    for n in (1, 2):
        (tmp_path / str(n)).mkdir()
        argv = real_session(tmp_path / str(n), monkeypatch, cpus=n)[0].argv()
        assert argv[argv.index("-smp") + 1] == f"{n},sockets={n},cores=1,threads=1"


def test_cmdline_file_runs_the_same_argv(tmp_path, monkeypatch):
    monkeypatch.setattr(qemu, "host_tsc_khz", lambda: 2_300_000)
    vm, run = real_session(tmp_path, monkeypatch, append="oops=panic foo='a b'", kaslr=True)
    run.mkdir(parents=True)
    argv = vm.argv()
    vm.write_cmdline(argv)
    text = (run / "qemu.cmdline").read_text()
    assert text.endswith("\n") and text.count("\n") == 1
    assert shlex.split(text) == argv
    assert argv[argv.index("-append") + 1] == (
        "console=ttyS0 panic=-1 no_timer_check tsc=reliable tsc_early_khz=2300000 brd.rd_nr=4 brd.rd_size=16384 brd.max_part=4 cma=16M "
        "movablecore=912M qemu_fw_cfg.ioport=12@0x510:0:1:4 oops=panic foo='a b'")


def test_start_writes_the_argv_it_spawns(tmp_path):
    script = "echo 'a b'; printf \"x,y\" ; echo KSYMLAB-READY"
    with FakeGuest(script, tmp_path) as g:
        g.expect_marker(qemu.READY, "boot")
    assert shlex.split((tmp_path / "qemu.cmdline").read_text()) == ["sh", "-c", script]


def test_kaslr_boots_a_guest_with_six_movable_candidate_blocks(tmp_path):
    """Under --kaslr the guest is 1 GiB with ZONE_MOVABLE from the same 112 MiB
    (1024 - 912, as 512 - 400), so the kernel image cannot block every memory
    block the init may take offline; an explicit size (LTTng's) is kept."""
    def args(**kw):
        vm = QemuSession(Tree("fake", "k", tmp_path, tmp_path), tmp_path / "i", tmp_path,
                         **TIMEOUTS, **kw)
        return vm.memory, vm.kernel_append().split()
    memory, append = args()
    assert memory == "512M" and "movablecore=400M" in append and "nokaslr" in append
    memory, append = args(kaslr=True)
    assert memory == "1024M" and "movablecore=912M" in append and "nokaslr" not in append
    memory, append = args(memory="1024M")
    assert memory == "1024M" and "movablecore=400M" in append


def test_a_user_programs_general_protection_fault_is_not_a_kernel_oops():
    import re
    from harness.guest.qemu import FAULTS
    oops = re.compile(dict(FAULTS)["oops"])
    user = ("traps: select_poll_epo[2111] general protection fault ip:7f05c8578740 "
            "sp:7ffe798c5b70 error:0 in libpopt.so.0[7f05c8577000+8000]")
    assert oops.search(user + "\r\n") is None
    for kernel in ("general protection fault, probably for non-canonical address "
                   "0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI",
                   "general protection fault: 0000 [#1] SMP"):
        assert oops.search(kernel + "\r\n").group(0) == kernel
        assert oops.search(kernel) is None      # its line has not ended yet


def wait_marker(tmp_path, script, marker):
    with FakeGuest(script, tmp_path, hang_timeout=2, boot_timeout=20) as g:
        g.expect_marker(marker, "marker test")


def test_marker_with_regex_metacharacters_matches_literally(tmp_path):
    # a suite script's path ("kernel/test_a+b"): as a regex, "a+b" never matches "a+b"
    wait_marker(tmp_path, "echo 'KSYMLAB-SUITE-RC kernel/test_a+b 0'; sleep 30",
                "KSYMLAB-SUITE-RC kernel/test_a+b ")


def test_marker_is_not_a_character_class(tmp_path):
    # "[x]" as a regex matches a lone "x": the guest never printed the marker
    e = classify_marker(tmp_path, "echo 'KSYMLAB-SUITE-RC x 0'; sleep 30",
                        "KSYMLAB-SUITE-RC [x] ")
    assert e.step == "hang" and "marker test" in e.message


def classify_marker(tmp_path, script, marker):
    with pytest.raises(HarnessError) as e:
        wait_marker(tmp_path, script, marker)
    return e.value


ALIVE_SCRIPT = ("for i in 1 2 3 4 5 6; do sleep 0.5; echo KSYMLAB-SUITE-ALIVE; done; "
                "echo 'KSYMLAB-SUITE-RC kernel/test_slow rc=0'; sleep 30")


def test_alive_lines_keep_a_slow_script_from_being_a_hang(tmp_path):
    # 3 s to the marker, hang timeout 1 s, an alive line every 0.5 s: not silent
    with FakeGuest(ALIVE_SCRIPT, tmp_path, hang_timeout=1, boot_timeout=20) as g:
        g.expect_marker("KSYMLAB-SUITE-RC kernel/test_slow ", "suite", alive="KSYMLAB-SUITE-ALIVE")


def test_without_the_alive_pattern_the_same_guest_is_a_hang(tmp_path):
    # what every suite guest got before: only the marker and the faults were patterns
    with pytest.raises(HarnessError) as e:
        with FakeGuest(ALIVE_SCRIPT, tmp_path, hang_timeout=1, boot_timeout=20) as g:
            g.expect_marker("KSYMLAB-SUITE-RC kernel/test_slow ", "suite")
    assert e.value.step == "hang"


def test_alive_lines_do_not_hide_a_real_silence(tmp_path):
    script = "echo KSYMLAB-SUITE-ALIVE; sleep 30"
    with pytest.raises(HarnessError) as e:
        with FakeGuest(script, tmp_path, hang_timeout=1, boot_timeout=20) as g:
            g.expect_marker("KSYMLAB-SUITE-RC x ", "suite", alive="KSYMLAB-SUITE-ALIVE")
    assert e.value.step == "hang"
