"""Command line: python3 -m harness <command> [options].

Commands (COMMANDS below, one handler each, like symcheck/src/main.c's commands[]):
  run       build, boot, verify and report every variant
  build     only prepare (extract, patch, configure, build) the kernels
  key       print the cache key of each variant
  variants  list the known variants and where each is defined
  cache     what the build cache holds; prune it to its cap or clear it
  cluster-certs  a CA and TLS certificates for --cluster tls:// (cluster/certs.py)
  show      print a run's summary and disagreements, name its files
  session   a verification session a person drives: gdb at the first snapshot

Exit statuses: errors.EXIT (README.md lists the same table).
"""

import argparse
import os
import signal
import sys
import tempfile
import traceback
from typing import Callable, NamedTuple

from .prepare import cache, kernel, variants
from .prepare.tree import tree_key
from . import proc
from .errors import EXIT, HarnessError
from .options import RunOptions
from .run import run


def _internal_error(e):
    """A bug in the harness: the traceback goes to a file, the terminal gets one line.

    mkstemp creates a new file (O_EXCL, mode 0600) under a name nobody could
    predict: the harness runs as root, and a fixed name in /tmp could be a
    symlink another user planted."""
    try:
        fd, log = tempfile.mkstemp(prefix="ksymlab-internal-error-", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(traceback.format_exc())
        where = f" (traceback: {log})"
    except OSError:
        where = ""
    print(f"ksymlab: internal error: {type(e).__name__}: {e}{where}", file=sys.stderr)
    return EXIT["internal"]


# ------------------------------------------------------------ arguments

def _variant_args(p):
    p.add_argument("--variants", help="comma-separated variants (default: the default "
                   "variants of the kernel lines; `python3 -m harness variants` lists them)")
    p.add_argument("--kernel", default="6.1", metavar="LINE[,LINE]",
                   help="kernel line(s) whose default variants run when --variants is not "
                   "given (default: %(default)s)")
    p.add_argument("--variant-file", action="append", default=[], metavar="FILE",
                   help="a variant defined in FILE (TOML, see variants/README.md); repeatable")


def _run_args(p):
    _variant_args(p)
    p.add_argument("--scenario", help="guest scenario file (default: harness/scenarios/"
                   "default.scenario)")
    p.add_argument("--kvm", action="store_true", help="use KVM when /dev/kvm works (default TCG)")
    p.add_argument("--append", default="", help="extra kernel command line arguments")
    p.add_argument("--runs-dir", help="where run directories go (default: ./runs or $KSYMLAB_RUNS)")
    # None keeps RunOptions' default, the one place the timeouts are set
    p.add_argument("--boot-timeout", type=int, help="seconds until READY")
    p.add_argument("--hang-timeout", type=int,
                   help="seconds without console output that count as a hang")
    p.add_argument("--insmod-args", default="",
                   help="module parameters, e.g. simulate_missing=task_prio")
    p.add_argument("--stress", type=int, default=0, metavar="N",
                   help="after sampling, unload and reload the module N times under readers")
    p.add_argument("--kaslr", action="store_true",
                   help="boot with KASLR on; gdb relocates vmlinux by the measured slide")
    p.add_argument("--guest-cpus", type=int, metavar="N",
                   help="vCPUs of the probe-module and LTTng guests (default 1; the suite's "
                   "guests have 2, as LTTng's CI's)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="guests booted at once (default: one per CPU)")
    p.add_argument("--keep-vmcore", action="store_true",
                   help="keep each guest's vmcore (about the guest's RAM, 512 MiB) in its run "
                   "directory after drgn read it")
    p.add_argument("--module-src", metavar="DIR",
                   help="build the probe module from DIR instead of probe-module/ "
                   "(a scratch copy, e.g. a mutant)")
    p.add_argument("--no-lttng", action="store_true",
                   help="skip the LTTng boot of variants whose file has an [lttng] table")
    p.add_argument("--lttng-suite", action="store_true",
                   help="after each LTTng boot, run lttng-tools' own kernel regression "
                   "tests in guests of the variant (docs/lttng.md)")
    p.add_argument("--lttng-suite-only", metavar="SUBSTR[,SUBSTR...]",
                   help="with --lttng-suite: only the test scripts whose path contains one "
                   "of these (e.g. kernel/test_event_basic,tools/snapshots)")
    p.add_argument("--lttng-suite-timeout", type=int, metavar="SECONDS",
                   help="with --lttng-suite: seconds each test script may run (default "
                   f"{RunOptions.lttng_suite_timeout})")
    p.add_argument("--cluster", metavar="tls://HOST:PORT",
                   help="run each variant job on a worker of this Dask scheduler "
                   "(default: $KSYMLAB_CLUSTER, else in this process; plain tcp:// only on "
                   "the loopback; docs/cluster.md)")
    p.add_argument("--cluster-certs", metavar="DIR",
                   help="with --cluster tls://: ca.pem, client.pem and client-key.pem "
                   "(default: $KSYMLAB_CLUSTER_CERTS, else ~/.config/ksymlab/cluster-certs; "
                   "made by the cluster-certs command)")
    p.add_argument("--insecure-cluster", action="store_true",
                   help="allow --cluster tcp:// off the loopback: anyone who reaches the "
                   "scheduler runs code on the workers (the report says so)")


def _certs_args(p):
    p.add_argument("dir", metavar="DIR", help="a new or empty directory (made 0700)")
    p.add_argument("--days", type=int, default=365, help="validity (default: %(default)s)")


def _cache_args(p):
    p.add_argument("action", nargs="?", default="list", choices=("list", "prune", "clear"),
                   help="list (default), prune (evict least recently used entries down to "
                   "the cap now) or clear (evict every entry not in use)")
    p.add_argument("--max", metavar="SIZE", help="the cap, e.g. 40G (default: "
                   "$KSYMLAB_CACHE_MAX or 40G; off for none)")


def _show_args(p):
    p.add_argument("run", nargs="?", help="run directory or run id (default: runs/latest)")
    p.add_argument("--open", action="store_true", help="print only the report.html path")


def _names(args, opts):
    if args.variants:
        return [n for n in args.variants.split(",") if n]
    lines = tuple(x for x in args.kernel.split(",") if x)
    names = variants.defaults(opts.known_variants(), lines)
    if not names:
        raise HarnessError("usage", f"no default variants for kernel line(s) {args.kernel}")
    return names


# ------------------------------------------------------------ handlers

def _suite_args(args):
    """--lttng-suite-only and --lttng-suite-timeout only mean something with --lttng-suite."""
    if (args.lttng_suite_only or args.lttng_suite_timeout is not None) and not args.lttng_suite:
        raise HarnessError("usage", "--lttng-suite-only and --lttng-suite-timeout need "
                                    "--lttng-suite")
    if args.lttng_suite and args.no_lttng:
        raise HarnessError("usage", "--lttng-suite runs with the LTTng boot's modules: "
                                    "it cannot be combined with --no-lttng")
    if args.lttng_suite_timeout is not None and args.lttng_suite_timeout < 10:
        raise HarnessError("usage", f"--lttng-suite-timeout {args.lttng_suite_timeout}: "
                                    "a script needs at least 10 s")


def _run(args):
    _suite_args(args)
    if args.guest_cpus is not None and not 1 <= args.guest_cpus <= 8:
        raise HarnessError("usage", f"--guest-cpus {args.guest_cpus}: between 1 and 8")
    opts = RunOptions.from_env(
        scenario=args.scenario, kvm=args.kvm, append=args.append,
        runs_root=args.runs_dir, boot_timeout=args.boot_timeout,
        hang_timeout=args.hang_timeout, insmod_args=args.insmod_args,
        stress=args.stress, kaslr=args.kaslr, jobs=args.jobs, guest_cpus=args.guest_cpus,
        keep_vmcore=args.keep_vmcore,
        variant_files=args.variant_file, module_src=args.module_src,
        lttng=not args.no_lttng, cluster=args.cluster, cluster_certs=args.cluster_certs,
        insecure_cluster=args.insecure_cluster, lttng_suite=args.lttng_suite,
        lttng_suite_only=tuple(x for x in (args.lttng_suite_only or "").split(",") if x),
        lttng_suite_timeout=args.lttng_suite_timeout)
    # every tree, module and initramfs the run builds or finds is held (shared
    # lock) until it ends: no eviction, here or in another process, removes them
    with cache.session():
        status, rundir, err = run(_names(args, opts), opts)
    if err is not None:
        print(err.one_line(), file=sys.stderr)
    print(f"report: {rundir / 'report.md'}")
    return status


def _build(args):
    opts = RunOptions.from_env(variant_files=args.variant_file)
    selected = opts.select(_names(args, opts))
    # Bases first, so that a tree can derive from one built just before; every tree
    # built or found is held until the end, so a later one cannot evict it.
    with cache.session():
        for i, v in enumerate(kernel.build_order(selected), 1):
            tree = kernel.prepare(v, opts.cache, None, i, len(selected))
            print(f"{v.name} {tree.src}")
    return 0


def _key(args):
    opts = RunOptions.from_env(variant_files=args.variant_file)
    for v in opts.select(_names(args, opts)):
        print(f"{v.name} {tree_key(v)}")
    return 0


def _variants(args):
    opts = RunOptions.from_env(variant_files=args.variant_file)
    for v in opts.known_variants().values():
        mark = "*" if v.default else " "
        lttng = f"lttng {v.lttng_version}" if v.lttng_series else "-"
        print(f"{mark} {v.name:16} {v.kernel_line:5} {v.module_mode:8} {lttng:13} {v.source}")
    print("(* = compared by default on its kernel line; lttng: the LTTng release its "
          "LTTng boot builds)")
    return 0


def _cache(args):
    cap = cache.parse_size(args.max) if args.max else cache.cap_from_env()
    return cache.main(RunOptions.from_env().cache, args.action, cap)


def _cluster_certs(args):
    from .cluster import certs
    if args.days < 1:
        raise HarnessError("usage", f"--days {args.days}: at least 1")
    issued = certs.issue(args.dir, args.days)
    print(f"{issued.directory}: {' '.join(issued.files)}")
    print(f"CA SHA-256 {issued.ca_fingerprint}; copy ca.pem and one role's pair to each "
          "machine, keep ca-key.pem off them (docs/cluster.md)")
    return 0


def _session(args):
    from .session import cli
    return cli.main(args)


def _session_args(p):
    from .session import cli
    cli.add_args(p)


def _show(args):
    from .report import show
    return show.main(args.run, args.open)


class Command(NamedTuple):
    help: str
    add_args: Callable          # adds the command's options to its subparser
    handler: Callable           # args -> exit status
    # False: the command starts no build, guest or gdb, so it runs outside the
    # guard that stops them on Ctrl-C and turns an exception into status 70
    # (show handles its own errors: one line, exit 2).
    guarded: bool = True


# name -> command, in the order `--help` lists them
COMMANDS = {
    "run": Command("build, boot, verify and report every variant", _run_args, _run),
    "build": Command("only prepare (extract, patch, configure, build) the kernels",
                     _variant_args, _build),
    "key": Command("print the cache key of each variant", _variant_args, _key),
    "variants": Command("list the known variants and where each is defined",
                        _variant_args, _variants),
    "cache": Command("what the build cache holds; prune it to its cap or clear it",
                     _cache_args, _cache),
    "cluster-certs": Command("make a CA and the scheduler's, workers' and client's TLS "
                             "certificates for --cluster tls:// in DIR", _certs_args,
                             _cluster_certs),
    "show": Command("print a run's summary and disagreements, name its files",
                    _show_args, _show, guarded=False),
    "session": Command("a verification session: gdb at the first snapshot, one variant "
                       "or two side by side", _session_args, _session),
}


def parser():
    ap = argparse.ArgumentParser(prog="python3 -m harness",
                                 description="ksymlab: does a tracer work without kallsyms?")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, c in COMMANDS.items():
        c.add_args(sub.add_parser(name, help=c.help))
    return ap


def main(argv=None):
    signal.signal(signal.SIGTERM, proc.stop_on_signal)
    signal.signal(signal.SIGINT, proc.stop_on_signal)
    try:
        args = parser().parse_args(argv)
    except SystemExit as e:
        return EXIT["usage"] if e.code else 0
    command = COMMANDS[args.cmd]
    if not command.guarded:
        return command.handler(args)
    try:
        return command.handler(args)
    except HarnessError as err:
        print(err.one_line(), file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        proc.STOP.set()
        print("ksymlab: interrupted (every build, guest and gdb of this run stopped; "
              "the next run redoes the unfinished steps)", file=sys.stderr)
        return EXIT["interrupted"]
    except Exception as e:      # noqa: BLE001 - a bug in the harness
        return _internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
