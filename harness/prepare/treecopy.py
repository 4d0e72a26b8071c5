"""A derived tree's copy of its base: hard links for the files no patch touches
(the tarball's member list says which are source files), real copies for the
rest, and the build's absolute tool paths rewritten to the new place."""

import fcntl
import os
import shutil
import subprocess
import time
from pathlib import Path

from . import cache as cachemod
from .tree import member_paths, members_file, tarball_sha256
from ..errors import HarnessError


def rewrite_tool_paths(src, old, new):
    """Replace the absolute tree path `old` by `new` in tools/ build records.

    tools/ (objtool and its libsubcmd) is built with absolute target names;
    its .cmd and .d files must name the new tree or make rebuilds objtool.
    Modification times are kept. Returns the rewritten files.
    """
    olds = {os.path.realpath(old), os.path.abspath(old)}
    new_b = os.path.realpath(new).encode()
    done = []
    for f in sorted((Path(src) / "tools").rglob(".*")):
        if not (f.name.endswith((".cmd", ".d")) and f.is_file() and not f.is_symlink()):
            continue
        data = f.read_bytes()
        out = data
        for o in olds:
            out = out.replace(o.encode(), new_b)
        if out != data:
            st = f.stat()
            f.write_bytes(out)
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
            done.append(f)
    return done


def tarball_members(cache, tarball, package="linux-source-6.1"):
    """The regular files and symlinks of the tarball as tree-relative paths (the first
    component stripped, as tree.extract does), listed once per tarball digest and kept in
    <cache>/tarballs/<digest>.members."""
    f = members_file(cache, tarball_sha256(tarball, package))
    try:
        return frozenset(f.read_text().splitlines())
    except OSError:
        pass
    p = subprocess.run(["tar", "-tf", str(tarball)], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    names = member_paths(p.stdout.splitlines())
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text("\n".join(names) + "\n")
    tmp.replace(f)
    return frozenset(names)


def linked_copy(src, dest, members):
    """Copy the tree `src` to `dest`, hard-linking the files that come from the tarball.

    A tarball file is never written in place by anything run on a tree: the
    build writes only its own outputs (the kernel builds from a read-only
    source tree with O=), and git apply, forward or reverse, removes a file and
    creates a new one. So sharing those inodes with the base is safe, and the
    copy is cheap. Everything else (build outputs, files a patch created) is
    copied, with its mode and modification time, so a rebuilt object never
    writes into the base.
    """
    p = subprocess.run(["cp", "-al", "--", str(src), str(dest)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return p
    src, dest = str(src), str(dest)
    for dirpath, _dirs, files in os.walk(dest):
        rel = os.path.relpath(dirpath, dest)
        for name in files:
            r = name if rel == "." else f"{rel}/{name}"
            if r in members:
                continue
            d = os.path.join(dirpath, name)
            if os.path.islink(d):
                continue            # a symlink is replaced, never written through
            tmp = d + ".ksymlab-copy"
            shutil.copy2(os.path.join(src, r), tmp, follow_symlinks=False)
            os.replace(tmp, d)
    return p


def copy_base(base, root, dest, members=None):
    """Copy the base's tree to `dest` (and its reversed patches to <root>/reverse/) under
    the base's lock; seconds, or None if it vanished. With `members` (the tarball's
    files) those are hard-linked instead of copied, see _linked_copy."""
    with open(root.parent / f"{base.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        if not (root.parent / base.key / "manifest.json").is_file():
            return None
        start = time.monotonic()
        try:
            if members:
                p = linked_copy(base.src, dest, members)
            else:
                p = subprocess.run(["cp", "-a", "--", str(base.src), str(dest)],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
            if p.returncode == 0 and base.reverse:
                (root / "reverse").mkdir()
                for f in base.reverse:
                    shutil.copy2(f, root / "reverse" / f.name)
        except OSError as e:
            p = subprocess.CompletedProcess([], 1, "", str(e))
        if p.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            why = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[0]
            raise HarnessError("build", f"copying base tree {base.key} ({base.variant}) to "
                               f"{dest} failed, incomplete tree removed: {why}")
        cachemod.touch_used(root.parent, base.key)
        return time.monotonic() - start
