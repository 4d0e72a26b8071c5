"""Kernel tree preparation: the built Tree of one variant, from the cache or built
under its cache entry, from scratch (tree.py, config.py) or derived from another
cached tree (derive.py), with the manifest that completes it.

A tree lives in <cache>/trees/<key>/linux and is complete only once
<cache>/trees/<key>/manifest.json exists. The key hashes everything the
build depends on, so an unchanged key is never rebuilt and a changed input
never reuses a stale tree.
"""

import json
import resource
import time
from pathlib import Path

from . import cache as cachemod
from .config import configure
from .derive import adopt_unrecorded, derive_tree, find_base, record_series
from .tree import (Tree, apply_series, build_inputs, extract, make_env, members_file,
                   run_make, tarball_sha256, tree_key)
from ..errors import HarnessError
from ..proc import discard
from ..progress import say


def build_order(selected):
    """Fewer patches first (stable), so bases are built before the variants derived from them."""
    def n(v):
        try:
            return len(v.patches())
        except HarnessError:        # prepare() reports it
            return 0
    return sorted(selected, key=n)


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def manifest(tree):
    """The manifest of a built tree as a dict ({} when unreadable)."""
    try:
        return json.loads((tree.root / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def prepare(variant, cache, tarball=None, index=1, total=1, derive=True):
    """Return the built Tree for `variant`, building it only when its key is new.
    `tarball` defaults to the variant's own. derive=False never starts from another
    cached tree (the fresh build the derivations are checked against)."""
    cache, tarball = Path(cache), Path(tarball or variant.tarball)
    key = tree_key(variant, tarball)
    root = cache / "trees" / key
    tree = Tree(variant.name, key, root, root / "linux")
    manifest_file = root / "manifest.json"
    label = f"{variant.name} ({index}/{total})"
    with cachemod.entry(cachemod.lock_path(cache, "trees", key), manifest_file.exists) as e:
        if not e.missing:
            say("kernel", f"{label}: cached tree {key}")
            adopt_unrecorded(variant, tarball, root)
            cachemod.used("trees", cache, key)
            return tree
        if root.exists():
            say("kernel", f"{label}: removing incomplete tree {key} (an earlier build stopped)")
            discard(root)
        root.mkdir(parents=True)
        _build(variant, tree, cache, tarball, label, derive)
        e.built("trees", cache, key, variant.name)
        cachemod.after_new_entry(cache)     # never this tree: its lock is held
        return tree


def _build(variant, tree, cache, tarball, label, derive):
    """Build `tree` (derived from a cached base when one fits and `derive`, else
    from the tarball) and write its manifest; the caller holds the tree's entry."""
    root, key = tree.root, tree.key
    manifest_file = root / "manifest.json"
    env = make_env(cache)
    start = time.monotonic()
    patches = variant.patches()
    digest = tarball_sha256(tarball, variant.package)
    steps, base = {}, find_base(variant, tarball, cache) if derive else None
    changed = None
    if base is not None:
        derived = derive_tree(variant, base, tree, patches, label, cache, tarball)
        if derived is None:
            base = None
        else:
            steps, changed = derived
    if base is None:
        steps["extract"] = extract(tarball, tree.src, root / "extract.log",
                                   members_file(cache, digest))
        steps["patch"] = apply_series(variant, tree.src, root / "patch.log")
        steps["configure"] = configure(variant, tree.src, root / "configure.log", env)
    cpu0 = _children_cpu()
    steps["build"] = run_make(tree.src, root / "build.log", env, label)
    build_cpu = _children_cpu() - cpu0
    for need in (tree.vmlinux, tree.bzimage, tree.gdb_script, tree.gen_init_cpio, tree.symvers):
        if not need.exists():
            raise HarnessError("build", f"{need} missing after a successful make", root / "build.log")
    record = record_series(patches, root)
    manifest_file.write_text(json.dumps({
        "key": key, "variant": variant.name, "tarball": str(tarball),
        "patches": [p.name for p in patches],
        "series": record,
        "build_inputs": build_inputs(digest, variant.fragments),
        "derived_from": base.key if base else None,
        "derived_from_variant": base.variant if base else None,
        "reversed": [f.name for f in base.reverse] if base else [],
        "changed_files": changed,
        "steps": {k: round(v, 1) for k, v in steps.items()},
        "build_seconds": round(steps["build"], 1),
        "build_cpu_seconds": round(build_cpu, 1),     # user+sys of make and its children
        "total_seconds": round(time.monotonic() - start, 1),
    }, indent=2) + "\n")
