"""End to end: the debug kernel (lockdep, might_sleep, kmemleak, CONFIG_BUG).

`--stress` reloads the module while readers read every file, then the guest
counts kmemleak objects with our frames and the kernel's report headers in
dmesg. Each fault the debug kernel exists to catch is shown caught here, on
purpose, by the module's test-only parameters (probe-module/README.md).
"""

import re

import pytest

from harness.tests.e2e_runs import harness, src, variant_report

pytestmark = pytest.mark.e2e


def debug_run(tmp_path, *args):
    return harness("run", "--variants", "debug", "--runs-dir", str(tmp_path),
                   "--boot-timeout", "1800", *args)


@pytest.mark.prebuild("debug")
def test_stress_on_debug_kernel(tmp_path):
    p = debug_run(tmp_path, "--stress", "100")
    v = variant_report(tmp_path, "debug")
    assert p.returncode == 0, (p.stderr[-2000:], [x for x in v["values"] if not x["agree"]])
    stress = {x["key"]: x for x in v["values"] if x["kind"] == "stress"}
    assert [src(stress[k], "module") for k in ("cycles", "failed", "dmesg-warnings")] == [100, 0, 0]
    leak = stress["kmemleak"]
    assert src(leak, "module") == 0 and leak["agree"] is True   # kmemleak was available


# A leak at init is reported by the kmemleak row and by no other: the SMP debug
# kernel logs "RCU lockdep checking is enabled", which a dmesg match on the word
# "lockdep" counted as a warning (stop 50's CI). Reloads take no arguments: one leak.
@pytest.mark.prebuild("debug")
def test_leak_check_can_fail(tmp_path):
    p = debug_run(tmp_path, "--stress", "2", "--insmod-args", "selftest_leak=1")
    assert p.returncode == 1, p.stderr[-2000:]
    bad = [x for x in variant_report(tmp_path, "debug")["values"] if x["agree"] is False]
    assert [(x["key"], src(x, "module")) for x in bad] == [("kmemleak", 1)]


@pytest.mark.prebuild("debug")
def test_a_warn_in_the_module_ends_the_run_as_a_warning(tmp_path):
    """A WARN() at init is the console's `warning` fault (exit 36), named by its
    file:line, in the phase it happened. Before the debug kernel set CONFIG_BUG
    (tinyconfig's default is off) this WARN() printed nothing and the run passed."""
    p = debug_run(tmp_path, "--insmod-args", "selftest_warn=1")
    assert p.returncode == 36, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert re.search(r"^ksymlab: warning: debug: WARNING: CPU: \d+ PID: \d+ at \S+/main\.c:\d+ "
                     r"ksymlab_init\+0x[0-9a-f]+/0x[0-9a-f]+ \[ksymlab_probe\] \(boot and module load\)",
                     last), last
