"""Readings as the memory oracles write them (gdb.json, drgn.json), literal and
small: one task, one pageblock, one disk. Each passes GdbReading.parse /
DrgnReading.parse; the tests take a copy and break one key."""

import json

STOP = {"function": "ksymlab_snapshot_taken", "pc": 0xffffffffc0000010, "seq": 1}

RESULTS = {
    "addr": 0xffffffffc0002480, "magic": 0x6b73796d, "snapshot_seq": 1,
    "prio": [{"pid": 7, "prio": 25, "policy": 0, "comm": "ksymlab-fair"}],
    "pageblocks": [{"pfn": 0x400, "node": 0, "zid": 1, "mt": 1}],
    "bdevs": [{"name": "ram0", "sectors": 32768, "dev": "1:0"}],
    "frames_pid": 70, "frames": [0x401000, 0x401c00],
    "wb": {"global_dirty_state_hits": 3, "balance_dirty_pages_hits": 2, "dirty_limit": 510,
           "dirty_thresh": 510, "background_thresh": 255, "bdp_limit": 510},
}

TASKS = {"7": {"comm": "ksymlab-fair", "prio": 25, "policy": 0}}

PAGEBLOCKS = [{"node": 0, "zone": "DMA32", "zid": 1, "pfn": 0x400, "mt": 1, "raw": 9,
               "skip": True, "online": True}]

GDB = {
    "symbols": {"task_prio": 0xffffffff81001000, "disk_type": None},
    "_text": 0xffffffff81000000,
    "stop": STOP, "results": RESULTS, "tasks": TASKS, "pageblocks": PAGEBLOCKS,
    "block_class": [{"name": "ram0", "type": "disk", "dev": "1:0", "sectors": 32768,
                     "partno": 0}],
    "dirty_limit": 510, "global_wb_domain": 0xffffffff82000000,
    "dirty_sysctl": {"vm_dirty_bytes": 0, "dirty_background_bytes": 0, "vm_dirty_ratio": 20,
                     "dirty_background_ratio": 10},
    "jiffies": 4294967296, "config_hz": 250,
    "snapshots": [{"stop": STOP, "results": RESULTS, "tasks": TASKS,
                   "pageblocks": PAGEBLOCKS}],
}

DRGN = {
    "vmcoreinfo": {"present": True, "source": "note", "osrelease": "6.1.192",
                   "kerneloffset": "0"},
    "symbols": {"task_prio": 0xffffffff81001000, "disk_type": None},
    "module_sections": {".text": 0xffffffffc0000000, ".bss": 0xffffffffc0002480},
    "results": RESULTS, "results_via": "drgn's loaded-module debug info",
    "tasks": {"7": {"comm": "ksymlab-fair", "prio": 25, "policy": 0, "tgid": 7}},
    "pageblock_order": 10,
    "pageblocks": [{"node": 0, "zone": "DMA32", "zid": 1, "pfn": 0x400, "mt": 1, "skip": 1}],
    "disks": [{"name": "ram0", "dev": "1:0", "sectors": 32768, "whole": 1,
               "walk": "block class klist walk"}],
    "dirty_limit": 510, "global_wb_domain": 0xffffffff82000000,
    "seconds": 0.7,
}


def gdb_reading():
    """A copy as json.load gives it: no two keys share a dict (GDB's snapshots[0]
    and its top level do)."""
    return json.loads(json.dumps(GDB))


def drgn_reading():
    return json.loads(json.dumps(DRGN))


def results(**keys):
    """ksymlab_results as gdb.json and drgn.json have it: RESULTS, `keys` replaced."""
    return {**json.loads(json.dumps(RESULTS)), **keys}


def snapshot(seq, **keys):
    """One stop of gdb.json's snapshots[]: in ksymlab_snapshot_taken with `seq`, the
    results of that snapshot, no task, no pageblock; `keys` replaced."""
    return {"stop": dict(STOP, seq=seq), "results": results(snapshot_seq=seq), "tasks": {},
            "pageblocks": [], **keys}


def gdb_json(**keys):
    """gdb.json: GDB with the top-level `keys` replaced (a copy)."""
    return {**gdb_reading(), **keys}
