"""drgn's columns: the vmcore oracle (harness/oracles/drgn.py) joins the checks.

checks/variant.py builds every row from the module, gdb and the guest's own
files; merge(), called by harness/run.py, then adds two sources to the rows
drgn can speak to and ANDs them into the verdict:
  drgn         the kernel state drgn read from the vmcore (an oracle,
               independent of the module: another tool reading memory)
  drgn_memory  the module's own ksymlab_results as drgn read them (the
               module's claim, read a second time, by a second tool)
and adds the rows only drgn gives: tasks and pageblocks drgn saw that no
row covers, and the vmcore's own checks (VMCOREINFO present, fw_cfg in the
guest, module sections, pageblock order).

The vmcore is written at the same instant gdb reads (gdb holds the guest at
the snapshot while QEMU dumps it), so drgn must agree with gdb exactly.
"""

import re
from dataclasses import replace
from types import SimpleNamespace

from . import prio
from .blockdev import disk_listing
from ..model.enums import Source
from ..model.results import Check, hex_text
from ..guest.dataport import RESULTS_MAGIC
from ..oracles.drgn import VMCOREINFO_FROM_GUEST

DRGN = Source.DRGN
DRGN_MEMORY = Source.DRGN_MEMORY
MODULE = Source.MODULE


def _with(c, extra, agree):
    """`c` with more sources; its verdict stays unchecked (None) when it was."""
    return replace(c, sources={**c.sources, **extra},
                   agreement=None if c.unchecked else c.agrees and bool(agree))


def _symbol(c, drgn):
    got = drgn.symbols.get(c.key)
    want = c.get(MODULE)
    return _with(c, {DRGN: hex_text(got)}, got is not None and hex_text(got) == want)


def _snapshot(c, drgn):
    r = drgn.results
    if c.key == "results-address":
        return _with(c, {DRGN: hex_text(r.addr)}, hex_text(r.addr) == c.get(MODULE))
    if c.key == "magic":
        return _with(c, {DRGN_MEMORY: f"{r.magic:#x}"}, r.magic == RESULTS_MAGIC)
    if c.key == "sequence":
        return _with(c, {DRGN_MEMORY: r.snapshot_seq}, r.snapshot_seq == c.get(MODULE))
    return c


def _prio(c, drgn):
    pid = c.info.get("pid")
    task = drgn.tasks.get(str(pid))
    mine = {s.pid: s.prio for s in drgn.results.prio}
    got = task.prio if task else None
    return _with(c, {DRGN: got, DRGN_MEMORY: mine.get(pid)},
                 got is not None and got == c.get(MODULE) == mine.get(pid))


def _policy(c, drgn):
    """A policy row (harness/checks/prio.py): one scenario task's, or every task's."""
    mine = {s.pid: s.policy for s in drgn.results.prio}
    tasks = {int(p): t.policy for p, t in drgn.tasks.items()}
    if c.key == "every task":
        both = sorted(set(mine) & set(tasks))
        return _with(c, {DRGN: prio.policy_histogram(tasks[p] for p in both),
                         DRGN_MEMORY: prio.policy_histogram(mine[p] for p in both)},
                     bool(both) and all(mine[p] == tasks[p] for p in both))
    pid = c.info.get("pid")
    got, m = tasks.get(pid), mine.get(pid)
    name = prio.policy_name
    return _with(c, {DRGN: name(got), DRGN_MEMORY: name(m)},
                 got is not None and name(got) == name(m) == c.get(MODULE))


def _by_block(rows):
    return {(p.node, p.pfn): p for p in rows}


def _pageblock(c, drgn, blocks, mine):
    key = (c.info.get("node"), c.info.get("pfn"))
    got = blocks.get(key)
    m = mine.get(key)
    extra = {DRGN: got.mt if got else None, DRGN_MEMORY: m.mt if m else None}
    return _with(c, extra, got is not None and m is not None
                 and got.mt == m.mt == c.get(MODULE))


def _migratetype(c, hist):
    got = hist.get((c.info.get("zone"), c.info.get("mt")), 0)
    return _with(c, {DRGN: got}, got == c.get(MODULE))


def _walk_listing(names, disk):
    """`disk` and its partitions among `names`, sorted, duplicates kept; None if none."""
    return disk_listing(names, disk, [SimpleNamespace(name=disk, type="disk")])


def _blockdev(c, disks, mine, whole, walks=((), ())):
    # a row the v2 walk skips (blockdev.SKIPPED: an invisible disk): drgn shows the
    # device; the module's results in the vmcore must lack it, as its text does
    skipped = "skipped" in c.info
    if c.key.endswith("/walk"):
        # blockdev.compare_walks' row: the names listed for one disk, duplicates kept
        disk = c.key[:-len("/walk")]
        got, m = (_walk_listing(names, disk) for names in walks)
        return _with(c, {DRGN: got, DRGN_MEMORY: m}, got is not None and m is None if skipped
                     else got is not None and got == m == c.get(MODULE))
    if c.key.endswith("/whole"):
        # blockdev.compare_blockdev_whole's row: module, sysfs, gdb's bd_partno;
        # drgn: is it its disk's part0
        got = whole.get(c.key[:-len("/whole")])
        return _with(c, {DRGN: got}, got is not None and (skipped or got == c.get(MODULE)))
    got, m = disks.get(c.key), mine.get(c.key)
    return _with(c, {DRGN: got, DRGN_MEMORY: m}, got is not None and m is None if skipped
                 else got is not None and got == m == c.get(MODULE))


def _writeback(c, drgn):
    if not c.key.startswith("dirty_limit/"):
        return c
    return _with(c, {DRGN: drgn.dirty_limit}, drgn.dirty_limit == c.get(MODULE))


def _bpf(c, drgn):
    if not c.key.endswith("/arg1-domain"):
        return c
    dom = hex_text(drgn.global_wb_domain)
    return _with(c, {DRGN: dom}, dom == c.get(MODULE))


def _ustack(c, drgn):
    if c.key != "frames":
        return c
    theirs = " ".join(hex_text(f) for f in drgn.results.frames)
    return _with(c, {DRGN_MEMORY: theirs}, theirs == c.get(MODULE))


def _vmcore_rows(data, drgn):
    """The oracle's own footing: what it read from, checked against the guest."""
    rows = []
    vi = drgn.vmcoreinfo
    from_guest = vi.source in VMCOREINFO_FROM_GUEST
    rows.append(Check("vmcore", "vmcoreinfo",
                      {DRGN: vi.source, Source.EXPECTED: " or ".join(VMCOREINFO_FROM_GUEST)},
                      from_guest,
                      info={"osrelease": vi.osrelease, "kerneloffset": vi.kerneloffset},
                      reason=None if from_guest else
                      "the guest did not hand QEMU its VMCOREINFO note (fw_cfg, crash_core)",
                      label="VMCOREINFO note in the vmcore"))
    for f in data.fwcfg:
        rows.append(Check("vmcore", "fw_cfg",
                          {Source.GUEST: f"sysfs={f.sysfs} vmcoreinfo={f.vmcoreinfo}",
                           Source.EXPECTED: "sysfs=1 vmcoreinfo=1"},
                          f.sysfs == 1 and f.vmcoreinfo == 1,
                          label="guest sees /sys/firmware/qemu_fw_cfg and etc/vmcoreinfo"))
    claimed = {s.name: s.addr for s in data.section}
    got = drgn.module_sections         # {section name: address}
    rows.append(Check("vmcore", "module-sections",
                      {Source.GUEST: len(claimed), DRGN: len(got),
                       Source.DIFFER: ", ".join(sorted(n for n in set(claimed) | set(got)
                                                       if claimed.get(n) != got.get(n)))
                       or None},
                      bool(claimed) and claimed == got,
                      label="module sections: /sys/module vs struct module in the vmcore"))
    for p in data.pbinfo[:1]:
        rows.append(Check("vmcore", "pageblock-order",
                          {Source.PAGETYPEINFO: p.order, DRGN: drgn.pageblock_order},
                          p.order == drgn.pageblock_order,
                          label="pageblock order (drgn derives it from struct zone)"))
    return rows


def _failed(message):
    return Check("vmcore", "drgn", {DRGN: message, Source.EXPECTED: "read"}, False,
                 reason="no vmcore values: every kind loses its drgn column",
                 label="drgn read the vmcore")


def merge(found, data, truth, drgn):
    """`found` (a checks.variant.Comparison) with drgn's sources and rows
    (drgn: a DrgnReading, data: the GuestData)."""
    if drgn is None:
        return found
    if drgn.error:
        return replace(found, values=found.values + (_failed(drgn.error),))
    blocks = _by_block(drgn.pageblocks)
    mine_blocks = _by_block(drgn.results.pageblocks)
    hist = {}
    for p in drgn.pageblocks:
        hist[(p.zone, p.mt)] = hist.get((p.zone, p.mt), 0) + 1
    disks = {d.name: f"{d.dev} {d.sectors}" for d in drgn.disks}
    mine_disks = {b.name: f"{b.dev} {b.sectors}" for b in drgn.results.bdevs}
    whole = {d.name: d.whole for d in drgn.disks}
    by_kind = {
        "snapshot": lambda c: _snapshot(c, drgn),
        "prio": lambda c: _prio(c, drgn),
        "policy": lambda c: _policy(c, drgn),
        "pageblock": lambda c: _pageblock(c, drgn, blocks, mine_blocks),
        "migratetype": lambda c: _migratetype(c, hist),
        "blockdev": lambda c: _blockdev(c, disks, mine_disks, whole,
                                        ([d.name for d in drgn.disks],
                                         [b.name for b in drgn.results.bdevs])),
        "writeback": lambda c: _writeback(c, drgn),
        "bpf": lambda c: _bpf(c, drgn),
        "ustack": lambda c: _ustack(c, drgn),
    }
    values = [by_kind[c.kind](c) if c.kind in by_kind and _first_snapshot(c) else c
              for c in found.values]
    values += _unseen(found.values, drgn, blocks)
    values += _vmcore_rows(data, drgn)
    symbols = tuple(_symbol(c, drgn) for c in found.symbols)
    return replace(found, symbols=symbols, values=tuple(values))


# The later-snapshot rows of checks/pageblock.py and checks/prio.py: the second
# snapshot's ("snap2 ..."), the rows over both ("snap<n>/...", "types/...").
# The vmcore is dumped at the first snapshot stop, so drgn speaks for none of them.
PBSTATES_KEY = re.compile(r"^(snap\d|types/)")


def _first_snapshot(c):
    """Whether row `c` holds a value of the first snapshot, the one dumped."""
    return not PBSTATES_KEY.match(c.key)


def _unseen(values, drgn, blocks):
    """What drgn saw at the snapshot that no row of the module, gdb or the guest covers."""
    rows = []
    pids = {c.info.get("pid") for c in values if c.kind == "prio"}
    for pid in sorted(int(p) for p in drgn.tasks):
        if pid not in pids:
            t = drgn.tasks[str(pid)]
            rows.append(Check("prio", f"pid {pid}", {MODULE: None, Source.MEMORY: None,
                                                     DRGN: t.prio}, False,
                              info={"comm": t.comm, "pid": pid}))
    seen = {(c.info.get("node"), c.info.get("pfn")) for c in values if c.kind == "pageblock"}
    for key in sorted(set(blocks) - seen):
        p = blocks[key]
        rows.append(Check("pageblock", f"{p.zone} pfn {p.pfn:#x}",
                          {MODULE: None, Source.MEMORY: None, DRGN: p.mt}, False,
                          info={"zone": p.zone, "node": p.node, "pfn": p.pfn}))
    names = {c.key for c in values if c.kind == "blockdev"}
    for d in drgn.disks:
        if d.name not in names:
            rows.append(Check("blockdev", d.name, {MODULE: None, DRGN: f"{d.dev} {d.sectors}"},
                              False))
    return rows
