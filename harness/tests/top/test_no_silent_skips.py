"""The repository's conftest.py turns a skip into an error unless its reason is on
ALLOWED_SKIPS (issue 22, "no silent skips"). Each case runs pytest on a tiny synthetic
test directory that holds a copy of that conftest.py, so the outcome is pytest's own."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ROOT_CONFTEST = REPO / "conftest.py"


def load_root_conftest():
    spec = importlib.util.spec_from_file_location("ksymlab_root_conftest", ROOT_CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ALLOWED = load_root_conftest().ALLOWED_SKIPS
DOCUMENTED = "no kernel tree with tools/testing/kunit in the cache"


def session(tmp_path, body, *args):
    (tmp_path / "conftest.py").write_text(ROOT_CONFTEST.read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    e2e: slow\n")
    (tmp_path / "test_case.py").write_text("import pytest\n\n" + body)
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                        *args, "test_case.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


UNDOCUMENTED = {
    "call": 'def test_x():\n    pytest.skip("the fixture went missing")\n',
    "skipif": '@pytest.mark.skipif(True, reason="the fixture went missing")\n'
              'def test_x():\n    pass\n',
    "fixture": '@pytest.fixture\ndef thing():\n    pytest.skip("the fixture went missing")\n\n'
               'def test_x(thing):\n    pass\n',
    "skip-marker": '@pytest.mark.skip(reason="the fixture went missing")\n'
                   'def test_x():\n    pass\n',
    "importorskip": 'pytest.importorskip("ksymlab_no_such_module",\n'
                    '                    reason="the fixture went missing")\n\n'
                    'def test_x():\n    pass\n',
    # the allowed reason as a part of another: the patterns are anchored
    "near-miss": f'def test_x():\n    pytest.skip("{DOCUMENTED}, and more")\n',
}


@pytest.mark.parametrize("case", sorted(UNDOCUMENTED))
def test_undocumented_skip_fails_the_session(tmp_path, case):
    rc, out = session(tmp_path, UNDOCUMENTED[case])
    assert rc != 0, out
    assert "undocumented skip of test_case.py" in out, out
    reason = f"{DOCUMENTED}, and more" if case == "near-miss" else "the fixture went missing"
    assert f": {reason}\n" in out, out
    assert not re.search(r"\d+ skipped", out), out


def test_undocumented_skip_names_the_test(tmp_path):
    """A skip in the test's body is a failure; one in setup (skipif, a fixture) an error."""
    rc, out = session(tmp_path, UNDOCUMENTED["call"] +
                      "\n\ndef test_fine():\n    pass\n")
    assert rc == 1
    assert "undocumented skip of test_case.py::test_x: the fixture went missing" in out
    assert re.search(r"1 failed, 1 passed", out), out


def test_documented_skip_passes(tmp_path):
    rc, out = session(tmp_path, f'def test_x():\n    pytest.skip("{DOCUMENTED}")\n\n'
                                "def test_fine():\n    pass\n")
    assert rc == 0, out
    assert re.search(r"1 passed, 1 skipped", out), out


def test_deselection_is_not_a_skip(tmp_path):
    rc, out = session(tmp_path, "@pytest.mark.e2e\ndef test_slow():\n    assert False\n\n"
                                "def test_fine():\n    pass\n", "-m", "not e2e")
    assert rc == 0, out
    assert re.search(r"1 passed, 1 deselected", out), out


def test_xfail_is_left_alone(tmp_path):
    rc, out = session(tmp_path, '@pytest.mark.xfail(reason="known", strict=True)\n'
                                "def test_x():\n    assert False\n")
    assert rc == 0, out
    assert "1 xfailed" in out, out


def test_allowed_skips_are_few_explained_and_used():
    """Short, each with a why, and each pattern matches a reason that a test of the
    repository still gives (a literal in its source), so no entry outlives its skip."""
    assert 0 < len(ALLOWED) <= 5
    sources = "\n".join(p.read_text() for d in ("harness/tests", "symcheck/tests")
                        for p in sorted((REPO / d).rglob("*.py")) if p.name != Path(__file__).name)
    literals = re.findall(r'"([^"\n]*)"', sources)
    for pattern, why in ALLOWED:
        assert len(why.split()) >= 8, pattern
        assert any(re.search(pattern, s) for s in literals), f"no test skips with {pattern!r}"


def test_undocumented_skip_fails_under_the_makefiles_workers(tmp_path):
    """make unit and make check run the unit tests under pytest-xdist (-n): the hook
    runs in each worker, and the controller reports the failure, not a skip."""
    rc, out = session(tmp_path, UNDOCUMENTED["call"] + "\n\ndef test_fine():\n    pass\n",
                      "-n", "2")
    assert rc == 1, out
    assert "undocumented skip of test_case.py::test_x: the fixture went missing" in out, out
    assert re.search(r"1 failed, 1 passed", out) and not re.search(r"\d+ skipped", out), out
