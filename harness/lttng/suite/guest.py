"""Boot suite guests until every kernel test script has run, and read their TAP.

A guest runs the scripts in order (lttng-suite-init), each under a timeout, and
writes each TAP stream between markers on its own serial port. A guest that
panics, oopses or goes silent is classified (the QEMU session's faults); the
script it was in gets that as the end of its stream, and a new guest runs the
scripts after it, at most RESTARTS times. What ran before the fault is kept."""

import time
from dataclasses import dataclass
from pathlib import Path

from ... import paths
from ...prepare import initramfs as base
from ...errors import HarnessError
from ...guest.qemu import QemuSession, serial_file_args
from ...guest.tsc import clocksource
from ...oracles import hang
from ...progress import say
from ..supply import image
from ..boot.session import APPEND
from . import tap

INIT = paths.GUEST / "lttng-suite-init"
APPLETS = ("sh", "mount", "stty", "reboot", "ifconfig", "sleep", "echo", "cat", "mkdir")
# As LTTng's CI's test guests: 2 vCPUs, 4 GiB (~150 MB of initramfs unpacked,
# traces and tmpfs need less; the per-CPU ring buffers of an SMP guest more)
MEMORY = "4096M"
CPUS = 2
BEGIN, END = "KSYMLAB-SUITE-BEGIN", "KSYMLAB-SUITE-END"
DONE = "KSYMLAB-SUITE-DONE"
# lttng-suite-init prints it every 30 s: a script that runs longer than the hang
# timeout but within its own timeout is not a hang (it was, before 2026-12-07)
ALIVE = "KSYMLAB-SUITE-ALIVE"
RESTARTS = 6         # a full suite on 2.13.9 faults 3-4 times (docs/lttng.md)
GRACE = 180             # seconds a guest has beyond its scripts' timeouts


@dataclass(frozen=True)
class Boot:
    """One suite guest: the scripts it was given, what its TAP port holds, and the
    fault that ended it (None: it finished), and the clocksource its kernel ran on
    (test_clock_override counts distinct timestamps: jiffies' 4 ms steps fail it)."""
    scripts: tuple
    tap_text: str
    fault: str = None
    clock: str = None
    seconds: tuple = ()     # (script, seconds from its SCRIPT marker to its RC marker)


def spec(build_dir, suite_files, params, script_list, etc):
    """gen_init_cpio's list of a suite guest: the LTTng build's staged modules, the
    suite's files, busybox, the init, its parameters and script list, and the
    files under the directory `etc` as /etc/<path>."""
    files = dict(suite_files)
    stage = Path(build_dir) / "stage"
    for f in sorted(stage.rglob("*")):
        if f.is_file():
            files["/" + str(f.relative_to(stage))] = f
    files["/bin/busybox"] = base.BUSYBOX
    files["/init"] = INIT
    files["/etc/ksymlab/suite-params"] = Path(params)
    files["/etc/ksymlab/suite-scripts"] = Path(script_list)
    for f in sorted(Path(etc).rglob("*")):
        if f.is_file():
            files[f"/etc/{f.relative_to(etc)}"] = f
    # a host program of the same name (coreutils' cat, echo, ...) wins over busybox's
    applets = [a for a in APPLETS if f"/bin/{a}" not in files]
    return image.cpio_list(files, applets, step="suite", link_copies=True)


def blocks(text):
    """{script: (TAP text, rc or None)} of the BEGIN .. END blocks of a TAP port; a
    script begun but not ended has rc None, also when bytes were lost and a BEGIN
    follows the rest of a line (the script before it then never ended)."""
    out, current, lines = {}, None, []
    for line in text.splitlines():
        cut = line.find(BEGIN + " ")
        if cut > 0:
            if current:
                lines.append(line[:cut])
                out[current] = ("\n".join(lines), None)
            line = line[cut:]
        if line.startswith(BEGIN + " "):
            current, lines = line[len(BEGIN) + 1:].strip(), []
            out[current] = ("", None)
        elif line.startswith(END + " ") and current:
            rc = line.rsplit("rc=", 1)[-1].strip()
            out[current] = ("\n".join(lines), int(rc) if rc.isdigit() else None)
            current = None
        elif current:
            lines.append(line)
            out[current] = ("\n".join(lines), None)
    return out


def ended(rc, timeout):
    if rc == 0:
        return "exit 0"
    if rc == 124:
        return f"timeout after {timeout} s"
    if rc is not None and rc > 128:
        return f"killed by signal {rc - 128}"
    return f"exit {rc}"


def results(boots, scripts, timeout):
    """One tap.Script per script from the boots' TAP ports, in `scripts` order."""
    out = []
    parsed = [(b, blocks(b.tap_text)) for b in boots]      # each port read once
    for script in scripts:
        seen = [(b, found[script]) for b, found in parsed if script in found]
        if not seen:
            # the last guest that was given it, and why it stopped before
            last = next((b.fault for b in reversed(boots) if script in b.scripts and b.fault),
                        None)
            why = f"not run: {last}" if last else "not run"
            out.append(tap.parse(script, "", ended=why))
            continue
        boot, (text, rc) = seen[-1]
        secs = dict(boot.seconds).get(script)
        if rc is None:
            how = boot.fault or "the guest stopped"
        elif rc != 124 and secs is not None and secs >= timeout:
            # the timeout's TERM, trapped by the script (its cleanup exits as it likes)
            how = f"timeout after {timeout} s ({ended(rc, timeout)})"
        else:
            how = ended(rc, timeout)
        out.append(tap.parse(script, text, ended=how))
    return out


def run(tree, initrd_for, scripts, vdir, opts, timeout):
    """Boot until every script ran or RESTARTS guests faulted; return the Boots.
    `initrd_for(scripts, n)` packs the initramfs of guest n for those scripts."""
    vdir = Path(vdir)
    left = list(scripts)
    boots = []
    n = 0
    while left and n <= RESTARTS:
        n += 1
        tap_log = vdir / f"suite-tap-{n}.log"
        if tap_log.exists():
            tap_log.unlink()
        initrd = initrd_for(left, n)
        say("suite", f"{tree.variant}: guest {n}, {len(left)} script(s), {timeout} s each")
        vm = QemuSession(tree, initrd, vdir, kvm=opts.kvm, append=APPEND, memory=MEMORY,
                         cpus=CPUS, boot_timeout=len(left) * (timeout + 15) + GRACE,
                         hang_timeout=opts.hang_timeout,
                         console_log=vdir / f"suite-console-{n}.log",
                         data_log=vdir / f"suite-data-{n}.log",
                         extra_args=serial_file_args(tap_log),
                         on_hang=lambda s, n=n: hang.read(tree, s.gdb_socket,
                                                          vdir / f"suite-hang-{n}.json"))
        fault = None
        t0 = time.monotonic()
        took = []
        try:
            with vm:
                for i, script in enumerate(left, 1):
                    vm.expect_marker(f"KSYMLAB-SUITE-SCRIPT {i}/{len(left)} {script}",
                                     f"suite: {script}", alive=ALIVE)
                    began = time.monotonic()
                    vm.expect_marker(f"KSYMLAB-SUITE-RC {script} ", f"suite: {script}",
                                     alive=ALIVE)
                    took.append((script, round(time.monotonic() - began, 1)))
                    say("suite", f"{tree.variant}: {i}/{len(left)} {script} done in "
                                 f"{took[-1][1]} s ({round(time.monotonic() - t0)} s)")
                vm.expect_marker(DONE, "suite")
                vm.wait_poweroff("suite guest")
        except HarnessError as err:
            if err.step == "interrupted":
                raise
            fault = f"guest {err.step}: {err.message}"
            say("suite", f"{tree.variant}: guest {n}: {fault}")
        text = tap_log.read_text(errors="replace") if tap_log.exists() else ""
        boots.append(Boot(tuple(left), text, fault, clocksource(vm.console_text()),
                          tuple(took)))
        if fault is None:
            break
        done = blocks(text)
        if not done:
            # it faulted before its first script: another guest would do the same
            say("suite", f"{tree.variant}: guest {n} faulted before any script began; "
                         "no restart")
            break
        # the script the guest was in is over (its stream ends with the fault)
        left = [s for s in left if s not in done]
    return boots
