"""One kernel tree's key and the steps of building it from scratch: extract the tarball,
apply the series, run make. (Configuring is config.py, starting from another cached
tree derive.py; kernel.prepare runs them under the tree's cache entry.)

A tree lives in <cache>/trees/<key>/linux and is complete only once
<cache>/trees/<key>/manifest.json exists. The key hashes everything the
build depends on, so an unchanged key is never rebuilt and a changed input
never reuses a stale tree.
"""

import functools
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from .digest import bytes_digest, file_digest
from ..errors import HarnessError
from ..proc import run_logged
from ..progress import say

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


# The tarball is large and read-only: hash it once per process.
_file_digest = functools.lru_cache(maxsize=None)(file_digest)


def key_for(tarball_digest, patches, fragments):
    """The tree key of a series `patches` (Paths) over the tarball with that digest."""
    h = hashlib.sha256()
    h.update(RECIPE.encode() + b"\0")
    h.update(b"tarball\0" + tarball_digest.encode() + b"\0")
    for p in patches:
        h.update(b"patch\0" + p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    for frag in fragments:
        h.update(b"config\0" + frag.encode() + b"\0" + (paths.KCONFIG / frag).read_bytes() + b"\0")
    h.update(" ".join(MAKE_TARGETS).encode())
    return h.hexdigest()[:20]      # 80 bits name the directory, as since fa76374


def tarball_sha256(tarball, package="linux-source-6.1"):
    tarball = Path(tarball)
    if not tarball.is_file():
        raise HarnessError("extract", f"{tarball}: kernel source tarball not found "
                           f"(install {package})")
    return _file_digest(str(tarball))


def tree_key(variant, tarball=None):
    """sha256 over the tarball, the series (names and contents) and the config fragments.
    `tarball` defaults to the variant's own."""
    return key_for(tarball_sha256(tarball or variant.tarball, variant.package),
                   variant.patches(), variant.fragments)


def build_inputs(tarball_digest, fragments):
    """What a tree's key is made of besides its series, as recorded in its manifest."""
    return {"recipe": RECIPE, "tarball_sha256": tarball_digest,
            "fragments": [{"name": f, "sha256": bytes_digest((paths.KCONFIG / f).read_bytes())}
                          for f in fragments],
            "make_targets": list(MAKE_TARGETS)}


def make_env(cache):
    env = dict(os.environ)
    # ccache shares objects between variants: trees differ in a handful of
    # files, and ccache keys an object on its preprocessed source and flags,
    # so a patched file (or anything including a patched header) misses and
    # rebuilds. base_dir + nohashdir let identical sources in different tree
    # directories hit; DWARF comp_dir may then name the first tree that built
    # the object, which only affects where gdb looks for source text.
    # CCACHE_MAXSIZE: 5G is ccache's own default (ccache(1), max_size), stated so that
    # no ccache.conf changes it; ccache evicts by itself, outside the cache cap
    # (cache.py). With the 10 trees of both kernel lines cached it held 0.38 GB
    # (ccache -s, 2026-12-04).
    env.update(CCACHE_DIR=str(cache / "ccache"),
               CCACHE_BASEDIR=str(cache / "trees"),
               CCACHE_NOHASHDIR="true", CCACHE_MAXSIZE="5G")
    # Fixed build identity: the same inputs give the same uname -v and vermagic.
    # The date is the Date: of the task_prio export patch the walking skeleton
    # (fa76374) carried (Mathieu Desnoyers, Thu, 9 Apr 2020 15:35:39 -0400), written
    # as UTC; any fixed date would do. It is not in the tree key: change RECIPE with
    # it, or cached trees keep the old one.
    env.update(KBUILD_BUILD_TIMESTAMP="Thu Apr  9 15:35:39 UTC 2020",
               KBUILD_BUILD_USER="ksymlab", KBUILD_BUILD_HOST="ksymlab", LC_ALL="C")
    env.pop("ARCH", None)
    env.pop("CROSS_COMPILE", None)
    return env


def members_file(cache, tarball_digest):
    """Where the tarball's file list is kept (see treecopy.tarball_members)."""
    return Path(cache) / "tarballs" / f"{tarball_digest[:20]}.members"


def member_paths(names):
    """The regular files and symlinks among tar's member `names`, as tree-relative paths
    (the first component stripped, as --strip-components=1 does), sorted."""
    return sorted({n.split("/", 1)[1] for n in names
                   if "/" in n and n.split("/", 1)[1] and not n.endswith("/")})


def extract(tarball, dest, log, members=None):
    """Extract; with `members` (a path) also keep the tarball's file list there, for the
    hard-linked copies of derived trees: tar -v lists each member as it extracts it,
    and --index-file sends that list to a file of its own instead of the log."""
    say("extract", f"{tarball.name} -> {dest}")
    dest.mkdir(parents=True)
    index = None
    if members is not None and not members.exists():
        members.parent.mkdir(parents=True, exist_ok=True)
        index = members.with_suffix(f".index{os.getpid()}")
    verbose = ["-v", f"--index-file={index}"] if index else []
    try:
        t = run_logged("extract", ["tar", "-xf", tarball, *verbose, "-C", dest,
                                   "--strip-components=1"], log)
        names = member_paths(index.read_text(errors="replace").splitlines()) if index else []
        if names:
            tmp = members.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text("\n".join(names) + "\n")
            tmp.replace(members)
    finally:
        if index:
            index.unlink(missing_ok=True)
    say("extract", f"done in {t:.0f} s")
    return t


def apply_series(variant, src, log, patches=None, first=1):
    """Apply `patches` (default: the whole series), numbered from `first` in the progress lines."""
    start = time.monotonic()
    patches = variant.patches() if patches is None else patches
    total = first - 1 + len(patches)
    for i, p in enumerate(patches, first):
        say("patch", f"{variant.name} {i}/{total}: {p.name}")
        # --check first so a patch that does not apply leaves no half-applied hunks.
        run_logged("patch", ["git", "apply", "--check", "--verbose", p], log, cwd=src)
        run_logged("patch", ["git", "apply", p], log, cwd=src)
    if total == 0:
        say("patch", f"{variant.name}: empty series, stock tree")
    return time.monotonic() - start


def run_make(src, log, env, label):
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
