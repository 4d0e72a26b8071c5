"""One A/B run: build every variant, boot it, verify it with gdb, write the report."""

import concurrent.futures
import os
import shutil
import threading
import time
from pathlib import Path

from . import addr2line, compare, gdb, guestdata, initramfs, kaslr, kernel, module, paths, report, \
    symcheck, variants
from .errors import HarnessError
from .progress import say
from .qemu import QemuSession
from .scenario import parse as parse_scenario


def new_rundir(runs_root):
    runs_root.mkdir(parents=True, exist_ok=True)
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    rundir = runs_root / run_id
    rundir.mkdir()
    latest = runs_root / "latest"
    tmp = runs_root / f".latest-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_id)
    os.replace(tmp, latest)          # atomic: `latest` is never missing
    return run_id, rundir


# Console classifications, each a distinct verdict in the report.
FAULT_VERDICTS = ("panic", "oops", "warning", "hang", "reboot", "timeout", "boot", "guest")


def _keep_log(err, vdir):
    """Copy a failed step's log into the run directory so the run is self-contained."""
    if err.log and Path(err.log).exists() and vdir not in Path(err.log).parents:
        dest = vdir / f"{err.step}-{Path(err.log).name}"
        shutil.copy2(err.log, dest)
        err.log = dest


def _error_entry(err, vdir):
    _keep_log(err, vdir)
    entry = {"step": err.step, "message": err.message, "exit_status": err.exit_status,
             "log": str(err.log) if err.log else None,
             # a console fault is the variant's verdict: panic, oops, warning, hang, ...
             "verdict": err.step if err.step in FAULT_VERDICTS else "error"}
    if err.excerpt:
        entry["excerpt"] = err.excerpt
    elif err.log and err.step in FAULT_VERDICTS:
        rows = Path(err.log).read_text(errors="replace").replace("\r", "").splitlines()
        entry["excerpt"] = "\n".join(rows[-25:])
    return entry


def run_variant(variant, tree, entry, vdir, opts):
    timings = entry.setdefault("timings", {})
    clock = time.monotonic()

    def lap(step):
        nonlocal clock
        now = time.monotonic()
        timings[step] = round(now - clock, 2)
        clock = now

    ko = module.build(tree, variant.module_mode)
    entry["symcheck"] = symcheck.findings(ko, tree)
    shutil.copy2(ko.parent / "build.log", vdir / "module-build.log")
    lap("module")
    initrd = initramfs.build(tree, ko, opts["scenario"], vdir, variant.module_mode,
                             opts["insmod_args"], opts["stress"], opts["bench"])
    lap("initramfs")
    with QemuSession(tree, initrd, vdir, kvm=opts["kvm"], append=opts["append"],
                     boot_timeout=opts["boot_timeout"], hang_timeout=opts["hang_timeout"],
                     icount=opts["bench"] > 0, kaslr=opts["kaslr"]) as vm:
        early = guestdata.parse(vm.wait_armed(), partial=True)
        lap("boot")
        entry["accel"] = vm.accel
        text_addr = early["ktext"][0]["addr"] if early["ktext"] else None
        slide = kaslr.slide(tree.vmlinux, text_addr)
        entry["kaslr"] = {"enabled": opts["kaslr"], "slide": f"{slide:#x}",
                          "guest_text": f"{text_addr:#x}"}
        if not early["pbinfo"]:
            raise HarnessError("verify", f"{variant.name}: the guest reported no pageblock order")
        if not any(s["addr"] for s in early["section"]):
            raise HarnessError("verify", f"{variant.name}: the guest reported no module "
                               "section addresses (/sys/module/ksymlab_probe/sections)")
        claims = {"symbols": [s["name"] for s in early["symbol"] if s["method"] != "unresolved"],
                  "module": str(ko),
                  "sections": {s["name"]: s["addr"] for s in early["section"]},
                  "pageblock_order": early["pbinfo"][0]["order"]}
        with gdb.GdbSession(tree, vm.gdb_socket, claims, vdir, slide=slide) as session:
            session.start()
            vm.send_go()
            try:
                truth = session.finish()
            except HarnessError:
                # A guest that panicked or reset under gdb also ends gdb's session:
                # report what the console says happened, else gdb's own failure.
                vm.wait_ready()
                raise
        lap("gdb")
        data = guestdata.parse(vm.wait_ready())
        entry["guest_kernel"] = data["guest"].get("kernel")
        vm.resume_and_finish()
        lap("guest_rest")
    entry["guest_phases"] = {p["name"]: float(p["uptime"]) for p in data["phase"]}
    # The guest program is static and not PIE: its frames name without a load base.
    names = addr2line.function_names(initramfs.build_guest_program("ustack.c"),
                                     [f["ip"] for f in data["frame"]])
    entry.update(compare.compare_variant(data, truth, opts["stress"], variant, names))
    lap("compare")
    entry["values"] += compare.compare_symcheck(entry["symcheck"], variant.module_mode)
    entry["bench"] = data["bench"]
    c = entry["counts"]
    say("verify", f"{variant.name}: {c['symbols_agree']}/{c['symbols']} symbols and "
                  f"{c['values_agree']}/{c['values']} values agree: {entry['verdict']}")


def run(names, scenario=None, kvm=False, append="", runs_root=None,
        boot_timeout=600, hang_timeout=180, insmod_args="", stress=0, bench=0, kaslr=False,
        jobs=None):
    """Run the comparison; return (exit status, run directory)."""
    selected = variants.select(names)
    scenario = Path(scenario or paths.SCENARIOS / "default.scenario")
    if not scenario.is_file():
        raise HarnessError("usage", f"{scenario}: scenario file not found")
    parse_scenario(scenario)        # a bad line is a usage error before anything boots
    run_id, rundir = new_rundir(Path(runs_root or paths.runs_root()))
    say("run", f"{run_id}: variants {', '.join(v.name for v in selected)}; logs in {rundir}")
    opts = {"scenario": scenario, "kvm": kvm, "append": append,
            "boot_timeout": boot_timeout, "hang_timeout": hang_timeout,
            "insmod_args": insmod_args, "stress": stress, "bench": bench, "kaslr": kaslr}
    rep = {"run_id": run_id, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "tarball": str(paths.KERNEL_TARBALL), "scenario": str(scenario),
           "insmod_args": insmod_args, "stress_cycles": stress, "kaslr": kaslr,
           "verdict": "fail", "variants": {}}
    first_error = None
    trees = {}
    for i, v in enumerate(kernel.build_order(selected), 1):
        # Bases first (fewer patches), so a tree can derive from one built just before.
        vdir = rundir / v.name
        vdir.mkdir()
        entry = {"description": v.description, "module_mode": v.module_mode,
                 "series": [p.name for p in v.patches()], "verdict": "fail", "error": None,
                 "symbols": [], "values": [], "notes": []}
        rep["variants"][v.name] = entry
        rep["variants"] = {s.name: rep["variants"][s.name] for s in selected   # report order
                           if s.name in rep["variants"]}
        try:
            t0 = time.monotonic()
            trees[v.name] = kernel.prepare(v, i, len(selected))
            rep.setdefault("timings", {}).setdefault("kernel", {})[v.name] = \
                round(time.monotonic() - t0, 1)
            entry["tree_key"] = trees[v.name].key
        except HarnessError as err:
            entry["error"] = _error_entry(err, vdir)
            first_error = first_error or err
            say("error", err.one_line())
    # Guests run concurrently (one per CPU by default): each is one TCG thread
    # and often idle (writeback throttling), and every guest has its own
    # directory, sockets and gdb.
    lock = threading.Lock()
    errors = {}

    def one(v):
        entry = rep["variants"][v.name]
        vdir = rundir / v.name
        try:
            run_variant(v, trees[v.name], entry, vdir, opts)
        except HarnessError as err:
            entry["verdict"] = "fail"
            entry["error"] = _error_entry(err, vdir)
            errors[v.name] = err
            say("error", err.one_line())
        finally:
            with lock:
                report.write_all(rundir, rep)        # keep what is known after each variant

    ready = [v for v in selected if v.name in trees]
    workers = max(1, min(len(ready) or 1, jobs or os.cpu_count() or 1))
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(one, v) for v in ready]
        try:
            for f in futures:
                f.result()
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            QemuSession.close_all()       # running guests end, so the workers return
            raise
    rep.setdefault("timings", {})["guests"] = round(time.monotonic() - t0, 1)
    rep["timings"]["guest_workers"] = workers
    for v in selected:
        if first_error is None and v.name in errors:
            first_error = errors[v.name]
    rep["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    t0 = time.monotonic()
    report.write_all(rundir, rep)
    rep["timings"]["report"] = round(time.monotonic() - t0, 2)
    report.write_all(rundir, rep)       # once more, with its own time recorded
    say("report", f"{rundir / 'report.md'}: verdict {rep['verdict']}")
    if first_error is not None:
        return first_error.exit_status, rundir, first_error
    return (0 if rep["verdict"] == "pass" else 1), rundir, None
