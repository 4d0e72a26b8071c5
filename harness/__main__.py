"""Command line: python3 -m harness {run,build} [options]."""

import argparse
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

from .build import cache, kernel, variants
from . import proc
from .errors import EXIT, HarnessError
from .options import RunOptions
from .run import run


def _terminate(signum, frame):
    # Every worker's wait loop sees STOP and ends its child's process group;
    # the main thread unwinds so QEMU and gdb are stopped by their context managers.
    proc.STOP.set()
    raise KeyboardInterrupt


def _internal_error(e):
    """A bug in the harness: the traceback goes to a file, the terminal gets one line."""
    log = Path(tempfile.gettempdir()) / f"ksymlab-internal-error-{os.getpid()}.log"
    try:
        log.write_text(traceback.format_exc())
        where = f" (traceback: {log})"
    except OSError:
        where = ""
    print(f"ksymlab: internal error: {type(e).__name__}: {e}{where}", file=sys.stderr)
    return 70


def _variant_args(p):
    p.add_argument("--variants", help="comma-separated variants (default: the default "
                   "variants of the kernel lines; `python3 -m harness variants` lists them)")
    p.add_argument("--kernel", default="6.1", metavar="LINE[,LINE]",
                   help="kernel line(s) whose default variants run when --variants is not "
                   "given (default: %(default)s)")
    p.add_argument("--variant-file", action="append", default=[], metavar="FILE",
                   help="a variant defined in FILE (TOML, see variants/README.md); repeatable")


def _names(args, opts):
    if args.variants:
        return [n for n in args.variants.split(",") if n]
    lines = tuple(x for x in args.kernel.split(",") if x)
    names = variants.defaults(opts.known_variants(), lines)
    if not names:
        raise HarnessError("usage", f"no default variants for kernel line(s) {args.kernel}")
    return names


def main(argv=None):
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    ap = argparse.ArgumentParser(prog="python3 -m harness",
                                 description="ksymlab: does a tracer work without kallsyms?")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="build, boot, verify and report every variant")
    _variant_args(r)
    r.add_argument("--scenario", help="guest scenario file (default: harness/scenarios/"
                   "default.scenario)")
    r.add_argument("--kvm", action="store_true", help="use KVM when /dev/kvm works (default TCG)")
    r.add_argument("--append", default="", help="extra kernel command line arguments")
    r.add_argument("--runs-dir", help="where run directories go (default: ./runs or $KSYMLAB_RUNS)")
    r.add_argument("--boot-timeout", type=int, default=600, help="seconds until READY")
    r.add_argument("--hang-timeout", type=int, default=180,
                   help="seconds without console output that count as a hang")
    r.add_argument("--insmod-args", default="",
                   help="module parameters, e.g. simulate_missing=task_prio")
    r.add_argument("--stress", type=int, default=0, metavar="N",
                   help="after sampling, unload and reload the module N times under readers")
    r.add_argument("--kaslr", action="store_true",
                   help="boot with KASLR on; gdb relocates vmlinux by the measured slide")
    r.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="guests booted at once (default: one per CPU)")
    r.add_argument("--keep-vmcore", action="store_true",
                   help="keep each guest's vmcore (about the guest's RAM, 512 MiB) in its run "
                   "directory after drgn read it")
    r.add_argument("--module-src", metavar="DIR",
                   help="build the probe module from DIR instead of probe-module/ "
                   "(a scratch copy, e.g. a mutant)")
    r.add_argument("--no-lttng", action="store_true",
                   help="skip the LTTng boot of variants whose file has an [lttng] table")
    b = sub.add_parser("build", help="only prepare (extract, patch, configure, build) the kernels")
    _variant_args(b)
    k = sub.add_parser("key", help="print the cache key of each variant")
    _variant_args(k)
    ls = sub.add_parser("variants", help="list the known variants and where each is defined")
    _variant_args(ls)
    c = sub.add_parser("cache", help="what the build cache holds; prune it to its cap or clear it")
    c.add_argument("action", nargs="?", default="list", choices=("list", "prune", "clear"),
                   help="list (default), prune (evict least recently used entries down to "
                   "the cap now) or clear (evict every entry not in use)")
    c.add_argument("--max", metavar="SIZE", help="the cap, e.g. 30G (default: "
                   "$KSYMLAB_CACHE_MAX or 30G; off for none)")
    s = sub.add_parser("show", help="print a run's summary and disagreements, name its files")
    s.add_argument("run", nargs="?", help="run directory or run id (default: runs/latest)")
    s.add_argument("--open", action="store_true", help="print only the report.html path")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT["usage"] if e.code else 0
    if args.cmd == "show":
        from .report import show
        return show.main(args.run, args.open)
    try:
        if args.cmd == "cache":
            cap = cache.parse_size(args.max) if args.max else cache.cap_from_env()
            return cache.main(RunOptions.from_env().cache, args.action, cap)
        if args.cmd == "run":
            opts = RunOptions.from_env(
                scenario=args.scenario, kvm=args.kvm, append=args.append,
                runs_root=args.runs_dir, boot_timeout=args.boot_timeout,
                hang_timeout=args.hang_timeout, insmod_args=args.insmod_args,
                stress=args.stress, kaslr=args.kaslr, jobs=args.jobs,
                keep_vmcore=args.keep_vmcore,
                variant_files=args.variant_file, module_src=args.module_src,
                lttng=not args.no_lttng)
            # every tree, module and initramfs the run builds or finds is held (shared
            # lock) until it ends: no eviction, here or in another process, removes them
            with cache.session():
                status, rundir, err = run(_names(args, opts), opts)
            if err is not None:
                print(err.one_line(), file=sys.stderr)
            print(f"report: {rundir / 'report.md'}")
            return status
        opts = RunOptions.from_env(variant_files=args.variant_file)
        if args.cmd == "variants":
            for v in opts.known_variants().values():
                mark = "*" if v.default else " "
                print(f"{mark} {v.name:16} {v.kernel_line:5} {v.module_mode:8} {v.source}")
            print("(* = compared by default on its kernel line)")
            return 0
        selected = opts.select(_names(args, opts))
        if args.cmd == "key":
            for v in selected:
                print(f"{v.name} {kernel.tree_key(v)}")
            return 0
        # Bases first, so that a tree can derive from one built just before; every tree
        # built or found is held until the end, so a later one cannot evict it.
        with cache.session():
            for i, v in enumerate(kernel.build_order(selected), 1):
                tree = kernel.prepare(v, opts.cache, None, i, len(selected))
                print(f"{v.name} {tree.src}")
        return 0
    except HarnessError as err:
        print(err.one_line(), file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        proc.STOP.set()
        print("ksymlab: interrupted (every build, guest and gdb of this run stopped; "
              "the next run redoes the unfinished steps)", file=sys.stderr)
        return 130
    except Exception as e:      # noqa: BLE001 - a bug in the harness
        return _internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
