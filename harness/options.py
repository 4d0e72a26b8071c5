"""The options of one run, fixed before anything starts."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import paths


@dataclass(frozen=True)
class RunOptions:
    cache: Path                     # trees, modules, initramfs images, ccache
    tarball: Path                   # the kernel source tarball
    patches: Path                   # patches/<series>/series
    runs_root: Path                 # run directories go below it
    scenario: Path
    kvm: bool = False
    append: str = ""                # extra kernel command line
    boot_timeout: int = 600
    hang_timeout: int = 180
    insmod_args: str = ""
    stress: int = 0                 # insmod/rmmod cycles after sampling
    bench: int = 0                  # in-guest benchmark rounds (QEMU -icount)
    kaslr: bool = False
    jobs: Optional[int] = None      # guests at once (default: one per CPU)

    @classmethod
    def from_env(cls, **given):
        """Defaults from KSYMLAB_CACHE, KSYMLAB_TARBALL, KSYMLAB_PATCHES and KSYMLAB_RUNS;
        a value given as None keeps its default."""
        opts = {"cache": paths.cache_root(), "tarball": paths.default_tarball(),
                "patches": paths.patches_root(), "runs_root": paths.runs_root(),
                "scenario": paths.SCENARIOS / "default.scenario"}
        opts.update({k: v for k, v in given.items() if v is not None})
        for k in ("cache", "tarball", "patches", "runs_root", "scenario"):
            opts[k] = Path(opts[k])
        return cls(**opts)
