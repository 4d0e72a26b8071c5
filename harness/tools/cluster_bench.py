"""Benchmark (not a test): the default matrix locally and through --cluster.

    /usr/bin/python3 -m harness.tools.cluster_bench [--variants A,B] [--repeat N]

Runs the same variants (warm cache: every worker uses $KSYMLAB_CACHE, so no
tree is built and the figure is the guests' share) three ways: in-process
(no cluster), on a localhost Dask cluster of one worker with two threads, and
on one of two workers with one thread each. Prints the wall seconds of each
(median of --repeat) and the ratios. On one 2-core machine the guests are
CPU-bound either way, so two workers cannot beat one: the figure measures
what the cluster costs (scheduling, the child process, carrying the files
home), not what a second machine would gain.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import paths
from ..cluster.local import LocalCluster


def _timed_run(args, runs):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--runs-dir", str(runs), *args],
                       cwd=paths.REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"cluster_bench: run {' '.join(args)} exited {p.returncode}: "
                 f"{p.stderr.strip().splitlines()[-1:]}")
    return took


def _on_cluster(workers, threads, run_args, runs, root):
    with LocalCluster(root) as c:
        c.scheduler()
        for i in range(workers):
            c.worker(f"bench{i}", paths.cache_root(), nthreads=threads)
        return _timed_run(["--cluster", c.address, *run_args], runs)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.tools.cluster_bench")
    ap.add_argument("--variants", help="variants (default: the 6.1 line's defaults)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    run_args = ["--variants", args.variants] if args.variants else []
    ways = {"local (in-process, 2 guests at once)": None,
            "--cluster, 1 worker x 2 threads": (1, 2),
            "--cluster, 2 workers x 1 thread": (2, 1)}
    times = {}
    with tempfile.TemporaryDirectory(prefix="ksymlab-cluster-bench-") as tmp:
        for label, shape in ways.items():
            got = []
            for i in range(args.repeat):
                root = Path(tmp) / f"{len(times)}-{i}"
                root.mkdir()
                print(f"cluster_bench: {label}, round {i + 1}/{args.repeat}", flush=True)
                got.append(_timed_run(run_args, root / "runs") if shape is None
                           else _on_cluster(*shape, run_args, root / "runs", root))
            times[label] = statistics.median(got)
    base = times["local (in-process, 2 guests at once)"]
    print(f"\n{'way':45} {'wall s':>8} {'vs local':>9}")
    for label, t in times.items():
        print(f"{label:45} {t:8.1f} {t / base:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
