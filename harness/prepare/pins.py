"""Debian packages pinned by version and sha256: what a run fetches from an archive
rather than takes from the host's apt (prepare/archive.py downloads them).

Here, below every stage, so that a variant file's `[lttng] version` is checked
(prepare/variants.py) without the prepare stage importing the LTTng stage."""

from dataclasses import dataclass

MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class Pin:
    """One package at one version, with the sha256 of its .deb."""
    package: str
    version: str        # Debian's version, e.g. 2.13.18-1+deb13u1
    sha256: str
    suite: str = ""     # "": the host's own apt; else a private configuration for it

    @property
    def spec(self):
        return f"{self.package}={self.version}"

    @property
    def where(self):
        return f"{self.suite}'s archive ({MIRROR})" if self.suite else "the host's apt sources"


MODULES_PACKAGE = "lttng-modules-dkms"
# LTTng version -> the pinned .deb of its source (sha256 from the suite's Packages index)
RELEASES = {
    # Debian 12's shipped tracer, from the host's own apt
    "2.13.9": Pin(MODULES_PACKAGE, "2.13.9-1+deb12u1",
                  "385d40aa872c30a76d49d14be564d8043d92e929d56e9172ef22ff2082bb356d"),
    # Debian 13's: the first of Debian's LTTng releases that builds on 6.12
    "2.13.18": Pin(MODULES_PACKAGE, "2.13.18-1+deb13u1",
                   "2ed7e853b8c01d67335d6c8659f245741dffd5379318559b3f2abeb6e2723eb8",
                   suite="trixie"),
    # Debian forky's, for the 7.2 line (issue 40): builds on 7.2.12 with one probe fix
    "2.16.0": Pin(MODULES_PACKAGE, "2.16.0-1",
                  "a349c53200220200045a5a60bea1bab83514bd99e45f6f44115f10d8ea590ea1",
                  suite="forky"),
}
DEFAULT_VERSION = "2.13.9"

# The kernel sources of lines the host's apt does not have, by package (the variant
# file's [kernel] package): prepare/ksource.py fetches them. sha256 of the .deb, from
# the suite's Packages index.
KERNEL_SOURCES = {
    # Debian forky's 7.2 (issue 40); forky's Release file expires weekly: archive.py
    "linux-source-7.2": Pin("linux-source-7.2", "7.2.12-1",
                            "6ea01e48037651b01076e4a369d1c76051c97c3cce6f87d48b7f3a9f5fac46a8",
                            suite="forky"),
}
