"""The confusion audit (harness/checks/confusions.py, issue 25): each (kind,
confusion) is weak exactly when no row of the run's state tells the right value
from the confused one; the report lists the weak ones."""

import copy
from dataclasses import replace

from harness.checks import confusions
from harness.report import confusions_md
from harness.report.html import _table
from harness.tests.checks.test_compare import TRUTH, block, cmp, data, failing

# gdb's tasks as ksymlab_verify.read_tasks() reads them now: init (pid 1) and a
# nice-5 sleep (pid 7), each leading its own group, neither boosted.
TASKS = {"1": {"prio": 20, "comm": "init", "policy": 0, "normal_prio": 20, "static_prio": 20,
               "rt_priority": 0, "tgid": 1},
         "7": {"prio": 25, "comm": "sleep", "policy": 0, "normal_prio": 25, "static_prio": 25,
               "rt_priority": 0, "tgid": 7}}


def audit_of(tasks=TASKS, extra=(), kinds=None):
    r = cmp(data(extra=extra), dict(TRUTH, tasks=copy.deepcopy(tasks)))
    return {(a.kind, a.confusion): a for a in confusions.audit(r["values"], kinds)}


def test_a_state_without_boost_or_threads_cannot_tell_prio_from_its_neighbours():
    got = audit_of()
    for name in ("normal_prio", "static_prio", "leader's prio", "tgid for pid"):
        a = got[("prio", name)]
        assert a.weak and a.rows == 2 and a.blind == ("prio:pid 1", "prio:pid 7"), name
    # rt_priority (0) is never a normal task's prio: told apart by both rows
    assert not got[("prio", "rt_priority")].weak and got[("prio", "rt_priority")].telling == 2


def test_one_boosted_task_and_one_thread_make_the_prio_kind_strong():
    tasks = copy.deepcopy(TASKS)
    # pid 7 is PI-boosted above its nice level and a thread of init's group
    tasks["7"].update(normal_prio=30, static_prio=30, tgid=1)
    got = audit_of(tasks)
    for name in ("normal_prio", "static_prio", "leader's prio", "tgid for pid"):
        a = got[("prio", name)]
        assert not a.weak and a.telling == 1 and a.blind == ("prio:pid 1",), name


def test_only_a_boosted_real_time_task_tells_prio_from_its_rt_priority():
    # no RT task: the derived prio is gdb's own for every row, so nothing tells
    assert audit_of()[("prio", "prio derived from rt_priority")].weak
    tasks = copy.deepcopy(TASKS)
    # pid 7 SCHED_FIFO at rt_priority 10, unboosted: -1 - 10 = -11 is its prio
    tasks["7"].update(prio=-11, policy=1, normal_prio=-11, static_prio=20, rt_priority=10)
    assert audit_of(tasks)[("prio", "prio derived from rt_priority")].weak
    # boosted by a fifo-40 waiter (issue 43's chain): -41, not -11
    tasks["7"]["prio"] = -41
    a = audit_of(tasks)[("prio", "prio derived from rt_priority")]
    assert not a.weak and a.telling == 1 and a.blind == ("prio:pid 1",)


def test_a_reading_without_the_neighbouring_fields_is_not_read_and_weak():
    old = {pid: {k: t[k] for k in ("prio", "comm", "policy")} for pid, t in TASKS.items()}
    a = audit_of(old)[("prio", "normal_prio")]
    assert a.rows == 0 and a.weak


def test_the_user_stack_from_a_thread_tells_pid_from_tgid_and_a_shorter_stack():
    got = audit_of()
    assert not got[("ustack", "tgid for pid")].weak          # the fixture: pid 70, tgid 69
    assert not got[("ustack", "one frame less")].weak
    # each return address differs from the frames beside it in the walk
    assert not got[("ustack", "next frame")].weak and not got[("ustack", "previous frame")].weak
    # the thread as its own leader: nothing tells them apart
    leader = cmp(data(), dict(TRUTH, tasks=TASKS))
    for v in leader["values"]:
        if v["id"] == "ustack:stack":
            v["info"]["confusions"]["tgid for pid"] = [70, 70]
    a = {(x.kind, x.confusion): x for x in confusions.audit(leader["values"])}
    assert a[("ustack", "tgid for pid")].weak
    assert a[("ustack", "tgid for pid")].blind == ("ustack:stack",)


def test_only_the_kinds_present_are_audited():
    r = cmp(data(), dict(TRUTH, tasks=TASKS))
    prio_only = [v for v in r["values"] if v["kind"] == "prio"]
    assert {a.kind for a in confusions.audit(prio_only)} == {"prio"}


# the fixture's blocks with the skip bit set on the last one (the guest compacts memory)
SKIPPED = [block(0, 0), block(0x400, 1), dict(block(0x800, 1), raw=1 | 8, skip=True)]


def report_of(tasks, pageblocks=SKIPPED):
    r = cmp(data(), dict(TRUTH, tasks=tasks, pageblocks=pageblocks))
    r["confusions"] = [a.to_json() for a in confusions.audit(r["values"])]
    return {"variants": {"exports": r}}


def test_the_report_lists_each_weak_confusion_with_the_rows_that_could_not_tell():
    rep = report_of(TASKS)
    md = "\n".join(confusions_md.markdown(rep))
    assert "## Confusion audit" in md
    assert "| prio | normal_prio | 0/2 **weak** |" in md
    assert "| prio | rt_priority | 2/2 |" in md
    assert "- weak on exports: prio / normal_prio" in md and "`prio:pid 7`" in md
    html = confusions_md.html(rep, _table)
    assert "weak on exports: prio / leader&#x27;s prio" in html
    strong = copy.deepcopy(TASKS)
    strong["7"].update(normal_prio=30, static_prio=30, tgid=1)
    # and gdb reads an RT policy whose rt_priority gives another prio (the audit
    # compares gdb's fields only: the guest's boosted SCHED_FIFO holder in small)
    strong["7"].update(policy=1, rt_priority=10)
    md = "\n".join(confusions_md.markdown(report_of(strong)))
    assert "weak on exports: prio" not in md and "| prio | normal_prio | 1/2 |" in md
    # the fixture's one zone, one snapshot and one disk with one partition, and no
    # hidden or empty disk, leave these (the guest's state does not); pid 7's policy
    # now differs from its leader's
    assert {(a["kind"], a["confusion"]) for _, a in confusions.weak(report_of(strong))} == {
        ("migratetype", "another zone's count"), ("snapshot", "the other snapshot's sequence"),
        ("blockdev", "only the first element"), ("blockdev", "only the first disk"),
        ("blockdev", "the neighbour's element"),
        ("blockdev", "an invisible disk listed: hidden"),
        ("blockdev", "an invisible disk listed: without capacity")}
    assert confusions_md.markdown({"variants": {}}) == []
    # without a skip bit anywhere, a mask that keeps it cannot be caught
    md = "\n".join(confusions_md.markdown(report_of(strong, TRUTH["pageblocks"])))
    assert "weak on exports: pageblock / whole flags word" in md


def test_policy_and_histogram_confusions():
    tasks = copy.deepcopy(TASKS)
    tasks["7"].update(tgid=1)                   # pid 7 a thread of init's group
    tasks["1"].update(policy=3)                 # whose leader runs SCHED_BATCH
    assert not audit_of(tasks)[("policy", "leader's policy")].weak
    assert audit_of()[("policy", "leader's policy")].weak
    # Unmovable 1 and Movable 2 in DMA32: each count differs from the next type's
    a = audit_of()[("migratetype", "next type's count")]
    assert a.rows == 2 and not a.weak


def test_pageblock_neighbours_thresholds_and_partitions_are_audited():
    got = audit_of()
    # blocks 0x0 (Unmovable), 0x400 and 0x800 (Movable): 0x0 differs from its next
    # block; the last has no next block, which is no evidence either way
    a = got[("pageblock", "next block's type")]
    assert (a.rows, a.telling, a.blind) == (2, 1, ("pageblock:DMA32 pfn 0x400",))
    # thresholds from the sysctls (bg 256, dirty 512 pages) against the dirty limit (510)
    for name in ("thresh for the global_dirty_state limit",
                 "bg_thresh for the global_dirty_state limit",
                 "thresh for the balance_dirty_pages limit",
                 "bg_thresh for the balance_dirty_pages limit",
                 "the other threshold", "dirty limit for the threshold"):
        assert not got[("writeback", name)].weak, name
    # a dirty limit that equals the threshold (no real-time writer lifted it)
    even = cmp(data(extra=["dirtylimit source=tracepoint-arg gds=512 bdp=512"]),
               dict(TRUTH, tasks=TASKS, dirty_limit=512))
    a = {(x.kind, x.confusion): x for x in confusions.audit(even["values"])}
    assert a[("writeback", "thresh for the global_dirty_state limit")].weak
    assert a[("writeback", "thresh for the balance_dirty_pages limit")].weak
    assert not a[("writeback", "bg_thresh for the balance_dirty_pages limit")].weak
    # ram0p1 against ram0: dev_t, size and the whole flag
    b = got[("blockdev", "the disk's for the partition's")]
    assert (b.rows, b.telling) == (2, 2)


def test_a_partition_is_matched_to_its_disk_by_the_kernels_naming_rule():
    from harness.checks.blockdev import disk_of
    from harness.oracles.readings import BlockClassDevice as D
    devs = [D(name=n, type="disk", dev="0:0", sectors=0, partno=0)
            for n in ("ram", "ram1", "sda", "nvme0n1")]
    assert disk_of("sda1", devs).name == "sda"
    assert disk_of("nvme0n1p2", devs).name == "nvme0n1"
    assert disk_of("ram1p1", devs).name == "ram1"
    assert disk_of("ram1", devs).name == "ram"      # the rule alone: the caller asks parts only
    assert disk_of("sdb1", devs) is None and disk_of("nvme0n1x", devs) is None


def test_symbol_addresses_tell_the_next_symbol_and_the_resolver_apart():
    """/proc/kallsyms' next address and kallsyms_lookup_name's own (the guest prints
    both): a module one entry off, or keeping the resolver's address, fails its row."""
    d = data(extra=["kallsyms name=kallsyms_lookup_name addr=0x3000 type=T next=0x3040"])
    d = replace(d, kallsyms=tuple(replace(k, next=0x1040) if k.name == "task_prio" else k
                                  for k in d.kallsyms))
    r = cmp(d, TRUTH)
    got = {(a.kind, a.confusion): a for a in confusions.audit(r["symbols"])}
    assert (got[("symbol", "next symbol")].telling, got[("symbol", "the resolver's address")]
            .telling) == (1, 1)
    assert r["symbols"][0]["info"]["confusions"]["next symbol"] == ["0x1000", "0x1040"]
    # an old guest printed no next address and no resolver: nothing carried, weak
    bare = {(a.kind, a.confusion): a for a in confusions.audit(cmp(data(), TRUTH)["symbols"])}
    assert bare[("symbol", "next symbol")].weak and bare[("symbol", "next symbol")].rows == 0
    # the mix-ups themselves: the module's address one entry off, or the resolver's
    for wrong in ("0x1040", "0x3000"):
        bad = replace(d, symbol=tuple(replace(s, addr=int(wrong, 16)) for s in d.symbol))
        assert ("symbol", "task_prio") in failing(cmp(bad, TRUTH)), wrong


def test_every_kind_is_audited_or_says_why_not():
    rows = [{"kind": k} for k in ("prio", "seed", "bpf", "symbol", "lttng")]
    assert confusions.unaudited(rows) == []
    assert confusions.unaudited(rows + [{"kind": "newkind"}]) == ["newkind"]
    rep = {"variants": {"v": {"values": [{"kind": "seed"}, {"kind": "prio"}], "symbols": []}}}
    assert [k for k, _ in confusions.not_audited(rep)] == ["seed"]
