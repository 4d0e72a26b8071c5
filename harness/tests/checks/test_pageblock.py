"""Pageblock states over two snapshots (harness/checks/pageblock.py) on doctored guest data.

Each mutant test feeds what a plausible probe-module bug would report and names
the check that rejects it; the real mutants are recorded in the branch's report.
"""

from harness.checks import pageblock
from harness.guest import dataport
from harness.guest.schema import Pageblock, Snapshots
from harness.oracles.readings import GdbReading
from harness.report import assemble, histograms, html_maps
from harness.model.results import VariantResult
from harness.tests.readings_fixture import gdb_json, results, snapshot

ORDER = 10
PB = 1 << ORDER
# Memory block 2: pfns 0x2000..0x2fff (4 pageblocks), ZONE_MOVABLE on both sides.
BLOCK_START, BLOCK_PAGES = 0x2000, 0x1000
UNMOVABLE, MOVABLE, RECLAIMABLE, CMA, ISOLATE = 0, 1, 2, 4, 5
SKIP = 8

# (zone, pfn, raw bits at snapshot 1, raw bits at snapshot 2)
BLOCKS = [
    ("DMA32", 0x0000, UNMOVABLE | SKIP, UNMOVABLE | SKIP),
    ("DMA32", 0x0400, RECLAIMABLE, RECLAIMABLE),
    ("DMA32", 0x0800, MOVABLE | SKIP, MOVABLE | SKIP),
    ("Movable", 0x1c00, MOVABLE, MOVABLE),
    ("Movable", 0x2000, MOVABLE | SKIP, ISOLATE | SKIP),
    ("Movable", 0x2400, MOVABLE, ISOLATE),
    ("Movable", 0x2800, MOVABLE, ISOLATE),
    ("Movable", 0x2c00, MOVABLE, ISOLATE),
    ("Movable", 0x3000, CMA, CMA),
    ("Movable", 0x3400, CMA | SKIP, CMA | SKIP),
]


def offline(snap, pfn):
    return snap == 2 and BLOCK_START <= pfn < BLOCK_START + BLOCK_PAGES


def gdb_blocks(snap):
    return [{"node": 0, "zone": z, "zid": 1 if z == "DMA32" else 3, "pfn": pfn,
             "mt": raw & 7, "raw": raw, "skip": bool(raw & SKIP),
             "online": not offline(snap, pfn)}
            for z, pfn, r1, r2 in BLOCKS for raw in [r1 if snap == 1 else r2]]


def module_blocks(snap, mask=7, pfn_shift=0, stale=False, skip_offline=False):
    """What the module reports: by default the truth; the arguments are the bugs."""
    out = []
    for i, (z, pfn, r1, r2) in enumerate(BLOCKS):
        if skip_offline and offline(snap, pfn):
            continue
        raw = r1 if snap == 1 or stale else r2
        if pfn_shift:                   # reads the flags of the block pfn_shift further on
            j = min(i + pfn_shift, len(BLOCKS) - 1)
            raw = BLOCKS[j][2] if snap == 1 or stale else BLOCKS[j][3]
        out.append((z, pfn, raw & mask))
    return out


def hist(blocks):
    h = {}
    for z, _, mt in blocks:
        if mt < 6:
            h[(z, mt)] = h.get((z, mt), 0) + 1
    return h


def lines(snap, blocks, pt_offline=False):
    at = "" if snap == 1 else f"@{snap}"
    out = [f"snapshot{at} kind=migratetype seq={snap}"]
    out += [f"pageblock{at} node=0 zone={z} pfn={pfn:#x} mt={mt}" for z, pfn, mt in blocks]
    h = hist(blocks)
    truth = gdb_blocks(snap)
    for z in ("DMA32", "Movable"):
        for mt in range(6):
            out.append(f"mthist{at} node=0 zone={z} mt={mt} count={h.get((z, mt), 0)}")
            # /proc/pagetypeinfo: online blocks only (pfn_to_online_page())
            n = sum(p["zone"] == z and p["mt"] == mt and (p["online"] or pt_offline)
                    for p in truth)
            out.append(f"ptinfo{at} node=0 zone={z} mt={mt} count={n}")
    if snap == 2:
        out.append(f"memstate@2 action=offline block=2 start_pfn={BLOCK_START} "
                   f"pages={BLOCK_PAGES} state=offline")
    return out


def guest(mask=7, pfn_shift=0, stale=False, skip_offline=False, pt_offline=False):
    text = ["KSYMLAB-DATA-BEGIN variant=t", "snapshots count=2", f"pbinfo order={ORDER}"]
    text += lines(1, module_blocks(1, mask, pfn_shift, False, skip_offline))
    text += lines(2, module_blocks(2, mask, pfn_shift, stale, skip_offline), pt_offline)
    text.append("KSYMLAB-DATA-END")
    return dataport.parse("\n".join(text))


def truth(d, snaps=2, no_skip=False):
    """gdb's reading at each snapshot; the module's memory is what its text says."""
    readings = []
    for snap in range(1, snaps + 1):
        view = d.pageblock if snap == 1 else (d.at[snap].pageblock or d.pageblock)
        blocks = gdb_blocks(snap)
        if no_skip:
            blocks = [{**p, "raw": p["mt"], "skip": False} for p in blocks]
        memory = [{"node": p.node, "pfn": p.pfn, "zid": 0, "mt": p.mt} for p in view]
        readings.append(snapshot(snap, results=results(snapshot_seq=snap, pageblocks=memory),
                                 pageblocks=blocks))
    return gdb_json(**readings[0], snapshots=readings)


def rows(d, t):
    t = GdbReading.parse(t)
    return {c.id: c for c in pageblock.compare_pageblocks(d, t)
            + pageblock.compare_migratetype(d, t) + pageblock.compare_pageblock_snapshots(d, t)}


def failing(d, t):
    return sorted(i for i, c in rows(d, t).items() if c.disagrees)


def test_parse_later_snapshot_lines():
    d = guest()
    assert len(d.pageblock) == len(BLOCKS)
    assert len(d.at[2].pageblock) == len(BLOCKS)
    assert d.at[2].pageblock[4] == Pageblock(node=0, zone="Movable", pfn=0x2000,
                                                      mt=ISOLATE)
    assert d.at[2].memstate[0].start_pfn == BLOCK_START
    assert d.at[2].memstate[0].state == "offline"
    assert d.snapshots == (Snapshots(count=2),)
    assert d.memstate == ()


def test_all_states_agree():
    d = guest()
    r = rows(d, truth(d))
    assert [i for i, c in r.items() if c.disagrees] == []
    assert r["pageblock:snap1/skip-bits"].get("gdb_bitmap") == 4
    assert r["pageblock:snap2/changed"].sources == {"module": 4, "gdb_bitmap": 4}
    assert r["pageblock:snap2/memory2-offline"].agrees
    assert r["pageblock:types/Isolate"].sources["gdb_bitmap"] == "0 4"
    assert r["pageblock:types/CMA"].sources["gdb_bitmap"] == "2 2"
    assert r["pageblock:types/HighAtomic"].unchecked
    # the offline block: module and gdb count it, pagetypeinfo does not; both exact
    iso = r["migratetype:snap2 zone Movable mt 5"]
    assert iso.sources == {"module": 4, "pagetypeinfo": 0, "gdb_bitmap": 4,
                           "gdb_bitmap_online": 0}
    assert iso.agrees and iso.info["oracles"]["pagetypeinfo"] == "same function"
    assert r["pageblock:snap2 Movable pfn 0x2400"].sources["gdb_bitmap"] == ISOLATE


def test_stale_sample_at_load_is_rejected():
    """Mutant: pageblocks sampled once, at load; every later snapshot repeats them."""
    d = guest(stale=True)
    bad = failing(d, truth(d))
    assert "pageblock:snap2/changed" in bad
    assert "pageblock:snap2 Movable pfn 0x2000" in bad
    assert "migratetype:snap2 zone Movable mt 5" in bad
    assert not [i for i in bad if "snap2" not in i and "types/" not in i]


def test_mask_keeping_the_skip_bit_is_rejected():
    """Mutant: MIGRATETYPE_MASK | 1 << PB_migrate_skip."""
    d = guest(mask=15)
    bad = failing(d, truth(d))
    assert "pageblock:DMA32 pfn 0x0" in bad and "pageblock:snap2 Movable pfn 0x2000" in bad
    assert "migratetype:zone DMA32 mt 0" in bad       # the block left the histogram


def test_no_skip_bit_at_a_snapshot_fails():
    """Without skip bits the mask mutant would pass: the state itself is checked."""
    d = guest()
    assert failing(d, truth(d, no_skip=True)) == ["pageblock:snap1/skip-bits",
                                                  "pageblock:snap2/skip-bits"]


def test_off_by_one_pageblock_index_is_rejected():
    """Mutant: the flags of the next pageblock (pfn + pageblock_nr_pages)."""
    d = guest(pfn_shift=1)
    bad = failing(d, truth(d))
    assert "pageblock:DMA32 pfn 0x0" in bad and "pageblock:snap2 Movable pfn 0x1c00" in bad


def test_module_skipping_offline_blocks_is_rejected():
    """A module that walks like pagetypeinfo (online only) misses the offline block."""
    d = guest(skip_offline=True)
    bad = failing(d, truth(d))
    assert "pageblock:snap2 Movable pfn 0x2000" in bad
    assert "migratetype:snap2 zone Movable mt 5" in bad


def test_pagetypeinfo_counting_offline_blocks_is_rejected():
    """pagetypeinfo is held to gdb's online count, not loosened to either count."""
    d = guest(pt_offline=True)
    assert failing(d, truth(d)) == ["migratetype:snap2 zone Movable mt 5"]


def test_gdb_missing_the_second_stop_fails():
    d = guest()
    bad = failing(d, truth(d, snaps=1))
    assert "snapshot:snap2/gdb" in bad and "pageblock:snap2/changed" in bad


def test_offline_block_not_isolate_fails():
    d = guest()
    t = truth(d)
    for p in t["snapshots"][1]["pageblocks"]:
        if p["pfn"] == 0x2400:
            p["online"] = True           # e.g. onlined again: the state is not what was made
    assert "pageblock:snap2/memory2-offline" in failing(d, t)


def test_one_snapshot_without_states_adds_nothing():
    d = dataport.parse("KSYMLAB-DATA-BEGIN variant=t\nKSYMLAB-DATA-END\n")
    t = GdbReading.parse(gdb_json(pageblocks=[], snapshots=[]))
    assert pageblock.compare_pageblock_snapshots(d, t) == []


def _variant_json(d, t):
    vals = tuple(rows(d, t).values())
    return VariantResult("t", "test", "exports", symbols=(), values=vals).to_json()


def test_report_histogram_table_and_map_cells():
    d = guest()
    v = _variant_json(d, truth(d))
    head, table = histograms.histogram_table({"t": v}, ["t"])
    assert head == ["pageblocks", "snapshot", "t"]
    assert ["Isolate", 2, 4] in table and ["CMA", 1, 2] in table and ["CMA", 2, 2] in table
    assert ["Reclaimable", 1, 1] in table
    assert ["skip bit set (gdb)", 1, 4] in table
    assert ["changed since snapshot 1 (gdb)", 2, 4] in table
    out = []
    assemble._migratetypes({"variants": {"t": v}}, out)
    assert "## Pageblocks per migratetype" in out
    page = html_maps.pageblock_map("t", v)
    assert page.count('class="pb mt-4"') == 4 and page.count('class="pb mt-5"') == 4
    assert "Movable s2" in page
    # the state rows (skip bits, types, ...) are no cells
    assert f'data-cells="{2 * len(BLOCKS)}"' in page


def test_each_snapshot_sequence_tells_the_other_snapshot_apart():
    """Issue 25: snapshot n's sequence (gdb's stop) against the other snapshot's; a
    sampler that reported the first snapshot's number at the second fails its row."""
    d = guest()
    r = rows(d, truth(d))
    assert r["snapshot:snap1/sequence"].info["confusions"] == {
        "the other snapshot's sequence": [1, 2]}
    assert r["snapshot:snap2/sequence"].info["confusions"] == {
        "the other snapshot's sequence": [2, 1]}
    t = truth(d, snaps=1)                     # gdb gave no second stop: no evidence
    assert rows(d, t)["snapshot:snap1/sequence"].info["confusions"] == {
        "the other snapshot's sequence": [1, None]}
