"""Walks with more than one element in LTTng's statedumps (issue 43): an interrupt
with two handlers and a disk with two partitions make the walk confusions
strong; a walk that stops after the first handler, or visits a disk once more,
fails a row."""

import copy

from harness.checks import confusions
from harness.tests.lttng.test_lttng_checks import GUEST_TEXT, SUMMARY, TRUTH, failing, rows

P2 = {"name": "ram0p2", "type": "part", "dev": "259:1", "sectors": 8192, "partno": 2}


def more_disks():
    """ram0 with a second partition, in the trace, sysfs, /proc/partitions and gdb."""
    summary, truth = copy.deepcopy(SUMMARY), copy.deepcopy(TRUTH)
    summary["block"].append({"name": "ram0p2", "dev": "259:1"})
    truth["block_class"].append(dict(P2))
    text = GUEST_TEXT.replace("KSYMLAB-LTTNG-END", "sysblock name=ram0p2 dev=259:1\n"
                              "partitions name=ram0p2 major=259 minor=1\nKSYMLAB-LTTNG-END")
    return summary, truth, text


def audit(got):
    found = [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in got.values()]
    return {a.confusion: a for a in confusions.audit(found)}


def test_two_handlers_and_two_partitions_make_the_walk_confusions_strong():
    summary, truth, text = more_disks()
    got = rows(summary, text=text, truth=truth)
    assert failing(got) == []
    a = audit(got)
    for name in ("irq walk: only the first element", "irq walk: one element too many",
                 "irq walk: the neighbour's element", "block walk: only the first element",
                 "block walk: one element too many", "block walk: the neighbour's element"):
        assert not a[name].weak, name
    # irq 4 (ttyS0, ttyS2) alone tells the first handler from both
    assert a["irq walk: only the first element"].telling == 1
    assert got["statedump_irq/4"].info["confusions"]["irq walk: only the first element"] == [
        "IO-APIC: ttyS0, ttyS2", "IO-APIC: ttyS0"]
    assert got["blockdev/ram0/walk"].sources["gdb_class"] == ["ram0", "ram0p1", "ram0p2"]
    # one disk: a disk walk that stops after it cannot be told
    assert a["block walk: only the first disk"].weak


def test_one_handler_per_interrupt_cannot_tell_a_walk_that_stops_after_the_first():
    summary, truth = copy.deepcopy(SUMMARY), copy.deepcopy(TRUTH)
    for s in (summary["irq"], truth["irq_actions"]):
        s.pop(2)                                            # irq 4 keeps ttyS0 only
    text = GUEST_TEXT.replace("ttyS0, ttyS2", "ttyS0")
    a = audit(rows(summary, text=text, truth=truth))
    assert a["irq walk: only the first element"].weak
    assert a["irq walk: the neighbour's element"].rows == 0
    assert a["block walk: only the first element"].weak     # ram0 of one partition


def test_a_walk_that_stops_after_the_first_handler_or_lists_a_disk_twice_fails():
    summary, truth, text = more_disks()
    first = copy.deepcopy(summary)
    first["irq"].pop(2)                                     # irq 4 without ttyS2
    assert failing(rows(first, text=text, truth=truth)) == ["statedump_irq/4"]
    twice = copy.deepcopy(summary)
    twice["block"].append({"name": "ram0", "dev": "1:0"})
    assert failing(rows(twice, text=text, truth=truth)) == ["blockdev/ram0/walk"]
    short = copy.deepcopy(summary)
    short["block"].pop()                                    # ram0p2 missed
    assert {"blockdev/ram0/walk", "blockdev/ram0p2"} <= set(
        failing(rows(short, text=text, truth=truth)))


HIDE = {"name": "ksymhide", "type": "disk", "dev": "0:0", "bd_dev": "259:2", "sectors": 16384,
        "partno": 0, "hidden": 1}
EMPTY = {"name": "ksymempty", "type": "disk", "dev": "259:3", "bd_dev": "259:3", "sectors": 0,
         "partno": 0, "hidden": 0}
INVISIBLE_SYSFS = ("sysblock name=ksymhide dev=- sectors=16384 hidden=1\n"
                   "sysblock name=ksymempty dev=259:3 sectors=0 hidden=0\n")


def invisible_disks(sysfs=INVISIBLE_SYSFS, hide=HIDE):
    """The guest test module's hidden and empty disks in sysfs and gdb's walk, not in
    /proc/partitions: LTTng's statedump must skip both (issue 43)."""
    truth = copy.deepcopy(TRUTH)
    truth["block_class"] += [dict(hide), dict(EMPTY)]
    return truth, GUEST_TEXT.replace("KSYMLAB-LTTNG-END", sysfs + "KSYMLAB-LTTNG-END")


def test_the_statedump_skips_a_hidden_and_an_empty_disk():
    truth, text = invisible_disks()
    got = rows(text=text, truth=truth)
    assert failing(got) == []
    for key in ("blockdev/ksymhide", "blockdev/ksymhide/walk", "blockdev/ksymempty/walk"):
        assert got[key].info["skipped"].startswith("the statedump skips"), key
    assert got["blockdev/ksymhide/walk"].info["invisible"] == "hidden"
    a = audit(got)
    for name in ("block walk: an invisible disk listed: hidden",
                 "block walk: an invisible disk listed: without capacity"):
        assert a[name].rows == 1 and not a[name].weak, name


def test_a_statedump_that_lists_an_invisible_disk_fails():
    truth, text = invisible_disks()
    # the stock port without `get_capacity(disk) == 0 ||` (mutant lttng-statedump-lists-empty-disk)
    empty = copy.deepcopy(SUMMARY)
    empty["block"].append({"name": "ksymempty", "dev": "259:3"})
    assert failing(rows(empty, text=text, truth=truth)) == ["blockdev/ksymempty",
                                                            "blockdev/ksymempty/walk"]
    hidden = copy.deepcopy(SUMMARY)
    hidden["block"].append({"name": "ksymhide", "dev": "259:2"})
    assert failing(rows(hidden, text=text, truth=truth)) == ["blockdev/ksymhide",
                                                             "blockdev/ksymhide/walk"]


def test_a_disk_is_invisible_only_by_both_oracles():
    # gdb reads the hidden bit, sysfs says visible: the statedump must list it
    truth, text = invisible_disks(INVISIBLE_SYSFS.replace("hidden=1", "hidden=0"))
    assert "blockdev/ksymhide/walk" in failing(rows(text=text, truth=truth))
    # sysfs says hidden, gdb does not
    truth, text = invisible_disks(hide=dict(HIDE, hidden=0))
    got = rows(text=text, truth=truth)
    assert "blockdev/ksymhide/walk" in failing(got)
    assert "skipped" not in got["blockdev/ksymhide/walk"].info
