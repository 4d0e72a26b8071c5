"""`python3 -m harness`: its command table, exit statuses and internal-error log."""

import ast
import os
import signal
import subprocess
import sys
import tempfile

import pytest

from harness import __main__ as cli, paths
from harness.errors import EXIT

HARNESS = paths.REPO / "harness"


@pytest.fixture
def signals():
    """main() installs its SIGINT/SIGTERM handlers; give pytest its own back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def harness(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=paths.REPO,
                          capture_output=True, text=True, env=env)


def test_help_and_docstring_name_every_command():
    names = ["run", "build", "key", "variants", "cache", "cluster-certs", "show", "session"]
    assert list(cli.COMMANDS) == names
    for n in names:
        assert f"\n  {n} " in cli.__doc__
    p = harness("--help")
    assert p.returncode == 0 and "{run,build,key,variants,cache,cluster-certs,show,session}" in p.stdout
    for n in names:
        assert harness(n, "--help").returncode == 0
    assert harness("bogus").returncode == 2 and harness().returncode == 2


def test_run_options_keep_their_documented_defaults():
    # the timeouts come from RunOptions alone: the parser leaves them unset
    args = cli.parser().parse_args(["run"])
    assert (args.boot_timeout, args.hang_timeout) == (None, None)
    args = cli.parser().parse_args(["run", "--boot-timeout", "7", "--hang-timeout", "3"])
    assert (args.boot_timeout, args.hang_timeout) == (7, 3)


def _raise_internal():
    try:
        raise RuntimeError("boom")
    except RuntimeError as e:
        return cli._internal_error(e)


def test_internal_error_log_is_a_new_file_not_a_planted_symlink(tmp_path, monkeypatch, capsys):
    # The old log name, /tmp/ksymlab-internal-error-<pid>.log, could be guessed: a
    # symlink planted there made the harness (root) overwrite the link's target.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    planted = tmp_path / f"ksymlab-internal-error-{os.getpid()}.log"
    planted.symlink_to(victim)
    assert _raise_internal() == 70
    assert victim.read_text() == "precious\n" and planted.is_symlink()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ksymlab: internal error: RuntimeError: boom")
    log = err.split("(traceback: ", 1)[1].rstrip(")\n")
    assert log != str(planted) and os.path.dirname(log) == str(tmp_path)
    assert os.path.basename(log).startswith("ksymlab-internal-error-")
    assert not os.path.islink(log) and "RuntimeError: boom" in open(log).read()
    assert os.stat(log).st_mode & 0o077 == 0        # mkstemp's 0600


def test_a_bug_in_a_command_is_exit_70(tmp_path, monkeypatch, capsys, signals):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def broken(args):
        raise KeyError("oops")
    monkeypatch.setitem(cli.COMMANDS, "variants", cli.COMMANDS["variants"]._replace(
        handler=broken))
    assert cli.main(["variants"]) == EXIT["internal"] == 70
    assert "ksymlab: internal error: KeyError" in capsys.readouterr().err


def _step_strings():
    """(file:line, step) of every literal step a harness module raises or passes on."""
    steppers = {"HarnessError", "run_logged", "check_stop"}
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        if "tests" in path.relative_to(HARNESS).parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            first = node.args[0]
            if name in steppers and isinstance(first, ast.Constant) \
                    and isinstance(first.value, str):
                found.append((f"{path.relative_to(paths.REPO)}:{node.lineno}", first.value))
    # console faults raise HarnessError(kind) with the kind from this table
    from harness.guest.qemu import FAULTS
    found += [("harness/guest/qemu.py FAULTS", kind) for kind, _ in FAULTS]
    return found


def test_every_step_the_harness_raises_has_an_exit_status():
    found = _step_strings()
    steps = {s for _, s in found}
    # the scan sees the steps it must (an empty scan would pass below)
    assert {"usage", "mutant", "mutants", "cache", "lttng", "panic", "build"} <= steps
    missing = [(where, s) for where, s in found if s not in EXIT]
    assert missing == []


def test_exit_statuses_are_distinct_and_as_documented():
    assert len(set(EXIT.values())) == len(EXIT)
    assert EXIT == {
        "verdict": 1, "usage": 2, "deps": 3,
        "extract": 10, "patch": 11, "configure": 12, "build": 13, "cache": 14,
        "module": 20, "initramfs": 21, "symcheck": 22, "lttng": 23, "suite": 24,
        "boot": 30, "panic": 31, "oops": 32, "hang": 33, "timeout": 34, "guest": 35,
        "warning": 36, "reboot": 37,
        "gdb": 40, "verify": 41, "vmcore": 42, "drgn": 43, "cluster": 50,
        "mutant": 60, "mutants": 61, "internal": 70, "interrupted": 130}


def test_suite_options_without_the_suite_are_usage_errors():
    usage = EXIT["usage"]
    for argv, said in ((["--lttng-suite-only", "kernel/test_event_basic"], "need --lttng-suite"),
                       (["--lttng-suite-timeout", "60"], "need --lttng-suite"),
                       (["--lttng-suite", "--no-lttng"], "cannot be combined with --no-lttng"),
                       (["--lttng-suite", "--lttng-suite-timeout", "5"], "at least 10 s")):
        p = harness("run", *argv, "--runs-dir", "/nonexistent/ksymlab-runs")
        assert p.returncode == usage, (argv, p.returncode, p.stderr)
        assert said in p.stderr and p.stderr.count("\n") <= 2, p.stderr


def test_guest_cpus_outside_1_to_8_is_a_usage_error():
    for n in ("0", "9"):
        p = harness("run", "--guest-cpus", n, "--runs-dir", "/nonexistent/ksymlab-runs")
        assert p.returncode == EXIT["usage"], (n, p.returncode, p.stderr)
        assert f"--guest-cpus {n}: between 1 and 8" in p.stderr and p.stderr.count("\n") <= 2


def test_guest_cpus_reach_the_run_options_and_the_cluster_spec():
    from harness.cluster.spec import PORTABLE
    from harness.options import RunOptions
    assert RunOptions.from_env().guest_cpus == 1 and "guest_cpus" in PORTABLE
    assert RunOptions.from_env(guest_cpus=2).guest_cpus == 2
