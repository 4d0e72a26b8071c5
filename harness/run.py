"""One A/B run: build every variant, boot it, verify it with gdb, judge, write the report.

Concurrency: the kernel trees and symcheck are built in the main thread
before any guest starts; then one worker per guest runs a variant's job
(variantjob.run_job, the entry point a cluster job's child calls too) and returns
an immutable VariantResult. Workers share nothing mutable: a result is
published to the Board under its lock, and the report is written from a
snapshot (the board replaces its dict on every publish, so a snapshot is never
changed by a later publish). With --cluster the jobs run on Dask workers
(cluster/pool.py) instead of the local pool. Either way the same post-phases
follow (postphases.py), then the judge (judge.py) decides the verdict and the
exit status, and only then the writers render it (report/assemble.py).
"""

import concurrent.futures
import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from .checks import seeds
from .prepare import kernel, symcheck
from . import judge, postphases, proc, variantjob
from .cluster import pool as clusterpool        # run -> cluster only, never back
from .report import assemble
from .lttng.suite import retry as suiteretry
from .errors import HarnessError
from .progress import say
from .guest.qemu import QemuSession
from .guest.scenario import parse as parse_scenario
from .cluster import transport as cluster_transport


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


def lttng_beside(n_variants, opts, cpus=None):
    """Whether each LTTng boot runs beside its probe-module boot: when the variants
    leave a CPU free (one guest each), and not under -icount (a benchmark's guest
    keeps its CPU to itself)."""
    cpus = opts.jobs or cpus or os.cpu_count() or 1
    return n_variants < cpus and not opts.bench


def _meta(run_id, opts, selected, how=None):
    meta = {"run_id": run_id, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "scenario": str(opts.scenario),
            "insmod_args": opts.insmod_args, "stress_cycles": opts.stress, "kaslr": opts.kaslr,
            "tarball": ", ".join(sorted({str(v.tarball) for v in selected})),
            "kernel_lines": {v.name: v.kernel_line for v in selected}}
    if how is not None:             # --cluster: how the client reached the scheduler
        meta["cluster"] = how.to_json()
    return meta


@dataclass(frozen=True)
class _Run:
    """What every step of one run shares: its id and directory, the variants in the
    order asked for, its metadata, the Board and the lock of the report files."""
    run_id: str
    rundir: Path
    order: tuple
    meta: MappingProxyType          # read-only: a writer thread reads it
    board: Board
    write_lock: threading.Lock

    def write(self, timings, finished=None):
        """Judge the published results, then write the reports of that judgement;
        return the RunVerdict. `finished`: the run's end time, once it has ended."""
        snap = self.board.snapshot()
        decided = judge.judge(snap, self.order)
        meta = {**self.meta, "finished": finished} if finished else self.meta
        rep = assemble.assemble({**meta, "timings": timings}, snap, self.order, decided)
        with self.write_lock:
            assemble.write_all(self.rundir, rep)
        return decided


def _check_inputs(opts):
    """Bad input is a usage error before anything builds or boots. Returns how a
    --cluster run reaches its scheduler (cluster/transport.py), else None."""
    if not opts.scenario.is_file():
        raise HarnessError("usage", f"{opts.scenario}: scenario file not found")
    parse_scenario(opts.scenario)        # a bad line is a usage error before anything boots
    if opts.module_src is not None and not (opts.module_src / "Kbuild").is_file():
        raise HarnessError("usage", f"{opts.module_src}: no probe-module sources (Kbuild) there")
    if opts.cluster:        # a bad address or certificate directory: before anything is made
        return cluster_transport.plan(opts.cluster, opts.cluster_certs, opts.insecure_cluster)
    return None


def run(names, opts):
    """Run the comparison of the variants `names` with RunOptions `opts`;
    return (exit status, run directory, first error or None)."""
    selected = opts.select(names)
    how = _check_inputs(opts)
    run_id, rundir = new_rundir(opts.runs_root)
    say("run", f"{run_id}: variants {', '.join(v.name for v in selected)}; logs in {rundir}")
    ctx = _Run(run_id, rundir, tuple(v.name for v in selected),
               MappingProxyType(_meta(run_id, opts, selected, how)),
               Board(), threading.Lock())
    if opts.cluster:
        # every variant job (tree, guests, gdb, drgn, LTTng) runs on a Dask worker
        timings, runner_for = clusterpool.run_variants(selected, opts, how, run_id, rundir,
                                                       ctx.board.publish, ctx.write)
    else:
        timings, runner_for = _run_locally(ctx, selected, opts)
    # the same phases after the jobs, whichever way they ran (postphases.POST_PHASES)
    timings.update(postphases.run_all(ctx.board, runner_for, opts))
    finished = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    ctx.write(timings, finished)
    timings["report"] = round(time.monotonic() - t0, 2)
    decided = ctx.write(timings, finished)     # once more, with its own time recorded
    say("report", f"{rundir / 'report.md'}: verdict {decided.verdict.value}")
    return decided.exit_status, rundir, decided.error()


def _failed_everywhere(ctx, selected, err):
    """Every variant failed by `err`, a step they share (symcheck's build)."""
    say("error", err.one_line())
    for v in selected:
        (ctx.rundir / v.name).mkdir(exist_ok=True)
        ctx.board.publish(variantjob.base_result(v, error=variantjob.step_error(err, ctx.rundir / v.name)))


def _prepare_trees(ctx, selected, opts):
    """The kernel trees, in the main thread before any guest: ({variant: Tree},
    {variant: seconds}); a tree that fails is its variant's published error."""
    trees, kernel_s = {}, {}
    for i, v in enumerate(kernel.build_order(selected), 1):
        # Bases first (fewer patches), so a tree can derive from one built just before.
        vdir = ctx.rundir / v.name
        vdir.mkdir()
        try:
            t0 = time.monotonic()
            trees[v.name] = kernel.prepare(v, opts.cache, None, i, len(selected))
            kernel_s[v.name] = round(time.monotonic() - t0, 1)
        except HarnessError as err:
            ctx.board.publish(variantjob.base_result(v, error=variantjob.step_error(err, vdir)))
            say("error", err.one_line())
    return trees, kernel_s


def _run_locally(ctx, selected, opts):
    """Every variant's job on this host: (the run's timings, the suite runner factory
    of the post-phases)."""
    try:
        # Shared by every variant, so built once before any worker needs it.
        symcheck.ensure_built()
    except HarnessError as err:
        _failed_everywhere(ctx, selected, err)
        return {}, lambda results: suiteretry.local_runner([], {}, results, ctx.rundir, opts)
    trees, kernel_s = _prepare_trees(ctx, selected, opts)
    timings = {"kernel": kernel_s}          # no longer changed once the guests start
    ready = [v for v in selected if v.name in trees]
    workers = max(1, min(len(ready) or 1, opts.jobs or os.cpu_count() or 1))
    opts = replace(opts, lttng_beside=lttng_beside(len(ready), opts))
    waived = frozenset(seeds.superseded())      # seeds whose claims are not checked
    jobs = [variantjob.VariantJob(v, trees[v.name], ctx.rundir / v.name, opts, waived)
            for v in ready]
    t0 = time.monotonic()
    _pool(ctx, jobs, workers, timings)
    timings = {**timings, "guests": round(time.monotonic() - t0, 1), "guest_workers": workers}
    return timings, lambda results: suiteretry.local_runner(ready, trees, results,
                                                            ctx.rundir, opts)


def _pool(ctx, jobs, workers, timings):
    """Run the VariantJobs `workers` at a time. Guests run concurrently (one per CPU by
    default): each is one TCG thread and often idle (writeback throttling), and every
    guest has its own directory, sockets and gdb."""
    def one(j):
        ctx.board.publish(variantjob.run_job(j))
        ctx.write(timings)                  # keep what is known after each variant

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(one, j) for j in jobs]
        try:
            for f in futures:
                f.result()
        except KeyboardInterrupt:
            proc.STOP.set()               # builds and gdb in the workers stop their groups
            for f in futures:
                f.cancel()
            QemuSession.close_all()       # running guests end, so the workers return
            raise
