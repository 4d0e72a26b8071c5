"""What a variant job needs on a worker, with no path of the client's machine in it.

The client's files (scenario, --variant-file files, a --module-src tree) travel
as their contents; the worker's own checkout supplies the patches and kernel
configuration, and its own KSYMLAB_CACHE and KSYMLAB_TARBALL apply. The tree
key the client computed travels too: a worker whose checkout would build a
different tree (another commit, edited patches) refuses the job.
"""

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

from ..options import RunOptions
from .artifacts import pack, unpack

# RunOptions fields that mean the same on every machine
PORTABLE = ("kvm", "append", "boot_timeout", "hang_timeout", "insmod_args", "stress",
            "bench", "kaslr", "keep_vmcore", "lttng", "lttng_suite", "lttng_suite_only",
            "lttng_suite_timeout", "guest_cpus")


@dataclass(frozen=True)
class JobSpec:
    run_id: str
    variant: str
    tree_key: str                   # computed by the client from its checkout
    options: tuple                  # (name, value) of the PORTABLE RunOptions fields
    scenario_name: str
    scenario_text: str
    variant_files: tuple = ()       # (file name, text) of the client's --variant-file files
    module_src_tar: Optional[bytes] = None   # the client's --module-src tree, if given
    cancel_event: str = ""          # Dask Event the job polls; set: stop now
    progress_topic: str = ""        # Dask event topic the job's progress lines go to
    keep_optional: bool = False     # send initramfs images back too
    retry_scripts: tuple = ()       # a retry job: these suite scripts (variantjob.run_retry)


def make(opts, variant, tree_key, run_id, cancel_event, progress_topic="", retry_scripts=()):
    """The JobSpec of `variant` (a Variant) for a run with RunOptions `opts`; with
    `retry_scripts`, the job of the suite's retry phase for those scripts."""
    return JobSpec(
        run_id=run_id, variant=variant.name, tree_key=tree_key,
        options=tuple((k, getattr(opts, k)) for k in PORTABLE),
        scenario_name=opts.scenario.name, scenario_text=opts.scenario.read_text(),
        variant_files=tuple((Path(f).name, Path(f).read_text()) for f in opts.variant_files),
        module_src_tar=pack(opts.module_src, keep_optional=True) if opts.module_src else None,
        cancel_event=cancel_event, progress_topic=progress_topic,
        retry_scripts=tuple(retry_scripts))


def materialize(spec, jobdir):
    """On the worker: write the spec's files below `jobdir`; return its RunOptions
    (runs go to jobdir/runs, cache, tarball and patches from the worker's env)."""
    inputs = jobdir / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    scenario = inputs / spec.scenario_name
    scenario.write_text(spec.scenario_text)
    vfiles = []
    for name, text in spec.variant_files:
        vdir = inputs / "variant-files"
        vdir.mkdir(exist_ok=True)
        (vdir / name).write_text(text)
        vfiles.append(vdir / name)
    module_src = None
    if spec.module_src_tar is not None:
        module_src = inputs / "module-src"
        unpack(spec.module_src_tar, module_src)
    given = dict(spec.options)
    assert set(given) <= {f.name for f in fields(RunOptions)}
    return RunOptions.from_env(runs_root=jobdir / "runs", scenario=scenario, jobs=1,
                               variant_files=vfiles, module_src=module_src, **given)
