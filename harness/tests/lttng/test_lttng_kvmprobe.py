"""LTTng's kvm-x86 probe in the guest: the tree modules staged for it and its load row."""

import pytest

from harness.errors import HarnessError
from harness.lttng.rows import coverage, kvmprobe
from harness.lttng.boot import guestlines
from harness.lttng.supply import treemods
from harness.model.results import Check

LOADED = "kmod name=lttng-probe-kvm-x86 loaded=1\nkmodlist name=lttng_probe_kvm_x86\n"
FAILED = ("kmod name=lttng-probe-kvm-x86 loaded=0 modprobe: can't load module kvm "
          "(kernel/arch/x86/kvm/kvm.ko): Invalid argument\n"
          "kmoddmesg [ 3.1] Failed to fixup __raw_static_call() usage at: 0xffffffffc0001234\n")


def tree(tmp_path, kvm="m"):
    (tmp_path / ".config").write_text(f"CONFIG_X86=y\nCONFIG_KVM={kvm}\n" if kvm else
                                      "CONFIG_X86=y\n# CONFIG_KVM is not set\n")
    return tmp_path


def build(tmp_path, probe=True):
    ko = tmp_path / "lbuild" / "ko"
    ko.mkdir(parents=True, exist_ok=True)
    if probe:
        (ko / "lttng-probe-kvm-x86.ko").write_bytes(b"\x7fELF")
    return tmp_path / "lbuild"


def guest(text):
    return guestlines.parse(text + guestlines.END + "\n")


def test_a_tree_without_kvm_has_no_row(tmp_path):
    assert kvmprobe.rows(tree(tmp_path, kvm=None), build(tmp_path), guest(LOADED)) == ()
    # KVM built in: the probe still loads (no kvm.ko to stage), one agreeing row
    (row,) = kvmprobe.rows(tree(tmp_path, kvm="y"), build(tmp_path), guest(LOADED))
    assert row.key == "kvm/probe-load" and row.agrees is True


def test_the_probe_loaded_and_listed_agrees(tmp_path):
    (row,) = kvmprobe.rows(tree(tmp_path), build(tmp_path), guest(LOADED))
    assert row.agrees and row.key == "kvm/probe-load"
    assert row.get("guest modprobe") == "loaded" and row.get("guest lsmod") == "lttng_probe_kvm_x86"


def test_a_failed_load_names_the_loader_message(tmp_path):
    """The trampoline exported without its key: the loader cannot fix the call up."""
    (row,) = kvmprobe.rows(tree(tmp_path), build(tmp_path), guest(FAILED))
    assert not row.agrees and row.reason == "the kvm-x86 probe did not load"
    assert row.get("guest modprobe").startswith("failed: modprobe: can't load module kvm")
    assert row.info["dmesg"] == ["[ 3.1] Failed to fixup __raw_static_call() usage at: "
                                 "0xffffffffc0001234"]


@pytest.mark.parametrize("text,probe,reason", [
    (LOADED, False, "the tree builds KVM but LTTng did not build its kvm-x86 probe"),
    ("", True, "the guest did not try to load the probe"),
    ("kmod name=lttng-probe-kvm-x86 loaded=1\n", True, "the kvm-x86 probe did not load"),
])
def test_no_build_no_attempt_or_not_listed_disagrees(tmp_path, text, probe, reason):
    (row,) = kvmprobe.rows(tree(tmp_path), build(tmp_path, probe), guest(text))
    assert not row.agrees and row.reason == reason


def test_coverage_says_what_the_kvm_row_shows():
    ok = Check("lttng", "kvm/probe-load", {"lttng build": "x"}, True)
    status = {r.key: r.get("feature") for r in coverage.rows("/nonexistent", False, [ok], (), "2.13.9")}
    assert status["kvm_x86_ops"] == "the probe loads (no kvm_exit fires in a TCG guest: no VMX)"
    status = {r.key: r.get("feature") for r in coverage.rows("/nonexistent", False, [], (), "2.13.9")}
    assert status["kvm_x86_ops"] == "not exercised: the tree does not build KVM"
    bad = Check("lttng", "kvm/probe-load", {"lttng build": "x"}, False)
    status = {r.key: r.get("feature") for r in coverage.rows("/nonexistent", False, [bad], (), "2.13.9")}
    assert status["kvm_x86_ops"] == "wrong or missing (see the lttng rows)"


def _order(tmp_path, *paths):
    (tmp_path / "modules.order").write_text("".join(p + "\n" for p in paths))
    return tmp_path


DEPS = {"lttng-probe-kvm-x86.ko": ["lttng_tracer", "kvm"], "lttng-tracer.ko": [],
        "kvm.ko": ["irqbypass"], "irqbypass.ko": [], "lttng-probe-sched.ko": ["lttng_tracer"]}


def deps(path):
    return DEPS[path.name]


def test_the_tree_modules_a_probe_needs_in_dependency_order(tmp_path):
    src = _order(tmp_path, "arch/x86/kvm/kvm.ko", "arch/x86/kvm/kvm-intel.ko",
                 "virt/lib/irqbypass.ko")
    kos = [tmp_path / n for n in ("lttng-probe-kvm-x86.ko", "lttng-tracer.ko",
                                  "lttng-probe-sched.ko")]
    assert treemods.needed(kos, src, deps) == ["virt/lib/irqbypass.ko", "arch/x86/kvm/kvm.ko"]
    # 6.2+ writes .o in modules.order
    src = _order(tmp_path, "arch/x86/kvm/kvm.o", "virt/lib/irqbypass.o")
    assert treemods.needed(kos, src, deps) == ["virt/lib/irqbypass.ko", "arch/x86/kvm/kvm.ko"]
    assert treemods.needed(kos[1:], src, deps) == []


def test_a_dependency_nobody_provides_is_one_clear_error(tmp_path):
    src = _order(tmp_path, "virt/lib/irqbypass.ko")
    with pytest.raises(HarnessError, match="lttng-probe-kvm-x86.ko depends on kvm, which "
                                           "neither LTTng nor the tree's modules.order"):
        treemods.needed([tmp_path / "lttng-probe-kvm-x86.ko", tmp_path / "lttng-tracer.ko"],
                        src, deps)
