"""QEMU session: boot one variant, drive its serial console, expose a private gdbstub."""

import os
import re
import shlex
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import pexpect

from ..errors import HarnessError
from ..proc import check_stop
from ..progress import say
from .tsc import host_tsc_khz

READY = "KSYMLAB-READY"
DONE = "KSYMLAB-DONE"
ARM = "KSYMLAB-ARM"
DATA_END = "KSYMLAB-DATA-END"
ARM_DATA_END = "armed-data"
# kernel/reboot.c prints this when the guest restarts (reboot -f, sysrq b, ...).
REBOOT_MESSAGE = "reboot: Restarting system"
DATA_WAIT_SECONDS = 30
# After its last marker the guest's init runs only `reboot -f` (guest/assets/init,
# lttng-init) and -no-reboot makes QEMU exit on that reset, which takes moments
# even under TCG on a busy host: this long without an exit means QEMU is stuck.
POWEROFF_SECONDS = 60
# Pageblock states (harness/checks/pageblock.py): a CMA area (MIGRATE_CMA blocks, at
# the top of memory); ZONE_MOVABLE from 112 MiB to the end of the 512 MiB
# guest, so two 128 MiB memory blocks (memory1, memory2) lie wholly inside it
# with the zone on both sides, and the guest can take one offline.
MEMORY_STATES_APPEND = "cma=16M movablecore=400M"
# Under --kaslr the kernel's physical image lands anywhere in RAM, and a block
# holding it refuses to go offline (EBUSY): in a 512 MiB guest both candidate
# blocks refused in about one boot in twenty (docs/guest-states.md). A 1 GiB
# guest whose ZONE_MOVABLE starts at the same 112 MiB (so the kernel's own zones
# are those of every other boot) has six candidates, memory1 to memory6; the
# image, about 12 MiB, can hold at most two.
KASLR_MEMORY = "1024M"
KASLR_MEMORY_STATES_APPEND = "cma=16M movablecore=912M"
# The vmcore oracle (harness/guest/vmcore.py, oracles/drgn.py): QEMU's vmcoreinfo
# device gives the guest an fw_cfg file, etc/vmcoreinfo, to which the guest's
# qemu_fw_cfg driver writes where its VMCOREINFO note is; dump-guest-memory
# then adds that note to the vmcore. With no ACPI in the guest the driver
# finds fw_cfg only when the kernel command line names it
# (drivers/firmware/qemu_fw_cfg.c: ioport=<size>@<base>:<ctrl>:<data>:<dma>,
# x86's ports 0x510-0x51b; the DMA register at 0x514 is what
# fw_cfg_write_vmcoreinfo() needs).
VMCOREINFO_ARGS = ["-device", "vmcoreinfo"]
VMCOREINFO_APPEND = "qemu_fw_cfg.ioport=12@0x510:0:1:4"
# The block device sampler's subjects (drivers/block/brd.c: rd_nr disks of
# rd_size KiB, each with room for max_part partitions): guest/assets/init
# gives ram0 two partitions (4 MiB and the rest) and puts ext2 on ram1 for
# the writeback and BPF writers. rd_size: 16 MiB since 16ba6f8, when those
# writers went from 2 MiB to 256 KiB each (still 64 throttled writes) and
# the disks from 64 MiB to 16 MiB, to shrink the guest's fixed work. rd_nr 4
# since issue 43: ram2 (three partitions) and ram3 (two) make every walk of
# the disks and of a disk's partitions visit more than one element.
RAMDISK_APPEND = "brd.rd_nr=4 brd.rd_size=16384 brd.max_part=4"

# Console patterns that end a boot early, in the order they are checked. An oops or a
# warning only once its line has ended ("BUG: kernel NULL poi" was reported); not a
# panic, which may be the last thing a guest prints (panic=-1 resets at once).
FAULTS = [
    ("panic", r"Kernel panic - not syncing[^\r\n]*"),
    # not "traps: prog[pid] general protection fault ip:...": a user program's fault
    ("oops", r"(?:BUG: [^\r\n]*|Oops: [^\r\n]*|general protection fault(?! ip:)[^\r\n]*)"
             r"(?=[\r\n])"),
    ("warning", r"WARNING: [^\r\n]*(?=[\r\n])"),
    ("guest", r"KSYMLAB-ERROR[^\r\n]*"),
]


def quote_optarg(value):
    """A value inside a QEMU option string (`-chardev socket,...,path=VALUE`): QEMU's option
    parser (util/qemu-option.c get_opt_value) ends it at a comma, reads ",," as one comma."""
    return str(value).replace(",", ",,")


def serial_file_args(path):
    """One more serial port (ttyS<n>, in argument order) written to `path`.

    Not quoted: QEMU's legacy -serial syntax takes everything after "file:"
    as the path (chardev/char.c qemu_chr_parse_compat), commas included."""
    return ["-serial", f"file:{path}"]


def kvm_usable():
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    return True


class QemuSession:
    """One guest. Use as a context manager so QEMU never outlives the harness."""

    _live = set()               # sessions with a running QEMU, for close_all()
    _live_lock = threading.Lock()

    @classmethod
    def close_all(cls):
        """Stop every running guest (on Ctrl-C, from the main thread)."""
        with cls._live_lock:
            live = list(cls._live)
        for s in live:
            s.close()

    def __init__(self, tree, initrd, workdir, *, boot_timeout, hang_timeout, kvm=False,
                 append="", memory=None, cpus=1, icount=False, kaslr=False, extra_args=(),
                 console_log=None, data_log=None, on_hang=None):
        """Timeouts: RunOptions holds their defaults. Logs: console.log, data.log in `workdir`."""
        self.tree = tree
        self.initrd = initrd
        self.workdir = Path(workdir)
        self.want_kvm = kvm
        self.extra_append = append
        self.memory = memory or (KASLR_MEMORY if kaslr else "512M")
        # a CPU a socket: without ACPI the MP table lists one CPU a package (-smp 2 gave 1)
        self.smp = f"{cpus},sockets={cpus},cores=1,threads=1"
        self.boot_timeout = boot_timeout
        self.hang_timeout = hang_timeout
        self.child = None
        self.sockdir = None
        self.console_log = Path(console_log or self.workdir / "console.log")
        self.data_log = Path(data_log or self.workdir / "data.log")
        self.accel = None
        # -icount: the guest clock counts instructions, so in-guest timings repeat.
        self.icount = icount
        # KASLR on: the harness computes the slide from the guest's _text.
        self.kaslr = kaslr
        # More QEMU arguments (the LTTng boot's third serial port).
        self.extra_args = tuple(extra_args)
        # on_hang(session) -> a line joined to the hang's message (oracles/hang.py)
        self.on_hang = on_hang

    @property
    def gdb_socket(self):
        return Path(self.sockdir) / "gdb.sock"

    @property
    def qmp_socket(self):
        """QEMU's QMP monitor (harness/guest/vmcore.py asks it for dump-guest-memory)."""
        return Path(self.sockdir) / "qmp.sock"

    def kernel_append(self):
        """The kernel command line, a piece per reason; the user's --append comes last."""
        pieces = [
            "console=ttyS0",                        # the console is QEMU's stdio (console_args)
            "" if self.kaslr else "nokaslr",        # KASLR on: harness/guest/kaslr.py's slide
            "panic=-1",                             # a panic resets at once; QEMU then exits
            # check_timer() counts timer ticks over a busy-wait: a TCG guest on a loaded
            # host misses them and panics ("IO-APIC + timer doesn't work!"), as an empty-
            # cache `make run` racing other builds did; the check means nothing under QEMU
            "no_timer_check",
            # the same starved ticks make jiffies run slow, so the clocksource watchdog
            # takes TCG's TSC (the host's clock) for unstable and falls back to jiffies:
            # 4 ms timestamps, and lttng-tools' test_clock_override:21 (100 events, more
            # than one timestamp) failed twice in a row on one variant by chance
            "tsc=reliable",
            self.tsc_append(),
            RAMDISK_APPEND,
            KASLR_MEMORY_STATES_APPEND if self.kaslr else MEMORY_STATES_APPEND,
            VMCOREINFO_APPEND, self.extra_append]
        return " ".join(p for p in pieces if p).strip()

    def tsc_append(self):
        """TCG's TSC is the host's: tell the guest its rate (harness/guest/tsc.py) so it
        need not calibrate against the PIT, which fails on a loaded host and leaves it
        on jiffies. Not under KVM (the guest reads the rate from KVM) nor -icount
        (the TSC counts instructions there)."""
        if self.accel != "tcg" or self.icount:
            return ""
        khz = host_tsc_khz()
        return f"tsc_early_khz={khz}" if khz else ""

    def console_args(self):
        """ttyS0: the console pexpect reads and answers (stdio); ttyS1: the data port."""
        return ["-serial", "stdio"] + serial_file_args(self.data_log)

    def gdbstub_args(self):
        """gdb's way in: a unix socket in the private 0700 socket directory."""
        return ["-chardev", f"socket,id=gdb0,path={quote_optarg(self.gdb_socket)},"
                "server=on,wait=off", "-gdb", "chardev:gdb0"]

    def vmcoreinfo_args(self):
        """The fw_cfg file the guest writes its VMCOREINFO address to (see above)."""
        return list(VMCOREINFO_ARGS)

    def qmp_args(self):
        """QMP, where harness/guest/vmcore.py asks for dump-guest-memory."""
        return ["-chardev", f"socket,id=qmp0,path={quote_optarg(self.qmp_socket)},"
                "server=on,wait=off", "-mon", "chardev=qmp0,mode=control"]

    def icount_args(self):
        """-icount: the guest clock counts instructions, so in-guest timings repeat."""
        return ["-icount", "shift=0,sleep=off"] if self.icount else []

    def argv(self):
        return [
            "qemu-system-x86_64", "-nodefaults", "-display", "none", "-no-reboot",
            "-accel", self.accel, "-m", self.memory, "-smp", self.smp,
            "-kernel", str(self.tree.bzimage), "-initrd", str(self.initrd),
            "-append", self.kernel_append(),
        ] + self.console_args() + self.gdbstub_args() + self.vmcoreinfo_args() + \
            self.qmp_args() + self.icount_args() + list(self.extra_args)

    def write_cmdline(self, argv):
        """qemu.cmdline: the command as a shell line that can be copied and run again."""
        (self.workdir / "qemu.cmdline").write_text(shlex.join(argv) + "\n")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        check_stop("boot")
        if shutil.which("qemu-system-x86_64") is None:
            raise HarnessError("deps", "qemu-system-x86_64 not found; install qemu-system-x86")
        self.accel = "tcg"
        if self.want_kvm and not self.icount:
            if kvm_usable():
                self.accel = "kvm"
            else:
                say("boot", "KVM requested but /dev/kvm is not usable; using TCG")
        # mkdtemp makes the directory 0700: only this user can reach the gdbstub.
        self.sockdir = tempfile.mkdtemp(prefix="ksymlab-gdb-")
        self.workdir.mkdir(parents=True, exist_ok=True)
        for f in (self.console_log, self.data_log):
            if f.exists():
                f.unlink()
        argv = self.argv()
        self.write_cmdline(argv)
        self._log = open(self.console_log, "w", encoding="utf-8", errors="replace")
        say("boot", f"{self.tree.variant}: qemu ({self.accel}), console {self.console_log}")
        try:
            self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8",
                                       codec_errors="replace", timeout=self.hang_timeout,
                                       logfile=None, echo=False)
        except pexpect.ExceptionPexpect as e:
            raise HarnessError("boot", f"cannot start qemu: {e}") from e
        self.child.logfile_read = self._log
        self.started = time.monotonic()
        with QemuSession._live_lock:
            QemuSession._live.add(self)

    def console_text(self):
        """What the guest printed on its console so far ("" before it started)."""
        return self.console_log.read_text(errors="replace") if self.console_log.exists() else ""

    def _excerpt(self, around=None, lines=12):
        text = self.console_text()
        rows = [r for r in text.replace("\r", "").splitlines() if r.strip()]
        if around:
            for i, row in enumerate(rows):
                if around in row:
                    return "\n".join(rows[max(0, i - lines // 2): i + lines])
        return "\n".join(rows[-lines:])

    def _drain(self, seconds=3):
        """Read what the guest still prints after a fault, for the log."""
        try:
            self.child.expect(pexpect.EOF, timeout=seconds)
        except (pexpect.TIMEOUT, pexpect.EOF):
            pass
        self._log.flush()

    def expect_marker(self, marker, phase, alive=None):
        """Wait for `marker`, matched literally (a suite marker holds a script's path,
        which may hold regex metacharacters); classify anything else as a fault and raise.
        A line `alive` (literal) restarts the hang timer (pexpect's timeout is for a
        pattern, not for output: alive lines alone were a "hang")."""
        patterns = [re.escape(marker)] + [p for _, p in FAULTS] + [pexpect.EOF, pexpect.TIMEOUT]
        if alive:
            patterns.append(re.escape(alive))
        deadline = self.started + self.boot_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessError("timeout", f"{self.tree.variant}: no {marker} within "
                                   f"{self.boot_timeout} s ({phase})", self.console_log,
                                   self._excerpt(lines=24))
            wait = min(self.hang_timeout, left)
            i = self.child.expect(patterns, timeout=wait)
            if i == 0:
                return
            if alive and i == len(patterns) - 1:
                continue
            if i <= len(FAULTS):
                kind = FAULTS[i - 1][0]
                what = self.child.after.strip()
                self._drain()
                raise HarnessError(kind, f"{self.tree.variant}: {what} ({phase})",
                                   self.console_log, self._excerpt(around=what, lines=24))
            if patterns[i] is pexpect.EOF:
                self._log.flush()
                last = self._excerpt(lines=1) or "(none)"
                if self._rebooted():
                    raise HarnessError("reboot", f"{self.tree.variant}: unexpected reboot "
                                       f"before {marker} ({phase}); last console line: {last}",
                                       self.console_log, self._excerpt(lines=24))
                raise HarnessError("boot", f"{self.tree.variant}: qemu exited before {marker} "
                                   f"({phase}); last console line: {last}", self.console_log,
                                   self._excerpt(lines=24))
            # A wait cut short by the boot deadline is the deadline's (checked
            # above), even when pexpect returns a moment before it.
            if wait < self.hang_timeout:
                continue
            if time.monotonic() < deadline:
                raise HarnessError("hang", f"{self.tree.variant}: no console output for "
                                   f"{self.hang_timeout} s ({phase}){self._why_silent()}",
                                   self.console_log, self._excerpt(lines=24))

    def _why_silent(self):
        """The on_hang line as the hang message's tail."""
        if self.on_hang is None:
            return ""
        say("boot", f"{self.tree.variant}: silent guest: reading its vCPUs and tasks with gdb")
        return f"; {self.on_hang(self)}"

    def _rebooted(self):
        """Did the guest reset? With -no-reboot QEMU exits 0 on a reset, so after the
        kernel booted an exit 0 is a reboot (a triple fault prints nothing)."""
        text = self.console_text()
        if REBOOT_MESSAGE in text:
            return True
        self.child.close()
        return self.child.exitstatus == 0 and "Linux version" in text

    def _wait_data(self, marker):
        """The data port is asynchronous to the console: wait for `marker` on it."""
        end = time.monotonic() + DATA_WAIT_SECONDS
        while time.monotonic() < end:
            if self.data_log.exists():
                text = self.data_log.read_text(errors="replace")
                if marker in text:
                    return text
            time.sleep(0.05)
        raise HarnessError("guest", f"{self.tree.variant}: data channel has no {marker}",
                           self.data_log)

    def wait_armed(self):
        """Wait until the guest has loaded the module and waits for gdb; return its data so far."""
        self.expect_marker(ARM, "boot and module load")
        say("boot", f"{self.tree.variant}: module loaded after "
                    f"{time.monotonic() - self.started:.1f} s, waiting for gdb")
        return self._wait_data(ARM_DATA_END)

    def send_go(self):
        """Let the guest take the snapshot (gdb is waiting at the breakpoint)."""
        self.child.sendline("go")

    def wait_ready(self):
        self.expect_marker(READY, "boot and sampling")
        say("boot", f"{self.tree.variant}: guest ready after "
                    f"{time.monotonic() - self.started:.1f} s")
        return self._wait_data(DATA_END)

    def resume_and_finish(self):
        """Tell the guest to go on, then wait for it to unload the module and exit."""
        self.child.sendline("continue")
        self.expect_marker(DONE, "unload")
        self.wait_poweroff()

    def wait_poweroff(self, what="guest"):
        """After the guest's last marker: wait for QEMU to exit, else a hang."""
        try:
            self.child.expect(pexpect.EOF, timeout=POWEROFF_SECONDS)
        except pexpect.TIMEOUT as e:
            raise HarnessError("hang", f"{self.tree.variant}: {what} did not power off",
                               self.console_log) from e

    def close(self):
        with QemuSession._live_lock:
            QemuSession._live.discard(self)
        if self.child is not None:
            if self.child.isalive():
                # pexpect made the child a session leader: its group holds
                # anything it started, which must not outlive it either.
                try:
                    os.killpg(self.child.pid, signal.SIGKILL)
                except OSError:
                    pass
                self.child.terminate(force=True)
            self.child.close(force=True)
            self.child = None
        if getattr(self, "_log", None):
            self._log.close()
        if self.sockdir:
            shutil.rmtree(self.sockdir, ignore_errors=True)
            self.sockdir = None
