"""run.py's --cluster branch: every variant job on a Dask worker, the report as
a local run writes it, plus how the client reached the scheduler
(report.json's `cluster`: address, transport, insecure; a line in report.md)."""

import time

from ..errors import HarnessError
from ..progress import say
from . import transport


def run_on_cluster(selected, opts, run_id, rundir, board, write, order, meta, failed):
    """(exit status, run directory, first error or None), as run.run returns;
    failed(variant, HarnessError) is run.py's VariantResult of a variant that failed
    (passed in: this module does not import run.py, which imports it)."""
    from . import client as cluster        # needs python3-distributed

    def arrived(result, kernel_seconds):
        board.publish(result)
        kernel_s[result.name] = kernel_seconds
        write({"kernel": dict(kernel_s)})

    how = transport.plan(opts.cluster, opts.cluster_certs, opts.insecure_cluster)
    meta["cluster"] = how.to_json()
    if how.kind is transport.Kind.INSECURE:
        say("cluster", f"insecure: {opts.cluster} is plain TCP off the loopback "
                       "(--insecure-cluster); the report says so")
    kernel_s = {}
    t0 = time.monotonic()
    try:
        errors = cluster.run_jobs(selected, opts, run_id, rundir, arrived, how)
    except HarnessError as err:         # no scheduler or no worker: nothing ran
        errors = {v.name: err for v in selected}
    for v in selected:
        if v.name not in board.snapshot():           # never ran, or lost with the scheduler
            (rundir / v.name).mkdir(exist_ok=True)
            board.publish(failed(v, errors[v.name]))
    timings = {"kernel": dict(kernel_s), "guests": round(time.monotonic() - t0, 1),
               "guest_workers": f"cluster {opts.cluster}"}
    meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    rep = write(timings)
    say("report", f"{rundir / 'report.md'}: verdict {rep['verdict']}")
    first_error = next((errors[n] for n in order if n in errors), None)
    if first_error is not None:
        return first_error.exit_status, rundir, first_error
    return (0 if rep["verdict"] == "pass" else 1), rundir, None
