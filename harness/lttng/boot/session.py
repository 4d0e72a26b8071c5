"""Boot the LTTng guest of one variant and bring its trace home.

Transport: a third serial port (`-serial file:`, guest /dev/ttyS2) carrying a
base64 tar of the trace directory between two marker lines. The guest config
has no PCI, virtio, 9p or network device, so a serial port is the only channel
that needs nothing new in the kernel; a port of its own keeps kernel messages
(ttyS0) and the oracle lines (ttyS1) out of the archive, and base64 survives
the tty layer."""

import base64
import binascii
import io
import tarfile
import time
from pathlib import Path

from ...errors import HarnessError
from ...progress import say
from ...guest.qemu import QemuSession, serial_file_args
from . import gdbstop

DONE = "KSYMLAB-LTTNG-DONE"
DATA_END = "KSYMLAB-LTTNG-END"
TRACE_BEGIN = "KSYMLAB-TRACE-BEGIN"
TRACE_END = "KSYMLAB-TRACE-END"
MEMORY = "1024M"        # the initramfs is ~60 MB unpacked, plus the trace buffers
APPEND = "oops=panic"   # an oops is one classified panic, not thousands of oopses


def decode_trace(text, dest):
    """Unpack the base64 tar between the trace markers into `dest`; return its size."""
    if TRACE_BEGIN not in text or TRACE_END not in text:
        raise HarnessError("verify", "the trace port has no complete "
                           f"{TRACE_BEGIN} .. {TRACE_END} block")
    body = text.split(TRACE_BEGIN, 1)[1].split(TRACE_END, 1)[0]
    try:
        raw = base64.b64decode("".join(body.split()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise HarnessError("verify", f"the trace port's base64 is damaged: {e}") from e
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            for m in tar.getmembers():
                if m.name.startswith("/") or ".." in Path(m.name).parts or \
                        not (m.isfile() or m.isdir()):
                    raise HarnessError("verify", f"trace tar member {m.name!r} refused")
            tar.extractall(dest)
    except tarfile.TarError as e:
        raise HarnessError("verify", f"the trace tar is damaged: {e}") from e
    return len(raw)


def boot(tree, initrd, vdir, opts):
    """Run the LTTng guest; return (data port text, trace port text, what gdb read
    at the quiet point, seconds)."""
    vdir = Path(vdir)
    trace_log = vdir / "trace-port.log"
    if trace_log.exists():
        trace_log.unlink()
    t0 = time.monotonic()
    vm = QemuSession(tree, initrd, vdir, kvm=opts.kvm, append=APPEND, memory=MEMORY,
                     boot_timeout=opts.boot_timeout, hang_timeout=opts.hang_timeout,
                     cpus=opts.guest_cpus, console_log=vdir / "console.log", data_log=vdir / "data.log",
                     extra_args=serial_file_args(trace_log))
    with vm:
        truth = gdbstop.read_at_quiet_point(vm, tree, vdir, DONE)
        vm.expect_marker(DONE, "LTTng session")
        vm.wait_poweroff("LTTng guest")
    secs = round(time.monotonic() - t0, 1)
    say("lttng", f"{tree.variant}: LTTng guest done in {secs} s")
    data = vm.data_log.read_text(errors="replace") if vm.data_log.exists() else ""
    trace = trace_log.read_text(errors="replace") if trace_log.exists() else ""
    return data, trace, truth, secs
