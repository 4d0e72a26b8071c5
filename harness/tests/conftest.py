import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import paths  # noqa: E402  (after the path insert above)
# The session-scoped runs the e2e tests share (e2e_runs.py says which and why).
from harness.tests import e2e_runs  # noqa: E402
from harness.tests.e2e_runs import default_run, lttng_612_run  # noqa: E402,F401


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: builds kernels and boots QEMU guests (slow)")
    config.addinivalue_line("markers", "prebuild(*variants): kernel trees the test needs "
                            "that no earlier test builds, built in the background from the "
                            "start of the session (e2e_runs.py)")


@pytest.hookimpl(trylast=True)          # after -m and -k deselected what they do
def pytest_collection_modifyitems(session, config, items):
    # The tests that need background-built trees run last (in their own order), so
    # that the builds have the whole session's idle CPU before a test waits for them.
    items[:] = e2e_runs.prebuilt_last(items)
    if not (config.option.collectonly or config.option.setupplan):
        config.stash[PREBUILD] = e2e_runs.start_prebuild(items)


def pytest_sessionfinish(session):
    pre = session.config.stash.get(PREBUILD, None)
    if pre is not None:
        pre.stop()


def pytest_terminal_summary(terminalreporter, config):
    pre = config.stash.get(PREBUILD, None)
    if pre is not None:
        terminalreporter.write_sep("-", f"background tree builds (log {pre.log})")
        for line in pre.summary():
            terminalreporter.write_line(line)


PREBUILD = pytest.StashKey()


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
