"""End to end: LTTng 2.13.18 (Debian 13's) on the 6.12 line (issue 23 item 1).

Reads the session's shared run e2e_runs.lttng_612_run (exports-6.12 and
stock-6.12, each with its probe-module boot and its LTTng boot). The LTTng rows
are the same checks as on 6.1 (harness/lttng/rows/features.py: the guest's own oracle
lines, ftrace, gdb at the quiet point); this file asserts they ran for 2.13.18
and passed, that the kallsyms-free build resolves nothing by name, and that two
independent readers of the .ko files (coverage.py: nm and .rodata strings;
symcheck audit: relocations into the resolver's arguments, in C on libelf)
agree on how each name was got.
"""

import hashlib
import re
from pathlib import Path

import pytest

from harness import paths
from harness.lttng.supply import fetch
from harness.tests.e2e_runs import LTTNG_612_VARIANTS, report_rows

pytestmark = [pytest.mark.e2e, pytest.mark.prebuild("stock-6.12", "exports-6.12")]

# What each build must show for the names the seed series covers (the coverage
# table's "how"), written out here rather than read from the code under test.
HOW = {
    "exports-6.12": {
        "stack_trace_save_user": "export",
        "stack_trace_save": "export",
        "get_pfnblock_flags_mask": "export",
        "block_class": "export (gendisk_block_class())",
        "disk_type": "export (gendisk_device_type())",
        "global_wb_domain": "tracepoint argument",
        "irq_to_desc": "not available (wrapper built without lookups)",
    },
    "stock-6.12": {n: "kprobe trick (kallsyms_lookup_name)" for n in (
        "stack_trace_save_user", "stack_trace_save", "get_pfnblock_flags_mask", "block_class",
        "disk_type", "global_wb_domain", "irq_to_desc")},
}


def test_the_6_12_lttng_run_passes(lttng_612_run):
    assert lttng_612_run.proc.returncode == 0, lttng_612_run.proc.stderr[-3000:]
    rep = lttng_612_run.report()
    assert sorted(rep["variants"]) == sorted(LTTNG_612_VARIANTS)
    for name in LTTNG_612_VARIANTS:
        v = rep["variants"][name]
        assert v["kernel_line"] == "6.12"
        assert v["lttng"]["version"] == "2.13.18", v["lttng"]
        rows = report_rows(v, ("lttng", "lttng-coverage"))
        bad = [(c.id, dict(c.sources), c.reason) for c in rows if c.disagrees]
        assert bad == [], (name, bad)
        # every LTTng row names the release it judged
        assert {c.info.get("lttng_version") for c in rows} == {"2.13.18"}
        keys = {c.key for c in rows if c.kind == "lttng"}
        for prefix in ("prio/", "ustack/depth", "ustack/stack", "kstack/chain", "uprobe/level2",
                       "splice/output", "blockdev/", "writeback/", "kmem/", "gdb/stop",
                       "symcheck/by-name/", "symcheck/check"):
            assert any(k.startswith(prefix) for k in keys), (name, prefix)
        assert v["lttng"]["events"]["sched_switch"] > 0
        # the guest booted 6.12 and loaded LTTng 2.13.18's modules
        console = (lttng_612_run.latest / name / "lttng" / "console.log").read_text()
        assert "Linux version 6.12." in console
    md = (lttng_612_run.latest / "report.md").read_text()
    assert "| exports-6.12 (LTTng 2.13.18) | stock-6.12 (LTTng 2.13.18) |" in md


@pytest.mark.parametrize("name", LTTNG_612_VARIANTS)
def test_how_each_name_was_got_two_readers_agree(lttng_612_run, name):
    v = lttng_612_run.variant(name)
    rows = report_rows(v, ("lttng", "lttng-coverage"))
    how = {c.key: c.get("how") for c in rows if c.kind == "lttng-coverage"}
    for n, want in HOW[name].items():
        assert how[n] == want, (n, how[n])
    # task_prio: 2.13.18 neither imports nor names it (inlined since v2.13.11)
    assert how["task_prio"].startswith("not looked up: inlined")
    # symcheck audit, the other reader: a by-name finding exactly where the table says
    # "kprobe trick", and on the kallsyms-free build no module flagged at all
    by_name = set(v["lttng"]["symcheck"]["by_name"])
    tricks = {n for n, h in how.items() if h.startswith("kprobe trick")}
    covered = set(HOW[name]) | {"task_prio"}
    assert by_name & covered == tricks & covered, (by_name, tricks)
    flagged = v["lttng"]["symcheck"]["flagged"]
    assert (flagged == []) == (name == "exports-6.12"), flagged


def test_the_source_came_pinned_through_the_private_apt_configuration(lttng_612_run):
    """The 2.13.18 .deb in the cache is the pinned file (sha256 recomputed here), apt
    fetched it from trixie (its own log in the entry), and the host's apt sources do
    not name trixie (nothing under /etc was changed): the private configuration under
    <cache>/apt/trixie supplied it. That configuration is a cache entry of its own,
    which a full cache evicts once the .deb is cached (stop 51's CI): checked when
    present."""
    pin = fetch.RELEASES["2.13.18"]
    debs = list((paths.cache_root() / "lttng" / "debs").glob(
        f"modules-*/debs/{pin.package}_{pin.version}_all.deb"))
    assert debs, "no 2.13.18 .deb in the cache"
    assert {hashlib.sha256(d.read_bytes()).hexdigest() for d in debs} == {pin.sha256}
    for d in debs:
        log = (d.parent.parent / "download.log").read_text()
        assert re.search(rf"^Get:\d+ \S+ trixie/main \S+ {pin.package} all "
                         rf"{re.escape(pin.version)} ", log, re.M), log
    host = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]
    assert not any("trixie" in f.read_text() for f in host if f.is_file())
    private = paths.cache_root() / "apt" / "trixie"
    if (private / "etc" / "sources.list").exists():
        assert " trixie main" in (private / "etc" / "sources.list").read_text()
        assert any((private / "state" / "lists").glob("*trixie*Packages*"))
