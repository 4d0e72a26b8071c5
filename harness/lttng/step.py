"""One variant's LTTng comparison: build, pack, boot, read the trace, check it.

run_lttng() raises HarnessError for a failed step (a guest panic among them);
rows_or_failure() turns that into one failed lttng:boot row so the probe-module
results of the same variant stay in the report."""

import dataclasses
import json
import shutil
import time
from pathlib import Path

from ..model.results import Check, frozen
from ..errors import HarnessError
from ..progress import say
from .supply import modbuild
from .rows import features, coverage, kstack, kvmprobe, restricted, splice, symaudit, uprobe
from .supply import fetch, image
from .boot import guestlines, session, trace
from .rows.inputs import Inputs
from ..prepare import initramfs as guestbuild

WHY = {
    "prio": "task_prio is unexported and LTTng finds it only by name",
    "callstack_user": "stack_trace_save_user is unexported and LTTng finds it only by name",
    "callstack_kernel": "LTTng finds stack_trace_save by name (a func_name variable) unless "
                        "patched to call its GPL export (patches/lttng 0006, 2.13.18/0005)",
    "statedump_block": "block_class and disk_type are unexported",
    "writeback": "global_wb_domain is unexported and not a tracepoint argument",
    "kmem": "get_pfnblock_flags_mask is unexported; the kmem probe refuses to load",
    "statedump_irq": "irq_to_desc is restricted for modules since 5.11 (64a1b95bb9fe)",
    "uprobe": "LTTng finds uprobe_register by name where the kernel does not export it",
    "splice": "LTTng finds splice_to_pipe by name where the kernel does not export it",
}


def run_lttng(variant, tree, vdir, opts, series=None, kallsyms=None, prio=True):
    """Return (rows, facts) of the LTTng boot of `variant` on `tree`."""
    series = series or variant.lttng_series
    kallsyms = variant.lttng_kallsyms if kallsyms is None else kallsyms
    ldir = Path(vdir) / "lttng"
    ldir.mkdir(parents=True, exist_ok=True)
    facts = {"version": variant.lttng_version, "series": series, "kallsyms": kallsyms}
    t0 = time.monotonic()
    out = modbuild.build(tree, series, opts.cache, kallsyms=kallsyms,
                       version=variant.lttng_version)
    facts["build_dir"] = str(out)
    facts["reused_from"] = modbuild.reused_from(out)
    facts["published"] = str(modbuild.publish(out, opts.cache, f"{variant.name}-{series}"))
    shutil.copy2(out / "build.log", ldir / "build.log")
    facts["build_s"] = round(time.monotonic() - t0, 1)
    # symcheck on the modules this boot loads (host side, before the guest)
    audit, symchecked, calltypes = symaudit.read(out, tree)
    (ldir / "symcheck.json").write_text(json.dumps({"audit": audit, "check": symchecked,
                                                    "calltypes": calltypes}, indent=1) + "\n")
    facts["symcheck"] = symaudit.summary(audit, symchecked, calltypes)
    t0 = time.monotonic()
    userspace = fetch.userspace_root(opts.cache)
    initrd = image.build(tree, out, userspace, opts.scenario, ldir, opts.cache,
                             variant.name, series, prio=prio,
                             restricted=bool(variant.lttng_restricted))
    facts["initramfs_bytes"] = initrd.stat().st_size
    facts["initramfs_s"] = round(time.monotonic() - t0, 1)
    # gdb's reading at the quiet point is also ldir/gdb.json
    try:
        data, port, truth, facts["guest_s"] = session.boot(tree, initrd, ldir, opts)
    except HarnessError as err:
        # the build is good: lttng-tools' suite can still judge it (--lttng-suite)
        err.lttng_build_dir = str(out)
        raise
    t0 = time.monotonic()
    ctx = read_boot(data, port, truth, ldir, variant.lttng_lost, facts)
    rows = features.compare(ctx)
    rows += kvmprobe.rows(tree.src, out, ctx.guest)
    rows += restricted.rows(variant.lttng_restricted, tree.src, out, ctx.guest)
    program = guestbuild.build_guest_program("lttng-ustack.c", opts.cache)
    rows += tuple(uprobe.rows(ctx, uprobe.functions(program)))
    rows += tuple(splice.rows(ctx))
    # the kernel call stack against the built vmlinux's call sites, on the host
    rows += tuple(kstack.rows_for(ctx, tree.vmlinux, tree.src / ".config"))
    rows += tuple(symaudit.rows(audit, symchecked, kallsyms, calltypes, variant.lttng_version,
                                tree.src))
    rows += coverage.rows(out, kallsyms, rows, variant.lttng_lost, variant.lttng_version,
                          variant.lttng_series, symaudit.by_name(audit))
    facts["check_s"] = round(time.monotonic() - t0, 1)
    rows = with_version(rows, variant.lttng_version)
    bad = sum(c.disagrees for c in rows)
    say("lttng", f"{variant.name}: {len(rows)} LTTng rows, {bad} disagree; "
                 f"trace {facts['trace_bytes'] // 1024} KiB")
    return rows, facts


def read_boot(data, port, truth, ldir, lost, facts):
    """The Inputs of the LTTng rows from the boot's data port, trace port and gdb stop
    (its JSON beside them in `ldir`: guest.json, summary.json); adds the trace's size,
    its event counts and gdb's reading to `facts`."""
    kinds = guestlines.read(data)
    facts["trace_bytes"] = session.decode_trace(port, ldir / "trace")
    raw = trace.read(ldir / "trace")
    (ldir / "summary.json").write_text(json.dumps(raw, indent=1) + "\n")
    (ldir / "guest.json").write_text(json.dumps(kinds, indent=1) + "\n")
    ctx = Inputs(trace.TraceSummary.parse(raw), guestlines.GuestData.parse(kinds), truth,
                 lost, WHY)
    facts["events"] = dict(sorted(ctx.summary.counts.items()))
    facts["gdb"] = {"stop_pid": truth.stop.pid, "tasks": len(truth.tasks),
                    "block_devices": len(truth.block_class),
                    "dirty_limit": truth.global_wb_domain.dirty_limit}
    return ctx


def with_version(rows, version):
    """The rows, each naming the LTTng release it judged (info["lttng_version"])."""
    return tuple(dataclasses.replace(c, info=frozen({**c.info, "lttng_version": version}))
                 for c in rows)


def rows_or_failure(variant, tree, vdir, opts):
    """run_lttng, with a failed step as one failed lttng:boot row."""
    t0 = time.monotonic()
    try:
        rows, facts = run_lttng(variant, tree, vdir, opts)
    except HarnessError as err:
        say("error", f"lttng: {err.one_line()}")
        row = Check("lttng", "boot", {"lttng": err.step}, False,
                    {"message": err.message, "log": str(err.log) if err.log else None,
                     "excerpt": err.excerpt}, f"the LTTng step failed: {err.step}")
        facts = {"version": variant.lttng_version, "error": err.step,
                 "wall_s": round(time.monotonic() - t0, 1)}
        if getattr(err, "lttng_build_dir", None):
            facts["build_dir"] = err.lttng_build_dir
        return with_version((row,), variant.lttng_version), facts
    facts["wall_s"] = round(time.monotonic() - t0, 1)
    return rows, facts
