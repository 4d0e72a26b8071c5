"""Compare the module's claims with gdb's reads and the scenario's expectations."""

# A SCHED_OTHER task at nice n has task_prio() == 20 + n (kernel/sched/core.c):
# the scenario file is an oracle independent of both module and gdb.
NICE_BASE = 20


def expected_prio(task):
    if task.get("policy") == "nice":
        return NICE_BASE + task["value"]
    return None


def compare_variant(data, truth):
    """Build the report entry of one variant: symbols[], values[], notes[], counts."""
    symbols = []
    for s in data["symbols"]:
        gdb_addr = truth["symbols"].get(s["name"])
        symbols.append({
            "name": s["name"], "method": s["method"],
            "module_addr": f"0x{s['addr']:x}",
            "gdb_addr": f"0x{gdb_addr:x}" if gdb_addr is not None else None,
            "agree": gdb_addr is not None and gdb_addr == s["addr"],
        })

    expectations = {t["pid"]: t for t in data["tasks"]}
    values = []
    seen = set()
    for p in data["prio"]:
        pid = p["pid"]
        seen.add(pid)
        g = truth["tasks"].get(str(pid))
        entry = {"kind": "prio", "key": f"pid {pid}", "comm": p["comm"],
                 "module": p["prio"], "gdb": g["prio"] if g else None}
        agree = g is not None and g["prio"] == p["prio"]
        task = expectations.get(pid)
        if task is not None and expected_prio(task) is not None:
            entry["scenario"] = expected_prio(task)
            agree = agree and entry["scenario"] == p["prio"]
        entry["agree"] = agree
        values.append(entry)

    notes = []
    for pid in sorted(set(expectations) - seen):
        notes.append(f"scenario task pid {pid} missing from the module's prio list")
        values.append({"kind": "prio", "key": f"pid {pid}", "comm": "sleep", "module": None,
                       "gdb": truth["tasks"].get(str(pid), {}).get("prio"),
                       "scenario": expected_prio(expectations[pid]), "agree": False})
    # pid 0 is the idle task: gdb's walk starts at init_task, the module's
    # for_each_process_thread() does not visit it.
    extra = sorted(int(pid) for pid in truth["tasks"] if int(pid) not in seen and pid != "0")
    if extra:
        # Tasks born after the module sampled (e.g. a new kworker) are not claims.
        notes.append("tasks in guest memory the module did not list (born after sampling?): "
                      + ", ".join(str(p) for p in extra))
    for e in data["errors"]:
        notes.append(f"guest error: {e}")

    ok = (bool(symbols) and bool(values) and not data["errors"]
          and all(s["agree"] for s in symbols) and all(v["agree"] for v in values))
    return {
        "symbols": symbols,
        "values": values,
        "notes": notes,
        "counts": {
            "symbols": len(symbols),
            "symbols_agree": sum(s["agree"] for s in symbols),
            "values": len(values),
            "values_agree": sum(v["agree"] for v in values),
        },
        "verdict": "pass" if ok else "fail",
    }
