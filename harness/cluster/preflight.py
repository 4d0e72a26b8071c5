"""What a worker must have before it takes a variant job: the project's Debian
packages (harness/debian-packages.txt, as harness/install-deps installs them)
and the variant's kernel tarball. Missing either fails the job with that reason."""

import subprocess

from .. import paths
from ..errors import HarnessError

PACKAGE_LIST = paths.REPO / "harness" / "debian-packages.txt"


def listed_packages(path=PACKAGE_LIST):
    words = []
    for line in path.read_text().splitlines():
        if not line.lstrip().startswith("#"):
            words.extend(line.split())
    return words


def missing_packages(names, query=None):
    """The packages among `names` dpkg does not report installed."""
    query = query or _dpkg_status
    return [n for n in names if not query(n).endswith(" installed")]


def _dpkg_status(name):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def check(variant, query=None):
    missing = missing_packages(listed_packages(), query)
    if missing:
        raise HarnessError("deps", f"this worker lacks Debian packages: {' '.join(missing)} "
                           "(run harness/install-deps as root on it)")
    tarball = variant.tarball        # KSYMLAB_TARBALL already applied by variants.select
    if not tarball.is_file():
        raise HarnessError("extract", f"this worker has no kernel tarball {tarball} "
                           f"(apt-get install {variant.package})")
