"""One variant job in a process of its own, started by job.py on a Dask worker.

    python3 -m harness.cluster.child JOBDIR PARENT_PID

JOBDIR holds spec.pickle (a JobSpec); the child builds the variant's tree in the
worker's cache, runs it through the entry point a local run calls
(variantjob.run_job; a retry job: variantjob.run_retry) into JOBDIR/out/<variant>, and
writes JOBDIR/result.pickle. Everything happens in
the main thread, so a SIGTERM (the job cancelled, or the worker that started
us killed: PR_SET_PDEATHSIG) unwinds every build, QEMU and gdb through the
same handlers as a local run's Ctrl-C. Exit 0 whenever a result was written
(a failed step is in the result); a step's status when there is no variant to
fail (the worker's checkout does not know it); 130 when stopped; 70 on a bug.
"""

import os
import pickle
import signal
import sys
import time
import traceback
from pathlib import Path

from .. import proc, variantjob
from ..checks import seeds
from ..errors import EXIT, HarnessError
from ..prepare import cache, kernel, symcheck
from ..prepare.tree import tree_key
from . import artifacts, preflight, spec as jobspec


def _result_of(spec, jobdir):
    opts = jobspec.materialize(spec, jobdir)
    (variant,) = opts.select([spec.variant])
    vdir = jobdir / "out" / variant.name
    vdir.mkdir(parents=True, exist_ok=True)
    kernel_s = 0.0
    try:
        preflight.check(variant)
        key = tree_key(variant)
        if key != spec.tree_key:
            raise HarnessError("cluster", f"{variant.name}: this worker's checkout ({Path.cwd()}) "
                               f"builds tree {key}, the client's builds {spec.tree_key}: "
                               "check out the client's commit on the worker")
        symcheck.ensure_built()
        with cache.session():
            t0 = time.monotonic()
            tree = kernel.prepare(variant, opts.cache, None, 1, 1)
            kernel_s = round(time.monotonic() - t0, 1)
            result = _run(spec, variant, tree, jobdir, opts)
    except HarnessError as err:
        print(err.one_line(), file=sys.stderr)
        result = variantjob.base_result(variant, error=variantjob.step_error(err, vdir))
    return {"result": result, "kernel_s": kernel_s, "vdir": str(vdir)}


def _run(spec, variant, tree, jobdir, opts):
    """The job the spec asks for, through the entry points a local run calls too."""
    if spec.retry_scripts:          # the suite's retry phase (postphases.py)
        return variantjob.run_retry(variantjob.RetryJob(variant, tree, jobdir / "out", opts,
                                          spec.retry_scripts))
    return variantjob.run_job(variantjob.VariantJob(variant, tree, jobdir / "out" / variant.name, opts,
                                      frozenset(seeds.superseded())))


def main(argv):
    jobdir, parent = Path(argv[0]), int(argv[1])
    signal.signal(signal.SIGTERM, proc.stop_on_signal)
    signal.signal(signal.SIGINT, proc.stop_on_signal)
    proc.die_with_parent()
    if os.getppid() != parent:          # the worker died before prctl took effect
        return EXIT["interrupted"]
    try:
        spec = pickle.loads((jobdir / "spec.pickle").read_bytes())
        out = _result_of(spec, jobdir)
        tmp = jobdir / "result.pickle.tmp"
        tmp.write_bytes(artifacts.dump_result(out))
        os.replace(tmp, jobdir / "result.pickle")
        return 0
    except HarnessError as err:         # before there is a variant to fail (unknown here)
        print(err.one_line(), file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        print("ksymlab: job stopped (cancelled, or its worker ended)", file=sys.stderr)
        return EXIT["interrupted"]
    except Exception:           # noqa: BLE001 - a bug in the harness: the log has it
        traceback.print_exc()
        return EXIT["internal"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
