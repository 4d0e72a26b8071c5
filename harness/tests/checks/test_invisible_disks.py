"""Invisible disks (issue 43, harness/guest/assets/disks): a hidden disk and a disk
without capacity. A walk of the whole block class (exports, kallsyms) lists both,
v2's blk_walk_visible_disks() neither; a disk is invisible only when sysfs and gdb
both say so. A hidden disk has no dev_t on its device: sysfs has no `dev`, gdb reads
devt 0:0 and bd_dev (what the module reports) 259:0."""

from types import SimpleNamespace

from harness.checks import confusions, crossvariant, walks
from harness.checks.drgn_columns import _blockdev
from harness.model.results import Check
from harness.tests.checks.test_compare import TRUTH, cmp, data, failing

V2, EXPORTS = SimpleNamespace(module_mode="v2"), SimpleNamespace(module_mode="exports")
HIDE = {"name": "ksymhide", "type": "disk", "dev": "0:0", "bd_dev": "259:0", "sectors": 16384,
        "partno": 0, "hidden": 1}
EMPTY = {"name": "ksymempty", "type": "disk", "dev": "259:1", "bd_dev": "259:1", "sectors": 0,
         "partno": 0, "hidden": 0}
SYSFS = ["sysblock name=ksymhide dev=- sectors=16384 whole=1 hidden=1",
         "sysblock name=ksymempty dev=259:1 sectors=0 whole=1 hidden=0"]
LISTED = ["bdev name=ksymhide dev=259:0 sectors=16384 whole=1",
          "bdev name=ksymempty dev=259:1 sectors=0 whole=1"]
ROWS = [(d, suffix) for d in ("ksymempty", "ksymhide")
        for suffix in ("", " is a whole disk", "/walk")]


def truth(*disks):
    return dict(TRUTH, block_class=TRUTH["block_class"] + [dict(d) for d in disks])


def audit(r):
    return {a.confusion: a for a in confusions.audit(r["values"], ["blockdev"])}


def test_the_class_walk_lists_both_and_agrees_with_sysfs_and_gdb():
    r = cmp(data(extra=SYSFS + LISTED), truth(HIDE, EMPTY), variant=EXPORTS)
    assert failing(r) == []
    (row,) = [x for x in r["values"] if x["id"] == "blockdev:ksymhide"]
    assert row["sources"]["sysfs"] == "- 16384" and row["sources"]["gdb_class"] == "259:0 16384"
    assert row["info"]["invisible"] == "hidden" and "skipped" not in row["info"]
    got = audit(r)
    for name in (walks.INVISIBLE_HIDDEN, walks.INVISIBLE_EMPTY):
        assert got[name].rows == 1 and not got[name].weak
    # a class walk that skips them (v2's filter in the wrong mode) fails their rows
    assert sorted(failing(cmp(data(extra=SYSFS), truth(HIDE, EMPTY), variant=EXPORTS))) == [
        ("blockdev", d + s) for d, s in ROWS]


def test_v2_skips_both_and_a_v2_walk_that_lists_one_fails():
    r = cmp(data(extra=SYSFS), truth(HIDE, EMPTY), variant=V2)
    assert failing(r) == []
    (walk,) = [x for x in r["values"] if x["id"] == "blockdev:ksymhide/walk"]
    assert walk["info"]["skipped"].startswith("not visited")
    assert walk["info"]["confusions"][walks.INVISIBLE_HIDDEN] == [[], ["ksymhide"]]
    assert not audit(r)[walks.INVISIBLE_EMPTY].weak
    # the v2 walk without its hidden test (mutant v2-blk-walk-lists-hidden)
    hidden = cmp(data(extra=SYSFS + LISTED[:1]), truth(HIDE, EMPTY), variant=V2)
    assert sorted(failing(hidden)) == [("blockdev", "ksymhide"),
                                       ("blockdev", "ksymhide is a whole disk"),
                                       ("blockdev", "ksymhide/walk")]
    empty = cmp(data(extra=SYSFS + LISTED[1:]), truth(HIDE, EMPTY), variant=V2)
    assert ("blockdev", "ksymempty/walk") in failing(empty)


def test_one_oracle_alone_does_not_make_a_disk_invisible():
    # sysfs says hidden, gdb does not: v2 must list it, and not listing it fails
    r = cmp(data(extra=SYSFS), truth(dict(HIDE, hidden=0), EMPTY), variant=V2)
    assert ("blockdev", "ksymhide/walk") in failing(r)
    (walk,) = [x for x in r["values"] if x["id"] == "blockdev:ksymhide/walk"]
    assert "skipped" not in walk["info"] and "invisible" not in walk["info"]
    # gdb says hidden, sysfs does not
    visible = [SYSFS[0].replace("hidden=1", "hidden=0"), SYSFS[1]]
    assert ("blockdev", "ksymhide/walk") in failing(cmp(data(extra=visible), truth(HIDE, EMPTY),
                                                         variant=V2))
    # gdb reads a capacity sysfs does not
    assert ("blockdev", "ksymempty/walk") in failing(
        cmp(data(extra=SYSFS), truth(HIDE, dict(EMPTY, sectors=8)), variant=V2))


def test_sysfs_is_held_to_gdbs_devt():
    # sysfs showing a dev for the hidden disk, whose device gdb reads without one
    shown = [SYSFS[0].replace("dev=-", "dev=259:0"), SYSFS[1]]
    assert failing(cmp(data(extra=shown + LISTED), truth(HIDE, EMPTY), variant=EXPORTS)) == [
        ("blockdev", "ksymhide")]
    # a module reporting the device's devt (0:0) for the hidden disk, not bd_dev
    zero = [LISTED[0].replace("259:0", "0:0"), LISTED[1]]
    assert ("blockdev", "ksymhide") in failing(cmp(data(extra=SYSFS + zero),
                                                   truth(HIDE, EMPTY), variant=EXPORTS))


def test_across_variants_and_drgn_leave_the_skip_alone():
    def result(mode):
        found = cmp(data(extra=SYSFS + ([] if mode is V2 else LISTED)), truth(HIDE, EMPTY),
                    variant=mode)["values"]
        rows = [Check(v["kind"], v["key"], v["sources"], v["agree"], v["info"])
                for v in found if v["kind"] == "blockdev"]
        return SimpleNamespace(of_kind=lambda kind: rows)
    assert crossvariant.blockdevs(result(V2)) == crossvariant.blockdevs(result(EXPORTS))
    # drgn shows the device; the module's results in the vmcore must lack it
    row = Check("blockdev", "ksymhide/walk", {"module": None}, True,
                {"skipped": "not visited"})
    assert _blockdev(row, {}, {}, {}, (["ksymhide"], [])).agrees
    assert not _blockdev(row, {}, {}, {}, (["ksymhide"], ["ksymhide"])).agrees
