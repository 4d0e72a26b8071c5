"""The vmcore oracle: drgn's columns, the two-independent-oracles rule, the dump
and the note handling, QMP, and the gdb hold. Doctored drgn JSON stands for
what drgn read; every test here runs without a guest (e2e: test_drgn_e2e.py)."""

import copy
import json
import socket
import struct
import subprocess
import threading

import pytest

from harness.checks import drgn_columns, variant
from harness.oracles import drgn
from harness.checks import labels
from harness import paths
from harness.guest import vmcore
from harness.errors import HarnessError
from harness.oracles.readings import DrgnReading
from harness.tests.checks.test_compare import TRUTH, as_report, data, reading, with_memory


def drgn_of(d, truth):
    """drgn.json of a vmcore of this guest: the same state as gdb's gdb.json."""
    t = with_memory(d, truth)
    return {
        "vmcoreinfo": {"present": True, "source": "note", "osrelease": "6.1.0",
                       "kerneloffset": "0"},
        "symbols": dict(t["symbols"]),
        "module_sections": {s.name: s.addr for s in d.section},
        "results": copy.deepcopy(t["results"]), "results_via": "drgn's module debug info",
        "tasks": {pid: {"prio": x["prio"], "comm": x["comm"], "policy": 0, "tgid": int(pid)}
                  for pid, x in t["tasks"].items()},
        "pageblock_order": 10,
        "pageblocks": [dict(p, skip=0) for p in t["pageblocks"]],
        "disks": [{"name": b["name"], "dev": b["dev"], "sectors": b["sectors"],
                   "whole": int(b["type"] == "disk"), "walk": "block class klist walk"}
                  for b in t["block_class"]],
        "dirty_limit": t["dirty_limit"],
        "global_wb_domain": 0xffffffff82000000,
    }


EXTRA = ("section name=.text addr=0xffffffffc0000000",
         "section name=.bss addr=0xffffffffc0002480",
         "frame pid=70 idx=3 ip=0x401c00", "frame pid=70 idx=4 ip=0x417fdc",
         "ustack-walk pid=70 idx=3 ip=0x401c00", "ustack-walk pid=70 idx=4 ip=0x417fdc",
         "pbinfo order=10", "fwcfg sysfs=1 vmcoreinfo=1")
# eu-addr2line's names of the fixture's frames (checks/ustack.py USTACK_CALLERS)
NAMES = {0x401000: "level3", 0x401a2b: "level2", 0x401b3c: "level1", 0x401c00: "ustack_thread",
         0x417fdc: "start_thread"}


def run(reading_of_drgn=None, d=None, doctor=None):
    """The report rows of data `d` (default: the fixture with EXTRA) against gdb and
    drgn.json `reading_of_drgn` (default: drgn_of()), after `doctor` edited it."""
    d = d or data(extra=EXTRA)
    truth = reading_of_gdb = reading(with_memory(d, TRUTH))
    drgn_json = reading_of_drgn if reading_of_drgn is not None else drgn_of(d, TRUTH)
    if doctor:
        doctor(drgn_json)
    found = variant.compare_variant(d, reading_of_gdb, ustack_names=NAMES)
    found = drgn_columns.merge(found, d, truth, DrgnReading.parse(drgn_json))
    return as_report(labels.require_independent(found))


def rows(report, kind=None):
    return [c for c in report["symbols"] + report["values"] if kind in (None, c["kind"])]


def failing(report, oracle_rows=False):
    """Ids of the rows that disagree (the two-oracle rule's rows only if asked)."""
    return [c["id"] for c in rows(report) if c["agree"] is False
            and (oracle_rows or c["kind"] != "oracles")]


def test_everything_agrees_and_drgn_is_a_column():
    r = run()
    assert failing(r, oracle_rows=True) == []
    assert r["verdict"] == "pass"
    prio = {c["key"]: c["sources"] for c in rows(r, "prio")}
    assert prio["pid 7"]["drgn"] == 25 and prio["pid 7"]["drgn_memory"] == 25
    pb = rows(r, "pageblock")
    assert all(c["sources"]["drgn"] == c["sources"]["module"] for c in pb) and len(pb) == 3
    assert {c["key"]: c["sources"]["drgn"] for c in rows(r, "blockdev")
            if not c["key"].endswith(("/whole", "/walk"))} == {"ram0": "1:0 32768",
                                                                "ram0p1": "1:1 8192"}
    walk = {c["key"]: c["sources"] for c in rows(r, "blockdev") if c["key"].endswith("/walk")}
    assert walk["ram0/walk"]["drgn"] == walk["ram0/walk"]["drgn_memory"] == ["ram0", "ram0p1"]
    whole = {c["key"]: c["sources"] for c in rows(r, "blockdev") if c["key"].endswith("/whole")}
    assert whole["ram0/whole"]["drgn"] == 1 and whole["ram0p1/whole"]["drgn"] == 0
    assert [c["sources"]["drgn"] for c in rows(r, "writeback") if "drgn" in c["sources"]] == \
        [510, 510]
    assert rows(r, "symbol")[0]["sources"]["drgn"] == "0x1000"


def test_doctored_drgn_prio_fails_the_prio_row():
    """drgn read another priority for pid 7 than the module reported."""
    r = run(doctor=lambda g: g["tasks"]["7"].update(prio=24))
    assert failing(r) == ["prio:pid 7"]
    assert r["verdict"] == "fail"


def test_a_byte_flipped_in_the_module_results_fails():
    """The vmcore's copy of ksymlab_results (drgn_memory) differs from the module's text."""
    r = run(doctor=lambda g: g["results"]["prio"][1].update(prio=26))
    assert failing(r) == ["prio:pid 7"]
    r = run(doctor=lambda g: g["results"]["pageblocks"][2].update(mt=0))
    assert failing(r) == ["pageblock:DMA32 pfn 0x800"]
    r = run(doctor=lambda g: g["results"].update(magic=0))
    assert failing(r) == ["snapshot:magic"]


@pytest.mark.parametrize("doctor,fails", [
    (lambda g: g["pageblocks"][1].update(mt=2), ["pageblock:DMA32 pfn 0x400",
                                                  "migratetype:zone DMA32 mt 1"]),
    (lambda g: g["disks"][1].update(sectors=8191), ["blockdev:ram0p1"]),
    (lambda g: g["disks"][1].update(whole=1), ["blockdev:ram0p1/whole"]),
    # drgn's walk of the disks misses a partition; the module's results list one twice
    (lambda g: g["disks"].pop(1), ["blockdev:ram0/walk", "blockdev:ram0p1",
                                   "blockdev:ram0p1/whole"]),
    (lambda g: g["results"]["bdevs"].append(dict(g["results"]["bdevs"][0])),
     ["blockdev:ram0/walk"]),
    (lambda g: g.update(dirty_limit=511), ["writeback:dirty_limit/tracepoint-arg",
                                           "writeback:dirty_limit/gds"]),
    (lambda g: g["symbols"].update(task_prio=0x1001), ["symbol:task_prio"]),
    (lambda g: g["results"].update(addr=0xffffffffc0002488), ["snapshot:results-address"]),
    (lambda g: g["results"].update(snapshot_seq=2), ["snapshot:sequence"]),
    (lambda g: g["results"].update(frames=[0x401000]), ["ustack:frames"]),
    (lambda g: g.update(pageblock_order=9), ["vmcore:pageblock-order"]),
    (lambda g: g["tasks"]["7"].update(policy=1), ["policy:pid 7", "policy:every task"]),
    (lambda g: g["results"]["prio"][1].update(policy=5), ["policy:pid 7",
                                                         "policy:every task"]),
    (lambda g: g["module_sections"].update({".text": 0}), ["vmcore:module-sections"]),
])
def test_each_drgn_value_is_compared(doctor, fails):
    assert sorted(failing(run(doctor=doctor))) == sorted(fails)


def test_a_task_or_pageblock_only_drgn_saw_fails():
    def more(g):
        g["tasks"]["99"] = {"prio": 20, "comm": "ghost", "policy": 0, "tgid": 99}
        g["pageblocks"].append({"node": 0, "zone": "DMA32", "zid": 0, "pfn": 0xc00, "mt": 1,
                                "skip": 0})
    assert set(failing(run(doctor=more))) == {"prio:pid 99", "pageblock:DMA32 pfn 0xc00",
                                              "migratetype:zone DMA32 mt 1"}


def test_a_guest_without_vmcoreinfo_fails_its_rows():
    d = data(extra=EXTRA[:-1] + ("fwcfg sysfs=0 vmcoreinfo=0",))
    r = run(d=d, doctor=lambda g: g["vmcoreinfo"].update(present=False,
                                                        source="synthesized from vmlinux"))
    assert failing(r) == ["vmcore:vmcoreinfo", "vmcore:fw_cfg"]


def test_without_drgn_every_kind_gdb_alone_covers_fails_the_two_oracle_rule():
    r = run(reading_of_drgn={"error": "ksymlab-drgn: no vmcore"})
    assert set(failing(r, oracle_rows=True)) == {
        "vmcore:drgn", "oracles:symbol addresses", "oracles:pageblock migratetype",
        "oracles:migratetype histogram", "oracles:block devices", "oracles:whole flag",
        "oracles:dirty limit"}
    # prio keeps gdb and the scenario; the header gdb and the expected magic
    assert not any(c["agree"] is False for c in rows(r, "oracles")
                   if c["key"] in ("task priority", "results header", "user stack"))


def test_same_function_oracles_do_not_count():
    """/proc/<pid>/stat and /proc/pagetypeinfo call task_prio() and
    get_pfnblock_flags_mask(): with only them beside gdb, two are not reached."""
    d = data(extra=EXTRA)
    found = variant.compare_variant(d, reading(with_memory(d, TRUTH)),    # no drgn
                                    ustack_names=NAMES)
    r = as_report(labels.require_independent(found))
    cov = {c["key"]: c for c in rows(r, "oracles")}
    assert cov["migratetype histogram"]["agree"] is False
    assert cov["migratetype histogram"]["sources"]["independent"] == "gdb_bitmap"
    assert "pagetypeinfo" in cov["migratetype histogram"]["sources"]["other"]
    assert cov["task priority"]["sources"]["independent"] == "gdb, scenario"
    assert "proc_stat" in cov["task priority"]["sources"]["other"]


def test_an_oracle_counts_only_on_rows_that_agree():
    # pid 7 disagrees (drgn says 24): the other prio rows still have gdb and drgn
    r = run(doctor=lambda g: g["tasks"]["7"].update(prio=24))
    cov = {c["key"]: c for c in rows(r, "oracles")}
    assert cov["task priority"]["agree"] is True
    assert cov["task priority"]["sources"]["independent"] == "gdb, drgn"
    # the one dirty-limit row disagrees: no oracle agrees there, the rule fails too
    r = run(doctor=lambda g: g.update(dirty_limit=511))
    cov = {c["key"]: c for c in rows(r, "oracles")}
    assert cov["dirty limit"]["agree"] is False
    assert cov["dirty limit"]["sources"]["independent"] == "none"


def test_exempt_kinds_are_unchecked_with_their_reason():
    cov = {c["key"]: c for c in rows(run(), "oracles")}
    assert cov["writeback hits"]["agree"] is None
    assert "no second witness" in cov["writeback hits"]["reason"]
    # Every kind of the fixture (no bpf variant there), written out: the two kinds
    # with one witness by nature are unchecked, every other kind agrees. A kind
    # wrongly made exempt, or one that lost its rows, fails here.
    assert {k: c["agree"] for k, c in cov.items()} == {
        "symbol addresses": True, "results header": True, "task priority": True,
        "task policy": True, "pageblock migratetype": True, "migratetype histogram": True,
        "block devices": True, "whole flag": True, "user stack": True, "dirty limit": True,
        "dirty thresholds": None, "writeback hits": None}


def test_every_source_a_row_names_has_a_label():
    names = {s for c in rows(run()) for s in c["sources"]}
    names -= {"independent", "other", "required", "differ"}          # the rule's own columns
    assert {n for n in names if labels.label(n)[0] == "unlabelled"} == set()
    table = {t["source"]: t for t in labels.table()}
    assert table["proc_stat"]["label"] == "same function" and not table["proc_stat"]["counts"]
    assert table["pagetypeinfo"]["label"] == "same function"
    assert table["drgn"]["label"] == table["gdb"]["label"] == "independent (memory)"
    assert table["scenario"]["label"] == "independent (expected)"
    assert table["sysfs"]["label"] == "same data"


# ---- the vmcore file: notes, the synthesized fallback ----

def tiny_core(path, payload=b"\x11" * 64, notes=b""):
    """An ELF64 core: optional PT_NOTE, one PT_LOAD of `payload` at physical 0x1000."""
    phnum = 2 if notes else 1
    off = 64 + 56 * phnum
    ehdr = bytearray(64)
    ehdr[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHIQQQIHHHHHH", ehdr, 16, 4, 62, 1, 0, 64, 0, 0, 64, 56, phnum, 0, 0, 0)
    phdrs = b""
    body = b""
    if notes:
        phdrs += struct.pack("<IIQQQQQQ", 4, 0, off, 0, 0, len(notes), len(notes), 4)
        body += notes
    phdrs += struct.pack("<IIQQQQQQ", 1, 7, off + len(body), 0, 0x1000, len(payload),
                         len(payload), 0)
    body += payload
    path.write_bytes(bytes(ehdr) + phdrs + body)
    return path


def note(name, desc, ntype=0):
    n = name.encode() + b"\0"
    return (struct.pack("<III", len(n), len(desc), ntype) + n + b"\0" * (-len(n) % 4)
            + desc + b"\0" * (-len(desc) % 4))


def test_notes_and_vmcoreinfo_text(tmp_path):
    core = tiny_core(tmp_path / "core", notes=note("CORE", b"x" * 10) +
                     note("VMCOREINFO", b"OSRELEASE=6.1.0\nPAGESIZE=4096\n"))
    assert [n for n, _ in vmcore.elf_notes(core)] == ["CORE", "VMCOREINFO"]
    assert vmcore.vmcoreinfo_text(core) == "OSRELEASE=6.1.0\nPAGESIZE=4096\n"
    bare = tiny_core(tmp_path / "bare", notes=note("QEMU", b"q" * 8))
    assert vmcore.vmcoreinfo_text(bare) is None
    (tmp_path / "junk").write_bytes(b"not an elf file at all" * 4)
    assert vmcore.elf_notes(tmp_path / "junk") == []


def test_add_vmcoreinfo_keeps_memory_and_adds_the_note(tmp_path):
    payload = bytes(range(256))
    core = tiny_core(tmp_path / "core", payload=payload, notes=note("QEMU", b"q" * 8))
    out = vmcore.add_vmcoreinfo(core, tmp_path / "core.synth", "OSRELEASE=6.1.0\n")
    assert vmcore.vmcoreinfo_text(out) == "OSRELEASE=6.1.0\n"
    assert [n for n, _ in vmcore.elf_notes(out)] == ["VMCOREINFO", "QEMU"]
    # the PT_LOAD still points at the same bytes
    r = subprocess.run(["readelf", "-lW", str(out)], capture_output=True, text=True)
    load = [line.split() for line in r.stdout.splitlines() if line.strip().startswith("LOAD")]
    offset = int(load[0][1], 16)
    assert out.read_bytes()[offset:offset + 256] == payload
    assert vmcore.vmcoreinfo_text(core) is None          # the original is untouched


def test_drgn_oracle_rejects_a_file_that_is_no_kernel_core(tmp_path):
    """Bad input: one line and exit status 43."""
    junk = tmp_path / "vmcore"
    junk.write_bytes(b"\0" * 4096)
    spec = tmp_path / "in.json"
    spec.write_text(json.dumps({"vmcore": str(junk), "vmlinux": "/nonexistent",
                                "module": "/nonexistent", "sections": {}, "symbols": [],
                                "pageblock_order": 10}))
    p = subprocess.run([drgn.PYTHON, "-m", drgn.CHILD, str(spec),
                        str(tmp_path / "out.json")], cwd=paths.REPO, capture_output=True,
                       text=True)
    assert p.returncode == 43
    assert p.stderr.startswith("ksymlab-drgn: ") and len(p.stderr.strip().splitlines()) == 1


def test_read_reports_a_missing_vmcore_as_an_error_not_an_exception(tmp_path):
    assert drgn.read({"error": "QMP said no"}, None, {}, tmp_path) == \
        DrgnReading.failed("no vmcore: QMP said no")
    assert "never held" in drgn.read({}, None, {}, tmp_path).error


# ---- QMP ----

class FakeQmp(threading.Thread):
    """A QMP monitor on a unix socket: greeting, capabilities, then scripted replies."""

    def __init__(self, path, replies):
        super().__init__(daemon=True)
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(str(path))
        self.srv.listen(1)
        self.replies = replies
        self.seen = []

    def run(self):
        conn, _ = self.srv.accept()
        f = conn.makefile("rw")
        f.write(json.dumps({"QMP": {"version": {}, "capabilities": []}}) + "\n")
        f.flush()
        for line in f:
            msg = json.loads(line)
            self.seen.append(msg)
            reply = self.replies(msg)
            for r in reply:
                f.write(json.dumps(r) + "\n")
            f.flush()
        conn.close()


def qmp_replies(fail_dump=False):
    def answer(msg):
        cmd = msg["execute"]
        if cmd == "query-status":
            return [{"return": {"status": "debug", "running": False}}]
        if cmd == "dump-guest-memory":
            if fail_dump:
                return [{"error": {"class": "GenericError", "desc": "dump: no space"}}]
            path = msg["arguments"]["protocol"][len("file:"):]
            tiny_core(__import__("pathlib").Path(path))
            return [{"event": "STOP"}, {"return": {}}]
        return [{"return": {}}]
    return answer


def test_dump_asks_qmp_for_the_file(tmp_path):
    fake = FakeQmp(tmp_path / "qmp.sock", qmp_replies())
    fake.start()
    got = vmcore.take(tmp_path / "qmp.sock", tmp_path, "t")
    assert got["format"] == "elf" and got["status"] == "debug" and got["bytes"] > 0
    dump = [m for m in fake.seen if m["execute"] == "dump-guest-memory"][0]
    assert dump["arguments"] == {"paging": False, "protocol": f"file:{tmp_path / 'vmcore'}",
                                 "format": "elf"}
    assert fake.seen[0]["execute"] == "qmp_capabilities"


def test_a_failed_dump_is_recorded_not_raised(tmp_path):
    fake = FakeQmp(tmp_path / "qmp.sock", qmp_replies(fail_dump=True))
    fake.start()
    got = vmcore.take(tmp_path / "qmp.sock", tmp_path, "t")
    assert got == {"error": "QMP dump-guest-memory: GenericError: dump: no space"}
    assert "no socket" not in vmcore.take(tmp_path / "none.sock", tmp_path, "t")["error"]
    with pytest.raises(HarnessError) as e:
        vmcore.dump(tmp_path / "none.sock", tmp_path / "x", fmt="raw")
    assert e.value.step == "usage"


# ---- gdb holds the guest at the snapshot while the host dumps ----

def test_gdb_session_runs_the_callback_once_while_gdb_holds(tmp_path):
    from harness.oracles.gdb import GdbSession
    calls = []
    s = GdbSession(None, "sock", {}, tmp_path, at_snapshot=lambda: calls.append(1))
    s._release_if_held()
    assert calls == [] and not s.release_file.exists()       # gdb does not hold yet
    s.hold_file.write_text("0xffffffffc0000010\n")
    s._release_if_held()
    s._release_if_held()
    assert calls == [1] and s.release_file.exists()


def test_symbol_place_gives_section_and_offset(tmp_path):
    """How the 6.12 path finds ksymlab_results: section and offset from the .ko."""
    c = tmp_path / "m.c"
    c.write_text("long pad[2] = {1, 2};\nlong target[2] = {4, 5};\nlong zeroed[8];\n")
    obj = tmp_path / "m.o"
    subprocess.run(["gcc", "-c", "-O0", "-fno-common", "-o", str(obj), str(c)], check=True)
    assert drgn.symbol_place(str(obj), "target") == (".data", 16)
    assert drgn.symbol_place(str(obj), "zeroed") == (".bss", 0)
    with pytest.raises(drgn.Bad):
        drgn.symbol_place(str(obj), "absent")


def test_rows_of_the_second_snapshot_get_no_drgn_column():
    """The vmcore is the first snapshot's: a second-snapshot row (checks/pageblock.py) keeps
    its own verdict and gets no drgn source (with drgn's first-snapshot value
    forced on it, the Isolate block of snapshot 2 disagreed on every variant)."""
    from dataclasses import replace
    from harness.model.results import Check
    d = data(extra=EXTRA)
    truth = reading(with_memory(d, TRUTH))
    found = variant.compare_variant(d, truth, ustack_names=NAMES)
    first = next(c for c in found.values if c.kind == "pageblock")
    later = (replace(first, key="snap2 " + first.key, sources={**first.sources, "module": 4},
                     agreement=True),
             Check("pageblock", "snap1/skip-bits", {"gdb_bitmap": 3, "expected": "> 0"}, True),
             Check("migratetype", "types/Isolate", {"module": "0 32"}, True))
    merged = drgn_columns.merge(replace(found, values=found.values + later), d, truth,
                                DrgnReading.parse(drgn_of(d, TRUTH)))
    by_key = {c.key: c for c in merged.values}
    for c in later:
        assert by_key[c.key].agrees
        assert "drgn" not in by_key[c.key].sources
    assert "drgn" in by_key[first.key].sources and by_key[first.key].agrees
