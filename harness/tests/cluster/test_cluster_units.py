"""Unit tests of --cluster's parts that need no scheduler: the artifact transfer,
the result pickling and relocation, the affinity choice, the worker preflight,
the job spec, a whole job through its child process, and PR_SET_PDEATHSIG."""

import dataclasses
import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from types import MappingProxyType

import pytest

from harness import paths
from harness.model.results import Check, StepError, VariantResult
from harness.cluster import affinity, artifacts, job, preflight, spec as jobspec
from harness.errors import HarnessError
from harness.options import RunOptions


# ------------------------------------------------------------ artifacts

def test_pack_unpack_round_trip_keeps_every_file_but_initramfs(tmp_path):
    src = tmp_path / "src"
    (src / "lttng" / "trace").mkdir(parents=True)
    (src / "console.log").write_text("boot\n")
    (src / "lttng" / "trace" / "chan_0").write_bytes(bytes(range(256)) * 5)
    (src / "abc.cpio").write_bytes(b"x" * 100)
    (src / "link").symlink_to("/etc/passwd")
    names = artifacts.unpack(artifacts.pack(src), tmp_path / "dest")
    assert sorted(names) == ["console.log", "lttng/trace/chan_0"]
    assert (tmp_path / "dest" / "lttng/trace/chan_0").read_bytes() == bytes(range(256)) * 5
    assert not (tmp_path / "dest" / "link").exists()
    kept = artifacts.unpack(artifacts.pack(src, keep_optional=True), tmp_path / "dest2")
    assert "abc.cpio" in kept


def _tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _file(name, data=b"x"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


@pytest.mark.parametrize("name", ["../escape", "/etc/evil", "a/../../escape"])
def test_unpack_refuses_names_outside_the_run_directory(tmp_path, name):
    with pytest.raises(HarnessError, match="refused member") as e:
        artifacts.unpack(_tar([_file("ok.log"), _file(name)]), tmp_path / "d")
    assert e.value.step == "cluster"
    assert not (tmp_path / "escape").exists()


def test_unpack_refuses_links_and_garbage(tmp_path):
    link = tarfile.TarInfo("console.log")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/shadow"
    with pytest.raises(HarnessError, match="not a regular file"):
        artifacts.unpack(_tar([(link, None)]), tmp_path / "d")
    with pytest.raises(HarnessError, match="not a readable tar"):
        artifacts.unpack(b"\x00garbage" * 100, tmp_path / "e")


def _result(vdir):
    row = Check("prio", "pid 7", {"module": 120, "gdb": 120}, True,
                {"log": f"{vdir}/gdb.log"})
    return VariantResult(name="stock", description="d", module_mode="kprobe",
                         values=(row,), facts={"console": f"{vdir}/console.log", "n": 3},
                         timings={"boot": 1.5},
                         error=StepError("gdb", f"failed (log: {vdir}/gdb.log)", 40, "error",
                                         f"{vdir}/gdb.log"))


def test_result_pickles_with_read_only_mappings_and_relocates(tmp_path):
    worker_dir = "/var/cache/ksymlab/cluster-jobs/123-run-stock-9/out/stock"
    back = artifacts.load_result(artifacts.dump_result({"result": _result(worker_dir)}))
    r = artifacts.relocate(back["result"], worker_dir, tmp_path / "stock")
    assert isinstance(r.facts, MappingProxyType) and isinstance(r.values[0].info,
                                                                MappingProxyType)
    assert r.facts == {"console": f"{tmp_path}/stock/console.log", "n": 3}
    assert r.error.log == f"{tmp_path}/stock/gdb.log"
    assert r.error.message == f"failed (log: {tmp_path}/stock/gdb.log)"
    assert r.values[0].info["log"] == f"{tmp_path}/stock/gdb.log"
    assert r.values[0].agrees and r.values[0].id == "prio:pid 7"
    assert r.to_json()["values"] == _result(tmp_path / "stock").to_json()["values"]


# ------------------------------------------------------------ affinity

def test_affinity_prefers_the_holders_of_each_tree():
    held = {"tcp://a:1": ["k1", "k2"], "tcp://b:1": ["k2"], "tcp://c:1": []}
    got = affinity.choose([("exports", "k1"), ("stock", "k2"), ("new", "k9")], held)
    assert [(p.variant, p.workers) for p in got] == [
        ("exports", ("tcp://a:1",)), ("stock", ("tcp://a:1", "tcp://b:1")), ("new", ())]
    assert "builds it" in got[2].reason


def test_held_trees_asks_the_cache(tmp_path, monkeypatch):
    done = []
    monkeypatch.setattr(affinity.cache, "is_complete",
                        lambda root, kind, key: done.append((root, kind)) or key == "k2")
    assert affinity.held_trees(["k1", "k2"], tmp_path) == ["k2"]
    assert done == [(tmp_path, "trees")] * 2


# ------------------------------------------------------------ preflight

class _V:
    name = "stock"
    package = "linux-source-6.1"

    def __init__(self, tarball):
        self.tarball = tarball


def test_preflight_names_missing_packages_and_tarball(tmp_path):
    tarball = tmp_path / "linux.tar.xz"
    tarball.write_bytes(b"")
    installed = lambda n: "install ok installed"     # noqa: E731
    preflight.check(_V(tarball), query=installed)
    with pytest.raises(HarnessError, match=r"lacks Debian packages: qemu-system-x86 gdb \(") as e:
        preflight.check(_V(tarball), query=lambda n: "" if n in ("gdb", "qemu-system-x86")
                        else "install ok installed")
    assert e.value.step == "deps"
    with pytest.raises(HarnessError, match="no kernel tarball .*linux-source-6.1") as e:
        preflight.check(_V(tmp_path / "absent.tar.xz"), query=installed)
    assert e.value.step == "extract"


def test_preflight_reads_the_projects_package_list():
    names = preflight.listed_packages()
    assert {"qemu-system-x86", "gdb", "python3-distributed", "python3-drgn"} <= set(names)
    assert not any(n.startswith("#") for n in names)


# ------------------------------------------------------------ spec and a whole job

def _opts(tmp_path, **kw):
    scen = tmp_path / "mine.scenario"
    scen.write_text("nice 5\n")
    return RunOptions.from_env(scenario=scen, runs_root=tmp_path / "runs", kaslr=True,
                               insmod_args="simulate_missing=task_prio", **kw)


def test_spec_carries_contents_not_client_paths(tmp_path, monkeypatch):
    (tmp_path / "msrc").mkdir()
    (tmp_path / "msrc" / "Kbuild").write_text("obj-m += x.o\n")
    opts = _opts(tmp_path, module_src=tmp_path / "msrc")
    v = opts.select(["stock"])[0]
    s = jobspec.make(opts, v, "key", "run1", "ev")
    worker = tmp_path / "worker"
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    wopts = jobspec.materialize(s, worker / "job")
    assert wopts.scenario.read_text() == "nice 5\n" and str(tmp_path / "mine") not in str(
        wopts.scenario)
    assert (wopts.module_src / "Kbuild").read_text() == "obj-m += x.o\n"
    assert wopts.cache == tmp_path / "wcache" and wopts.runs_root == worker / "job" / "runs"
    assert (wopts.kaslr, wopts.insmod_args, wopts.jobs) == (True, "simulate_missing=task_prio", 1)


def test_job_of_another_checkout_comes_home_with_the_reason(tmp_path, monkeypatch):
    """A whole job through its child process: a worker whose checkout builds another
    tree refuses the variant, and the result says so (no build, no guest)."""
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    opts = _opts(tmp_path)
    s = jobspec.make(opts, opts.select(["stock"])[0], "0123456789abcdef0123", "run1", "")
    out = job.variant_job(s, cancel_check=lambda name: "")
    assert out.status == 0 and out.result is not None, out.log_tail
    got = artifacts.load_result(out.result)["result"]
    assert got.error.step == "cluster" and "0123456789abcdef0123" in got.error.message
    assert "cluster-job.log" in artifacts.unpack(out.artifacts, tmp_path / "home")
    assert not Path(out.vdir).exists(), "the job directory is removed once packed"


def got_line(outcome):
    """The child's last log line, as the job's files carry it home."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        artifacts.unpack(outcome.artifacts, d)
        return (Path(d) / "cluster-job.log").read_text().splitlines()[-1]


def test_job_on_a_worker_without_the_tarball_fails_with_that_reason(tmp_path, monkeypatch):
    from harness.prepare.tree import tree_key
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    opts = _opts(tmp_path)
    v = opts.select(["stock"])[0]
    spec = jobspec.make(opts, v, tree_key(v), "run1", "", "topic1")   # the client has it
    monkeypatch.setenv("KSYMLAB_TARBALL", str(tmp_path / "no-such-linux.tar.xz"))  # the worker not
    sent = []
    out = job.variant_job(spec, cancel_check=lambda name: "",
                          forward=lambda topic, line: sent.append((topic, line)))
    # the child's progress reached the client's topic, line by line, without its clock
    assert sent and {t for t, _ in sent} == {"topic1"}
    assert sent[-1][1] == f"{out.worker}: {got_line(out)}"
    got = artifacts.load_result(out.result)["result"]
    assert (got.error.step, got.error.exit_status) == ("extract", 10)
    assert "no-such-linux.tar.xz" in got.error.message
    assert not (tmp_path / "wcache" / "trees").exists(), "nothing was built"


def test_job_for_a_variant_the_worker_does_not_know(tmp_path, monkeypatch):
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    opts = _opts(tmp_path)
    spec = dataclasses.replace(jobspec.make(opts, opts.select(["stock"])[0], "k", "run1", ""),
                               variant="only-on-the-client")
    out = job.variant_job(spec, cancel_check=lambda name: "")
    assert out.result is None and out.status == 2
    assert "only-on-the-client" in out.log_tail.splitlines()[-1]
    assert "Traceback" not in out.log_tail


def test_cancelled_job_stops_its_child(tmp_path, monkeypatch):
    monkeypatch.setenv("KSYMLAB_CACHE", str(tmp_path / "wcache"))
    opts = _opts(tmp_path)
    s = jobspec.make(opts, opts.select(["stock"])[0], "k", "run1", "ev")
    t0 = time.monotonic()
    out = job.variant_job(s, cancel_check=lambda name: "the client cancelled the run")
    assert out.stopped == "the client cancelled the run" and out.result is None
    assert time.monotonic() - t0 < job.STOP_GRACE


def test_sweep_removes_dead_workers_job_dirs(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f"{dead.pid}-run-stock-1").mkdir()
    zombie = subprocess.Popen(["true"])
    while Path(f"/proc/{zombie.pid}/stat").read_text().split(") ")[1][0] != "Z":
        time.sleep(0.01)           # exited, not reaped: what a SIGKILLed worker is
    (tmp_path / f"{zombie.pid}-run-stock-3").mkdir()
    (tmp_path / f"{os.getpid()}-run-stock-2").mkdir()
    job.sweep(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [f"{os.getpid()}-run-stock-2"]
    zombie.wait()


# ------------------------------------------------------------ dying with the worker

def test_child_gets_sigterm_when_its_parent_is_killed(tmp_path):
    """What makes a job's builds and guests end with a killed worker: the child's
    SIGTERM handler runs (it writes a file) once its parent is SIGKILLed."""
    flag = tmp_path / "terminated"
    child = (f"import signal, sys, time; sys.path.insert(0, {str(paths.REPO)!r})\n"
             "from harness import proc\n"
             f"signal.signal(signal.SIGTERM, lambda *a: (open({str(flag)!r}, 'w').close(), "
             "sys.exit(0)))\n"
             "proc.die_with_parent()\nprint('armed', flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys, time; "
                               f"subprocess.Popen([sys.executable, '-c', {child!r}]); "
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline().strip() == "armed"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    end = time.monotonic() + 10
    while not flag.exists() and time.monotonic() < end:
        time.sleep(0.1)
    assert flag.exists(), "the orphaned child got no SIGTERM"
