"""Where things live: the repository, the build cache and the run directories."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KCONFIG = REPO / "harness" / "kconfig"
GUEST = REPO / "harness" / "guest" / "assets"
SCENARIOS = REPO / "harness" / "scenarios"
PROBE_MODULE = REPO / "probe-module"
GDBSCRIPTS = REPO / "gdbscripts"

# The defaults below read the environment when called, by the command line
# (options.RunOptions.from_env) and the tests; the pipeline itself is handed
# these paths and never looks at the environment.


def default_tarball():
    """The 6.1 tarball (or KSYMLAB_TARBALL), for tests that read the tarball itself."""
    return tarball_override() or Path("/usr/src/linux-source-6.1.tar.xz")


def tarball_override():
    """KSYMLAB_TARBALL: a tarball that replaces every variant's own, or None."""
    t = os.environ.get("KSYMLAB_TARBALL")
    return Path(t) if t else None


def cache_root():
    """Built trees live outside the repository, shared by every checkout."""
    return Path(os.environ.get("KSYMLAB_CACHE", "/var/cache/ksymlab"))


def cluster_override():
    """KSYMLAB_CLUSTER: the Dask scheduler a run uses when --cluster is not given."""
    return os.environ.get("KSYMLAB_CLUSTER") or None


def cluster_certs():
    """KSYMLAB_CLUSTER_CERTS: the client's TLS files for --cluster tls://, else
    ~/.config/ksymlab/cluster-certs (docs/cluster.md)."""
    given = os.environ.get("KSYMLAB_CLUSTER_CERTS")
    return Path(given) if given else Path.home() / ".config" / "ksymlab" / "cluster-certs"


def runs_root():
    return Path(os.environ.get("KSYMLAB_RUNS", str(REPO / "runs")))


def patches_root():
    """patches/<variant>/series; overridable so tests can feed a broken series."""
    return Path(os.environ.get("KSYMLAB_PATCHES", str(REPO / "patches")))
