"""symcheck is built inside the checkout (prepare/symcheck.ensure_built): a
checkout the harness's user cannot write is one line of the symcheck step, not
an internal error (exit 70), as it was for a worker started as another user."""

import pytest

from harness import paths
from harness.errors import EXIT, HarnessError
from harness.prepare import symcheck


def test_an_unwritable_checkout_is_one_line_of_the_symcheck_step(tmp_path, monkeypatch):
    # root writes anywhere, so the lock's open fails here the way a plain user's
    # would on a read-only checkout: its path is a directory
    (tmp_path / "symcheck" / ".build.lock").mkdir(parents=True)
    monkeypatch.setattr(paths, "REPO", tmp_path)
    with pytest.raises(HarnessError) as e:
        symcheck.ensure_built()
    assert e.value.step == "symcheck" and EXIT["symcheck"] == 22
    assert e.value.one_line() == (
        f"ksymlab: symcheck: cannot build symcheck in {tmp_path / 'symcheck'}: Is a "
        "directory: the checkout must be writable by the user who runs the harness")
