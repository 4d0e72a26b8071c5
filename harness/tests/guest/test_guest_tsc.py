"""harness/guest/tsc.py: the host TSC rate a TCG guest is told (tsc_early_khz=), and
the clocksource a guest's console says it ran on."""
import platform
import re
import subprocess

from harness.prepare.tree import Tree
from harness.guest import qemu, tsc
from harness.guest.qemu import QemuSession

TIMEOUTS = {"boot_timeout": 5, "hang_timeout": 5}


class FakeClock:
    """A TSC of `khz` and a nanosecond clock that move together on sleep()."""

    def __init__(self, khz, tsc0=10**12, ns0=5 * 10**9):
        self.khz, self.tsc, self.ns = khz, tsc0, ns0

    def sleep(self, seconds):
        self.ns += int(seconds * 1e9)
        self.tsc += int(seconds * self.khz * 1000)


def test_the_rate_is_counter_ticks_per_millisecond():
    c = FakeClock(2_694_873)
    assert tsc.rate_khz(lambda: c.tsc, lambda: c.ns, c.sleep) == 2_694_873
    c = FakeClock(1_000_000)
    assert tsc.rate_khz(lambda: c.tsc, lambda: c.ns, c.sleep, samples=1) == 1_000_000


def test_the_median_ignores_one_interval_a_preemption_stretched():
    c = FakeClock(2_300_000)
    calls = {"n": 0}

    def ns():
        calls["n"] += 1
        # the 4th read (end of the 2nd interval) comes 1 ms late: that rate is low
        return c.ns + (1_000_000 if calls["n"] == 4 else 0)
    assert tsc.rate_khz(lambda: c.tsc, ns, c.sleep) == 2_300_000


def test_a_counter_that_does_not_move_has_no_rate():
    c = FakeClock(2_300_000)
    assert tsc.rate_khz(lambda: 42, lambda: c.ns, c.sleep) is None


def test_constant_tsc_is_read_from_the_flags_line(tmp_path):
    f = tmp_path / "cpuinfo"
    f.write_text("processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n")
    assert tsc.constant_tsc(f)
    f.write_text("processor\t: 0\nflags\t\t: fpu tsc nonstop_tsc\nbugs\t: constant_tsc\n")
    assert not tsc.constant_tsc(f)
    assert not tsc.constant_tsc(tmp_path / "missing")


def host_kernel_tsc_mhz():
    """The host kernel's own TSC calibration (its log), else /proc/cpuinfo's MHz, and
    the tolerance each deserves: an oracle that shares nothing with rdtsc timing."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        log = ""
    found = re.findall(r"tsc: (?:Refined TSC clocksource calibration|Detected) "
                       r"([0-9.]+) MHz", log)
    if found:
        return float(found[-1]), 0.01
    with open("/proc/cpuinfo", encoding="ascii") as f:
        mhz = re.search(r"cpu MHz\s*:\s*([0-9.]+)", f.read())
    return float(mhz.group(1)), 0.15


def test_the_measured_host_rate_is_the_rate_the_host_kernel_calibrated():
    khz = tsc.host_tsc_khz.__wrapped__()
    if platform.machine() != "x86_64" or not tsc.constant_tsc():
        assert khz is None
        return
    mhz, tolerance = host_kernel_tsc_mhz()
    assert abs(khz / 1000 - mhz) <= mhz * tolerance, (khz, mhz)


def session(tmp_path, **kw):
    return QemuSession(Tree("fake", "k", tmp_path, tmp_path), tmp_path / "i", tmp_path,
                       **TIMEOUTS, **kw)


def test_only_a_tcg_guest_without_icount_is_told_the_rate(tmp_path, monkeypatch):
    monkeypatch.setattr(qemu, "host_tsc_khz", lambda: 2_299_765)
    vm = session(tmp_path)
    vm.accel = "tcg"
    append = vm.kernel_append().split()
    assert "tsc_early_khz=2299765" in append
    assert append.index("tsc=reliable") + 1 == append.index("tsc_early_khz=2299765")
    vm.accel = "kvm"            # KVM gives the guest its TSC rate itself
    assert not [p for p in vm.kernel_append().split() if p.startswith("tsc_early")]
    vm = session(tmp_path, icount=True)
    vm.accel = "tcg"            # under -icount the TSC counts instructions
    assert not [p for p in vm.kernel_append().split() if p.startswith("tsc_early")]
    monkeypatch.setattr(qemu, "host_tsc_khz", lambda: None)
    vm = session(tmp_path)
    vm.accel = "tcg"            # no rate measured: the guest calibrates as before
    assert not [p for p in vm.kernel_append().split() if p.startswith("tsc_early")]


CONSOLE = """\
[    0.000000] tsc: Fast TSC calibration failed
[    0.120000] clocksource: Switched to clocksource tsc-early
[    1.300000] clocksource: Switched to clocksource tsc
"""


def test_the_clocksource_is_the_last_the_kernel_switched_to():
    assert tsc.clocksource(CONSOLE) == "tsc"
    assert tsc.clocksource(CONSOLE.replace(
        "clocksource tsc\n", "clocksource tsc\n"
        "[   30.1] clocksource: Switched to clocksource refined-jiffies\n")) \
        == "refined-jiffies"
    assert tsc.clocksource("[    0.1] tsc: Unable to calibrate against PIT\n") is None
