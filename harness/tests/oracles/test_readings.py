"""The parse boundary of the memory oracles: gdb.json and drgn.json become typed
records, and a wrong key fails there, in one line that names it, not later as
a KeyError or a silent None in a row."""

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import HarnessError
from harness.oracles import drgn
from harness.oracles.readings import DrgnReading, GdbReading
from harness.tests.readings_fixture import DRGN, GDB, drgn_reading, gdb_reading
from harness.tests.oracles.test_gdb_names import fake_session


def test_the_fixture_readings_parse_into_records():
    g = GdbReading.parse(gdb_reading())
    assert g.text == 0xffffffff81000000 and g.symbols["disk_type"] is None
    assert g.results.prio[0].pid == 7 and g.results.prio[0].comm == "ksymlab-fair"
    assert g.results.wb.dirty_limit == 510 and g.results.frames == (0x401000, 0x401c00)
    assert g.dirty_sysctl.vm_dirty_ratio == 20
    assert g.tasks["7"].prio == 25 and g.pageblocks[0].skip is True
    assert g.block_class[0].type == "disk" and g.snapshots[0].stop.seq == 1
    assert g.notes == () and dict(g.symbol_errors) == {}
    d = DrgnReading.parse(drgn_reading())
    assert d.error is None and d.vmcoreinfo.present is True and d.tasks["7"].tgid == 7
    assert d.pageblocks[0].skip == 1 and d.disks[0].whole == 1 and d.seconds == 0.7


def test_a_record_shares_nothing_with_the_dict_it_was_parsed_from():
    r = gdb_reading()
    g = GdbReading.parse(r)
    r["tasks"]["7"]["prio"] = 0
    r["results"]["prio"].append({"pid": 8})
    assert g.tasks["7"].prio == 25 and len(g.results.prio) == 1
    assert g == GdbReading.parse(gdb_reading())
    assert DrgnReading.parse(drgn_reading()) == DrgnReading.parse(DRGN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.jiffies = 0
    with pytest.raises(TypeError):
        g.tasks["8"] = g.tasks["7"]                # a read-only mapping
    assert GDB["tasks"]["7"]["prio"] == 25


def _gdb_error(doctor):
    r = gdb_reading()
    doctor(r)
    with pytest.raises(HarnessError) as e:
        GdbReading.parse(r)
    assert e.value.step == "gdb" and "\n" not in e.value.message
    return e.value.message


@pytest.mark.parametrize("doctor,message", [
    (lambda r: r["results"].update(prios=r["results"].pop("prio")),
     "gdb.json: results.prio: missing"),
    (lambda r: r.pop("_text"), "gdb.json: _text: missing"),
    (lambda r: r["results"]["prio"][0].update(pid="7"),
     "gdb.json: results.prio[0].pid: is a string, not an integer"),
    (lambda r: r["tasks"]["7"].pop("policy"), 'gdb.json: tasks["7"].policy: missing'),
    (lambda r: r["pageblocks"][0].update(online=1),
     "gdb.json: pageblocks[0].online: is an integer, not a boolean"),
    (lambda r: r["pageblocks"][0].update(mt=True),
     "gdb.json: pageblocks[0].mt: is a boolean, not an integer"),
    (lambda r: r["snapshots"][0]["stop"].update(seq="1"),
     "gdb.json: snapshots[0].stop.seq: is a string, not an integer"),
    (lambda r: r.update(block_class={}), "gdb.json: block_class: is an object, not a list"),
    (lambda r: r["symbols"].update({"a\nb": "0x10"}),
     'gdb.json: symbols["a\\nb"]: is a string, not an integer'),
    (lambda r: r.update(notes="x"), "gdb.json: notes: is a string, not a list"),
    (lambda r: r["results"]["wb"].pop("bdp_limit"), "gdb.json: results.wb.bdp_limit: missing"),
    (lambda r: r["dirty_sysctl"].update(vm_dirty_ratio="20"),
     "gdb.json: dirty_sysctl.vm_dirty_ratio: is a string, not an integer"),
    (lambda r: r["snapshots"][0].pop("tasks"), "gdb.json: snapshots[0].tasks: missing"),
    (lambda r: r["snapshots"].append([]), "gdb.json: snapshots[1]: is a list, not an object"),
])
def test_a_wrong_key_in_gdb_json_fails_at_the_parse_in_one_line(doctor, message):
    assert _gdb_error(doctor) == message


def test_optional_values_may_be_null_where_the_script_writes_none():
    r = gdb_reading()
    r.update(_text=None, global_wb_domain=None, config_hz=None)
    r["stop"]["seq"] = None                        # the argument's location optimised out
    r["symbols"]["task_prio"] = None
    g = GdbReading.parse(r)
    assert g.text is None and g.stop.seq is None and g.config_hz is None
    assert _gdb_error(lambda r: r.update(jiffies=None)) == \
        "gdb.json: jiffies: is null, not an integer"


@pytest.mark.parametrize("doctor,message", [
    (lambda r: r.pop("disks"), "drgn.json: disks: missing"),
    (lambda r: r["vmcoreinfo"].update(present="yes"),
     "drgn.json: vmcoreinfo.present: is a string, not a boolean"),
    (lambda r: r["results"]["bdevs"][0].pop("dev"), "drgn.json: results.bdevs[0].dev: missing"),
    (lambda r: r["tasks"]["7"].update(tgid=None),
     'drgn.json: tasks["7"].tgid: is null, not an integer'),
    (lambda r: r.update(seconds="0.7"), "drgn.json: seconds: is a string, not a number"),
    (lambda r: r["results"]["wb"].update(dirty_limit=None),
     "drgn.json: results.wb.dirty_limit: is null, not an integer"),
    (lambda r: r["module_sections"].update({".text": "0x10"}),
     'drgn.json: module_sections[".text"]: is a string, not an integer'),
])
def test_a_wrong_key_in_drgn_json_fails_at_the_parse_in_one_line(doctor, message):
    r = drgn_reading()
    doctor(r)
    with pytest.raises(HarnessError) as e:
        DrgnReading.parse(r)
    assert e.value.step == "drgn" and e.value.message == message


@pytest.mark.parametrize("reading,record,message", [
    ([], GdbReading, "gdb.json: the reading: is a list, not an object"),
    (None, DrgnReading, "drgn.json: the reading: is null, not an object"),
])
def test_a_reading_that_is_no_object_fails_in_one_line(reading, record, message):
    with pytest.raises(HarnessError) as e:
        record.parse(reading)
    assert e.value.message == message


def test_a_drgn_error_is_a_reading_too():
    d = DrgnReading.parse({"error": "ksymlab-drgn: not a Linux kernel core"})
    assert d.error == "ksymlab-drgn: not a Linux kernel core" and d.tasks is None
    assert d == DrgnReading.failed("ksymlab-drgn: not a Linux kernel core")
    r = drgn_reading()
    del r["seconds"]                               # drgn.json on disk: the harness adds it
    assert DrgnReading.parse(r).seconds is None
    with pytest.raises(HarnessError) as e:
        DrgnReading.parse({"error": 43}, "/r/drgn.json")
    assert e.value.message == "/r/drgn.json: error: is an integer, not a string"


# ---- where the oracles parse ----

def test_gdb_session_fails_on_a_malformed_reading_with_its_log(monkeypatch, tmp_path):
    claims = {"symbols": ["task_prio"], "module": "/m.ko", "sections": {".text": 1},
              "pageblock_order": 10, "snapshots": 1}
    bad = gdb_reading()
    del bad["results"]["magic"]
    with pytest.raises(HarnessError) as e:
        with fake_session(monkeypatch, tmp_path, claims, bad) as session:
            session.start()
            session.finish()
    assert e.value.step == "gdb" and e.value.exit_status == 40
    assert e.value.message == f"{tmp_path / 'gdb.json'}: results.magic: missing"
    assert Path(e.value.log) == tmp_path / "gdb.log"


def _read_with_child_output(monkeypatch, tmp_path, reading):
    """drgn.read() with its child replaced by one that writes `reading`."""
    def child(step, argv, log, **kw):
        Path(argv[-1]).write_text(json.dumps(reading))
    monkeypatch.setattr(drgn, "run_logged", child)
    core = tmp_path / "vmcore"
    core.write_bytes(b"core")
    claims = {"module": "/m.ko", "sections": {}, "symbols": [], "pageblock_order": 10}
    return drgn.read({"path": str(core), "format": "raw"},
                     SimpleNamespace(vmlinux="/vmlinux"), claims, tmp_path, "t")


def test_drgn_read_turns_a_malformed_reading_into_its_error(monkeypatch, tmp_path):
    bad = drgn_reading()
    del bad["seconds"], bad["pageblock_order"]
    got = _read_with_child_output(monkeypatch, tmp_path, bad)
    assert got == DrgnReading.failed(f"{tmp_path / 'drgn.json'}: pageblock_order: missing")
    assert (tmp_path / "vmcore").exists()          # kept for a look


def test_drgn_read_returns_a_good_reading_as_drgn_wrote_it(monkeypatch, tmp_path):
    good = drgn_reading()
    del good["seconds"]
    got = _read_with_child_output(monkeypatch, tmp_path, good)
    assert got == dataclasses.replace(DrgnReading.parse(good), seconds=got.seconds)
    assert isinstance(got.seconds, float) and got.error is None
