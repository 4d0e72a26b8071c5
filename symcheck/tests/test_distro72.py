"""Debian forky's own 7.2 kernel (fetch-distro-kernel.sh --line 7.2: linux-binary, linux-modules
and the headers of 7.2.12+deb14-amd64): symcheck on a real 7.2 module tree as installed (.ko.xz,
no CONFIG_MODVERSIONS, 332 exports in "module:" namespaces, most for kvm-amd and kvm-intel).
The oracles are depmod on the same tree, the ELF files decoded with struct (elf72.py) and the
7.2 loader's rule for "module:" namespaces, applied here to the names in the files."""
import json
import lzma
import os
import shutil
import subprocess

import pytest

from elf72 import Elf, decode_vmlinux, loader_allows, this_module_name
from symcheck_testlib import fetched_line, parse_depmod, run, symcheck, tool

NAME_AT = 24        # struct module's name field in .gnu.linkonce.this_module (elf72.py)


@pytest.fixture(scope="module")
def distro72():
    """(release, build dir, module dir) of the fetched kernel, fetched when absent."""
    dest, ver = fetched_line("7.2")
    return ver, os.path.join(dest, "build"), os.path.join(dest, "root", "usr", "lib", "modules", ver)


def js(*args, rc=0):
    r = symcheck("--json", *args)
    assert r.returncode == rc, (r.returncode, r.stdout[-300:], r.stderr)
    return json.loads(r.stdout)


def symvers_rows(build):
    """{symbol: (module, class, namespace)} of Module.symvers, read here."""
    rows = {}
    for line in open(os.path.join(build, "Module.symvers")):
        _crc, sym, mod, typ, ns = line.rstrip("\n").split("\t")
        rows[sym] = (mod, typ, ns)
    return rows


@pytest.mark.e2e
def test_tree_clean_like_depmod(distro72, tmp_path):
    """depmod accepts every module of the tree against Module.symvers; so must symcheck."""
    ver, build, mods = distro72
    moddir = os.path.join(tmp_path, "lib", "modules", ver)
    os.makedirs(moddir)
    subprocess.check_call(["cp", "-al", os.path.join(mods, "kernel"), os.path.join(moddir, "kernel")])
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        shutil.copyfile(os.path.join(mods, f), os.path.join(moddir, f))
    symvers = os.path.join(build, "Module.symvers")
    d = run([tool("depmod"), "-b", str(tmp_path), "-e", "-E", symvers, ver])
    assert d.returncode == 0 and parse_depmod(d.stderr) == set(), d.stderr[-2000:]
    n = sum(f.endswith(".ko.xz") for _d, _s, files in os.walk(os.path.join(mods, "kernel"))
            for f in files)
    assert n > 4000
    r = symcheck("check", "-q", "--tree", moddir, symvers)
    assert (r.returncode, r.stdout) == (0, f"{n} module(s) checked, 0 finding(s)\n"), r.stderr


@pytest.mark.e2e
def test_exports_from_flagstab_agree_with_symvers(distro72):
    """Every vmlinux export: class from __kflagstab and namespace as decoded here, the same
    set as Module.symvers' vmlinux lines; no CRC anywhere (no CONFIG_MODVERSIONS)."""
    _ver, build, _mods = distro72
    dec, _flags = decode_vmlinux(os.path.join(build, "vmlinux"))
    rows = symvers_rows(build)
    assert {s: (t, ns) for s, (m, t, ns) in rows.items() if m == "vmlinux"} == \
        {s: (c, ns) for s, (c, ns, _crc) in dec.items()}
    assert sum(ns.startswith("module:") for _c, ns, _crc in dec.values()) > 0
    d = js("exports", os.path.join(build, "vmlinux"))
    got = {x["symbol"]: (x["class"], x["namespace"]) for x in d["exports"]}
    assert got == {s: (c, ns) for s, (c, ns, _crc) in dec.items()}
    assert d["vmlinux"]["layout"] == "flagstab"
    both = js("exports", build)
    assert both["compared"] is True and both["disagreements"] == []


def renamed(src, dst, old, new):
    """`src` (.ko.xz) decompressed to `dst` with struct module's name `old` made `new`
    (same length): the module the loader would see under another name."""
    data = bytearray(lzma.open(src).read())
    with open(dst, "wb") as f:
        f.write(data)
    _i, off, _size, *_r = Elf(dst).sec[".gnu.linkonce.this_module"]
    field = off + NAME_AT
    assert data[field:field + len(old) + 1] == old.encode() + b"\0"
    data[field:field + len(new)] = new.encode()
    with open(dst, "wb") as f:
        f.write(data)
    return dst


@pytest.mark.e2e
def test_kvm_amd_under_another_name_is_refused_like_the_loader(distro72, tmp_path):
    """kvm-amd.ko uses kvm's "module:kvm-amd,kvm-intel" exports. Under its own name no finding;
    renamed kvm_xmd (struct module only, as the loader reads it), exactly the symbols whose
    namespace does not list the new name are module-not-allowed."""
    _ver, build, mods = distro72
    src = os.path.join(mods, "kernel", "arch", "x86", "kvm", "kvm-amd.ko.xz")
    symvers = os.path.join(build, "Module.symvers")
    ns = {s: n for s, (_m, _t, n) in symvers_rows(build).items()}
    own = renamed(src, os.path.join(tmp_path, "kvm-amd.ko"), "kvm_amd", "kvm_amd")
    assert this_module_name(own) == "kvm_amd"
    used = {n for n, shndx, _v in Elf(own).syms if shndx == 0 and n}
    scoped = {u for u in used if ns.get(u, "").startswith("module:")}
    want = sorted(u for u in scoped if not loader_allows(ns[u], "kvm_xmd"))
    assert len(want) > 100 and all(loader_allows(ns[u], "kvm_amd") for u in scoped)
    assert js("check", own, symvers)["modules"][0]["findings"] == []
    other = renamed(src, os.path.join(tmp_path, "kvm-xmd.ko"), "kvm_amd", "kvm_xmd")
    findings = js("check", other, symvers, rc=1)["modules"][0]["findings"]
    assert {f["kind"] for f in findings} == {"module-not-allowed"}
    assert sorted(f["symbol"] for f in findings) == want
