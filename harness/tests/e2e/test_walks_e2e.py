"""Walks with more than one element (issue 43) on the session's shared default run
(e2e_runs.default_run): each disk's listing row, the walk confusions told apart,
and the real-time PI holders at the prio no other field gives."""

import json

import pytest

pytestmark = pytest.mark.e2e

VARIANTS = ("exports", "kallsyms", "stock", "bpf13")
LISTINGS = {"ram0/walk": ["ram0", "ram0p1", "ram0p2"], "ram1/walk": ["ram1"],
            "ram2/walk": ["ram2", "ram2p1", "ram2p2", "ram2p3"],
            "ram3/walk": ["ram3", "ram3p1", "ram3p2"],
            # the guest test module's disks (harness/guest/assets/disks), which these
            # variants' walk of the whole block class lists
            "ksymhide/walk": ["ksymhide"], "ksymempty/walk": ["ksymempty"]}
INVISIBLE = {"ksymhide": "hidden", "ksymempty": "without capacity"}


def _variant(default_run, name):
    return json.loads((default_run.runs / "latest" / "report.json").read_text())[
        "variants"][name]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_disk_is_one_listing_row_and_every_walk_confusion_is_told(default_run, variant):
    v = _variant(default_run, variant)
    walks = {x["key"]: x for x in v["values"] if x["kind"] == "blockdev"
             and x["key"].endswith("/walk")}
    assert {k: x["sources"]["gdb_class"] for k, x in walks.items()} == LISTINGS
    assert all(x["agree"] for x in walks.values())
    told = {(a["kind"], a["confusion"]): a["telling"] for a in v["confusions"]}
    for name in ("only the first element", "one element too many",
                 "the neighbour's element", "only the first disk"):
        assert told[("blockdev", name)] > 0, name
    assert told[("prio", "prio derived from rt_priority")] > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_class_walk_lists_the_hidden_and_the_empty_disk(default_run, variant):
    v = _variant(default_run, variant)
    rows = {x["key"]: x for x in v["values"] if x["kind"] == "blockdev"}
    for disk, why in INVISIBLE.items():
        for key in (disk, f"{disk}/whole", f"{disk}/walk"):
            assert rows[key]["agree"] and rows[key]["info"]["invisible"] == why, key
            assert "skipped" not in rows[key]["info"], key
        assert rows[f"{disk}/walk"]["sources"]["module"] == [disk]
    # the hidden disk's device has no dev_t: no `dev` in sysfs, bd_dev in gdb
    assert rows["ksymhide"]["sources"]["sysfs"] == "- 16384"
    assert rows["ksymhide"]["sources"]["module"] == rows["ksymhide"]["sources"]["gdb_class"]
    assert rows["ksymempty"]["sources"]["module"].endswith(" 0")
    told = {(a["kind"], a["confusion"]): a["telling"] for a in v["confusions"]}
    assert told[("blockdev", "an invisible disk listed: hidden")] == 1
    assert told[("blockdev", "an invisible disk listed: without capacity")] == 1


@pytest.mark.parametrize("variant", ("exports", "stock"))
def test_the_lttng_statedump_walks_an_interrupt_of_two_handlers(default_run, variant):
    v = _variant(default_run, variant)
    rows = {x["key"]: x for x in v["values"] if x["kind"] == "lttng"}
    two = [x for k, x in rows.items() if k.startswith("statedump_irq/") and
           "ksymlab-shirq-a, ksymlab-shirq-b" in (x["sources"].get("gdb irq descriptors") or "")]
    assert len(two) == 1 and two[0]["agree"]
    told = {a["confusion"]: a["telling"] for a in v["confusions"] if a["kind"] == "lttng"}
    assert told["irq walk: only the first element"] > 0
    assert told["setpoint with the limit and thresh swapped"] > 0
    assert rows["writeback/bdp-setpoint-at-stop"]["agree"]


@pytest.mark.parametrize("variant", ("exports", "stock"))
def test_the_lttng_statedump_skips_the_hidden_and_the_empty_disk(default_run, variant):
    v = _variant(default_run, variant)
    rows = {x["key"]: x for x in v["values"] if x["kind"] == "lttng"}
    for disk, why in INVISIBLE.items():
        for key in (f"blockdev/{disk}", f"blockdev/{disk}/walk"):
            assert rows[key]["agree"] and rows[key]["info"]["invisible"] == why, key
            assert rows[key]["info"]["skipped"], key
        walk = rows[f"blockdev/{disk}/walk"]["sources"]
        assert walk["lttng statedump"] == [] and walk["/proc/partitions"] == []
        assert walk["gdb_class"] == walk["sysfs"] == [disk]
    told = {a["confusion"]: a["telling"] for a in v["confusions"] if a["kind"] == "lttng"}
    assert told["block walk: an invisible disk listed: hidden"] == 1
    assert told["block walk: an invisible disk listed: without capacity"] == 1


@pytest.mark.parametrize("variant", ("exports", "stock"))
def test_the_lttng_guest_records_each_pi_holder_at_its_boost(default_run, variant):
    """lttng-init runs the scenario's three PI chains and wakes each holder alone
    (SIGUSR1): one switch each at the boosted prio, where normal_prio and the prio
    derived from rt_priority differ (the mutant lttng-prio-context-normal-prio)."""
    v = _variant(default_run, variant)
    rows = {x["key"]: x for x in v["values"] if x["kind"] == "lttng"}
    pi = {k: x["sources"]["gdb"] for k, x in rows.items() if k.startswith("prio/pi-")}
    assert pi == {"prio/pi-other19": -41, "prio/pi-fifo10": -41, "prio/pi-rr20": -101}
    assert all(rows[k]["agree"] and rows[k]["info"]["switches"] >= 1 for k in pi)
    told = {a["confusion"]: a["telling"] for a in v["confusions"] if a["kind"] == "lttng"}
    assert told["normal_prio"] == 3 and told["prio derived from rt_priority"] == 2
