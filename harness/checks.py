"""The checks of a report, in report.json's shape, for the renderers and `harness show`.

A check is {"id", "kind", "key", "info", "sources", "agree", "reason"}:
`sources` maps each source (module, memory, gdb, scenario, ...) to its value
or None, `info` describes the row and is never compared.

as_check() also accepts the older flat rows (sources beside descriptive
fields, symbols with module_addr/gdb_addr) that harness/compare.py writes
until its refactor lands, so the renderers work on both; once every
producer writes the new shape, as_check() is the identity.
"""

# Migratetype numbers of 6.1 (include/linux/mmzone.h); CMA and Isolate exist
# only on configs with CONFIG_CMA / CONFIG_MEMORY_ISOLATION, unknown numbers
# are shown as such.
MIGRATETYPES = {0: "Unmovable", 1: "Movable", 2: "Reclaimable", 3: "HighAtomic",
                4: "CMA", 5: "Isolate"}

# Fields of an old flat row that describe it rather than give a value.
_FLAT_INFO = ("comm", "frame", "detail", "verifier", "kmemleak_total")
_FLAT_SYMBOL_SOURCES = (("module_addr", "module"), ("gdb_addr", "gdb"),
                        ("proc_kallsyms", "proc_kallsyms"))


def as_check(row):
    """The row in report.json's check shape (see the module docstring)."""
    if "sources" in row:
        return row
    if "kind" not in row:          # an old symbol row: name, method, *_addr
        return {"id": f"symbol:{row['name']}", "kind": "symbol", "key": row["name"],
                "info": {"method": row.get("method")},
                "sources": {new: row.get(old) for old, new in _FLAT_SYMBOL_SOURCES
                            if old in row},
                "agree": row.get("agree"), "reason": row.get("reason")}
    skip = ("kind", "key", "agree", "reason") + _FLAT_INFO
    info = {k: row[k] for k in _FLAT_INFO if k in row}
    if row["kind"] == "pageblock":
        zone, _, pfn = row["key"].partition(" pfn ")
        info.update(zone=zone, pfn=int(pfn, 16) if pfn else None)
    return {"id": f"{row['kind']}:{row['key']}", "kind": row["kind"], "key": row["key"],
            "info": info, "sources": {k: v for k, v in row.items() if k not in skip},
            "agree": row.get("agree"), "reason": row.get("reason")}


def of_variant(v):
    """Every check of a variant entry: symbols first, then values, in report order."""
    return [as_check(x) for x in (v.get("symbols") or []) + (v.get("values") or [])]


def kinds(variants):
    """Kinds in first-seen order over all variants, "symbol" first."""
    out = []
    for v in variants.values():
        for c in of_variant(v):
            if c["kind"] not in out:
                out.append(c["kind"])
    return out


def source_names(rows):
    """Source names of the rows, in first-seen order."""
    out = []
    for c in rows:
        for s in c["sources"]:
            if s not in out:
                out.append(s)
    return out


def fmt(value):
    """A source value as text: None is "-", booleans yes/no."""
    if value is None:
        return "-"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def sources_text(c):
    """module=21 memory=21 gdb=21 scenario=25"""
    return " ".join(f"{k}={fmt(v)}" for k, v in c["sources"].items())


def label(c):
    """The key with the descriptive info a reader needs (the comm of a task)."""
    comm = (c.get("info") or {}).get("comm")
    return f"{c['key']} ({comm})" if comm else c["key"]


def mt_name(mt):
    if mt is None:
        return "absent"
    return MIGRATETYPES.get(mt, f"unknown type {mt}")


def pageblock_mt(c):
    """The migratetype a pageblock cell shows: the module's, else memory's, else gdb's."""
    s = c["sources"]
    for k in ("module", "memory", "gdb_bitmap"):
        if s.get(k) is not None:
            return s[k]
    return None


def pageblock_disagrees(c):
    """Module (text or memory) and gdb's bitmap read disagree, or the check failed."""
    s = c["sources"]
    seen = {s[k] for k in ("module", "memory", "gdb_bitmap") if s.get(k) is not None}
    return len(seen) > 1 or c.get("agree") is False


def pageblock_pfn(c):
    pfn = (c.get("info") or {}).get("pfn")
    if pfn is None:
        _, _, tail = c["key"].partition(" pfn ")
        pfn = int(tail, 16) if tail else None
    return pfn


def pageblock_zone(c):
    return (c.get("info") or {}).get("zone") or c["key"].partition(" pfn ")[0]
