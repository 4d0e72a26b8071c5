"""gdb session: attach to QEMU's gdbstub while the guest waits and read the ground truth."""

import json
import os
import subprocess

from . import paths
from .errors import HarnessError
from .progress import say

VERIFY_SCRIPT = "ksymlab_verify.py"


def gdb_argv(tree):
    return [
        "gdb", "-nx", "-batch", "-q",
        # vmlinux-gdb.py is sourced explicitly below, after vmlinux is loaded.
        "-iex", "set auto-load python-scripts off",
        "-ex", "set pagination off",
        "-ex", "set confirm off",
        "-ex", f"file {tree.vmlinux}",
        "-ex", f"source {tree.gdb_script}",
        "-ex", f"source {paths.GDBSCRIPTS / VERIFY_SCRIPT}",
        # Detaching lets the halted guest run on.
        "-ex", "detach",
    ]


def read_ground_truth(tree, socket_path, claims, workdir, timeout=300):
    """Run the verification script in gdb; return its JSON result."""
    claims_file = workdir / "gdb-in.json"
    out_file = workdir / "gdb.json"
    log = workdir / "gdb.log"
    claims_file.write_text(json.dumps(claims, indent=1))
    if out_file.exists():
        out_file.unlink()
    env = dict(os.environ, KSYMLAB_GDB_IN=str(claims_file), KSYMLAB_GDB_OUT=str(out_file),
               KSYMLAB_GDB_SOCKET=str(socket_path))
    say("gdb", f"{tree.variant}: attaching to {socket_path}")
    with open(log, "w") as f:
        try:
            p = subprocess.run(gdb_argv(tree), stdout=f, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, env=env, timeout=timeout)
        except FileNotFoundError as e:
            raise HarnessError("deps", "gdb not found; install the gdb package") from e
        except subprocess.TimeoutExpired as e:
            raise HarnessError("gdb", f"gdb did not finish within {timeout} s", log) from e
    text = log.read_text(errors="replace")
    if not out_file.exists():
        reason = _gdb_problem(text) or f"gdb exited {p.returncode} without a result"
        raise HarnessError("gdb", reason, log)
    try:
        result = json.loads(out_file.read_text())
    except ValueError as e:
        raise HarnessError("gdb", f"{out_file}: not JSON ({e})", log) from e
    say("gdb", f"{tree.variant}: read {len(result['symbols'])} symbols, "
               f"{len(result['tasks'])} tasks from guest memory")
    return result


def _gdb_problem(text):
    """The first line of gdb's output that explains a failure."""
    for needle in ("ksymlab-gdb:", "No such file or directory", "Connection refused", "Remote communication error",
                   "Traceback", "Error", "error"):
        for line in text.splitlines():
            if needle in line:
                return line.strip()
    return None
