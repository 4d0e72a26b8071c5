"""A variant's run directory and result, carried from a worker to the client.

The directory travels as an uncompressed tar (console logs are small, a kept
vmcore is mostly data that gzip would spend minutes on) and is unpacked only
as regular files and directories below the destination: a member that is a
link, a device, an absolute name or climbs out with ".." is refused.

The VariantResult travels pickled. Its mappings are read-only MappingProxy
views, which pickle cannot carry; the pickler turns each into a plain dict and
the loader wraps it again. Paths in the result that name the worker's job
directory are rewritten to the client's run directory (relocate()).
"""

import dataclasses
import enum
import io
import pickle
import tarfile
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from ..errors import HarnessError

# Not sent back unless asked: rebuilt from the cache in seconds, and 20-60 MiB each.
OPTIONAL_SUFFIXES = (".cpio", ".cpio.gz", ".cpio.xz")


def _proxy(d):
    return MappingProxyType(d)


class _Pickler(pickle.Pickler):
    dispatch_table = {MappingProxyType: lambda m: (_proxy, (dict(m),))}


def dump_result(obj):
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def load_result(data):
    return pickle.loads(data)


def _optional(name):
    return name.endswith(OPTIONAL_SUFFIXES)


def pack(directory, keep_optional=False):
    """The files under `directory` as tar bytes (names relative to it)."""
    directory = Path(directory)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(directory.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            if path.is_file() and not keep_optional and _optional(path.name):
                continue
            tar.add(path, arcname=path.relative_to(directory).as_posix(), recursive=False)
    return buf.getvalue()


def _safe_name(name):
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and p.parts and p.parts[0] != ""


def unpack(data, dest):
    """Write the tar `data` below `dest`; return the relative names written.
    Raises HarnessError("cluster") naming the first unsafe or unreadable member."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for m in tar:
                if not _safe_name(m.name):
                    raise HarnessError("cluster", f"artifacts: refused member {m.name!r} "
                                       "(absolute or outside the run directory)")
                target = dest / m.name
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if not m.isfile():
                    raise HarnessError("cluster", f"artifacts: refused member {m.name!r} "
                                       "(not a regular file or directory)")
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                with open(target, "wb") as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
                written.append(m.name)
    except tarfile.TarError as e:
        raise HarnessError("cluster", f"artifacts: not a readable tar: {e}") from e
    return written


def relocate(obj, old, new):
    """`obj` with every string (and Path) that contains `old` rewritten to `new`:
    strings, tuples, lists, mappings (values), dataclasses (fields), others as they are."""
    old, new = str(old), str(new)

    def walk(x):
        if isinstance(x, enum.Enum):
            return x
        if isinstance(x, str):
            return x.replace(old, new)
        if isinstance(x, Path):
            return Path(str(x).replace(old, new))
        if isinstance(x, tuple):
            return tuple(walk(v) for v in x)
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, MappingProxyType):
            return MappingProxyType({k: walk(v) for k, v in x.items()})
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            changes = {f.name: walk(getattr(x, f.name))
                       for f in dataclasses.fields(x) if f.init}
            return dataclasses.replace(x, **changes)
        return x

    return walk(obj)
