"""Compare the module's claims with independent oracles.

Oracles: gdb reading guest memory (addresses, prio, dirty limit), the
scenario file (expected priorities), sysfs (block devices), /proc/pagetypeinfo
(migratetype histogram) and the guest program's own return addresses (user
stack). A value no oracle covers yet is reported with agree = None and does
not count towards the verdict.
"""

from dataclasses import dataclass, replace
from typing import Mapping, Optional

from . import pbstates, policy, priostates
from .model import Check, frozen
from ..guest.dataport import RESULTS_MAGIC
from ..oracles.sched_prio import expected_prios
from .compare_states import compare_states
from ..report.rows import MIGRATETYPES as MIGRATETYPE_NAMES

# Sources that read through the very kernel function the module calls, so
# they share a bug there: /proc/<pid>/stat field 18 is task_prio()
# (fs/proc/array.c do_task_stat()), /proc/pagetypeinfo counts with
# get_pageblock_migratetype() -> get_pfnblock_flags_mask() (mm/vmstat.c),
# /proc/vmstat's dirty thresholds come from global_dirty_limits(), which fires
# global_dirty_state (mm/vmstat.c vmstat_start()).
SAME_FUNCTION = "same function"
INDEPENDENT = "independent"


def _hex(v):
    return f"0x{v:x}" if v is not None else None


def compare_symbols(data, truth):
    # /proc/kallsyms may list a static name twice; any match will do.
    kallsyms = {}
    for k in data["kallsyms"]:
        kallsyms.setdefault(k["name"], set()).add(k["addr"])
    out = []
    for s in data["symbol"]:
        gdb_addr = truth["symbols"].get(s["name"])
        resolved = s["method"] != "unresolved"
        in_kallsyms = s["addr"] in kallsyms.get(s["name"], ())
        listed = " ".join(_hex(a) for a in sorted(kallsyms.get(s["name"], ()))) or None
        out.append(Check(
            "symbol", s["name"],
            {"module": _hex(s["addr"]), "gdb": _hex(gdb_addr),
             "proc_kallsyms": _hex(s["addr"]) if in_kallsyms else listed},
            # an unresolved symbol (address 0) agrees when it is absent or a
            # degraded sampler says so; the sampler list reports that case
            (gdb_addr is not None and gdb_addr == s["addr"] and in_kallsyms) if resolved else None,
            info={"method": s["method"]},
            reason=None if resolved else "unresolved: the sampler that needs it reports itself"))
    return out


def _by_pid(rows):
    return {r["pid"]: r for r in rows}


def _prio_check(pid, comm, sources, agree):
    info = {"comm": comm, "pid": pid}
    if "proc_stat" in sources:
        info["oracles"] = {"proc_stat": SAME_FUNCTION}
    return Check("prio", f"pid {pid}", sources, agree, info=info)


def compare_prio(data, truth):
    """Every task of the snapshot: the module's text, its memory, gdb at the same
    instant, /proc/<pid>/stat (read just after) and the scenario."""
    expectations = {t["pid"]: t for t in data["task"]}
    expected = expected_prios(data["task"])
    procstat = {x["pid"]: x["prio"] for x in data["procstat"]}
    text = _by_pid(data["prio"])
    memory = _by_pid(truth["results"]["prio"])
    values = []
    for pid in sorted(set(text) | set(memory)):
        t, m = text.get(pid), memory.get(pid)
        g = truth["tasks"].get(str(pid))
        sources = {"module": t["prio"] if t else None, "memory": m["prio"] if m else None,
                   "gdb": g["prio"] if g else None}
        agree = (t is not None and m is not None and g is not None
                 and t["prio"] == m["prio"] == g["prio"])
        # /proc/<pid>/stat is read after the snapshot; threads other than a
        # group leader have no /proc/<pid>.
        if pid in procstat:
            sources["proc_stat"] = procstat[pid]
            agree = agree and procstat[pid] == sources["module"]
        if expected.get(pid) is not None:
            sources["scenario"] = expected[pid]
            agree = agree and sources["scenario"] == sources["module"]
        values.append(_prio_check(pid, (t or m)["comm"], sources, agree))
    for pid in sorted(set(expectations) - set(text)):
        values.append(_prio_check(pid, f"scenario {expectations[pid]['policy']}",
                                  {"module": None, "memory": None,
                                   "gdb": truth["tasks"].get(str(pid), {}).get("prio"),
                                   "scenario": expected.get(pid)}, False))
    # The snapshot and gdb's walk are the same instant, so a task gdb sees
    # that the module did not list is a miss. pid 0 is the idle task: gdb's
    # walk starts at init_task, for_each_process_thread() does not visit it.
    for pid in sorted(int(p) for p in truth["tasks"]):
        # (a scenario task the module missed has its row above: one row per pid)
        if pid != 0 and pid not in memory and pid not in text and pid not in expectations:
            g = truth["tasks"][str(pid)]
            values.append(_prio_check(pid, g["comm"], {"module": None, "memory": None,
                                                      "gdb": g["prio"]}, False))
    return values


def compare_pageblocks(data, truth):
    """Every pageblock: the module's text and memory against gdb's own bitmap read."""
    text = {(p["node"], p["pfn"]): p for p in data["pageblock"]}
    memory = {(p["node"], p["pfn"]): p for p in truth["results"]["pageblocks"]}
    bitmap = {(p["node"], p["pfn"]): p for p in truth["pageblocks"]}
    values = []
    for key in sorted(set(text) | set(memory) | set(bitmap)):
        t, m, g = text.get(key), memory.get(key), bitmap.get(key)
        zone = (t or g or {}).get("zone", "?")
        values.append(Check(
            "pageblock", f"{zone} pfn {key[1]:#x}",
            {"module": t["mt"] if t else None, "memory": m["mt"] if m else None,
             "gdb_bitmap": g["mt"] if g else None},
            t is not None and m is not None and g is not None and t["mt"] == m["mt"] == g["mt"],
            info={"zone": zone, "node": key[0], "pfn": key[1]}))
    return values


def compare_migratetype(data, truth):
    """Histogram per zone and migratetype against /proc/pagetypeinfo and gdb's bitmap read.

    The module walks every pfn_valid() pageblock, /proc/pagetypeinfo only the
    online ones (pfn_to_online_page()): an offline memory block keeps its
    pageblock flags (MIGRATE_ISOLATE) and its memmap. So the module's count is
    held to gdb's count of every block, pagetypeinfo's to gdb's count of the
    blocks in online sections; both are exact.
    """
    pt = {(x["zone"], x["mt"]): x["count"] for x in data["ptinfo"]}
    gdb_hist, gdb_online = {}, {}
    for p in truth["pageblocks"]:
        gdb_hist[(p["zone"], p["mt"])] = gdb_hist.get((p["zone"], p["mt"]), 0) + 1
        if p.get("online", True):
            gdb_online[(p["zone"], p["mt"])] = gdb_online.get((p["zone"], p["mt"]), 0) + 1
    values = []
    for h in data["mthist"]:
        key = (h["zone"], h["mt"])
        if h["count"] == 0 and key not in pt:
            continue              # a migratetype pagetypeinfo does not list (e.g. CMA off)
        sources = {"module": h["count"], "pagetypeinfo": pt.get(key),
                   "gdb_bitmap": gdb_hist.get(key, 0)}
        if gdb_online.get(key, 0) != gdb_hist.get(key, 0):
            sources["gdb_bitmap_online"] = gdb_online.get(key, 0)
        values.append(Check(
            "migratetype", f"zone {h['zone']} mt {h['mt']}", sources,
            pt.get(key) == gdb_online.get(key, 0) and h["count"] == gdb_hist.get(key, 0),
            info={"zone": h["zone"], "mt": h["mt"],
                  "mt_name": MIGRATETYPE_NAMES.get(h["mt"], f"type {h['mt']}"),
                  "oracles": {"pagetypeinfo": SAME_FUNCTION, "gdb_bitmap": INDEPENDENT}}))
    return values


def compare_blockdev(data, truth):
    """The module's list (text and memory) against sysfs and gdb's walk of the block class."""
    def by_name(rows):
        return {b["name"]: f"{b['dev']} {b['sectors']}" for b in rows}

    sources = {"module": by_name(data["bdev"]), "sysfs": by_name(data["sysblock"]),
               "memory": by_name(truth["results"]["bdevs"]),
               "gdb_class": by_name(truth["block_class"])}
    values = []
    for name in sorted(set().union(*sources.values())):
        row = {src: rows.get(name) for src, rows in sources.items()}
        values.append(Check("blockdev", name, row,
                            row["module"] is not None and len(set(row.values())) == 1))
    return values


# harness/guest/ustack.c: main() calls level1(), level1() level2(), level2()
# level3(), which reads the module's file. The return address the program
# records at depth d lies in the function named here; frame 0 is level3's
# own syscall.
USTACK_CALLERS = {0: "level3", 1: "level2", 2: "level1", 3: "main"}


def compare_ustack(data, truth, names=None):
    """The program's own return addresses must follow each other in the module's frames;
    the frames in module memory equal its text; eu-addr2line names them."""
    found = []
    frames = []
    pid = None
    for e in sorted(data["ustack-expect"], key=lambda e: e["depth"]):
        pid = e["pid"]
        frames = [f["ip"] for f in sorted(data["frame"], key=lambda f: f["idx"])
                  if f["pid"] == e["pid"]]
        idx = frames.index(e["ret"]) if e["ret"] in frames else None
        found.append((e, idx))
    # found, and in the order the calls nest
    hit = [idx for _, idx in found if idx is not None]
    in_order = hit == sorted(hit) and len(set(hit)) == len(hit)
    values = [Check("ustack", f"ret/{e['depth']}",
                    {"module": _hex(frames[idx]) if idx is not None else None,
                     "program": _hex(e["ret"])},
                    idx is not None and in_order, info={"frame": idx},
                    label=f"return address {e['depth']}")
              for e, idx in found]
    if values:
        r = truth["results"]
        mine = " ".join(_hex(f) for f in frames)
        theirs = " ".join(_hex(f) for f in r["frames"])
        values.append(Check("ustack", "frames", {"module": mine, "memory": theirs},
                            r["frames_pid"] == pid and mine == theirs,
                            label="frames in module memory"))
    if names is not None:
        for idx, want in USTACK_CALLERS.items():
            ip = frames[idx] if idx < len(frames) else None
            got = names.get(ip) if ip is not None else None
            values.append(Check("ustack", f"fn/{idx}",
                                {"module": _hex(ip), "eu_addr2line": got, "program": want},
                                got == want, label=f"frame {idx} function"))
    return values


def compare_writeback(data, truth):
    values = []
    for w in data["writeback"]:
        for key in ("gds_hits", "bdp_hits"):
            values.append(Check("writeback", key, {"module": w[key], "expected": "> 0"},
                                w[key] > 0))
    for d in data["dirtylimit"]:
        g = truth.get("dirty_limit")
        values.append(Check("writeback", f"dirty_limit/{d['source']}",
                            {"module": d["bdp"], "gdb": g}, g is not None and g == d["bdp"],
                            label=f"dirty_limit ({d['source']})"))
    return values


def compare_bpf(data, truth, variant):
    """Which balance_dirty_pages arguments a raw-tracepoint program can read."""
    if variant is None:
        return []
    values = []
    for b in data["bpf"]:
        arg = b["arg"]
        readable = b["result"] == "ok"
        expected = arg <= variant.bpf_max_arg
        detail = b["result"] if readable else f"{b['result']} errno {b.get('errno')}"
        values.append(Check("bpf", f"arg{arg}/readable",
                            {"module": detail, "expected": "ok" if expected else "rejected"},
                            readable == expected, info={"verifier": b.get("verifier")},
                            reason=None if expected else
                            "this series leaves the verifier's 12-argument bound",
                            label=f"raw_tp reads argument {arg}"))
        if readable:
            values.append(Check("bpf", f"arg{arg}/ran", {"module": b["hits"], "expected": "> 0"},
                                b["hits"] > 0, label=f"argument {arg} program ran"))
            if variant.domain_arg:
                dom = truth.get("global_wb_domain")
                values.append(Check("bpf", f"arg{arg}/arg1-domain",
                                    {"module": _hex(b["arg1"]), "gdb": _hex(dom)},
                                    dom is not None and b["arg1"] == dom,
                                    label="argument 1 is &global_wb_domain"))
    return values


def compare_symcheck(findings, mode):
    """symcheck on the module: nothing missing against its own tree; kallsyms-style
    resolution flagged exactly in the modes that use it."""
    audit_expected = mode != "exports"
    return [
        Check("symcheck", "check", {"module": len(findings["check"]), "expected": 0},
              not findings["check"],
              info={"detail": "; ".join(f["message"] for f in findings["check"])[:300]},
              label="check findings"),
        Check("symcheck", "audit",
              {"module": ", ".join(f["what"] for f in findings["audit"]) or "none",
               "expected": "flagged" if audit_expected else "none"},
              bool(findings["audit"]) == audit_expected,
              label="audit flags kallsyms-style resolution"),
    ]


def compare_stress(data, expected_cycles):
    """The insmod/rmmod stress run: every cycle worked, no leak, no warning."""
    if not expected_cycles:
        return []
    st = data["stress"][0] if data["stress"] else {"cycles": None, "failed": None}
    values = [Check("stress", "cycles", {"module": st["cycles"], "expected": expected_cycles},
                    st["cycles"] == expected_cycles),
              Check("stress", "failed", {"module": st["failed"], "expected": 0},
                    st["failed"] == 0, label="failed insmod/rmmod")]
    for k in data["kmemleak"]:
        values.append(Check("stress", "kmemleak", {"module": k["ksymlab_frames"], "expected": 0},
                            bool(k["available"]) and k["ksymlab_frames"] == 0,
                            info={"kmemleak_total": k["leaks"]},
                            label="kmemleak objects with ksymlab frames"))
    for d in data["dmesg"]:
        values.append(Check("stress", "dmesg-warnings", {"module": d["warnings"], "expected": 0},
                            d["warnings"] == 0, label="dmesg warnings"))
    return values


def compare_results_header(truth, data=None):
    """gdb found the module's results and stopped inside the snapshot they belong to."""
    r = truth["results"]
    stop = truth["stop"]
    rows = []
    for line in (data or {}).get("results", []):
        # the module's own &ksymlab_results against gdb's, found through the
        # module's DWARF at the section addresses /sys/module reported
        rows.append(Check("snapshot", "results-address",
                          {"module": _hex(line["addr"]), "gdb": _hex(r.get("addr"))},
                          line["addr"] == r.get("addr"), label="ksymlab_results address"))
    return rows + [
        Check("snapshot", "magic",
              {"module": f"{r['magic']:#x}", "expected": f"{RESULTS_MAGIC:#x}"},
              r["magic"] == RESULTS_MAGIC, label="ksymlab_results magic"),
        Check("snapshot", "stop-function",
              {"module": stop["function"], "expected": "ksymlab_snapshot_taken"},
              stop["function"] == "ksymlab_snapshot_taken", label="gdb stopped in"),
        Check("snapshot", "sequence", {"module": r["snapshot_seq"], "gdb": stop["seq"]},
              stop["seq"] is None or stop["seq"] == r["snapshot_seq"],
              label="snapshot sequence at the stop"),
    ]


@dataclass(frozen=True)
class Comparison:
    """What compare_variant() found for one variant."""
    symbols: tuple
    values: tuple
    samplers: Mapping
    notes: tuple
    guest_errors: tuple
    resolve_ns: Optional[int]


def compare_variant(data, truth, stress_cycles=0, variant=None, ustack_names=None, drgn=None):
    """Every symbol and value of one variant against its oracles (drgn: what
    harness/drgn_oracle.py read from the vmcore, added by drgncompare.merge)."""
    values = compare_results_header(truth, data)
    values += compare_prio(data, truth)
    values += policy.compare_policy(data, truth)
    values += compare_pageblocks(data, truth)
    values += compare_migratetype(data, truth)
    values += pbstates.compare_states(data, truth)
    values += priostates.compare_states(data, truth)
    values += compare_blockdev(data, truth)
    values += compare_ustack(data, truth, ustack_names)
    values += compare_writeback(data, truth)
    values += compare_bpf(data, truth, variant)
    values += compare_states(data, truth)
    values += compare_stress(data, stress_cycles)
    notes = [f"sampler {u['sampler']} reported itself unavailable" for u in data["unavailable"]]
    notes += [f"guest error: {e}" for e in data["errors"]]
    found = Comparison(
        symbols=tuple(compare_symbols(data, truth)), values=tuple(values),
        samplers=frozen({s["name"]: {"available": bool(s["available"]), "missing": s["missing"]}
                         for s in data["sampler"]}),
        notes=tuple(notes), guest_errors=tuple(data["errors"]),
        resolve_ns=next((r["ns"] for r in data["resolve"]), None))
    from .drgn_columns import merge
    return merge(found, data, truth, drgn)


# The value kinds each sampler of probe-module produces.
SAMPLER_KINDS = {"prio": ("prio", "policy"), "migratetype": ("pageblock", "migratetype"),
                 "ustack": ("ustack",), "blockdev": ("blockdev",),
                 "writeback": ("writeback",), "symbols": ()}
DEGRADED_REASON = "the variant's expectation says this sampler degrades"


def expect_degraded(found, degraded=()):
    """A check per sampler: available, unless the variant says it must degrade.

    An unexpected degradation fails (its own row besides the values it could
    not give); an expected one passes when the sampler did report itself
    unavailable, and the values it could not give are unchecked with the
    reason, not failures.
    """
    rows = []
    for name, sm in found.samplers.items():
        must_degrade = name in degraded
        rows.append(Check("sampler", name,
                          {"module": "available" if sm["available"] else
                           f"unavailable ({sm['missing']})",
                           "expected": "unavailable" if must_degrade else "available"},
                          sm["available"] != must_degrade,
                          reason=DEGRADED_REASON if must_degrade else None))
    for name in degraded:
        if name not in found.samplers:
            rows.append(Check("sampler", name, {"module": None, "expected": "unavailable"},
                              False, reason=DEGRADED_REASON))
    gone = {k for name in degraded if not found.samplers.get(name, {}).get("available", True)
            for k in SAMPLER_KINDS.get(name, ())}
    values = tuple(replace(c, agree=None, reason=DEGRADED_REASON)
                   if c.kind in gone and c.get("module") is None and c.agree is False else c
                   for c in found.values)
    return replace(found, values=tuple(rows) + values)
