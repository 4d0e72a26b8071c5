"""The guest's shell: the guest's third serial port (ttyS2) is a unix socket, where
the guest init starts a shell once its data port is complete (harness/guest/assets/
init, ksymlab_shell=). A socket's path holds at most 107 bytes: it lives in a
private directory under /tmp, named in the session's shell.path. The data port
(ttyS1) is a file of its own and keeps working meanwhile.

    python3 -m harness.session.shell SOCKET     # this terminal on the guest's shell

Under tmux (TMUX set) the session opens that in a pane of its own beside gdb."""

import contextlib
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import termios
import tty
from pathlib import Path

from ..guest.qemu import quote_optarg

GUEST_PORT = "/dev/ttyS2"
SOCKET_NAME = "shell.sock"
# Ctrl-] leaves the bridge (as telnet's escape); the guest's shell stays.
ESCAPE = b"\x1d"


@contextlib.contextmanager
def socket_dir(vdir):
    """The shell's socket path in a private (0700) directory, named in vdir/shell.path;
    the directory goes with the session."""
    d = Path(tempfile.mkdtemp(prefix="ksymlab-shell-"))
    sock = d / SOCKET_NAME
    (Path(vdir) / "shell.path").write_text(f"{sock}\n")
    try:
        yield sock
    finally:
        shutil.rmtree(d, ignore_errors=True)


def qemu_args(path):
    """ttyS2 (after stdio's ttyS0 and the data port's ttyS1): a listening socket."""
    return ["-chardev", f"socket,id=shell0,path={quote_optarg(path)},server=on,wait=off",
            "-serial", "chardev:shell0"]


def append():
    """The kernel command line's word that has the init start the shell."""
    return f"ksymlab_shell={GUEST_PORT}"


def command(path):
    return [sys.executable, "-m", "harness.session.shell", str(path)]


def open_pane(path, env=None):
    """A tmux pane running the bridge, when this session runs under tmux: its id,
    else None."""
    env = os.environ if env is None else env
    if not env.get("TMUX") or shutil.which("tmux") is None:
        return None
    p = subprocess.run(["tmux", "split-window", "-d", "-h", "-P", "-F", "#{pane_id}",
                        " ".join(command(path))], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                           os.path.abspath(__file__)))), timeout=10)
    return p.stdout.strip() or None if p.returncode == 0 else None


def close_pane(pane):
    if pane:
        subprocess.run(["tmux", "kill-pane", "-t", pane], capture_output=True, timeout=10)


def pump(sock, fd_in, fd_out):
    """Copy fd_in to the socket and the socket to fd_out until either ends or
    ESCAPE is typed."""
    while True:
        ready, _, _ = select.select([sock, fd_in], [], [])
        if sock in ready:
            data = sock.recv(4096)
            if not data:
                return
            os.write(fd_out, data)
        if fd_in in ready:
            data = os.read(fd_in, 4096)
            if not data or ESCAPE in data:
                return
            sock.sendall(data)


def main(argv):
    if len(argv) != 1:
        print("usage: python3 -m harness.session.shell SOCKET", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(argv[0])
    except OSError as e:
        print(f"ksymlab: shell: {argv[0]}: {e.strerror}", file=sys.stderr)
        return 30
    print(f"guest shell on {argv[0]} (it starts once the guest's data port is complete; "
          "Ctrl-] leaves)\r", flush=True)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    try:
        if saved is not None:
            tty.setraw(fd)
        pump(sock, fd, sys.stdout.fileno())
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
