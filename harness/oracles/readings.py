"""What the two memory oracles report, as typed records, parsed at the boundary.

GdbReading is gdb.json, written by gdbscripts/ksymlab_verify.py inside gdb
(harness/oracles/gdb.py GdbSession.finish() parses it); DrgnReading is
drgn.json, written by harness/oracles/drgn_vmcore.py under drgn
(harness/oracles/drgn.py read() parses it). parse() checks every key the
producer always writes and the JSON type of each value; a missing key or a
value of another type raises HarnessError("gdb" or "drgn") with one line that
names the key (`gdb.json: results.prio[3].pid: missing`), instead of a KeyError
later or a silent None in a row.

The checks (harness/checks/) read the records' attributes: a key the
producer may leave out is Optional (None), never one the parse let slip;
keys a record does not name are not read. Each field says where in the
kernel (or in the probe module's struct ksymlab_results,
probe-module/ksymlab.h) its value is read.
"""

import json
from dataclasses import MISSING, dataclass, field, fields
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Tuple

from ..errors import HarnessError

__all__ = ["GdbReading", "DrgnReading", "GdbSnapshot", "ModuleResults", "PrioSample",
           "PageblockSample", "BdevSample", "WbSample", "Stop", "DirtySysctl", "GdbTask",
           "GdbPageblock", "BlockClassDevice", "Vmcoreinfo", "DrgnTask", "DrgnPageblock",
           "DrgnDisk"]


# ---- checking one JSON value ----

class _Bad(Exception):
    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


def _kind(v):
    return {type(None): "null", bool: "a boolean", int: "an integer", float: "a number",
            str: "a string", list: "a list", dict: "an object"}.get(type(v), type(v).__name__)


def _scalar(*types, name):
    def check(v, path):
        # JSON true/false are not numbers here, though Python's bool is an int
        if isinstance(v, bool) and bool not in types or not isinstance(v, types):
            raise _Bad(path, f"is {_kind(v)}, not {name}")
        return v
    return check


INT = _scalar(int, name="an integer")
STR = _scalar(str, name="a string")
BOOL = _scalar(bool, name="a boolean")
NUMBER = _scalar(int, float, name="a number")


def optional(check):
    return lambda v, path: None if v is None else check(v, path)


def list_of(check):
    def checked(v, path):
        if not isinstance(v, list):
            raise _Bad(path, f"is {_kind(v)}, not a list")
        return tuple(check(x, f"{path}[{i}]") for i, x in enumerate(v))
    return checked


def map_of(check):
    """An object with any keys (pids, symbol names), each value checked."""
    def checked(v, path):
        if not isinstance(v, dict):
            raise _Bad(path, f"is {_kind(v)}, not an object")
        return MappingProxyType({k: check(x, f"{path}[{json.dumps(k)}]") for k, x in v.items()})
    return checked


def record(cls):
    return lambda v, path: _record(cls, v, path)


def _record(cls, value, path):
    """cls from the JSON object `value`: every field with a check, by its key."""
    if not isinstance(value, dict):
        raise _Bad(path or "the reading", f"is {_kind(value)}, not an object")
    kw = {}
    for f in fields(cls):
        check = f.metadata.get("check")
        if check is None:
            continue
        key = f.metadata.get("key", f.name)
        where = f"{path}.{key}" if path else key
        if key in value:
            kw[f.name] = check(value[key], where)
        elif f.metadata.get("required", f.default is MISSING and f.default_factory is MISSING):
            raise _Bad(where, "missing")
    return cls(**kw)


def _f(check: Callable, key: Optional[str] = None, default: Any = MISSING, required=None,
       default_factory: Any = MISSING):
    """A field read from JSON key `key` (default: its name) through `check`."""
    meta = {"check": check}
    if key is not None:
        meta["key"] = key
    if required is not None:
        meta["required"] = required
    return field(default=default, default_factory=default_factory, metadata=meta)


class _Parsed:
    """parse() of a top-level reading."""
    STEP = ""
    SOURCE = ""

    @classmethod
    def parse(cls, d, source=None):
        """The record of the reading `d`; HarnessError(STEP) naming the first bad key.
        The record shares nothing with `d` (lists become tuples, objects read-only
        mappings), so it cannot change after the parse."""
        try:
            return cls._parse(d)
        except _Bad as e:
            raise HarnessError(cls.STEP, f"{source or cls.SOURCE}: {e}") from None

    @classmethod
    def _parse(cls, d):
        return _record(cls, d, "")


# ---- the probe module's ksymlab_results, as both oracles read it ----

@dataclass(frozen=True)
class PrioSample:
    """One struct ksymlab_prio_sample of ksymlab_results.prio[]."""
    pid: int = _f(INT)              # pid_t pid: task_struct.pid
    prio: int = _f(INT)             # int prio: task_prio() as the module read it
    policy: int = _f(INT)           # unsigned int policy: task_struct.policy (SCHED_*)
    comm: str = _f(STR)             # char comm[TASK_COMM_LEN]: task_struct.comm


@dataclass(frozen=True)
class PageblockSample:
    """One struct ksymlab_pageblock_sample of ksymlab_results.pageblocks[]."""
    pfn: int = _f(INT)              # unsigned long pfn: the pageblock's first page frame
    node: int = _f(INT)             # u8 nid: the zone's node (zone_to_nid())
    zid: int = _f(INT)              # u8 zid: index in pg_data_t.node_zones (enum zone_type)
    mt: int = _f(INT)               # u8 mt: get_pfnblock_flags_mask() & MIGRATETYPE_MASK


@dataclass(frozen=True)
class BdevSample:
    """One struct ksymlab_bdev_sample of ksymlab_results.bdevs[]."""
    name: str = _f(STR)             # char name[KSYMLAB_NAME_LEN]: the disk or partition name
    sectors: int = _f(INT)          # u64 sectors: bdev_nr_sectors()
    dev: str = _f(STR)              # dev_t dev as MAJOR:MINOR (kdev_t.h, MINORBITS 20)


@dataclass(frozen=True)
class WbSample:
    """struct ksymlab_wb_sample of ksymlab_results.wb (the writeback tracepoint probes)."""
    global_dirty_state_hits: int = _f(INT)      # u64: global_dirty_state events seen
    balance_dirty_pages_hits: int = _f(INT)     # u64: balance_dirty_pages events seen
    dirty_limit: int = _f(INT)      # unsigned long: the domain's dirty_limit (global_dirty_state)
    dirty_thresh: int = _f(INT)     # unsigned long: the last global_dirty_state's thresholds
    background_thresh: int = _f(INT)
    bdp_limit: int = _f(INT)        # unsigned long: the dirty limit balance_dirty_pages saw


@dataclass(frozen=True)
class ModuleResults:
    """struct ksymlab_results, the module's claims in its own memory."""
    addr: int = _f(INT)             # &ksymlab_results
    magic: int = _f(INT)            # u32 magic: KSYMLAB_MAGIC "ksym" when found right
    snapshot_seq: int = _f(INT)     # u32 snapshot_seq: the snapshot these came from
    prio: Tuple[PrioSample, ...] = _f(list_of(record(PrioSample)))        # prio[nr_prio]
    pageblocks: Tuple[PageblockSample, ...] = _f(list_of(record(PageblockSample)))
    bdevs: Tuple[BdevSample, ...] = _f(list_of(record(BdevSample)))       # bdevs[nr_bdevs]
    frames_pid: int = _f(INT)       # pid_t frames_pid: whose user stack frames[] is
    frames: Tuple[int, ...] = _f(list_of(INT))      # unsigned long frames[nr_frames]
    wb: WbSample = _f(record(WbSample))     # struct ksymlab_wb_sample wb


# ---- gdb: gdbscripts/ksymlab_verify.py ----

@dataclass(frozen=True)
class Stop:
    """Where gdb stopped the guest: its selected frame at the breakpoint."""
    function: str = _f(STR)         # the frame's function: ksymlab_snapshot_taken
    pc: int = _f(INT)               # the frame's pc
    seq: Optional[int] = _f(optional(INT))   # its u32 seq argument; None if optimised out


@dataclass(frozen=True)
class GdbTask:
    """One thread on the task lists (scripts/gdb linux.tasks.task_lists())."""
    comm: str = _f(STR)             # task_struct.comm
    prio: int = _f(INT)             # task_struct.prio - MAX_RT_PRIO (= task_prio())
    policy: int = _f(INT)           # task_struct.policy
    # what a sampler could confuse prio and pid with (checks/confusions.py); None
    # in a reading made before gdb read them
    normal_prio: Optional[int] = _f(optional(INT), default=None)   # - MAX_RT_PRIO
    static_prio: Optional[int] = _f(optional(INT), default=None)   # - MAX_RT_PRIO
    rt_priority: Optional[int] = _f(optional(INT), default=None)
    tgid: Optional[int] = _f(optional(INT), default=None)


@dataclass(frozen=True)
class GdbPageblock:
    """One pageblock of a populated zone, from its section's pageblock bitmap."""
    node: int = _f(INT)             # the pg_data_t's node id
    zone: str = _f(STR)             # struct zone.name
    zid: int = _f(INT)              # index in pg_data_t.node_zones
    pfn: int = _f(INT)              # the pageblock's first pfn
    mt: int = _f(INT)               # raw & MIGRATETYPE_MASK (bits 0..PB_migrate_end)
    # NR_PAGEBLOCK_BITS bits of mem_section.usage->pageblock_flags
    raw: int = _f(INT)
    skip: bool = _f(BOOL)           # the PB_migrate_skip bit (CONFIG_COMPACTION)
    online: bool = _f(BOOL)         # SECTION_IS_ONLINE in mem_section.section_mem_map


@dataclass(frozen=True)
class BlockClassDevice:
    """One struct device of block_class: a disk or a partition."""
    name: str = _f(STR)             # dev_name(): device.init_name or kobj.name
    type: str = _f(STR)             # "disk"/"part"/"other": device.type is &disk_type, &part_type
    dev: str = _f(STR)              # device.devt as MAJOR:MINOR
    sectors: int = _f(INT)          # block_device.bd_nr_sectors (container of bd_device)
    partno: int = _f(INT)           # bdev_partno(): bd_partno (6.1), __bd_flags & 255 (6.12)
    # a disk's gendisk.flags & GENHD_FL_HIDDEN (None: a partition, or an older reading)
    hidden: Optional[int] = _f(optional(INT), default=None)
    # block_device.bd_dev: dev but for a hidden disk, whose device has no devt (0:0) and
    # whose part0 has one (block/genhd.c device_add_disk())
    bd_dev: Optional[str] = _f(optional(STR), default=None)


@dataclass(frozen=True)
class DirtySysctl:
    """The dirty sysctls of mm/page-writeback.c, as gdb reads the variables."""
    vm_dirty_bytes: int = _f(INT)
    dirty_background_bytes: int = _f(INT)
    vm_dirty_ratio: int = _f(INT)
    dirty_background_ratio: int = _f(INT)


@dataclass(frozen=True)
class GdbSnapshot:
    """What gdb read at one stop in ksymlab_snapshot_taken()."""
    stop: Stop = _f(record(Stop))
    results: ModuleResults = _f(record(ModuleResults))        # ksymlab_results at the stop
    tasks: Mapping[str, GdbTask] = _f(map_of(record(GdbTask)))     # by pid, as a string
    pageblocks: Tuple[GdbPageblock, ...] = _f(list_of(record(GdbPageblock)))


@dataclass(frozen=True)
class GdbReading(_Parsed):
    """gdb.json: guest memory read by gdb while the guest is stopped at the
    (first) snapshot; the top-level stop, results, tasks and pageblocks are
    the first snapshot's, `snapshots` has every one."""
    STEP = "gdb"
    SOURCE = "gdb.json"
    # vmlinux's symbol table, relocated by the KASLR slide: (unsigned long)&name
    symbols: Mapping[str, Optional[int]] = _f(map_of(optional(INT)))
    text: Optional[int] = _f(optional(INT), key="_text")       # &_text
    stop: Stop = _f(record(Stop))
    results: ModuleResults = _f(record(ModuleResults))
    tasks: Mapping[str, GdbTask] = _f(map_of(record(GdbTask)))
    pageblocks: Tuple[GdbPageblock, ...] = _f(list_of(record(GdbPageblock)))
    # block_class's devices (class_for_each_device(), scripts/gdb linux.device)
    block_class: Tuple[BlockClassDevice, ...] = _f(list_of(record(BlockClassDevice)))
    dirty_limit: int = _f(INT)      # global_wb_domain.dirty_limit (struct wb_domain)
    global_wb_domain: Optional[int] = _f(optional(INT))        # &global_wb_domain
    dirty_sysctl: DirtySysctl = _f(record(DirtySysctl))
    jiffies: int = _f(INT)          # jiffies_64
    config_hz: Optional[int] = _f(optional(INT))   # CONFIG_HZ of the .config beside vmlinux
    snapshots: Tuple[GdbSnapshot, ...] = _f(list_of(record(GdbSnapshot)))
    # what gdb stated instead of reading, or refused to read (names not C identifiers)
    notes: Tuple[str, ...] = _f(list_of(STR), default=())
    symbol_errors: Mapping[str, str] = _f(map_of(STR),
                                          default_factory=lambda: MappingProxyType({}))


# ---- drgn: harness/oracles/drgn_vmcore.py ----

@dataclass(frozen=True)
class Vmcoreinfo:
    """The vmcore's VMCOREINFO (kernel/crash_core.c) and where it came from."""
    present: bool = _f(BOOL)        # the guest handed QEMU its own note
    source: str = _f(STR)           # "note", "guest vmcoreinfo_data", "synthesized from vmlinux"
    osrelease: Optional[str] = _f(optional(STR))       # OSRELEASE=
    kerneloffset: Optional[str] = _f(optional(STR))    # KERNELOFFSET= (hex, the KASLR slide)


@dataclass(frozen=True)
class DrgnTask:
    """One task of init_pid_ns's pid IDR (drgn's for_each_task())."""
    comm: str = _f(STR)             # task_struct.comm
    prio: int = _f(INT)             # task_struct.prio - MAX_RT_PRIO (= task_prio())
    policy: int = _f(INT)           # task_struct.policy
    tgid: int = _f(INT)             # task_struct.tgid


@dataclass(frozen=True)
class DrgnPageblock:
    """One pageblock of a populated zone, from its section's pageblock bitmap."""
    node: int = _f(INT)             # the pg_data_t's node id
    zone: str = _f(STR)             # struct zone.name
    zid: int = _f(INT)              # index in pg_data_t.node_zones
    pfn: int = _f(INT)              # the pageblock's first pfn
    mt: int = _f(INT)               # mem_section.usage->pageblock_flags & MIGRATETYPE_MASK
    skip: int = _f(INT)             # the PB_migrate_skip bit, 0 or 1


@dataclass(frozen=True)
class DrgnDisk:
    """One struct block_device of the block class."""
    name: str = _f(STR)             # part_name(): the disk name, partition number appended
    dev: str = _f(STR)              # part_devt() as MAJOR:MINOR
    sectors: int = _f(INT)          # block_device.bd_nr_sectors
    whole: int = _f(INT)            # 1 when it is bd_disk->part0
    walk: str = _f(STR)             # how the list was walked (drgn helper or the klist)


def _done(check):
    """A key every drgn.json that has no "error" has."""
    return _f(check, default=None, required=True)


@dataclass(frozen=True)
class DrgnReading(_Parsed):
    """drgn.json: the vmcore QEMU dumped while gdb held the guest at the first
    snapshot, read by drgn; or {"error": why} (then every other field is None)."""
    STEP = "drgn"
    SOURCE = "drgn.json"
    error: Optional[str] = _f(optional(STR), default=None)
    vmcoreinfo: Vmcoreinfo = _done(record(Vmcoreinfo))
    # vmlinux's symbol table, relocated by VMCOREINFO's KERNELOFFSET
    symbols: Mapping[str, Optional[int]] = _done(map_of(optional(INT)))
    # struct module.sect_attrs of ksymlab_probe on the kernel's module list
    module_sections: Mapping[str, int] = _done(map_of(INT))
    results: ModuleResults = _done(record(ModuleResults))
    results_via: str = _done(STR)   # drgn's module debug info, or the .ko at the sections
    tasks: Mapping[str, DrgnTask] = _done(map_of(record(DrgnTask)))    # by pid, as a string
    # pageblock-flags.h: hstates ? HUGETLB_PAGE_ORDER : struct zone.free_area's length - 1
    pageblock_order: int = _done(INT)
    pageblocks: Tuple[DrgnPageblock, ...] = _done(list_of(record(DrgnPageblock)))
    disks: Tuple[DrgnDisk, ...] = _done(list_of(record(DrgnDisk)))
    dirty_limit: int = _done(INT)   # global_wb_domain.dirty_limit
    global_wb_domain: int = _done(INT)   # &global_wb_domain
    # how long the read took (the harness adds it; drgn.json on disk has none)
    seconds: Optional[float] = _f(optional(NUMBER), default=None)

    @classmethod
    def failed(cls, message):
        """The reading of a drgn that could not read: only `error`."""
        return cls(error=message)

    @classmethod
    def _parse(cls, d):
        if isinstance(d, dict) and "error" in d:
            return cls(error=STR(d["error"], "error"))
        return _record(cls, d, "")
