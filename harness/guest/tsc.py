"""The host's TSC rate, which a TCG guest's TSC runs at.

QEMU's TCG answers the guest's rdtsc with the host's own counter (cpu_get_ticks()
reads cpu_get_host_ticks()), so the guest's TSC runs at the host's rate. The guest
has no ACPI, hence no HPET or PM timer, and must calibrate its TSC against the PIT,
whose loop a TCG guest on a loaded host fails ("tsc: Unable to calibrate against
PIT"): the kernel then marks the TSC unstable and runs on jiffies, 4 ms a step.
tsc_early_khz= hands the guest the rate instead (arch/x86/kernel/tsc.c).

The rate is measured here, not read from the host's log: dmesg may be unreadable or
rotated, and /proc/cpuinfo's "cpu MHz" follows frequency scaling, not the TSC.
"""

import ctypes
import functools
import mmap
import platform
import re
import statistics
import time

# rdtsc; shl rdx, 32; or rax, rdx; ret: the 64-bit counter in rax (System V ABI).
RDTSC_CODE = bytes.fromhex("0f31" "48c1e220" "4809d0" "c3")
SAMPLE_SECONDS = 0.05
SAMPLES = 5
# kernel/time/clocksource.c, each time the timekeeper changes clock
SWITCHED = re.compile(r"clocksource: Switched to clocksource (\S+)")


def rate_khz(read_tsc, read_ns, sleep, *, seconds=SAMPLE_SECONDS, samples=SAMPLES):
    """The counter's rate in kHz: the median of `samples` intervals of `seconds`,
    each bracketed by the counter and a nanosecond clock read back to back."""
    rates = []
    for _ in range(samples):
        t0, n0 = read_tsc(), read_ns()
        sleep(seconds)
        t1, n1 = read_tsc(), read_ns()
        if n1 <= n0 or t1 <= t0:
            return None                 # a counter that does not advance has no rate
        rates.append((t1 - t0) * 1_000_000 / (n1 - n0))
    return round(statistics.median(rates))


def constant_tsc(cpuinfo="/proc/cpuinfo"):
    """Whether the host's TSC ticks at one rate whatever the CPU's frequency."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "constant_tsc" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def _rdtsc_reader():
    """A callable that executes rdtsc, or None where that cannot be done."""
    if platform.machine() != "x86_64":
        return None
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE,
                         prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError):
        return None                     # W+X mappings refused (a hardened host)
    page.write(RDTSC_CODE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    fn = ctypes.CFUNCTYPE(ctypes.c_uint64)(address)
    fn._page = page                     # the code lives as long as the callable
    return fn


@functools.lru_cache(maxsize=1)
def host_tsc_khz():
    """The host's TSC rate in kHz, or None when the host's TSC is not one a
    guest can be told about (another architecture, no constant_tsc, no W+X)."""
    if not constant_tsc():
        return None
    read_tsc = _rdtsc_reader()
    if read_tsc is None:
        return None
    return rate_khz(read_tsc, time.monotonic_ns, time.sleep)


def clocksource(console_text):
    """The clocksource a guest's kernel ended on, from its console (None: it never
    said): "tsc", or "refined-jiffies" when it gave up on the TSC."""
    found = SWITCHED.findall(console_text)
    return found[-1] if found else None
