"""The first run of a fresh clone: nothing of symcheck is built yet, and the
variants start at once. Two workers used to race in symcheck/build there.

That run is the session's shared run of the default variants
(e2e_runs.default_run): it is made from a fresh copy of the repository with
--jobs 4, so this test reads it instead of making one more. Its cache is the
shared one, as this test's own run always had (only KSYMLAB_RUNS is dropped)."""

import pytest

pytestmark = pytest.mark.e2e


def test_fresh_clone_runs_every_variant_concurrently(default_run):
    clone, p = default_run.clone, default_run.proc
    assert default_run.symcheck_built_before is False
    assert p.returncode == 0, p.stderr[-3000:]
    assert (clone / "symcheck" / "symcheck").is_file()
    # four guests ran at once, and each checked its module with the one symcheck
    rep = default_run.report()
    assert rep["timings"]["guest_workers"] == 4 and rep["verdict"] == "pass"
    assert p.stderr.count("symcheck: ") == 4
