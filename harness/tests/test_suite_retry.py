"""The suite's retry phase (harness/lttng/suite/retry.py, compare.py's judgement of
a retried point) on doctored results, with a fake runner instead of guests."""

from harness.lttng.suite import run as suiterun


def test_exact_selection_takes_whole_paths_only():
    found = ["regression/kernel/test_ns_contexts", "regression/kernel/test_ns_contexts_change",
             "regression/kernel/test_event_basic"]
    assert suiterun.select(found, ("regression/kernel/test_ns_contexts",)) == found[:2]
    assert suiterun.select(found, ("regression/kernel/test_ns_contexts",), exact=True) == \
        found[:1]
    assert suiterun.select(found, ("test_ns",), exact=True) == []
    assert suiterun.select(found) == found
