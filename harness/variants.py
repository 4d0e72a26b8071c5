"""The kernel variants under comparison and the probe-module mode each one uses."""

from dataclasses import dataclass, replace
from pathlib import Path

from . import paths
from .errors import HarnessError


@dataclass(frozen=True)
class Variant:
    name: str
    module_mode: str      # KSYMLAB_MODE for probe-module
    description: str
    series_name: str = ""                 # patches/<series_name>/, default: the name
    fragments: tuple = ("base.config",)   # harness/kconfig/ files merged onto tinyconfig
    # What the series should give a raw-tracepoint BPF program on
    # balance_dirty_pages: the highest argument it can read, and whether
    # argument 1 is the writeback domain (seed patch 3).
    bpf_max_arg: int = 12
    domain_arg: bool = False
    patches_root: Path = paths.REPO / "patches"     # select() sets the run's own

    @property
    def series_dir(self):
        """patches/<name>/ with a quilt-style `series` file."""
        return self.patches_root / (self.series_name or self.name)

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


VARIANTS = {
    # The literal port of seed patch 2 leaves the verifier's 12-argument ctx
    # bound in place (shared/reference.md), so argument 13 stays unreadable.
    "exports": Variant("exports", "exports",
                       "6.1 + the seed series: the tracer links to explicit GPL exports",
                       domain_arg=True),
    "bpf13": Variant("bpf13", "exports",
                     "exports + a follow-up that lets raw tracepoint programs read argument 13",
                     bpf_max_arg=13, domain_arg=True),
    "kallsyms": Variant("kallsyms", "kallsyms",
                        "6.1 + revert of 0bd476e6: pre-5.7 stand-in, tracer resolves by name"),
    "stock": Variant("stock", "kprobe",
                     "stock 6.1: tracer finds kallsyms_lookup_name with a kprobe, as LTTng does"),

    # Not part of the A/B comparison: the exports series on a kernel with lock,
    # atomic-sleep and leak debugging, for the insmod/rmmod stress run.
    "debug": Variant("debug", "exports",
                     "exports series + lockdep, atomic-sleep and kmemleak checking",
                     series_name="exports", fragments=("base.config", "debug.config")),
}

DEFAULT = ("exports", "kallsyms", "stock", "bpf13")


def select(names, patches_root=None):
    """The named variants, reading their series from `patches_root` (default: patches/)."""
    out = []
    for n in names:
        if n not in VARIANTS:
            raise HarnessError("usage", f"unknown variant {n!r} (known: {', '.join(VARIANTS)})")
        v = VARIANTS[n]
        out.append(replace(v, patches_root=Path(patches_root)) if patches_root else v)
    return out
