"""The session's gdb command line and gdb-in.json: vmlinux on the command line
(loaded during the boot) unless KASLR moves it, then gdb-in.json names the loads."""

import json
from pathlib import Path
from types import SimpleNamespace

from harness.session import gdbchild

TREE = SimpleNamespace(vmlinux=Path("/t/vmlinux"), gdb_script=Path("/t/vmlinux-gdb.py"))
CLAIMS = {"symbols": ["task_prio", "bad name"], "module": "/m.ko",
          "sections": {".text": 1}, "pageblock_order": 9, "snapshots": 2}


def test_without_kaslr_vmlinux_loads_first_and_the_prompt_precedes_tracing(tmp_path):
    argv = gdbchild.argv(TREE, False, tmp_path, "exports")
    ex = [argv[i + 1] for i, a in enumerate(argv) if a == "-ex"]
    assert ex.index("file /t/vmlinux") < ex.index("source /t/vmlinux-gdb.py") \
        < ex.index("set prompt (ksymlab exports) ") < ex.index("set trace-commands on")
    assert ex[-1].endswith("gdbscripts/ksymlab_session.py")
    # a reading typed while QEMU dumps the vmcore waits instead of losing the stub
    assert ex.index(f"set remotetimeout {gdbchild.REMOTE_TIMEOUT}") < ex.index(ex[-1])
    assert gdbchild.REMOTE_TIMEOUT >= 30


def test_with_kaslr_gdb_in_json_loads_vmlinux_by_the_slide(tmp_path):
    argv = gdbchild.argv(TREE, True, tmp_path, "exports")
    assert not any("vmlinux" in a for a in argv)
    gdbchild.write_claims(tmp_path, CLAIMS, TREE, 0x1e000000, True)
    written = json.loads((tmp_path / "gdb-in.json").read_text())
    assert written["gdb_load"] == ["symbol-file -o 0x1e000000 /t/vmlinux",
                                   "source /t/vmlinux-gdb.py"]
    assert written["symbols"] == ["task_prio"]          # gdb_claims(): not an identifier
    assert not (tmp_path / "gdb-in.json.tmp").exists()
    gdbchild.write_claims(tmp_path, CLAIMS, TREE, 0, False)
    assert json.loads((tmp_path / "gdb-in.json").read_text())["gdb_load"] == []


def test_the_vmcore_goes_with_the_session_unless_kept(tmp_path):
    from harness.session import host
    (tmp_path / "vmcore").write_bytes(b"ELF")
    (tmp_path / "transcript.txt").write_text("+quit\n")
    host.drop_vmcore(tmp_path, keep=True)
    assert (tmp_path / "vmcore").exists()
    host.drop_vmcore(tmp_path, keep=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["transcript.txt"]
