"""One A/B run: build every variant, boot it, verify it with gdb, write the report.

Concurrency: the kernel trees and symcheck are built in the main thread
before any guest starts; then one worker per guest runs a variant's steps
and returns an immutable VariantResult. Workers share nothing mutable: a
result is published to the Board under its lock, and the report is written
from a snapshot (the board replaces its dict on every publish, so a snapshot
is never changed by a later publish).
"""

import concurrent.futures
import os
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from .oracles import addr2line, drgn, gdb, labels
from .checks import drgn_columns, seedclaims, seeds
from .checks.model import StepError, VariantResult
from .checks.symbols import compare_symcheck
from .checks.variant import compare_variant, expect_degraded
from .guest import dataport, kaslr, vmcore
from .prepare import initramfs, kernel, module, symcheck
from . import proc, steps as stepnames
from .report import assemble
from .lttng import step as lttngrun
from .lttng.suite import retry as suiteretry, runner as suiterun
from .errors import HarnessError
from .progress import say
from .guest.qemu import QemuSession
from .guest.scenario import parse as parse_scenario


def new_rundir(runs_root):
    runs_root.mkdir(parents=True, exist_ok=True)
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    rundir = runs_root / run_id
    rundir.mkdir()
    latest = runs_root / "latest"
    tmp = runs_root / f".latest-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_id)
    os.replace(tmp, latest)          # atomic: `latest` is never missing
    return run_id, rundir


# Console classifications, each a distinct verdict in the report.
FAULT_VERDICTS = ("panic", "oops", "warning", "hang", "reboot", "timeout", "boot", "guest")


def step_error(err, vdir):
    """A HarnessError as the report records it; the failed step's log is copied into
    the run directory so the run is self-contained."""
    log = Path(err.log) if err.log else None
    if log and log.exists() and vdir not in log.parents:
        dest = vdir / f"{err.step}-{log.name}"
        shutil.copy2(log, dest)
        log = dest
    excerpt = err.excerpt
    if not excerpt and log and log.exists() and err.step in FAULT_VERDICTS:
        rows = log.read_text(errors="replace").replace("\r", "").splitlines()
        excerpt = "\n".join(rows[-25:])
    return StepError(err.step, err.message, err.exit_status,
                     err.step if err.step in FAULT_VERDICTS else "error",
                     str(log) if log else None, excerpt)


class Board:
    """The published results of a run, one per variant."""

    def __init__(self):
        self._lock = threading.Lock()
        self._results = MappingProxyType({})

    def publish(self, result):
        with self._lock:
            # copy on write: a snapshot handed out earlier never changes
            self._results = MappingProxyType({**self._results, result.name: result})

    def snapshot(self):
        with self._lock:
            return self._results


class _Steps:
    """Seconds per step of one variant, kept by the worker that runs it; the step
    names are harness/steps.py's, which the reports show in that order."""

    def __init__(self):
        self.seconds = {}
        self._clock = time.monotonic()

    def lap(self, step, of_which=None):
        """Record the time since the last lap as `step`'s; `of_which` ({step: seconds},
        timed inside this lap by the thread that ran it) is recorded apart from it."""
        assert step in stepnames.GUEST, f"{step}: not in harness/steps.py GUEST"
        now = time.monotonic()
        inner = of_which or {}
        assert all(k in stepnames.GUEST for k in inner), inner
        self.seconds[step] = round(now - self._clock - sum(inner.values()), 2)
        self.seconds.update(inner)
        self._clock = now


def base_result(variant, tree=None, **kw):
    return VariantResult(name=variant.name, description=variant.description,
                         module_mode=variant.module_mode,
                         series=tuple(p.name for p in _series(variant)),
                         tree_key=tree.key if tree else None, seeds=variant.seeds,
                         kernel_line=variant.kernel_line, role=variant.matrix_row, **kw)


def _series(variant):
    try:
        return variant.patches()
    except HarnessError:
        return ()


def lttng_beside(n_variants, opts, cpus=None):
    """Whether each LTTng boot runs beside its probe-module boot: when the variants
    leave a CPU free (one guest each), and not under -icount (a benchmark's guest
    keeps its CPU to itself)."""
    cpus = opts.jobs or cpus or os.cpu_count() or 1
    return n_variants < cpus and not opts.bench


def _lttng_step(variant, tree, vdir, opts):
    """The LTTng boot of `variant` (issue 13: Debian's LTTng in a boot of its own) and,
    with --lttng-suite, lttng-tools' kernel tests with its modules (issue 23):
    (rows, the boot's facts, the suite's facts or None, the suite's seconds)."""
    rows, facts = lttngrun.rows_or_failure(variant, tree, vdir, opts)
    suite, t0 = None, time.monotonic()
    if opts.lttng_suite and facts.get("build_dir"):
        suite = suiterun.run_or_failure(variant, tree, Path(facts["build_dir"]), vdir, opts,
                                        opts.lttng_suite_timeout, opts.lttng_suite_only)
    return rows, facts, suite, round(time.monotonic() - t0, 2)


def probe_claims(early, ko, name):
    """gdb-in.json and drgn-in.json: what gdb and drgn are asked to read, from the
    data port's lines up to ARM (`early`) and the module file `ko` (variant `name`)."""
    if not early.pbinfo:
        raise HarnessError("verify", f"{name}: the guest reported no pageblock order")
    if not any(s.addr for s in early.section):
        raise HarnessError("verify", f"{name}: the guest reported no module "
                           "section addresses (/sys/module/ksymlab_probe/sections)")
    return {"symbols": [s.name for s in early.symbol if s.method != "unresolved"],
            "module": str(ko),
            "sections": {s.name: s.addr for s in early.section},
            "pageblock_order": early.pbinfo[0].order,
            # gdb stops at each of the guest's snapshots (checks/snapshots.py)
            "snapshots": early.snapshots[0].count if early.snapshots else 1}


def judge(data, truth, drgn_truth, variant, opts):
    """The probe module's rows (a Found) from the data port's `data`, gdb's `truth`
    and drgn's `drgn_truth`: the compare lap of `run`, and `session`'s rows."""
    # The guest program is static and not PIE: its frames name without a load base.
    names = addr2line.function_names(initramfs.build_guest_program("ustack.c", opts.cache),
                                     [f.ip for f in data.frame])
    found = compare_variant(data, truth, opts.stress, variant, names)
    found = drgn_columns.merge(found, data, truth, drgn_truth)      # drgn's columns and rows
    found = expect_degraded(found, variant.degraded)
    found = labels.require_independent(found)
    return replace(found, notes=found.notes + gdb.notes(truth))     # gdb's caveats


def boot_variant(variant, tree, vdir, opts, steps):
    """Boot one variant, verify it at the snapshot; return its VariantResult. With a
    spare CPU (opts.lttng_beside) the LTTng boot runs at the same time in a thread of
    its own: two guests that share nothing but the built tree."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        beside = None
        if variant.lttng_series and opts.lttng and opts.lttng_beside:
            beside = pool.submit(_lttng_step, variant, tree, vdir, opts)
        return run_variant(variant, tree, vdir, opts, steps, beside)


def run_variant(variant, tree, vdir, opts, steps, beside=None):
    """The probe-module boot and its checks, then the LTTng step's (`beside`: its
    future when it already runs)."""
    facts = {}
    ko = module.build(tree, variant.module_mode, opts.cache, opts.module_src)
    findings = symcheck.findings(ko, tree)
    facts["symcheck"] = findings
    shutil.copy2(ko.parent / "build.log", vdir / "module-build.log")
    steps.lap("module")
    initrd = initramfs.build(tree, ko, opts.scenario, vdir, variant.module_mode, opts.cache,
                             opts.insmod_args, opts.stress, opts.bench)
    steps.lap("initramfs")
    with QemuSession(tree, initrd, vdir, kvm=opts.kvm, append=opts.append,
                     boot_timeout=opts.boot_timeout, hang_timeout=opts.hang_timeout,
                     icount=opts.bench > 0, kaslr=opts.kaslr) as vm:
        early = dataport.parse(vm.wait_armed(), partial=True)
        steps.lap("boot")
        facts["accel"] = vm.accel
        text_addr = early.ktext[0].addr if early.ktext else None
        slide = kaslr.slide(tree.vmlinux, text_addr)
        facts["kaslr"] = {"enabled": opts.kaslr, "slide": f"{slide:#x}",
                          "guest_text": f"{text_addr:#x}"}
        claims = probe_claims(early, ko, variant.name)
        dumped = {}         # the vmcore QEMU writes while gdb holds the guest at the snapshot
        with gdb.GdbSession(tree, vm.gdb_socket, claims, vdir, slide=slide,
                            at_snapshot=lambda: dumped.update(
                                vmcore.take(vm.qmp_socket, vdir, variant.name))) as session:
            session.start()
            vm.send_go()
            try:
                truth = session.finish()
            except HarnessError:
                # A guest that panicked or reset under gdb also ends gdb's session:
                # report what the console says happened, else gdb's own failure.
                vm.wait_ready()
                raise
        steps.lap("gdb")
        data = dataport.parse(vm.wait_ready())
        facts["guest_kernel"] = data.guest.kernel if data.guest else None
        vm.resume_and_finish()
        steps.lap("guest_rest")
    # drgn reads the vmcore file once QEMU has exited (it needs no guest).
    drgn_truth = drgn.read(dumped, tree, claims, vdir, variant.name, slide,
                           keep=opts.keep_vmcore)
    facts["vmcore"] = drgn.summary(dumped, drgn_truth)
    steps.lap("drgn")
    facts["guest_phases"] = {p.name: p.uptime for p in data.phase}
    found = judge(data, truth, drgn_truth, variant, opts)
    steps.lap("compare")
    lttng_rows = ()
    if variant.lttng_series and opts.lttng:
        lttng_rows, facts["lttng"], suite, suite_s = \
            beside.result() if beside else _lttng_step(variant, tree, vdir, opts)
        if suite is not None:
            facts["lttng_suite"] = suite
        # beside the guest: only what was left to wait for
        steps.lap("lttng", {"suite": suite_s} if suite is not None else None)
    facts["resolve_ns"] = found.resolve_ns
    facts["bench"] = [dataport.row_dict(b) for b in data.bench]
    result = base_result(
        variant, tree, symbols=found.symbols,
        values=found.values + tuple(compare_symcheck(findings, variant.module_mode))
        + tuple(lttng_rows),
        samplers=found.samplers, notes=found.notes, guest_errors=found.guest_errors,
        timings=dict(steps.seconds), facts=facts)
    c = result.counts
    # unchecked rows (Agreement.UNCHECKED) are neither agreement nor failure: name them apart
    say("verify", f"{variant.name}: {c['symbols_agree']}/{c['symbols']} symbols, "
                  f"{c['values_agree']} values agree, {c['values_disagree']} disagree, "
                  f"{c['values'] - c['values_agree'] - c['values_disagree']} unchecked: "
                  f"{result.verdict}")
    return result


def variant_result(v, tree, vdir, opts, waived):
    """The seed claims and the guest run of variant `v` on its built `tree`:
    (VariantResult, HarnessError or None). A failed step is in the result too."""
    steps = _Steps()
    claims = ()
    try:
        # from the built tree alone: a port that drifts from its seed fails even
        # when its module cannot build or its guest cannot boot
        claims = tuple(seedclaims.variant_checks(tree, v, waived))
        result = boot_variant(v, tree, vdir, opts, steps)
        return replace(result, values=result.values + claims), None
    except HarnessError as err:
        say("error", err.one_line())
        return base_result(v, tree, error=step_error(err, vdir),
                           timings=dict(steps.seconds), values=claims), err


def _suite_retry(ready, trees, rundir, opts, board):
    """The suite's retry phase, once every variant's suite has run (so it never races
    a first run): each flagged point's script again on its variant and its line's
    stock (lttng/suite/retry.py), the variants re-published with their retries.
    Returns its seconds."""
    t0 = time.monotonic()
    results = board.snapshot()
    runner = suiteretry.local_runner(ready, trees, results, rundir, opts)
    for result in suiteretry.phase(results, runner):
        board.publish(result)
    return round(time.monotonic() - t0, 1)


def _meta(run_id, opts):
    return {"run_id": run_id, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "scenario": str(opts.scenario),
            "insmod_args": opts.insmod_args, "stress_cycles": opts.stress, "kaslr": opts.kaslr}


def _run_on_cluster(selected, opts, run_id, rundir, board, write, order, meta):
    from .cluster import client as cluster        # needs python3-distributed

    def arrived(result, kernel_seconds):
        board.publish(result)
        kernel_s[result.name] = kernel_seconds
        write({"kernel": dict(kernel_s)})

    kernel_s = {}
    t0 = time.monotonic()
    try:
        errors = cluster.run_jobs(selected, opts, run_id, rundir, arrived)
    except HarnessError as err:         # no scheduler or no worker: nothing ran
        errors = {v.name: err for v in selected}
    for v in selected:
        if v.name not in board.snapshot():           # never ran, or lost with the scheduler
            (rundir / v.name).mkdir(exist_ok=True)
            board.publish(base_result(v, error=step_error(errors[v.name], rundir / v.name)))
    timings = {"kernel": dict(kernel_s), "guests": round(time.monotonic() - t0, 1),
               "guest_workers": f"cluster {opts.cluster}"}
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    rep = write(timings)
    say("report", f"{rundir / 'report.md'}: verdict {rep['verdict']}")
    first_error = next((errors[n] for n in order if n in errors), None)
    if first_error is not None:
        return first_error.exit_status, rundir, first_error
    return (0 if rep["verdict"] == "pass" else 1), rundir, None


def run(names, opts):
    """Run the comparison of the variants `names` with RunOptions `opts`;
    return (exit status, run directory, first error or None)."""
    selected = opts.select(names)
    if not opts.scenario.is_file():
        raise HarnessError("usage", f"{opts.scenario}: scenario file not found")
    parse_scenario(opts.scenario)        # a bad line is a usage error before anything boots
    if opts.module_src is not None and not (opts.module_src / "Kbuild").is_file():
        raise HarnessError("usage", f"{opts.module_src}: no probe-module sources (Kbuild) there")
    run_id, rundir = new_rundir(opts.runs_root)
    say("run", f"{run_id}: variants {', '.join(v.name for v in selected)}; logs in {rundir}")
    meta = _meta(run_id, opts)
    meta["tarball"] = ", ".join(sorted({str(v.tarball) for v in selected}))
    meta["kernel_lines"] = {v.name: v.kernel_line for v in selected}
    order = [v.name for v in selected]
    waived = seeds.superseded()         # seeds whose claims are not checked
    board = Board()
    write_lock = threading.Lock()

    def write(timings):
        rep = assemble.assemble({**meta, "timings": timings}, board.snapshot(), order)
        with write_lock:
            assemble.write_all(rundir, rep)
        return rep

    if opts.cluster:
        # every variant job (tree, guests, gdb, drgn, LTTng) runs on a Dask worker
        return _run_on_cluster(selected, opts, run_id, rundir, board, write, order, meta)
    errors = {}
    trees = {}
    kernel_s = {}
    # Shared by every variant, so built once before any worker needs it.
    try:
        symcheck.ensure_built()
    except HarnessError as err:
        for v in selected:
            (rundir / v.name).mkdir(exist_ok=True)
            board.publish(base_result(v, error=step_error(err, rundir / v.name)))
        write({})
        say("error", err.one_line())
        return err.exit_status, rundir, err
    for i, v in enumerate(kernel.build_order(selected), 1):
        # Bases first (fewer patches), so a tree can derive from one built just before.
        vdir = rundir / v.name
        vdir.mkdir()
        try:
            t0 = time.monotonic()
            trees[v.name] = kernel.prepare(v, opts.cache, None, i, len(selected))
            kernel_s[v.name] = round(time.monotonic() - t0, 1)
        except HarnessError as err:
            board.publish(base_result(v, error=step_error(err, vdir)))
            errors[v.name] = err
            say("error", err.one_line())
    timings = {"kernel": kernel_s}          # no longer changed once the guests start

    # Guests run concurrently (one per CPU by default): each is one TCG thread
    # and often idle (writeback throttling), and every guest has its own
    # directory, sockets and gdb.
    def one(v):
        """Run one variant; return its HarnessError or None."""
        result, failure = variant_result(v, trees[v.name], rundir / v.name, opts, waived)
        board.publish(result)
        write(timings)                      # keep what is known after each variant
        return failure

    ready = [v for v in selected if v.name in trees]
    workers = max(1, min(len(ready) or 1, opts.jobs or os.cpu_count() or 1))
    opts = replace(opts, lttng_beside=lttng_beside(len(ready), opts))
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(one, v) for v in ready]
        try:
            for v, f in zip(ready, futures):
                err = f.result()
                if err is not None:
                    errors[v.name] = err
        except KeyboardInterrupt:
            proc.STOP.set()               # builds and gdb in the workers stop their groups
            for f in futures:
                f.cancel()
            QemuSession.close_all()       # running guests end, so the workers return
            raise
    timings = {**timings, "guests": round(time.monotonic() - t0, 1), "guest_workers": workers}
    if opts.lttng_suite:
        timings["suite_retry"] = _suite_retry(ready, trees, rundir, opts, board)
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    write(timings)
    timings["report"] = round(time.monotonic() - t0, 2)
    rep = write(timings)               # once more, with its own time recorded
    say("report", f"{rundir / 'report.md'}: verdict {rep['verdict']}")
    first_error = next((errors[n] for n in order if n in errors), None)
    if first_error is not None:
        return first_error.exit_status, rundir, first_error
    return (0 if rep["verdict"] == "pass" else 1), rundir, None
