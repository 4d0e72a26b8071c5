"""Build probe-module against one built kernel tree, cached by tree, mode and sources."""

import hashlib
import shutil
from pathlib import Path

from . import cache as cachemod
from .. import paths
from ..errors import HarnessError
from ..proc import discard, run_logged
from ..progress import say

KO_NAME = "ksymlab_probe.ko"
# The guest test module with two handlers on one shared interrupt line (issue 43),
# loaded by the LTTng guest: not the code under test, built the same way.
SHIRQ_KO = "ksymlab_shirq.ko"
# The guest test module with a hidden disk and a disk without capacity (issue 43),
# loaded by both guests.
DISKS_KO = "ksymlab_disks.ko"
SOURCES = ("Kbuild", "*.c", "*.h")


def _sources(src_dir):
    files = set()
    for pattern in SOURCES:
        files.update(p for p in src_dir.glob(pattern) if p.is_file())
    return sorted(files)


def module_key(tree, mode, src_dir=None, make_args=()):
    src_dir = Path(src_dir or paths.PROBE_MODULE)
    h = hashlib.sha256()
    h.update(f"{tree.key}\0{mode}\0".encode())
    if make_args:
        h.update(("\0".join(make_args) + "\0").encode())
    for f in _sources(src_dir):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:20]      # 80 bits, as a tree's key (tree.key_for)


def build(tree, mode, cache, src_dir=None, ko_name=KO_NAME, make_args=()):
    """Return the path of the built .ko; the build log sits beside it. `src_dir` and
    `ko_name` name another module (a guest test module: SHIRQ_KO); `make_args` are
    more make variables (KBUILD_NSDEPS=1, harness/prepare/formods.py)."""
    src_dir = Path(src_dir or paths.PROBE_MODULE)
    key = module_key(tree, mode, src_dir, make_args)
    out = Path(cache) / "modules" / key
    ko = out / ko_name
    log = out / "build.log"
    with cachemod.entry(cachemod.lock_path(cache, "modules", key),
                        lambda: ko.exists() and (out / "done").exists()) as e:
        if not e.missing:
            say("module", f"{tree.variant}: cached {mode} module {key}")
            cachemod.used("modules", cache, key)
            return ko
        if out.exists():
            discard(out)            # an earlier build of this key stopped half way
        out.mkdir()
        # Kbuild writes objects next to the sources: build in a copy, never in the repo.
        for f in _sources(src_dir):
            shutil.copy2(f, out / f.name)
        say("module", f"{tree.variant}: building in mode {mode}")
        run_logged("module", ["make", "-C", tree.src, f"M={out}", f"KSYMLAB_MODE={mode}",
                              *make_args, "modules"], log)
        if not ko.exists():
            raise HarnessError("module", f"{ko} missing after a successful make", log)
        (out / "done").write_text(key + "\n")
        e.built("modules", cache, key, tree.variant)
        cachemod.after_new_entry(cache)
        return ko


def build_shirq(tree, cache):
    """The shared-interrupt guest test module for `tree` (harness/guest/assets/shirq)."""
    return build(tree, "shirq", cache, paths.GUEST / "shirq", SHIRQ_KO)


def build_disks(tree, cache):
    """The hidden and empty disks' guest test module for `tree` (harness/guest/assets/disks)."""
    return build(tree, "disks", cache, paths.GUEST / "disks", DISKS_KO)
