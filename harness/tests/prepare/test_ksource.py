"""A kernel line's source from another suite (harness/prepare/ksource.py): the pinned
linux-source .deb through the suite's private apt configuration, unpacked into the
cache. apt-get is a stand-in on PATH that hands out a real .deb built here (no
network); the real archive is exercised when a 7.2 variant runs."""

import dataclasses
import hashlib
import subprocess

import pytest

from harness.errors import HarnessError
from harness.prepare import ksource, pins, variants
from harness.tests.prepare.test_archive import install_stand_in

# `apt-get download P=V` copies $FAKE_DEB to P_V_all.deb when V is $FAKE_HAS;
# every call is logged with the APT_CONFIG it saw
FAKE_APT = r"""#!/bin/sh
echo "$(basename "$0") $* APT_CONFIG=${APT_CONFIG:-}" >> "$FAKE_LOG"
case "$(basename "$0") $1" in
"apt-get update") exit 0 ;;
"apt-get download")
    pkg=${2%%=*}; ver=${2#*=}
    if [ "$ver" = "$FAKE_HAS" ]; then cp "$FAKE_DEB" "${pkg}_${ver}_all.deb"; exit 0; fi
    echo "E: Version '$ver' for '$pkg' was not found"; exit 100 ;;
"apt-cache madison")
    echo " $2 | $FAKE_HAS | http://deb.debian.org/debian forky/main amd64 Packages" ;;
esac
"""
TARBALL = "/usr/src/linux-source-7.2.tar.xz"
CONTENT = b"the 7.2 tarball's bytes"


def _deb(tmp_path, inside=TARBALL):
    """A real .deb (dpkg-deb --build) of linux-source-7.2 holding `inside`."""
    pkg = tmp_path / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: linux-source-7.2\nVersion: 7.2.12-1\nArchitecture: all\n"
        "Maintainer: nobody <nobody@example.org>\nDescription: test\n")
    f = pkg / inside.lstrip("/")
    f.parent.mkdir(parents=True)
    f.write_bytes(CONTENT)
    deb = tmp_path / "test.deb"
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(pkg), str(deb)], check=True,
                   capture_output=True)
    return deb


@pytest.fixture
def archive_of(tmp_path, monkeypatch):
    """The stand-in archive serving `deb`, pinned as linux-source-7.2 with `sha`
    (default: the deb's own); returns the call log."""
    log = install_stand_in(FAKE_APT, tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_HAS", "7.2.12-1")

    def serve(deb, sha=None):
        monkeypatch.setenv("FAKE_DEB", str(deb))
        sha = sha or hashlib.sha256(deb.read_bytes()).hexdigest()
        monkeypatch.setitem(ksource.KERNEL_SOURCES, "linux-source-7.2",
                            pins.Pin("linux-source-7.2", "7.2.12-1", sha, suite="forky"))
        return log
    return serve


def _variant(tarball=TARBALL, package="linux-source-7.2"):
    return dataclasses.replace(variants.VARIANTS["stock"], name="stock-7.2", kernel_line="7.2",
                               package=package, tarball=ksource.Path(tarball))


def test_resolve_puts_a_pinned_package_under_the_cache_and_leaves_the_rest(tmp_path):
    cache = tmp_path / "cache"
    v = ksource.resolve(_variant(), cache)
    assert v.tarball == (cache / "kernel-src" / "linux-source-7.2_7.2.12-1" / "root" /
                         "usr/src/linux-source-7.2.tar.xz")
    assert ksource.resolve(v, cache) == v                  # once is enough
    six = variants.VARIANTS["stock"]                       # the host's linux-source-6.1
    assert ksource.resolve(six, cache) == six


def test_ensure_fetches_once_through_the_private_configuration(tmp_path, archive_of):
    log = archive_of(_deb(tmp_path))
    cache = tmp_path / "cache"
    v = ksource.resolve(_variant(), cache)
    assert not v.tarball.exists()
    assert ksource.ensure(v, cache) == v.tarball and v.tarball.read_bytes() == CONTENT
    calls = log.read_text().splitlines()
    assert [c.split(" APT_CONFIG=")[0] for c in calls] == \
        ["apt-get update", "apt-get download linux-source-7.2=7.2.12-1"]
    assert all(c.endswith(f"APT_CONFIG={cache}/apt/forky/apt.conf") for c in calls)
    entry = cache / "kernel-src" / "linux-source-7.2_7.2.12-1"
    assert not list((entry / "debs").glob("*.deb"))        # the tarball is kept, not the deb
    ksource.ensure(v, cache)
    assert len(log.read_text().splitlines()) == 2          # cached: no second download


def test_a_deb_that_is_not_the_pinned_one_is_one_line(tmp_path, archive_of):
    archive_of(_deb(tmp_path), sha="0" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(HarnessError) as e:
        ksource.ensure(ksource.resolve(_variant(), cache), cache)
    assert e.value.step == "extract" and "\n" not in e.value.one_line()
    assert "is not the pinned " + "0" * 64 in e.value.message


def test_a_package_without_the_variants_tarball_is_one_line(tmp_path, archive_of):
    archive_of(_deb(tmp_path, inside="/usr/src/linux-source-7.3.tar.xz"))
    cache = tmp_path / "cache"
    with pytest.raises(HarnessError) as e:
        ksource.ensure(ksource.resolve(_variant(), cache), cache)
    assert e.value.step == "extract"
    assert e.value.message == ("linux-source-7.2 7.2.12-1 has no usr/src/linux-source-7.2.tar.xz "
                               "(the variant's [kernel] tarball)")


def test_a_version_the_archive_lost_is_one_line(tmp_path, archive_of, monkeypatch):
    archive_of(_deb(tmp_path))
    monkeypatch.setenv("FAKE_HAS", "7.2.13-1")
    cache = tmp_path / "cache"
    with pytest.raises(HarnessError) as e:
        ksource.ensure(ksource.resolve(_variant(), cache), cache)
    assert "forky's archive" in e.value.message and "no longer has linux-source-7.2 " \
        "7.2.12-1 (it has: 7.2.13-1)" in e.value.message
    assert not (cache / "kernel-src" / "linux-source-7.2_7.2.12-1" / "done").exists()


def _options(tmp_path, **given):
    from harness.options import RunOptions as Options
    text = (variants.BUILTIN_DIR / "stock.toml").read_text()
    vfile = tmp_path / "mine-7.2.toml"
    vfile.write_text(text.replace('line = "6.1"', 'line = "7.2"')
                     .replace('"linux-source-6.1"', '"linux-source-7.2"')
                     .replace('"/usr/src/linux-source-6.1.tar.xz"', f'"{TARBALL}"')
                     .replace("default = true", "default = false"))
    return Options.from_env(cache=tmp_path / "cache", variant_files=(vfile,), **given)


def test_a_run_selecting_the_variant_fetches_its_source(tmp_path, archive_of):
    log = archive_of(_deb(tmp_path))
    (v,) = _options(tmp_path).select(["mine-7.2"])
    assert v.tarball.read_bytes() == CONTENT and (tmp_path / "cache") in v.tarball.parents
    assert "apt-get download linux-source-7.2=7.2.12-1" in log.read_text()


def test_ksymlab_tarball_replaces_the_pinned_package_without_a_fetch(tmp_path, archive_of,
                                                                      monkeypatch):
    log = archive_of(_deb(tmp_path))
    mine = tmp_path / "mine.tar.xz"
    mine.write_bytes(b"x")
    monkeypatch.delenv("KSYMLAB_TARBALL", raising=False)
    (v,) = _options(tmp_path, tarball=mine).select(["mine-7.2"])
    assert v.tarball == mine and not log.exists()
