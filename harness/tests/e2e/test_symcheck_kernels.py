"""symcheck on the harness's own kernel builds, against modpost and gdb as oracles."""

import json
import re
import shutil
import subprocess

import pytest

from harness.prepare import kernel, variants
from harness import paths
from harness.prepare.symcheck import SYMCHECK, ensure_built

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def trees():
    ensure_built()
    return {n: kernel.prepare(variants.VARIANTS[n], paths.cache_root(), paths.default_tarball())
            for n in ("exports", "stock")}


def module_copy(dest):
    dest.mkdir()
    for f in paths.PROBE_MODULE.iterdir():
        if f.suffix in (".c", ".h") or f.name == "Kbuild":
            shutil.copy(f, dest / f.name)
    return dest


def make_module(tree, src, *args):
    return subprocess.run(["make", "-C", str(tree.src), f"M={src}", *args, "modules"],
                          capture_output=True, text=True, timeout=900)


def symcheck_findings(ko, tree):
    p = subprocess.run([str(SYMCHECK), "--json", "check", str(ko), str(tree.src)],
                       capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["modules"][0]["findings"]


def test_gpl_only_findings_equal_modposts_errors(tmp_path, trees):
    tree = trees["exports"]
    # modpost's verdict on the sources with a non-GPL licence (it refuses to link)...
    p = make_module(tree, module_copy(tmp_path / "prop"), "KSYMLAB_MODE=exports",
                    "KSYMLAB_LICENSE=Proprietary")
    assert p.returncode != 0
    modpost = set(re.findall(r"uses GPL-only symbol '(\w+)'", p.stderr))
    # ...and symcheck's on the same module built GPL, then relabelled BSD in .modinfo.
    src = module_copy(tmp_path / "gpl")
    assert make_module(tree, src, "KSYMLAB_MODE=exports").returncode == 0
    data = (src / "ksymlab_probe.ko").read_bytes()
    assert data.count(b"license=GPL\0") == 1
    bsd = tmp_path / "bsd.ko"
    bsd.write_bytes(data.replace(b"license=GPL\0", b"license=BSD\0"))
    found = symcheck_findings(bsd, tree)
    assert {f["symbol"] for f in found if f["kind"] == "gpl-only"} == modpost
    assert {"task_prio", "gendisk_block_class"} <= modpost
    assert symcheck_findings(src / "ksymlab_probe.ko", tree) == []


def test_unknown_symbols_equal_modposts_warnings(tmp_path, trees):
    # The kallsyms-mode module on a stock tree: kallsyms_lookup_name is not exported.
    tree = trees["stock"]
    src = module_copy(tmp_path / "m")
    p = make_module(tree, src, "KSYMLAB_MODE=kallsyms", "KBUILD_MODPOST_WARN=1")
    assert p.returncode == 0, p.stderr[-2000:]
    modpost = set(re.findall(r'modpost: "(\w+)" \[.*\] undefined!', p.stderr))
    assert modpost == {"kallsyms_lookup_name"}
    found = symcheck_findings(src / "ksymlab_probe.ko", tree)
    assert {f["symbol"] for f in found if f["kind"] == "unknown-symbol"} == modpost


def gdb_ptype(vmlinux, func):
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", f"ptype {func}", str(vmlinux)],
                         capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"^type = \w+ \((.*)\)$", out, re.M)
    assert m, out
    return [t.strip() for t in m.group(1).split(",")]


def normal(t):
    return {"long unsigned int": "unsigned long", "long int": "long"}.get(t, t)


@pytest.mark.parametrize("variant,domain", [("exports", True), ("stock", False)])
def test_seed_report_tracepoint_signatures_match_gdb(trees, variant, domain):
    tree = trees[variant]
    p = subprocess.run([str(SYMCHECK), "--json", "seed-report", f"{variant}={tree.src}"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    tps = json.loads(p.stdout)["builds"][0]["dwarf"]["tracepoints"]
    for event in ("global_dirty_state", "balance_dirty_pages"):
        tp = tps[event]
        assert tp["function"] == f"__traceiter_{event}"
        mine = [normal(x["type"]) for x in tp["params"]]
        assert mine == gdb_ptype(tree.vmlinux, tp["function"])
        # seed patch 3 is visible from the binary alone
        assert (mine[1] == "struct wb_domain *") is domain
    assert len(tps["balance_dirty_pages"]["params"]) == (14 if domain else 13)
