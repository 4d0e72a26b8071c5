"""End to end: the real A/B pipeline, and the faults it must report cleanly.

The A/B checks read the session's shared run of the default variants
(e2e_runs.default_run, made once for test_e2e, test_drgn_e2e, test_lttng_e2e and
test_first_run); the fault tests each make a run of their own configuration.
Kernels are built on first use (minutes each on 2 cores), then cached; runs boot QEMU.
"""

import json
import re
import shutil
import subprocess
import sys

import pytest

from harness import mdtables
from harness import paths
from harness.guest import scenario
from harness.oracles import sched_prio
from harness.checks.drgn_columns import PBSTATES_KEY
from harness.tests.e2e_runs import (harness, nm_address, qemu_processes, src, tree_src,
                                    variant_report)

pytestmark = pytest.mark.e2e


def test_ab_run_passes(default_run):
    p, runs = default_run.proc, default_run.runs
    assert p.returncode == 0, p.stderr[-3000:]
    rep = json.loads((runs / "latest" / "report.json").read_text())
    assert rep["verdict"] == "pass"
    # every seed patch is backed by checks that ran and agreed
    # (and the kallsyms variant's revert of 0bd476e6), the claims of each seed patch included
    # the v2 series' seeds are listed too, as not run: no default variant carries them
    rfc = [f"{i}/9" for i in range(1, 10)] + ["0bd476e6"]
    v2 = [f"v2-{i}/8" for i in range(1, 9)]
    assert [r["seed"] for r in rep["seeds"]] == rfc + v2
    claims = [c for v in rep["variants"].values() for c in v["values"] if c["kind"] == "seed"]
    assert len(claims) == 10 + 10 + 2 and all(c["agree"] for c in claims)
    ran = [r for r in rep["seeds"] if r["seed"] in rfc]
    assert all(r["holds"] is True and r["checks"] > 0 for r in ran), ran
    assert all(r["holds"] is None and r["variants"] == [] and r["checks"] == 0
               for r in rep["seeds"] if r["seed"] in v2), rep["seeds"]
    assert list(rep["variants"]) == ["exports", "kallsyms", "stock", "bpf13"]
    assert qemu_processes(runs) == []
    # across variants: what must be identical is, what differs is explained
    across = {r["id"]: r for r in rep["across"]}
    for cid in ("scenario-prio", "blockdevs", "ustack-names", "ustack-addresses",
                "pageblock-count"):
        assert across[cid]["identical"] and len(across[cid]["values"]) == 4, across[cid]
    assert not any(r["flagged"] for r in rep["across"])
    assert across["symbol-addresses"]["identical"] is False
    assert across["symbol-addresses"]["why"]


METHODS = {"exports": "export", "kallsyms": "kallsyms", "stock": "kprobe", "bpf13": "export"}
VARIANTS = list(METHODS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_symbol_address_matches_nm(default_run, variant):
    runs = default_run.runs
    v = variant_report(runs, variant)
    names = {s["key"]: s for s in v["symbols"]}
    assert names["task_prio"]["info"]["method"] == METHODS[variant]
    if METHODS[variant] != "export":
        assert names["kallsyms_lookup_name"]["info"]["method"] == \
            {"kallsyms": "export", "stock": "kprobe"}[variant]
        assert {"block_class", "disk_type", "global_wb_domain"} <= set(names)
    else:
        assert names["block_class"]["info"]["method"] == "getter"
    vmlinux = tree_src(v["tree_key"]) / "vmlinux"
    for s in v["symbols"]:
        expected = nm_address(vmlinux, s["key"])
        assert int(src(s, "module"), 16) == expected, s
        assert int(src(s, "gdb"), 16) == expected, s
        assert s["agree"] is True
    assert all(sm["available"] for sm in v["samplers"].values()), v["samplers"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_sampler_checked(default_run, variant):
    runs = default_run.runs
    v = variant_report(runs, variant)
    by_kind = {}
    for x in v["values"]:
        by_kind.setdefault(x["kind"], []).append(x)
    assert set(by_kind) >= {"sampler", "snapshot", "prio", "pageblock", "migratetype",
                            "blockdev", "ustack", "writeback", "bpf", "symcheck", "vmcore",
                            "oracles"}
    # LTTng runs on the variants whose file has an [lttng] table
    assert ("lttng" in by_kind) == (variant != "bpf13")
    # no row disagrees; the unchecked ones (HighAtomic, one-oracle kinds, the
    # coverage table's rows) say why
    assert all(x["agree"] is not False for x in v["values"]), \
        [x for x in v["values"] if x["agree"] is False]
    # the second snapshot's rows (harness/pbstates.py) are checked in
    # test_pageblock_states; here the first snapshot's
    by_kind = {k: [x for x in xs if not PBSTATES_KEY.match(x["key"])]
               for k, xs in by_kind.items()}
    # ram0 with two partitions and ram1, as the guest set them up, in sysfs, the module's
    # text and memory, and gdb's class walk (ksymlab_disks' disks: test_walks_e2e)
    ram = [x for x in by_kind["blockdev"] if not x["key"].startswith("ksym")]
    assert {x["key"] for x in ram} >= {"ram0", "ram0p1", "ram0p2", "ram1"}
    assert all(src(x, "module") == src(x, "memory") == src(x, "gdb_class") == src(x, "sysfs")
               for x in ram if not x["key"].endswith("/whole"))
    # three return addresses, the whole stack, the frames in module memory, five frames named
    assert len(by_kind["ustack"]) == 10
    assert [src(x, "eu_addr2line") for x in by_kind["ustack"] if x["key"].startswith("fn/")] \
        == ["level3", "level2", "level1", "ustack_thread", "start_thread"]
    # the whole stack, as the program walked it, from a thread that is not its leader
    stack = [x for x in by_kind["ustack"] if x["key"] == "stack"][0]
    assert stack["info"]["frames"] == stack["info"]["walked"] >= 5
    assert stack["info"]["pid"] != stack["info"]["tgid"]
    # most of a 512 MiB guest's pageblocks are movable
    movable = sum(src(x, "module") for x in by_kind["migratetype"] if x["info"]["mt"] == 1)
    assert movable > 50
    # every pageblock checked against gdb's own read of the mem_section bitmap;
    # their number is what /proc/pagetypeinfo counts
    blocks = by_kind["pageblock"]
    assert len(blocks) == sum(src(x, "pagetypeinfo") for x in by_kind["migratetype"])
    assert all(src(x, "module") == src(x, "memory") == src(x, "gdb_bitmap") for x in blocks)
    hits = {x["key"]: src(x, "module") for x in by_kind["writeback"]}
    assert hits["gds_hits"] > 0 and hits["bdp_hits"] > 0
    # disks and partitions told apart by sysfs and by gdb's bd_partno
    assert {x["key"]: src(x, "gdb_class") for x in ram
            if x["key"].endswith("/whole")} == {f"{n}/whole": int("p" not in n) for n in
        "ram0 ram0p1 ram0p2 ram1 ram2 ram2p1 ram2p2 ram2p3 ram3 ram3p1 ram3p2".split()}
    # the guest's dirty_bytes 8 KiB and background 4 KiB: thresholds 2 and 1 pages; the
    # dirty limit a FIFO writer set is far from both
    wb = {x["key"]: x for x in by_kind["writeback"]}
    assert (src(wb["thresh/dirty"], "gdb"), src(wb["thresh/background"], "gdb")) == (2, 1)
    assert src(wb["dirty_limit/gds"], "gdb") > 32


# task_prio() (p->prio - MAX_RT_PRIO, kernel/sched/core.c) of each task of
# harness/scenarios/default.scenario, in guest order, derived by hand from the
# kernel's rules rather than by the model the run's verdict uses:
#  - SCHED_OTHER, SCHED_BATCH, SCHED_IDLE at nice n: normal_prio = static_prio =
#    NICE_TO_PRIO(n) = 120 + n, so n + 20;
#  - SCHED_FIFO, SCHED_RR at rt_priority p: normal_prio = MAX_RT_PRIO - 1 - p, so -1 - p;
#  - SCHED_DEADLINE: normal_prio = MAX_DL_PRIO - 1 = -1, so -101;
#  - `pi 19 20 40`: the holder (nice 19, 39 on its own) holds a PI futex that two
#    FIFO threads (prio -21 and -41) wait on; rt_mutex_setprio() gives it the top
#    waiter's prio, min(39, -41) = -41; the waiters keep their own.
# Derive it again when default.scenario changes.
DEFAULT_SCENARIO_PRIOS = [
    0, 10, 20, 25, 39,          # nice -20, -10, 0, 5, 19
    -2, -51, -100,              # fifo 1, 50, 99
    -11, -91,                   # rr 10, 90
    25, 20, -101,               # batch 5, idle 0, deadline 1000000 10000000 100000000
    -41, -21, -41,              # pi 19 20 40: the boosted holder, fifo 20, fifo 40
    -41, -41, -101, -101,       # pi fifo 10 fifo 40 (holder -41, not -11), pi rr 20 deadline
    25, -21, 17, 22, -8,        # threads other 5, fifo 20, batch -3, idle 2, rr 7
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_scenario_priorities(default_run, variant):
    runs = default_run.runs
    v = variant_report(runs, variant)
    tasks = scenario.parse(paths.SCENARIOS / "default.scenario")
    # the first snapshot's rows; the second's (harness/priostates.py) are below
    prio = [x for x in v["values"] if x["kind"] == "prio" and not PBSTATES_KEY.match(x["key"])]
    rows = [x for x in prio if "scenario" in x["sources"]]
    # one row per scenario task (a thread each for pi and threads), in scenario order
    # (pids ascend as init starts them), each equal to the value derived by hand from
    # the scenario (DEFAULT_SCENARIO_PRIOS), priority inheritance included...
    module = [src(x, "module") for x in rows]
    assert module == DEFAULT_SCENARIO_PRIOS
    # ...and to the model the run's own verdict uses (oracles/sched_prio.py expected_prios())
    assert module == sched_prio.scenario_prios(tasks)
    assert {t["policy"] for t in tasks} >= {"nice", "fifo", "rr", "batch", "idle", "deadline",
                                            "pi", "threads"}
    # the PI holder runs boosted, at its top waiter's prio, not at its own 39 (nice 19)
    holder = next(t for t in scenario.task_lines(tasks) if t.get("pi_owner"))["pi_owner"]
    assert src(rows[holder - 1], "module") == -41
    # threads other than a group leader have no /proc/<pid>/stat
    assert all(len({src(x, s) for s in ("module", "memory", "gdb", "proc_stat", "scenario")
                    if s in x["sources"]}) == 1 for x in rows)
    # init and the kernel threads are there too, all checked against gdb at the snapshot
    assert len(prio) >= len(tasks) + 10
    assert any(x["info"]["comm"] == "init" and src(x, "module") == 20 for x in prio)
    assert all(x["agree"] for x in prio)
    # every scenario thread's policy, as the scenario line names it, and every task's
    policy = {x["key"]: x for x in v["values"] if x["kind"] == "policy"}
    named = {"nice": "normal", "other": "normal"}
    assert [src(policy[f"pid {x['info']['pid']}"], "gdb") for x in rows] == \
        [named.get(t["policy"], t["policy"]) for t in scenario.task_lines(tasks)]
    assert policy["every task"]["agree"] and "fifo" in src(policy["every task"], "gdb")
    # init reniced itself to 5 between the snapshots: gdb and the module see it
    # at snapshot 2, and it is the one priority that changed
    snap2 = {x["key"]: x for x in v["values"] if x["kind"] == "prio"}
    assert src(snap2["snap2 pid 1"], "gdb") == src(snap2["snap2 pid 1"], "module") == 25
    assert src(snap2["snap2/prio-changed"], "gdb") == "1" and snap2["snap2/prio-changed"]["agree"]


def test_logs_and_reports_kept(default_run):
    runs = default_run.runs
    latest = runs / "latest"
    for variant in VARIANTS:
        console = (latest / variant / "console.log").read_text()
        assert "KSYMLAB-READY" in console and "KSYMLAB-DONE" in console
        assert "ksymlab-gdb:" in (latest / variant / "gdb.log").read_text()
    md = (latest / "report.md").read_text()
    assert "## Summary" in md and "## Across variants" in md and "### blockdev" in md
    assert "| variant | checks | agree | disagree | unchecked | sources |" in md
    assert mdtables.widest(md) <= mdtables.MAX_COLUMNS


def test_ktap_parses_with_kunit(default_run):
    runs = default_run.runs
    rep = json.loads((runs / "latest" / "report.json").read_text())
    src = tree_src(rep["variants"]["exports"]["tree_key"])
    p = subprocess.run([sys.executable, "tools/testing/kunit/kunit.py", "parse",
                        str(runs / "latest" / "report.ktap")], cwd=src, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [c for v in rep["variants"].values() for c in v["symbols"] + v["values"]]
    # lttng-tools' points (--lttng-suite) are a nested subtest of their variant's
    suite = [t for v in rep["variants"].values()
             for t in (v.get("lttng_suite") or {}).get("tests", [])]
    assert suite, "the shared run has --lttng-suite"
    total = len(rows) + len(suite)
    # unchecked rows (agree None, with their reason) and skipped points are KTAP SKIPs
    skipped = sum(1 for c in rows if c["agree"] is None) + \
        sum(t["result"] == "skip" for t in suite)
    failed = sum(t["result"] == "fail" for t in suite)
    want = rf"Ran {total} tests: passed: {total - skipped - failed}" + \
        (rf", failed: {failed}" if failed else "") + \
        (rf", skipped: {skipped}\b" if skipped else r"\b")
    assert re.search(want, p.stdout), p.stdout
    assert "ERROR" not in p.stdout


def test_guest_panic_is_classified(tmp_path, default_run):
    # Neither the initramfs init nor the requested init exists: the kernel panics.
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--append", "rdinit=/no-such-init init=/no-such-init")
    assert p.returncode == 31, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ksymlab: panic: exports: Kernel panic - not syncing")
    rep = json.loads((tmp_path / "latest" / "report.json").read_text())
    err = rep["variants"]["exports"]["error"]
    assert rep["verdict"] == "fail" and err["step"] == "panic"
    assert "Kernel panic" in err["excerpt"]
    assert (tmp_path / "latest" / "exports" / "console.log").exists()
    assert qemu_processes(tmp_path) == []


def test_silent_guest_is_a_hang(tmp_path, default_run):
    # A shell on the console waits for input forever and prints nothing more.
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--append", "rdinit=/bin/sh", "--hang-timeout", "10")
    assert p.returncode == 33, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1].startswith("ksymlab: hang: exports: no console")
    assert qemu_processes(tmp_path) == []


def test_unexpected_reboot_is_classified(tmp_path, default_run):
    # busybox reboot -f as the first process: the guest resets during boot
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--append", "rdinit=/bin/reboot -- -f")
    assert p.returncode == 37, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1].startswith(
        "ksymlab: reboot: exports: unexpected reboot before KSYMLAB-ARM")
    err = json.loads((tmp_path / "latest" / "report.json").read_text())[
        "variants"]["exports"]["error"]
    assert err["verdict"] == "reboot" and "reboot: Restarting system" in err["excerpt"]
    assert "**reboot**" in (tmp_path / "latest" / "report.md").read_text()
    assert qemu_processes(tmp_path) == []


def test_guest_dying_under_gdb_is_classified_by_its_console(tmp_path, default_run):
    # The module panics where it would take the snapshot, while gdb waits at
    # the breakpoint: the verdict is the panic, not the lost gdb session.
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path),
                "--insmod-args", "selftest_panic=1")
    assert p.returncode == 31, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1].startswith(
        "ksymlab: panic: exports: Kernel panic - not syncing: ksymlab: selftest_panic")
    assert (tmp_path / "latest" / "exports" / "gdb.log").exists()
    assert qemu_processes(tmp_path) == []


def test_kaslr_slide_computed_and_vmlinux_relocated(tmp_path, default_run):
    # without the LTTng boot: it boots nokaslr whatever --kaslr says (lttng/boot/session.py),
    # the same boot as the shared run's
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path), "--kaslr",
                "--no-lttng")
    assert p.returncode == 0, p.stderr[-3000:]
    v = json.loads((tmp_path / "latest" / "report.json").read_text())["variants"]["exports"]
    slide = int(v["kaslr"]["slide"], 16)
    assert v["kaslr"]["enabled"] is True
    assert "nokaslr" not in (tmp_path / "latest" / "exports" / "qemu.cmdline").read_text()
    vmlinux = tree_src(v["tree_key"]) / "vmlinux"
    # the guest's _text is the linked _text moved by the slide, and so is every
    # address the module resolved, gdb read from the relocated vmlinux, and
    # /proc/kallsyms listed
    assert int(v["kaslr"]["guest_text"], 16) == nm_address(vmlinux, "_text") + slide
    for s in v["symbols"]:
        expected = nm_address(vmlinux, s["key"]) + slide
        assert int(src(s, "module"), 16) == int(src(s, "gdb"), 16) == expected, s
        assert s["agree"] is True
    assert all(x["agree"] is not False for x in v["values"]), \
        [x for x in v["values"] if x["agree"] is False]
    assert f"relocated by {v['kaslr']['slide']}" in p.stderr or slide == 0


def test_broken_patch_is_reported(tmp_path):
    patches = tmp_path / "patches"
    shutil.copytree(paths.REPO / "patches", patches)
    (name,) = [n for n in (patches / "exports" / "series").read_text().split()
               if "task_prio" in n]
    patch = patches / "exports" / name
    patch.write_text(patch.read_text().replace("EXPORT_SYMBOL_GPL(task_prio);",
                                               "EXPORT_SYMBOL_GPL(task_prio);\n+/* extra */")
                     .replace("return p->prio - MAX_RT_PRIO;", "return p->prio - 1000;"))
    env = {"KSYMLAB_PATCHES": str(patches), "KSYMLAB_CACHE": str(tmp_path / "cache")}
    p = harness("run", "--variants", "exports", "--runs-dir", str(tmp_path / "runs"), env=env)
    assert p.returncode == 11, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ksymlab: patch: git apply --check") and "log:" in last
    run = tmp_path / "runs" / "latest"
    assert json.loads((run / "report.json").read_text())["variants"]["exports"]["error"][
        "step"] == "patch"
    assert (run / "exports" / "patch-patch.log").exists()
    # the half-prepared tree is 1.3 GB: do not leave it to pytest's tmp rotation
    shutil.rmtree(tmp_path / "cache")


def test_required_symbol_missing_refuses_load(tmp_path, default_run):
    p = harness("run", "--variants", "stock", "--runs-dir", str(tmp_path),
                "--insmod-args", "simulate_missing=task_prio")
    assert p.returncode == 35, p.stderr[-2000:]
    console = (tmp_path / "latest" / "stock" / "console.log").read_text()
    assert "ksymlab_probe: mode kprobe: cannot resolve task_prio" in console
    # busybox insmod's wording for -ENOENT from init_module
    assert "unknown symbol in module, or unknown parameter" in console


@pytest.fixture(scope="module")
def degraded_run(tmp_path_factory, default_run):
    """One run for the two tests of a missing optional symbol: the built-in kallsyms
    and `mine`, a variant defined only in a user's file, the same kernel as kallsyms
    but its file says blockdev must degrade; the module told block_class is missing.
    Without the LTTng boots: the default run has kallsyms' LTTng, and simulate_missing
    is a probe-module parameter."""
    runs = tmp_path_factory.mktemp("degraded")
    mine = runs / "mine.toml"
    mine.write_text((paths.REPO / "variants" / "kallsyms.toml").read_text()
                    .replace("[expect]", '[expect]\ndegraded = ["blockdev"]'))
    p = harness("run", "--variants", "mine,kallsyms", "--variant-file", str(mine),
                "--runs-dir", str(runs), "--insmod-args", "simulate_missing=block_class",
                "--no-lttng")
    return p, runs


def test_optional_symbol_missing_degrades(degraded_run):
    p, runs = degraded_run
    assert p.returncode == 1, p.stderr[-2000:]
    v = variant_report(runs, "kallsyms")
    assert v["samplers"]["blockdev"] == {"available": False, "missing": "block_class"}
    assert all(sm["available"] for n, sm in v["samplers"].items() if n != "blockdev")
    bad = [x for x in v["values"] if x["agree"] is False]
    # only the degraded sampler disagrees: its own row, sysfs lists devices
    # the module could not, and the block device kinds lose their two
    # independent oracles (the rows they would agree on are failing)
    assert [x["id"] for x in bad if x["kind"] == "sampler"] == ["sampler:blockdev"]
    assert all(x["kind"] == "blockdev" and src(x, "module") is None
               for x in bad if x["kind"] not in ("sampler", "oracles"))
    assert {x["id"] for x in bad if x["kind"] == "oracles"} <= {
        "oracles:block devices", "oracles:whole flag"}
    assert "sampler blockdev reported itself unavailable" in v["notes"]


def test_a_user_variant_that_expects_the_degradation_passes(degraded_run):
    """A variant defined only in a user's file, next to a built-in one: the
    same kernel as kallsyms, but its file says blockdev must degrade."""
    p, runs = degraded_run
    rep = json.loads((runs / "latest" / "report.json").read_text())
    assert rep["variants"]["mine"]["verdict"] == "pass", p.stderr[-2000:]
    assert rep["variants"]["kallsyms"]["verdict"] == "fail"      # it expects every sampler
    assert p.returncode == 1
    assert rep["variants"]["mine"]["tree_key"] == rep["variants"]["kallsyms"]["tree_key"]


def test_gpl_only_exports_refuse_other_licences(tmp_path, default_run):
    runs = default_run.runs
    src = tree_src(variant_report(runs, "exports")["tree_key"])
    for f in (paths.PROBE_MODULE).iterdir():
        if f.suffix in (".c", ".h") or f.name == "Kbuild":
            shutil.copy(f, tmp_path / f.name)
    p = subprocess.run(["make", "-C", str(src), f"M={tmp_path}", "KSYMLAB_MODE=exports",
                        "KSYMLAB_LICENSE=Proprietary", "modules"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode != 0
    for sym in ("task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask",
                "gendisk_block_class", "gendisk_device_type"):
        assert f"GPL-incompatible module ksymlab_probe.ko uses GPL-only symbol '{sym}'" \
            in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("variant,arg13", [("exports", False), ("kallsyms", False),
                                           ("stock", False), ("bpf13", True)])
def test_bpf_thirteenth_argument(default_run, variant, arg13):
    """Seed patch 2: the literal port keeps argument 13 unreadable; bpf13 completes it."""
    runs = default_run.runs
    bpf = {x["key"]: x for x in variant_report(runs, variant)["values"] if x["kind"] == "bpf"}
    assert src(bpf["arg12/readable"], "module") == "ok"
    assert (src(bpf["arg13/readable"], "module") == "ok") is arg13
    if not arg13:
        # the verifier's ctx bound: offset 96 is past 12 u64 arguments
        assert "invalid_bpf_context_access_off=96" in bpf["arg13/readable"]["info"]["verifier"]
    if variant in ("exports", "bpf13"):
        assert bpf["arg12/arg1-domain"]["agree"] is True
    if arg13:
        # start_time: after boot, no later than the program's clock or gdb's
        assert bpf["arg13/value"]["agree"] is True


@pytest.mark.prebuild("stock-6.12", "kallsyms-6.12", "exports-6.12", "bpf13-6.12")
def test_both_kernel_lines_in_one_run(tmp_path):
    """6.1 and 6.12 side by side: every variant passes on its line, the matrix has a
    column per line, and what must match across lines does (same scenario, same
    static programs, same RAM disks). Without the LTTng boots: the default run has
    the 6.1 ones, e2e_runs.lttng_612_run the 6.12 ones, and they add nothing across
    lines."""
    p = harness("run", "--kernel", "6.1,6.12", "--runs-dir", str(tmp_path), "--no-lttng")
    assert p.returncode == 0, p.stderr[-3000:]
    rep = json.loads((tmp_path / "latest" / "report.json").read_text())
    assert rep["matrix"]["lines"] == ["6.1", "6.12"]
    for row in rep["matrix"]["rows"]:
        assert set(row["cells"]) == {"6.1", "6.12"}, row
        assert all(c["verdict"] == "pass" for c in row["cells"].values()), row
    across = {r["id"]: r for r in rep["across"]}
    for cid in ("scenario-prio", "blockdevs", "ustack-names", "ustack-addresses"):
        assert across[cid]["identical"] and len(across[cid]["values"]) == 8, across[cid]
    assert across["pageblock-count"]["scope"] == "kernel line"
    assert not any(r["flagged"] for r in rep["across"])
    # the guests really ran the two kernels
    kernels = {n: v["kernel_line"] for n, v in rep["variants"].items()}
    assert sorted(kernels.values()) == ["6.1"] * 4 + ["6.12"] * 4
    console = (tmp_path / "latest" / "exports-6.12" / "console.log").read_text()
    assert "Linux version 6.12." in console


@pytest.mark.parametrize("variant", VARIANTS)
def test_pageblock_states(default_run, variant):
    """Skip bits at both snapshots, CMA and Isolate blocks, a memory block taken offline
    between the snapshots, every block of both snapshots checked (harness/pbstates.py)."""
    rows = {r["id"]: r for r in variant_report(default_run.runs, variant)["values"]}
    for n in (1, 2):
        assert rows[f"pageblock:snap{n}/skip-bits"]["agree"] is True
        assert rows[f"snapshot:snap{n}/sequence"]["agree"] is True
    changed = rows["pageblock:snap2/changed"]
    assert changed["agree"] is True and changed["sources"]["gdb_bitmap"] > 0
    offline = [r for i, r in rows.items() if i.startswith("pageblock:snap2/memory")]
    assert len(offline) == 1 and offline[0]["agree"] is True, offline
    for name in ("Unmovable", "Movable", "Reclaimable", "CMA", "Isolate"):
        assert rows[f"pageblock:types/{name}"]["agree"] is True, rows[f"pageblock:types/{name}"]
    later = [r for i, r in rows.items() if i.startswith("pageblock:snap2 ")]
    first = [r for r in rows.values() if r["kind"] == "pageblock" and " pfn " in r["key"]
             and not r["key"].startswith("snap")]
    assert len(later) == len(first) > 0 and all(r["agree"] for r in later)
