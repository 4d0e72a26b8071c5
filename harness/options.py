"""The options of one run, fixed before anything starts."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import paths
from .prepare import ksource, variants


@dataclass(frozen=True)
class RunOptions:
    cache: Path                     # trees, modules, initramfs images, ccache
    tarball: Optional[Path]         # replaces every variant's kernel tarball (tests)
    patches: Path                   # patches/<series>/series
    runs_root: Path                 # run directories go below it
    scenario: Path
    kvm: bool = False
    append: str = ""                # extra kernel command line
    # The one place the timeouts are set (--boot-timeout, --hang-timeout):
    boot_timeout: int = 600         # seconds from QEMU's start until each marker
    hang_timeout: int = 180         # seconds without console output that are a hang
    insmod_args: str = ""
    stress: int = 0                 # insmod/rmmod cycles after sampling
    bench: int = 0                  # in-guest benchmark rounds (QEMU -icount)
    kaslr: bool = False
    guest_cpus: int = 1             # -smp of the probe-module and LTTng guests
    jobs: Optional[int] = None      # guests at once (default: one per CPU)
    variant_files: tuple = ()       # the user's own variant files
    keep_vmcore: bool = False       # keep the vmcore drgn read (else removed once read)
    module_src: Optional[Path] = None   # probe-module sources to build (default: probe-module/)
    lttng: bool = True              # the LTTng boot of variants with an [lttng] table
    lttng_suite: bool = False       # lttng-tools' kernel tests after each LTTng boot
    lttng_suite_only: tuple = ()    # substrings of the script paths to run (all when empty)
    # Seconds per suite script in the guest (`timeout -k 10`): the longest,
    # test_valid_filter (2,180 points), ran 484 points in 300 s on 2 TCG cores
    # under load (0.62 s a point, about 1,350 s in all: docs/costs.md, stop 49).
    # A hung script keeps its guest's alive lines coming: this is what ends it.
    lttng_suite_timeout: int = 1800
    cluster: Optional[str] = None   # Dask scheduler address: variant jobs run on its workers
    cluster_certs: Optional[Path] = None    # ca.pem, client.pem, client-key.pem for tls://
    insecure_cluster: bool = False  # allow plain tcp:// off the loopback (the report says so)
    lttng_beside: bool = False      # the LTTng boot runs beside the probe-module boot (run.py)

    @classmethod
    def from_env(cls, **given):
        """Defaults from KSYMLAB_CACHE, KSYMLAB_TARBALL, KSYMLAB_PATCHES, KSYMLAB_RUNS,
        KSYMLAB_CLUSTER and KSYMLAB_CLUSTER_CERTS; a value given as None keeps its default."""
        opts = {"cache": paths.cache_root(), "tarball": paths.tarball_override(),
                "patches": paths.patches_root(), "runs_root": paths.runs_root(),
                "scenario": paths.SCENARIOS / "default.scenario",
                "cluster": paths.cluster_override(), "cluster_certs": paths.cluster_certs()}
        opts.update({k: v for k, v in given.items() if v is not None})
        for k in ("cache", "tarball", "patches", "runs_root", "scenario", "cluster_certs"):
            opts[k] = Path(opts[k]) if opts[k] is not None else None
        opts["variant_files"] = tuple(Path(f) for f in opts.get("variant_files", ()))
        if opts.get("module_src") is not None:
            opts["module_src"] = Path(opts["module_src"])
        return cls(**opts)

    def known_variants(self):
        """Built-in, user-directory and --variant-file variants, by name."""
        return variants.load(self.patches, self.variant_files)

    def select(self, names):
        """The named variants; a kernel source pinned from another suite is fetched
        into the cache first (prepare/ksource.py), unless KSYMLAB_TARBALL replaces it."""
        chosen = variants.select(names, self.patches, self.known_variants(), self.tarball)
        if self.tarball is not None:
            return chosen
        chosen = [ksource.resolve(v, self.cache) for v in chosen]
        for v in chosen:
            ksource.ensure(v, self.cache)
        return chosen
