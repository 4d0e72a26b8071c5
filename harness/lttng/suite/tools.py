"""lttng-tools built from Debian's source package, for its regression tests.

The tests run the binaries of the build tree they belong to
($TESTDIR/../src/bin/...) and the test programs built beside them, so the
suite needs a build of the whole tree, not Debian's binary package. It is
built as LTTng's CI builds the tree whose tests it runs: with lttng-ust
(bookworm's liblttng-ust-dev; without it tests/regression/kernel is not even
in the test list, and test_valid_filter bails out on its UST half before its
kernel points). The release is Debian 12's 2.13.9 with
patches/lttng-tools/suite.series, each an upstream commit: 2.13.12's relay
daemon fixes the live tests wait on (883b91c5a, 5d2369e39), master's 10
snapshot rounds (2250e6894) and master's fixes for test_notification_multi_app's
hang (949670055, 0ee2a9a56, b46f9528e); trixie's 2.13.15 is not in the archive's pool.
Its programs are linked with libtool's -no-install, so that each is an ELF file
rather than a libtool wrapper naming this host's build path (the libraries it needs, the
tree's own liblttng-ctl among them, go into the guest's /lib; rootfs.py).
Shared libraries stay on: a test program needs one (userspace-probe-elf-binary's
libfoo.so). Built on the host, never run here: the guest runs it. Cached by the
pin and the build arguments."""

import hashlib
import shutil
import time
from pathlib import Path

from ... import paths
from ...prepare import cache as cachemod
from ...errors import HarnessError
from ...proc import discard, run_logged
from ...progress import say
from ...prepare.pins import Pin
from ...prepare.archive import source
from ..supply.modbuild import series
from .rootfs import is_elf

# Debian 12's lttng-tools source, checksums from bookworm's Sources index; the pin
# is the upstream tarball's sha256. It drives 2.13.9's and 2.13.18's modules alike.
TOOLS = Pin("ltt-control", "2.13.9-1+deb12u1",
            "8d94dc95b608cf70216b01203a3f8242b97a232db2e23421a2f43708da08f337",
            suite="bookworm")
CONFIGURE = ("--with-lttng-ust", "--disable-man-pages", "--prefix=/usr")
SERIES = "suite"            # patches/lttng-tools/suite.series
MAKE = ("-j2", "LDFLAGS=-no-install")
# What the guest runs, each checked to be an ELF file after the build.
PROGRAMS = ("src/bin/lttng/lttng", "src/bin/lttng-sessiond/lttng-sessiond",
            "src/bin/lttng-consumerd/lttng-consumerd", "src/bin/lttng-relayd/lttng-relayd")
LAYOUT_VERSION = "2"
KIND = "lttng/tools"        # its kind in the build cache (prepare/cachelayout.py)


def patches_root():
    """patches/lttng-tools under the patch root (KSYMLAB_PATCHES overrides it)."""
    return paths.patches_root() / "lttng-tools"


def patches(root=None):
    """The patch files of the suite's series, in order."""
    return series(SERIES, root or patches_root())


def key(root=None):
    h = hashlib.sha256(f"{TOOLS.spec}\0{TOOLS.sha256}\0{' '.join(CONFIGURE)}\0"
                       f"{' '.join(MAKE)}\0"
                       f"layout={LAYOUT_VERSION}".encode())
    for p in patches(root):
        h.update(b"\0" + p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:20]


def _beat(log):
    n = sum(1 for line in open(log, errors="replace") if line.strip().startswith("CC"))
    say("suite", f"lttng-tools build: {n} objects so far")


def build(cache):
    """The built lttng-tools tree (<cache>/lttng/tools/<key>/tree), built once."""
    k = key()
    out = Path(cache) / KIND / k
    with cachemod.entry(out.parent / f"{k}.lock", (out / "done").exists) as e:
        if not e.missing:
            cachemod.used(KIND, cache, k)
            return out / "tree"
        if out.exists():
            discard(out)
        out.mkdir(parents=True)
        log = out / "build.log"
        tarball = source(TOOLS, cache, out / "source", log, step="suite")
        (out / "unpack").mkdir()
        run_logged("suite", ["tar", "-xf", str(tarball), "-C", str(out / "unpack")], log)
        (top,) = [d for d in (out / "unpack").iterdir() if d.is_dir()]
        top.rename(out / "tree")
        tree = out / "tree"
        for p in patches():
            say("suite", f"lttng-tools: applying {p.name}")
            run_logged("suite", ["patch", "-p1", "--forward", "--batch", "-i", str(p)], log,
                       cwd=tree)
        t0 = time.monotonic()
        say("suite", f"configuring and building lttng-tools {TOOLS.version} in {tree}")
        run_logged("suite", ["./configure", *CONFIGURE], log, cwd=tree)
        run_logged("suite", ["make", *MAKE], log, cwd=tree, beat=_beat, beat_every=30)
        for prog in PROGRAMS:
            p = tree / prog
            if not p.is_file() or not is_elf(p):
                raise HarnessError("suite", f"{p}: not an ELF program after the build "
                                   "(a libtool wrapper? make must say LDFLAGS=-no-install)",
                                   log)
        _prune(tree)
        secs = round(time.monotonic() - t0, 1)
        (out / "facts").write_text(f"version={TOOLS.version}\nbuild_seconds={secs}\n")
        (out / "done").write_text(k + "\n")
        say("suite", f"built lttng-tools in {secs} s")
        e.built(KIND, cache, k)
        cachemod.after_new_entry(cache)     # never this build: its lock is held
        return tree


def _prune(tree):
    """Objects and static archives are not run: drop them (most of the tree's size)."""
    for pattern in ("*.o", "*.lo", "*.a"):
        for f in tree.rglob(pattern):
            if f.is_file():
                f.unlink()
    for d in list(tree.rglob(".deps")):
        shutil.rmtree(d, ignore_errors=True)
