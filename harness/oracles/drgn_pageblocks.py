"""The pageblock half of the drgn vmcore oracle (run in the drgn child,
harness/oracles/drgn_vmcore.py): every pageblock's migratetype, zone by zone,
from mem_section[nr]->usage->pageblock_flags, with the section geometry from
VMCOREINFO and pageblock_order from the zone's free_area type.

drgn 0.0.22 has no pageblock helper (drgn.helpers.linux.mmzone came later), so
the arithmetic is written here, each step in its function."""

from dataclasses import dataclass
from typing import Iterator, Optional

from drgn import FaultError, Object, Program
from drgn.helpers.linux.mm import pfn_to_page
from drgn.helpers.linux.nodemask import for_each_online_node


def pageblock_order(prog: Program, info: dict) -> int:
    """include/linux/pageblock-flags.h: without CONFIG_HUGETLB_PAGE (no hstates
    in vmlinux) pageblock_order is the largest buddy order, MAX_ORDER - 1 on 6.1
    and MAX_PAGE_ORDER on 6.12: the length of struct zone's free_area minus one;
    with it, x86's HUGETLB_PAGE_ORDER (PMD_SHIFT 21 - PAGE_SHIFT)."""
    page_shift = int(info["PAGESIZE"]).bit_length() - 1
    try:
        prog.symbol("hstates")
        return 21 - page_shift
    except LookupError:
        pass
    free_area = prog.type("struct zone").member("free_area").type
    return free_area.length - 1


def _pgdats(prog: Program) -> list:
    """(nid, ``pg_data_t``) of every online node; tinyconfig has no NUMA (contig_page_data)."""
    try:
        return [(0, prog["contig_page_data"])]
    except KeyError:
        return [(nid, prog["node_data"][nid][0]) for nid in for_each_online_node(prog)]


# ---- pageblocks: SPARSEMEM sections and their pageblock bitmaps ----

@dataclass(frozen=True)
class SectionGeometry:
    """What every pageblock read needs, read once: SPARSEMEM's layout
    (include/linux/mmzone.h; SECTION_SIZE_BITS and PAGESIZE from VMCOREINFO,
    the section flag bits from DWARF) and the pageblock bitmap's
    (include/linux/pageblock-flags.h, enums in DWARF)."""
    prog: Program
    mem_section: Object     # ``struct mem_section **`` (SPARSEMEM_EXTREME) or ``[][]``
    extreme: bool           # CONFIG_SPARSEMEM_EXTREME: roots are allocated, may be NULL
    per_root: int           # SECTIONS_PER_ROOT
    pfn_section_shift: int  # PFN_SECTION_SHIFT = SECTION_SIZE_BITS - PAGE_SHIFT
    has_mem_map: int        # SECTION_HAS_MEM_MAP = 1 << SECTION_HAS_MEM_MAP_BIT
    map_mask: int           # SECTION_MAP_MASK = ~((1 << SECTION_MAP_LAST_BIT) - 1)
    page_struct_size: int   # sizeof(struct page)
    order: int              # pageblock_order
    nr_bits: int            # NR_PAGEBLOCK_BITS: bits per pageblock in pageblock_flags
    mt_mask: int            # MIGRATETYPE_MASK = (1 << (PB_migrate_end + 1)) - 1
    skip_bit: int           # PB_migrate_skip (7.2: PB_compact_skip)
    iso_bit: Optional[int]  # 7.2's PB_migrate_isolate: set, the block is MIGRATE_ISOLATE
    isolate: Optional[int]  # MIGRATE_ISOLATE (CONFIG_MEMORY_ISOLATION)
    bits_per_long: int      # BITS_PER_LONG

    @property
    def pages_per_section(self) -> int:
        return 1 << self.pfn_section_shift


def section_geometry(prog: Program, info: dict, order: int) -> SectionGeometry:
    """The geometry of this kernel's sections and pageblocks (see SectionGeometry)."""
    # read in the order the walk always read them: a missing one is named the same
    page_size = int(info["PAGESIZE"])
    pfn_section_shift = int(info["NUMBER(SECTION_SIZE_BITS)"]) - (page_size.bit_length() - 1)
    nr_bits, mt_mask, skip_bit, iso_bit = pageblock_bits(prog)
    has_mem_map = 1 << prog["SECTION_HAS_MEM_MAP_BIT"].value_()
    bits_per_long = 8 * prog.type("unsigned long").size
    mem_section = prog["mem_section"]
    extreme = mem_section.type_.kind.name == "POINTER"
    per_root = page_size // prog.type("struct mem_section").size if extreme else \
        len(mem_section[0])
    return SectionGeometry(
        prog=prog, mem_section=mem_section, extreme=extreme, per_root=per_root,
        pfn_section_shift=pfn_section_shift, has_mem_map=has_mem_map,
        map_mask=~((1 << prog["SECTION_MAP_LAST_BIT"].value_()) - 1),
        page_struct_size=prog.type("struct page").size, order=order, nr_bits=nr_bits,
        mt_mask=mt_mask, skip_bit=skip_bit, iso_bit=iso_bit,
        isolate=_constant(prog, "MIGRATE_ISOLATE"), bits_per_long=bits_per_long)


def _constant(prog: Program, name: str) -> Optional[int]:
    try:
        return prog[name].value_()
    except LookupError:
        return None


def pageblock_bits(prog: Program) -> tuple:
    """(bits per pageblock, migratetype mask, skip bit, isolate bit or None) of enum
    pageblock_bits (include/linux/pageblock-flags.h). Up to 6.12: PB_migrate_end,
    PB_migrate_skip, NR_PAGEBLOCK_BITS. 7.2: PB_migrate_0..2, PB_compact_skip,
    PB_migrate_isolate (MEMORY_ISOLATION), __NR_PAGEBLOCK_BITS, which
    NR_PAGEBLOCK_BITS (a macro, not in DWARF) rounds up to a power of two."""
    end = _constant(prog, "PB_migrate_end")
    if end is not None:
        return (prog["NR_PAGEBLOCK_BITS"].value_(), (1 << (end + 1)) - 1,
                prog["PB_migrate_skip"].value_(), None)
    n = prog["__NR_PAGEBLOCK_BITS"].value_()
    return (1 << (n - 1).bit_length(), (1 << (prog["PB_migrate_2"].value_() + 1)) - 1,
            prog["PB_compact_skip"].value_(), _constant(prog, "PB_migrate_isolate"))


def section_of(geo: SectionGeometry, pfn: int) -> Optional[Object]:
    """The section holding `pfn` (__pfn_to_section()), when it has a mem_map
    (valid_section()) and a usage block; else None.

    :param pfn: ``unsigned long``
    :return: ``struct mem_section`` or None
    """
    nr = pfn >> geo.pfn_section_shift
    root = geo.mem_section[nr // geo.per_root]
    if geo.extreme and not root.value_():
        return None
    ms = root[nr % geo.per_root]
    if not ms.section_mem_map.value_() & geo.has_mem_map or not ms.usage.value_():
        return None
    return ms


def page_of(geo: SectionGeometry, pfn: int, ms: Object) -> Object:
    """drgn's pfn_to_page(); where drgn knows no vmemmap (libkdumpfile without
    it in VMCOREINFO), the section's encoded mem_map (mm/sparse.c:
    section_mem_map = mem_map - section's first pfn, flag bits below
    SECTION_MAP_LAST_BIT) plus pfn.

    :param pfn: ``unsigned long``
    :param ms: ``struct mem_section`` holding `pfn` (section_of())
    :return: ``struct page *``
    """
    try:
        return pfn_to_page(geo.prog, pfn)
    except KeyError:
        addr = (ms.section_mem_map.value_() & geo.map_mask) + pfn * geo.page_struct_size
        return Object(geo.prog, "struct page *", addr & (2**64 - 1))


def page_readable(geo: SectionGeometry, pfn: int, ms: Object) -> bool:
    """Whether the vmcore holds the struct page of `pfn` (a pageblock counts only then).

    :param ms: ``struct mem_section`` holding `pfn`
    """
    try:
        page_of(geo, pfn, ms).flags.value_()
    except FaultError:
        return False
    return True


def block_mt(geo: SectionGeometry, pfn: int, ms: Object) -> tuple:
    """(migratetype, skip bit) of the pageblock of `pfn`, as get_pfnblock_flags_mask()
    reads them (mm/page_alloc.c): NR_PAGEBLOCK_BITS bits per pageblock in the
    section's usage->pageblock_flags, the migratetype in bits 0..PB_migrate_end.

    :param pfn: ``unsigned long``
    :param ms: ``struct mem_section`` holding `pfn`
    """
    bitidx = ((pfn & (geo.pages_per_section - 1)) >> geo.order) * geo.nr_bits
    word = ms.usage.pageblock_flags[bitidx // geo.bits_per_long].value_()
    bits = word >> (bitidx % geo.bits_per_long)
    if geo.iso_bit is not None and (bits >> geo.iso_bit) & 1:
        return geo.isolate, (bits >> geo.skip_bit) & 1
    return bits & geo.mt_mask, (bits >> geo.skip_bit) & 1


def zone_pageblocks(geo: SectionGeometry, nid: int, zid: int, z: Object) -> Iterator[dict]:
    """The pageblocks of one zone, stepped from its first pfn as /proc/pagetypeinfo
    and the module do; a pageblock counts when its section has a mem_map and a
    usage block and its struct page is readable.

    :param z: ``struct zone``, pgdat->node_zones[zid]
    """
    per_block = 1 << geo.order
    start = z.zone_start_pfn.value_()
    for pfn in range(start, start + z.spanned_pages.value_(), per_block):
        ms = section_of(geo, pfn)
        if ms is None or not page_readable(geo, pfn, ms):
            continue
        mt, skip = block_mt(geo, pfn, ms)
        yield {"node": nid, "zone": z.name.string_().decode(), "zid": zid,
               "pfn": pfn & ~(per_block - 1), "mt": mt, "skip": skip}


def read_pageblocks(prog: Program, info: dict, order: int) -> list:
    """Every pageblock of every populated zone (zone_pageblocks()), its
    migratetype and skip bit from the section's pageblock bitmap (block_mt())."""
    geo = section_geometry(prog, info, order)
    out = []
    for nid, pgdat in _pgdats(prog):
        zones = pgdat.node_zones
        for zid in range(len(zones)):
            z = zones[zid]
            if z.present_pages.value_():
                out.extend(zone_pageblocks(geo, nid, zid, z))
    return out


# ---- block devices ----
