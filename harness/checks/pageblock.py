"""The migratetype sampler's checks: every pageblock and the histogram per zone,
at every snapshot the guest takes.

First snapshot: each pageblock of the module's text and memory against gdb's
own read of the bitmap, and the module's histogram against gdb's count and
/proc/pagetypeinfo.

Later snapshots (issue 12). The guest (harness/guest/assets/init) compacts
memory before its first snapshot, so PB_migrate_skip is set on some
pageblocks, boots with cma= (MIGRATE_CMA blocks) and movablecore=
(harness/guest/qemu.py), and between its snapshots takes one memory block of
ZONE_MOVABLE offline, whose pageblocks then stay MIGRATE_ISOLATE
(mm/memory_hotplug.c offline_pages(): "the pageblock flags [are] effectively
stale"). gdb stops at every snapshot and reads the raw pageblock bits, skip
bit included, and whether each section is online. Checked, all against gdb's
own read of the bitmaps (compare_pageblock_snapshots):
  - each later snapshot, block by block and per migratetype, as the first
    (keys prefixed `snap<n> `);
  - the snapshot sequence of the module's file, its memory and gdb's stop;
  - skip bits are set at every snapshot (else a mask that keeps the skip bit
    could not be caught);
  - the blocks whose type changed between two snapshots: the module's set
    equals gdb's, and gdb saw a change (else a sample taken once at load
    could not be caught);
  - the offlined memory block: every pageblock of it Isolate and offline in
    gdb's read after, online and not Isolate before;
  - every migratetype this config produces appears in some snapshot.
"""

from .confusions import pair
from ..model.enums import Source
from ..model.results import INDEPENDENT, SAME_FUNCTION, Check
from .snapshots import at_snapshot, no_stop, snapshots

# Migratetype numbers of 6.1 (include/linux/mmzone.h); CMA and Isolate exist
# only on configs with CONFIG_CMA / CONFIG_MEMORY_ISOLATION, unknown numbers
# are shown as such.
MIGRATETYPES = {0: "Unmovable", 1: "Movable", 2: "Reclaimable", 3: "HighAtomic",
                4: "CMA", 5: "Isolate"}
MT = {name: n for n, name in MIGRATETYPES.items()}
# Types the guest is built to show; HighAtomic needs a high-order atomic
# allocation that fails the fast path, which nothing in the guest does.
WANTED = ("Unmovable", "Movable", "Reclaimable", "CMA", "Isolate")
NOT_PRODUCED = {"HighAtomic": "no high-order atomic allocation falls back to the slow path "
                              "in the guest (reserve_highatomic_pageblock() never runs)"}

# The guest's long dentry names claim a whole Reclaimable block only through
# SLOB (6.1's tinyconfig), which hands __GFP_RECLAIMABLE to the page
# allocator per kmalloc; 6.12 has no SLOB, and SLUB's reclaimable caches fit
# in blocks already Reclaimable or Unmovable. Where none appears (module and
# gdb agreeing on 0), the row is unchecked with this reason.
SLOB_ONLY = {"Reclaimable": "no Reclaimable pageblock without SLOB (6.12): the guest's long "
                            "dentry names do not claim a whole block there"}


def _by_block(rows):
    """Pageblock rows by (node, pfn): the module's text, its memory, gdb's read."""
    return {(p.node, p.pfn): p for p in rows}


def _block_confusions(bitmap, key):
    """gdb's block `key` against what a sampler could read instead (checks/confusions.py):
    the next block's type (a pfn off by one pageblock) and the whole flags word (a mask
    that keeps the skip bit); {} for a block gdb did not read."""
    g = bitmap.get(key)
    if g is None:
        return {}
    after = [b for k, b in bitmap.items() if k[0] == key[0] and b.zone == g.zone
             and k[1] > key[1]]
    nxt = min(after, key=lambda b: b.pfn) if after else None
    return {"next block's type": pair(g.mt, nxt.mt if nxt else None),
            "whole flags word": pair(g.mt, g.raw)}


def compare_pageblocks(data, truth):
    """Every pageblock: the module's text and memory against gdb's own bitmap read."""
    text = _by_block(data.pageblock)
    memory = _by_block(truth.results.pageblocks)
    bitmap = _by_block(truth.pageblocks)
    values = []
    for key in sorted(set(text) | set(memory) | set(bitmap)):
        t, m, g = text.get(key), memory.get(key), bitmap.get(key)
        zone = (t or g).zone if (t or g) else "?"      # the module's memory has no zone name
        values.append(Check(
            "pageblock", f"{zone} pfn {key[1]:#x}",
            {Source.MODULE: t.mt if t else None, Source.MEMORY: m.mt if m else None,
             Source.GDB_BITMAP: g.mt if g else None},
            t is not None and m is not None and g is not None and t.mt == m.mt == g.mt,
            info={"zone": zone, "node": key[0], "pfn": key[1],
                  "confusions": _block_confusions(bitmap, key)}))
    return values


def compare_migratetype(data, truth):
    """Histogram per zone and migratetype against /proc/pagetypeinfo and gdb's bitmap read.

    The module walks every pfn_valid() pageblock, /proc/pagetypeinfo only the
    online ones (pfn_to_online_page()): an offline memory block keeps its
    pageblock flags (MIGRATE_ISOLATE) and its memmap. So the module's count is
    held to gdb's count of every block, pagetypeinfo's to gdb's count of the
    blocks in online sections; both are exact.
    """
    pt = {(x.zone, x.mt): x.count for x in data.ptinfo}
    gdb_hist, gdb_online = {}, {}
    for p in truth.pageblocks:
        gdb_hist[(p.zone, p.mt)] = gdb_hist.get((p.zone, p.mt), 0) + 1
        if p.online:
            gdb_online[(p.zone, p.mt)] = gdb_online.get((p.zone, p.mt), 0) + 1
    values = []
    for h in data.mthist:
        key = (h.zone, h.mt)
        if h.count == 0 and key not in pt:
            continue              # a migratetype pagetypeinfo does not list (e.g. CMA off)
        sources = {Source.MODULE: h.count, Source.PAGETYPEINFO: pt.get(key),
                   Source.GDB_BITMAP: gdb_hist.get(key, 0)}
        if gdb_online.get(key, 0) != gdb_hist.get(key, 0):
            sources[Source.GDB_BITMAP_ONLINE] = gdb_online.get(key, 0)
        values.append(Check(
            "migratetype", f"zone {h.zone} mt {h.mt}", sources,
            pt.get(key) == gdb_online.get(key, 0) and h.count == gdb_hist.get(key, 0),
            info={"zone": h.zone, "mt": h.mt,
                  "mt_name": MIGRATETYPES.get(h.mt, f"type {h.mt}"),
                  "oracles": {Source.PAGETYPEINFO: SAME_FUNCTION,
                              Source.GDB_BITMAP: INDEPENDENT},
                  "confusions": _count_confusions(gdb_hist, key)}))
    return values


def _count_confusions(hist, key):
    """gdb's count of (zone, mt) against the counts a histogram off by one type, or
    filed under another zone, would show (checks/confusions.py)."""
    zone, mt = key
    right = hist.get(key, 0)
    others = sorted(z for z, _ in hist if z != zone)
    return {"next type's count": pair(right, hist.get((zone, mt + 1), 0)),
            "another zone's count": pair(right, hist.get((others[0], mt), 0) if others
                                         else None)}


def _later(n, view, reading):
    """Snapshot n's blocks and histogram, checked as the first snapshot's are
    (reading: gdb's GdbSnapshot there, its results and pageblocks)."""
    if reading is None:
        return [no_stop(n, "snapshot", "stopped")]
    return at_snapshot(n, compare_pageblocks(view, reading) + compare_migratetype(view, reading))


def _sequence(n, view, reading, other):
    """`other`: gdb's reading at a neighbouring snapshot (checks/confusions.py)."""
    text = next((s.seq for s in view.snapshot if s.kind == "migratetype"), None)
    memory = reading.results.snapshot_seq if reading else None
    stop = reading.stop.seq if reading else None
    confused = other.stop.seq if other else None
    return Check("snapshot", f"snap{n}/sequence",
                 {Source.MODULE: text, Source.MEMORY: memory, Source.GDB: stop},
                 text is not None and text == memory and (stop is None or stop == memory)
                 and (n == 1 or memory is not None),
                 info={"confusions": {"the other snapshot's sequence": pair(stop, confused)}}
                 if stop is not None else {},
                 label=f"snapshot {n}: sequence in the migratetype file, memory, gdb stop")


def _skip(n, reading):
    count = sum(p.skip for p in reading.pageblocks) if reading else None
    return Check("pageblock", f"snap{n}/skip-bits",
                 {Source.GDB_BITMAP: count, Source.EXPECTED: "> 0"},
                 bool(count), label=f"snapshot {n}: pageblocks with PB_migrate_skip set",
                 info={"why": "a mask that keeps the skip bit reads a type > 7 on these"})


def _by_key(rows):
    return {(p.node, p.pfn): p.mt for p in rows}


def _changed(before, after):
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


def _change(n, prev, cur):
    (_, pview, preading), (_, view, reading) = prev, cur
    if preading is None or reading is None:
        return Check("pageblock", f"snap{n}/changed",
                     {Source.MODULE: None, Source.GDB_BITMAP: None},
                     False, label=f"blocks whose type changed from snapshot {n - 1} to {n}")
    gdb = _changed(_by_key(preading.pageblocks), _by_key(reading.pageblocks))
    mod = _changed(_by_key(pview.pageblock), _by_key(view.pageblock))
    return Check("pageblock", f"snap{n}/changed",
                 {Source.MODULE: len(mod), Source.GDB_BITMAP: len(gdb)},
                 bool(gdb) and mod == gdb,
                 info={"differ": " ".join(f"{pfn:#x}" for _, pfn in sorted(mod ^ gdb))[:300]},
                 label=f"blocks whose type changed from snapshot {n - 1} to {n}")


def _offline(n, prev, cur, order):
    """The memory block the guest took offline before snapshot n."""
    (_, _, preading), (_, view, reading) = prev, cur
    rows = []
    per_block = 1 << order if order is not None else None
    for m in view.memstate:
        key = f"snap{n}/memory{m.block}-{m.action}"
        label = f"snapshot {n}: memory{m.block} {m.action} ({m.state})"
        if reading is None or preading is None or per_block is None:
            rows.append(Check("pageblock", key,
                              {Source.GUEST: m.state, Source.GDB_BITMAP: None},
                              False, label=label))
            continue
        lo, hi = m.start_pfn, m.start_pfn + m.pages
        want = m.pages // per_block

        def inside(reading):
            return [p for p in reading.pageblocks if lo <= p.pfn < hi]
        after, before = inside(reading), inside(preading)
        iso_after = sum(p.mt == MT["Isolate"] and not p.online for p in after)
        ok_before = sum(p.mt != MT["Isolate"] and p.online for p in before)
        rows.append(Check(
            "pageblock", key,
            {Source.GUEST: m.state,
             Source.GDB_BITMAP: f"{iso_after}/{len(after)} Isolate+offline, before "
                                f"{ok_before}/{len(before)} online",
             Source.EXPECTED: f"{want}/{want}, before {want}/{want}"},
            m.state == "offline" and len(after) == len(before) == want
            and iso_after == ok_before == want,
            info={"start_pfn": lo, "pages": m.pages}, label=label))
    return rows


def _types(snaps):
    """Every migratetype the config produces, in some snapshot (gdb), module alike."""
    rows = []
    for name in WANTED + tuple(NOT_PRODUCED):
        mt = MT[name]
        gdb = [sum(p.mt == mt for p in r.pageblocks) if r else None for _, _, r in snaps]
        mod = [sum(p.mt == mt for p in v.pageblock) for _, v, _ in snaps]
        sources = {Source.MODULE: " ".join(map(str, mod)),
                   Source.GDB_BITMAP: " ".join(map(str, gdb))}
        if name in NOT_PRODUCED:
            rows.append(Check("pageblock", f"types/{name}", sources, None,
                              reason=NOT_PRODUCED[name],
                              label=f"{name} blocks per snapshot"))
            continue
        if name in SLOB_ONLY and None not in gdb and sum(gdb) == 0 and mod == gdb:
            rows.append(Check("pageblock", f"types/{name}", sources, None,
                              reason=SLOB_ONLY[name], label=f"{name} blocks per snapshot"))
            continue
        rows.append(Check("pageblock", f"types/{name}",
                          {**sources, Source.EXPECTED: "> 0 in one"},
                          None not in gdb and sum(gdb) > 0 and mod == gdb,
                          label=f"{name} blocks per snapshot"))
    return rows


def compare_pageblock_snapshots(data, truth):
    """The later-snapshot rows described in the module docstring; none when the
    guest took one snapshot and reported no state (an old guest init)."""
    snaps = snapshots(data, truth)
    if len(snaps) < 2 and not truth.snapshots:
        return []
    order = next((p.order for p in data.pbinfo), None)
    values = []
    for i, (n, view, reading) in enumerate(snaps):
        other = snaps[i + 1 if i == 0 else i - 1][2] if len(snaps) > 1 else None
        values.append(_sequence(n, view, reading, other))
        values.append(_skip(n, reading))
        if i:
            values += _later(n, view, reading)
            values.append(_change(n, snaps[i - 1], snaps[i]))
            values += _offline(n, snaps[i - 1], snaps[i], order)
    values += _types(snaps)
    return values
