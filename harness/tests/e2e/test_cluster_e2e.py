"""--cluster end to end on a real Dask scheduler and workers on localhost.

1. The default variants through two workers, one holding every tree (the shared
   cache) and one with an empty cache of its own, over mutual TLS with
   certificates from `python3 -m harness cluster-certs`: the report has the local
   run's checks and verdicts, every job ran on the worker that holds its tree,
   the empty cache stayed empty, and every variant's files came home.
2. A worker killed (SIGKILL) while its guest runs: Dask reruns the job on the
   other worker, the run passes, and no QEMU of the killed worker is left.
3. Ctrl-C (SIGINT) or SIGTERM in the client: exit 130 with one line, every job's guest stopped
   before the client returns, the worker still serving.
4. The scheduler killed after the first variant came home: exit 50 with one
   line naming the lost scheduler, the finished variant kept in the report,
   the other failed with that reason, no guest left.
The workers of 2 hold every tree through symlinks to the session's cache (so a
rerun meets what the killed attempt left in the cache) but have job directories
of their own; the worker of 3 and 4 uses the session's cache.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import paths
from harness.cluster.local import LocalCluster, free_port, job_qemus
from harness.tests.e2e_runs import SUITE_ARGS
from harness.tests.pki_fixture import cluster_certs

pytestmark = pytest.mark.e2e

RUN_TIMEOUT = 1800


@pytest.fixture
def cluster(tmp_path):
    c = LocalCluster(tmp_path)
    c.scheduler()
    yield c
    c.close()


@pytest.fixture
def tls_cluster(tmp_path):
    """A scheduler and workers with the certificates `cluster-certs` makes."""
    c = LocalCluster(tmp_path, certs=cluster_certs(tmp_path / "pki"))
    c.scheduler()
    yield c
    c.close()


def comparable(variant):
    """(check id, verdict) of a variant's rows, with the guest's pids written as N:
    two boots give the scenario's tasks other pids (and one boot may have one more
    kernel thread, so these are sets). The call-stack frames are numbered N too: the
    guess unwinder of every ksymlab tree records the stale kernel-text words it finds
    on the stack, and two boots leave a different number of them (CI saw 10 and 11)."""
    def norm(cid):
        return re.sub(r"^lttng:kstack/frame\d+$", "lttng:kstack/frame N",
                      re.sub(r"\bpid \d+", "pid N", cid))
    return {(norm(c["id"]), c["agree"]) for c in variant["symbols"] + variant["values"]}


def run_cluster(address, runs, *args, timeout=RUN_TIMEOUT):
    return subprocess.run([sys.executable, "-m", "harness", "run", "--cluster", address,
                           "--runs-dir", str(runs), *args], cwd=paths.REPO,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_cluster_run_matches_the_local_run(tls_cluster, default_run, tmp_path):
    cluster = tls_cluster
    assert cluster.address.startswith("tls://")
    warm = cluster.worker("warm", paths.cache_root(), nthreads=2)
    cold = cluster.worker("cold", tmp_path / "cold-cache")
    # the same options as the shared local run (lttng-tools' suite on the LTTng variants)
    p = run_cluster(cluster.address, tmp_path / "runs", "--cluster-certs", str(cluster.certs),
                    *SUITE_ARGS)
    assert p.returncode == default_run.proc.returncode == 0, p.stderr[-3000:]
    local, remote = default_run.report(), json.loads(
        (tmp_path / "runs" / "latest" / "report.json").read_text())
    assert list(remote["variants"]) == list(local["variants"])
    assert remote["cluster"]["transport"] == "tls" and not remote["cluster"]["insecure"]
    # the suite options travel with the job: the same points (script:number; the
    # descriptions carry event counts) with the same results on the workers
    def points(rep):
        return {n: sorted((t["name"].split(" ", 1)[0], t["result"]) for t in e["tests"])
                for n, e in rep["lttng_suite"].items()}
    assert points(local) and points(remote) == points(local)
    for name, v in remote["variants"].items():
        lv = local["variants"][name]
        assert v["verdict"] == lv["verdict"] == "pass", name
        assert v["counts"]["values_disagree"] == lv["counts"]["values_disagree"] == 0
        assert comparable(v) == comparable(lv), name
        assert v["worker"] == warm.address, f"{name} ran on {v['worker']}, not the tree's holder"
        assert lv["worker"] == "local"
        # every file the local run wrote came home, but the vmcore and initramfs it kept
        vdir, ldir = tmp_path / "runs" / "latest" / name, default_run.latest / name
        want = {f.relative_to(ldir) for f in ldir.rglob("*") if f.is_file()
                and "vmcore" not in f.name and not f.name.endswith(".cpio")}
        got = {f.relative_to(vdir) for f in vdir.rglob("*") if f.is_file()}
        assert want <= got, f"{name}: missing {sorted(map(str, want - got))[:10]}"
        assert (vdir / "cluster-job.log").is_file()
    assert not (cold.cache / "trees").exists(), "a job went to the worker without its trees"
    # the jobs' progress reached the client's terminal as it happened
    for name in remote["variants"]:
        assert f"job: {warm.address}: verify: {name}: " in p.stderr, p.stderr[-3000:]
    assert f"ran on {warm.address}" in (tmp_path / "runs/latest/report.md").read_text()
    show = subprocess.run([sys.executable, "-m", "harness", "show",
                           str(tmp_path / "runs" / "latest")], cwd=paths.REPO,
                          capture_output=True, text=True)
    assert show.returncode == 0 and "verdict pass" in show.stdout, show.stdout + show.stderr
    assert job_qemus() == []


def _start(address, runs, *args):
    err = open(runs.parent / f"client-{time.monotonic_ns()}.err", "w+")
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", "--cluster", address,
                          "--runs-dir", str(runs), *args], cwd=paths.REPO,
                         stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    return p, err


def _first_guest(workers, client, timeout=600):
    """The worker whose job's QEMU runs first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for w in workers:
            if job_qemus(w.proc.pid):
                return w
        assert client.poll() is None, "the run ended before any guest started"
        time.sleep(0.05)
    raise AssertionError("no job's guest started")


def linked_cache(dest):
    """A cache of its own whose entries are the session cache's (symlinked kind
    directories): a worker that holds every tree, with its own cluster-jobs/."""
    dest.mkdir()
    for kind in paths.cache_root().iterdir():
        if kind.is_dir() and kind.name != "cluster-jobs":
            (dest / kind.name).symlink_to(kind)
    return dest


def test_killed_worker_reruns_elsewhere(cluster, tmp_path):
    workers = [cluster.worker(n, linked_cache(tmp_path / f"cache-{n}")) for n in ("w1", "w2")]
    p, err = _start(cluster.address, tmp_path / "runs", "--variants", "stock,exports",
                    "--no-lttng")
    victim = _first_guest(workers, p)
    victim.proc.send_signal(signal.SIGKILL)
    status = p.wait(timeout=RUN_TIMEOUT)
    err.seek(0)
    stderr = err.read()
    assert status == 0, stderr[-3000:]
    (survivor,) = [w for w in workers if w is not victim]
    report = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    assert report["verdict"] == "pass"
    assert {v["worker"] for v in report["variants"].values()} == {survivor.address}
    end = time.monotonic() + 30
    while job_qemus(victim.proc.pid) and time.monotonic() < end:
        time.sleep(0.2)
    assert job_qemus(victim.proc.pid) == [], "the killed worker's guest is still running"
    # The killed attempt's directory (nobody sweeps the victim's cache): its child
    # was stopped by the kernel's SIGTERM, it did not go on to finish the variant.
    (attempt,) = (victim.cache / "cluster-jobs").glob(f"{victim.proc.pid}-*")
    (log,) = attempt.glob("out/*/cluster-job.log")
    assert "job stopped" in log.read_text(), log.read_text()[-2000:]
    assert not (attempt / "result.pickle").exists()


def _ancestors(pid):
    out = []
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        out.append(pid)
    return out


def _module_make(workers, client, timeout=600):
    """(worker, make pid) of the first probe-module build a job starts."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        out = subprocess.run(["pgrep", "-f", "KSYMLAB_MODE="], capture_output=True,
                             text=True).stdout.split()
        for pid in map(int, out):
            for w in workers:
                if w.proc.pid in _ancestors(pid):
                    return w, pid
        assert client.poll() is None, "the run ended before any module build started"
        time.sleep(0.05)
    raise AssertionError("no job built the module")


def test_worker_killed_in_a_build_leaves_nothing_the_rerun_trips_over(cluster, tmp_path):
    """The worker is killed while its job builds the probe module into the cache both
    workers use: the rerun meets that half-built entry and must build it again."""
    src = tmp_path / "module-src"
    shutil.copytree(paths.PROBE_MODULE, src, ignore=shutil.ignore_patterns("*.o", "*.ko", ".*"))
    with open(src / "main.c", "a") as f:       # a module key no cache holds
        f.write(f"\n/* cluster kill test {time.time_ns()} */\n")
    workers = [cluster.worker(n, linked_cache(tmp_path / f"cache-{n}")) for n in ("w1", "w2")]
    p, err = _start(cluster.address, tmp_path / "runs", "--variants", "stock", "--no-lttng",
                    "--module-src", str(src))
    victim, make = _module_make(workers, p)
    victim.proc.send_signal(signal.SIGKILL)
    status = p.wait(timeout=RUN_TIMEOUT)
    err.seek(0)
    stderr = err.read()
    assert status == 0, stderr[-3000:]
    (survivor,) = [w for w in workers if w is not victim]
    report = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    assert report["variants"]["stock"]["worker"] == survivor.address
    log = (tmp_path / "runs" / "latest" / "stock" / "cluster-job.log").read_text()
    assert "stock: building in mode kprobe" in log, "the rerun did not build the module"
    assert not Path(f"/proc/{make}").exists(), "the killed job's make is still running"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_client_stops_every_job(cluster, tmp_path, sig):
    worker = cluster.worker("w", paths.cache_root(), nthreads=2)
    p, err = _start(cluster.address, tmp_path / "runs", "--variants", "stock,exports",
                    "--no-lttng")
    _first_guest([worker], p)
    p.send_signal(sig)
    status = p.wait(timeout=300)
    err.seek(0)
    stderr = err.read()
    assert status == 130, stderr[-3000:]
    assert stderr.strip().splitlines()[-1].startswith("ksymlab: interrupted"), stderr[-2000:]
    assert "Traceback" not in stderr
    assert job_qemus(worker.proc.pid) == [], "a job's guest outlived the interrupted run"
    assert worker.proc.poll() is None, "the worker died with the client"
    assert list((paths.cache_root() / "cluster-jobs").glob(f"{worker.proc.pid}-*")) == []
    # the stopped jobs' files came home, and say they were stopped (not finished)
    logs = list((tmp_path / "runs" / "latest").glob("*/cluster-job.log"))
    assert logs, "no stopped job's files came home"
    for log in logs:
        assert "job stopped" in log.read_text(), log.read_text()[-2000:]


def test_lost_scheduler_keeps_what_finished(cluster, tmp_path):
    worker = cluster.worker("w", paths.cache_root())
    p, err = _start(cluster.address, tmp_path / "runs", "--variants", "stock,exports",
                    "--no-lttng")
    end = time.monotonic() + 600
    while "home from" not in (err.seek(0) or err.read()):
        assert p.poll() is None and time.monotonic() < end, err.read()[-2000:]
        time.sleep(0.05)
    os.killpg(cluster.scheduler_proc.pid, signal.SIGKILL)
    status = p.wait(timeout=300)
    err.seek(0)
    stderr = err.read()
    assert status == 50, stderr[-3000:]
    errors = [l for l in stderr.splitlines() if l.startswith("ksymlab:")]
    assert errors and "lost the Dask scheduler" in errors[-1], stderr[-2000:]
    assert "Traceback" not in stderr
    report = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    (home,) = [n for n, v in report["variants"].items() if v["verdict"] == "pass"]
    (lost,) = [v for n, v in report["variants"].items() if n != home]
    assert lost["error"]["exit_status"] == 50 and "lost the Dask scheduler" in \
        lost["error"]["message"]
    assert (tmp_path / "runs" / "latest" / home / "console.log").stat().st_size > 0
    end = time.monotonic() + 60
    while job_qemus(worker.proc.pid) and time.monotonic() < end:
        time.sleep(0.2)
    assert job_qemus(worker.proc.pid) == [], "a job's guest outlived the lost scheduler"


def test_unreachable_scheduler_is_one_line(tmp_path):
    p = run_cluster(f"tcp://127.0.0.1:{free_port()}", tmp_path / "runs", "--variants", "stock",
                    timeout=120)
    assert p.returncode == 50, p.stderr
    errors = [l for l in p.stderr.splitlines() if l.startswith("ksymlab:")]
    assert len(errors) == 1 and errors[0].startswith(
        "ksymlab: cluster: cannot reach the Dask scheduler at tcp://127.0.0.1:"), p.stderr
    assert "Traceback" not in p.stderr
    report = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    assert report["variants"]["stock"]["error"]["exit_status"] == 50
