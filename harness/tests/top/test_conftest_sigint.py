"""The root conftest.py gives a pytest started with SIGINT ignored (make check's
unit tests: a background job of make's shell) Python's own SIGINT handler back,
so Ctrl-C stops it and what it starts does not inherit an ignored SIGINT."""

import signal
import subprocess
import sys

from harness import paths

BODY = """import signal, subprocess

def test_sigint():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    child = subprocess.run(["grep", "^SigIgn:", "/proc/self/status"],
                           capture_output=True, text=True).stdout.split()[1]
    assert not int(child, 16) & (1 << (signal.SIGINT - 1)), child
"""


def test_a_pytest_started_ignoring_sigint_gets_it_back(tmp_path):
    (tmp_path / "conftest.py").write_text((paths.REPO / "conftest.py").read_text())
    (tmp_path / "test_case.py").write_text(BODY)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "test_case.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
