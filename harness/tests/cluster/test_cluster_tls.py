"""--cluster tls:// against a REAL scheduler and two workers started with TLS on
localhost (LocalCluster's TLS mode, certificates from `python3 -m harness
cluster-certs`), tried as an attacker would: no kernel is built and no guest boots.

A client without a certificate, one with another CA's, one with another CA's
certificate but our CA, and a plain-TCP client are each refused (the harness
exits 50 with the reason in one line); a worker with a foreign certificate does
not join; the right certificates carry a job there and home (the job stops at
the worker's missing kernel tarball, by design: the rows of a whole run over
TLS are test_cluster_run_matches_the_local_run, e2e). Each refusal has its
control: the same attempt with our files gets in."""

import asyncio
import json
import shutil
import ssl
import subprocess
import sys
import time

import pytest

from harness import paths
from harness.cluster import reasons
from harness.cluster.local import LocalCluster
from harness.tests.pki_fixture import cluster_certs

RUN_TIMEOUT = 180


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    root = tmp_path_factory.mktemp("pki")
    cluster_certs(root / "ours")
    cluster_certs(root / "theirs")
    # another CA's client certificate, but our CA to check the scheduler with: only the
    # scheduler's check of the client can refuse this one
    mixed = root / "mixed"
    mixed.mkdir(mode=0o700)
    shutil.copy2(root / "ours" / "ca.pem", mixed / "ca.pem")
    for f in ("client.pem", "client-key.pem"):
        shutil.copy2(root / "theirs" / f, mixed / f)
    return {"ours": root / "ours", "theirs": root / "theirs", "mixed": mixed, "root": root}


@pytest.fixture(scope="module")
def tls_cluster(pki, tmp_path_factory):
    root = tmp_path_factory.mktemp("tls-cluster")
    c = LocalCluster(root, certs=pki["ours"])
    c.scheduler()
    no_tarball = {"KSYMLAB_TARBALL": str(root / "no-such-linux.tar.xz")}
    c.good = [c.worker(n, root / f"cache-{n}", env=no_tarball) for n in ("w1", "w2")]
    yield c
    c.close()


def identify(address, certs_dir, with_cert=True):
    """The scheduler's identity (its worker addresses), asked over Dask's own comm
    with a TLS context that trusts `certs_dir`'s CA and, if `with_cert`, presents
    its client certificate; or the exception."""
    from distributed.comm import connect
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(certs_dir / "ca.pem"))
    ctx.check_hostname = False
    if with_cert:
        ctx.load_cert_chain(str(certs_dir / "client.pem"), str(certs_dir / "client-key.pem"))

    async def ask():
        comm = await connect(address, timeout=5, ssl_context=ctx)
        try:
            await comm.write({"op": "identity"})
            return sorted((await comm.read())["workers"])
        finally:
            await comm.close()
    try:
        return asyncio.run(ask())
    except Exception as e:      # noqa: BLE001 - the refusal is the result
        return e


def harness_run(address, runs, *args):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cluster", address,
                        "--runs-dir", str(runs), "--variants", "stock", "--no-lttng", *args],
                       cwd=paths.REPO, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                       stdin=subprocess.DEVNULL)
    p.seconds = time.monotonic() - t0
    p.lines = [line for line in p.stderr.splitlines() if line.startswith("ksymlab:")]
    return p


def test_our_certificate_sees_both_workers(tls_cluster, pki):
    assert tls_cluster.address.startswith("tls://127.0.0.1:")
    assert identify(tls_cluster.address, pki["ours"]) == sorted(w.address
                                                                for w in tls_cluster.good)
    assert all(w.address.startswith("tls://127.0.0.1:") for w in tls_cluster.good)


def test_client_without_a_certificate_is_refused(tls_cluster, pki):
    got = identify(tls_cluster.address, pki["ours"], with_cert=False)
    assert isinstance(got, OSError), got
    assert "CERTIFICATE_REQUIRED" in reasons.tls_failure(got), repr(got)


@pytest.mark.parametrize("certs", ["theirs", "mixed"])
def test_harness_with_another_cas_certificate_is_refused(tls_cluster, pki, tmp_path, certs):
    p = harness_run(tls_cluster.address, tmp_path / "runs", "--cluster-certs",
                    str(pki[certs]))
    assert p.returncode == 50, p.stderr[-3000:]
    assert len(p.lines) == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.lines[0].startswith(f"ksymlab: cluster: the Dask scheduler at "
                                 f"{tls_cluster.address} and this client refused each "
                                 "other's TLS: [SSL: "), p.lines
    assert p.seconds < 60, "a refused handshake waited for the connect timeout"
    report = json.loads((tmp_path / "runs" / "latest" / "report.json").read_text())
    assert report["variants"]["stock"]["error"]["exit_status"] == 50
    assert report["cluster"]["transport"] == "tls"


def test_plain_tcp_client_is_refused(tls_cluster, tmp_path):
    plain = tls_cluster.address.replace("tls://", "tcp://")      # loopback: the harness allows it
    p = harness_run(plain, tmp_path / "runs")
    assert p.returncode == 50, p.stderr[-3000:]
    assert len(p.lines) == 1 and "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.lines[0].startswith(f"ksymlab: cluster: cannot reach the Dask scheduler at {plain}")
    assert p.lines[0].endswith("(a scheduler that requires TLS does not answer plain TCP: "
                               "use tls://)"), p.lines


def _handshake_failures(cluster):
    return (cluster.root / "scheduler.log").read_text().count("TLS handshake failed")


def test_worker_with_a_foreign_certificate_cannot_join(tls_cluster, pki, tmp_path):
    before = _handshake_failures(tls_cluster)
    intruder = tls_cluster.worker("intruder", tmp_path / "cache", certs=pki["theirs"],
                                  death_timeout=30)
    try:
        end = time.monotonic() + 60
        while _handshake_failures(tls_cluster) < before + 3 and time.monotonic() < end:
            time.sleep(0.2)                 # it tries again and again: let it, three times
        sched = (tls_cluster.root / "scheduler.log").read_text()
        assert _handshake_failures(tls_cluster) >= before + 3, sched[-2000:]
        assert "CERTIFICATE_VERIFY_FAILED" in sched
        assert identify(tls_cluster.address, pki["ours"]) == sorted(w.address
                                                                    for w in tls_cluster.good)
        log = (tls_cluster.root / "intruder.log").read_text()
        assert "Registered to:" not in log, log[-2000:]
    finally:
        intruder.proc.terminate()     # one that joined would take jobs


def test_right_certificates_carry_a_job_there_and_home(tls_cluster, pki, tmp_path):
    p = harness_run(tls_cluster.address, tmp_path / "runs", "--cluster-certs",
                    str(pki["ours"]))
    latest = tmp_path / "runs" / "latest"
    report = json.loads((latest / "report.json").read_text())
    stock = report["variants"]["stock"]
    # the job ran on a TLS worker and came home with the worker's own reason
    assert stock["worker"] in {w.address for w in tls_cluster.good}, stock["worker"]
    assert stock["error"]["step"] == "extract" and "no-such-linux.tar.xz" in \
        stock["error"]["message"], stock["error"]
    assert p.returncode == 10, p.stderr[-3000:]
    assert (latest / "stock" / "cluster-job.log").is_file()
    assert report["cluster"] == {"address": tls_cluster.address, "transport": "tls",
                                 "insecure": False, "certs": str(pki["ours"]),
                                 "note": report["cluster"]["note"]}
    assert "mutual TLS" in (latest / "report.md").read_text()


def test_insecure_cluster_is_stated_in_the_report(tmp_path):
    """--insecure-cluster lets a tcp:// address off the loopback through (TEST-NET-1,
    nobody answers: exit 50 after the connect timeout), and both reports say so."""
    p = harness_run("tcp://192.0.2.1:8786", tmp_path / "runs", "--insecure-cluster")
    assert p.returncode == 50, p.stderr[-3000:]
    latest = tmp_path / "runs" / "latest"
    report = json.loads((latest / "report.json").read_text())
    assert report["cluster"]["insecure"] is True
    assert report["cluster"]["transport"] == "tcp-insecure"
    assert "Cluster: `tcp://192.0.2.1:8786`, **insecure**" in (latest / "report.md").read_text()
    refused = harness_run("tcp://192.0.2.1:8786", tmp_path / "runs2")
    assert refused.returncode == 2 and len(refused.lines) == 1, refused.stderr
    assert not (tmp_path / "runs2").exists(), "a refused address made a run directory"
