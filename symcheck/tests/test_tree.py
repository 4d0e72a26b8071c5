"""check --tree on a small installed tree of distro modules (some compressed), compared with
depmod -e -E on the same tree, including one module doctored to need a missing symbol;
and a Module.symvers with CRLF line ends."""
import json
import os
import struct

from symcheck_testlib import (compress, modinfo_field, nm_undefined, parse_depmod, read_symvers_text,
                              run, symcheck, tool)

N_ROOTS = 8


def closure(distro, roots):
    """roots plus every module they depend on (modinfo depends=), by module name."""
    by_name = {os.path.basename(m)[:-3].replace("-", "_"): m for m in distro.modules}
    todo, seen = list(roots), {}
    while todo:
        m = todo.pop()
        name = os.path.basename(m)[:-3].replace("-", "_")
        if name in seen:
            continue
        seen[name] = m
        for dep in ",".join(modinfo_field(m, "depends")).split(","):
            if dep:
                todo.append(by_name[dep.replace("-", "_")])
    return sorted(seen.values())


def rename_undefined(path, sym, new):
    """Rename the undefined symbol sym in the .strtab of a plain ELF64 .ko (same length)."""
    data = bytearray(open(path, "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    symtab = next(s for s in secs if s[1] == 2)          # SHT_SYMTAB
    stroff = secs[symtab[6]][4]
    for off in range(symtab[4], symtab[4] + symtab[5], 24):
        name, info, other, shndx = struct.unpack_from("<IBBH", data, off)
        end = data.index(b"\0", stroff + name)
        if shndx == 0 and data[stroff + name:end] == sym.encode():
            data[stroff + name:end] = new.encode()
            return bytes(data)
    raise AssertionError("no undefined %s in %s" % (sym, path))


def make_tree(distro, base, mods, replace=None):
    moddir = os.path.join(base, "lib", "modules", distro.version)
    for i, m in enumerate(mods):
        rel = os.path.relpath(m, distro.modules_dir)
        dst = os.path.join(moddir, "kernel", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        src = (replace or {}).get(m, m)
        ext = ("", ".xz", ".zst")[i % 3]     # plain, xz and zstd, as distributions install them
        if ext:
            compress(src, dst + ext, ext[1:])
        else:
            with open(src, "rb") as f, open(dst, "wb") as g:
                g.write(f.read())
    return moddir


def tree_findings(moddir, *build):
    r = symcheck("--json", "check", "--tree", moddir, *build)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    out = {(os.path.basename(m["file"]), f["kind"], f["symbol"]) for m in doc["modules"] for f in m["findings"]}
    return r.returncode, doc, out


def depmod_findings(distro, base, symvers):
    r = run([tool("depmod"), "-b", str(base), "-e", "-E", symvers, distro.version])
    assert r.returncode == 0, r.stderr
    return parse_depmod(r.stderr)


def test_tree_against_depmod(distro, tmp_path):
    roots = distro.sample(60)[::60 // N_ROOTS][:N_ROOTS]
    mods = closure(distro, roots)
    # doctor one root: one of its vmlinux symbols renamed to a name nobody exports
    symvers = read_symvers_text(distro.symvers)
    victim = roots[0]
    sym = next(s for s, weak in sorted(nm_undefined(victim).items())
               if not weak and symvers.get(s, (0, ""))[1] == "vmlinux")
    missing = sym[:-1] + ("Q" if sym[-1] != "Q" else "R")
    assert missing not in symvers
    bad = tmp_path / "bad.ko"
    bad.write_bytes(rename_undefined(victim, sym, missing))
    assert missing in nm_undefined(str(bad))
    base = tmp_path / "root"
    moddir = make_tree(distro, str(base), mods, replace={victim: str(bad)})

    rc, doc, mine = tree_findings(moddir, distro.build)
    theirs = depmod_findings(distro, base, distro.symvers)
    assert rc == 1
    assert len(doc["modules"]) == len(mods)
    victim_file = [os.path.basename(m["file"]) for m in doc["modules"]
                   if os.path.basename(m["file"]).startswith(os.path.basename(victim))]
    assert mine == theirs == {(victim_file[0], "unknown-symbol", missing)}

    # without BUILD, DIR/build (the /lib/modules/REL/build link) is used
    os.symlink(distro.build, os.path.join(moddir, "build"))
    assert tree_findings(moddir)[2] == mine


def test_tree_clean_like_depmod(distro, tmp_path):
    mods = closure(distro, distro.sample(60)[1::60 // N_ROOTS][:N_ROOTS])
    base = tmp_path / "root"
    moddir = make_tree(distro, str(base), mods)
    rc, doc, mine = tree_findings(moddir, distro.build)
    assert rc == 0 and mine == set() == depmod_findings(distro, base, distro.symvers)
    want = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(moddir) for f in fs if ".ko" in f)
    assert [m["file"] for m in doc["modules"]] == want


def test_crlf_module_symvers(distro, tmp_path):
    build = tmp_path / "build"
    build.mkdir()
    text = open(distro.symvers, newline="").read()
    assert "\r" not in text
    (build / "Module.symvers").write_bytes(text.replace("\n", "\r\n").encode())
    rows = read_symvers_text(str(build / "Module.symvers"))
    r = symcheck("--json", "exports", "--summary", build)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["module_symvers"]["count"] == len(rows)
    assert doc["module_symvers"]["vmlinux_count"] == sum(1 for v in rows.values() if v[1] == "vmlinux")
    r = symcheck("--json", "exports", build / "Module.symvers")
    got = {e["symbol"]: (int(e["crc"], 16), e["module"], e["class"], e["namespace"])
           for e in json.loads(r.stdout)["exports"]}
    assert got == rows
    assert symcheck("diff", distro.symvers, build / "Module.symvers").returncode == 0
    # the same verdicts as depmod given the CRLF file, on a sample with one CRC line changed
    sample = closure(distro, distro.sample(20)[:6])
    sym = next(s for s in sorted(nm_undefined(sample[0])) if rows.get(s, (0, ""))[1] == "vmlinux")
    crc = "0x%08x" % rows[sym][0]
    edited = text.replace(crc + "\t" + sym + "\t", "0x%08x\t%s\t" % (rows[sym][0] ^ 1, sym), 1)
    (build / "Module.symvers").write_bytes(edited.replace("\n", "\r\n").encode())
    rc, _, mine = tree_findings(make_tree(distro, str(tmp_path / "root"), sample), build)
    theirs = depmod_findings(distro, tmp_path / "root", str(build / "Module.symvers"))
    assert rc == 1 and (os.path.basename(sample[0]), "crc-mismatch", sym) in mine
    assert mine == theirs
