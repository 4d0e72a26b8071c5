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
    done = os.path.join(DISTRO, ".complete")
    if not os.path.exists(done):
        script = os.path.join(SYMCHECK_DIR, "fetch-distro-kernel.sh")
        if os.geteuid() != 0:
            pytest.skip("distro kernel fixtures absent and fetching them needs root")
        r = run(["bash", script])
        if r.returncode != 0 or not os.path.exists(done):
            pytest.skip("cannot fetch the Debian distro kernel: " + (r.stderr.strip().splitlines() or ["?"])[-1])
    if shutil.which("depmod") is None and not os.path.exists("/sbin/depmod"):
        pytest.skip("kmod (depmod/modprobe) not installed")
    return Distro(DISTRO)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: needs a real build outside the repository (slow or optional)")
