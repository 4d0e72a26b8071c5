"""The Dask task of one variant job: variant_job(spec) runs on a worker.

It checks nothing itself: a child process (child.py) does the job, so that a
cancelled job can be stopped (Dask's cancel() cannot stop a running
function) and so that the child, its builds, guests and gdb end with the worker
(the child asks for SIGTERM when its starting thread ends, and stops them all
in its handler). The task polls the run's cancel Event once a second; a set
Event, or a scheduler that no longer answers, stops the child.

Each attempt gets a fresh job directory under the worker's cache, so a task
that Dask reruns after a worker died never meets a half-written run directory
(a cache entry half-written by the dead worker is the cache's own business:
entries are complete or absent, prepare/cache.py). The directory is removed once
its files are packed; directories of dead workers' attempts are swept.
"""

import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import paths, proc
from ..errors import EXIT
from . import artifacts, reasons, workerenv

STAMP = re.compile(r"^\[\s*[\d.]+s\]\s*")     # progress.say's "[   12.3s] "
POLL = 1.0                  # seconds between looks at the cancel Event
STOP_GRACE = 60.0           # a guest, gdb and a build wind down within this


@dataclass(frozen=True)
class JobOutcome:
    variant: str
    worker: str                     # the Dask worker's address
    host: str
    result: Optional[bytes]         # artifacts.dump_result({result, kernel_s, vdir}) or None
    artifacts: bytes                # tar of the job's run directory
    vdir: str                       # that directory on the worker (relocated by the client)
    status: int                     # the child's exit status
    stopped: str = ""               # why the job was stopped, if it was
    log_tail: str = ""              # the child's last lines when it wrote no result


def _alive(pid):
    """Is process `pid` running? A zombie (killed, not yet reaped by whoever
    started the worker) is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def sweep(root):
    """Remove job directories whose worker process is gone (name: <pid>-...)."""
    if not root.is_dir():
        return
    for d in root.iterdir():
        pid = d.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def _cancel_requested(event_name):
    """'' while the run goes on; else why the job must stop."""
    if not event_name:
        return ""
    try:
        from distributed import Event
        return "the client cancelled the run" if Event(event_name).is_set() else ""
    except Exception as e:      # noqa: BLE001 - any failure here means no scheduler
        return lost_scheduler(e)


def lost_scheduler(e):
    """Why the scheduler could not be asked: a refused TLS handshake, or no answer."""
    tls = reasons.tls_failure(e)
    if tls:
        return f"the scheduler refused this worker's TLS ({tls})"
    return f"the scheduler does not answer ({type(e).__name__}: {reasons.first_line(e)})"


def _tail(log, n=15):
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def _log_event(topic, line):
    """Send a progress line to the client (Dask's worker event log, which the client
    subscribes to); outside a worker nothing is sent."""
    if not topic:
        return
    try:
        from distributed import get_worker
        get_worker().log_event(topic, line)
    except (ImportError, ValueError):
        pass


class _Lines:
    """The complete lines appended to a log file since the last call."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def new(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        return data[:end].decode(errors="replace").splitlines()


def _worker_address():
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return f"local:{os.getpid()}"


def _refused(spec, why):
    """The JobOutcome of a job this worker cannot start: no files, `why` as the reason."""
    with tempfile.TemporaryDirectory() as empty:
        nothing = artifacts.pack(empty)
    return JobOutcome(variant=spec.variant, worker=_worker_address(), host=socket.gethostname(),
                      result=None, artifacts=nothing, vdir="", status=EXIT["cluster"],
                      stopped=why)


def variant_job(spec, cancel_check=_cancel_requested, forward=_log_event):
    """Run the JobSpec `spec` here; return a JobOutcome (never raises for a failed step).
    The child's progress lines go to forward(spec.progress_topic, line) as they come."""
    problem = workerenv.cache_problem(paths.cache_root())
    if problem:
        return _refused(spec, problem)
    root = paths.cache_root() / "cluster-jobs"
    sweep(root)
    jobdir = root / f"{os.getpid()}-{spec.run_id}-{spec.variant}-{time.monotonic_ns()}"
    vdir = jobdir / "out" / spec.variant
    vdir.mkdir(parents=True)
    (jobdir / "spec.pickle").write_bytes(pickle.dumps(spec))
    # a retry job's files join the first job's directory on the client: its own log name
    log = vdir / ("cluster-retry.log" if spec.retry_scripts else "cluster-job.log")
    stopped = ""
    lines = _Lines(log)
    where = _worker_address()

    def send_new_lines():
        for line in lines.new():
            # the child's own clock prefix goes; the client's progress line has its own
            forward(spec.progress_topic, f"{where}: {STAMP.sub('', line)}")

    with open(log, "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "harness.cluster.child", str(jobdir), str(os.getpid())],
            cwd=paths.REPO, env=workerenv.child_env(os.environ), stdout=out,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            while child.poll() is None:
                send_new_lines()
                stopped = cancel_check(spec.cancel_event)
                if stopped:
                    break
                try:
                    child.wait(timeout=POLL)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            proc.stop_group(child, grace=STOP_GRACE)
    status = child.wait()
    send_new_lines()
    result_file = jobdir / "result.pickle"
    result = result_file.read_bytes() if result_file.is_file() and not stopped else None
    outcome = JobOutcome(
        variant=spec.variant, worker=where, host=socket.gethostname(),
        result=result, artifacts=artifacts.pack(vdir, keep_optional=spec.keep_optional),
        vdir=str(vdir), status=status, stopped=stopped,
        log_tail="" if result else _tail(log))
    shutil.rmtree(jobdir, ignore_errors=True)
    return outcome
