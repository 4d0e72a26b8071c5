"""gdbscripts/ksymlab_session.py in a real gdb, without a guest: a gdbstub that is
not there ends the session with gdb's exit status (40) and one line for the host,
not a prompt on nothing. The tree's linux.* helpers are stubbed (only imported)."""

import json
import subprocess

from harness import paths
from harness.errors import EXIT
from harness.session import gdbchild, host


def test_no_gdbstub_ends_gdb_with_its_status_and_one_line(tmp_path):
    stub = tmp_path / "py" / "linux"
    stub.mkdir(parents=True)
    for name in ("__init__", "device", "tasks", "utils"):
        (stub / f"{name}.py").write_text("")
    vdir = tmp_path / "exports"
    vdir.mkdir()
    (vdir / "gdb-in.json").write_text(json.dumps({
        "symbols": [], "module": "/none.ko", "sections": {".text": 1},
        "pageblock_order": 9, "snapshots": 2}))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(stub.parent),
           "KSYMLAB_SESSION_DIR": str(vdir), "KSYMLAB_GDB_SOCKET": str(tmp_path / "no.sock")}
    p = subprocess.run(["gdb", "-nx", "-batch", "-q", "-ex",
                        f"source {paths.GDBSCRIPTS / gdbchild.SESSION_SCRIPT}"],
                       env=env, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == EXIT["gdb"] == 40, p.stdout + p.stderr
    line = host.failed_start(vdir)
    assert line.startswith(f"ksymlab-gdb: cannot attach to {tmp_path / 'no.sock'}"), line
    assert not (vdir / "gdb-armed").exists()        # so the host never says "go"
