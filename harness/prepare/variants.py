"""The kernel variants under comparison, read from one TOML file each.

Built-in variants live in variants/*.toml; a user adds their own in a
directory ($KSYMLAB_VARIANTS, default ~/.config/ksymlab/variants) or names a
file with --variant-file. variants/README.md documents every key. A file
that does not parse, or has an unknown key, a wrong type or a bad value, is
a usage error naming file:line.

Nothing is read at import: builtin() parses the built-in files on first use
(once per directory), inside the command that needs them, so a bad built-in
file is that command's usage error and not a traceback of the import.
$KSYMLAB_BUILTIN_VARIANTS replaces the built-in directory (tests: a copy of
variants/ with one file changed).
"""

import functools
import os
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from .. import paths
from ..errors import HarnessError
from .pins import DEFAULT_VERSION as DEFAULT_LTTNG, RELEASES as LTTNG_RELEASES

BUILTIN_DIR = paths.REPO / "variants"
MODES = ("exports", "kallsyms", "kprobe", "v2")
SAMPLERS = ("prio", "migratetype", "ustack", "blockdev", "writeback", "symbols")
# the RFC's nine, the revert of 0bd476e6, and our v2 series (patches/v2)
SEEDS = tuple(f"{i}/9" for i in range(1, 10)) + ("0bd476e6",) + \
    tuple(f"v2-{i}/8" for i in range(1, 9))


@dataclass(frozen=True)
class Variant:
    name: str
    module_mode: str      # KSYMLAB_MODE for probe-module
    description: str
    series_name: str = ""                 # <patches root>/<series_name>/, default: the name
    fragments: tuple = ("base.config",)   # harness/kconfig/ files merged onto tinyconfig
    # What the series should give a raw-tracepoint BPF program on
    # balance_dirty_pages: the highest argument it can read, and whether
    # argument 1 is the writeback domain (seed patch 3).
    bpf_max_arg: int = 12
    domain_arg: bool = False
    patches_root: Path = paths.REPO / "patches"     # select() sets the run's own
    series_path: Optional[Path] = None    # a user file's own series directory
    kernel_line: str = "6.1"
    package: str = "linux-source-6.1"     # the Debian package that installs the tarball
    tarball: Path = Path("/usr/src/linux-source-6.1.tar.xz")
    role: str = ""                        # the variant it stands for on another kernel line
    default: bool = False                 # part of a run without --variants
    degraded: tuple = ()                  # samplers that must report themselves unavailable
    seeds: tuple = ()                     # seed patches the series carries ("5/9", ...)
    order: int = 100                      # where it stands in reports and default runs
    source: str = ""                      # the file it was read from
    # LTTng (issue 13): patches/lttng/<lttng_series>.series; "" = no LTTng boot
    lttng_series: str = ""
    lttng_kallsyms: bool = True           # False: built with CONFIG_LTTNG_KALLSYMS=n
    lttng_lost: tuple = ()                # LTTng features expected to be lost here
    lttng_version: str = DEFAULT_LTTNG    # lttng-modules release (harness/prepare/pins.py)
    # the module-name pattern the tree's tracer exports are restricted to
    # (EXPORT_SYMBOL_FOR_MODULES, issue 41): the LTTng guest loads test modules
    # under other names (harness/lttng/rows/restricted.py); "" = not restricted
    lttng_restricted: str = ""

    @property
    def series_dir(self):
        """The directory with a quilt-style `series` file."""
        if self.series_path is not None:
            return self.series_path
        return self.patches_root / (self.series_name or self.name)

    @property
    def matrix_row(self):
        return self.role or self.name

    def patches(self):
        """The patch files in series order; a missing file is a patch error."""
        series = self.series_dir / "series"
        if not series.is_file():
            raise HarnessError("patch", f"{series}: series file not found")
        out = []
        for raw in series.read_text().splitlines():
            name = raw.split("#", 1)[0].strip()
            if not name:
                continue
            p = self.series_dir / name
            if not p.is_file():
                raise HarnessError("patch", f"{series}: lists {name}, which does not exist")
            out.append(p)
        return out


# key -> (type, required); tables are dicts of the same
SCHEMA = {
    "description": (str, True), "module_mode": (str, True), "default": (bool, False),
    "order": (int, False), "role": (str, False),
    "kernel": ({"line": (str, True), "package": (str, True), "tarball": (str, True)}, True),
    "build": ({"series": (str, False), "series_dir": (str, False),
               "fragments": (list, True)}, True),
    "expect": ({"bpf_max_arg": (int, True), "domain_arg": (bool, True),
                "degraded": (list, False), "seeds": (list, False)}, True),
    "lttng": ({"patches": (str, True), "kallsyms": (bool, False), "lost": (list, False),
               "version": (str, False), "restricted_to": (str, False)}, False),
}
LTTNG_FEATURES = ("prio", "callstack_user", "callstack_kernel", "statedump_block", "writeback",
                  "kmem", "statedump_irq", "uprobe", "splice")


class _File:
    """A variant file's text, to name the line of a key in an error."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.text = self.path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise HarnessError("usage", f"{self.path}: cannot read variant file ({e})") from e

    def line_of(self, table, key=None):
        current = None
        for n, line in enumerate(self.text.splitlines(), 1):
            m = re.match(r"\s*\[([^\]]+)\]", line)
            if m:
                current = m.group(1).strip()
                if current == (table if key is None else key):
                    return n
                continue
            if key is not None and current == table and re.match(rf"\s*{re.escape(key)}\s*=",
                                                                  line):
                return n
        return 1

    def error(self, message, table=None, key=None):
        return HarnessError("usage", f"{self.path}:{self.line_of(table, key)}: {message}")


def _check(f, data, schema, table=None):
    for key, value in data.items():
        if key not in schema:
            where = f"[{table}] " if table else ""
            raise f.error(f"unknown key {where}{key!r} (known: {', '.join(schema)})", table, key)
        kind, _ = schema[key]
        if isinstance(kind, dict):
            if not isinstance(value, dict):
                raise f.error(f"{key} must be a table [{key}]", table, key)
            _check(f, value, kind, key)
        elif type(value) is not kind:      # bool is not an int here, nor an int a bool
            raise f.error(f"{key} must be a {kind.__name__}, not {type(value).__name__}",
                          table, key)
    for key, (kind, required) in schema.items():
        if required and key not in data:
            where = f"[{table}]" if table else "the file"
            raise f.error(f"{where} lacks the required key {key!r}", table)


def parse(path, patches_root=None):
    """Read one variant file; the variant's name is the file's stem."""
    f = _File(path)
    try:
        data = tomllib.loads(f.text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        raise HarnessError("usage", f"{f.path}:{m.group(1) if m else 1}: "
                           f"not TOML: {str(e).split(' (at line')[0]}") from None
    _check(f, data, SCHEMA)
    name = f.path.stem
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise f.error(f"variant name {name!r} (the file name) must be letters, digits, . _ -")
    if data["module_mode"] not in MODES:
        raise f.error(f"module_mode {data['module_mode']!r} is not one of {', '.join(MODES)}",
                      None, "module_mode")
    build, expect, kern = data["build"], data["expect"], data["kernel"]
    if ("series" in build) == ("series_dir" in build):
        raise f.error("[build] needs exactly one of series (a directory under the patch "
                      "root) or series_dir (a directory relative to this file)", "build")
    for frag in build["fragments"]:
        if not isinstance(frag, str) or not (paths.KCONFIG / frag).is_file():
            raise f.error(f"fragment {frag!r} is not a file in {paths.KCONFIG}",
                          "build", "fragments")
    if not 1 <= expect["bpf_max_arg"] <= 13:
        raise f.error(f"bpf_max_arg {expect['bpf_max_arg']} is outside 1..13",
                      "expect", "bpf_max_arg")
    for key, allowed in (("degraded", SAMPLERS), ("seeds", SEEDS)):
        bad = [x for x in expect.get(key, []) if x not in allowed]
        if bad:
            raise f.error(f"{key} {bad!r}: not among {', '.join(allowed)}", "expect", key)
    series_path = None
    if "series_dir" in build:
        series_path = (f.path.parent / build["series_dir"]).resolve()
    return Variant(
        name=name, module_mode=data["module_mode"], description=data["description"],
        series_name=build.get("series", ""), fragments=tuple(build["fragments"]),
        bpf_max_arg=expect["bpf_max_arg"], domain_arg=expect["domain_arg"],
        patches_root=Path(patches_root) if patches_root else paths.REPO / "patches",
        series_path=series_path, kernel_line=kern["line"], package=kern["package"],
        tarball=Path(kern["tarball"]), role=data.get("role", ""),
        default=data.get("default", False), degraded=tuple(expect.get("degraded", ())),
        seeds=tuple(expect.get("seeds", ())), order=data.get("order", 100), source=str(f.path),
        **_lttng(f, data.get("lttng")))


def _lttng(f, table):
    """The Variant fields of an optional [lttng] table."""
    if table is None:
        return {}
    bad = [x for x in table.get("lost", []) if x not in LTTNG_FEATURES]
    if bad:
        raise f.error(f"lost {bad!r}: not among {', '.join(LTTNG_FEATURES)}", "lttng", "lost")
    version = table.get("version", DEFAULT_LTTNG)
    if version not in LTTNG_RELEASES:
        raise f.error(f"version {version!r}: no pinned lttng-modules release of that version "
                      f"(known: {', '.join(LTTNG_RELEASES)})", "lttng", "version")
    restricted = table.get("restricted_to", "")
    if "restricted_to" in table and not re.fullmatch(r"[A-Za-z0-9_-]+\*?", restricted):
        raise f.error(f"restricted_to {restricted!r}: not a module name or a name prefix "
                      "followed by * (the loader's tail glob)", "lttng", "restricted_to")
    return {"lttng_series": table["patches"], "lttng_kallsyms": table.get("kallsyms", True),
            "lttng_lost": tuple(table.get("lost", ())), "lttng_version": version,
            "lttng_restricted": restricted}


def builtin_dir():
    return Path(os.environ.get("KSYMLAB_BUILTIN_VARIANTS", BUILTIN_DIR))


def user_dir():
    return Path(os.environ.get("KSYMLAB_VARIANTS",
                               Path.home() / ".config" / "ksymlab" / "variants"))


def load(patches_root=None, files=(), directories=None, builtin=None):
    """Every known variant by name: built-ins (`builtin`, default builtin_dir()), a user
    directory, then `files`."""
    dirs = [builtin_dir() if builtin is None else Path(builtin)] + \
        ([user_dir()] if directories is None else list(directories))
    found = {}
    sources = [p for d in dirs if Path(d).is_dir() for p in sorted(Path(d).glob("*.toml"))]
    for path in sources + [Path(f) for f in files]:
        if not path.is_file():
            raise HarnessError("usage", f"{path}: variant file not found")
        v = parse(path, patches_root)
        if v.name in found and Path(found[v.name].source).resolve() != path.resolve():
            raise HarnessError("usage", f"{path}:1: variant {v.name!r} is already defined by "
                               f"{found[v.name].source}")
        found[v.name] = v
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def builtin():
    """The built-in variants by name (a fresh dict, parsed once per directory)."""
    return dict(_builtin(builtin_dir()))


@functools.lru_cache(maxsize=None)
def _builtin(directory):
    return tuple(load(directories=[], builtin=directory).items())


def defaults(known, lines=("6.1",)):
    """The variants a run compares when none are named: the default ones of `lines`."""
    return [n for n, v in known.items() if v.default and v.kernel_line in lines]


def default_names():
    """The built-in default variants of kernel line 6.1 (a run without --variants)."""
    return tuple(defaults(builtin()))


def __getattr__(name):
    # VARIANTS and DEFAULT were constants parsed at import; they are read on first
    # use now (PEP 562), for the callers that still name them.
    if name == "VARIANTS":
        return builtin()
    if name == "DEFAULT":
        return default_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def select(names, patches_root=None, known=None, tarball=None):
    """The named variants, reading their series from `patches_root` (default: patches/).

    `tarball` replaces every selected variant's tarball (KSYMLAB_TARBALL).
    """
    known = builtin() if known is None else known
    out = []
    for n in names:
        if n not in known:
            raise HarnessError("usage", f"unknown variant {n!r} (known: {', '.join(known)})")
        v = known[n]
        if patches_root:
            v = replace(v, patches_root=Path(patches_root))
        if tarball:
            v = replace(v, tarball=Path(tarball))
        out.append(v)
    return out
