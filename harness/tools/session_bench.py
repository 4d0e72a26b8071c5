"""Benchmark (not a test): how long `harness session V` takes to its gdb prompt,
beside the boot lap of a `harness run` of the same variant.

    /usr/bin/python3 -m harness.tools.session_bench [--variant V] [--repeat N]

Warm cache expected (nothing is built, so the figures are a boot's). Each
round runs `run --variants V --no-lttng` and reads its boot lap (report.json)
and when its guest was ready, counted from the command (its progress line),
then starts `session V` under pexpect, takes the seconds from the command to
the prompt, and quits. Prints each round and the medians. The session's
figure includes the first snapshot, which the run's "guest ready" does not.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from .. import paths


def run_boot(variant, runs):
    """(boot lap, seconds from the command to the guest's readiness) of a warm `run`
    of `variant`: report.json's lap, and the elapsed time its progress line prints."""
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--variants", variant,
                        "--no-lttng", "--runs-dir", str(runs)], cwd=paths.REPO,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit(f"session_bench: run of {variant} exited {p.returncode}: "
                 f"{p.stderr.strip().splitlines()[-1:]}")
    report = json.loads((runs / "latest" / "report.json").read_text())
    ready = re.search(rf"^\[\s*([\d.]+)s\] boot: {re.escape(variant)}: guest ready",
                      p.stderr, re.M)
    if not ready:
        sys.exit(f"session_bench: run of {variant} printed no 'guest ready' line")
    return report["variants"][variant]["timings"]["boot"], float(ready.group(1))


def session_prompt(variant, runs, timeout=600):
    """Seconds from `session VARIANT` to its gdb prompt; the session is quit after."""
    t0 = time.monotonic()
    child = pexpect.spawn(sys.executable, ["-m", "harness", "session", variant,
                                           "--runs-dir", str(runs)],
                          cwd=str(paths.REPO), encoding="utf-8", timeout=timeout)
    try:
        child.expect_exact(f"(ksymlab {variant}) ")
        took = time.monotonic() - t0
        child.sendline("quit")
        child.expect(pexpect.EOF, timeout=120)
    except (pexpect.TIMEOUT, pexpect.EOF):
        sys.exit(f"session_bench: session {variant} gave no prompt: {child.before[-500:]!r}")
    finally:
        child.close(force=True)
    return took


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.tools.session_bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="exports")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    laps, readies, prompts = [], [], []
    with tempfile.TemporaryDirectory(prefix="ksymlab-session-bench-") as tmp:
        for i in range(args.repeat):
            lap, ready = run_boot(args.variant, Path(tmp) / f"run{i}")
            laps.append(lap)
            readies.append(ready)
            prompts.append(session_prompt(args.variant, Path(tmp) / f"session{i}"))
            print(f"round {i + 1}: run boot lap {lap:.1f} s, run's guest ready "
                  f"{ready:.1f} s after the command, session prompt {prompts[-1]:.1f} s "
                  "after the command", flush=True)
    med = statistics.median
    print(f"{args.variant}, {args.repeat} rounds, medians: run boot lap {med(laps):.1f} s, "
          f"run's guest ready {med(readies):.1f} s, session prompt {med(prompts):.1f} s")


if __name__ == "__main__":
    main()
