"""Every test's fixtures resolve, e2e tests included, without running any.

`--collect-only` does not look fixtures up: stop 51 dropped a parametrize
decorator and `variant` became an unknown fixture that only CI's e2e run
found, after 26 minutes. `--setup-plan` resolves every fixture and runs none,
in about 3 s."""

import subprocess
import sys

import pytest

from harness import paths


def setup_plan(suite, cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "--strict-markers", "--setup-plan",
                           "-q", "-p", "no:cacheprovider", suite],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("suite", ["harness/tests", "symcheck/tests"])
def test_every_fixture_of_every_test_resolves(suite):
    p = setup_plan(suite, paths.REPO)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]


def test_an_unknown_fixture_fails_the_plan(tmp_path):
    """The doctored input: the stop 51 bug, a parameter no fixture provides."""
    (tmp_path / "test_doctored.py").write_text(
        "import pytest\n\n\ndef test_x(variant):\n    assert variant\n")
    p = setup_plan("test_doctored.py", tmp_path)
    assert p.returncode != 0
    assert "fixture 'variant' not found" in p.stdout
