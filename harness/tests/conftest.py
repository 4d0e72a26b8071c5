import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import paths  # noqa: E402  (after the path insert above)
# The session-scoped runs the e2e tests share (e2e_runs.py says which and why).
from harness.tests.e2e_runs import default_run  # noqa: E402,F401


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: builds kernels and boots QEMU guests (slow)")


# Fixtures of the tree-cache tests (test_kernel, test_tail_derive): a copy of
# patches/, an empty cache directory and a fake tarball.

@pytest.fixture
def patches(tmp_path):
    root = tmp_path / "patches"
    shutil.copytree(paths.REPO / "patches", root)
    return root


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


@pytest.fixture
def tarball(tmp_path):
    t = tmp_path / "linux.tar.xz"
    t.write_bytes(b"a fake tarball")
    return t
