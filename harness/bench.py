"""Benchmark (not a test): symbol resolution, module load and call cost per mode.

Boots every variant twice under QEMU -icount, where the guest clock counts
instructions, runs the guest benchmark program, and prints per mode the
median of its rounds and how far the two runs differ.
"""

import json
import statistics
import sys

from . import variants
from .run import run

ROUNDS = 5


def figures(entry):
    """Median ns of each bench kind over the rounds of one run."""
    by = {}
    for b in entry.get("bench", []):
        per_call = b["ns"] / b["calls"]
        by.setdefault(b["kind"], []).append(per_call)
    return {k: statistics.median(v) for k, v in by.items()}


def main(names=variants.DEFAULT, runs_root=None):
    results = []
    for attempt in (1, 2):
        status, rundir, err = run(list(names), runs_root=runs_root, bench=ROUNDS)
        if err is not None:
            print(err.one_line(), file=sys.stderr)
            return err.exit_status
        rep = json.loads((rundir / "report.json").read_text())
        results.append({n: figures(v) for n, v in rep["variants"].items()})
    rows = []
    print(f"{'variant':9} {'mode':9} {'figure':24} {'run 1':>14} {'run 2':>14} {'diff %':>7}")
    labels = {"resolve": "resolve all symbols (ns)", "load": "finit_module (ns)",
              "direct": "direct call (ns/call)", "pointer": "pointer call (ns/call)"}
    for name in names:
        mode = variants.VARIANTS[name].module_mode
        for kind, label in labels.items():
            a, b = results[0][name].get(kind), results[1][name].get(kind)
            if a is None:
                continue
            diff = abs(a - b) / a * 100 if a else 0.0
            rows.append({"variant": name, "mode": mode, "figure": kind, "run1": a, "run2": b,
                         "diff_percent": round(diff, 3)})
            print(f"{name:9} {mode:9} {label:24} {a:14.2f} {b:14.2f} {diff:7.3f}")
    print("note: under -icount the guest clock counts instructions (1 ns each), so these are\n"
          "instruction counts: repeatable, but blind to cache, branch-prediction and\n"
          "retpoline costs. Writeback to the RAM disk never throttles in icount time, so\n"
          "the writeback and BPF checks of these runs fail; `make run` is the verification.")
    out = rundir / "bench.json"
    out.write_text(json.dumps({"rounds": ROUNDS, "icount": "shift=0", "rows": rows}, indent=2))
    print(f"bench: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
