"""Linux 7.2 export layout (tests/fixtures/k72, built by `make fixtures`): GPL-only from the
__kflagstab byte of each __ksymtab entry, `module:` namespaces checked the way the 7.2 loader's
verify_module_namespace() does (kernel/module/main.c:1179-1207 in 7.2.12), against the name in
the module's struct module. The expected values come from the fixture sources and from the
ELF files decoded here with struct, never from symcheck."""
import json
import os
import re
import struct

from elf72 import Elf, decode_vmlinux, loader_allows, this_module_name
from symcheck_testlib import FIX, HERE, symcheck

K72 = os.path.join(FIX, "k72")
SRC = os.path.join(HERE, "fixtures", "k72")
BUILD = os.path.join(K72, "build")


def js(*args, rc=0):
    r = symcheck("--json", *args)
    assert r.returncode == rc, (r.returncode, r.stdout[-300:], r.stderr)
    assert r.stderr == ""
    return json.loads(r.stdout)


def one_line_error(r, path, text):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symcheck: %s: " % path) and text in lines[0], r.stderr


def decode_module(path):
    """{name: (class, namespace, crc)} of a 7.2-layout .ko: the __ksymtab_<name> label gives the
    entry index, .rela__ksymtab the namespace string (third field), __kflagstab/__kcrctab the rest."""
    e = Elf(path)
    tabi = e.sec["__ksymtab"][0]
    flags, crcs = e.bytes("__kflagstab"), e.bytes("__kcrctab")
    _i, roff, rsize, *_r = e.sec[".rela__ksymtab"]
    rel = {}
    for k in range(rsize // 24):
        off, info, addend = struct.unpack_from("<QQq", e.data, roff + k * 24)
        rel[off] = (info >> 32, addend)
    out = {}
    for name, shndx, value in e.syms:
        if not name.startswith("__ksymtab_") or shndx != tabi:
            continue
        i = value // 12
        sym, addend = rel[value + 8]
        _sn, sshndx, svalue = e.syms[sym]
        ns = e.cstr(e.by_index[sshndx], svalue + addend)
        cls = "EXPORT_SYMBOL_GPL" if flags[i] & 1 else "EXPORT_SYMBOL"
        out[name[10:]] = (cls, ns, "0x%08x" % struct.unpack_from("<I", crcs, i * 4)[0])
    return out


def source_exports(src):
    """{name: (class, namespace, crc)} as the fixture source declares them: EXPORT72(sym, flags, ns, crc)."""
    out = {}
    for m in re.finditer(r'^EXPORT72\((\w+), (0x[0-9a-f]+), "([^"]*)", (0x[0-9a-f]+)\);',
                         open(src).read(), re.M):
        cls = "EXPORT_SYMBOL_GPL" if int(m.group(2), 16) & 1 else "EXPORT_SYMBOL"
        out[m.group(1)] = (cls, m.group(3), "0x%08x" % int(m.group(4), 16))
    return out


# ---------------------------------------------------------------- vmlinux and Module.symvers

def test_fixture_decodes_as_declared():
    """The fixture is what its source says (guards the decoder above and the linker script)."""
    dec, flags = decode_vmlinux(os.path.join(BUILD, "vmlinux"))
    assert dec == source_exports(os.path.join(SRC, "vmlinux72.c"))
    # neighbours' flags differ (most alternate), so reading entry i+1's or i-1's flag changes classes
    assert sum(flags[i] != flags[i + 1] for i in range(len(flags) - 1)) >= len(flags) // 2


def test_exports_vmlinux_classes_from_flagstab():
    dec, _ = decode_vmlinux(os.path.join(BUILD, "vmlinux"))
    d = js("exports", os.path.join(K72, "vmlinux_only", "vmlinux"))
    got = {x["symbol"]: (x["class"], x["namespace"], x["crc"]) for x in d["exports"]}
    assert got == dec
    v = d["vmlinux"]
    assert v["layout"] == "flagstab" and v["ignored_ksymtab_gpl"] == 0
    assert v["gpl"] == sum(c == "EXPORT_SYMBOL_GPL" for c, _n, _c in dec.values())
    assert v["plain"] == sum(c == "EXPORT_SYMBOL" for c, _n, _c in dec.values())


def test_exports_agrees_with_symvers():
    """Module.symvers of 7.2 keeps the 6.x columns (scripts/mod/modpost.c:2242-2245 write_dump):
    its EXPORT_SYMBOL_GPL lines are the flagged entries, namespaces verbatim."""
    d = js("exports", BUILD)
    assert d["disagreements"] == [] and d["compared"] is True
    rows = {}
    for line in open(os.path.join(SRC, "build72.symvers")):
        crc, sym, _mod, typ, ns = line.rstrip("\n").split("\t")
        rows[sym] = (typ, ns, "0x%08x" % int(crc, 16))
    dec, _ = decode_vmlinux(os.path.join(BUILD, "vmlinux"))
    assert rows == dec


def test_short_flagstab_is_corrupt():
    path = os.path.join(K72, "build_short", "vmlinux")
    one_line_error(symcheck("exports", path), path, "__kflagstab has 9 entries but __ksymtab has 10")
    one_line_error(symcheck("seed-report", path), path, "__kflagstab")


def test_seed_report_and_diff_on_72():
    d = js("seed-report", "--symbols", "k72_b_gpl,k72_c_plain,k72_e_kvm_only",
           os.path.join(K72, "vmlinux_only", "vmlinux"))
    text = json.dumps(d)
    assert "EXPORT_SYMBOL_GPL" in text and "module:kvm-amd,kvm_intel" in text
    r = symcheck("diff", BUILD, BUILD)
    assert r.returncode == 0, r.stdout + r.stderr


def test_61_fixture_still_by_section():
    """The 6.1-layout fake vmlinux (no __kflagstab): the class is the section's."""
    e = Elf(os.path.join(FIX, "fake_build", "vmlinux"))
    assert "__kflagstab" not in e.sec
    want = {}
    for sec, cls in (("__ksymtab", "EXPORT_SYMBOL"), ("__ksymtab_gpl", "EXPORT_SYMBOL_GPL")):
        idx = e.sec[sec][0]
        for name, shndx, _v in e.syms:
            if shndx == idx and name.startswith("__ksymtab_"):
                want[name[10:]] = cls
    d = js("exports", os.path.join(FIX, "fake_build", "vmlinux"))
    assert {x["symbol"]: x["class"] for x in d["exports"]} == want
    assert "layout" not in d["vmlinux"]


# ---------------------------------------------------------------- modules

def test_module_exports_from_flagstab():
    path = os.path.join(K72, "allowed.ko")
    want = decode_module(path)
    assert want == source_exports(os.path.join(SRC, "mod72.c"))
    d = js("module", path)
    assert {x["symbol"]: (x["class"], x["namespace"], x["crc"]) for x in d["exports"]} == want


def test_module_short_flagstab_is_corrupt():
    path = os.path.join(K72, "short.ko")
    one_line_error(symcheck("module", path), path, "__kflagstab has 2 entries but __ksymtab has 3")
    r = symcheck("check", "-q", path, BUILD)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "__kflagstab" in r.stderr


# module: (expected finding kinds) -- by the rule above, for the name of its struct module
CASES = {
    "allowed": [],                    # kvm_amd in "kvm-amd,kvm_intel" ('-' == '_')
    "denied": ["module-not-allowed"],
    "thisname": ["module-not-allowed"],   # .modinfo says kvm_amd, struct module says k72_other
    "modinfo_only": [],               # no struct module: the .modinfo name= kvm_intel
    "glob_ok": [],                    # k72_glob_x matches "k72-glob*"
    "glob_bad": ["module-not-allowed"],   # k72_glo is shorter than the glob's prefix
    "prefix_bad": ["module-not-allowed"],  # kvm_amd2: no glob, so no prefix match
    "import": ["module-namespace-import"],  # import_ns=module:kvm-amd: setup_modinfo() -EPERM
}


def test_cases_follow_the_loader_rule():
    """The expectations above agree with the rule applied to the names in the ELF files."""
    ns = {"k72_e_kvm_only": "module:kvm-amd,kvm_intel", "k72_g_glob_only": "module:k72-glob*,other"}
    for mod, kinds in CASES.items():
        path = os.path.join(K72, mod + ".ko")
        name = this_module_name(path) or "kvm_intel"
        e = Elf(path)
        used = {n for n, shndx, _v in e.syms if shndx == 0 and n in ns}
        denied = any(not loader_allows(ns[u], name) for u in used)
        assert denied == ("module-not-allowed" in kinds), mod


def test_check_module_namespaces():
    for mod, kinds in CASES.items():
        path = os.path.join(K72, mod + ".ko")
        d = js("check", path, BUILD, rc=1 if kinds else 0)
        got = sorted(f["kind"] for f in d["modules"][0]["findings"])
        assert got == kinds, (mod, d["modules"][0]["findings"])


def test_check_tree_and_set():
    """--tree and a set give the same findings as one module at a time."""
    mods = [os.path.join(K72, m + ".ko") for m in CASES]
    d = js("check", *mods, BUILD, rc=1)
    assert d["findings_total"] == sum(len(k) for k in CASES.values())
    r = symcheck("check", "-q", "--tree", K72, BUILD)
    assert r.returncode == 2   # short.ko is corrupt: one line, the others checked
    assert r.stderr.count("\n") == 1 and "short.ko" in r.stderr
    assert r.stdout.count("module-not-allowed:") == 4
