"""report.md's table of pageblocks per migratetype and snapshot, from the rows of
kind migratetype and pageblock that harness/checks/pageblock.py made."""

from ..checks.pageblock import MIGRATETYPES


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
