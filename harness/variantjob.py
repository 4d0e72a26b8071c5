"""One variant job: the steps of one variant on its built tree, wherever it runs.

run_job(VariantJob) -> VariantResult is the one entry point of a variant's run:
the local thread pool (run.py) and a cluster job's child process
(cluster/child.py) both call it, so a variant runs the same steps either way.
A failed step is in the result (VariantResult.error), never raised, except a
stop (Ctrl-C, SIGTERM), which unwinds.

retry_suite() is the other job a worker can be asked for: lttng-tools' scripts
once more on a built tree (the suite's retry phase, postphases.py).
"""

import concurrent.futures
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .oracles import addr2line, drgn, gdb
from .checks import labels
from .checks import drgn_columns, seedclaims
from .model.results import StepError, VariantResult
from .checks.symbols import compare_symcheck
from .checks.variant import compare_variant, expect_degraded
from .guest import dataport, kaslr, vmcore
from .prepare import initramfs, module, symcheck
from . import steps as stepnames
from .lttng import step as lttngrun
from .lttng.supply import modbuild
from .lttng.suite import retry as suiteretry, runner as suiterun
from .errors import HarnessError
from .progress import say
from .guest.qemu import QemuSession

# Console classifications, each a distinct verdict in the report.
FAULT_VERDICTS = ("panic", "oops", "warning", "hang", "reboot", "timeout", "boot", "guest")


@dataclass(frozen=True)
class VariantJob:
    """What one variant's run needs: the Variant, its built tree, the directory its
    files go to, the run's options and the seeds whose claims are waived."""
    variant: Any                    # prepare.variants.Variant
    tree: Any                       # prepare.tree.Tree, built
    vdir: Path
    opts: Any                       # options.RunOptions
    waived: frozenset = frozenset()


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


class Laps:
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


def run_job(job):
    """The seed claims and the guest run of job.variant on its built tree: a
    VariantResult, with a failed step as its error."""
    laps = Laps()
    claims = ()
    v = job.variant
    try:
        # from the built tree alone: a port that drifts from its seed fails even
        # when its module cannot build or its guest cannot boot
        claims = tuple(seedclaims.variant_checks(job.tree, v, job.waived))
        result = boot_variant(v, job.tree, job.vdir, job.opts, laps)
        return replace(result, values=result.values + claims)
    except HarnessError as err:
        say("error", err.one_line())
        return base_result(v, job.tree, error=step_error(err, job.vdir),
                           timings=dict(laps.seconds), values=claims)


def lttng_step(variant, tree, vdir, opts):
    """The LTTng boot of `variant` (issue 13: Debian's LTTng in a boot of its own) and,
    with --lttng-suite, lttng-tools' kernel tests with its modules (issue 23):
    (rows, the boot's facts, the suite's facts or None, the suite's seconds)."""
    rows, facts = lttngrun.rows_or_failure(variant, tree, vdir, opts)
    suite, t0 = None, time.monotonic()
    if opts.lttng_suite and facts.get("build_dir"):
        suite = suiterun.run_or_failure(variant, tree, Path(facts["build_dir"]), vdir, opts,
                                        opts.lttng_suite_timeout, opts.lttng_suite_only)
    return rows, facts, suite, round(time.monotonic() - t0, 2)


def boot_variant(variant, tree, vdir, opts, laps):
    """Boot one variant, verify it at the snapshot; return its VariantResult. With a
    spare CPU (opts.lttng_beside) the LTTng boot runs at the same time in a thread of
    its own: two guests that share nothing but the built tree."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        beside = None
        if variant.lttng_series and opts.lttng and opts.lttng_beside:
            beside = pool.submit(lttng_step, variant, tree, vdir, opts)
        return run_variant(variant, tree, vdir, opts, laps, beside)


@dataclass(frozen=True)
class GuestReading:
    """What the probe-module boot read: the guest's data, gdb's and drgn's truth."""
    claims: dict
    data: Any
    truth: Any
    drgn_truth: Any


def run_variant(variant, tree, vdir, opts, laps, beside=None):
    """The probe-module boot and its checks, then the LTTng step's (`beside`: its
    future when it already runs)."""
    facts = {}
    ko = module.build(tree, variant.module_mode, opts.cache, opts.module_src)
    findings = symcheck.findings(ko, tree)
    facts["symcheck"] = findings
    shutil.copy2(ko.parent / "build.log", vdir / "module-build.log")
    laps.lap("module")
    initrd = initramfs.build(tree, ko, opts.scenario, vdir, variant.module_mode, opts.cache,
                             opts.insmod_args, opts.stress, opts.bench)
    laps.lap("initramfs")
    g = _boot_and_read(variant, tree, ko, initrd, vdir, opts, laps, facts)
    found = compare(variant, g, opts)
    laps.lap("compare")
    lttng_rows = ()
    if variant.lttng_series and opts.lttng:
        lttng_rows, facts["lttng"], suite, suite_s = \
            beside.result() if beside else lttng_step(variant, tree, vdir, opts)
        if suite is not None:
            facts["lttng_suite"] = suite
        # beside the guest: only what was left to wait for
        laps.lap("lttng", {"suite": suite_s} if suite is not None else None)
    facts["resolve_ns"] = found.resolve_ns
    facts["bench"] = [dataport.row_dict(b) for b in g.data.bench]
    result = probe_result(variant, tree, found, findings, lttng_rows,
                          timings=dict(laps.seconds), facts=facts)
    _say_counts(result)
    return result


def probe_result(variant, tree, found, findings, lttng_rows=(), **kw):
    """The VariantResult of the probe-module boot's rows (`found`, compare()), symcheck's
    `findings` on the module and the LTTng boot's rows: run's and a session's."""
    return base_result(
        variant, tree, symbols=found.symbols,
        values=found.values + tuple(compare_symcheck(findings, variant.module_mode))
        + tuple(lttng_rows),
        samplers=found.samplers, notes=found.notes, guest_errors=found.guest_errors, **kw)


def _boot_and_read(variant, tree, ko, initrd, vdir, opts, laps, facts):
    """QEMU with gdb at the snapshot and a vmcore of it, then drgn on the vmcore."""
    with QemuSession(tree, initrd, vdir, kvm=opts.kvm, append=opts.append,
                     boot_timeout=opts.boot_timeout, hang_timeout=opts.hang_timeout,
                     icount=opts.bench > 0, kaslr=opts.kaslr, cpus=opts.guest_cpus) as vm:
        early = dataport.parse(vm.wait_armed(), partial=True)
        laps.lap("boot")
        facts["accel"] = vm.accel
        claims, slide = probe_claims(variant, tree, ko, early, opts, facts)
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
        laps.lap("gdb")
        data = dataport.parse(vm.wait_ready())
        facts["guest_kernel"] = data.guest.kernel if data.guest else None
        vm.resume_and_finish()
        laps.lap("guest_rest")
    # drgn reads the vmcore file once QEMU has exited (it needs no guest).
    drgn_truth = drgn.read(dumped, tree, claims, vdir, variant.name, slide,
                           keep=opts.keep_vmcore)
    facts["vmcore"] = drgn.summary(dumped, drgn_truth)
    laps.lap("drgn")
    facts["guest_phases"] = {p.name: p.uptime for p in data.phase}
    return GuestReading(claims, data, truth, drgn_truth)


def probe_claims(variant, tree, ko, early, opts, facts):
    """gdb-in.json and drgn-in.json (what gdb and drgn are asked to read) from the
    guest's early lines, and the KASLR slide."""
    text_addr = early.ktext[0].addr if early.ktext else None
    slide = kaslr.slide(tree.vmlinux, text_addr)
    facts["kaslr"] = {"enabled": opts.kaslr, "slide": f"{slide:#x}",
                      "guest_text": f"{text_addr:#x}"}
    if not early.pbinfo:
        raise HarnessError("verify", f"{variant.name}: the guest reported no pageblock order")
    if not any(s.addr for s in early.section):
        raise HarnessError("verify", f"{variant.name}: the guest reported no module "
                           "section addresses (/sys/module/ksymlab_probe/sections)")
    claims = {"symbols": [s.name for s in early.symbol if s.method != "unresolved"],
              "module": str(ko),
              "sections": {s.name: s.addr for s in early.section},
              "pageblock_order": early.pbinfo[0].order,
              # gdb stops at each of the guest's snapshots (checks/snapshots.py)
              "snapshots": early.snapshots[0].count if early.snapshots else 1}
    return claims, slide


def compare(variant, g, opts):
    """The module's rows against gdb, drgn and the guest's own files."""
    # The guest program is static and not PIE: its frames name without a load base.
    names = addr2line.function_names(initramfs.build_guest_program("ustack.c", opts.cache),
                                     [f.ip for f in g.data.frame])
    found = compare_variant(g.data, g.truth, opts.stress, variant, names)
    found = drgn_columns.merge(found, g.data, g.truth, g.drgn_truth)   # drgn's columns and rows
    found = expect_degraded(found, variant.degraded)
    found = labels.require_independent(found)
    return replace(found, notes=found.notes + gdb.notes(g.truth))     # gdb's caveats


def _say_counts(result):
    c = result.counts
    # unchecked rows (Agreement.UNCHECKED) are neither agreement nor failure: name them apart
    say("verify", f"{result.name}: {c['symbols_agree']}/{c['symbols']} symbols, "
                  f"{c['values_agree']} values agree, {c['values_disagree']} disagree, "
                  f"{c['values'] - c['values_agree'] - c['values_disagree']} unchecked: "
                  f"{result.verdict}")


# The fact of a retry job's VariantResult that holds its retry entry
RETRY_FACT = "suite_retry"


@dataclass(frozen=True)
class RetryJob:
    """lttng-tools' `scripts` once more on `variant`'s built tree (postphases.py),
    their files in outdir/<variant>/retry/."""
    variant: Any
    tree: Any
    outdir: Path
    opts: Any
    scripts: tuple


def run_retry(job) -> VariantResult:
    """A RetryJob where the variant's first run ran (a cluster worker): the retry entry,
    as retry.local_runner makes it on the host that ran the first run, in a
    VariantResult's facts[RETRY_FACT]. The LTTng build is the cache's (the same key
    gives the same build as the first run's)."""
    v = job.variant
    build = modbuild.build(job.tree, v.lttng_series, job.opts.cache,
                           kallsyms=v.lttng_kallsyms, version=v.lttng_version)
    first = base_result(v, job.tree, facts={"lttng": {"build_dir": str(build)}})
    runner = suiteretry.local_runner([v], {v.name: job.tree}, {v.name: first}, job.outdir,
                                     job.opts)
    entry = runner(v.name, tuple(job.scripts))
    return base_result(v, job.tree, facts={RETRY_FACT: entry})
