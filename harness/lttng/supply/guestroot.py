"""The guest's LTTng userspace: Debian's lttng, lttng-sessiond, lttng-consumerd and the
closure of the shared libraries they link, resolved with readelf in the unpacked root."""

import re
import subprocess
from pathlib import Path

from ...errors import HarnessError

PROGRAMS = ("usr/bin/lttng", "usr/bin/lttng-sessiond",
            "usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd")
LIBDIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")
INTERP = "lib64/ld-linux-x86-64.so.2"
NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")


def needed(elf):
    p = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True)
    if p.returncode != 0:
        raise HarnessError("lttng", f"readelf -d {elf}: {p.stderr.strip()[:200]}")
    return NEEDED.findall(p.stdout)


def find_lib(root, name):
    for d in LIBDIRS:
        p = Path(root) / d / name
        if p.exists():
            return p
    return None


def closure(root):
    """{guest path: host file} for the programs, every library they need and the
    dynamic loader; HarnessError naming a library no unpacked package provides."""
    root = Path(root)
    files = {}
    todo = []
    for prog in PROGRAMS:
        p = root / prog
        if not p.is_file():
            raise HarnessError("lttng", f"{p}: missing from the unpacked lttng-tools")
        files["/" + prog] = p
        todo.append(p)
    seen = set()
    while todo:
        elf = todo.pop()
        for lib in needed(elf):
            if lib in seen:
                continue
            seen.add(lib)
            host = find_lib(root, lib)
            if host is None:
                raise HarnessError("lttng", f"{lib} (needed by {elf.name}) is in none of the "
                                   "unpacked packages: add its package to "
                                   "fetch.USERSPACE_PACKAGES")
            files[f"/lib/x86_64-linux-gnu/{lib}"] = host.resolve()
            todo.append(host.resolve())
    interp = root / INTERP
    if not interp.exists():
        raise HarnessError("lttng", f"{interp}: no dynamic loader (libc6 not unpacked?)")
    files["/" + INTERP] = interp.resolve()
    return files


def size(files):
    return sum(Path(h).stat().st_size for h in files.values())
