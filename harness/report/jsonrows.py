"""Report rows as report.json holds them (Check.to_json()), for the renderers and `show`.

A row is {"id", "kind", "key", "label", "info", "sources", "agree", "reason"}:
`sources` maps each source (module, memory, gdb, scenario, ...) to its value
or None, `info` describes the row and is never compared.
"""

from ..checks.pageblock import MIGRATETYPES


def of_variant(v):
    """Every check of a variant entry: symbols first, then values, in report order."""
    return list(v.get("symbols") or []) + list(v.get("values") or [])


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
    """The row's label with the descriptive info a reader needs: the comm of a task,
    the LTTng release an LTTng row judged."""
    info = c.get("info") or {}
    extra = [info["comm"]] if info.get("comm") else []
    if info.get("lttng_version"):
        extra.append(f"LTTng {info['lttng_version']}")
    text = c.get("label") or c["key"]
    return f"{text} ({', '.join(extra)})" if extra else text


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
    """The zone a pageblock cell is drawn in; a later snapshot's blocks
    (harness/checks/pageblock.py) get a line of their own, e.g. "Movable s2"."""
    info = c.get("info") or {}
    zone = info.get("zone") or c["key"].partition(" pfn ")[0]
    return f"{zone} s{info['snapshot']}" if info.get("snapshot", 1) != 1 else zone
