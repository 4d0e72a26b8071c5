"""The drgn half of the vmcore oracle, run under Debian's python3-drgn as
`/usr/bin/python3 -m harness.oracles.drgn_vmcore IN.json OUT.json` by
harness/oracles/drgn.py (the harness half: the spec, the run, the JSON).

It opens the vmcore (drgn finds the kernel's page tables and KASLR offset
through the VMCOREINFO note), loads vmlinux and the probe module's DWARF, and
reads, with drgn's own helpers where 0.0.22 has them:
    tasks       drgn.helpers.linux.pid.for_each_task (the pid IDR of
                init_pid_ns, not the task list gdb walks): prio - MAX_RT_PRIO
    pageblocks  zones from the pgdat, the migratetype bits from
                mem_section[nr]->usage->pageblock_flags, section geometry from
                VMCOREINFO and pageblock_order from the zone's free_area type
    disks       drgn.helpers.linux.block.for_each_disk / for_each_partition
                (whole: bd_partno == 0)
    writeback   global_wb_domain.dirty_limit and its address
    symbols     the addresses of the names the module resolved (vmlinux's
                symbol table, relocated by VMCOREINFO's KERNELOFFSET)
    results     the module's ksymlab_results through the module's DWARF,
                relocated by drgn from the kernel's own struct module
and writes them as JSON (harness/oracles/readings.py DrgnReading).

drgn 0.0.22 has no task_prio() or pageblock helper (drgn.helpers.linux.mmzone
came later), so those two are read from the fields, with the arithmetic
written here (see each function). Input drgn cannot read is one line
`ksymlab-drgn: ...` and exit status 43 (errors.EXIT["drgn"]).
"""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import drgn
from drgn import FaultError, Object, Program, container_of
from drgn.helpers.linux.block import for_each_partition, part_devt, part_name
from drgn.helpers.linux.list import list_for_each_entry
from drgn.helpers.linux.mm import pfn_to_page
from drgn.helpers.linux.nodemask import for_each_online_node
from drgn.helpers.linux.pid import for_each_task

from ..guest.vmcore import vmcoreinfo_text
from .drgn import VMCOREINFO_FROM_GUEST, Bad, symbol_place

# The oracles state their constants each for itself: MAX_RT_PRIO and MINORBITS
# are also in gdbscripts/ksymlab_verify.py, deliberately, so that neither oracle
# takes a value from the other (or from the code under test).
# include/linux/sched/prio.h: MAX_RT_PRIO is 100 in 6.1 and 6.12; a macro,
# absent from DWARF and VMCOREINFO, so the oracle states it (task_prio() is
# p->prio - MAX_RT_PRIO, kernel/sched/core.c).
MAX_RT_PRIO = 100
# include/linux/kdev_t.h: MINORBITS 20.
MINORBITS = 20

# What a read of the vmcore can raise when the kernel's layout is not what a
# reader expects: one line, exit status 43 (see oracle()).
DRGN_ERRORS = (FaultError, drgn.ObjectAbsentError, LookupError, AttributeError, ValueError)


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m harness.oracles.drgn_vmcore IN.json OUT.json", file=sys.stderr)
        return 2
    try:
        spec = json.loads(Path(argv[0]).read_text())
        out = oracle(spec)
    except Bad as e:
        print(f"ksymlab-drgn: {e}", file=sys.stderr)
        return 43
    Path(argv[1]).write_text(json.dumps(out, indent=1, sort_keys=True))
    return 0


def oracle(spec):
    """Everything this oracle reads, as a JSON-ready dict."""
    prog = open_core(spec["vmcore"])
    module_error = load_debug_info(prog, spec["vmlinux"], spec["module"])
    info = vmcoreinfo(prog, spec["vmcore"])
    if spec.get("synthesized"):
        info["_source"] = "synthesized from vmlinux"
    out = {"vmcoreinfo": {"present": info.get("_source") in VMCOREINFO_FROM_GUEST,
                          "source": info.pop("_source"),
                          "osrelease": info.get("OSRELEASE"),
                          "kerneloffset": info.get("KERNELOFFSET")}}
    try:
        out["symbols"] = read_symbols(prog, spec["symbols"])
        out["module_sections"] = read_module_sections(prog, "ksymlab_probe")
        if module_error is None:
            out["results"] = read_results(prog["ksymlab_results"], prog["ksymlab_results"].address_)
            out["results_via"] = "drgn's loaded-module debug info"
        else:
            out["results"] = read_results(*results_at_sections(prog, spec["module"],
                                                                 spec["sections"]))
            out["results_via"] = f"the module's DWARF at the guest's section addresses " \
                                 f"({module_error})"
        out["tasks"] = read_tasks(prog)
        out["pageblock_order"] = pageblock_order(prog, info)
        out["pageblocks"] = read_pageblocks(prog, info, out["pageblock_order"])
        out["disks"] = read_disks(prog)
        wb = prog["global_wb_domain"]
        out["dirty_limit"] = wb.dirty_limit.value_()
        out["global_wb_domain"] = wb.address_
    except DRGN_ERRORS as e:
        raise Bad(f"{spec['vmcore']}: {type(e).__name__}: {e}") from e
    return out


def open_core(path: str) -> Program:
    """A drgn Program on the vmcore. drgn 0.0.22 reads the top page table of an
    ELF core through a virtual segment, which QEMU's dump (paging=false: physical
    segments only) does not have; libkdumpfile translates from VMCOREINFO
    (phys_base, KERNELOFFSET) instead, so ELF cores go through it."""
    os.environ["DRGN_USE_LIBKDUMPFILE_FOR_ELF"] = "1"
    prog = Program()
    try:
        prog.set_core_dump(path)
    except (ValueError, OSError, FaultError) as e:
        raise Bad(f"{path}: {str(e).splitlines()[0]}") from e
    if not prog.flags & drgn.ProgramFlags.IS_LINUX_KERNEL:
        raise Bad(f"{path}: not a Linux kernel core (no VMCOREINFO note)")
    return prog


def load_debug_info(prog: Program, vmlinux: str, module: str) -> Optional[str]:
    """vmlinux and the probe module. drgn finds the loaded module on the kernel's
    module list and places its sections where the kernel's struct module says
    (read_module_sections() reads the same for the report). drgn 0.0.22 knows
    struct module's layout before v6.4 only (core_size; 6.4 moved it to mem[]):
    on 6.12 it loads vmlinux and not the module. Returns None, or why the
    module's debug info is not loaded."""
    try:
        prog.load_debug_info([vmlinux, module])
    except drgn.MissingDebugInfoError as e:
        why = " ".join(str(e).split())
        try:
            prog["init_task"]
        except KeyError:
            raise Bad(f"drgn could not load debug info: {why}") from e
        return f"drgn 0.0.22 did not load it: {why}"
    try:
        prog["ksymlab_results"]
    except KeyError:
        return "drgn did not load the module's symbols (ksymlab_results not found)"
    return None


def results_at_sections(prog: Program, module: str, sections: dict) -> tuple:
    """ksymlab_results without drgn's module loading, as gdb's add-symbol-file
    does it: its type from the module's DWARF (a second, coreless drgn Program),
    its address = the guest's address of its section + its offset there
    (the .ko's symbol table), its bytes from the vmcore.

    :return: (``struct ksymlab_results``, its address)
    """
    side = Program()
    side.load_debug_info([module])
    typ = side.type("struct ksymlab_results")
    section, offset = symbol_place(module, "ksymlab_results")
    if section not in sections:
        raise Bad(f"the guest reported no address for {module}'s {section}")
    addr = int(sections[section]) + offset
    return Object.from_bytes_(side, typ, prog.read(addr, typ.size)), addr


def vmcoreinfo(prog: Program, path: str) -> dict:
    """VMCOREINFO as {KEY: value}: the note in the vmcore, else the guest's own
    copy (vmcoreinfo_data); `_source` says which."""
    text = None
    try:
        text = vmcoreinfo_text(path)
    except OSError:
        pass
    source = "note"
    if text is None:
        source = "guest vmcoreinfo_data"
        try:
            size = prog["vmcoreinfo_size"].value_()
            text = prog.read(prog["vmcoreinfo_data"].value_(), size).decode(errors="replace")
        except (KeyError, FaultError) as e:
            raise Bad(f"{path}: no VMCOREINFO note and no vmcoreinfo_data: {e}") from e
    out = {"_source": source}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key] = value
    return out


def read_symbols(prog: Program, names) -> dict:
    """Address of each name in vmlinux's symbol table (KASLR: drgn applies
    KERNELOFFSET); None for a name vmlinux lacks."""
    out = {}
    for name in names:
        try:
            out[name] = prog.symbol(name).address
        except LookupError:
            out[name] = None
    return out


def read_module_sections(prog: Program, name: str) -> dict:
    """The section addresses of the loaded module as the kernel records them
    (struct module's sect_attrs, what /sys/module/<name>/sections shows)."""
    for mod in list_for_each_entry("struct module", prog["modules"].address_of_(), "list"):
        if mod.name.string_().decode() != name:
            continue
        attrs = mod.sect_attrs
        out = {}
        for i in range(attrs.nsections.value_()):
            a = attrs.attrs[i]
            out[a.battr.attr.name.string_().decode()] = a.address.value_()
        return out
    raise Bad(f"module {name} is not on the kernel's module list")


def devt_text(dev: int) -> str:
    """A dev_t as MAJOR:MINOR (include/linux/kdev_t.h MAJOR(), MINOR())."""
    return f"{dev >> MINORBITS}:{dev & ((1 << MINORBITS) - 1)}"


def read_results(r: Object, addr: int) -> dict:
    """The module's ksymlab_results `r` (at `addr`), through the module's DWARF
    (the same fields gdbscripts/ksymlab_verify.py reads, by another tool).

    :param r: ``struct ksymlab_results``
    """
    prio = [{"pid": s.pid.value_(), "prio": s.prio.value_(), "policy": s.policy.value_(),
             "comm": s.comm.string_().decode(errors="replace")}
            for s in (r.prio[i] for i in range(r.nr_prio.value_()))]
    pageblocks = [{"pfn": s.pfn.value_(), "node": s.nid.value_(), "zid": s.zid.value_(),
                   "mt": s.mt.value_()}
                  for s in (r.pageblocks[i] for i in range(r.nr_pageblocks.value_()))]
    bdevs = [{"name": s.name.string_().decode(errors="replace"),
              "sectors": s.sectors.value_(), "dev": devt_text(s.dev.value_())}
             for s in (r.bdevs[i] for i in range(r.nr_bdevs.value_()))]
    wb = r.wb
    return {"addr": addr, "magic": r.magic.value_(),
            "snapshot_seq": r.snapshot_seq.value_(), "prio": prio,
            "pageblocks": pageblocks, "bdevs": bdevs,
            "frames_pid": r.frames_pid.value_(),
            "frames": [r.frames[i].value_() for i in range(r.nr_frames.value_())],
            "wb": {m.name: getattr(wb, m.name).value_() for m in wb.type_.members}}


def read_tasks(prog: Program) -> dict:
    """Every task drgn's for_each_task() finds (pid IDR of init_pid_ns; the idle
    task has no pid there): task_prio() = prio - MAX_RT_PRIO."""
    out = {}
    for t in for_each_task(prog):
        out[str(t.pid.value_())] = {"comm": t.comm.string_().decode(errors="replace"),
                                    "prio": t.prio.value_() - MAX_RT_PRIO,
                                    "policy": t.policy.value_(), "tgid": t.tgid.value_()}
    return out


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
    skip_bit: int           # PB_migrate_skip
    bits_per_long: int      # BITS_PER_LONG

    @property
    def pages_per_section(self) -> int:
        return 1 << self.pfn_section_shift


def section_geometry(prog: Program, info: dict, order: int) -> SectionGeometry:
    """The geometry of this kernel's sections and pageblocks (see SectionGeometry)."""
    # read in the order the walk always read them: a missing one is named the same
    page_size = int(info["PAGESIZE"])
    pfn_section_shift = int(info["NUMBER(SECTION_SIZE_BITS)"]) - (page_size.bit_length() - 1)
    nr_bits = prog["NR_PAGEBLOCK_BITS"].value_()
    mt_mask = (1 << (prog["PB_migrate_end"].value_() + 1)) - 1
    skip_bit = prog["PB_migrate_skip"].value_()
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
        mt_mask=mt_mask, skip_bit=skip_bit, bits_per_long=bits_per_long)


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

def read_disks(prog: Program) -> list:
    """Every disk and partition: the block class's devices, each the bd_device of
    a struct block_device; whole when it is its own disk's part0; names and
    dev_t through drgn.helpers.linux.block's part_name() and part_devt().

    drgn 0.0.22's for_each_partition()/for_each_disk() would walk the same
    list but cannot here: on 6.1 block_class.p's type is the incomplete
    declaration of struct subsys_private in genhd.c's debug info (0.0.22 does
    not complete it for a member access), and 6.12's struct class has no `p`
    (2df418cf4b72) and struct block_device no bd_partno. So the list is
    walked below, with the complete type.
    """
    try:
        bdevs = list(for_each_partition(prog))
        how = "drgn for_each_partition()"
    except AttributeError:
        bdevs = list(_block_class_bdevs(prog))
        how = "block class klist walk"
    out = []
    for b in bdevs:
        out.append({"name": part_name(b).decode(),
                    "dev": devt_text(part_devt(b).value_()),
                    "sectors": b.bd_nr_sectors.value_(),
                    "whole": int(b.value_() == b.bd_disk.part0.value_()), "walk": how})
    return out


def _block_class_subsys(prog: Program) -> Object:
    """block_class's subsystem, with its complete type.

    :return: ``struct subsys_private *``
    """
    sp_type = prog.pointer_type(prog.type("struct subsys_private"))
    cls = prog["block_class"]
    if cls.type_.has_member("p"):                       # before v6.4
        return drgn.cast(sp_type, cls.p)
    for kobj in list_for_each_entry("struct kobject", prog["class_kset"].list.address_of_(),
                                    "entry"):
        sp = container_of(kobj, "struct subsys_private", "subsys.kobj")
        if sp.member_("class").value_() == cls.address_:
            return sp
    raise Bad("block_class is not registered on class_kset")


def _block_class_bdevs(prog: Program) -> Iterator[Object]:
    """:return: each ``struct block_device *`` on the block class's klist"""
    sp = _block_class_subsys(prog)
    for dp in list_for_each_entry("struct device_private",
                                  sp.klist_devices.k_list.address_of_(),
                                  "knode_class.n_node"):
        yield container_of(dp.device, "struct block_device", "bd_device")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
