"""Units of --cluster's security that need no scheduler: which addresses a run may
use (transport.py), the certificates cluster-certs makes (certs.py, checked with
the openssl command line as the independent reader), the reasons a connection
failed (reasons.py), the job child's environment and an unwritable cache
(workerenv.py, job.py), and the report's statement of an insecure cluster."""

import json
import os
import ssl
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness import paths
from harness.cluster import artifacts, job, reasons, spec as jobspec, transport, workerenv
from harness.errors import HarnessError
from harness.options import RunOptions
from harness.tests.pki_fixture import cluster_certs


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    """Two independent sets, made by the command as a user would make them."""
    root = tmp_path_factory.mktemp("certs")
    return cluster_certs(root / "ours"), cluster_certs(root / "theirs")


def openssl(*args):
    return subprocess.run(["openssl", *args], capture_output=True, text=True)


# ------------------------------------------------------------ cluster-certs

def test_cluster_certs_modes(issued):
    ours, _ = issued
    assert stat.S_IMODE(ours.stat().st_mode) == 0o700
    names = sorted(p.name for p in ours.iterdir())
    assert names == sorted(f"{r}{s}" for r in ("ca", "scheduler", "worker", "client")
                           for s in (".pem", "-key.pem"))
    for p in ours.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name


def test_cluster_certs_chain_and_roles_by_openssl(issued):
    ours, theirs = issued
    for role in ("scheduler", "worker", "client"):
        ok = openssl("verify", "-CAfile", str(ours / "ca.pem"), str(ours / f"{role}.pem"))
        assert ok.returncode == 0 and ok.stdout.strip().endswith("OK"), ok.stdout + ok.stderr
        foreign = openssl("verify", "-CAfile", str(theirs / "ca.pem"), str(ours / f"{role}.pem"))
        assert foreign.returncode != 0, f"{role}: another CA accepts our certificate"
    # the client's certificate is for TLS clients only: it cannot serve as a worker
    client_as_server = openssl("verify", "-purpose", "sslserver", "-CAfile",
                               str(ours / "ca.pem"), str(ours / "client.pem"))
    assert client_as_server.returncode != 0
    worker_as_server = openssl("verify", "-purpose", "sslserver", "-CAfile",
                               str(ours / "ca.pem"), str(ours / "worker.pem"))
    assert worker_as_server.returncode == 0, worker_as_server.stderr
    # each key belongs to its certificate
    for role in ("ca", "scheduler", "worker", "client"):
        pub_cert = openssl("x509", "-in", str(ours / f"{role}.pem"), "-noout", "-pubkey").stdout
        pub_key = openssl("pkey", "-in", str(ours / f"{role}-key.pem"), "-pubout").stdout
        assert pub_cert and pub_cert == pub_key, role


def test_cluster_certs_refuses_to_overwrite(issued):
    p = subprocess.run([sys.executable, "-m", "harness", "cluster-certs", str(issued[0])],
                       cwd=paths.REPO, capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("ksymlab: usage: "), p.stderr
    assert "already holds ca.pem" in p.stderr and "Traceback" not in p.stderr


# ------------------------------------------------------------ which address may be used

@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tcp://127.9.9.9:1",
                                     "tcp://[::1]:8786", "tcp://localhost:8786"])
def test_loopback_tcp_is_allowed(address, tmp_path):
    assert transport.plan(address, tmp_path).kind is transport.Kind.LOOPBACK


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "tcp://192.168.1.2:8786",
                                     "tcp://scheduler.lab:8786", "tcp://0.0.0.0:8786",
                                     "tcp://127.0.0.1.evil.example:8786"])
def test_tcp_off_the_loopback_is_refused_unless_insecure(address, tmp_path):
    with pytest.raises(HarnessError, match="plain TCP off the loopback") as e:
        transport.plan(address, tmp_path)
    assert e.value.exit_status == 2
    t = transport.plan(address, tmp_path, insecure=True)
    assert t.kind is transport.Kind.INSECURE and t.to_json()["insecure"] is True
    assert "**insecure**" in t.describe()


@pytest.mark.parametrize("address", ["ws://127.0.0.1:1", "127.0.0.1:8786", "tls://host",
                                     "tls://:8786", "inproc://x", "tcp://127.0.0.1:99999"])
def test_malformed_addresses_are_usage_errors(address, tmp_path):
    with pytest.raises(HarnessError, match="want tls://HOST:PORT") as e:
        transport.plan(address, tmp_path)
    assert e.value.step == "usage"


def test_tls_needs_the_client_files(issued, tmp_path):
    ours, theirs = issued
    t = transport.plan("tls://10.0.0.5:8786", ours)
    assert t.kind is transport.Kind.TLS and t.certs == ours
    sec = transport.security(t)
    assert sec.require_encryption is True
    assert sec.tls_client_cert == str(ours / "client.pem") and sec.tls_ca_file == str(
        ours / "ca.pem")
    with pytest.raises(HarnessError, match="none/ca.pem: No such file"):
        transport.plan("tls://10.0.0.5:8786", tmp_path / "none")
    (tmp_path / "partial").mkdir()
    (tmp_path / "partial" / "ca.pem").write_bytes((ours / "ca.pem").read_bytes())
    with pytest.raises(HarnessError, match=r"partial/client.pem: No such file") as e:
        transport.plan("tls://10.0.0.5:8786", tmp_path / "partial")
    assert e.value.exit_status == 2
    with pytest.raises(HarnessError, match="is for a plain tcp:// address"):
        transport.plan("tls://10.0.0.5:8786", ours, insecure=True)


def _mixed(tmp_path, ours, theirs, ca_from, cert_from, key_from):
    d = tmp_path / "mixed"
    d.mkdir(mode=0o700)
    for name, src in (("ca.pem", ca_from), ("client.pem", cert_from),
                      ("client-key.pem", key_from)):
        (d / name).write_bytes((src / name).read_bytes())
        os.chmod(d / name, 0o600)
    return d


def test_tls_refuses_a_readable_key_and_a_mismatched_pair(issued, tmp_path):
    ours, theirs = issued
    d = _mixed(tmp_path, ours, theirs, ours, ours, theirs)
    with pytest.raises(HarnessError, match="do not make a TLS context"):
        transport.plan("tls://h:1", d)
    (d / "client-key.pem").write_bytes((ours / "client-key.pem").read_bytes())
    transport.plan("tls://h:1", d)
    os.chmod(d / "client-key.pem", 0o644)
    with pytest.raises(HarnessError, match="others may read this key .mode 0644"):
        transport.plan("tls://h:1", d)


# ------------------------------------------------------------ reasons

def test_tls_reason_is_found_behind_dasks_timeout_wording():
    class CommClosedError(OSError):
        pass
    outer = OSError("Timed out during handshake while connecting to tls://h:1 after 5 s")
    outer.__cause__ = CommClosedError("in <TLS (closed) local=tls://a remote=tls://b>: SSLError: "
                                      "[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED] tlsv13 alert "
                                      "certificate required (_ssl.c:2546)")
    assert reasons.tls_failure(outer).startswith("[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]")
    verify = OSError("TLS certificate does not match.")
    verify.__cause__ = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] "
                                                       "certificate verify failed (_ssl.c:992)")
    assert reasons.tls_failure(verify).startswith("[SSL: CERTIFICATE_VERIFY_FAILED]")
    plain = OSError("Timed out during handshake while connecting to tcp://h:1 after 5 s")
    plain.__cause__ = TimeoutError()
    assert reasons.tls_failure(plain) == ""
    assert job.lost_scheduler(verify).startswith("the scheduler refused this worker's TLS")
    assert job.lost_scheduler(plain).startswith("the scheduler does not answer (OSError")


# ------------------------------------------------------------ the worker's side

def test_child_env_is_an_allowlist():
    env = {"PATH": "/usr/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C",
           "KSYMLAB_CACHE": "/c", "KSYMLAB_TARBALL": "/t", "KSYMLAB_CLUSTER": "tls://x:1",
           "KSYMLAB_CLUSTER_CERTS": "/secret", "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": "/ca",
           "PYTHONPATH": "/evil", "LD_PRELOAD": "/evil.so", "SSH_AUTH_SOCK": "/agent",
           "AWS_SECRET_ACCESS_KEY": "k", "https_proxy": "http://proxy:3128"}
    assert workerenv.child_env(env) == {
        "PATH": "/usr/bin", "HOME": "/root", "LANG": "C.UTF-8", "LC_ALL": "C",
        "KSYMLAB_CACHE": "/c", "KSYMLAB_TARBALL": "/t", "https_proxy": "http://proxy:3128"}


def _spec(tmp_path):
    scen = tmp_path / "s.scenario"
    scen.write_text("nice 5\n")
    opts = RunOptions.from_env(scenario=scen, runs_root=tmp_path / "runs")
    return jobspec.make(opts, opts.select(["stock"])[0], "0123456789abcdef0123", "run1", "")


def test_job_child_does_not_inherit_the_workers_environment(tmp_path, monkeypatch):
    """LD_PRELOAD in the worker's environment would reach the child's loader, which
    complains in the child's log (all the child writes) about a missing object."""
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    spec = _spec(tmp_path)
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/ksymlab-preload-probe.so")
    out = job.variant_job(spec, cancel_check=lambda name: "")
    monkeypatch.delenv("LD_PRELOAD")
    assert out.status == 0 and out.result is not None, out.log_tail
    home = tmp_path / "home"
    artifacts.unpack(out.artifacts, home)
    log = (home / "cluster-job.log").read_text()
    assert "worker's checkout" in log              # the child ran: its one line is there
    assert "ksymlab-preload-probe" not in log, log


def test_job_on_an_unwritable_cache_says_so(tmp_path, monkeypatch):
    ro = tmp_path / "not-a-dir"
    ro.write_text("a file where the cache should be\n")
    monkeypatch.setenv("KSYMLAB_CACHE", str(ro / "cache"))
    out = job.variant_job(_spec(tmp_path), cancel_check=lambda name: "")
    assert out.result is None and out.status == 50
    assert out.stopped.startswith(f"this worker's cache {ro / 'cache'} is not writable by ")
    assert artifacts.unpack(out.artifacts, tmp_path / "home") == []


def _world_readable_dir(path):
    path.mkdir(mode=0o755)
    os.chmod(path, 0o755)
    return path


def test_job_as_an_unprivileged_user(tmp_path_factory):
    """A worker started as `nobody`: a cache that root owns is refused in one line; a
    cache nobody owns takes the job (up to the missing tarball: no kernel here)."""
    import shutil
    import tempfile
    base = Path(tempfile.mkdtemp(prefix="ksymlab-unpriv-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        spec_file = base / "spec.pickle"
        spec_file.write_bytes(__import__("pickle").dumps(_spec(_world_readable_dir(base / "c"))))
        os.chmod(spec_file, 0o644)
        rootcache = _world_readable_dir(base / "root-cache")
        owncache = _world_readable_dir(base / "own-cache")
        os.chown(owncache, 65534, 65534)
        got = {c.name: _as_nobody(c, spec_file, base) for c in (rootcache, owncache)}
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert got["root-cache"]["status"] == 50
    assert "not writable by nobody (uid 65534): Permission denied" in got["root-cache"]["why"]
    assert got["own-cache"]["status"] == 0, got["own-cache"]
    assert got["own-cache"]["error"] == "extract", got["own-cache"]


AS_NOBODY = """
import json, pickle, sys
from harness.cluster import artifacts, job
out = job.variant_job(pickle.load(open(sys.argv[1], "rb")), cancel_check=lambda n: "")
err = artifacts.load_result(out.result)["result"].error if out.result else None
print(json.dumps({"status": out.status, "why": out.stopped, "tail": out.log_tail,
                  "error": err.step if err else None}))
"""


def _as_nobody(cache, spec_file, base):
    env = {"PATH": os.environ["PATH"], "HOME": str(base), "KSYMLAB_CACHE": str(cache),
           "KSYMLAB_TARBALL": str(base / "no-such-linux.tar.xz"),
           "PYTHONPATH": str(paths.REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        sys.executable, "-c", AS_NOBODY, str(spec_file)], cwd=base,
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _evil_tar(member):
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        ok = tarfile.TarInfo("console.log")
        ok.size = 3
        tar.addfile(ok, io.BytesIO(b"ok\n"))
        tar.addfile(member, io.BytesIO(b"owned\n") if member.isfile() else None)
    return buf.getvalue()


def _escaping(name):
    import tarfile
    m = tarfile.TarInfo(name)
    m.size = 6
    return m


def _linking(name, target):
    import tarfile
    m = tarfile.TarInfo(name)
    m.type = tarfile.SYMTYPE
    m.linkname = target
    return m


@pytest.mark.parametrize("member", [_escaping("../../escaped"), _escaping("{tmp}/abs-escaped"),
                                    _linking("stock-link", "/etc/shadow")],
                         ids=["dotdot", "absolute", "symlink"])
def test_tampered_job_files_are_refused_by_the_client(tmp_path, member):
    """What a rogue worker could send home: the client's receive() refuses it (exit 50)
    and writes nothing outside the variant's run directory."""
    from harness.cluster import client
    member.name = member.name.format(tmp=tmp_path)      # absolute, but where a bug stays local
    outcome = job.JobOutcome(variant="stock", worker="tls://rogue:1", host="rogue",
                             result=None, artifacts=_evil_tar(member), vdir="/x", status=0)
    rundir = tmp_path / "runs" / "r1"
    with pytest.raises(HarnessError, match="artifacts: refused member") as e:
        client.receive(outcome, rundir)
    assert e.value.exit_status == 50
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "runs" / "escaped").exists()
    assert not (tmp_path / "abs-escaped").exists()
    assert not (rundir / "stock" / "stock-link").is_symlink()
