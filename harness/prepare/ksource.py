"""A kernel line's source tarball when the host's apt cannot install it: Debian's
`linux-source-<line>` of another suite (7.2 from forky), pinned in
pins.KERNEL_SOURCES, downloaded through that suite's private apt configuration
(archive.py) and unpacked with `dpkg -x` into the cache, never installed.

A variant file names such a package in its [kernel] table like any other; its
`tarball` is then the path inside the package (/usr/src/linux-source-7.2.tar.xz),
and resolve() turns it into the path under the cache. ensure() fetches what is
missing before the first tree key is computed (the key hashes the tarball).
"""

from dataclasses import replace
from pathlib import Path

from . import cache as cachemod
from .archive import download
from .pins import KERNEL_SOURCES
from ..errors import HarnessError
from ..proc import discard, run_logged
from ..progress import say

KIND = "kernel-src"         # its kind in the build cache (cachelayout.py)


def entry_name(pin):
    return f"{pin.package}_{pin.version}"


def resolve(variant, cache):
    """`variant` with its tarball under the cache when its package is pinned here
    (the file may not be there yet: ensure() puts it there)."""
    pin = KERNEL_SOURCES.get(variant.package)
    if pin is None or not Path(variant.tarball).is_absolute():
        return variant
    root = cachemod.entry_path(cache, KIND, entry_name(pin)) / "root"
    inside = Path(variant.tarball)
    if root in inside.parents:
        return variant                  # resolved already
    return replace(variant, tarball=root / inside.relative_to("/"))


def ensure(variant, cache):
    """Fetch and unpack the pinned package of a resolve()d `variant` when its tarball
    is missing; one HarnessError(extract) line when the package does not have it."""
    pin = KERNEL_SOURCES.get(variant.package)
    tarball = Path(variant.tarball)
    if pin is None or tarball.is_file():
        return tarball
    name = entry_name(pin)
    out = cachemod.entry_path(cache, KIND, name)
    done = out / "done"
    with cachemod.entry(cachemod.lock_path(cache, KIND, name), done.exists) as e:
        if e.missing:
            _fetch(pin, cache, out)
            e.built(KIND, cache, name)
            cachemod.after_new_entry(cache)     # never this one: its lock is held
        else:
            cachemod.used(KIND, cache, name)
    if not tarball.is_file():
        raise HarnessError("extract", f"{pin.package} {pin.version} has no "
                           f"{tarball.relative_to(out / 'root')} (the variant's [kernel] "
                           f"tarball)", out / "unpack.log")
    return tarball


def _fetch(pin, cache, out):
    if out.exists():
        discard(out)
    (out / "debs").mkdir(parents=True)
    say("extract", f"{pin.package} {pin.version}: downloading from {pin.where}")
    deb = download(pin, cache, out / "debs", out / "download.log", step="extract")
    (out / "root").mkdir()
    run_logged("extract", ["dpkg", "-x", str(deb), str(out / "root")], out / "unpack.log")
    deb.unlink()                # the tarball inside is all a tree needs
    (out / "done").write_text(f"{pin.spec} {pin.sha256}\n")
    say("extract", f"{pin.package} {pin.version}: unpacked into {out / 'root'}")
