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
from pathlib import Path
from typing import Iterator, Optional

import drgn
from drgn import FaultError, Object, Program, container_of
from drgn.helpers.linux.block import for_each_partition, part_devt, part_name
from drgn.helpers.linux.list import list_for_each_entry
from drgn.helpers.linux.pid import for_each_task

from ..guest.vmcore import vmcoreinfo_text
from .drgn import VMCOREINFO_FROM_GUEST, Bad, symbol_place
from .drgn_pageblocks import pageblock_order, read_pageblocks

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
        if mod.name.string_().decode() == name:
            return section_attrs(mod.sect_attrs)
    raise Bad(f"module {name} is not on the kernel's module list")


def section_attrs(attrs: Object) -> dict:
    """Name -> address of each struct module_sect_attrs entry. Up to 6.12
    (kernel/module/sysfs.c) nsections entries of struct module_sect_attr
    {battr, address}; since 6.14 (7.2.12's sysfs.c) the group's NULL-ended
    bin_attrs, the address in each bin_attribute's private."""
    if attrs.type_.type.has_member("nsections"):
        return {a.battr.attr.name.string_().decode(): a.address.value_()
                for a in (attrs.attrs[i] for i in range(attrs.nsections.value_()))}
    out = {}
    battrs = attrs.grp.bin_attrs
    i = 0
    while battrs[i].value_():
        out[battrs[i].attr.name.string_().decode()] = battrs[i].private.value_()
        i += 1
    return out


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
