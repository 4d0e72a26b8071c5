"""End to end: drgn reads the vmcore QEMU wrote at the snapshot, and it can fail.

The session's shared run of the default variants keeps its vmcores
(e2e_runs.default_run, --keep-vmcore); the tests then doctor copies of them (a
byte of the module's results, a task's prio in kernel memory) and compare again
offline, and run a mutant module that reads the wrong priority field.
"""

import json
import mmap
import shutil
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.checks import variant as compare, drgn_columns as drgncompare
from harness.oracles import drgn as drgn_oracle
from harness.oracles.readings import GdbReading
from harness.guest import dataport as guestdata
from harness import paths
from harness.options import RunOptions

pytestmark = pytest.mark.e2e

VARIANTS = ["exports", "kallsyms", "stock", "bpf13"]
DOCTORED = "exports"          # the variant whose vmcore the doctoring tests copy


@pytest.fixture
def kept_run(default_run):
    return default_run.proc, default_run.latest


def report(rundir):
    return json.loads((rundir / "report.json").read_text())


def test_default_variants_pass_with_drgn_agreeing(kept_run):
    p, rundir = kept_run
    assert p.returncode == 0, p.stderr[-3000:]
    rep = report(rundir)
    assert rep["verdict"] == "pass"
    assert {t["source"]: t["label"] for t in rep["oracles"]}["proc_stat"] == "same function"
    for name in VARIANTS:
        v = rep["variants"][name]
        rows = {c["id"]: c for c in v["symbols"] + v["values"]}
        assert rows["vmcore:vmcoreinfo"]["sources"]["drgn"] == "note", name
        assert rows["vmcore:fw_cfg"]["agree"] is True, name
        assert rows["vmcore:module-sections"]["agree"] is True, name
        for kind in ("prio", "pageblock", "migratetype", "blockdev"):
            # the second snapshot's rows (pbstates) are not the dumped one's
            kind_rows = [c for c in v["values"] if c["kind"] == kind
                         and not drgncompare.PBSTATES_KEY.match(c["key"])]
            assert kind_rows and all(c["sources"].get("drgn") is not None and c["agree"]
                                     for c in kind_rows), (name, kind)
        cov = [c for c in v["values"] if c["kind"] == "oracles"]
        assert cov and all(c["agree"] is not False for c in cov), (name, cov)
        assert {c["key"] for c in cov if "drgn" in c["sources"]["independent"]} >= {
            "task priority", "pageblock migratetype", "block devices", "dirty limit",
            "whole flag", "symbol addresses"}
        assert v["vmcore"]["bytes"] > 0 and v["vmcore"]["vmcoreinfo"] is True
        assert (rundir / name / "vmcore").exists()            # --keep-vmcore


def offline(rundir, variant, core, workdir):
    """Compare the variant's run again, drgn reading `core` instead of its own vmcore."""
    vdir = rundir / variant
    data = guestdata.parse((vdir / "data.log").read_text())
    truth = GdbReading.parse(json.loads((vdir / "gdb.json").read_text()), str(vdir / "gdb.json"))
    spec = json.loads((vdir / "drgn-in.json").read_text())
    claims = {k: spec[k] for k in ("module", "sections", "symbols", "pageblock_order")}
    drgn = drgn_oracle.read({"path": str(core), "format": "elf"},
                            SimpleNamespace(vmlinux=Path(spec["vmlinux"])), claims, workdir,
                            variant, keep=True)
    assert drgn.error is None, drgn.error
    found = drgncompare.merge(compare.compare_variant(data, truth), data, truth, drgn)
    return [c for c in found.symbols + found.values if c.disagrees], drgn


def kept_core(rundir, variant):
    """The vmcore drgn read: QEMU's, or the copy with a synthesized note when the guest
    kernel gave QEMU none (then the vmcore rows of the run say so)."""
    vdir = rundir / variant
    synthesized = vdir / "vmcore.synthesized"
    return synthesized if synthesized.exists() else vdir / "vmcore"


def program(rundir, variant, core):
    from harness.oracles import drgn_vmcore       # imports drgn: only when a test runs
    spec = json.loads((rundir / variant / "drgn-in.json").read_text())
    prog = drgn_vmcore.open_core(str(core))
    drgn_vmcore.load_debug_info(prog, spec["vmlinux"], spec["module"])
    return prog


def file_offset(core, phys):
    """Where physical address `phys` lies in the ELF core (its PT_LOAD segments)."""
    with open(core, "rb") as f:
        ehdr = f.read(64)
        phoff, = struct.unpack_from("<Q", ehdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _, p_offset, _, p_paddr, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type == 1 and p_paddr <= phys < p_paddr + p_filesz:
                return p_offset + phys - p_paddr
    raise AssertionError(f"physical {phys:#x} is not in {core}")


def test_the_kept_vmcore_agrees_offline(kept_run, tmp_path):
    _, rundir = kept_run
    bad, drgn = offline(rundir, DOCTORED, kept_core(rundir, DOCTORED), tmp_path)
    assert bad == [] and drgn.tasks


def test_a_flipped_byte_of_the_module_results_in_the_vmcore_fails(kept_run, tmp_path):
    """ksymlab_results lives in module (vmalloc) memory: find its prio array's bytes in
    the file, change one entry's prio in a copy, and drgn_memory disagrees there."""
    _, rundir = kept_run
    core = kept_core(rundir, DOCTORED)
    prog = program(rundir, DOCTORED, core)
    r = prog["ksymlab_results"]
    n = r.nr_prio.value_()
    size = prog.type("struct ksymlab_prio_sample").size
    array = prog.read(r.prio.address_, n * size)
    victim = n - 1
    pid = r.prio[victim].pid.value_()
    prio_at = r.prio[victim].prio.address_ - r.prio.address_
    copy = tmp_path / "vmcore"
    shutil.copyfile(core, copy)
    with open(copy, "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
        where = m.find(array)
        assert where >= 0 and m.find(array, where + 1) < 0
        old, = struct.unpack_from("<i", m, where + prio_at)
        struct.pack_into("<i", m, where + prio_at, old + 1)
    bad, drgn = offline(rundir, DOCTORED, copy, tmp_path)
    assert [c.id for c in bad] == [f"prio:pid {pid}"]
    assert bad[0].get("drgn_memory") == old + 1 and bad[0].get("drgn") == old


def test_a_doctored_task_prio_in_kernel_memory_fails(kept_run, tmp_path):
    """task_struct lives in the direct map: change init's prio in a copy of the vmcore
    and drgn's own reading of the task disagrees with the module."""
    from drgn.helpers.linux.pid import find_task
    _, rundir = kept_run
    core = kept_core(rundir, DOCTORED)
    prog = program(rundir, DOCTORED, core)
    task = find_task(prog, 1)
    phys = task.prio.address_ - prog["page_offset_base"].value_()
    copy = tmp_path / "vmcore"
    shutil.copyfile(core, copy)
    with open(copy, "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
        at = file_offset(copy, phys)
        old, = struct.unpack_from("<i", m, at)
        struct.pack_into("<i", m, at, old - 5)
    bad, _ = offline(rundir, DOCTORED, copy, tmp_path)
    assert [c.id for c in bad] == ["prio:pid 1"]
    assert bad[0].get("drgn") == bad[0].get("module") - 5


def test_a_mutant_reading_static_prio_is_caught_by_drgn(tmp_path, monkeypatch):
    """The prio sampler reads t->static_prio instead of task_prio(): RT tasks differ,
    and drgn says so beside gdb."""
    from harness import run as runmod
    src = tmp_path / "probe-module"
    shutil.copytree(paths.PROBE_MODULE, src)
    prio_c = src / "prio.c"
    text = prio_c.read_text()
    assert "s->prio = ksymlab_task_prio(t);" in text
    prio_c.write_text(text.replace("s->prio = ksymlab_task_prio(t);",
                                   "s->prio = t->static_prio - MAX_RT_PRIO;"))
    monkeypatch.setattr(paths, "PROBE_MODULE", src)
    # no LTTng boot: it loads LTTng's modules, not the probe module
    opts = RunOptions.from_env(runs_root=tmp_path / "runs", jobs=1, lttng=False)
    status, rundir, _ = runmod.run([DOCTORED], opts)
    assert status == 1
    v = report(rundir)["variants"][DOCTORED]
    bad = [c for c in v["values"] if c["agree"] is False]
    assert bad and {c["kind"] for c in bad} == {"prio"}
    # drgn speaks for the first snapshot (the vmcore is dumped there)
    bad = [c for c in bad if not drgncompare.PBSTATES_KEY.match(c["key"])]
    assert bad
    for c in bad:
        s = c["sources"]
        assert s["drgn"] == s["gdb"] != s["module"], c
