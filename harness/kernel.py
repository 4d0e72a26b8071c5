"""Kernel tree preparation: extract, patch, configure and build one variant, cached by content.

A tree lives in <cache>/trees/<key>/linux and is complete only once
<cache>/trees/<key>/manifest.json exists. The key hashes everything the
build depends on, so an unchanged key is never rebuilt and a changed input
never reuses a stale tree.
"""

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .errors import HarnessError
from .proc import run_logged
from .progress import say

# Bump when the recipe below changes in a way that changes the built tree.
RECIPE = "ksymlab-kernel-recipe-1"
MAKE_TARGETS = ("bzImage", "modules", "scripts_gdb")


@dataclass(frozen=True)
class Tree:
    variant: str
    key: str
    root: Path          # <cache>/trees/<key>
    src: Path           # the kernel source and build tree

    @property
    def vmlinux(self):
        return self.src / "vmlinux"

    @property
    def bzimage(self):
        return self.src / "arch" / "x86" / "boot" / "bzImage"

    @property
    def gdb_script(self):
        return self.src / "vmlinux-gdb.py"

    @property
    def gen_init_cpio(self):
        return self.src / "usr" / "gen_init_cpio"

    @property
    def symvers(self):
        return self.src / "Module.symvers"


@functools.lru_cache(maxsize=None)
def _file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_key(variant, tarball=None):
    """sha256 over the tarball, the series (names and contents) and the config fragments."""
    tarball = Path(tarball or paths.KERNEL_TARBALL)
    if not tarball.is_file():
        raise HarnessError("extract", f"{tarball}: kernel source tarball not found "
                           "(install linux-source-6.1)")
    h = hashlib.sha256()
    h.update(RECIPE.encode() + b"\0")
    h.update(b"tarball\0" + _file_digest(str(tarball)).encode() + b"\0")
    for p in variant.patches():
        h.update(b"patch\0" + p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    for frag in variant.fragments:
        h.update(b"config\0" + frag.encode() + b"\0" + (paths.KCONFIG / frag).read_bytes() + b"\0")
    h.update(" ".join(MAKE_TARGETS).encode())
    return h.hexdigest()[:20]


def _make_env():
    env = dict(os.environ)
    # ccache shares objects between variants: trees differ in a handful of
    # files, and ccache keys an object on its preprocessed source and flags,
    # so a patched file (or anything including a patched header) misses and
    # rebuilds. base_dir + nohashdir let identical sources in different tree
    # directories hit; DWARF comp_dir may then name the first tree that built
    # the object, which only affects where gdb looks for source text.
    env.update(CCACHE_DIR=str(paths.cache_root() / "ccache"),
               CCACHE_BASEDIR=str(paths.cache_root() / "trees"),
               CCACHE_NOHASHDIR="true", CCACHE_MAXSIZE="5G")
    # Fixed build identity: the same inputs give the same uname -v and vermagic.
    env.update(KBUILD_BUILD_TIMESTAMP="Thu Apr  9 15:35:39 UTC 2020",
               KBUILD_BUILD_USER="ksymlab", KBUILD_BUILD_HOST="ksymlab", LC_ALL="C")
    env.pop("ARCH", None)
    env.pop("CROSS_COMPILE", None)
    return env


def _extract(tarball, dest, log):
    say("extract", f"{tarball.name} -> {dest}")
    dest.mkdir(parents=True)
    t = run_logged("extract", ["tar", "-xf", tarball, "-C", dest, "--strip-components=1"], log)
    say("extract", f"done in {t:.0f} s")


def _apply_series(variant, src, log):
    patches = variant.patches()
    for i, p in enumerate(patches, 1):
        say("patch", f"{variant.name} {i}/{len(patches)}: {p.name}")
        # --check first so a patch that does not apply leaves no half-applied hunks.
        run_logged("patch", ["git", "apply", "--check", "--verbose", p], log, cwd=src)
        run_logged("patch", ["git", "apply", p], log, cwd=src)
    if not patches:
        say("patch", f"{variant.name}: empty series, stock tree")


def _requested_options(fragment_text):
    want = {}
    for line in fragment_text.splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            want[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^# (CONFIG_\w+) is not set$", line)
        if m:
            want[m.group(1)] = "n"
    return want


def check_config(fragment_text, config_text):
    """Options of the fragment that did not survive olddefconfig, as text lines."""
    have = _requested_options(config_text)     # the same syntax on both sides
    bad = []
    for opt, val in _requested_options(fragment_text).items():
        got = have.get(opt, "n")
        if got != val:
            bad.append(f"{opt}={val} requested, .config has {opt}={got}")
    return bad


def _configure(variant, src, log, env):
    say("configure", "tinyconfig + " + ", ".join(variant.fragments))
    run_logged("configure", ["make", "tinyconfig"], log, cwd=src, env=env)
    frags = [paths.KCONFIG / f for f in variant.fragments]
    run_logged("configure", ["scripts/kconfig/merge_config.sh", "-m", ".config", *frags],
               log, cwd=src, env=env)
    run_logged("configure", ["make", "olddefconfig"], log, cwd=src, env=env)
    config = (src / ".config").read_text()
    bad = []
    for f in frags:
        bad += check_config(f.read_text(), config)
    if bad:
        raise HarnessError("configure", "; ".join(bad), log)


def _build(src, log, env, label):
    jobs = str(os.cpu_count() or 2)

    def beat(logfile):
        try:
            text = logfile.read_text(errors="replace")
        except OSError:
            return
        n = sum(1 for l in text.splitlines() if l.startswith(("  CC", "  AS", "  LD")))
        say("build", f"{label}: {n} objects so far")

    say("build", f"{label}: make -j{jobs} {' '.join(MAKE_TARGETS)}")
    cc = ["CC=ccache gcc"] if shutil.which("ccache") else []
    t = run_logged("build", ["make", f"-j{jobs}", *cc, *MAKE_TARGETS], log, cwd=src, env=env,
                   beat=beat, beat_every=30.0)
    say("build", f"{label}: done in {t:.0f} s")
    return t


def prepare(variant, index=1, total=1, tarball=None):
    """Return the built Tree for `variant`, building it only when its key is new."""
    tarball = Path(tarball or paths.KERNEL_TARBALL)
    key = tree_key(variant, tarball)
    root = paths.cache_root() / "trees" / key
    tree = Tree(variant.name, key, root, root / "linux")
    manifest = root / "manifest.json"
    label = f"{variant.name} ({index}/{total})"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if manifest.exists():
            say("kernel", f"{label}: cached tree {key}")
            return tree
        if root.exists():
            say("kernel", f"{label}: removing incomplete tree {key}")
            shutil.rmtree(root)
        root.mkdir(parents=True)
        env = _make_env()
        start = time.monotonic()
        _extract(tarball, tree.src, root / "extract.log")
        _apply_series(variant, tree.src, root / "patch.log")
        _configure(variant, tree.src, root / "configure.log", env)
        build_s = _build(tree.src, root / "build.log", env, label)
        for need in (tree.vmlinux, tree.bzimage, tree.gdb_script, tree.gen_init_cpio, tree.symvers):
            if not need.exists():
                raise HarnessError("build", f"{need} missing after a successful make", root / "build.log")
        manifest.write_text(json.dumps({
            "key": key, "variant": variant.name, "tarball": str(tarball),
            "patches": [p.name for p in variant.patches()],
            "build_seconds": round(build_s, 1),
            "total_seconds": round(time.monotonic() - start, 1),
        }, indent=2) + "\n")
        return tree
