"""The guest's shell: the serial port QEMU is given, the kernel command line's word
the init reads, and the bridge between a terminal and the socket (a socketpair and
a pipe stand in for QEMU and the terminal)."""

import os
import socket
import threading
from pathlib import Path

from harness.guest.qemu import QemuSession
from harness.session import shell


def test_the_shell_is_the_third_serial_port_a_socket_with_a_short_path(tmp_path):
    with shell.socket_dir(tmp_path) as sock:
        assert len(str(sock)) < 108 and (tmp_path / "shell.path").read_text() == f"{sock}\n"
        assert oct(sock.parent.stat().st_mode & 0o777) == "0o700"
    assert not sock.parent.exists()
    args = shell.qemu_args(sock)
    assert args == ["-chardev", f"socket,id=shell0,path={sock},server=on,wait=off",
                    "-serial", "chardev:shell0"]
    # after run's two ports (ttyS0 stdio, ttyS1 the data port): ttyS2
    vm = QemuSession(None, None, tmp_path, boot_timeout=1, hang_timeout=1,
                     extra_args=args)
    serials = [a for i, a in enumerate(vm.console_args() + list(vm.extra_args))
               if i and (vm.console_args() + list(vm.extra_args))[i - 1] == "-serial"]
    assert serials[2] == "chardev:shell0" and shell.GUEST_PORT == "/dev/ttyS2"


def test_the_init_starts_the_shell_only_when_named_and_after_the_data_end():
    init = (Path(shell.__file__).parents[1] / "guest" / "assets" / "init").read_text()
    assert shell.append() == "ksymlab_shell=/dev/ttyS2"
    start = init.index('if [ -n "${ksymlab_shell:-}" ]')
    end, ready = init.index('echo "KSYMLAB-DATA-END" > "$DATA"'), init.rindex('echo "KSYMLAB-READY"')
    assert end < start < ready


def test_the_bridge_copies_both_ways_and_leaves_on_the_escape():
    guest, host = socket.socketpair()
    term_r, term_w = os.pipe()          # what the person types
    out_r, out_w = os.pipe()            # what the terminal shows
    t = threading.Thread(target=shell.pump, args=(host, term_r, out_w))
    t.start()
    os.write(term_w, b"uname\n")
    assert guest.recv(64) == b"uname\n"
    guest.sendall(b"Linux\r\n")
    assert os.read(out_r, 64) == b"Linux\r\n"
    os.write(term_w, shell.ESCAPE)
    t.join(10)
    assert not t.is_alive()
    for fd in (term_r, term_w, out_r, out_w):
        os.close(fd)
    guest.close()
    host.close()


def test_no_pane_outside_tmux_and_a_missing_socket_is_one_line(tmp_path, capsys):
    assert shell.open_pane(tmp_path / "shell.sock", env={}) is None
    assert shell.main([str(tmp_path / "none.sock")]) == 30
    assert capsys.readouterr().err.startswith(f"ksymlab: shell: {tmp_path / 'none.sock'}: ")
    assert shell.main([]) == 2
