"""Pinned LTTng sources (harness/prepare/archive.py, harness/lttng/supply/fetch.py): the private apt
configuration of another suite, and the one line a missing version or a wrong
file gives. apt-get and apt-cache are replaced by a stand-in on PATH that plays
an archive (no network); the real archive is exercised by the 6.12 LTTng e2e
test."""

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from harness import paths
from harness.errors import HarnessError
from harness.lttng.supply import fetch
from harness.prepare import archive
from harness.prepare import cache as cachemod, pins

# The stand-in: the command $FAKE_STALL names ("apt-get update") first stalls 4 s;
# `apt-get update` records the call, `apt-get download P=V` writes
# P_V_all.deb with the bytes of $FAKE_DEB_BYTES when V is $FAKE_HAS, else fails as
# apt does; `apt-cache madison P` lists $FAKE_HAS. Every call is logged with the
# APT_CONFIG it saw.
FAKE_APT = r"""#!/bin/sh
echo "$(basename "$0") $* APT_CONFIG=${APT_CONFIG:-}" >> "$FAKE_LOG"
if [ -n "${FAKE_STALL:-}" ] && [ "$(basename "$0") $1" = "$FAKE_STALL" ]; then sleep 4; fi
case "$(basename "$0") $1" in
"apt-get update") exit 0 ;;
"apt-get download")
    pkg=${2%%=*}; ver=${2#*=}
    if [ "$ver" = "$FAKE_HAS" ]; then printf '%s' "$FAKE_DEB_BYTES" > "${pkg}_${ver}_all.deb"; exit 0; fi
    echo "E: Version '$ver' for '$pkg' was not found"; exit 100 ;;
"apt-get source")
    pkg=${3%%=*}; ver=${3#*=}; up=${ver%-*}
    if [ "$ver" = "$FAKE_HAS" ]; then
        printf '%s' "$FAKE_DEB_BYTES" > "${pkg}_${up}.orig.tar.bz2"
        echo sig > "${pkg}_${up}.orig.tar.bz2.asc"; echo dsc > "${pkg}_${ver}.dsc"; exit 0
    fi
    echo "E: Can not find version '$ver' of package '$pkg'"; exit 100 ;;
"apt-cache madison")
    echo " $2 | $FAKE_HAS | http://deb.debian.org/debian trixie/main amd64 Packages"
    echo " $2 | $FAKE_HAS | http://deb.debian.org/debian trixie/main Sources" ;;
esac
"""


def install_stand_in(script, tmp_path, monkeypatch):
    """`script` as apt-get and apt-cache, first on PATH; returns its call log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("apt-get", "apt-cache"):
        f = bindir / name
        f.write_text(script)
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(log))
    return log


@pytest.fixture
def fake_apt(tmp_path, monkeypatch):
    log = install_stand_in(FAKE_APT, tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_DEB_BYTES", "a deb")
    return log


def pin(version="2.13.18-1+deb13u1", data=b"a deb", suite="trixie"):
    return pins.Pin("lttng-modules-dkms", version, hashlib.sha256(data).hexdigest(), suite)


def test_private_configuration_lives_under_the_cache_and_names_the_keyring(tmp_path):
    root = tmp_path / "apt" / "trixie"
    conf = archive.apt_conf(root)
    for key in ("Dir::Etc", "Dir::Etc::sourcelist", "Dir::Etc::parts", "Dir::State",
                "Dir::State::status", "Dir::Cache"):
        (line,) = [x for x in conf.splitlines() if x.startswith(f'{key} "')]
        assert f'"{root}/' in line, line          # nothing of the host's /etc/apt or /var
    # forky's Release expires weekly; the signature and the pins still hold
    assert 'Acquire::Check-Valid-Until "false";' in conf.splitlines()
    src = archive.sources_list("trixie").splitlines()
    assert f"deb [signed-by={archive.KEYRING}] {archive.MIRROR} trixie main" in src
    assert f"deb-src [signed-by={archive.KEYRING}] {archive.MIRROR} trixie main" in src


def test_download_through_the_private_configuration(tmp_path, fake_apt, monkeypatch):
    monkeypatch.setenv("FAKE_HAS", "2.13.18-1+deb13u1")
    deb = archive.download(pin(), tmp_path / "cache", tmp_path / "debs", tmp_path / "dl.log")
    assert deb.read_bytes() == b"a deb"
    root = tmp_path / "cache" / "apt" / "trixie"
    calls = fake_apt.read_text().splitlines()
    # the lists were fetched once (none before), and every call saw the private config
    assert [c.split(" APT_CONFIG=")[0] for c in calls] == \
        ["apt-get update", "apt-get download lttng-modules-dkms=2.13.18-1+deb13u1"]
    assert all(c.endswith(f"APT_CONFIG={root}/apt.conf") for c in calls)
    assert (root / "etc" / "sources.list").read_text() == archive.sources_list("trixie")
    assert (root / "state" / "status").read_text() == ""


def test_a_version_the_archive_no_longer_has_is_one_line(tmp_path, fake_apt, monkeypatch):
    monkeypatch.setenv("FAKE_HAS", "2.13.18-1+deb13u2")
    with pytest.raises(HarnessError) as e:
        archive.download(pin(), tmp_path / "cache", tmp_path / "debs", tmp_path / "dl.log")
    line = e.value.one_line()
    assert "\n" not in line and e.value.exit_status == 23
    assert "trixie's archive" in line and "no longer has lttng-modules-dkms " \
        "2.13.18-1+deb13u1 (it has: 2.13.18-1+deb13u2)" in line
    # the lists were refreshed once before giving up (they may have been stale)
    calls = [c.split(" APT_CONFIG=")[0] for c in fake_apt.read_text().splitlines()]
    assert calls.count("apt-get update") == 2


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path, fake_apt, monkeypatch):
    monkeypatch.setenv("FAKE_HAS", "2.13.18-1+deb13u1")
    monkeypatch.setenv("FAKE_DEB_BYTES", "a doctored deb")
    with pytest.raises(HarnessError) as e:
        archive.download(pin(), tmp_path / "cache", tmp_path / "debs", tmp_path / "dl.log")
    want = hashlib.sha256(b"a deb").hexdigest()
    assert f"is not the pinned {want}" in e.value.one_line()


def test_host_suite_uses_the_hosts_apt(tmp_path, fake_apt, monkeypatch):
    monkeypatch.setenv("FAKE_HAS", "2.13.9-1+deb12u1")
    deb = archive.download(pin("2.13.9-1+deb12u1", suite=""), tmp_path / "cache",
                           tmp_path / "debs", tmp_path / "dl.log")
    assert deb.name == "lttng-modules-dkms_2.13.9-1+deb12u1_all.deb"
    assert fake_apt.read_text().splitlines() == \
        ["apt-get download lttng-modules-dkms=2.13.9-1+deb12u1 APT_CONFIG="]
    assert not (tmp_path / "cache" / "apt").exists()


def test_an_unknown_release_is_one_line(tmp_path):
    with pytest.raises(HarnessError) as e:
        fetch.modules_source(tmp_path, "2.13.99")
    assert "no pinned lttng-modules 2.13.99 (known: 2.13.9, 2.13.18, 2.16.0)" in e.value.one_line()


def test_every_release_is_pinned_by_a_sha256():
    for version, p in fetch.RELEASES.items():
        assert p.version.startswith(version + "-")
        # hashlib's hexdigest form, the one _verify compares with: 64 lower-case hex
        # digits, no prefix, blank or upper case (int(x, 16) took all of those)
        assert re.fullmatch(r"[0-9a-f]{64}", p.sha256), (version, p.sha256)
    pins = [p.sha256 for p in fetch.RELEASES.values()]
    assert len(set(pins)) == len(pins), "two releases share one pin (a copy-paste)"


def test_a_source_package_through_the_private_configuration(tmp_path, fake_apt, monkeypatch):
    """ltt-control's upstream tarball (apt checks the .dsc and tarballs against the
    Sources index; the tarball's sha256 is then the pin's); a missing version names
    the versions of the Sources index."""
    monkeypatch.setenv("FAKE_HAS", "2.13.9-1+deb12u1")
    src = pins.Pin("ltt-control", "2.13.9-1+deb12u1",
                      hashlib.sha256(b"a deb").hexdigest(), "bookworm")
    tarball = archive.source(src, tmp_path / "cache", tmp_path / "src", tmp_path / "dl.log")
    assert tarball.name == "ltt-control_2.13.9.orig.tar.bz2"       # not the .asc
    calls = fake_apt.read_text().splitlines()
    assert calls[-1].startswith("apt-get source --download-only ltt-control=2.13.9-1+deb12u1 "
                                f"APT_CONFIG={tmp_path}/cache/apt/bookworm/apt.conf")
    monkeypatch.setenv("FAKE_HAS", "2.13.9-1+deb12u2")
    with pytest.raises(HarnessError) as e:
        archive.source(src, tmp_path / "cache", tmp_path / "src2", tmp_path / "dl.log")
    assert "bookworm's archive (http://deb.debian.org/debian) no longer has ltt-control " \
        "2.13.9-1+deb12u1 (it has: 2.13.9-1+deb12u2)" in e.value.one_line()


# A stalled mirror: every apt-get has APT_TIMEOUT, past which one line names the
# package and the timeout, with the exit status of the step that fetched.

@pytest.mark.parametrize("suite, stall, what", [
    ("", "apt-get download", "apt-get download of lttng-modules-dkms=2.13.9-1+deb12u1"),
    ("trixie", "apt-get update",
     "apt-get update of trixie's lists for lttng-modules-dkms=2.13.9-1+deb12u1"),
    ("trixie", "apt-get download", "apt-get download of lttng-modules-dkms=2.13.9-1+deb12u1")])
def test_a_stalled_fetch_is_one_line_naming_the_package(tmp_path, fake_apt, monkeypatch,
                                                         suite, stall, what):
    monkeypatch.setenv("FAKE_HAS", "2.13.9-1+deb12u1")
    monkeypatch.setenv("FAKE_STALL", stall)
    monkeypatch.setattr(archive, "APT_TIMEOUT", 1)
    with pytest.raises(HarnessError) as e:
        archive.download(pin("2.13.9-1+deb12u1", suite=suite), tmp_path / "cache",
                         tmp_path / "debs", tmp_path / "dl.log")
    assert e.value.step == "lttng" and e.value.exit_status == 23
    assert e.value.one_line().startswith(f"ksymlab: lttng: {what} took longer than 1 s")


def test_a_stalled_source_fetch_is_the_suites_error(tmp_path, fake_apt, monkeypatch):
    """lttng-tools' source for the suite (suite/tools.py passes its step)."""
    monkeypatch.setenv("FAKE_HAS", "2.13.9-1+deb12u1")
    monkeypatch.setenv("FAKE_STALL", "apt-get source")
    monkeypatch.setattr(archive, "APT_TIMEOUT", 1)
    src = pins.Pin("ltt-control", "2.13.9-1+deb12u1",
                      hashlib.sha256(b"a deb").hexdigest(), "bookworm")
    with pytest.raises(HarnessError) as e:
        archive.source(src, tmp_path / "cache", tmp_path / "src", tmp_path / "dl.log",
                       step="suite")
    assert e.value.step == "suite" and e.value.exit_status == 24
    assert "apt-get source of ltt-control=2.13.9-1+deb12u1 took longer than 1 s" in \
        e.value.message


def test_a_stalled_download_of_the_host_packages_names_them(tmp_path, fake_apt, monkeypatch):
    monkeypatch.setenv("FAKE_STALL", "apt-get download")
    monkeypatch.setattr(archive, "APT_TIMEOUT", 1)
    with pytest.raises(HarnessError) as e:
        fetch._host_packages(("lttng-tools", "liburcu8"))(tmp_path, tmp_path / "dl.log")
    assert e.value.step == "lttng" and e.value.message.startswith(
        "apt-get download of lttng-tools, liburcu8 took longer than 1 s")


def test_every_fetch_has_a_timeout_of_minutes():
    assert 5 * 60 <= archive.APT_TIMEOUT <= 30 * 60


# The unpacked packages are an entry of the build cache (fetch._unpacked).

def _deb(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: ksymlab-test\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\n"
        "Description: test\n")
    (pkg / "usr" / "share").mkdir(parents=True)
    (pkg / "usr" / "share" / "x").write_text("x\n")
    subprocess.run(["dpkg-deb", "--build", str(pkg), str(tmp_path / "t.deb")], check=True,
                   capture_output=True)
    return tmp_path / "t.deb"


def test_unpacked_packages_are_a_cache_entry_held_while_used(tmp_path):
    deb, c, calls = _deb(tmp_path), tmp_path / "cache", []

    def fetch_debs(debs_dir, log):
        calls.append(debs_dir)
        shutil.copy2(deb, debs_dir / deb.name)
        return [debs_dir / deb.name]

    with cachemod.session():
        root = fetch._unpacked(c, "userspace", "k", fetch_debs)
        assert (root / "usr" / "share" / "x").read_text() == "x\n"
        assert fetch._unpacked(c, "userspace", "k", fetch_debs) == root and len(calls) == 1
        (e,) = cachemod.entries(c)
        assert (e.kind, e.key, e.complete, e.held) == ("lttng/debs", "userspace-k", True, True)
        assert cachemod.read_info(c, e.kind, e.key)["size"] > 0
        assert cachemod.clear(c)[0] == [] and root.is_dir()
    assert [x.key for x in cachemod.clear(c)[0]] == ["userspace-k"] and not root.exists()


def test_apt_config_command_prints_the_private_configuration(tmp_path, monkeypatch):
    """`python3 -m harness.prepare.archive apt-config forky` (what fetch-distro-kernel.sh
    --line 7.2 reads): the lists are fetched once, with the private APT_CONFIG it prints."""
    log = install_stand_in(FAKE_APT, tmp_path, monkeypatch)
    env = dict(os.environ, KSYMLAB_CACHE=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "harness.prepare.archive", "apt-config", "forky"]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=paths.REPO)
    conf = tmp_path / "cache" / "apt" / "forky" / "apt.conf"
    assert (p.returncode, p.stdout) == (0, f"{conf}\n"), p.stderr
    assert f'Dir::State "{conf.parent}/state";' in conf.read_text()
    assert log.read_text().splitlines() == [f"apt-get update APT_CONFIG={conf}"]
    for bad in ([], ["apt-config"], ["apt-config", "../etc"], ["update", "forky"]):
        p = subprocess.run(argv[:3] + bad, capture_output=True, text=True, env=env, cwd=paths.REPO)
        assert (p.returncode, p.stdout) == (2, ""), bad
        assert p.stderr.count("\n") == 1 and "usage:" in p.stderr


def test_apt_config_command_one_line_when_update_fails(tmp_path, monkeypatch):
    install_stand_in("#!/bin/sh\necho 'E: no network' >&2\nexit 100\n", tmp_path, monkeypatch)
    env = dict(os.environ, KSYMLAB_CACHE=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-m", "harness.prepare.archive", "apt-config", "forky"],
                       capture_output=True, text=True, env=env, cwd=paths.REPO)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert p.stderr.splitlines()[-1].startswith("archive: ") and "update" in p.stderr
