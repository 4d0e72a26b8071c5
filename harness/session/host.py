"""One variant's session: build what is missing, boot the guest with its gdbstub,
let it load the probe module, and hand the person gdb's prompt at the first
snapshot (gdbscripts/ksymlab_session.py). Quitting gdb, SIGTERM or SIGHUP ends
gdb and QEMU; Ctrl-C belongs to gdb (it interrupts the guest)."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .. import paths, variantjob
from ..errors import HarnessError
from ..guest import dataport
from ..guest.qemu import QemuSession
from ..oracles import gdb
from ..prepare import initramfs, kernel, module, symcheck
from ..progress import say
from .control import Controller
from .rows import Live

SESSION_SCRIPT = "ksymlab_session.py"
TRANSCRIPT = "transcript.txt"


def prompt_of(name):
    """gdb's prompt in a session of variant `name` (pair.py waits for it)."""
    return f"(ksymlab {name}) "


def new_session_dir(runs_root, names):
    """runs/session-<time>-<pid>/ (not runs/latest: that stays the last run's)."""
    run_id = f"session-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    rundir = Path(runs_root) / run_id
    rundir.mkdir(parents=True)
    (rundir / "variants").write_text(",".join(names) + "\n")
    return rundir


def gdb_argv(tree, slide, vdir, name):
    """Interactive gdb: vmlinux (relocated by the KASLR slide), the tree's
    vmlinux-gdb.py, a transcript of every command and answer, our commands."""
    load = f"file {tree.vmlinux}" if not slide else f"symbol-file -o {slide:#x} {tree.vmlinux}"
    return ["gdb", "-nx", "-q",
            "-iex", "set auto-load python-scripts off",
            "-ex", "set pagination off", "-ex", "set height 0", "-ex", "set width 0",
            "-ex", "set confirm off", "-ex", load,
            "-ex", f"source {tree.gdb_script}",
            # the prompt before trace-commands: its trace line would hold the prompt
            "-ex", f"set prompt {prompt_of(name)}",
            "-ex", f"set logging file {vdir / TRANSCRIPT}",
            "-ex", "set logging overwrite on", "-ex", "set logging enabled on",
            "-ex", "set trace-commands on",
            "-ex", f"source {paths.GDBSCRIPTS / SESSION_SCRIPT}"]


def prepare(variant, opts, vdir):
    """(tree, module, initramfs) of `variant`, built or found in the cache as `run` does."""
    symcheck.ensure_built()
    tree = kernel.prepare(variant, opts.cache)
    ko = module.build(tree, variant.module_mode, opts.cache, opts.module_src)
    shutil.copy2(ko.parent / "build.log", vdir / "module-build.log")
    initrd = initramfs.build(tree, ko, opts.scenario, vdir, variant.module_mode, opts.cache,
                             opts.insmod_args, opts.stress, opts.bench)
    return tree, ko, initrd


def arm(vm, variant, tree, ko, vdir, opts):
    """Wait for the guest to load the module; write gdb-in.json; return its Live."""
    early = dataport.parse(vm.wait_armed(), partial=True)
    claims, slide = variantjob.probe_claims(variant, tree, ko, early, opts, {})
    (vdir / "gdb-in.json").write_text(json.dumps(gdb.gdb_claims(claims)[0], indent=1))
    return Live(variant, tree, ko, vdir, claims, slide, opts)


def run_gdb(argv, vm, vdir):
    """gdb in the foreground until the person quits; its exit status (128 + the
    signal that killed it, as a shell says)."""
    env = dict(os.environ, KSYMLAB_SESSION_DIR=str(vdir),
               KSYMLAB_GDB_SOCKET=str(vm.gdb_socket))
    # Ctrl-C reaches the whole foreground group: it is gdb's (a handler, not
    # SIG_IGN, so that gdb starts with the default disposition)
    old = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        child = subprocess.Popen(argv, env=env)
    except FileNotFoundError as e:
        raise HarnessError("deps", "gdb not found; install the gdb package") from e
    try:
        status = child.wait()
        return status if status >= 0 else 128 - status      # killed: 128 + its signal
    finally:
        signal.signal(signal.SIGINT, old)
        if child.poll() is None:        # SIGTERM or SIGHUP to us: gdb goes too
            child.terminate()
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def failed_start(vdir):
    """gdb's one line when the session script could not reach the first snapshot."""
    f = vdir / "gdb-failed"
    return f.read_text().strip() if f.exists() else None


def solo(variant, opts, rundir):
    """A session on one variant under `rundir`; returns the exit status."""
    vdir = rundir / variant.name
    vdir.mkdir()
    t0 = time.monotonic()
    tree, ko, initrd = prepare(variant, opts, vdir)
    with QemuSession(tree, initrd, vdir, kvm=opts.kvm, append=opts.append,
                     boot_timeout=opts.boot_timeout, hang_timeout=opts.hang_timeout,
                     kaslr=opts.kaslr) as vm:
        live = arm(vm, variant, tree, ko, vdir, opts)
        say("session", f"{variant.name}: module loaded {time.monotonic() - t0:.1f} s after "
                       f"the start; gdb attaches; console {vm.console_log}, "
                       f"typed lines to {vdir / 'console-in'}")
        ctl = Controller(vm, live)
        ctl.start()
        try:
            status = run_gdb(gdb_argv(tree, live.slide, vdir, variant.name), vm, vdir)
        finally:
            ctl.stop.set()
            ctl.join(10)
    problem = failed_start(vdir)
    if problem:
        raise HarnessError("gdb", problem, vdir / TRANSCRIPT)
    say("session", f"{variant.name}: ended; transcript {vdir / TRANSCRIPT}")
    return status
