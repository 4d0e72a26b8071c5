"""Mutation testing: does each plausible bug in probe-module/ or in a ported series fail a run?

    /usr/bin/python3 -m harness.mutants [--only ID,...] [--kind K] [--module|--series|--lttng]
        [--list] [--keep-trees] [--catalogue FILE] [--out DIR]

The catalogue (mutants/catalogue.toml) lists mutants: text edits of one file
of a scratch copy of probe-module/ (run with `harness run --module-src`), or
of a patch of a scratch copy of the patch root (run with KSYMLAB_PATCHES;
the tree is tail-derived from the cached one; a patch of patches/lttng, series
"lttng", rebuilds LTTng instead and is judged by the run's LTTng boot). Each
runs one variant through the whole harness, in a process of its own. First an unmutated baseline runs
on every variant the mutants use; a check that fails there cannot kill.

A mutant is killed when the run's verdict is fail and a check of the kind it
declares disagrees (KILL_KINDS: its value kinds, or its own `sampler` row).
Other outcomes: survived (the run passed), wrong-kind (it failed, but only on
checks of other kinds), crashed (a guest fault or failed step, no check of
its kind), invalid (an edit does not apply, or the module does not build).
The table of kill rates per kind and every mutant's result go to stdout and
to mutants.json and mutants.md in the output directory.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from ..prepare import cache, variants
from ..prepare.tree import tree_key
from .. import paths
from ..errors import EXIT, HarnessError
from ..progress import say
from .mutants_md import KIND_HEAD, MUTANT_HEAD, tables, text_table, why, write_report
from .patchedit import mutate, recount

CATALOGUE = paths.REPO / "mutants" / "catalogue.toml"

# The check kinds that may kill a mutant of each declared kind (checks/variant.py's
# SAMPLER_KINDS, plus the sampler's own availability row, see decide()).
KILL_KINDS = {
    "prio": ("prio", "policy"), "migratetype": ("pageblock", "migratetype"),
    "blockdev": ("blockdev",),
    "ustack": ("ustack",), "writeback": ("writeback",), "symbols": ("symbol",),
    "snapshot": ("snapshot", "prio", "policy", "pageblock", "migratetype"), "seed": ("seed",),
    "lttng": ("lttng",),
}
FIELDS = {"id", "kind", "what", "file", "edits", "series", "variant", "needs"}
STATUSES = ("killed", "survived", "wrong-kind", "crashed", "invalid")


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: str
    what: str
    file: str
    edits: tuple                    # ((find, replace), ...)
    series: Optional[str] = None    # set: the mutant edits a patch of this series
    variant: str = "exports"
    needs: Optional[str] = None     # the guest state or check it waits for

    @property
    def target(self):
        # patches/lttng (an LTTng port) rebuilds LTTng, not the kernel: its LTTng boot judges
        return "lttng" if self.series == "lttng" else "series" if self.series else "module"


def load(path=CATALOGUE):
    """The catalogue's mutants; a malformed entry is a usage error naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise HarnessError("usage", f"{path}: cannot read the mutant catalogue ({e})") from None
    out, seen = [], set()
    for n, m in enumerate(data.get("mutant", []), 1):
        name = m.get("id", f"#{n}")
        where = f"{path}: mutant {name}"
        if set(m) - FIELDS:
            raise HarnessError("usage", f"{where}: unknown key(s) {sorted(set(m) - FIELDS)}")
        for key in ("id", "kind", "what", "file", "edits"):
            if key not in m:
                raise HarnessError("usage", f"{where}: lacks {key!r}")
        if m["kind"] not in KILL_KINDS:
            raise HarnessError("usage", f"{where}: kind {m['kind']!r} is not one of "
                               f"{', '.join(KILL_KINDS)}")
        if name in seen:
            raise HarnessError("usage", f"{where}: id used twice")
        seen.add(name)
        edits = m["edits"]
        if not edits or not all(isinstance(e, list) and len(e) == 2 and
                                all(isinstance(x, str) for x in e) and e[0] for e in edits):
            raise HarnessError("usage", f"{where}: edits must be [[find, replace], ...] "
                               "with a non-empty find")
        out.append(Mutant(name, m["kind"], m["what"], m["file"],
                          tuple(tuple(e) for e in edits), m.get("series"),
                          m.get("variant", "exports"), m.get("needs")))
    if not out:
        raise HarnessError("usage", f"{path}: no [[mutant]] entries")
    return tuple(out)


# ---------------------------------------------------------------- applying

def module_copy(m, dest):
    """probe-module/ copied to `dest` with the mutant's edits; returns `dest`."""
    shutil.copytree(paths.PROBE_MODULE, dest)
    f = dest / m.file
    f.write_text(mutate(f.read_text(), m.edits, f"{m.id}: {m.file}"))
    return dest


def series_copy(m, dest, root=None):
    """The patch root copied to `dest`, the mutant's patch edited and recounted."""
    shutil.copytree(Path(root or paths.patches_root()), dest)
    f = dest / m.series / m.file
    if not f.is_file():
        raise HarnessError("mutant", f"{m.id}: {m.series}/{m.file}: no such patch")
    f.write_text(recount(mutate(f.read_text(), m.edits, f"{m.id}: {m.file}")))
    return dest


# ---------------------------------------------------------------- deciding

@dataclass(frozen=True)
class Outcome:
    id: str
    kind: str
    what: str
    target: str
    status: str                     # one of STATUSES
    killers: tuple = ()             # check ids of its kind that failed
    others: tuple = ()              # failed check ids of other kinds
    seeds: tuple = ()               # seed rows that do not hold
    error: Optional[str] = None     # the failed step, when one failed
    exit_status: Optional[int] = None
    seconds: float = 0.0
    needs: Optional[str] = None
    run: Optional[str] = None
    extra: dict = field(default_factory=dict)

    def to_json(self):
        return asdict(self)


def failed_ids(report, variant):
    """{check id: kind key} of every row of `variant` that disagrees."""
    v = (report.get("variants") or {}).get(variant) or {}
    return {c["id"]: (c["kind"], c["key"])
            for c in (v.get("symbols") or []) + (v.get("values") or [])
            if c.get("agree") is False}


def decide(m, report, baseline=frozenset(), exit_status=None, seconds=0.0, run=None):
    """The Outcome of mutant `m` from its run's report (None: the run wrote none)."""
    base = dict(id=m.id, kind=m.kind, what=m.what, target=m.target, exit_status=exit_status,
                seconds=round(seconds, 1), needs=m.needs, run=run)
    if report is None or m.variant not in (report.get("variants") or {}):
        return Outcome(status="invalid", error=f"no report (exit status {exit_status})", **base)
    v = report["variants"][m.variant]
    fails = {i: kk for i, kk in failed_ids(report, m.variant).items() if i not in baseline}
    killers = tuple(sorted(i for i, (kind, key) in fails.items()
                           if kind in KILL_KINDS[m.kind] or (kind == "sampler" and key == m.kind)))
    others = tuple(sorted(set(fails) - set(killers)))
    seeds = tuple(r["seed"] for r in report.get("seeds") or [] if r.get("holds") is False)
    err = v.get("error")
    error = f"{err['step']}: {err['message']}" if err else None
    base.update(others=others, seeds=seeds, error=error)
    if v.get("verdict") == "fail" and killers:
        return Outcome(status="killed", killers=killers, **base)
    if err and err.get("step") == "module" and m.target == "module":
        return Outcome(status="invalid", **base)       # the mutant does not even build
    if err:
        return Outcome(status="crashed", **base)
    if v.get("verdict") == "fail" or report.get("verdict") == "fail":
        return Outcome(status="wrong-kind", **base)
    return Outcome(status="survived", **base)


def _report(runs):
    try:
        return json.loads((runs / "latest" / "report.json").read_text())
    except (OSError, ValueError):
        return None


def run_harness(variant, runs, log, module_src=None, patches=None, extra=()):
    """One `harness run` of `variant` in a process of its own; (exit status, report).
    `extra`: more `harness run` arguments (--run-args), the same for every run."""
    argv = ["/usr/bin/python3", "-m", "harness", "run", "--variants", variant,
            "--runs-dir", str(runs), "--jobs", "1", *extra]
    if module_src:
        argv += ["--module-src", str(module_src)]
    env = dict(os.environ)
    if patches:
        env["KSYMLAB_PATCHES"] = str(patches)
    runs.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        p = subprocess.run(argv, cwd=paths.REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    if p.returncode == 130:
        raise KeyboardInterrupt
    return p.returncode, _report(runs)


def _evict_tree(report, variant, keep):
    """Drop a kernel tree the mutant's run built from the cache (not one in `keep`: the
    baselines' and any that was there before the run)."""
    key = ((report or {}).get("variants") or {}).get(variant, {}).get("tree_key")
    if not key or key in keep:
        return
    c = paths.cache_root()
    entry = cache.Entry("trees", key, cache.entry_path(c, "trees", key), variant, None, 0, True)
    if cache.try_evict(c, entry):
        say("mutants", f"removed the mutant's tree {key} from the cache")


def with_lttng(extra):
    """A run's arguments with the LTTng boot on: an LTTng mutant is judged there."""
    return tuple(a for a in extra if a != "--no-lttng")


def baseline_key(m):
    """The baseline a mutant is judged against: its variant, with LTTng for an LTTng one."""
    return f"{m.variant}+lttng" if m.target == "lttng" else m.variant


def run_mutant(m, out, baseline, keep_trees=True, baseline_trees=frozenset(), extra=()):
    extra = with_lttng(extra) if m.target == "lttng" else extra
    work = out / m.id
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        if m.target == "module":
            src = module_copy(m, work / "probe-module")
            status, rep = run_harness(m.variant, work / "runs", work / "harness.log",
                                      module_src=src, extra=extra)
        else:
            patches = series_copy(m, work / "patches")
            # a tree someone built before (a test, another run) is not the mutant's to remove
            (v,) = variants.select([m.variant], patches)
            key = tree_key(v)
            if cache.is_complete(paths.cache_root(), "trees", key):
                baseline_trees = baseline_trees | {key}
            status, rep = run_harness(m.variant, work / "runs", work / "harness.log",
                                      patches=patches, extra=extra)
    except HarnessError as err:
        return Outcome(m.id, m.kind, m.what, m.target, "invalid", error=err.one_line(),
                       needs=m.needs)
    o = decide(m, rep, baseline.get(baseline_key(m), frozenset()), status,
               time.monotonic() - t0, str(work / "runs" / "latest"))
    if m.target != "module" and not keep_trees:
        _evict_tree(rep, m.variant, baseline_trees)
    return o


def run_baselines(keys, out, extra=()):
    """The unmutated run of each baseline key (baseline_key(): a variant, `+lttng` with
    the LTTng boot): {key: failed ids}, and their tree keys."""
    failed, trees = {}, set()
    for key in sorted(keys):
        v, lttng = key.split("+")[0], key.endswith("+lttng")
        say("mutants", f"baseline: {key}, unmutated")
        status, rep = run_harness(v, out / "baseline" / key / "runs",
                                  out / "baseline" / f"{key}.log",
                                  extra=with_lttng(extra) if lttng else extra)
        if rep is None or v not in (rep.get("variants") or {}):
            raise HarnessError("mutants", f"baseline run of {v} wrote no report (exit status "
                               f"{status}; log {out / 'baseline' / f'{v}.log'})")
        failed[key] = frozenset(failed_ids(rep, v))
        trees.add(rep["variants"][v].get("tree_key"))
        if rep["variants"][v].get("error"):
            raise HarnessError("mutants", f"baseline run of {key} failed: "
                               f"{rep['variants'][v]['error']['message']}")
        if failed[key]:
            say("mutants", f"baseline {key}: {len(failed[key])} check(s) fail unmutated and "
                           f"cannot kill: {', '.join(sorted(failed[key])[:5])}")
    return failed, trees


# ---------------------------------------------------------------- command line

def select(mutants, only=None, kind=None, target=None):
    chosen = list(mutants)
    if only:
        names = [n for n in only.split(",") if n]
        unknown = sorted(set(names) - {m.id for m in mutants})
        if unknown:
            raise HarnessError("usage", f"unknown mutant(s) {', '.join(unknown)}")
        chosen = [m for m in chosen if m.id in names]
    if kind:
        chosen = [m for m in chosen if m.kind == kind]
    if target:
        chosen = [m for m in chosen if m.target == target]
    if not chosen:
        raise HarnessError("usage", "no mutant selected")
    return chosen


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.mutants",
                                 description="mutation testing of probe-module/ and the series")
    ap.add_argument("--catalogue", default=str(CATALOGUE))
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--kind", choices=sorted(KILL_KINDS))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--module", dest="target", action="store_const", const="module",
                   help="only probe-module mutants")
    g.add_argument("--series", dest="target", action="store_const", const="series",
                   help="only series mutants (a kernel tree each)")
    g.add_argument("--lttng", dest="target", action="store_const", const="lttng",
                   help="only mutants of the LTTng ports (an LTTng build and boot each)")
    ap.add_argument("--list", action="store_true", help="list the catalogue and exit")
    ap.add_argument("--keep-trees", action="store_true",
                    help="keep the series mutants' kernel trees in the cache")
    ap.add_argument("--out", help="output directory (default: runs/mutants-<time>)")
    # The probe module's and the seed table's checks judge every mutant; the
    # LTTng boot (about 40 s per run) never looks at the probe module, so only
    # the LTTng ports' mutants (series "lttng") run it.
    ap.add_argument("--run-args", default="--no-lttng", metavar="ARGS",
                    help='arguments of every harness run (default: "--no-lttng"), e.g. '
                    '"--no-lttng --append movablecore=64M" (a guest state to try)')
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT["usage"] if e.code else 0
    try:
        chosen = select(load(args.catalogue), args.only, args.kind, args.target)
        if args.list:
            for m in chosen:
                print(f"{m.id:44} {m.kind:11} {m.target:6} {m.what}")
            return 0
        return _run(chosen, args)
    except HarnessError as err:
        print(err.one_line(), file=sys.stderr)
        return err.exit_status
    except KeyboardInterrupt:
        print("ksymlab: mutants: interrupted", file=sys.stderr)
        return EXIT["interrupted"]


def _run(chosen, args):
    out = Path(args.out) if args.out else \
        paths.runs_root() / time.strftime("mutants-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    extra = tuple(shlex.split(args.run_args))
    baseline, trees = run_baselines({baseline_key(m) for m in chosen}, out, extra)
    outcomes = []
    for i, m in enumerate(chosen, 1):
        say("mutants", f"[{i}/{len(chosen)}] {m.id} ({m.kind}, {m.target})")
        o = run_mutant(m, out, baseline, args.keep_trees, frozenset(trees), extra)
        say("mutants", f"[{i}/{len(chosen)}] {m.id}: {o.status} - {why(o)}")
        outcomes.append(o)
    meta = {"catalogue": str(args.catalogue), "seconds": round(time.monotonic() - t0, 1),
            "run_args": args.run_args,
            "baseline_failing": {v: sorted(f) for v, f in baseline.items()}}
    write_report(out, outcomes, meta)
    kinds, rows = tables(outcomes)
    print(text_table(KIND_HEAD, kinds))
    print()
    print(text_table(MUTANT_HEAD, rows))
    print(f"\nreport: {out / 'mutants.md'} and mutants.json")
    return 0 if all(o.status == "killed" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
