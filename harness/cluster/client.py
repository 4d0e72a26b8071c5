"""The client side of --cluster: one Dask task per variant job, results home.

run_jobs() connects to the scheduler over the transport.py Transport run.py
checked (mutual TLS with the client's certificate, or TCP on the loopback;
unreachable or a refused handshake: exit status 50, one line naming which),
asks the workers which trees they hold (affinity.py), submits one task per
variant, and as each finishes writes its files under the client's run
directory and hands its VariantResult to run.py. Ctrl-C or SIGTERM sets the
run's cancel Event, which every job polls (job.py), waits until the jobs have
stopped their guests, then cancels the futures. A scheduler lost mid-run
cancels every future (Dask's client does so when it cannot reconnect): the
variants not yet home fail with that reason, the finished ones are kept.
"""

import logging
import time
import uuid
from dataclasses import replace

from .. import proc
from ..prepare.tree import tree_key
from ..errors import HarnessError
from ..progress import say
from ..variantjob import RETRY_FACT
from . import affinity, artifacts, job, reasons, spec as jobspec, transport

CONNECT_TIMEOUT = 15        # seconds to reach the scheduler
WORKER_TIMEOUT = 60         # seconds for a first worker to join
STOP_TIMEOUT = job.STOP_GRACE + 30     # seconds the jobs get to stop after a cancel


def _distributed():
    try:
        import distributed
    except ImportError as e:
        raise HarnessError("deps", "--cluster needs Dask: apt-get install python3-distributed") \
            from e
    return distributed


def _unreachable(address, e):
    """The one-line HarnessError of a failed connect, naming a refused TLS handshake
    as such (Dask words it as a timeout)."""
    tls = reasons.tls_failure(e)
    if tls:
        return HarnessError("cluster", f"the Dask scheduler at {address} and this client "
                            f"refused each other's TLS: {tls} (are both certificates of the "
                            "same CA? --cluster-certs, docs/cluster.md)")
    hint = ""
    if address.startswith("tcp://") and "handshake" in str(e):
        hint = " (a scheduler that requires TLS does not answer plain TCP: use tls://)"
    return HarnessError("cluster", f"cannot reach the Dask scheduler at {address}: "
                        f"{reasons.first_line(e)}{hint}")


def connect(address, timeout=CONNECT_TIMEOUT, security=None):
    """A Client of the scheduler at `address`, with at least one worker."""
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False,
                                    security=security)
    except (OSError, TimeoutError, ValueError) as e:
        raise _unreachable(address, e) from e
    try:
        client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
    except (TimeoutError, OSError) as e:
        client.close()
        raise HarnessError("cluster", f"no Dask worker joined the scheduler at {address} "
                           f"within {WORKER_TIMEOUT} s") from e
    return client


def _stealing_on(client):
    try:
        return client.run_on_scheduler(lambda dask_scheduler: "stealing" in
                                       dask_scheduler.extensions)
    except Exception:           # noqa: BLE001 - only a hint
        return False


def receive(outcome, rundir):
    """The JobOutcome's files under rundir/<variant>; (VariantResult or None, kernel seconds)."""
    vdir = rundir / outcome.variant
    artifacts.unpack(outcome.artifacts, vdir)
    if outcome.result is None:
        return None, 0.0
    got = artifacts.load_result(outcome.result)
    result = artifacts.relocate(got["result"], got["vdir"], vdir)
    return replace(result, worker=outcome.worker), got["kernel_s"]


def _no_result(outcome):
    why = outcome.stopped or f"its child exited {outcome.status} without a result"
    tail = outcome.log_tail.strip().splitlines()
    last = f": {tail[-1]}" if tail else ""
    return HarnessError("cluster", f"{outcome.variant} on {outcome.worker}: {why}{last}")


def log_to(path):
    """Dask's own log lines (reconnect attempts, tracebacks of a lost scheduler) go
    to `path`, not the terminal: a failure is one line there, the details here."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in ("distributed", "tornado", "bokeh"):
        logger = logging.getLogger(name)
        for h in list(logger.handlers):
            logger.removeHandler(h)
        logger.addHandler(handler)
        logger.propagate = False
    # anything else (asyncio's task errors) would reach logging's last-resort stderr
    logging.getLogger().addHandler(handler)


def run_jobs(selected, opts, run_id, rundir, arrived, how, retry=()):
    """Run every Variant of `selected` on the cluster at opts.cluster, reached by the
    transport.Transport `how`; `arrived(result, kernel_seconds)` is called as each
    comes home. Returns {variant: HarnessError} of those that failed (a failed step,
    a lost job, or the lost scheduler). With `retry` (suite scripts), each job is
    the suite's retry of those (cluster/pool.py)."""
    distributed = _distributed()
    log_to(rundir / "cluster-client.log")
    client = connect(opts.cluster, security=transport.security(how))
    try:
        return _run(distributed, client, selected, opts, run_id, rundir, arrived, retry)
    finally:
        client.close()


def _show_progress(event):
    """A job's progress line, as the worker logged it: (time, "variant@worker line")."""
    _, msg = event
    say("job", str(msg))


def _submit(distributed, client, selected, opts, run_id, event_name, retry=()):
    keys = {v.name: tree_key(v) for v in selected}
    holdings = client.run(affinity.held_trees, sorted(set(keys.values())))
    placements = affinity.choose([(v.name, keys[v.name]) for v in selected], holdings)
    if _stealing_on(client):
        say("cluster", "the scheduler steals work: a job may move to a worker that must "
                       "build its tree (start it with DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING"
                       "=False, docs/cluster.md)")
    topic = f"{event_name}-progress"
    client.subscribe_topic(topic, _show_progress)
    futures = {}
    for v, p in zip(selected, placements):
        spec = jobspec.make(opts, v, keys[v.name], run_id, event_name, topic, retry)
        say("cluster", f"{v.name}: submitted; {p.reason}")
        futures[v.name] = client.submit(
            job.variant_job, spec, key=f"ksymlab-{run_id}-{v.name}-{uuid.uuid4().hex[:8]}",
            workers=list(p.workers) or None, allow_other_workers=bool(p.workers), pure=False)
    return futures


def _run(distributed, client, selected, opts, run_id, rundir, arrived, retry=()):
    event_name = f"ksymlab-cancel-{run_id}-{uuid.uuid4().hex[:8]}"
    cancel = distributed.Event(event_name, client=client)
    futures = _submit(distributed, client, selected, opts, run_id, event_name, retry)
    errors = {}
    pending = dict(futures)
    try:
        while pending:
            proc.check_stop("cluster")
            _wait_any(pending.values(), 1.0)
            for name, f in list(pending.items()):
                if f.status == "pending":
                    continue
                del pending[name]
                err = _collect(f, name, rundir, arrived, opts.cluster)
                if err is not None:
                    errors[name] = err
    except (KeyboardInterrupt, HarnessError) as e:
        if isinstance(e, HarnessError) and e.message != "interrupted":
            raise
        _stop_all(client, cancel, list(pending.values()), rundir)
        raise KeyboardInterrupt from None
    return errors


def _wait_any(futures, seconds, every=0.2):
    """Return when one of `futures` is done or after `seconds` (then the caller
    looks at STOP). Polled: distributed.wait() needs a default client."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not any(f.done() for f in futures):
        time.sleep(every)


def _wait_all(futures, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not all(f.done() for f in futures):
        time.sleep(0.5)


def _collect(future, name, rundir, arrived, address):
    """One finished future: its result published through `arrived`, or its error."""
    if future.status == "cancelled":
        return HarnessError("cluster", f"{name}: lost the Dask scheduler at {address} "
                            "before the job came home")
    if future.status == "error":
        exc = future.exception()
        return HarnessError("cluster", f"{name}: the Dask task failed: "
                            f"{type(exc).__name__}: {exc}")
    outcome = future.result()
    result, kernel_s = receive(outcome, rundir)
    if result is None:
        err = _no_result(outcome)
        say("error", err.one_line())
        return err
    what = "its suite retry" if RETRY_FACT in result.facts else result.verdict
    say("cluster", f"{name}: home from {outcome.worker} ({outcome.host}): {what}")
    arrived(result, kernel_s)
    if result.error is not None:
        return HarnessError(result.error.step, result.error.message, result.error.log)
    return None


def _stop_all(client, cancel, futures, rundir):
    """Tell every job to stop, wait until they have (their guests are gone), bring
    home the files of those that stopped (their logs say how far they got), cancel."""
    say("cluster", "interrupted: telling every job to stop its builds, guests and gdb")
    try:
        cancel.set()
        _wait_all(futures, STOP_TIMEOUT)
        for f in futures:
            if f.status == "finished":
                outcome = f.result()
                artifacts.unpack(outcome.artifacts, rundir / outcome.variant)
    except Exception:           # noqa: BLE001 - the scheduler may be gone already
        pass
    try:
        client.cancel(futures)
    except Exception:           # noqa: BLE001
        pass
