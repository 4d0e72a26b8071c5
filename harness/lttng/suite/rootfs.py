"""What a suite guest holds besides the LTTng modules: the lttng-tools build tree
(its programs and tests/) under /lttng-tools, and the tools the test scripts call,
taken from this Debian 12 host's own packages (the programs were built against
them), with the closure of the shared libraries every ELF file links.

The scripts call bash, GNU coreutils, grep, sed, awk, procps (pgrep), findutils,
`which`, `getconf` and `babeltrace` (babeltrace2 here, whose command line takes
the options they use); kmod's modprobe for the lttng-test module. Some call
helpers in other languages: python3 (test_callstack's parse-callstack.py, which
runs addr2line; test_select_poll_epoll's validator, with babeltrace 1's python
bindings) and perl (babelstats.pl, in the filtering and exclusion tests)."""

import os
import subprocess
from pathlib import Path

from ...errors import HarnessError
from ..supply import guestroot

BIN = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/")
PYLIB = ("/usr/lib/python3.11/", "/usr/lib/python3/dist-packages/")
# Host packages that go into the guest: {package: the path prefixes kept}.
PACKAGES = {
    **{p: BIN for p in ("bash", "coreutils", "grep", "sed", "mawk", "procps", "findutils",
                        "debianutils", "libc-bin", "kmod", "util-linux", "babeltrace2",
                        # metadata/test_kernel: hostname; the notifier discarded-count
                        # test's other user: useradd, userdel (then util-linux's su)
                        "hostname", "passwd")},
    # su's PAM: pam_rootok lets root in, pam_permit the rest (etc/pam.d: runner.py)
    "libpam-modules": ("/lib/x86_64-linux-gnu/security/pam_rootok.so",
                       "/lib/x86_64-linux-gnu/security/pam_permit.so"),
    "login": ("/etc/login.defs",),
    # addr2line only (parse-callstack.py): the rest of binutils is 20 MB
    "binutils": ("/usr/bin/addr2line",),
    "binutils-x86-64-linux-gnu": ("/usr/bin/x86_64-linux-gnu-addr2line",),
    "libbabeltrace2-0": ("/usr/lib/x86_64-linux-gnu/babeltrace2/plugins/",),
    "perl-base": BIN + ("/usr/lib/x86_64-linux-gnu/perl-base/",),
    "python3-minimal": BIN,
    "python3.11-minimal": BIN,
    "libpython3.11-minimal": PYLIB,
    "libpython3.11-stdlib": PYLIB,
    "python3-babeltrace": PYLIB,
    # lttng-ust (tools.py builds with it): the test apps link liblttng-ust, the
    # daemons liblttng-ust-ctl; liblttng-ust dlopens its -tracepoint and helper
    # libraries and scripts preload -fork, -dl...: whole packages, not the closure
    **{p: ("/usr/lib/x86_64-linux-gnu/",)
       for p in ("liblttng-ust1", "liblttng-ust-ctl5", "liblttng-ust-common1")},
}
# The tree's files the tests use besides tests/: its programs and schemas.
TREE_FILES = ("src/bin/lttng/lttng", "src/bin/lttng-sessiond/lttng-sessiond",
              "src/bin/lttng-consumerd/lttng-consumerd", "src/bin/lttng-relayd/lttng-relayd",
              "src/common/mi-lttng-4.1.xsd", "src/common/config/session.xsd")
HOST_LIBDIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")


def package_files(package, keep=BIN):
    """{guest path: host path} of the regular files of an installed package under the
    prefixes `keep` (compiled bytecode left out: python compiles what it imports)."""
    p = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    if p.returncode != 0:
        raise HarnessError("suite", f"host package {package} is not installed "
                           f"(harness/debian-packages.txt): {p.stderr.strip()[:120]}")
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith(keep) and "/__pycache__/" not in line and os.path.isfile(line):
            out[_merged(line)] = Path(line).resolve()
            # scripts name /bin/true too: both paths (packed once, the other a link)
            out[line] = Path(line).resolve()
    return out


def _merged(path):
    """Debian 12 merges /bin into /usr/bin: a program of /bin is in /usr/bin too."""
    for a, b in (("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/")):
        if path.startswith(a):
            return b + path[len(a):]
    return path


def tree_files(tree):
    """{guest path: host path}: /lttng-tools/tests/** and the tree's programs."""
    tree = Path(tree)
    out = {}
    for f in sorted((tree / "tests").rglob("*")):
        # tests/unit: host-side unit tests, 27 MB the kernel scripts never run
        if f.is_file() and not f.is_symlink() and "unit" not in f.relative_to(tree).parts[1:2]:
            out["/lttng-tools/" + str(f.relative_to(tree))] = f
    for rel in TREE_FILES:
        f = tree / rel
        if not f.is_file():
            raise HarnessError("suite", f"{f}: missing from the lttng-tools build")
        out["/lttng-tools/" + rel] = f
    out.update(libtool_places(out))
    return out


def libtool_places(files):
    """Where a libtool build keeps a program that links a library of the tree: in
    its .libs/ (a wrapper script above it). Built with -no-install (tools.py), the
    program is the file above; a script that runs .libs/<name>
    (test_userspace_probe: userspace-probe-elf-binary) finds it there too."""
    out = {}
    for guest, host in files.items():
        d, name = guest.rsplit("/", 1)
        libs = f"{d}/.libs/"
        if is_elf(host) and not name.endswith((".so", ".o")) and ".so." not in name \
                and any(g.startswith(libs) for g in files) and libs + name not in files:
            out[libs + name] = host
    return out


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def libraries(files, libdirs=HOST_LIBDIRS):
    """{guest path: host path} of every shared library the ELF files of `files` need,
    found in `libdirs` (the host's, then the tree's), and the dynamic loader."""
    out = {}
    todo = [h for h in files.values() if is_elf(h)]
    seen = set()
    while todo:
        elf = todo.pop()
        for lib in guestroot.needed(elf):
            if lib in seen:
                continue
            seen.add(lib)
            host = next((Path(d) / lib for d in libdirs if (Path(d) / lib).exists()), None)
            if host is None:
                raise HarnessError("suite", f"{lib} (needed by {elf}) is neither on this "
                                   "host nor in the lttng-tools build")
            out[f"/lib/x86_64-linux-gnu/{lib}"] = host.resolve()
            todo.append(host.resolve())
    out["/" + guestroot.INTERP] = Path("/" + guestroot.INTERP).resolve()
    return out


def files(tree):
    """Every file of the suite's part of the guest."""
    out = tree_files(tree)
    for pkg, keep in PACKAGES.items():
        out.update(package_files(pkg, keep))
    # the scripts call `babeltrace`: babeltrace2 takes the options they use
    out["/usr/local/bin/babeltrace"] = out["/usr/bin/babeltrace2"]
    # Debian's alternatives (links under /etc/alternatives, not in dpkg -L)
    out["/usr/bin/awk"] = out["/usr/bin/mawk"]
    out["/usr/bin/which"] = out["/usr/bin/which.debianutils"]
    out["/usr/share/xml/lttng/session.xsd"] = Path(tree) / "src/common/config/session.xsd"
    # the tree's own shared libraries (liblttng-ctl, a test's libfoo) live in .libs/
    own = sorted({str(p.parent) for p in Path(tree).rglob("*.so*") if p.parent.name == ".libs"})
    out.update(libraries(out, HOST_LIBDIRS + tuple(own)))
    return out
