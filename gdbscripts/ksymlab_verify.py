# ksymlab: read the ground truth from guest memory while QEMU has the VM halted.
#
# Runs inside gdb after vmlinux and the tree's vmlinux-gdb.py are loaded. It
# attaches to the gdbstub (KSYMLAB_GDB_SOCKET) itself, so that a failed
# attach can never fall back to reading the static vmlinux file, loads the
# probe module's symbols at the section addresses the guest reported, and
# stops the guest at ksymlab_snapshot_taken(): there the module's snapshot
# (prio, pageblocks) and the kernel state it was taken from are one instant.
# Everything else (symbols, block devices, writeback) is static by then.
#
# Input (KSYMLAB_GDB_IN, JSON): module path and sections, pageblock order.
# Output (KSYMLAB_GDB_OUT, JSON): what gdb read; KSYMLAB_GDB_ARMED is created
# once the breakpoint is set, the harness's cue to let the guest go on.
# The comparison is the harness's job; this script only reads.

import json
import os
import re
import time

import gdb
import linux.device
import linux.tasks
import linux.utils

# MAX_RT_PRIO and MINORBITS are also stated in harness/oracles/drgn_vmcore.py,
# deliberately: each oracle states its own constants, so that neither takes a
# value from the other or from the kernel code under test.
# include/linux/sched/prio.h: MAX_RT_PRIO is 100 in 6.1 and 6.12.
# It is a macro, absent from DWARF, so it is stated here as the oracle's own
# constant rather than taken from the kernel code under test.
MAX_RT_PRIO = 100
# arch/x86/include/asm/sparsemem.h (x86_64, 6.1 and 6.12): SECTION_SIZE_BITS 27, and
# PAGE_SHIFT 12, so a memory section holds 2^15 pages. Macros, stated here.
PFN_SECTION_SHIFT = 27 - 12
PAGES_PER_SECTION = 1 << PFN_SECTION_SHIFT
BITS_PER_LONG = 64
# include/linux/kdev_t.h: MINORBITS 20.
MINORBITS = 20

# The names the guest reports on its data port (written by the kernel under
# test) reach gdb only in these shapes; the host checks the same before it
# hands them over (harness/oracles/gdb.py). A symbol name is spliced into a gdb
# expression, and gdb expressions can call functions in the guest; a section
# name goes into add-symbol-file's arguments.
SYMBOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# ELF section names also hold "-" (.note.gnu.build-id), never first: a
# leading "-" would read as an add-symbol-file option.
SECTION_NAME = re.compile(r"[.A-Za-z0-9_][-.A-Za-z0-9_]*")
REFUSED = "not a C identifier: not evaluated by gdb"

# What this oracle could read only with a stated value or a caveat; main()
# writes them to the reading's "notes", which the report lists.
NOTES = []


def note(text):
    if text not in NOTES:
        NOTES.append(text)


def is_symbol_name(name):
    return isinstance(name, str) and SYMBOL_NAME.fullmatch(name) is not None


def symbol_address(name):
    """Address of a vmlinux symbol from the ELF/DWARF symbol table, or None;
    a name that is not a C identifier is never evaluated (None)."""
    if not is_symbol_name(name):
        return None
    try:
        return int(gdb.parse_and_eval(f"(unsigned long)&{name}"))
    except gdb.error:
        return None


def read_symbols(names):
    """({name: address or None}, {name: why gdb did not read it}) of the names
    the guest reported; a refused name also gets a note."""
    addresses, refused = {}, {}
    for name in names:
        addresses[name] = symbol_address(name)
        if not is_symbol_name(name):
            refused[name] = REFUSED
            note(f"symbol {name!r} from the guest: {REFUSED}")
    return addresses, refused


def read_tasks():
    """Every thread of every process: pid, comm and task->prio - MAX_RT_PRIO; and the
    fields a sampler could take for prio or pid (the confusion audit,
    harness/checks/confusions.py), on task_prio()'s scale where they have it."""
    tasks = {}
    for t in linux.tasks.task_lists():
        pid = int(t["pid"])
        tasks[str(pid)] = {
            "comm": t["comm"].string(errors="replace"),
            "prio": int(t["prio"]) - MAX_RT_PRIO,
            "policy": int(t["policy"]),
            "normal_prio": int(t["normal_prio"]) - MAX_RT_PRIO,
            "static_prio": int(t["static_prio"]) - MAX_RT_PRIO,
            "rt_priority": int(t["rt_priority"]),
            "tgid": int(t["tgid"]),
        }
    return tasks


# include/linux/mmzone.h, a flag bit low in mem_section.section_mem_map:
# SECTION_IS_ONLINE is bit 2 since 2d070eab2e82 ("mm: consider zone which is
# not fully populated to have holes", v4.13), a macro (1UL<<2) until
# ed7802dd48f7 ("mm: memory_hotplug: enumerate all supported section flags",
# v6.0) made it SECTION_IS_ONLINE_BIT, the third enumerator of an anonymous enum
# (after SECTION_MARKED_PRESENT_BIT and SECTION_HAS_MEM_MAP_BIT; so in 6.1.192
# and 6.12.118). DWARF may leave that enum out; only then is this bit used, and
# the reading's notes say so.
STATED_SECTION_IS_ONLINE_BIT = 2


def section_is_online_bit():
    """SECTION_IS_ONLINE_BIT from DWARF; else STATED_SECTION_IS_ONLINE_BIT, with a
    note, so a stated value never passes for one read from the kernel."""
    try:
        return int(gdb.parse_and_eval("(int)SECTION_IS_ONLINE_BIT"))
    except gdb.error as e:
        why = (str(e).splitlines() or ["gdb.error"])[0]
        note(f"SECTION_IS_ONLINE_BIT is not in vmlinux's DWARF ({why}): the pageblocks' "
             f"online flags use bit {STATED_SECTION_IS_ONLINE_BIT}, stated in "
             "gdbscripts/ksymlab_verify.py from include/linux/mmzone.h as of ed7802dd48f7 "
             "(v6.0)")
        return STATED_SECTION_IS_ONLINE_BIT


def _enum(name):
    """The value of enumerator `name` in vmlinux's DWARF, or None."""
    try:
        return int(gdb.parse_and_eval(f"(int){name}"))
    except gdb.error:
        return None


class Pageblocks:
    """Migratetypes straight from the mem_section pageblock bitmaps.

    The same arithmetic as the kernel's get_pfnblock_flags_mask() (up to
    6.12) and get_pfnblock_migratetype() (7.2), written from
    include/linux/pageblock-flags.h, mmzone.h and mm/page_alloc.c without
    calling kernel code: the section's usage->pageblock_flags holds
    NR_PAGEBLOCK_BITS bits per pageblock, the migratetype in the low three.
    Up to 6.12 enum pageblock_bits has PB_migrate_end, PB_migrate_skip and
    NR_PAGEBLOCK_BITS; in 7.2 PB_migrate_0..2, PB_compact_skip, with
    MEMORY_ISOLATION PB_migrate_isolate (set: the block reads as
    MIGRATE_ISOLATE), and __NR_PAGEBLOCK_BITS rounded up to a power of two.
    """

    def __init__(self, order):
        self.order = order
        end = _enum("PB_migrate_end")
        if end is not None:
            self.nr_bits = _enum("NR_PAGEBLOCK_BITS")
            skip, iso = _enum("PB_migrate_skip"), None
        else:
            end = _enum("PB_migrate_2")
            self.nr_bits = 1 << (_enum("__NR_PAGEBLOCK_BITS") - 1).bit_length()
            skip, iso = _enum("PB_compact_skip"), _enum("PB_migrate_isolate")
        self.mask = (1 << (end + 1)) - 1
        self.iso_bit = 0 if iso is None else 1 << iso
        self.isolate = _enum("MIGRATE_ISOLATE")
        ms_type = gdb.lookup_type("struct mem_section")
        page_size = 1 << 12
        self.per_root = page_size // ms_type.sizeof     # SECTIONS_PER_ROOT, EXTREME
        self.mem_section = gdb.parse_and_eval("mem_section")
        self.ulong = gdb.lookup_type("unsigned long")
        # PB_migrate_skip exists with CONFIG_COMPACTION only (up to 6.12); enums,
        # so in DWARF
        self.skip_bit = 0 if skip is None else 1 << skip
        self.online_bit = 1 << section_is_online_bit()

    def section(self, pfn):
        nr = pfn >> PFN_SECTION_SHIFT
        root = self.mem_section[nr // self.per_root]
        if int(root) == 0:
            return None
        ms = root[nr % self.per_root]
        if int(ms["section_mem_map"]) == 0 or int(ms["usage"]) == 0:
            return None
        return ms

    def migratetype(self, pfn):
        raw = self.raw(pfn)
        return None if raw is None else self.type_of(raw)

    def type_of(self, raw):
        """The migratetype a block's bits read as (7.2: the isolate bit wins)."""
        return self.isolate if raw & self.iso_bit else raw & self.mask

    def raw(self, pfn):
        """All NR_PAGEBLOCK_BITS bits of the pageblock, the skip bit included."""
        ms = self.section(pfn)
        if ms is None:
            return None
        bitidx = ((pfn & (PAGES_PER_SECTION - 1)) >> self.order) * self.nr_bits
        flags = ms["usage"]["pageblock_flags"]
        word = int(flags[bitidx // BITS_PER_LONG].cast(self.ulong))
        return (word >> (bitidx % BITS_PER_LONG)) & ((1 << self.nr_bits) - 1)

    def online(self, pfn):
        """SECTION_IS_ONLINE of the pfn's section: /proc/pagetypeinfo skips offline
        sections (pfn_to_online_page()), a walk by pfn_valid() does not."""
        ms = self.section(pfn)
        return ms is not None and bool(int(ms["section_mem_map"]) & self.online_bit)


def node_zones():
    """(nid, zid, zone) of every populated zone; tinyconfig has no NUMA."""
    try:
        pgdats = [(0, gdb.parse_and_eval("contig_page_data"))]
    except gdb.error:
        nodes = gdb.parse_and_eval("node_data")
        pgdats = [(n, nodes[n].dereference()) for n in range(int(gdb.parse_and_eval(
            "nr_online_nodes")))]
    for nid, pgdat in pgdats:
        zones = pgdat["node_zones"]
        lo, hi = zones.type.range()
        for zid in range(lo, hi + 1):
            z = zones[zid]
            if int(z["present_pages"]):
                yield nid, zid, z


def read_pageblocks(order):
    """Every pageblock of every populated zone, stepped as /proc/pagetypeinfo does."""
    pb = Pageblocks(order)
    per_block = 1 << order
    out = []
    for nid, zid, z in node_zones():
        start = int(z["zone_start_pfn"])
        end = start + int(z["spanned_pages"])
        for pfn in range(start, end, per_block):
            raw = pb.raw(pfn)
            if raw is None:
                continue
            out.append({"node": nid, "zone": z["name"].string(), "zid": zid,
                        "pfn": pfn & ~(per_block - 1), "mt": pb.type_of(raw),
                        "raw": raw, "skip": bool(raw & pb.skip_bit),
                        "online": pb.online(pfn)})
    return out


def block_class_devices():
    """The block class's devices, through the tree's own scripts/gdb helper.

    6.1: struct class points to its subsys_private (class->p) and
    class_for_each_device() takes the class. Since v6.4 (2df418cf4b72,
    "driver core: class: remove subsystem private pointer from struct
    class") it does not: 6.12's class_for_each_device() takes the
    subsys_private, found on class_kset by its ->class pointer.
    """
    cls = gdb.parse_and_eval("block_class")
    if any(f.name == "p" for f in cls.type.strip_typedefs().fields()):
        return linux.device.class_for_each_device(cls)
    for sp in linux.device.for_each_class():
        if int(sp["class"]) == int(cls.address):
            return linux.device.class_for_each_device(sp)
    raise SystemExit("ksymlab-gdb: block_class is not registered on class_kset")


def read_block_class():
    """Every device of the block class: disks and partitions, by the class's klist."""
    bdev_type = gdb.lookup_type("struct block_device").pointer()
    disk_type = symbol_address("disk_type")
    part_type = symbol_address("part_type")
    out = []
    for dev in block_class_devices():
        kind = {disk_type: "disk", part_type: "part"}.get(int(dev["type"]), "other")
        # Disks and partitions are both the bd_device of a block_device (6.1, 6.12).
        bdev = linux.utils.container_of(dev, bdev_type, "bd_device")
        out.append({"name": linux.device.dev_name(dev), "type": kind,
                    "dev": devt_text(int(dev["devt"])), "bd_dev": devt_text(int(bdev["bd_dev"])),
                    "sectors": int(bdev["bd_nr_sectors"]), "partno": bdev_partno(bdev),
                    "hidden": disk_hidden(bdev) if kind == "disk" else None})
    return out


def devt_text(devt):
    return f"{devt >> MINORBITS}:{devt & ((1 << MINORBITS) - 1)}"


def disk_hidden(bdev):
    """GENHD_FL_HIDDEN of the disk's flags (1 << 1 in include/linux/blkdev.h of 6.1
    and 6.12; from the debug info when it has the enumerator): 1 or 0."""
    try:
        bit = int(gdb.parse_and_eval("GENHD_FL_HIDDEN"))
    except gdb.error:
        bit = 1 << 1
    return int(bool(int(bdev["bd_disk"]["flags"]) & bit))


def bdev_partno(bdev):
    """bdev_partno(): bd_partno in 6.1; in 6.12 the low byte
    (BD_PARTNO, 255) of __bd_flags."""
    fields = {f.name for f in bdev.dereference().type.strip_typedefs().fields()}
    if "bd_partno" in fields:
        return int(bdev["bd_partno"])
    return int(bdev["__bd_flags"]["counter"]) & 255


# mm/page-writeback.c: the sysctls domain_dirty_limits() computes from.
DIRTY_SYSCTLS = ("vm_dirty_bytes", "dirty_background_bytes", "vm_dirty_ratio",
                 "dirty_background_ratio")


def read_dirty_sysctls():
    return {name: int(gdb.parse_and_eval(name)) for name in DIRTY_SYSCTLS}


def config_hz():
    """CONFIG_HZ from the .config beside vmlinux (HZ is a macro, not in DWARF)."""
    vmlinux = gdb.current_progspace().filename
    try:
        with open(os.path.join(os.path.dirname(vmlinux), ".config")) as f:
            for line in f:
                if line.startswith("CONFIG_HZ="):
                    return int(line.split("=", 1)[1])
    except OSError:
        pass
    return None


def read_results():
    """The module's own ksymlab_results, through the module's DWARF types."""
    r = gdb.parse_and_eval("ksymlab_results")
    prio = []
    for i in range(int(r["nr_prio"])):
        s = r["prio"][i]
        prio.append({"pid": int(s["pid"]), "prio": int(s["prio"]),
                     "policy": int(s["policy"]),
                     "comm": s["comm"].string(errors="replace")})
    pageblocks = []
    for i in range(int(r["nr_pageblocks"])):
        s = r["pageblocks"][i]
        pageblocks.append({"pfn": int(s["pfn"]), "node": int(s["nid"]), "zid": int(s["zid"]),
                           "mt": int(s["mt"])})
    bdevs = []
    for i in range(int(r["nr_bdevs"])):
        s = r["bdevs"][i]
        devt = int(s["dev"])
        bdevs.append({"name": s["name"].string(), "sectors": int(s["sectors"]),
                      "dev": f"{devt >> MINORBITS}:{devt & ((1 << MINORBITS) - 1)}"})
    wb = r["wb"]
    return {
        "addr": int(r.address),
        "magic": int(r["magic"]),
        "snapshot_seq": int(r["snapshot_seq"]),
        "prio": prio,
        "pageblocks": pageblocks,
        "bdevs": bdevs,
        "frames_pid": int(r["frames_pid"]),
        "frames": [int(r["frames"][i]) for i in range(int(r["nr_frames"]))],
        "wb": {f.name: int(wb[f.name]) for f in wb.type.fields()},
    }


def attach(socket):
    try:
        gdb.execute(f"target remote {socket}", to_string=True)
    except gdb.error as e:
        raise SystemExit(f"ksymlab-gdb: cannot attach to {socket}: {e}")
    if not gdb.selected_inferior().threads():
        raise SystemExit(f"ksymlab-gdb: {socket}: attached, but the target has no threads")


def load_module(ko, sections):
    """add-symbol-file at the addresses of /sys/module/<name>/sections."""
    if ".text" not in sections:
        raise SystemExit("ksymlab-gdb: the guest reported no .text section for the module")
    for name in sections:
        if not SECTION_NAME.fullmatch(name):
            raise SystemExit(f"ksymlab-gdb: the guest reported module section {name!r}: "
                             "not [.A-Za-z0-9_][-.A-Za-z0-9_]*, not given to add-symbol-file")
    args = [f"add-symbol-file {ko} {sections['.text']:#x}"]
    args += [f"-s {name} {addr:#x}" for name, addr in sorted(sections.items())
             if name != ".text"]
    gdb.execute(" ".join(args), to_string=True)


def stop_at_snapshot(armed_file, bp=None, after=None):
    """Continue to the next ksymlab_snapshot_taken(); arm the breakpoint first if
    `bp` is None. Returns (where it stopped, the breakpoint); the caller deletes it.
    With `after` (the sequence already read), a stop that is still at that
    snapshot is continued again: QEMU's dump-guest-memory stops and resumes the
    VM while gdb holds it, and gdb may see that as one more stop at the same pc."""
    if bp is None:
        bp = gdb.Breakpoint("ksymlab_snapshot_taken", internal=True)
        for loc in getattr(bp, "locations", []) or []:
            print(f"ksymlab-gdb: breakpoint at {loc.address:#x}")
        with open(armed_file, "w") as f:
            f.write(f"{bp.location}\n")
    gdb.execute("continue", to_string=True)
    for _ in range(10):
        if after is None or int(gdb.parse_and_eval("ksymlab_results.snapshot_seq")) > after:
            break
        gdb.execute("continue", to_string=True)
    frame = gdb.selected_frame()
    if frame.name() != "ksymlab_snapshot_taken":
        raise SystemExit(f"ksymlab-gdb: the guest stopped in {frame.name()} at "
                         f"{frame.pc():#x}, not at ksymlab_snapshot_taken")
    try:
        seq = int(gdb.parse_and_eval("seq"))
    except gdb.error:           # the argument's location may be optimised out
        seq = None
    return {"function": frame.name(), "pc": frame.pc(), "seq": seq}, bp


def read_snapshot(stop, order):
    """What changes from one snapshot to the next, read at its stop."""
    return {"stop": stop, "results": read_results(), "tasks": read_tasks(),
            "pageblocks": read_pageblocks(order)}


def hold_for_host(hold_file, release_file, timeout=600):
    """Keep the guest stopped where gdb stopped it (the first snapshot) while the
    host has QEMU dump its memory (harness/guest/vmcore.py): create `hold_file`, wait
    for `release_file`. Only when the harness asks for it (KSYMLAB_GDB_HOLD)."""
    with open(hold_file, "w") as f:
        f.write(f"{gdb.selected_frame().pc():#x}\n")
    end = time.monotonic() + timeout
    while not os.path.exists(release_file):
        if time.monotonic() > end:
            raise SystemExit(f"ksymlab-gdb: the host did not release the guest within "
                             f"{timeout} s")
        time.sleep(0.05)


def begin(socket, claims):
    """Attach, place the probe module and read its symbols: the reading so far."""
    attach(socket)
    load_module(claims["module"], {k: int(v) for k, v in claims["sections"].items()})
    symbols, refused = read_symbols(claims["symbols"])
    result = {"symbols": symbols, "_text": symbol_address("_text")}
    if refused:
        result["symbol_errors"] = refused
    return result


def read_first(result, stop, order):
    """At the first snapshot's stop: what moves (the top-level keys, which the
    vmcore is compared with) and what is static by then."""
    first = read_snapshot(stop, order)
    result.update(first)
    result["block_class"] = read_block_class()
    result["dirty_limit"] = int(gdb.parse_and_eval("global_wb_domain.dirty_limit"))
    result["global_wb_domain"] = symbol_address("global_wb_domain")
    result["dirty_sysctl"] = read_dirty_sysctls()
    result["jiffies"] = int(gdb.parse_and_eval("jiffies_64"))
    result["config_hz"] = config_hz()
    result["snapshots"] = [first]


def read_next(result, bp, order):
    """Continue to the next snapshot and read what moves; returns the breakpoint."""
    stop, bp = stop_at_snapshot(None, bp,
                                after=result["snapshots"][-1]["results"]["snapshot_seq"])
    result["snapshots"].append(read_snapshot(stop, order))
    return bp


def write_reading(result, path):
    """The reading as gdb.json holds it, its notes included."""
    if NOTES:
        result["notes"] = list(NOTES)
    with open(path, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)


def main():
    with open(os.environ["KSYMLAB_GDB_IN"]) as f:
        claims = json.load(f)
    result = begin(os.environ["KSYMLAB_GDB_SOCKET"], claims)
    stop, bp = stop_at_snapshot(os.environ["KSYMLAB_GDB_ARMED"])
    # The guest is halted inside the snapshot from here on.
    read_first(result, stop, claims["pageblock_order"])
    # The vmcore is compared with the first snapshot's values (the top-level
    # keys), so QEMU dumps the guest here, before gdb lets it go on.
    if os.environ.get("KSYMLAB_GDB_HOLD"):
        hold_for_host(os.environ["KSYMLAB_GDB_HOLD"], os.environ["KSYMLAB_GDB_RELEASE"])
    # Every further snapshot the guest announced (claims "snapshots"): stop at
    # each hit and read what moves; the top-level keys stay the first one's.
    for _ in range(1, int(claims.get("snapshots", 1))):
        bp = read_next(result, bp, claims["pageblock_order"])
    bp.delete()
    write_reading(result, os.environ["KSYMLAB_GDB_OUT"])
    print(f"ksymlab-gdb: {len(result['symbols'])} symbols, {len(result['tasks'])} tasks, "
          f"{len(result['pageblocks'])} pageblocks, {len(result['block_class'])} block "
          f"devices read at snapshot {result['stop']['seq']}")
    for snap in result["snapshots"][1:]:
        print(f"ksymlab-gdb: {len(snap['pageblocks'])} pageblocks read at snapshot "
              f"{snap['stop']['seq']}")
    for text in NOTES:
        print(f"ksymlab-gdb: note: {text}")


# Sourced by gdb, this is __main__; gdbscripts/ksymlab_lttng.py imports it for
# its readers (read_tasks, read_block_class, attach) without running main().
if __name__ == "__main__":
    main()
