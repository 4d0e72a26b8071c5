"""The session's gdb: its command line and the child in the foreground.

gdb starts as soon as QEMU does, so that reading vmlinux's debug information
(about 2 s) overlaps the guest's boot: its script (gdbscripts/ksymlab_session.py)
waits for gdb-in.json, which the host writes once the guest has loaded the
module. Under KASLR the slide is known only then, and the script loads vmlinux
itself (gdb-in.json's gdb_load)."""

import json
import os
import signal
import subprocess

from .. import paths
from ..errors import HarnessError
from ..oracles import gdb

SESSION_SCRIPT = "ksymlab_session.py"
TRANSCRIPT = "transcript.txt"
REMOTE_TIMEOUT = 60


def prompt_of(name):
    """gdb's prompt in a session of variant `name` (pair.py waits for it)."""
    return f"(ksymlab {name}) "


def load_commands(tree, slide):
    """vmlinux (relocated by the KASLR slide) and the tree's vmlinux-gdb.py."""
    load = f"file {tree.vmlinux}" if not slide else f"symbol-file -o {slide:#x} {tree.vmlinux}"
    return [load, f"source {tree.gdb_script}"]


def argv(tree, kaslr, vdir, name):
    """Interactive gdb: vmlinux now unless KASLR moves it, a transcript of every
    command and answer, our commands."""
    load = [] if kaslr else load_commands(tree, 0)
    out = ["gdb", "-nx", "-q",
           "-iex", "set auto-load python-scripts off",
           "-ex", "set pagination off", "-ex", "set height 0", "-ex", "set width 0",
           "-ex", "set confirm off",
           # QEMU answers no gdb packet while it dumps the first snapshot's memory
           # (2-3 s, after the prompt): gdb's default 2 s would give up and lose
           # step with the stub
           "-ex", f"set remotetimeout {REMOTE_TIMEOUT}"]
    for command in load:
        out += ["-ex", command]
    # the prompt before trace-commands: its trace line would hold the prompt
    return out + ["-ex", f"set prompt {prompt_of(name)}",
                  "-ex", f"set logging file {vdir / TRANSCRIPT}",
                  "-ex", "set logging overwrite on", "-ex", "set logging enabled on",
                  "-ex", "set trace-commands on",
                  "-ex", f"source {paths.GDBSCRIPTS / SESSION_SCRIPT}"]


def write_claims(vdir, claims, tree, slide, kaslr):
    """gdb-in.json, atomically (gdb polls for it): what gdb reads, and what it
    loads first when vmlinux was not on its command line."""
    out = dict(gdb.gdb_claims(claims)[0])
    out["gdb_load"] = load_commands(tree, slide) if kaslr else []
    tmp = vdir / "gdb-in.json.tmp"
    tmp.write_text(json.dumps(out, indent=1))
    os.replace(tmp, vdir / "gdb-in.json")


class GdbChild:
    """gdb in the foreground of the terminal, started early; wait() until the
    person quits. Leaving the context ends gdb if it still runs (a failed boot,
    SIGTERM, SIGHUP)."""

    def __init__(self, argv_, vdir, socket):
        self.argv = argv_
        self.env = dict(os.environ, KSYMLAB_SESSION_DIR=str(vdir),
                        KSYMLAB_GDB_SOCKET=str(socket))
        self.child = None

    def __enter__(self):
        # A session started where SIGINT is ignored (a background job of a script,
        # nohup) must not hand gdb an ignored SIGINT: Ctrl-C would never reach the
        # guest. exec resets a handled signal to its default, never an ignored one.
        ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        if ignored:
            signal.signal(signal.SIGINT, lambda *_: None)
        try:
            self.child = subprocess.Popen(self.argv, env=self.env)
        except FileNotFoundError as e:
            raise HarnessError("deps", "gdb not found; install the gdb package") from e
        finally:
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        return self

    def hand_over(self):
        """From here Ctrl-C is gdb's (it interrupts the guest), not the session's:
        a handler, not SIG_IGN, so that nothing gdb starts inherits an ignored SIGINT."""
        self._old = signal.signal(signal.SIGINT, lambda *_: None)

    def wait(self):
        """gdb's exit status (128 + the signal that killed it, as a shell says)."""
        status = self.child.wait()
        return status if status >= 0 else 128 - status

    def __exit__(self, *exc):
        if getattr(self, "_old", None) is not None:
            signal.signal(signal.SIGINT, self._old)
        if self.child.poll() is None:
            self.child.terminate()
            try:
                self.child.wait(5)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
