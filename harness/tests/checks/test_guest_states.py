"""The issue-12 guest states and their checks, on doctored guest data: a PI-boosted
holder and a multi-threaded process (prio), the `whole` flag, both global_dirty_state
thresholds and dirty limits, BPF argument 13. Each test feeds the data a plausible
module bug would produce and names the row that must fail."""

from dataclasses import replace

import pytest

from harness.checks import bpf, variant, writeback
from harness.model.results import SAME_FUNCTION
from harness.oracles import sched_prio
from harness.oracles.readings import DirtySysctl
from test_compare import TRUTH, as_report, cmp, data, failing, reading, with_memory

# pi 19 20 40 and threads other 5 fifo 20, as the guest reports them
PI_THREADS = [
    "task pid=58 tgid=58 policy=other value=19",
    "task pid=59 tgid=58 policy=fifo value=20 pi_owner=58",
    "task pid=60 tgid=58 policy=fifo value=40 pi_owner=58",
    "task pid=63 tgid=63 policy=other value=5",
    "task pid=64 tgid=63 policy=fifo value=20",
    "procstat pid=58 prio={p58}",
    "procstat pid=63 prio=25",
]
# task_prio() of each, as gdb reads p->prio at the snapshot
GDB_PRIO = {58: -41, 59: -21, 60: -41, 63: 25, 64: -21}
# task->policy of each: SCHED_NORMAL holders and leaders, SCHED_FIFO waiters and thread
POLICY = {58: 0, 59: 1, 60: 1, 63: 0, 64: 1}


def prio_lines(prio):
    """The module's prio lines for the tasks above: {pid: (reported pid, prio)}."""
    return [f"prio pid={pid} policy={POLICY.get(pid, 0)} prio={p} comm=ksymlab-threads"
            for pid, p in prio]


def run_prio(module):
    """module: [(pid, prio)] the module reports."""
    extra = [line.format(p58=GDB_PRIO[58]) for line in PI_THREADS]   # the kernel's task_prio()
    truth = dict(TRUTH, tasks=dict(TRUTH["tasks"], **{str(k): {"prio": v, "comm": "t",
                                                                "policy": POLICY[k]}
                                                    for k, v in GDB_PRIO.items()}))
    return cmp(data(extra=extra + prio_lines(module)), truth)


def test_expected_prios_boost_the_pi_holder_to_its_top_waiter():
    tasks = [{"pid": 58, "policy": "other", "value": 19},
             {"pid": 59, "policy": "fifo", "value": 20, "pi_owner": 58},
             {"pid": 60, "policy": "fifo", "value": 40, "pi_owner": 58}]
    assert sched_prio.expected_prios(tasks) == {58: -41, 59: -21, 60: -41}
    # a chain: 61 waits on 59, which waits on 58 - the boost passes on
    chain = tasks + [{"pid": 61, "policy": "rr", "value": 90, "pi_owner": 59}]
    assert sched_prio.expected_prios(chain) == {58: -91, 59: -91, 60: -41, 61: -91}
    # a fair waiter is sorted at DEFAULT_PRIO but boosts with its own prio
    fair = [{"pid": 1, "policy": "other", "value": 19},
            {"pid": 2, "policy": "other", "value": -20, "pi_owner": 1}]
    assert sched_prio.expected_prios(fair) == {1: 0, 2: 0}
    # no waiter, no boost; a task without an oracle stays out
    assert sched_prio.expected_prios([{"pid": 3, "policy": "nice", "value": 19},
                                   {"pid": 4, "policy": "chrt", "value": 1}]) == {3: 39}


def test_pi_holder_and_threads_all_agree():
    r = run_prio(list(GDB_PRIO.items()))
    assert failing(r) == [] and r["verdict"] == "pass"
    rows = {v["key"]: v["sources"] for v in r["values"] if v["kind"] == "prio"}
    assert rows["pid 58"] == {"module": -41, "memory": -41, "gdb": -41, "proc_stat": -41,
                              "scenario": -41}
    assert "proc_stat" not in rows["pid 64"]        # a thread has no /proc/<tid>


def test_prio_from_normal_prio_fails_on_the_pi_holder():
    # t->normal_prio - MAX_RT_PRIO: 39 for the nice-19 holder
    module = {**GDB_PRIO, 58: 39}
    assert failing(run_prio(list(module.items()))) == [("prio", "pid 58")]


def test_prio_keyed_by_tgid_fails_on_the_threads():
    # task_tgid_nr(): every thread reported under its leader's id
    module = [(58, -41), (58, -21), (58, -41), (63, 25), (63, -21)]
    bad = [k for _, k in failing(run_prio(module))]
    assert {"pid 59", "pid 60", "pid 64"} <= set(bad)
    assert len(bad) == len(set(bad))                # one row per pid, keys stay unique


def test_prio_read_from_the_group_leader_fails_on_the_threads():
    module = {**GDB_PRIO, 59: -41, 60: -41, 64: 25}
    assert failing(run_prio(list(module.items()))) == [("prio", "pid 59"), ("prio", "pid 64")]


def test_whole_flag_against_sysfs_and_the_class_walk():
    assert failing(cmp(data(), TRUTH)) == []
    d = data()
    d = replace(d, bdev=(d.bdev[0], replace(d.bdev[1], whole=1)))   # a partition called a disk
    assert failing(cmp(d, TRUTH)) == [("blockdev", "ram0p1 is a whole disk")]
    rows = {v["key"]: v["sources"] for v in cmp(d, TRUTH)["values"]}
    assert rows["ram0p1/whole"] == {"module": 1, "sysfs": 0, "gdb_class": 0}
    # gdb's own reading is an oracle: bd_partno says partition
    walk = [dict(b) for b in TRUTH["block_class"]]
    walk[0]["partno"] = 3
    assert failing(cmp(data(), dict(TRUTH, block_class=walk))) == [
        ("blockdev", "ram0 is a whole disk")]


def sysctl(dirty_bytes, background_bytes):
    return DirtySysctl(vm_dirty_bytes=dirty_bytes, dirty_background_bytes=background_bytes,
                       vm_dirty_ratio=20, dirty_background_ratio=10)


def test_thresholds_from_the_sysctls_gdb_read():
    assert writeback.global_dirty_thresholds(sysctl(8192, 4096)) == (1, 2)
    # DIV_ROUND_UP, and bg_thresh >= thresh halves thresh
    assert writeback.global_dirty_thresholds(sysctl(4097, 4096 * 5)) == (1, 2)
    # ratios depend on dirtyable memory at the event: no value, not a guess
    assert writeback.global_dirty_thresholds(sysctl(0, 4096)) is None


def test_thresholds_swapped_or_wrong_fail():
    d = data(extra=["vmstat name=nr_dirty_threshold value=512",
                    "vmstat name=nr_dirty_background_threshold value=256"])
    assert failing(cmp(d, TRUTH)) == []
    # background_thresh = dirty_thresh in the probe: text and memory agree, gdb does not
    w = d.writeback[0]
    d = replace(d, writeback=(replace(w, background_thresh=w.dirty_thresh),))
    assert failing(cmp(d, TRUTH)) == [("writeback", "global_dirty_state background_thresh")]
    # the sysctl gdb read gives another thresh than the module saw
    truth = dict(TRUTH, dirty_sysctl=dict(TRUTH["dirty_sysctl"], vm_dirty_bytes=600 * 4096))
    assert failing(cmp(data(), truth)) == [("writeback", "global_dirty_state dirty_thresh")]


def test_gds_dirty_limit_taken_from_a_threshold_fails():
    # ksymlab_results.wb.dirty_limit = dirty_thresh (512), gdb reads 510
    d = data()
    d = replace(d, dirtylimit=(replace(d.dirtylimit[0], gds=512),))
    assert failing(cmp(d, TRUTH)) == [("writeback", "dirty_limit (global_dirty_state)")]


def test_a_silently_missing_dirtylimit_or_writeback_line_fails():
    d = replace(data(), dirtylimit=())
    assert failing(cmp(d, TRUTH)) == [("writeback", "dirty_limit (global_dirty_state)"),
                                      ("writeback", "dirty_limit (balance_dirty_pages)")]
    d = replace(data(), writeback=())
    assert {k for _, k in failing(cmp(d, TRUTH))} == {
        "global_dirty_state background_thresh", "global_dirty_state dirty_thresh",
        "gds_hits", "bdp_hits"}


SAMPLERS = ["sampler name=writeback available={a} missing={m}"]


def degraded_writeback(available, degraded):
    a, m = (1, "-") if available else (0, "global_wb_domain")
    d = replace(data(extra=[s.format(a=a, m=m) for s in SAMPLERS]), dirtylimit=(),
                writeback=())
    found = variant.compare_variant(d, reading(with_memory(d, TRUTH)))
    return as_report(variant.expect_degraded(found, degraded))


def test_writeback_degradation_fails_unless_the_variant_expects_it():
    # the sampler says it works, yet gives no values: fails
    r = degraded_writeback(True, ())
    assert r["verdict"] == "fail"
    assert {k for _, k in failing(r)} >= {"gds_hits", "dirty_limit (global_dirty_state)"}
    # it says it degraded, the variant did not expect that: fails
    assert ("sampler", "writeback") in failing(degraded_writeback(False, ()))
    # expected: every writeback row unchecked with the reason, the run passes
    r = degraded_writeback(False, ("writeback",))
    assert failing(r) == [] and r["verdict"] == "pass"
    rows = [v for v in r["values"] if v["kind"] == "writeback"]
    assert rows and all(v["agree"] is None and "degrades" in v["reason"] for v in rows)


HZ = 250
BOOT = bpf.initial_jiffies(HZ)           # 0xfffedb08


def bpf13(value, now, top):
    line = (f"bpf arg=13 result=ok hits=64 value={value:#x} arg1=0xffffffff819b9ca0 "
            f"writes=1 jiffies={now:#x}")
    return [v for v in cmp(data(extra=[line]), dict(TRUTH, jiffies=top))["values"]
            if v["key"] == "arg13/value"][0]


def test_bpf_arg13_is_start_time_between_boot_and_gdb():
    assert BOOT == 4294892296
    row = bpf13(BOOT + 1501, BOOT + 1501, BOOT + 3197)     # the bpf13 run's numbers
    assert row["agree"] is True
    assert row["sources"] == {"program": BOOT + 1501, "program_jiffies": BOOT + 1501,
                              "gdb_initial_jiffies": BOOT, "gdb_jiffies": BOOT + 3197}
    # off by 8: ctx[11] is pause (a few jiffies), or ctx[10] period
    assert bpf13(1, BOOT + 1501, BOOT + 3197)["agree"] is False
    # a pointer argument read by mistake (domain, wb)
    assert bpf13(0xffffffff819b9ca0, BOOT + 1501, BOOT + 3197)["agree"] is False
    # later than the program's own clock, or than gdb's
    assert bpf13(BOOT + 1502, BOOT + 1501, BOOT + 3197)["agree"] is False
    assert bpf13(BOOT + 10, BOOT + 4000, BOOT + 3197)["agree"] is False


def test_bpf_arg13_row_only_where_the_program_read_it():
    rejected = "bpf arg=13 result=rejected errno=13 verifier=invalid_bpf_context_access"
    r = cmp(data(extra=[rejected]), TRUTH)
    assert not [v for v in r["values"] if v["key"] == "arg13/value"]


@pytest.mark.parametrize("kind, key, source", [
    ("prio", "pid 7", "proc_stat"), ("migratetype", "zone DMA32 mt 1", "pagetypeinfo")])
def test_same_function_oracles_are_labelled(kind, key, source):
    row = next(v for v in cmp(data(), TRUTH)["values"] if v["kind"] == kind and v["key"] == key)
    assert row["info"]["oracles"][source] == SAME_FUNCTION
