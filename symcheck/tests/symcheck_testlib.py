"""Shared helpers for symcheck's tests (standard library only).

Distro-kernel fixtures come from fetch-distro-kernel.sh (Debian's linux-image-*-amd64 and
linux-headers packages, downloaded with apt-get download and extracted with dpkg -x)."""
import os
import re
import shutil
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SYMCHECK_DIR = os.path.dirname(HERE)
BIN = os.environ.get("SYMCHECK_BIN") or os.path.join(SYMCHECK_DIR, "build", "symcheck")
FIX = os.path.join(SYMCHECK_DIR, "build", "fixtures")
CACHE = os.environ.get("KSYMLAB_CACHE", "/var/cache/ksymlab")
DISTRO = os.path.join(CACHE, "distro")


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, errors="replace", **kw)


def symcheck(*args):
    return run([BIN] + [str(a) for a in args])


def fetched_line(line):
    """(cache dir, release) of fetch-distro-kernel.sh --line LINE's kernel, fetched when
    absent; a failed fetch fails the test that needs it, with the script's last output."""
    import pytest
    dest = os.path.join(CACHE, f"distro-{line}")
    if not os.path.exists(os.path.join(dest, ".complete")):
        r = run(["bash", os.path.join(SYMCHECK_DIR, "fetch-distro-kernel.sh"), "--line", line])
        if r.returncode != 0:
            pytest.fail(f"cannot fetch the {line} distro kernel: {r.stdout[-500:]}{r.stderr[-500:]}",
                        pytrace=False)
    with open(os.path.join(dest, "VERSION")) as f:
        return dest, f.read().strip()


class Distro:
    def __init__(self, root):
        self.root = root
        with open(os.path.join(root, "VERSION")) as f:
            self.version = f.read().strip()
        self.build = os.path.join(root, "build")
        self.symvers = os.path.join(self.build, "Module.symvers")
        self.vmlinux = os.path.join(self.build, "vmlinux")
        self.modules_dir = os.path.join(root, "modules")
        self.pkg_moddir = os.path.join(root, "root", "lib", "modules", self.version)
        mods = []
        for dp, _, files in os.walk(self.modules_dir):
            for fn in files:
                if fn.endswith(".ko"):
                    mods.append(os.path.join(dp, fn))
        self.modules = sorted(mods)

    def sample(self, n=60):
        """A deterministic, evenly spread sample of n modules."""
        step = max(1, len(self.modules) // n)
        return self.modules[::step][:n]

    def fake_tree(self, base, replace=None):
        """A fake /lib/modules/<ver>/ tree under base: hard links (or copies) of every module,
        with replace = {relative path: file} swapped in."""
        moddir = os.path.join(base, "lib", "modules", self.version)
        kdir = os.path.join(moddir, "kernel")
        for m in self.modules:
            rel = os.path.relpath(m, self.modules_dir)
            dst = os.path.join(kdir, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            src = (replace or {}).get(rel, m)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copyfile(src, dst)
        for extra in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            p = os.path.join(self.pkg_moddir, extra)
            if os.path.exists(p):
                shutil.copyfile(p, os.path.join(moddir, extra))
        return moddir


def tool(name):
    for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return name


def elf_sections(path):
    """{name: (offset, size, addr)} of an ELF64 LE file, parsed independently of symcheck."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        hdrs.append((name, off, size, addr))
    stroff = hdrs[shstrndx][1]
    out = {}
    for name, off, size, addr in hdrs:
        end = data.index(b"\0", stroff + name)
        out[data[stroff + name:end].decode()] = (off, size, addr)
    return out


def parse_depmod(stderr):
    """Set of (module basename, kind, symbol) from depmod -e warnings."""
    out = set()
    for line in stderr.splitlines():
        if "needs unknown symbol" in line:
            path, sym = line.split("WARNING: ", 1)[1].split(" needs unknown symbol ")
            out.add((os.path.basename(path), "unknown-symbol", sym.strip()))
        elif "disagrees about version of symbol" in line:
            path, sym = line.split("WARNING: ", 1)[1].split(" disagrees about version of symbol ")
            out.add((os.path.basename(path), "crc-mismatch", sym.strip()))
    return out


def nm_undefined(path):
    """{name: weak} of a plain .ko's undefined global/weak symbols, from binutils nm."""
    r = run(["nm", "-u", "-P", path])
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        name, typ = line.split()[:2]
        if name != "_GLOBAL_OFFSET_TABLE_":
            out[name] = typ in ("w", "v")
    return out


def modinfo_field(path, field):
    """modinfo -F FIELD (kmod) of a module file: a list of values, in order."""
    r = run([tool("modinfo"), "-F", field, path])
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def dump_modversions(path):
    """[(name, crc)] from kmod's modprobe --dump-modversions (reads .ko.xz/.ko.zst too)."""
    r = run([tool("modprobe"), "--dump-modversions", path])
    assert r.returncode == 0, r.stderr
    out = []
    for line in r.stdout.splitlines():
        crc, name = line.split("\t")
        out.append((name, int(crc, 16) & 0xffffffff))
    return out


def kmod_features():
    """The +FEATURE words of `kmod --version` (ZSTD, XZ, ZLIB when kmod was built with them)."""
    r = run([tool("kmod"), "--version"])
    return {w[1:] for w in r.stdout.split() if w.startswith("+")}


COMPRESSORS = {"xz": ["xz", "-c"], "zst": ["zstd", "-q", "-c"], "gz": ["gzip", "-n", "-c"]}


def compress(src, dst, ext):
    with open(dst, "wb") as f:
        subprocess.check_call(COMPRESSORS[ext] + [src], stdout=f)
    return dst


def read_symvers_text(path):
    """{symbol: (crc, module, type, namespace)} parsed here from the Module.symvers text
    (LF or CRLF), independently of symcheck."""
    rows = {}
    with open(path, newline="") as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r")
            if not line:
                continue
            parts = line.split("\t")
            rows[parts[1]] = (int(parts[0], 16), parts[2], parts[3], parts[4] if len(parts) > 4 else "")
    return rows


def objdump_listing(path):
    """binutils' objdump -d of `path` (independent of symcheck): ({(function, offset):
    mnemonic}, the function names labelled more than once)."""
    r = run(["objdump", "-d", "--no-show-raw-insn", path])
    assert r.returncode == 0, r.stderr
    out, seen, twice, fn, base = {}, set(), set(), None, 0
    for line in r.stdout.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            base, fn = int(m.group(1), 16), m.group(2)
            (twice if fn in seen else seen).add(fn)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
        if m and fn:
            out[(fn, int(m.group(1), 16) - base)] = m.group(2)
    return out, twice
