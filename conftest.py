"""No silent skips (issue 22).

pytest loads this file for every test directory under the repository
(symcheck/tests, harness/tests). A skipped test is reported as an error, naming
the test and the skip's reason, unless the reason is on ALLOWED_SKIPS below,
each entry with the one-line why. So a fixture that cannot be had (a download
that failed, a package that is not installed, a cache that is empty) fails
`make unit` and `make check` instead of shrinking them unseen.

Deselection is not a skip: `-m "not e2e"` (make unit) and `-k` stay as they are.
An xfail is not touched either.
"""
import re
import signal

import pytest

# `make check` starts the unit tests as a background job of make's shell, and a
# non-interactive shell starts those with SIGINT ignored: Ctrl-C would not stop
# them, and every process they start (a harness run, a session's gdb) would
# inherit the ignored SIGINT. Python's own handler, as in a foreground run.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# (pattern searched in the skip reason, why this skip is allowed). Keep it short;
# every new entry needs a why that says what would make the test run.
ALLOWED_SKIPS = (
    (r"^no kernel tree with tools/testing/kunit in the cache$",
     "kunit.py is taken from a kernel tree in the cache; only `make run` and the e2e "
     "tests build trees, so `make unit` on an empty cache has none (`make check` "
     "builds them before harness/tests/report/test_report_md.py runs)"),
)


def skip_reason(report):
    """The reason of a skipped test or collection report: pytest stores
    (path, line, "Skipped: REASON") in longrepr."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def allowed(reason):
    return any(re.search(pattern, reason) for pattern, _why in ALLOWED_SKIPS)


def _fail_undocumented(report, what):
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report)
    if allowed(reason):
        return
    report.outcome = "failed"
    report.longrepr = (f"undocumented skip of {what}: {reason}\n"
                       "A skip fails the run unless its reason is on ALLOWED_SKIPS in "
                       "conftest.py at the repository root, with a why (issue 22): make "
                       "the fixture available, or document the skip there.")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_undocumented(outcome.get_result(), item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_undocumented(outcome.get_result(), collector.nodeid or str(collector.path))
