"""A Dask cluster on localhost, for the e2e tests and the benchmark: `dask scheduler`
and `dask worker` processes started as docs/cluster.md starts them (work stealing
off, one process per worker, the checkout on PYTHONPATH, the worker's own
KSYMLAB_CACHE), each in its own process group, all stopped by close()."""

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths

START_TIMEOUT = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Worker:
    proc: subprocess.Popen
    address: str
    cache: Path


class LocalCluster:
    def __init__(self, root):
        self.root = Path(root)
        self.procs = []
        self.address = None
        self.scheduler_proc = None

    def _start(self, name, argv, env):
        log = self.root / f"{name}.log"
        out = open(log, "w")
        p = subprocess.Popen(argv, cwd=paths.REPO, env={**os.environ, **env}, stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        out.close()
        self.procs.append(p)
        return p, log

    @staticmethod
    def _wait_for(p, log, pattern):
        end = time.monotonic() + START_TIMEOUT
        while time.monotonic() < end:
            m = re.search(pattern, log.read_text(errors="replace"))
            if m:
                return m
            assert p.poll() is None, f"{log.name}: exited {p.returncode}: {log.read_text()}"
            time.sleep(0.2)
        raise AssertionError(f"{log.name}: no {pattern!r} within {START_TIMEOUT} s")

    def scheduler(self):
        port = free_port()
        p, log = self._start("scheduler", ["dask", "scheduler", "--host", "127.0.0.1",
                                           "--port", str(port), "--no-dashboard"],
                             {"DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "False"})
        self._wait_for(p, log, r"Scheduler at:\s+tcp://")
        self.scheduler_proc = p
        self.address = f"tcp://127.0.0.1:{port}"
        return self.address

    def worker(self, name, cache, nthreads=1):
        env = {"PYTHONPATH": str(paths.REPO), "KSYMLAB_CACHE": str(cache)}
        p, log = self._start(name, ["dask", "worker", self.address, "--name", name,
                                    "--nthreads", str(nthreads), "--no-nanny",
                                    "--no-dashboard"], env)
        m = self._wait_for(p, log, r"Start worker at:\s+(tcp://\S+)")
        self._wait_for(p, log, r"Registered to:")
        return Worker(p, m.group(1), Path(cache))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def job_qemus(worker_pid=None):
    """QEMU processes of cluster jobs (their files are under <cache>/cluster-jobs/),
    of one worker process if `worker_pid` is given."""
    mark = f"cluster-jobs/{worker_pid}-" if worker_pid else "cluster-jobs/"
    out = subprocess.run(["pgrep", "-af", "qemu-system"], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines() if mark in line]
