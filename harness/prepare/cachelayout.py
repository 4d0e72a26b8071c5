"""Where the build cache keeps each kind of entry, what completes one, its size.

KINDS lists every kind the cap covers (docs/cache.md has the table): its
directory under the cache, and how an entry there is laid out. A directory
entry <kind>/<key>/ is complete once its marker file is written; a file entry
<kind>/<key><suffix> once it exists (it is renamed into place). Beside each
entry of a locked kind: <key>.lock (never deleted), <key>.used (its mtime is
the last use) and <key>.info (the size measured at completion, the variant).

cluster-jobs/ holds no entries of its own making: each directory is one Dask
job attempt, named <worker pid>-<run>-<variant>-<ns> (harness/cluster/job.py),
and is in use for as long as that worker process lives; it has no lock file.
"""

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import HarnessError

DEFAULT_MAX = 40 << 30
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class Kind:
    name: str                   # its directory under the cache ("trees", "lttng/modules")
    label: str                  # one entry in words
    marker: Optional[str]       # a directory entry's completion marker ("": none, the
                                # directory itself); None: a file entry <key><suffix>
    suffix: str = ""
    skip: tuple = ()            # names in the directory that are no entries
    locked: bool = True         # False: in use while the process its name starts with lives
    remeasured: bool = False    # its size changes after completion: measured on each listing


KIND_TABLE = (
    Kind("trees", "tree", "manifest.json"),
    Kind("kernel-src", "kernel source package", "done"),   # ksource.py
    Kind("modules", "module build", "done"),
    Kind("initramfs", "initramfs", None, ".cpio"),
    # lttng/modules/inputs/ is reuse.py's registry of donors, not a build
    Kind("lttng/modules", "LTTng build", "done", skip=("inputs",)),
    Kind("lttng/initramfs", "LTTng initramfs", None, ".cpio"),
    Kind("lttng/debs", "unpacked packages", "done"),
    Kind("lttng/tools", "lttng-tools build", "done"),
    Kind("apt", "private apt configuration", "apt.conf", remeasured=True),
    Kind("cluster-jobs", "cluster job directory", "", locked=False, remeasured=True),
)
KIND = {k.name: k for k in KIND_TABLE}
KINDS = tuple(KIND)


def parse_size(text):
    """'20G', '512M', '1073741824' -> bytes; '0', 'off', 'none' -> None (no cap)."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B") or "0"
    if t in ("0", "OFF", "NONE"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)", t)
    if not m:
        raise HarnessError("usage", f"cache size {text!r}: want bytes or a number with "
                                    "K, M, G or T (e.g. 20G), or off")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def cap_from_env(env=None):
    env = os.environ if env is None else env
    v = env.get("KSYMLAB_CACHE_MAX")
    return DEFAULT_MAX if v is None or v == "" else parse_size(v)


def human(n):
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def entry_path(cache, kind, key):
    return Path(cache) / kind / f"{key}{KIND[kind].suffix}"


def lock_path(cache, kind, key):
    return Path(cache) / kind / f"{key}.lock"


def side(cache, kind, key, what):
    return Path(cache) / kind / f"{key}.{what}"


def is_complete(cache, kind, key):
    p = entry_path(cache, kind, key)
    marker = KIND[kind].marker
    if marker is None:
        return p.is_file()
    return (p / marker).is_file() if marker else p.is_dir()


def _named_key(kind, name):
    """The key an entry named `name` in `kind`'s directory has; None for a name no entry
    has (side files, hidden and temporary files, the kind's skipped names)."""
    k = KIND[kind]
    if name.startswith(".") or ".tmp" in name or name in k.skip \
            or Path(name).suffix in (".lock", ".used", ".info", ".record"):
        return None
    if k.marker is None:
        return name.removesuffix(k.suffix) if name.endswith(k.suffix) else None
    return name


def key_of(kind, path):
    """The key of the entry at `path` (which exists) in `kind`'s directory, or None."""
    p = Path(path)
    if KIND[kind].marker is not None and not (p.is_dir() or p.is_symlink()):
        return None
    return _named_key(kind, p.name)


def entry_of(path):
    """(cache, kind, key) of an entry's path: a tree root or its linux/, a module
    directory or its .ko, an initramfs .cpio. The deepest kind wins: lttng/modules/K
    is an LTTng build, not a probe-module build of a cache named lttng."""
    p = Path(path)
    for cand in (p, p.parent):
        for kind in sorted(KINDS, key=lambda k: -k.count("/")):
            parts = tuple(kind.split("/"))
            if cand.parent.parts[-len(parts):] == parts:
                key = _named_key(kind, cand.name)
                if key is not None:
                    return Path(*cand.parent.parts[:-len(parts)]), kind, key
    raise ValueError(f"{path}: not a cache entry")


def measure(path):
    """Bytes on disk under `path`, a file with n hard links counting 1/n (the tarball
    files derived trees share), so the sizes of all entries add up to the disk they
    use. A symlinked entry counts as the link only."""
    path = Path(path)
    try:
        st = path.lstat()
    except OSError:
        return 0
    total = st.st_blocks * 512
    if not path.is_dir() or path.is_symlink():
        return total
    seen = set()
    for dirpath, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_nlink > 1 and not os.path.isdir(os.path.join(dirpath, name)):
                if st.st_ino in seen:
                    continue
                seen.add(st.st_ino)
                total += st.st_blocks * 512 // st.st_nlink
            else:
                total += st.st_blocks * 512
    return total


def read_info(cache, kind, key):
    try:
        return json.loads(side(cache, kind, key, "info").read_text())
    except (OSError, ValueError):
        return {}


def write_info(cache, kind, key, info):
    f = side(cache, kind, key, "info")
    tmp = f.with_name(f"{f.name}.tmp{os.getpid()}-{threading.get_ident()}")
    tmp.write_text(json.dumps(info) + "\n")
    tmp.replace(f)


def touch_used(kind_dir, key):
    """Record a use of the entry `key` under `kind_dir` (the mtime of <key>.used)."""
    f = Path(kind_dir) / f"{key}.used"
    try:
        f.touch()
        os.utime(f)
    except OSError:
        pass


def owner_alive(key):
    """Does the process a cluster job directory is named after (<pid>-...) live?"""
    pid = key.split("-", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
