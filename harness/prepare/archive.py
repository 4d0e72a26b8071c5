"""Pinned Debian packages, downloaded with `apt-get download`, never installed.

A package of the host's own suite (Debian 12) comes through the host's apt. A
package of another suite (trixie's LTTng) comes through a private apt
configuration kept under the cache, <cache>/apt/<suite>/: its own sources list,
state, cache and (empty) parts directories, read by apt-get through APT_CONFIG,
and bookworm's archive keyring (which also signs trixie's index). Nothing under
/etc is changed. Every download is pinned by version and checked against the
pinned sha256."""

import fcntl
import os
import subprocess
import sys
from pathlib import Path

from .cachelayout import touch_used
from .digest import file_digest
from .pins import MIRROR
from ..errors import HarnessError
from ..proc import StepTimeout, run_logged
from ..progress import say

# Seconds an apt-get download, source or update may take: generous (trixie's lists
# take about a minute on a slow line), but finite, so a stalled mirror stops the
# step with one line instead of hanging CI.
APT_TIMEOUT = 15 * 60
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")


def apt_conf(root):
    """apt.conf of the private configuration rooted at `root`."""
    return "\n".join([
        f'Dir::Etc "{root}/etc";',
        f'Dir::Etc::sourcelist "{root}/etc/sources.list";',
        f'Dir::Etc::sourceparts "{root}/etc/sources.list.d";',
        f'Dir::Etc::parts "{root}/etc/apt.conf.d";',
        f'Dir::Etc::preferences "{root}/etc/preferences";',
        f'Dir::Etc::preferencesparts "{root}/etc/preferences.d";',
        f'Dir::State "{root}/state";',
        f'Dir::State::status "{root}/state/status";',
        f'Dir::Cache "{root}/cache";',
        'APT::Architecture "amd64";',
        'APT::Architectures { "amd64"; };',
        'Acquire::Languages "none";',
        # A testing suite's Release file (forky's) is valid for a week only; past
        # that, apt refuses the lists. Their signature is still checked, and every
        # file taken from them is checked against its pinned sha256.
        'Acquire::Check-Valid-Until "false";',
        # the files land in the cache, which apt's sandbox user may not write
        'APT::Sandbox::User "root";',
    ]) + "\n"


def sources_list(suite, mirror=MIRROR, keyring=KEYRING):
    """Its sources: the suite's binaries and sources, signed by `keyring`."""
    return (f"# {suite}, for ksymlab only (harness/prepare/archive.py)\n"
            f"deb [signed-by={keyring}] {mirror} {suite} main\n"
            f"deb-src [signed-by={keyring}] {mirror} {suite} main\n")


class PrivateApt:
    """The private apt configuration of one suite under <cache>/apt/<suite>."""

    def __init__(self, cache, suite):
        self.suite = suite
        self.root = Path(cache) / "apt" / suite

    def _setup(self):
        r = self.root
        for d in ("etc/apt.conf.d", "etc/sources.list.d", "etc/preferences.d",
                  "state/lists/partial", "cache/archives/partial"):
            (r / d).mkdir(parents=True, exist_ok=True)
        (r / "state" / "status").touch()
        (r / "apt.conf").write_text(apt_conf(r))
        (r / "etc" / "sources.list").write_text(sources_list(self.suite))

    def env(self):
        return {**os.environ, "APT_CONFIG": str(self.root / "apt.conf")}

    def has_lists(self):
        return any((self.root / "state" / "lists").glob("*_Packages*"))

    def update(self, log, what, step="lttng"):
        """apt-get update of this suite, for `what` (the package it is wanted for)."""
        if not KEYRING.is_file():
            raise HarnessError(step, f"{KEYRING} missing: install debian-archive-keyring")
        say(step, f"apt-get update of {self.suite} (private configuration {self.root})")
        apt_get(step, ["apt-get", "update"], log, f"{self.suite}'s lists for {what}",
                env=self.env())

    def versions(self, package, index="Packages"):
        """The versions of `package` this configuration's index knows."""
        return _madison(package, self.env(), index)


def _madison(package, env=None, index="Packages"):
    """The versions of `package` in apt's `index` (Packages or Sources) seen with `env`."""
    p = subprocess.run(["apt-cache", "madison", package], capture_output=True, text=True,
                       env=env)
    return sorted({line.split("|")[1].strip() for line in p.stdout.splitlines()
                   if line.count("|") >= 2 and line.rstrip().endswith(index)})


def apt_get(step, argv, log, what, cwd=None, env=None):
    """Run apt-get `argv` for `what` (the package or packages it fetches), at most
    APT_TIMEOUT seconds: past that, one HarnessError(step) line naming `what` and the
    timeout. A failure is run_logged's HarnessError."""
    try:
        run_logged(step, argv, log, cwd=cwd, env=env, timeout=APT_TIMEOUT)
    except StepTimeout as err:
        raise HarnessError(step, f"{' '.join(argv[:2])} of {what} took longer than "
                                 f"{APT_TIMEOUT} s: is the mirror reachable?", log) from err


def _acquire(pin, cache, dest, log, argv, index, step):
    """Run apt-get `argv` in `dest` for `pin`, through its suite's private configuration
    (its lists fetched when missing, refreshed once when the version is not found), or
    the host's apt. One HarnessError line when the archive no longer has the version,
    or when apt-get takes longer than APT_TIMEOUT."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    say(step, f"{' '.join(argv)} from {pin.where}")
    if pin.suite:
        apt = PrivateApt(cache, pin.suite)
        apt.root.mkdir(parents=True, exist_ok=True)
        with open(apt.root.parent / f"{pin.suite}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)    # also what eviction tries (cache.py)
            touch_used(apt.root.parent, pin.suite)
            apt._setup()
            if not apt.has_lists():
                apt.update(log, pin.spec, step)
            ok = _try(step, argv, dest, log, apt.env(), pin)
            if not ok:
                apt.update(log, pin.spec, step)      # the lists may be older than the archive
                ok = _try(step, argv, dest, log, apt.env(), pin)
            known = None if ok else apt.versions(pin.package, index)
    else:
        ok = _try(step, argv, dest, log, None, pin)
        known = None if ok else _madison(pin.package, None, index)
    if not ok:
        has = ", ".join(known) if known else "no version at all"
        raise HarnessError(step, f"{pin.where} no longer has {pin.package} {pin.version} "
                                 f"(it has: {has}); pin another version in "
                                 f"harness/prepare/pins.py", log)
    return dest


def _checked(pin, dest, pattern, log, what, step):
    """The one file of `dest` matching `pattern`, whose sha256 must be the pin's."""
    found = sorted(p for p in dest.glob(pattern) if not p.name.endswith(".asc"))  # signatures
    if len(found) != 1:
        raise HarnessError(step, f"{what} {pin.spec} left {len(found)} files "
                                 f"matching {pattern} in {dest}", log)
    got = file_digest(found[0])
    if got != pin.sha256:
        raise HarnessError(step, f"{found[0].name}: sha256 {got} is not the pinned "
                                 f"{pin.sha256}", log)
    return found[0]


def download(pin, cache, dest, log, step="lttng"):
    """Download the binary package `pin` into `dest`; return the checked .deb."""
    dest = _acquire(pin, cache, dest, log, ["apt-get", "download", pin.spec], "Packages",
                    step)
    return _checked(pin, dest, f"{pin.package}_{pin.version.split(':')[-1]}_*.deb", log,
                    "apt-get download", step)


def source(pin, cache, dest, log, step="lttng"):
    """Download the source package `pin` (.dsc and tarballs, which apt checks against
    the suite's Sources index) into `dest`; return its upstream tarball, whose sha256
    is the pin's."""
    dest = _acquire(pin, cache, dest, log, ["apt-get", "source", "--download-only", pin.spec],
                    "Sources", step)
    upstream = pin.version.split(":")[-1].rsplit("-", 1)[0]
    return _checked(pin, dest, f"{pin.package}_{upstream}.orig.tar.*", log,
                    "apt-get source", step)


def _try(step, argv, cwd, log, env, pin):
    """Did apt-get `argv` succeed? A timeout is no failure to try again: it raises."""
    try:
        apt_get(step, argv, log, pin.spec, cwd=cwd, env=env)
        return True
    except HarnessError as err:
        if isinstance(err.__cause__, StepTimeout):
            raise
        return False


def apt_config(cache, suite, log):
    """The APT_CONFIG file of `suite`'s private configuration, its lists fetched when it
    has none: for the scripts that download from another suite with apt-get themselves
    (symcheck/fetch-distro-kernel.sh --line 7.2)."""
    apt = PrivateApt(cache, suite)
    apt.root.mkdir(parents=True, exist_ok=True)
    with open(apt.root.parent / f"{suite}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        touch_used(apt.root.parent, suite)
        apt._setup()
        if not apt.has_lists():
            apt.update(log, f"{suite}'s packages", step="apt")
    return apt.root / "apt.conf"


def main(argv):
    """python3 -m harness.prepare.archive apt-config SUITE: print the private APT_CONFIG of
    SUITE (e.g. forky) under the cache; one line on stderr and status 2 when it fails."""
    from .. import paths
    if len(argv) != 2 or argv[0] != "apt-config" or not argv[1].isalnum():
        print("usage: python3 -m harness.prepare.archive apt-config SUITE", file=sys.stderr)
        return 2
    root = paths.cache_root()
    try:
        print(apt_config(root, argv[1], root / "apt" / f"{argv[1]}-update.log"))
    except HarnessError as err:
        print(f"archive: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
