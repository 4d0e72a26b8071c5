"""Debian's LTTng packages, downloaded with `apt-get download` and unpacked with
`dpkg -x` into the cache: never installed on the host.

lttng-modules comes in the versions of RELEASES, each pinned (archive.py): a
variant names one in its [lttng] table (`version`)."""

import hashlib
import os
import subprocess
from pathlib import Path

from ...errors import HarnessError
from ...prepare import cache as cachemod
from ...proc import discard
from ...progress import say
from ...prepare.pins import DEFAULT_VERSION, RELEASES
from ...prepare.archive import apt_get, download

# lttng-tools and the closure of the shared libraries its three programs link
# (readelf NEEDED, resolved inside the unpacked tree: see guestroot.py).
USERSPACE_PACKAGES = (
    "lttng-tools", "liblttng-ctl0", "liburcu8", "libxml2", "libpopt0", "libkmod2",
    "liblttng-ust-ctl5", "liblttng-ust-common1", "libnuma1", "libicu72", "liblzma5",
    "zlib1g", "libzstd1", "libssl3", "libc6", "libgcc-s1", "libstdc++6",
)


def _key(packages):
    return hashlib.sha256("\n".join(packages).encode()).hexdigest()[:16]


KIND = "lttng/debs"         # its kind in the build cache (prepare/cachelayout.py)


def _unpacked(cache, what, key, fetch):
    """One root with the packages `fetch(debs_dir, log)` downloads (a list of .deb)
    unpacked into it; an entry of the build cache (cache.entry()) named `what`-`key`."""
    name = f"{what}-{key}"
    out = cachemod.entry_path(cache, KIND, name)
    done = out / "done"
    with cachemod.entry(cachemod.lock_path(cache, KIND, name), done.exists) as e:
        if not e.missing:
            cachemod.used(KIND, cache, name)
            return out / "root"
        if out.exists():
            discard(out)
        (out / "debs").mkdir(parents=True)
        debs = fetch(out / "debs", out / "download.log")
        (out / "root").mkdir()
        for deb in debs:
            p = subprocess.run(["dpkg", "-x", str(deb), str(out / "root")],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise HarnessError("lttng", f"dpkg -x {deb.name}: {p.stderr.strip()[:200]}")
        (out / "packages").write_text("\n".join(d.name for d in debs) + "\n")
        done.write_text(key + "\n")
        e.built(KIND, cache, name)
        say("lttng", f"unpacked {len(debs)} packages into {out / 'root'}")
        cachemod.after_new_entry(cache)     # never this root: its lock is held
        return out / "root"


def _host_packages(packages):
    """A fetch of `packages` (unpinned names) from the host's apt."""
    def fetch(debs_dir, log):
        say("lttng", f"apt-get download {' '.join(packages)}")
        apt_get("lttng", ["apt-get", "download", *packages], log, ", ".join(packages),
                cwd=debs_dir)
        debs = sorted(debs_dir.glob("*.deb"))
        if len(debs) != len(packages):
            raise HarnessError("lttng", f"apt-get download gave {len(debs)} packages for "
                               f"{len(packages)} names", log)
        return debs
    return fetch


def modules_source(cache, version=DEFAULT_VERSION):
    """The unpacked lttng-modules `version` source directory."""
    if version not in RELEASES:
        raise HarnessError("lttng", f"no pinned lttng-modules {version} "
                                    f"(known: {', '.join(RELEASES)})")
    pin = RELEASES[version]
    root = _unpacked(cache, "modules", _key((pin.spec, pin.sha256, pin.suite)),
                     lambda debs_dir, log: [download(pin, cache, debs_dir, log)])
    src = root / "usr" / "src" / f"lttng-modules-{version}"
    if not (src / "Makefile").is_file():
        raise HarnessError("lttng", f"{src}: no lttng-modules {version} source "
                           f"in {pin.package} {pin.version}")
    return src


def userspace_root(cache):
    """The unpacked root of lttng-tools and the libraries it links."""
    return _unpacked(cache, "userspace", _key(USERSPACE_PACKAGES),
                     _host_packages(USERSPACE_PACKAGES))


def digest_tree(root):
    """Content digest of every file under `root` (path and bytes)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(root)).encode() + b"\0")
            if p.is_symlink():
                h.update(b"->" + os.readlink(p).encode())
            else:
                h.update(p.read_bytes())
            h.update(b"\0")
    return h.hexdigest()
