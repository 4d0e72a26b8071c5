"""Build lttng-modules out of tree against one variant's tree, cached by content:
tree key + lttng source digest + the patches/lttng series applied + build switches."""

import hashlib
import os
import shutil
import threading
import time
from pathlib import Path

from ... import paths
from ...prepare import cache as cachemod
from ...errors import HarnessError
from ...proc import discard, run_logged, tool_output
from ...progress import say
from . import fetch, reuse, treemods

def patches_root():
    """patches/lttng under the patch root (KSYMLAB_PATCHES overrides it, as for the
    kernel series: a mutant's scratch copy, a test's broken series)."""
    return paths.patches_root() / "lttng"


def series(name, root=None):
    """The patch files of patches/lttng/<name>.series, in order; a series of another
    LTTng release lives in its own folder (e.g. "2.13.18/exports"), its patches beside it."""
    root = Path(root or patches_root())
    f = root / f"{name}.series"
    if not f.is_file():
        raise HarnessError("lttng", f"{f}: no such LTTng series")
    out = []
    for raw in f.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            p = f.parent / line
            if not p.is_file():
                raise HarnessError("lttng", f"{f}: {line}: patch not found")
            out.append(p)
    return out


# What a build directory holds; bumped when that changes so cached builds are redone.
# 2: ko/Module.symvers, LTTng's own modpost output (the CRCs its modules export to each other).
# 3: inputs.json, what the build read from the tree (reuse.py).
LAYOUT_VERSION = "3"


def build_key(tree, src_digest, patches, kallsyms):
    return base_key(src_digest, patches, kallsyms, tree.key)


def base_key(src_digest, patches, kallsyms, tree_key=""):
    """The key of what a build is made of besides the tree (reuse.py): LTTng's source,
    its series, its switches; with `tree_key`, the build's own key."""
    h = hashlib.sha256(f"{tree_key}\0{src_digest}\0kallsyms={kallsyms}\0"
                       f"layout={LAYOUT_VERSION}\0".encode())
    for p in patches:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def kernel_release(tree):
    f = Path(tree.src) / "include" / "config" / "kernel.release"
    if not f.is_file():
        raise HarnessError("lttng", f"{f} missing: is the tree built?")
    return f.read_text().strip()


def _beat(log):
    n = sum(1 for line in open(log, errors="replace") if line.strip().startswith("CC [M]"))
    say("lttng", f"build: {n} objects so far")


KIND = "lttng/modules"      # its kind in the build cache (prepare/cachelayout.py)


def source_digest(src):
    """The content digest of the unpacked LTTng source `src`, computed once and kept
    beside it in <src>.digest: written under that file's entry lock, to a temporary
    file renamed into place, so no reader sees it half-written, and an empty file
    (left by an older writer stopped midway) is computed again."""
    f = src.parent / f"{src.name}.digest"

    def complete():
        return f.is_file() and f.read_text().strip() != ""

    with cachemod.entry(src.parent / f"{src.name}.digest.lock", complete) as e:
        if e.missing:
            tmp = f.with_name(f"{f.name}.tmp{os.getpid()}-{threading.get_ident()}")
            tmp.write_text(fetch.digest_tree(src) + "\n")
            tmp.replace(f)
            e.built()
        return f.read_text().strip()


def _staged(out):
    return (out / "stage" / f".staged-v{STAGE_VERSION}").exists()


def build(tree, series_name, cache, kallsyms=True, patches_root=None,
          version=fetch.DEFAULT_VERSION, fresh=False):
    """Return the build directory of lttng-modules `version`: ko/ (with debug info), stage/
    (stripped .ko under lib/modules/<release>/extra and depmod's files), build.log.
    A recorded build with the same inputs from the tree is reused (reuse.py) unless
    `fresh`: then LTTng is compiled, under a key of its own (the reuse proof's).

    An entry of the cache (cache.entry()): complete once built and staged at
    STAGE_VERSION. A build staged by an older STAGE_VERSION is restaged, and only
    under the entry's exclusive lock, never while anyone holds it shared."""
    src = fetch.modules_source(cache, version)
    src_digest = source_digest(src)
    patches = series(series_name, patches_root)
    key = build_key(tree, src_digest + ("\0fresh" if fresh else ""), patches, kallsyms)
    base = base_key(src_digest, patches, kallsyms)
    out = Path(cache) / KIND / key
    with cachemod.entry(out.parent / f"{key}.lock",
                        lambda: (out / "done").exists() and _staged(out)) as e:
        if not e.missing:
            cachemod.used(KIND, cache, key)
            say("lttng", f"{tree.variant}: cached LTTng build {key} ({series_name})")
            return out
        if (out / "done").exists():
            say("lttng", f"{tree.variant}: restaging LTTng build {key} (stage layout "
                         f"{STAGE_VERSION})")
            stage(out, tree)
        else:
            if out.exists():
                discard(out)
            out.mkdir(parents=True)
            donor = _donor(cache, base, tree, fresh)
            if donor:
                _reuse(out, out.parent / donor, tree, key)
            else:
                _compile(out, src, patches, tree, (version, series_name, kallsyms, key))
                reuse.register(cache, base, key)
        e.built(KIND, cache, key, tree.variant)
        cachemod.after_new_entry(cache)     # never this build: its lock is held
        return out


def _donor(cache, base, tree, fresh):
    """The key of a build this one can reuse (reuse.py), or None."""
    if not reuse.enabled() or fresh:
        return None
    donor, differ = reuse.find(cache, base, tree.src)
    if not donor and differ:
        say("lttng", f"{tree.variant}: LTTng's inputs changed since the last build "
                     f"({len(differ)} files, e.g. {', '.join(differ[:3])}): rebuilding")
    return donor


def _compile(out, src, patches, tree, what):
    """Patch, build and stage LTTng in `out`, the completion marker written last."""
    version, series_name, kallsyms, key = what
    log = out / "build.log"
    work = out / "src"
    shutil.copytree(src, work, symlinks=True)
    for p in patches:
        run_logged("lttng", ["patch", "-p1", "--forward", "--batch", "-i", str(p)], log,
                   cwd=work)
    # -j2 since 0eb2958 (no reason recorded): the project's machines have 2 cores
    # (docs/costs.md), and the LTTng builds of two variants may run at once
    argv = ["make", "-j2", f"KERNELDIR={tree.src}"]
    if not kallsyms:
        argv.append("CONFIG_LTTNG_KALLSYMS=n")
    say("lttng", f"{tree.variant}: building LTTng {version} "
                 f"(series {series_name}, kallsyms={'on' if kallsyms else 'off'}) in {work}")
    t0 = time.monotonic()
    run_logged("lttng", argv, log, cwd=work, beat=_beat, beat_every=30)
    kos = sorted(work.rglob("*.ko"))
    if not kos:
        raise HarnessError("lttng", "make succeeded but built no .ko", log)
    (out / "ko").mkdir()
    release = kernel_release(tree)
    for ko in kos:
        shutil.copy2(ko, out / "ko" / ko.name)
    symvers = work / "src" / "Module.symvers"    # M=src (LTTng's top Makefile)
    if not symvers.is_file():
        raise HarnessError("lttng", f"make succeeded but wrote no {symvers}", log)
    shutil.copy2(symvers, out / "ko" / "Module.symvers")
    stage(out, tree)
    inputs = reuse.record(out, work, tree.src)
    shutil.rmtree(work)         # 46 MB of objects; the .ko stay in ko/
    secs = round(time.monotonic() - t0, 1)
    (out / "facts").write_text(f"version={version}\nseries={series_name}\n"
                               f"kallsyms={kallsyms}\n"
                               f"tree={tree.key}\nrelease={release}\nkos={len(kos)}\n"
                               f"build_seconds={secs}\n")
    (out / "done").write_text(key + "\n")
    say("lttng", f"{tree.variant}: built {len(kos)} LTTng modules in {secs} s "
                 f"({inputs} inputs of the tree recorded)")


def reused_from(out):
    """The build whose modules `out` reuses, or None when `out` was built."""
    facts = Path(out) / "facts"
    for line in facts.read_text().splitlines() if facts.is_file() else ():
        if line.startswith("reused_from="):
            return line.split("=", 1)[1]
    return None


def _reuse(out, donor, tree, key):
    """Make `out` the build `donor` made from the same inputs (reuse.py): its modules
    (hard links: a build's files are never rewritten), staged for this tree."""
    (out / "ko").mkdir()
    with cachemod.hold([donor]):        # not evicted while its files are linked
        for f in sorted((donor / "ko").iterdir()):
            os.link(f, out / "ko" / f.name)
        shutil.copy2(donor / reuse.MANIFEST, out / reuse.MANIFEST)
        log = (donor / "build.log").read_text(errors="replace")
        facts = (donor / "facts").read_text()
    (out / "build.log").write_text(f"ksymlab: not rebuilt: every input LTTng read from the "
                                   f"tree equals build {donor.name}'s ({reuse.MANIFEST}); "
                                   "its log follows\n" + log)
    stage(out, tree)
    facts = "".join(line + "\n" for line in facts.splitlines()
                    if not line.startswith(("tree=", "build_seconds=", "reused_from=")))
    (out / "facts").write_text(facts + f"tree={tree.key}\nreused_from={donor.name}\n"
                               "build_seconds=0\n")
    (out / "done").write_text(key + "\n")
    say("lttng", f"{tree.variant}: LTTng's inputs from the tree are those of build "
                 f"{donor.name}: its modules reused, not rebuilt")


# 2: the tree's modules.builtin & co. beside the modules; 3: the tree modules
# LTTng's modules depend on (kvm.ko for the kvm-x86 probe) under kernel/
STAGE_VERSION = "3"


def stage(out, tree):
    """stage/lib/modules/<release>/: the stripped .ko under extra/, the tree's
    modules.builtin, .builtin.modinfo and .order (libkmod refuses to load its
    resources when modules.builtin.bin is empty), and depmod's indexes, made by
    depmod -b on the host into this directory only: nothing is loaded here.
    Called only under the build's exclusive entry lock (build()): it removes the
    stage/ of an older layout."""
    marker = out / "stage" / f".staged-v{STAGE_VERSION}"
    if marker.exists():
        return out / "stage"
    if (out / "stage").exists():
        shutil.rmtree(out / "stage")
    release = kernel_release(tree)
    mods = out / "stage" / "lib" / "modules" / release
    (mods / "extra").mkdir(parents=True)
    kos = sorted((out / "ko").glob("*.ko"))
    for ko in kos:
        tool_output("lttng", ["strip", "--strip-debug", "-o", mods / "extra" / ko.name, ko])
    for rel in treemods.needed(kos, tree.src):
        dest = mods / "kernel" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        tool_output("lttng", ["strip", "--strip-debug", "-o", dest, Path(tree.src) / rel])
    for name in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
        src = Path(tree.src) / name
        if src.exists():
            shutil.copy2(src, mods / name)
        else:
            (mods / name).write_text("")
    run_logged("lttng", ["depmod", "-b", str(out / "stage"), release], out / "stage.log")
    empty = [p.name for p in mods.glob("modules.*.bin") if p.stat().st_size == 0
             and p.name != "modules.devname"]
    if empty:
        raise HarnessError("lttng", f"depmod left empty indexes: {', '.join(empty)}",
                           out / "stage.log")
    marker.write_text(release + "\n")
    return out / "stage"


def publish(out, cache, variant):
    """A stable path per variant for other tools (symcheck audit): a symlink
    <cache>/lttng/by-variant/<variant> -> the build directory."""
    d = Path(cache) / "lttng" / "by-variant"
    d.mkdir(parents=True, exist_ok=True)
    variant = variant.replace("/", "-")     # a series of another release: "2.13.18/exports"
    link = d / variant
    # unique per process and thread: two runs sharing the cache publish the same
    # variant at once (a fixed name made the second symlink_to() raise EEXIST)
    tmp = d / f".{variant}.tmp{os.getpid()}-{threading.get_ident()}"
    tmp.symlink_to(out)
    tmp.replace(link)       # rename(2): atomic, the last publisher wins
    return link
