"""The confusion audit (issue 25): could a row have caught a plausible mix-up?

A check only catches a sampler that reads the wrong field when the guest's
state makes that field differ from the right one. Each row that can tell so
carries, in info["confusions"], {confusion: [right, confused]}: the right value
(from an independent oracle: gdb's reads, the program's own walk) and the value
the confused field holds in the same state (gdb reads it beside the right one).

The audit is per value kind: a sampler takes one code path for every row of
its kind, so one row where the right value differs from the confused one is
enough to catch that mix-up. A (kind, confusion) no row of the run tells apart
is weak: the report names it and the rows that could not, and a weak one on
the default scenario fails make check (harness/tests/e2e/test_e2e.py). A kind's
confusion that no row carried at all is "not read": the state gives no
evidence either way, which is weak too.
"""

from dataclasses import dataclass
from typing import Tuple

# The confusions each audited kind is read for: from the kernel's own
# structures and the mutation catalogue (mutants/catalogue.toml).
CONFUSIONS = {
    "prio": {
        "normal_prio": "task->normal_prio: prio without a priority-inheritance boost",
        "static_prio": "task->static_prio: the nice level's prio, blind to the RT policies",
        "rt_priority": "task->rt_priority: the RT priority as the user set it",
        "prio derived from rt_priority": "MAX_RT_PRIO - 1 - task->rt_priority for a "
                                         "SCHED_FIFO or SCHED_RR task: right unless a "
                                         "higher waiter boosts it",
        "leader's prio": "the prio of the thread group leader (task->group_leader)",
        "tgid for pid": "task_tgid_nr() for task_pid_nr(): the row's task named by its group",
    },
    "policy": {
        "leader's policy": "the policy of the thread group leader",
    },
    "migratetype": {
        "next type's count": "the count of the next migratetype: a histogram off by one",
        "another zone's count": "the same migratetype counted in another zone",
    },
    "pageblock": {
        "next block's type": "the migratetype of the next pageblock: a pfn off by one block",
        "whole flags word": "the pageblock's flag bits unmasked (the skip bit kept)",
    },
    "blockdev": {
        "the disk's for the partition's": "a partition's dev_t and size (or whole flag) "
                                          "taken from its disk (bdev_whole())",
        # walks with more than one element (issue 43, checks/walks.py): on the
        # listing row of each disk (<disk>/walk) and each partition's row
        "only the first element": "a disk's partition walk that stops after its first "
                                  "partition",
        "one element too many": "a disk's partition walk that visits one element more: "
                                "the whole disk again (part_tbl from index 0)",
        "the neighbour's element": "a partition's dev_t and size taken from the "
                                   "neighbouring partition of its disk",
        "only the first disk": "a walk of the block class that stops after its first disk",
        # the guest test module's disks (harness/guest/assets/disks), on their <disk>/walk
        # rows: in v2 (blk_walk_visible_disks()) listing one is the mistake, in the
        # modes that walk the whole class skipping one is
        "an invisible disk listed: hidden": "a hidden disk (GENHD_FL_HIDDEN) listed by a "
                                            "walk of the visible disks (or skipped by a "
                                            "walk of the whole block class)",
        "an invisible disk listed: without capacity": "a disk without capacity listed by a "
                                                      "walk of the visible disks (or skipped "
                                                      "by a walk of the whole block class)",
    },
    # per event where one kind reads in several probes: a mix-up in one is not
    # told apart by the other's rows
    "writeback": {
        "thresh for the global_dirty_state limit": "the dirty threshold for the limit",
        "bg_thresh for the global_dirty_state limit": "the background threshold for the limit",
        "thresh for the balance_dirty_pages limit": "the dirty threshold for the limit",
        "bg_thresh for the balance_dirty_pages limit": "the background threshold for the limit",
        "the other threshold": "dirty and background thresholds swapped",
        "dirty limit for the threshold": "global_wb_domain.dirty_limit for a threshold",
    },
    "ustack": {
        "tgid for pid": "the thread group id for the id of the thread that made the call",
        "one frame less": "the captured stack without its outermost frame",
        "next frame": "the return address one frame further out",
        "previous frame": "the return address one frame further in",
    },
    "lttng": {
        "static_prio": "prio context: task->static_prio, blind to the RT policies",
        "rt_priority": "prio context: task->rt_priority",
        "normal_prio": "prio context: task->normal_prio, without a PI holder's boost",
        "prio derived from rt_priority": "prio context: MAX_RT_PRIO - 1 - rt_priority for "
                                         "an RT task, blind to a PI boost",
        "thresh for the global_dirty_state limit": "the event's threshold for the limit",
        "thresh for the balance_dirty_pages limit": "the threshold in force at the event "
                                                    "for the limit",
        "setpoint with the limit and thresh swapped": "balance_dirty_pages' setpoint: "
                                                      "(thresh + (limit + bg_thresh) / 2) / 2",
        "setpoint without halving thresh + bg_thresh (LTTng 2.16.0)":
            "balance_dirty_pages' setpoint as LTTng 2.16.0 records it since 6.14.2: "
            "(limit + thresh + bg_thresh) / 2",
        "tgid for pid": "callstack_user: the leader's stack for the calling thread's",
        "one frame less": "callstack_user without its outermost frame",
        "next frame": "callstack_user: the return address one frame further out",
        "previous frame": "callstack_user: the return address one frame further in",
        "next_prio for the prio context": "prio context: the prio of the task switched to "
                                          "(another task's) for the current task's",
        "the disk's for the partition's": "statedump: a partition's dev_t taken from its disk",
        "one migratetype for every allocation": "mm_page_alloc: one constant migratetype, "
                                                "not the allocation's gfp bits",
        "the neighbouring interrupt's": "interrupt statedump: the chip and actions of the "
                                        "next (or previous) interrupt number",
        "irq walk: only the first element": "interrupt statedump: a walk of each interrupt's "
                                            "actions that stops after the first handler",
        "irq walk: one element too many": "interrupt statedump: the actions and one more "
                                          "(the next interrupt's first)",
        "irq walk: the neighbour's element": "interrupt statedump: each action named by its "
                                             "neighbour on the same line",
        "block walk: only the first element": "block statedump: a disk's partition walk "
                                              "that stops after its first partition",
        "block walk: one element too many": "block statedump: a disk's partition walk that "
                                            "visits the whole disk again",
        "block walk: the neighbour's element": "block statedump: a partition's dev_t taken "
                                               "from its neighbouring partition",
        "block walk: only the first disk": "block statedump: a disk walk that stops after "
                                           "its first disk",
        "block walk: an invisible disk listed: hidden": "block statedump: a hidden disk "
                                                        "(GENHD_FL_HIDDEN) listed",
        "block walk: an invisible disk listed: without capacity": "block statedump: a disk "
                                                                  "without capacity listed",
        "a user address": "callstack_kernel: the callstack-user value at the same depth for "
                          "the kernel frame",
        "one frame more or less": "callstack_kernel shifted by a frame: the function one "
                                  "frame further in for the one a frame's call enters",
        "the neighbouring function's": "userspace probe: the address of level1() for "
                                       "level2()'s",
        "the trap's ip (one byte on)": "userspace probe: the ip after the breakpoint, not "
                                       "rewound to the probed address",
    },
    "symbol": {
        "next symbol": "the address of the next symbol in /proc/kallsyms' address order "
                       "(a lookup one entry off)",
        "the resolver's address": "kallsyms_lookup_name's own address (what the kprobe "
                                  "trick finds) for the looked-up symbol's",
    },
    "snapshot": {
        "the other snapshot's sequence": "snapshot n's rows read at another snapshot",
    },
}

# Kinds whose rows are no sampled guest value, so no field of the guest's state
# can stand in for theirs; the report lists them with this reason.
NOT_AUDITED = {
    "seed": "the series' claims about the built tree (patch text, Module.symvers, "
            "__ksymtab), read by three independent readers; no guest state",
    "sampler": "whether each sampler is available: the variant's design",
    "oracles": "counts of the independent oracles behind other kinds' rows",
    "symcheck": "symcheck's findings on the module and its tree, read on the host",
    "vmcore": "the dump's own structure (notes, sections), not a sampled value",
    "lttng-coverage": "which resolution each LTTng name takes: the build, read on the host",
    "bpf": "whether the verifier takes the program, and argument 1 against "
           "&global_wb_domain: no other argument of the event is a wb_domain",
}


def pair(right, confused):
    """One row's evidence for a confusion: JSON-ready, compared as given."""
    return [right, confused]


@dataclass(frozen=True)
class Audit:
    """One (kind, confusion) over a variant's rows."""
    kind: str
    confusion: str
    what: str
    rows: int                   # rows that carried it
    telling: int                # rows whose right value differs from the confused one
    blind: Tuple[str, ...]      # ids of the rows that could not tell (the first few)

    @property
    def weak(self):
        return self.telling == 0

    def to_json(self):
        return {"kind": self.kind, "confusion": self.confusion, "what": self.what,
                "rows": self.rows, "telling": self.telling, "weak": self.weak,
                "blind": list(self.blind)}


BLIND_SHOWN = 8


def _evidence(row, name):
    """The row's [right, confused] for confusion `name`; None when it has none, or when
    the confused value is None (no next block, no leader): that is no evidence."""
    e = ((row.get("info") or {}).get("confusions") or {}).get(name)
    return e if e is not None and e[1] is not None else None


def audit(rows, kinds=None):
    """The audit of one variant's rows (report.json's value dicts, `id`, `kind` and
    `info` read), for every kind of CONFUSIONS that has a row in `rows` (or for
    `kinds`): a list of Audit, in CONFUSIONS order."""
    present = {r["kind"] for r in rows}
    out = []
    for kind, table in CONFUSIONS.items():
        if kinds is None and kind not in present or kinds is not None and kind not in kinds:
            continue
        for name, what in table.items():
            carried = [(r["id"], e) for r in rows if r["kind"] == kind
                       for e in [_evidence(r, name)] if e is not None]
            blind = tuple(i for i, (right, confused) in carried if right == confused)
            out.append(Audit(kind, name, what, len(carried), len(carried) - len(blind),
                             blind[:BLIND_SHOWN]))
    return out


def unaudited(rows):
    """Kinds of `rows` that neither CONFUSIONS nor NOT_AUDITED names: a new kind's
    checks would go unaudited without a word (test_confusions_e2e fails on any)."""
    return sorted({r["kind"] for r in rows} - set(CONFUSIONS) - set(NOT_AUDITED))


def not_audited(report):
    """[(kind, reason)] of the NOT_AUDITED kinds that have a row in `report`."""
    present = {r["kind"] for v in report.get("variants", {}).values()
               for r in v.get("values", []) + v.get("symbols", [])}
    return [(k, why) for k, why in NOT_AUDITED.items() if k in present]


def weak(report):
    """[(variant, Audit json)] of every weak (kind, confusion) of a report."""
    return [(name, a) for name, v in report.get("variants", {}).items()
            for a in v.get("confusions", ()) if a["weak"]]
