"""pytest fixtures for symcheck. The helpers live in symcheck_testlib.py: test files
import them from there, never from conftest, which another part's conftest can shadow
when pytest collects several directories at once."""
import os
import shutil

import pytest

from symcheck_testlib import BIN, DISTRO, SYMCHECK_DIR, Distro, run


@pytest.fixture(scope="session", autouse=True)
def built():
    r = run(["make", "-C", SYMCHECK_DIR, "all", "fixtures"])
    assert r.returncode == 0, r.stdout + r.stderr
    return BIN


@pytest.fixture(scope="session")
def distro():
    """The Debian distro kernel of fetch-distro-kernel.sh, fetched when absent. A fetch that
    fails fails the tests that need it, with the script's last lines (no silent skip:
    issue 22); being session-scoped, the fetch is tried once per session."""
    done = os.path.join(DISTRO, ".complete")
    if not os.path.exists(done):
        script = os.path.join(SYMCHECK_DIR, "fetch-distro-kernel.sh")
        r = run(["bash", script])
        if r.returncode != 0 or not os.path.exists(done):
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-5:]) or "(no output)"
            pytest.fail(f"cannot fetch the Debian distro kernel into {DISTRO}: {script} "
                        f"exited {r.returncode}:\n{tail}", pytrace=False)
    if shutil.which("depmod") is None and not os.path.exists("/sbin/depmod"):
        pytest.fail("kmod (depmod, modprobe) is not installed: `make deps` installs it "
                    "(harness/debian-packages.txt)", pytrace=False)
    return Distro(DISTRO)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: needs a real build outside the repository (slow or optional)")
