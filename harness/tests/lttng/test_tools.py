"""harness/lttng/suite/tools.py: the lttng-tools build is an entry of the build cache
(kind lttng/tools): a found build is held by the session that uses it."""

import shutil

import pytest

from harness.errors import HarnessError
from harness.lttng.suite import tools
from harness.prepare import cache as cachemod


def test_a_found_tools_build_is_held_while_the_session_lasts(tmp_path):
    c, k = tmp_path / "cache", tools.key()
    out = c / "lttng" / "tools" / k
    (out / "tree").mkdir(parents=True)
    (out / "done").write_text(k + "\n")
    with cachemod.session():
        assert tools.build(c) == out / "tree"
        assert [(e.kind, e.key, e.held) for e in cachemod.entries(c)] == [
            ("lttng/tools", k, True)]
        assert cachemod.clear(c)[0] == [] and out.is_dir()
    assert [e.key for e in cachemod.clear(c)[0]] == [k] and not out.exists()


def _series_copy(tmp_path):
    """A copy of patches/lttng-tools (what KSYMLAB_PATCHES would point at)."""
    root = tmp_path / "patches" / "lttng-tools"
    shutil.copytree(tools.patches_root(), root)
    return root


def test_the_suite_series_is_the_upstream_backports_in_order():
    names = [p.name for p in tools.patches()]
    # written out here: relayd's two 2.13.12 fixes, then master's 10 snapshot rounds,
    # then master's test_notification_multi_app fixes and their testpoint follow-up
    assert names == ["0001-Fix-relayd-live-dispose-of-zombie-viewer-metadata-st.patch",
                     "0002-Fix-relayd-live-client-not-notified-of-inactive-stre.patch",
                     "0003-tests-Reduce-the-number-of-repeated-snapshots-in-sna.patch",
                     "0004-Fix-test-notification-multi-app-racy-ready-check.patch",
                     "0005-Fix-consumerd-pause-testpoint-not-re-evaluated-after.patch",
                     "0006-Fix-tests-consumer-pause-testpoint-FIFO-EOF-mishandl.patch"]
    ids = ["883b91c5a6b247de16c816e7772a945fd43cc216", "5d2369e3971b6b9d7f26591727241e2c414b5ece",
           "2250e6894ebd9fb3a1739878a9c5f10ac0e79cf7", "9496700551eb37bf24fbd8a521418125eecac350",
           "0ee2a9a560dc6c31f082dac5b321e548ca3cb5e2", "b46f9528eb0b1119dc8bf9c657d49fd6cde6ac5c"]
    assert len(ids) == len(names)
    for p, upstream in zip(tools.patches(), ids):
        assert f"from commit {upstream})" in p.read_text(), (p.name, "names its upstream commit")


def test_a_changed_or_added_tools_patch_is_another_build(tmp_path):
    root = _series_copy(tmp_path)
    k = tools.key(root)
    assert k == tools.key()         # the copy is the same series
    p = root / "0003-tests-Reduce-the-number-of-repeated-snapshots-in-sna.patch"
    p.write_text(p.read_text().replace("NB_SNAP=10", "NB_SNAP=20"))
    changed = tools.key(root)
    assert changed != k
    (root / "suite.series").write_text((root / "suite.series").read_text()
                                       + "0003-tests-Reduce-the-number-of-repeated-snapshots-in-sna.patch\n")
    assert tools.key(root) not in (k, changed)


def test_a_series_naming_a_missing_patch_is_one_error_line(tmp_path):
    root = _series_copy(tmp_path)
    (root / "suite.series").write_text("0009-no-such.patch\n")
    with pytest.raises(HarnessError, match="0009-no-such.patch: patch not found"):
        tools.key(root)
