"""What the guest reports reaches gdb only as a name, never as gdb code; and what
gdb's oracle states rather than reads is said in its reading's notes.

gdbscripts/ksymlab_verify.py runs inside gdb; here it is imported under a stub
`gdb` module (and stub `linux.*`, the tree's vmlinux-gdb.py helpers) that
records every expression the script hands to gdb. The host half
(harness/oracles/gdb.py) runs a fake gdb: a Python child that reads the
claims gdb would get and writes a reading."""

import importlib.util
import json
import sys
import types
from types import SimpleNamespace

import pytest

from harness import paths
from harness.errors import HarnessError
from harness.oracles import gdb as gdb_oracle
from harness.oracles.readings import GdbReading
from harness.tests.readings_fixture import gdb_reading

# Names a kernel under test could write on the data port: an expression that
# calls a guest function, a second gdb command, a quoted argument.
HOSTILE = ("task_prio+panic(0)", "x\ncall panic(0)", "a b", "0day", "'q'", "")


class FakeGdb(types.ModuleType):
    """The gdb module as the script uses it: parse_and_eval knows `values`
    (expression -> int) and records every expression it is given."""

    def __init__(self, values):
        super().__init__("gdb")
        self.values = values
        self.evaluated = []
        self.executed = []
        self.error = type("error", (RuntimeError,), {})

    def parse_and_eval(self, expr):
        self.evaluated.append(expr)
        if expr not in self.values:
            raise self.error(f"No symbol in current context: {expr}")
        return self.values[expr]

    def execute(self, command, to_string=False):
        self.executed.append(command)
        return ""


def load_verify(monkeypatch, values=None):
    """gdbscripts/ksymlab_verify.py imported under a FakeGdb (its main() not run)."""
    fake = FakeGdb(values or {})
    linux = types.ModuleType("linux")
    for sub in ("device", "tasks", "utils"):
        mod = types.ModuleType(f"linux.{sub}")
        setattr(linux, sub, mod)
        monkeypatch.setitem(sys.modules, f"linux.{sub}", mod)
    monkeypatch.setitem(sys.modules, "linux", linux)
    monkeypatch.setitem(sys.modules, "gdb", fake)
    spec = importlib.util.spec_from_file_location(
        "ksymlab_verify_under_test", paths.GDBSCRIPTS / gdb_oracle.VERIFY_SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script, fake


# ---- in gdb: gdbscripts/ksymlab_verify.py ----

def test_a_name_that_is_not_an_identifier_never_reaches_a_gdb_expression(monkeypatch):
    script, fake = load_verify(monkeypatch, {"(unsigned long)&task_prio": 0xffffffff81001000})
    assert script.symbol_address("task_prio") == 0xffffffff81001000
    assert script.symbol_address("absent_symbol") is None       # gdb.error: None, as before
    for name in HOSTILE:
        assert script.symbol_address(name) is None, name
    assert fake.evaluated == ["(unsigned long)&task_prio", "(unsigned long)&absent_symbol"]


def test_read_symbols_names_each_refused_symbol(monkeypatch):
    script, fake = load_verify(monkeypatch, {"(unsigned long)&task_prio": 0x1000})
    addresses, refused = script.read_symbols(["task_prio", "task_prio+panic(0)"])
    assert addresses == {"task_prio": 0x1000, "task_prio+panic(0)": None}
    assert refused == {"task_prio+panic(0)": "not a C identifier: not evaluated by gdb"}
    assert script.NOTES == ["symbol 'task_prio+panic(0)' from the guest: not a C identifier: "
                            "not evaluated by gdb"]
    assert fake.evaluated == ["(unsigned long)&task_prio"]


def test_a_section_name_outside_the_section_alphabet_stops_the_script(monkeypatch):
    script, fake = load_verify(monkeypatch)
    script.load_module("/m.ko", {".text": 0x1000, ".bss": 0x3000, "__param": 0x2000})
    assert fake.executed == ["add-symbol-file /m.ko 0x1000 -s .bss 0x3000 -s __param 0x2000"]
    with pytest.raises(SystemExit) as e:
        script.load_module("/m.ko", {".text": 0x1000, ".bss\n-readnow": 0x3000})
    assert str(e.value).startswith("ksymlab-gdb: the guest reported module section "
                                   "'.bss\\n-readnow'")
    assert len(fake.executed) == 1


# Section names as /sys/module/ksymlab_probe/sections lists them on 6.1 (readelf
# -S of the built module): the "-" of .note.gnu.build-id once failed every
# variant's verify step (exit 41) when the alphabet was [.A-Za-z0-9_]+.
REAL_SECTIONS = [".text", ".note.gnu.build-id", ".note.Linux", ".rodata.str1.1",
                 ".gnu.linkonce.this_module", "__param", "__versions", ".init.text",
                 ".exit.text", "__mcount_loc", ".altinstructions", ".data..read_mostly"]


def test_real_module_section_names_reach_add_symbol_file(monkeypatch):
    script, fake = load_verify(monkeypatch)
    sections = {name: 0x1000 * (i + 1) for i, name in enumerate(REAL_SECTIONS)}
    script.load_module("/m.ko", sections)
    assert "-s .note.gnu.build-id 0x2000" in fake.executed[0]
    given, refused = gdb_oracle.gdb_claims({"sections": sections})
    assert given == {"sections": sections} and refused == {}


def test_a_section_name_starting_with_a_dash_is_refused(monkeypatch):
    script, fake = load_verify(monkeypatch)
    with pytest.raises(SystemExit):
        script.load_module("/m.ko", {".text": 0x1000, "-readnow": 0x3000})
    with pytest.raises(HarnessError):
        gdb_oracle.gdb_claims({"sections": {".text": 1, "-readnow": 2}})
    assert fake.executed == []

def test_a_stated_section_online_bit_is_a_note_not_a_silent_value(monkeypatch):
    script, fake = load_verify(monkeypatch, {"(int)SECTION_IS_ONLINE_BIT": 2})
    assert script.section_is_online_bit() == 2 and script.NOTES == []
    del fake.values["(int)SECTION_IS_ONLINE_BIT"]
    assert script.section_is_online_bit() == 2
    assert script.section_is_online_bit() == 2
    assert len(script.NOTES) == 1                       # once, however many snapshots ask
    assert "SECTION_IS_ONLINE_BIT" in script.NOTES[0] and "ed7802dd48f7" in script.NOTES[0]
    assert "\n" not in script.NOTES[0]


# ---- on the host: harness/oracles/gdb.py ----

def test_gdb_claims_keep_non_identifiers_from_gdb():
    claims = {"symbols": ["task_prio", *HOSTILE, "disk_type"], "module": "/m.ko",
              "sections": {".text": 1, "__param": 2}, "pageblock_order": 10}
    given, refused = gdb_oracle.gdb_claims(claims)
    assert given == dict(claims, symbols=["task_prio", "disk_type"])
    assert sorted(refused) == sorted(HOSTILE)
    assert set(refused.values()) == {"not a C identifier: not given to gdb"}
    assert gdb_oracle.gdb_claims({"breakpoint": "f"}) == ({"breakpoint": "f"}, {})
    with pytest.raises(HarnessError) as e:
        gdb_oracle.gdb_claims(dict(claims, sections={".text": 1, ".data ; shell": 2}))
    assert e.value.step == "verify" and "'.data ; shell'" in e.value.message


# A gdb that writes the reading it was started with, its symbols the names it was given.
FAKE_GDB = """
import json, os, sys
claims = json.load(open(os.environ["KSYMLAB_GDB_IN"]))
open(os.environ["KSYMLAB_GDB_ARMED"], "w").write("armed\\n")
reading = json.loads(sys.argv[1])
reading["symbols"] = {n: 0x1000 + i for i, n in enumerate(claims["symbols"])}
json.dump(reading, open(os.environ["KSYMLAB_GDB_OUT"], "w"))
"""


def fake_session(monkeypatch, tmp_path, claims, reading):
    monkeypatch.setattr(gdb_oracle, "gdb_argv", lambda tree, slide, script:
                        [sys.executable, "-c", FAKE_GDB, json.dumps(reading)])
    return gdb_oracle.GdbSession(SimpleNamespace(variant="t"), tmp_path / "gdb.sock", claims,
                                 tmp_path, timeout=60)


def test_the_session_gives_gdb_only_identifiers_and_says_why_of_the_others(
        monkeypatch, tmp_path):
    claims = {"symbols": ["task_prio", "task_prio+panic(0)", "disk_type"], "module": "/m.ko",
              "sections": {".text": 1}, "pageblock_order": 10, "snapshots": 1}
    with fake_session(monkeypatch, tmp_path, claims, gdb_reading()) as session:
        session.start()
        truth = session.finish()
    given = json.loads((tmp_path / "gdb-in.json").read_text())
    assert given["symbols"] == ["task_prio", "disk_type"]
    assert truth.symbols == {"task_prio": 0x1000, "task_prio+panic(0)": None,
                             "disk_type": 0x1001}
    assert truth.symbol_errors == {"task_prio+panic(0)": "not a C identifier: "
                                   "not given to gdb"}
    assert gdb_oracle.notes(truth) == ("symbol 'task_prio+panic(0)' from the guest: "
                                       "not a C identifier: not given to gdb",)


def test_a_reading_without_refused_names_is_unchanged(monkeypatch, tmp_path):
    claims = {"symbols": ["task_prio", "disk_type"], "module": "/m.ko",
              "sections": {".text": 1}, "pageblock_order": 10, "snapshots": 1}
    reading = gdb_reading()
    with fake_session(monkeypatch, tmp_path, claims, reading) as session:
        session.start()
        truth = session.finish()
    assert truth == GdbReading.parse(dict(reading, symbols={"task_prio": 0x1000,
                                                            "disk_type": 0x1001}))
    assert gdb_oracle.notes(truth) == ()


def test_the_notes_gdb_wrote_come_back_for_the_report(monkeypatch, tmp_path):
    """run.py adds gdb.notes(truth) to the variant's notes (report.md '- note:')."""
    claims = {"symbols": ["task_prio", "0day"], "module": "/m.ko", "sections": {".text": 1},
              "pageblock_order": 10, "snapshots": 1}
    stated = "SECTION_IS_ONLINE_BIT is not in vmlinux's DWARF (...): ..."
    with fake_session(monkeypatch, tmp_path, claims, dict(gdb_reading(), notes=[stated])) \
            as session:
        session.start()
        truth = session.finish()
    assert gdb_oracle.notes(truth) == (stated, "symbol '0day' from the guest: not a C "
                                                "identifier: not given to gdb")
