from types import SimpleNamespace
from dataclasses import replace

import pytest

from harness.checks import symbols, variant
from harness.model.enums import Agreement
from harness.guest import dataport
from harness.model.results import VariantResult
from harness.oracles import sched_prio
from harness.oracles.readings import GdbReading

BASE = [
    "symbol name=task_prio addr=0x1000 method=export",
    "results addr=0xffffffffc0002480 size=25472",
    "kallsyms name=task_prio addr=0x{kaddr} type=T",
    "procstat pid=7 prio={statprio}",
    "task pid=7 policy=nice value=5",
    "prio pid=1 policy=0 prio=20 comm=init",
    "prio pid=7 policy=0 prio={prio} comm=sleep",
    "pageblock node=0 zone=DMA32 pfn=0x0 mt=0",
    "pageblock node=0 zone=DMA32 pfn=0x400 mt=1",
    "pageblock node=0 zone=DMA32 pfn=0x800 mt=1",
    "mthist node=0 zone=DMA32 mt=0 count=1",
    "mthist node=0 zone=DMA32 mt=1 count=2",
    "mthist node=0 zone=DMA32 mt=5 count=0",
    "ptinfo node=0 zone=DMA32 mt=0 count=1",
    "ptinfo node=0 zone=DMA32 mt=1 count={movable}",
    "bdev name=ram0 dev=1:0 sectors=32768 whole=1",
    "bdev name=ram0p1 dev=1:1 sectors=8192 whole=0",
    "sysblock name=ram0 dev=1:0 sectors=32768 whole=1",
    "sysblock name=ram0p1 dev=1:1 sectors={p1} whole=0",
    "writeback gds_hits=2 bdp_hits={bdp} background_thresh=256 dirty_thresh=512",
    "dirtylimit source=tracepoint-arg gds=510 bdp=510",
    "frame pid=70 idx=0 ip=0x401000",
    "frame pid=70 idx=1 ip=0x401a2b",
    "frame pid=70 idx=2 ip={f2}",
    "ustack-expect pid=70 tgid=69 depth=1 ret=0x401a2b",
    "ustack-expect pid=70 tgid=69 depth=2 ret=0x401b3c",
    "ustack-walk pid=70 idx=0 ip=0x401000",
    "ustack-walk pid=70 idx=1 ip=0x401a2b",
    "ustack-walk pid=70 idx=2 ip=0x401b3c",
]


def data(prio=25, movable=2, p1=8192, bdp=9, f2="0x401b3c", kaddr="1000", statprio=None,
         extra=()):
    statprio = prio if statprio is None else statprio
    lines = [l.format(prio=prio, movable=movable, p1=p1, bdp=bdp, f2=f2, kaddr=kaddr,
                      statprio=statprio) for l in BASE]
    text = "\n".join(["KSYMLAB-DATA-BEGIN variant=t", *lines, *extra, "KSYMLAB-DATA-END"])
    return dataport.parse(text)


def block(pfn, mt, zone="DMA32", online=True):
    """A pageblock of gdb's bitmap read (gdb.json pageblocks[]), skip bit clear."""
    return {"node": 0, "zone": zone, "zid": 0, "pfn": pfn, "mt": mt, "raw": mt, "skip": False,
            "online": online}


# gdb.json as far as these tests need it; with_memory() adds the module's
# results and reading() parses it, as GdbSession.finish() does.
TRUTH = {"symbols": {"task_prio": 0x1000}, "_text": None, "dirty_limit": 510,
         "global_wb_domain": None, "snapshots": [],
         "tasks": {"1": {"prio": 20, "comm": "init", "policy": 0},
                   "7": {"prio": 25, "comm": "sleep", "policy": 0}},
         "stop": {"function": "ksymlab_snapshot_taken", "pc": 0xffffffffc0000010, "seq": 1},
         "pageblocks": [block(0, 0), block(0x400, 1), block(0x800, 1)],
         "block_class": [{"name": "ram0", "type": "disk", "dev": "1:0", "sectors": 32768,
                          "partno": 0},
                         {"name": "ram0p1", "type": "part", "dev": "1:1", "sectors": 8192,
                          "partno": 1}],
         # domain_dirty_limits(): 512 and 256 pages
         "dirty_sysctl": {"vm_dirty_bytes": 512 * 4096, "dirty_background_bytes": 256 * 4096,
                          "vm_dirty_ratio": 20, "dirty_background_ratio": 10},
         "config_hz": 250, "jiffies": 0x100000000 + 5000}


def with_memory(d, truth):
    """gdb.json with the module's results structure as gdb reads it: by default
    what its text (the GuestData d) says; a sample it has no line of is 0."""
    t = dict(truth)
    w = d.writeback[0] if d.writeback else None
    dl = d.dirtylimit[0] if d.dirtylimit else None
    if "results" not in t:
        t["results"] = {
            "magic": dataport.RESULTS_MAGIC, "snapshot_seq": 1, "addr": 0xffffffffc0002480,
            "prio": [{"pid": p.pid, "prio": p.prio, "policy": p.policy, "comm": p.comm}
                     for p in d.prio],
            "pageblocks": [{"node": p.node, "pfn": p.pfn, "zid": 0, "mt": p.mt}
                           for p in d.pageblock],
            "bdevs": [{"name": b.name, "dev": b.dev, "sectors": b.sectors} for b in d.bdev],
            "frames_pid": 70, "frames": [f.ip for f in d.frame],
            "wb": {"global_dirty_state_hits": w.gds_hits if w else 0,
                   "balance_dirty_pages_hits": w.bdp_hits if w else 0,
                   "background_thresh": w.background_thresh if w else 0,
                   "dirty_thresh": w.dirty_thresh if w else 0,
                   "dirty_limit": dl.gds if dl else 0, "bdp_limit": dl.bdp if dl else 0}}
    return t


def reading(t):
    """The GdbReading of gdb.json `t`."""
    return GdbReading.parse(t)


def as_report(found):
    """A variant's report entry made from compare_variant()'s Comparison."""
    return VariantResult("t", "test", "exports", symbols=found.symbols, values=found.values,
                         samplers=found.samplers, notes=found.notes,
                         guest_errors=found.guest_errors).to_json()


def cmp(d, truth=TRUTH, **kw):
    return as_report(variant.compare_variant(d, reading(with_memory(d, truth)), **kw))


def failing(r):
    return [(x["kind"], x["label"]) for x in r["symbols"] + r["values"] if x["agree"] is False]


def test_all_agree():
    r = cmp(data(), TRUTH)
    assert failing(r) == [] and r["verdict"] == "pass"
    assert r["symbols"] == [{"id": "symbol:task_prio", "kind": "symbol", "key": "task_prio",
                             "label": "task_prio", "info": {"method": "export"},
                             "sources": {"module": "0x1000", "gdb": "0x1000",
                                         "proc_kallsyms": "0x1000"},
                             "agree": True, "reason": None}]
    kinds = [v["kind"] for v in r["values"]]
    # the empty migratetype 5 that pagetypeinfo does not list is skipped
    assert kinds == ["snapshot"] * 4 + ["prio"] * 2 + ["policy"] * 2 + ["pageblock"] * 3 + ["migratetype"] * 2 \
        + ["blockdev"] * 2 + ["ustack"] * 4 + ["writeback"] * 3 \
        + ["blockdev"] * 3 + ["writeback"] * 3      # blockdev whole and walk, writeback thresholds
    assert r["counts"]["unchecked"] == 0


def test_address_mismatch_fails():
    truth = dict(TRUTH, symbols={"task_prio": 0x1008})
    assert failing(cmp(data(), truth)) == [("symbol", "task_prio")]


def test_gdb_missing_symbol_fails():
    truth = dict(TRUTH, symbols={"task_prio": None})
    assert cmp(data(), truth)["verdict"] == "fail"


def test_scenario_oracle_catches_value_both_sides_share():
    truth = dict(TRUTH, tasks={"1": {"prio": 20, "comm": "init", "policy": 0},
                               "7": {"prio": 26, "comm": "sleep", "policy": 0}})
    r = cmp(data(prio=26), truth)
    # module and gdb agree on 26, but nice 5 must be 25
    assert failing(r) == [("prio", "pid 7")]


def test_missing_scenario_task_and_guest_error_fail():
    r = cmp(data(extra=["task pid=8 policy=nice value=0"]), TRUTH)
    assert ("prio", "pid 8") in failing(r)
    r = cmp(data(extra=["error insmod exited 1"]), TRUTH)
    assert r["verdict"] == "fail"


def test_migratetype_against_pagetypeinfo():
    assert failing(cmp(data(movable=61), TRUTH)) == [
        ("migratetype", "zone DMA32 mt 1")]


def test_blockdev_against_sysfs():
    assert failing(cmp(data(p1=8000), TRUTH)) == [("blockdev", "ram0p1")]
    r = cmp(data(extra=["sysblock name=ram1 dev=1:16 sectors=32768 whole=1"]),
                                TRUTH)
    # the module missed a device (and so gave no `whole` flag for it)
    assert failing(r) == [("blockdev", "ram1"), ("blockdev", "ram1 is a whole disk")]


EMPTY_DISK = {"name": "loop0", "type": "disk", "dev": "7:0", "sectors": 0, "partno": 0}
EMPTY_SYSFS = "sysblock name=loop0 dev=7:0 sectors=0 whole=1"


def test_a_disk_without_capacity_is_expected_absent_only_from_the_v2_walk():
    """blk_walk_visible_disks() skips loop0 (0 sectors): right on v2, a miss elsewhere;
    a v2 module that skips a disk with capacity is still caught."""
    truth = dict(TRUTH, block_class=TRUTH["block_class"] + [EMPTY_DISK])
    v2, exports = SimpleNamespace(module_mode="v2"), SimpleNamespace(module_mode="exports")
    r = cmp(data(extra=[EMPTY_SYSFS]), truth, variant=v2)
    assert failing(r) == []
    (row,) = [x for x in r["values"] if x["label"] == "loop0"]
    assert row["info"]["skipped"].startswith("not visited") and row["sources"]["module"] is None
    assert failing(cmp(data(extra=[EMPTY_SYSFS]), truth, variant=exports)) == [
        ("blockdev", "loop0"), ("blockdev", "loop0 is a whole disk"), ("blockdev", "loop0/walk")]
    # sysfs says loop0 has a capacity: the walk must visit it
    full = dict(EMPTY_DISK, sectors=2048)
    r = cmp(data(extra=["sysblock name=loop0 dev=7:0 sectors=2048 whole=1"]),
            dict(TRUTH, block_class=TRUTH["block_class"] + [full]), variant=v2)
    assert failing(r) == [("blockdev", "loop0"), ("blockdev", "loop0 is a whole disk"),
                          ("blockdev", "loop0/walk")]
    # one oracle alone saying "empty" is not enough
    r = cmp(data(extra=["sysblock name=loop0 dev=7:0 sectors=2048 whole=1"]), truth, variant=v2)
    assert ("blockdev", "loop0") in failing(r)


def test_ustack_frames_must_contain_program_addresses_in_order():
    r = cmp(data(f2="0x401ccc"), TRUTH)
    assert failing(r) == [("ustack", "return address 2"),
                          ("ustack", "whole stack (the program's own frame-pointer walk)")]
    swapped = ["ustack-expect pid=70 tgid=69 depth=3 ret=0x401000"]  # found, but before depth 1
    r = cmp(data(extra=swapped), TRUTH)
    assert {k for _, k in failing(r)} == {"return address 1", "return address 2",
                                          "return address 3"}


def _edited(old, new):
    """The fixture's data with every `old` replaced by `new` in its lines."""
    lines = [l.format(prio=25, movable=2, p1=8192, bdp=9, f2="0x401b3c", kaddr="1000",
                      statprio=25).replace(old, new) for l in BASE]
    return dataport.parse("\n".join(["KSYMLAB-DATA-BEGIN variant=t", *lines,
                                      "KSYMLAB-DATA-END"]))


def test_the_whole_user_stack_is_compared_with_the_programs_own_walk():
    """Issue 25: frames past the ones the program knows are compared too; the mutant
    ustack-drop-outermost captures one frame less than the program walked."""
    assert failing(cmp(data(), TRUTH)) == []
    outer = ["ustack-walk pid=70 idx=3 ip=0x417fdc"]       # a frame the module lacks
    assert failing(cmp(data(extra=outer), TRUTH)) == [
        ("ustack", "whole stack (the program's own frame-pointer walk)")]
    more = ["frame pid=70 idx=3 ip=0x417fdc"]               # one the program did not walk
    r = cmp(data(extra=more), TRUTH)
    assert ("ustack", "whole stack (the program's own frame-pointer walk)") in failing(r)
    # no walk at all is no evidence
    r = cmp(_edited("ustack-walk pid=70", "ustack-walk pid=71"), TRUTH)
    assert failing(r) == [("ustack", "whole stack (the program's own frame-pointer walk)")]


def test_the_user_stack_is_captured_from_a_thread_that_is_not_its_leader():
    """Issue 25: the mutant ustack-tgid prints the thread group id (69) for the
    thread (70); the frames it labels so belong to no thread the program ran."""
    r = cmp(_edited("frame pid=70", "frame pid=69"), TRUTH)
    assert {k for k, _ in failing(r)} == {"ustack"}
    assert ("ustack", "return address 1") in failing(r)
    # a program whose stack thread is its leader could not tell them apart: weak, so failing
    r = cmp(_edited("tgid=69", "tgid=70"), TRUTH)
    row = [x for x in r["values"] if x["id"] == "ustack:stack"][0]
    assert row["agree"] is False and "leader" in row["reason"]


def test_writeback_hits_and_dirty_limit():
    assert failing(cmp(data(bdp=0), TRUTH)) == [("writeback", "bdp_hits")]
    r = cmp(data(), dict(TRUTH, dirty_limit=600))
    assert failing(r) == [("writeback", "dirty_limit (tracepoint-arg)"),
                          ("writeback", "dirty_limit (global_dirty_state)")]


def test_unresolved_symbol_is_unchecked_not_failed():
    extra = ["symbol name=block_class addr=0x0 method=unresolved"]
    r = cmp(data(extra=extra), TRUTH)
    assert r["verdict"] == "pass" and r["counts"]["unchecked"] == 1


def test_symcheck_values():
    clean = {"check": [], "audit": [{"what": "kallsyms_lookup_name"}]}
    assert all(v.agrees for v in symbols.compare_symcheck(clean, "kallsyms"))
    # an exports-mode module must not need kallsyms at all
    agree, disagree = Agreement.AGREE, Agreement.DISAGREE
    assert [v.agreement for v in symbols.compare_symcheck(clean, "exports")] == [agree,
                                                                                 disagree]
    bad = {"check": [{"message": "needs unknown symbol task_prio"}], "audit": []}
    assert [v.agreement for v in symbols.compare_symcheck(bad, "exports")] == [disagree, agree]


def test_snapshot_and_gdb_are_one_instant_so_any_task_difference_fails():
    # listed by the module, gone from guest memory at the same instant
    r = cmp(data(extra=["prio pid=43 policy=0 prio=20 comm=kthreadd"]))
    assert failing(r) == [("prio", "pid 43")]
    # in guest memory, missed by the module
    kworker = {"prio": 20, "comm": "kworker", "policy": 0}
    truth = dict(TRUTH, tasks=dict(TRUTH["tasks"], **{"9": kworker}))
    assert failing(cmp(data(), truth)) == [("prio", "pid 9")]
    truth = dict(TRUTH, tasks={"1": TRUTH["tasks"]["1"]})        # scenario pid 7 vanished
    assert ("prio", "pid 7") in failing(cmp(data(), truth))


def test_module_memory_must_equal_its_text():
    d = data()
    truth = with_memory(d, TRUTH)
    truth["results"]["prio"][1]["prio"] = 26
    truth["results"]["pageblocks"][2]["mt"] = 0
    truth["results"]["bdevs"][1]["sectors"] = 1
    truth["results"]["frames"] = truth["results"]["frames"][:-1]
    assert failing(as_report(variant.compare_variant(d, reading(truth)))) == [
        ("prio", "pid 7"), ("pageblock", "DMA32 pfn 0x800"), ("blockdev", "ram0p1"),
        ("ustack", "frames in module memory")]


def test_pageblock_bitmap_is_an_oracle_for_each_block_and_the_histogram():
    blocks = [dict(b) for b in TRUTH["pageblocks"]]
    blocks[1]["mt"] = 2                  # gdb's bitmap read says otherwise
    r = cmp(data(), dict(TRUTH, pageblocks=blocks))
    assert failing(r) == [("pageblock", "DMA32 pfn 0x400"), ("migratetype", "zone DMA32 mt 1")]
    # a pageblock the module skipped
    blocks = TRUTH["pageblocks"] + [block(0xc00, 1)]
    assert ("pageblock", "DMA32 pfn 0xc00") in failing(cmp(data(), dict(TRUTH,
                                                                        pageblocks=blocks)))


def test_block_class_walk_is_an_oracle():
    walk = TRUTH["block_class"][:1]
    assert failing(cmp(data(), dict(TRUTH, block_class=walk))) == [
        ("blockdev", "ram0p1"), ("blockdev", "ram0p1 is a whole disk"), ("blockdev", "ram0/walk")]


def test_snapshot_header():
    d = data()
    truth = with_memory(d, TRUTH)
    truth["results"]["magic"] = 0
    assert failing(as_report(variant.compare_variant(d, reading(truth)))) == [
        ("snapshot", "ksymlab_results magic")]
    # gdb found the structure somewhere else than the module says it is
    truth = with_memory(d, TRUTH)
    truth["results"]["addr"] += 0x40
    assert failing(as_report(variant.compare_variant(d, reading(truth)))) == [
        ("snapshot", "ksymlab_results address")]
    truth = dict(TRUTH, stop={"function": "native_safe_halt", "pc": 1, "seq": None})
    assert failing(cmp(d, truth)) == [("snapshot", "gdb stopped in")]
    truth = dict(TRUTH, stop=dict(TRUTH["stop"], seq=2))
    assert failing(cmp(d, truth)) == [("snapshot", "snapshot sequence at the stop")]


def test_ustack_frames_named_by_eu_addr2line():
    names = {0x401000: "level3", 0x401a2b: "level2", 0x401b3c: "level1"}
    r = cmp(data(), ustack_names=names)
    # frames 3 and 4 (ustack_thread, start_thread) are not in this fake: no name, a failure
    assert failing(r) == [("ustack", "frame 3 function"), ("ustack", "frame 4 function")]
    rows = {v["key"]: (v["sources"]["eu_addr2line"], v["sources"]["program"])
            for v in r["values"] if v["key"].startswith("fn/")}
    assert rows["fn/1"] == ("level2", "level2")
    names[0x401a2b] = "level1"
    assert ("ustack", "frame 1 function") in failing(cmp(data(), ustack_names=names))


def test_proc_kallsyms_is_a_second_address_oracle():
    r = cmp(data(kaddr="1008"), TRUTH)
    assert failing(r) == [("symbol", "task_prio")]
    assert r["symbols"][0]["sources"]["proc_kallsyms"] == "0x1008"


def test_proc_stat_priority_is_a_second_prio_oracle():
    r = cmp(data(statprio=24), TRUTH)
    assert failing(r) == [("prio", "pid 7")]


@pytest.mark.parametrize("task,prio", [
    # by hand from Linux 6.1: task_prio() = p->prio - 100, p->prio = __normal_prio()
    ({"policy": "nice", "value": -20}, 0),          # 120 - 20 - 100
    ({"policy": "nice", "value": 19}, 39),          # 120 + 19 - 100
    ({"policy": "other", "value": 3}, 23),
    ({"policy": "batch", "value": 5}, 25),
    ({"policy": "batch", "value": -20}, 0),
    ({"policy": "idle", "value": 0}, 20),
    ({"policy": "idle", "value": -7}, 13),          # SCHED_IDLE follows nice too
    ({"policy": "idle", "value": 19}, 39),
    ({"policy": "fifo", "value": 1}, -2),           # 100 - 1 - 1 - 100
    ({"policy": "fifo", "value": 50}, -51),
    ({"policy": "fifo", "value": 99}, -100),        # 100 - 1 - 99 - 100
    ({"policy": "rr", "value": 10}, -11),
    ({"policy": "rr", "value": 90}, -91),
    ({"policy": "deadline", "value": 1000000, "deadline": 10000000, "period": 100000000},
     -101),                                         # MAX_DL_PRIO - 1 - 100
    ({"policy": "deadline", "value": 5000}, -101),
    ({"policy": "chrt", "value": 5}, None),         # no oracle, not a guess
    ({"value": 5}, None),
])
def test_expected_prio_per_policy(task, prio):
    assert sched_prio.expected_prio(task) == prio


RT_DL = ["task pid=11 policy=fifo value=50",
         "task pid=12 policy=deadline value=1000000 deadline=10000000 period=100000000",
         "task pid=13 policy=idle value=-7",
         "procstat pid=11 prio={fifo}", "procstat pid=12 prio={dl}", "procstat pid=13 prio=13",
         "prio pid=11 policy=1 prio={fifo} comm=ksymlab-sched",
         "prio pid=12 policy=6 prio={dl} comm=ksymlab-sched",
         "prio pid=13 policy=5 prio=13 comm=ksymlab-sched"]


def rt_dl(fifo, dl):
    comm = "ksymlab-sched"
    truth = dict(TRUTH, tasks=dict(TRUTH["tasks"], **{
        "11": {"prio": fifo, "comm": comm, "policy": 1},
        "12": {"prio": dl, "comm": comm, "policy": 6},
        "13": {"prio": 13, "comm": comm, "policy": 5}}))
    extra = [l.format(fifo=fifo, dl=dl) for l in RT_DL]
    return cmp(data(extra=extra), truth)


def test_fifo_and_deadline_tasks_against_the_scenario():
    r = rt_dl(-51, -101)
    assert failing(r) == [] and r["verdict"] == "pass"
    rows = {v["key"]: tuple(v["sources"][s] for s in ("module", "gdb", "proc_stat", "scenario"))
            for v in r["values"] if v["kind"] == "prio" and "scenario" in v["sources"]}
    assert rows == {"pid 7": (25, 25, 25, 25), "pid 11": (-51, -51, -51, -51),
                    "pid 12": (-101, -101, -101, -101), "pid 13": (13, 13, 13, 13)}
    # module, gdb and /proc agree on a wrong value: only the scenario notices
    assert failing(rt_dl(-50, -101)) == [("prio", "pid 11")]       # MAX_RT_PRIO - p
    assert failing(rt_dl(-51, -1)) == [("prio", "pid 12")]         # p->prio, not task_prio


SAMPLERS = ["sampler name=prio available=1 missing=-",
            "sampler name=blockdev available={b} missing={m}"]


def with_samplers(blockdev_available, degraded=()):
    b, m = (1, "-") if blockdev_available else (0, "block_class")
    extra = [l.format(b=b, m=m) for l in SAMPLERS]
    d = data(extra=extra)
    if not blockdev_available:      # the module lists no devices; sysfs still does
        d = replace(d, bdev=())
    truth = reading(with_memory(d, TRUTH))
    return as_report(variant.expect_degraded(variant.compare_variant(d, truth), degraded))


def test_an_unexpected_degradation_fails_on_its_own_row():
    r = with_samplers(False)
    assert ("sampler", "blockdev") in failing(r)
    assert {k for k, _ in failing(r)} == {"sampler", "blockdev"}


def test_an_expected_degradation_is_unchecked_with_its_reason():
    r = with_samplers(False, degraded=("blockdev",))
    assert failing(r) == [] and r["verdict"] == "pass"
    rows = [v for v in r["values"] if v["kind"] == "blockdev"]
    assert rows and all(v["agree"] is None and "degrades" in v["reason"] for v in rows)
    # a sampler that was expected to degrade but did not is a failure too
    assert failing(with_samplers(True, degraded=("blockdev",))) == [("sampler", "blockdev")]
