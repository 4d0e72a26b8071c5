"""fetch-distro-kernel.sh against fake apt-cache, apt-get and dpkg on PATH (nothing is
downloaded): the script must survive an apt-cache that writes more than its reader
wants, say why it stopped when a command fails, and lay the cache out as documented.

Before issue 22 the script ended with status 141 and no message on a new machine: under
`set -o pipefail`, `apt-cache show ... | awk '/^Depends:/ {print $2; exit}'` closed the
pipe while apt-cache still wrote, and apt-cache's SIGPIPE failed the pipeline."""
import os
import re
import stat
import subprocess
import sys

from symcheck_testlib import SYMCHECK_DIR

SCRIPT = os.path.join(SYMCHECK_DIR, "fetch-distro-kernel.sh")
REPO = os.path.dirname(SYMCHECK_DIR)
KREL = "6.1.0-999-amd64"
NAMES = f"linux-image-{KREL} linux-headers-{KREL} linux-headers-6.1.0-999-common"

# apt-cache: the first stanza's Depends names the image (after other packages), then far
# more than a pipe holds (64 KiB), then a second stanza whose Depends must not be taken.
APT_CACHE = r"""#!/bin/sh
case "$1" in
policy) printf 'linux-image-amd64:\n  Installed: (none)\n  Candidate: 6.1.999-1\n'
        printf '  Version table:\n     6.1.999-1 500\n' ;;
show)   printf 'Package: linux-image-amd64\nVersion: 6.1.999-1\n'
        printf 'Depends: linux-base (>= 4.3~) | other-base, linux-image-6.1.0-999-amd64 (= 6.1.999-1)\n'
        yes 'Description-md5: 0123456789abcdef0123456789abcdef' | head -n 40000
        printf '\nPackage: linux-image-amd64\nVersion: 6.1.999-1\nDepends: linux-image-6.1.0-1-amd64\n' ;;
*)      exit 2 ;;
esac
"""

# apt-get download PKG: an empty PKG_VER_ARCH.deb in the current directory.
APT_GET = r"""#!/bin/sh
[ "$1" = download ] || exit 0
echo "$2" >>"$FAKE_LOG"
: >"$2_6.1.999-1_amd64.deb"
"""

# dpkg -x DEB DIR: the files each package holds, made up.
DPKG = r"""#!/bin/sh
[ "$1" = -x ] || exit 2
deb=$(basename "$2"); root=$3; k=6.1.0-999-amd64
case "$deb" in
linux-image-${k}_*)
    mkdir -p "$root/boot" "$root/lib/modules/$k/kernel/fs" "$root/lib/modules/$k/kernel/net"
    printf 'VMLINUX' >"$root/boot/vmlinuz-$k"
    printf 'plain-ko' >"$root/lib/modules/$k/kernel/fs/a.ko"
    printf 'xz-ko' | xz -c >"$root/lib/modules/$k/kernel/net/b.ko.xz" ;;
linux-headers-${k}_*)
    mkdir -p "$root/usr/src/linux-headers-$k"
    printf '0x12345678\ttask_prio\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' >"$root/usr/src/linux-headers-$k/Module.symvers" ;;
linux-headers-6.1.0-999-common_*)
    mkdir -p "$root/usr/src/linux-headers-6.1.0-999-common/scripts"
    printf '#!/bin/sh\nprintf "ELF:"; cat "$1"\n' >"$root/usr/src/linux-headers-6.1.0-999-common/scripts/extract-vmlinux" ;;
*) exit 3 ;;
esac
"""

REFUSE = "#!/bin/sh\necho \"fake $0 must not be called\" >&2\nexit 97\n"


def fakes(tmp_path, apt_cache=APT_CACHE, apt_get=APT_GET, dpkg=DPKG):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, text in (("apt-cache", apt_cache), ("apt-get", apt_get), ("dpkg", dpkg)):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(stat.S_IRWXU)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}",
               KSYMLAB_CACHE=str(tmp_path / "cache"), FAKE_LOG=str(tmp_path / "downloads"),
               LINUX_SOURCE_TARBALL=str(tmp_path / "absent.tar.xz"))
    return env


def fetch(env, *args):
    return subprocess.run(["bash", SCRIPT, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_resolve_reads_all_of_apt_cache(tmp_path):
    env = fakes(tmp_path, apt_get=REFUSE, dpkg=REFUSE)
    r = fetch(env, "--resolve")
    assert (r.returncode, r.stdout, r.stderr) == (0, NAMES + "\n", "")


def test_fetch_lays_out_the_cache(tmp_path):
    env = fakes(tmp_path)
    r = fetch(env)
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "cache" / "distro"
    assert (dest / ".complete").exists()
    assert (dest / "VERSION").read_text() == KREL + "\n"
    assert (dest / "build" / "vmlinux").read_text() == "ELF:VMLINUX"
    assert (dest / "build" / "Module.symvers").read_text().startswith("0x12345678\ttask_prio\t")
    assert (dest / "modules" / "fs" / "a.ko").read_text() == "plain-ko"
    assert (dest / "modules" / "net" / "b.ko").read_text() == "xz-ko"
    assert sorted((tmp_path / "downloads").read_text().split()) == sorted(NAMES.split())
    # idempotent: a second run downloads nothing
    again = fetch(env)
    assert again.returncode == 0 and "already present" in again.stdout
    assert len((tmp_path / "downloads").read_text().split()) == 3


def test_a_failing_command_is_named(tmp_path):
    broken = "#!/bin/sh\n[ \"$1\" = policy ] && exit 3\nexit 0\n"
    r = fetch(fakes(tmp_path, apt_cache=broken, apt_get=REFUSE, dpkg=REFUSE), "--resolve")
    assert r.returncode != 0
    assert re.search(r"^fetch-distro-kernel: line \d+: command failed \(status 3\)$",
                     r.stderr, re.M), r.stderr


def test_no_early_closing_reader_under_pipefail():
    """The pattern fixed here, nowhere else in the repository: in a file that sets pipefail,
    no pipe into a reader that may stop before its input ends (head, awk ... exit,
    grep -q, grep -m, sed ...q)."""
    early = re.compile(r"(?<!\|)\|(?!\|)\s*(head\b|grep\s+(-\w+\s+)*-\w*[qm]|awk\b.*\bexit\b|sed\b.*\bq\b)")
    offenders = []
    for dirpath, dirnames, files in os.walk(REPO):
        dirnames[:] = [d for d in dirnames if d not in (".git", "build", "__pycache__", "runs",
                                                       ".pytest_cache")]
        for fn in files:
            path = os.path.join(dirpath, fn)
            if fn.endswith((".patch", ".png", ".o", ".ko")) or os.path.islink(path):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            if "pipefail" not in text or fn == "test_fetch_script.py":
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if not line.lstrip().startswith("#") and early.search(line):
                    offenders.append(f"{os.path.relpath(path, REPO)}:{n}: {line.strip()}")
    assert offenders == []


def test_a_failed_fetch_fails_the_distro_tests(tmp_path):
    """The distro fixture of conftest.py, with an empty cache and an apt-cache that fails:
    the test that needs the fixture errors with the script's message; it used to be
    skipped, and a skip with no reason on the root conftest's list fails as well."""
    broken = "#!/bin/sh\n[ \"$1\" = policy ] && exit 3\nexit 0\n"
    env = fakes(tmp_path, apt_cache=broken, apt_get=REFUSE, dpkg=REFUSE)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                        "symcheck/tests/test_distro.py::test_sample_size"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "cannot fetch the Debian distro kernel into " + str(tmp_path / "cache" / "distro") in out
    assert "command failed (status 3)" in out, out
    assert "1 error" in out and "skipped" not in out, out


# The 6.12 line: linux-image-6.12-amd64 depends on linux-image-6.12.N+deb12-amd64 (Debian 12's
# 6.12 kernel, from bookworm-security); the fetch goes to distro-6.12 and keeps the .ko.xz.
KREL612 = "6.12.999+deb12-amd64"
NAMES612 = f"linux-image-{KREL612} linux-headers-{KREL612} linux-headers-6.12.999+deb12-common"
APT_CACHE_612 = r"""#!/bin/sh
case "$1 $2" in
"policy linux-image-6.12-amd64") printf 'linux-image-6.12-amd64:\n  Candidate: 6.12.999-1~deb12u1\n' ;;
"show linux-image-6.12-amd64="*)
    printf 'Package: linux-image-6.12-amd64\nDepends: linux-image-6.12.999+deb12-amd64 (= 6.12.999-1~deb12u1)\n' ;;
*) echo "unexpected apt-cache $*" >&2; exit 2 ;;
esac
"""
DPKG_612 = r"""#!/bin/sh
[ "$1" = -x ] || exit 2
deb=$(basename "$2"); root=$3; k=6.12.999+deb12-amd64
case "$deb" in
linux-image-${k}_*)
    mkdir -p "$root/boot" "$root/lib/modules/$k/kernel/net"
    printf 'VMLINUX' >"$root/boot/vmlinuz-$k"
    printf 'xz-ko' | xz -c >"$root/lib/modules/$k/kernel/net/b.ko.xz" ;;
linux-headers-${k}_*)
    mkdir -p "$root/usr/src/linux-headers-$k"
    printf '0x12345678\ttask_prio\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' >"$root/usr/src/linux-headers-$k/Module.symvers" ;;
linux-headers-6.12.999+deb12-common_*)
    mkdir -p "$root/usr/src/linux-headers-6.12.999+deb12-common/scripts"
    printf '#!/bin/sh\nprintf "ELF:"; cat "$1"\n' >"$root/usr/src/linux-headers-6.12.999+deb12-common/scripts/extract-vmlinux" ;;
*) exit 3 ;;
esac
"""


def test_line_612_resolves_and_lays_out_its_own_cache(tmp_path):
    env = fakes(tmp_path, apt_cache=APT_CACHE_612, dpkg=DPKG_612)
    r = fetch(env, "--line", "6.12", "--resolve")
    assert (r.returncode, r.stdout, r.stderr) == (0, NAMES612 + "\n", "")
    r = fetch(env, "--line", "6.12")
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "cache" / "distro-6.12"
    assert (dest / "VERSION").read_text() == KREL612 + "\n"
    assert (dest / "build" / "vmlinux").read_text() == "ELF:VMLINUX"
    assert (dest / "build" / "Module.symvers").read_text().startswith("0x12345678\ttask_prio\t")
    ko = dest / "root" / "lib" / "modules" / KREL612 / "kernel" / "net" / "b.ko.xz"
    assert ko.read_bytes().startswith(b"\xfd7zXZ\x00")   # kept compressed, as installed
    assert list((dest / "modules").rglob("*.ko")) == []
    assert not (tmp_path / "cache" / "distro").exists()   # the 6.1 fixtures are not touched


def test_unknown_line_is_refused(tmp_path):
    r = fetch(fakes(tmp_path, apt_get=REFUSE, dpkg=REFUSE), "--line", "5.10", "--resolve")
    assert r.returncode == 1 and "unknown --line 5.10" in r.stderr


# The 7.2 line: forky's linux-image-amd64 depends on linux-image-7.2.N+deb14-amd64, an empty
# package whose files come in linux-binary-K, linux-modules-K and linux-base-K; every apt
# command reads the harness's private forky configuration (APT_CONFIG), never the host's.
KREL72 = "7.2.999+deb14-amd64"
NAMES72 = (f"linux-binary-{KREL72} linux-modules-{KREL72} linux-base-{KREL72} "
           f"linux-headers-{KREL72} linux-headers-7.2.999+deb14-common")
APT_CACHE_72 = r"""#!/bin/sh
echo "apt-cache $1 APT_CONFIG=$APT_CONFIG" >>"$FAKE_LOG"
case "$1 $2" in
"policy linux-image-amd64") printf 'linux-image-amd64:\n  Candidate: 7.2.999-1\n' ;;
"show linux-image-amd64="*)
    printf 'Package: linux-image-amd64\nDepends: linux-base-amd64 (= 7.2.999-1), linux-image-7.2.999+deb14-amd64 (= 7.2.999-1)\n' ;;
"show linux-image-amd64") ;;
*) echo "unexpected apt-cache $*" >&2; exit 2 ;;
esac
"""
APT_GET_72 = r"""#!/bin/sh
echo "apt-get $1 $2 APT_CONFIG=$APT_CONFIG" >>"$FAKE_LOG"
[ "$1" = download ] || exit 0
: >"$2_7.2.999-1_amd64.deb"
"""
DPKG_72 = r"""#!/bin/sh
[ "$1" = -x ] || exit 2
deb=$(basename "$2"); root=$3; k=7.2.999+deb14-amd64; m=$root/usr/lib/modules/$k
case "$deb" in
linux-binary-${k}_*) mkdir -p "$m"; printf 'VMLINUX' >"$m/vmlinuz" ;;
linux-modules-${k}_*) mkdir -p "$m/kernel/net"; printf 'xz-ko' | xz -c >"$m/kernel/net/b.ko.xz" ;;
linux-base-${k}_*) mkdir -p "$m"; : >"$m/modules.order" ;;
linux-headers-${k}_*)
    mkdir -p "$root/usr/src/linux-headers-$k"
    printf '0x00000000\ttask_prio\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' >"$root/usr/src/linux-headers-$k/Module.symvers" ;;
linux-headers-7.2.999+deb14-common_*)
    mkdir -p "$root/usr/src/linux-headers-7.2.999+deb14-common/scripts"
    printf '#!/bin/sh\nprintf "ELF:"; cat "$1"\n' >"$root/usr/src/linux-headers-7.2.999+deb14-common/scripts/extract-vmlinux" ;;
*) exit 3 ;;
esac
"""


def test_line_72_reads_forky_privately_and_lays_out_its_own_cache(tmp_path):
    env = fakes(tmp_path, apt_cache=APT_CACHE_72, apt_get=APT_GET_72, dpkg=DPKG_72)
    r = fetch(env, "--line", "7.2", "--resolve")
    assert (r.returncode, r.stdout) == (0, NAMES72 + "\n"), r.stderr
    assert "apt-get update of forky (private configuration" in r.stderr   # lists fetched once
    r = fetch(env, "--line", "7.2")
    assert r.returncode == 0, r.stderr
    dest = tmp_path / "cache" / "distro-7.2"
    assert (dest / "VERSION").read_text() == KREL72 + "\n"
    assert (dest / "build" / "vmlinux").read_text() == "ELF:VMLINUX"
    assert (dest / "build" / "Module.symvers").read_text().startswith("0x00000000\ttask_prio\t")
    ko = dest / "root" / "usr" / "lib" / "modules" / KREL72 / "kernel" / "net" / "b.ko.xz"
    assert ko.read_bytes().startswith(b"\xfd7zXZ\x00")   # kept compressed, as installed
    log = (tmp_path / "downloads").read_text().splitlines()
    private = f"APT_CONFIG={tmp_path}/cache/apt/forky/apt.conf"
    assert log and all(line.endswith(private) for line in log), log
    downloads = [line.split()[2] for line in log if line.startswith("apt-get download")]
    assert downloads == NAMES72.split()
    assert (tmp_path / "cache" / "apt" / "forky" / "etc" / "sources.list").read_text().count(
        " forky main") == 2
    assert not (tmp_path / "cache" / "distro").exists()
