"""harness/lttng/suite/tools.py: the lttng-tools build is an entry of the build cache
(kind lttng/tools): a found build is held by the session that uses it."""

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
