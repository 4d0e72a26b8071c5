"""Benchmark (not a test): build and run wall times, then in-guest cost per mode.

1. Cold builds, side by side in one benchmark: one variant alone (COLD_ALONE)
   into a fresh empty cache (ccache included), then every selected variant
   into another fresh empty cache, in kernel.build_order() so later variants
   derive from trees built earlier. Both caches live under /var/tmp and are
   deleted afterwards. `--skip-cold` leaves this out.
2. Two runs with QEMU -icount, where the guest clock counts instructions: the
   guest benchmark program's figures per mode and how far the two runs differ.
   They also leave the normal cache warm.
3. A warm `make run`, timed as a whole, with per-step times from its report.

One table of steps and wall seconds with the two ratios and their targets,
then the -icount figures; both go to bench.json in the warm run's directory.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..prepare import kernel, variants
from .. import paths, steps
from ..errors import HarnessError
from ..options import RunOptions
from ..progress import say
from ..run import run

ROUNDS = 5
COLD_ALONE = "exports"          # the first default variant
COLD_TMP = "/var/tmp"
TARGET_COLD_RATIO = 1.5         # cold build of all variants / one variant alone
TARGET_WARM_SECONDS = 30.0      # warm `make run`
# The warm run's steps the benchmark always reports ("not in report.json" when
# missing); the other steps of harness/steps.py only when the run recorded them.
REQUIRED_STEPS = (steps.KERNEL, "module", "initramfs", "boot", "gdb")


def figures(entry):
    """Median ns of each bench kind over the rounds of one run."""
    by = {}
    for b in entry.get("bench", []):
        per_call = b["ns"] / b["calls"]
        by.setdefault(b["kind"], []).append(per_call)
    return {k: statistics.median(v) for k, v in by.items()}


# ---------------------------------------------------------------- measuring

def cold_build(names, tmp_root=COLD_TMP):
    """Build `names` into a fresh cache; per variant its wall seconds and manifest steps."""
    cache = Path(tempfile.mkdtemp(prefix="ksymlab-bench-cold-", dir=tmp_root))
    opts = RunOptions.from_env(cache=cache)
    try:
        order = kernel.build_order(opts.select(names))
        out = {"cache": str(cache), "variants": []}
        start = time.monotonic()
        for i, v in enumerate(order, 1):
            t0 = time.monotonic()
            tree = kernel.prepare(v, opts.cache, None, i, len(order))
            m = kernel.manifest(tree)
            out["variants"].append({"variant": v.name, "seconds": time.monotonic() - t0,
                                    "steps": m.get("steps", {}),
                                    "build_cpu": m.get("build_cpu_seconds"),
                                    "derived_from": m.get("derived_from_variant")})
        out["seconds"] = time.monotonic() - start
        return out
    finally:
        say("bench", f"removing {cache}")
        shutil.rmtree(cache, ignore_errors=True)


def warm_make_run(runs_root, names):
    """`make run` with everything cached: (wall seconds, exit status, run directory or None)."""
    env = {**os.environ, "KSYMLAB_RUNS": str(runs_root)}
    say("bench", "warm make run")
    t0 = time.monotonic()
    p = subprocess.run(["make", "-s", "-C", str(paths.REPO), "run",
                        f"RUN_ARGS=--variants {','.join(names)}"], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = re.search(r"^report: (.*)/report\.md$", p.stdout, re.M)
    rundir = Path(m.group(1)) if m else None
    if rundir and rundir.is_dir():
        (rundir / "make-run.log").write_text(p.stdout + p.stderr)
    return wall, p.returncode, rundir


# ---------------------------------------------------------------- the table

def _row(phase, step, variant, seconds, note=""):
    return {"phase": phase, "step": step, "variant": variant,
            "seconds": None if seconds is None else round(seconds, 1), "note": note}


def cold_rows(phase, cold):
    rows = []
    for v in cold["variants"]:
        for step in steps.KERNEL_BUILD:
            if step in v["steps"]:
                note = ""
                if step == "copy":
                    note = f"from {v['derived_from']} tree"
                elif step == "build" and v.get("build_cpu") is not None:
                    note = f"cpu {v['build_cpu']:.0f} s"
                rows.append(_row(phase, step, v["variant"], v["steps"][step], note))
        rows.append(_row(phase, "kernel total", v["variant"], v["seconds"],
                         f"derived from {v['derived_from']}" if v["derived_from"] else "from scratch"))
    rows.append(_row(phase, "total", "all" if len(cold["variants"]) > 1 else
                     cold["variants"][0]["variant"], cold["seconds"]))
    return rows


def warm_rows(report, wall, status):
    """Per-step rows of a warm run from its report.json (None where it has no figure).

    run.py records timings.kernel.<variant> (prepare), and per variant
    variants.<v>.timings.<step> for each step of harness/steps.py GUEST; the
    guests run concurrently, so timings.guests is the wall time of all of them.
    """
    rows = []
    report = report or {}
    timings = report.get("timings", {})
    names = list(report.get("variants", {}))
    for step in steps.TIMED:
        for name in names:
            entry = report["variants"][name]
            sec = (entry.get("timings") or {}).get(step)
            if sec is None and isinstance(timings.get(step), dict):
                sec = timings[step].get(name)
            if sec is None and step not in REQUIRED_STEPS:
                continue                    # optional detail, not a step of the issue
            rows.append(_row("warm make run", "gdb verification" if step == "gdb" else step,
                             name, sec, "" if sec is not None else "not in report.json"))
    if timings.get("guests") is not None:
        rows.append(_row("warm make run", "guests (all)", "", timings["guests"],
                         f"concurrent, {timings.get('guest_workers', '?')} workers"))
    rep_s = timings.get("report")
    rows.append(_row("warm make run", "report", "", rep_s,
                     "" if rep_s is not None else "not in report.json"))
    rows.append(_row("warm make run", "total", "", wall,
                     f"make run exit status {status}" + ("" if report else ", no report.json")))
    return rows


def ratios(cold_alone, cold_all, warm_wall):
    out = []
    if cold_alone and cold_all:
        value = cold_all["seconds"] / cold_alone["seconds"]
        alone = cold_alone["variants"][0]["variant"]
        out.append({"name": f"cold all variants / one variant alone ({alone})",
                    "value": round(value, 2), "target": f"<= {TARGET_COLD_RATIO}",
                    "ok": value <= TARGET_COLD_RATIO})
    else:
        out.append({"name": "cold all variants / one variant alone", "value": None,
                    "target": f"<= {TARGET_COLD_RATIO}", "ok": None,
                    "note": "skipped (--skip-cold)"})
    out.append({"name": "warm make run seconds", "value": None if warm_wall is None
                else round(warm_wall, 1), "target": f"<= {TARGET_WARM_SECONDS:g}",
                "ok": None if warm_wall is None else warm_wall <= TARGET_WARM_SECONDS})
    return out


def format_table(rows, ratio_rows):
    lines = [f"{'phase':18} {'step':17} {'variant':9} {'seconds':>8}  note"]
    for r in rows:
        sec = "-" if r["seconds"] is None else f"{r['seconds']:.1f}"
        lines.append(f"{r['phase']:18} {r['step']:17} {r['variant']:9} {sec:>8}  {r['note']}".rstrip())
    for q in ratio_rows:
        if q["value"] is None:
            val, verdict = "-", q.get("note", "not measured")
        else:
            val, verdict = f"{q['value']:g}", "met" if q["ok"] else "NOT met"
        lines.append(f"{'ratio':18} {q['name']}: {val} (target {q['target']}) {verdict}")
    return "\n".join(lines)


def icount_rows(results, names, known):
    """`known`: the variants by name (RunOptions.known_variants(): the user's too)."""
    rows = []
    for name in names:
        mode = known[name].module_mode
        for kind in ("resolve", "load", "direct", "pointer"):
            a, b = results[0].get(name, {}).get(kind), results[1].get(name, {}).get(kind)
            if a is None or b is None:
                continue
            diff = abs(a - b) / a * 100 if a else 0.0
            rows.append({"variant": name, "mode": mode, "figure": kind, "run1": a, "run2": b,
                         "diff_percent": round(diff, 3)})
    return rows


ICOUNT_LABELS = {"resolve": "resolve all symbols (ns)", "load": "finit_module (ns)",
                 "direct": "direct call (ns/call)", "pointer": "pointer call (ns/call)"}


def format_icount(rows):
    lines = [f"{'variant':9} {'mode':9} {'figure':24} {'run 1':>14} {'run 2':>14} {'diff %':>7}"]
    for r in rows:
        lines.append(f"{r['variant']:9} {r['mode']:9} {ICOUNT_LABELS[r['figure']]:24} "
                     f"{r['run1']:14.2f} {r['run2']:14.2f} {r['diff_percent']:7.3f}")
    return "\n".join(lines)


def bench_json(rows, ratio_rows, icount, cold_skipped):
    return {"steps": rows, "ratios": ratio_rows, "cold_skipped": cold_skipped,
            "cold_alone_variant": COLD_ALONE, "rounds": ROUNDS, "icount": "shift=0",
            "rows": icount}


def icount_runs(names, runs_root):
    """Two -icount runs of the variants: ([{variant: figures}], the first run's
    error or None, the last run directory)."""
    results, rundir = [], None
    for _attempt in (1, 2):
        _status, rundir, err = run(list(names), RunOptions.from_env(runs_root=runs_root,
                                                                    bench=ROUNDS))
        if err is not None:
            print(err.one_line(), file=sys.stderr)
            return results, err, rundir
        rep = json.loads((rundir / "report.json").read_text())
        results.append({n: figures(v) for n, v in rep["variants"].items()})
    return results, None, rundir


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.bench")
    ap.add_argument("--skip-cold", action="store_true",
                    help="leave out the cold builds (about 20 minutes on 2 cores)")
    ap.add_argument("--variants", help="comma-separated variants (default: the default "
                    "variants of kernel line 6.1)")
    ap.add_argument("--runs-dir", help="where run directories go (default: ./runs or $KSYMLAB_RUNS)")
    args = ap.parse_args(argv)
    runs_root = Path(args.runs_dir or paths.runs_root())
    rows, cold_alone, cold_all = [], None, None
    try:
        # built-in and the user's variant files, read here: a bad one is a usage error
        known = RunOptions.from_env(runs_root=runs_root).known_variants()
        names = variants.defaults(known) if args.variants is None else \
            [n for n in args.variants.split(",") if n]
        variants.select(names + [COLD_ALONE], known=known)
        if args.skip_cold:
            rows.append(_row("cold", "skipped", "", None, "--skip-cold"))
        else:
            cold_alone = cold_build([COLD_ALONE])
            rows += cold_rows("cold one variant", cold_alone)
            cold_all = cold_build(names)
            rows += cold_rows("cold all variants", cold_all)
    except HarnessError as err:
        print(err.one_line(), file=sys.stderr)
        return err.exit_status

    # A failed -icount run does not throw away the cold figures: the table is
    # still printed, and the exit status is the run's.
    results, failed, rundir = icount_runs(names, runs_root)
    wall, status, warm_dir = warm_make_run(runs_root, names)
    report = None
    if warm_dir and (warm_dir / "report.json").is_file():
        report = json.loads((warm_dir / "report.json").read_text())
    rows += warm_rows(report, wall, status)
    ratio_rows = ratios(cold_alone, cold_all, wall)
    icount = icount_rows(results, names, known) if len(results) == 2 else []

    print(format_table(rows, ratio_rows))
    if args.skip_cold:
        print("note: cold builds skipped (--skip-cold); no cold ratio measured.")
    print()
    if failed is not None:
        print(f"note: the -icount runs failed ({failed.one_line()}); no in-guest figures.")
    print(format_icount(icount))
    print("note: under -icount the guest clock counts instructions (1 ns each), so these are\n"
          "instruction counts: repeatable, but blind to cache, branch-prediction and\n"
          "retpoline costs. Writeback to the RAM disk never throttles in icount time, so\n"
          "the writeback and BPF checks of these runs fail; `make run` is the verification.")
    out = (warm_dir or rundir) / "bench.json"
    out.write_text(json.dumps(bench_json(rows, ratio_rows, icount, args.skip_cold), indent=2) + "\n")
    print(f"bench: {out}")
    return failed.exit_status if failed is not None else 0


if __name__ == "__main__":
    sys.exit(main())
