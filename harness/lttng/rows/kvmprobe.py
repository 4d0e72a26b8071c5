"""Does LTTng's kvm-x86 probe load in the guest? On a tree that builds KVM
(harness/kconfig/kvm.config: the v2 variants) the probe calls kvm.ko's
get_exit_info/get_segment_base static calls; the module loader must fix those
call sites up through the keys kvm.ko exports (v2 0008), or the load fails.
No kvm_exit event fires in a TCG guest (no VMX), so the load is what is checked.

Sources: the probe built (the LTTng build's ko/), the guest's modprobe status,
and /proc/modules afterwards (the kernel's own list, read by awk). None is
independent of the guest kernel's loader: this row says that the load
succeeded, not what the probe would record."""

from pathlib import Path

from ...model.enums import Source
from ...model.results import Check

PROBE = "lttng-probe-kvm-x86"
WHY = "no kvm_exit fires in a TCG guest (no VMX): the probe's load is checked"


def kvm_in_tree(tree_src):
    """CONFIG_KVM=m or =y in the tree's .config."""
    cfg = Path(tree_src) / ".config"
    text = cfg.read_text() if cfg.is_file() else ""
    return any(line in ("CONFIG_KVM=m", "CONFIG_KVM=y") for line in text.splitlines())


def rows(tree_src, build_dir, guest):
    """One lttng:kvm/probe-load row on a tree with KVM, none otherwise; `guest`: the
    GuestData (boot/guestlines.py)."""
    if not kvm_in_tree(tree_src):
        return ()
    built = (Path(build_dir) / "ko" / f"{PROBE}.ko").is_file()
    kmod = [k for k in guest.kmod if k.name == PROBE]
    listed = any(k.name == PROBE.replace("-", "_") for k in guest.kmodlist)
    if kmod:
        k = kmod[-1]
        load = "loaded" if k.loaded == 1 else "failed: " + (" ".join(k.text) or "(no message)")
    else:
        load = None
    sources = {Source.LTTNG_BUILD: f"{PROBE}.ko" if built else None,
               Source.GUEST_MODPROBE: load,
               Source.GUEST_LSMOD: PROBE.replace("-", "_") if listed else None}
    agree = built and load == "loaded" and listed
    if not built:
        reason = "the tree builds KVM but LTTng did not build its kvm-x86 probe"
    elif load is None:
        reason = "the guest did not try to load the probe"
    else:
        reason = None if agree else "the kvm-x86 probe did not load"
    dmesg = [" ".join(d.text) for d in guest.kmoddmesg]
    return (Check("lttng", "kvm/probe-load", sources, agree,
                  {"why": WHY, "dmesg": dmesg[-5:]}, reason,
                  label="LTTng's kvm-x86 probe loads (static calls into kvm.ko)"),)
