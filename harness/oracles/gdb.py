"""gdb session: attach to QEMU's gdbstub while the guest waits and read the ground truth."""

import json
import os
import re
import subprocess
import time

from .. import paths
from ..errors import HarnessError
from ..proc import check_stop, stop_group
from ..progress import say
from .readings import GdbReading

VERIFY_SCRIPT = "ksymlab_verify.py"
# The bound on one gdb session from attach to its last read (every snapshot,
# and the vmcore QEMU writes while gdb holds the guest). A working session
# takes seconds (gdb 1.5 s on an idle machine, README): 300 s means gdb or the
# gdbstub is stuck, not slow, even with every guest of a run on 2 busy cores.
GDB_TIMEOUT = 300
# The typed record of what each gdb script writes, parsed in finish() (the
# LTTng stop's reading, ksymlab_lttng.py, has none yet: finish() returns its dict).
READINGS = {VERIFY_SCRIPT: GdbReading}

# The names the guest reports on its data port (written by the kernel under
# test) reach gdb only in these shapes, here and again in the gdb script
# (gdbscripts/ksymlab_verify.py): a symbol name is spliced into a gdb
# expression, and gdb expressions can call functions in the guest; a section
# name goes into add-symbol-file's arguments.
SYMBOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ELF section names also hold "-" (.note.gnu.build-id), never first: a
# leading "-" would read as an add-symbol-file option.
SECTION_NAME = re.compile(r"[.A-Za-z0-9_][-.A-Za-z0-9_]*")
REFUSED = "not a C identifier: not given to gdb"


def gdb_claims(claims):
    """(the claims gdb gets, {symbol: why gdb does not get it}).

    A symbol name that is not a C identifier is kept from gdb: its symbol row
    then has no gdb address, and the reading says why (finish()). A section
    name outside [.A-Za-z0-9_][-.A-Za-z0-9_]* fails the step: gdb places the module by them.
    """
    for name in claims.get("sections", {}):
        if not (isinstance(name, str) and SECTION_NAME.fullmatch(name)):
            raise HarnessError("verify", f"the guest reported module section {name!r}: "
                               "not [.A-Za-z0-9_][-.A-Za-z0-9_]*, not given to gdb")
    if "symbols" not in claims:
        return claims, {}
    refused = {n: REFUSED for n in claims["symbols"]
               if not (isinstance(n, str) and SYMBOL_NAME.fullmatch(n))}
    return {**claims, "symbols": [n for n in claims["symbols"] if n not in refused]}, refused


def add_refused(result, claims, refused):
    """The names gdb was not given (gdb_claims(claims) -> refused): None among the
    symbols of gdb's `result`, in the claims' order, why in symbol_errors, and a
    note each (a run's GdbSession.finish() and a session's rows)."""
    if not refused:
        return
    read = result.get("symbols")
    if not isinstance(read, dict):
        return                      # a malformed reading: GdbReading.parse says so
    result["symbols"] = {n: read.get(n) for n in claims["symbols"]}
    result.setdefault("symbol_errors", {}).update(refused)
    result.setdefault("notes", []).extend(f"symbol {n!r} from the guest: {why}"
                                          for n, why in refused.items())


def notes(reading):
    """What gdb's reading (a GdbReading, or the LTTng stop's dict) says the report
    should note (stated values, refused names)."""
    if isinstance(reading, GdbReading):
        return reading.notes
    return tuple(reading.get("notes", ()))


def gdb_argv(tree, slide=0, script=VERIFY_SCRIPT):
    # With KASLR on, vmlinux is loaded relocated by the slide the harness
    # computed from the guest's _text.
    load = f"file {tree.vmlinux}" if not slide else f"symbol-file -o {slide:#x} {tree.vmlinux}"
    return [
        "gdb", "-nx", "-batch", "-q",
        # vmlinux-gdb.py is sourced explicitly below, after vmlinux is loaded.
        "-iex", "set auto-load python-scripts off",
        "-ex", "set pagination off",
        "-ex", "set confirm off",
        "-ex", load,
        "-ex", f"source {tree.gdb_script}",
        "-ex", f"source {paths.GDBSCRIPTS / script}",
        # Detaching lets the halted guest run on.
        "-ex", "detach",
    ]


class GdbSession:
    """gdb attached to one guest: arm the snapshot breakpoint, then collect what it read.

    start() returns once gdb has set the breakpoint (or raises); the caller
    then lets the guest take its snapshot and calls finish().
    A subclass sets SCRIPT (the gdbscripts/ file gdb runs), WHERE (its
    breakpoint, for the progress line) and summary() (harness/lttng/boot/gdbstop.py).
    """

    SCRIPT = VERIFY_SCRIPT
    WHERE = "ksymlab_snapshot_taken"

    def __init__(self, tree, socket_path, claims, workdir, slide=0, timeout=GDB_TIMEOUT,
                 at_snapshot=None):
        self.tree = tree
        self.socket_path = socket_path
        self.claims = claims
        self.slide = slide
        self.timeout = timeout
        self.claims_file = workdir / "gdb-in.json"
        self.out_file = workdir / "gdb.json"
        self.armed_file = workdir / "gdb-armed"
        self.log = workdir / "gdb.log"
        self.proc = None
        self._logf = None
        self.refused = {}
        # Called once while gdb holds the guest at the snapshot, after gdb has
        # read it (the vmcore for drgn); gdb detaches when it returns.
        self.at_snapshot = at_snapshot
        self.hold_file = workdir / "gdb-hold"
        self.release_file = workdir / "gdb-release"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        claims, self.refused = gdb_claims(self.claims)
        self.claims_file.write_text(json.dumps(claims, indent=1))
        for f in (self.out_file, self.armed_file, self.hold_file, self.release_file):
            if f.exists():
                f.unlink()
        env = dict(os.environ, KSYMLAB_GDB_IN=str(self.claims_file),
                   KSYMLAB_GDB_OUT=str(self.out_file), KSYMLAB_GDB_ARMED=str(self.armed_file),
                   KSYMLAB_GDB_SOCKET=str(self.socket_path))
        if self.at_snapshot is not None:
            env.update(KSYMLAB_GDB_HOLD=str(self.hold_file),
                       KSYMLAB_GDB_RELEASE=str(self.release_file))
        say("gdb", f"{self.tree.variant}: attaching to {self.socket_path}"
                   + (f", vmlinux relocated by {self.slide:#x}" if self.slide else ""))
        self._logf = open(self.log, "w")
        self.started = time.monotonic()
        try:
            self.proc = subprocess.Popen(gdb_argv(self.tree, self.slide, self.SCRIPT),
                                         stdout=self._logf,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, start_new_session=True)
        except FileNotFoundError as e:
            raise HarnessError("deps", "gdb not found; install the gdb package") from e
        while not self.armed_file.exists():
            if self.proc.poll() is not None:
                self._fail(f"gdb exited {self.proc.returncode} before it set the breakpoint")
            self._check_stop()
            if time.monotonic() - self.started > self.timeout:
                self._fail(f"gdb did not set the breakpoint within {self.timeout} s")
            time.sleep(0.05)
        say("gdb", f"{self.tree.variant}: breakpoint on {self.WHERE} set")

    def finish(self):
        """Wait for gdb to read the snapshot and detach; return its reading: the
        typed record of READINGS (a GdbReading), else the JSON as gdb wrote it."""
        end = self.started + self.timeout
        while self.proc.poll() is None:
            if time.monotonic() > end:
                self._fail(f"gdb did not finish within {self.timeout} s "
                           "(the guest never reached the snapshot?)")
            self._check_stop()
            self._release_if_held()
            time.sleep(0.05)
        self._logf.flush()
        if not self.out_file.exists():
            self._fail(f"gdb exited {self.proc.returncode} without a result")
        try:
            result = json.loads(self.out_file.read_text())
        except ValueError as e:
            raise HarnessError("gdb", f"{self.out_file}: not JSON ({e})", self.log) from e
        self._add_refused(result)
        record = READINGS.get(self.SCRIPT)
        reading = result
        if record is not None:
            try:
                reading = record.parse(result, str(self.out_file))
            except HarnessError as e:
                raise HarnessError(e.step, e.message, self.log) from None
        say("gdb", f"{self.tree.variant}: {self.summary(reading)}")
        for text in notes(reading):
            say("gdb", f"{self.tree.variant}: note: {text}")
        return reading

    def _add_refused(self, result):
        add_refused(result, self.claims, self.refused)

    def summary(self, reading):
        """One progress line about what gdb read (its GdbReading)."""
        return (f"read {len(reading.symbols)} symbols, {len(reading.tasks)} tasks, "
                f"{len(reading.pageblocks)} pageblocks from guest memory at the snapshot")

    def _release_if_held(self):
        """gdb holds the guest at the snapshot: run at_snapshot once, then let gdb go on."""
        if self.at_snapshot is None or not self.hold_file.exists() or \
                self.release_file.exists():
            return
        try:
            self.at_snapshot()
        except HarnessError:
            self.close()
            raise
        self.release_file.write_text("released\n")

    def _check_stop(self):
        try:
            check_stop("gdb")
        except HarnessError:
            self.close()
            raise

    def _fail(self, fallback):
        self.close()
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        raise HarnessError("gdb", _gdb_problem(text) or fallback, self.log)

    def close(self):
        if self.proc is not None:
            stop_group(self.proc, grace=0)
        if self._logf is not None:
            self._logf.close()
            self._logf = None


def _gdb_problem(text):
    """The first line of gdb's output that explains a failure."""
    for needle in ("ksymlab-gdb:", "No such file or directory", "Connection refused", "Remote communication error",
                   "Traceback", "Error", "error"):
        for line in text.splitlines():
            if needle in line:
                return line.strip()
    return None
