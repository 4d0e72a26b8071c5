"""Seed claims: read from the seed patches as posted, checked on built artifacts.

The artifacts here are small real ones: a vmlinux linked from C with 6.1-style
export tables (`__ksymtab`/`__ksymtab_gpl`) and DWARF for the two writeback
tracepoint iterators, and a Module.symvers, both read by the real symcheck.
Each doctored build is one drift a port could make; its claim must fail.
"""

import subprocess
from dataclasses import dataclass
from types import SimpleNamespace
from pathlib import Path

import pytest

from harness import paths
from harness.checks import seedclaims, seedparse
from harness.prepare import symcheck

FIXTURES = paths.REPO / "symcheck" / "tests" / "fixtures"

ALL = tuple(f"{i}/9" for i in range(1, 10)) + ("0bd476e6",)
WAIVED = ("1/9", "7/9")         # superseded upstream: seeds.py waives their claims


def test_claims_come_from_the_seed_patches():
    got = {s: [c.text for c in seedparse.claims(s)] for s in ALL}
    assert got == {
        "1/9": [],
        "2/9": ["bpf_trace_run13 exported GPL-only"],
        "3/9": ["global_dirty_state(domain, background_thresh, dirty_thresh)",
                "global_dirty_state parameter 1 is struct wb_domain *domain",
                "balance_dirty_pages(domain, wb, thresh, bg_thresh, dirty, bdi_thresh, "
                "bdi_dirty, dirty_ratelimit, task_ratelimit, dirtied, period, pause, "
                "start_time)",
                "balance_dirty_pages parameter 1 is struct wb_domain *domain"],
        "4/9": ["stack_trace_save_user exported GPL-only"],
        "5/9": ["task_prio exported GPL-only"],
        "6/9": ["get_pfnblock_flags_mask exported GPL-only"],
        "7/9": ["gendisk_name exported GPL-only"],
        "8/9": ["gendisk_device_type exported GPL-only"],
        "9/9": ["gendisk_block_class exported GPL-only"],
        # 0bd476e6 deleted two EXPORT_SYMBOL_GPL() lines: the revert claims them back
        "0bd476e6": ["kallsyms_lookup_name exported GPL-only",
                     "kallsyms_on_each_symbol exported GPL-only"],
    }
    # 13 parameters: the count seed 2/9 raises the BPF bound to
    assert len(seedparse.claims("3/9")[2].expected.split(", ")) == 13


def test_an_edited_seed_patch_changes_its_claims(tmp_path):
    """The table cannot drift from the patches: the claims are their text."""
    src = next(seedparse.SEED_DIR.glob("006-*.patch")).read_text()
    (tmp_path / "006.patch").write_text(src.replace("+EXPORT_SYMBOL_GPL(task_prio);",
                                                    "+EXPORT_SYMBOL(task_prio);"))
    (c,) = seedparse.claims("5/9", tmp_path)
    assert c.expected == "EXPORT_SYMBOL" and c.text == "task_prio exported to all"


def test_macro_exports_and_reverts_are_claims():
    diff = ("diff --git a/k.c b/k.c\n--- a/k.c\n+++ b/k.c\n@@ -1,3 +1,4 @@\n"
            " #define DEFN_x(x) \\\n \tvoid run##x(void) {} \\\n \tEXPORT_SYMBOL_GPL(run##x)\n"
            "+DEFN_x(13);\n-EXPORT_SYMBOL(old_one);\n")
    seed, claims = seedparse.claims_of("Subject: [RFC PATCH 2/9] x\n\n" + diff)
    assert seed == "2/9" and [(c.subject, c.expected) for c in claims] == \
        [("run13", "EXPORT_SYMBOL_GPL")]
    seed, claims = seedparse.claims_of("commit 0bd476e6c67190b5eb\n\n" + diff)
    assert seed == "0bd476e6" and [(c.subject, c.expected) for c in claims] == \
        [("old_one", "EXPORT_SYMBOL")]


# ------------------------------------------------------------- fake builds

GOOD_EXPORTS = {s: "_gpl" for s in ("bpf_trace_run13", "stack_trace_save_user", "task_prio",
                                    "get_pfnblock_flags_mask", "gendisk_device_type",
                                    "gendisk_block_class", "kallsyms_lookup_name",
                                    "kallsyms_on_each_symbol")}
BDP = ["struct wb_domain *domain", "struct bdi_writeback *wb", "unsigned long thresh",
       "unsigned long bg_thresh", "unsigned long dirty", "unsigned long bdi_thresh",
       "unsigned long bdi_dirty", "unsigned long dirty_ratelimit",
       "unsigned long task_ratelimit", "unsigned long dirtied", "unsigned long period",
       "long pause", "unsigned long start_time"]
GDS = ["struct wb_domain *domain", "unsigned long background_thresh",
       "unsigned long dirty_thresh"]


@dataclass
class Build:
    exports: dict                   # symbol -> "_gpl" or "" in vmlinux's ksymtab
    symvers: dict                   # symbol -> class in Module.symvers
    bdp: list
    gds: list
    namespaces: dict = None         # symbol -> namespace, in both artifacts
    members: list = None            # struct dirty_throttle_control's members in vmlinux
    kvm: dict = None                # symbol -> "_gpl"/"" in kvm.ko's ksymtab and symvers


def good():
    return Build(dict(GOOD_EXPORTS),
                 {s: "EXPORT_SYMBOL_GPL" for s in GOOD_EXPORTS}, list(BDP), list(GDS))


def _c(b):
    head = (FIXTURES / "fake_vmlinux.c").read_text().split("struct bdi_writeback")[0]
    out = [head, "struct bdi_writeback { int dummy; };", "struct wb_domain { long x; };"]
    if b.members:
        out.append("struct dirty_throttle_control { %s };" % " ".join(m + ";" for m in b.members))
        out.append("struct dirty_throttle_control fake_dtc;")
    else:
        out.append("struct dirty_throttle_control;")
    for i, (sym, sec) in enumerate(sorted(b.exports.items())):
        out.append(f"int {sym}(void) {{ return {i}; }}")
        ns = (b.namespaces or {}).get(sym, "")
        out.append(f'FAKE_EXPORT({sym}, "{sec}", "{ns}", {0x1000 + i:#x});')
    for ev, params in (("balance_dirty_pages", b.bdp), ("global_dirty_state", b.gds)):
        names = [p.split()[-1].lstrip("*") for p in params]
        body = " ".join(f"(void){n};" for n in names)
        out.append(f"int __traceiter_{ev}(void *__data, {', '.join(params)})\n"
                   f"{{ (void)__data; {body} return 0; }}")
    out.append("void _start(void) {}")
    return "\n".join(out) + "\n"


def _kvm_ko(d, b):
    """arch/x86/kvm/kvm.ko exporting b.kvm, laid out as a 6.1 module (fake_kernel.h)."""
    ko = d / "arch" / "x86" / "kvm" / "kvm.ko"
    ko.parent.mkdir(parents=True)
    src = ['#include "%s"' % (FIXTURES / "audit" / "fake_kernel.h"), 'FAKE_MODINFO("kvm");']
    for i, (sym, sec) in enumerate(sorted(b.kvm.items())):
        src.append(f"int {sym}(void) {{ return {i}; }}")
        if sec:
            src.append(f"FAKE_EXPORT_GPL({sym}, {0x2000 + i:#x});")
    (d / "kvm.c").write_text("\n".join(src) + "\n")
    subprocess.run(["cc", "-c", "-O2", "-fno-pic", "-mcmodel=kernel", "-ffreestanding",
                    "kvm.c", "-o", str(ko)], cwd=d, check=True)


def build(tmp_path, b):
    """Link the fake vmlinux and write Module.symvers for `b`; return the build dir."""
    d = tmp_path / "build"
    d.mkdir()
    (d / "fake.c").write_text(_c(b))
    subprocess.run(["cc", "-c", "-g", "-O0", "-fno-pic", "-mcmodel=kernel", "-ffreestanding",
                    "-fno-asynchronous-unwind-tables", "fake.c", "-o", "fake.o"],
                   cwd=d, check=True)
    subprocess.run(["ld", "-T", str(FIXTURES / "fake_vmlinux.lds"), "-o", "vmlinux", "fake.o"],
                   cwd=d, check=True)
    (d / "Module.symvers").write_text("".join(
        f"{0x1000 + i:#010x}\t{sym}\tvmlinux\t{cls}\t{(b.namespaces or {}).get(sym, '')}\n"
        for i, (sym, cls) in enumerate(sorted(b.symvers.items()))) + "".join(
        f"{0x2000 + i:#010x}\t{sym}\tarch/x86/kvm/kvm\tEXPORT_SYMBOL_GPL\t\n"
        for i, sym in enumerate(sorted(b.kvm or ()))))
    if b.kvm:
        _kvm_ko(d, b)
    return d


@pytest.fixture(scope="module", autouse=True)
def _symcheck():
    symcheck.ensure_built()


def failing(tmp_path, b, seeds=ALL):
    rows = seedclaims.checks(build(tmp_path, b), seeds, skip=WAIVED)
    assert len(rows) == 12 if seeds == ALL else rows
    return sorted(r.key for r in rows if not r.agrees), rows


def test_a_faithful_port_holds_every_claim(tmp_path):
    bad, rows = failing(tmp_path, good())
    assert bad == []
    row = {r.key: r for r in rows}["5/9/export/task_prio"]
    assert dict(row.sources) == {"seed_patch": "EXPORT_SYMBOL_GPL", "symvers": "EXPORT_SYMBOL_GPL",
                                 "ksymtab": "EXPORT_SYMBOL_GPL"}


def test_variant_checks_waive_the_seeds_run_passes_in(tmp_path):
    """run.py passes seeds.superseded() in; seedclaims itself knows no seed table."""
    tree = SimpleNamespace(src=build(tmp_path, good()))
    variant = SimpleNamespace(name="exports", seeds=ALL, kernel_line="6.1")
    rows = seedclaims.variant_checks(tree, variant, WAIVED)
    assert len(rows) == 12 and not [r for r in rows if r.key.startswith(("1/9", "7/9"))]
    unwaived = seedclaims.variant_checks(tree, variant, ())
    assert [r.key for r in unwaived if r.key.startswith("7/9")] == ["7/9/export/gendisk_name"]


def test_task_prio_exported_to_all_fails_5_of_9(tmp_path):
    """The new user's doctored patch 0004: EXPORT_SYMBOL(task_prio)."""
    b = good()
    b.exports["task_prio"], b.symvers["task_prio"] = "", "EXPORT_SYMBOL"
    bad, rows = failing(tmp_path, b)
    assert bad == ["5/9/export/task_prio"]
    row = {r.key: r for r in rows}["5/9/export/task_prio"]
    assert row.get("symvers") == row.get("ksymtab") == "EXPORT_SYMBOL"


def test_an_export_into_a_namespace_fails(tmp_path):
    """EXPORT_SYMBOL_NS_GPL(task_prio, KSYMLAB): GPL-only still, but not what the seed gave."""
    b = good()
    b.namespaces = {"task_prio": "KSYMLAB"}
    bad, rows = failing(tmp_path, b)
    assert bad == ["5/9/export/task_prio"]
    row = {r.key: r for r in rows}["5/9/export/task_prio"]
    assert row.get("symvers") == row.get("ksymtab") == "EXPORT_SYMBOL_NS_GPL(KSYMLAB)"


def test_artifacts_that_disagree_fail(tmp_path):
    # Module.symvers says GPL, the ksymtab in vmlinux does not (a stale Module.symvers)
    b = good()
    b.exports["get_pfnblock_flags_mask"] = ""
    assert failing(tmp_path, b)[0] == ["6/9/export/get_pfnblock_flags_mask"]


def test_a_missing_export_fails(tmp_path):
    b = good()
    del b.exports["gendisk_block_class"], b.symvers["gendisk_block_class"]
    assert failing(tmp_path, b)[0] == ["9/9/export/gendisk_block_class"]


def test_a_dropped_tracepoint_parameter_fails_3_of_9(tmp_path):
    b = good()
    b.bdp = BDP[1:]                 # balance_dirty_pages without the domain
    assert failing(tmp_path, b)[0] == ["3/9/tracepoint/balance_dirty_pages/args",
                                       "3/9/tracepoint/balance_dirty_pages/param1"]


def test_the_domain_in_another_position_fails(tmp_path):
    b = good()
    b.gds = GDS[1:] + GDS[:1]       # global_dirty_state(bg, thresh, domain)
    assert failing(tmp_path, b)[0] == ["3/9/tracepoint/global_dirty_state/args",
                                       "3/9/tracepoint/global_dirty_state/param1"]


def test_a_parameter_of_another_type_fails(tmp_path):
    b = good()
    b.gds = ["void *domain"] + GDS[1:]
    assert failing(tmp_path, b)[0] == ["3/9/tracepoint/global_dirty_state/param1"]


def test_a_revert_exporting_to_all_fails(tmp_path):
    b = good()
    b.exports["kallsyms_lookup_name"], b.symvers["kallsyms_lookup_name"] = "", "EXPORT_SYMBOL"
    assert failing(tmp_path, b)[0] == ["0bd476e6/export/kallsyms_lookup_name"]


def test_a_revert_restoring_one_export_fails(tmp_path):
    b = good()
    del b.exports["kallsyms_on_each_symbol"], b.symvers["kallsyms_on_each_symbol"]
    assert failing(tmp_path, b)[0] == ["0bd476e6/export/kallsyms_on_each_symbol"]


def test_a_variant_without_seeds_needs_no_artifacts(tmp_path):
    assert seedclaims.checks(tmp_path, ()) == []
    assert seedclaims.checks(tmp_path, ("1/9",)) == []          # no claims to check


def test_a_tree_without_module_symvers_is_a_verify_error(tmp_path):
    from harness.errors import HarnessError
    with pytest.raises(HarnessError) as e:
        seedclaims.checks(Path(tmp_path), ("5/9",))
    assert e.value.step == "verify" and "Module.symvers" in str(e.value)


# ------------------------------------------------------------- the v2 series

V2 = tuple(f"v2-{i}/8" for i in range(1, 9))
V2_NS = ("stack_trace_save_user", "get_pfnblock_flags_mask")
V2_BDP = ["struct bdi_writeback *wb", "struct dirty_throttle_control *dtc",
          "unsigned long dirty_ratelimit", "unsigned long task_ratelimit",
          "unsigned long dirtied", "unsigned long period", "long pause",
          "unsigned long start_time"]
KVM = {f"__SC{k}__kvm_x86_{f}": "_gpl" for k in "KT" for f in ("get_exit_info",
                                                                "get_segment_base")}


def v2_good():
    exports = {s: "_gpl" for s in V2_NS + ("blk_walk_visible_disks", "irq_walk_actions")}
    return Build(exports, {s: "EXPORT_SYMBOL_GPL" for s in exports}, list(V2_BDP), list(GDS),
                 namespaces=dict.fromkeys(V2_NS, "TRACER_INTERNALS"),
                 members=["unsigned long thresh", "unsigned long limit"], kvm=dict(KVM))


def v2_failing(tmp_path, b):
    rows = seedclaims.checks(build(tmp_path, b), V2)
    assert len(rows) == 13
    return sorted(r.key for r in rows if not r.agrees), {r.key: r for r in rows}


def test_the_v2_claims_come_from_patches_v2():
    got = [c.text for s in V2 for c in seedparse.claims(s)]
    assert got == [
        "balance_dirty_pages(wb, dtc, dirty_ratelimit, task_ratelimit, dirtied, period, "
        "pause, start_time)",
        "balance_dirty_pages parameter 2 is struct dirty_throttle_control *dtc",
        "struct dirty_throttle_control has member unsigned long limit",
        "global_dirty_state(domain, background_thresh, dirty_thresh)",
        "global_dirty_state parameter 1 is struct wb_domain *domain",
        "stack_trace_save_user exported GPL-only in namespace TRACER_INTERNALS",
        "get_pfnblock_flags_mask exported GPL-only in namespace TRACER_INTERNALS",
        "blk_walk_visible_disks exported GPL-only", "irq_walk_actions exported GPL-only",
        "__SCK__kvm_x86_get_exit_info exported GPL-only",
        "__SCK__kvm_x86_get_segment_base exported GPL-only",
        "__SCT__kvm_x86_get_exit_info exported GPL-only",
        "__SCT__kvm_x86_get_segment_base exported GPL-only"]
    # the 6.12 port makes the same claims as the 6.1 patches they are checked against
    port = paths.REPO / "patches" / "6.12" / "v2"
    assert [c.key for s in V2 for c in seedparse.claims(s, port)] == \
        [c.key for s in V2 for c in seedparse.claims(s)]


def test_new_export_forms_and_members_are_claims():
    diff = ("diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,2 +1,4 @@\n"
            "+EXPORT_SYMBOL_NS(a, NS1);\n+EXPORT_SYMBOL_NS_GPL(b, \"NS2\");\n"
            "+EXPORT_STATIC_CALL_TRAMP_GPL(c);\n+EXPORT_STATIC_CALL(d);\n"
            "diff --git a/i.h b/i.h\n--- a/i.h\n+++ b/i.h\n@@ -3,2 +3,3 @@ struct s {\n"
            " \tint a;\n+\tunsigned long\t\tlimit;\t/* hard */\n+\tstruct t **pp;\n };\n"
            "+struct moved {\n+\tint kept;\n+};\n"
            "diff --git a/m.c b/m.c\n--- a/m.c\n+++ b/m.c\n@@ -1,3 +1,1 @@\n"
            "-struct moved {\n-\tint kept;\n-};\n")
    seed, claims = seedparse.claims_of("Subject: [PATCH 3/8] x\n\n" + diff, "v2-")
    assert seed == "v2-3/8"
    assert [(c.subject, c.expected) for c in claims] == [
        ("__SCK__d", "EXPORT_SYMBOL"), ("__SCT__c", "EXPORT_SYMBOL_GPL"),
        ("__SCT__d", "EXPORT_SYMBOL"), ("a", "EXPORT_SYMBOL_NS(NS1)"),
        ("b", "EXPORT_SYMBOL_NS_GPL(NS2)"),
        ("s.limit", "unsigned long limit"), ("s.pp", "struct t **pp")]


def test_a_faithful_v2_port_holds_every_claim(tmp_path):
    bad, rows = v2_failing(tmp_path, v2_good())
    assert bad == []
    assert dict(rows["v2-8/8/export/__SCK__kvm_x86_get_exit_info"].sources) == {
        "seed_patch": "EXPORT_SYMBOL_GPL", "symvers": "EXPORT_SYMBOL_GPL",
        "ksymtab": "EXPORT_SYMBOL_GPL"}
    assert rows["v2-2/8/struct/dirty_throttle_control.limit"].get("pahole") == \
        "unsigned long limit"


def test_a_v2_export_without_its_namespace_fails(tmp_path):
    b = v2_good()
    del b.namespaces["stack_trace_save_user"]
    bad, rows = v2_failing(tmp_path, b)
    assert bad == ["v2-4/8/export/stack_trace_save_user"]
    assert rows[bad[0]].get("ksymtab") == "EXPORT_SYMBOL_GPL"


def test_a_static_call_exported_without_its_key_fails(tmp_path):
    """EXPORT_STATIC_CALL_TRAMP_GPL: the trampoline alone (a module's call cannot be
    fixed up then); the key's claim finds it in neither Module.symvers nor kvm.ko."""
    b = v2_good()
    del b.kvm["__SCK__kvm_x86_get_exit_info"]
    assert v2_failing(tmp_path, b)[0] == ["v2-8/8/export/__SCK__kvm_x86_get_exit_info"]


def test_a_stale_module_symvers_for_kvm_fails(tmp_path):
    """Module.symvers lists the key, kvm.ko's own ksymtab does not have it."""
    b = v2_good()
    b.kvm["__SCT__kvm_x86_get_segment_base"] = ""
    bad, rows = v2_failing(tmp_path, b)
    assert bad == ["v2-8/8/export/__SCT__kvm_x86_get_segment_base"]
    row = rows[bad[0]]
    assert row.get("symvers") == "EXPORT_SYMBOL_GPL" and row.get("ksymtab") is None


def test_the_dtc_limit_member_of_another_type_or_missing_fails(tmp_path):
    b = v2_good()
    b.members = ["unsigned long thresh", "unsigned int limit"]
    bad, rows = v2_failing(tmp_path, b)
    assert bad == ["v2-2/8/struct/dirty_throttle_control.limit"]
    assert rows[bad[0]].get("pahole") == "unsigned int limit"
    b.members = ["unsigned long thresh"]
    (tmp_path / "x").mkdir()
    assert v2_failing(tmp_path / "x", b)[0] == ["v2-2/8/struct/dirty_throttle_control.limit"]


def test_the_old_balance_dirty_pages_fails_v2_1(tmp_path):
    """A v2 tree whose balance_dirty_pages still takes the RFC's arguments."""
    b = v2_good()
    b.bdp = list(BDP)
    assert v2_failing(tmp_path, b)[0] == ["v2-1/8/tracepoint/balance_dirty_pages/args",
                                          "v2-1/8/tracepoint/balance_dirty_pages/param2"]
