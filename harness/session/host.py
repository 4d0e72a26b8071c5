"""One variant's session: build what is missing, boot the guest with its gdbstub,
let it load the probe module, and hand the person gdb's prompt at the first
snapshot (gdbscripts/ksymlab_session.py). gdb starts with QEMU (vmlinux loads
during the boot); the vmcore of the first snapshot is dumped while the person
already has the prompt. Quitting gdb, SIGTERM or SIGHUP ends gdb and QEMU;
Ctrl-C before the prompt stops the session (130), after it belongs to gdb."""

import concurrent.futures
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

from .. import proc, variantjob
from ..errors import HarnessError
from ..guest import dataport
from ..guest.qemu import QemuSession
from ..prepare import initramfs, kernel, module, symcheck
from ..progress import say
from . import gdbchild, shell
from .control import Controller
from .gdbchild import TRANSCRIPT
from .rows import Live


def new_session_dir(runs_root, names):
    """runs/session-<time>-<pid>/ (not runs/latest: that stays the last run's)."""
    run_id = f"session-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    rundir = Path(runs_root) / run_id
    rundir.mkdir(parents=True)
    (rundir / "variants").write_text(",".join(names) + "\n")
    return rundir


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
    gdbchild.write_claims(vdir, claims, tree, slide, opts.kaslr)
    return Live(variant, tree, ko, vdir, claims, slide, opts)


def failed_start(vdir):
    """gdb's one line when the session script could not reach the first snapshot."""
    f = vdir / "gdb-failed"
    return f.read_text().strip() if f.exists() else None


def guest(tree, initrd, vdir, opts, sock):
    """The session's QemuSession: run's, plus the shell's serial port at `sock`."""
    return QemuSession(tree, initrd, vdir, kvm=opts.kvm,
                       append=" ".join(a for a in (opts.append, shell.append()) if a),
                       boot_timeout=opts.boot_timeout, hang_timeout=opts.hang_timeout,
                       kaslr=opts.kaslr, extra_args=shell.qemu_args(sock))


def lttng_beside(pool, live):
    """--lttng: run's LTTng step (variantjob.lttng_step, the LTTng boot `run --lttng`
    makes) in `pool`, started once the person has gdb; the Live with its future."""
    v, opts = live.variant, live.opts
    if not opts.lttng:
        return live
    if not v.lttng_series:
        say("session", f"{v.name}: no LTTng series: --lttng has nothing to load")
        return live
    say("lttng", f"{v.name}: the LTTng boot starts beside the session "
                 f"(`ksymlab lttng`; files in {live.vdir / 'lttng'})")
    return replace(live, lttng=pool.submit(variantjob.lttng_step, v, live.tree,
                                           live.vdir, opts))


def stop_beside(pool, live):
    """The LTTng step ends with the session: its waits see STOP, its guest closes."""
    if live.lttng is not None and not live.lttng.done():
        proc.STOP.set()
    pool.shutdown(wait=True)


def drop_vmcore(vdir, keep):
    """The first snapshot's vmcore (512 MiB and more) goes with the session, as a run's
    goes once drgn read it, unless --keep-vmcore (`ksymlab rows` may not have run)."""
    if not keep:
        for f in vdir.glob("vmcore*"):
            f.unlink(missing_ok=True)


def solo(variant, opts, rundir):
    """A session on one variant under `rundir`; returns the exit status."""
    vdir = rundir / variant.name
    vdir.mkdir()
    t0 = time.monotonic()
    tree, ko, initrd = prepare(variant, opts, vdir)
    try:
        status = boot_and_serve(variant, opts, (tree, ko, initrd), vdir, t0)
    finally:
        drop_vmcore(vdir, opts.keep_vmcore)         # once QEMU has exited
    problem = failed_start(vdir)
    if problem:
        raise HarnessError("gdb", problem, vdir / TRANSCRIPT)
    say("session", f"{variant.name}: ended; transcript {vdir / TRANSCRIPT}")
    return status


def boot_and_serve(variant, opts, built, vdir, t0):
    """The guest, gdb in the foreground, the LTTng step beside (--lttng): gdb's status."""
    tree, ko, initrd = built
    pool = concurrent.futures.ThreadPoolExecutor(1)
    live = None
    with shell.socket_dir(vdir) as sock, guest(tree, initrd, vdir, opts, sock) as vm, \
            gdbchild.GdbChild(gdbchild.argv(tree, opts.kaslr, vdir, variant.name),
                              vdir, vm.gdb_socket) as g:
        try:
            live = arm(vm, variant, tree, ko, vdir, opts)
            g.hand_over()
            live = lttng_beside(pool, live)
            return serve(vm, g, live, t0, sock)
        finally:
            if live is not None:
                stop_beside(pool, live)


def serve(vm, g, live, t0, sock):
    """The console's thread and the shell's pane while the person has gdb: gdb's status."""
    name = live.variant.name
    pane = shell.open_pane(sock)
    say("session", f"{name}: module loaded {time.monotonic() - t0:.1f} s after "
                   f"the start; console {vm.console_log}; guest shell: "
                   + (f"tmux pane {pane}" if pane else " ".join(shell.command(sock))))
    ctl = Controller(vm, live)
    ctl.start()
    try:
        return g.wait()
    finally:
        ctl.stop.set()
        ctl.join(10)
        shell.close_pane(pane)
