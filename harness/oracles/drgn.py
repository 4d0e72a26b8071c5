"""The third oracle: drgn reads the vmcore QEMU wrote at the snapshot.

Two halves in one file:
- read() runs in the harness (any Python): it writes drgn-in.json and runs
  this file as `/usr/bin/python3 -m harness.drgn_oracle IN OUT` (Debian's
  python3-drgn lives in /usr/bin/python3's dist-packages), logging to
  drgn.log; a failure comes back as {"error": ...}, never as an exception,
  so gdb's checks still count and the drgn rows say what is missing.
- main() runs under drgn: it opens the vmcore (drgn finds the kernel's page
  tables and KASLR offset through the VMCOREINFO note), loads vmlinux and
  the probe module's DWARF, and reads, with drgn's own helpers where 0.0.22
  has them:
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
  and writes them as JSON.

drgn 0.0.22 has no task_prio() or pageblock helper, so those two are read
from the fields, with the arithmetic written here (see each function).
"""

import json
import sys
import time
from pathlib import Path

PYTHON = "/usr/bin/python3"
DRGN_TIMEOUT = 600

# include/linux/sched/prio.h: MAX_RT_PRIO is 100 in 6.1 and 6.12; a macro,
# absent from DWARF and VMCOREINFO, so the oracle states it (task_prio() is
# p->prio - MAX_RT_PRIO, kernel/sched/core.c).
MAX_RT_PRIO = 100
# include/linux/kdev_t.h: MINORBITS 20.
MINORBITS = 20
# Where VMCOREINFO comes from when the guest handed it to QEMU; anything else
# (a note synthesized from vmlinux) is a fallback.
VMCOREINFO_FROM_GUEST = ("note",)


# ---------------------------------------------------------------- harness side

def read(dumped, tree, claims, vdir, variant="", slide=0, keep=True):
    """Run drgn on the vmcore `dumped` (vmcore.take()); return its JSON or {"error"}.
    Unless `keep`, a vmcore drgn has read is removed (it is as large as the guest's
    RAM); one drgn could not read stays for a look."""
    from .. import paths
    from ..guest import vmcore
    from ..errors import HarnessError
    from ..proc import run_logged
    from ..progress import say

    if not dumped:
        return {"error": "no vmcore: the snapshot was never held for a dump"}
    if dumped.get("error"):
        return {"error": f"no vmcore: {dumped['error']}"}
    vdir = Path(vdir).resolve()
    in_file, out_file, log = vdir / "drgn-in.json", vdir / "drgn.json", vdir / "drgn.log"
    for f in (out_file, log):
        if f.exists():
            f.unlink()
    core, synthesized = str(Path(dumped["path"]).resolve()), False
    try:
        if dumped.get("format") == "elf" and vmcore.vmcoreinfo_text(core) is None:
            # The guest gave QEMU no VMCOREINFO (a kernel without crash_core or
            # fw_cfg): drgn still reads the dump with one made from vmlinux,
            # and the vmcoreinfo row fails, saying so.
            core = str(vmcore.add_vmcoreinfo(core, vdir / "vmcore.synthesized",
                                             synthesized_vmcoreinfo(tree, slide)))
            synthesized = True
    except (OSError, HarnessError) as e:
        return {"error": f"{core}: {e}"}
    in_file.write_text(json.dumps({
        "vmcore": core, "synthesized": synthesized,
        "vmlinux": str(tree.vmlinux), "module": claims["module"],
        "sections": claims["sections"], "symbols": claims["symbols"],
        "pageblock_order": claims["pageblock_order"]}, indent=1))
    t0 = time.monotonic()
    try:
        run_logged("drgn", [PYTHON, "-m", "harness.oracles.drgn", in_file, out_file], log,
                   cwd=paths.REPO, timeout=DRGN_TIMEOUT)
        out = json.loads(out_file.read_text())
    except HarnessError as e:
        if e.message == "interrupted":
            raise
        return {"error": _last_line(log) or e.message}
    except (OSError, ValueError) as e:
        return {"error": f"{out_file}: {e}"}
    out["seconds"] = round(time.monotonic() - t0, 2)
    if not keep:
        for f in {Path(dumped["path"]), Path(core)}:
            f.unlink(missing_ok=True)
    say("drgn", f"{variant}: read {len(out['tasks'])} tasks, {len(out['pageblocks'])} "
                f"pageblocks, {len(out['disks'])} block devices from the vmcore in "
                f"{out['seconds']} s")
    return out


def synthesized_vmcoreinfo(tree, slide=0):
    """The VMCOREINFO lines drgn (through libkdumpfile) needs, from vmlinux:
    kernel/crash_core.c and arch/x86/kernel/crash_core_64.c write the same
    keys. phys_base 0 holds only where the kernel runs at its link-time
    physical address (nokaslr); with KASLR the physical base moves too, and
    a synthesized note cannot know it."""
    from ..guest.kaslr import symbol_addresses
    syms = symbol_addresses(tree.vmlinux, ("init_top_pgt", "mem_section"))
    release = (Path(tree.vmlinux).parent / "include/config/kernel.release").read_text().strip()
    return "".join(f"{k}={v}\n" for k, v in (
        ("OSRELEASE", release), ("PAGESIZE", 4096),
        # drgn wants swapper_pg_dir, libkdumpfile init_top_pgt: one table on x86_64
        ("SYMBOL(swapper_pg_dir)", f"{syms['init_top_pgt'] + slide:x}"),
        ("SYMBOL(init_top_pgt)", f"{syms['init_top_pgt'] + slide:x}"),
        ("SYMBOL(mem_section)", f"{syms['mem_section'] + slide:x}"),
        # arch/x86/include/asm/sparsemem.h, x86_64
        ("NUMBER(SECTION_SIZE_BITS)", 27),
        ("NUMBER(phys_base)", 0), ("NUMBER(pgtable_l5_enabled)", 0),
        ("KERNELOFFSET", f"{slide:x}")))


def _last_line(log):
    try:
        lines = [x for x in Path(log).read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return None
    for line in lines:
        if line.startswith("ksymlab-drgn:"):
            return line
    return lines[-1] if lines else None


def summary(dumped, truth):
    """What the report states about the vmcore and drgn's read (a variant fact)."""
    out = {k: dumped.get(k) for k in ("format", "bytes", "seconds", "status", "error")
           if dumped.get(k) is not None}
    if truth.get("error"):
        out["drgn_error"] = truth["error"]
    else:
        out["drgn_seconds"] = truth.get("seconds")
        out["vmcoreinfo"] = truth.get("vmcoreinfo", {}).get("present")
    return out


# ------------------------------------------------------------------ drgn side

class Bad(Exception):
    """Input drgn cannot read: one line, exit status 43 (errors.EXIT["drgn"])."""


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m harness.drgn_oracle IN.json OUT.json", file=sys.stderr)
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
    except _drgn_errors() as e:
        raise Bad(f"{spec['vmcore']}: {type(e).__name__}: {e}") from e
    return out


def _drgn_errors():
    import drgn
    return (drgn.FaultError, drgn.ObjectAbsentError, LookupError, AttributeError, ValueError)


def open_core(path):
    """A drgn Program on the vmcore. drgn 0.0.22 reads the top page table of an
    ELF core through a virtual segment, which QEMU's dump (paging=false: physical
    segments only) does not have; libkdumpfile translates from VMCOREINFO
    (phys_base, KERNELOFFSET) instead, so ELF cores go through it."""
    import os
    import drgn
    os.environ["DRGN_USE_LIBKDUMPFILE_FOR_ELF"] = "1"
    prog = drgn.Program()
    try:
        prog.set_core_dump(path)
    except (ValueError, OSError, drgn.FaultError) as e:
        raise Bad(f"{path}: {str(e).splitlines()[0]}") from e
    if not prog.flags & drgn.ProgramFlags.IS_LINUX_KERNEL:
        raise Bad(f"{path}: not a Linux kernel core (no VMCOREINFO note)")
    return prog


def load_debug_info(prog, vmlinux, module):
    """vmlinux and the probe module. drgn finds the loaded module on the kernel's
    module list and places its sections where the kernel's struct module says
    (read_module_sections() reads the same for the report). drgn 0.0.22 knows
    struct module's layout before v6.4 only (core_size; 6.4 moved it to mem[]):
    on 6.12 it loads vmlinux and not the module. Returns None, or why the
    module's debug info is not loaded."""
    import drgn
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


def results_at_sections(prog, module, sections):
    """ksymlab_results without drgn's module loading, as gdb's add-symbol-file
    does it: its type from the module's DWARF (a second, coreless drgn Program),
    its address = the guest's address of its section + its offset there
    (the .ko's symbol table), its bytes from the vmcore."""
    import drgn
    side = drgn.Program()
    side.load_debug_info([module])
    typ = side.type("struct ksymlab_results")
    section, offset = symbol_place(module, "ksymlab_results")
    if section not in sections:
        raise Bad(f"the guest reported no address for {module}'s {section}")
    addr = int(sections[section]) + offset
    return drgn.Object.from_bytes_(side, typ, prog.read(addr, typ.size)), addr


def symbol_place(ko, name):
    """(section name, offset) of a symbol of a relocatable ELF (readelf)."""
    import subprocess
    shdrs = subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                           check=True).stdout
    names = {}
    for line in shdrs.splitlines():
        line = line.strip()
        if line.startswith("[") and "]" in line:
            idx, rest = line[1:].split("]", 1)
            if idx.strip().isdigit() and rest.split():
                names[int(idx)] = rest.split()[0]
    syms = subprocess.run(["readelf", "-sW", ko], capture_output=True, text=True,
                          check=True).stdout
    for line in syms.splitlines():
        f = line.split()
        if len(f) == 8 and f[7] == name and f[6].isdigit():
            return names[int(f[6])], int(f[1], 16)
    raise Bad(f"{ko}: no symbol {name}")


def vmcoreinfo(prog, path):
    """VMCOREINFO as {KEY: value}: the note in the vmcore, else the guest's own
    copy (vmcoreinfo_data); `_source` says which."""
    from ..guest.vmcore import vmcoreinfo_text
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
        except (KeyError, _drgn_errors()[0]) as e:
            raise Bad(f"{path}: no VMCOREINFO note and no vmcoreinfo_data: {e}") from e
    out = {"_source": source}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key] = value
    return out


def read_symbols(prog, names):
    """Address of each name in vmlinux's symbol table (KASLR: drgn applies
    KERNELOFFSET); None for a name vmlinux lacks."""
    out = {}
    for name in names:
        try:
            out[name] = prog.symbol(name).address
        except LookupError:
            out[name] = None
    return out


def read_module_sections(prog, name):
    """The section addresses of the loaded module as the kernel records them
    (struct module's sect_attrs, what /sys/module/<name>/sections shows)."""
    from drgn.helpers.linux.list import list_for_each_entry
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


def read_results(r, addr):
    """The module's ksymlab_results `r` (at `addr`), through the module's DWARF
    (the same fields gdbscripts/ksymlab_verify.py reads, by another tool)."""

    def devt(v):
        return f"{v >> MINORBITS}:{v & ((1 << MINORBITS) - 1)}"
    prio = [{"pid": s.pid.value_(), "prio": s.prio.value_(), "policy": s.policy.value_(),
             "comm": s.comm.string_().decode(errors="replace")}
            for s in (r.prio[i] for i in range(r.nr_prio.value_()))]
    pageblocks = [{"pfn": s.pfn.value_(), "node": s.nid.value_(), "zid": s.zid.value_(),
                   "mt": s.mt.value_()}
                  for s in (r.pageblocks[i] for i in range(r.nr_pageblocks.value_()))]
    bdevs = [{"name": s.name.string_().decode(errors="replace"),
              "sectors": s.sectors.value_(), "dev": devt(s.dev.value_())}
             for s in (r.bdevs[i] for i in range(r.nr_bdevs.value_()))]
    wb = r.wb
    return {"addr": addr, "magic": r.magic.value_(),
            "snapshot_seq": r.snapshot_seq.value_(), "prio": prio,
            "pageblocks": pageblocks, "bdevs": bdevs,
            "frames_pid": r.frames_pid.value_(),
            "frames": [r.frames[i].value_() for i in range(r.nr_frames.value_())],
            "wb": {m.name: getattr(wb, m.name).value_() for m in wb.type_.members}}


def read_tasks(prog):
    """Every task drgn's for_each_task() finds (pid IDR of init_pid_ns; the idle
    task has no pid there): task_prio() = prio - MAX_RT_PRIO."""
    from drgn.helpers.linux.pid import for_each_task
    out = {}
    for t in for_each_task(prog):
        out[str(t.pid.value_())] = {"comm": t.comm.string_().decode(errors="replace"),
                                    "prio": t.prio.value_() - MAX_RT_PRIO,
                                    "policy": t.policy.value_(), "tgid": t.tgid.value_()}
    return out


def pageblock_order(prog, info):
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


def _pgdats(prog):
    """(nid, pg_data_t) of every online node; tinyconfig has no NUMA (contig_page_data)."""
    try:
        return [(0, prog["contig_page_data"])]
    except KeyError:
        from drgn.helpers.linux.nodemask import for_each_online_node
        return [(nid, prog["node_data"][nid][0]) for nid in for_each_online_node(prog)]


def read_pageblocks(prog, info, order):
    """Every pageblock of every populated zone, stepped from the zone's first pfn
    as /proc/pagetypeinfo and the module do, its migratetype (and skip bit) read
    from the section's usage->pageblock_flags bitmap: NR_PAGEBLOCK_BITS bits per
    pageblock, the migratetype in bits 0..PB_migrate_end (include/linux/mmzone.h,
    pageblock-flags.h; the enums from DWARF, the section geometry from
    VMCOREINFO). A pageblock counts when its section has a mem_map and a usage
    block and drgn's pfn_to_page() gives a readable struct page."""
    from drgn.helpers.linux.mm import pfn_to_page
    page_size = int(info["PAGESIZE"])
    pfn_section_shift = int(info["NUMBER(SECTION_SIZE_BITS)"]) - (page_size.bit_length() - 1)
    pages_per_section = 1 << pfn_section_shift
    nr_bits = prog["NR_PAGEBLOCK_BITS"].value_()
    mask = (1 << (prog["PB_migrate_end"].value_() + 1)) - 1
    skip_bit = prog["PB_migrate_skip"].value_()
    has_mem_map = 1 << prog["SECTION_HAS_MEM_MAP_BIT"].value_()
    bits_per_long = 8 * prog.type("unsigned long").size
    mem_section = prog["mem_section"]
    extreme = mem_section.type_.kind.name == "POINTER"
    per_root = page_size // prog.type("struct mem_section").size if extreme else \
        len(mem_section[0])
    per_block = 1 << order

    def section(pfn):
        nr = pfn >> pfn_section_shift
        root = mem_section[nr // per_root]
        if extreme and not root.value_():
            return None
        ms = root[nr % per_root]
        if not ms.section_mem_map.value_() & has_mem_map or not ms.usage.value_():
            return None
        return ms

    import drgn
    map_mask = ~((1 << prog["SECTION_MAP_LAST_BIT"].value_()) - 1)
    page_size_of = prog.type("struct page").size

    def page_of(pfn, ms):
        """drgn's pfn_to_page(); where drgn knows no vmemmap (libkdumpfile without
        it in VMCOREINFO), the section's encoded mem_map (mm/sparse.c:
        section_mem_map = mem_map - section's first pfn, flag bits below
        SECTION_MAP_LAST_BIT) plus pfn."""
        try:
            return pfn_to_page(prog, pfn)
        except KeyError:
            addr = (ms.section_mem_map.value_() & map_mask) + pfn * page_size_of
            return drgn.Object(prog, "struct page *", addr & (2**64 - 1))

    out = []
    for nid, pgdat in _pgdats(prog):
        zones = pgdat.node_zones
        for zid in range(len(zones)):
            z = zones[zid]
            if not z.present_pages.value_():
                continue
            start = z.zone_start_pfn.value_()
            for pfn in range(start, start + z.spanned_pages.value_(), per_block):
                ms = section(pfn)
                if ms is None:
                    continue
                try:
                    page_of(pfn, ms).flags.value_()
                except drgn.FaultError:
                    continue
                bitidx = ((pfn & (pages_per_section - 1)) >> order) * nr_bits
                word = ms.usage.pageblock_flags[bitidx // bits_per_long].value_()
                bits = word >> (bitidx % bits_per_long)
                out.append({"node": nid, "zone": z.name.string_().decode(), "zid": zid,
                            "pfn": pfn & ~(per_block - 1), "mt": bits & mask,
                            "skip": (bits >> skip_bit) & 1})
    return out


def read_disks(prog):
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
    from drgn.helpers.linux.block import for_each_partition, part_devt, part_name
    try:
        bdevs = list(for_each_partition(prog))
        how = "drgn for_each_partition()"
    except AttributeError:
        bdevs = list(_block_class_bdevs(prog))
        how = "block class klist walk"
    out = []
    for b in bdevs:
        dev = part_devt(b).value_()
        out.append({"name": part_name(b).decode(),
                    "dev": f"{dev >> MINORBITS}:{dev & ((1 << MINORBITS) - 1)}",
                    "sectors": b.bd_nr_sectors.value_(),
                    "whole": int(b.value_() == b.bd_disk.part0.value_()), "walk": how})
    return out


def _block_class_subsys(prog):
    """block_class's struct subsys_private, with its complete type."""
    import drgn
    from drgn import container_of
    from drgn.helpers.linux.list import list_for_each_entry
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


def _block_class_bdevs(prog):
    from drgn import container_of
    from drgn.helpers.linux.list import list_for_each_entry
    sp = _block_class_subsys(prog)
    for dp in list_for_each_entry("struct device_private",
                                  sp.klist_devices.k_list.address_of_(),
                                  "knode_class.n_node"):
        yield container_of(dp.device, "struct block_device", "bd_device")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
