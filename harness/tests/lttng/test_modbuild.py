"""harness/lttng/supply/modbuild.py: the staging of a cached build (strip failures,
the entry's exclusive lock) and the LTTng source digest, with stand-in trees."""

import pytest

from harness.errors import HarnessError
from harness.lttng.supply import modbuild
from harness.prepare.tree import Tree


def fake_tree(tmp_path):
    src = tmp_path / "src"
    (src / "include" / "config").mkdir(parents=True)
    (src / "include" / "config" / "kernel.release").write_text("6.1.0-test\n")
    return Tree("fake", "treekey", tmp_path, src)


def test_a_failing_strip_is_the_steps_error_with_its_reason(tmp_path):
    out = tmp_path / "build"
    (out / "ko").mkdir(parents=True)
    (out / "ko" / "lttng-tracer.ko").write_text("not an object\n")
    with pytest.raises(HarnessError) as e:
        modbuild.stage(out, fake_tree(tmp_path))
    assert e.value.step == "lttng" and e.value.exit_status == 23
    assert e.value.message.startswith("strip --strip-debug exited 1: ")
    assert "lttng-tracer.ko" in e.value.message and "format not recognized" in e.value.message
