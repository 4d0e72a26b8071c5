"""Derived builds: start a tree from a copy of a complete cached tree instead of the
tarball (find_base picks the base, derive_tree makes the copy and patches it; see the
comment below for why the result is the tree a fresh build gives)."""

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .config import check_fragments
from .digest import bytes_digest, file_digest
from .treecopy import copy_base, rewrite_tool_paths, tarball_members
from .tree import apply_series, build_inputs, key_for, tarball_sha256
from ..proc import run_logged
from ..progress import say

# Derived builds. A variant whose series extends the series of a tree that is
# already built (same tarball, recipe, make targets and config fragments:
# the base's key is this variant's key computed over a shorter series) starts
# from a copy of that complete tree, applies only the remaining patches and
# runs the same make. Why the result is the tree a fresh build would give,
# and why no variant can pick up another's object:
#  - sources: the copy holds the tarball plus the first n patches; applying
#    patches n+1.. with git apply gives byte for byte the files a fresh
#    extract plus the whole series gives. The base tree itself is only read.
#  - configuration: .config comes from tinyconfig + the fragments over the
#    Kconfig files, which are identical unless a remaining patch touches a
#    configuration input (then there is no derivation, see
#    _config_inputs_touched); check_config still checks the copied .config.
#  - objects: every file git apply writes is newer than anything the base
#    build produced, and Kbuild rebuilds a target when a prerequisite is newer
#    or its command line changed; fixdep lists every header (and CONFIG_
#    symbol) each object read, so each object that depends on a patched file
#    is recompiled, links and Module.symvers are redone, and what is left
#    untouched was built from identical inputs. ccache (keyed on preprocessed
#    text and flags) only returns an object for identical preprocessed input.
#  - paths: only tools/ (objtool) records the absolute tree path in its
#    .cmd files; those are rewritten to the new path, otherwise objtool is
#    rebuilt and every object (which depends on it) recompiles. The
#    vmlinux-gdb.py symlink is absolute and is recreated by make scripts_gdb.
#    DWARF comp_dir of copied objects names the base tree, as ccache hits
#    already do.
#  - build number: init/build-version counts .version up on every link; the
#    copy's .version is removed so the relink is "#1" again, as in a fresh tree.
#  - concurrency: the base is copied under its lock and only while its
#    manifest exists, so neither a half-built nor a half-removed tree is copied.

@dataclass(frozen=True)
class Base:
    key: str
    variant: str        # the variant named in its manifest
    src: Path
    n_patches: int      # how many of the derived variant's patches it already holds
    reverse: tuple = ()     # the base's own tail after those, recorded in the base, last first
    touched: int = 0        # distinct files the reversed and the applied patches touch


# A patch touching one of these may change what tinyconfig + fragments give,
# so a tree built before it is not a valid starting point.
_CONFIG_INPUTS = (re.compile(r"(^|/)Kconfig[^/]*$"), re.compile(r"^Makefile$"),
                  re.compile(r"^scripts/kconfig/"), re.compile(r"^scripts/[^/]+\.sh$"),
                  re.compile(r"^kernel/configs/"), re.compile(r"^arch/[^/]+/configs/"),
                  re.compile(r"^arch/[^/]+/Makefile$"))


def _patched_paths(patch):
    out = []
    for line in patch.read_text(errors="replace").splitlines():
        m = re.match(r"^diff --git a/(\S+) b/(\S+)$", line)
        if m:
            out += [m.group(1), m.group(2)]
    return out


def _config_inputs_touched(patches):
    """Paths in `patches` that can change the configuration step's result."""
    return sorted({f for p in patches for f in _patched_paths(p)
                   if any(r.search(f) for r in _CONFIG_INPUTS)})


def record_series(patches, root):
    """Copy the applied patch files into <root>/series/; their record for the manifest."""
    d = root / "series"
    d.mkdir(exist_ok=True)
    out = []
    for i, p in enumerate(patches, 1):
        data = p.read_bytes()
        name = f"{i:02d}-{p.name}"
        (d / name).write_bytes(data)
        out.append({"name": p.name, "sha256": bytes_digest(data), "file": f"series/{name}"})
    return out


def _adopt(variant, tarball_digest, patches, root):
    """Record the series of a complete tree built before trees recorded theirs.

    Its key, which hashes the names and contents of the patches with the same
    build inputs, equals this variant's, so these patch files are the ones it
    was built from. The record goes beside the tree (<key>.record/), leaving
    the tree itself untouched. Returns True when written."""
    side = root.parent / f"{root.name}.record"
    if side.exists():
        return False
    tmp = root.parent / f".tmp-{root.name}.record-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    record = record_series(patches, tmp)
    (tmp / "record.json").write_text(json.dumps({
        "key": root.name, "variant": variant.name, "series": record,
        "build_inputs": build_inputs(tarball_digest, variant.fragments)}, indent=2) + "\n")
    try:
        os.rename(tmp, side)
    except OSError:                 # another process adopted it first
        shutil.rmtree(tmp, ignore_errors=True)
        return False
    return True


def _record_of(manifest_file):
    """(record dict, directory its files are relative to) of a complete tree, or None."""
    try:
        m = json.loads(manifest_file.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(m, dict) and "series" in m and "build_inputs" in m:
        return m, manifest_file.parent
    side = manifest_file.parent.parent / f"{manifest_file.parent.name}.record"
    try:
        r = json.loads((side / "record.json").read_text())
    except (OSError, ValueError):
        return None
    r.setdefault("variant", m.get("variant", "?") if isinstance(m, dict) else "?")
    return r, side


def _recorded_tail(tree_root, record, n):
    """The recorded patch files of a base tree after the first n, as Paths; None when any
    is missing or no longer has the recorded content."""
    out = []
    for entry in record[n:]:
        try:
            f = tree_root / entry["file"]
            if bytes_digest(f.read_bytes()) != entry["sha256"]:
                return None
        except (OSError, KeyError, TypeError):
            return None
        out.append(f)
    return out


def _touched(patches):
    """How many distinct files the patches rewrite."""
    return len({f for p in patches for f in _patched_paths(p)})


def find_base(variant, tarball, cache, quiet=False):
    """The complete cached tree this variant's tree is cheapest to derive from, or None.

    Candidates: (1) trees whose key is this variant's key over a shorter series
    (a plain prefix; also trees built before series were recorded), and (2)
    trees whose manifest records build inputs equal to this variant's (recipe,
    tarball, fragments, make targets) and a series sharing a prefix with this
    one by content: their differing tail is reversed (the exact files recorded
    in the base, last first) and this variant's tail applied. A candidate is
    skipped when a reversed or applied patch touches a configuration input.
    The one whose reversed and applied patches touch the fewest distinct files
    wins; on a tie a plain prefix, then the longer common prefix.
    """
    patches = variant.patches()
    digest = tarball_sha256(tarball, variant.package)
    trees = Path(cache) / "trees"
    cands = _prefix_candidates(variant, patches, digest, trees)
    if trees.is_dir():
        cands.update(_recorded_candidates(variant, patches, digest, trees, cands))
    best = None
    for key, (name, n, reverse) in cands.items():
        apply = patches[n:]
        touched = _config_inputs_touched(reverse + apply)
        if touched:
            if not quiet:
                say("kernel", f"{variant.name}: not deriving from {name} tree {key}: the "
                              f"{'reversed and ' if reverse else ''}remaining patches touch "
                              f"configuration inputs ({', '.join(touched[:3])})")
            continue
        base = Base(key, name, trees / key / "linux", n, tuple(reverse),
                    _touched(reverse + apply))
        rank = (base.touched, len(reverse) > 0, -n, key)
        if best is None or rank < best[0]:
            best = (rank, base)
    return best[1] if best else None


def _prefix_candidates(variant, patches, digest, trees):
    """{key: (variant name, n, [])} of the cached trees keyed by a prefix of the series."""
    cands = {}
    for n in range(len(patches) - 1, -1, -1):
        key = key_for(digest, patches[:n], variant.fragments)
        manifest = trees / key / "manifest.json"
        if manifest.is_file():
            try:
                name = json.loads(manifest.read_text()).get("variant", "?")
            except (OSError, ValueError):
                continue
            cands[key] = (name, n, [])
    return cands


def _recorded_candidates(variant, patches, digest, trees, known):
    """{key: (variant name, n, tail to reverse)} of the trees with this variant's
    build inputs whose recorded series shares the first n patches by content."""
    want = build_inputs(digest, variant.fragments)
    mine = [bytes_digest(p.read_bytes()) for p in patches]
    own = key_for(digest, patches, variant.fragments)
    cands = {}
    for manifest in sorted(trees.glob("*/manifest.json")):
        key = manifest.parent.name
        if key in known or key == own or key.startswith("."):
            continue            # pathlib's * matches .trash-*: a tree being deleted
        found = _record_of(manifest)
        if found is None:
            continue            # built before trees recorded their series
        m, where = found
        try:
            record = m.get("series")
            if m.get("build_inputs") != want or not isinstance(record, list):
                continue        # another tarball, recipe, fragments or make targets
            theirs = [e["sha256"] for e in record]
        except (KeyError, TypeError, AttributeError):
            continue
        n = 0
        while n < min(len(mine), len(theirs)) and mine[n] == theirs[n]:
            n += 1
        tail = _recorded_tail(where, record, n)
        if tail is not None:
            cands[key] = (m.get("variant", "?"), n, tail[::-1])
    return cands


def _reverse_tail(variant, src, log, patches):
    """git apply -R each of `patches` (already last first), checking each first."""
    start = time.monotonic()
    for i, p in enumerate(patches, 1):
        say("patch", f"{variant.name} reverse {i}/{len(patches)}: {p.name.split('-', 1)[1]}")
        run_logged("patch", ["git", "apply", "-R", "--check", "--verbose", p], log, cwd=src)
        run_logged("patch", ["git", "apply", "-R", p], log, cwd=src)
    return time.monotonic() - start


def _snapshot(src, patches):
    """Content digest and mtime of every existing file the patches touch."""
    out = {}
    for rel in {f for p in patches for f in _patched_paths(p)}:
        f = src / rel
        if f.is_file() and not f.is_symlink():
            out[rel] = (file_digest(f), f.stat().st_mtime_ns)
    return out


def _keep_unchanged_mtimes(src, before):
    """A file the tail rewrote with the content the base built against gets its old
    mtime back: the base's objects were built from exactly these bytes, so Kbuild
    need not redo them (a changed file keeps its new, newest mtime). Returns the
    files whose content changed."""
    changed = []
    for rel, (digest, mtime) in sorted(before.items()):
        f = src / rel
        if f.is_file() and file_digest(f) == digest:
            os.utime(f, ns=(f.stat().st_atime_ns, mtime))
        else:
            changed.append(rel)
    return changed


def adopt_unrecorded(variant, tarball, root):
    """A complete tree at `root` without a record of its series gets one (_adopt)."""
    if _record_of(root / "manifest.json") is None:
        _adopt(variant, tarball_sha256(tarball, variant.package), variant.patches(), root)


def derive_tree(variant, base, tree, patches, label, cache, tarball):
    """Make the sources of `tree` (a Tree whose root exists and is empty) from the
    complete tree `base`: copy it, reverse the base's recorded tail, apply the rest of
    `patches`, check the copied .config. Returns (step seconds, files the reversed and
    applied patches changed), or None when the base was gone before it was copied."""
    root = tree.root
    steps = {}
    rest = patches[base.n_patches:]
    what = (f"reverse {len(base.reverse)} patch{'es' if len(base.reverse) != 1 else ''}, "
            if base.reverse else "")
    say("kernel", f"{label}: deriving from {base.variant} tree {base.key}: {what}"
                  f"apply {len(rest)} patch{'es' if len(rest) != 1 else ''}")
    members = tarball_members(cache, tarball, variant.package)
    copy_s = copy_base(base, root, tree.src, members)
    if copy_s is None:
        say("kernel", f"{label}: base tree {base.key} is gone, building from scratch")
        return None
    steps["copy"] = copy_s
    say("kernel", f"{label}: copied {base.key} in {copy_s:.0f} s"
                  f"{' (tarball files hard-linked)' if members else ''}")
    rewrite_tool_paths(tree.src, base.src, tree.src)
    gdb_link = tree.src / "vmlinux-gdb.py"
    if gdb_link.is_symlink():
        gdb_link.unlink()       # absolute, into the base; make scripts_gdb relinks
    (tree.src / ".version").unlink(missing_ok=True)    # uname -v "#1", not "#2"
    reverse = sorted((root / "reverse").iterdir(), key=lambda f: f.name,
                     reverse=True) if base.reverse else []
    before = _snapshot(tree.src, reverse + rest)
    if reverse:
        steps["reverse"] = _reverse_tail(variant, tree.src, root / "patch.log", reverse)
    steps["patch"] = apply_series(variant, tree.src, root / "patch.log",
                                  rest, base.n_patches + 1)
    changed = _keep_unchanged_mtimes(tree.src, before)
    if reverse:
        say("kernel", f"{label}: {len(changed)} file{'s differ' if len(changed) != 1 else ' differs'}"
                      f" from the base: {', '.join(changed[:4])}"
                      f"{' ...' if len(changed) > 4 else ''}")
    start_c = time.monotonic()
    check_fragments(variant, tree.src, root / "configure.log")
    steps["configure"] = time.monotonic() - start_c
    return steps, changed
