"""End to end: LTTng 2.13's syscall event notifiers oops a kernel without
CONFIG_COMPAT, and the 2.14 guard backported as patches/lttng 0009 fixes it
(issue 39 item 3; the bug report is in docs/lttng.md).

Our kernels have COMPAT since issue 39 (base.config, as distribution kernels and
LTTng's CI kernels), so the bug needs a tree of its own: stock 6.1 with
harness/kconfig/nocompat.config merged after base.config. One run, two LTTng
builds on that one tree, from two variant files written here: `stock-nocompat`
(stock.toml, role stock: its LTTng series has 0009) and `compat-oops` (the same
with patches/lttng/compat-oops.series: the series without 0009). Each runs
lttng-tools' test_notification_kernel_syscall, whose `openat` trigger (ABI "all")
makes LTTng create compat event notifiers.

The oracles are the guest's own outputs, read here with this file's regexes: the
console of each suite guest and the TAP stream it wrote. The oops address is
checked against the kernel's own i386 syscall table (syscall_32.tbl of the tree):
event_notifier_compat_syscall_dispatch is NULL, so the fault address is openat's
i386 number times sizeof(struct hlist_head). The confusion it rules out: the
native table's openat (257 on x86-64, address 0x808), a NULL native table.
"""

import json
import re

import pytest

from harness import paths
from harness.tests.e2e_runs import harness, tree_src

pytestmark = [pytest.mark.e2e]

SCRIPT = "regression/tools/notification/test_notification_kernel_syscall"
HLIST_HEAD = 8          # struct hlist_head: one pointer on x86-64


@pytest.fixture(scope="module")
def compat_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("compat-oops")
    text = (paths.REPO / "variants" / "stock.toml").read_text()
    frags = 'fragments = ["base.config"]'
    assert 'patches = "stock"' in text and "default = true" in text and frags in text
    nocompat = (text.replace("default = true", 'default = false\nrole = "stock"')
                .replace(frags, 'fragments = ["base.config", "nocompat.config"]'))
    (work / "stock-nocompat.toml").write_text(nocompat)
    (work / "compat-oops.toml").write_text(
        nocompat.replace('role = "stock"\n', "")
        .replace('patches = "stock"', 'patches = "compat-oops"'))
    runs = work / "runs"
    p = harness("run", "--variants", "stock-nocompat,compat-oops",
                "--variant-file", str(work / "stock-nocompat.toml"),
                "--variant-file", str(work / "compat-oops.toml"),
                "--lttng-suite", "--lttng-suite-only", "notification/test_notification_kernel_syscall",
                "--lttng-suite-timeout", "300",
                "--runs-dir", str(runs), timeout=3600)
    if not (runs / "latest" / "report.json").is_file():
        pytest.fail(f"the compat-oops run wrote no report (exit {p.returncode}):\n"
                    f"{p.stderr[-3000:]}")
    return p, runs / "latest"


def _report(latest):
    return json.loads((latest / "report.json").read_text())


def _tap(latest, variant):
    """(plan, {number: "ok" | "not ok"}) of SCRIPT's first guest's TAP stream."""
    text = (latest / variant / "lttng-suite" / "suite-tap-1.log").read_text(errors="replace")
    block = text.split(f"KSYMLAB-SUITE-BEGIN {SCRIPT}", 1)[1].split("KSYMLAB-SUITE-END", 1)[0]
    plan = int(re.search(r"^1\.\.(\d+)", block, re.M).group(1))
    points = {int(m.group(2)): m.group(1)
              for m in re.finditer(r"^(not ok|ok) (\d+)\b", block, re.M)}
    return plan, points


def _openat_i386(tree):
    for line in (tree / "arch/x86/entry/syscalls/syscall_32.tbl").read_text().splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] == "i386" and f[2] == "openat":
            return int(f[0])
    raise AssertionError("no i386 openat in syscall_32.tbl")


def test_the_tree_has_no_compat_syscalls(compat_run):
    _, latest = compat_run
    rep = _report(latest)
    key = rep["variants"]["stock-nocompat"]["tree_key"]
    assert rep["variants"]["compat-oops"]["tree_key"] == key
    config = (tree_src(key) / ".config").read_text()
    # the state the bug needs: an x86-64 kernel without IA32 emulation
    assert "CONFIG_X86_64=y" in config and "CONFIG_SMP=y" in config
    assert "CONFIG_COMPAT=y" not in config and "CONFIG_IA32_EMULATION=y" not in config


def test_without_the_guard_the_openat_trigger_oopses_in_the_compat_dispatch(compat_run):
    p, latest = compat_run
    rep = _report(latest)
    e = rep["lttng_suite"]["compat-oops"]
    assert len(e["faults"]) == 1 and "oops" in e["faults"][0] and SCRIPT in e["faults"][0]
    console = (latest / "compat-oops" / "lttng-suite" / "suite-console-1.log").read_text(
        errors="replace")
    m = re.search(r"BUG: kernel NULL pointer dereference, address: ([0-9a-f]{16})", console)
    assert m, "the guest's console shows the NULL dereference"
    tree = tree_src(rep["variants"]["stock-nocompat"]["tree_key"])
    nr = _openat_i386(tree)
    assert int(m.group(1), 16) == nr * HLIST_HEAD != 257 * HLIST_HEAD
    assert re.search(r"RIP: 0010:lttng_syscall_filter_enable_event_notifier\+", console)
    # the TAP stream stops at the oops: what ran before passed, the rest is failed
    plan, raw = _tap(latest, "compat-oops")
    assert raw and all(r == "ok" for r in raw.values()) and len(raw) < plan
    pts = [t for t in e["tests"] if t["name"].startswith(SCRIPT + ":")]
    assert len(pts) == plan
    assert [t["result"] for t in pts] == ["pass"] * len(raw) + ["fail"] * (plan - len(raw))
    assert all("TAP stream cut short: guest oops" in t["reason"] for t in pts[len(raw):])


def test_with_the_guard_the_script_passes_and_the_judge_flags_the_unguarded_build(compat_run):
    p, latest = compat_run
    rep = _report(latest)
    e = rep["lttng_suite"]["stock-nocompat"]
    plan, raw = _tap(latest, "stock-nocompat")
    assert e["faults"] == [] and len(raw) == plan and set(raw.values()) == {"ok"}
    assert [t["result"] for t in e["tests"]] == ["pass"] * plan
    # every point the oops cut off passes on stock and fails on compat-oops twice
    flagged = [r for r in rep["lttng_suite_regressions"] if r["flagged"]]
    cut = plan - len(_tap(latest, "compat-oops")[1])
    assert len(flagged) == cut and all(r["variant"] == "compat-oops" for r in flagged)
    assert all(r["retry"]["outcome"] == "failed again" for r in flagged)
    assert p.returncode == 1 and rep["verdict"] == "fail"
