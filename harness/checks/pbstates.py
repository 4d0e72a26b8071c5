"""Pageblock states across the guest's snapshots (issue 12).

The guest (harness/guest/init) compacts memory before its first snapshot, so
PB_migrate_skip is set on some pageblocks, boots with cma= (MIGRATE_CMA
blocks) and movablecore= (harness/qemu.py), and between its snapshots takes
one memory block of ZONE_MOVABLE offline, whose pageblocks then stay
MIGRATE_ISOLATE (mm/memory_hotplug.c offline_pages(): "the pageblock flags
[are] effectively stale"). gdb stops at every snapshot and reads the raw
pageblock bits, skip bit included, and whether each section is online.

Checks here, all against gdb's own read of the bitmaps:
  - each later snapshot, block by block and per migratetype, as compare.py
    checks the first (keys prefixed `snap<n> `);
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

from dataclasses import replace

from . import variant as compare
from .model import Check
from ..report.rows import MIGRATETYPES

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


def snapshots(data, truth):
    """[(n, data view, gdb reading or None)] for every snapshot the guest reported."""
    readings = truth.get("snapshots") or [truth]
    out = [(1, data, readings[0])]
    for n in sorted((data.get("at") or {})):
        view = dict(data)
        view.update({k: v for k, v in data["at"][n].items() if v})
        # the first snapshot's rows of these kinds never stand in for a later one's
        for kind in ("pageblock", "mthist", "ptinfo", "snapshot", "memstate", "prio",
                     "procstat"):
            view[kind] = data["at"][n].get(kind, [])
        out.append((n, view, readings[n - 1] if n - 1 < len(readings) else None))
    return out


def no_stop(n, kind, what):
    """The row that fails when gdb gave no reading of `what` at snapshot n."""
    return Check(kind, f"snap{n}/gdb", {"module": f"snapshot {n}", "gdb": None},
                 False, label=f"gdb {what} at snapshot {n}")


def at_snapshot(n, rows):
    """Rows of the first snapshot's checks, made snapshot n's (keys `snap<n> ...`)."""
    return [replace(c, key=f"snap{n} {c.key}", info={**c.info, "snapshot": n},
                    label=f"snapshot {n}: {c.label or c.key}") for c in rows]


def _later(n, view, reading):
    """Snapshot n's blocks and histogram, checked as compare.py checks the first."""
    if reading is None:
        return [no_stop(n, "snapshot", "stopped")]
    truth = {"results": reading["results"], "pageblocks": reading["pageblocks"]}
    return at_snapshot(n, compare.compare_pageblocks(view, truth)
                       + compare.compare_migratetype(view, truth))


def _sequence(n, view, reading):
    text = next((s.get("seq") for s in view["snapshot"] if s.get("kind") == "migratetype"),
                None)
    memory = reading["results"]["snapshot_seq"] if reading else None
    stop = reading["stop"]["seq"] if reading else None
    return Check("snapshot", f"snap{n}/sequence",
                 {"module": text, "memory": memory, "gdb": stop},
                 text is not None and text == memory and (stop is None or stop == memory)
                 and (n == 1 or memory is not None),
                 label=f"snapshot {n}: sequence in the migratetype file, memory, gdb stop")


def _skip(n, reading):
    count = sum(bool(p.get("skip")) for p in reading["pageblocks"]) if reading else None
    return Check("pageblock", f"snap{n}/skip-bits", {"gdb_bitmap": count, "expected": "> 0"},
                 bool(count), label=f"snapshot {n}: pageblocks with PB_migrate_skip set",
                 info={"why": "a mask that keeps the skip bit reads a type > 7 on these"})


def _by_key(rows):
    return {(p["node"], p["pfn"]): p["mt"] for p in rows}


def _changed(before, after):
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


def _change(n, prev, cur):
    (_, pview, preading), (_, view, reading) = prev, cur
    if preading is None or reading is None:
        return Check("pageblock", f"snap{n}/changed", {"module": None, "gdb_bitmap": None},
                     False, label=f"blocks whose type changed from snapshot {n - 1} to {n}")
    gdb = _changed(_by_key(preading["pageblocks"]), _by_key(reading["pageblocks"]))
    mod = _changed(_by_key(pview["pageblock"]), _by_key(view["pageblock"]))
    return Check("pageblock", f"snap{n}/changed", {"module": len(mod), "gdb_bitmap": len(gdb)},
                 bool(gdb) and mod == gdb,
                 info={"differ": " ".join(f"{pfn:#x}" for _, pfn in sorted(mod ^ gdb))[:300]},
                 label=f"blocks whose type changed from snapshot {n - 1} to {n}")


def _offline(n, prev, cur, order):
    """The memory block the guest took offline before snapshot n."""
    (_, _, preading), (_, view, reading) = prev, cur
    rows = []
    per_block = 1 << order if order is not None else None
    for m in view["memstate"]:
        key = f"snap{n}/memory{m['block']}-{m.get('action', '?')}"
        label = f"snapshot {n}: memory{m['block']} {m.get('action')} ({m.get('state')})"
        if reading is None or preading is None or per_block is None:
            rows.append(Check("pageblock", key, {"guest": m.get("state"), "gdb_bitmap": None},
                              False, label=label))
            continue
        lo, hi = m["start_pfn"], m["start_pfn"] + m["pages"]
        want = m["pages"] // per_block

        def inside(reading):
            return [p for p in reading["pageblocks"] if lo <= p["pfn"] < hi]
        after, before = inside(reading), inside(preading)
        iso_after = sum(p["mt"] == MT["Isolate"] and p.get("online") is False for p in after)
        ok_before = sum(p["mt"] != MT["Isolate"] and p.get("online") is True for p in before)
        rows.append(Check(
            "pageblock", key,
            {"guest": m.get("state"),
             "gdb_bitmap": f"{iso_after}/{len(after)} Isolate+offline, before "
                           f"{ok_before}/{len(before)} online",
             "expected": f"{want}/{want}, before {want}/{want}"},
            m.get("state") == "offline" and len(after) == len(before) == want
            and iso_after == ok_before == want,
            info={"start_pfn": lo, "pages": m["pages"]}, label=label))
    return rows


def _types(snaps):
    """Every migratetype the config produces, in some snapshot (gdb), module alike."""
    rows = []
    for name in WANTED + tuple(NOT_PRODUCED):
        mt = MT[name]
        gdb = [sum(p["mt"] == mt for p in r["pageblocks"]) if r else None for _, _, r in snaps]
        mod = [sum(p["mt"] == mt for p in v["pageblock"]) for _, v, _ in snaps]
        sources = {"module": " ".join(map(str, mod)), "gdb_bitmap": " ".join(map(str, gdb))}
        if name in NOT_PRODUCED:
            rows.append(Check("pageblock", f"types/{name}", sources, None,
                              reason=NOT_PRODUCED[name],
                              label=f"{name} blocks per snapshot"))
            continue
        if name in SLOB_ONLY and None not in gdb and sum(gdb) == 0 and mod == gdb:
            rows.append(Check("pageblock", f"types/{name}", sources, None,
                              reason=SLOB_ONLY[name], label=f"{name} blocks per snapshot"))
            continue
        rows.append(Check("pageblock", f"types/{name}", {**sources, "expected": "> 0 in one"},
                          None not in gdb and sum(gdb) > 0 and mod == gdb,
                          label=f"{name} blocks per snapshot"))
    return rows


def compare_states(data, truth):
    """The rows described in the module docstring; none when the guest took one
    snapshot and reported no state (an old guest init)."""
    snaps = snapshots(data, truth)
    if len(snaps) < 2 and not truth.get("snapshots"):
        return []
    order = next((p["order"] for p in data.get("pbinfo", [])), None)
    values = []
    for i, (n, view, reading) in enumerate(snaps):
        values.append(_sequence(n, view, reading))
        values.append(_skip(n, reading))
        if i:
            values += _later(n, view, reading)
            values.append(_change(n, snaps[i - 1], snaps[i]))
            values += _offline(n, snaps[i - 1], snaps[i], order)
    values += _types(snaps)
    return values


def histograms(variant_json):
    """{snapshot: {migratetype name: module count}} summed over zones, from a
    variant's report rows (kind migratetype, info zone/mt/snapshot)."""
    out = {}
    for c in variant_json.get("values") or []:
        if c["kind"] != "migratetype":
            continue
        info = c.get("info") or {}
        snap = info.get("snapshot", 1)
        name = MIGRATETYPES.get(info.get("mt"), f"type {info.get('mt')}")
        count = c["sources"].get("module")
        if count is not None:
            out.setdefault(snap, {}).setdefault(name, 0)
            out[snap][name] += count
    return out


def _summary_row(v, key):
    c = next((c for c in v.get("values") or [] if c["id"] == f"pageblock:{key}"), None)
    return c["sources"].get("gdb_bitmap") if c else None


def histogram_table(variants, names):
    """report.md's per-migratetype table: a row per (snapshot, migratetype name), a
    column per variant in `names`, the module's count over all zones; then per
    snapshot gdb's count of skip bits and of blocks changed since the snapshot before."""
    hists = {n: histograms(variants[n]) for n in names}
    snaps = sorted({s for h in hists.values() for s in h})
    if not snaps:
        return None
    rows = []
    for s in snaps:
        types = [MIGRATETYPES[mt] for mt in sorted(MIGRATETYPES)]
        seen = {t for h in hists.values() for t in h.get(s, {})}
        for t in types + sorted(seen - set(types)):
            if t in seen:
                rows.append([t, s] + [hists[n].get(s, {}).get(t, "-") for n in names])
        rows.append(["skip bit set (gdb)", s] +
                    [_summary_row(variants[n], f"snap{s}/skip-bits") for n in names])
        if s > 1:
            rows.append([f"changed since snapshot {s - 1} (gdb)", s] +
                        [_summary_row(variants[n], f"snap{s}/changed") for n in names])
    return ["pageblocks", "snapshot"] + list(names), rows
