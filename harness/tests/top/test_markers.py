"""Every marker the tests use is registered, and every pytest call of the project
passes --strict-markers (issue 38 item 7): a misspelt `@pytest.mark.e2` would
otherwise be a warning, and `-m "not e2e"` would run a slow test in `make unit`."""

import re
import subprocess
import sys

import pytest

from harness import paths

# Where the project runs pytest (the Makefiles and symcheck's mutant audit).
CALLERS = ("Makefile", "symcheck/Makefile", "symcheck/tests/audit_mutants.sh")
PYTEST_CALL = re.compile(r"-m pytest\b.*$", re.M)


@pytest.mark.parametrize("caller", CALLERS)
def test_every_pytest_call_is_strict(caller):
    calls = PYTEST_CALL.findall((paths.REPO / caller).read_text())
    assert calls, f"{caller} runs pytest nowhere: update CALLERS"
    assert all("--strict-markers" in c for c in calls), calls


@pytest.mark.parametrize("suite", ["harness/tests", "symcheck/tests"])
def test_each_suite_collects_under_strict_markers(suite):
    """Each suite alone (the conftest of the other one is not loaded then)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "--strict-markers", "--collect-only",
                        "-q", "-p", "no:cacheprovider", suite],
                       cwd=paths.REPO, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert re.search(r"^\d+ tests collected", p.stdout, re.M), p.stdout[-500:]
