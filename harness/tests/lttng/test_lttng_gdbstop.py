"""The LTTng boot's gdb stop, without a guest: the pieces that must line up for
gdb to stop where the trace marks it (the e2e test boots it)."""

import ast
import re

from harness.oracles import gdb
from harness import paths
from harness.lttng.boot import gdbstop, trace


def _source(name):
    return (paths.GDBSCRIPTS / name).read_text()


def test_the_lttng_script_uses_only_readers_ksymlab_verify_defines():
    used = set(re.findall(r"\bkv\.(\w+)", _source(gdbstop.LttngGdb.SCRIPT)))
    tree = ast.parse(_source(gdb.VERIFY_SCRIPT))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert used and used <= defined, used - defined


def test_importing_ksymlab_verify_does_not_run_its_main():
    """The LTTng script imports ksymlab_verify; its main() (attach, load the probe
    module, stop at ksymlab_snapshot_taken) must run only when gdb sources it."""
    tree = ast.parse(_source(gdb.VERIFY_SCRIPT))
    top_calls = [n for n in tree.body if isinstance(n, ast.Expr)
                 and isinstance(n.value, ast.Call)]
    assert top_calls == []
    guard = [n for n in tree.body if isinstance(n, ast.If)
             and "__main__" in ast.unparse(n.test)]
    assert guard and "main()" in ast.unparse(guard[0])


def test_gdb_runs_the_lttng_script():
    class Tree:
        vmlinux = "/t/vmlinux"
        gdb_script = "/t/vmlinux-gdb.py"
    argv = gdb.gdb_argv(Tree(), 0, gdbstop.LttngGdb.SCRIPT)
    assert f"source {paths.GDBSCRIPTS / 'ksymlab_lttng.py'}" in argv
    assert argv[-1] == "detach"
    assert f"source {paths.GDBSCRIPTS / gdb.VERIFY_SCRIPT}" in gdb.gdb_argv(Tree())


def test_the_init_calls_what_gdb_breaks_on_after_arm_and_traces_it():
    """The guest prints ARM, waits for go, then runs hostname (sethostname(2),
    whose handler is the breakpoint); the session records that syscall."""
    init = (paths.GUEST / "lttng-init").read_text()
    arm = init.index(f'echo "{gdbstop.ARM}"')
    go = init.index("read -r go", arm)
    call = init.index("hostname ksymlab-lttng", go)
    assert init.index("lttng stop", call) > call
    assert re.search(r"--syscall [\w,]*\bsethostname\b", init)
    assert gdbstop.BREAKPOINT == "__x64_sys_sethostname"
    assert gdbstop.STOP_EVENT == trace.STOP_EVENT == "syscall_entry_sethostname"


def test_the_stop_gdb_read_is_parsed_before_it_is_said(tmp_path):
    """LttngGdb.summary() parses gdb.json into the GdbStop finish() returns; a reading
    without a key the script always writes is one gdb error naming it, with gdb's log."""
    import pytest
    from harness.errors import HarnessError
    reading = {"stop": {"function": gdbstop.BREAKPOINT, "pc": 16, "pid": 70, "comm": "hostname"},
               "tasks": {"1": {"comm": "init", "prio": 20, "policy": 0}},
               "block_class": [{"name": "ram0", "type": "disk", "dev": "1:0", "sectors": 8,
                                "partno": 0}],
               "global_wb_domain": {"dirty_limit": 6, "dirty_limit_tstamp": 2, "address": 9},
               "irq_actions": [], "jiffies": 3}
    session = gdbstop.LttngGdb(None, tmp_path / "gdb.sock", tmp_path)
    assert session.summary(reading) == (
        "stopped in __x64_sys_sethostname (pid 70): 1 tasks, 1 block devices, "
        "global_wb_domain.dirty_limit 6")
    assert session.reading.stop.pid == 70 and session.reading.task(1).comm == "init"
    del reading["global_wb_domain"]["dirty_limit"]
    with pytest.raises(HarnessError) as err:
        session.summary(reading)
    assert err.value.step == "gdb" and err.value.log == tmp_path / "gdb.log"
    assert err.value.message == f"{tmp_path / 'gdb.json'}: global_wb_domain.dirty_limit: missing"
