"""Walks with more than one element (issue 43): the probe module's block device
walk as one listing per disk, and the audit's walk confusions (only the first
element, one element too many, the neighbour's element, only the first disk),
strong in a state with two disks and a disk of two partitions, weak without."""

import copy

from harness.checks import confusions, walks
from harness.tests.checks.test_compare import TRUTH, cmp, data, failing

# a second partition on ram0 and a second disk, as module, sysfs and gdb see them
MORE = ["bdev name=ram0p2 dev=1:2 sectors=24576 whole=0",
        "sysblock name=ram0p2 dev=1:2 sectors=24576 whole=0",
        "bdev name=ram1 dev=1:4 sectors=32768 whole=1",
        "sysblock name=ram1 dev=1:4 sectors=32768 whole=1"]
MORE_CLASS = [{"name": "ram0p2", "type": "part", "dev": "1:2", "sectors": 24576, "partno": 2},
              {"name": "ram1", "type": "disk", "dev": "1:4", "sectors": 32768, "partno": 0}]
WALKS = (walks.FIRST, walks.ONE_MORE, walks.NEIGHBOUR, walks.FIRST_DISK)


def truth(extra_class=MORE_CLASS):
    t = copy.deepcopy(TRUTH)
    t["block_class"] = t["block_class"] + copy.deepcopy(extra_class)
    return t


def audit(r):
    return {a.confusion: a for a in confusions.audit(r["values"], ["blockdev"])}


def test_a_listing_row_per_disk_agrees_and_makes_every_walk_confusion_strong():
    r = cmp(data(extra=MORE), truth())
    assert failing(r) == []
    (row,) = [v for v in r["values"] if v["id"] == "blockdev:ram0/walk"]
    assert row["sources"]["gdb_class"] == ["ram0", "ram0p1", "ram0p2"]
    got = audit(r)
    for name in WALKS:
        assert not got[name].weak, name
    assert row["info"]["confusions"][walks.FIRST] == [["ram0", "ram0p1", "ram0p2"],
                                                      ["ram0", "ram0p1"]]
    (p1,) = [v for v in r["values"] if v["id"] == "blockdev:ram0p1"]
    assert p1["info"]["confusions"][walks.NEIGHBOUR] == ["1:1 8192", "1:2 24576"]


def test_one_disk_of_one_partition_cannot_tell_the_walk_confusions():
    got = audit(cmp(data(), TRUTH))
    assert got[walks.FIRST].weak and got[walks.FIRST_DISK].weak
    assert got[walks.NEIGHBOUR].weak and got[walks.NEIGHBOUR].rows == 0
    # the whole disk once more is always a longer listing
    assert not got[walks.ONE_MORE].weak


def test_each_wrong_walk_fails_a_listing_row():
    # the whole disk listed twice (part_tbl from index 0): the by-name rows merge it
    r = cmp(data(extra=MORE + ["bdev name=ram0 dev=1:0 sectors=32768 whole=1"]), truth())
    assert failing(r) == [("blockdev", "ram0/walk")]
    # a partition walk that stops after the first partition
    short = [line for line in MORE if not line.startswith("bdev name=ram0p2")]
    assert ("blockdev", "ram0/walk") in failing(cmp(data(extra=short), truth()))
    # a disk walk that stops after the first disk
    first = [line for line in MORE if not line.startswith("bdev name=ram1")]
    assert ("blockdev", "ram1/walk") in failing(cmp(data(extra=first), truth()))


def test_the_walk_helpers():
    assert walks.first_and_one_more(["a", "b"], "c") == {
        walks.FIRST: [["a", "b"], ["a"]], walks.ONE_MORE: [["a", "b"], ["a", "b", "c"]]}
    assert walks.ONE_MORE not in walks.first_and_one_more(["a"], None)
    assert walks.walk_neighbours(["a"]) == {}
    assert walks.walk_neighbours(["a", "b", "c"], "x: ") == {
        "x: " + walks.NEIGHBOUR: [["a", "b", "c"], ["b", "c", "b"]]}
    sib = [("p1", 1), ("p2", 2), ("p3", 3)]
    assert [walks.neighbour_of(n, sib) for n in ("p1", "p2", "p3", "p9")] == [2, 3, 2, None]
    assert walks.neighbour_of("p1", sib[:1]) is None
