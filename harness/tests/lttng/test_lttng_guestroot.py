"""The guest's LTTng userspace closure: every NEEDED library must come from the
unpacked packages, or one clear error names it."""

import shutil
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.lttng.supply import guestroot


def _root(tmp_path, with_libc):
    for prog in guestroot.PROGRAMS:
        p = tmp_path / prog
        p.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2("/usr/bin/true", p)
    lib = tmp_path / "lib/x86_64-linux-gnu"
    lib.mkdir(parents=True, exist_ok=True)
    if with_libc:
        shutil.copy2("/lib/x86_64-linux-gnu/libc.so.6", lib / "libc.so.6")
        shutil.copy2("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", lib / "ld-linux-x86-64.so.2")
        (tmp_path / "lib64").mkdir()
        (tmp_path / "lib64/ld-linux-x86-64.so.2").symlink_to(
            "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
    return tmp_path


def test_closure_names_a_missing_library(tmp_path):
    with pytest.raises(HarnessError) as e:
        guestroot.closure(_root(tmp_path, False))
    assert "libc.so.6" in e.value.message and e.value.step == "lttng"


def test_closure_has_programs_libraries_and_loader(tmp_path):
    files = guestroot.closure(_root(tmp_path, True))
    assert "/usr/bin/lttng-sessiond" in files
    assert "/lib/x86_64-linux-gnu/libc.so.6" in files
    assert Path(files["/lib64/ld-linux-x86-64.so.2"]).is_file()


def test_a_missing_program_is_named(tmp_path):
    root = _root(tmp_path, True)
    (root / guestroot.PROGRAMS[2]).unlink()
    with pytest.raises(HarnessError) as e:
        guestroot.closure(root)
    assert "lttng-consumerd" in e.value.message
