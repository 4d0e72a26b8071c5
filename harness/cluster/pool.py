"""A run's variant jobs as Dask tasks (--cluster), as run.py's local pool runs them
on this host: run_variants() publishes one VariantResult per variant, and
suite_runner() is the suite's retry runner of postphases.py, each retry one
cluster job (docs/cluster.md, "The retry phase").

Imports nothing of run.py: run.py calls this module, never the reverse.
"""

import time

from ..errors import HarnessError
from ..progress import say
from .. import variantjob
from . import client, transport


def run_variants(selected, opts, how, run_id, rundir, publish, write):
    """Every Variant of `selected` as a job on the cluster at opts.cluster, reached
    by the transport.Transport `how` (run.py's check of the inputs made it); each
    result is published as it comes home (`write(timings)` keeps the report up to
    date), a variant that never came home is published with its error. Returns
    the run's timings and the suite runner factory of the post-phases."""
    kernel_s = {}

    def arrived(result, kernel_seconds):
        publish(result)
        kernel_s[result.name] = kernel_seconds
        write({"kernel": dict(kernel_s)})

    if how.kind is transport.Kind.INSECURE:
        say("cluster", f"insecure: {opts.cluster} is plain TCP off the loopback "
                       "(--insecure-cluster); the report says so")
    t0 = time.monotonic()
    try:
        errors = client.run_jobs(selected, opts, run_id, rundir, arrived, how)
    except HarnessError as err:         # no scheduler or no worker: nothing ran
        errors = {v.name: err for v in selected}
    home = set(kernel_s)
    for v in selected:
        if v.name not in home:          # never ran, or lost with the scheduler
            (rundir / v.name).mkdir(exist_ok=True)
            publish(variantjob.base_result(v, error=variantjob.step_error(errors[v.name], rundir / v.name)))
    timings = {"kernel": dict(kernel_s), "guests": round(time.monotonic() - t0, 1),
               "guest_workers": f"cluster {opts.cluster}"}
    return timings, lambda results: suite_runner(selected, results, opts, how, run_id, rundir)


def suite_runner(selected, results, opts, how, run_id, rundir):
    """The retry runner of a cluster run: runner(variant, scripts) runs the scripts
    as one cluster job of that variant (a worker that holds its tree, with the
    LTTng build of its cache), its files under rundir/<variant>/retry/ as a local
    retry's; returns the retry entry (variantjob.run_retry's, on the worker)."""
    by_name = {v.name: v for v in selected}

    def runner(name, scripts):
        if not (results[name].facts.get("lttng") or {}).get("build_dir"):
            # as lttng/suite/retry.local_runner: the first run built no LTTng
            raise HarnessError("suite", f"{name}: no built tree or LTTng build to run "
                                        "the suite again with")
        got = {}
        errors = client.run_jobs([by_name[name]], opts, run_id, rundir,
                                 lambda result, _s: got.update(result=result), how,
                                 retry=tuple(scripts))
        if name in errors:
            raise errors[name]
        entry = got["result"].to_json().get(variantjob.RETRY_FACT)
        if entry is None:           # a worker whose checkout predates retry jobs
            raise HarnessError("cluster", f"{name}: the worker ran a whole job, not the "
                                          "suite's retry: check out the client's commit there")
        return entry
    return runner
