"""symcheck on small fixtures built by `make fixtures` (a fake .ko and a fake vmlinux with DWARF):
every command, text and --json."""
import glob
import json
import os
import re

from symcheck_testlib import symcheck, FIX

KO = os.path.join(FIX, "fake_mod.ko")
KO_PROP = os.path.join(FIX, "fake_mod_proprietary.ko")
KO_NONS = os.path.join(FIX, "fake_mod_nons.ko")
BUILD = os.path.join(FIX, "fake_build")


def js(*args, rc=0):
    r = symcheck("--json", *args)
    assert r.returncode == rc, (r.returncode, r.stderr)
    assert r.stderr == ""
    return json.loads(r.stdout)


def test_help_lists_all_commands():
    r = symcheck("--help")
    assert r.returncode == 0
    for c in ("exports", "module", "check", "diff", "seed-report", "audit", "--json", "--symbols"):
        assert c in r.stdout


def test_module():
    d = js("module", KO)
    assert d["modinfo"]["license"] == "GPL" and d["modinfo"]["gpl_compatible"] is True
    assert d["modinfo"]["import_ns"] == ["FAKE_NS"]
    assert d["modinfo"]["depends"] == ["fake_helper"]
    assert d["modinfo"]["name"] == "fake_mod"
    und = {u["name"]: u for u in d["undefined"]}
    assert set(und) == {"printk", "some_gpl_sym", "ns_sym", "mod_helper", "weak_missing", "kallsyms_lookup_name"}
    assert und["weak_missing"]["weak"] is True and und["weak_missing"]["crc"] is None
    assert und["printk"]["crc"] == "0x11111111"
    assert [v["name"] for v in d["versions"]][0] == "module_layout"
    t = symcheck("module", KO)
    assert t.returncode == 0 and "module_layout" in t.stdout and "GPL-compatible" in t.stdout


def _declared_exports(src):
    """{symbol: (class, namespace, crc)} as a fixture source declares them (FAKE_EXPORT_GPL[_NS])."""
    out = {}
    for m in re.finditer(r'^FAKE_EXPORT_GPL(_NS)?\((\w+), (0x[0-9a-f]+)(?:, "(\w+)")?\);',
                         open(src).read(), re.M):
        out[m.group(2)] = ("EXPORT_SYMBOL_GPL", m.group(4) or "", "0x%08x" % int(m.group(3), 16))
    return out


def test_module_lists_its_own_exports():
    """Each audit fixture's exports, class, namespace and CRC as its source declares them;
    a module that exports nothing says so."""
    srcs = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "fixtures", "audit", "*.c")))
    seen = 0
    for src in srcs:
        ko = os.path.join(FIX, "audit", os.path.basename(src)[:-2] + ".ko")
        got = {e["symbol"]: (e["class"], e["namespace"], e["crc"]) for e in js("module", ko)["exports"]}
        assert got == _declared_exports(src), src
        seen += bool(got)
    assert seen >= 3          # resolver, caller, chain (a namespace) export something
    t = symcheck("module", os.path.join(FIX, "audit", "chain.ko")).stdout
    assert re.search(r"chain_ns_sym\s+EXPORT_SYMBOL_GPL\s+FAKE_CHAIN_NS\s+0x0c0ffee0", t)
    assert "(no exports)" in symcheck("module", KO).stdout


def test_exports_fake():
    d = js("exports", BUILD)
    assert d["vmlinux"] == {"path": os.path.join(BUILD, "vmlinux"), "count": 6, "plain": 3, "gpl": 3, "has_crc": True}
    assert d["module_symvers"]["vmlinux_count"] == 6 and d["module_symvers"]["module_count"] == 1
    assert d["disagreements"] == []
    ns = [e for e in d["exports"] if e["symbol"] == "ns_sym"][0]
    assert ns["namespace"] == "FAKE_NS" and ns["gpl_only"] and ns["in_vmlinux"] and ns["in_symvers"]


def test_exports_disagreements(tmp_path):
    lines = open(os.path.join(BUILD, "Module.symvers")).read().splitlines()
    out = []
    for l in lines:
        f = l.split("\t")
        if f[1] == "printk":
            continue                                  # missing in symvers
        if f[1] == "task_prio":
            f[3] = "EXPORT_SYMBOL"                    # class differs
        if f[1] == "some_gpl_sym":
            f[0] = "0x00000001"                       # crc differs
        if f[1] == "ns_sym":
            f[4] = "OTHER"                            # namespace differs
        out.append("\t".join(f))
    out.append("0x1\tghost\tvmlinux\tEXPORT_SYMBOL\t")  # missing in vmlinux
    (tmp_path / "Module.symvers").write_text("\n".join(out) + "\n")
    os.symlink(os.path.abspath(os.path.join(BUILD, "vmlinux")), tmp_path / "vmlinux")
    d = js("exports", "--summary", tmp_path, rc=1)
    got = {(x["kind"], x["symbol"]) for x in d["disagreements"]}
    assert got == {("missing-in-symvers", "printk"), ("class", "task_prio"), ("crc", "some_gpl_sym"),
                   ("namespace", "ns_sym"), ("missing-in-vmlinux", "ghost")}
    t = symcheck("exports", tmp_path)
    assert t.returncode == 1 and "Disagreements" in t.stdout


def test_check_findings():
    d = js("check", KO, KO_PROP, KO_NONS, BUILD, rc=1)
    f = {(os.path.basename(m["file"]), x["kind"], x["symbol"]) for m in d["modules"] for x in m["findings"]}
    assert f == {
        ("fake_mod.ko", "unknown-symbol", "kallsyms_lookup_name"),
        ("fake_mod_proprietary.ko", "unknown-symbol", "kallsyms_lookup_name"),
        ("fake_mod_proprietary.ko", "gpl-only", "some_gpl_sym"),
        ("fake_mod_proprietary.ko", "gpl-only", "ns_sym"),
        ("fake_mod_nons.ko", "unknown-symbol", "kallsyms_lookup_name"),
        ("fake_mod_nons.ko", "namespace-not-imported", "ns_sym"),
    }
    assert d["findings_total"] == 6
    sym = {s["name"]: s for s in d["modules"][0]["symbols"]}
    assert sym["weak_missing"]["status"] == "weak-missing"
    assert sym["mod_helper"]["provider"] == "drivers/fake/fake_helper"


def test_check_crc_mismatch_and_module_layout(tmp_path):
    txt = open(os.path.join(BUILD, "Module.symvers")).read()
    txt = txt.replace("0x11111111\tprintk", "0x11111112\tprintk").replace("0x22222222\tmodule_layout", "0x0\tmodule_layout")
    txt += "0x1\tkallsyms_lookup_name\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
    (tmp_path / "Module.symvers").write_text(txt)
    d = js("check", KO, tmp_path, rc=1)
    got = {(x["kind"], x["symbol"]) for x in d["modules"][0]["findings"]}
    assert got == {("crc-mismatch", "printk"), ("crc-mismatch", "module_layout"), ("crc-mismatch", "kallsyms_lookup_name")}


def test_check_text_quiet():
    r = symcheck("check", "-q", KO, BUILD)
    assert r.returncode == 1
    assert "unknown-symbol: needs unknown symbol kallsyms_lookup_name" in r.stdout
    assert "1 module(s) checked, 1 finding(s)" in r.stdout


def test_diff(tmp_path):
    a = open(os.path.join(BUILD, "Module.symvers")).read()
    b = (a.replace("0x11111111\tprintk", "0x99999999\tprintk")
          .replace("task_prio\tvmlinux\tEXPORT_SYMBOL_GPL", "task_prio\tvmlinux\tEXPORT_SYMBOL")
          .replace("EXPORT_SYMBOL_GPL\tFAKE_NS", "EXPORT_SYMBOL_GPL\tNEW_NS")
          .replace("0x66666666\tonly_in_vmlinux\tvmlinux\tEXPORT_SYMBOL\t\n", "")
          + "0x1\tnewsym\tvmlinux\tEXPORT_SYMBOL_GPL\t\n")
    (tmp_path / "B.symvers").write_text(b)
    d = js("diff", BUILD, tmp_path / "B.symvers", rc=1)
    got = {(c["change"], c["symbol"], c["old"], c["new"]) for c in d["changes"]}
    assert got == {
        ("crc", "printk", "0x11111111", "0x99999999"),
        ("class", "task_prio", "EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL"),
        ("namespace", "ns_sym", "FAKE_NS", "NEW_NS"),
        ("removed", "only_in_vmlinux", "EXPORT_SYMBOL vmlinux", None),
        ("added", "newsym", None, "EXPORT_SYMBOL_GPL vmlinux"),
    }
    assert d["counts"] == {"added": 1, "removed": 1, "crc": 1, "class": 1, "namespace": 1, "owner": 0}
    assert js("diff", BUILD, BUILD)["changes"] == []


def test_seed_report_dwarf():
    d = js("seed-report", "fake=" + BUILD, BUILD)
    assert [b["name"] for b in d["builds"]] == ["fake", BUILD]
    b = d["builds"][0]
    assert b["exports"]["task_prio"]["exported"] and b["exports"]["task_prio"]["class"] == "EXPORT_SYMBOL_GPL"
    assert not b["exports"]["kallsyms_lookup_name"]["exported"]
    assert b["dwarf"]["available"]
    tp = b["dwarf"]["tracepoints"]
    bdp = tp["balance_dirty_pages"]
    assert bdp["function"] == "__traceiter_balance_dirty_pages"
    assert [p["name"] for p in bdp["params"]] == [
        "__data", "wb", "thresh", "bg_thresh", "dirty", "bdi_thresh", "bdi_dirty", "dirty_ratelimit",
        "task_ratelimit", "dirtied", "period", "pause", "start_time"]
    assert bdp["params"][1]["type"] == "struct bdi_writeback *"
    gds = tp["global_dirty_state"]
    assert gds["function"] == "perf_trace_global_dirty_state"      # fallback when __traceiter_ is absent
    assert [p["type"] for p in gds["params"]] == ["void *", "long unsigned int", "long unsigned int",
                                                  "const char * const *"]


def test_seed_report_symbols_option_and_no_vmlinux(tmp_path):
    os.symlink(os.path.abspath(os.path.join(BUILD, "Module.symvers")), tmp_path / "Module.symvers")
    d = js("seed-report", "--symbols", "task_prio,mod_helper nope", "x=" + str(tmp_path))
    assert d["symbols"] == ["task_prio", "mod_helper", "nope"]
    b = d["builds"][0]
    assert b["exports"]["mod_helper"]["module"] == "drivers/fake/fake_helper"
    assert b["dwarf"]["available"] is False and b["dwarf"]["error"] == "no vmlinux"
    r = symcheck("seed-report", "--symbols=task_prio", str(tmp_path))
    assert r.returncode == 0 and "DWARF not available: no vmlinux" in r.stdout


def test_audit():
    d = js("audit", KO, rc=1)
    got = {(f["kind"], f["what"]) for f in d["findings"]}
    assert got == {("undefined-reference", "kallsyms_lookup_name"), ("string", "kallsyms_lookup_name")}
    assert d["flagged"] is True


def test_audit_clean(tmp_path):
    src = tmp_path / "clean.c"
    src.write_text('extern int printk(const char *, ...);\n'
                   'static const char mi[] __attribute__((used, section(".modinfo"))) = "license=GPL";\n'
                   'int init_module(void) { return printk("hi"); }\n')
    out = tmp_path / "clean.ko"
    import subprocess
    subprocess.check_call(["gcc", "-c", "-O2", "-o", str(out), str(src)])
    d = js("audit", out)
    assert d["flagged"] is False and d["findings"] == []
    d = js("check", out, BUILD, rc=1)
    assert [f["kind"] for f in d["modules"][0]["findings"]] == ["no-versions-section"]
