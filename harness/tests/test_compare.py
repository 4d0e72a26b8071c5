import pytest

from harness import compare, guestdata

BASE = [
    "symbol name=task_prio addr=0x1000 method=export",
    "kallsyms name=task_prio addr=0x{kaddr} type=T",
    "procstat pid=7 prio={statprio}",
    "task pid=7 policy=nice value=5",
    "prio pid=1 policy=0 prio=20 comm=init",
    "prio pid=7 policy=0 prio={prio} comm=sleep",
    "mthist node=0 zone=DMA32 mt=0 count=3",
    "mthist node=0 zone=DMA32 mt=1 count=60",
    "mthist node=0 zone=DMA32 mt=5 count=0",
    "ptinfo node=0 zone=DMA32 mt=0 count=3",
    "ptinfo node=0 zone=DMA32 mt=1 count={movable}",
    "bdev name=ram0 dev=1:0 sectors=32768 whole=1",
    "bdev name=ram0p1 dev=1:1 sectors=8192 whole=0",
    "sysblock name=ram0 dev=1:0 sectors=32768",
    "sysblock name=ram0p1 dev=1:1 sectors={p1}",
    "writeback gds_hits=2 bdp_hits={bdp} background_thresh=256 dirty_thresh=512",
    "dirtylimit source=tracepoint-arg gds=500 bdp=510",
    "frame pid=70 idx=0 ip=0x401000",
    "frame pid=70 idx=1 ip=0x401a2b",
    "frame pid=70 idx=2 ip={f2}",
    "ustack-expect pid=70 depth=1 ret=0x401a2b",
    "ustack-expect pid=70 depth=2 ret=0x401b3c",
]


def data(prio=25, movable=60, p1=8192, bdp=9, f2="0x401b3c", kaddr="1000", statprio=None,
         extra=()):
    statprio = prio if statprio is None else statprio
    lines = [l.format(prio=prio, movable=movable, p1=p1, bdp=bdp, f2=f2, kaddr=kaddr,
                      statprio=statprio) for l in BASE]
    text = "\n".join(["KSYMLAB-DATA-BEGIN variant=t", *lines, *extra, "KSYMLAB-DATA-END"])
    return guestdata.parse(text)


TRUTH = {"symbols": {"task_prio": 0x1000}, "dirty_limit": 510,
         "tasks": {"1": {"prio": 20, "comm": "init"}, "7": {"prio": 25, "comm": "sleep"},
                   "9": {"prio": 20, "comm": "kworker"}}}


def failing(r):
    return [(x.get("kind", "symbol"), x.get("key", x.get("name")))
            for x in r["symbols"] + r["values"] if x["agree"] is False]


def test_all_agree():
    r = compare.compare_variant(data(), TRUTH)
    assert failing(r) == [] and r["verdict"] == "pass"
    assert r["symbols"] == [{"name": "task_prio", "method": "export", "module_addr": "0x1000",
                             "gdb_addr": "0x1000", "proc_kallsyms": "0x1000", "agree": True}]
    kinds = [v["kind"] for v in r["values"]]
    # the empty migratetype 5 that pagetypeinfo does not list is skipped
    assert kinds == ["prio"] * 2 + ["migratetype"] * 2 + ["blockdev"] * 2 + ["ustack"] * 2 + \
        ["writeback"] * 3
    assert any("9" in n for n in r["notes"])     # gdb-only task: a note, not a failure


def test_address_mismatch_fails():
    truth = dict(TRUTH, symbols={"task_prio": 0x1008})
    assert failing(compare.compare_variant(data(), truth)) == [("symbol", "task_prio")]


def test_gdb_missing_symbol_fails():
    truth = dict(TRUTH, symbols={"task_prio": None})
    assert compare.compare_variant(data(), truth)["verdict"] == "fail"


def test_scenario_oracle_catches_value_both_sides_share():
    truth = dict(TRUTH, tasks={"1": {"prio": 20}, "7": {"prio": 26}})
    r = compare.compare_variant(data(prio=26), truth)
    # module and gdb agree on 26, but nice 5 must be 25
    assert failing(r) == [("prio", "pid 7")]


def test_missing_scenario_task_and_guest_error_fail():
    r = compare.compare_variant(data(extra=["task pid=8 policy=nice value=0"]), TRUTH)
    assert ("prio", "pid 8") in failing(r)
    r = compare.compare_variant(data(extra=["error insmod exited 1"]), TRUTH)
    assert r["verdict"] == "fail"


def test_migratetype_against_pagetypeinfo():
    assert failing(compare.compare_variant(data(movable=61), TRUTH)) == [
        ("migratetype", "zone DMA32 mt 1")]


def test_blockdev_against_sysfs():
    assert failing(compare.compare_variant(data(p1=8000), TRUTH)) == [("blockdev", "ram0p1")]
    r = compare.compare_variant(data(extra=["sysblock name=ram1 dev=1:16 sectors=32768"]),
                                TRUTH)
    assert failing(r) == [("blockdev", "ram1")]      # the module missed a device


def test_ustack_frames_must_contain_program_addresses_in_order():
    r = compare.compare_variant(data(f2="0x401ccc"), TRUTH)
    assert failing(r) == [("ustack", "return address 2")]
    swapped = ["ustack-expect pid=70 depth=3 ret=0x401000"]  # found, but before depth 1
    r = compare.compare_variant(data(extra=swapped), TRUTH)
    assert {k for _, k in failing(r)} == {"return address 1", "return address 2",
                                          "return address 3"}


def test_writeback_hits_and_dirty_limit():
    assert failing(compare.compare_variant(data(bdp=0), TRUTH)) == [("writeback", "bdp_hits")]
    r = compare.compare_variant(data(), dict(TRUTH, dirty_limit=600))
    assert failing(r) == [("writeback", "dirty_limit (tracepoint-arg)")]


def test_unresolved_symbol_is_unchecked_not_failed():
    extra = ["symbol name=block_class addr=0x0 method=unresolved"]
    r = compare.compare_variant(data(extra=extra), TRUTH)
    assert r["verdict"] == "pass" and r["counts"]["unchecked"] == 1


def test_symcheck_values():
    clean = {"check": [], "audit": [{"what": "kallsyms_lookup_name"}]}
    assert all(v["agree"] for v in compare.compare_symcheck(clean, "kallsyms"))
    # an exports-mode module must not need kallsyms at all
    assert [v["agree"] for v in compare.compare_symcheck(clean, "exports")] == [True, False]
    bad = {"check": [{"message": "needs unknown symbol task_prio"}], "audit": []}
    assert [v["agree"] for v in compare.compare_symcheck(bad, "exports")] == [False, True]


def test_task_gone_before_halt_is_unchecked_but_scenario_task_is_not():
    r = compare.compare_variant(data(extra=["prio pid=43 policy=0 prio=20 comm=kthreadd"]),
                                TRUTH)
    assert r["verdict"] == "pass" and r["counts"]["unchecked"] == 1
    assert any("pid 43" in n for n in r["notes"])
    truth = dict(TRUTH, tasks={"1": {"prio": 20}})        # scenario pid 7 vanished
    assert ("prio", "pid 7") in failing(compare.compare_variant(data(), truth))


def test_proc_kallsyms_is_a_second_address_oracle():
    r = compare.compare_variant(data(kaddr="1008"), TRUTH)
    assert failing(r) == [("symbol", "task_prio")]
    assert r["symbols"][0]["proc_kallsyms"] == "0x1008"


def test_proc_stat_priority_is_a_second_prio_oracle():
    r = compare.compare_variant(data(statprio=24), TRUTH)
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
    assert compare.expected_prio(task) == prio


RT_DL = ["task pid=11 policy=fifo value=50",
         "task pid=12 policy=deadline value=1000000 deadline=10000000 period=100000000",
         "task pid=13 policy=idle value=-7",
         "procstat pid=11 prio={fifo}", "procstat pid=12 prio={dl}", "procstat pid=13 prio=13",
         "prio pid=11 policy=1 prio={fifo} comm=ksymlab-sched",
         "prio pid=12 policy=6 prio={dl} comm=ksymlab-sched",
         "prio pid=13 policy=5 prio=13 comm=ksymlab-sched"]


def rt_dl(fifo, dl):
    truth = dict(TRUTH, tasks=dict(TRUTH["tasks"], **{"11": {"prio": fifo}, "12": {"prio": dl},
                                                      "13": {"prio": 13}}))
    extra = [l.format(fifo=fifo, dl=dl) for l in RT_DL]
    return compare.compare_variant(data(extra=extra), truth)


def test_fifo_and_deadline_tasks_against_the_scenario():
    r = rt_dl(-51, -101)
    assert failing(r) == [] and r["verdict"] == "pass"
    rows = {v["key"]: (v["module"], v["gdb"], v["proc_stat"], v["scenario"])
            for v in r["values"] if v["kind"] == "prio" and "scenario" in v}
    assert rows == {"pid 7": (25, 25, 25, 25), "pid 11": (-51, -51, -51, -51),
                    "pid 12": (-101, -101, -101, -101), "pid 13": (13, 13, 13, 13)}
    # module, gdb and /proc agree on a wrong value: only the scenario notices
    assert failing(rt_dl(-50, -101)) == [("prio", "pid 11")]       # MAX_RT_PRIO - p
    assert failing(rt_dl(-51, -1)) == [("prio", "pid 12")]         # p->prio, not task_prio
