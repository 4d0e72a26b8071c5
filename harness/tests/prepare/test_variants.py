"""Variant files: the built-ins, a user's own, and every bad file named by file:line."""

import shutil
import subprocess
import sys

import pytest

from harness import paths
from harness.prepare import variants
from harness.errors import HarnessError

EXPORTS = (paths.REPO / "variants" / "exports.toml").read_text()


def write(tmp_path, name, text):
    f = tmp_path / f"{name}.toml"
    f.write_text(text)
    return f


def line_of(text, needle):
    return next(n for n, l in enumerate(text.splitlines(), 1) if needle in l)


def test_builtins_are_the_old_table():
    v = variants.builtin()
    assert list(variants.default_names()) == ["exports", "kallsyms", "stock", "bpf13"]
    assert [v[n].module_mode for n in variants.default_names()] == ["exports", "kallsyms",
                                                                    "kprobe", "exports"]
    assert (v["exports"].bpf_max_arg, v["bpf13"].bpf_max_arg) == (12, 13)
    assert v["exports"].domain_arg and not v["kallsyms"].domain_arg
    assert v["debug"].fragments == ("base.config", "debug.config") and not v["debug"].default
    assert v["debug"].series_dir == paths.REPO / "patches" / "exports"
    assert set(v["exports"].seeds) == {f"{i}/9" for i in range(1, 10)} and not v["stock"].seeds


def test_a_user_file_with_its_own_series(tmp_path):
    (tmp_path / "mine").mkdir()
    f = write(tmp_path, "mine", EXPORTS.replace('series = "exports"', 'series_dir = "mine"'))
    known = variants.load(files=[f], directories=[])
    assert known["mine"].series_dir == tmp_path / "mine"
    # a user directory works the same way
    assert "mine" in variants.load(directories=[tmp_path])


BAD = [
    ("not TOML", lambda t: t.replace('module_mode = "exports"', "module_mode = exports"),
     "module_mode = exports", "not TOML"),
    ("unknown key", lambda t: t.replace("bpf_max_arg = 12", "bpf_max_arg = 12\nfoo = 1"),
     "foo = 1", "unknown key [expect] 'foo'"),
    ("wrong type", lambda t: t.replace("domain_arg = true", "domain_arg = 1"),
     "domain_arg = 1", "domain_arg must be a bool, not int"),
    ("bad mode", lambda t: t.replace('module_mode = "exports"', 'module_mode = "magic"'),
     'module_mode = "magic"', "module_mode 'magic' is not one of"),
    ("unknown table", lambda t: t.replace("[kernel]", "[kernelx]"), "[kernelx]",
     "unknown key 'kernelx'"),
    ("missing fragment", lambda t: t.replace('["base.config"]', '["nope.config"]'),
     "fragments =", "fragment 'nope.config' is not a file"),
    ("bad seed", lambda t: t.replace('"9/9"]', '"10/9"]'), "seeds =", "seeds ['10/9']"),
    ("bpf arg range", lambda t: t.replace("bpf_max_arg = 12", "bpf_max_arg = 14"),
     "bpf_max_arg = 14", "outside 1..13"),
    ("both series keys", lambda t: t.replace('series = "exports"',
                                             'series = "exports"\nseries_dir = "x"'),
     "[build]", "exactly one of series"),
    ("missing required", lambda t: t.replace('package = "linux-source-6.1"\n', ""),
     "[kernel]", "lacks the required key 'package'"),
    ("unknown LTTng release", lambda t: t.replace('patches = "exports"',
                                                  'version = "2.13.99"\npatches = "exports"'),
     'version = "2.13.99"', "version '2.13.99': no pinned lttng-modules release of that "
     "version (known: 2.13.9, 2.13.18, 2.16.0)"),
]


@pytest.mark.parametrize("what,edit,line,message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_a_usage_error_naming_file_and_line(tmp_path, what, edit, line,
                                                           message):
    text = edit(EXPORTS)
    f = write(tmp_path, "bad", text)
    with pytest.raises(HarnessError) as e:
        variants.load(files=[f], directories=[])
    assert e.value.exit_status == 2
    assert e.value.message.startswith(f"{f}:{line_of(text, line)}: "), e.value.message
    assert message in e.value.message
    assert "\n" not in e.value.one_line()


def test_a_name_defined_twice_and_a_missing_file(tmp_path):
    f = write(tmp_path, "exports", EXPORTS)
    with pytest.raises(HarnessError) as e:
        variants.load(files=[f], directories=[])
    assert "already defined by" in e.value.message and e.value.exit_status == 2
    with pytest.raises(HarnessError) as e:
        variants.load(files=[tmp_path / "nope.toml"], directories=[])
    assert "variant file not found" in e.value.message


def test_defaults_per_kernel_line():
    known = variants.builtin()
    assert variants.defaults(known, ("6.1",)) == ["exports", "kallsyms", "stock", "bpf13"]
    assert variants.defaults(known, ("6.12",)) == ["exports-6.12", "kallsyms-6.12",
                                                   "stock-6.12", "bpf13-6.12"]
    assert variants.defaults(known, ("9.9",)) == []


def harness(*args, env):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=paths.REPO,
                          capture_output=True, text=True, env=env)


def test_a_bad_builtin_file_is_a_usage_error_not_an_import_traceback(tmp_path):
    builtin = tmp_path / "variants"
    shutil.copytree(paths.REPO / "variants", builtin)
    bad = builtin / "zz-broken.toml"
    bad.write_text('description = "unterminated\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "KSYMLAB_BUILTIN_VARIANTS": str(builtin)}
    p = harness("variants", env=env)
    assert p.returncode == 2
    assert p.stderr.startswith(f"ksymlab: usage: {bad}:1: not TOML")
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    # what reads no variant is not stopped by one
    assert harness("--help", env=env).returncode == 0
    # the same directory without the bad file lists every built-in
    bad.unlink()
    p = harness("variants", env=env)
    assert p.returncode == 0 and f"* exports" in p.stdout and str(builtin) in p.stdout


def test_builtins_are_read_on_first_use_not_at_import():
    code = ("import sys, harness.prepare.variants as v; "
            "sys.exit(0 if v._builtin.cache_info().currsize == 0 else 1)")
    p = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr


def test_every_builtin_lttng_series_resolves_and_each_line_names_its_release():
    """Each built-in [lttng] table names a release that is pinned and a series whose
    patches exist (a series of another release in its own folder); the 6.1 line runs
    Debian 12's 2.13.9, the 6.12 line Debian 13's 2.13.18 (2.13.9 does not build there)."""
    from harness.lttng.supply import modbuild
    seen = {}
    for v in variants.builtin().values():
        if not v.lttng_series:
            continue
        assert modbuild.series(v.lttng_series), v.name
        seen[v.name] = (v.kernel_line, v.lttng_version)
    assert {n: r for n, (line, r) in seen.items() if line == "6.1"} == \
        {"exports": "2.13.9", "kallsyms": "2.13.9", "stock": "2.13.9", "exports-v2": "2.13.9"}
    assert {n: r for n, (line, r) in seen.items() if line == "6.12"} == \
        {"exports-6.12": "2.13.18", "kallsyms-6.12": "2.13.18", "stock-6.12": "2.13.18",
         "exports-v2-6.12": "2.13.18"}
    patches = {p.parent.name for p in modbuild.series("2.13.18/exports")}
    assert patches == {"2.13.18"}
