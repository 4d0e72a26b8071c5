"""`python3 -m harness session VARIANT[,VARIANT]`: its options and its entry."""

import argparse
import signal
import sys
from pathlib import Path

from .. import proc
from ..errors import HarnessError
from ..guest.scenario import parse as parse_scenario
from ..options import RunOptions
from ..prepare import cache, symcheck
from . import host, pair

# Two guests side by side at most: one prompt has room for two columns.
MAX_VARIANTS = 2


def add_args(p):
    p.add_argument("variants", metavar="VARIANT[,VARIANT]",
                   help="one variant, or two side by side (`python3 -m harness variants`)")
    p.add_argument("--variant-file", action="append", default=[], metavar="FILE",
                   help="a variant defined in FILE (TOML, see variants/README.md); repeatable")
    p.add_argument("--scenario", help="guest scenario file (default: harness/scenarios/"
                   "default.scenario)")
    p.add_argument("--insmod-args", default="",
                   help="module parameters, e.g. simulate_missing=task_prio")
    p.add_argument("--kaslr", action="store_true",
                   help="boot with KASLR on; gdb relocates vmlinux by the measured slide")
    p.add_argument("--lttng", action="store_true",
                   help="load Debian's LTTng in the guest as `run --lttng` does (docs/session.md)")
    p.add_argument("--keep-vmcore", action="store_true",
                   help="keep the first snapshot's vmcore in the session's directory")
    p.add_argument("--kvm", action="store_true", help="use KVM when /dev/kvm works (default TCG)")
    p.add_argument("--append", default="", help="extra kernel command line arguments")
    p.add_argument("--runs-dir", help="where session directories go (default: ./runs or "
                   "$KSYMLAB_RUNS)")
    p.add_argument("--boot-timeout", type=int, help="seconds until the module is loaded")
    p.add_argument("--hang-timeout", type=int,
                   help="seconds without console output that count as a hang")
    p.add_argument("--module-src", metavar="DIR",
                   help="build the probe module from DIR instead of probe-module/")
    # pair.py's children: the session directory the front end made
    p.add_argument("--into", help=argparse.SUPPRESS)


def options(args):
    opts = RunOptions.from_env(
        scenario=args.scenario, kvm=args.kvm, append=args.append, runs_root=args.runs_dir,
        boot_timeout=args.boot_timeout, hang_timeout=args.hang_timeout,
        insmod_args=args.insmod_args, kaslr=args.kaslr, variant_files=args.variant_file,
        module_src=args.module_src, lttng=args.lttng,
        keep_vmcore=args.keep_vmcore)
    if not opts.scenario.is_file():
        raise HarnessError("usage", f"{opts.scenario}: scenario file not found")
    parse_scenario(opts.scenario)
    if opts.module_src is not None and not (opts.module_src / "Kbuild").is_file():
        raise HarnessError("usage", f"{opts.module_src}: no probe-module sources (Kbuild) there")
    return opts


def names_of(text):
    names = [n for n in text.split(",") if n]
    if not 1 <= len(names) <= MAX_VARIANTS or len(set(names)) != len(names):
        raise HarnessError("usage", f"session {text}: one variant, or two different ones "
                                    "side by side")
    return names


def main(args):
    """The `session` command's handler: the exit status."""
    signal.signal(signal.SIGHUP, proc.stop_on_signal)      # the terminal hung up
    names = names_of(args.variants)
    opts = options(args)
    selected = opts.select(names)
    if len(selected) == 2:
        symcheck.ensure_built()         # shared by both sides: built once, here
        rundir = host.new_session_dir(opts.runs_root, names)
        print(f"session: {rundir}", file=sys.stderr)
        return pair.main(names, args, rundir)
    rundir = Path(args.into) if args.into else host.new_session_dir(opts.runs_root, names)
    print(f"session: {rundir}", file=sys.stderr)
    with cache.session():
        return host.solo(selected[0], opts, rundir)
