"""A Dask cluster on localhost, for the e2e tests and the benchmark: `dask scheduler`
and `dask worker` processes started as docs/cluster.md starts them (work stealing
off, one process per worker, the checkout on PYTHONPATH, the worker's own
KSYMLAB_CACHE, every port and HTTP endpoint bound to 127.0.0.1), each in its own
process group, all stopped by close().

LocalCluster(root, certs=DIR) is the TLS mode: scheduler and workers use DIR's
CA and their role's certificate and key (certs.py's names), encryption required;
worker(..., certs=OTHER) starts one with another directory's, as an attacker's."""

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from . import certs

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


def tls_args(directory, role):
    """The `dask scheduler`/`dask worker` options of `role` with DIR's files."""
    d = Path(directory)
    return ["--tls-ca-file", str(d / "ca.pem"), "--tls-cert", str(certs.cert_file(d, role)),
            "--tls-key", str(certs.key_file(d, role))]


TLS_ENV = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}


class LocalCluster:
    def __init__(self, root, certs=None):
        self.root = Path(root)
        self.certs = Path(certs) if certs else None
        self.procs = []
        self.address = None
        self.scheduler_proc = None

    @property
    def scheme(self):
        return "tls" if self.certs else "tcp"

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
        argv = ["dask", "scheduler", "--protocol", self.scheme, "--host", "127.0.0.1",
                "--port", str(port), "--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
        env = {"DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "False"}
        if self.certs:
            argv += tls_args(self.certs, "scheduler")
            env.update(TLS_ENV)
        p, log = self._start("scheduler", argv, env)
        self._wait_for(p, log, rf"Scheduler at:\s+{self.scheme}://")
        self.scheduler_proc = p
        self.address = f"{self.scheme}://127.0.0.1:{port}"
        return self.address

    def worker(self, name, cache, nthreads=1, certs=None, death_timeout=None, env=None):
        """A worker registered to the scheduler; with `death_timeout` (s) only started
        (one that may never register: it gives up after that long). `env`: more
        variables for it (e.g. its own KSYMLAB_TARBALL)."""
        env = {**(env or {}), "PYTHONPATH": str(paths.REPO), "KSYMLAB_CACHE": str(cache)}
        argv = ["dask", "worker", self.address, "--name", name, "--nthreads", str(nthreads),
                "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                "--dashboard-address", "127.0.0.1:0"]
        if certs or self.certs:
            argv += tls_args(certs or self.certs, "worker")
            env.update(TLS_ENV)
        if death_timeout:
            argv += ["--death-timeout", str(death_timeout)]
        p, log = self._start(name, argv, env)
        m = self._wait_for(p, log, r"Start worker at:\s+(\w+://\S+)")
        if not death_timeout:
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
