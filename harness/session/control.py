"""The host's half of a session, one thread per guest: it alone reads and writes the
guest's console (QEMU's stdio under pexpect) and answers gdb through files in the
variant's directory, as a run's GdbSession does:

  gdb-armed     gdb set the snapshot breakpoint: say "go" on the console
  gdb-hold      gdb holds the first snapshot: QEMU dumps the vmcore (drgn's),
                then gdb-release lets gdb go on
  rows-request  `ksymlab rows`: the rows (rows.py) into rows.json
  lttng-request `ksymlab lttng`: the LTTng boot's facts and rows into lttng.json
  console-in    lines a person (or `ksymlab type`) sends to the guest's console

Nothing it holds is shared: the main thread only starts it and sets `stop`."""

import json
import os
import threading
from dataclasses import replace

import pexpect

from ..guest import vmcore
from . import rows as rowsmod

POLL_SECONDS = 0.05
# request file stem -> what answers it (rows.py): `ksymlab rows`, `ksymlab lttng`
ANSWERS = {"rows": "rows_answer", "lttng": "lttng_answer"}


class Controller(threading.Thread):
    """Serve one guest (`vm`, a started QemuSession) for the Live `live`."""

    def __init__(self, vm, live):
        super().__init__(name=f"session-{live.variant.name}", daemon=True)
        self.vm = vm
        self.live = live
        self.stop = threading.Event()
        self.ended = None           # why QEMU's console ended (EOF), once it has
        d = live.vdir
        self.files = {k: d / k for k in ("gdb-armed", "gdb-hold", "gdb-release",
                                         "rows-request", "rows.json", "lttng-request",
                                         "lttng.json", "console-in")}
        self._went = False
        self._fifo = None

    def run(self):
        self._open_fifo()
        try:
            while not self.stop.is_set():
                self._pump()
                self._answer()
        finally:
            if self._fifo is not None:
                os.close(self._fifo)

    def _open_fifo(self):
        """console-in: a FIFO whose lines go to the guest's console."""
        path = self.files["console-in"]
        try:
            os.mkfifo(path, 0o600)
            self._fifo = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            self._fifo = None

    def _pump(self):
        """Read what the guest printed into console.log (pexpect's logfile_read)."""
        child = self.vm.child
        if child is None or self.ended:
            self.stop.wait(POLL_SECONDS)
            return
        try:
            child.read_nonblocking(65536, timeout=POLL_SECONDS)
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            self.ended = "qemu exited"
        if child.logfile_read is not None:
            child.logfile_read.flush()

    def _answer(self):
        f = self.files
        if not self._went and f["gdb-armed"].exists():
            self.vm.send_go()
            self._went = True
        if f["gdb-hold"].exists() and not f["gdb-release"].exists():
            dumped = vmcore.take(self.vm.qmp_socket, self.live.vdir, self.live.variant.name)
            self.live = replace(self.live, dumped=dumped)
            f["gdb-release"].write_text("released\n")
        for name, answer in ANSWERS.items():
            request, out = f[f"{name}-request"], f[f"{name}.json"]
            if request.exists() and not out.exists() and rowsmod.ready(self.live):
                tmp = out.with_suffix(".tmp")
                tmp.write_text(json.dumps(rowsmod.guarded(getattr(rowsmod, answer), self.live),
                                          indent=1))
                os.replace(tmp, out)
        self._forward_console()

    def _forward_console(self):
        if self._fifo is None or self.vm.child is None or self.ended:
            return
        try:
            chunk = os.read(self._fifo, 4096)
        except BlockingIOError:
            return
        if chunk:
            self.vm.child.send(chunk.decode(errors="replace"))
