"""symcheck against the Debian distribution kernel, compared with kmod's own tools
(modprobe --dump-modversions, depmod -e -E) and an independent Python reading of the files."""
import json
import os
import struct


from symcheck_testlib import run, symcheck, tool, elf_sections, parse_depmod, nm_undefined, \
    modinfo_field, dump_modversions

MIN_SAMPLE = 50


def read_symvers(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            crc, sym, mod, typ = parts[:4]
            ns = parts[4] if len(parts) > 4 else ""
            rows[sym] = (int(crc, 16), mod, typ, ns)
    return rows


def py_versions(path):
    """__versions read with plain Python: [(name, crc)]."""
    secs = elf_sections(path)
    if "__versions" not in secs:
        return []
    off, size, _ = secs["__versions"]
    with open(path, "rb") as f:
        f.seek(off)
        data = f.read(size)
    out = []
    for i in range(0, size, 64):
        crc, = struct.unpack_from("<Q", data, i)
        name = data[i + 8:i + 64].split(b"\0", 1)[0].decode()
        out.append((name, crc & 0xffffffff))
    return out


def depmod(distro, base, symvers):
    r = run([tool("depmod"), "-b", str(base), "-e", "-E", symvers, distro.version])
    assert r.returncode == 0, r.stderr
    return parse_depmod(r.stderr)


def check_findings(distro, modules, build):
    r = symcheck("--json", "check", *modules, build)
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    out = set()
    for m in doc["modules"]:
        for f in m["findings"]:
            out.add((os.path.basename(m["file"]), f["kind"], f["symbol"]))
    return r.returncode, doc, out


def test_sample_size(distro):
    assert len(distro.modules) > 1000
    assert len(distro.sample()) >= MIN_SAMPLE


def test_versions_equal_modprobe_dump(distro):
    sample = distro.sample()
    compared = 0
    for ko in sample:
        r = symcheck("--json", "module", ko)
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        mine = [(v["name"], int(v["crc"], 16)) for v in doc["versions"]]
        assert mine == dump_modversions(ko), ko
        assert mine == py_versions(ko), ko
        compared += 1
    assert compared >= MIN_SAMPLE


def test_module_undefined_and_modinfo(distro):
    """undefined symbols against binutils nm -u, .modinfo against kmod's modinfo -F."""
    for ko in distro.sample(20):
        doc = json.loads(symcheck("--json", "module", ko).stdout)
        mi = doc["modinfo"]
        for field in ("vermagic", "name", "license"):
            assert [mi[field]] == modinfo_field(ko, field)[:1], (ko, field)
        assert mi["import_ns"] == modinfo_field(ko, "import_ns")
        want_dep = [d for d in ",".join(modinfo_field(ko, "depends")).split(",") if d]
        assert mi["depends"] == want_dep, ko
        assert {u["name"]: u["weak"] for u in doc["undefined"]} == nm_undefined(ko), ko
        # every undefined symbol has a version entry in a MODVERSIONS distro kernel
        vers = dict(py_versions(ko))
        for u in doc["undefined"]:
            assert u["crc"] is not None and int(u["crc"], 16) == vers[u["name"]], (ko, u)


def test_sample_check_clean(distro):
    rc, doc, findings = check_findings(distro, distro.sample(), distro.build)
    assert findings == set()
    assert rc == 0
    assert len(doc["modules"]) >= MIN_SAMPLE
    assert doc["findings_total"] == 0


def test_all_modules_clean_and_depmod_agrees(distro, tmp_path):
    rc, _, findings = check_findings(distro, distro.modules, distro.build)
    assert rc == 0 and findings == set()
    distro.fake_tree(tmp_path)
    assert depmod(distro, tmp_path, distro.symvers) == set()


def pick_vmlinux_symbol(distro, ko):
    symvers = read_symvers(distro.symvers)
    undef = {name for name, weak in nm_undefined(ko).items() if not weak}
    for i, (name, crc) in enumerate(py_versions(ko)):
        if name in undef and name in symvers and symvers[name][1] == "vmlinux":
            return i, name
    return None, None


def test_tampered_crc_found_like_depmod(distro, tmp_path):
    ko = distro.sample()[7]
    idx, sym = pick_vmlinux_symbol(distro, ko)
    assert sym, ko
    off, _, _ = elf_sections(ko)["__versions"]
    data = bytearray(open(ko, "rb").read())
    data[off + idx * 64] ^= 0xFF         # change one CRC byte
    rel = os.path.relpath(ko, distro.modules_dir)
    bad = tmp_path / os.path.basename(ko)
    bad.write_bytes(bytes(data))

    rc, _, mine = check_findings(distro, [str(bad)], distro.build)
    assert rc == 1
    assert mine == {(bad.name, "crc-mismatch", sym)}

    tree = tmp_path / "tree"
    distro.fake_tree(tree, replace={rel: str(bad)})
    theirs = depmod(distro, tree, distro.symvers)
    assert theirs == mine


def test_symvers_line_removed_found_like_depmod(distro, tmp_path):
    ko = distro.sample()[11]
    _, sym = pick_vmlinux_symbol(distro, ko)
    assert sym
    build = tmp_path / "build"
    build.mkdir()
    kept = [l for l in open(distro.symvers) if l.split("\t")[1] != sym]
    (build / "Module.symvers").write_text("".join(kept))

    rc, _, mine = check_findings(distro, distro.modules, str(build))
    assert rc == 1
    assert (os.path.basename(ko), "unknown-symbol", sym) in mine
    assert {k for _, k, _ in mine} == {"unknown-symbol"}

    tree = tmp_path / "tree"
    distro.fake_tree(tree)
    theirs = depmod(distro, tree, str(build / "Module.symvers"))
    assert theirs == mine

    # with vmlinux beside it, `exports` reports the line missing from Module.symvers
    os.symlink(distro.vmlinux, build / "vmlinux")
    r = symcheck("--json", "exports", "--summary", build)
    assert r.returncode == 1
    dis = json.loads(r.stdout)["disagreements"]
    assert dis == [{"kind": "missing-in-symvers", "symbol": sym, "symvers": "-",
                    "vmlinux": read_symvers(distro.symvers)[sym][2]}]


def test_exports_vmlinux_matches_symvers(distro):
    r = symcheck("--json", "exports", distro.build)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = read_symvers(distro.symvers)
    vml = {s: v for s, v in rows.items() if v[1] == "vmlinux"}
    # independent count: lines whose module column is "vmlinux"
    n_lines = sum(1 for l in open(distro.symvers) if l.split("\t")[2] == "vmlinux")
    assert doc["vmlinux"]["count"] == n_lines == len(vml)
    assert doc["vmlinux"]["has_crc"] is True
    assert doc["module_symvers"]["count"] == len(rows)
    assert doc["disagreements"] == []
    assert doc["compared"] is True
    gpl = sum(1 for v in vml.values() if v[2] == "EXPORT_SYMBOL_GPL")
    assert doc["vmlinux"]["gpl"] == gpl
    for e in doc["exports"]:
        crc, mod, typ, ns = rows[e["symbol"]]
        assert (int(e["crc"], 16), e["module"], e["class"], e["namespace"]) == (crc, mod, typ, ns)
        assert e["in_vmlinux"] == (mod == "vmlinux")


def test_exports_vmlinux_ksymtab_independent(distro):
    """Decode __ksymtab/__ksymtab_gpl/__kcrctab in Python and compare with symcheck's vmlinux view."""
    secs = elf_sections(distro.vmlinux)
    data = open(distro.vmlinux, "rb").read()
    soff, ssize, saddr = secs["__ksymtab_strings"]

    def s_at(addr):
        o = soff + (addr - saddr)
        return data[o:data.index(b"\0", o)].decode()

    expect = {}
    for tab, crct, cls in (("__ksymtab", "__kcrctab", "EXPORT_SYMBOL"),
                           ("__ksymtab_gpl", "__kcrctab_gpl", "EXPORT_SYMBOL_GPL")):
        off, size, addr = secs[tab]
        coff = secs[crct][0]
        for i in range(size // 12):
            _, no, nso = struct.unpack_from("<iii", data, off + 12 * i)
            a = addr + 12 * i
            name = s_at(a + 4 + no)
            ns = s_at(a + 8 + nso) if nso else ""
            crc, = struct.unpack_from("<I", data, coff + 4 * i)
            expect[name] = (crc, cls, ns)
    vml_only = os.path.join(os.path.dirname(distro.vmlinux), "vmlinux")
    r = symcheck("--json", "exports", vml_only)
    assert r.returncode == 0, r.stderr
    got = {e["symbol"]: (int(e["crc"], 16), e["class"], e["namespace"]) for e in json.loads(r.stdout)["exports"]}
    assert got == expect
    rows = read_symvers(distro.symvers)
    assert {s: (v[0], v[2], v[3]) for s, v in rows.items() if v[1] == "vmlinux"} == expect


def test_seed_report_distro(distro):
    r = symcheck("--json", "seed-report", "debian=" + distro.build)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    b = doc["builds"][0]
    assert b["name"] == "debian"
    ex = b["exports"]
    rows = read_symvers(distro.symvers)       # the expectation, parsed here
    assert doc["symbols"] == ["task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask",
                              "disk_name", "gendisk_device_type", "gendisk_block_class",
                              "kallsyms_lookup_name", "kallsyms_on_each_symbol", "bpf_trace_run12",
                              "bpf_trace_run13"]
    for s in doc["symbols"]:
        if s in rows:
            _, mod, typ, ns = rows[s]
            assert ex[s] == {"exported": True, "class": typ, "module": mod, "namespace": ns}, s
        else:
            assert ex[s] == {"exported": False, "class": None, "module": None, "namespace": None}, s
    assert "bpf_trace_run12" in rows and "kallsyms_lookup_name" not in rows   # known 6.1 facts
    # distro vmlinux (from vmlinuz) has no DWARF: reported, not fatal
    assert b["dwarf"]["available"] is False and "DWARF" in b["dwarf"]["error"]
    t = symcheck("seed-report", distro.build)
    assert t.returncode == 0 and "DWARF not available" in t.stdout


def test_diff_distro_against_itself_and_edited(distro, tmp_path):
    r = symcheck("diff", distro.build, distro.symvers)
    assert r.returncode == 0, r.stderr
    lines = open(distro.symvers).read().splitlines(True)
    edited = []
    changed = {}
    for l in lines:
        crc, sym, mod, typ, ns = l.rstrip("\n").split("\t")
        if sym == "printk_timed_ratelimit" or sym == "_printk":
            continue                                          # removed
        if sym == "jiffies":
            crc = "0x%08x" % (int(crc, 16) ^ 1); changed["crc"] = sym
        if sym == "kmalloc_caches":
            typ = "EXPORT_SYMBOL_GPL" if typ == "EXPORT_SYMBOL" else "EXPORT_SYMBOL"; changed["class"] = sym
        if sym == "init_net":
            ns = "NEW_NS"; changed["namespace"] = sym
        edited.append("\t".join((crc, sym, mod, typ, ns)) + "\n")
    edited.append("0x12345678\tbrand_new_export\tvmlinux\tEXPORT_SYMBOL_GPL\t\n")
    p = tmp_path / "Module.symvers"
    p.write_text("".join(edited))
    r = symcheck("--json", "diff", distro.build, p)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    got = {(c["change"], c["symbol"]) for c in doc["changes"]}
    want = {("removed", "_printk"), ("added", "brand_new_export")}
    if any(l.split("\t")[1] == "printk_timed_ratelimit" for l in lines):
        want.add(("removed", "printk_timed_ratelimit"))
    want |= {(k, s) for k, s in changed.items()}
    assert got == want


def test_namespace_and_licence_tampering(distro, tmp_path):
    """A real module that imports a namespace: drop the import, then make its licence proprietary."""
    target = None
    for ko in distro.modules:
        ns_list = modinfo_field(ko, "import_ns")         # kmod's reading, not symcheck's
        if ns_list:
            target, ns = ko, ns_list[0]
            break
    assert target, "no distro module imports a namespace"
    rc, doc, findings = check_findings(distro, [target], distro.build)
    assert rc == 0 and findings == set()
    rows = read_symvers(distro.symvers)
    needed = {n for n, weak in nm_undefined(target).items() if n in rows}
    users = {n for n in needed if rows[n][3] == ns}
    assert users
    raw = open(target, "rb").read()
    key = ("import_ns=" + ns).encode()
    assert raw.count(key) >= 1
    p = tmp_path / os.path.basename(target)
    p.write_bytes(raw.replace(key, b"x" + key[1:]))
    rc, _, findings = check_findings(distro, [str(p)], distro.build)
    assert rc == 1
    assert findings == {(p.name, "namespace-not-imported", s) for s in users}
    # a non-GPL-compatible licence ("BSD"): every GPL-only import becomes a finding
    lic = modinfo_field(target, "license")[0]
    old = ("license=" + lic).encode() + b"\0"
    new = b"license=BSD" + b"\0" * (len(old) - len("license=BSD"))
    assert len(new) == len(old) and raw.count(old) == 1
    p.write_bytes(raw.replace(old, new))
    rc, doc, findings = check_findings(distro, [str(p)], distro.build)
    gpl = {n for n in needed if rows[n][2] == "EXPORT_SYMBOL_GPL"}
    assert rc == 1 and gpl
    assert {f for f in findings if f[1] == "gpl-only"} == {(p.name, "gpl-only", s) for s in gpl}
